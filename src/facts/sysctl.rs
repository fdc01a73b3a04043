//! sysctl facts: live kernel values (`/proc/sys` or `captures/sysctl-a.txt`) and
//! the values the next boot will apply, computed with systemd-sysctl's exact
//! precedence (and procps `sysctl --system`'s, to say where they differ).
//! Produces the `sysctl`, `sysctl_boot` and `sysctl_procps` namespaces.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::{EntryKind, Host, ReadError};
use crate::parse::sysctl::{
    is_glob, key_to_proc_path, parse_capture, parse_conf, swap_dot_slash, ConfLine,
};
use crate::value::Value;

use super::{Entry, Evidence, Facts, FileIssue, Namespace, Needs, Setting};

/// sysctl.d directories in systemd's priority order (highest first).
pub const SYSCTL_DIRS: [&str; 5] = [
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
];

/// Keys that must never be read: reading has side effects.
const NEVER_READ: [&str; 1] = ["vm.stat_refresh"];

/// Other persisted sources applied after boot by the software that owns them.
const EXTRA_SOURCES: [(&str, &str); 1] = [(
    "/etc/ufw/sysctl.conf",
    "ufw applies it when the firewall starts",
)];

/// Type a sysctl value: one integer -> number, several integers -> list, else string.
pub fn typed(value: &str) -> Value {
    let toks: Vec<&str> = value.split_whitespace().collect();
    let nums: Option<Vec<f64>> = toks
        .iter()
        .map(|t| t.parse::<i64>().ok().map(|n| n as f64))
        .collect();
    match nums {
        Some(n) if n.len() == 1 => Value::Number(n[0]),
        Some(n) if n.len() > 1 => Value::List(n.into_iter().map(Value::Number).collect()),
        _ => Value::Str(value.to_string()),
    }
}

/// Where live values come from.
enum Live {
    /// A `/proc/sys` tree (live host or snapshot copy).
    Proc,
    /// A `sysctl -a` capture: every readable key.
    Capture(BTreeMap<String, (String, usize)>),
    /// Nothing available.
    None(String),
}

/// Gather the three sysctl namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let live = if matches!(host.kind_of("/proc/sys"), Ok(EntryKind::Dir)) {
        Live::Proc
    } else {
        match host.capture("sysctl-a.txt") {
            Ok(text) => {
                let (vals, issues) = parse_capture(&text);
                for i in &issues {
                    facts
                        .issues
                        .push(FileIssue::from_parse("sysctl", "/captures/sysctl-a.txt", i));
                }
                Live::Capture(
                    vals.into_iter()
                        .map(|v| (v.key, (v.value, v.line)))
                        .collect(),
                )
            }
            Err(e) => {
                if e != ReadError::NotFound {
                    facts.issues.push(FileIssue::unreadable(
                        "sysctl",
                        "/captures/sysctl-a.txt",
                        &e,
                    ));
                }
                Live::None(format!(
                    "no live kernel values: neither /proc/sys nor captures/sysctl-a.txt ({e})"
                ))
            }
        }
    };

    // Persisted configuration, both models.
    let files = boot_files(host, facts);
    let mut parsed: Vec<(String, Vec<ConfLine>)> = Vec::new();
    for f in &files {
        match host.read_to_string(&f.path) {
            Ok(text) => {
                let (lines, issues) = parse_conf(&text);
                for i in &issues {
                    facts
                        .issues
                        .push(FileIssue::from_parse("sysctl", &f.path, i));
                }
                parsed.push((f.path.clone(), lines));
            }
            Err(e) => facts
                .issues
                .push(FileIssue::unreadable("sysctl", &f.path, &e)),
        }
    }

    // RHEL/CentOS 7's systemd 219 carries a patch that reads /etc/sysctl.conf
    // directly after the sysctl.d files (so it wins, as under procps).
    if reads_sysctl_conf_directly(facts)
        && matches!(host.kind_of("/etc/sysctl.conf"), Ok(EntryKind::File))
    {
        if let Ok(text) = host.read_to_string("/etc/sysctl.conf") {
            let (lines, issues) = parse_conf(&text);
            for i in &issues {
                facts
                    .issues
                    .push(FileIssue::from_parse("sysctl", "/etc/sysctl.conf", i));
            }
            parsed.push(("/etc/sysctl.conf".to_string(), lines));
        }
    }

    // Keys we need live values for: rule keys + explicit persisted keys + glob expansions.
    let mut wanted: BTreeSet<String> = needs.sysctl_keys.clone();
    let mut globs: BTreeSet<String> = BTreeSet::new();
    for (_, lines) in &parsed {
        for l in lines {
            if is_glob(l.key()) {
                globs.insert(l.key().to_string());
            } else {
                wanted.insert(l.key().to_string());
            }
        }
    }
    let mut glob_matches: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for g in &globs {
        let m = match &live {
            Live::Proc => expand_proc_glob(host, g),
            Live::Capture(map) => match glob::Pattern::new(g) {
                Ok(p) => map.keys().filter(|k| p.matches(k)).cloned().collect(),
                Err(_) => Vec::new(),
            },
            Live::None(_) => Vec::new(),
        };
        wanted.extend(m.iter().cloned());
        glob_matches.insert(g.clone(), m);
    }

    // Live namespace
    let mut live_ns = Namespace::new(
        "the running kernel has no such key (removed, not yet added, or its module is not loaded)",
    );
    live_ns.canonicalize = Some(canonical_key);
    match &live {
        Live::None(reason) => live_ns.unavailable = Some(reason.clone()),
        Live::Capture(map) => {
            for k in &wanted {
                if let Some((v, line)) = map.get(k) {
                    live_ns.set(
                        k.clone(),
                        Setting::new(
                            typed(v),
                            v.clone(),
                            Evidence::line("/captures/sysctl-a.txt", *line),
                        ),
                    );
                }
            }
        }
        Live::Proc => {
            for k in &wanted {
                if let Some(e) = read_proc_key(host, k) {
                    live_ns.entries.insert(k.clone(), e);
                }
            }
        }
    }

    // Boot (systemd) model
    let explicit: BTreeSet<String> = parsed
        .iter()
        .flat_map(|(_, ls)| ls.iter())
        .filter(|l| !is_glob(l.key()))
        .map(|l| l.key().to_string())
        .collect();
    let mut boot = apply_model(&parsed, &explicit, &glob_matches);
    for (path, why) in EXTRA_SOURCES {
        if let Ok(text) = host.read_to_string(path) {
            let (lines, issues) = parse_conf(&text);
            for i in &issues {
                facts.issues.push(FileIssue::from_parse("sysctl", path, i));
            }
            let extra = apply_model(&[(path.to_string(), lines)], &explicit, &glob_matches);
            for (k, mut s) in extra {
                s.note = Some(format!("set by {path} ({why}), after systemd-sysctl"));
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                }
                boot.insert(k, s);
            }
        }
    }

    // procps `sysctl --system` model: same files, then /etc/sysctl.conf applied last.
    let mut procps_files = parsed.clone();
    match host.kind_of("/etc/sysctl.conf") {
        Ok(EntryKind::File) => match host.read_to_string("/etc/sysctl.conf") {
            Ok(text) => {
                let (lines, _) = parse_conf(&text);
                procps_files.push(("/etc/sysctl.conf".to_string(), lines));
            }
            Err(e) => facts
                .issues
                .push(FileIssue::unreadable("sysctl", "/etc/sysctl.conf", &e)),
        },
        Ok(_) => facts.issues.push(FileIssue::problem(
            "sysctl",
            "/etc/sysctl.conf",
            None,
            "is not a regular file; procps `sysctl --system` cannot read it",
        )),
        Err(ReadError::NotFound) => {}
        Err(e) => facts
            .issues
            .push(FileIssue::unreadable("sysctl", "/etc/sysctl.conf", &e)),
    }
    let procps = apply_model(&procps_files, &explicit, &glob_matches);

    // Note where procps would end with another value.
    for (k, s) in boot.iter_mut() {
        if let Some(p) = procps.get(k) {
            if !p.value.loosely_equals(&s.value) && s.note.is_none() {
                s.note = Some(format!(
                    "procps `sysctl --system` would apply `{}` from {} instead (it applies /etc/sysctl.conf last)",
                    p.raw, p.evidence[0]
                ));
            }
        }
    }

    // A live value that the configuration also sets to the same value was set
    // by that file: cite the file and line first, then the live path.
    for (k, e) in live_ns.entries.iter_mut() {
        if let (Entry::Set(live), Some(conf)) = (e, boot.get(k)) {
            if live.value.loosely_equals(&conf.value) {
                let mut ev = vec![conf.evidence[0].clone()];
                ev.append(&mut live.evidence);
                live.evidence = ev;
            }
        }
    }
    let absent = "no sysctl configuration file sets this key";
    let mut boot_ns = Namespace::new(absent);
    boot_ns.canonicalize = Some(canonical_key);
    boot_ns.entries = boot.into_iter().map(|(k, s)| (k, Entry::Set(s))).collect();
    let mut procps_ns = Namespace::new(absent);
    procps_ns.canonicalize = Some(canonical_key);
    procps_ns.entries = procps
        .into_iter()
        .map(|(k, s)| (k, Entry::Set(s)))
        .collect();

    facts.namespaces.insert("sysctl".into(), live_ns);
    facts.namespaces.insert("sysctl_boot".into(), boot_ns);
    facts.namespaces.insert("sysctl_procps".into(), procps_ns);
}

/// Whether this host's systemd-sysctl reads /etc/sysctl.conf itself, last:
/// RHEL 7 and its rebuilds (systemd 219 with "sysctl: bring back /etc/sysctl.conf").
fn reads_sysctl_conf_directly(facts: &Facts) -> bool {
    let get = |k: &str| match facts.facts.get(k) {
        Some(Ok(Value::Str(s))) => s.to_ascii_lowercase(),
        _ => String::new(),
    };
    let id = get("os_id");
    let like = get("os_like");
    let rhel_family = ["rhel", "centos", "ol", "scientific", "cloudlinux"].contains(&id.as_str())
        || like.split_whitespace().any(|w| w == "rhel");
    rhel_family && get("os_version").split('.').next() == Some("7")
}

/// Canonical form of a sysctl key written in a policy (dotted or slashed).
pub fn canonical_key(key: &str) -> String {
    crate::parse::sysctl::normalize_key(key)
}

/// A configuration file that systemd-sysctl will read.
#[derive(Debug, Clone)]
struct BootFile {
    path: String,
}

/// The files systemd-sysctl reads, in application order: `*.conf` from the
/// directories, same basename -> highest-priority directory only, masked
/// (`/dev/null` symlink or empty) files dropped, sorted by basename.
fn boot_files(host: &Host, facts: &mut Facts) -> Vec<BootFile> {
    let mut by_name: BTreeMap<Vec<u8>, BootFile> = BTreeMap::new();
    let mut masked: BTreeSet<Vec<u8>> = BTreeSet::new();
    for dir in SYSCTL_DIRS {
        // /lib is /usr/lib on merged-/usr systems: skip it when it resolves to the same place.
        if dir == "/lib/sysctl.d" {
            if let (Ok(a), Ok(b)) = (
                host.resolve("/lib/sysctl.d"),
                host.resolve("/usr/lib/sysctl.d"),
            ) {
                if a == b {
                    continue;
                }
            }
        }
        let entries = match host.read_dir(dir) {
            Ok(e) => e,
            Err(ReadError::NotFound) => continue,
            Err(e) => {
                facts.issues.push(FileIssue::unreadable("sysctl", dir, &e));
                continue;
            }
        };
        for e in entries {
            if !e.name.ends_with(".conf") || e.name.len() < 6 {
                continue;
            }
            let key = e.name.as_bytes().to_vec();
            if by_name.contains_key(&key) || masked.contains(&key) {
                continue; // a higher-priority directory already has this name
            }
            let path = format!("{dir}/{}", e.name);
            if e.is_symlink && host.read_link(&path).as_deref() == Some("/dev/null") {
                masked.insert(key);
                continue;
            }
            match e.kind {
                Some(EntryKind::File) => {
                    by_name.insert(key, BootFile { path });
                }
                Some(_) => facts.issues.push(FileIssue {
                    path,
                    line: None,
                    column: None,
                    message: "is not a regular file; systemd-sysctl cannot read it".into(),
                    source: "sysctl".into(),
                    level: crate::facts::IssueLevel::Problem,
                }),
                None => {
                    if e.is_symlink {
                        // dangling link: systemd skips it
                        facts.issues.push(FileIssue {
                            path,
                            line: None,
                            column: None,
                            message: "is a symlink to a file that does not exist; skipped".into(),
                            source: "sysctl".into(),
                            level: crate::facts::IssueLevel::Problem,
                        });
                    }
                }
            }
        }
    }
    by_name.into_values().collect()
}

/// Apply files in order: explicit keys last-wins (earlier assignments kept as
/// evidence), glob keys expanded to live keys that have no explicit entry and
/// are not excluded.
fn apply_model(
    files: &[(String, Vec<ConfLine>)],
    explicit: &BTreeSet<String>,
    glob_matches: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Setting> {
    let mut out: BTreeMap<String, Setting> = BTreeMap::new();
    let excluded: BTreeSet<&str> = files
        .iter()
        .flat_map(|(_, ls)| ls.iter())
        .filter_map(|l| match l {
            ConfLine::Exclude { key, .. } => Some(key.as_str()),
            _ => None,
        })
        .collect();
    for (path, lines) in files {
        for l in lines {
            let ConfLine::Assign {
                key, value, line, ..
            } = l
            else {
                continue;
            };
            let targets: Vec<String> = if is_glob(key) {
                glob_matches
                    .get(key)
                    .map(|m| {
                        m.iter()
                            .filter(|k| !explicit.contains(*k) && !excluded.contains(k.as_str()))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                vec![key.clone()]
            };
            for t in targets {
                let ev = Evidence::line(path.clone(), *line);
                let mut s = Setting::new(typed(value), value.clone(), ev);
                if let Some(prev) = out.remove(&t) {
                    s.evidence.extend(prev.evidence);
                }
                out.insert(t, s);
            }
        }
    }
    out
}

/// Read one key from a `/proc/sys` tree, classifying failures.
/// `None` means the key does not exist (absent).
fn read_proc_key(host: &Host, key: &str) -> Option<Entry> {
    let path = key_to_proc_path(key);
    let ev = vec![Evidence::file(path.clone())];
    if NEVER_READ.contains(&key) {
        return Some(Entry::Unreadable {
            reason: "not read: reading it has side effects".into(),
            evidence: ev,
        });
    }
    match host.mode(&path) {
        Err(ReadError::NotFound) => return None,
        Err(e) => {
            return Some(Entry::Unreadable {
                reason: e.to_string(),
                evidence: ev,
            })
        }
        Ok(mode) if mode & 0o444 == 0 => {
            return Some(Entry::Unreadable {
                reason: "write-only key: the kernel does not let anyone read it".into(),
                evidence: ev,
            })
        }
        Ok(_) => {}
    }
    match host.read_bytes_capped(&path, 64 * 1024) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let v = text.strip_suffix('\n').unwrap_or(&text).to_string();
            Some(Entry::Set(Setting::new(typed(&v), v, ev[0].clone())))
        }
        Err(ReadError::NotFound) => None,
        Err(e) => Some(Entry::Unreadable {
            reason: e.to_string(),
            evidence: ev,
        }),
    }
}

/// Expand a glob key against a `/proc/sys` tree, component by component.
fn expand_proc_glob(host: &Host, pattern: &str) -> Vec<String> {
    let path = swap_dot_slash(pattern);
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let mut current: Vec<String> = vec!["/proc/sys".to_string()];
    for (i, comp) in comps.iter().enumerate() {
        let last = i + 1 == comps.len();
        let mut next = Vec::new();
        for dir in &current {
            if is_glob(comp) {
                let Ok(pat) = glob::Pattern::new(comp) else {
                    return Vec::new();
                };
                if let Ok(entries) = host.read_dir(dir) {
                    for e in entries {
                        if pat.matches(&e.name) && (last || e.kind == Some(EntryKind::Dir)) {
                            next.push(format!("{dir}/{}", e.name));
                        }
                    }
                }
            } else {
                let p = format!("{dir}/{comp}");
                if host.exists(&p) {
                    next.push(p);
                }
            }
        }
        current = next;
        if current.is_empty() {
            break;
        }
    }
    current
        .into_iter()
        .filter_map(|p| p.strip_prefix("/proc/sys/").map(swap_dot_slash))
        .collect()
}
