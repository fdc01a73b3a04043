//! Snapshots that no driftaudit command wrote: an empty or unrelated
//! directory, a hand-made partial `proc/sys` tree, and an extracted
//! sosreport of a CentOS 7 MariaDB host laid out exactly as sos writes it.
//! Each asserts the verdicts an experienced admin would give.

use std::fs;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::cli::{self, run};
use crate::common::tree::write_files as write;

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
            !driftaudit::unstable::fleet::is_snapshot_dir(&dir),
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
    assert!(driftaudit::unstable::fleet::is_snapshot_dir(d.path()));
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = run(args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("invalid JSON ({e}): {err}"))
}

fn finding<'a>(r: &'a serde_json::Value, rule: &str) -> &'a serde_json::Value {
    let all: Vec<&serde_json::Value> = r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        // a `for_each` item answers to its alias (storage.yaml's ids of before)
        .filter(|f| f["rule"] == rule || f["alias"] == rule)
        .collect();
    assert_eq!(all.len(), 1, "{rule}: {all:#?}");
    all[0]
}

const SOS: &str = "testdata/hosts/sos-centos7-mariadb";

#[test]
fn sosreport_layout_is_the_one_sos_plugins_write() {
    // File names as sos's _mangle_command makes them from the commands its
    // kernel, host, filesys and mysql plugins run (sos/report/plugins/*.py).
    let root = cli::repo_root().join(SOS);
    for (plugin, command) in [
        ("kernel", "sysctl -a"),
        ("kernel", "uname -a"),
        ("host", "hostname"),
        ("filesys", "dumpe2fs -h /dev/mapper/vg_data-lv_mysql"),
        ("mysql", "du -s /var/lib/mysql/*"),
    ] {
        let p = root
            .join("sos_commands")
            .join(plugin)
            .join(driftaudit::unstable::host::layout::sos_mangle(command));
        assert!(p.is_file(), "{} (from `{command}`)", p.display());
    }
    assert_eq!(
        driftaudit::unstable::host::layout::detect(&root),
        Some(driftaudit::unstable::host::Layout::Sosreport)
    );
    // sos keeps /proc/mounts and /proc/self as the links they are
    assert!(fs::symlink_metadata(root.join("proc/mounts"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn sosreport_of_a_centos7_mariadb_host_gets_an_admins_verdicts() {
    let host = driftaudit::Host::snapshot(cli::repo_root().join(SOS)).unwrap();
    assert_eq!(
        host.name(),
        "db01.example.com",
        "from sos_commands/host/hostname"
    );
    let policies = audit::builtin();
    let facts = driftaudit::unstable::engine::gather(&policies, &host);
    assert_eq!(
        facts.facts["kernel_release"],
        Ok(driftaudit::unstable::value::Value::Str(
            "3.10.0-1160.88.1.el7.x86_64".into()
        )),
        "from kernel.osrelease in sos_commands/kernel/sysctl_-a"
    );
    assert_eq!(
        facts.facts["os_id"],
        Ok(driftaudit::unstable::value::Value::Str("centos".into()))
    );

    let r = json(&["check", "--snapshot", SOS, "--format", "json"]);
    assert_eq!(r["hosts"][0]["host"], "db01.example.com");
    let status = |rule: &str| finding(&r, rule)["status"].as_str().unwrap().to_string();

    // tcp_tw_recycle=1 on a 3.10 kernel: the NAT story, set in /etc/sysctl.conf
    // and read live from sos's sysctl -a listing.
    let f = finding(&r, "linux.tcp-tw-recycle");
    assert_eq!(f["status"], "fail");
    let ev = cli::evidence(f);
    assert!(
        ev.iter().any(|e| e.starts_with("/etc/sysctl.conf:12")),
        "{ev:?}"
    );
    assert!(
        ev.iter()
            .any(|e| e.starts_with("/sos_commands/kernel/sysctl_-a:")),
        "{ev:?}"
    );
    // The kernel still has the key: the stale-line rule for >= 4.12 does not apply.
    assert_eq!(status("linux.tcp-tw-recycle-stale-line"), "skip");
    // somaxconn edited in sysctl.conf but never applied
    let f = finding(&r, "sysctl.persisted-drift");
    assert_eq!(f["status"], "fail");
    assert_eq!(f["subject"][0], "net.core.somaxconn");
    assert_eq!(f["actual"], "128");
    // CentOS 7 kernel defaults an admin hardens
    assert_eq!(status("linux.accept-redirects"), "fail");
    assert_eq!(status("linux.send-redirects"), "fail");
    for ok in [
        "linux.aslr",
        "linux.tcp-syncookies",
        "linux.accept-source-route",
        "linux.tcp-tw-reuse-needs-timestamps",
    ] {
        assert_eq!(status(ok), "pass", "{ok}");
    }
    // rp_filter per interface: eth0 and `default` pass, `all` and `lo` are no
    // interfaces to judge
    let rp: Vec<(String, String)> = r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "linux.rp-filter")
        .map(|f| {
            (
                f["subject"][0].as_str().unwrap().to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut rp = rp;
    rp.sort();
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        rp,
        [
            s("all", "skip"),
            s("default", "pass"),
            s("eth0", "pass"),
            s("lo", "skip")
        ]
    );

    // 1 GiB pool for 9 GiB of data on a 15.5 GiB machine; the data size is
    // the sum of sos's `du -s /var/lib/mysql/*` lines, in KiB.
    let f = finding(&r, "mysql.pool-too-small-for-data");
    assert_eq!(f["status"], "fail");
    let ev = cli::evidence(f);
    assert!(ev.contains(&"/etc/my.cnf:10".to_string()), "{ev:?}");
    assert!(
        ev.contains(&"/sos_commands/mysql/du_-s_.var.lib.mysql".to_string()),
        "{ev:?}"
    );
    let kib: u64 = 8 + 4 + 532480 + 5120 + 5120 + 1104 + 212 + 8912896 + 4;
    assert_eq!(facts.dir_sizes["/var/lib/mysql"], Ok(kib * 1024));
    assert_eq!(status("mysql.pool-too-large-for-ram"), "pass");
    // sos does not capture the running server's variables
    assert_eq!(status("mysql.config-runtime-drift"), "unknown");

    // The data volume: ext4 on LVM on an SSD, relatime, dir_index, 5 % reserved.
    assert_eq!(status("storage.noatime-mysql"), "fail");
    assert_eq!(status("storage.noatime-mysql-fstab"), "fail");
    assert_eq!(status("storage.fstab-live-drift"), "pass");
    assert_eq!(status("storage.mysql-shares-volume"), "pass");
    assert_eq!(
        status("storage.mysql-on-rotational"),
        "pass",
        "dm-2 via /proc/partitions"
    );
    let f = finding(&r, "storage.dir-index-mysql");
    assert_eq!(f["status"], "pass");
    assert!(cli::evidence(f)
        .iter()
        .any(|e| e.starts_with("/sos_commands/filesys/dumpe2fs_-h_.dev.mapper.vg_data-lv_mysql")));
    assert_eq!(status("storage.reserved-blocks-mysql"), "fail");
    // No Zimbra here.
    assert_eq!(status("zimbra.heap-sized-for-ram"), "skip");

    // sysctl's own stderr lines in sos's file are notes, not host defects.
    for f in r["hosts"][0]["findings"].as_array().unwrap() {
        if f["rule"] == "driftaudit.input" {
            assert_ne!(f["status"], "fail", "{f:#}");
        }
    }
}

#[test]
fn sosreport_masked_passwords_are_redacted_not_values() {
    // sos's mysql postproc rewrites `password=...` to `password=*********`.
    for format in ["json", "text", "markdown", "sarif", "junit"] {
        let (_, out, err) = run(&["check", "--snapshot", SOS, "--format", format, "--verbose"]);
        assert!(!out.contains("*********"), "{format}: {out}");
        assert!(!err.contains("*********"), "{format}: {err}");
    }
    let host = driftaudit::Host::snapshot(cli::repo_root().join(SOS)).unwrap();
    let facts = driftaudit::unstable::engine::gather(&audit::builtin(), &host);
    let text = serde_json::to_string(&facts.namespaces).unwrap();
    assert!(!text.contains("*********"));
}

#[test]
fn sosreport_is_found_by_fleet_and_diffs_clean_against_itself() {
    let hosts = cli::repo_root().join("testdata/hosts");
    let found: Vec<_> = driftaudit::unstable::fleet::discover(&hosts, 2)
        .filter_map(Result::ok)
        .collect();
    assert!(
        found.iter().any(|p| p.ends_with("sos-centos7-mariadb")),
        "{found:?}"
    );
    // nothing inside the sosreport is taken for another host
    assert!(!found
        .iter()
        .any(|p| p.starts_with(hosts.join("sos-centos7-mariadb/"))
            && !p.ends_with("sos-centos7-mariadb")));
    let (code, out, err) = run(&["diff", SOS, SOS]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_partial_proc_sys_tree_says_unknown_not_absent() {
    // Hand-made: the author copied the few keys they cared about.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("proc/sys/kernel/osrelease", "5.14.0-362.8.1.el9_3.x86_64\n"),
            ("proc/sys/net/ipv4/tcp_syncookies", "1\n"),
            (
                "etc/sysctl.d/90-net.conf",
                "net.ipv4.conf.all.accept_redirects = 0\n",
            ),
        ],
    );
    let dir = d.path().to_str().unwrap();
    let r = json(&["check", "--snapshot", dir, "--format", "json"]);
    assert_eq!(finding(&r, "linux.tcp-syncookies")["status"], "pass");
    // kernel.randomize_va_space is not in the tree: that proves nothing
    let f = finding(&r, "linux.aslr");
    assert_eq!(f["status"], "unknown", "{f:#}");
    let why = f["explanation"].as_str().unwrap();
    says(why, "not in the snapshot");
    says(why, "sysctl -a");
    assert_eq!(finding(&r, "linux.accept-redirects")["status"], "unknown");
    // the configured key is compared with a running value we do not have
    let drift: Vec<&serde_json::Value> = r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "sysctl.persisted-drift")
        .collect();
    assert!(
        drift
            .iter()
            .any(|f| f["status"] == "unknown"
                && f["subject"][0] == "net.ipv4.conf.all.accept_redirects"),
        "{drift:#?}"
    );
    assert!(drift.iter().all(|f| f["status"] != "fail"), "{drift:#?}");

    // The same tree declared complete in snapshot.json: now absence means
    // the kernel has no such key (the rule does not apply).
    write(
        d.path(),
        &[("snapshot.json", r#"{"host": "h", "complete": ["sysctl"]}"#)],
    );
    let r = json(&["check", "--snapshot", dir, "--format", "json"]);
    let f = finding(&r, "linux.aslr");
    assert_eq!(f["status"], "skip", "{f:#}");
    assert!(f["explanation"].as_str().unwrap().contains("no such key"));

    // A sysctl -a listing is complete by nature; keys sysctl could not read
    // (its stderr lines, as sos keeps them) are unknown, never absent.
    fs::remove_file(d.path().join("snapshot.json")).unwrap();
    write(
        d.path(),
        &[(
            "captures/sysctl-a.txt",
            "kernel.osrelease = 5.14.0-362.8.1.el9_3.x86_64\nnet.ipv4.tcp_syncookies = 1\nsysctl: reading key \"kernel.randomize_va_space\"\n",
        )],
    );
    let r = json(&["check", "--snapshot", dir, "--format", "json"]);
    let f = finding(&r, "linux.aslr");
    assert_eq!(f["status"], "unknown", "{f:#}");
    assert!(f["explanation"]
        .as_str()
        .unwrap()
        .contains("could not read"));
    let f = finding(&r, "linux.accept-redirects");
    assert_eq!(f["status"], "skip", "absent from a complete listing: {f:#}");
}

#[test]
fn a_snapshot_lists_what_it_captured_completely() {
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("snap");
    let (code, _, err) = run(&["snapshot", "--out", dest.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dest.join("snapshot.json")).unwrap()).unwrap();
    assert_eq!(meta["complete"], serde_json::json!(["sysctl"]));
}

#[test]
fn provenance_names_the_real_file_and_the_link_it_was_read_through_in_every_format() {
    // Debian: /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf; a stale line 2.
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n"),
            (
                "etc/sysctl.conf",
                "# local tuning\nnet.ipv4.tcp_tw_recycle = 1\n",
            ),
            (
                "captures/sysctl-a.txt",
                "kernel.osrelease = 4.9.0-19-amd64\nnet.ipv4.tcp_tw_recycle = 1\nnet.ipv4.tcp_timestamps = 1\n",
            ),
        ],
    );
    fs::create_dir_all(d.path().join("etc/sysctl.d")).unwrap();
    std::os::unix::fs::symlink(
        "../sysctl.conf",
        d.path().join("etc/sysctl.d/99-sysctl.conf"),
    )
    .unwrap();
    let dir = d.path().to_str().unwrap();
    let want = "/etc/sysctl.conf:2 (via /etc/sysctl.d/99-sysctl.conf)";

    let r = json(&[
        "check",
        "--snapshot",
        dir,
        "--format",
        "json",
        "--only",
        "linux.tcp-tw-recycle",
    ]);
    let f = finding(&r, "linux.tcp-tw-recycle");
    assert_eq!(f["status"], "fail");
    assert_eq!(
        f["evidence"][0],
        serde_json::json!({"path": "/etc/sysctl.conf", "line": 2, "via": "/etc/sysctl.d/99-sysctl.conf"})
    );
    for format in ["text", "markdown", "junit"] {
        let (_, out, err) = run(&[
            "check",
            "--snapshot",
            dir,
            "--format",
            format,
            "--verbose",
            "--only",
            "linux.tcp-tw-recycle",
        ]);
        assert!(out.contains(want), "{format}: {out}{err}");
    }
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        dir,
        "--format",
        "sarif",
        "--only",
        "linux.tcp-tw-recycle",
    ]);
    let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
    let loc = &sarif["runs"][0]["results"][0]["locations"][0];
    assert!(
        loc["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("etc/sysctl.conf"),
        "{loc:#}"
    );
    assert_eq!(loc["physicalLocation"]["region"]["startLine"], 2);
    assert_eq!(
        loc["message"]["text"],
        "read via /etc/sysctl.d/99-sysctl.conf"
    );
}

#[test]
fn foreign_snapshots_never_print_no_failures_while_a_domain_went_unevaluated() {
    // the partial proc/sys host: nothing fails, but sysctl rules are unknown
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        &[
            ("proc/sys/kernel/osrelease", "5.14.0-362.8.1.el9_3.x86_64\n"),
            ("proc/sys/net/ipv4/tcp_syncookies", "1\n"),
        ],
    );
    let (_, text, err) = run(&["check", "--snapshot", d.path().to_str().unwrap()]);
    assert!(
        !text.lines().any(|l| l.trim() == "no failures"),
        "{text}{err}"
    );
    let cov = text
        .split("coverage:")
        .nth(1)
        .unwrap_or_else(|| panic!("no coverage: {text}"));
    let sysctl = cov
        .lines()
        .find(|l| l.trim_start().starts_with("sysctl:"))
        .unwrap();
    assert!(!sysctl.contains(" 0 unknown"), "{sysctl}");

    // the sosreport: every domain is accounted for
    let (_, text, _) = run(&["check", "--snapshot", SOS]);
    assert!(!text.lines().any(|l| l.trim() == "no failures"));
    let cov = text.split("coverage:").nth(1).expect("coverage section");
    for domain in [
        "sysctl: detected",
        "MySQL: detected",
        "storage: detected",
        "Zimbra: not detected",
    ] {
        says(cov, domain);
    }
}

/// Issue 30: `check --snapshot /etc` (a user who meant `/`) was accepted
/// and exited 0 with 10 unknowns. A snapshot in which no domain is detected
/// is an input error naming what was looked for and where the root is.
#[test]
fn a_snapshot_in_which_no_domain_is_detected_exits_2_and_names_its_root() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            ("etc/hostname", "web1\n"),
            // /etc/opt exists on most hosts: it made `/etc` look like a root
            ("etc/opt/README", "site software\n"),
            ("etc/fstab", "/dev/vda1 / ext4 defaults 0 1\n"),
        ],
    );
    let etc = dir.path().join("etc");
    let (code, out, err) = run(&["check", "--snapshot", etc.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("no domain detected"), "{err}");
    assert!(err.contains("sysctl (no /proc/sys"), "{err}");
    says(&err, &format!("its root is `{}`", dir.path().display()));
    // its root is a snapshot (storage is detected from the fstab); what it
    // cannot read says to capture it, not to run as root
    let (code, out, err) = run(&["check", "--snapshot", dir.path().to_str().unwrap()]);
    assert_ne!(code, 2, "{out}{err}");
    assert!(out.contains("Capture the data into the snapshot"), "{out}");
    assert!(!out.contains("run as root"), "{out}");
}
