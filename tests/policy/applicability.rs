//! Applicability from facts, not from one file's existence (issue 11): a
//! product is present when any of its evidence is, a path a rule is about is
//! known from mount tables, fstab, du captures and option files as well as
//! from the directory itself, and a rule whose product is present but whose
//! input is missing is `unknown`, naming what would decide it, never `skip`.
//! The hosts are snapshots no driftaudit command wrote: no snapshot.json, no
//! empty directories (git keeps none).

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::audit;
use crate::common::cli::says;
use driftaudit::unstable::engine;
use driftaudit::unstable::render::{self, Format, RenderOptions};
use driftaudit::unstable::report::{Finding, HostReport, Status};

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");

/// The id a finding answers to: a `for_each` item's alias (storage.yaml's
/// ids from before it was one rule per concern), else the rule id.
fn id(f: &Finding) -> String {
    f.alias.clone().unwrap_or_else(|| f.rule.clone())
}

fn statuses(r: &HostReport, prefix: &str) -> BTreeMap<String, Status> {
    r.findings
        .iter()
        .filter(|f| f.rule.starts_with(prefix))
        .map(|f| (id(f), f.status))
        .collect()
}

fn finding<'a>(r: &'a HostReport, rule: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| id(f) == rule)
        .unwrap_or_else(|| panic!("no finding of {rule}"))
}

fn expect(r: &HostReport, prefix: &str, want: &[(&str, Status)]) {
    let want: BTreeMap<String, Status> = want.iter().map(|(r, s)| (r.to_string(), *s)).collect();
    assert_eq!(statuses(r, prefix), want, "{prefix}");
}

#[test]
fn zmlocalconfig_only_zimbra_host_gets_the_story_verdicts() {
    // zimbra-khimki-asfound with captures/zmlocalconfig.txt instead of
    // localconfig.xml and no opt/zimbra/db directory: on main this passed as
    // clean (every Zimbra rule gated on localconfig.xml existing).
    let dir = Path::new(HOSTS).join("zimbra-zmlocalconfig-only");
    assert!(!dir.join("opt/zimbra/conf/localconfig.xml").exists());
    assert!(!dir.join("opt/zimbra/db").exists());
    assert!(dir.join("captures/zmlocalconfig.txt").exists());
    let r = audit::report(&audit::builtin(), &dir);
    expect(
        &r,
        "zimbra.",
        &[
            ("zimbra.buffer-pool-cap", Status::Pass),
            ("zimbra.buffer-pool-fits-db", Status::Fail),
            ("zimbra.heap-sized-for-ram", Status::Fail),
            ("zimbra.memory-budget", Status::Pass),
            ("zimbra.mycnf-generated-drift", Status::Fail),
        ],
    );
    let heap = finding(&r, "zimbra.heap-sized-for-ram");
    assert_eq!(heap.evidence[0].path, "/captures/zmlocalconfig.txt");
    assert_eq!(heap.evidence[0].line, Some(22));
    assert!(heap.explanation.contains("2458 MB"), "{}", heap.explanation);

    // /opt/zimbra/db is known from my.cnf's datadir and the du line: the
    // database rules judge the root RAID10 it sits on, as on the as-found host.
    let db = [
        ("storage.db-on-rotational", Status::Fail),
        ("storage.db-shares-volume", Status::Fail),
        ("storage.dir-index-zimbra-db", Status::Pass),
        ("storage.noatime-zimbra-db", Status::Fail),
        ("storage.noatime-zimbra-db-fstab", Status::Fail),
        // on the root filesystem the 5 % reserve is the system's safety margin
        ("storage.reserved-blocks-zimbra-db", Status::Skip),
    ];
    for (rule, status) in db {
        assert_eq!(finding(&r, rule).status, status, "{rule}");
    }
    // Nothing in the snapshot shows /opt/zimbra/index: unknown, with the capture
    // that would decide it; never a skip that reads as "does not exist".
    for rule in [
        "storage.dir-index-zimbra-index",
        "storage.index-inode-density",
        "storage.index-on-rotational",
        "storage.index-shares-volume",
        "storage.noatime-zimbra-index",
        "storage.noatime-zimbra-index-fstab",
        "storage.reserved-blocks-zimbra-index",
    ] {
        let f = finding(&r, rule);
        assert_eq!(f.status, Status::Unknown, "{rule}: {}", f.explanation);
        assert!(
            f.explanation
                .contains("/opt/zimbra/index is not in the snapshot")
                && f.explanation.contains("du -sb /opt/zimbra/index"),
            "{rule}: {}",
            f.explanation
        );
    }
    // MySQL is not on this host: its rules do not apply, and say why.
    let pool = finding(&r, "mysql.pool-too-large-for-ram");
    assert_eq!(pool.status, Status::Skip);
    says(&pool.explanation, "MySQL is installed; not detected");
}

#[test]
fn zmlocalconfig_capture_secrets_never_appear() {
    let dir = Path::new(HOSTS).join("zimbra-zmlocalconfig-only");
    let capture = std::fs::read_to_string(dir.join("captures/zmlocalconfig.txt")).unwrap();
    assert!(capture.contains("FAKE-SECRET-DO-NOT-PRINT"));
    let policies = audit::builtin();
    let h = audit::host(&dir);
    let report = engine::audit(&policies, &[h]);
    for format in [
        Format::Text,
        Format::Json,
        Format::Markdown,
        Format::Sarif,
        Format::Junit,
    ] {
        let out = render::render(
            &report,
            format,
            RenderOptions {
                color: false,
                verbose: true,
                ..Default::default()
            },
        );
        assert!(!out.contains("FAKE-SECRET"), "{format:?} leaked a secret");
    }
}

#[test]
fn storage_host_without_directories_is_judged_from_fstab_and_mountinfo() {
    // A config-management fetch: fstab, mountinfo, /sys/block and tune2fs
    // captures; /opt/zimbra/db and /opt/zimbra/index are mount points, but no
    // such directories (nor any Zimbra file) are in the snapshot.
    let dir = Path::new(HOSTS).join("zimbra-storage-nodirs");
    assert!(!dir.join("opt").exists());
    let r = audit::report(&audit::builtin(), &dir);
    expect(
        &r,
        "storage.",
        &[
            // database: SSD mirror md1, mkfs -i 10240 -m 2, mounted noatime
            ("storage.db-on-rotational", Status::Pass),
            ("storage.db-shares-volume", Status::Pass),
            ("storage.dir-index-zimbra-db", Status::Pass),
            ("storage.noatime-zimbra-db", Status::Pass),
            ("storage.noatime-zimbra-db-fstab", Status::Pass),
            ("storage.reserved-blocks-zimbra-db", Status::Pass),
            // index: its own volume md2 on two SATA disks, mkfs defaults, relatime
            ("storage.dir-index-zimbra-index", Status::Pass),
            ("storage.index-inode-density", Status::Pass),
            ("storage.index-on-rotational", Status::Fail),
            ("storage.index-shares-volume", Status::Pass),
            ("storage.noatime-zimbra-index", Status::Fail),
            ("storage.noatime-zimbra-index-fstab", Status::Fail),
            ("storage.reserved-blocks-zimbra-index", Status::Fail),
            ("storage.fstab-live-drift", Status::Pass),
            ("storage.fstab-not-mounted", Status::Pass),
            // no MySQL outside Zimbra here
            ("storage.dir-index-mysql", Status::Skip),
            ("storage.mysql-on-rotational", Status::Skip),
            ("storage.mysql-shares-volume", Status::Skip),
            ("storage.noatime-mysql", Status::Skip),
            ("storage.noatime-mysql-fstab", Status::Skip),
            ("storage.reserved-blocks-mysql", Status::Skip),
        ],
    );
    let noatime = finding(&r, "storage.noatime-zimbra-index");
    assert!(
        noatime
            .evidence
            .iter()
            .any(|e| e.path == "/proc/self/mountinfo"),
        "{:?}",
        noatime.evidence
    );
    // Zimbra is present (its mounts), but nothing says how its memory is set:
    // every memory rule is unknown and names the capture that decides it.
    for (rule, capture) in [
        ("zimbra.heap-sized-for-ram", "zmlocalconfig -s"),
        ("zimbra.memory-budget", "zmlocalconfig -s"),
        ("zimbra.mycnf-generated-drift", ""),
        ("zimbra.buffer-pool-fits-db", ""),
        (
            "zimbra.buffer-pool-cap",
            "/opt/zimbra/conf/my.cnf is not in the snapshot",
        ),
    ] {
        let f = finding(&r, rule);
        assert_eq!(f.status, Status::Unknown, "{rule}: {}", f.explanation);
        assert!(f.explanation.contains(capture), "{rule}: {}", f.explanation);
    }
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, c).unwrap();
    }
    dir
}

const MEMINFO: &str = "MemTotal:       24683652 kB\n";

#[test]
fn zimbra_is_present_from_its_my_cnf_alone_and_unknowns_name_localconfig() {
    let d = tree(&[
        ("etc/hostname", "mbox2\n"),
        ("proc/meminfo", MEMINFO),
        (
            "opt/zimbra/conf/my.cnf",
            "[mysqld]\ndatadir = /opt/zimbra/db/data\ninnodb_buffer_pool_size = 2147483648\n",
        ),
    ]);
    let r = audit::report(&audit::builtin(), d.path());
    assert_eq!(
        finding(&r, "zimbra.buffer-pool-cap").status,
        Status::Pass,
        "my.cnf alone decides the cap"
    );
    let heap = finding(&r, "zimbra.heap-sized-for-ram");
    assert_eq!(heap.status, Status::Unknown);
    says(&heap.explanation, "captures/zmlocalconfig.txt");
    // the datadir in my.cnf shows /opt/zimbra/db exists; with no mount table
    // the volume it is on is unknown, not "does not exist"
    let db = finding(&r, "storage.noatime-zimbra-db");
    assert_eq!(db.status, Status::Unknown, "{}", db.explanation);
    says(&db.explanation, "no mount table");
}

#[test]
fn a_du_line_shows_a_zimbra_host_and_its_database() {
    let d = tree(&[
        ("etc/hostname", "mbox3\n"),
        ("proc/meminfo", MEMINFO),
        (
            "proc/self/mountinfo",
            "41 1 9:0 / / rw,relatime shared:1 - ext4 /dev/md0 rw\n",
        ),
        ("captures/du.txt", "10093173555\t/opt/zimbra/db/data\n"),
    ]);
    let r = audit::report(&audit::builtin(), d.path());
    let f = finding(&r, "storage.noatime-zimbra-db");
    assert_eq!(f.status, Status::Fail, "{}", f.explanation);
    assert_eq!(
        finding(&r, "storage.noatime-zimbra-index").status,
        Status::Unknown
    );
    assert_eq!(
        finding(&r, "zimbra.heap-sized-for-ram").status,
        Status::Unknown
    );
}

#[test]
fn hosts_without_zimbra_or_mysql_skip_their_rules_saying_what_was_looked_for() {
    let d = tree(&[
        ("etc/hostname", "plain\n"),
        ("proc/meminfo", MEMINFO),
        (
            "proc/self/mountinfo",
            "41 1 9:0 / / rw,relatime shared:1 - ext4 /dev/md0 rw\n",
        ),
    ]);
    let r = audit::report(&audit::builtin(), d.path());
    for f in r
        .findings
        .iter()
        .filter(|f| f.rule.starts_with("zimbra.") || f.rule.contains("zimbra"))
    {
        assert_eq!(f.status, Status::Skip, "{}: {}", f.rule, f.explanation);
        assert!(
            f.explanation.contains("Zimbra is installed; not detected")
                && f.explanation.contains("captures/zmlocalconfig.txt"),
            "{}: {}",
            f.rule,
            f.explanation
        );
    }
    for f in r.findings.iter().filter(|f| f.rule.contains("mysql")) {
        assert_eq!(f.status, Status::Skip, "{}: {}", f.rule, f.explanation);
    }
}

#[test]
fn a_mysql_host_without_datadir_in_its_option_files_is_judged_on_the_default() {
    // Option files configure a server but leave datadir to the compiled-in
    // /var/lib/mysql; the mount table shows the volume that holds it.
    let d = tree(&[
        ("etc/hostname", "db1\n"),
        ("proc/meminfo", MEMINFO),
        (
            "etc/mysql/my.cnf",
            "[mysqld]\ninnodb_buffer_pool_size = 8G\n",
        ),
        (
            "proc/self/mountinfo",
            "41 1 9:0 / / rw,relatime shared:1 - ext4 /dev/md0 rw\n42 41 9:1 / /var/lib/mysql rw,noatime shared:2 - ext4 /dev/md1 rw\n",
        ),
    ]);
    let r = audit::report(&audit::builtin(), d.path());
    let f = finding(&r, "storage.noatime-mysql");
    assert_eq!(f.status, Status::Pass, "{}", f.explanation);
    // the item first (storage.yaml is one rule over `data_dirs`), then the mount read
    assert_eq!(f.subject, ["mysql", "/var/lib/mysql"]);
}

// --- coverage is part of every report (issue 11 item 5) ---

/// Exit code and stdout of `driftaudit ARGS`; a usage error (exit 2) must
/// say nothing on stderr.
fn run(args: &[&str]) -> (i32, String) {
    let (code, out, err) = crate::common::cli::run(args);
    assert!(err.is_empty() || code != 2, "{err}");
    (code, out)
}

fn no_bare_all_clear(text: &str) {
    assert!(
        !text.lines().any(|l| l.trim() == "no failures"),
        "bare all-clear:\n{text}"
    );
}

#[test]
fn text_report_ends_with_coverage_naming_the_zmlocalconfig_capture() {
    let dir = format!("{HOSTS}/zimbra-zmlocalconfig-only");
    let (code, text) = run(&["check", "--snapshot", &dir]);
    assert_eq!(code, 1);
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    let zimbra = tail
        .iter()
        .find(|l| l.trim_start().starts_with("Zimbra:"))
        .unwrap_or_else(|| panic!("no Zimbra coverage line at the end:\n{text}"));
    says(zimbra, "detected from captures/zmlocalconfig.txt");
    says(zimbra, "5 rules evaluated (3 failed, 2 passed), 0 unknown");
    let storage = tail
        .iter()
        .find(|l| l.trim_start().starts_with("storage:"))
        .unwrap();
    assert!(
        storage.contains("detected from /etc/fstab, /proc/self/mountinfo")
            // rules, not items: 7 of the 20 rules of before, now 3 of 8
            && storage.contains("3 unknown"),
        "{storage}"
    );
    let mysql = tail
        .iter()
        .find(|l| l.trim_start().starts_with("MySQL:"))
        .unwrap();
    assert!(mysql.contains("MySQL: not detected"), "{mysql}");
    // the leading reason of the unknowns names the capture that decides them
    says(
        &text,
        "unknown (3 rules): applies only where /opt/zimbra/index exists",
    );
}

#[test]
fn a_detected_domain_with_every_rule_skipped_never_reads_no_failures() {
    // MySQL known only from its runtime variables: option files absent, so
    // every rule that judges the option files skips (the warm-restart
    // rules; mysql.pool-too-large-for-ram judges the running pool too).
    // That is not an all-clear.
    let d = tree(&[
        ("etc/hostname", "db9\n"),
        ("proc/meminfo", MEMINFO),
        (
            "captures/mysql-variables.tsv",
            "version\t10.11.6-MariaDB-0+deb12u1\ninnodb_buffer_pool_size\t134217728\ndatadir\t/var/lib/mysql/\n",
        ),
    ]);
    let dir = d.path().to_str().unwrap();
    let (code, text) = run(&["check", "--snapshot", dir, "--only", "mysql.warm-*"]);
    assert_eq!(code, 0, "{text}");
    no_bare_all_clear(&text);
    says(
        &text,
        "MySQL was detected and none of its rules was evaluated",
    );
    says(&text, "MySQL: detected from captures/mysql-variables.tsv; 0 rules evaluated, 0 unknown, 2 did not apply");
    let (_, md) = run(&[
        "check",
        "--snapshot",
        dir,
        "--only",
        "mysql.warm-*",
        "--format",
        "markdown",
    ]);
    assert!(md.contains("**Not evaluated:** MySQL detected"), "{md}");
    assert!(!md.contains("**No failures** on 1 host."), "{md}");
    let (_, json) = run(&[
        "check",
        "--snapshot",
        dir,
        "--only",
        "mysql.warm-*",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mysql = crate::common::cli::find(&v["hosts"][0]["coverage"], "domain", "mysql").clone();
    assert_eq!(mysql["detected"], true);
    assert_eq!(mysql["sources"][0], "captures/mysql-variables.tsv");
    assert_eq!(mysql["rules"], 2);
    assert_eq!(mysql["evaluated"], 0);
    assert_eq!(mysql["skip"], 2);
    assert!(
        mysql["reasons"][0]["rules"].as_u64().unwrap() >= 2,
        "{mysql}"
    );
}

#[test]
fn zimbra_known_only_from_its_mounts_is_unknown_and_fail_on_unknown_fails_ci() {
    let dir = format!("{HOSTS}/zimbra-storage-nodirs");
    let (code, text) = run(&["check", "--snapshot", &dir, "--only", "zimbra.*"]);
    assert_eq!(code, 0, "unknown findings do not fail by default");
    no_bare_all_clear(&text);
    let zimbra = text
        .lines()
        .find(|l| l.trim_start().starts_with("Zimbra:"))
        .unwrap();
    assert!(
        zimbra.contains("/proc/self/mountinfo:")
            && zimbra.contains("(/opt/zimbra/db)")
            && zimbra.contains("0 rules evaluated, 5 unknown"),
        "{zimbra}"
    );
    let (code, _) = run(&[
        "check",
        "--snapshot",
        &dir,
        "--only",
        "zimbra.*",
        "--fail-on",
        "unknown",
    ]);
    assert_eq!(code, 1, "--fail-on unknown makes unknown findings fail CI");
    // a host whose rules all reach a verdict passes --fail-on unknown
    let clean = format!("{HOSTS}/zimbra-storage-after");
    let (code, _) = run(&[
        "check",
        "--snapshot",
        &clean,
        "--only",
        "zimbra.*",
        "--fail-on",
        "unknown",
    ]);
    assert_eq!(code, 0);
    // JUnit and SARIF carry the coverage too
    let (_, junit) = run(&["check", "--snapshot", &dir, "--format", "junit"]);
    says(&junit, "name=\"coverage.zimbra\"");
    says(&junit, "5 unknown");
    let (_, sarif) = run(&["check", "--snapshot", &dir, "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let cov = &v["runs"][0]["properties"]["coverage"][0];
    assert_eq!(cov["host"], "mail.khimki-logistics.ru");
    assert!(cov["domains"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["domain"] == "zimbra" && d["detected"] == true && d["unknown"] == 5));
}
