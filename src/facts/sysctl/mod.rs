//! sysctl facts: live kernel values (`/proc/sys` or `captures/sysctl-a.txt`) and
//! the values the next boot will apply, computed with systemd-sysctl's exact
//! precedence (and procps `sysctl --system`'s, to say where they differ), then
//! what ufw and an enabled TuneD write after boot (see [`super::tuned`]).
//! Produces the `sysctl`, `sysctl_boot` and `sysctl_procps` namespaces. Reads
//! only through [`Host`]; linear in lines and files (hostile input).

use std::collections::{BTreeMap, BTreeSet};

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::parse::sysctl::{
    is_glob, key_to_proc_path, parse_capture, parse_conf, swap_dot_slash, typed, CaptureValue,
    ConfLine,
};
use crate::secret::REDACTED;
use crate::value::Value;

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel, Namespace, Needs, Setting};

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

/// Where live values come from; a listing borrows from its text.
enum Live<'t> {
    /// A `/proc/sys` tree (live host or snapshot copy). `complete` when it
    /// holds every key the kernel had (the live host; a snapshot whose
    /// `snapshot.json` says so): only then is a missing key absent.
    Proc { complete: bool },
    /// A `sysctl -a` listing (`captures/sysctl-a.txt`, sos's
    /// `sos_commands/kernel/sysctl_-a`) read from `path`: complete for
    /// sysctl unless `snapshot.json` says otherwise. Keys sysctl reported it
    /// could not read are in `unreadable`. A snapshot `proc/sys` file (if
    /// any) fills in a key the listing lacks.
    Capture {
        /// The listing's values, sorted by key (each key once).
        map: Vec<CaptureValue<'t>>,
        path: &'static str,
        complete: bool,
        unreadable: BTreeMap<String, (String, usize)>,
    },
    /// Nothing available.
    None(String),
}

/// What `snapshot.json` says about completeness: `Some(true)` when its
/// `complete` list names `what`, `Some(false)` when the list exists without
/// it, `None` when there is no such list (or no snapshot.json).
fn declared_complete(host: &Host, what: &str) -> Option<bool> {
    let text = host.read_to_string("/snapshot.json").ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let list = v.get("complete")?.as_array()?;
    Some(list.iter().any(|c| c.as_str() == Some(what)))
}

/// Why `snapshot.json` says `key` could not be read: it lists the key's
/// `/proc/sys` path, or a directory above it, as unreadable.
fn unreadable_reason<'a>(declared: &'a BTreeMap<String, String>, key: &str) -> Option<&'a String> {
    declared.get(key).or_else(|| {
        declared
            .iter()
            .find(|(k, _)| {
                key.strip_prefix(k.as_str())
                    .is_some_and(|r| r.starts_with('.'))
            })
            .map(|(_, r)| r)
    })
}

/// Keys `snapshot.json` lists as unreadable (`/proc/sys/...` paths), with the reason.
fn declared_unreadable(host: &Host) -> BTreeMap<String, String> {
    let Ok(text) = host.read_to_string("/snapshot.json") else {
        return BTreeMap::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return BTreeMap::new();
    };
    v.get("unreadable")
        .and_then(|u| u.as_array())
        .into_iter()
        .flatten()
        .filter_map(|u| {
            let path = u.get("path")?.as_str()?;
            let key = path.strip_prefix("/proc/sys/")?;
            let reason = u.get("reason").and_then(|r| r.as_str()).unwrap_or("");
            Some((swap_dot_slash(key), reason.to_string()))
        })
        .collect()
}

/// The key a `sysctl` stderr line is about (`sysctl: reading key
/// "net.ipv6.conf.all.stable_secret"`, `sysctl: permission denied on key
/// 'fs.protected_hardlinks'`).
fn stderr_key(line: &str) -> Option<String> {
    let rest = line.strip_prefix("sysctl:")?;
    let (start, quote) = rest.char_indices().find(|(_, c)| *c == '"' || *c == '\'')?;
    let inner = &rest[start + 1..];
    let end = inner.find(quote)?;
    let key = crate::parse::sysctl::normalize_key(&inner[..end]);
    (!key.is_empty() && !key.contains(char::is_whitespace)).then_some(key)
}

/// The key's value and line in a listing sorted by key.
fn listed<'m, 't>(map: &'m [CaptureValue<'t>], key: &str) -> Option<&'m CaptureValue<'t>> {
    map.binary_search_by(|c| c.key.as_ref().cmp(key))
        .ok()
        .map(|i| &map[i])
}

/// The keys of a listing sorted by key that `glob` matches, in key order.
/// Only the run of keys starting with the pattern's literal head (before its
/// first `*`, `?` or `[`, which a match must begin with) is tried.
fn listed_matching<'m>(
    map: &'m [CaptureValue<'_>],
    glob: &str,
    pattern: &glob::Pattern,
) -> impl Iterator<Item = &'m str> + 'm {
    let head = &glob[..glob.find(['*', '?', '[']).unwrap_or(glob.len())];
    // and only keys ending with its literal tail (after its last `*`, `?`
    // or `]`, which a match must end with) are given to the pattern
    let tail = &glob[glob.rfind(['*', '?', ']']).map_or(glob.len(), |i| i + 1)..];
    let tail = if tail.contains(['[', '\\']) { "" } else { tail }.to_string();
    let from = map.partition_point(|c| c.key.as_ref() < head);
    let run = &map[from..];
    let run = &run[..run.partition_point(|c| c.key.starts_with(head))];
    let pattern = pattern.clone();
    run.iter()
        .map(|c| c.key.as_ref())
        .filter(move |k| k.ends_with(tail.as_str()) && pattern.matches(k))
}

/// Read the first `sysctl -a` listing the snapshot's layout has: its path
/// and text.
fn read_listing(host: &Host, facts: &mut Facts) -> Result<(&'static str, String), String> {
    let Some(layout) = host.layout() else {
        return Err("the live host has no listing".into());
    };
    let mut tried = Vec::new();
    for path in layout.sysctl_listing() {
        let text = match host.read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                if e != ReadError::NotFound {
                    facts.issues.push(FileIssue::unreadable("sysctl", path, &e));
                }
                tried.push(format!("{}: {e}", path.trim_start_matches('/')));
                continue;
            }
        };
        return Ok((path, text));
    }
    Err(tried.join(", "))
}

/// The live values of a `sysctl -a` listing read from `path`, with its
/// issues recorded (what sysctl said it could not read is data, a note).
fn capture<'t>(host: &Host, facts: &mut Facts, path: &'static str, text: &'t str) -> Live<'t> {
    let (mut vals, issues) = parse_capture(text);
    let mut unreadable = BTreeMap::new();
    let issue_lines: BTreeSet<usize> = issues.iter().map(|i| i.line).collect();
    let lines: BTreeMap<usize, &str> = if issue_lines.is_empty() {
        BTreeMap::new()
    } else {
        crate::parse::numbered_lines(text)
            .filter(|(n, _)| issue_lines.contains(n))
            .collect()
    };
    for i in &issues {
        let line = lines.get(&i.line).copied().unwrap_or("");
        let mut issue = FileIssue::from_parse("sysctl", path, i);
        if let Some(k) = stderr_key(line.trim()) {
            // what sysctl itself said while listing: data about that key,
            // not a defect of the host's configuration
            unreadable.insert(k, (line.trim().to_string(), i.line));
            issue = issue.with_level(IssueLevel::Note);
        }
        facts.issues.push(issue);
    }
    // keys are unique (the parser joins repeats); the listing is
    // usually sorted already, which the sort finds in one pass
    vals.sort_unstable_by(|a, b| a.key.cmp(&b.key));
    Live::Capture {
        map: vals,
        path,
        complete: declared_complete(host, "sysctl").unwrap_or(true),
        unreadable,
    }
}

/// Gather the three sysctl namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let proc_dir = matches!(host.kind_of("/proc/sys"), Ok(EntryKind::Dir));
    // The listing's text outlives `live`, whose values borrow from it.
    let listing = (host.kind() != SourceKind::Live).then(|| read_listing(host, facts));
    let live = match &listing {
        None => Live::Proc { complete: true },
        Some(Ok((path, text))) => capture(host, facts, path, text),
        Some(Err(_)) if proc_dir => Live::Proc {
            complete: declared_complete(host, "sysctl").unwrap_or(false),
        },
        Some(Err(tried)) => Live::None(format!(
            "no live kernel values: the snapshot has neither proc/sys nor a `sysctl -a` listing ({tried})"
        )),
    };
    let listing_name = host
        .layout()
        .and_then(|l| l.sysctl_listing().first().copied())
        .unwrap_or(crate::catalogue::SYSCTL_A.path)
        .trim_start_matches('/');

    // Persisted configuration: the files each tool reads, each file read and
    // parsed once however many models use it.
    let mut conf = ConfCache::default();
    // Both tools read the same directories: listed once, picked twice.
    let listings = sysctl_dir_listings(host);
    let mut sd_files = conf_files(host, &listings, Tool::Systemd, &mut facts.issues);
    // RHEL/CentOS 7's systemd 219 carries a patch that reads /etc/sysctl.conf
    // directly after the sysctl.d files (so it wins, as under procps).
    if reads_sysctl_conf_directly(facts)
        && matches!(host.kind_of("/etc/sysctl.conf"), Ok(EntryKind::File))
    {
        sd_files.push("/etc/sysctl.conf".to_string());
    }
    let mut pp_files = conf_files(host, &listings, Tool::Procps, &mut Vec::new());
    // procps `sysctl --system`: /etc/sysctl.conf last, if a regular file.
    match host.kind_of("/etc/sysctl.conf") {
        Ok(EntryKind::File) => pp_files.push("/etc/sysctl.conf".to_string()),
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
    for f in sd_files.iter().chain(pp_files.iter()) {
        conf.load(host, facts, f);
    }
    let parsed = conf.files(&sd_files, Tool::Systemd);
    let procps_files = conf.files(&pp_files, Tool::Procps);

    // TuneD, where it is enabled: what it writes after boot, in order.
    let tuned = super::tuned::sysctl_writes(host, facts);

    // Keys we need live values for: rule keys + explicit persisted keys + glob expansions.
    let mut wanted: BTreeSet<String> = needs.sysctl_keys.clone();
    wanted.extend(tuned.iter().map(|w| w.key.clone()));
    let mut globs: BTreeSet<String> = BTreeSet::new();
    for (_, lines) in parsed.iter().chain(procps_files.iter()) {
        for l in lines.iter() {
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
            Live::Proc { .. } => expand_proc_glob(host, g),
            Live::Capture { map, .. } => match glob::Pattern::new(g) {
                Ok(p) => listed_matching(map, g, &p).map(str::to_string).collect(),
                Err(_) => Vec::new(),
            },
            Live::None(_) => Vec::new(),
        };
        wanted.extend(m.iter().cloned());
        glob_matches.insert(g.clone(), m);
    }
    // key globs the rules iterate over (`for_each: { keys: ... }`)
    for g in &needs.sysctl_globs {
        match &live {
            Live::Proc { .. } => wanted.extend(expand_proc_glob(host, g)),
            Live::Capture { map, .. } => {
                if let Ok(p) = glob::Pattern::new(g) {
                    wanted.extend(listed_matching(map, g, &p).map(str::to_string));
                }
            }
            Live::None(_) => {}
        }
    }

    // Live namespace
    let mut live_ns = Namespace::new(
        "the running kernel has no such key (removed, not yet added, or its module is not loaded)",
    );
    live_ns.canonicalize = Some(canonical_key);
    let declared = if host.kind() == SourceKind::Snapshot {
        declared_unreadable(host)
    } else {
        BTreeMap::new()
    };
    // A key missing from an incomplete source is not known to be absent.
    let not_in_snapshot = |k: &str, source: &str| {
        Entry::Unreadable {
        reason: format!(
            "not in the snapshot ({source} is not a complete listing); a `sysctl -a` capture ({listing_name}) would show whether the kernel has `{k}`"
        ),
        // no file holds it: the reason names the key and the capture
        evidence: Vec::new(),
    }
    };
    match &live {
        Live::None(reason) => live_ns.unavailable = Some(reason.clone()),
        Live::Capture {
            map,
            path,
            complete,
            unreadable,
        } => {
            for k in &wanted {
                if let Some(c) = listed(map, k) {
                    live_ns.set(
                        k.clone(),
                        setting(k, &c.value, Evidence::line(path.to_string(), c.line)),
                    );
                } else if let Some((msg, line)) = unreadable.get(k) {
                    live_ns.entries.insert(
                        k.clone(),
                        Entry::Unreadable {
                            reason: format!("`sysctl -a` could not read it (`{msg}`)"),
                            evidence: vec![Evidence::line(path.to_string(), *line)],
                        },
                    );
                } else if let Some(reason) = unreadable_reason(&declared, k) {
                    live_ns.entries.insert(
                        k.clone(),
                        Entry::Unreadable {
                            reason: format!(
                                "could not be read when the snapshot was taken: {reason}"
                            ),
                            evidence: vec![Evidence::file("/snapshot.json")],
                        },
                    );
                } else if let Some(e) = proc_dir.then(|| read_proc_key(host, k)).flatten() {
                    live_ns.entries.insert(k.clone(), e);
                } else if !complete {
                    live_ns
                        .entries
                        .insert(k.clone(), not_in_snapshot(k, path.trim_start_matches('/')));
                }
            }
        }
        Live::Proc { complete } => {
            for k in &wanted {
                if let Some(e) = read_proc_key(host, k) {
                    live_ns.entries.insert(k.clone(), e);
                } else if let Some(reason) = unreadable_reason(&declared, k) {
                    live_ns.entries.insert(
                        k.clone(),
                        Entry::Unreadable {
                            reason: format!(
                                "could not be read when the snapshot was taken: {reason}"
                            ),
                            evidence: vec![Evidence::file("/snapshot.json")],
                        },
                    );
                } else if !complete {
                    live_ns
                        .entries
                        .insert(k.clone(), not_in_snapshot(k, "its proc/sys tree"));
                }
            }
        }
    }

    // Boot (systemd) model
    let mut boot = systemd_model(&parsed, &glob_matches, facts);
    // then tuned's writes after boot
    let mut boot_unknown: BTreeMap<String, Entry> = BTreeMap::new();
    for w in tuned {
        let k = w.key.clone();

        if let (Some(v), Some(cur)) = (&w.keep_if, boot.get(&k)) {
            if cur.raw == *v {
                continue;
            }
        }
        // a `>`/`<` value is judged against the value at that time
        let Some(e) = super::tuned::resolve(w, boot.get(&k)) else {
            continue;
        };
        match e {
            Entry::Set(mut s) => {
                if let Some(prev) = boot.get(&k) {
                    if prev.raw == s.raw && prev.evidence.first() == s.evidence.first() {
                        continue; // re-applied unchanged
                    }
                }
                boot_unknown.remove(&k);
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                    s.evidence.truncate(MAX_EVIDENCE);
                }
                boot.insert(k, s);
            }
            other => {
                boot.remove(&k);
                boot_unknown.insert(k, other);
            }
        }
    }
    for (path, why) in EXTRA_SOURCES {
        if let Ok(text) = host.read_to_string(path) {
            let (lines, issues) = parse_conf(&text);
            for i in &issues {
                facts.issues.push(FileIssue::from_parse("sysctl", path, i));
            }
            let extra = systemd_model(
                &[(path.to_string(), std::rc::Rc::new(lines))],
                &glob_matches,
                facts,
            );
            for (k, mut s) in extra {
                s.note = Some(format!("set by {path} ({why}), after systemd-sysctl"));
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                    s.evidence.truncate(MAX_EVIDENCE);
                }
                boot.insert(k, s);
            }
        }
    }

    // procps `sysctl --system` model: its own file list, /etc/sysctl.conf last.
    let procps = procps_model(&procps_files, &glob_matches);

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
    boot_ns.entries.extend(boot_unknown);
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

/// Which tool's reading rules a file list or a model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    /// systemd-sysctl (the boot): `conf_files_list_strv()` in src/basic/conf-files.c
    /// and `parse_file()`/`apply_all()` in src/sysctl/sysctl.c.
    Systemd,
    /// procps `sysctl --system`: `PreloadSystem()`, `Preload()` and
    /// `write_setting_list()` in procps-ng src/sysctl.c.
    Procps,
}

/// At most this many overridden locations are kept per key (most recent
/// first) besides the winning one: a key assigned 40,000 times must not make
/// every finding carry 40,000 locations.
pub const MAX_EVIDENCE: usize = 33;

/// Parsed configuration files by host path, each read and parsed once.
#[derive(Default)]
struct ConfCache {
    /// Path -> (every line, the lines systemd-sysctl reads).
    files: std::collections::HashMap<String, (Lines, Lines)>,
}

/// Parsed lines of one file, shared by the models.
type Lines = std::rc::Rc<Vec<ConfLine>>;

impl ConfCache {
    /// Read and parse `path` unless already done (the lists of
    /// [`conf_files`] hold only regular files).
    fn load(&mut self, host: &Host, facts: &mut Facts, path: &str) {
        if self.files.contains_key(path) {
            return;
        }
        // the lists hold only entries already seen to be files: no second stat
        let parsed = match host.read_to_string(path) {
            Ok(text) => {
                let f = crate::parse::sysctl::parse_conf_file(&text);
                for i in &f.issues {
                    facts.issues.push(FileIssue::from_parse("sysctl", path, i));
                }
                f
            }
            Err(e) => {
                facts.issues.push(FileIssue::unreadable("sysctl", path, &e));
                Default::default()
            }
        };
        let all: Lines = std::rc::Rc::new(parsed.lines);
        let systemd = match parsed.systemd_stops_at {
            Some(stop) => {
                std::rc::Rc::new(all.iter().filter(|l| l.line() < stop).cloned().collect())
            }
            None => all.clone(),
        };
        self.files.insert(path.to_string(), (all, systemd));
    }

    /// The parsed files for a list of paths, in that order, as `tool` reads them.
    fn files(&self, paths: &[String], tool: Tool) -> Vec<(String, Lines)> {
        paths
            .iter()
            .map(|p| {
                let lines = match (self.files.get(p), tool) {
                    (Some((_, sd)), Tool::Systemd) => sd.clone(),
                    (Some((all, _)), Tool::Procps) => all.clone(),
                    (None, _) => Lines::default(),
                };
                (p.clone(), lines)
            })
            .collect()
    }
}

/// The files a tool reads, in application order: `*.conf` from the
/// directories; a name taken by a higher directory hides the same name below,
/// whatever it is (systemd does not stat the entry: a dangling link or a link
/// to `/dev/null`, absolute or relative, hides the vendor file and reads as
/// nothing; procps does the same by name); sorted by basename in byte order.
/// systemd skips hidden names (`.60-x.conf`, `hidden_or_backup_file()`),
/// procps reads them. Entries that are not readable files are left out of the
/// list after they have hidden their name.
fn conf_files(
    host: &Host,
    listings: &[Listing],
    tool: Tool,
    issues: &mut Vec<FileIssue>,
) -> Vec<String> {
    conf_entries(host, listings, tool, issues)
        .into_iter()
        .filter_map(|(path, readable)| readable.then_some(path))
        .collect()
}

/// The entries systemd-sysctl picks from the sysctl.d directories, one per
/// basename, in the order it applies them, including those that read as
/// nothing (masks, dangling links): what `systemd-analyze cat-config
/// sysctl.d` lists. For differential tests and `explain`.
pub fn systemd_conf_entries(host: &Host) -> Vec<String> {
    conf_entries(
        host,
        &sysctl_dir_listings(host),
        Tool::Systemd,
        &mut Vec::new(),
    )
    .into_iter()
    .map(|(p, _)| p)
    .collect()
}

/// One sysctl.d directory and its listing.
type Listing = (&'static str, Result<Vec<crate::host::DirEntry>, ReadError>);

/// The sysctl.d directories in priority order with their listings, each
/// directory once: systemd resolves the directory list and drops duplicates
/// (`path_strv_resolve_uniq`): /lib is /usr/lib on merged-/usr systems.
/// Both tools' picks are made from one listing.
fn sysctl_dir_listings(host: &Host) -> Vec<Listing> {
    let mut seen_dirs: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for dir in SYSCTL_DIRS {
        let resolved = match host.resolve(dir) {
            Ok(r) => r,
            Err(_) => dir.to_string(),
        };
        if seen_dirs.contains(&resolved) {
            continue;
        }
        seen_dirs.push(resolved);
        out.push((dir, host.read_dir(dir)));
    }
    out
}

/// As [`conf_files`], with every entry that owns a name and whether it is a
/// readable file.
fn conf_entries(
    host: &Host,
    listings: &[Listing],
    tool: Tool,
    issues: &mut Vec<FileIssue>,
) -> Vec<(String, bool)> {
    // basename -> (entry that owns the name, whether it is a readable file)
    let mut by_name: BTreeMap<Vec<u8>, (String, bool)> = BTreeMap::new();
    for (dir, listing) in listings {
        let dir = *dir;
        let entries = match listing {
            Ok(e) => e,
            Err(ReadError::NotFound) => continue,
            Err(ReadError::WrongKind(_)) => continue,
            Err(e) => {
                if tool == Tool::Systemd {
                    issues.push(FileIssue::unreadable("sysctl", dir, e));
                }
                continue;
            }
        };
        for e in entries {
            let hidden = e.name.starts_with('.');
            let suffix_ok = match tool {
                // endswith(".conf") on a name that is not hidden
                Tool::Systemd => e.name.ends_with(".conf") && !hidden,
                // strlen >= 5 and the last five bytes are ".conf"
                Tool::Procps => e.name.ends_with(".conf"),
            };
            if !suffix_ok {
                if tool == Tool::Systemd && hidden && e.name.ends_with(".conf") {
                    issues.push(
                        FileIssue::problem(
                            "sysctl",
                            &format!("{dir}/{}", e.name),
                            None,
                            "is a hidden file: systemd-sysctl ignores it at boot, procps `sysctl --system` reads it",
                        )
                        .with_level(crate::facts::IssueLevel::Note),
                    );
                }
                continue;
            }
            let key = std::os::unix::ffi::OsStrExt::as_bytes(e.raw_name.as_os_str()).to_vec(); // byte order, as systemd
            let path = format!("{dir}/{}", e.name);
            if by_name.contains_key(&key) {
                continue; // a higher-priority directory already has this name
            }
            let readable = if is_dev_null(host, dir, e) {
                false // a mask: reads as empty
            } else {
                match e.kind {
                    Some(EntryKind::File) => true,
                    Some(EntryKind::Dir) | Some(EntryKind::Other) => {
                        if tool == Tool::Systemd {
                            issues.push(FileIssue::problem(
                                "sysctl",
                                &path,
                                None,
                                "is not a regular file; systemd-sysctl cannot read it (and it hides any file of this name in a lower-priority directory)",
                            ));
                        }
                        false
                    }
                    None => {
                        if tool == Tool::Systemd {
                            issues.push(
                                FileIssue::problem(
                                    "sysctl",
                                    &path,
                                    None,
                                    "is a symlink to a file that does not exist: systemd-sysctl skips it, and it hides any file of this name in a lower-priority directory",
                                )
                                .with_level(crate::facts::IssueLevel::Note),
                            );
                        }
                        false
                    }
                }
            };
            by_name.insert(key, (path, readable));
        }
    }
    by_name.into_values().collect()
}

/// Whether a directory entry is a mask: a symlink to `/dev/null`, written
/// absolute or relative (`../../dev/null`), whether or not the snapshot holds
/// a `/dev/null`. On a live host the link resolves to the character device,
/// which must not be reported as "not a regular file".
fn is_dev_null(host: &Host, dir: &str, e: &crate::host::DirEntry) -> bool {
    if !e.is_symlink {
        return false;
    }
    if e.target.as_deref() == Some("/dev/null") {
        return true;
    }
    match host.read_link(&format!("{dir}/{}", e.name)) {
        Some(t) => crate::host::lexical(&crate::host::join_host(dir, &t)) == "/dev/null",
        None => false,
    }
}

/// Where one key's value was set: the winning line and the ones it overrode
/// (most recent first, at most [`MAX_EVIDENCE`] kept in all).
struct Track {
    raw: String,
    winner: Evidence,
    overridden: std::collections::VecDeque<Evidence>,
    dropped: usize,
}

impl Track {
    fn new(raw: String, winner: Evidence) -> Track {
        Track {
            raw,
            winner,
            overridden: std::collections::VecDeque::new(),
            dropped: 0,
        }
    }
    /// Record an earlier location that this one overrode.
    fn push_overridden(&mut self, ev: Evidence) {
        self.overridden.push_front(ev);
        if self.overridden.len() >= MAX_EVIDENCE {
            self.overridden.pop_back();
            self.dropped += 1;
        }
    }
    /// A new winning assignment; the old winner becomes overridden.
    fn set(&mut self, raw: String, winner: Evidence) {
        let old = std::mem::replace(&mut self.winner, winner);
        self.raw = raw;
        self.push_overridden(old);
    }
    fn into_setting(self, key: &str) -> Setting {
        let mut s = setting(key, &self.raw, self.winner);
        s.evidence.extend(self.overridden);
        s
    }
}

/// Report a key assigned so often that not every location is kept.
fn note_dropped(facts: &mut Facts, key: &str, t: &Track) {
    if t.dropped > 0 {
        facts.issues.push(
            FileIssue::problem(
                "sysctl",
                &t.winner.path,
                t.winner.line,
                format!(
                    "`{key}` is assigned {} times; findings cite the winning line and the {} before it",
                    t.dropped + t.overridden.len() + 1,
                    t.overridden.len()
                ),
            )
            .with_level(crate::facts::IssueLevel::Note),
        );
    }
}

/// One entry of systemd-sysctl's ordered hashmap: a key (or glob) with its
/// value, `None` for a `-key` exclusion.
struct SdOption {
    value: Option<String>,
    track: Track,
}

/// systemd-sysctl's result (src/sysctl/sysctl.c): lines go into an ordered
/// hashmap keyed by the normalised key or glob. A repeat with the **same**
/// value keeps the existing entry and its position (it only ORs the `-`
/// flag); a different value, or a `-key` exclusion, removes the entry and
/// appends a new one at the end. `apply_all()` then walks the map in order:
/// exclusions write nothing (so `key = v` followed by `-key` leaves `key`
/// unset), explicit keys write their value, and a glob writes every live key
/// it matches that has no entry of its own (assignment or exclusion) in the
/// map; a key matched by several globs ends with the last one in map order.
fn systemd_model(
    files: &[(String, Lines)],
    glob_matches: &BTreeMap<String, Vec<String>>,
    facts: &mut Facts,
) -> BTreeMap<String, Setting> {
    let mut slots: Vec<Option<(String, SdOption)>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (path, lines) in files {
        for l in lines.iter() {
            let (key, value) = match l {
                ConfLine::Assign { key, value, .. } => (key, Some(value)),
                ConfLine::Exclude { key, .. } => (key, None),
            };
            let ev = Evidence::line(path.clone(), l.line());
            if let Some(&i) = index.get(key) {
                let Some((_, existing)) = slots.get_mut(i).and_then(Option::as_mut) else {
                    continue;
                };
                if existing.value.as_ref() == value {
                    // same value: systemd keeps the earlier entry where it is
                    existing.track.push_overridden(ev);
                    continue;
                }
                let Some((_, mut old)) = slots.get_mut(i).and_then(Option::take) else {
                    continue;
                };
                if value.is_none() && old.value.is_some() {
                    facts.issues.push(
                        FileIssue::problem(
                            "sysctl",
                            path,
                            Some(l.line()),
                            format!(
                                "`-{key}` comes after the assignment at {}: systemd-sysctl does not set `{key}` at all (the exclusion replaces the assignment); procps `sysctl --system` still writes it",
                                old.track.winner
                            ),
                        )
                        .with_level(crate::facts::IssueLevel::Note),
                    );
                }
                old.track.set(value.cloned().unwrap_or_default(), ev);
                old.value = value.cloned();
                index.insert(key.clone(), slots.len());
                slots.push(Some((key.clone(), old)));
            } else {
                index.insert(key.clone(), slots.len());
                slots.push(Some((
                    key.clone(),
                    SdOption {
                        value: value.cloned(),
                        track: Track::new(value.cloned().unwrap_or_default(), ev),
                    },
                )));
            }
        }
    }
    let mut out: std::collections::HashMap<String, Track> = std::collections::HashMap::new();
    for (key, opt) in slots.into_iter().flatten() {
        let Some(value) = &opt.value else {
            continue; // exclusion: only there to keep globs away
        };
        if is_glob(&key) {
            for m in glob_matches.get(&key).map(Vec::as_slice).unwrap_or(&[]) {
                if index.contains_key(m) {
                    continue; // explicit setting exists
                }
                match out.get_mut(m) {
                    Some(t) => t.set(value.clone(), opt.track.winner.clone()),
                    None => {
                        let mut t = Track::new(value.clone(), opt.track.winner.clone());
                        for e in opt.track.overridden.iter().rev() {
                            t.push_overridden(e.clone());
                        }
                        out.insert(m.clone(), t);
                    }
                }
            }
        } else {
            note_dropped(facts, &key, &opt.track);
            out.insert(key, opt.track);
        }
    }
    out.into_iter()
        .map(|(k, t)| {
            let s = t.into_setting(&k);
            (k, s)
        })
        .collect()
}

/// procps `sysctl --system` (procps-ng src/sysctl.c, 4.0.x): every line of
/// every file goes into one list, in order, without de-duplication, and
/// `write_setting_list()` writes them in that order, so the last write of a
/// key wins. A glob writes every live key it matches unless the list holds an
/// entry with exactly that path (an assignment anywhere, or a `-key`
/// exclusion); an exclusion never unsets an explicit assignment. A
/// `- key = value` line keeps the blank in the key and writes nothing.
fn procps_model(
    files: &[(String, Lines)],
    glob_matches: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Setting> {
    let listed: std::collections::HashSet<&str> = files
        .iter()
        .flat_map(|(_, ls)| ls.iter())
        .filter(|l| {
            !matches!(
                l,
                ConfLine::Assign {
                    dash_blank: true,
                    ..
                } | ConfLine::Assign {
                    procps_fails: true,
                    ..
                }
            )
        })
        .map(|l| l.key())
        .filter(|k| !is_glob(k))
        .collect();
    let mut out: std::collections::HashMap<String, Track> = std::collections::HashMap::new();
    let mut put = |k: &str, value: &str, ev: Evidence| match out.get_mut(k) {
        Some(t) => t.set(value.to_string(), ev),
        None => {
            out.insert(k.to_string(), Track::new(value.to_string(), ev));
        }
    };
    for (path, lines) in files {
        for l in lines.iter() {
            let ConfLine::Assign {
                key,
                value,
                dash_blank: false,
                procps_fails: false,
                line,
                ..
            } = l
            else {
                continue;
            };
            if is_glob(key) {
                for m in glob_matches.get(key).map(Vec::as_slice).unwrap_or(&[]) {
                    if !listed.contains(m.as_str()) {
                        put(m, value, Evidence::line(path.clone(), *line));
                    }
                }
            } else {
                put(key, value, Evidence::line(path.clone(), *line));
            }
        }
    }
    out.into_iter()
        .map(|(k, t)| {
            let s = t.into_setting(&k);
            (k, s)
        })
        .collect()
}

/// A setting for `key`, with the value replaced by [`REDACTED`] when the key
/// holds key material ([`crate::secret::sysctl_key_is_secret`]: the TFO key,
/// `stable_secret`), configured or running.
fn setting(key: &str, value: &str, ev: Evidence) -> Setting {
    if crate::secret::sysctl_key_is_secret(key) {
        Setting::new(Value::Str(REDACTED.into()), REDACTED, ev)
    } else {
        Setting::new(typed(value), value, ev)
    }
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
    match host.read_kernel_value(&path, 64 * 1024) {
        Ok((_, mode)) if mode & 0o444 == 0 => Some(Entry::Unreadable {
            reason: "write-only key: the kernel does not let anyone read it".into(),
            evidence: ev,
        }),
        Ok((bytes, _)) => {
            let text = String::from_utf8_lossy(&bytes);
            let v = text.strip_suffix('\n').unwrap_or(&text).to_string();
            Some(Entry::Set(setting(key, &v, ev[0].clone())))
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
                        // a key is a file: a glob's last part never names a directory
                        let fits = if last {
                            e.kind != Some(EntryKind::Dir)
                        } else {
                            e.kind == Some(EntryKind::Dir)
                        };
                        if pat.matches(&e.name) && fits {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The literal head and tail only narrow what the pattern is tried on:
    /// every glob shape matches the same keys as the pattern over all keys.
    #[test]
    fn listed_matching_is_the_pattern_over_every_key() {
        let text = include_str!("../../../scripts/gen-fleet-sysctl.txt");
        let (mut map, _) = parse_capture(text);
        map.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        assert!(map.len() > 900);
        let globs = [
            "net.ipv4.conf.*.rp_filter",
            "net.ipv4.conf.*",
            "net.*.conf.*.forwarding",
            "*.rp_filter",
            "*",
            "net.ipv4.conf.e?h0.rp_filte?",
            "net.ipv4.conf.[el]*.rp_filter",
            "net.ipv4.conf.*.rp_[f]ilter",
            "net.ipv4.conf.*[r]",
            "net.ipv4.conf.eth0.rp_filter",
            "net.ipv[46].conf.all.*",
            "vm.*]",
            "kernel.*_max",
        ];
        for g in globs {
            let p = glob::Pattern::new(g).unwrap();
            let fast: Vec<&str> = listed_matching(&map, g, &p).collect();
            let all: Vec<&str> = map
                .iter()
                .map(|c| c.key.as_ref())
                .filter(|k| p.matches(k))
                .collect();
            assert_eq!(fast, all, "{g}");
        }
        let p = glob::Pattern::new("net.ipv4.conf.*.rp_filter").unwrap();
        assert!(listed_matching(&map, "net.ipv4.conf.*.rp_filter", &p).count() >= 3);
    }
}
