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

/// Run `c` to its end and fail the test unless it exits 0, naming `what`
/// and quoting its stdout and stderr; the finished run otherwise. For the programs a
/// test runs as a means (sh, git, mkfs, unshare), not for driftaudit
/// itself, whose exit code a test states.
#[track_caller]
pub fn ok(c: &mut Command, what: &str) -> Output {
    let o = c.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed ({}): {}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The string `key` of every object in the JSON array `list` (each must
/// have one), in order.
#[track_caller]
pub fn strs<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|o| {
            o[key]
                .as_str()
                .unwrap_or_else(|| panic!("no string `{key}` in {o}"))
        })
        .collect()
}

/// Fail the test unless `text` contains `part`, quoting both.
#[track_caller]
pub fn says(text: &str, part: &str) {
    assert!(text.contains(part), "`{part}` is not in:\n{text}");
}

/// The strings of the JSON array `list`, in order.
#[track_caller]
pub fn texts(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .map(|s| s.as_str().unwrap_or_else(|| panic!("not a string: {s}")))
        .collect()
}

/// A finding's evidence as `PATH:LINE` (`PATH` where it names no line).
pub fn evidence(f: &Value) -> Vec<String> {
    f["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| match e["line"].as_u64() {
            Some(l) => format!("{}:{l}", e["path"].as_str().unwrap()),
            None => e["path"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// Run `c` and fail the test unless it exits `code` (quoting its stderr)
/// and prints UTF-8; what it printed.
#[track_caller]
pub fn exits(c: &mut Command, code: i32) -> String {
    let o = c.output().expect("run the command");
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The output formats of `check`, text first.
pub const FORMATS: &[&str] = &[
    "text",
    "json",
    "sarif",
    "junit",
    "markdown",
    "jsonl",
    "prometheus",
    "html",
];

/// Fail the test unless `text` starts with `prefix`, quoting both.
#[track_caller]
pub fn starts(text: &str, prefix: &str) {
    assert!(
        text.starts_with(prefix),
        "does not start with `{prefix}`:\n{text}"
    );
}

/// The first object of the JSON array `list` whose `key` is `value`.
#[track_caller]
pub fn find<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
        .find(|o| o[key] == value)
        .unwrap_or_else(|| panic!("no {key} = {value:?} in {list}"))
}

/// Every value of the attribute `attr` in the XML document `xml`, in
/// document order (the document must parse).
pub fn xml_attrs(xml: &str, attr: &str) -> Vec<String> {
    roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| panic!("not XML ({e}): {xml}"))
        .descendants()
        .filter_map(|n| n.attribute(attr).map(str::to_string))
        .collect()
}

/// Fail the test unless a program printed nothing on this stream, quoting
/// what it printed.
#[track_caller]
pub fn silent(printed: &[u8]) {
    assert!(printed.is_empty(), "{}", String::from_utf8_lossy(printed));
}

/// Fail the test unless `text` does not contain `part`, quoting both.
#[track_caller]
pub fn lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "`{part}` is in:\n{text}");
}
