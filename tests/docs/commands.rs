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

use crate::common;
use crate::common::tree::copy_into;

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

/// git with no user or system configuration (the kit's), from PATH.
fn git(dir: &Path, args: &[&str]) {
    common::git::git(Path::new("git"), dir, args);
}

/// At least `min` commands ran (else "only RAN FOUND") and none of them
/// failed (else "N of RAN OF_WHAT:" and each failure on a line).
#[track_caller]
fn assert_all_ran(ran: usize, min: usize, found: &str, failed: &[String], of_what: &str) {
    assert!(ran >= min, "only {ran} {found}");
    assert!(
        failed.is_empty(),
        "{} of {ran} {of_what}:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// The repository the docs' commands assume.
fn sandbox(repo: &Path, s: &Path) {
    let hosts = repo.join("testdata/hosts");
    copy_into(
        &hosts.join("mysql-includedir-override"),
        &s.join("snapshots/db2"),
    );
    copy_into(
        &hosts.join("mysql-warmup-story"),
        &s.join("snapshots/db1-before"),
    );
    copy_into(&hosts.join("mysql-healthy"), &s.join("db1"));
    copy_into(&hosts.join("mysql-includedir-override"), &s.join("db2"));
    copy_into(&hosts.join("mysql-healthy"), &s.join("hosts/db1"));
    copy_into(&hosts.join("mysql-healthy"), &s.join("HEAD-snapshot-dir"));
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
    std::os::unix::fs::symlink(common::cli::BIN, s.join("bin/driftaudit")).unwrap();
    git(s, &["init", "-q", "-b", "main"]);
    git(s, &["add", "-A"]);
    git(s, &["commit", "-qm", "snapshots"]);
    git(s, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
}

/// Issue 30: `list --policy site/` and `--set linux-network.PARAM=VALUE` in
/// the README did not run (the second names a parameter no policy has).
#[test]
fn every_command_in_readme_and_docs_runs() {
    if common::program("git", "git").is_none() {
        return;
    }
    let repo = common::cli::repo_root();
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
    assert_all_ran(
        ran,
        50,
        "commands found in the docs",
        &failed,
        "commands failed",
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
    let readme = fs::read_to_string(common::cli::repo_root().join("README.md")).unwrap();
    let set = driftaudit::PolicySet::builtin().unwrap();
    for p in set.policies() {
        assert!(
            readme.contains(&format!("| `{}` |", p.id)),
            "README's What it checks has no row for `{}`",
            p.id
        );
    }
    assert!(readme.contains("| upgrade data (`--target`) |"));
}

/// The EXAMPLES of a page rendered as a reader sees it (`groff -Tascii`):
/// the lines of its example blocks, which groff indents below the prose.
fn man_examples(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if !l.starts_with(' ') && !l.is_empty() {
            inside = l == "EXAMPLES";
            continue;
        }
        if inside && l.starts_with("           ") && !l[11..].starts_with(' ') {
            out.push(l.trim().to_string());
        }
    }
    out
}

/// The exit status an example line promises: `# exits N`, else 0.
fn promised_exit(line: &str) -> i32 {
    line.rsplit_once("# exits ")
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Issue 32: the man page was top level only and pointed to
/// `driftaudit-check(1)`, which did not exist, with no EXIT STATUS or
/// EXAMPLES. `driftaudit man --out DIR` writes a page per command; each
/// renders without a groff warning (`-ww`), has every section an admin
/// looks for, and each of its examples runs, in a sandbox laid out as the
/// examples say (the package's example host is the repository's
/// testdata/hosts/nat-story), with the exit status the page promises.
#[test]
fn every_man_page_renders_cleanly_and_its_examples_exit_as_they_say() {
    if common::program("groff", "groff-base").is_none() {
        return;
    }
    let repo = common::cli::repo_root();
    let bin = common::cli::BIN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man");
    let o = common::cli::ok(
        Command::new(bin).args(["man", "--out"]).arg(&dir),
        "driftaudit man --out",
    );
    let listed = String::from_utf8(o.stdout).unwrap();
    let mut pages: Vec<String> = listed.lines().map(str::to_string).collect();
    for c in [
        "check", "snapshot", "diff", "fix", "baseline", "test", "merge", "list", "explain",
    ] {
        assert!(
            pages.contains(&format!("driftaudit-{c}.1")),
            "no page for {c}: {pages:?}"
        );
    }
    assert!(pages.contains(&"driftaudit.1".to_string()));
    // `man CMD` prints the same page --out wrote
    let one = Command::new(bin).args(["man", "fix"]).output().unwrap();
    assert_eq!(one.stdout, fs::read(dir.join("driftaudit-fix.1")).unwrap());
    pages.sort();
    let mut ran = 0;
    let mut failed = Vec::new();
    for page in &pages {
        let path = dir.join(page);
        let render = |dev: &str| {
            Command::new("groff")
                .args(["-man", dev, "-ww", "-P-cbou"])
                .arg(&path)
                .env("LC_ALL", "C.UTF-8")
                .output()
                .unwrap()
        };
        let utf8 = render("-Tutf8");
        assert!(
            utf8.status.success() && utf8.stderr.is_empty(),
            "{page}: groff -ww: {}",
            String::from_utf8_lossy(&utf8.stderr)
        );
        let text = String::from_utf8(render("-Tascii").stdout).unwrap();
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "EXIT STATUS",
            "EXAMPLES",
            "SEE ALSO",
        ] {
            assert!(
                text.lines().any(|l| l == section),
                "{page}: no {section} section:\n{text}"
            );
        }
        // every page it names exists (or is another program's)
        let see = text.split("\nSEE ALSO\n").nth(1).unwrap_or_default();
        for name in see.split(|c: char| c.is_whitespace() || c == ',') {
            if let Some(p) = name
                .strip_prefix("driftaudit")
                .and_then(|r| r.strip_suffix("(1)"))
            {
                assert!(
                    pages.contains(&format!("driftaudit{p}.1")),
                    "{page}: SEE ALSO {name} has no page"
                );
            }
        }
        let examples = man_examples(&text);
        assert!(!examples.is_empty(), "{page}: no example found in:\n{text}");
        let s = tempfile::tempdir().unwrap();
        sandbox(repo, s.path());
        crate::common::tree::file(s.path(), "my-policies/web.test.yaml", "cases:\n  - name: a small backlog\n    files: { /proc/sys/net/core/somaxconn: \"128\\n\" }\n    expect:\n      - { rule: web.somaxconn, status: fail }\n  - name: a big one\n    files: { /proc/sys/net/core/somaxconn: \"4096\\n\" }\n    expect:\n      - { rule: web.somaxconn, status: pass }\n");
        let examples_dir = format!("{}/testdata/hosts/", s.path().display());
        let path_env = format!(
            "{}:{}",
            s.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for line in examples {
            let run = line.replace("/usr/share/doc/driftaudit/examples/", &examples_dir);
            let o = Command::new("sh")
                .args(["-c", &run])
                .current_dir(s.path())
                .env("PATH", &path_env)
                .env("NO_COLOR", "1")
                .env_remove("CI")
                .output()
                .unwrap();
            ran += 1;
            let code = o.status.code().unwrap_or(-1);
            if code != promised_exit(&line) {
                failed.push(format!(
                    "{page}: `{line}` exited {code}, the page says {}: {}",
                    promised_exit(&line),
                    String::from_utf8_lossy(&o.stderr).trim()
                ));
            }
        }
    }
    assert_all_ran(ran, 25, "examples found", &failed, "examples");
}

/// Review of issue 32: `man --out DIR` wrote each page with a plain
/// `std::fs::write`, which follows a symbolic link planted at a page's
/// name, so whoever could write DIR could make a root `driftaudit man
/// --out` overwrite any file. The page now goes to a temporary file that
/// is renamed over the name: the link is replaced and its target untouched.
#[test]
fn man_out_replaces_a_planted_link_instead_of_writing_through_it() {
    let bin = common::cli::BIN;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man");
    fs::create_dir(&dir).unwrap();
    let victim = tmp.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("driftaudit-fix.1")).unwrap();
    common::cli::ok(
        Command::new(bin).args(["man", "--out"]).arg(&dir),
        "driftaudit man --out",
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let page = dir.join("driftaudit-fix.1");
    let meta = fs::symlink_metadata(&page).unwrap();
    assert!(meta.file_type().is_file(), "the link is still there");
    assert!(fs::read_to_string(&page).unwrap().contains(".TH"));
    // and nothing but the pages is left behind (no stray temporary file)
    let stray: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".1"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}
