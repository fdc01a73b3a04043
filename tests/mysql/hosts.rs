//! policies/mysql-innodb.yaml on the three MySQL test hosts (the Polish
//! warm-up story, a Debian !includedir override with an unpersisted SET
//! GLOBAL, a healthy MySQL 8.0) and on small generated snapshots for the
//! cases the hosts do not cover (pool too small or too large, unknown version,
//! bare dump line, unit normalisation in drift). tests/workflow/hosts.rs pins the full
//! reports with insta; this file pins verdicts, numbers and evidence.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::cli::says;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::report::{Finding, Status};

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");

fn mysql_policies() -> PolicySet {
    audit::only(&["mysql.*"])
}

fn host(name: &str) -> Vec<Finding> {
    audit::findings(&mysql_policies(), Path::new(&format!("{HOSTS}/{name}")))
}

/// rule (with `[subject]` for drift findings) -> status, input findings excluded.
fn verdicts(findings: &[Finding]) -> BTreeMap<String, Status> {
    findings
        .iter()
        .filter(|f| f.rule.starts_with("mysql."))
        .map(|f| {
            let key = if f.rule == "mysql.config-runtime-drift" && f.status == Status::Fail {
                format!("{}[{}]", f.rule, f.subject.join(","))
            } else {
                f.rule.clone()
            };
            (key, f.status)
        })
        .collect()
}

fn expect(findings: &[Finding], want: &[(&str, Status)]) {
    let want: BTreeMap<String, Status> = want.iter().map(|(r, s)| (r.to_string(), *s)).collect();
    assert_eq!(verdicts(findings), want, "{findings:#?}");
}

fn one<'a>(findings: &'a [Finding], rule: &str) -> &'a Finding {
    let f: Vec<&Finding> = findings.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(f.len(), 1, "{rule}: {findings:#?}");
    f[0]
}

fn evidence(f: &Finding) -> Vec<String> {
    f.evidence.iter().map(|e| e.to_string()).collect()
}

const MEM_32G: &str = "MemTotal:       32894416 kB\n";
const MEM_16G: &str = "MemTotal:       16365876 kB\n";

#[test]
fn warmup_story_fails_warm_restart_with_the_story_numbers() {
    let f = host("mysql-warmup-story");
    expect(
        &f,
        &[
            // MySQL 5.6 has no table of compiled defaults: a variable no
            // file sets (join_buffer_size) may run a SET GLOBAL the next
            // restart reverts, which only its default could tell
            ("mysql.config-runtime-drift", Status::Unknown),
            ("mysql.pool-too-large-for-ram", Status::Pass),
            ("mysql.pool-too-small-for-data", Status::Pass),
            ("mysql.warm-restart-dump", Status::Fail),
            ("mysql.warm-restart-load", Status::Fail),
        ],
    );
    let dump = one(&f, "mysql.warm-restart-dump");
    for n in [
        "25 GiB",
        "1638400 pages",
        "set to OFF",
        "20 minutes",
        "2 min 34 s",
    ] {
        assert!(dump.explanation.contains(n), "{n}: {}", dump.explanation);
    }
    // the running server's line as well: the next shutdown goes by it
    // (issue 48)
    assert_eq!(
        evidence(dump),
        [
            "/etc/mysql/conf.d/sysbench.cnf:3",
            "/etc/mysql/conf.d/sysbench.cnf:11",
            "/captures/mysql-variables.tsv:30"
        ]
    );
    let load = one(&f, "mysql.warm-restart-load");
    assert!(load
        .explanation
        .contains("innodb_buffer_pool_load_at_startup is set to OFF"));
    assert_eq!(
        evidence(load),
        [
            "/etc/mysql/conf.d/sysbench.cnf:3",
            "/etc/mysql/conf.d/sysbench.cnf:12"
        ]
    );
}

#[test]
fn includedir_override_drifts_on_the_unpersisted_set_global() {
    let f = host("mysql-includedir-override");
    expect(
        &f,
        &[
            ("mysql.config-runtime-drift[max_connections]", Status::Fail),
            ("mysql.pool-too-large-for-ram", Status::Pass),
            ("mysql.pool-too-small-for-data", Status::Pass),
            ("mysql.warm-restart-dump", Status::Pass),
            ("mysql.warm-restart-load", Status::Pass),
        ],
    );
    let d = one(&f, "mysql.config-runtime-drift");
    assert_eq!(d.expected.as_deref(), Some("200"));
    assert_eq!(d.actual.as_deref(), Some("400"));
    says(
        &d.explanation,
        "max_connections is 200 for the next start (/etc/mysql/mariadb.conf.d/50-server.cnf:40",
    );
    says(&d.explanation, "uses 400");
    assert_eq!(
        evidence(d),
        [
            "/etc/mysql/mariadb.conf.d/50-server.cnf:40",
            "/captures/mysql-variables.tsv:340"
        ]
    );
    // mariadb.cnf reads conf.d/ before mariadb.conf.d/: the 99-override.cnf in
    // mariadb.conf.d/ wins over 50-server.cnf, both lines are the provenance.
    let large = one(&f, "mysql.pool-too-large-for-ram");
    assert_eq!(
        evidence(large),
        [
            "/etc/mysql/mariadb.conf.d/99-override.cnf:5",
            "/etc/mysql/mariadb.conf.d/50-server.cnf:106",
            // the running side (issue 48): the pool the server holds now
            "/captures/mysql-variables.tsv:160"
        ]
    );
    says(&large.explanation, "10 GiB");
    // MariaDB 10.11 defaults dump/load to ON when no file sets them.
    let dump = one(&f, "mysql.warm-restart-dump");
    assert!(dump.explanation.contains("10 GiB"), "{}", dump.explanation);
}

#[test]
fn healthy_host_passes_every_mysql_rule() {
    let f = host("mysql-healthy");
    expect(
        &f,
        &[
            ("mysql.config-runtime-drift", Status::Pass),
            ("mysql.pool-too-large-for-ram", Status::Pass),
            ("mysql.pool-too-small-for-data", Status::Pass),
            ("mysql.warm-restart-dump", Status::Pass),
            ("mysql.warm-restart-load", Status::Pass),
        ],
    );
    // 9G with 16 x 128M chunks runs as 10G: no false drift, and the pool
    // rules judge the 10 GiB the server really allocates.
    let large = one(&f, "mysql.pool-too-large-for-ram");
    assert_eq!(
        large.actual.as_deref(),
        Some("innodb_buffer_pool_size = 10 GiB")
    );
    let drift = one(&f, "mysql.config-runtime-drift");
    // the 19 the files set, 34 compiled defaults of the variables no file
    // sets and 8 the server sized, derived or lowered at its start (one
    // `mysql_next` for every rule)
    crate::common::cli::starts(&drift.explanation, "61 configured value(s)");
    assert!(f.iter().all(|x| x.status != Status::Fail), "{f:#?}");
}

#[test]
fn hosts_without_mysql_skip_every_rule() {
    for name in ["clean", "nat-story", "zimbra-khimki-asfound"] {
        let f = host(name);
        let mysql: Vec<&Finding> = f.iter().filter(|x| x.rule.starts_with("mysql.")).collect();
        assert_eq!(mysql.len(), 5, "{name}");
        assert!(
            mysql.iter().all(|x| x.status == Status::Skip),
            "{name}: {mysql:#?}"
        );
    }
}

fn server(cnf: &str, vars: Option<&str>, du: &str, mem: &str) -> tempfile::TempDir {
    let mut files = vec![
        ("/etc/my.cnf", cnf),
        ("/proc/meminfo", mem),
        ("/captures/du.txt", du),
    ];
    if let Some(v) = vars {
        files.push(("/captures/mysql-variables.tsv", v));
    }
    audit::snapshot(&files)
}

#[test]
fn pool_too_small_for_data_names_pool_data_and_ram() {
    let dir = server(
        "[mysqld]\ndatadir = /srv/mysql\ninnodb_buffer_pool_size = 4G\n",
        None,
        "21474836480\t/srv/mysql\n",
        MEM_32G,
    );
    let f = audit::findings(&mysql_policies(), dir.path());
    let small = one(&f, "mysql.pool-too-small-for-data");
    assert_eq!(small.status, Status::Fail);
    // 4 GiB pool, 20 GiB of data, 16 GiB (80 %) uncached, 31.4 GiB RAM, room 22 GiB.
    for n in [
        "4 GiB",
        "/srv/mysql",
        "20 GiB",
        "16 GiB (80 %)",
        "31.4 GiB",
        "22 GiB",
    ] {
        assert!(small.explanation.contains(n), "{n}: {}", small.explanation);
    }
    assert!(
        small
            .fix
            .contains("Set innodb_buffer_pool_size to 20 GiB (21474836480 bytes"),
        "{}",
        small.fix
    );
    assert!(evidence(small).contains(&"/etc/my.cnf:3".to_string()));
    assert!(evidence(small).contains(&"/captures/du.txt:1".to_string()));
    assert_eq!(one(&f, "mysql.pool-too-large-for-ram").status, Status::Pass);

    // Pool below the data but already at the allowed share of RAM: pass.
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 23G\n",
        None,
        "37622661120\t/var/lib/mysql\n",
        MEM_32G,
    );
    assert_eq!(
        one(
            &audit::findings(&mysql_policies(), dir.path()),
            "mysql.pool-too-small-for-data"
        )
        .status,
        Status::Pass
    );
}

#[test]
fn pool_too_large_for_ram_names_pool_ram_and_the_rest() {
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 14G\n",
        None,
        "1073741824\t/var/lib/mysql\n",
        MEM_16G,
    );
    let f = audit::findings(&mysql_policies(), dir.path());
    let large = one(&f, "mysql.pool-too-large-for-ram");
    assert_eq!(large.status, Status::Fail);
    for n in [
        "14 GiB", "89.7 %", "15.6 GiB", "12.5 GiB", "1.6 GiB", "Zimbra",
    ] {
        assert!(large.explanation.contains(n), "{n}: {}", large.explanation);
    }
    assert_eq!(evidence(large), ["/etc/my.cnf:2"]);
    assert!(large.breakdown.is_some());
}

const MARIADB_VARS: &str =
    "version\t10.11.19-MariaDB-0+deb12u1\ninnodb_buffer_pool_size\t4294967296\n";

#[test]
fn warm_restart_absent_options_follow_the_version_default() {
    let cnf = "[mysqld]\ninnodb_buffer_pool_size = 4G\n";
    let du = "1073741824\t/var/lib/mysql\n";
    // No runtime capture: the version is unknown, so is the default.
    let dir = server(cnf, None, du, MEM_16G);
    let f = audit::findings(&mysql_policies(), dir.path());
    for rule in ["mysql.warm-restart-dump", "mysql.warm-restart-load"] {
        let x = one(&f, rule);
        assert_eq!(x.status, Status::Unknown, "{x:#?}");
        says(&x.explanation, "mysql-variables.tsv");
    }
    // MariaDB 10.11: ON by default.
    let dir = server(cnf, Some(MARIADB_VARS), du, MEM_16G);
    let f = audit::findings(&mysql_policies(), dir.path());
    assert_eq!(one(&f, "mysql.warm-restart-dump").status, Status::Pass);
    assert_eq!(one(&f, "mysql.warm-restart-load").status, Status::Pass);
    // MySQL 5.7.6 (before 5.7.7) and MariaDB 10.1: OFF by default.
    for v in ["5.7.6-log", "10.1.48-MariaDB-0+deb9u2"] {
        let vars = format!("version\t{v}\n");
        let dir = server(cnf, Some(&vars), du, MEM_16G);
        let f = audit::findings(&mysql_policies(), dir.path());
        let x = one(&f, "mysql.warm-restart-dump");
        assert_eq!(x.status, Status::Fail, "{v}");
        assert!(
            x.explanation.contains(&format!(
                "not set in any option file, so the compiled-in default of {v} applies: OFF"
            )),
            "{}",
            x.explanation
        );
    }
    // MySQL 5.7.7: ON.
    let dir = server(cnf, Some("version\t5.7.7-rc\n"), du, MEM_16G);
    assert_eq!(
        one(
            &audit::findings(&mysql_policies(), dir.path()),
            "mysql.warm-restart-load"
        )
        .status,
        Status::Pass
    );
    // Below the 1 GiB threshold the rule does not apply.
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 512M\n",
        None,
        du,
        MEM_16G,
    );
    assert_eq!(
        one(
            &audit::findings(&mysql_policies(), dir.path()),
            "mysql.warm-restart-dump"
        )
        .status,
        Status::Skip
    );
}

#[test]
fn explicit_off_fails_even_without_a_version() {
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 4G\ninnodb_buffer_pool_dump_at_shutdown = 0\nskip-innodb-buffer-pool-load-at-startup\n",
        None,
        "1073741824\t/var/lib/mysql\n",
        MEM_16G,
    );
    let f = audit::findings(&mysql_policies(), dir.path());
    let dump = one(&f, "mysql.warm-restart-dump");
    assert_eq!(dump.status, Status::Fail);
    assert_eq!(evidence(dump), ["/etc/my.cnf:2", "/etc/my.cnf:3"]);
    let load = one(&f, "mysql.warm-restart-load");
    assert_eq!(load.status, Status::Fail);
    assert_eq!(evidence(load), ["/etc/my.cnf:2", "/etc/my.cnf:4"]);
}

#[test]
fn a_bare_dump_line_is_never_a_passing_on() {
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 4G\ninnodb_buffer_pool_dump_at_shutdown\ninnodb-buffer-pool-load-at-startup = ON\n",
        Some(MARIADB_VARS),
        "1073741824\t/var/lib/mysql\n",
        MEM_16G,
    );
    let f = audit::findings(&mysql_policies(), dir.path());
    let dump = one(&f, "mysql.warm-restart-dump");
    assert_eq!(dump.status, Status::Unknown, "{dump:#?}");
    says(&dump.explanation, "requires an argument");
    assert!(evidence(dump).contains(&"/etc/my.cnf:3".to_string()));
    assert_eq!(one(&f, "mysql.warm-restart-load").status, Status::Pass);
    // The input finding says the server would not start.
    assert!(f
        .iter()
        .any(|x| x.rule == "driftaudit.input" && x.explanation.contains("refuses to start")));
}

#[test]
fn drift_normalises_units_and_booleans_end_to_end() {
    let cnf = "[mysqld]\n\
        innodb_buffer_pool_size = 300000000\n\
        innodb_log_file_size = 2048M\n\
        innodb_stats_persistent = 1\n\
        innodb_file_per_table = ON\n\
        skip-name-resolve\n\
        datadir = /var/lib/mysql\n\
        max_allowed_packet = 64M\n";
    // MariaDB 10.11.19 runs a 300000000-byte pool as 299892736 (1 MiB steps).
    let vars = "version\t10.11.19-MariaDB-0+deb12u1\n\
        innodb_buffer_pool_size\t299892736\n\
        innodb_log_file_size\t2147483648\n\
        innodb_stats_persistent\tON\n\
        innodb_file_per_table\tON\n\
        skip_name_resolve\tON\n\
        datadir\t/var/lib/mysql/\n\
        max_allowed_packet\t67108864\n";
    let dir = server(cnf, Some(vars), "1\t/var/lib/mysql\n", MEM_16G);
    let f = audit::findings(&mysql_policies(), dir.path());
    let drift = one(&f, "mysql.config-runtime-drift");
    assert_eq!(drift.status, Status::Pass, "{f:#?}");
    // datadir is ignored (trailing slash); the other six are compared.
    crate::common::cli::starts(&drift.explanation, "6 configured value(s)");

    // The same comparison does fail on a real difference.
    let vars = vars.replace("2147483648", "1073741824");
    let dir = server(cnf, Some(&vars), "1\t/var/lib/mysql\n", MEM_16G);
    let f = audit::findings(&mysql_policies(), dir.path());
    expect(
        &f,
        &[
            (
                "mysql.config-runtime-drift[innodb_log_file_size]",
                Status::Fail,
            ),
            ("mysql.pool-too-large-for-ram", Status::Pass),
            ("mysql.pool-too-small-for-data", Status::Pass),
            ("mysql.warm-restart-dump", Status::Skip),
            ("mysql.warm-restart-load", Status::Skip),
        ],
    );
    let d = one(&f, "mysql.config-runtime-drift");
    assert_eq!(d.expected.as_deref(), Some("2 GiB"));
    assert_eq!(d.actual.as_deref(), Some("1 GiB"));
    says(&d.fix, "`innodb_log_file_size = 1073741824`");
}

use crate::common::audit;
/// `(key, status)` of the drift rule's findings, input findings' texts.
use crate::real_world::{drift as drift_and_inputs, noted};

#[test]
fn server_rounding_and_clamping_is_not_runtime_drift() {
    // MariaDB 10.11: driftaudit knows the limits and predicts the exact value.
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\nmax_allowed_packet = 1000000\nsort_buffer_size = 100\nmax_binlog_size = 2G\nkey_buffer_size = 10000000\n";
    let vars = "version\t10.11.19-MariaDB-0+deb12u1\nmax_allowed_packet\t999424\nsort_buffer_size\t1024\nmax_binlog_size\t1073741824\nkey_buffer_size\t9998336\n";
    let dir = server(cnf, Some(vars), "1\t/var/lib/mysql\n", MEM_16G);
    let f = audit::findings(&mysql_policies(), dir.path());
    let (drift, inputs) = drift_and_inputs(&f);
    assert_eq!(drift, [(String::new(), Status::Pass)], "{f:#?}");
    // The clamps the server warns about are noted with its numbers.
    noted(
        &inputs,
        &["`max_binlog_size`", "above the maximum 1073741824"],
    );
    // A value the server did not derive from the file is still drift.
    let dir = server(
        cnf,
        Some(&vars.replace("999424", "2097152")),
        "1\t/var/lib/mysql\n",
        MEM_16G,
    );
    let (drift, _) = drift_and_inputs(&audit::findings(&mysql_policies(), dir.path()));
    assert_eq!(
        drift,
        [("max_allowed_packet".to_string(), Status::Fail)],
        "{drift:?}"
    );

    // MySQL 8.0: its documented limits (src/facts/mysql/documented) give
    // every running value here from the file: the block size 1024 of
    // max_allowed_packet, the 1 GiB maximum of max_binlog_size, the 32 KiB
    // minimum of sort_buffer_size, the 4096 block of key_buffer_size.
    let vars = "version\t8.0.36\nmax_allowed_packet\t999424\nmax_binlog_size\t1073741824\nsort_buffer_size\t32768\nkey_buffer_size\t9998336\n";
    let dir = server(cnf, Some(vars), "1\t/var/lib/mysql\n", MEM_16G);
    let (drift, inputs) = drift_and_inputs(&audit::findings(&mysql_policies(), dir.path()));
    assert_eq!(drift, [(String::new(), Status::Pass)], "{drift:?}");
    for key in [
        "max_allowed_packet",
        "max_binlog_size",
        "sort_buffer_size",
        "key_buffer_size",
    ] {
        assert!(
            inputs.iter().any(|i| i.contains(&format!("`{key}`"))
                && i.contains("the server adjusted it")
                && i.contains("MySQL 8.0's documented limits")
                && i.contains("https://dev.mysql.com/doc/refman/8.0/en/")),
            "{key}: {inputs:#?}"
        );
    }
}

#[test]
fn connections_lowered_for_the_open_files_limit_are_not_drift() {
    let cnf =
        "[mysqld]\ndatadir = /var/lib/mysql\nmax_connections = 5000\ntable_open_cache = 4000\n";
    let vars = |ofl: &str, conns: &str| {
        format!("version\t10.11.19-MariaDB-0+deb12u1\nopen_files_limit\t{ofl}\nmax_connections\t{conns}\ntable_open_cache\t4000\ntable_open_cache_instances\t1\n")
    };
    let dir = server(
        cnf,
        Some(&vars("4096", "3686")),
        "1\t/var/lib/mysql\n",
        MEM_16G,
    );
    let (drift, inputs) = drift_and_inputs(&audit::findings(&mysql_policies(), dir.path()));
    assert_eq!(drift, [(String::new(), Status::Pass)], "{drift:?}");
    noted(&inputs, &["`max_connections`", "open-files limit 4096"]);
    // With room for every connection, a lower running value is a SET GLOBAL.
    let dir = server(
        cnf,
        Some(&vars("1048576", "3686")),
        "1\t/var/lib/mysql\n",
        MEM_16G,
    );
    let (drift, _) = drift_and_inputs(&audit::findings(&mysql_policies(), dir.path()));
    assert_eq!(drift, [("max_connections".to_string(), Status::Fail)]);
}

fn mycnf_effective(dir: &Path, key: &str) -> driftaudit::unstable::facts::Entry {
    let h = audit::host(dir);
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    facts.namespaces["mycnf_effective"]
        .get(key)
        .cloned()
        .unwrap_or_else(|| panic!("{key} not in mycnf_effective"))
}

fn number(e: &driftaudit::unstable::facts::Entry) -> Option<f64> {
    match e {
        driftaudit::unstable::facts::Entry::Set(s) => s.value.as_f64(),
        _ => None,
    }
}

const DPKG_MARIADB: &str = "Package: mariadb-common\nStatus: install ok installed\nVersion: 1:10.11.19-0+deb12u1\n\nPackage: mariadb-server-core\nStatus: install ok installed\nPriority: optional\nVersion: 1:10.11.19-0+deb12u1\n\nPackage: mysql-server-core-8.0\nStatus: deinstall ok config-files\nVersion: 8.0.36-0ubuntu0.22.04.1\n";

#[test]
fn versioned_groups_without_a_capture_use_the_installed_version_or_are_unknown() {
    let cnf = "[mysqld]\nwait_timeout = 100\n[mariadb-10.11]\nwait_timeout = 200\n[mysqld-8.0]\nwait_timeout = 300\n";
    // The dpkg database says MariaDB 10.11 is installed: [mariadb-10.11] applies.
    let dir = audit::snapshot(&[("/etc/my.cnf", cnf), ("/var/lib/dpkg/status", DPKG_MARIADB)]);
    assert_eq!(
        number(&mycnf_effective(dir.path(), "wait_timeout")),
        Some(200.0)
    );
    // MySQL 8.0 installed (older Ubuntu naming), read by its own groups.
    let dpkg = "Package: mysql-server-core-8.0\nStatus: install ok installed\nVersion: 8.0.36-0ubuntu0.22.04.1\n";
    let dir = audit::snapshot(&[("/etc/my.cnf", cnf), ("/var/lib/dpkg/status", dpkg)]);
    assert_eq!(
        number(&mycnf_effective(dir.path(), "wait_timeout")),
        Some(300.0)
    );
    // No package database: the upgrade-info file in the data directory.
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", cnf),
        ("/var/lib/mysql/mariadb_upgrade_info", "10.11.6-MariaDB\0"),
    ]);
    assert_eq!(
        number(&mycnf_effective(dir.path(), "wait_timeout")),
        Some(200.0)
    );
    // Nothing says which version: the value is unknown, never the 100 that
    // ignores the versioned groups.
    let dir = audit::snapshot(&[("/etc/my.cnf", cnf)]);
    match mycnf_effective(dir.path(), "wait_timeout") {
        driftaudit::unstable::facts::Entry::Unreadable { reason, evidence } => {
            assert!(reason.contains("[mysqld-8.0]"), "{reason}");
            assert!(reason.contains("version is unknown"), "{reason}");
            assert_eq!(evidence[0].to_string(), "/etc/my.cnf:6");
        }
        other => panic!("{other:?}"),
    }
    // A later line in a group every version reads decides it anyway.
    let dir = audit::snapshot(&[(
        "/etc/my.cnf",
        &format!("{cnf}[mysqld]\nwait_timeout = 50\n"),
    )]);
    assert_eq!(
        number(&mycnf_effective(dir.path(), "wait_timeout")),
        Some(50.0)
    );
}

#[test]
fn unique_prefixes_are_the_options_they_abbreviate() {
    let cnf = "[mysqld]\nkey_buffer = 64M\nthread_cache = 8\nmyisam-recover = BACKUP\nread = 1\n";
    let dir = server(
        cnf,
        Some("version\t10.11.19-MariaDB-0+deb12u1\n"),
        "1\t/var/lib/mysql\n",
        MEM_16G,
    );
    assert_eq!(
        number(&mycnf_effective(dir.path(), "key_buffer_size")),
        Some(67108864.0)
    );
    assert_eq!(
        number(&mycnf_effective(dir.path(), "thread_cache_size")),
        Some(8.0)
    );
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    let notes: Vec<&str> = facts.issues.iter().map(|i| i.message.as_str()).collect();
    assert!(
        notes.iter().any(
            |m| m.contains("`myisam-recover` is read as `myisam_recover_options`")
                && m.contains("error-prone")
        ),
        "{notes:#?}"
    );
    let amb = facts
        .issues
        .iter()
        .find(|i| i.message.contains("`read` is ambiguous"))
        .expect("ambiguous prefix reported");
    assert_eq!(amb.line, Some(5));
    assert_eq!(amb.level, driftaudit::unstable::facts::IssueLevel::Problem);
    assert!(amb.message.contains("refuses to start"), "{}", amb.message);
}

#[test]
fn skip_and_enable_with_zero_invert_like_the_server() {
    let cnf = "[mysqld]\nskip-local-infile = 0\nenable-innodb-file-per-table = 0\ndisable-innodb-stats-on-metadata = 1\nskip-symbolic-links = OFF\n";
    let dir = audit::snapshot(&[("/etc/my.cnf", cnf)]);
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    let get = |k: &str| match facts.namespaces["mycnf"].get(k) {
        Some(driftaudit::unstable::facts::Entry::Set(s)) => s.value.clone(),
        other => panic!("{k}: {other:?}"),
    };
    use driftaudit::unstable::value::Value;
    assert_eq!(get("local_infile"), Value::Bool(true));
    assert_eq!(get("innodb_file_per_table"), Value::Bool(false));
    assert_eq!(get("innodb_stats_on_metadata"), Value::Bool(false));
    assert_eq!(get("symbolic_links"), Value::Bool(false));
    assert!(
        !facts
            .issues
            .iter()
            .any(|i| i.message.contains("takes no value")),
        "{:#?}",
        facts.issues
    );
}

#[test]
fn values_the_server_refuses_say_it_will_not_start() {
    let cnf = "[mysqld]\nmax_connections = 77 ;comment\ninnodb_buffer_pool_load_abort\ninnodb_buffer_pool_size = 5M\nloose-max_allowed_packet = 1x\n";
    let dir = server(
        cnf,
        Some("version\t10.11.19-MariaDB-0+deb12u1\n"),
        "1\t/var/lib/mysql\n",
        MEM_16G,
    );
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    let problem = |line: usize| {
        facts
            .issues
            .iter()
            .find(|i| {
                i.line == Some(line)
                    && i.level == driftaudit::unstable::facts::IssueLevel::Problem
                    && i.message.contains("refuses to start")
            })
            .unwrap_or_else(|| panic!("line {line}: {:#?}", facts.issues))
    };
    assert!(problem(2).message.contains("unknown suffix"));
    assert!(problem(3).message.contains("requires an argument"));
    assert!(problem(4).message.contains("6 MiB"));
    for k in [
        "max_connections",
        "innodb_buffer_pool_load_abort",
        "innodb_buffer_pool_size",
    ] {
        assert!(
            matches!(
                mycnf_effective(dir.path(), k),
                driftaudit::unstable::facts::Entry::Unreadable { .. }
            ),
            "{k}"
        );
    }
    // `loose-` turns a refused value into an ignored line, not a failed start.
    let loose = facts
        .issues
        .iter()
        .find(|i| i.line == Some(5))
        .expect("loose line reported");
    says(&loose.message, "ignores this line");
    assert!(facts.namespaces["mycnf_effective"]
        .get("max_allowed_packet")
        .is_none());
}

/// An sosreport of an RPM host: sos's own layout (rpm.py's `installed-rpms`
/// root symlink into sos_commands/rpm/, `%-59{NVRA} %{INSTALLTIME:date}` rows
/// sorted with `sort -V`), my.cnf copied at its path.
fn sosreport(cnf: &str, rpm_file: &str, rows: &str, root_link: bool) -> tempfile::TempDir {
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", cnf),
        ("/version.txt", "sosreport: 4.5.6\n"),
        ("/sos_logs/sos.log", ""),
        ("/proc/meminfo", MEM_16G),
        (&format!("/sos_commands/rpm/{rpm_file}"), rows),
    ]);
    if root_link {
        std::os::unix::fs::symlink(
            format!("sos_commands/rpm/{rpm_file}"),
            dir.path().join("installed-rpms"),
        )
        .unwrap();
    }
    dir
}

const SOS4_RPMQ: &str = "sh_-c_rpm_--nodigest_-qa_--qf_-59_NVRA_INSTALLTIME_date_sort_-V";

fn rpm_rows(nvras: &[&str]) -> String {
    nvras
        .iter()
        .map(|n| format!("{n:<59} Tue 05 Mar 2024 10:12:44 AM UTC\n"))
        .collect()
}

#[test]
fn versioned_groups_on_rpm_hosts_and_sosreports_follow_the_installed_package() {
    let cnf = "[mysqld]\nwait_timeout = 100\n[mariadb-10.11]\nwait_timeout = 200\n[mysqld-8.0]\nwait_timeout = 300\n[mariadb-10.5]\nwait_timeout = 105\n";
    let wait = |dir: &Path| number(&mycnf_effective(dir, "wait_timeout"));
    // sos 4: installed-rpms at the root, MariaDB's own repository. Client
    // and utility packages (MariaDB-client, mariadb-server-utils) are not the server.
    let rows = rpm_rows(&[
        "MariaDB-client-10.11.6-1.el9.x86_64",
        "MariaDB-common-10.11.6-1.el9.x86_64",
        "MariaDB-server-10.11.6-1.el9.x86_64",
        "mariadb-server-utils-10.5.22-1.el9_2.x86_64",
        "zlib-1.2.11-40.el9.x86_64",
    ]);
    let dir = sosreport(cnf, SOS4_RPMQ, &rows, true);
    assert_eq!(wait(dir.path()), Some(200.0));
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    assert!(
        facts.issues.iter().any(|i| i.message.contains(
            "MariaDB 10.11.6 reads them, the version of the installed package MariaDB-server-10.11.6-1.el9.x86_64 (/installed-rpms:3)"
        )),
        "{:#?}",
        facts.issues
    );
    // RHEL's AppStream MariaDB 10.5, no root symlink (an archive extracted
    // without links): the file in sos_commands/rpm/ is read.
    let rows = rpm_rows(&[
        "mariadb-10.5.22-1.el9_2.x86_64",
        "mariadb-server-10.5.22-1.el9_2.x86_64",
        "mariadb-server-utils-10.5.22-1.el9_2.x86_64",
    ]);
    let dir = sosreport(cnf, SOS4_RPMQ, &rows, false);
    assert_eq!(wait(dir.path()), Some(105.0));
    // Oracle's MySQL community server, sos 3's file name.
    let sos3 = "sh_-c_rpm_--nodigest_-qa_--qf_NAME_-_VERSION_-_RELEASE_._ARCH_INSTALLTIME_date_awk_-F_printf_-59s_s_n_1_2_sort_-f";
    let rows = rpm_rows(&[
        "mysql-community-client-8.0.36-1.el7.x86_64",
        "mysql-community-server-8.0.36-1.el7.x86_64",
    ]);
    let dir = sosreport(cnf, sos3, &rows, false);
    assert_eq!(wait(dir.path()), Some(300.0));
    // sos's tab-separated package-data alone (Percona Server 8.0).
    let dir = sosreport(
        cnf,
        "package-data",
        "percona-server-server-8.0.36-28.1.el8.x86_64\tTue 05 Mar 2024 10:12:44 AM UTC\t1709633564\tPercona Development Team\tbuilder\t(none)\t(none)\n",
        false,
    );
    assert_eq!(wait(dir.path()), Some(300.0));

    // An RPM host snapshot: `driftaudit snapshot` records the server packages
    // of `rpm -qa` as captures/installed-rpms.
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", cnf),
        (
            "/captures/installed-rpms",
            "mariadb105-server-10.5.23-1.amzn2023.0.1.x86_64\n",
        ),
    ]);
    assert_eq!(wait(dir.path()), Some(105.0));
    // An older RPM host's daily /var/log/rpmpkgs (NAME-VERSION-RELEASE.ARCH.rpm).
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", cnf),
        (
            "/var/log/rpmpkgs",
            "MariaDB-common-10.11.6-1.el7.centos.x86_64.rpm\nMariaDB-server-10.11.6-1.el7.centos.x86_64.rpm\n",
        ),
    ]);
    assert_eq!(wait(dir.path()), Some(200.0));

    // An RPM-shaped tree with only the RPM database (binary headers
    // driftaudit does not read): the versioned value stays unknown, and a
    // rule reading it says what would decide it.
    let cnf =
        "[mysqld]\ninnodb_buffer_pool_size = 1G\n[mariadb-10.11]\ninnodb_buffer_pool_size = 12G\n";
    let dir = audit::snapshot(&[
        ("/etc/my.cnf", cnf),
        (
            "/etc/redhat-release",
            "Rocky Linux release 9.3 (Blue Onyx)\n",
        ),
        ("/var/lib/rpm/rpmdb.sqlite", "SQLite format 3\0\u{1}\u{2}"),
        ("/proc/meminfo", MEM_16G),
        ("/captures/du.txt", "1\t/var/lib/mysql\n"),
    ]);
    let f = audit::findings(&mysql_policies(), dir.path());
    let ram = one(&f, "mysql.pool-too-large-for-ram");
    assert_eq!(ram.status, Status::Unknown, "{ram:#?}");
    for want in [
        "[mariadb-10.11]",
        "version is unknown",
        "installed-rpms",
        "driftaudit snapshot --mysql",
    ] {
        assert!(
            ram.explanation.contains(want),
            "{want}: {}",
            ram.explanation
        );
    }
    // The same tree as an sosreport with the package list decides it.
    let dir = sosreport(
        cnf,
        SOS4_RPMQ,
        &rpm_rows(&["MariaDB-server-10.11.6-1.el9.x86_64"]),
        true,
    );
    assert_eq!(
        number(&mycnf_effective(dir.path(), "innodb_buffer_pool_size")),
        Some(12.0 * 1024.0 * 1024.0 * 1024.0)
    );
}

/// `driftaudit snapshot` on an RPM host runs `rpm -qa` (read-only) and keeps
/// only the server packages in captures/installed-rpms, which `check` then
/// reads for the version. Here `rpm` is a stand-in on `PATH` that prints what
/// `rpm -qa --qf '%{NVRA}\n'` prints and refuses any other arguments.
#[test]
fn snapshot_records_the_rpm_server_package() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let rpm = bin.join("rpm");
    std::fs::write(
        &rpm,
        "#!/bin/sh\n[ \"$*\" = \"-qa --nodigest --nosignature --qf %{NVRA}\n\" ] || { echo \"unexpected: $*\" >&2; exit 9; }\nprintf 'bash-5.1.8-6.el9.x86_64\\nMariaDB-server-10.11.6-1.el9.x86_64\\nMariaDB-client-10.11.6-1.el9.x86_64\\n'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&rpm, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tmp.path().join("snap");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["snapshot", "--out"])
        .arg(&out)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(out.join("captures/installed-rpms")).unwrap(),
        "MariaDB-server-10.11.6-1.el9.x86_64\n"
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("snapshot.json")).unwrap()).unwrap();
    assert!(
        meta["unreadable"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| !u["path"].as_str().unwrap_or("").contains("installed-rpms")),
        "{meta}"
    );
    // The snapshot reads as the installed version.
    let dir = audit::snapshot(&[(
        "/etc/my.cnf",
        "[mysqld]\nwait_timeout = 100\n[mariadb-10.11]\nwait_timeout = 200\n",
    )]);
    std::fs::create_dir_all(dir.path().join("captures")).unwrap();
    std::fs::copy(
        out.join("captures/installed-rpms"),
        dir.path().join("captures/installed-rpms"),
    )
    .unwrap();
    assert_eq!(
        number(&mycnf_effective(dir.path(), "wait_timeout")),
        Some(200.0)
    );
}

/// A runtime capture of a version driftaudit has no limits table for (MySQL
/// 5.6, MariaDB 10.4: neither generated nor documented): a running value a block size, minimum
/// or maximum could explain is never "SET GLOBAL or not restarted" drift.
/// Where the one modelled table (MariaDB 10.11) gives exactly the running
/// value it passes with a note naming the missing table; where only some
/// limit of that version could explain it, the drift rule is unknown and
/// says what would decide it; a value raised above a configured value no
/// minimum explains is still drift.
#[test]
fn runtime_values_of_versions_without_a_limits_table_are_not_set_global_drift() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\nmax_allowed_packet = 1000000\nsort_buffer_size = 100\nmax_binlog_size = 2G\nmax_connections = 500\nthread_cache_size = 1000\n";
    for (version, label) in [
        ("5.6.51", "MySQL 5.6.51"),
        ("10.4.34-MariaDB-1:10.4.34+maria~ubu2004", "MariaDB 10.4.34"),
    ] {
        let vars = format!("version\t{version}\nmax_allowed_packet\t999424\nsort_buffer_size\t32768\nmax_binlog_size\t1073741824\nmax_connections\t1000\nthread_cache_size\t256\n");
        let dir = server(cnf, Some(&vars), "1\t/var/lib/mysql\n", MEM_16G);
        let f = audit::findings(&mysql_policies(), dir.path());
        let (drift, inputs) = drift_and_inputs(&f);
        assert_eq!(
            drift,
            [
                ("max_connections".to_string(), Status::Fail),
                ("sort_buffer_size".to_string(), Status::Unknown),
                ("thread_cache_size".to_string(), Status::Unknown),
            ],
            "{version}: {f:#?}"
        );
        for key in ["max_allowed_packet", "max_binlog_size"] {
            assert!(
                inputs.iter().any(|i| i.contains(&format!("`{key}`"))
                    && i.contains("the server may have adjusted it")
                    && i.contains(&format!("no limits table for {label}"))
                    && i.contains("MariaDB 10.11's limits")),
                "{version} {key}: {inputs:#?}"
            );
        }
        for (key, could) in [
            ("sort_buffer_size", "a minimum could raise it"),
            (
                "thread_cache_size",
                "a maximum or block size could lower it",
            ),
        ] {
            let u = f
                .iter()
                .find(|x| x.rule == "mysql.config-runtime-drift" && x.subject == [key])
                .unwrap();
            for want in [
                "the server may have adjusted it",
                &format!("no limits table for {label}"),
                could,
                "SET GLOBAL",
                "information_schema.SYSTEM_VARIABLES",
            ] {
                assert!(u.explanation.contains(want), "{want}: {}", u.explanation);
            }
            assert_eq!(
                u.evidence[0].to_string().split(':').next(),
                Some("/etc/my.cnf")
            );
        }
        // Nothing the server may have adjusted is called drift.
        for x in f
            .iter()
            .filter(|x| x.rule == "mysql.config-runtime-drift" && x.status == Status::Fail)
        {
            assert_eq!(x.subject, ["max_connections"], "{x:#?}");
        }
    }
}

/// `datadir = /` is the root directory: the data directory fact was an empty
/// path, and unknown findings about its volume read "holds: : no mount table".
#[test]
fn datadir_root_is_the_root_not_an_empty_path() {
    let dir = audit::snapshot(&[("/etc/my.cnf", "[mysqld]\ndatadir = /\n")]);
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    assert_eq!(
        facts.facts["mysql_datadir"],
        Ok(driftaudit::unstable::value::Value::Str("/".into()))
    );
    for f in audit::findings(&mysql_policies(), dir.path()) {
        assert!(!f.explanation.contains(": :"), "{}", f.explanation);
    }
}

/// Issue 48: MySQL 8.0.3+ with `innodb_dedicated_server = ON` sizes the
/// pool from the memory it detects (MySQL 8.0 and 8.4 manual, "Enabling
/// Automatic InnoDB Configuration for a Dedicated MySQL Server", table
/// 17.8: less than 1 GB, 128 MB (the default); 1 GB to 4 GB, RAM x 0.5;
/// more than 4 GB, RAM x 0.75). Before, mysql-sizing.pool-default judged
/// such a host by the 128 MiB compiled default. Here each row of the table
/// on a MySQL 8.0 host known from its package (no runtime capture): the
/// pool the rule states is the table's.
#[test]
fn a_dedicated_mysql_server_sizes_its_pool_from_ram_by_the_manual_table() {
    const DPKG_MYSQL80: &str = "Package: mysql-server-core-8.0\nStatus: install ok installed\nVersion: 8.0.36-0ubuntu0.22.04.1\n";
    let rules = audit::only(&["mysql-sizing.pool-default"]);
    let mib = 1024.0 * 1024.0;
    // (RAM in MiB, data directory in MiB, the pool table 17.8 gives, verdict)
    for (ram, data, pool, want) in [
        (512.0, 1024.0, 128.0 * mib, Status::Fail),
        (2048.0, 1536.0, 0.5 * 2048.0 * mib, Status::Fail),
        (4096.0, 4096.0, 0.5 * 4096.0 * mib, Status::Fail),
        (65536.0, 40960.0, 0.75 * 65536.0 * mib, Status::Pass),
    ] {
        let meminfo = format!("MemTotal:       {} kB\n", ram as u64 * 1024);
        let du = format!("{}\t/var/lib/mysql\n", (data * mib) as u64);
        let dir = audit::snapshot(&[
            (
                "/etc/mysql/my.cnf",
                "[mysqld]\ninnodb_dedicated_server = ON\n",
            ),
            ("/var/lib/dpkg/status", DPKG_MYSQL80),
            ("/proc/meminfo", &meminfo),
            ("/captures/du.txt", &du),
        ]);
        let f = audit::findings(&rules, dir.path());
        let p = one(&f, "mysql-sizing.pool-default");
        assert_eq!(p.status, want, "{ram} MiB of RAM: {p:#?}");
        if want == Status::Fail {
            says(&p.explanation, &format!("({} bytes)", pool as u64));
            says(&p.explanation, "innodb_dedicated_server is ON");
        }
    }
    // without the option, the same 64 GiB host runs the 128 MiB default
    let dir = audit::snapshot(&[
        ("/etc/mysql/my.cnf", "[mysqld]\n"),
        ("/var/lib/dpkg/status", DPKG_MYSQL80),
        ("/proc/meminfo", "MemTotal:       67108864 kB\n"),
        ("/captures/du.txt", "42949672960\t/var/lib/mysql\n"),
    ]);
    let f = audit::findings(&rules, dir.path());
    let p = one(&f, "mysql-sizing.pool-default");
    assert_eq!(p.status, Status::Fail);
    says(&p.explanation, "(134217728 bytes)");
}

/// Issue 48: on MariaDB 10.3, a line without a table of compiled defaults,
/// a variable no file sets is unknown at the next start, and the unknown
/// names what decides it (that line's compiled default, or a line in the
/// option files), not the `SHOW GLOBAL VARIABLES` capture the snapshot
/// already holds. A default every line documents (innodb_flush_log_at_trx_commit
/// = 1) decides the verdict instead.
#[test]
fn mariadb_10_3_unknowns_name_the_compiled_default_not_the_capture_it_has() {
    let vars = "version\t10.3.39-MariaDB-0+deb10u2\ninnodb_buffer_pool_size\t2147483648\nlog_bin\tON\nsync_binlog\t1\n";
    let dir = server(
        "[mysqld]\ninnodb_buffer_pool_size = 2G\nlog_bin = mysql-bin\n",
        Some(vars),
        "1073741824\t/var/lib/mysql\n",
        MEM_16G,
    );
    let f = audit::findings(&audit::only(&["mysql-sizing.*"]), dir.path());
    let binlog = one(&f, "mysql-sizing.binlog-durability");
    assert_eq!(binlog.status, Status::Unknown, "{binlog:#?}");
    for part in [
        "the next start applies the compiled default of MariaDB 10.3.39",
        "set it in an option file",
    ] {
        assert!(
            binlog.explanation.contains(part),
            "{part}: {}",
            binlog.explanation
        );
    }
    assert!(
        !binlog.explanation.contains("SHOW GLOBAL VARIABLES'` as"),
        "asks for a capture the snapshot has: {}",
        binlog.explanation
    );
    assert_eq!(
        one(&f, "mysql-sizing.commit-durability").status,
        Status::Pass
    );
}
