//! Role evidence for IPv6: the interfaces whose IPv6 is configured from
//! router advertisements (SLAAC), where `accept_ra` is a deliberate
//! setting, not drift ([`gather`]). Asks each network configurator in use
//! what it does with each interface of the kernel: systemd-networkd's
//! `.network` files (/etc, /run, /usr/local/lib, /usr/lib: the same name
//! in an earlier directory masks a later one, all sorted by name, the first
//! file that matches a link applies; systemd.network(5)), NetworkManager's
//! keyfile profiles (/etc, /run, /usr/lib `system-connections`;
//! nm-settings-keyfile(5)), netplan's YAML (/lib, /etc, /run `netplan`, the
//! same name in a later directory masking an earlier one; what `netplan
//! generate` writes for its networkd and NetworkManager renderers), ifupdown
//! (/etc/network/interfaces and the files it sources), and the running
//! kernel (a global address in /proc/net/if_inet6 that is not permanent).
//! Fills the facts `slaac_interfaces` (names as the sysctl keys spell them,
//! `eth1/100` for `eth1.100`) and `slaac_evidence` (each interface with the
//! file and line that decide it, and the ones a file cannot decide), and an
//! input note naming them. Reads through [`Host`] only; the parsers are in
//! `parse::{networkd, nmkeyfile, netplan, ifupdown}`. Must not judge.

use crate::host::{EntryKind, Host};
use crate::parse::{ifupdown, netplan, networkd, nmkeyfile};
use crate::value::Value;

use super::{Facts, FileIssue, IssueLevel};

/// networkd's directories, highest priority first (systemd.network(5):
/// "Files in /etc/ have the highest priority, files in /run/ take
/// precedence over files with the same name under /usr/").
const NETWORKD_DIRS: [&str; 5] = [
    "/etc/systemd/network",
    "/run/systemd/network",
    "/usr/local/lib/systemd/network",
    "/usr/lib/systemd/network",
    "/lib/systemd/network",
];
/// NetworkManager's profile directories (nm-settings-keyfile(5); netplan
/// writes its profiles to /run).
const NM_DIRS: [&str; 3] = [
    "/etc/NetworkManager/system-connections",
    "/run/NetworkManager/system-connections",
    "/usr/lib/NetworkManager/system-connections",
];
/// netplan's directories, lowest priority first (netplan's "YAML
/// configuration": a file in /run shadows one of the same name in /etc,
/// which shadows /lib).
const NETPLAN_DIRS: [&str; 3] = ["/lib/netplan", "/etc/netplan", "/run/netplan"];
/// ifupdown's interface definitions.
const IFUPDOWN: &str = "/etc/network/interfaces";
/// The running kernel's IPv6 addresses (`ADDR IFINDEX PLEN SCOPE FLAGS NAME`).
const IF_INET6: &str = "/proc/net/if_inet6";
/// `IFA_F_PERMANENT`: an address configured by hand (or a tool), not by the
/// kernel from a router advertisement or a lease with a lifetime.
const IFA_F_PERMANENT: u32 = 0x80;
/// Most files read per directory.
const MAX_FILES: usize = 512;

/// What one source says of one interface.
struct Said {
    /// The interface's real name (`eth1.100`).
    name: String,
    /// `Some(true)`: takes its IPv6 from router advertisements; `Some(false)`:
    /// it does not; `None`: a file cannot decide.
    slaac: Option<bool>,
    /// Why, with the file and line.
    why: String,
}

/// The kernel's interfaces, by the sysctl keys' spelling and the real name.
fn interfaces(host: &Host, facts: &Facts) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if let Some(ns) = facts.namespaces.get("sysctl") {
        for k in ns.entries.keys() {
            if let Some(i) = k
                .strip_prefix("net.ipv6.conf.")
                .and_then(|r| r.strip_suffix(".accept_ra"))
            {
                names.push(i.replace('/', "."));
            }
        }
    }
    if let Ok(entries) = host.read_dir("/proc/sys/net/ipv6/conf") {
        names.extend(entries.into_iter().map(|e| e.name));
    }
    if let Ok(text) = host.read_to_string(IF_INET6) {
        names.extend(
            text.lines()
                .filter_map(|l| l.split_whitespace().nth(5).map(str::to_string)),
        );
    }
    names.retain(|n| n != "all" && n != "default" && n != "lo");
    names.sort();
    names.dedup();
    names
}

/// Regular files of `dir` (at most [`MAX_FILES`]), by name.
fn files(host: &Host, dir: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(entries) = host.read_dir(dir) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| e.kind == Some(EntryKind::File) && keep(&e.name))
        .take(MAX_FILES)
        .map(|e| e.name)
        .collect()
}

/// Whether a unit is enabled or its runtime directory exists.
fn in_use(host: &Host, unit_links: &[&str], runtime: &str) -> Option<String> {
    for l in unit_links {
        // a link to the unit file (which a snapshot need not hold)
        if host.read_link(l).is_some() || host.kind_of(l).is_ok() {
            return Some(format!("enabled ({l})"));
        }
    }
    // the daemon keeps a state file per link it manages there (an empty
    // directory is only the package's); the file read is what a snapshot
    // copies
    let first = host.read_dir(runtime).ok()?.into_iter().next()?;
    let path = format!("{runtime}/{}", first.name);
    let _ = host.read_bytes_capped(&path, 4096);
    Some(format!("running ({path})"))
}

/// networkd's word for a link it configures.
fn networkd(host: &Host, names: &[String], said: &mut Vec<Said>, notes: &mut Vec<String>) {
    let mut by_name: Vec<(String, String)> = Vec::new();
    for dir in NETWORKD_DIRS {
        for f in files(host, dir, |n| n.ends_with(".network")) {
            if !by_name.iter().any(|(n, _)| *n == f) {
                by_name.push((f.clone(), format!("{dir}/{f}")));
            }
        }
    }
    if by_name.is_empty() {
        return;
    }
    // netplan's generator enables networkd for the files it writes
    // (`10-netplan-*.network` in /run, its generator link)
    let netplan = by_name
        .iter()
        .find(|(n, p)| n.starts_with("10-netplan-") && p.starts_with("/run/"))
        .map(|(_, p)| format!("started by netplan for {p}"));
    let active = in_use(
        host,
        &[
            "/etc/systemd/system/multi-user.target.wants/systemd-networkd.service",
            "/run/systemd/system/multi-user.target.wants/systemd-networkd.service",
            "/run/systemd/generator/multi-user.target.wants/systemd-networkd.service",
            "/etc/systemd/system/sockets.target.wants/systemd-networkd.socket",
        ],
        "/run/systemd/netif/links",
    )
    .or(netplan);
    let Some(active) = active else {
        // said for an admin's file only (systemd ships examples in /usr/lib)
        if let Some((_, p)) = by_name.iter().find(|(_, p)| !p.contains("/lib/")) {
            notes.push(format!(
                "systemd-networkd is neither enabled nor running, so its files ({p} …) configure nothing"
            ));
        }
        return;
    };
    by_name.sort();
    let mut kinds: Vec<(String, String, String)> = Vec::new();
    for dir in NETWORKD_DIRS {
        for f in files(host, dir, |n| n.ends_with(".netdev")) {
            let p = format!("{dir}/{f}");
            if let Some((n, k)) = host
                .read_to_string(&p)
                .ok()
                .and_then(|t| networkd::netdev(&t))
            {
                kinds.push((n, k, p));
            }
        }
    }
    let parsed: Vec<(String, networkd::NetworkFile)> = by_name
        .into_iter()
        .filter_map(|(_, p)| {
            let t = host.read_to_string(&p).ok()?;
            Some((p, networkd::parse(&t).0))
        })
        .collect();
    for name in names {
        for (path, f) in &parsed {
            let hit = networkd::name_matches(f, name);
            if hit == Some(false) {
                continue;
            }
            if let Some((k, line)) = f.other_match.first() {
                // systemd's own files in /usr/lib match containers, VMs and
                // wifi by `Virtualization=`, `Driver=`, `Type=`: not the
                // admin's, and no evidence either way
                if path.contains("/lib/") {
                    continue;
                }
                said.push(Said {
                    name: name.clone(),
                    slaac: None,
                    why: format!(
                        "{name}: {path}:{line} matches it only if its `{k}=` does too, which a file cannot tell"
                    ),
                });
                break;
            }
            let kind = kinds
                .iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, k, p)| (k.as_str(), p.as_str()));
            said.push(networkd_link(host, name, path, f, &active, kind));
            break;
        }
    }
}

/// What networkd does with router advertisements on `name`, configured by
/// the file `f` (systemd.network(5), `IPv6AcceptRA=`: "The default is to
/// disable RA reception for bridge devices or when IP forwarding is
/// enabled, and to enable it otherwise. Cannot be enabled on bond devices
/// and when link-local addressing is disabled").
fn networkd_link(
    host: &Host,
    name: &str,
    path: &str,
    f: &networkd::NetworkFile,
    active: &str,
    kind: Option<(&str, &str)>,
) -> Said {
    let said = |slaac, why: String| Said {
        name: name.to_string(),
        slaac,
        why: format!("{name}: {why} (systemd-networkd, {active})"),
    };
    if let Some(l) = &f.link_local {
        if matches!(
            l.value.to_ascii_lowercase().as_str(),
            "no" | "false" | "0" | "ipv4" | "off"
        ) {
            return said(Some(false), format!("`LinkLocalAddressing={}` at {path}:{}: no link-local address, no advertisements", l.value, l.line));
        }
    }
    if let Some(m) = &f.master {
        return said(
            Some(false),
            format!(
                "a port of `{}` (at {path}:{}), which takes no link-local address",
                m.value, m.line
            ),
        );
    }
    let is = |k: &str, sys: &str| {
        kind.is_some_and(|(x, _)| x == k)
            || host
                .kind_of(&format!("/sys/class/net/{name}/{sys}"))
                .is_ok()
    };
    if is("bond", "bonding") {
        return said(
            Some(false),
            format!("a bond, on which networkd never takes advertisements ({path})"),
        );
    }
    if let Some(a) = &f.accept_ra {
        if let Some(b) = networkd::boolean(&a.value) {
            return said(
                Some(b),
                format!("`IPv6AcceptRA={}` at {path}:{}", a.value, a.line),
            );
        }
    }
    if let Some(fw) = &f.ip_forward {
        if matches!(
            fw.value.to_ascii_lowercase().as_str(),
            "yes" | "true" | "1" | "ipv6"
        ) {
            return said(Some(false), format!("`IPForward={}` at {path}:{} and no `IPv6AcceptRA=`: networkd's default is off on a forwarding link", fw.value, fw.line));
        }
    }
    if is("bridge", "bridge") {
        return said(
            Some(false),
            format!("a bridge, for which networkd's default is off ({path})"),
        );
    }
    let line = f.names_line.map(|l| format!(":{l}")).unwrap_or_default();
    said(
        Some(true),
        format!("matched by {path}{line}, which leaves `IPv6AcceptRA=` at networkd's default, on for a link that neither forwards nor bridges"),
    )
}

/// NetworkManager's word for the interfaces its profiles name.
fn network_manager(host: &Host, names: &[String], said: &mut Vec<Said>, notes: &mut Vec<String>) {
    let mut paths: Vec<String> = Vec::new();
    for dir in NM_DIRS {
        for f in files(host, dir, |n| !n.starts_with('.') && !n.ends_with('~')) {
            paths.push(format!("{dir}/{f}"));
        }
    }
    if paths.is_empty() {
        return;
    }
    let Some(active) = in_use(
        host,
        &[
            "/etc/systemd/system/multi-user.target.wants/NetworkManager.service",
            "/etc/systemd/system/network-online.target.wants/NetworkManager-wait-online.service",
        ],
        "/run/NetworkManager",
    ) else {
        if let Some(p) = paths.iter().find(|p| !p.contains("/lib/")) {
            notes.push(format!(
                "NetworkManager is neither enabled nor running, so its profiles ({p} …) configure nothing"
            ));
        }
        return;
    };
    for path in paths {
        let Ok(text) = host.read_to_string(&path) else {
            continue;
        };
        let (p, _) = nmkeyfile::parse(&text);
        if p.autoconnect
            .as_ref()
            .is_some_and(|a| matches!(a.value.to_ascii_lowercase().as_str(), "false" | "no" | "0"))
        {
            continue;
        }
        let (slaac, how) = match &p.ipv6_method {
            Some(m) => (
                m.value == "auto",
                format!("`method={}` at {path}:{}", m.value, m.line),
            ),
            None => (
                true,
                format!("no `[ipv6] method` in {path}, so NetworkManager's default `auto`"),
            ),
        };
        let why = |n: &str| {
            format!("{n}: {how} (NetworkManager, {active}; `auto` takes addresses from router advertisements)")
        };
        if let Some(i) = &p.interface {
            said.push(Said {
                name: i.value.clone(),
                slaac: Some(slaac),
                why: why(&i.value),
            });
        } else if let Some(m) = &p.match_names {
            for n in names.iter().filter(|n| nmkeyfile::match_names(&m.value, n)) {
                said.push(Said {
                    name: n.clone(),
                    slaac: Some(slaac),
                    why: why(n),
                });
            }
        } else if slaac {
            let id = p.id.as_ref().map_or(path.as_str(), |i| i.value.as_str());
            notes.push(format!(
                "the NetworkManager profile `{id}` ({path}) names no interface: NetworkManager may activate it on any device of its type, with `auto` IPv6, so which interface takes advertisements from it is not known from the files"
            ));
        }
    }
}

/// netplan's word: the files merged, each device's renderer deciding what
/// `netplan generate` writes (networkd: `accept-ra` becomes
/// `IPv6AcceptRA=`, unset leaves networkd's default, `link-local` without
/// ipv6 turns it off; NetworkManager: `dhcp6: true` becomes `[ipv6]
/// method=auto`, otherwise `manual` or `ignore`, whatever `accept-ra`
/// says — tests/sysctl/slaac_reference.rs runs netplan itself).
fn netplan_devices(host: &Host, names: &[String], said: &mut Vec<Said>) {
    let mut by_name: Vec<(String, String)> = Vec::new();
    for dir in NETPLAN_DIRS {
        for f in files(host, dir, |n| n.ends_with(".yaml")) {
            by_name.retain(|(n, _)| *n != f);
            by_name.push((f.clone(), format!("{dir}/{f}")));
        }
    }
    by_name.sort();
    let mut all = netplan::Netplan::default();
    for (_, p) in &by_name {
        if let Ok(t) = host.read_to_string(p) {
            netplan::merge(&mut all, netplan::parse(p, &t).0);
        }
    }
    let global = all.renderer.as_ref().map(|(_, r)| r.value.clone());
    let master_of = |id: &str| {
        all.devices
            .iter()
            .find(|m| m.members.iter().any(|x| x == id))
            .map(|m| format!("{} at {}:{}", m.id, m.file, m.line))
    };
    for d in &all.devices {
        let renderer = d
            .renderer
            .as_ref()
            .map(|r| r.value.clone())
            .or(global.clone())
            .unwrap_or_else(|| "networkd".into());
        let at = format!("{}:{}", d.file, d.line);
        let (slaac, why) = if let Some(m) = master_of(&d.id) {
            (
                false,
                format!("a port of {m}, which netplan gives no link-local address"),
            )
        } else if renderer == "NetworkManager" {
            match &d.dhcp6 {
                Some(s) if s.value => (true, format!("`dhcp6: true` at {}:{} (renderer NetworkManager: `method=auto`)", d.file, s.line)),
                _ => (false, format!("no `dhcp6: true` for `{}` at {at} (renderer NetworkManager: IPv6 `manual` or `ignore`)", d.id)),
            }
        } else if d
            .link_local
            .as_ref()
            .is_some_and(|l| !l.value.iter().any(|f| f == "ipv6"))
        {
            let l = d.link_local.as_ref().map_or(0, |l| l.line);
            (
                false,
                format!("`link-local` without ipv6 at {}:{l}", d.file),
            )
        } else if let Some(a) = &d.accept_ra {
            (
                a.value,
                format!("`accept-ra: {}` at {}:{}", a.value, d.file, a.line),
            )
        } else if d.section == "bonds" || d.section == "bridges" {
            (
                false,
                format!(
                    "`{}` is in `{}` at {at}, where networkd's default is off",
                    d.id, d.section
                ),
            )
        } else {
            (true, format!("`{}` at {at} has no `accept-ra`, so networkd's default (on for a link that neither forwards nor bridges)", d.id))
        };
        let targets: Vec<String> = if !d.has_match {
            vec![d.id.clone()]
        } else if let Some(s) = &d.set_name {
            vec![s.value.clone()]
        } else if let (Some(g), None) = (&d.match_name, &d.match_other) {
            names
                .iter()
                .filter(|n| glob::Pattern::new(&g.value).is_ok_and(|p| p.matches(n)))
                .cloned()
                .collect()
        } else {
            if slaac {
                said.push(Said {
                    name: format!("(netplan `{}`)", d.id),
                    slaac: None,
                    why: format!("netplan's `{}` at {at} matches by MAC address or driver, which a file cannot tell", d.id),
                });
            }
            Vec::new()
        };
        for n in targets {
            said.push(Said {
                why: format!("{n}: {why} (netplan)"),
                name: n,
                slaac: Some(slaac),
            });
        }
    }
}

/// ifupdown's word, following `source` and `source-directory`.
fn ifupdown_stanzas(host: &Host, said: &mut Vec<Said>) {
    let mut queue = vec![IFUPDOWN.to_string()];
    let mut seen: Vec<String> = Vec::new();
    while let Some(f) = queue.pop() {
        if seen.contains(&f) || seen.len() >= MAX_FILES {
            continue;
        }
        seen.push(f.clone());
        let Ok(text) = host.read_to_string(&f) else {
            continue;
        };
        let parsed = ifupdown::parse(&text);
        for s in &parsed.inet6 {
            if let Some((slaac, line)) = s.accepts_ra() {
                let at = if line == s.line {
                    format!("`{}` at {f}:{line}", s.text)
                } else {
                    format!(
                        "`{}` at {f}:{} with `accept_ra` at {f}:{line}",
                        s.text, s.line
                    )
                };
                said.push(Said {
                    name: s.name.clone(),
                    slaac: Some(slaac),
                    why: format!("{}: {at} (ifupdown)", s.name),
                });
            }
        }
        let mut more: Vec<String> = Vec::new();
        for g in &parsed.sources {
            let g = if g.starts_with('/') {
                g.clone()
            } else {
                format!("/etc/network/{g}")
            };
            let (dir, pat) = g.rsplit_once('/').unwrap_or(("/", &g));
            let Ok(p) = glob::Pattern::new(pat) else {
                continue;
            };
            more.extend(
                files(host, dir, |n| p.matches(n))
                    .into_iter()
                    .map(|n| format!("{dir}/{n}")),
            );
        }
        for d in &parsed.source_dirs {
            let d = if d.starts_with('/') {
                d.clone()
            } else {
                format!("/etc/network/{d}")
            };
            // run-parts names: letters, digits, `_` and `-` only
            more.extend(
                files(host, &d, |n| {
                    n.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                })
                .into_iter()
                .map(|n| format!("{d}/{n}")),
            );
        }
        more.sort();
        queue.extend(more.into_iter().rev());
    }
}

/// The running kernel's word: a global address it configured itself.
fn kernel_addresses(host: &Host, said: &mut Vec<Said>) {
    let Ok(text) = host.read_to_string(IF_INET6) else {
        return;
    };
    for (n, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let [_, _, _, scope, flags, name] = w.as_slice() else {
            continue;
        };
        let Ok(flags) = u32::from_str_radix(flags, 16) else {
            continue;
        };
        if *scope == "00" && flags & IFA_F_PERMANENT == 0 {
            said.push(Said {
                name: name.to_string(),
                slaac: Some(true),
                why: format!(
                    "{name}: a global address the kernel configured, not permanent ({IF_INET6}:{})",
                    n + 1
                ),
            });
        }
    }
}

/// Gather `slaac_interfaces` and `slaac_evidence`; after the sysctl namespaces.
pub(super) fn gather(host: &Host, facts: &mut Facts) {
    let names = interfaces(host, facts);
    let mut said: Vec<Said> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    networkd(host, &names, &mut said, &mut notes);
    network_manager(host, &names, &mut said, &mut notes);
    netplan_devices(host, &names, &mut said);
    ifupdown_stanzas(host, &mut said);
    kernel_addresses(host, &mut said);
    let mut slaac: Vec<String> = Vec::new();
    let mut why: Vec<&str> = Vec::new();
    for s in said.iter().filter(|s| s.slaac == Some(true)) {
        let key = s.name.replace('.', "/");
        if !slaac.contains(&key) {
            slaac.push(key);
            why.push(&s.why);
        }
    }
    let undecided: Vec<&str> = said
        .iter()
        .filter(|s| s.slaac.is_none() && !slaac.contains(&s.name.replace('.', "/")))
        .map(|s| s.why.as_str())
        .collect();
    let mut words = if why.is_empty() {
        format!("no interface takes its IPv6 from router advertisements (no systemd-networkd, NetworkManager or netplan configuration that accepts them, no `inet6 auto` or `inet6 dhcp` in {IFUPDOWN}, no global address in {IF_INET6} that is not permanent)")
    } else {
        format!("configured from router advertisements: {}", why.join("; "))
    };
    if !undecided.is_empty() {
        words.push_str(&format!(
            "; not decided from the files: {}",
            undecided.join("; ")
        ));
    }
    if !notes.is_empty() {
        words.push_str(&format!("; {}", notes.join("; ")));
    }
    if !slaac.is_empty() {
        facts.issues.push(
            FileIssue::problem(
                "roles",
                "/proc/sys/net/ipv6/conf",
                None,
                format!(
                    "{words}; hardening.ipv6-accept-ra does not judge the accept_ra of {}, which takes its IPv6 from them",
                    slaac.join(", ")
                ),
            )
            .with_level(IssueLevel::Note),
        );
    }
    facts.facts.insert(
        "slaac_interfaces".into(),
        Ok(Value::List(slaac.into_iter().map(Value::Str).collect())),
    );
    facts
        .facts
        .insert("slaac_evidence".into(), Ok(Value::Str(words)));
}
