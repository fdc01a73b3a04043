//! Issue 36: on a virtual machine the rotational flag is not the hardware.
//! `storage.on-rotational` failed every virtio guest ("whose disks spin")
//! because virtio-blk reports `queue/rotational = 1` whatever backs it.
//! Each recognised kind of virtual and cloud disk (sysfs layouts as the
//! guest's kernel shows them; the references are in src/facts/disks.rs) is
//! `unknown` with the reason and what decides it, `storage.assume_media`
//! decides it, physical drives keep their verdict, and the fleet summary
//! counts the hosts such a parameter would decide. The CI machine itself is
//! a virtio guest: its live check is one of the cases.

use crate::common;
use crate::common::cli::says;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run driftaudit")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A disk as sysfs shows it: kernel name, `device/vendor`, `device/model`,
/// `device/modalias` (empty: the file is absent), `queue/rotational`.
struct Disk {
    name: &'static str,
    vendor: &'static str,
    model: &'static str,
    modalias: &'static str,
    rotational: u8,
}

/// A snapshot of a MariaDB host whose data directory is on the root
/// filesystem, on `disk`.
fn host(dir: &Path, name: &str, disk: &Disk) {
    let w = |rel: &str, body: &str| {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    };
    w(
        "snapshot.json",
        &format!(
            "{{\"schema\": \"driftaudit.snapshot/1\", \"host\": \"{name}\", \"driftaudit\": \"0.1.0\", \
             \"captured_at\": \"2026-12-04T00:00:00Z\", \"unreadable\": []}}\n"
        ),
    );
    w(
        "proc/self/mountinfo",
        &format!("22 1 253:0 / / rw,relatime - ext4 /dev/{} rw\n", disk.name),
    );
    w("etc/mysql/my.cnf", "[mysqld]\ndatadir = /var/lib/mysql\n");
    let b = format!("sys/block/{}", disk.name);
    w(
        &format!("{b}/queue/rotational"),
        &format!("{}\n", disk.rotational),
    );
    for (f, v) in [
        ("vendor", disk.vendor),
        ("model", disk.model),
        ("modalias", disk.modalias),
    ] {
        if !v.is_empty() {
            w(&format!("{b}/device/{f}"), &format!("{v}\n"));
        }
    }
}

/// status, explanation and fix of the data directory's on-rotational
/// finding.
fn verdict(snap: &Path, extra: &[&str]) -> (String, String, String) {
    let s = snap.to_str().unwrap();
    let args = [
        &[
            "check",
            "--snapshot",
            s,
            "--only",
            "storage.on-rotational",
            "--format",
            "json",
        ][..],
        extra,
    ]
    .concat();
    let o = run(&args);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    let f = v["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"][0] == "mysql")
        .unwrap_or_else(|| panic!("no mysql item: {v}"))
        .clone();
    let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
    (s("status"), s("explanation"), s("fix"))
}

const VIRTUAL: &[(&str, Disk, &str)] = &[
    // this project's CI machine: /sys/block/vda/device/vendor 0x1af4
    (
        "kvm-virtio-blk",
        Disk {
            name: "vda",
            vendor: "0x1af4",
            model: "",
            modalias: "virtio:d00000002v00001AF4",
            rotational: 1,
        },
        "vda is a virtio-blk disk",
    ),
    (
        "kvm-virtio-scsi",
        Disk {
            name: "sda",
            vendor: "QEMU    ",
            model: "QEMU HARDDISK   ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sda is a QEMU virtual disk",
    ),
    (
        "xen-pv",
        Disk {
            name: "xvda",
            vendor: "",
            model: "",
            modalias: "xen:vbd",
            rotational: 1,
        },
        "xvda is a Xen virtual disk",
    ),
    (
        "vmware-pvscsi",
        Disk {
            name: "sda",
            vendor: "VMware  ",
            model: "Virtual disk    ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sda is a VMware virtual disk",
    ),
    (
        "hyperv-azure",
        Disk {
            name: "sda",
            vendor: "Msft    ",
            model: "Virtual Disk    ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sda is a Hyper-V virtual disk",
    ),
    (
        "aws-ebs-nitro",
        Disk {
            name: "nvme0n1",
            vendor: "",
            model: "Amazon Elastic Block Store              ",
            modalias: "",
            rotational: 0,
        },
        "nvme0n1 is a AWS EBS volume, a network volume",
    ),
    (
        "gce-persistent-disk",
        Disk {
            name: "sdb",
            vendor: "Google  ",
            model: "PersistentDisk  ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sdb is a Google Compute Engine persistent disk",
    ),
    // hardware RAID: the controller answers the medium inquiry for its
    // virtual disk (Red Hat KB 7008833), as sysfs shows such disks
    (
        "dell-perc",
        Disk {
            name: "sda",
            vendor: "DELL    ",
            model: "PERC H730P Mini ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sda is a virtual disk of a Dell PERC RAID controller",
    ),
    (
        "hpe-smart-array",
        Disk {
            name: "sda",
            vendor: "HP      ",
            model: "LOGICAL VOLUME  ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sda is a virtual disk of a HPE Smart Array RAID controller",
    ),
    (
        "broadcom-megaraid",
        Disk {
            name: "sdb",
            vendor: "AVAGO   ",
            model: "MR9361-8i       ",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
        "sdb is a virtual disk of a MegaRAID",
    ),
];

#[test]
fn a_virtual_or_cloud_disk_is_unknown_with_why_until_the_site_says_what_backs_it() {
    let t = tempfile::tempdir().unwrap();
    for (name, disk, reason) in VIRTUAL {
        let snap = t.path().join(name);
        host(&snap, name, disk);
        let (status, why, fix) = verdict(&snap, &[]);
        assert_eq!(status, "unknown", "{name}: {why}");
        assert!(why.contains(reason), "{name}: {why}");
        assert!(
            why.contains("not the medium") || why.contains("says nothing about the medium"),
            "{name}: {why}"
        );
        assert!(
            fix.contains("--set storage.assume_media=ssd"),
            "{name}: the fix says what decides it: {fix}"
        );
        // a cloud volume names the fact that decides it
        if name.starts_with("aws") {
            assert!(fix.contains("EBS volume type"), "{fix}");
        }
        // a RAID controller's disk names the tool that lists its drives
        if name.starts_with("dell") || name.contains("megaraid") {
            assert!(fix.contains("storcli") && fix.contains("perccli"), "{fix}");
        }
        if name.starts_with("hpe") {
            assert!(fix.contains("ssacli"), "{fix}");
        }
        let (status, why, _) = verdict(&snap, &["--set", "storage.assume_media=ssd"]);
        assert_eq!(status, "pass", "{name}: {why}");
        let (status, why, _) = verdict(&snap, &["--set", "storage.assume_media=hdd"]);
        assert_eq!(status, "fail", "{name}: {why}");
        assert!(why.contains("assume_media = hdd"), "{name}: {why}");
    }
    // the overlay form decides it as --set does
    let overlay = t.path().join("vm.yaml");
    fs::write(
        &overlay,
        "policy: site-vms\ntitle: Our VMs run on an all-flash pool\noverrides:\n  - rule: \"storage.*\"\n    params: { assume_media: ssd }\n",
    )
    .unwrap();
    let (status, why, _) = verdict(
        &t.path().join("kvm-virtio-blk"),
        &["--policy", overlay.to_str().unwrap()],
    );
    assert_eq!(status, "pass", "{why}");
}

#[test]
fn a_physical_drive_keeps_its_own_flag_whatever_the_site_assumes() {
    let t = tempfile::tempdir().unwrap();
    let cases = [
        (
            "sata-hdd",
            Disk {
                name: "sda",
                vendor: "ATA     ",
                model: "ST4000NM0035-1V4",
                modalias: "scsi:t-0x00",
                rotational: 1,
            },
            "fail",
        ),
        (
            "nvme-ssd",
            Disk {
                name: "nvme0n1",
                vendor: "",
                model: "Samsung SSD 980 PRO 1TB",
                modalias: "",
                rotational: 0,
            },
            "pass",
        ),
        (
            "ec2-instance-store",
            Disk {
                name: "nvme1n1",
                vendor: "",
                model: "Amazon EC2 NVMe Instance Storage",
                modalias: "",
                rotational: 0,
            },
            "pass",
        ),
    ];
    for (name, disk, want) in cases {
        let snap = t.path().join(name);
        host(&snap, name, &disk);
        for extra in [
            &[][..],
            &["--set", "storage.assume_media=ssd"][..],
            &["--set", "storage.assume_media=hdd"][..],
        ] {
            let (status, why, _) = verdict(&snap, extra);
            assert_eq!(status, want, "{name} {extra:?}: {why}");
        }
    }
    let (_, why, _) = verdict(&t.path().join("sata-hdd"), &[]);
    says(&why, "whose disks spin (sysfs queue/rotational = 1");
}

/// An md array over two virtio disks: the leaf decides, and the finding
/// names the array and the disk under it.
#[test]
fn an_array_over_virtual_disks_is_judged_by_its_leaves() {
    let t = tempfile::tempdir().unwrap();
    let snap = t.path().join("md");
    host(
        &snap,
        "md-on-virtio",
        &Disk {
            name: "vda",
            vendor: "0x1af4",
            model: "",
            modalias: "virtio:d00000002v00001AF4",
            rotational: 1,
        },
    );
    fs::write(
        snap.join("proc/self/mountinfo"),
        "22 1 9:0 / / rw,relatime - ext4 /dev/md0 rw\n",
    )
    .unwrap();
    fs::create_dir_all(snap.join("sys/block/md0/slaves/vda")).unwrap();
    fs::create_dir_all(snap.join("sys/block/md0/queue")).unwrap();
    fs::write(snap.join("sys/block/md0/queue/rotational"), "1\n").unwrap();
    let (status, why, _) = verdict(&snap, &[]);
    assert_eq!(status, "unknown", "{why}");
    assert!(why.contains("md0 (on vda) is a virtio-blk disk"), "{why}");
}

/// The fleet summary says how many unknown hosts the parameter would
/// decide, so a user sees at once that one setting clears them.
#[test]
fn the_fleet_summary_counts_the_hosts_a_parameter_would_decide() {
    let t = tempfile::tempdir().unwrap();
    for (name, disk, _) in &VIRTUAL[..3] {
        host(&t.path().join(name), name, disk);
    }
    host(
        &t.path().join("sata-hdd"),
        "sata-hdd",
        &Disk {
            name: "sda",
            vendor: "ATA     ",
            model: "ST4000NM0035-1V4",
            modalias: "scsi:t-0x00",
            rotational: 1,
        },
    );
    let fleet = t.path().to_str().unwrap();
    let fleet_in = |format: &str| run(&["check", "--format", format, "--fleet", fleet]);
    let o = run(&["check", "--summary", "--fleet", fleet]);
    let out = text(&o.stdout);
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with("storage.on-rotational "))
        .unwrap_or_else(|| panic!("{out}{}", text(&o.stderr)));
    says(
        row,
        "1 failing, 0 passing, 3 unknown (3 decided by setting storage.assume_media)",
    );
    let o = fleet_in("json");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["fleet"]["rules"]["storage.on-rotational"]["hosts_unknown_decided_by"]
            ["storage.assume_media"],
        3
    );
    // the HTML report's rule table: in the rule's row, the unknown cell
    let o = fleet_in("html");
    let page = text(&o.stdout);
    let row = page
        .split("<tr data-rule=\"storage.on-rotational\">")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no row: {page}"));
    says(row, "<td class=\"n\">3<br><span class=\"muted decided\">3 decided by setting storage.assume_media</span></td>");
}

/// The CI machine is a virtio guest (issue 36): its own live check, and a
/// snapshot of it, report the data directory's disk as unknown for that
/// reason, and `--set storage.assume_media=ssd` passes it. The snapshot
/// keeps the files that tell (device/vendor, model, modalias).
#[test]
fn this_virtio_guest_is_unknown_live_and_in_its_snapshot_until_assume_media_says() {
    let root_disk = fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let dash = f.iter().position(|x| *x == "-")?;
            (f.get(4) == Some(&"/")).then(|| f.get(dash + 2).map(|s| s.to_string()))?
        })
        .unwrap_or_default();
    let disk = root_disk.trim_start_matches("/dev/").to_string();
    let alias =
        fs::read_to_string(format!("/sys/block/{disk}/device/modalias")).unwrap_or_default();
    if !alias.starts_with("virtio:d00000002") {
        common::skip(
            "needs a virtio-blk root disk (the CI machine's)",
            &format!("/ is on `{root_disk}`, modalias `{}`", alias.trim()),
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let snap = t.path().join("me");
    let o = run(&["snapshot", "--out", snap.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        fs::read_to_string(snap.join(format!("sys/block/{disk}/device/modalias"))).unwrap(),
        alias,
        "the snapshot keeps what the disk is"
    );
    // a data directory on the root disk, as on this machine's MariaDB
    let cnf = snap.join("etc/mysql/my.cnf");
    if !cnf.exists() {
        fs::create_dir_all(cnf.parent().unwrap()).unwrap();
        fs::write(&cnf, "[mysqld]\ndatadir = /var/lib/mysql\n").unwrap();
    }
    let (status, why, fix) = verdict(&snap, &[]);
    if status == "unknown" && why.starts_with("rotational: ") {
        says(&why, &format!("{disk} is a virtio-blk disk"));
        assert!(fix.contains("storage.assume_media"), "{fix}");
        let (status, why, _) = verdict(&snap, &["--set", "storage.assume_media=ssd"]);
        assert_eq!(status, "pass", "{why}");
    } else {
        // the data directory is on another volume than /: it is judged there
        assert_ne!(
            status, "fail",
            "a virtio disk never fails for its flag: {why}"
        );
    }
    // the live check itself, where this machine has a data directory
    let o = run(&[
        "check",
        "--only",
        "storage.on-rotational",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for f in v["hosts"][0]["findings"].as_array().unwrap() {
        let why = f["explanation"].as_str().unwrap_or("");
        assert_ne!(
            f["status"], "fail",
            "a virtio guest's flag is not its medium: {why}"
        );
        if f["status"] == "unknown" && why.starts_with("rotational: ") {
            assert!(why.contains("virtio-blk"), "{why}");
        }
    }
    // CI installs a MariaDB server: its data directory is on this disk, so
    // the live verdict is the unknown above, and the parameter decides it
    let on_root = |v: &serde_json::Value| {
        v["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["subject"][0] == "mysql" && f["status"] != "skip")
            .cloned()
    };
    match on_root(&v) {
        Some(f)
            if f["explanation"]
                .as_str()
                .unwrap_or("")
                .starts_with("rotational: ") =>
        {
            assert_eq!(f["status"], "unknown", "{f}");
            let o = run(&[
                "check",
                "--only",
                "storage.on-rotational",
                "--set",
                "storage.assume_media=ssd",
                "--format",
                "json",
            ]);
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(on_root(&v).unwrap()["status"], "pass", "{v}");
        }
        Some(f) => assert_ne!(f["status"], "fail", "{f}"),
        None => common::skip(
            "the live half needs a MySQL/MariaDB data directory on this host",
            "no server is installed here (CI installs mariadb-server)",
        ),
    }
}
