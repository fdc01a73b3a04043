//! The running kernel's values: where they come from ([`Live`]: a
//! `/proc/sys` tree, a `sysctl -a` listing, or nothing), which keys are
//! wanted (rule keys, persisted keys, glob expansions), what `snapshot.json`
//! says about completeness and unreadable keys, and the `sysctl` namespace
//! built from them ([`live_namespace`]). Reads `/proc/sys`, the listing
//! and `snapshot.json` only; knows nothing of which configuration line wins.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::tuned::Write;
use crate::facts::{Entry, Evidence, Facts, FileIssue, IssueLevel, Namespace, Needs};
use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::parse::sysctl::{
    is_glob, key_to_proc_path, parse_capture, swap_dot_slash, CaptureValue,
};

use super::files::Lines;
use super::{canonical_key, setting};

/// Keys that must never be read: reading has side effects.
const NEVER_READ: [&str; 1] = ["vm.stat_refresh"];

/// Where live values come from; a listing borrows from its text.
pub(super) enum Live<'t> {
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

/// Where this host's live values come from: the `sysctl -a` listing read
/// into `listing` (a snapshot's), else its `/proc/sys` tree (`proc_dir`),
/// else nothing, with why.
pub(super) fn live_source<'t>(
    host: &Host,
    facts: &mut Facts,
    listing: &'t Option<Result<(&'static str, String), String>>,
    proc_dir: bool,
) -> Live<'t> {
    match listing {
        None => Live::Proc { complete: true },
        Some(Ok((path, text))) => capture(host, facts, path, text),
        Some(Err(_)) if proc_dir => Live::Proc {
            complete: declared_complete(host, "sysctl").unwrap_or(false),
        },
        Some(Err(tried)) => Live::None(format!(
            "no live kernel values: the snapshot has neither proc/sys nor a `sysctl -a` listing ({tried})"
        )),
    }
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
pub(super) fn read_listing(
    host: &Host,
    facts: &mut Facts,
) -> Result<(&'static str, String), String> {
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

/// The lines of `text` numbered in `wanted`, as `numbered_lines` gives
/// them (`\r` before the newline dropped), found by a newline search that
/// stops at the last one wanted instead of splitting every line.
fn lines_at<'t>(text: &'t str, wanted: &BTreeSet<usize>) -> BTreeMap<usize, &'t str> {
    let mut out = BTreeMap::new();
    let Some(&max) = wanted.last() else {
        return out;
    };
    let ends = memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len()));
    let mut start = 0;
    for (i, end) in ends.enumerate() {
        let n = i + 1;
        if wanted.contains(&n) {
            let l = &text[start..end];
            out.insert(n, l.strip_suffix('\r').unwrap_or(l));
        }
        if n >= max {
            break;
        }
        start = end + 1;
    }
    out
}

/// The live values of a `sysctl -a` listing read from `path`, with its
/// issues recorded (what sysctl said it could not read is data, a note).
fn capture<'t>(host: &Host, facts: &mut Facts, path: &'static str, text: &'t str) -> Live<'t> {
    let (mut vals, issues) = parse_capture(text);
    let mut unreadable = BTreeMap::new();
    let issue_lines: BTreeSet<usize> = issues.iter().map(|i| i.line).collect();
    let lines = lines_at(text, &issue_lines);
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
    // keys are unique (the parser joins repeats), so a stable sort gives
    // what an unstable one would; the listing is usually sorted, often
    // with a short tail appended, which the stable sort takes as two runs
    // and merges in one pass where the unstable one sorted it all again
    vals.sort_by(|a, b| a.key.cmp(&b.key));
    Live::Capture {
        map: vals,
        path,
        complete: declared_complete(host, "sysctl").unwrap_or(true),
        unreadable,
    }
}

/// The keys the `sysctl` namespace needs live values for: rule keys,
/// tuned's keys, explicit persisted keys and what the globs of the
/// persisted files and of the rules (`for_each: { keys: ... }`) match;
/// with each persisted glob's matches, for the models.
pub(super) fn wanted_keys(
    host: &Host,
    needs: &Needs,
    tuned: &[Write],
    parsed: &[(String, Lines)],
    procps_files: &[(String, Lines)],
    live: &Live,
) -> (BTreeSet<String>, BTreeMap<String, Vec<String>>) {
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
        let m = match live {
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
        match live {
            Live::Proc { .. } => wanted.extend(expand_proc_glob(host, g)),
            Live::Capture { map, .. } => {
                if let Ok(p) = glob::Pattern::new(g) {
                    wanted.extend(listed_matching(map, g, &p).map(str::to_string));
                }
            }
            Live::None(_) => {}
        }
    }
    (wanted, glob_matches)
}

/// The `sysctl` namespace: the live value of each wanted key, or why it is
/// unknown (unreadable, not in an incomplete snapshot).
pub(super) fn live_namespace(
    host: &Host,
    live: &Live,
    wanted: &BTreeSet<String>,
    proc_dir: bool,
) -> Namespace {
    let listing_name = host
        .layout()
        .and_then(|l| l.sysctl_listing().first().copied())
        .unwrap_or(crate::catalogue::SYSCTL_A.path)
        .trim_start_matches('/');
    // Live namespace
    let mut live_ns = Namespace::of("sysctl");
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
    match live {
        Live::None(reason) => live_ns.unavailable = Some(reason.clone()),
        Live::Capture {
            map,
            path,
            complete,
            unreadable,
        } => {
            for k in wanted {
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
            for k in wanted {
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

    live_ns
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
            reason: crate::host::expected_refusal(&path, &e)
                .map_or_else(|| e.to_string(), str::to_string),
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

    /// `lines_at` gives the lines `numbered_lines` numbers so: CRLF, a
    /// last line without a newline, blank lines, numbers past the end.
    #[test]
    fn lines_at_is_numbered_lines_filtered() {
        for text in [
            "",
            "\n",
            "a\r\nb\n\nc",
            "a\nb\n",
            "\r\n\r\nx\r",
            "sysctl: x\r\nk = 1\nk = 2\n\n",
        ] {
            let all: BTreeSet<usize> = (0..9).collect();
            for wanted in [
                all.clone(),
                BTreeSet::from([1]),
                BTreeSet::from([2, 4]),
                BTreeSet::from([3, 8]),
                BTreeSet::new(),
            ] {
                let want: BTreeMap<usize, &str> = crate::parse::numbered_lines(text)
                    .filter(|(n, _)| wanted.contains(n))
                    .collect();
                assert_eq!(lines_at(text, &wanted), want, "{text:?} {wanted:?}");
            }
        }
    }

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
