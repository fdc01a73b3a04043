//! Issue 31, real-world mount shapes, each against the real reference:
//! util-linux libmount mounting fstab lines in a private mount namespace
//! (`unshare -m` + `mount -a -T FILE`, tmpfs so no disk is needed) and
//! e2fsprogs images read back with `dumpe2fs -h`. The kernel's mountinfo
//! and the tools' listings go into a snapshot, which driftaudit then judges.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use driftaudit::unstable::facts::{self, Entry};
use driftaudit::unstable::host::Host;
use driftaudit::unstable::value::Value;

/// Root with `unshare` and `mount`: real mounts in a private namespace can
/// be made. Off CI a missing piece skips with one line; in CI it fails.
fn can_mount() -> bool {
    let is_root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false);
    if !is_root {
        common::skip("needs root for mounts in a private namespace", "not root");
        return false;
    }
    common::tool("unshare", "util-linux").is_some() && common::tool("mount", "mount").is_some()
}

/// Run `script` with `sh -e` in a private mount namespace; its stdout.
fn in_namespace(script: &str) -> String {
    let out = Command::new("unshare")
        .args(["-m", "sh", "-e", "-c"])
        .arg(format!("mount --make-rprivate /\n{script}"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "namespace script failed: {}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn write_snapshot(root: &Path, files: &[(&str, &str)]) -> Host {
    for (p, c) in files {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    Host::snapshot(root).unwrap()
}

fn record(f: &facts::Facts, ns: &str, key: &str) -> std::collections::BTreeMap<String, Value> {
    match f.namespaces[ns].get(key) {
        Some(Entry::Set(s)) => match &s.value {
            Value::Record(r) => r.clone(),
            v => panic!("{ns} {key}: {v:?}"),
        },
        e => panic!("{ns} {key}: {e:?}"),
    }
}

fn list(r: &std::collections::BTreeMap<String, Value>, field: &str) -> BTreeSet<String> {
    match &r[field] {
        Value::List(l) => l.iter().map(Value::to_plain).collect(),
        v => panic!("{field}: {v:?}"),
    }
}

/// `defaults` is a no-op for libmount: `ro,defaults` mounts read-only and
/// `nosuid,nodev,noexec,defaults` keeps all three. Expanding it in place
/// (the old code) turned such hardened lines into `rw,relatime`: false drift
/// on `ro,defaults` and a configured form that hid the hardening. Each line
/// is mounted by `mount -a -T` and the kernel's options must equal the
/// fstab model's, set for set, and the drift rule must stay silent.
#[test]
fn defaults_after_other_options_is_what_libmount_mounts() {
    use driftaudit::unstable::{engine, policy::PolicySet, report::Status};
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("mnt");
    let lines = [
        ("hard", "nosuid,nodev,noexec,defaults"),
        ("ro", "ro,defaults"),
        ("rofirst", "defaults,ro"),
        ("mid", "nosuid,defaults,noatime"),
        ("sync", "sync,defaults,nodev"),
        ("twice", "noexec,defaults,defaults,size=8m"),
    ];
    let mut fstab = String::new();
    for (d, o) in lines {
        std::fs::create_dir_all(t.join(d)).unwrap();
        fstab.push_str(&format!("tmpfs {}/{d} tmpfs {o} 0 0\n", t.display()));
    }
    let fstab_path = dir.path().join("fstab");
    std::fs::write(&fstab_path, &fstab).unwrap();
    let mountinfo = in_namespace(&format!(
        "mount -a -T {}\ncat /proc/self/mountinfo",
        fstab_path.display()
    ));
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let snap = dir.path().join("snap");
    let host = write_snapshot(
        &snap,
        &[
            ("etc/fstab", &fstab),
            ("proc/self/mountinfo", &mountinfo),
            ("proc/meminfo", &meminfo),
        ],
    );
    let f = facts::gather(&host, &Default::default());
    for (d, o) in lines {
        let key = format!("{}/{d}", t.display());
        let want = list(&record(&f, "fstab", &key), "kernel_options");
        let have = list(&record(&f, "mount", &key), "options");
        assert_eq!(
            want, have,
            "{key} ({o}): model vs the kernel after mount -a"
        );
    }
    // the hardening is in the model, not only in the kernel
    let hard = list(
        &record(&f, "fstab", &format!("{}/hard", t.display())),
        "kernel_options",
    );
    assert!(["nosuid", "nodev", "noexec"]
        .iter()
        .all(|o| hard.contains(*o)));

    let mut p = PolicySet::builtin().unwrap();
    p.filter(&["storage.fstab-live-drift".to_string()], &[])
        .unwrap();
    let report = engine::audit_host(&p, &host);
    let drift: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "storage.fstab-live-drift")
        .collect();
    assert!(drift.iter().all(|f| f.status == Status::Pass), "{drift:#?}");
    assert!(
        drift[0].explanation.starts_with("6 configured value(s)"),
        "{}",
        drift[0].explanation
    );
}
