//! `driftaudit diff`: the semantic difference between two hosts (snapshots or
//! live) gathered with the same policies: every setting of every namespace in
//! [`Facts`], host facts, directory sizes and tested paths, with provenance on
//! both sides; the rule verdicts that changed; and, on request, unified diffs
//! of the captured files. Applies waivers to both sides' verdicts. The
//! result is report data (`report/diff.rs`, re-exported here) and its text
//! and JSON forms are in `render/diff.rs`. Reads hosts only through
//! [`Host`]; no rule logic here (verdicts come from the engine), prints
//! nothing.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine;
use crate::expr;
use crate::facts::{Entry, Evidence, Facts, Namespace};
use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::policy::PolicySet;
use crate::report::{Finding, HostReport, Report, Status};
use crate::snapshot::redact_file;
use crate::value::Value;
use crate::waiver::WaiverSet;

pub use crate::render::diff::{render_json, render_text};
pub use crate::report::diff::{
    Change, ChangeKind, DefaultDrivenChange, Diff, FileChange, FileNotCompared, FilesDiff,
    SideMeta, VerdictChange, VersionChange, DIFF_SCHEMA,
};

/// Most files compared per side with `--files`.
const MAX_FILES: usize = 20_000;
/// Deepest directory level walked in a snapshot with `--files`.
const MAX_DEPTH: usize = 32;

/// One side of a diff: a snapshot directory or the live host.
#[derive(Debug, Clone)]
pub struct Side {
    /// As given on the command line (`live` or the directory).
    pub label: String,
    /// The host (a recording live host, so `--files` knows what was read).
    pub host: Host,
}

/// Why a diff could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// A side is neither `live` nor a snapshot that can be opened.
    #[error("`{side}`: {source}")]
    Open {
        /// The side as given.
        side: String,
        /// Why it cannot be opened.
        source: ReadError,
    },
}

impl Side {
    /// `live` or a snapshot directory.
    pub fn open(spec: &str) -> Result<Side, DiffError> {
        let host = if spec == "live" {
            Host::recording()
        } else {
            Host::snapshot(spec).map_err(|source| DiffError::Open {
                side: spec.to_string(),
                source,
            })?
        };
        Ok(Side {
            label: spec.to_string(),
            host,
        })
    }
}

/// Options of [`diff`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffOptions<'a> {
    /// Add unified diffs of changed files.
    pub files: bool,
    /// Waivers applied to both sides' reports before verdicts are compared.
    pub waivers: Option<&'a WaiverSet>,
    /// Today's date for waiver expiry (`YYYY-MM-DD`).
    pub today: &'a str,
}

/// Gather both sides with the same policies, evaluate, and compare.
pub fn diff(policies: &PolicySet, before: &Side, after: &Side, opts: &DiffOptions) -> Diff {
    // every namespace, and every live kernel key: a runtime change is a
    // change whether or not a rule reads that key
    let mut needs = engine::needs(policies);
    for depth in 1..=8 {
        needs.sysctl_globs.insert(vec!["*"; depth].join("."));
    }
    needs.namespaces.extend(
        crate::catalogue::NAMESPACES
            .iter()
            .map(|n| n.name.to_string()),
    );
    let fb = crate::facts::gather(&before.host, &needs);
    let fa = crate::facts::gather(&after.host, &needs);
    let mut rb = Report::new(vec![engine::evaluate(policies, &fb)], policies);
    let mut ra = Report::new(vec![engine::evaluate(policies, &fa)], policies);
    if let Some(w) = opts.waivers {
        w.apply(&mut rb, opts.today);
        w.apply(&mut ra, opts.today);
    }
    let empty = |f: &Facts| HostReport::new(f.host.clone(), f.source, Vec::new());
    // Waiver housekeeping (expired/stale waivers) is not a host change.
    let hosts_only = |mut h: HostReport| {
        h.findings.retain(|f| f.rule != crate::waiver::WAIVER_RULE);
        h
    };
    let hb = hosts_only(rb.hosts.pop().unwrap_or_else(|| empty(&fb)));
    let ha = hosts_only(ra.hosts.pop().unwrap_or_else(|| empty(&fa)));
    let v = diff_verdicts(&hb, &ha);
    let files = opts.files.then(|| {
        diff_hosts_files_with(
            &before.host,
            &after.host,
            &unreadable_files(&fb),
            &unreadable_files(&fa),
        )
    });
    let (files, files_not_compared) = match files {
        Some(f) => (Some(f.changes), Some(f.not_compared)),
        None => (None, None),
    };
    Diff {
        schema: DIFF_SCHEMA,
        same_host: fb.host == fa.host,
        before: SideMeta {
            host: fb.host.clone(),
            source: before.label.clone(),
        },
        after: SideMeta {
            host: fa.host.clone(),
            source: after.label.clone(),
        },
        versions: version_changes(&fb, &fa),
        default_driven: default_driven(&fb, &fa),
        changes: diff_facts(&fb, &fa),
        regressions: v.regressions,
        fixes: v.fixes,
        new: v.new,
        vanished: v.vanished,
        other: v.other,
        files,
        files_not_compared,
    }
}

/// The server and kernel versions that differ between the sides.
pub fn version_changes(b: &Facts, a: &Facts) -> Vec<VersionChange> {
    let text = |f: &Facts, k: &str| match f.facts.get(k) {
        Some(Ok(v)) => Some(v.to_plain()),
        _ => None,
    };
    ["mysql_version", "kernel_release"]
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (text(b, k), text(a, k));
            (x != y && (x.is_some() || y.is_some())).then(|| VersionChange {
                fact: k.to_string(),
                before: x,
                after: y,
            })
        })
        .collect()
}

/// Effective MySQL/MariaDB values that changed only because the release
/// changed the default (policies/upgrade): the version rose within one
/// product, no option file sets the variable on either side, and the data
/// has a default change between the two versions. Values are the runtime
/// captures' where both sides have one, else the data's defaults.
pub fn default_driven(b: &Facts, a: &Facts) -> Vec<DefaultDrivenChange> {
    use crate::facts::mysql::ServerVersion;
    use crate::upgrade::data::{builtin_for, Product};
    let version = |f: &Facts| match f.facts.get("mysql_version") {
        Some(Ok(Value::Str(s))) => ServerVersion::parse(s),
        _ => None,
    };
    let (Some(vb), Some(va)) = (version(b), version(a)) else {
        return Vec::new();
    };
    if vb.mariadb != va.mariadb || vb.parts >= va.parts {
        return Vec::new();
    }
    let product = if va.mariadb {
        Product::Mariadb
    } else {
        Product::Mysql
    };
    let Ok(k) = builtin_for(product) else {
        return Vec::new();
    };
    let set_in_files = |f: &Facts, name: &str| {
        f.namespaces
            .get("mycnf")
            .is_some_and(|n| n.entries.contains_key(name))
    };
    let runtime = |f: &Facts, name: &str| match f.namespaces.get("mysql").and_then(|n| n.get(name))
    {
        Some(Entry::Set(s)) => Some(s.raw.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    for e in &k.entries {
        let inside: Vec<_> = e
            .defaults
            .iter()
            .filter(|d| {
                d.version.cmp_to(&vb.parts) == std::cmp::Ordering::Greater
                    && d.version.cmp_to(&va.parts) != std::cmp::Ordering::Greater
            })
            .collect();
        let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
            continue;
        };
        if set_in_files(b, &e.name) || set_in_files(a, &e.name) {
            continue;
        }
        let (before, after, from) = match (runtime(b, &e.name), runtime(a, &e.name)) {
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(&y) => continue,
            (Some(x), Some(y)) => (x, y, "runtime"),
            _ => (first.old.clone(), last.new.clone(), "data"),
        };
        out.push(DefaultDrivenChange {
            subject: e.name.clone(),
            before,
            after,
            from,
            changed_in: last.version.to_string(),
            reference: e.reference.clone(),
        });
    }
    out
}

/// Host files the readers of a side could not read, with the reason (a
/// live side lists only what it read, so these would otherwise look absent).
fn unreadable_files(f: &Facts) -> BTreeMap<String, String> {
    f.issues
        .iter()
        .filter_map(|i| Some((i.path.clone(), i.read_error.clone()?)))
        .collect()
}

fn entry_text(e: &Entry) -> String {
    match e {
        Entry::Set(s) => {
            let shown = expr::show(&s.value);
            let raw = s.raw.trim();
            if !raw.is_empty() && raw != shown && raw != s.value.to_plain() {
                format!("{shown} ({raw})")
            } else {
                shown
            }
        }
        Entry::Unreadable { reason, .. } => format!("unreadable: {reason}"),
    }
}

fn entry_evidence(e: &Entry) -> Vec<Evidence> {
    match e {
        Entry::Set(s) => s.evidence.clone(),
        Entry::Unreadable { evidence, .. } => evidence.clone(),
    }
}

/// Loose equality of two values for the diff: [`Value::loosely_equals`],
/// plus boolean spellings on both sides (`ON` as text against `1`), which
/// `loosely_equals` only accepts when one side is already a boolean.
pub fn same_value(a: &Value, b: &Value) -> bool {
    if a.loosely_equals(b) {
        return true;
    }
    let boolish = |v: &Value| match v {
        Value::Bool(x) => Some(*x),
        Value::Number(n) if *n == 0.0 || *n == 1.0 => Some(*n == 1.0),
        Value::Str(s) => crate::value::parse_bool(s),
        _ => None,
    };
    matches!((boolish(a), boolish(b)), (Some(x), Some(y)) if x == y)
}

fn entries_equal(a: &Entry, b: &Entry) -> bool {
    match (a, b) {
        (Entry::Set(x), Entry::Set(y)) => same_value(&x.value, &y.value),
        (Entry::Unreadable { .. }, Entry::Unreadable { .. }) => true,
        _ => false,
    }
}

fn change(
    ns: &str,
    subject: &str,
    before: Option<String>,
    after: Option<String>,
    eb: Vec<Evidence>,
    ea: Vec<Evidence>,
) -> Change {
    let kind = match (&before, &after) {
        (Some(_), Some(_)) | (None, None) => ChangeKind::Changed,
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
    };
    Change {
        subject: subject.to_string(),
        namespace: ns.to_string(),
        kind,
        before,
        after,
        evidence_before: eb,
        evidence_after: ea,
    }
}

/// Option-file namespaces, where `skip-X` is `X = OFF` to the server.
const OPTION_NAMESPACES: [&str; 3] = ["mycnf", "mycnf_effective", "zimbra_mycnf"];

/// An option's key and value as the server takes them: `skip_X` set (on)
/// is `X` off, so `skip-external-locking` before and `external_locking =
/// OFF` after (how each release's option table names it) are one setting.
fn server_meaning<'a>(k: &'a str, e: &Entry) -> (&'a str, Option<bool>) {
    let as_bool = |e: &Entry| match e {
        Entry::Set(s) => match &s.value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) if *n == 0.0 || *n == 1.0 => Some(*n == 1.0),
            Value::Str(x) => crate::value::parse_bool(x),
            _ => None,
        },
        Entry::Unreadable { .. } => None,
    };
    match (k.strip_prefix("skip_"), as_bool(e)) {
        (Some(base), Some(b)) => (base, Some(!b)),
        (_, b) => (k, b),
    }
}

fn diff_namespace(name: &str, b: Option<&Namespace>, a: Option<&Namespace>, out: &mut Vec<Change>) {
    let empty = Namespace::default();
    let (nb, na) = (b.unwrap_or(&empty), a.unwrap_or(&empty));
    // not read on either side (for whatever reason each gives): the same
    // state, not a change
    if nb.unavailable.is_some() && na.unavailable.is_some() {
        return;
    }
    if nb.unavailable.is_some() || na.unavailable.is_some() {
        let describe = |n: &Namespace| match &n.unavailable {
            Some(r) => format!("unavailable: {r}"),
            None => format!("{} setting(s)", n.entries.len()),
        };
        if nb.unavailable != na.unavailable {
            out.push(change(
                name,
                "*",
                Some(describe(nb)),
                Some(describe(na)),
                Vec::new(),
                Vec::new(),
            ));
        }
        return;
    }
    if OPTION_NAMESPACES.contains(&name) {
        diff_options(name, nb, na, out);
        return;
    }
    let keys: BTreeSet<&String> = nb.entries.keys().chain(na.entries.keys()).collect();
    // counters and random values the kernel changes by itself (a snapshot
    // leaves them out of its capture): never a change
    let volatile = |k: &str| {
        name == "sysctl" && (crate::snapshot::volatile_sysctl(k) || k == "vm.stat_refresh")
    };
    for k in keys.into_iter().filter(|k| !volatile(k)) {
        match (nb.entries.get(k), na.entries.get(k)) {
            (Some(x), Some(y)) if entries_equal(x, y) => {}
            // a live key no one can read (write-only, EIO) against a capture
            // that could not list it: nothing is known to have changed
            (None, Some(Entry::Unreadable { .. })) | (Some(Entry::Unreadable { .. }), None)
                if name == "sysctl" => {}
            (x, y) => out.push(change(
                name,
                k,
                x.map(entry_text),
                y.map(entry_text),
                x.map(entry_evidence).unwrap_or_default(),
                y.map(entry_evidence).unwrap_or_default(),
            )),
        }
    }
}

/// A namespace's entries by what the server makes of each key.
type ByMeaning<'a> = BTreeMap<&'a str, (&'a String, &'a Entry, Option<bool>)>;

fn by_meaning(n: &Namespace) -> ByMeaning<'_> {
    n.entries
        .iter()
        .map(|(k, e)| {
            let (m, b) = server_meaning(k, e);
            (m, (k, e, b))
        })
        .collect()
}

/// [`diff_namespace`] of option files: keys compared by what the server
/// makes of them ([`server_meaning`]), shown as written.
fn diff_options(name: &str, nb: &Namespace, na: &Namespace, out: &mut Vec<Change>) {
    let (sb, sa) = (by_meaning(nb), by_meaning(na));
    let keys: BTreeSet<&str> = sb.keys().chain(sa.keys()).copied().collect();
    for k in keys {
        let (x, y) = (sb.get(k), sa.get(k));
        let same = match (x, y) {
            (Some((_, _, Some(p))), Some((_, _, Some(q)))) => p == q,
            (Some((_, e, _)), Some((_, f, _))) => entries_equal(e, f),
            _ => false,
        };
        if same {
            continue;
        }
        let shown = y.or(x).map_or(k, |(orig, _, _)| orig.as_str());
        out.push(change(
            name,
            shown,
            x.map(|(_, e, _)| entry_text(e)),
            y.map(|(_, e, _)| entry_text(e)),
            x.map(|(_, e, _)| entry_evidence(e)).unwrap_or_default(),
            y.map(|(_, e, _)| entry_evidence(e)).unwrap_or_default(),
        ));
    }
}

/// Every setting and fact that differs between two gathered hosts. Values are
/// compared with [`same_value`] after the namespaces'
/// own canonicalisation of names, so spelling differences are not changes.
pub fn diff_facts(b: &Facts, a: &Facts) -> Vec<Change> {
    let mut out = Vec::new();
    // Host facts (the host name is in the header, not a change).
    let keys: BTreeSet<&String> = b.facts.keys().chain(a.facts.keys()).collect();
    for k in keys.into_iter().filter(|k| k.as_str() != "hostname") {
        let show = |v: &Result<crate::value::Value, String>| match v {
            Ok(v) => expr::show(v),
            Err(e) => format!("unknown: {e}"),
        };
        match (b.facts.get(k), a.facts.get(k)) {
            (Some(Ok(x)), Some(Ok(y))) if same_value(x, y) => {}
            (Some(Err(_)), Some(Err(_))) => {}
            (x, y) => out.push(change(
                "facts",
                k,
                x.map(show),
                y.map(show),
                x.map(|_| fact_evidence(k, b)).unwrap_or_default(),
                y.map(|_| fact_evidence(k, a)).unwrap_or_default(),
            )),
        }
    }
    // Settings namespaces.
    let names: BTreeSet<&String> = b.namespaces.keys().chain(a.namespaces.keys()).collect();
    for n in names {
        diff_namespace(n, b.namespaces.get(n), a.namespaces.get(n), &mut out);
    }
    // Directory sizes.
    let dirs: BTreeSet<&String> = b.dir_sizes.keys().chain(a.dir_sizes.keys()).collect();
    for d in dirs {
        let show = |v: &Result<u64, String>| match v {
            Ok(n) => crate::value::format_size(*n as f64),
            Err(e) => format!("unknown: {e}"),
        };
        match (b.dir_sizes.get(d), a.dir_sizes.get(d)) {
            (Some(Ok(x)), Some(Ok(y))) if x == y => {}
            (Some(Err(_)), Some(Err(_))) => {}
            (x, y) => out.push(change(
                "du",
                d,
                x.map(show),
                y.map(show),
                Vec::new(),
                Vec::new(),
            )),
        }
    }
    // Paths the policies test for.
    let paths: BTreeSet<&String> = b
        .existing_paths
        .iter()
        .chain(a.existing_paths.iter())
        .collect();
    for p in paths {
        let (x, y) = (b.existing_paths.contains(p), a.existing_paths.contains(p));
        if x != y {
            let s = |e: bool| e.then(|| "exists".to_string());
            out.push(change("paths", p, s(x), s(y), Vec::new(), Vec::new()));
        }
    }
    out
}

/// Where a host fact comes from (the file its reader reads first).
fn fact_evidence(name: &str, f: &Facts) -> Vec<Evidence> {
    let path = match name {
        "mem_total" => "/proc/meminfo",
        "cpu_count" => "/proc/cpuinfo",
        "kernel_release" => {
            let from_capture = f.namespaces.get("sysctl").is_some_and(|n| {
                n.entries
                    .values()
                    .flat_map(entry_evidence)
                    .any(|e| e.path.starts_with("/captures/"))
            });
            if from_capture {
                "/captures/sysctl-a.txt"
            } else {
                "/proc/sys/kernel/osrelease"
            }
        }
        n if n.starts_with("os_") => "/etc/os-release",
        _ => return Vec::new(),
    };
    vec![Evidence::file(path)]
}

/// Verdict changes between two host reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts {
    /// Not failing (or absent) before, failing after.
    pub regressions: Vec<VerdictChange>,
    /// Failing before, passing/skipped/absent after.
    pub fixes: Vec<VerdictChange>,
    /// After-only findings that do not fail.
    pub new: Vec<VerdictChange>,
    /// Before-only findings that did not fail.
    pub vanished: Vec<VerdictChange>,
    /// Other status changes.
    pub other: Vec<VerdictChange>,
}

type Key = (String, Vec<String>);

fn key(f: &Finding) -> Key {
    (f.rule.clone(), f.subject.clone())
}

/// Pair findings of both sides: same rule and subject first; then, per rule,
/// a single leftover finding on each side (a rule that was skipped with no
/// subject before and fails on a key after is the same verdict changing).
fn pair_findings<'a>(
    b: &'a HostReport,
    a: &'a HostReport,
) -> Vec<(Option<&'a Finding>, Option<&'a Finding>)> {
    let mut mb: BTreeMap<Key, &Finding> = BTreeMap::new();
    for f in &b.findings {
        mb.entry(key(f)).or_insert(f);
    }
    let mut ma: BTreeMap<Key, &Finding> = BTreeMap::new();
    for f in &a.findings {
        ma.entry(key(f)).or_insert(f);
    }
    let mut pairs = Vec::new();
    let both: Vec<Key> = mb.keys().filter(|k| ma.contains_key(*k)).cloned().collect();
    for k in both {
        pairs.push((mb.remove(&k), ma.remove(&k)));
    }
    let mut left_b: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in mb.into_values() {
        left_b.entry(f.rule.clone()).or_default().push(f);
    }
    let mut left_a: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in ma.into_values() {
        left_a.entry(f.rule.clone()).or_default().push(f);
    }
    let rules: BTreeSet<String> = left_b.keys().chain(left_a.keys()).cloned().collect();
    for r in rules {
        let fb = left_b.remove(&r).unwrap_or_default();
        let fa = left_a.remove(&r).unwrap_or_default();
        if let ([x], [y]) = (fb.as_slice(), fa.as_slice()) {
            pairs.push((Some(*x), Some(*y)));
            continue;
        }
        pairs.extend(fb.into_iter().map(|f| (Some(f), None)));
        pairs.extend(fa.into_iter().map(|f| (None, Some(f))));
    }
    pairs
}

/// Compare verdicts of two host reports (see [`Verdicts`]).
pub fn diff_verdicts(b: &HostReport, a: &HostReport) -> Verdicts {
    let mut v = Verdicts::default();
    for (fb, fa) in pair_findings(b, a) {
        let (bs, as_) = (fb.map(|f| f.status), fa.map(|f| f.status));
        let vc = |f: &Finding| VerdictChange {
            before_status: bs,
            after_status: as_,
            finding: f.clone(),
        };
        match (fb, fa) {
            (_, Some(x)) if x.status == Status::Fail && bs != Some(Status::Fail) => {
                v.regressions.push(vc(x))
            }
            (Some(x), y) if x.status == Status::Fail && !matches!(as_, Some(Status::Fail)) => {
                match y {
                    None => v.fixes.push(vc(x)),
                    Some(y) if matches!(y.status, Status::Pass | Status::Skip) => {
                        // a rule's one summary pass (no subject) fixes the
                        // subject that failed: the fix names it
                        let mut c = vc(y);
                        if c.finding.subject.is_empty() {
                            c.finding.subject = x.subject.clone();
                        }
                        v.fixes.push(c)
                    }
                    Some(y) => v.other.push(vc(y)),
                }
            }
            (None, Some(y)) => v.new.push(vc(y)),
            (Some(x), None) => v.vanished.push(vc(x)),
            (Some(x), Some(y)) if x.status != y.status => v.other.push(vc(y)),
            _ => {}
        }
    }
    // A rule whose regression or fix is reported does not also list the
    // summary finding it replaced (a drift rule's pass line) as new/vanished.
    let changed: BTreeSet<String> = v
        .regressions
        .iter()
        .chain(v.fixes.iter())
        .map(|c| c.finding.rule.clone())
        .collect();
    v.new.retain(|c| !changed.contains(&c.finding.rule));
    v.vanished.retain(|c| !changed.contains(&c.finding.rule));
    v
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
fn diff_hosts_files_with(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Setting;
    use crate::value::parse_size;

    fn facts(host: &str, ns: &str, canon: fn(&str) -> String, kv: &[(&str, Value, &str)]) -> Facts {
        let h =
            Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean")).unwrap();
        let mut f = Facts::new(&h);
        f.host = host.into();
        let mut n = Namespace::new("not set");
        n.canonicalize = Some(canon);
        for (k, v, raw) in kv {
            n.set(
                n.canonical(k),
                Setting::new(v.clone(), *raw, Evidence::line("/etc/my.cnf", 3)),
            );
        }
        f.namespaces.insert(ns.into(), n);
        f
    }

    fn option_canon(k: &str) -> String {
        k.trim().to_ascii_lowercase().replace('-', "_")
    }

    #[test]
    fn spelling_differences_are_not_changes() {
        let b = facts(
            "db1",
            "mycnf",
            option_canon,
            &[
                (
                    "innodb_buffer_pool_size",
                    Value::Size(parse_size("2048M").unwrap()),
                    "2048M",
                ),
                ("Skip-Name-Resolve", Value::Str("ON".into()), "ON"),
                ("max_connections", Value::Number(151.0), "151"),
            ],
        );
        let a = facts(
            "db1",
            "mycnf",
            option_canon,
            &[
                (
                    "innodb-buffer-pool-size",
                    Value::Number(2147483648.0),
                    "2147483648",
                ),
                ("skip_name_resolve", Value::Number(1.0), "1"),
                ("max_connections", Value::Number(500.0), "500"),
                ("log_bin", Value::Str("mysql-bin".into()), "mysql-bin"),
            ],
        );
        let c = diff_facts(&b, &a);
        let got: Vec<(&str, ChangeKind)> = c.iter().map(|c| (c.subject.as_str(), c.kind)).collect();
        assert_eq!(
            got,
            [
                ("log_bin", ChangeKind::Added),
                ("max_connections", ChangeKind::Changed)
            ]
        );
        assert_eq!(c[1].before.as_deref(), Some("151"));
        assert_eq!(c[1].evidence_after, [Evidence::line("/etc/my.cnf", 3)]);
        // and the reverse direction gives a removal
        let r = diff_facts(&a, &b);
        assert!(r
            .iter()
            .any(|c| c.subject == "log_bin" && c.kind == ChangeKind::Removed));
    }
}
