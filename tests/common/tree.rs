//! Snapshot trees on disk for the tests: copying a shipped host (links and
//! modes kept) to where a test wants it, and writing a literal tree with
//! links and modes beside files ([`crate::common::snapshot_tree`] writes
//! files alone). Decides no verdict.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Copy the tree `from` into `to` (`cp -a FROM/. TO`, `to` and its parents
/// created), so symbolic links stay links and modes stay.
pub fn copy_into(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("run cp")
        .success();
    assert!(ok, "cp -a {} {} failed", from.display(), to.display());
}

/// A shipped host (`testdata/hosts/NAME`) copied into `to`.
pub fn copy_host(name: &str, to: &Path) {
    copy_into(&super::cli::testdata(&format!("hosts/{name}")), to);
}

/// Write a literal tree into `root`: (host path, content) pairs, a leading
/// `/` ignored and parents created.
pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().expect("a file path has a parent"))
            .expect("create the parents");
        std::fs::write(p, text).expect("write the file");
    }
}

/// Write `text` to `path` (parents created).
pub fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file path has a parent"))
        .expect("create the parents");
    std::fs::write(path, text).expect("write the file");
}

/// Write `text` to the host path `path` below `root` (a leading `/`
/// ignored, parents created) with the file mode `mode`.
pub fn put_mode(root: &Path, path: &str, text: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let p = root.join(path.trim_start_matches('/'));
    put(&p, text);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("set the mode");
}

/// Write `text` to `dir/name` (a leading `/` of `name` ignored, so a host
/// path lands below `dir`; parents created) and return its path.
pub fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().expect("a file path has a parent"))
        .expect("create the parents");
    std::fs::write(&p, text).expect("write the file");
    p
}

/// A new temporary directory holding `name` with `text`, and that file's
/// path; the directory goes when the returned guard drops.
pub fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let p = file(dir.path(), name, text);
    (dir, p)
}

/// Replace `from` (which must be there) with `to` in the file `path`.
#[track_caller]
pub fn replace_in(path: &Path, from: &str, to: &str) {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(
        text.contains(from),
        "{} has no `{from}` to replace",
        path.display()
    );
    std::fs::write(path, text.replace(from, to)).expect("write the file");
}

/// Every `.rs` file below `dir`, sorted by path (the source a structural
/// test reads).
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The name at the start of `rest` (letters, digits, `_`): what follows
/// `fn ` in a source line.
pub fn leading_name(rest: &str) -> &str {
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// Record PID 1 as systemd in a snapshot tree (`proc/1/comm` and
/// `run/systemd/system`, as `driftaudit snapshot` records them since issue
/// 48): a test host that models a systemd host says so, since a tree that
/// records no init leaves every next-boot value the inits would give
/// differently unknown.
pub fn systemd_pid1(root: &Path) {
    file(root, "/proc/1/comm", "systemd\n");
    file(root, "/run/systemd/system/.keep", "");
}
