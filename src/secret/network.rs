//! The redaction of network configuration a snapshot copies for the SLAAC
//! evidence: NetworkManager keyfile profiles, where every value outside the
//! groups that hold no secret is replaced (a wifi `psk`, `wep-key0`, 802.1x
//! `password` and `private-key-password`, `[vpn-secrets]`, a WireGuard
//! `private-key` and `preshared-key`, a modem `pin`: nm-settings-keyfile(5)
//! and nm-settings-nmcli(5) list them per setting, and new ones come with new
//! NetworkManager releases, so the groups kept are an allow list); and
//! netplan YAML, where the values of `password`, `psk`, `key`, `private`,
//! `shared` and the `*-password` and `*-key` keys, and everything nested
//! under `auth`, `keys`, `access-points` and `peers`, are replaced (netplan's
//! wifi, 802.1x and WireGuard settings). Every line stays where it was, so
//! the readers give the same lines. Bytes in, bytes out: reads no file and
//! decides nothing else.

use super::REDACTED;

/// Keyfile groups whose keys hold no secret (the connection, addressing
/// and link settings the SLAAC evidence reads); every other group's values
/// are replaced.
const NM_PLAIN_GROUPS: [&str; 13] = [
    "connection",
    "ipv4",
    "ipv6",
    "ethernet",
    "802-3-ethernet",
    "match",
    "bridge",
    "bridge-port",
    "bond",
    "vlan",
    "proxy",
    "ethtool",
    "user",
];

/// A NetworkManager keyfile with every value outside [`NM_PLAIN_GROUPS`]
/// replaced.
pub(super) fn redact_nm_keyfile(text: &str) -> String {
    let mut group = String::new();
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let t = line.trim();
        if let Some(g) = t.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            group = g.trim().to_string();
            out.push_str(line);
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            out.push_str(line);
            continue;
        }
        match line.split_once('=') {
            Some((k, _)) if NM_PLAIN_GROUPS.contains(&group.as_str()) && !secret_word(k) => {
                out.push_str(line)
            }
            Some((k, _)) => {
                out.push_str(k);
                out.push('=');
                out.push_str(REDACTED);
            }
            // not `key=value`: nothing of it is known safe
            None => out.push_str(REDACTED),
        }
    }
    out
}

/// A key name that holds a secret in any group (`password`, `psk`,
/// `…-password`, `…-key`, `secret…`).
fn secret_word(key: &str) -> bool {
    let k = key.trim().to_ascii_lowercase();
    let k = k.split('[').next().unwrap_or(&k);
    ["password", "psk", "pin", "secret", "key"]
        .iter()
        .any(|w| k == *w || k.ends_with(&format!("-{w}")) || k.starts_with(&format!("{w}-")))
        || k.starts_with("wep-key")
        || k.contains("password")
        || k.contains("secret")
}

/// netplan keys whose whole subtree is secret material or names it.
const NETPLAN_BLOCKS: [&str; 4] = ["auth", "keys", "access-points", "peers"];
/// netplan keys whose value is a secret.
const NETPLAN_SECRETS: [&str; 5] = ["password", "psk", "key", "private", "shared"];

/// netplan YAML with secret values replaced (see the module header).
pub(super) fn redact_netplan(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // the indentation of the key whose subtree is being replaced
    let mut block: Option<usize> = None;
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            out.push_str(line);
            continue;
        }
        if block.is_some_and(|b| indent <= b) {
            block = None;
        }
        let body = t.strip_prefix("- ").unwrap_or(t);
        let key = body
            .split_once(':')
            .map(|(k, _)| k.trim().trim_matches(['"', '\'']).to_ascii_lowercase());
        let inside = block.is_some();
        let starts = key
            .as_deref()
            .is_some_and(|k| NETPLAN_BLOCKS.contains(&k) || netplan_secret_key(k));
        if inside || starts {
            out.push_str(&redact_yaml_value(line));
            if starts && !inside {
                block = Some(indent);
            }
            continue;
        }
        out.push_str(line);
    }
    out
}

fn netplan_secret_key(k: &str) -> bool {
    NETPLAN_SECRETS.contains(&k) || k.ends_with("-password") || k.ends_with("-key")
}

/// `  key: value` with the value replaced (kept when empty: a mapping
/// follows); a line without `key:` (a list item, a block scalar's text) is
/// replaced whole, keeping its indentation.
fn redact_yaml_value(line: &str) -> String {
    let indent = &line[..line.len() - line.trim_start().len()];
    let t = line.trim_start();
    let (dash, body) = match t.strip_prefix("- ") {
        Some(b) => ("- ", b),
        None => ("", t),
    };
    // a quoted key may hold `:`; a plain key ends at the first `: ` or `:`
    match body
        .find(": ")
        .or_else(|| body.ends_with(':').then(|| body.len() - 1))
    {
        Some(at) => {
            let value = body[at + 1..].trim();
            if value.is_empty() {
                line.to_string()
            } else {
                format!("{indent}{dash}{}: \"{REDACTED}\"", &body[..at])
            }
        }
        None => format!("{indent}{dash}\"{REDACTED}\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyfile_keeps_its_addressing_and_loses_every_secret() {
        let text = "[connection]\nid=home\ninterface-name=wlp2s0\n\n[wifi]\nssid=home\n\n[wifi-security]\nkey-mgmt=wpa-psk\npsk=hunter2secret\n\n[802-1x]\npassword=s3cret\n\n[vpn-secrets]\ntoken=abc\n\n[ipv6]\nmethod=auto\n";
        let r = redact_nm_keyfile(text);
        for s in ["hunter2secret", "s3cret", "abc"] {
            assert!(!r.contains(s), "{r}");
        }
        assert!(
            r.contains("psk=<redacted>") && r.contains("method=auto"),
            "{r}"
        );
        assert!(r.contains("interface-name=wlp2s0"), "{r}");
        assert_eq!(r.lines().count(), text.lines().count());
    }

    #[test]
    fn netplan_keeps_its_devices_and_loses_passwords_and_keys() {
        let text = "network:\n  ethernets:\n    eth0:\n      accept-ra: true\n  wifis:\n    wl0:\n      access-points:\n        \"home\":\n          password: \"hunter2secret\"\n        \"open\": {}\n      dhcp6: true\n  tunnels:\n    wg0:\n      mode: wireguard\n      keys: {private: QUJDREVGR0g=}\n      peers:\n        - keys:\n            public: cHVibGlj\n            shared: c2hhcmVk\n";
        let r = redact_netplan(text);
        for s in ["hunter2secret", "QUJDREVGR0g", "c2hhcmVk"] {
            assert!(!r.contains(s), "{r}");
        }
        assert!(
            r.contains("accept-ra: true") && r.contains("      dhcp6: true"),
            "{r}"
        );
        assert_eq!(r.lines().count(), text.lines().count());
        // still YAML (the netplan reader's own test is tests/sysctl/slaac.rs)
        assert!(
            serde_saphyr::from_str::<serde::de::IgnoredAny>(&r).is_ok(),
            "{r}"
        );
    }
}
