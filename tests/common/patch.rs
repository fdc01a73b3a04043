//! Applying what `driftaudit fix` printed with the real tools (GNU patch,
//! `git apply`) so a test can re-check the patched copy: one copy of the
//! stdin plumbing and the check sequence instead of one per file. Decides
//! no verdict beyond "the tool accepted the patch".

use std::path::Path;
use std::process::Command;

/// Run `cmd` with `input` on its stdin: (succeeded, stdout then stderr).
pub fn run_with_stdin(cmd: &mut Command, input: &str) -> (bool, String) {
    let out = super::browser::feed(cmd, input.as_bytes());
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `patch -p1` (GNU patch, batch mode, no backups) on `dir` with `patch` as
/// its input: (ok, output), or `None` after [`super::tool`] skipped.
pub fn gnu_patch(dir: &Path, patch: &str) -> Option<(bool, String)> {
    let bin = super::tool("patch", "patch")?;
    Some(run_with_stdin(
        Command::new(bin)
            .args(["-p1", "--batch", "--no-backup-if-mismatch", "-d"])
            .arg(dir),
        patch,
    ))
}

/// `git apply --check GIT_FLAGS -p1` and `patch -p1 --dry-run` accept
/// `patch` on a copy of `snap` (with `exact`, the dry run also needs no fuzz
/// and no offset); then `patch -p1` applies it there. Returns the patched
/// copy, or `None` after [`super::program`] skipped for a missing tool.
/// Each failure names `snap`, the tool and what it printed.
pub fn applies(
    snap: &Path,
    patch: &str,
    git_flags: &[&str],
    exact: bool,
) -> Option<tempfile::TempDir> {
    let git = super::program("git", "git")?;
    let patch_bin = super::program("patch", "patch")?;
    let t = super::cli::copy_tree(snap);
    let (ok, out) = run_with_stdin(
        Command::new(&git)
            .args(["apply", "--check"])
            .args(git_flags)
            .arg("-p1")
            .current_dir(t.path()),
        patch,
    );
    assert!(ok, "{}: git apply --check: {out}\n{patch}", snap.display());
    let patch_with = |flag: &str| {
        run_with_stdin(
            Command::new(&patch_bin)
                .args(["-p1", flag, "-d"])
                .arg(t.path()),
            patch,
        )
    };
    let (ok, out) = patch_with("--dry-run");
    assert!(ok, "{}: patch --dry-run: {out}\n{patch}", snap.display());
    if exact {
        assert!(
            !out.contains("fuzz") && !out.contains("offset"),
            "{}: patch needed fuzz or an offset: {out}\n{patch}",
            snap.display()
        );
    }
    let (ok, out) = patch_with("-s");
    assert!(ok, "{}: patch: {out}", snap.display());
    Some(t)
}
