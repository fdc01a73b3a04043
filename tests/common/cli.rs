//! Running the driftaudit binary as a user does (no colour, from the
//! repository root unless told otherwise) and reading what it prints: one
//! copy for every test instead of one per file. Decides no verdict.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_driftaudit");

/// The repository root (where `policies/` and `testdata/` are).
pub fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A path under `testdata/`.
pub fn testdata(rel: &str) -> PathBuf {
    repo_root().join("testdata").join(rel)
}

/// A shipped test host's snapshot (`testdata/hosts/NAME`), as a string for
/// argument lists.
pub fn host(name: &str) -> String {
    testdata(&format!("hosts/{name}")).display().to_string()
}

/// `driftaudit` with `NO_COLOR=1`, run from the repository root.
pub fn cmd() -> Command {
    let mut c = Command::new(BIN);
    c.env("NO_COLOR", "1").current_dir(repo_root());
    c
}

/// Exit code (-1 when killed by a signal), stdout and stderr of a finished run.
pub fn parts(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run `driftaudit ARGS` from the repository root.
pub fn run(args: &[&str]) -> (i32, String, String) {
    parts(cmd().args(args).output().expect("run driftaudit"))
}

/// Run `driftaudit ARGS` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    parts(
        cmd()
            .current_dir(dir)
            .args(args)
            .output()
            .expect("run driftaudit"),
    )
}

/// Parse what a `--format json` run printed, saying what it was on failure.
pub fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

/// Every finding of `rule` in a JSON report, over all its hosts.
pub fn findings<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    report["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|h| h["findings"].as_array().into_iter().flatten())
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// A copy of a directory tree (`cp -a`, so symlinks and modes stay).
pub fn copy_tree(dir: &Path) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", dir.display()))
        .arg(t.path())
        .status()
        .expect("run cp")
        .success();
    assert!(ok, "cp -a {} failed", dir.display());
    t
}
