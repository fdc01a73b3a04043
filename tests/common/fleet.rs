//! Fleets for the tests: generating one with scripts/gen-fleet, running the
//! binary over one with a fixed thread count, and reading the reports back.
//! Decides no verdict.

use std::path::Path;
use std::process::Command;

use super::cli;

/// `driftaudit ARGS` in `cwd` with three worker threads (enough to shuffle
/// hosts if the output depended on timing); stdout must be UTF-8.
pub fn run(args: &[&str], cwd: &Path) -> (i32, String, String) {
    let out = cli::cmd()
        .args(args)
        .current_dir(cwd)
        .env("RAYON_NUM_THREADS", "3")
        .output()
        .expect("run driftaudit");
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output");
    cli::parts(out)
}

/// `scripts/gen-fleet [ARGS] DIR HOSTS` (with `env` set), asserted to
/// succeed; its stderr. `None` after a skip line when python3 is missing
/// (gen-fleet is Python: not a reference tool, but skipped the same way).
pub fn generate(dir: &Path, hosts: usize, args: &[&str], env: &[(&str, &Path)]) -> Option<String> {
    let py = super::program("python3", "python3")?;
    let out = Command::new(py)
        .arg(cli::repo_root().join("scripts/gen-fleet"))
        .args(args)
        .arg(dir)
        .arg(hosts.to_string())
        .envs(env.iter().copied())
        .output()
        .expect("run gen-fleet");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "gen-fleet failed: {err}");
    Some(err)
}

/// A JSON report without its `run` line (the one line a merge of shards
/// may differ in), asserting it had exactly one.
pub fn without_run(json: &str) -> String {
    let lines: Vec<&str> = json.lines().collect();
    let runs = lines
        .iter()
        .filter(|l| l.starts_with("  \"run\": "))
        .count();
    assert_eq!(runs, 1, "one `run` line in\n{json}");
    lines
        .iter()
        .filter(|l| !l.starts_with("  \"run\": "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `check --fleet testdata/hosts --format FORMAT ARGS` from the repository
/// root (the report's `root` members relative to it, as a CI job's): its
/// exit code and stdout, asserted to be a report (exit 0 or 1).
pub fn testdata_fleet(format: &str, args: &[&str]) -> (i32, String) {
    let mut all = vec!["check", "--fleet", "testdata/hosts", "--format", format];
    all.extend(args);
    let (code, out, err) = run(&all, cli::repo_root());
    assert!(
        code == 0 || code == 1,
        "check --fleet testdata/hosts: {err}"
    );
    (code, out)
}
