//! Role evidence: what shows that a host was made to route on purpose
//! ([`gather`]): `net.ipv4.ip_forward = 1` in a file the admin writes
//! (/etc/sysctl.d, /etc/sysctl.conf, /run/sysctl.d), or software that needs
//! forwarding (Docker, containerd, Podman, Kubernetes, libvirt, WireGuard)
//! installed. Fills the facts `routes_inferred` and `routes_evidence` and an
//! input note saying what was inferred; reads the `sysctl_boot` namespace
//! gathered before it and a few paths through [`Host`]. Must not judge.

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
    match host.read_dir(WIREGUARD_DIR) {
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
    let looked = "no /etc sysctl file sets net.ipv4.ip_forward = 1 and no Docker, containerd, Podman, Kubernetes, libvirt, CRI-O or WireGuard is installed";
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
