//! The CI templates, run the way their CI would run them, locally:
//! - action.yml: its `run:` steps executed with bash, their `env:` filled
//!   from the inputs the action declares (defaults, then the test's
//!   values) and the outputs earlier steps wrote to $GITHUB_OUTPUT, `if:`
//!   conditions evaluated; the upload-sarif step's `sarif_file` must name the
//!   SARIF written. One job over the fleet, then a matrix of two shards and
//!   a merge job. The package path: `driftaudit:` a .deb (`$DRIFTAUDIT_DEB`,
//!   else one built from the test binary) unpacked into the tool cache, a
//!   .deb without the binary refused; without the input, the source build
//!   (a `cargo` stub) saved to and restored from a simulated actions cache
//!   by a second runner.
//! - integrations/gitlab/driftaudit.gitlab-ci.yml: the script lines of the
//!   check job under `parallel: 3` (CI_NODE_INDEX/CI_NODE_TOTAL) and of the
//!   report job, in one shell each with `set -eo pipefail` as GitLab's
//!   runner does, after `.driftaudit-install`'s before_script; the JUnit
//!   file it declares under artifacts:reports:junit; the jobs from
//!   `DRIFTAUDIT_DEB` unpacked and from a source build kept in its cache dir.
//! - .pre-commit-hooks.yaml through `pre-commit try-repo` (PyPI, the
//!   `.ci/run` virtualenv `$DRIFTAUDIT_CI_VENV`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::common::cli::says;

use crate::common::cli::repo_root as repo;

/// Exit code (-1 when killed) and stdout then stderr of a finished run,
/// as a CI job's log shows them.
fn code_and_output(out: &std::process::Output) -> (i32, String) {
    let (code, stdout, stderr) = common::cli::parts(out.clone());
    (code, format!("{stdout}{stderr}"))
}

fn yaml(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A workspace holding `snapshots/` (the shipped test hosts).
fn workspace() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    common::tree::copy_into(&repo().join("testdata/hosts"), &t.path().join("snapshots"));
    t
}

fn da() -> &'static str {
    common::cli::BIN
}

fn outputs(file: &Path) -> BTreeMap<String, String> {
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `${{ ... }}` in the action: `inputs.X`, `steps.S.outputs.X`, `A == 'v'`,
/// `!cancelled()`, `&&` (all the action uses).
fn expr(
    e: &str,
    inputs: &BTreeMap<String, String>,
    steps: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let e = e.trim();
    if let Some((a, b)) = e.split_once("&&") {
        let t = |x: &str| expr(x, inputs, steps) == "true";
        return (t(a) && t(b)).to_string();
    }
    if e == "!cancelled()" {
        return "true".into();
    }
    if let Some((a, b)) = e.split_once("==") {
        let lit = b.trim().trim_matches('\'');
        return (expr(a, inputs, steps) == lit).to_string();
    }
    if let Some(name) = e.strip_prefix("inputs.") {
        return inputs
            .get(name)
            .cloned()
            .unwrap_or_else(|| panic!("undeclared input `{name}`"));
    }
    if let Some(rest) = e.strip_prefix("steps.") {
        let (step, out) = rest.split_once(".outputs.").expect("steps.S.outputs.X");
        return steps
            .get(step)
            .and_then(|o| o.get(out))
            .cloned()
            .unwrap_or_default();
    }
    panic!("expression `{e}` not understood");
}

fn subst(
    s: &str,
    inputs: &BTreeMap<String, String>,
    steps: &BTreeMap<String, BTreeMap<String, String>>,
) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("}}").expect("closing }}") + i;
        out.push_str(&expr(&rest[i + 3..j], inputs, steps));
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
}

struct ActionRun {
    /// Exit status of the last step that ran (the job's status).
    failed_step: Option<String>,
    /// The failed step's exit code.
    failed_code: Option<i32>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    uploaded: Option<PathBuf>,
    summary: String,
    /// `actions/cache/restore` and `save` steps run: (`restore` or `save`,
    /// key, path, whether a restore hit).
    cache: Vec<(String, String, PathBuf, bool)>,
}

/// The machine a job runs on: its tool cache (`RUNNER_TOOL_CACHE`), the
/// repository's actions cache (shared by every runner: `key/` directories
/// here) and directories put first on `PATH` (stub programs), before the
/// test's own `PATH` unless `inherit_path` is false.
struct Runner {
    tool_cache: PathBuf,
    actions_cache: PathBuf,
    path_first: Vec<PathBuf>,
    inherit_path: bool,
}

impl Runner {
    fn new(dir: &Path) -> Runner {
        Runner {
            tool_cache: dir.join("tool-cache"),
            actions_cache: dir.join("actions-cache"),
            path_first: Vec::new(),
            inherit_path: true,
        }
    }
}

/// Run action.yml's steps in `ws` with `given` inputs, on a runner of the
/// workspace's own (`.runner/`).
fn run_action(ws: &Path, given: &[(&str, &str)]) -> ActionRun {
    run_action_on(&Runner::new(&ws.join(".runner")), ws, given)
}

/// Copy the tree `from` to `to` (replaced), as actions/cache does.
fn copy_dir(from: &Path, to: &Path) {
    let _ = fs::remove_dir_all(to);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success(), "cp -a {} {}", from.display(), to.display());
}

/// Run action.yml's steps in `ws` with `given` inputs on `runner`.
fn run_action_on(runner: &Runner, ws: &Path, given: &[(&str, &str)]) -> ActionRun {
    let action = yaml(&repo().join("action.yml"));
    assert_eq!(action["runs"]["using"], "composite");
    let mut inputs = BTreeMap::new();
    for (k, v) in action["inputs"].as_object().expect("inputs") {
        inputs.insert(k.clone(), v["default"].as_str().unwrap_or("").to_string());
    }
    for (k, v) in given {
        assert!(
            inputs.contains_key(*k),
            "the action declares no input `{k}`"
        );
        inputs.insert(k.to_string(), v.to_string());
    }
    let tmp = ws.join(".runner");
    fs::create_dir_all(&tmp).unwrap();
    let summary = tmp.join("summary.md");
    let mut steps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut run = ActionRun {
        failed_step: None,
        failed_code: None,
        outputs: BTreeMap::new(),
        uploaded: None,
        summary: String::new(),
        cache: Vec::new(),
    };
    let path = std::env::join_paths(
        runner.path_first.iter().cloned().chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                .filter(|_| runner.inherit_path),
        ),
    )
    .unwrap();
    for (n, step) in action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let id = step["id"]
            .as_str()
            .map(str::to_string)
            .unwrap_or(format!("step{n}"));
        if let Some(cond) = step["if"].as_str() {
            let cond = cond.trim().trim_start_matches("${{").trim_end_matches("}}");
            if expr(cond, &inputs, &steps) != "true" {
                continue;
            }
        }
        if let Some(uses) = step["uses"].as_str() {
            if let Some(op) = uses
                .strip_prefix("actions/cache/")
                .and_then(|u| u.split_once("@v"))
                .map(|(op, _)| op)
            {
                let with = |k: &str| subst(step["with"][k].as_str().unwrap_or(""), &inputs, &steps);
                let (key, dir) = (with("key"), PathBuf::from(with("path")));
                assert!(
                    !key.is_empty() && dir.is_absolute(),
                    "{id}: key `{key}`, path `{}`",
                    dir.display()
                );
                let stored = runner.actions_cache.join(&key);
                let hit = match op {
                    "restore" => {
                        let hit = stored.is_dir();
                        if hit {
                            copy_dir(&stored, &dir);
                        }
                        let mut o = BTreeMap::new();
                        o.insert("cache-hit".to_string(), hit.to_string());
                        steps.insert(id.clone(), o);
                        hit
                    }
                    "save" => {
                        assert!(dir.is_dir(), "{id}: nothing to save at {}", dir.display());
                        copy_dir(&dir, &stored);
                        false
                    }
                    _ => panic!("{uses}"),
                };
                run.cache.push((op.to_string(), key, dir, hit));
                continue;
            }
            crate::common::cli::starts(uses, "github/codeql-action/upload-sarif@v");
            let file = subst(
                step["with"]["sarif_file"].as_str().unwrap(),
                &inputs,
                &steps,
            );
            assert!(!file.is_empty());
            run.uploaded = Some(ws.join(file));
            continue;
        }
        assert_eq!(step["shell"], "bash", "step {id}");
        let script = step["run"].as_str().expect("run");
        let out_file = tmp.join(format!("{id}.out"));
        let mut cmd = Command::new("bash");
        cmd.arg("-e")
            .arg("-c")
            .arg(script)
            .current_dir(ws)
            .env("GITHUB_ACTION_PATH", repo())
            .env("GITHUB_OUTPUT", &out_file)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", &tmp)
            .env("RUNNER_TOOL_CACHE", &runner.tool_cache)
            .env("PATH", &path)
            .env("NO_COLOR", "1");
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                cmd.env(k, subst(v.as_str().unwrap_or(""), &inputs, &steps));
            }
        }
        let out = cmd.output().unwrap();
        steps.insert(id.clone(), outputs(&out_file));
        if !out.status.success() {
            run.failed_code = out.status.code();
            run.failed_step = Some(format!(
                "{id}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            break;
        }
    }
    run.summary = fs::read_to_string(&summary).unwrap_or_default();
    run.outputs = steps;
    run
}

#[test]
fn the_github_action_audits_a_tree_uploads_sarif_and_merges_a_sharded_matrix() {
    let ws = workspace();
    let ws = ws.path();
    // one job over the whole tree, failing at `high`
    let one = run_action(ws, &[("driftaudit", da()), ("fail-on", "high")]);
    let audit = &one.outputs["audit"];
    let total: usize = audit["hosts"]
        .parse()
        .unwrap_or_else(|_| panic!("{:?}", one.failed_step));
    assert!(total >= 14, "every test host: {total}");
    assert_eq!(audit["exit-code"], "1", "the test hosts have high findings");
    assert!(audit["hosts-failing"].parse::<usize>().unwrap() > 0);
    assert_eq!(audit["upload"], "true");
    let sarif_path = one.uploaded.clone().expect("upload-sarif ran");
    let sarif: Value = serde_json::from_str(&fs::read_to_string(&sarif_path).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert!(!sarif["runs"][0]["results"].as_array().unwrap().is_empty());
    // code scanning resolves URIs against the repository root (the workspace)
    for r in sarif["runs"][0]["results"].as_array().unwrap() {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.starts_with("snapshots/"),
            "not repository-relative: {uri}"
        );
    }
    assert!(
        one.summary.contains("| host |"),
        "Markdown job summary: {}",
        one.summary
    );
    let failed = one.failed_step.expect("the last step fails the job");
    assert!(failed.contains("findings at or above high"), "{failed}");

    // `fail-on: critical` passes the job (exit-code 0 or 1 decides)
    let crit = run_action(ws, &[("driftaudit", da()), ("fail-on", "critical")]);
    assert_eq!(
        crit.outputs["audit"]["exit-code"] == "1",
        crit.failed_step.is_some()
    );

    // a matrix of two shards (no upload), then the merge job
    let mut hosts = 0;
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let report = format!("shard-{k}.json");
        let r = run_action(
            ws,
            &[
                ("driftaudit", da()),
                ("shard", &shard),
                ("report", &report),
                ("summary", "false"),
            ],
        );
        let audit = &r.outputs["audit"];
        assert_eq!(audit["upload"], "false", "a shard is never uploaded");
        assert!(r.uploaded.is_none());
        assert!(
            r.failed_step.is_none(),
            "a shard's findings do not fail it: {:?}",
            r.failed_step
        );
        hosts += audit["hosts"].parse::<usize>().unwrap();
    }
    assert_eq!(hosts, total);
    let merged = run_action(
        ws,
        &[
            ("driftaudit", da()),
            ("reports", "shard-*.json"),
            ("sarif", "merged.sarif"),
        ],
    );
    assert_eq!(merged.outputs["audit"]["hosts"], total.to_string());
    assert_eq!(
        merged.uploaded.as_deref(),
        Some(ws.join("merged.sarif").as_path())
    );
    assert_eq!(
        fs::read_to_string(ws.join("merged.sarif")).unwrap(),
        fs::read_to_string(&sarif_path).unwrap(),
        "the merged shards upload what the single job uploads"
    );

    // driftaudit could not run: the audit step fails (exit 2), nothing uploaded
    let bad = run_action(ws, &[("driftaudit", da()), ("snapshots", "no-such-dir")]);
    let failed = bad.failed_step.expect("fails");
    crate::common::cli::starts(&failed, "audit:");
    crate::common::cli::says(&failed, "no-such-dir");
    assert!(bad.uploaded.is_none());
}

/// A directory of stub programs, put first on PATH: `cargo` appends its
/// arguments to `cargo.log` in `dir` and, for `cargo install ... --root R`,
/// leaves this test build's binary as R/bin/driftaudit (what the real build
/// would leave); `driftaudit` exits 97, so a job that runs the driftaudit on
/// PATH instead of the one it was given fails.
fn stubs(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("stubs");
    fs::create_dir_all(&bin).unwrap();
    let cargo = format!(
        "#!/bin/sh\necho \"$*\" >> '{log}'\nroot=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n[ -n \"$root\" ] || exit 97\nmkdir -p \"$root/bin\" && cp '{da}' \"$root/bin/driftaudit\"\n",
        log = dir.join("cargo.log").display(),
        da = da(),
    );
    for (name, body) in [
        ("cargo", cargo.as_str()),
        ("driftaudit", "#!/bin/sh\nexit 97\n"),
    ] {
        fs::write(bin.join(name), body).unwrap();
        fs::set_permissions(bin.join(name), fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// What the `cargo` stub of [`stubs`] was run with, one line per run.
fn cargo_runs(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("cargo.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn sha256_hex(file: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(fs::read(file).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn the_github_action_given_a_deb_audits_with_its_unpacked_binary_and_builds_nothing() {
    let Some((ws, t, deb)) = deb_workspace() else {
        return;
    };
    let ws = ws.path();
    let mut runner = Runner::new(&t.path().join("runner"));
    runner.path_first.push(stubs(t.path()));
    let deb = deb.to_str().unwrap();
    let run = run_action_on(&runner, ws, &[("driftaudit", deb), ("fail-on", "high")]);
    // unpacked into the tool cache under the .deb's sha256, and that binary used
    let tree = runner
        .tool_cache
        .join(format!("driftaudit/deb-{}", sha256_hex(Path::new(deb))));
    let bin = tree.join("usr/bin/driftaudit");
    assert_eq!(
        run.outputs["install"].get("driftaudit").map(String::as_str),
        Some(bin.to_str().unwrap()),
        "{:?}",
        run.failed_step
    );
    assert!(bin.is_file());
    assert_eq!(run.outputs["install"]["built"], "false");
    // the audit ran with it (a stub `driftaudit` on PATH would exit 97)
    let audit = &run.outputs["audit"];
    assert!(audit["hosts"].parse::<usize>().unwrap() >= 14, "{audit:?}");
    assert_eq!(audit["exit-code"], "1", "the test hosts have high findings");
    assert!(run.uploaded.as_deref().is_some_and(Path::is_file));
    assert!(
        run.failed_step
            .as_deref()
            .is_some_and(|f| f.contains("findings at or above high")),
        "{:?}",
        run.failed_step
    );
    // nothing built, and the source build's cache steps skipped
    assert_eq!(cargo_runs(t.path()), Vec::<String>::new());
    assert!(!run.outputs.contains_key("source"), "{:?}", run.outputs);
    assert!(run.cache.is_empty(), "{:?}", run.cache);

    // the next job on this runner reuses the unpacked tree
    fs::write(tree.join("kept"), "").unwrap();
    let again = run_action_on(&runner, ws, &[("driftaudit", deb), ("fail-on", "critical")]);
    assert_eq!(
        again.outputs["install"]["driftaudit"],
        bin.to_str().unwrap()
    );
    assert!(tree.join("kept").is_file(), "unpacked again");
}

#[test]
fn the_github_action_refuses_a_deb_without_usr_bin_driftaudit_and_a_runner_without_dpkg_deb() {
    if common::program("dpkg-deb", "dpkg").is_none() {
        return;
    }
    let ws = workspace();
    let ws = ws.path();
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("not-driftaudit");
    fs::create_dir_all(tree.join("usr/share/doc/driftaudit")).unwrap();
    fs::write(tree.join("usr/share/doc/driftaudit/README"), "no binary\n").unwrap();
    let deb = t.path().join("no-binary.deb");
    common::build_deb(&tree, &deb);
    let runner = Runner::new(&t.path().join("runner"));
    let run = run_action_on(&runner, ws, &[("driftaudit", deb.to_str().unwrap())]);
    let failed = run.failed_step.expect("refused");
    assert!(
        failed.starts_with("install:")
            && failed.contains("::error title=driftaudit::")
            && failed.contains("holds no usr/bin/driftaudit"),
        "{failed}"
    );
    assert_eq!(run.failed_code, Some(2));
    assert!(!run.outputs.contains_key("audit"), "the audit did not run");
    // nothing half-unpacked is left under a key
    let left: Vec<_> = fs::read_dir(runner.tool_cache.join("driftaudit"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");

    // a runner without dpkg-deb: PATH holds bash alone
    let Some(good) = common::driftaudit_deb(t.path()) else {
        return;
    };
    let only_bash = t.path().join("only-bash");
    fs::create_dir_all(&only_bash).unwrap();
    std::os::unix::fs::symlink(common::find_tool("bash").unwrap(), only_bash.join("bash")).unwrap();
    let mut runner = Runner::new(&t.path().join("runner2"));
    runner.path_first.push(only_bash);
    runner.inherit_path = false;
    let run = run_action_on(&runner, ws, &[("driftaudit", good.to_str().unwrap())]);
    let failed = run.failed_step.expect("refused");
    crate::common::cli::starts(&failed, "install:");
    crate::common::cli::says(&failed, "no dpkg-deb");
    assert_eq!(run.failed_code, Some(2));
}

#[test]
fn a_new_runner_restores_the_source_build_from_the_actions_cache_instead_of_rebuilding() {
    let ws = workspace();
    let ws = ws.path();
    let t = tempfile::tempdir().unwrap();
    let stub_dir = stubs(t.path());
    let on = |name: &str| {
        let mut r = Runner::new(&t.path().join(name));
        r.actions_cache = t.path().join("actions-cache");
        r.path_first.push(stub_dir.clone());
        r
    };
    let lock = sha256_hex(&repo().join("Cargo.lock"));

    // the first runner builds (the cargo stub) and saves the build
    let first = on("runner-1");
    let run = run_action_on(&first, ws, &[("fail-on", "critical")]);
    let source = run.outputs["source"].clone();
    let (dir, key) = (PathBuf::from(&source["dir"]), source["key"].clone());
    assert!(dir.starts_with(&first.tool_cache), "{}", dir.display());
    assert!(key.ends_with(&lock[..16]), "keyed on Cargo.lock: {key}");
    let builds = cargo_runs(t.path());
    assert_eq!(builds.len(), 1, "{builds:?}");
    let build = &builds[0];
    crate::common::cli::starts(build, "install --locked");
    says(build, &format!("--path {}", repo().display()));
    assert!(
        build.ends_with(&format!("--root {}", dir.display())),
        "{build}"
    );
    assert_eq!(run.outputs["install"]["built"], "true");
    assert_eq!(
        run.cache,
        [
            ("restore".into(), key.clone(), dir.clone(), false),
            ("save".into(), key.clone(), dir.clone(), false)
        ]
    );
    assert!(run.outputs["audit"]["hosts"].parse::<usize>().unwrap() >= 14);

    // the same runner again: its tool cache has the build, nothing saved
    let run = run_action_on(&first, ws, &[("fail-on", "critical")]);
    assert_eq!(cargo_runs(t.path()).len(), 1);
    assert_eq!(run.outputs["install"]["built"], "false");
    assert_eq!(run.cache.len(), 1, "restore only: {:?}", run.cache);

    // a new runner, empty tool cache: restored from the actions cache, not rebuilt
    let second = on("runner-2");
    let run = run_action_on(&second, ws, &[("fail-on", "critical")]);
    let dir2 = PathBuf::from(&run.outputs["source"]["dir"]);
    assert!(dir2.starts_with(&second.tool_cache));
    assert_eq!(run.cache, [("restore".into(), key, dir2.clone(), true)]);
    assert_eq!(cargo_runs(t.path()).len(), 1, "rebuilt on the new runner");
    assert_eq!(
        run.outputs["install"]["driftaudit"],
        dir2.join("bin/driftaudit").to_str().unwrap()
    );
    assert!(run.outputs["audit"]["hosts"].parse::<usize>().unwrap() >= 14);
}

/// The GitLab template's variables, and its jobs run as GitLab's bash runner
/// runs them.
struct GitLab {
    t: Value,
    env: Vec<(String, String)>,
}

impl GitLab {
    /// The template, its variables with `DRIFTAUDIT` replaced by `driftaudit`.
    fn new(driftaudit: &str) -> GitLab {
        let t = yaml(&repo().join("integrations/gitlab/driftaudit.gitlab-ci.yml"));
        let mut env: Vec<(String, String)> = t["variables"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
            .collect();
        env.retain(|(k, _)| k != "DRIFTAUDIT");
        env.push(("DRIFTAUDIT".into(), driftaudit.into()));
        GitLab { t, env }
    }

    /// `key` of job `name`, or of the job it `extends:` (one name or a list,
    /// the last one that has it, as GitLab merges them).
    fn keyword(&self, name: &str, key: &str) -> Value {
        let job = &self.t[name];
        if !job[key].is_null() {
            return job[key].clone();
        }
        let parents: Vec<String> = match &job["extends"] {
            Value::String(p) => vec![p.clone()],
            Value::Array(ps) => ps
                .iter()
                .filter_map(|p| p.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        };
        parents
            .iter()
            .rev()
            .map(|p| self.keyword(p, key))
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null)
    }

    /// Job `name`'s before_script and script lines in one shell (GitLab
    /// runs them in one), stopping at the first failing line; `extra`
    /// variables over the template's.
    fn job(&self, ws: &Path, name: &str, extra: &[(&str, String)]) -> (i32, String) {
        let mut lines: Vec<String> = Vec::new();
        for key in ["before_script", "script"] {
            if let Some(ls) = self.keyword(name, key).as_array() {
                lines.extend(ls.iter().map(|l| l.as_str().unwrap().to_string()));
            }
        }
        assert!(!lines.is_empty(), "{name} has a script");
        let out = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &lines.join("\n")])
            .current_dir(ws)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        code_and_output(&out)
    }
}

#[test]
fn the_gitlab_template_shards_with_parallel_and_reports_junit() {
    let _package = crate::host_package();
    let ws = workspace();
    let ws = ws.path();
    let gl = GitLab::new(da());
    let t = &gl.t;
    let job = |name: &str, extra: &[(&str, String)]| gl.job(ws, name, extra);
    // parallel: 3
    for k in 1..=3 {
        let (code, out) = job(
            ".driftaudit-check",
            &[
                ("CI_NODE_INDEX", k.to_string()),
                ("CI_NODE_TOTAL", "3".into()),
            ],
        );
        assert_eq!(code, 0, "findings never fail a shard job: {out}");
    }
    for k in 1..=3 {
        assert!(ws.join(format!("driftaudit-shard-{k}.json")).is_file());
    }
    let (code, out) = job(".driftaudit-report", &[]);
    assert_eq!(
        code, 1,
        "findings at or above high fail the report job: {out}"
    );
    let junit_path = t[".driftaudit-report"]["artifacts"]["reports"]["junit"]
        .as_str()
        .expect("artifacts:reports:junit");
    let junit = fs::read_to_string(ws.join(junit_path)).unwrap();
    // what one unsharded job would report
    let whole = Command::new(da())
        .args([
            "check",
            "--fleet",
            "snapshots",
            "--format",
            "json",
            "--fail-on",
            "high",
        ])
        .current_dir(ws)
        .output()
        .unwrap();
    fs::write(ws.join("whole.json"), &whole.stdout).unwrap();
    let direct = Command::new(da())
        .args(["merge", "whole.json", "--format", "junit"])
        .current_dir(ws)
        .output()
        .unwrap();
    assert_eq!(junit, String::from_utf8_lossy(&direct.stdout));
    says(&junit, "<testsuites");
    says(&junit, "<failure");
    // GitLab links `file` into the repository: relative to its root, also
    // from the merged report (it was the CI machine's absolute path)
    let files = crate::common::cli::xml_attrs(&junit, "file");
    assert!(!files.is_empty());
    for f in files {
        assert!(f.starts_with("snapshots/"), "not repository-relative: {f}");
    }
    for f in t[".driftaudit-report"]["artifacts"]["paths"]
        .as_array()
        .unwrap()
    {
        assert!(ws.join(f.as_str().unwrap()).is_file(), "artifact {f}");
    }
    // one job (no parallel:) works too
    for k in 1..=3 {
        fs::remove_file(ws.join(format!("driftaudit-shard-{k}.json"))).unwrap();
    }
    let (code, out) = job(".driftaudit-check", &[]);
    assert_eq!(code, 0, "{out}");
    let (code, _) = job(".driftaudit-report", &[]);
    assert_eq!(code, 1);
    assert_eq!(fs::read_to_string(ws.join(junit_path)).unwrap(), junit);
}

/// PATH for a GitLab job: `first`, then the system directories only (no
/// ~/.cargo/bin, so neither a real cargo nor an installed driftaudit is found).
fn job_path(first: &Path) -> String {
    format!("{}:/usr/local/bin:/usr/bin:/bin", first.display())
}

#[test]
fn the_gitlab_template_given_driftaudit_deb_runs_both_jobs_from_the_unpacked_binary() {
    let _package = crate::host_package();
    let Some((ws, t, deb)) = deb_workspace() else {
        return;
    };
    let ws = ws.path();
    // the template's default DRIFTAUDIT (`driftaudit`), which on this PATH is
    // a stub that exits 97, as `cargo` records and refuses to build
    let gl = GitLab::new("driftaudit");
    for job in [".driftaudit-check", ".driftaudit-report"] {
        assert_eq!(
            gl.keyword(job, "cache")["paths"][0],
            ".driftaudit-cache/",
            "{job} keeps the source build"
        );
    }
    let env = [
        ("DRIFTAUDIT_DEB", deb.display().to_string()),
        ("PATH", job_path(&stubs(t.path()))),
    ];
    let (code, out) = gl.job(ws, ".driftaudit-check", &env);
    assert_eq!(code, 0, "{out}");
    let used = out
        .lines()
        .find_map(|l| l.strip_prefix("driftaudit: "))
        .unwrap_or_else(|| panic!("which driftaudit: {out}"));
    assert!(
        used.contains("/usr/bin/driftaudit, driftaudit ")
            && !used.starts_with(&*ws.to_string_lossy()),
        "the package's binary, unpacked outside the checkout: {used}"
    );
    let shard: Value =
        serde_json::from_str(&fs::read_to_string(ws.join("driftaudit-shard-1.json")).unwrap())
            .unwrap();
    let hosts = shard["hosts"].as_array().map_or(0, Vec::len);
    assert!(hosts >= 14, "every test host in the one shard: {hosts}");
    let (code, out) = gl.job(ws, ".driftaudit-report", &env);
    assert_eq!(
        code, 1,
        "findings at or above high fail the report job: {out}"
    );
    assert!(out.contains("/usr/bin/driftaudit, driftaudit "), "{out}");
    let junit = fs::read_to_string(ws.join("driftaudit-junit.xml")).unwrap();
    assert!(junit.contains("<failure"), "{junit}");
    assert_eq!(cargo_runs(t.path()), Vec::<String>::new(), "nothing built");
    assert!(!ws.join(".driftaudit-cache").exists());

    // a DRIFTAUDIT_DEB that is not a file in the job says so (exit 2)
    let (code, out) = gl.job(
        ws,
        ".driftaudit-check",
        &[
            ("DRIFTAUDIT_DEB", "no-such.deb".into()),
            ("PATH", job_path(&stubs(t.path()))),
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("`no-such.deb` is not a file"), "{out}");
}

#[test]
fn the_gitlab_template_builds_driftaudit_source_once_into_its_cached_directory() {
    let _package = crate::host_package();
    let ws = workspace();
    let ws = ws.path();
    let t = tempfile::tempdir().unwrap();
    let gl = GitLab::new("driftaudit");
    let env = [
        ("DRIFTAUDIT_SOURCE", repo().display().to_string()),
        ("PATH", job_path(&stubs(t.path()))),
    ];
    // the stub `driftaudit` on PATH "runs": drop it, so the source is built
    fs::remove_file(t.path().join("stubs/driftaudit")).unwrap();
    let (code, out) = gl.job(ws, ".driftaudit-check", &env);
    assert_eq!(code, 0, "{out}");
    let builds = cargo_runs(t.path());
    assert_eq!(builds.len(), 1, "{builds:?}");
    let cache = ws.join(".driftaudit-cache");
    let build = &builds[0];
    crate::common::cli::starts(build, "install --locked");
    says(build, &format!("--path {}", repo().display()));
    says(build, &format!("--root {}/", cache.display()));
    // the report job (a later job, the cache restored) uses the build
    let (code, out) = gl.job(ws, ".driftaudit-report", &env);
    assert_eq!(code, 1, "{out}");
    assert_eq!(cargo_runs(t.path()).len(), 1, "rebuilt: {out}");
    says(&out, &format!("driftaudit: {}/", cache.display()));
}

/// A [`workspace`], a temporary directory, and the driftaudit .deb built
/// into it ([`common::driftaudit_deb`]); `None` after a skip line.
fn deb_workspace() -> Option<(tempfile::TempDir, tempfile::TempDir, PathBuf)> {
    let ws = workspace();
    let t = tempfile::tempdir().unwrap();
    let deb = common::driftaudit_deb(t.path())?;
    Some((ws, t, deb))
}

fn pre_commit() -> Option<PathBuf> {
    common::venv_program(
        "pre-commit",
        "`bash .ci/run` puts it in its virtualenv (DRIFTAUDIT_CI_VENV), or `pip install pre-commit`",
    )
}

#[test]
fn the_pre_commit_hooks_validate_policies_and_audit_changed_snapshots() {
    let Some(pc) = pre_commit() else { return };
    if common::program("git", "git").is_none() {
        return;
    }
    let ws = workspace();
    let ws = ws.path();
    let git = |args: &[&str]| {
        common::cli::ok(
            Command::new("git")
                .arg("-C")
                .arg(ws)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(args),
            &format!("git {args:?}"),
        );
    };
    fs::create_dir_all(ws.join("policies")).unwrap();
    fs::write(
        ws.join("policies/ok.yaml"),
        "policy: local\ntitle: Local\nrules:\n  - id: local.pid-max\n    title: pid_max is large\n    severity: low\n    setting: sysctl.kernel.pid_max\n    expect: { min: 1 }\n    why: kernel.pid_max is {actual}.\n    fix: Raise it.\n",
    )
    .unwrap();
    fs::write(
        ws.join("policies/broken.yaml"),
        "policy: broken\nrules:\n  - id: x\n    severity: bogus\n",
    )
    .unwrap();
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fleet"]);
    let bin_dir = Path::new(da()).parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let hook = |id: &str, files: &[&str]| -> (i32, String) {
        let out = Command::new(&pc)
            .arg("try-repo")
            .arg(repo())
            .arg(id)
            .arg("--files")
            .args(files)
            .current_dir(ws)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", ws.join(".runner/pre-commit"))
            .env("NO_COLOR", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .output()
            .unwrap();
        code_and_output(&out)
    };
    let (code, out) = hook("driftaudit-policies", &["policies/ok.yaml"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Passed"), "{out}");
    let (code, out) = hook(
        "driftaudit-policies",
        &["policies/ok.yaml", "policies/broken.yaml"],
    );
    assert_eq!(code, 1, "{out}");
    says(&out, "policies/broken.yaml:4:15");
    says(&out, "bogus");

    // a change inside one snapshot audits that snapshot only: `clean` passes,
    // `nat-story` has high findings
    let (code, out) = hook(
        "driftaudit-snapshots",
        &["snapshots/clean/etc/sysctl.d/70-db.conf"],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = hook(
        "driftaudit-snapshots",
        &[
            "snapshots/nat-story/snapshot.json",
            "snapshots/clean/etc/hostname",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("==> ") && out.contains("FAIL"), "{out}");
    assert_eq!(
        out.matches("==> ").count(),
        2,
        "only the two changed snapshots: {out}"
    );
}
