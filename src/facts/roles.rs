//! Role evidence: what shows that a host was made to route on purpose
//! ([`gather`]): `net.ipv4.ip_forward = 1` in a file the admin writes
//! (/etc/sysctl.d, /etc/sysctl.conf, /run/sysctl.d), or software that needs
//! forwarding (Docker, containerd, Podman, Kubernetes, libvirt, WireGuard)
//! installed, or a firewalld zone or policy of the admin's that
//! masquerades (firewalld then turns forwarding on itself); the interfaces
//! configured from router advertisements are `slaac`'s. Fills
//! the facts `routes_inferred` and `routes_evidence` and an input note
//! saying what was inferred; reads the
//! `sysctl_boot` namespace gathered before it and a few paths through
//! [`Host`]. Must not judge.

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::value::Value;

use super::{Entry, Facts, FileIssue, IssueLevel};

/// Software that makes a host forward packets, by the file that shows it.
const ROUTING_SOFTWARE: [(&str, &str); 8] = [
    ("/usr/bin/dockerd", "Docker"),
    ("/usr/sbin/dockerd", "Docker"),
    ("/usr/bin/containerd", "containerd"),
    ("/usr/bin/podman", "Podman"),
    ("/usr/bin/kubelet", "Kubernetes (kubelet)"),
    ("/usr/sbin/libvirtd", "libvirt"),
    ("/usr/bin/crio", "CRI-O"),
    ("/usr/bin/wg-quick", "WireGuard tools"),
];
/// WireGuard interfaces the admin configured (`wg-quick@NAME`).
const WIREGUARD_DIR: &str = "/etc/wireguard";
/// Directories whose sysctl files an admin writes (not a package's).
const ADMIN_SYSCTL: [&str; 3] = ["/etc/sysctl.d/", "/etc/sysctl.conf", "/run/sysctl.d/"];

/// Whether the admin persisted forwarding: where, when they did.
fn persisted_forwarding(facts: &Facts) -> Option<String> {
    let ns = facts.namespaces.get("sysctl_boot")?;
    let Some(Entry::Set(s)) = ns.entries.get("net.ipv4.ip_forward") else {
        return None;
    };
    let at = s.evidence.first()?;
    (s.raw.trim() == "1" && ADMIN_SYSCTL.iter().any(|p| at.path.starts_with(p)))
        .then(|| format!("net.ipv4.ip_forward = 1 persisted at {at}"))
}

/// Gather the role facts; after the sysctl namespaces.
pub fn gather(host: &Host, facts: &mut Facts) {
    let mut found: Vec<String> = Vec::new();
    if let Some(p) = persisted_forwarding(facts) {
        found.push(p);
    }
    let mut not_known: Vec<&str> = Vec::new();
    let snapshot = host.kind() == SourceKind::Snapshot;
    let absent = super::system::declared_absent(host);
    for (path, what) in ROUTING_SOFTWARE {
        match host.kind_of(path) {
            Ok(_) => {
                if !found.iter().any(|f| f.starts_with(what)) {
                    found.push(format!("{what} installed ({path})"));
                }
            }
            Err(ReadError::NotFound) if snapshot && !absent.contains(path) => not_known.push(path),
            Err(_) => {}
        }
    }
    let wg = match host.kind_of(WIREGUARD_DIR) {
        Ok(EntryKind::Dir) => host.read_dir(WIREGUARD_DIR),
        Ok(_) => Ok(Vec::new()),
        Err(e) => Err(e),
    };
    match wg {
        Ok(entries) => {
            let confs: Vec<String> = entries
                .iter()
                .filter(|e| e.name.ends_with(".conf") && e.kind == Some(EntryKind::File))
                .map(|e| format!("{WIREGUARD_DIR}/{}", e.name))
                .collect();
            if let Some(first) = confs.first() {
                found.push(format!("a WireGuard interface configured ({first})"));
            }
        }
        Err(ReadError::NotFound) if snapshot && !absent.contains(WIREGUARD_DIR) => {
            not_known.push(WIREGUARD_DIR)
        }
        Err(_) => {}
    }
    if let Some(f) = firewalld_forwards(host) {
        found.push(f);
    }
    let looked = "no /etc sysctl file sets net.ipv4.ip_forward = 1, no firewalld zone or policy of the admin's masquerades, and no Docker, containerd, Podman, Kubernetes, libvirt, CRI-O or WireGuard is installed";
    let (inferred, words) = if !found.is_empty() {
        let words = format!("this host routes on purpose: {}", found.join("; "));
        facts.issues.push(
            FileIssue::problem(
                "roles",
                "/proc/sys/net/ipv4/ip_forward",
                None,
                format!(
                    "{words}; hardening.ip-forward judges it as a router (`--set routes=false` judges it as a host that does not route)"
                ),
            )
            .with_level(IssueLevel::Note),
        );
        (Ok(Value::Bool(true)), words)
    } else if !not_known.is_empty() {
        // a snapshot older than this reader: judged on what it shows, said
        (
            Ok(Value::Bool(false)),
            format!(
                "{looked} that the snapshot shows; it neither holds nor lists as absent {} (a driftaudit snapshot records them since issue 48), so software there is not seen: `--set routes=true` if the host routes",
                not_known.join(", ")
            ),
        )
    } else {
        (Ok(Value::Bool(false)), looked.to_string())
    };
    facts.facts.insert("routes_inferred".into(), inferred);
    facts
        .facts
        .insert("routes_evidence".into(), Ok(Value::Str(words)));
}

/// Where the admin's firewalld zones and policies live (the vendor's in
/// /usr/lib/firewalld apply only when bound, which no file here says).
const FIREWALLD_DIRS: [&str; 2] = ["/etc/firewalld/zones", "/etc/firewalld/policies"];

/// A firewalld zone or policy of the admin's that masquerades or forwards
/// a port to another address: firewalld then writes 1 to
/// /proc/sys/net/ipv4/ip_forward (`enable_ip_forwarding` in
/// src/firewall/functions.py, called by `_masquerade` and `_forward_port`
/// with a `to-addr` in src/firewall/core/fw_policy.py), so forwarding is
/// part of the firewall the admin configured.
fn firewalld_forwards(host: &Host) -> Option<String> {
    for dir in FIREWALLD_DIRS {
        let Ok(entries) = host.read_dir(dir) else {
            continue;
        };
        for e in entries
            .iter()
            .filter(|e| e.name.ends_with(".xml") && e.kind == Some(EntryKind::File))
        {
            let path = format!("{dir}/{}", e.name);
            let Ok(text) = host.read_to_string(&path) else {
                continue;
            };
            if forwards(&text) {
                return Some(format!(
                    "firewalld masquerades or forwards a port to another address ({path}), and sets net.ipv4.ip_forward = 1 when it loads that"
                ));
            }
        }
    }
    None
}

/// Whether a firewalld zone or policy file (XML, comments left out) has a
/// `<masquerade/>` or a `<forward-port … to-addr="…"/>`.
fn forwards(xml: &str) -> bool {
    let mut text = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find("<!--") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("-->").map_or("", |j| &rest[i + j + 3..]);
    }
    text.push_str(rest);
    text.contains("<masquerade")
        || text
            .split("<forward-port")
            .skip(1)
            .any(|tag| tag.split('>').next().is_some_and(|t| t.contains("to-addr")))
}
