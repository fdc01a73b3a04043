//! systemd-networkd `.network` files (systemd.network(5), systemd 252): what
//! decides whether a matched link takes router advertisements. The `[Match]`
//! section's `Name=` globs (a whitespace-separated list of shell globs, a
//! leading `!` inverting the list, an empty assignment resetting it) and
//! whether other match keys (MAC address, driver, path, type…) narrow it;
//! the `[Network]` section's `IPv6AcceptRA=`, `DHCP=`, `LinkLocalAddressing=`
//! `IPForward=` and `Bridge=`/`Bond=` (a port), and a `.netdev` file's
//! name and kind ([`netdev`]), each with its line (the last assignment wins, as
//! systemd's parser does). Read with [`super::unit::assignments`] (the
//! systemd syntax). Pure: text in, the file's model out.

use super::unit::assignments;
use super::Issue;

/// A setting's value as written and the line it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set {
    /// The value (outer blanks removed).
    pub value: String,
    /// The 1-based line.
    pub line: usize,
}

/// One `.network` file as networkd reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkFile {
    /// The `Name=` globs in effect (after resets), and the line of the last
    /// `Name=` assignment; empty when no `Name=` is set.
    pub names: Vec<String>,
    /// Whether the `Name=` list is inverted (`Name=!eth*`).
    pub names_inverted: bool,
    /// The line of the last `Name=`.
    pub names_line: Option<usize>,
    /// Other `[Match]` keys that are set (`MACAddress`, `Driver`, `Type`…):
    /// conditions a file on disk cannot decide.
    pub other_match: Vec<(String, usize)>,
    /// `IPv6AcceptRA=`.
    pub accept_ra: Option<Set>,
    /// `DHCP=`.
    pub dhcp: Option<Set>,
    /// `LinkLocalAddressing=`.
    pub link_local: Option<Set>,
    /// `IPForward=` (systemd 252 reads the link's forwarding from it when
    /// `IPv6AcceptRA=` is unset).
    pub ip_forward: Option<Set>,
    /// `Bridge=` or `Bond=`: the link is a port of another (networkd gives a
    /// port no link-local address unless told).
    pub master: Option<Set>,
}

/// A `.netdev` file's `[NetDev]` `Name=` and `Kind=` (`bridge`, `bond`…),
/// the virtual link networkd creates.
pub fn netdev(text: &str) -> Option<(String, String)> {
    let (list, _) = assignments(text);
    let get = |k: &str| {
        list.iter()
            .rev()
            .find(|a| a.section == "NetDev" && a.key == k)
            .map(|a| a.value.clone())
    };
    Some((get("Name")?, get("Kind")?))
}

/// systemd's boolean words (`parse_boolean`).
pub fn boolean(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "yes" | "y" | "true" | "t" | "on" => Some(true),
        "0" | "no" | "n" | "false" | "f" | "off" => Some(false),
        _ => None,
    }
}

/// Read a `.network` file.
pub fn parse(text: &str) -> (NetworkFile, Vec<Issue>) {
    let (list, issues) = assignments(text);
    let mut f = NetworkFile::default();
    for a in list {
        let set = || {
            Some(Set {
                value: a.value.clone(),
                line: a.line,
            })
        };
        match (a.section.as_str(), a.key.as_str()) {
            ("Match", "Name") => {
                f.names_line = Some(a.line);
                let v = a.value.trim();
                if v.is_empty() {
                    f.names.clear();
                    f.names_inverted = false;
                    continue;
                }
                let (inv, rest) = match v.strip_prefix('!') {
                    Some(r) => (true, r),
                    None => (false, v),
                };
                if f.names.is_empty() {
                    f.names_inverted = inv;
                }
                f.names.extend(rest.split_whitespace().map(str::to_string));
            }
            ("Match", k) => {
                if a.value.trim().is_empty() {
                    f.other_match.retain(|(x, _)| x != k);
                } else if !f.other_match.iter().any(|(x, _)| x == k) {
                    f.other_match.push((k.to_string(), a.line));
                }
            }
            ("Network", "IPv6AcceptRA") => f.accept_ra = set(),
            ("Network", "DHCP") => f.dhcp = set(),
            ("Network", "LinkLocalAddressing") => f.link_local = set(),
            ("Network", "IPForward") => f.ip_forward = set(),
            ("Network", "Bridge" | "Bond") => f.master = set(),
            _ => {}
        }
    }
    (f, issues)
}

/// Whether `name` matches the file's `Name=` list: `Some(true/false)`, or
/// `None` when no `Name=` is set (the other match keys decide).
pub fn name_matches(f: &NetworkFile, name: &str) -> Option<bool> {
    if f.names.is_empty() {
        return None;
    }
    let hit = f.names.iter().any(|g| {
        glob::Pattern::new(g)
            .map(|p| p.matches(name))
            .unwrap_or(false)
    });
    Some(hit != f.names_inverted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_assignment_wins_and_an_empty_name_resets_the_list() {
        let (f, _) = parse(
            "[Match]\nName=eth0\nName=\nName=en* wl*\nMACAddress=52:54:00:00:00:01\n\n[Network]\nIPv6AcceptRA=no\nIPv6AcceptRA=yes\nDHCP=ipv6\n",
        );
        assert_eq!(f.names, ["en*", "wl*"]);
        assert_eq!(f.names_line, Some(4));
        assert_eq!(f.other_match, [("MACAddress".to_string(), 5)]);
        assert_eq!(f.accept_ra.as_ref().unwrap().value, "yes");
        assert_eq!(f.accept_ra.as_ref().unwrap().line, 9);
        assert_eq!(name_matches(&f, "enp1s0"), Some(true));
        assert_eq!(name_matches(&f, "eth0"), Some(false));
    }

    #[test]
    fn a_leading_bang_inverts_the_name_list() {
        let (f, _) = parse("[Match]\nName=!lo veth*\n");
        assert_eq!(name_matches(&f, "eth0"), Some(true));
        assert_eq!(name_matches(&f, "veth1"), Some(false));
        let (f, _) = parse("[Network]\nDHCP=yes\n");
        assert_eq!(name_matches(&f, "eth0"), None);
    }
}
