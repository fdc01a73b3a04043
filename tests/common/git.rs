//! git as the tests drive it: no user or system configuration read (no
//! hooks, templates, signing or line-ending conversion), a fixed committer
//! and `main` as the first branch, so a repository a test builds is the same
//! on every machine. Decides no verdict.

use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir` with the program `git_bin`; what it printed on
/// stdout. Panics naming the arguments and git's output when it fails.
pub fn git(git_bin: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(git_bin)
        .args(["-c", "user.name=driftaudit test"])
        .args(["-c", "user.email=test@example.invalid"])
        .args(["-c", "init.defaultBranch=main"])
        .args(["-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "git {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `git init` in `dir` and one commit of everything in it.
pub fn init_and_commit(git_bin: &Path, dir: &Path, message: &str) {
    git(git_bin, dir, &["init", "-q"]);
    git(git_bin, dir, &["add", "-A"]);
    git(git_bin, dir, &["commit", "-q", "-m", message]);
}
