//! Pre-upgrade readiness on the two upgrade test hosts: a Debian 10 host
//! running MariaDB 10.3 with options of that era, checked against MariaDB
//! 10.11 (and 11.4); a CentOS 7 host running MySQL 5.7 with the options
//! MySQL Shell's upgrade checker names, checked against MySQL 8.0 and 8.4
//! and its persisted sysctl keys against Linux 6.1. The verdicts, file:line
//! evidence and versions are asserted one by one; the text report is pinned
//! with insta.

use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::{PolicySet, Severity};
use driftaudit::unstable::render::{render, Format, RenderOptions};
use driftaudit::unstable::report::{Finding, Status};
use driftaudit::unstable::upgrade::{self, Target};

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");

fn host(name: &str) -> Host {
    Host::snapshot(Path::new(&format!("{HOSTS}/{name}"))).unwrap()
}

fn targets(t: &[&str]) -> Vec<Target> {
    t.iter().map(|s| Target::parse(s).unwrap()).collect()
}

fn failing<'a>(f: &'a [Finding], rule: &str) -> Vec<&'a Finding> {
    f.iter()
        .filter(|x| x.rule == rule && x.status == Status::Fail)
        .collect()
}

/// (subject, first evidence) of the failing findings of a rule.
fn at(f: &[Finding], rule: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = failing(f, rule)
        .iter()
        .map(|x| {
            (
                x.subject.join(","),
                x.evidence
                    .first()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The subjects of the failing findings of a rule.
fn subjects(f: &[Finding], rule: &str) -> Vec<String> {
    failing(f, rule)
        .iter()
        .map(|x| x.subject.join(","))
        .collect()
}

/// The failing finding of `rule` about `subject`.
#[track_caller]
fn failing_on<'a>(f: &'a [Finding], rule: &str, subject: &str) -> &'a Finding {
    failing(f, rule)
        .into_iter()
        .find(|x| x.subject == [subject])
        .unwrap_or_else(|| panic!("no failing {rule} on {subject}"))
}

/// Every one of `names` is among `subjects`.
#[track_caller]
fn assert_has(subjects: &[String], names: &[&str]) {
    for name in names {
        assert!(subjects.iter().any(|d| d == name), "{name} in {subjects:?}");
    }
}

/// `text` (an explanation or a fix) says `part`.
#[track_caller]
fn assert_says(text: &str, part: &str) {
    assert!(text.contains(part), "{text}");
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = v
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_mariadb_10_3_option_file_checked_for_10_11_names_what_will_not_start_and_what_is_ignored() {
    let f = upgrade::check(&host("upgrade-mariadb-10.3"), &targets(&["mariadb=10.11"]));
    const TUNING: &str = "/etc/mysql/mariadb.conf.d/60-tuning.cnf";
    const GALERA: &str = "/etc/mysql/mariadb.conf.d/60-galera.cnf";
    // Refused by 10.11 (the installed 10.11.19 says "unknown variable" to
    // both; tests/mysql/upgrade_server.rs checks the data against it).
    assert_eq!(
        at(&f, "upgrade.mariadb.removed-option"),
        pairs(&[
            ("innodb_checksums", &format!("{TUNING}:11")),
            ("wsrep_replicate_myisam", &format!("{GALERA}:6")),
        ])
    );
    for x in failing(&f, "upgrade.mariadb.removed-option") {
        assert_eq!(x.severity, Severity::High);
        assert_says(&x.explanation, "does not start");
        assert_says(&x.explanation, "the host runs MariaDB 10.3.39");
    }
    let checksums = failing_on(&f, "upgrade.mariadb.removed-option", "innodb_checksums");
    assert_says(&checksums.explanation, "removed in 10.5.0");
    assert_says(&checksums.fix, "innodb_checksum_algorithm");
    // Accepted and ignored: low.
    assert_eq!(
        at(&f, "upgrade.mariadb.ignored-option"),
        pairs(&[
            ("innodb_buffer_pool_instances", &format!("{TUNING}:5")),
            ("innodb_file_format", &format!("{TUNING}:8")),
            ("innodb_large_prefix", &format!("{TUNING}:9")),
            ("innodb_locks_unsafe_for_binlog", &format!("{TUNING}:13")),
            ("innodb_log_files_in_group", &format!("{TUNING}:7")),
            ("innodb_thread_concurrency", &format!("{TUNING}:12")),
        ])
    );
    assert!(failing(&f, "upgrade.mariadb.ignored-option")
        .iter()
        .all(|x| x.severity == Severity::Low));
    // `loose-`: a note that the line does nothing.
    assert_eq!(
        at(&f, "upgrade.mariadb.loose-removed-option"),
        pairs(&[("innodb_support_xa", &format!("{TUNING}:14"))])
    );
    assert_eq!(
        failing(&f, "upgrade.mariadb.loose-removed-option")[0].severity,
        Severity::Info
    );
    // [mariadb-10.3] is not read by 10.11: innodb_page_cleaners there is not a finding.
    assert!(!f
        .iter()
        .any(|x| x.subject == ["innodb_page_cleaners"] && x.status == Status::Fail));
    // Defaults the host leaves alone that differ between 10.3.39 and 10.11.
    let defaults: Vec<String> = subjects(&f, "upgrade.mariadb.default-changed");
    assert_has(
        &defaults,
        &[
            "explicit_defaults_for_timestamp",
            "innodb_flush_method",
            "innodb_adaptive_hash_index",
            "innodb_checksum_algorithm",
        ],
    );
    // set in 50-server.cnf, so not relying on a default; changed only in 11.x
    assert!(!defaults.iter().any(|d| d == "innodb_undo_tablespaces"));
    let edft = failing_on(
        &f,
        "upgrade.mariadb.default-changed",
        "explicit_defaults_for_timestamp",
    );
    assert_eq!(edft.severity, Severity::Medium);
    assert_says(&edft.fix, "explicit_defaults_for_timestamp = OFF");
    assert_says(&edft.explanation, "OFF on MariaDB 10.3.39");
    assert_says(&edft.explanation, "ON from 10.10.1");
}

#[test]
fn the_same_host_checked_for_11_4_adds_what_11_x_removed_and_changed() {
    let f = upgrade::check(&host("upgrade-mariadb-10.3"), &targets(&["mariadb=11.4"]));
    let defaults: Vec<String> = subjects(&f, "upgrade.mariadb.default-changed");
    assert_has(&defaults, &["histogram_type", "innodb_purge_batch_size"]);
    // 11.0's innodb_undo_tablespaces = 3 reaches only a new data directory:
    // information, not a failure (issue 48)
    assert!(!defaults.iter().any(|d| d == "innodb_undo_tablespaces"));
    let undo = f
        .iter()
        .find(|x| {
            x.rule == "upgrade.mariadb.default-changed" && x.subject == ["innodb_undo_tablespaces"]
        })
        .expect("innodb_undo_tablespaces is said");
    assert_eq!((undo.status, undo.severity), (Status::Pass, Severity::Info));
    assert_says(
        &undo.explanation,
        "only a data directory MariaDB 11.4 creates",
    );
    // and for 10.6 none of the 10.10/11.x changes
    let f = upgrade::check(&host("upgrade-mariadb-10.3"), &targets(&["mariadb=10.6"]));
    let defaults: Vec<String> = subjects(&f, "upgrade.mariadb.default-changed");
    assert!(
        !defaults
            .iter()
            .any(|d| d == "explicit_defaults_for_timestamp"),
        "{defaults:?}"
    );
    assert!(
        defaults.iter().any(|d| d == "innodb_flush_method"),
        "{defaults:?}"
    );
}

#[test]
fn a_mysql_5_7_option_file_checked_for_8_0_names_the_cases_mysql_shell_checks() {
    let f = upgrade::check(&host("upgrade-mysql-5.7"), &targets(&["mysql=8.0"]));
    assert_eq!(
        at(&f, "upgrade.mysql.removed-option"),
        pairs(&[
            ("innodb_file_format", "/etc/my.cnf:17"),
            ("log_warnings", "/etc/my.cnf:20"),
            ("query_cache_size", "/etc/my.cnf:16"),
            ("query_cache_type", "/etc/my.cnf:15"),
        ])
    );
    // expire_logs_days is deprecated in 8.0 (removed in 8.2)
    assert_eq!(
        at(&f, "upgrade.mysql.deprecated-option"),
        pairs(&[("expire_logs_days", "/etc/my.cnf:19")])
    );
    // the refused sql_mode value, with the line to write instead
    let v = failing(&f, "upgrade.mysql.removed-value");
    assert_eq!(v.len(), 1, "{f:#?}");
    assert_eq!(v[0].severity, Severity::High);
    assert_eq!(v[0].evidence[0].to_string(), "/etc/my.cnf:14");
    assert_says(
        &v[0].explanation,
        "NO_AUTO_CREATE_USER (refused from 8.0.11)",
    );
    assert!(
        v[0].fix
            .ends_with("`sql_mode = STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION`"),
        "{}",
        v[0].fix
    );
    // [mysqld-5.7] is not read by 8.0
    assert!(!f
        .iter()
        .any(|x| x.subject == ["innodb_large_prefix"] && x.status == Status::Fail));
    // the defaults MySQL 8.0 changed that this host relies on
    let defaults: Vec<String> = subjects(&f, "upgrade.mysql.default-changed");
    assert_has(
        &defaults,
        &[
            "character_set_server",
            "collation_server",
            "default_authentication_plugin",
            "explicit_defaults_for_timestamp",
            "log_bin",
        ],
    );
    // sql_mode is set on the host: no default finding for it
    assert!(!defaults.iter().any(|d| d == "sql_mode"));
}

#[test]
fn mysql_8_4_also_refuses_expire_logs_days_and_kernel_6_1_lacks_tcp_tw_recycle() {
    let f = upgrade::check(
        &host("upgrade-mysql-5.7"),
        &targets(&["mysql=8.4", "kernel=6.1"]),
    );
    let removed: Vec<String> = subjects(&f, "upgrade.mysql.removed-option");
    assert!(
        removed.iter().any(|r| r == "expire_logs_days"),
        "{removed:?}"
    );
    assert_eq!(
        at(&f, "upgrade.kernel.removed-key"),
        pairs(&[
            (
                "kernel.sched_migration_cost_ns",
                "/etc/sysctl.d/99-tuning.conf:5"
            ),
            ("net.ipv4.tcp_tw_recycle", "/etc/sysctl.d/99-tuning.conf:2"),
        ])
    );
    let tw = failing_on(&f, "upgrade.kernel.removed-key", "net.ipv4.tcp_tw_recycle");
    assert_says(&tw.explanation, "removed in Linux 4.12");
    assert_says(&tw.explanation, "Linux 3.10.0-1160.el7.x86_64");
    assert_eq!(
        at(&f, "upgrade.kernel.meaning-changed"),
        pairs(&[("net.core.somaxconn", "/etc/sysctl.d/99-tuning.conf:4")])
    );
    // on a 4.19 host somaxconn's change is still ahead, tcp_tw_recycle is not set
    let f = upgrade::check(&host("upgrade-mariadb-10.3"), &targets(&["kernel=6.1"]));
    assert!(
        f.iter()
            .filter(|x| x.rule.starts_with("upgrade.kernel."))
            .all(|x| x.status == Status::Pass),
        "{f:#?}"
    );
}

#[test]
fn a_host_without_option_files_is_skipped_with_the_reason_never_passed() {
    let f = upgrade::check(&host("clean"), &targets(&["mariadb=10.11"]));
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].status, Status::Skip);
    crate::common::cli::starts(&f[0].explanation, "no option file");
}

#[test]
fn without_a_known_server_version_the_defaults_are_unknown_not_passed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("etc")).unwrap();
    crate::common::tree::file(
        dir.path(),
        "etc/my.cnf",
        "[mysqld]\ninnodb_file_format = Barracuda\n",
    );
    let f = upgrade::check(&audit::host(dir.path()), &targets(&["mariadb=10.11"]));
    let d = crate::common::of_rule(&f, "upgrade.mariadb.default-changed");
    assert_eq!(d.len(), 1, "{f:#?}");
    assert_eq!(d[0].status, Status::Unknown);
    assert_says(&d[0].explanation, "explicit_defaults_for_timestamp");
    assert_says(&d[0].fix, "snapshot --mysql");
    // the removal verdict does not depend on the running version
    assert_eq!(failing(&f, "upgrade.mariadb.ignored-option").len(), 1);
}

fn report_text(name: &str, t: &[&str]) -> String {
    let hosts = vec![host(name)];
    let t = targets(t);
    let mut set = PolicySet::new();
    set.add_upgrade_targets(&t).unwrap();
    let report = engine::audit(&set, &hosts);
    render(
        &report,
        Format::Text,
        RenderOptions {
            color: false,
            verbose: false,
            ..Default::default()
        },
    )
}

#[test]
fn upgrade_report_of_the_mariadb_10_3_host_for_10_11() {
    insta::assert_snapshot!(report_text("upgrade-mariadb-10.3", &["mariadb=10.11"]));
}

#[test]
fn upgrade_report_of_the_mysql_5_7_host_for_8_0_and_kernel_6_1() {
    insta::assert_snapshot!(report_text(
        "upgrade-mysql-5.7",
        &["mysql=8.0", "kernel=6.1"]
    ));
}

use crate::common;
use crate::common::audit;
use crate::common::cli::run as bin;
use crate::common::cli::says;

/// Issue 47: the upgrade rules were stubs the engine passed over, their
/// findings added by the CLI after `audit()`, so an embedder auditing a set
/// that holds them got none. The engine judges them: `audit()` returns what
/// the upgrade checks find, and a filter on the set reaches them.
#[test]
fn audit_of_a_policy_set_holding_upgrade_rules_returns_their_findings() {
    let hosts = vec![host("upgrade-mysql-5.7")];
    let t = targets(&["mysql=8.0", "kernel=6.1"]);
    let key = |f: &Finding| format!("{} [{}] {:?}", f.rule, f.subject.join(","), f.status);
    let upgrade_findings = |set: &PolicySet| -> Vec<String> {
        let report = engine::audit(set, &hosts);
        let mut v: Vec<String> = report.hosts[0]
            .findings
            .iter()
            .filter(|f| f.rule.starts_with("upgrade."))
            .map(key)
            .collect();
        v.sort();
        v
    };
    let mut want: Vec<String> = upgrade::check(&hosts[0], &t).iter().map(key).collect();
    want.sort();
    assert!(want.len() > 10, "{want:#?}");
    let mut set = PolicySet::builtin().unwrap();
    upgrade::register(&mut set, &t).unwrap();
    assert_eq!(upgrade_findings(&set), want);
    // `--only` on the set keeps one rule's findings and no other's
    set.filter(&["upgrade.mysql.removed-option".to_string()], &[])
        .unwrap();
    let only: Vec<String> = want
        .iter()
        .filter(|k| k.starts_with("upgrade.mysql.removed-option "))
        .cloned()
        .collect();
    assert!(!only.is_empty());
    assert_eq!(upgrade_findings(&set), only);
}

/// Issue 47: `check --fleet --target` added the upgrade findings host by
/// host in the CLI, so the library's `audit_fleet` gave none for a set
/// holding upgrade rules; the engine judges them on every path now.
#[test]
fn audit_fleet_of_a_policy_set_holding_upgrade_rules_returns_their_findings() {
    let fleet = tempfile::tempdir().unwrap();
    let hosts = [
        (
            "upgrade-mariadb-10.3",
            "mariadb=10.11",
            "upgrade.mariadb.removed-option",
        ),
        (
            "upgrade-mysql-5.7",
            "mysql=8.0",
            "upgrade.mysql.removed-option",
        ),
    ];
    for (h, ..) in hosts {
        crate::common::tree::copy_host(h, &fleet.path().join(h));
    }
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let mut set = PolicySet::builtin().unwrap();
    set.add_upgrade_targets(&targets(&["mariadb=10.11", "mysql=8.0"]))
        .unwrap();
    let report = driftaudit::audit_fleet(&set, fleet.path()).unwrap();
    assert_eq!(report.hosts.len(), 2);
    for ((name, target, rule), h) in hosts.iter().zip(&report.hosts) {
        assert_eq!(h.path.as_deref(), Some(*name));
        let want = sorted(subjects(
            &upgrade::check(&host(name), &targets(&[target])),
            rule,
        ));
        assert!(!want.is_empty(), "{name}");
        assert_eq!(sorted(subjects(&h.findings, rule)), want, "{name}");
    }
}

#[test]
fn a_bad_target_is_a_usage_error_naming_the_accepted_forms() {
    let (code, out, err) = bin(&[
        "check",
        "--snapshot",
        "testdata/hosts/clean",
        "--target",
        "mariadb=10.9",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert_eq!(
        err.trim(),
        "driftaudit: --target: no upgrade data for `mariadb=10.9`: expected mariadb=10.3|10.4|10.5|10.6|10.11|11.4, mysql=5.7|8.0|8.4, kernel=X.Y (e.g. kernel=6.1)"
    );
    let (code, _, err) = bin(&["check", "--target", "oracle"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown target `oracle`"), "{err}");
}

#[test]
fn upgrade_findings_go_through_fail_on_waivers_and_every_format() {
    let snap = "testdata/hosts/upgrade-mysql-5.7";
    // --fail-on high: the refused options and the sql_mode value decide it
    let (code, out, _) = bin(&[
        "check",
        "--snapshot",
        snap,
        "--target",
        "mysql=8.0",
        "--format",
        "json",
        "--fail-on",
        "high",
        "--only",
        "mysql.*",
        "--only",
        "upgrade.*",
    ]);
    assert_eq!(code, 1, "{out}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = r["hosts"][0]["findings"].as_array().unwrap();
    assert!(f
        .iter()
        .any(|x| x["rule"] == "upgrade.mysql.removed-value" && x["status"] == "fail"));
    // SARIF carries the rule descriptors of the upgrade rules
    let (_, sarif, _) = bin(&[
        "check",
        "--snapshot",
        snap,
        "--target",
        "mysql=8.0",
        "--format",
        "sarif",
        "--only",
        "mysql.*",
        "--only",
        "upgrade.*",
    ]);
    says(&sarif, "\"upgrade.mysql.removed-option\"");
    // a waiver covers an upgrade finding like any other
    let (_dir, w) = crate::common::tree::temp_file("w.yaml", "- rule: upgrade.mysql.removed-value\n  reason: sql_mode is rewritten by the upgrade playbook (OPS-1)\n  expires: 2099-01-01\n");
    let (_, out, err) = bin(&[
        "check",
        "--snapshot",
        snap,
        "--target",
        "mysql=8.0",
        "--format",
        "json",
        "--only",
        "mysql.*",
        "--only",
        "upgrade.*",
        "--waivers",
        w.to_str().unwrap(),
    ]);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let f = r["hosts"][0]["findings"].as_array().unwrap();
    let v: Vec<&serde_json::Value> = f
        .iter()
        .filter(|x| x["rule"] == "upgrade.mysql.removed-value")
        .collect();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["status"], "waived", "{:#}", v[0]);
}

#[test]
fn a_diff_after_the_upgrade_puts_the_versions_first_and_names_values_changed_only_by_a_default() {
    let (code, out, err) = bin(&[
        "diff",
        "testdata/pairs/mariadb-upgrade/before",
        "testdata/pairs/mariadb-upgrade/after",
    ]);
    assert!(code == 0 || code == 1, "{code}: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[1],
        "upgrade: server version 10.3.39-MariaDB-0+deb10u2 -> 10.11.6-MariaDB-0+deb12u1"
    );
    assert_eq!(
        lines[2],
        "upgrade: kernel 4.19.0-27-amd64 -> 6.1.0-27-amd64"
    );
    assert_eq!(lines[4], "Changed only because a default changed: 5");
    // MDEV-32050 in the after server's own release line (10.11.6), from the
    // data, the captures lacking the variable (issue 48)
    assert!(
        out.contains("  innodb_purge_batch_size: 300 -> 127 (default changed in 10.11.6; "),
        "{out}"
    );
    assert!(out.contains(
        "  explicit_defaults_for_timestamp: OFF -> ON (default changed in 10.10.1; runtime values; set in no option file)"
    ), "{out}");
    // innodb_flush_method was pinned in an option file after the upgrade:
    // its (unchanged) value is not put down to a default
    let section: String = lines[4..10].join("\n");
    assert!(!section.contains("innodb_flush_method"), "{section}");
    // the JSON carries the same
    let (_, json, _) = bin(&[
        "diff",
        "testdata/pairs/mariadb-upgrade/before",
        "testdata/pairs/mariadb-upgrade/after",
        "--format",
        "json",
    ]);
    let d: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(d["versions"][0]["fact"], "mysql_version");
    let subjects = common::cli::strs(&d["default_driven"], "subject");
    assert_eq!(
        subjects,
        [
            "innodb_adaptive_hash_index",
            "innodb_checksum_algorithm",
            "slave_parallel_mode",
            "explicit_defaults_for_timestamp",
            "innodb_purge_batch_size"
        ]
    );
    assert!(d["default_driven"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["from"]
            == if c["subject"] == "innodb_purge_batch_size" {
                // the captures of this pair lack it: the data's defaults
                "data"
            } else {
                "runtime"
            }));
}

/// Issue 30: the upgrade rules were findings no filter, overlay, `list`,
/// `explain` or `driftaudit test` reached (`--only 'upgrade.*'` exited 2
/// "matches no rule", an overlay demoting one was a load error). They are
/// rules of the one registry now.
#[test]
fn upgrade_rules_are_listed_explained_filtered_overridden_and_tested_like_any_rule() {
    let snap = "testdata/hosts/upgrade-mariadb-10.3";
    let rules_of = |out: &str| -> Vec<(String, String, String)> {
        let r: serde_json::Value = serde_json::from_str(out).unwrap();
        r["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
                (s("rule"), s("status"), s("severity"))
            })
            .collect()
    };
    // `check` of the host for 10.11 with the upgrade rules alone, in JSON
    let upgrade_rules = |extra: &[&str]| {
        let mut args = vec!["check", "--snapshot", snap, "--target", "mariadb=10.11"];
        args.extend(["--only", "upgrade.*"]);
        args.extend(extra);
        args.extend(["--format", "json"]);
        bin(&args)
    };
    // --only selects them
    let (code, out, err) = upgrade_rules(&[]);
    assert_eq!(code, 1, "{err}");
    let only = rules_of(&out);
    assert!(
        only.iter().all(|(r, ..)| r.starts_with("upgrade.mariadb.")),
        "{only:?}"
    );
    assert!(only
        .iter()
        .any(|(r, s, _)| r == "upgrade.mariadb.default-changed" && s == "fail"));
    // --skip leaves one out
    let (code, out, err) = upgrade_rules(&["--skip", "upgrade.mariadb.default-changed"]);
    assert_eq!(code, 1, "{err}");
    let skipped = rules_of(&out);
    assert!(!skipped
        .iter()
        .any(|(r, ..)| r == "upgrade.mariadb.default-changed"));
    assert!(skipped
        .iter()
        .any(|(r, ..)| r == "upgrade.mariadb.removed-option"));
    // an overlay demotes one and disables another, and the same overlay
    // loads in a run without --target (the rules are dormant there)
    let (dir, overlay) = crate::common::tree::temp_file("site.yaml", "policy: site\ntitle: Site\noverrides:\n  - rule: upgrade.mariadb.default-changed\n    severity: info\n  - rule: upgrade.mariadb.ignored-option\n    disabled: the playbook deletes these lines (OPS-7)\n");
    let ov = overlay.to_str().unwrap();
    let (code, out, err) = upgrade_rules(&["--policy", ov]);
    assert_eq!(code, 1, "{err}");
    let changed = rules_of(&out);
    let dc: Vec<_> = changed
        .iter()
        .filter(|(r, ..)| r == "upgrade.mariadb.default-changed")
        .collect();
    assert!(
        !dc.is_empty() && dc.iter().all(|(_, _, sev)| sev == "info"),
        "{dc:?}"
    );
    let ig: Vec<_> = changed
        .iter()
        .filter(|(r, ..)| r == "upgrade.mariadb.ignored-option")
        .collect();
    assert_eq!(ig.len(), 1, "one skip saying who disabled it: {ig:?}");
    assert_eq!(ig[0].1, "skip");
    assert!(out.contains("the playbook deletes these lines"), "{out}");
    let (code, _, err) = bin(&["check", "--snapshot", snap, "--policy", ov]);
    assert_ne!(
        code, 2,
        "an overlay of dormant upgrade rules is no load error: {err}"
    );
    // list shows them with --target (and not without), explain without
    let (_, list, _) = bin(&["list", "--target", "mariadb=10.11"]);
    assert!(list.contains("upgrade.mariadb.removed-option"), "{list}");
    let (_, list, _) = bin(&["list"]);
    assert!(!list.contains("upgrade."), "{list}");
    let (_, json, _) = bin(&["list", "--target", "kernel=6.1", "--format", "json"]);
    assert!(json.contains("\"upgrade.kernel.removed-key\""), "{json}");
    let (code, ex, err) = bin(&["explain", "upgrade.mariadb.removed-option"]);
    assert_eq!(code, 0, "{err}");
    crate::common::cli::starts(&ex, "upgrade.mariadb.removed-option  (high)");
    assert!(ex.contains("policies/upgrade/mariadb.yaml"), "{ex}");
    // a policy test with `targets:` judges them
    let t = dir.path().join("upgrade.test.yaml");
    std::fs::write(
        &t,
        "builtin: true\ntargets: [mariadb=10.11]\ncases:\n  - name: a 10.3-era option refused by 10.11\n    files:\n      /etc/mysql/my.cnf: \"[mysqld]\\ninnodb_file_format_check = 1\\n\"\n    expect:\n      - { rule: upgrade.mariadb.removed-option, status: fail }\n  - name: nothing removed\n    files:\n      /etc/mysql/my.cnf: \"[mysqld]\\nmax_connections = 100\\n\"\n    expect:\n      - { rule: upgrade.mariadb.removed-option, status: pass }\n",
    )
    .unwrap();
    let (code, out, err) = bin(&["test", t.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}
