//! What reads a report besides a person: a report of the shipped test hosts
//! to render, and the consumer (headless Chromium, python3's parsers,
//! Prometheus's parser, GNU patch) fed a rendered output on its stdin. One
//! copy for formats/ and hostile/ instead of one per file; decides no verdict.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use driftaudit::{audit, Host, PolicySet, Report};

/// A shipped test host's snapshot directory (`testdata/hosts/NAME`).
pub fn host_dir(name: &str) -> PathBuf {
    super::cli::testdata("hosts").join(name)
}

/// The built-in policies' report on the shipped test hosts `names`.
pub fn report_of(names: &[&str]) -> Report {
    let set = PolicySet::builtin().expect("built-in policies load");
    let hosts: Vec<Host> = names
        .iter()
        .map(|n| Host::snapshot(host_dir(n)).expect("snapshot opens"))
        .collect();
    audit(&set, &hosts)
}

/// python3, or `None` after [`super::tool`] skipped.
pub fn python3() -> Option<PathBuf> {
    super::tool("python3", "python3")
}

/// Run `program` with `input` on its stdin; its stdout and stderr are
/// captured. Panics only when it cannot be started.
pub fn feed(program: &mut Command, input: &[u8]) -> Output {
    let mut child = program
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {program:?}: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Every shipped test host's name (`testdata/hosts/*`), sorted.
pub fn host_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(super::cli::testdata("hosts"))
        .expect("testdata/hosts")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        names.iter().any(|n| n == "nat-story"),
        "testdata/hosts/nat-story is missing"
    );
    names
}

/// The report on every shipped test host at once (a fleet).
pub fn fleet_report() -> Report {
    let names = host_names();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    report_of(&refs)
}

/// [`feed`], then fail the test unless `program` exited 0, naming `what`
/// and quoting its stderr.
#[track_caller]
pub fn feed_ok(program: &mut Command, input: &[u8], what: &str) -> Output {
    let o = feed(program, input);
    assert!(
        o.status.success(),
        "{what} failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}
