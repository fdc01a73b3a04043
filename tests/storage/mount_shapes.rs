//! Issue 31, real-world mount shapes, each against the real reference:
//! util-linux libmount mounting fstab lines in a private mount namespace
//! (`unshare -m` + `mount -a -T FILE`, tmpfs so no disk is needed) and
//! e2fsprogs images read back with `dumpe2fs -h`. The kernel's mountinfo
//! and the tools' listings go into a snapshot, which driftaudit then judges.

use crate::common;
use crate::common::mountns::{self, Sh};
use crate::reference::{ext4_workspace, fstab_drift, listing, mkfs_image, ok, says};

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::common::audit;
use driftaudit::unstable::facts::{self, Entry};
use driftaudit::unstable::host::Host;
use driftaudit::unstable::value::Value;

/// Root with `unshare` and `mount`: real mounts in a private namespace can
/// be made. Off CI a missing piece skips with one line; in CI it fails.
fn can_mount() -> bool {
    let is_root = mountns::is_root();
    if !is_root {
        common::skip("needs root for mounts in a private namespace", "not root");
        return false;
    }
    common::tool("unshare", "util-linux").is_some() && common::tool("mount", "mount").is_some()
}

/// Run `script` with `sh -e` in a private mount namespace; its stdout.
fn in_namespace(script: &str) -> String {
    mountns::run_ok(&format!("mount --make-rprivate /\n{script}"), Sh::Errexit)
}

fn write_snapshot(root: &Path, files: &[(&str, &str)]) -> Host {
    for (p, c) in files {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, c).unwrap();
    }
    audit::host(root)
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
    use driftaudit::unstable::report::Status;
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

    let drift = fstab_drift(&host);
    assert!(drift.iter().all(|f| f.status == Status::Pass), "{drift:#?}");
    crate::common::cli::starts(&drift[0].explanation, "6 configured value(s)");
}

/// A real ext4 image with a fixed UUID and label; its `dumpe2fs -h`.
fn ext4_image(path: &Path, uuid: &str, label: &str) -> String {
    let args = ["-q", "-F", "-U", uuid, "-L", label];
    ok("mkfs.ext4", mkfs_image("mkfs.ext4", path, 16, &args));
    ok("dumpe2fs -h", listing("dumpe2fs", "-h", path))
}

/// `/dev/disk/by-uuid/X` and `/dev/disk/by-label/L` specs name the device
/// `UUID=X` and `LABEL=L` name. libmount mounts such a line (the links made
/// in the namespace's own /dev as udev names them: the label's link name is
/// blkid's `ID_FS_LABEL_ENC`, `db\x20data`) and mountinfo shows the loop
/// device, not the link. Then, in the snapshot (which, like a real one,
/// holds no /dev links): the drift cause is not "a different filesystem is
/// mounted there" (the old code compared the link text with /dev/loopN);
/// the unmounted by-label line's ext4 layout is found by the label inside a
/// capture (the old code looked only at a capture named after the link);
/// and a second device with the same UUID (a cloned image) is a finding:
/// unknown for the line that names only the UUID, a problem and a note on
/// the mounted one, never a silent pick.
#[test]
fn disk_by_links_resolve_like_tags_and_a_shared_uuid_is_a_finding() {
    use driftaudit::unstable::report::Status;
    if !can_mount() {
        return;
    }
    for (t, pkg) in [
        ("mkfs.ext4", "e2fsprogs"),
        ("dumpe2fs", "e2fsprogs"),
        ("losetup", "mount"),
        ("blkid", "util-linux"),
    ] {
        if common::tool(t, pkg).is_none() {
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let uuid = "0b5c1e2d-1111-4222-8333-444455556666";
    let a = ext4_image(&d.join("a.img"), uuid, "dbvol");
    let b = ext4_image(
        &d.join("b.img"),
        "9f0e2a11-aaaa-4bbb-8ccc-ddddeeeeffff",
        "db data",
    );
    // a clone of a: the same UUID on another device
    let c = ext4_image(&d.join("c.img"), uuid, "dbclone");
    let enc = Command::new("blkid")
        .args(["-o", "udev", "-p"])
        .arg(d.join("b.img"))
        .output()
        .unwrap();
    let enc = String::from_utf8_lossy(&enc.stdout);
    let label_link = enc
        .lines()
        .find_map(|l| l.strip_prefix("ID_FS_LABEL_ENC="))
        .expect("blkid ID_FS_LABEL_ENC")
        .to_string();
    assert_eq!(label_link, "db\\x20data", "udev's encoding of the label");
    let t = d.join("mnt");
    for p in ["m", "n", "o"] {
        std::fs::create_dir_all(t.join(p)).unwrap();
    }
    let t = t.display().to_string();
    let mounted = format!("/dev/disk/by-uuid/{uuid} {t}/m ext4 defaults,noatime 0 2\n");
    let fstab_path = d.join("fstab");
    std::fs::write(&fstab_path, &mounted).unwrap();
    let script = format!(
        "set -e\nL=$(losetup --find --show {img})\ntrap 'losetup -d $L' EXIT\n\
         unshare -m sh -e -c \"mount --make-rprivate /; mount -t tmpfs tmpfs /dev; \
         mknod \\$0 b 7 \\${{0#/dev/loop}}; mknod /dev/null c 1 3; mkdir -p /dev/disk/by-uuid; \
         ln -s ../../\\${{0#/dev/}} /dev/disk/by-uuid/{uuid}; mount -a -T {f}; cat /proc/self/mountinfo\" $L\n",
        img = d.join("a.img").display(),
        f = fstab_path.display()
    );
    let out = common::cli::ok(
        Command::new("sh").arg("-c").arg(&script),
        &format!("the mount script\n{script}\n"),
    );
    let mountinfo = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = mountinfo
        .lines()
        .find(|l| l.contains(&format!(" {t}/m ")))
        .unwrap_or_else(|| panic!("not mounted: {mountinfo}"));
    let loopdev = line.split(" - ").nth(1).unwrap().split(' ').nth(1).unwrap();
    assert!(loopdev.starts_with("/dev/loop"), "{line}");
    let loopname = loopdev.trim_start_matches("/dev/");

    // the file as it is now: nodev added after the mount (drift), and two
    // lines that are not mounted
    let fstab = format!(
        "/dev/disk/by-uuid/{uuid} {t}/m ext4 defaults,noatime,nodev 0 2\n\
         /dev/disk/by-label/{label_link} {t}/n ext4 noauto 0 0\n\
         UUID={uuid} {t}/o ext4 noauto 0 0\n"
    );
    let snap = d.join("snap");
    let cap_a = format!("captures/dumpe2fs/{loopname}.txt");
    let host = write_snapshot(
        &snap,
        &[
            ("etc/fstab", &fstab),
            ("proc/self/mountinfo", &mountinfo),
            (&cap_a, &a),
            // named so that only the label or UUID inside can match them
            ("captures/dumpe2fs/spare.txt", &b),
            ("captures/dumpe2fs/clone.txt", &c),
        ],
    );
    let f = facts::gather(&host, &Default::default());
    let m = record(&f, "fstab", &format!("{t}/m"));
    let cause = m["drift_cause"].to_plain();
    assert!(!cause.contains("different filesystem"), "{cause}");
    says(&cause, "edited after the volume was mounted");

    let n = record(&f, "ext4", &format!("{t}/n"));
    assert_eq!(n["label"].to_plain(), "db data");
    assert_eq!(n["source"].to_plain(), "/captures/dumpe2fs/spare.txt");

    match f.namespaces["ext4"].get(&format!("{t}/o")) {
        Some(Entry::Unreadable { reason, .. }) => {
            says(reason, &format!("UUID={uuid} is on 2 devices"));
            says(reason, "clone.txt");
            says(reason, &cap_a);
        }
        e => panic!("a UUID on two devices must not pick one: {e:?}"),
    }
    // the mounted one: its own layout, with the shared UUID said
    match f.namespaces["ext4"].get(&format!("{t}/m")) {
        Some(Entry::Set(s)) => {
            let note = s.note.clone().unwrap_or_default();
            assert!(note.contains("is on 2 devices"), "{note}");
        }
        e => panic!("{e:?}"),
    }
    assert!(
        f.issues
            .iter()
            .any(|i| i.message.contains("is on 2 devices")),
        "{:#?}",
        f.issues
    );

    let fail: Vec<_> = fstab_drift(&host)
        .into_iter()
        .filter(|f| f.status == Status::Fail)
        .collect();
    assert_eq!(fail.len(), 1, "{fail:#?}");
    says(&fail[0].explanation, "nodev");
    assert!(!fail[0].explanation.contains("different filesystem"));
}

/// `nofail` and `_netdev` lines that did not mount: libmount's `mount -a`
/// goes on past a `nofail` line whose device is missing (exit 0, nothing in
/// mountinfo), so the host boots with the line unmounted. That is not drift
/// (there is no mount to compare) but it is said: `storage.fstab-not-mounted`
/// fails the line with "configured with nofail, not mounted now", the drift
/// rule compares only the mounted line, and a `noauto` line is not judged.
#[test]
fn nofail_lines_that_did_not_mount_are_said_as_such_not_as_drift() {
    use driftaudit::unstable::{engine, report::Status};
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("mnt");
    for p in ["up", "gone", "later", "net"] {
        std::fs::create_dir_all(t.join(p)).unwrap();
    }
    let t = t.display().to_string();
    let fstab = format!(
        "tmpfs {t}/up tmpfs nosuid,nodev 0 0\n\
         /dev/disk/by-uuid/00000000-dead-4bad-8bad-000000000000 {t}/gone ext4 defaults,nofail 0 2\n\
         /dev/disk/by-uuid/00000000-dead-4bad-8bad-000000000001 {t}/later ext4 noauto 0 0\n"
    );
    let fstab_path = dir.path().join("fstab");
    std::fs::write(&fstab_path, &fstab).unwrap();
    let mountinfo = in_namespace(&format!(
        "mount -a -T {}\ncat /proc/self/mountinfo",
        fstab_path.display()
    ));
    assert!(mountinfo.contains(&format!(" {t}/up ")), "{mountinfo}");
    assert!(!mountinfo.contains(&format!(" {t}/gone ")), "{mountinfo}");
    // the snapshot's fstab also has a network line that is not mounted
    let fstab = format!("{fstab}//nas/share {t}/net cifs _netdev,vers=3.0 0 0\n");
    let host = write_snapshot(
        &dir.path().join("snap"),
        &[("etc/fstab", &fstab), ("proc/self/mountinfo", &mountinfo)],
    );
    let f = facts::gather(&host, &Default::default());
    let state = |p: &str| record(&f, "fstab", &format!("{t}/{p}"))["mount_state"].to_plain();
    assert_eq!(state("up"), "mounted");
    assert_eq!(state("gone"), "configured with nofail, not mounted now");
    assert_eq!(state("net"), "configured with _netdev, not mounted now");
    assert!(state("later").starts_with("not mounted now (noauto"));

    let mut p = audit::builtin();
    p.filter(
        &[
            "storage.fstab-not-mounted".to_string(),
            "storage.fstab-live-drift".to_string(),
        ],
        &[],
    )
    .unwrap();
    let report = engine::audit_host(&p, &host);
    let of = |rule: &str, st: Status| -> Vec<_> {
        report
            .findings
            .iter()
            .filter(|x| x.rule == rule && x.status == st)
            .collect()
    };
    let not_mounted = of("storage.fstab-not-mounted", Status::Fail);
    let subjects: BTreeSet<String> = not_mounted.iter().map(|x| x.subject[0].clone()).collect();
    assert_eq!(
        subjects,
        BTreeSet::from([format!("{t}/gone"), format!("{t}/net")]),
        "{not_mounted:#?}"
    );
    let gone = not_mounted
        .iter()
        .find(|x| x.subject[0].ends_with("/gone"))
        .unwrap();
    says(&gone.explanation, "configured with nofail, not mounted now");
    assert!(of("storage.fstab-live-drift", Status::Fail).is_empty());
    let pass = of("storage.fstab-live-drift", Status::Pass);
    crate::common::cli::starts(&pass[0].explanation, "1 configured value(s)");
}

/// The mount point a `.mount` unit's name encodes is what the real
/// `systemd-escape --path` makes of it, both ways.
#[test]
fn unit_names_unescape_as_systemd_escape_does() {
    use driftaudit::unstable::parse::mountunit::{escape_path, unit_path};
    let Some(esc) = common::tool("systemd-escape", "systemd") else {
        return;
    };
    let paths = [
        "/",
        "/srv/data",
        "/srv/my-data",
        "/mnt/a b",
        "/var/lib/mysql",
        "/opt/zimbra/db",
        "/mnt/ünï",
        "/mnt/x.y",
        "/mnt/.hidden",
        "/mnt/a\\b",
        "/mnt/50%",
    ];
    for p in paths {
        let out = Command::new(&esc)
            .args(["--path", "--suffix=mount", p])
            .output()
            .unwrap();
        assert!(out.status.success(), "{p}");
        let name = String::from_utf8(out.stdout).unwrap().trim().to_string();
        assert_eq!(unit_path(&name).as_deref(), Some(p), "{name}");
        assert_eq!(format!("{}.mount", escape_path(p)), name);
        let back = Command::new(&esc)
            .args(["--path", "--unescape", name.trim_end_matches(".mount")])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(back.stdout).unwrap().trim(), p);
    }
    // other names: what systemd-escape unescapes them to, and whether
    // systemd would load the unit (its name must be the escaping of that
    // path: mount_verify refuses "Where= setting doesn't match unit name")
    for stem in [
        "a--b",
        "-a",
        "a-",
        "a-.-b",
        "a\\x2fb",
        "a\\x00b",
        "a\\xzzb",
        "a\\x2e\\x2e-b",
        "a\\x2d",
        "\\x2emnt",
        "A\\x20b",
    ] {
        let back = Command::new(&esc)
            .args(["--path", "--unescape", "--", stem])
            .output()
            .unwrap();
        let path = String::from_utf8_lossy(&back.stdout).trim().to_string();
        let loads = back.status.success() && {
            let again = Command::new(&esc)
                .args(["--path", "--", &path])
                .output()
                .unwrap();
            String::from_utf8_lossy(&again.stdout).trim() == stem
        };
        let want = loads.then_some(path);
        assert_eq!(unit_path(&format!("{stem}.mount")), want, "{stem}");
        if let Some(p) = &want {
            assert_eq!(escape_path(p), stem);
        }
    }
}

/// A data directory mounted by a `.mount` unit, not fstab: the unit file is
/// the first of /etc, /run, /usr/lib that has it, each drop-in
/// `NAME.mount.d/X.conf` the highest one of that name, applied in name
/// order, the later `Options=` replacing — the files and their order are
/// what the real `systemd-analyze --root cat-config` lists for the same
/// tree. The unit's options are compared with mountinfo (a missing nosuid
/// is drift, with the drop-in's line as the source), an fstab-generated
/// unit in /run/systemd/generator is not counted twice, and Debian's
/// /usr/lib tmp.mount is read like any other unit.
#[test]
fn mount_units_are_read_with_drop_ins_as_systemd_loads_them() {
    use driftaudit::unstable::report::Status;
    let Some(analyze) = common::tool("systemd-analyze", "systemd") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap");
    let srv = "[Mount]\nWhat=/dev/sdb1\nWhere=/srv/data\nType=ext4\nOptions=defaults\n";
    let host = write_snapshot(
        &snap,
        &[
            ("etc/fstab", "/dev/sda1 / ext4 defaults 0 1\n/dev/sda2 /boot ext4 defaults 0 2\n"),
            ("etc/systemd/system/srv-data.mount", srv),
            ("usr/lib/systemd/system/srv-data.mount", "[Mount]\nWhat=/dev/sdz9\nWhere=/srv/data\nOptions=ro\n"),
            ("usr/lib/systemd/system/srv-data.mount.d/10-opts.conf", "[Mount]\nOptions=ro\n"),
            ("etc/systemd/system/srv-data.mount.d/10-opts.conf", "[Mount]\nOptions=noatime\n"),
            ("run/systemd/system/srv-data.mount.d/20-more.conf", "# hardening\n[Mount]\nOptions=noatime,nodev,nosuid\n"),
            ("usr/lib/systemd/system/tmp.mount", "[Unit]\nDescription=Temporary Directory /tmp\n\n[Mount]\nWhat=tmpfs\nWhere=/tmp\nType=tmpfs\nOptions=mode=1777,strictatime,nosuid,nodev,size=512m,nr_inodes=1m\n"),
            ("run/systemd/generator/boot.mount", "# Automatically generated by systemd-fstab-generator\n[Unit]\nSourcePath=/etc/fstab\n[Mount]\nWhat=/dev/sda2\nWhere=/boot\nType=ext4\n"),
            ("etc/systemd/system/wrong-name.mount", "[Mount]\nWhat=/dev/sdc1\nWhere=/elsewhere\n"),
            (
                "proc/self/mountinfo",
                "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                 21 20 8:2 / /boot rw,relatime - ext4 /dev/sda2 rw\n\
                 22 20 8:17 / /srv/data rw,nodev,noatime - ext4 /dev/sdb1 rw\n\
                 23 20 0:30 / /tmp rw,nosuid,nodev - tmpfs tmpfs rw,size=524288k,nr_inodes=1048576\n",
            ),
        ],
    );
    let f = facts::gather(&host, &Default::default());
    // the files and their order, against systemd's own loader
    for unit in ["srv-data.mount", "tmp.mount"] {
        let out = Command::new(&analyze)
            .arg(format!("--root={}", snap.display()))
            .arg("cat-config")
            .arg(format!("systemd/system/{unit}"))
            .output()
            .unwrap();
        let stdout = ok("systemd-analyze cat-config", out);
        let root = snap.display().to_string();
        let want: Vec<String> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("# "))
            .filter_map(|p| p.strip_prefix(&root))
            .map(str::to_string)
            .collect();
        let point = if unit == "tmp.mount" {
            "/tmp"
        } else {
            "/srv/data"
        };
        let r = record(&f, "fstab", point);
        assert_eq!(r["unit"].to_plain(), unit);
        let have: Vec<String> = list_in_order(&r, "unit_files");
        assert_eq!(
            have, want,
            "{unit}: driftaudit vs systemd-analyze cat-config"
        );
    }
    let srv = record(&f, "fstab", "/srv/data");
    let k = list(&srv, "kernel_options");
    assert!(
        k.contains("nosuid") && k.contains("noatime") && !k.contains("ro"),
        "{k:?}"
    );
    match f.namespaces["fstab"].get("/srv/data") {
        Some(Entry::Set(s)) => {
            assert_eq!(
                s.evidence[0].to_string(),
                "/run/systemd/system/srv-data.mount.d/20-more.conf:3"
            );
        }
        e => panic!("{e:?}"),
    }
    // the generator's copy of the fstab line is the fstab line
    match f.namespaces["fstab"].get("/boot") {
        Some(Entry::Set(s)) => assert_eq!(s.evidence[0].to_string(), "/etc/fstab:2"),
        e => panic!("{e:?}"),
    }
    assert!(f.namespaces["fstab"].get("/elsewhere").is_none());
    assert!(
        f.issues.iter().any(|i| i
            .message
            .contains("Where=/elsewhere is not the path the unit name wrong-name.mount")),
        "{:#?}",
        f.issues
    );

    let fail: Vec<_> = fstab_drift(&host)
        .into_iter()
        .filter(|x| x.status == Status::Fail)
        .collect();
    assert_eq!(fail.len(), 1, "{fail:#?}");
    assert_eq!(fail[0].subject[0], "/srv/data");
    says(&fail[0].explanation, "nosuid");
    says(&fail[0].explanation, "20-more.conf");

    // `fix` edits /etc/fstab lines only: a unit's Options= line is not an
    // fstab line, so the drift is not fixable by a patch and says why
    let plan = driftaudit::unstable::fix::plan(&audit::builtin(), Some(&snap), &Default::default())
        .unwrap();
    assert!(!plan.patch.contains("srv-data.mount"), "{}", plan.patch);
    let why: Vec<String> = plan.unfixable.iter().map(|u| format!("{u:?}")).collect();
    assert!(
        why.iter()
            .any(|w| w.contains("/srv/data") && w.contains("srv-data.mount")),
        "{why:#?}"
    );
}

fn list_in_order(r: &std::collections::BTreeMap<String, Value>, field: &str) -> Vec<String> {
    match &r[field] {
        Value::List(l) => l.iter().map(Value::to_plain).collect(),
        v => panic!("{field}: {v:?}"),
    }
}

/// `driftaudit snapshot` of this host keeps the `.mount` units the storage
/// reader loaded (the unit file and its drop-ins), so a snapshot is judged
/// from the same units as the live host.
#[test]
fn a_snapshot_keeps_the_hosts_mount_units() {
    let units: Vec<String> = ["/etc/systemd/system", "/usr/lib/systemd/system"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path().display().to_string())
        .filter(|p| p.ends_with(".mount") && Path::new(p).is_file())
        .collect();
    let Some(unit) = units.first() else {
        common::skip(
            "needs a .mount unit on this host",
            "none in /etc or /usr/lib/systemd/system",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("snap");
    let o = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["snapshot", "--out", snap.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let copy = snap.join(unit.trim_start_matches('/'));
    assert_eq!(
        std::fs::read(&copy).unwrap_or_else(|e| panic!("{}: {e}", copy.display())),
        std::fs::read(unit).unwrap()
    );
    let host = audit::host(&snap);
    let live = facts::gather(&Host::live(), &Default::default());
    let from_snap = facts::gather(&host, &Default::default());
    let units_of = |f: &facts::Facts| -> BTreeSet<String> {
        f.namespaces["fstab"]
            .entries
            .iter()
            .filter_map(|(k, e)| match e {
                Entry::Set(s) => match &s.value {
                    Value::Record(r) if r.contains_key("unit") => Some(k.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    };
    assert!(
        !units_of(&live).is_empty(),
        "this host's units were not read"
    );
    assert_eq!(units_of(&live), units_of(&from_snap));
}

/// Small ext4 filesystems with 1 KiB blocks: the inode count mke2fs makes
/// is rounded (to whole inode-table blocks per group, with few groups), so
/// many `-i` values give one layout. The range driftaudit derives is
/// checked against real mke2fs itself: `-i lo` and `-i hi` make the same
/// inode count, `-i lo-1` and `-i hi+1` do not (where mke2fs accepts them),
/// and when the range holds more than the picked value the record says
/// `approximate (... the range lo..hi gives this layout)`.
#[test]
fn small_1k_block_filesystems_say_which_inode_ratios_give_their_layout() {
    use driftaudit::unstable::parse::ext4::parse_text;
    let Some(([mkfs, dumpe2fs], dir)) = ext4_workspace() else {
        return;
    };
    let img = dir.path().join("img");
    let inodes = |size_mib: u64, ratio: u64| -> Option<(u64, String)> {
        let args = ["-q", "-F", "-b", "1024", "-i", &ratio.to_string()];
        if !mkfs_image(&mkfs, &img, size_mib, &args).status.success() {
            return None; // a ratio mke2fs refuses
        }
        let d = listing(&dumpe2fs, "-h", &img);
        let text = String::from_utf8_lossy(&d.stdout).into_owned();
        let l = parse_text(&text).0.expect("dumpe2fs listing");
        Some((l.inode_count, text))
    };
    let mut approximate = 0;
    for size in [4u64, 8, 16, 64] {
        for ratio in [1024u64, 3000, 4096, 8192, 12345, 65536] {
            let Some((count, text)) = inodes(size, ratio) else {
                continue;
            };
            let what = format!("{size} MiB -b 1024 -i {ratio}");
            let l = parse_text(&text).0.unwrap();
            let (lo, hi) = l
                .inode_ratio_range()
                .unwrap_or_else(|| panic!("{what}: no range"));
            assert!(lo <= ratio && ratio <= hi, "{what}: {lo}..={hi}");
            for r in [lo, hi] {
                assert_eq!(
                    inodes(size, r).map(|x| x.0),
                    Some(count),
                    "{what}: -i {r} in {lo}..={hi}"
                );
            }
            for r in [lo - 1, hi + 1] {
                if let Some((c, _)) = inodes(size, r) {
                    assert_ne!(
                        c, count,
                        "{what}: -i {r} outside {lo}..={hi} gives the same layout"
                    );
                }
            }
            let picked = l.bytes_per_inode().unwrap();
            assert!(lo <= picked && picked <= hi, "{what}");
            match l.bytes_per_inode_approximation() {
                Some(a) => {
                    approximate += 1;
                    assert!(!l.bytes_per_inode_is_exact());
                    assert!(
                        a.contains(&format!("the range {lo}..{hi} gives this layout")),
                        "{what}: {a}"
                    );
                }
                None => assert!(l.bytes_per_inode_is_exact(), "{what}"),
            }
        }
    }
    assert!(approximate > 0, "some small layouts are ambiguous");
}

/// The rotational flag a rule needs is never a silent skip: a data
/// directory whose mount has no `/dev/` source (a ZFS dataset, an NFS
/// export, an overlay) or whose snapshot lacks /sys/block is `unknown` with
/// what would decide it; the old code skipped the first kind ("has no field
/// `rotational`"). Memory (tmpfs) spins nothing.
#[test]
fn rotational_that_the_host_data_cannot_tell_is_unknown_with_what_decides_it() {
    use driftaudit::unstable::{engine, report::Status};
    let cases = [
        ("22 20 0:50 / /var/lib/mysql rw,noatime - zfs tank/mysql rw,xattr", Status::Unknown, "zpool status tank"),
        ("22 20 0:51 / /var/lib/mysql rw,noatime - nfs4 nas:/export/db rw,vers=4.2", Status::Unknown, "network filesystem"),
        ("22 20 0:52 / /var/lib/mysql rw,relatime - overlay overlay rw,lowerdir=/a,upperdir=/b,workdir=/c", Status::Unknown, "not a block device"),
        ("22 20 8:17 / /var/lib/mysql rw,noatime - ext4 /dev/sdb1 rw", Status::Unknown, "/sys/block is not in the snapshot"),
        ("22 20 0:53 / /var/lib/mysql rw,noatime - tmpfs tmpfs rw,size=1048576k", Status::Pass, ""),
    ];
    for (line, want, text) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mountinfo = format!("20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n{line}\n");
        let host = write_snapshot(
            dir.path(),
            &[
                ("etc/mysql/my.cnf", "[mysqld]\ndatadir=/var/lib/mysql\n"),
                ("var/lib/mysql/ibdata1", ""),
                ("proc/self/mountinfo", &mountinfo),
            ],
        );
        let p = audit::only(&["storage.mysql-on-rotational"]);
        let report = engine::audit_host(&p, &host);
        let f = report
            .findings
            .iter()
            .find(|f| {
                f.rule == "storage.on-rotational"
                    && f.subject.first().map(String::as_str) == Some("mysql")
            })
            .unwrap_or_else(|| panic!("{line}: {:#?}", report.findings));
        assert_eq!(f.status, want, "{line}: {}", f.explanation);
        assert!(f.explanation.contains(text), "{line}: {}", f.explanation);
    }
}

/// Hostile unit directories: thousands of `.mount` units and drop-ins, a
/// 200 KiB `Options=` line, a binary unit. The reader takes at most 512
/// units and 512 drop-ins per unit, ignores the over-long line with an
/// issue at its line (never a cut value), and never panics.
#[test]
fn hostile_mount_unit_directories_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let etc = root.join("etc/systemd/system");
    std::fs::create_dir_all(etc.join("srv-a.mount.d")).unwrap();
    std::fs::write(root.join("etc/fstab"), "/dev/sda1 / ext4 defaults 0 1\n").unwrap();
    for i in 0..3000 {
        std::fs::write(
            etc.join(format!("m{i:04}.mount")),
            format!("[Mount]\nWhat=tmpfs\nWhere=/m{i:04}\nType=tmpfs\n"),
        )
        .unwrap();
        std::fs::write(
            etc.join(format!("srv-a.mount.d/{i:04}.conf")),
            "[Mount]\nOptions=ro\n",
        )
        .unwrap();
    }
    let long = format!(
        "[Mount]\nWhat=/dev/sdb1\nType=ext4\nOptions={}\n",
        "a,".repeat(100_000)
    );
    std::fs::write(etc.join("srv-a.mount"), long).unwrap();
    std::fs::write(
        etc.join("srv-b.mount"),
        b"\xff\xfe[Mount]\x00What=\x01\n\\\n",
    )
    .unwrap();
    let host = audit::host(root);
    let started = std::time::Instant::now();
    let f = facts::gather(&host, &Default::default());
    let units = f.namespaces["fstab"]
        .entries
        .values()
        .filter(|e| matches!(e, Entry::Set(s) if matches!(&s.value, Value::Record(r) if r.contains_key("unit"))))
        .count();
    assert!(units <= 512, "{units} units read");
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    // srv-a sorts after the m* units, beyond the bound: what is said of the
    // long line is only said when it is read, so read srv-a alone
    let dir2 = tempfile::tempdir().unwrap();
    let etc2 = dir2.path().join("etc/systemd/system");
    std::fs::create_dir_all(&etc2).unwrap();
    std::fs::write(dir2.path().join("etc/fstab"), "").unwrap();
    std::fs::copy(etc.join("srv-a.mount"), etc2.join("srv-a.mount")).unwrap();
    let f = facts::gather(&audit::host(dir2.path()), &Default::default());
    let r = record(&f, "fstab", "/srv/a");
    assert_eq!(r["options"], Value::List(vec![]), "a cut value is no value");
    assert!(
        f.issues
            .iter()
            .any(|i| i.line == Some(4) && i.message.contains("longer than 64 KiB")),
        "{:#?}",
        f.issues
    );
}

/// A host with no /etc/fstab that mounts its data volume by a `.mount`
/// unit (image-based and minimal systems): the unit is the configuration,
/// so the noatime rule on the configured side judges the unit's Options=
/// (it was unknown: "/etc/fstab does not exist"); without units such a host
/// stays as before.
#[test]
fn a_host_without_fstab_is_judged_from_its_mount_units() {
    use driftaudit::unstable::{engine, report::Status};
    let dir = tempfile::tempdir().unwrap();
    let host = write_snapshot(
        dir.path(),
        &[
            ("etc/mysql/my.cnf", "[mysqld]\ndatadir=/var/lib/mysql\n"),
            ("var/lib/mysql/ibdata1", ""),
            (
                "etc/systemd/system/var-lib-mysql.mount",
                "[Mount]\nWhat=/dev/vdb1\nWhere=/var/lib/mysql\nType=ext4\nOptions=defaults,relatime\n",
            ),
            (
                "proc/self/mountinfo",
                "20 1 8:1 / / rw,relatime - ext4 /dev/vda1 rw\n22 20 8:17 / /var/lib/mysql rw,relatime - ext4 /dev/vdb1 rw\n",
            ),
        ],
    );
    let p = audit::only(&["storage.noatime-mysql-fstab"]);
    let report = engine::audit_host(&p, &host);
    let f = report
        .findings
        .iter()
        .find(|f| {
            f.rule == "storage.noatime-fstab"
                && f.subject.first().map(String::as_str) == Some("mysql")
        })
        .unwrap_or_else(|| panic!("{:#?}", report.findings));
    assert_eq!(f.status, Status::Fail, "{}", f.explanation);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.to_string() == "/etc/systemd/system/var-lib-mysql.mount:5"),
        "{:?}",
        f.evidence
    );
}
