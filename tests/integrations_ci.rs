//! The CI templates, run the way their CI would run them, locally:
//! - action.yml: its `run:` steps executed with bash, their `env:` filled
//!   from the inputs the action declares (defaults, then the test's
//!   values) and the outputs earlier steps wrote to $GITHUB_OUTPUT, `if:`
//!   conditions evaluated; the upload-sarif step's `sarif_file` must name the
//!   SARIF written. One job over the fleet, then a matrix of two shards and
//!   a merge job.
//! - integrations/gitlab/driftaudit.gitlab-ci.yml: the script lines of the
//!   check job under `parallel: 3` (CI_NODE_INDEX/CI_NODE_TOTAL) and of the
//!   report job, in one shell each with `set -eo pipefail` as GitLab's
//!   runner does; the JUnit file it declares under artifacts:reports:junit.
//! - .pre-commit-hooks.yaml through `pre-commit try-repo` (PyPI, the
//!   `.ci/run` virtualenv `$DRIFTAUDIT_CI_VENV`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn yaml(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A workspace holding `snapshots/` (the shipped test hosts).
fn workspace() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(repo().join("testdata/hosts"))
        .arg(t.path().join("snapshots"))
        .status()
        .unwrap();
    assert!(ok.success());
    t
}

fn da() -> &'static str {
    env!("CARGO_BIN_EXE_driftaudit")
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
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    uploaded: Option<PathBuf>,
    summary: String,
}

/// Run action.yml's steps in `ws` with `given` inputs.
fn run_action(ws: &Path, given: &[(&str, &str)]) -> ActionRun {
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
        outputs: BTreeMap::new(),
        uploaded: None,
        summary: String::new(),
    };
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
            assert!(
                uses.starts_with("github/codeql-action/upload-sarif@v"),
                "{uses}"
            );
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
            .env("NO_COLOR", "1");
        if let Some(env) = step["env"].as_object() {
            for (k, v) in env {
                cmd.env(k, subst(v.as_str().unwrap_or(""), &inputs, &steps));
            }
        }
        let out = cmd.output().unwrap();
        steps.insert(id.clone(), outputs(&out_file));
        if !out.status.success() {
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
    assert!(
        failed.starts_with("audit:") && failed.contains("no-such-dir"),
        "{failed}"
    );
    assert!(bad.uploaded.is_none());
}

#[test]
fn the_gitlab_template_shards_with_parallel_and_reports_junit() {
    let ws = workspace();
    let ws = ws.path();
    let t = yaml(&repo().join("integrations/gitlab/driftaudit.gitlab-ci.yml"));
    let mut env: Vec<(String, String)> = t["variables"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
        .collect();
    env.retain(|(k, _)| k != "DRIFTAUDIT");
    env.push(("DRIFTAUDIT".into(), da().into()));
    let job = |name: &str, extra: &[(&str, String)]| -> (i32, String) {
        let lines: Vec<String> = t[name]["script"]
            .as_array()
            .unwrap_or_else(|| panic!("{name} has a script"))
            .iter()
            .map(|l| l.as_str().unwrap().to_string())
            .collect();
        // GitLab's bash runner stops at the first failing line
        let out = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &lines.join("\n")])
            .current_dir(ws)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
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
    assert!(
        junit.contains("<testsuites") && junit.contains("<failure"),
        "{junit}"
    );
    // GitLab links `file` into the repository: relative to its root, also
    // from the merged report (it was the CI machine's absolute path)
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let files: Vec<&str> = doc
        .descendants()
        .filter_map(|n| n.attribute("file"))
        .collect();
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

fn pre_commit() -> Option<PathBuf> {
    let venv = std::env::var_os("DRIFTAUDIT_CI_VENV")
        .map(|v| PathBuf::from(v).join("bin/pre-commit"))
        .filter(|p| p.is_file());
    let found = venv.or_else(|| common::find_tool("pre-commit"));
    if found.is_none() {
        common::skip(
            "needs `pre-commit`",
            "not installed; `bash .ci/run` puts it in its virtualenv (DRIFTAUDIT_CI_VENV), or `pip install pre-commit`",
        );
    }
    found
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
        let o = Command::new("git")
            .arg("-C")
            .arg(ws)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
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
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (code, out) = hook("driftaudit-policies", &["policies/ok.yaml"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Passed"), "{out}");
    let (code, out) = hook(
        "driftaudit-policies",
        &["policies/ok.yaml", "policies/broken.yaml"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("policies/broken.yaml:4:15") && out.contains("bogus"),
        "{out}"
    );

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
