//! ifupdown's `/etc/network/interfaces` (interfaces(5), Debian ifupdown
//! 0.8): `#` comment lines, backslash continuations, `iface NAME inet6
//! METHOD` stanzas with their option lines, and the `source GLOB` and
//! `source-directory DIR` lines that pull in more files (the caller reads
//! them). For IPv6 from router advertisements it keeps each inet6
//! stanza's method and its `accept_ra` and `autoconf` options (ifupdown's
//! inet6.defn: `auto` sets accept_ra 2 unless told otherwise, `dhcp`
//! accept_ra 1, `static` 0 and autoconf 0 unless the options say
//! otherwise; `manual` and `loopback` leave the kernel's values). Pure.

use super::numbered_lines;

/// One `iface NAME inet6 METHOD` stanza.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inet6 {
    /// The interface (logical) name.
    pub name: String,
    /// The method (`auto`, `dhcp`, `static`, `manual`…).
    pub method: String,
    /// The stanza's line, as written.
    pub text: String,
    /// Its 1-based line.
    pub line: usize,
    /// `accept_ra N` in the stanza, with its line.
    pub accept_ra: Option<(String, usize)>,
    /// `autoconf N` in the stanza, with its line.
    pub autoconf: Option<(String, usize)>,
}

/// What a file holds: the inet6 stanzas and the files it sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interfaces {
    /// The inet6 stanzas in order.
    pub inet6: Vec<Inet6>,
    /// `source` globs, in order (relative ones are relative to
    /// /etc/network, as ifupdown reads them).
    pub sources: Vec<String>,
    /// `source-directory` directories, in order.
    pub source_dirs: Vec<String>,
}

impl Inet6 {
    /// Whether the stanza makes the kernel take router advertisements:
    /// the `accept_ra` option, else the method's default, and the line
    /// that says so; `None` for a method that leaves the kernel's value.
    pub fn accepts_ra(&self) -> Option<(bool, usize)> {
        if let Some((v, line)) = &self.accept_ra {
            return Some((v.trim() != "0", *line));
        }
        match self.method.as_str() {
            "auto" | "dhcp" => Some((true, self.line)),
            // accept_ra defaults to 0 (autoconf needs advertisements)
            "static" | "v4tunnel" | "6to4" => Some((false, self.line)),
            _ => None,
        }
    }
}

/// Read one interfaces file.
pub fn parse(text: &str) -> Interfaces {
    let mut out = Interfaces::default();
    let mut logical: Vec<(usize, String)> = Vec::new();
    let mut acc: Option<(usize, String)> = None;
    for (n, raw) in numbered_lines(text) {
        let (start, mut line) = match acc.take() {
            Some((s, a)) => (s, a + raw),
            None => (n, raw.to_string()),
        };
        if line.ends_with('\\') {
            line.pop();
            acc = Some((start, line));
            continue;
        }
        logical.push((start, line));
    }
    if let Some(a) = acc {
        logical.push(a);
    }
    let mut current: Option<usize> = None;
    for (n, line) in logical {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["iface", name, "inet6", method, ..] => {
                out.inet6.push(Inet6 {
                    name: name.to_string(),
                    method: method.to_string(),
                    text: w.join(" "),
                    line: n,
                    accept_ra: None,
                    autoconf: None,
                });
                current = Some(out.inet6.len() - 1);
            }
            ["iface" | "mapping" | "auto" | "rename", ..] => current = None,
            [a, ..] if a.starts_with("allow-") => current = None,
            ["source", rest @ ..] => {
                current = None;
                out.sources.extend(rest.iter().map(|s| s.to_string()));
            }
            ["source-directory", rest @ ..] => {
                current = None;
                out.source_dirs.extend(rest.iter().map(|s| s.to_string()));
            }
            [opt, value, ..] => {
                if let Some(i) = current {
                    let s = &mut out.inet6[i];
                    match *opt {
                        "accept_ra" => s.accept_ra = Some((value.to_string(), n)),
                        "autoconf" => s.autoconf = Some((value.to_string(), n)),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_options_and_sources_are_read() {
        let f = parse(
            "auto eth0\niface eth0 inet6 auto\n\naccept_ra 0\niface eth1 inet6 static\n  address 2001:db8::1/64\n  accept_ra 2\niface eth2 inet6 dhcp\niface eth3 inet6 static\n  address 2001:db8::3/64\nsource interfaces.d/*\nsource-directory /etc/network/more.d\n",
        );
        assert_eq!(f.inet6.len(), 4);
        // `accept_ra 0` after a blank line is still in eth0's stanza
        assert_eq!(f.inet6[0].accepts_ra(), Some((false, 4)));
        assert_eq!(f.inet6[1].accepts_ra(), Some((true, 7)));
        assert_eq!(f.inet6[2].accepts_ra(), Some((true, 8)));
        assert_eq!(f.inet6[3].accepts_ra(), Some((false, 9)));
        assert_eq!(f.sources, ["interfaces.d/*"]);
        assert_eq!(f.source_dirs, ["/etc/network/more.d"]);
    }
}
