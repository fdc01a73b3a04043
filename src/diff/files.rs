//! `diff --files`: the captured files of each side (a snapshot's regular
//! files, or what a recording live host read), compared one file at a time
//! and shown redacted as unified diffs within output bounds; a file that
//! cannot be read on a side is listed as not compared, with the reason.
//! Reads hosts only through [`Host`]; must not compare settings or verdicts.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::Facts;
use crate::host::{EntryKind, Host, SourceKind};
use crate::report::diff::{ChangeKind, FileChange, FileNotCompared, FilesDiff};
use crate::snapshot::redact_file;

/// Most files compared per side with `--files`.
const MAX_FILES: usize = 20_000;
/// Deepest directory level walked in a snapshot with `--files`.
const MAX_DEPTH: usize = 32;

/// Host files the readers of a side could not read, with the reason (a
/// live side lists only what it read, so these would otherwise look absent).
pub(super) fn unreadable_files(f: &Facts) -> BTreeMap<String, String> {
    f.issues
        .iter()
        .filter_map(|i| Some((i.path.clone(), i.read_error.clone()?)))
        .collect()
}

/// The captured files of a side, redacted: every regular file of a snapshot
/// (except `snapshot.json`), or the files a recording live host has read
/// (except `/proc` and `/sys`).
pub fn side_files(host: &Host) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match host.kind() {
        SourceKind::Live => {
            for (p, bytes) in host.read_log().unwrap_or_default().files {
                if p.starts_with("/proc/") || p.starts_with("/sys/") {
                    continue;
                }
                out.insert(
                    p.clone(),
                    String::from_utf8_lossy(&redact_file(&p, &bytes)).into_owned(),
                );
            }
        }
        SourceKind::Snapshot => {
            // The same listing `diff --files` compares, read one file at a time.
            for p in side_paths(host) {
                if let Ok(bytes) = host.read_bytes(&p) {
                    let text = String::from_utf8_lossy(&redact_file(&p, &bytes)).into_owned();
                    out.insert(p, text);
                }
            }
        }
    }
    out
}

/// Largest file (per side, after redaction) shown as a unified diff; a
/// larger changed file is summarised (sizes and the first differing line).
pub const MAX_DIFF_FILE_BYTES: usize = 1024 * 1024;
/// Most bytes of unified diff one file contributes; the rest is counted.
pub const MAX_UNIFIED_BYTES: usize = 64 * 1024;
/// Longest line shown in a unified diff (a 16 MiB line is cut here).
pub const MAX_DIFF_LINE: usize = 400;

/// Paths of the captured files of a side, without their contents: every
/// regular file of a snapshot (except `snapshot.json`), or the files a
/// recording live host has read (except `/proc` and `/sys`).
pub fn side_paths(host: &Host) -> BTreeSet<String> {
    side_paths_counted(host).0
}

/// [`side_paths`], and whether the listing stopped at its cap.
fn side_paths_counted(host: &Host) -> (BTreeSet<String>, bool) {
    let mut out = BTreeSet::new();
    match host.kind() {
        SourceKind::Live => {
            for p in host.read_log().unwrap_or_default().files.into_keys() {
                if !p.starts_with("/proc/") && !p.starts_with("/sys/") {
                    out.insert(p);
                }
            }
        }
        SourceKind::Snapshot => {
            let mut stack = vec![("/".to_string(), 0usize)];
            while let Some((dir, depth)) = stack.pop() {
                let Ok(entries) = host.read_dir(&dir) else {
                    continue;
                };
                for e in entries {
                    if out.len() >= MAX_FILES {
                        return (out, true);
                    }
                    let p = crate::host::join_host(&dir, &e.name);
                    if e.is_symlink || p == "/snapshot.json" {
                        continue;
                    }
                    match e.kind {
                        Some(EntryKind::Dir) if depth < MAX_DEPTH => stack.push((p, depth + 1)),
                        Some(EntryKind::File) => {
                            out.insert(p);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    (out, false)
}

/// Where a side's files come from: a live host's read log (already in
/// memory: it is what the readers read) or the snapshot, read one at a time.
enum FileSource<'a> {
    Log(BTreeMap<String, Vec<u8>>),
    Snapshot(&'a Host),
}

impl FileSource<'_> {
    fn of(host: &Host) -> FileSource<'_> {
        match host.kind() {
            SourceKind::Live => FileSource::Log(host.read_log().unwrap_or_default().files),
            SourceKind::Snapshot => FileSource::Snapshot(host),
        }
    }
    /// One file as read, or why it cannot be.
    fn get(&mut self, path: &str) -> Result<Vec<u8>, String> {
        match self {
            FileSource::Log(m) => m
                .remove(path)
                .ok_or_else(|| "not read by the audit".to_string()),
            FileSource::Snapshot(h) => h.read_bytes(path).map_err(|e| e.to_string()),
        }
    }
}

/// `diff --files` between two hosts, one file at a time: at most one file
/// of each side is held in memory, a changed file contributes at most
/// [`MAX_UNIFIED_BYTES`] of diff with lines cut at [`MAX_DIFF_LINE`], and a
/// file larger than [`MAX_DIFF_FILE_BYTES`] (or binary) is summarised. A
/// file that cannot be read on a side (over the 16 MiB file cap, the host's
/// read budget spent, unreadable) is listed as not compared, with the
/// reason, never skipped.
pub fn diff_hosts_files(before: &Host, after: &Host) -> FilesDiff {
    diff_hosts_files_with(before, after, &BTreeMap::new(), &BTreeMap::new())
}

/// [`diff_hosts_files`], where `unreadable_*` are the files the readers of a
/// side could not read (a live side lists only the files it read: one it
/// could not read is not compared rather than "only on the other side").
pub(super) fn diff_hosts_files_with(
    before: &Host,
    after: &Host,
    unreadable_before: &BTreeMap<String, String>,
    unreadable_after: &BTreeMap<String, String>,
) -> FilesDiff {
    let ((pb, cut_b), (pa, cut_a)) = (side_paths_counted(before), side_paths_counted(after));
    let (mut sb, mut sa) = (FileSource::of(before), FileSource::of(after));
    let mut out = FilesDiff::default();
    let not_compared = |path: &str, b: Option<String>, a: Option<String>| {
        let (side, reason) = match (b, a) {
            (Some(x), Some(y)) if x == y => ("both", x),
            (Some(x), Some(y)) => ("both", format!("before: {x}; after: {y}")),
            (Some(x), None) => ("before", x),
            (None, Some(y)) => ("after", y),
            (None, None) => ("both", "not read".to_string()),
        };
        FileNotCompared {
            path: path.to_string(),
            side,
            reason,
        }
    };
    let live_unreadable = |host: &Host, u: &BTreeMap<String, String>, p: &str| {
        (host.kind() == SourceKind::Live)
            .then(|| u.get(p).cloned())
            .flatten()
    };
    for p in pb.union(&pa) {
        let on_b = pb.contains(p) || live_unreadable(before, unreadable_before, p).is_some();
        let on_a = pa.contains(p) || live_unreadable(after, unreadable_after, p).is_some();
        match (on_b, on_a) {
            (true, true) => {
                let x = if pb.contains(p) {
                    sb.get(p)
                } else {
                    Err(unreadable_before[p].clone())
                };
                let y = if pa.contains(p) {
                    sa.get(p)
                } else {
                    Err(unreadable_after[p].clone())
                };
                let (x, y) = match (x, y) {
                    (Ok(x), Ok(y)) => (x, y),
                    (x, y) => {
                        out.not_compared.push(not_compared(p, x.err(), y.err()));
                        continue;
                    }
                };
                // Equal as read: nothing to redact or show. A binary file is
                // only summarised (no content shown), so it is not redacted.
                if x == y {
                    continue;
                }
                let (x, y) = if x.contains(&0) || y.contains(&0) {
                    (x, y)
                } else {
                    (redact_file(p, &x), redact_file(p, &y))
                };
                if x != y {
                    out.changes.push(FileChange {
                        path: p.clone(),
                        kind: ChangeKind::Changed,
                        unified: bounded_unified(p, &x, &y),
                    });
                }
            }
            (true, false) => out.changes.push(FileChange {
                path: p.clone(),
                kind: ChangeKind::Removed,
                unified: String::new(),
            }),
            _ => out.changes.push(FileChange {
                path: p.clone(),
                kind: ChangeKind::Added,
                unified: String::new(),
            }),
        }
    }
    let cut = format!("more than {MAX_FILES} files: the rest were not listed");
    match (cut_b, cut_a) {
        (true, true) => out
            .not_compared
            .push(not_compared("*", Some(cut.clone()), Some(cut))),
        (true, false) => out.not_compared.push(not_compared("*", Some(cut), None)),
        (false, true) => out.not_compared.push(not_compared("*", None, Some(cut))),
        (false, false) => {}
    }
    out
}

/// A unified diff of two versions of a file within the output bounds.
fn bounded_unified(path: &str, x: &[u8], y: &[u8]) -> String {
    // the name on one line: a newline in it cannot print a report line
    let shown = crate::render::printable(path, false);
    let binary = x.contains(&0) || y.contains(&0);
    if binary || x.len() > MAX_DIFF_FILE_BYTES || y.len() > MAX_DIFF_FILE_BYTES {
        let first = x
            .iter()
            .zip(y)
            .position(|(a, b)| a != b)
            .unwrap_or(x.len().min(y.len()));
        let line = x[..first].iter().filter(|b| **b == b'\n').count() + 1;
        let why = if binary {
            "binary content is not shown".to_string()
        } else {
            format!("too large to show (limit {MAX_DIFF_FILE_BYTES} bytes)")
        };
        return format!(
            "--- before{shown}\n+++ after{shown}\n@@ {} file changed: {} -> {} bytes, first difference at byte {first} (line {line}); {why} @@\n",
            if binary { "binary" } else { "large" },
            x.len(),
            y.len(),
        );
    }
    let (xs, ys) = (String::from_utf8_lossy(x), String::from_utf8_lossy(y));
    let d = similar::TextDiff::from_lines(xs.as_ref(), ys.as_ref());
    let full = d
        .unified_diff()
        .context_radius(3)
        .header(&format!("before{shown}"), &format!("after{shown}"))
        .to_string();
    let mut out = String::new();
    let mut left = 0usize;
    for line in full.split_inclusive('\n') {
        if out.len() >= MAX_UNIFIED_BYTES {
            left += 1;
            continue;
        }
        if line.len() > MAX_DIFF_LINE {
            let mut cut = MAX_DIFF_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&line[..cut]);
            out.push_str(&format!(
                "… ({} more bytes on this line)\n",
                line.len() - cut
            ));
        } else {
            out.push_str(line);
        }
    }
    if left > 0 {
        out.push_str(&format!(
            "@@ {left} more diff lines not shown (limit {MAX_UNIFIED_BYTES} bytes per file) @@\n"
        ));
    }
    out
}

/// Unified diffs of files present on both sides that differ; files on one
/// side only are listed as added or removed.
pub fn diff_files(b: &BTreeMap<String, String>, a: &BTreeMap<String, String>) -> Vec<FileChange> {
    let paths: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    let mut out = Vec::new();
    for p in paths {
        match (b.get(p), a.get(p)) {
            (Some(x), Some(y)) if x != y => {
                let shown = crate::render::printable(p, false);
                let d = similar::TextDiff::from_lines(x.as_str(), y.as_str());
                let unified = d
                    .unified_diff()
                    .context_radius(3)
                    .header(&format!("before{shown}"), &format!("after{shown}"))
                    .to_string();
                out.push(FileChange {
                    path: p.clone(),
                    kind: ChangeKind::Changed,
                    unified,
                });
            }
            (Some(_), None) => out.push(FileChange {
                path: p.clone(),
                kind: ChangeKind::Removed,
                unified: String::new(),
            }),
            (None, Some(_)) => out.push(FileChange {
                path: p.clone(),
                kind: ChangeKind::Added,
                unified: String::new(),
            }),
            _ => {}
        }
    }
    out
}
