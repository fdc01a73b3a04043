//! Fleet audits: finds snapshot folders under a directory (lazily, bounded
//! depth), audits one folder into a [`HostReport`], and folds host reports into
//! a small per-rule [`FleetSummary`] so a caller can stream hosts and drop each
//! report once rendered. Owns no threads (the CLI drives rayon) and renders
//! nothing but the summary; must not hold every host's report at once.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine;
use crate::facts::Evidence;
use crate::host::Host;
use crate::policy::{PolicySet, Severity};
use crate::report::{input_rule_meta, Finding, HostReport, Status, INPUT_RULE};

/// Default depth below the fleet directory at which snapshots are looked for
/// (`fleet/dc1/rack2/host7` is depth 3).
pub const DEFAULT_MAX_DEPTH: usize = 6;

/// Hosts kept as worst examples per rule in the summary.
pub const WORST_EXAMPLES: usize = 3;

/// Schema id of the fleet summary (JSON `fleet` member, last `--format jsonl` line).
pub const FLEET_SCHEMA: &str = "driftaudit.fleet/1";

/// Whether `dir` is a snapshot folder: the same decision as `check
/// --snapshot` ([`crate::host::layout::detect`]): it holds `snapshot.json`
/// (a file), a host directory (`etc/`, `proc/`, `sys/`, `usr/`, `var/`,
/// `opt/`, `run/`, `lib/`) or `captures/`, or is an extracted sosreport.
/// Symlinks are not followed.
pub fn is_snapshot_dir(dir: &Path) -> bool {
    crate::host::layout::detect(dir).is_some()
}

/// Lazily find snapshot folders under `root`, in file-name order. A folder that
/// is a snapshot is yielded and not descended into; hidden folders (`.git`)
/// and symlinks are skipped; at most `max_depth` levels below `root` are
/// searched. If `root` itself is a snapshot it is the only one yielded.
/// Directory read errors are yielded as `Err` (with the path) and the walk goes on.
pub fn discover(
    root: &Path,
    max_depth: usize,
) -> impl Iterator<Item = Result<PathBuf, DiscoverError>> {
    let root = root.to_path_buf();
    let mut walk = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .max_depth(max_depth)
        .sort_by_file_name()
        .into_iter();
    std::iter::from_fn(move || loop {
        match walk.next()? {
            Ok(e) => {
                if !e.file_type().is_dir() {
                    continue;
                }
                let hidden = e.depth() > 0 && e.file_name().as_encoded_bytes().starts_with(b".");
                if hidden {
                    walk.skip_current_dir();
                    continue;
                }
                if is_snapshot_dir(e.path()) {
                    walk.skip_current_dir();
                    return Some(Ok(e.into_path()));
                }
            }
            Err(err) => {
                let path = err
                    .path()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| root.to_path_buf());
                return Some(Err(DiscoverError {
                    path,
                    message: err
                        .io_error()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| err.to_string()),
                }));
            }
        }
    })
}

/// A folder under the fleet directory that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoverError {
    /// The folder.
    pub path: PathBuf,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for DiscoverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

/// Audit one snapshot folder. A folder that cannot be opened as a snapshot
/// still gives a report: one `driftaudit.input` finding with status `error`
/// naming the folder, so a broken host is visible in every output format.
pub fn audit_dir(policies: &PolicySet, dir: &Path) -> HostReport {
    match Host::snapshot(dir) {
        Ok(host) => engine::audit_host(policies, &host),
        Err(e) => {
            let meta = input_rule_meta();
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| dir.display().to_string());
            let path = dir.display().to_string();
            HostReport::new(
                name,
                crate::host::SourceKind::Snapshot,
                vec![Finding::new(
                    INPUT_RULE,
                    meta.policy,
                    meta.title,
                    Severity::Low,
                    Status::Error,
                    meta.source,
                )
                .with_subject(vec![path.clone()])
                .with_evidence(vec![Evidence::file(path.clone())])
                .with_explanation(format!("{path}: cannot open snapshot: {e}"))],
            )
        }
    }
}

/// One host among the worst examples of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// Host name.
    pub host: String,
    /// Snapshot folder relative to the fleet directory.
    pub path: String,
    /// Failing subjects of the rule on this host (what the ranking uses).
    pub failing: usize,
    /// Worst severity among the failures (rules have one severity; kept for clarity).
    pub severity: Severity,
    /// The host's value (`actual`) of its first failing finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// Per-rule fleet counts: each host counts once per rule, under the worst
/// status among that rule's findings (fail > error > unknown > waived > pass > skip).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RuleStats {
    /// Rule title.
    pub title: String,
    /// Rule severity.
    pub severity: Option<Severity>,
    /// Hosts where the rule failed.
    pub hosts_failing: usize,
    /// Hosts where it passed.
    pub hosts_passing: usize,
    /// Hosts where it did not apply.
    pub hosts_skipped: usize,
    /// Hosts where data was missing.
    pub hosts_unknown: usize,
    /// Hosts where the rule could not be evaluated.
    pub hosts_error: usize,
    /// Hosts where a waiver covered it.
    #[serde(skip_serializing_if = "is_zero")]
    pub hosts_waived: usize,
    /// Up to [`WORST_EXAMPLES`] hosts with the most failing subjects (ties: path order).
    pub worst: Vec<Example>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The fleet summary: per rule counts and worst examples, and host totals.
/// Small (one entry per rule), whatever the number of hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FleetSummary {
    /// Always [`FLEET_SCHEMA`].
    pub schema: &'static str,
    /// Hosts audited.
    pub hosts: usize,
    /// Hosts with at least one failing finding.
    pub hosts_failing: usize,
    /// Hosts whose worst failure is at or above the `--fail-on` severity.
    pub hosts_failing_at_threshold: usize,
    /// Per rule, by rule id.
    pub rules: BTreeMap<String, RuleStats>,
}

/// What the fleet summary keeps of one host: per rule, the worst status, the
/// number of failing subjects and the first failing value. Much smaller than
/// the report it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDigest {
    /// Host name.
    pub host: String,
    /// Snapshot folder relative to the fleet directory.
    pub path: String,
    /// Any failing finding.
    pub failing: bool,
    /// A failure at or above the threshold.
    pub failing_at_threshold: bool,
    /// One entry per rule that produced findings.
    pub rules: Vec<RuleDigest>,
}

/// One rule's outcome on one host, inside a [`HostDigest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDigest {
    /// Rule id.
    pub rule: String,
    /// Rule title (used only if the summary has not seen the rule).
    pub title: String,
    /// Rule severity.
    pub severity: Severity,
    /// Worst status among the rule's findings.
    pub worst: Status,
    /// Failing findings (subjects).
    pub failing: usize,
    /// `actual` of the first failing finding.
    pub actual: Option<String>,
}

impl HostDigest {
    /// Reduce a host report.
    pub fn of(report: &HostReport, path: &str, fail_on: Severity) -> HostDigest {
        let mut rules: Vec<RuleDigest> = Vec::new();
        for f in &report.findings {
            let same = rules.last().is_some_and(|r| r.rule == f.rule);
            if !same {
                rules.push(RuleDigest {
                    rule: f.rule.clone(),
                    title: f.title.clone(),
                    severity: f.severity,
                    worst: f.status,
                    failing: 0,
                    actual: None,
                });
            }
            let Some(r) = rules.last_mut() else { continue };
            if rank(f.status) > rank(r.worst) {
                r.worst = f.status;
            }
            if f.status == Status::Fail {
                r.failing += 1;
                if r.actual.is_none() {
                    r.actual = f.actual.clone();
                }
            }
        }
        HostDigest {
            host: report.host.clone(),
            path: path.to_string(),
            failing: report.summary.fail > 0,
            failing_at_threshold: report.worst_failure().is_some_and(|s| s >= fail_on),
            rules,
        }
    }
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Fail => 5,
        Status::Error => 4,
        Status::Unknown => 3,
        Status::Waived => 2,
        Status::Pass => 1,
        _ => 0,
    }
}

impl FleetSummary {
    /// An empty summary listing every rule of `policies` (so a rule no host
    /// failed still shows its passing count) plus `driftaudit.input`.
    pub fn new(policies: &PolicySet) -> FleetSummary {
        let mut rules = BTreeMap::new();
        for r in &policies.rules {
            rules.insert(
                r.id.clone(),
                RuleStats {
                    title: r.title.clone(),
                    severity: Some(r.severity),
                    ..Default::default()
                },
            );
        }
        let input = input_rule_meta();
        rules.insert(
            input.id,
            RuleStats {
                title: input.title,
                severity: Some(input.severity),
                ..Default::default()
            },
        );
        FleetSummary {
            schema: FLEET_SCHEMA,
            rules,
            ..Default::default()
        }
    }

    /// Fold one host's report in. `path` is the snapshot folder relative to the
    /// fleet directory; `fail_on` is the exit-code threshold.
    pub fn add(&mut self, report: &HostReport, path: &str, fail_on: Severity) {
        self.add_digest(HostDigest::of(report, path, fail_on));
    }

    /// Fold in a host already reduced to its [`HostDigest`] (made on a worker
    /// thread, so the full report can be dropped there).
    pub fn add_digest(&mut self, d: HostDigest) {
        self.hosts += 1;
        if d.failing {
            self.hosts_failing += 1;
        }
        if d.failing_at_threshold {
            self.hosts_failing_at_threshold += 1;
        }
        for r in d.rules {
            let st = self.rules.entry(r.rule).or_insert_with(|| RuleStats {
                title: r.title,
                severity: Some(r.severity),
                ..Default::default()
            });
            match r.worst {
                Status::Fail => st.hosts_failing += 1,
                Status::Error => st.hosts_error += 1,
                Status::Unknown => st.hosts_unknown += 1,
                Status::Waived => st.hosts_waived += 1,
                Status::Pass => st.hosts_passing += 1,
                _ => st.hosts_skipped += 1,
            }
            if r.failing > 0 {
                push_worst(
                    &mut st.worst,
                    Example {
                        host: d.host.clone(),
                        path: d.path.clone(),
                        failing: r.failing,
                        severity: r.severity,
                        actual: r.actual,
                    },
                );
            }
        }
    }

    /// Merge another summary (from another thread) into this one.
    pub fn merge(&mut self, other: FleetSummary) {
        self.hosts += other.hosts;
        self.hosts_failing += other.hosts_failing;
        self.hosts_failing_at_threshold += other.hosts_failing_at_threshold;
        for (id, o) in other.rules {
            let st = self.rules.entry(id).or_insert_with(|| RuleStats {
                title: o.title.clone(),
                severity: o.severity,
                ..Default::default()
            });
            st.hosts_failing += o.hosts_failing;
            st.hosts_passing += o.hosts_passing;
            st.hosts_skipped += o.hosts_skipped;
            st.hosts_unknown += o.hosts_unknown;
            st.hosts_error += o.hosts_error;
            st.hosts_waived += o.hosts_waived;
            for ex in o.worst {
                push_worst(&mut st.worst, ex);
            }
        }
    }

    /// The summary as text: one line per rule that any host failed, errored or
    /// could not check, with its worst examples; then the host totals.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "==> fleet summary ({} hosts)", self.hosts);
        let width = self.rules.keys().map(String::len).max().unwrap_or(0);
        let mut quiet = 0usize;
        for (id, st) in &self.rules {
            if st.hosts_failing + st.hosts_error + st.hosts_unknown + st.hosts_waived == 0 {
                quiet += 1;
                continue;
            }
            let sev = st.severity.map(Severity::as_str).unwrap_or("");
            let _ = write!(
                out,
                "  {id:<width$}  {sev:<8}  {} failing, {} passing",
                st.hosts_failing, st.hosts_passing
            );
            for (n, what) in [
                (st.hosts_unknown, "unknown"),
                (st.hosts_error, "error"),
                (st.hosts_waived, "waived"),
                (st.hosts_skipped, "skipped"),
            ] {
                if n > 0 {
                    let _ = write!(out, ", {n} {what}");
                }
            }
            out.push('\n');
            if !st.worst.is_empty() {
                let ex: Vec<String> = st
                    .worst
                    .iter()
                    .map(|e| {
                        let actual = e
                            .actual
                            .as_deref()
                            .map(|a| format!(" = {}", truncate(a, 40)))
                            .unwrap_or_default();
                        format!(
                            "{} ({}, {} failing{actual})",
                            crate::render::quoted_name(&e.host),
                            crate::render::quoted_name(&e.path),
                            e.failing
                        )
                    })
                    .collect();
                let _ = writeln!(out, "  {:<width$}  worst: {}", "", ex.join("; "));
            }
        }
        if quiet > 0 {
            let _ = writeln!(
                out,
                "  ({quiet} rules passed or did not apply on every host)"
            );
        }
        let _ = writeln!(
            out,
            "fleet: {} hosts, {} with failures, {} at or above the --fail-on severity",
            self.hosts, self.hosts_failing, self.hosts_failing_at_threshold
        );
        // host names come from directory names: never terminal control
        crate::render::printable(&out, true).into_owned()
    }
}

fn truncate(s: &str, max: usize) -> String {
    let one_line = s.replace(['\n', '\t'], " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let t: String = one_line.chars().take(max).collect();
        format!("{t}…")
    }
}

/// Keep the [`WORST_EXAMPLES`] examples with the most failing subjects; ties go
/// to the smaller path, so the result does not depend on completion order.
fn push_worst(list: &mut Vec<Example>, ex: Example) {
    list.push(ex);
    list.sort_by(|a, b| {
        (b.severity, b.failing)
            .cmp(&(a.severity, a.failing))
            .then_with(|| a.path.cmp(&b.path))
    });
    list.truncate(WORST_EXAMPLES);
}

/// A host's snapshot folder relative to the fleet directory, for reports.
pub fn relative_path(root: &Path, dir: &Path) -> String {
    match dir.strip_prefix(root) {
        Ok(p) if p.as_os_str().is_empty() => ".".into(),
        Ok(p) => p.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}
