//! A snapshot survives git: committed, cloned (git keeps no empty
//! directories and only the executable bit of a mode) and audited again, it
//! gives exactly the findings it gave before. Snapshots live in git in the
//! documented workflow (docs/git-workflow.md), so a verdict that depends on
//! an empty directory changes the moment someone pushes it.

use std::path::{Path, PathBuf};

use crate::common;
use crate::common::cli;
use crate::common::git::{git, init_and_commit};
use crate::common::tree::copy_host;

/// `driftaudit ARGS` on whatever day it is.
fn driftaudit(args: &[&str]) -> (i32, String, String) {
    cli::parts(
        cli::cmd()
            .args(args)
            .env_remove("DRIFTAUDIT_TODAY")
            .output()
            .expect("run driftaudit"),
    )
}

/// Commit `snapshot` into a fresh repository and clone it; the clone's path.
fn through_git(git_bin: &Path, snapshot: &Path, work: &Path) -> PathBuf {
    init_and_commit(git_bin, snapshot, "snapshot");
    let clone = work.join("clone");
    git(
        git_bin,
        work,
        &[
            "clone",
            "-q",
            snapshot.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    clone
}

/// The findings and summary of a one-host JSON report, with the snapshot's
/// own path (which differs between original and clone) taken out.
fn findings(dir: &Path) -> serde_json::Value {
    let (code, out, err) = driftaudit(&[
        "check",
        "--format",
        "json",
        "--snapshot",
        dir.to_str().unwrap(),
    ]);
    assert!(code == 0 || code == 1, "check exited {code}: {err}");
    let out = out.replace(dir.to_str().unwrap(), "SNAPSHOT");
    let v: serde_json::Value = serde_json::from_str(&out).expect("report JSON");
    serde_json::json!({
        "summary": v["hosts"][0]["summary"],
        "findings": v["hosts"][0]["findings"],
    })
}

/// Same findings; a difference is shown rule by rule, not as two documents.
fn assert_same(before: &serde_json::Value, after: &serde_json::Value) {
    let by_rule = |v: &serde_json::Value| -> std::collections::BTreeMap<String, String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    format!("{} {}", f["rule"], f["subject"]),
                    format!("{}: {}", f["status"], f["explanation"]),
                )
            })
            .collect()
    };
    let (a, b) = (by_rule(before), by_rule(after));
    let changed: Vec<String> = a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}\n  before: {:?}\n  after:  {:?}", a.get(k), b.get(k)))
        .collect();
    assert!(
        changed.is_empty(),
        "findings changed after a git round trip:\n{}",
        changed.join("\n")
    );
    assert_eq!(after, before, "findings changed after a git round trip");
}

fn empty_dirs(root: &Path) -> Vec<PathBuf> {
    walkdir(root)
        .into_iter()
        .filter(|p| p.is_dir() && std::fs::read_dir(p).unwrap().next().is_none())
        .collect()
}

/// git, a temporary directory, and the path `host` in it for a snapshot;
/// `None` after a skip line when git is missing.
fn git_workspace() -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let git_bin = common::program("git", "git")?;
    let t = tempfile::tempdir().unwrap();
    let snap = t.path().join("host");
    Some((git_bin, t, snap))
}

fn walkdir(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() && e.file_name() != ".git" {
                todo.push(p.clone());
                out.push(p);
            } else if !e.file_type().unwrap().is_dir() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `driftaudit snapshot` of this machine (it writes empty directories such
/// as `sys/block/*/slaves` and symlinks) audits the same after a git round trip.
#[test]
fn a_snapshot_of_this_host_survives_git() {
    let Some((git_bin, t, snap)) = git_workspace() else {
        return;
    };
    let (code, _, err) = driftaudit(&["snapshot", "--out", snap.to_str().unwrap()]);
    assert_eq!(code, 0, "snapshot: {err}");
    let before = findings(&snap);
    let clone = through_git(&git_bin, &snap, t.path());
    assert!(
        empty_dirs(&clone).len() < empty_dirs(&snap).len() || empty_dirs(&snap).is_empty(),
        "git dropped no empty directory: the round trip tests nothing"
    );
    assert_same(&before, &findings(&clone));
}

/// A Zimbra host whose data directories are mount points: a real snapshot
/// holds them as empty directories, which git drops. The verdicts must come
/// from the mount table, fstab and captures, not from the empty directories.
#[test]
fn a_zimbra_snapshot_with_empty_mount_points_survives_git() {
    let Some((git_bin, t, snap)) = git_workspace() else {
        return;
    };
    copy_host("zimbra-storage-after", &snap);
    // the testdata keeps its directories in git with .keep files; a real
    // snapshot has none
    for p in walkdir(&snap) {
        if p.file_name().is_some_and(|n| n == ".keep") {
            std::fs::remove_file(p).unwrap();
        }
    }
    assert!(snap.join("opt/zimbra/index").is_dir());
    let before = findings(&snap);
    let evaluated = before["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("storage.") && f["status"] != "skip")
        .count();
    assert!(
        evaluated >= 6,
        "storage rules evaluated on the snapshot: {evaluated}"
    );
    let clone = through_git(&git_bin, &snap, t.path());
    assert!(
        !clone.join("opt/zimbra/index").exists(),
        "git keeps no empty directory"
    );
    assert_same(&before, &findings(&clone));
}
