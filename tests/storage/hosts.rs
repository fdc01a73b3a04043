//! policies/storage.yaml on the storage test hosts: the Khimki server before
//! the SSD move (everything on / of a rotational RAID10, relatime), after it
//! (database on its own SSD mirror made with -O dir_index -m 2 -i 10240,
//! mounted noatime, index bind-mounted from it), and a MariaDB host whose
//! fstab gained noatime without a remount. Verdicts must match the story and
//! explanations must name the mount point, the device and the options.
//! tests/workflow/hosts.rs pins every host's full report.

use std::collections::BTreeMap;
use std::fs;

use crate::common::audit;
use driftaudit::unstable::engine;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::report::{Finding, Status};

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");

fn storage_policies() -> PolicySet {
    audit::only(&["storage.*"])
}

fn audit_named(name: &str) -> Vec<Finding> {
    audit::findings(&storage_policies(), format!("{HOSTS}/{name}"))
}

/// The id a finding answers to: a `for_each` item's alias (the id each
/// directory's rule had before storage.yaml became one rule per concern),
/// else the rule id.
fn id(f: &Finding) -> String {
    f.alias.clone().unwrap_or_else(|| f.rule.clone())
}

fn statuses(findings: &[Finding]) -> BTreeMap<String, Status> {
    findings
        .iter()
        .filter(|f| f.rule.starts_with("storage."))
        .map(|f| (id(f), f.status))
        .collect()
}

fn finding<'a>(findings: &'a [Finding], rule: &str) -> &'a Finding {
    findings
        .iter()
        .find(|f| id(f) == rule)
        .unwrap_or_else(|| panic!("no finding for {rule}"))
}

fn assert_names(text: &str, parts: &[&str]) {
    for p in parts {
        assert!(text.contains(p), "missing `{p}` in: {text}");
    }
}

const MYSQL_RULES: [&str; 6] = [
    "storage.dir-index-mysql",
    "storage.mysql-on-rotational",
    "storage.mysql-shares-volume",
    "storage.noatime-mysql",
    "storage.noatime-mysql-fstab",
    "storage.reserved-blocks-mysql",
];

#[test]
fn before_the_ssd_move_fails_spindles_sharing_and_atime() {
    let f = audit_named("zimbra-storage-before");
    let mut want: BTreeMap<String, Status> = [
        ("storage.db-on-rotational", Status::Fail),
        ("storage.index-on-rotational", Status::Fail),
        ("storage.db-shares-volume", Status::Fail),
        ("storage.index-shares-volume", Status::Fail),
        ("storage.noatime-zimbra-db", Status::Fail),
        ("storage.noatime-zimbra-db-fstab", Status::Fail),
        ("storage.noatime-zimbra-index", Status::Fail),
        ("storage.noatime-zimbra-index-fstab", Status::Fail),
        // the installer's ext4 on / has dir_index and -i 16384
        ("storage.dir-index-zimbra-db", Status::Pass),
        ("storage.dir-index-zimbra-index", Status::Pass),
        ("storage.index-inode-density", Status::Pass),
        ("storage.fstab-live-drift", Status::Pass),
        // every line that mounts at boot is mounted
        ("storage.fstab-not-mounted", Status::Pass),
        // the root filesystem keeps its reserve: only dedicated volumes are judged
        ("storage.reserved-blocks-zimbra-db", Status::Skip),
        ("storage.reserved-blocks-zimbra-index", Status::Skip),
    ]
    .iter()
    .map(|(r, s)| (r.to_string(), *s))
    .collect();
    want.extend(MYSQL_RULES.iter().map(|r| (r.to_string(), Status::Skip)));
    assert_eq!(statuses(&f), want);

    let rot = finding(&f, "storage.db-on-rotational");
    assert_eq!(rot.severity, driftaudit::unstable::policy::Severity::Medium);
    assert_names(
        &rot.explanation,
        &[
            "/opt/zimbra/db lives on /dev/md0 (mounted at /)",
            "40 s",
            "6 s",
        ],
    );
    let atime = finding(&f, "storage.noatime-zimbra-db");
    assert_names(
        &atime.explanation,
        &[
            "/opt/zimbra/db lives on the volume mounted at / (/dev/md0, ext4)",
            "rw,relatime,seclabel,stripe=256,data=ordered",
            "relatime, the kernel default, is better than strictatime but still writes",
        ],
    );
    assert_eq!(
        atime.evidence[0].to_string(),
        "/proc/self/mountinfo:15",
        "the live mount is the evidence"
    );
    let fstab = finding(&f, "storage.noatime-zimbra-db-fstab");
    assert_names(
        &fstab.explanation,
        &[
            "UUID=fc453bd3-c927-4f12-a2d3-59df1278d6d0 (ext4)",
            "rw,suid,dev,exec,auto,nouser,async",
            "Mounted now: ON",
        ],
    );
    assert_eq!(fstab.evidence[0].to_string(), "/etc/fstab:9");
    let share = finding(&f, "storage.db-shares-volume");
    assert_names(
        &share.explanation,
        &["/opt/zimbra/store is on /dev/md0 (mounted at /)"],
    );
}

#[test]
fn after_the_ssd_move_passes_every_storage_rule() {
    let f = audit_named("zimbra-storage-after");
    let got = statuses(&f);
    for (rule, status) in &got {
        let want = if MYSQL_RULES.contains(&rule.as_str()) {
            Status::Skip
        } else {
            Status::Pass
        };
        assert_eq!(*status, want, "{rule}: {:?}", finding(&f, rule));
    }
    assert_eq!(got.len(), 21, "{got:?}");
    // the numbers the pass rests on come from the mkfs.ext4 capture
    let density = finding(&f, "storage.index-inode-density");
    // a pass names the fields the rule read; the whole record (the device
    // and its features) stays in actual_whole
    assert_names(
        &density.explanation,
        &["bytes_per_inode: 10240", "mount: /opt/zimbra/index"],
    );
    assert_names(
        density.actual_whole.as_deref().unwrap_or(""),
        &["device: /dev/md1", "dir_index"],
    );
    let reserved = finding(&f, "storage.reserved-blocks-zimbra-db");
    assert_names(&reserved.explanation, &["reserved_pct: 2"]);
    let rot = finding(&f, "storage.db-on-rotational");
    assert_names(
        &rot.explanation,
        &["rotational: OFF", "mount: /opt/zimbra/db"],
    );
    assert_names(
        rot.actual_whole.as_deref().unwrap_or(""),
        &["source: /dev/md1", "disks: sde, sdf", "virtual_disk: OFF"],
    );
}

#[test]
fn tightened_params_make_the_after_volume_fail_with_its_own_numbers() {
    // -m 2 and -i 10240 against stricter limits: the explanation must carry
    // the device, the mount point and the capture's numbers
    let mut p = storage_policies();
    p.set_param("storage.max_reserved_pct=1").unwrap();
    p.set_param("storage.max_index_bytes_per_inode=8192")
        .unwrap();
    let h = audit::host(format!("{HOSTS}/zimbra-storage-after"));
    let f = engine::audit_host(&p, &h).findings;
    let reserved = finding(&f, "storage.reserved-blocks-zimbra-db");
    assert_eq!(reserved.status, Status::Fail);
    assert_names(
        &reserved.explanation,
        &[
            "/dev/md1 (mounted at /opt/zimbra/db, holding /opt/zimbra/db)",
            "reserves 2 % of its blocks",
            "2343598 blocks of 4096 bytes",
            "more than 1 %",
        ],
    );
    assert_eq!(reserved.fix, "`tune2fs -m 1 /dev/md1` (online, no unmount), or keep the reserve and raise max_reserved_pct if this site wants the headroom.");
    let density = finding(&f, "storage.index-inode-density");
    assert_eq!(density.status, Status::Fail);
    assert_names(
        &density.explanation,
        &[
            "/opt/zimbra/index lives on /dev/md1 (mounted at /opt/zimbra/index)",
            "one inode per 10240 bytes",
            "46873008 inodes for 117179904 blocks of 4096 bytes",
        ],
    );
}

#[test]
fn fstab_edited_but_not_remounted_fails_drift_naming_both_option_sets() {
    let f = audit_named("fstab-edited-not-remounted");
    let drift = crate::common::of_rule(&f, "storage.fstab-live-drift");
    assert_eq!(drift.len(), 1, "only /var/lib/mysql drifts: {drift:?}");
    let d = drift[0];
    assert_eq!(d.status, Status::Fail);
    assert_eq!(d.severity, driftaudit::unstable::policy::Severity::Medium);
    assert_eq!(d.subject, ["/var/lib/mysql"]);
    assert_eq!(d.expected.as_deref(), Some("rw,noatime"));
    assert_eq!(d.actual.as_deref(), Some("rw,relatime"));
    assert_names(
        &d.explanation,
        &[
            "/var/lib/mysql is mounted with rw,relatime",
            "but the fstab line /etc/fstab:14 asks for rw,noatime",
            "Configured but not in effect: noatime; in effect instead: relatime",
        ],
    );
    assert_names(&d.fix, &["mount -o remount /var/lib/mysql"]);
    let ev: Vec<String> = d.evidence.iter().map(|e| e.to_string()).collect();
    assert_eq!(ev, ["/etc/fstab:14", "/proc/self/mountinfo:21"]);

    // the file is right, the live mount is not: one passes, the other fails
    let got = statuses(&f);
    assert_eq!(got["storage.noatime-mysql-fstab"], Status::Pass);
    assert_eq!(got["storage.noatime-mysql"], Status::Fail);
    assert_names(
        &finding(&f, "storage.noatime-mysql").explanation,
        &[
            "The data directory /var/lib/mysql lives on the volume mounted at /var/lib/mysql (/dev/mapper/vg_data-lv_mysql, ext4)",
            "mounted now with rw,relatime",
        ],
    );
    // -m 5 on a data-only volume is reported (info)
    assert_eq!(got["storage.reserved-blocks-mysql"], Status::Fail);
    assert_eq!(
        finding(&f, "storage.reserved-blocks-mysql").severity,
        driftaudit::unstable::policy::Severity::Info
    );
    assert_eq!(got["storage.mysql-on-rotational"], Status::Pass);
    assert_eq!(got["storage.mysql-shares-volume"], Status::Pass);
    assert_eq!(got["storage.dir-index-mysql"], Status::Pass);
}

#[test]
fn an_unmounted_fstab_entry_is_judged_on_its_options_and_says_so() {
    // The database volume is listed (noauto, relatime) but not mounted: the
    // live rule judges / (where the data now goes), the fstab rule the line.
    let dir = audit::snapshot(&[
        ("/opt/zimbra/db/data/.keep", ""),
        (
            "/etc/fstab",
            "/dev/sda1 / ext4 defaults,noatime 0 1\n/dev/sdb1 /opt/zimbra/db ext4 defaults,noauto 0 2\n",
        ),
        (
            "/proc/self/mountinfo",
            "20 1 8:1 / / rw,noatime - ext4 /dev/sda1 rw\n",
        ),
    ]);
    let h = audit::host(dir.path());
    let f = audit::report_of(&storage_policies(), &h).findings;
    let fstab = finding(&f, "storage.noatime-zimbra-db-fstab");
    assert_eq!(fstab.status, Status::Fail);
    assert_names(
        &fstab.explanation,
        &["/dev/sdb1 (ext4)", "(relatime)", "Mounted now: OFF"],
    );
    assert_eq!(fstab.evidence[0].to_string(), "/etc/fstab:2");
    let live = finding(&f, "storage.noatime-zimbra-db");
    assert_eq!(
        live.status,
        Status::Pass,
        "/opt/zimbra/db lives on / (noatime) while its volume is not mounted"
    );
    assert_names(&live.explanation, &["atime: noatime, mount: /"]);
    // the unmounted line is not drift: nothing is mounted there to compare
    assert_eq!(finding(&f, "storage.fstab-live-drift").status, Status::Pass);
}

#[test]
fn a_data_directory_below_a_mount_point_is_judged_on_that_mount() {
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", "[mysqld]\ndatadir = /srv/db/mysql/\n"),
        ("/srv/db/mysql/ibdata1", ""),
        (
            "/etc/fstab",
            "/dev/sda1 / ext4 defaults 0 1\n/dev/sdb1 /srv/db ext4 defaults 0 2\n",
        ),
        (
            "/proc/self/mountinfo",
            "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n31 20 8:17 / /srv/db rw,relatime - ext4 /dev/sdb1 rw\n",
        ),
        ("/sys/block/sdb/queue/rotational", "1\n"),
        ("/sys/block/sdb/sdb1/partition", "1\n"),
    ]);
    let h = audit::host(dir.path());
    let f = audit::report_of(&storage_policies(), &h).findings;
    let live = finding(&f, "storage.noatime-mysql");
    assert_eq!(live.status, Status::Fail);
    assert_names(
        &live.explanation,
        &["/srv/db/mysql lives on the volume mounted at /srv/db (/dev/sdb1, ext4)"],
    );
    let rot = finding(&f, "storage.mysql-on-rotational");
    assert_eq!(rot.status, Status::Fail);
    assert_names(&rot.explanation, &["on /dev/sdb1 (mounted at /srv/db)"]);
    assert_eq!(
        finding(&f, "storage.mysql-shares-volume").status,
        Status::Pass
    );
    // no capture for sdb1: the ext4 rules cannot tell, and say why
    let dir = finding(&f, "storage.dir-index-mysql");
    assert_eq!(dir.status, Status::Unknown);
    assert_names(&dir.explanation, &["/dev/sdb1", "tune2fs/sdb1.txt"]);
}

#[test]
fn hosts_without_mount_data_are_unknown_not_passed() {
    // A Zimbra snapshot without fstab, mount table, sys/block or tune2fs captures.
    let dir = audit::snapshot(&[
        ("opt/zimbra/conf/localconfig.xml", "<localconfig/>\n"),
        ("opt/zimbra/db/data/.keep", ""),
        ("opt/zimbra/index/.keep", ""),
        ("etc/hostname", "mail\n"),
    ]);
    let host = audit::host(dir.path());
    let f = audit::report_of(&storage_policies(), &host).findings;
    let got = statuses(&f);
    assert_eq!(got["storage.noatime-zimbra-db"], Status::Unknown);
    assert_eq!(got["storage.db-on-rotational"], Status::Unknown);
    // no mount table and no fstab: the layout is unknown too, not absent
    assert_eq!(got["storage.dir-index-zimbra-db"], Status::Unknown);
    // nothing configured in an fstab cannot drift
    assert_eq!(got["storage.fstab-live-drift"], Status::Skip);
    assert!(
        got.values()
            .all(|s| *s != Status::Pass && *s != Status::Fail),
        "{got:?}"
    );
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else if e.file_type().unwrap().is_file() {
            fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// A `bind` line without atime options: the bind mount has its source's
/// noatime (the kernel copies the per-mount flags), so neither the fstab
/// atime rule nor the drift rule may expect relatime.
#[test]
fn bind_mount_inherits_noatime_from_its_source() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        std::path::Path::new(&format!("{HOSTS}/zimbra-storage-after")),
        dir.path(),
    );
    let fstab = dir.path().join("etc/fstab");
    let text = fs::read_to_string(&fstab).unwrap();
    let changed = text.replace("bind,noatime", "bind");
    assert_ne!(text, changed);
    fs::write(&fstab, changed).unwrap();
    let f = audit::report_of(&storage_policies(), &audit::host(dir.path())).findings;
    let s = statuses(&f);
    assert_eq!(
        s["storage.noatime-zimbra-index-fstab"],
        Status::Pass,
        "{f:#?}"
    );
    assert_eq!(s["storage.fstab-live-drift"], Status::Pass, "{f:#?}");
}

/// Two lines for one mount point: the first is the one systemd and mount(8)
/// use, so a later `noatime` line does not hide a first line without it.
#[test]
fn first_of_two_fstab_lines_for_a_mount_point_is_judged() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(
        std::path::Path::new(&format!("{HOSTS}/zimbra-storage-after")),
        dir.path(),
    );
    let fstab = dir.path().join("etc/fstab");
    let text = fs::read_to_string(&fstab).unwrap();
    let changed = text.replace(
        "/dev/md1                                  /opt/zimbra/db          ext4    defaults,noatime 0 2",
        "/dev/md1 /opt/zimbra/db ext4 defaults 0 2\n/dev/md1 /opt/zimbra/db ext4 defaults,noatime 0 2",
    );
    assert_ne!(text, changed);
    fs::write(&fstab, changed).unwrap();
    let f = audit::report_of(&storage_policies(), &audit::host(dir.path())).findings;
    let db = finding(&f, "storage.noatime-zimbra-db-fstab");
    assert_eq!(db.status, Status::Fail, "{db:#?}");
    assert_names(&db.explanation, &["relatime"]);
    let drift = finding(&f, "storage.fstab-live-drift");
    assert_eq!(drift.status, Status::Fail);
    assert_names(&drift.explanation, &["use the first", "/opt/zimbra/db"]);
}

/// An option the model does not know is compared as written and the finding
/// says so; the kernel's own spellings (tmpfs size, hidepid) are no drift.
#[test]
fn unknown_option_is_compared_as_text_and_the_finding_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "etc/fstab",
            "tmpfs /tmp tmpfs defaults,size=2G,mode=1777 0 0\n\
             proc /proc proc defaults,hidepid=2 0 0\n\
             /dev/sdb1 /data xfs defaults,frobnicate=3,logbsize=256k 0 0\n",
        ),
        (
            "proc/self/mountinfo",
            "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
             21 20 0:30 / /tmp rw,relatime - tmpfs tmpfs rw,size=2097152k\n\
             22 20 0:5 / /proc rw,relatime - proc proc rw,hidepid=2\n\
             23 20 8:17 / /data rw,relatime - xfs /dev/sdb1 rw,attr2,inode64,logbufs=8,logbsize=256k,noquota\n",
        ),
    ];
    for (p, c) in files {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, c).unwrap();
    }
    let f = audit::report_of(&storage_policies(), &audit::host(dir.path())).findings;
    let drift = crate::common::of_rule(&f, "storage.fstab-live-drift");
    assert_eq!(drift.len(), 1, "{drift:#?}");
    assert_eq!(drift[0].status, Status::Fail);
    assert_eq!(drift[0].subject, ["/data"]);
    assert_names(
        &drift[0].explanation,
        &[
            "frobnicate=3",
            "not in driftaudit's model",
            "compared as written",
        ],
    );
}
