//! Every `driftaudit ...` command shown in a shell block (```sh) of
//! README.md and docs/*.md runs, as written, in a sandbox laid out like the
//! repository the docs talk about: `snapshots/` of a few hosts (some taken
//! from this machine by the docs' own `snapshot` commands), `db1/`, `db2/`,
//! `hosts/db1`, a `my-policies/` policy, a `site/` overlay, `waivers.yaml`,
//! the repository's `testdata/`, all in a git repository with an
//! `origin/main`. A command must not fail with exit 2 (usage, policy or input
//! error); 0 and 1 (findings) are what the docs promise. Commands run in the
//! order the docs give them, file by file, so a `baseline -o golden.yaml`
//! feeds the `--policy golden.yaml` after it. Console examples (`$ ...`
//! with their output) are run by the docs tests of their own pages.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

/// The commands of a Markdown file's ```sh blocks: each line that starts
/// with `driftaudit ` or `VAR=value driftaudit `.
fn commands(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for l in md.lines() {
        let t = l.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && matches!(t, "```sh" | "```bash");
            continue;
        }
        if !in_sh {
            continue;
        }
        let after_env = t
            .split_whitespace()
            .skip_while(|w| w.contains('=') && !w.starts_with('-'))
            .collect::<Vec<_>>();
        if after_env.first() == Some(&"driftaudit") {
            out.push(t.to_string());
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        let dest = to.join(e.file_name());
        if t.is_dir() {
            copy_tree(&e.path(), &dest);
        } else if t.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path()).unwrap(), dest).unwrap();
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The repository the docs' commands assume.
fn sandbox(repo: &Path, s: &Path) {
    let hosts = repo.join("testdata/hosts");
    copy_tree(
        &hosts.join("mysql-includedir-override"),
        &s.join("snapshots/db2"),
    );
    copy_tree(
        &hosts.join("mysql-warmup-story"),
        &s.join("snapshots/db1-before"),
    );
    copy_tree(&hosts.join("mysql-healthy"), &s.join("db1"));
    copy_tree(&hosts.join("mysql-includedir-override"), &s.join("db2"));
    copy_tree(&hosts.join("mysql-healthy"), &s.join("hosts/db1"));
    copy_tree(&hosts.join("mysql-healthy"), &s.join("HEAD-snapshot-dir"));
    std::os::unix::fs::symlink(repo.join("testdata"), s.join("testdata")).unwrap();
    fs::create_dir_all(s.join("my-policies")).unwrap();
    fs::write(
        s.join("my-policies/web.yaml"),
        "policy: web\ntitle: Web tier\nrules:\n  - id: web.somaxconn\n    title: Listen backlog at least 1024\n    severity: low\n    setting: sysctl.net.core.somaxconn\n    expect: { min: 1024 }\n    why: \"net.core.somaxconn is {actual}\"\n    fix: \"set net.core.somaxconn = 1024\"\n",
    )
    .unwrap();
    fs::create_dir_all(s.join("site")).unwrap();
    fs::write(
        s.join("site/overlay.yaml"),
        "policy: site\ntitle: Our site\noverrides:\n  - rule: linux.aslr\n    severity: high\n",
    )
    .unwrap();
    fs::write(
        s.join("waivers.yaml"),
        "- rule: linux.send-redirects\n  reason: routers of the lab (OPS-1)\n  expires: 2099-01-01\n",
    )
    .unwrap();
    fs::create_dir_all(s.join("bin")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_driftaudit"), s.join("bin/driftaudit")).unwrap();
    git(s, &["init", "-q", "-b", "main"]);
    git(s, &["add", "-A"]);
    git(s, &["commit", "-qm", "snapshots"]);
    git(s, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
}

/// Issue 30: `list --policy site/` and `--set linux-network.PARAM=VALUE` in
/// the README did not run (the second names a parameter no policy has).
#[test]
fn every_command_in_readme_and_docs_runs() {
    if Command::new("git").arg("--version").output().is_err() {
        common::skip("the docs' commands", "needs git");
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let s = tmp.path();
    sandbox(repo, s);
    let mut files = vec![repo.join("README.md")];
    let mut docs: Vec<_> = fs::read_dir(repo.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let path = format!(
        "{}:{}",
        s.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let mut failed = Vec::new();
    for f in &files {
        let name = f.strip_prefix(repo).unwrap().display().to_string();
        for cmd in commands(&fs::read_to_string(f).unwrap()) {
            // a comment-posting client is not ours to run: its input is
            let line = match cmd.split_once(" | gh ") {
                Some((head, _)) => format!("{head} > /dev/null"),
                None => cmd.clone(),
            };
            let o = Command::new("sh")
                .args(["-c", &line])
                .current_dir(s)
                .env("PATH", &path)
                .env("NO_COLOR", "1")
                .env("tmp", s.join("metrics.prom"))
                .env_remove("CI")
                .output()
                .unwrap();
            ran += 1;
            let code = o.status.code().unwrap_or(-1);
            if !matches!(code, 0 | 1) {
                failed.push(format!(
                    "{name}: `{cmd}` exited {code}: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
        }
    }
    assert!(ran >= 50, "only {ran} commands found in the docs");
    assert!(
        failed.is_empty(),
        "{} of {ran} commands failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn commands_are_found_in_sh_blocks_only() {
    let md = "x\n```sh\ndriftaudit check   # a\nDRIFTAUDIT_TODAY=2024-01-15 driftaudit list\n# driftaudit no\nls\n```\n```yaml\ndriftaudit: no\n```\n```\ndriftaudit plain\n```\n";
    assert_eq!(
        commands(md),
        [
            "driftaudit check   # a",
            "DRIFTAUDIT_TODAY=2024-01-15 driftaudit list"
        ]
    );
}

/// Issue 30: the README's "What it checks" left out the storage policy and
/// the upgrade data. Every built-in policy has a row, and so has the
/// upgrade data.
#[test]
fn readme_lists_every_shipped_policy_and_the_upgrade_data() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let set = driftaudit::PolicySet::builtin().unwrap();
    for p in &set.policies {
        assert!(
            readme.contains(&format!("| `{}` |", p.id)),
            "README's What it checks has no row for `{}`",
            p.id
        );
    }
    assert!(readme.contains("| upgrade data (`--target`) |"));
}
