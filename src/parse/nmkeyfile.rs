//! NetworkManager connection profiles in keyfile format
//! (nm-settings-keyfile(5): GKeyFile syntax, `[group]` headers, `#`
//! comment lines, `key=value`), reduced to what decides IPv6 from router
//! advertisements: `[connection] interface-name`, `type` and
//! `autoconnect`, `[match] interface-name` (a `;`-separated list of globs,
//! `!` excluding), and `[ipv6] method` (nm-settings-nmcli(5): `auto` takes
//! addresses from router advertisements (SLAAC) and DHCPv6 as they say;
//! `dhcp`, `manual`, `ignore`, `disabled`, `link-local`, `shared` do not).
//! Keeps no other value: a profile holds secrets (a wifi `psk`, 802.1x
//! passwords, VPN secrets), and nothing of them leaves this parser. Pure.

use super::Issue;

/// A value the profile sets and its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set {
    /// The value as written.
    pub value: String,
    /// The 1-based line.
    pub line: usize,
}

/// One profile, the keys that decide SLAAC only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    /// `[connection] id`.
    pub id: Option<Set>,
    /// `[connection] type` (`ethernet`, `802-3-ethernet`, `wifi`…).
    pub kind: Option<Set>,
    /// `[connection] interface-name`: the one interface it may activate on.
    pub interface: Option<Set>,
    /// `[connection] autoconnect` (default true).
    pub autoconnect: Option<Set>,
    /// `[match] interface-name`.
    pub match_names: Option<Set>,
    /// `[ipv6] method`; unset means `auto` (NetworkManager's default for
    /// the property when a profile does not set it).
    pub ipv6_method: Option<Set>,
    /// Whether the profile has an `[ipv6]` group at all.
    pub has_ipv6: bool,
}

/// Read a keyfile profile.
pub fn parse(text: &str) -> (Profile, Vec<Issue>) {
    let mut p = Profile::default();
    let mut issues = Vec::new();
    let mut group = String::new();
    for (n, raw) in super::numbered_lines(text) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(g) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            group = g.trim().to_string();
            if group == "ipv6" {
                p.has_ipv6 = true;
            }
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            if issues.len() < 20 {
                issues.push(Issue::at(n, "not `key=value` or `[group]`: ignored"));
            }
            continue;
        };
        let set = Some(Set {
            value: v.trim().to_string(),
            line: n,
        });
        match (group.as_str(), k.trim()) {
            ("connection", "id") => p.id = set,
            ("connection", "type") => p.kind = set,
            ("connection", "interface-name") => p.interface = set,
            ("connection", "autoconnect") => p.autoconnect = set,
            ("match", "interface-name") => p.match_names = set,
            ("ipv6", "method") => p.ipv6_method = set,
            _ => {}
        }
    }
    (p, issues)
}

/// Whether `name` matches a `[match] interface-name` list: globs separated
/// by `;` (or blanks), a `!` entry excluding, `~` an optional one; the
/// profile matches when a positive entry matches (or there is none) and no
/// `!` entry does.
pub fn match_names(list: &str, name: &str) -> bool {
    let glob = |g: &str| {
        glob::Pattern::new(g)
            .map(|p| p.matches(name))
            .unwrap_or(false)
    };
    let mut positive = false;
    let mut hit = false;
    for e in list
        .split([';', ' ', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        if let Some(x) = e.strip_prefix('!') {
            if glob(x) {
                return false;
            }
        } else {
            let x = e.strip_prefix('~').unwrap_or(e);
            positive = true;
            hit |= glob(x);
        }
    }
    hit || !positive
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_deciding_keys_are_kept_and_never_a_secret() {
        let (p, _) = parse(
            "[connection]\nid=home\ntype=wifi\ninterface-name=wlp2s0\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=hunter2secret\n\n[ipv6]\nmethod=auto\n",
        );
        assert_eq!(p.interface.as_ref().unwrap().value, "wlp2s0");
        assert_eq!(p.ipv6_method.as_ref().unwrap().line, 11);
        assert!(!format!("{p:?}").contains("hunter2"));
        let (p, _) = parse("[connection]\nid=x\n");
        assert!(p.ipv6_method.is_none() && !p.has_ipv6);
    }

    #[test]
    fn a_match_list_takes_globs_and_exclusions() {
        assert!(match_names("en*;!enp9s0", "enp1s0"));
        assert!(!match_names("en*;!enp9s0", "enp9s0"));
        assert!(!match_names("eth1", "eth0"));
        assert!(match_names("!eth1", "eth0"));
    }
}
