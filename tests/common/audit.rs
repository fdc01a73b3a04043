//! The one way a test audits (issue 47): a snapshot written from literal
//! files (parents created, a leading `/` ignored), the policies to judge it
//! with (the built-ins, a selection of them, or a policy's YAML), and the
//! engine's report or findings. Decides no verdict; a test asserts on what
//! comes out.

use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::report::{Finding, HostReport};

/// The `snapshot.json` of a test host named `host`, captured at a fixed time.
pub fn snapshot_json(host: &str) -> String {
    format!(
        r#"{{"schema": "driftaudit.snapshot/1", "host": "{host}", "driftaudit": "0.1.0", "captured_at": "2026-12-01T09:00:00Z", "unreadable": []}}"#
    )
}

/// A snapshot directory of `files`: (host path, content) pairs. Removed when
/// the returned directory drops.
pub fn snapshot(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    super::tree::write_files(dir.path(), files);
    dir
}

/// [`snapshot`] with a `snapshot.json` naming the host `host`, as `driftaudit
/// snapshot` writes one.
pub fn stamped(host: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    stamp(dir.path(), host, files);
    dir
}

/// Write a snapshot of `files` with a `snapshot.json` naming the host
/// `host` into `dir` (created).
pub fn stamp(dir: &Path, host: &str, files: &[(&str, &str)]) {
    super::tree::write_files(dir, &[("snapshot.json", &snapshot_json(host))]);
    super::tree::write_files(dir, files);
}

/// The snapshot host at `dir`.
#[track_caller]
pub fn host(dir: impl AsRef<Path>) -> Host {
    let dir = dir.as_ref();
    Host::snapshot(dir).unwrap_or_else(|e| panic!("snapshot {}: {e}", dir.display()))
}

/// The built-in policies.
pub fn builtin() -> PolicySet {
    PolicySet::builtin().expect("the built-in policies load")
}

/// The built-in rules that `--only GLOB…` selects.
pub fn only(globs: &[&str]) -> PolicySet {
    let mut set = builtin();
    let globs: Vec<String> = globs.iter().map(|g| g.to_string()).collect();
    set.filter(&globs, &[])
        .expect("the selection matches rules");
    set
}

/// A set of the one policy `yaml` (loaded as `test.yaml`).
#[track_caller]
pub fn policy(yaml: &str) -> PolicySet {
    let mut set = PolicySet::new();
    set.add_str("test.yaml", yaml)
        .unwrap_or_else(|e| panic!("the test policy loads: {e}"));
    set
}

/// The report of `set` on the host `host`.
pub fn report_of(set: &PolicySet, host: &Host) -> HostReport {
    engine::audit_host(set, host)
}

/// The report of `set` on the snapshot at `dir`.
#[track_caller]
pub fn report(set: &PolicySet, dir: impl AsRef<Path>) -> HostReport {
    engine::audit_host(set, &host(dir))
}

/// The findings of `set` on the snapshot at `dir`.
#[track_caller]
pub fn findings(set: &PolicySet, dir: impl AsRef<Path>) -> Vec<Finding> {
    report(set, dir).findings
}
