//! Real-server test: start Debian's MariaDB on a unix socket in a temp dir
//! with option files written here, capture `SHOW GLOBAL VARIABLES`, and check
//! that driftaudit's `mycnf_effective` predictions equal what the server runs
//! with. The same files are laid out in a snapshot (same absolute include
//! paths) so driftaudit reads them through a confined snapshot host.

use std::path::Path;
use std::process::Command;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{gather, Entry, Needs};
use driftaudit::unstable::host::Host;
use driftaudit::unstable::report::Status;

use crate::common;
use crate::common::audit;
use crate::common::mariadb::{self, tools, Args, Server, Started, Tools};
use crate::common::tree;

/// driftaudit's option table for the installed version against the running
/// server's information_schema.SYSTEM_VARIABLES: every numeric limit and
/// whether an option needs a value.
fn table_matches_system_variables(work: &Path) -> Vec<String> {
    use driftaudit::unstable::facts::mysql::limits::{table_for, Arg};
    use driftaudit::unstable::facts::mysql::ServerVersion;
    let text = std::fs::read_to_string(work.join("system-variables.tsv")).unwrap();
    let (version, word) = mariadb::version(&common::find_tool("mariadbd").unwrap());
    let v = ServerVersion::parse(&word).expect("mariadbd --version");
    let Some(table) = table_for(&v) else {
        return vec![format!(
            "no option table for {version}: run scripts/mysql-limits"
        )];
    };
    let mut bad = Vec::new();
    let mut numeric = 0;
    for row in text.lines() {
        let f: Vec<&str> = row.split('\t').collect();
        let [name, _ty, lo, hi, block, arg, _read_only] = f[..] else {
            continue;
        };
        let Some(spec) = table.get(name) else {
            // Variables that are not options (version, hostname, ...).
            continue;
        };
        let num = |s: &str| s.parse::<f64>().ok();
        if num(lo).is_some() {
            numeric += 1;
        }
        if spec.min != num(lo) || spec.max != num(hi) || spec.block != block.parse().ok() {
            bad.push(format!(
                "{name}: table min {:?} max {:?} block {:?}, server {lo} {hi} {block}",
                spec.min, spec.max, spec.block
            ));
        }
        let want = match arg {
            "REQUIRED" => Some(Arg::Required),
            "OPTIONAL" => Some(Arg::Optional),
            "NONE" => Some(Arg::None),
            _ => None,
        };
        if want.is_some_and(|w| w != spec.arg) {
            bad.push(format!("{name}: table {:?}, server {arg}", spec.arg));
        }
    }
    if numeric < 250 {
        bad.push(format!("only {numeric} numeric variables compared"));
    }
    bad.extend(dynamic_table_matches_read_only(&text));
    bad
}

/// `driftaudit fix` writes `SET GLOBAL` for a variable its server's
/// documented table calls dynamic, and a commented restart for the rest.
/// The running server says which are dynamic (`READ_ONLY = NO`): every
/// row of its documented table must say the same, and every variable the
/// shipped policies name that is dynamic here must be a dynamic row (else
/// `fix` would ask for a needless restart).
fn dynamic_table_matches_read_only(text: &str) -> Vec<String> {
    use driftaudit::unstable::facts::mysql::{documented, ServerVersion};
    let read_only: std::collections::BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|row| {
            let f: Vec<&str> = row.split('\t').collect();
            Some((*f.first()?, *f.get(6)?))
        })
        .collect();
    let (_, word) = mariadb::version(&common::find_tool("mariadbd").unwrap());
    let v = ServerVersion::parse(&word).expect("mariadbd --version");
    let Some(table) = documented::for_version(&v) else {
        return vec![format!("no documented table for {word}")];
    };
    let mut bad = Vec::new();
    for row in &table.rows {
        let name = row.name.as_str();
        match (read_only.get(name), row.dynamic) {
            (Some(&"NO"), true) | (Some(&"YES"), false) => {}
            (Some(other), _) => bad.push(format!(
                "{}: `{name}` dynamic = {}, but the server says READ_ONLY = {other}",
                table.file, row.dynamic
            )),
            (None, _) => bad.push(format!(
                "{}: `{name}` is a row, but this server has no such variable",
                table.file
            )),
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut named = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for ns in ["mycnf_effective.", "mycnf.", "mysql."] {
            for (at, _) in text.match_indices(ns) {
                let before = text[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    continue;
                }
                let rest = &text[at + ns.len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(rest.len());
                if end > 0 {
                    named.insert(rest[..end].to_string());
                }
            }
        }
    }
    assert!(
        named.contains("innodb_buffer_pool_size"),
        "the shipped policies name no server variable: {named:?}"
    );
    for name in &named {
        if read_only.get(name.as_str()) == Some(&"NO") && !documented::is_dynamic(Some(&v), name) {
            bad.push(format!(
                "`{name}` is named by a shipped policy and dynamic on this server, but fix would ask for a restart"
            ));
        }
    }
    bad
}

/// Start mariadbd on `cnf` (with the test's datadir); true if it came up
/// (or still runs after the start time). Returns the error log.
fn starts(t: &Tools, work: &Path, cnf: &str) -> (bool, String) {
    let f = work.join("refused.cnf");
    tree::put(&f, cnf);
    let (server, started) = Server::try_start(t, &f, work, Args::Isolated);
    drop(server);
    let log = std::fs::read_to_string(work.join("err.log")).unwrap_or_default();
    (!matches!(started, Started::Exited(_)), log)
}

/// Run one server with `main` (+ conf.d files), return the snapshot host.
fn run_case(t: &Tools, work: &Path, main: &str, confd: &[(&str, &str)]) -> Host {
    let real = work.join("real");
    let _ = std::fs::remove_dir_all(&real);
    let confd_dir = real.join("conf.d");
    let main = main.replace("{CONFD}", confd_dir.to_str().unwrap());
    tree::put(&real.join("my.cnf"), &main);
    let snap = work.join("snap");
    let _ = std::fs::remove_dir_all(&snap);
    tree::put(&snap.join("etc/my.cnf"), &main);
    let confd_in_snap = snap.join(confd_dir.strip_prefix("/").unwrap());
    for (name, text) in confd {
        tree::put(&confd_dir.join(name), text);
        tree::put(&confd_in_snap.join(name), text);
    }
    let server = Server::start(t, &real.join("my.cnf"), work, Args::Isolated);
    let variables = server.sql("SHOW GLOBAL VARIABLES");
    let limits = server.sql(
        "SELECT LOWER(VARIABLE_NAME), VARIABLE_TYPE, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, NUMERIC_BLOCK_SIZE, COMMAND_LINE_ARGUMENT, READ_ONLY FROM information_schema.SYSTEM_VARIABLES",
    );
    tree::put(&work.join("system-variables.tsv"), &limits);
    drop(server);
    tree::put(&snap.join("captures/mysql-variables.tsv"), &variables);
    audit::host(&snap)
}

fn check(host: &Host, keys: &[&str]) -> Vec<String> {
    let facts = gather(host, &Needs::default());
    let rt = facts.namespaces.get("mysql").expect("mysql namespace");
    assert!(rt.unavailable.is_none(), "{:?}", rt.unavailable);
    assert!(
        rt.entries.len() > 300,
        "capture parsed into only {} variables",
        rt.entries.len()
    );
    let eff = facts
        .namespaces
        .get("mycnf_effective")
        .expect("mycnf_effective namespace");
    let mut problems = Vec::new();
    for k in keys {
        let (Some(Entry::Set(p)), Some(Entry::Set(r))) = (eff.get(k), rt.get(k)) else {
            problems.push(format!("{k}: missing ({:?} / {:?})", eff.get(k), rt.get(k)));
            continue;
        };
        if !p.value.loosely_equals(&r.value) {
            problems.push(format!(
                "{k}: driftaudit predicts {:?} ({:?}), server runs {:?}",
                p.value, p.note, r.value
            ));
        }
    }
    problems
}

#[test]
fn predicted_values_equal_the_running_server() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let keys = [
        "innodb_buffer_pool_size",
        "innodb_buffer_pool_dump_at_shutdown",
        "innodb_buffer_pool_load_at_startup",
        "max_connections",
    ];

    // 1: a round pool, skip- and loose- boolean forms, max_connections overridden in conf.d.
    let host = run_case(
        &t,
        work,
        "[mysqld]\ninnodb-buffer-pool-size = 1000M\nskip-innodb-buffer-pool-dump-at-shutdown\nloose-innodb_buffer_pool_load_at_startup = TRUE\nmax_connections = 100\n!includedir {CONFD}\n",
        &[("99-override.cnf", "[mariadbd]\nmax_connections = 321\n"), ("ignored.cnf.bak", "[mysqld]\nmax_connections = 7\n")],
    );
    let mut problems = check(&host, &keys);
    problems.extend(table_matches_system_variables(work));

    // 2: a pool that is not a MiB multiple (set in conf.d, overriding the main
    // file), enable-/disable- forms, and a later [server] group winning.
    let host = run_case(
        &t,
        work,
        "[mysqld]\ninnodb_buffer_pool_size = 2G\nenable-innodb-buffer-pool-dump-at-shutdown\ninnodb_buffer_pool_load_at_startup = ON\n!includedir {CONFD}\n[server]\nmax_connections = 222\n",
        &[("50-server.cnf", "[mysqld]\ninnodb_buffer_pool_size = 300000000\ndisable-innodb-buffer-pool-load-at-startup\nmax_connections = 99\n")],
    );
    problems.extend(check(&host, &keys));
    let facts = gather(&host, &Needs::default());
    match facts.namespaces["mycnf_effective"].get("innodb_buffer_pool_size") {
        Some(Entry::Set(s)) => {
            assert_eq!(s.value.as_f64(), Some(299892736.0));
            assert!(
                s.evidence[0].path.ends_with("50-server.cnf") && s.evidence[0].line == Some(2),
                "{:?}",
                s.evidence
            );
            assert!(
                s.evidence[1].path == "/etc/my.cnf" && s.evidence[1].line == Some(2),
                "{:?}",
                s.evidence
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // 3: values the server rounds to its block size, clamps to its minimum or
    // maximum, unique prefixes, and `skip-`/`enable-` with `=0`. The server
    // runs exactly what driftaudit predicts, and the drift rule is silent.
    let host = run_case(
        &t,
        work,
        concat!(
            "[mysqld]\n",
            "max_allowed_packet = 1000000\n",
            "read_buffer_size = 200000\n",
            "join_buffer_size = 1000\n",
            "key_buffer = 10000000\n",
            "sort_buffer_size = 100\n",
            "max_binlog_size = 2G\n",
            "thread_cache = 20000\n",
            "max_connections = 300\n",
            "table_open_cache = 5\n",
            "long_query_time = 1e9\n",
            "myisam-recover = BACKUP\n",
            "skip-local-infile = 0\n",
            "enable-innodb-file-per-table = 0\n",
            "disable-innodb-stats-on-metadata = 0\n",
            "innodb_buffer_pool_size = 100000000\n",
            "net_buffer_length = 5000\n",
            "query_cache_limit = 3000\n",
            "tmp_table_size = 1000\n",
            "innodb_log_buffer_size = 3000000\n",
            "wait_timeout = 0\n",
            "[mariadb-10.11]\n",
            "interactive_timeout = 200\n",
            "[mysqld-8.0]\n",
            "interactive_timeout = 999\n",
        ),
        &[],
    );
    let keys = [
        "max_allowed_packet",
        "read_buffer_size",
        "join_buffer_size",
        "key_buffer_size",
        "sort_buffer_size",
        "max_binlog_size",
        "thread_cache_size",
        "max_connections",
        "table_open_cache",
        "long_query_time",
        "myisam_recover_options",
        "local_infile",
        "innodb_file_per_table",
        "innodb_stats_on_metadata",
        "innodb_buffer_pool_size",
        "net_buffer_length",
        "query_cache_limit",
        "tmp_table_size",
        "innodb_log_buffer_size",
        "wait_timeout",
        "interactive_timeout",
    ];
    let problems = check(&host, &keys);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let facts = gather(&host, &Needs::default());
    match facts.namespaces["mycnf_effective"].get("max_allowed_packet") {
        Some(Entry::Set(s)) => {
            assert_eq!(s.value.as_f64(), Some(999424.0));
            assert!(
                s.note.as_deref().unwrap_or("").contains("block size 1024"),
                "{:?}",
                s.note
            );
        }
        other => panic!("{other:?}"),
    }
    let mut policies = audit::builtin();
    policies
        .filter(&["mysql.config-runtime-drift".to_string()], &[])
        .unwrap();
    let report = engine::audit_host(&policies, &host);
    let drift = common::of_rule(&report.findings, "mysql.config-runtime-drift");
    assert!(drift.iter().all(|f| f.status == Status::Pass), "{drift:#?}");
    assert!(!drift.is_empty());
    // 4: values the server refuses. It does not start, and driftaudit says so
    // with the line.
    for (cnf, line) in [
        ("[mysqld]\nmax_connections = 77 ;comment\n", 2),
        ("[mysqld]\n\ninnodb_buffer_pool_load_abort\n", 3),
        ("[mysqld]\ninnodb_buffer_pool_size = 5M\n", 2),
        ("[mysqld]\nread = 1\n", 2),
        ("[mysqld]\ninnodb_buffer_pool = 1G\n", 2),
        ("[mysqld]\nmax_connections = -5\n", 2),
    ] {
        let (started, log) = starts(&t, work, cnf);
        assert!(!started, "mariadbd started with {cnf:?}: {log}");
        let snap = work.join("snap-refused");
        let _ = std::fs::remove_dir_all(&snap);
        tree::put(&snap.join("etc/my.cnf"), cnf);
        tree::put(
            &snap.join("captures/mysql-variables.tsv"),
            "version\t10.11.19-MariaDB-0+deb12u1\n",
        );
        let facts = gather(&audit::host(&snap), &Needs::default());
        assert!(
            facts
                .issues
                .iter()
                .any(|i| i.line == Some(line) && i.message.contains("refuses to start")),
            "{cnf:?}: server log {log}\ndriftaudit: {:#?}",
            facts.issues
        );
    }

    // The prefixes are named, as the server names them.
    for p in ["key_buffer", "thread_cache", "myisam-recover"] {
        assert!(
            facts
                .issues
                .iter()
                .any(|i| i.message.contains(&format!("`{p}` is read as"))
                    && i.message.contains("error-prone")),
            "{p}: {:#?}",
            facts.issues
        );
    }
}

fn unhex(h: &str) -> String {
    let bytes: Vec<u8> = (0..h.len() / 2)
        .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `snapshot --mysql` runs the user's client, whose option files may set
/// any display or behaviour option: `table`, `vertical`, `html`, `xml` and
/// `column-names` change the format, `tee` appends everything to a file
/// (opened as soon as the option is read, so a later `--skip-tee` is too
/// late), `verbose` echoes the query and cannot be switched off again,
/// `init-command` runs SQL, `pager` a program. The capture must still be
/// exactly our TSV, parse back to the server's own values (compared
/// through HEX() of information_schema.GLOBAL_VARIABLES, so a value with a
/// tab, a newline and backslashes, init_connect here, is compared byte for
/// byte), run nothing the user configured, write nothing but the snapshot,
/// and still log in with the user's credentials (a password with a space,
/// quotes, `#` and a backslash in [client]).
#[test]
fn snapshot_mysql_capture_is_our_tsv_whatever_the_client_defaults_say() {
    let Some((t, tmp, server)) = mariadb::running() else {
        return;
    };
    let work = tmp.path();
    let sock = server.sock.clone();
    let client = &t.client;
    // The password as the server stores it: p a"ss#w'd\x
    server.sql(r#"CREATE USER auditor@localhost IDENTIFIED BY 'p a"ss#w''d\\x'; GRANT CREATE ON *.* TO auditor@localhost"#,
    );
    server.sql("SET GLOBAL init_connect = 'SET @a=''a\tb'',\n@b=''c\\\\\\\\d'''");
    let home = work.join("home");
    let tee = work.join("tee.out");
    let pager_ran = work.join("pager-ran");
    tree::put(
        &home.join(".my.cnf"),
        &format!(
            concat!(
                "[client]\n",
                "user = auditor\n",
                "password = \"p a\\\"ss#w'd\\\\x\"\n",
                "socket = {sock}\n",
                "[mysql]\n",
                "table\nvertical\nhtml\nxml\ncolumn-names\n",
                "pager = touch {pager}\n",
                "tee = {tee}\n",
                "safe-updates\n",
                "init-command = CREATE DATABASE hostile_marker\n",
                "prompt = HOSTILE>\n",
                "auto-vertical-output\nbinary-as-hex\nraw\ncolumn-type-info\nshow-warnings\n",
                "verbose\nverbose\nline-numbers\n",
                "delimiter = $$\n",
                "[client-server]\n",
                "loose-local-infile = 1\n",
            ),
            sock = sock.display(),
            pager = pager_ran.display(),
            tee = tee.display()
        ),
    );
    // The user's own client, with these files, is hostile indeed.
    let hostile = Command::new(client)
        .args(["-e", "SELECT 1"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        tee.exists() && String::from_utf8_lossy(&hostile.stdout).contains("Logging to file"),
        "the hostile defaults did not take: {hostile:?}"
    );
    std::fs::remove_file(&tee).unwrap();
    server.sql("DROP DATABASE IF EXISTS hostile_marker");
    // The server's general log shows who connected and what ran.
    let general = work.join("general.log");
    server.sql(&format!(
        "SET GLOBAL general_log_file = '{}'; SET GLOBAL general_log = ON",
        general.display()
    ));

    let out = work.join("snap");
    let o = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["snapshot", "--mysql", "--out"])
        .arg(&out)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("snapshot.json")).unwrap()).unwrap();
    assert!(
        !meta["unreadable"].to_string().contains("mysql-variables"),
        "capture failed: {meta:#}"
    );
    let capture = std::fs::read_to_string(out.join("captures/mysql-variables.tsv")).unwrap();
    assert!(!tee.exists(), "the user's tee file was opened");
    assert!(!pager_ran.exists(), "the user's pager ran");
    assert_eq!(
        server.sql("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'hostile_marker'"
        )
        .trim(),
        "0",
        "the user's init-command ran"
    );
    // With the user's credentials (not root over the socket), one statement.
    let log = std::fs::read_to_string(&general).unwrap();
    assert!(
        log.contains("Connect\tauditor@localhost"),
        "the capture did not log in as the user's [client] user: {log}"
    );
    assert!(
        log.lines()
            .any(|l| l.ends_with("Query\tSHOW GLOBAL VARIABLES")),
        "{log}"
    );
    assert!(!log.contains("CREATE DATABASE"), "{log}");
    // Exactly our format: `name<TAB>value` rows, sorted, nothing else.
    let rows: Vec<&str> = capture.lines().collect();
    assert!(rows.len() > 500, "{} rows", rows.len());
    assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows are sorted");
    for r in &rows {
        let (name, _) = r
            .split_once('\t')
            .unwrap_or_else(|| panic!("not TSV: {r:?}"));
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "not a variable row: {r:?}"
        );
    }
    // It parses back to the server's own values, byte for byte.
    let parsed = driftaudit::unstable::parse::mysqlvars::parse(&capture);
    assert!(parsed.issues.is_empty(), "{:#?}", parsed.issues);
    let mine: std::collections::BTreeMap<String, String> =
        parsed.vars.into_iter().map(|v| (v.name, v.value)).collect();
    let reference = server.sql(
        "SELECT LOWER(VARIABLE_NAME), HEX(VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES",
    );
    let mut compared = 0;
    let mut bad = Vec::new();
    for row in reference.lines() {
        let (name, hex) = row.split_once('\t').unwrap();
        let want = if hex == "NULL" {
            String::new()
        } else {
            unhex(hex)
        };
        let Some(got) = mine.get(name) else {
            bad.push(format!("{name}: missing from the capture"));
            continue;
        };
        if driftaudit::unstable::secret::server_variable_is_secret(name) {
            assert_eq!(
                got,
                driftaudit::unstable::secret::REDACTED,
                "{name} not redacted"
            );
            continue;
        }
        compared += 1;
        if *got != want {
            bad.push(format!("{name}: capture {got:?}, server {want:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared > 500, "only {compared} variables compared");
    assert_eq!(mine["init_connect"], "SET @a='a\tb',\n@b='c\\\\d'");
    drop(server);
}

/// The runtime script's `SET GLOBAL` steps, against the real server: pin
/// `max_connections` on mysql-healthy (running 300) to any value from the
/// host-data alphabet; either `fix` refuses it with a reason, or the
/// script hands `mysql` exactly `-e 'SET GLOBAL max_connections = LIT'`
/// and the server reads LIT as the pinned value (`SELECT HEX(LIT)`
/// through the real client, byte for byte), under the default sql_mode and
/// under NO_BACKSLASH_ESCAPES, where a backslash is an ordinary character
/// (and `SET GLOBAL init_connect = LIT` stores exactly it).
#[test]
fn any_set_global_value_is_one_sql_literal_the_server_reads_back_or_is_refused() {
    use driftaudit::unstable::fix::{self, FixOptions};
    use proptest::prelude::*;
    let Some((_, _tmp, server)) = mariadb::running() else {
        return;
    };
    let healthy = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hosts/mysql-healthy");
    let check = |v: &str| -> Result<(), TestCaseError> {
        let yaml_v = common::yaml_quoted(v);
        let mut set = audit::builtin();
        set.add_str(
            "mine.yaml",
            &format!(
                "policy: mine\ntitle: Mine\nrules:\n\
                 \x20 - id: mine.pin\n    title: t\n    severity: low\n    setting: mycnf.max_connections\n    expect: {{ equals: {yaml_v}, present: true }}\n    why: w\n    fix: f\n    references: []\n"
            ),
        )
        .unwrap();
        let opts = FixOptions {
            only: vec![glob::Pattern::new("mine.*").unwrap()],
            ..FixOptions::default()
        };
        let p = fix::plan(&set, Some(&healthy), &opts).unwrap();
        if let Some(u) = p.unfixable.iter().find(|u| u.rule == "mine.pin") {
            prop_assert!(
                !u.reason.trim().is_empty(),
                "{:?}: refused without a reason",
                v
            );
            prop_assert!(
                p.runtime.is_empty(),
                "{:?}: refused but a step: {}",
                v,
                p.script()
            );
            return Ok(());
        }
        let s = tempfile::tempdir().unwrap();
        let words = common::run_with_stubs(s.path(), &p.script(), &["mysql"]);
        let step = match &words[..] {
            [(_, w)] if w.len() == 2 && w[0] == "-e" => w[1].clone(),
            _ => {
                return Err(TestCaseError::fail(format!(
                    "{v:?}: not one `mysql -e`: {words:?}\n{}",
                    p.script()
                )))
            }
        };
        let Some(lit) = step.strip_prefix("SET GLOBAL max_connections = ") else {
            return Err(TestCaseError::fail(format!("{v:?}: {step:?}")));
        };
        let want: String = v.bytes().map(|b| format!("{b:02X}")).collect();
        // a size as policies write it (`1b` is one byte) is that number too
        let number = v
            .trim()
            .parse::<f64>()
            .ok()
            .or_else(|| driftaudit::unstable::value::parse_size(v).ok());
        let boolean =
            ["on", "off", "yes", "no", "true", "false"].contains(&v.trim().to_lowercase().as_str());
        for mode in ["DEFAULT", "'NO_BACKSLASH_ESCAPES'"] {
            server.sql(&format!("SET GLOBAL sql_mode = {mode}"));
            let quoted = lit.starts_with('\'') || lit.starts_with("X'");
            // a bare word is read by SET as written (a name or a number)
            let got = if quoted {
                unhex(server.sql(&format!("SELECT HEX({lit})")).trim())
            } else {
                lit.to_string()
            };
            // a number the rule compares as one may be written as that
            // number, a boolean as ON/OFF; anything else must be v's bytes
            let ok = got == v
                || number.is_some_and(|a| got.parse::<f64>().is_ok_and(|b| a == b))
                || boolean && (got == "ON" || got == "OFF");
            prop_assert!(
                ok,
                "{:?} as {} reads back as {:?} under sql_mode {}",
                v,
                lit,
                got,
                mode
            );
            // and as the value of a string variable, through SET GLOBAL
            if number.is_none() && got == v {
                server.sql(&format!("SET GLOBAL init_connect = {lit}"));
                let set = server.sql("SELECT HEX(@@global.init_connect)");
                prop_assert_eq!(
                    set.trim(),
                    want.as_str(),
                    "{:?} as {} under {}",
                    v,
                    lit,
                    mode
                );
            }
        }
        Ok(())
    };
    for v in [
        "1", "a\\b", "it's", "a\\'b", "\\", "x\\\\y", "$(id)", "a;b", "\"q\"",
    ] {
        check(v).unwrap();
    }
    let alphabet = prop::sample::select(vec![
        "a", "b", "1", ".", "-", " ", "\t", "\n", "\"", "'", "\\", "#", ";", "$", "`", "\u{1b}",
        "é", "%", "_",
    ]);
    let strategy = proptest::collection::vec(alphabet, 1..10).prop_map(|v| v.concat());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner.run(&strategy, |v| check(&v)).unwrap();
    drop(server);
}

/// Issue 31: a real MariaDB 10.11 + galera-4 node, bootstrapped as a
/// one-node cluster from a Galera option tree (`[galera]` group, `wsrep_*`
/// options, quoted `wsrep_provider_options`, `wsrep_sst_auth`). Before, its
/// healthy configuration drifted: `wsrep_provider_options` runs as the list
/// of every provider default, and `binlog_format = row` runs as `ROW`. Now
/// the running node shows no drift, and the SST password appears nowhere
/// in the report.
#[test]
fn a_healthy_galera_node_shows_no_drift_and_hides_its_sst_password() {
    let Some(t) = tools() else { return };
    let Some(provider) = [
        "/usr/lib/galera/libgalera_smm.so",
        "/usr/lib64/galera-4/libgalera_smm.so",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.exists()) else {
        common::skip("a Galera node", "needs galera-4 (libgalera_smm.so)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    t.install_db(work);
    let cnf = format!(
        "[mysqld]\ninnodb_buffer_pool_size = 64M\nbinlog_format = row\ndefault_storage_engine = innodb\ninnodb_autoinc_lock_mode = 2\n\n[galera]\nwsrep_on = ON\nwsrep_provider = {}\nwsrep_cluster_address = gcomm://\nwsrep_cluster_name = driftaudit-ci\nwsrep_node_address = 127.0.0.1\nwsrep_provider_options = \"gcache.size=32M; gcs.fc_limit = 40; gmcast.listen_addr=tcp://127.0.0.1:{}\"\nwsrep_sst_auth = sstuser:S3cr3t-sst-pw\n",
        provider.display(),
        45000 + std::process::id() % 5000
    );
    let host = run_case(&t, work, &cnf, &[]);
    let facts = gather(&host, &Needs::default());
    let rt = &facts.namespaces["mysql"];
    // the node really runs Galera with the provider's full option list
    match rt.get("wsrep_provider_options") {
        Some(Entry::Set(s)) => assert!(
            s.raw.contains("gcs.fc_limit = 40") && s.raw.contains("evs."),
            "{}",
            s.raw
        ),
        other => panic!("no wsrep_provider_options at runtime: {other:?}"),
    }
    let p = audit::only(&["mysql.*"]);
    let report = engine::audit_host(&p, &host);
    let drift = common::of_rule(&report.findings, "mysql.config-runtime-drift");
    assert!(
        drift.iter().all(|f| f.status == Status::Pass) && !drift.is_empty(),
        "{drift:#?}"
    );
    let json = serde_json::to_string(&report.findings).unwrap();
    assert!(!json.contains("S3cr3t-sst-pw"), "the SST password leaked");
    let snap_vars =
        std::fs::read_to_string(work.join("snap/captures/mysql-variables.tsv")).unwrap();
    assert!(
        snap_vars.contains("wsrep_sst_auth"),
        "the capture has the variable"
    );
}
