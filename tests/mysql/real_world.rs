//! Issue 31, MySQL and MariaDB: the verdicts an admin would give on shapes
//! the other tests do not hold: MySQL 8's persisted variables
//! (`mysqld-auto.cnf`, SET PERSIST / PERSIST_ONLY), runtime drift judged with
//! a version's documented limits (a difference only a documented limit or
//! adjustment can produce is a note, anything else fails), the start-up
//! adjustments mysqld derives (open-files limit), enum values compared as
//! the server compares them, and Galera's key=value provider options.

use crate::common;
use crate::common::cli::says;

use std::path::Path;

use crate::common::audit;
use driftaudit::unstable::report::{Finding, Status};

/// config-runtime-drift findings as (subject, status), and the input notes.
pub(crate) fn drift(f: &[Finding]) -> (Vec<(String, Status)>, Vec<String>) {
    (
        f.iter()
            .filter(|x| x.rule == "mysql.config-runtime-drift")
            .map(|x| (x.subject.join(","), x.status))
            .collect(),
        f.iter()
            .filter(|x| x.rule == "driftaudit.input")
            .map(|x| format!("{:?} {}", x.status, x.explanation))
            .collect(),
    )
}

/// Some note of `notes` (input findings' texts) holds every one of `parts`.
#[track_caller]
pub(crate) fn noted(notes: &[String], parts: &[&str]) {
    assert!(
        notes.iter().any(|n| parts.iter().all(|p| n.contains(p))),
        "no note holds all of {parts:?}: {notes:#?}"
    );
}

fn one<'a>(f: &'a [Finding], subject: &str) -> &'a Finding {
    f.iter()
        .find(|x| x.rule == "mysql.config-runtime-drift" && x.subject == [subject])
        .unwrap_or_else(|| panic!("no drift finding for {subject}: {f:#?}"))
}

const MEM: &str = "MemTotal:       16365876 kB\n";

fn mysql8(cnf: &str, vars: &str, auto: Option<&str>) -> tempfile::TempDir {
    let mut files = vec![
        ("/etc/my.cnf", cnf),
        ("/proc/meminfo", MEM),
        ("/captures/du.txt", "1\t/var/lib/mysql\n"),
        ("/captures/mysql-variables.tsv", vars),
    ];
    if let Some(a) = auto {
        files.push(("/var/lib/mysql/mysqld-auto.cnf", a));
    }
    common::snapshot_tree(&files)
}

/// The persisted file as MySQL 8.0.36 writes it (version 2, one line):
/// max_connections with SET PERSIST, innodb_log_file_size... with
/// PERSIST_ONLY (a read-only variable: taken at the next restart).
const AUTO_V2: &str = r#"{"Version": 2, "mysql_dynamic_variables": {"max_connections": {"Value": "800", "Metadata": {"Host": "localhost", "User": "root", "Timestamp": 1733300000000000}}}, "mysql_static_variables": {"innodb_buffer_pool_instances": {"Value": "4", "Metadata": {"Host": "localhost", "User": "root", "Timestamp": 1733300000000000}}}}"#;

/// Before: mysqld-auto.cnf was not read. A server running the values it
/// persisted with SET PERSIST was reported as drifting from its option
/// files, and a PERSIST_ONLY value waiting for a restart was missed.
#[test]
fn mysql_8_persisted_variables_are_the_last_option_source() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\nmax_connections = 500\ninnodb_buffer_pool_instances = 8\n";
    let vars = "version\t8.0.36\nmax_connections\t800\ninnodb_buffer_pool_instances\t8\n";
    let dir = mysql8(cnf, vars, Some(AUTO_V2));
    let f = audit::findings(&audit::only(&["mysql.*"]), dir.path());
    let (d, _) = drift(&f);
    // max_connections runs as persisted: no drift; the pool instances wait
    // for a restart: drift, saying so
    assert_eq!(
        d,
        [("innodb_buffer_pool_instances".to_string(), Status::Fail)],
        "{f:#?}"
    );
    let pending = one(&f, "innodb_buffer_pool_instances");
    assert_eq!(pending.expected.as_deref(), Some("4"));
    assert_eq!(pending.actual.as_deref(), Some("8"));
    assert!(
        pending.explanation.contains("SET PERSIST_ONLY")
            && pending.explanation.contains("next restart")
            && pending
                .explanation
                .contains("mysql_static_variables.innodb_buffer_pool_instances"),
        "{}",
        pending.explanation
    );
    assert_eq!(
        pending.evidence[0].to_string(),
        "/var/lib/mysql/mysqld-auto.cnf:1"
    );
    // the option file's line is named as the assignment it overrides
    assert!(
        pending
            .explanation
            .contains("the option files set 8 at /etc/my.cnf:4"),
        "{}",
        pending.explanation
    );

    // The same file beside a MariaDB server is not read: MariaDB has no
    // persisted variables, so the option files alone configure it.
    let vars = "version\t10.11.19-MariaDB-0+deb12u1\nmax_connections\t800\ninnodb_buffer_pool_instances\t8\n";
    let dir = mysql8(cnf, vars, Some(AUTO_V2));
    let (d, _) = drift(&audit::findings(&audit::only(&["mysql.*"]), dir.path()));
    assert_eq!(
        d,
        [("max_connections".to_string(), Status::Fail)],
        "MariaDB reads no mysqld-auto.cnf"
    );

    // persisted_globals_load = OFF: the server ignores the file
    let off = format!("{cnf}persisted_globals_load = OFF\n");
    let vars = "version\t8.0.36\nmax_connections\t500\ninnodb_buffer_pool_instances\t8\n";
    let dir = mysql8(&off, vars, Some(AUTO_V2));
    let f = audit::findings(&audit::only(&["mysql.*"]), dir.path());
    let (d, notes) = drift(&f);
    assert_eq!(d, [(String::new(), Status::Pass)], "{f:#?}");
    noted(&notes, &["persisted_globals_load is OFF"]);
}

/// A corrupt mysqld-auto.cnf is a problem with its place (MySQL refuses to
/// start), never silently ignored.
#[test]
fn a_corrupt_persisted_file_is_a_problem_with_its_line() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\n";
    let vars = "version\t8.0.36\nmax_connections\t151\n";
    let dir = mysql8(
        cnf,
        vars,
        Some("{\"Version\": 2,\n\"mysql_dynamic_variables\": {\n"),
    );
    let (_, notes) = drift(&audit::findings(&audit::only(&["mysql.*"]), dir.path()));
    assert!(
        notes.iter().any(|n| n.contains("mysqld-auto.cnf")
            && n.contains("not valid JSON")
            && n.contains("refuses to start")),
        "{notes:#?}"
    );
}

/// A snapshot copies mysqld-auto.cnf with the value of a secret variable
/// persisted in clear (before 8.0.29) replaced; a file without one is
/// copied byte for byte so its lines stay true.
#[test]
fn a_snapshot_redacts_secrets_persisted_in_clear() {
    use driftaudit::unstable::snapshot::redact_file;
    let path = "/var/lib/mysql/mysqld-auto.cnf";
    let clear = r#"{"Version": 1, "mysql_server": {"keyring_hashicorp_secret_id": {"Value": "s3cr3t-approle", "Metadata": {"Timestamp": 1, "User": "root", "Host": "localhost"}}}}"#;
    let out = String::from_utf8(redact_file(path, clear.as_bytes())).unwrap();
    assert!(!out.contains("s3cr3t-approle"), "{out}");
    assert!(out.contains("<redacted>"), "{out}");
    assert_eq!(redact_file(path, AUTO_V2.as_bytes()), AUTO_V2.as_bytes());
    let broken = redact_file(path, b"{\"Version\": 1, \"mysql_server\": {\"x\": \"pw");
    assert_eq!(broken, b"<redacted>\n");
}

/// The issue's MySQL 8.0.36 host. Before: with no limits table for 8.0 a
/// pool shrunk with SET GLOBAL from 4G to 2G was `unknown` ("a maximum or
/// block size could lower it"), so a real shrink never failed CI. Now the
/// version's documented limits decide: nothing documented turns 4G into 2G
/// (the pool is rounded *up* to chunk × instances, its maximum is 2^64-1),
/// so it is drift; max_connections at the compiled default 151 with 500
/// configured and an open-files limit that allows 500 is the server that
/// was not restarted; a pool the chunk rounding explains is a note.
#[test]
fn mysql_8_runtime_drift_fails_a_pool_shrink_and_an_unrestarted_server() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\ninnodb_buffer_pool_size = 4G\nmax_connections = 500\nthread_cache_size = 1000\n";
    let vars = "version\t8.0.36\ninnodb_buffer_pool_size\t2147483648\ninnodb_buffer_pool_chunk_size\t134217728\ninnodb_buffer_pool_instances\t8\nmax_connections\t151\nopen_files_limit\t10000\ntable_open_cache\t4000\nthread_cache_size\t256\n";
    let dir = mysql8(cnf, vars, None);
    let f = audit::findings(&audit::only(&["mysql.*"]), dir.path());
    let (d, _) = drift(&f);
    assert_eq!(
        d,
        [
            ("innodb_buffer_pool_size".to_string(), Status::Fail),
            ("max_connections".to_string(), Status::Fail),
            ("thread_cache_size".to_string(), Status::Fail),
        ],
        "{f:#?}"
    );
    let pool = one(&f, "innodb_buffer_pool_size");
    says(
        &pool.explanation,
        "no documented limit of MySQL 8.0 gives 2147483648",
    );
    let conns = one(&f, "max_connections");
    for want in ["compiled default 151", "not restarted"] {
        assert!(
            conns.explanation.contains(want),
            "{want}: {}",
            conns.explanation
        );
    }

    // 4500M with 8 instances of 128 MiB chunks runs as 5G: the rounding is
    // the server's, noted with its numbers, and passes.
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\ninnodb_buffer_pool_size = 4500M\n";
    let vars = "version\t8.0.36\ninnodb_buffer_pool_size\t5368709120\ninnodb_buffer_pool_chunk_size\t134217728\ninnodb_buffer_pool_instances\t8\n";
    let dir = mysql8(cnf, vars, None);
    let f = audit::findings(&audit::only(&["mysql.*"]), dir.path());
    let (d, _) = drift(&f);
    assert_eq!(d, [(String::new(), Status::Pass)], "{f:#?}");
    let h = audit::host(dir.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    let eff = facts.namespaces["mycnf_effective"].get("innodb_buffer_pool_size");
    let Some(driftaudit::unstable::facts::Entry::Set(s)) = eff else {
        panic!("{eff:?}")
    };
    let note = s.note.as_deref().unwrap_or_default();
    says(
        note,
        "rounds the pool up to a multiple of chunk size × instances (128 MiB × 8)",
    );
}

/// mysqld lowers max_connections to `open_files_limit - 810` and
/// table_open_cache to `max((open_files_limit - 10 - max_connections) / 2,
/// 400)` when it cannot get the descriptors it asked for ("Changed limits:
/// max_open_files: 1024 ... max_connections: 214 (requested 1000) ...
/// table_open_cache: 400 (requested 2000)", MySQL 5.6 to 8.4): exactly
/// those values are the server's, a note; any other lower value is drift.
#[test]
fn mysql_lowers_connections_for_the_open_files_limit_exactly_as_mysqld_computes() {
    let cnf =
        "[mysqld]\ndatadir = /var/lib/mysql\nmax_connections = 1000\ntable_open_cache = 2000\n";
    fn vars(conns: &str, cache: &str) -> String {
        format!("version\t8.0.36\nopen_files_limit\t1024\nmax_connections\t{conns}\ntable_open_cache\t{cache}\n")
    }
    let dir = mysql8(cnf, &vars("214", "400"), None);
    let (d, notes) = drift(&audit::findings(&audit::only(&["mysql.*"]), dir.path()));
    assert_eq!(d, [(String::new(), Status::Pass)], "{notes:#?}");
    assert!(
        notes.iter().any(|n| n.contains("`max_connections`")
            && n.contains("the open-files limit 1024 leaves 214 connections")),
        "{notes:#?}"
    );
    noted(&notes, &["`table_open_cache`", "= 400 tables"]);
    // 300 connections is not what 1024 open files give: drift
    let dir = mysql8(cnf, &vars("300", "400"), None);
    let (d, _) = drift(&audit::findings(&audit::only(&["mysql.*"]), dir.path()));
    assert_eq!(d, [("max_connections".to_string(), Status::Fail)]);
}

/// Before: text compared as written, so `binlog_format = row` (running as
/// `ROW`) was drift, `optimizer_switch` was left out of the comparison, and
/// a Galera node's `wsrep_provider_options` (the running value lists every
/// provider default) always drifted. Now: enums and sets without case or
/// order, booleans in every spelling, key=value lists by the keys the file
/// sets; a listed key that runs otherwise is still drift, and says which.
#[test]
fn text_values_compare_as_the_server_compares_them() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\nbinlog_format = row\ntransaction_isolation = read-committed\nsql_mode = strict_trans_tables\noptimizer_switch = 'index_merge=off,mrr=ON'\n[galera]\nwsrep_on = 1\nwsrep_provider_options = \"gcache.size=1G; gcs.fc_limit = 32\"\n";
    let provider = "base_dir = /var/lib/mysql/; base_host = 10.0.0.1; evs.keepalive_period = PT1S; gcache.dir = /var/lib/mysql/; gcache.size = 1073741824; gcs.fc_limit = 32; gcs.fc_factor = 1.0; pc.ignore_sb = false";
    let vars = |fc: &str| {
        format!(
            "version\t10.11.19-MariaDB-0+deb12u1\nbinlog_format\tROW\ntransaction_isolation\tREAD-COMMITTED\noptimizer_switch\tindex_merge=off,index_merge_union=on,mrr=on,mrr_cost_based=off\nwsrep_on\tON\nwsrep_provider_options\t{}\n",
            provider.replace("gcs.fc_limit = 32", &format!("gcs.fc_limit = {fc}"))
        )
    };
    let audit_at = |fc: &str| {
        let dir = common::snapshot_tree(&[
            ("/etc/my.cnf", cnf),
            ("/proc/meminfo", MEM),
            ("/captures/du.txt", "1\t/var/lib/mysql\n"),
            ("/captures/mysql-variables.tsv", &vars(fc)),
        ]);
        let f = audit::findings(&audit::only(&["mysql.*"]), dir.path());
        (drift(&f).0, f)
    };
    let (d, f) = audit_at("32");
    assert_eq!(d, [(String::new(), Status::Pass)], "{f:#?}");

    // gcs.fc_limit changed at runtime: drift, naming the key
    let (d, f) = audit_at("160");
    assert_eq!(d, [("wsrep_provider_options".to_string(), Status::Fail)]);
    let x = one(&f, "wsrep_provider_options");
    says(&x.explanation, "gcs.fc_limit=32 runs as gcs.fc_limit=160");
}

/// MySQL 8.4 (no table before issue 48): a `PERSIST_ONLY` value of a
/// variable the 8.4 manual documents as not dynamic, running otherwise, was
/// `unknown` ("the server may have adjusted it"). It is a pending restart:
/// a failing drift finding naming the manual's row and the restart.
#[test]
fn a_persist_only_value_on_mysql_8_4_is_a_pending_restart_not_unknown() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\n";
    let auto = r#"{"Version": 2, "mysql_static_variables": {"innodb_read_io_threads": {"Value": "16", "Metadata": {"Host": "localhost", "User": "root", "Timestamp": 1733300000000000}}}}"#;
    let vars = "version\t8.4.3\ninnodb_read_io_threads\t4\n";
    let dir = mysql8(cnf, vars, Some(auto));
    let f = audit::findings(&audit::only(&["mysql.config-runtime-drift"]), dir.path());
    let (d, _) = drift(&f);
    assert_eq!(
        d,
        [("innodb_read_io_threads".to_string(), Status::Fail)],
        "{f:#?}"
    );
    let pending = one(&f, "innodb_read_io_threads");
    assert!(
        pending.explanation.contains("pending restart")
            && pending
                .explanation
                .contains("MySQL 8.4's manual documents `innodb_read_io_threads` as not dynamic")
            && pending
                .explanation
                .contains("https://dev.mysql.com/doc/refman/8.4/en/"),
        "{}",
        pending.explanation
    );
}

/// A value MySQL 8 persisted with SET PERSIST wins over every option file
/// and lives in JSON the server rewrites itself. Keeping the running value
/// (`fix --prefer running`) must not patch mysqld-auto.cnf as an option
/// file (that would corrupt it) nor edit my.cnf (the persisted value would
/// still win): it is `SET PERSIST` (PERSIST_ONLY and a restart for a
/// read-only variable), and the plan is proven on a copy.
#[test]
fn fix_keeps_a_persisted_value_with_set_persist_not_a_file_edit() {
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\nmax_connections = 500\n";
    let auto = r#"{"Version": 2, "mysql_dynamic_variables": {"max_connections": {"Value": "800", "Metadata": {"Host": "localhost", "User": "root", "Timestamp": 1733300000000000}}}}"#;
    let vars = "version\t8.0.36\nmax_connections\t600\n";
    let dir = mysql8(cnf, vars, Some(auto));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["fix", "--snapshot"])
        .arg(dir.path())
        .args([
            "--only",
            "mysql.config-runtime-drift",
            "--prefer",
            "running",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(v["patch"], "", "no file is patched: {v}");
    let cmds = common::cli::strs(&v["runtime"], "command");
    assert!(
        cmds.iter()
            .any(|c| c.contains("SET PERSIST max_connections = 600")),
        "{cmds:?}"
    );
    assert!(
        v["proof"]["new_failures"].as_array().unwrap().is_empty()
            && v["proof"]["still_failing"]
                .as_array()
                .is_none_or(|a| a.is_empty()),
        "{}",
        v["proof"]
    );
}

/// The value of a `mycnf_effective` key as text.
fn effective(dir: &Path, key: &str) -> Option<String> {
    let h = audit::host(dir);
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    match facts.namespaces["mycnf_effective"].get(key) {
        Some(driftaudit::unstable::facts::Entry::Set(s)) => Some(s.raw.clone()),
        _ => None,
    }
}

/// Before: only /etc/my.cnf and /etc/mysql/my.cnf were read, whatever the
/// service said. mysys also reads `$MYSQL_HOME/my.cnf`, the
/// `--defaults-extra-file` of the command line and `~/.my.cnf` of the user
/// the server runs as, in that order; a `--defaults-file` replaces them all.
/// The order is held to the real `my_print_defaults` (same files, same
/// environment); the unit's `User=`, `Environment=`, `ExecStart=` and
/// `ProtectHome=` decide which files those are on the audited host.
#[test]
fn the_service_unit_decides_which_option_files_the_server_reads() {
    let mhome = "[mysqld]\nthread_cache_size = 11\nread_buffer_size = 131072\n";
    let extra = "[mysqld]\nthread_cache_size = 22\nsort_buffer_size = 262144\n";
    let home = "[mysqld]\nsort_buffer_size = 524288\nread_buffer_size = 262144\n";
    if let Some(mpd) = common::tool("my_print_defaults", "mariadb-client") {
        let t = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = t.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, s).unwrap();
            f
        };
        w("mhome/my.cnf", mhome);
        let e = w("extra.cnf", extra);
        w("home/.my.cnf", home);
        let o = std::process::Command::new(mpd)
            .arg(format!("--defaults-extra-file={}", e.display()))
            .arg("mysqld")
            .env("HOME", t.path().join("home"))
            .env("MYSQL_HOME", t.path().join("mhome"))
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        let last = |k: &str| {
            out.lines()
                .rev()
                .find_map(|l| l.strip_prefix(&format!("--{k}=")))
                .map(str::to_string)
        };
        // the reference: extra over MYSQL_HOME, ~/.my.cnf over both
        assert_eq!(last("thread_cache_size").as_deref(), Some("22"), "{out}");
        assert_eq!(last("sort_buffer_size").as_deref(), Some("524288"), "{out}");
        assert_eq!(last("read_buffer_size").as_deref(), Some("262144"), "{out}");
    }
    let unit = "[Unit]\nDescription=MariaDB\n[Service]\nUser=dbuser\nEnvironment=MYSQL_HOME=/srv/mhome\nExecStart=/usr/sbin/mariadbd --defaults-extra-file=/etc/extra.cnf $MYSQLD_OPTS\n";
    let passwd = "root:x:0:0:root:/root:/bin/sh\ndbuser:x:999:999::/srv/home:/usr/sbin/nologin\n";
    let tree = |unit: &str, home_dir: &str| {
        common::snapshot_tree(&[
            ("/etc/my.cnf", "[mysqld]\ndatadir = /var/lib/mysql\n"),
            ("/lib/systemd/system/mariadb.service", unit),
            ("/etc/passwd", &passwd.replace("/srv/home", home_dir)),
            ("/srv/mhome/my.cnf", mhome),
            ("/etc/extra.cnf", extra),
            (&format!("{home_dir}/.my.cnf"), home),
        ])
    };
    let d = tree(unit, "/srv/home");
    assert_eq!(
        effective(d.path(), "thread_cache_size").as_deref(),
        Some("22")
    );
    assert_eq!(
        effective(d.path(), "sort_buffer_size").as_deref(),
        Some("524288")
    );
    assert_eq!(
        effective(d.path(), "read_buffer_size").as_deref(),
        Some("262144")
    );

    // ProtectHome=true hides /home: that ~/.my.cnf is not read, and said so
    let d = tree(&format!("{unit}ProtectHome=true\n"), "/home/dbuser");
    assert_eq!(
        effective(d.path(), "sort_buffer_size").as_deref(),
        Some("262144")
    );
    let h = audit::host(d.path());
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    assert!(
        facts
            .issues
            .iter()
            .any(|i| i.path == "/home/dbuser/.my.cnf" && i.message.contains("ProtectHome=true")),
        "{:#?}",
        facts.issues
    );

    // a drop-in's --defaults-file replaces every other file
    let d = tree(unit, "/srv/home");
    let dropin = d
        .path()
        .join("etc/systemd/system/mariadb.service.d/override.conf");
    std::fs::create_dir_all(dropin.parent().unwrap()).unwrap();
    std::fs::write(
        &dropin,
        "[Service]\nExecStart=\nExecStart=/usr/sbin/mariadbd --defaults-file=/etc/extra.cnf\n",
    )
    .unwrap();
    assert_eq!(
        effective(d.path(), "thread_cache_size").as_deref(),
        Some("22")
    );
    assert_eq!(effective(d.path(), "read_buffer_size"), None);
    assert_eq!(
        effective(d.path(), "datadir"),
        None,
        "/etc/my.cnf is not read"
    );
}
