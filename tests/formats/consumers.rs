//! The consumer set-ups docs/formats.md shows (each fenced block after a
//! `<!-- consumer: NAME -->` marker), run as written: shell blocks and the
//! `run:` / `script:` / `sh '...'` lines of the YAML and Jenkinsfile blocks
//! executed with `sh` in a temporary repository (`snapshots/HOST/...`, test
//! hosts copied) with the built binary as `driftaudit` on `PATH`; the file
//! each consumer is handed (upload-sarif's `sarif_file`, GitLab's
//! `artifacts:reports:junit`, Jenkins' `junit`) must be the file those lines
//! wrote, the SARIF valid against the SARIF 2.1.0 schema, the JUnit keyed
//! uniquely by (classname, name) as GitLab reads it; the systemd units pass
//! `systemd-analyze verify`. `gh` and `glab` are stubs that record their
//! arguments (no network). A marker missing, or one this file does not
//! know, fails the test, so no snippet goes unrun.

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

use crate::common;

/// Every consumer block docs/formats.md must have, and no other.
const CONSUMERS: &[&str] = &[
    "github-sarif",
    "gitlab-junit",
    "jenkins-junit",
    "html-report",
    "markdown-comment",
    "prometheus-recipe",
    "prometheus-timer",
];

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `(name, info string, body)` of every block after a consumer marker.
fn blocks() -> Vec<(String, String, String)> {
    let doc = fs::read_to_string(crate_dir().join("docs/formats.md")).unwrap();
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    // a marker is a line of its own (the prose names it in a code span)
    while let Some(i) = rest.find("\n<!-- consumer: ") {
        rest = &rest[i + "\n<!-- consumer: ".len()..];
        let end = rest.find(" -->").expect("marker ends with ` -->`");
        let name = rest[..end].to_string();
        rest = &rest[end..];
        let after_marker = rest.split_once('\n').expect("a line after the marker").1;
        assert!(
            after_marker.starts_with("```"),
            "`{name}`: the marker must be directly above its fenced block"
        );
        let (info, body) = after_marker[3..].split_once('\n').unwrap();
        let close = body.find("\n```").expect("block closes");
        out.push((name, info.trim().to_string(), body[..close + 1].to_string()));
        rest = &body[close..];
    }
    out
}

fn block(name: &str) -> (String, String) {
    let all = blocks();
    let found: Vec<_> = all.iter().filter(|b| b.0 == name).collect();
    assert_eq!(found.len(), 1, "docs/formats.md: one `{name}` block");
    (found[0].1.clone(), found[0].2.clone())
}

/// A repository as a user keeps one: `snapshots/HOST/...`, and `bin/`
/// holding `driftaudit` (the binary under test) and the `gh`/`glab` stubs.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("snapshots")).unwrap();
        for (from, to) in [
            ("nat-story", "web1"),
            ("fstab-edited-not-remounted", "db1"),
            ("mysql-warmup-story", "db2"),
        ] {
            let ok = Command::new("cp")
                .arg("-a")
                .arg(crate_dir().join("testdata/hosts").join(from))
                .arg(dir.path().join("snapshots").join(to))
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_driftaudit"), bin.join("driftaudit"))
            .unwrap();
        // A stub forge CLI: records its arguments, one per line, and the
        // body file it was given, so the test sees what would be posted.
        for stub in ["gh", "glab"] {
            let p = bin.join(stub);
            fs::write(
                &p,
                format!(
                    "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$STUB_LOG/{stub}.args\"\n\
                     prev=\nfor a in \"$@\"; do [ \"$prev\" = --body-file ] && cp \"$a\" \"$STUB_LOG/{stub}.body\"; prev=$a; done\n"
                ),
            )
            .unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir(dir.path().join("stub-log")).unwrap();
        Repo { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Run shell lines as a CI shell would (`set -e`), from the root.
    fn sh(&self, script: &str) {
        let mut o = Command::new("sh");
        o.arg("-ec")
            .arg(script)
            .current_dir(self.path())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.path().join("bin").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("STUB_LOG", self.path().join("stub-log"))
            .env("PR", "42")
            .env("CI_MERGE_REQUEST_IID", "7")
            .env_remove("NO_COLOR");
        common::cli::ok(&mut o, &format!("{script}\n"));
    }

    fn read(&self, file: &str) -> String {
        fs::read_to_string(self.path().join(file))
            .unwrap_or_else(|e| panic!("{file} not written: {e}"))
    }
}

/// The file a `... > FILE || [ $? -eq 1 ]` line writes.
fn redirect_target(line: &str) -> String {
    let (_, after) = line.split_once(" > ").expect("the line writes a file");
    after.split_whitespace().next().unwrap().to_string()
}

/// Every audit line must be the documented form: a driftaudit command,
/// keeping the report on exit 1 only.
fn check_audit_line(line: &str) {
    assert!(line.starts_with("driftaudit check "), "{line}");
    assert!(line.ends_with(" || [ $? -eq 1 ]"), "{line}");
}

fn sarif_validator() -> jsonschema::Validator {
    // tests/schemas/README.md: the official schema's language pattern is
    // broken (an unbalanced bracket); tests/formats/formats.rs fixes it the same way
    let text = fs::read_to_string(crate_dir().join("tests/schemas/sarif-2.1.0.json")).unwrap();
    let text = text.replace(
        r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#,
        r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#,
    );
    let schema: Json = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

/// GitLab keys a test case by (classname, name) and keeps the first of
/// equal keys: every pair must be unique, and `file` repository-relative.
fn check_junit_for_gitlab(xml: &str) {
    let doc = roxmltree::Document::parse(xml).expect("JUnit parses");
    let mut keys = BTreeSet::new();
    let mut cases = 0;
    for c in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        cases += 1;
        let key = (
            c.attribute("classname").unwrap().to_string(),
            c.attribute("name").unwrap().to_string(),
        );
        assert!(keys.insert(key.clone()), "duplicate test case {key:?}");
        if let Some(f) = c.attribute("file") {
            assert!(f.starts_with("snapshots/"), "{f}");
        }
    }
    assert!(cases > 0);
    assert!(doc.descendants().any(|n| n.has_tag_name("failure")));
}

#[test]
fn every_consumer_block_is_known_and_present() {
    let found: Vec<String> = blocks().into_iter().map(|b| b.0).collect();
    let want: Vec<String> = CONSUMERS.iter().map(|s| s.to_string()).collect();
    let mut sorted = found.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        found.len(),
        "a consumer marker twice: {found:?}"
    );
    let mut w = want.clone();
    w.sort();
    assert_eq!(sorted, w, "docs/formats.md consumer blocks vs this test");
}

#[test]
fn the_github_workflow_uploads_the_sarif_its_run_step_wrote() {
    let (info, body) = block("github-sarif");
    assert_eq!(info, "yaml");
    let wf: Json = serde_saphyr::from_str(&body).expect("the workflow is YAML");
    assert!(wf.get("on").is_some() || wf.get("true").is_some(), "{wf}");
    let jobs = wf["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    assert_eq!(
        job["permissions"]["security-events"], "write",
        "upload-sarif needs it"
    );
    let steps = job["steps"].as_array().unwrap();
    let repo = Repo::new();
    let mut written = Vec::new();
    let mut uploaded = None;
    for s in steps {
        if let Some(run) = s["run"].as_str() {
            for line in run.lines().filter(|l| !l.trim().is_empty()) {
                check_audit_line(line);
                assert!(line.contains("--format sarif"), "{line}");
                repo.sh(line);
                written.push(redirect_target(line));
            }
        }
        if let Some(uses) = s["uses"].as_str() {
            if uses.starts_with("github/codeql-action/upload-sarif@") {
                uploaded = Some(s["with"]["sarif_file"].as_str().unwrap().to_string());
                assert!(s["with"]["category"].is_string(), "a category per upload");
            } else {
                assert!(uses.starts_with("actions/checkout@"), "{uses}");
            }
        }
    }
    let uploaded = uploaded.expect("an upload-sarif step");
    assert_eq!(
        written,
        std::slice::from_ref(&uploaded),
        "upload-sarif gets the file the run step wrote"
    );
    let doc: Json = serde_json::from_str(&repo.read(&uploaded)).unwrap();
    let v = sarif_validator();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // placed in the repository, as code scanning resolves it
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.starts_with("snapshots/"), "{uri}");
        assert!(
            repo.path().join(uri).exists() || uri.ends_with('/'),
            "{uri}"
        );
    }
}

#[test]
fn the_gitlab_job_reports_the_junit_its_script_wrote() {
    let (info, body) = block("gitlab-junit");
    assert_eq!(info, "yaml");
    let ci: Json = serde_saphyr::from_str(&body).expect("the job is YAML");
    let jobs = ci.as_object().unwrap();
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    let repo = Repo::new();
    let mut written = Vec::new();
    for line in job["script"].as_array().expect("script: a list") {
        let line = line.as_str().unwrap();
        check_audit_line(line);
        repo.sh(line);
        written.push(redirect_target(line));
    }
    assert_eq!(
        job["artifacts"]["when"], "always",
        "kept when the audit fails"
    );
    let junit = job["artifacts"]["reports"]["junit"]
        .as_str()
        .expect("reports:junit");
    assert_eq!(written, [junit.to_string()]);
    check_junit_for_gitlab(&repo.read(junit));
}

#[test]
fn the_jenkinsfile_lines_run_and_hand_junit_the_file() {
    let (info, body) = block("jenkins-junit");
    assert_eq!(info, "groovy");
    let repo = Repo::new();
    let mut written = Vec::new();
    let mut reported = Vec::new();
    for line in body.lines().filter(|l| !l.trim().is_empty()) {
        let quoted = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|r| r.strip_suffix('\''))
                .map(str::to_string)
        };
        if let Some(cmd) = quoted("sh '") {
            check_audit_line(&cmd);
            repo.sh(&cmd);
            written.push(redirect_target(&cmd));
        } else if let Some(f) = quoted("junit '") {
            reported.push(f);
        } else {
            panic!("a Jenkinsfile line this test does not run: {line}");
        }
    }
    assert_eq!(written, reported);
    check_junit_for_gitlab(&repo.read(&reported[0]));
}

#[test]
fn the_html_line_writes_one_self_contained_page_of_every_host() {
    let (info, body) = block("html-report");
    assert_eq!(info, "sh");
    let repo = Repo::new();
    repo.sh(&body);
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1);
    check_audit_line(lines[0]);
    let page = repo.read(&redirect_target(lines[0]));
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    assert!(page.contains("default-src 'none'"), "no fetches");
    // every host of the fleet, by the name the JSON report gives it
    repo.sh("driftaudit check --fleet snapshots --format json > hosts.json || [ $? -eq 1 ]");
    let report: Json = serde_json::from_str(&repo.read("hosts.json")).unwrap();
    let hosts = report["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    for h in hosts {
        let name = h["host"].as_str().unwrap();
        assert!(
            page.contains(&format!("id=\"host-{name}\"")) || page.contains(name),
            "{name}"
        );
    }
}

#[test]
fn the_comment_lines_post_the_markdown_they_wrote() {
    let (info, body) = block("markdown-comment");
    assert_eq!(info, "sh");
    let repo = Repo::new();
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    check_audit_line(lines[0]);
    let md_file = redirect_target(lines[0]);
    // each forge's line on its own, after the audit line
    for forge in &lines[1..] {
        repo.sh(&format!("{}\n{forge}", lines[0]));
    }
    let md = repo.read(&md_file);
    assert!(md.starts_with("## driftaudit report"), "{md}");
    assert!(md.chars().count() <= 65_536, "GitHub's comment limit");
    let log = repo.path().join("stub-log");
    let gh = fs::read_to_string(log.join("gh.args")).expect("gh ran");
    assert_eq!(gh, format!("pr\ncomment\n42\n--body-file\n{md_file}\n"));
    assert_eq!(fs::read_to_string(log.join("gh.body")).unwrap(), md);
    let glab = fs::read_to_string(log.join("glab.args")).expect("glab ran");
    let want = format!("mr\nnote\n7\n--message\n{}\n", md.trim_end_matches('\n'));
    assert_eq!(glab, want, "glab gets the comment text");
}

#[test]
fn the_systemd_units_verify_with_the_recipe_as_their_service() {
    let Some(analyze) = common::tool("systemd-analyze", "systemd") else {
        return;
    };
    let (info, body) = block("prometheus-timer");
    assert_eq!(info, "ini");
    let (_, recipe) = block("prometheus-recipe");
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("driftaudit-metrics");
    fs::write(&script, &recipe).unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    // split at the `# /etc/systemd/system/NAME` lines
    let mut units: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        if let Some(p) = line.strip_prefix("# /etc/systemd/system/") {
            units.push((p.to_string(), String::new()));
        } else if let Some(u) = units.last_mut() {
            u.1.push_str(line);
            u.1.push('\n');
        }
    }
    let names: Vec<&str> = units.iter().map(|u| u.0.as_str()).collect();
    assert_eq!(
        names,
        ["driftaudit-metrics.service", "driftaudit-metrics.timer"]
    );
    let documented = "ExecStart=/usr/local/sbin/driftaudit-metrics";
    assert!(units[0].1.contains(documented));
    assert!(recipe.contains("# /usr/local/sbin/driftaudit-metrics"));
    let mut paths: Vec<PathBuf> = Vec::new();
    for (name, text) in &units {
        let text = text.replace(documented, &format!("ExecStart={}", script.display()));
        let p = t.path().join(name);
        fs::write(&p, text).unwrap();
        paths.push(p);
    }
    let o = Command::new(analyze)
        .arg("verify")
        .arg("--man=no")
        .args(&paths)
        .current_dir(t.path())
        .output()
        .unwrap();
    assert!(
        o.status.success() && o.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
