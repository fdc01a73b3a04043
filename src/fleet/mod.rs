//! Fleet audits: finds snapshot folders under a directory (lazily, bounded
//! depth; the walk is `walk.rs`, the `--shard` and `--changed-since`
//! selection `select.rs`) and audits one folder into a [`HostReport`]; the per-rule
//! [`FleetSummary`] those reports fold into is report data
//! (`report/fleet.rs`, re-exported here) and its text form is in
//! `render/fleet.rs`. `merge/` reads fleet JSON reports for `driftaudit
//! merge`, streamed. Owns no threads (the CLI drives rayon) and prints
//! nothing; must not hold every host's report at once.

use std::path::{Path, PathBuf};

use crate::engine;
use crate::facts::{Evidence, Needs};
use crate::host::Host;
use crate::policy::{PolicySet, Severity};
use crate::report::{input_rule_meta, Finding, HostReport, Status, INPUT_RULE};

pub mod merge;
pub mod select;
mod walk;

pub use walk::DiscoverError;

pub use crate::report::fleet::{
    Example, FleetSummary, HostDigest, RuleDigest, RuleStats, FLEET_SCHEMA, WORST_EXAMPLES,
};

/// Default depth below the fleet directory at which snapshots are looked for
/// (`fleet/dc1/rack2/host7` is depth 3).
pub const DEFAULT_MAX_DEPTH: usize = 6;

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
    walk::walk(root.to_path_buf(), max_depth, is_snapshot_dir)
}

/// Audit every snapshot under `root` (a fleet tree as `driftaudit check
/// --fleet` reads it: snapshot folders found up to [`DEFAULT_MAX_DEPTH`]
/// levels down, hidden folders skipped, in file-name order) into one
/// report, each host's `path` its folder below `root`. A snapshot that
/// cannot be opened is a host with an `error` finding; a folder that cannot
/// be searched stops the walk with the error.
///
/// ```
/// use driftaudit::{audit_fleet, PolicySet};
///
/// let policies = PolicySet::builtin()?;
/// let report = audit_fleet(&policies, concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts").as_ref())?;
/// assert!(report.hosts.len() > 10);
/// assert!(report.hosts.iter().any(|h| h.path.as_deref() == Some("nat-story")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit_fleet(
    policies: &PolicySet,
    root: &Path,
) -> Result<crate::report::Report, DiscoverError> {
    let needs = engine::needs(policies);
    let mut hosts = Vec::new();
    for dir in discover(root, DEFAULT_MAX_DEPTH) {
        let dir = dir?;
        let mut h = audit_dir_planned(policies, &needs, &dir);
        h.path = Some(relative_path(root, &dir));
        hosts.push(h);
    }
    Ok(crate::report::Report::new(hosts, policies))
}

/// Audit one snapshot folder. A folder that cannot be opened as a snapshot
/// still gives a report: one `driftaudit.input` finding with status `error`
/// naming the folder, so a broken host is visible in every output format.
pub fn audit_dir(policies: &PolicySet, dir: &Path) -> HostReport {
    audit_dir_planned(policies, &engine::needs(policies), dir)
}

/// [`audit_dir`] with the plan made once for the whole fleet
/// (`needs` is `engine::needs(policies)`; it depends on the rules alone).
pub fn audit_dir_planned(policies: &PolicySet, needs: &Needs, dir: &Path) -> HostReport {
    match Host::snapshot(dir) {
        Ok(host) => engine::audit_host_planned(policies, needs, &host),
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

/// A host's snapshot folder relative to the fleet directory, for reports.
pub fn relative_path(root: &Path, dir: &Path) -> String {
    match dir.strip_prefix(root) {
        Ok(p) if p.as_os_str().is_empty() => ".".into(),
        Ok(p) => p.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}
