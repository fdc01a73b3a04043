//! Differential test: driftaudit's server argv must equal what MariaDB's own
//! `my_print_defaults` prints for every corpus option file and for generated
//! file sets (includes, includedir order, groups, quoting, prefixes, cycles).
//! Files live in a temp dir and are read through `Host::live()` by their real
//! absolute paths, so `!include` means the same file to both readers.

use std::path::Path;
use std::process::Command;

use driftaudit::unstable::facts::mysql::{effective_options, server_groups, OptionSet};
use driftaudit::unstable::facts::FileIssue;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::secret::{option_is_secret, REDACTED};

const VERSION: &str = "10.11.19-MariaDB";

use crate::common;
use crate::common::audit;
use crate::common::tree;

/// my_print_defaults lives in /usr/bin (mariadb-client), so calling it by name works.
fn tool_available() -> bool {
    common::tool("my_print_defaults", "mariadb-client").is_some()
}

/// Redact secret values the way driftaudit does, line by line.
fn redact(lines: &str) -> Vec<String> {
    lines
        .split('\n')
        .map(
            |l| match l.strip_prefix("--").and_then(|r| r.split_once('=')) {
                Some((name, _)) if option_is_secret(name) => format!("--{name}={REDACTED}"),
                _ => l.to_string(),
            },
        )
        .collect()
}

struct Reference {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn reference(file: &Path) -> Reference {
    let mut cmd = Command::new("my_print_defaults");
    cmd.arg(format!("--defaults-file={}", file.display()));
    cmd.args(server_groups(Some(VERSION)));
    let out = cmd.output().expect("run my_print_defaults");
    Reference {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ours(file: &Path) -> (OptionSet, Vec<FileIssue>) {
    let host = Host::live();
    let mut issues = Vec::new();
    let path = file.to_str().expect("utf-8 path");
    let set = effective_options(&host, &[path], &server_groups(Some(VERSION)), &mut issues);
    (set, issues)
}

/// Compare one top-level file; returns a description of a mismatch, or the
/// number of options both printed.
fn compare(file: &Path) -> Result<usize, String> {
    let r = reference(file);
    let (set, issues) = ours(file);
    if !r.ok {
        // Fatal for the server: driftaudit must say so, with file and line.
        let Some(f) = &set.fatal else {
            return Err(format!(
                "{}: my_print_defaults failed ({}) but driftaudit saw no fatal error",
                file.display(),
                r.stderr.trim()
            ));
        };
        if !issues
            .iter()
            .any(|i| i.line.is_some() && i.message.contains("refuses to start"))
        {
            return Err(format!(
                "{}: fatal `{f}` without a file:line issue: {issues:?}",
                file.display()
            ));
        }
        return Ok(0);
    }
    if let Some(f) = &set.fatal {
        return Err(format!(
            "{}: driftaudit says fatal ({f}) but my_print_defaults succeeded",
            file.display()
        ));
    }
    let expected = redact(r.stdout.strip_suffix('\n').unwrap_or(&r.stdout));
    let got = redact(&set.args().join("\n"));
    let expected: Vec<String> = expected.into_iter().filter(|l| !l.is_empty()).collect();
    let got: Vec<String> = got.into_iter().filter(|l| !l.is_empty()).collect();
    if expected != got {
        return Err(format!(
            "{}: argv differs\n{}",
            file.display(),
            similar::TextDiff::from_lines(&expected.join("\n"), &got.join("\n"))
                .unified_diff()
                .header("my_print_defaults", "driftaudit")
        ));
    }
    Ok(got.len())
}

#[test]
fn corpus_files_match_my_print_defaults() {
    if !tool_available() {
        return;
    }
    let Some(corpus) = common::corpus_dir("mycnf") else {
        return;
    };
    let mut failures = Vec::new();
    let mut n = 0;
    let mut options = 0;
    for e in std::fs::read_dir(corpus).expect("corpus dir") {
        let p = e.expect("entry").path();
        n += 1;
        match compare(&p) {
            Ok(k) => options += k,
            Err(m) => failures.push(m),
        }
    }
    assert!(n >= 40, "corpus has only {n} files");
    assert!(
        options >= 500,
        "only {options} options compared: the comparison is not exercising much"
    );
    eprintln!("{n} corpus files, {options} options identical to my_print_defaults");
    assert!(
        failures.is_empty(),
        "{} of {n} files differ:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Generated file sets. `{D}` is replaced with the temp dir.
const CASES: &[(&str, &[(&str, &str)])] = &[
    ("overrides_across_groups", &[("main.cnf", "[mysqld]\nmax_connections=100\n[client]\nmax_connections=1\n[server]\nmax_connections=200\n[mariadb-10.11]\nx=1\n[mysqld-8.0]\ny=1\n[galera]\nwsrep_on=ON\n[client-server]\nsocket=/run/s\n[mariadbd]\nz=1\n[mariadbd-10.11]\nzz=1\n[mariadb]\nm=1\n[mysqld-10.11]\nv=1\n")]),
    ("group_spelling", &[("main.cnf", "[MYSQLD]\na=1\n[ mysqld ]\nb=2\n[mysqld ]\nc=3\n[MySqlD]  trailing junk\nd=4\n[Server]\ne=5\n")]),
    ("quotes_escapes_comments", &[("main.cnf", "[mysqld]\na = \"x y\"\nb = 'q'\nc = x\"y\"z\nd = \"x\" y\ne = \"abc\nf = abc#def\ng = \"a#b\" # c\nh = 4 ; note\ni = \\n\\t\\s\\\\\\q\nj=\nk\n  l  =  spaced value  \r\nm = '\\''\nn=\"\"\n; comment\n  # comment\n")]),
    ("unique_prefixes_and_zero_inversion", &[("main.cnf", "[mysqld]\nkey_buffer = 16M\nthread_cache = 8\nmyisam-recover = BACKUP\nskip-local-infile = 0\nenable-innodb-file-per-table = 0\ndisable-innodb-stats-on-metadata=0\nloose-key_buf = 1M\n")]),
    ("prefix_forms", &[("main.cnf", "[mysqld]\nloose-innodb-buffer-pool-dump-at-shutdown=1\nskip-innodb-buffer-pool-load-at-startup\ndisable-log-bin\nenable-named-pipe\nskip-name-resolve\nInnodb-Buffer-Pool-Size = 1G\nloose_skip_external_locking\n")]),
    ("include_in_place_and_group_reset", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/inc.cnf\nb=2\n[client]\n!include {D}/inc.cnf\nc=3\n"),
        ("inc.cnf", "[mysqld]\nfrom_inc=1\n[client]\nclient_only=1\n"),
    ]),
    ("includedir_order_and_extensions", &[
        ("main.cnf", "[mysqld]\nbefore=1\n!includedir {D}/conf.d\nafter=1\n"),
        ("conf.d/10.cnf", "[mysqld]\nf=10\n"),
        ("conf.d/9.cnf", "[mysqld]\nf=9\n"),
        ("conf.d/A.cnf", "[mysqld]\nf=A\n"),
        ("conf.d/a.cnf", "[mysqld]\nf=a\n"),
        ("conf.d/_x.cnf", "[mysqld]\nf=_x\n"),
        ("conf.d/.cnf", "[mysqld]\nf=dot\n"),
        ("conf.d/z.ini", "[mysqld]\nf=ini\n"),
        ("conf.d/z.cnf.bak", "[mysqld]\nf=bak\n"),
        ("conf.d/Z.CNF", "[mysqld]\nf=upper\n"),
        ("conf.d/noext", "[mysqld]\nf=noext\n"),
        ("conf.d/sub/deep.cnf", "[mysqld]\nf=deep\n"),
    ]),
    ("override_in_conf_d", &[
        ("main.cnf", "[client-server]\nsocket=/run/mysqld/mysqld.sock\n!includedir {D}/conf.d/\n"),
        ("conf.d/50-server.cnf", "[mysqld]\ninnodb_buffer_pool_size = 128M\nmax_connections = 100\n"),
        ("conf.d/99-override.cnf", "[mysqld]\ninnodb_buffer_pool_size = 25G\n"),
    ]),
    ("option_before_group_in_included_file", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/bad.cnf\nb=2\n"),
        ("bad.cnf", "\n# comment\noops=1\n[mysqld]\nnever=1\n"),
    ]),
    ("unclosed_group_in_included_file", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/bad.cnf\nb=2\n"),
        ("bad.cnf", "[mysqld]\nx=1\n[mysqld\ny=2\n"),
    ]),
    ("missing_include_is_silent", &[("main.cnf", "[mysqld]\na=1\n!include {D}/nope.cnf\nb=2\n!foo bar\n!includex y\n!INCLUDE {D}/nope\n")]),
    ("missing_includedir_in_included_file", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/inc.cnf\nb=2\n"),
        ("inc.cnf", "[mysqld]\nx=1\n!includedir {D}/nodir\ny=2\n"),
    ]),
    ("include_cycle_hits_depth_limit", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/other.cnf\nb=2\n"),
        ("other.cnf", "[mysqld]\nx=1\n!include {D}/main.cnf\ny=2\n"),
    ]),
    ("self_includedir_cycle", &[("d/main.cnf", "[mysqld]\na=1\n!includedir {D}/d\nb=2\n")]),
    ("include_without_trailing_newline", &[
        ("main.cnf", "[mysqld]\na=1\n!include {D}/x.cnf"),
        ("x.cnf", "[mysqld]\nfull=1\n"),
        ("x.cn", "[mysqld]\nshort=1\n"),
    ]),
    ("crlf_and_long_line", &[("main.cnf", "[mysqld]\r\na = 1\r\nb\r\n")]),
    ("secrets_redacted", &[("main.cnf", "[mysqld]\npassword = hunter2\nloose-server-audit-password=x\n")]),
    // Fatal for the server:
    ("fatal_option_before_group", &[("main.cnf", "a=1\n[mysqld]\nb=2\n")]),
    ("fatal_unclosed_group", &[("main.cnf", "[mysqld]\na=1\n[mysqld\nb=2\n")]),
    ("fatal_missing_includedir", &[("main.cnf", "[mysqld]\na=1\n!includedir {D}/nodir\nb=2\n")]),
    ("fatal_empty_include", &[("main.cnf", "[mysqld]\na=1\n!include\nb=2\n")]),
];

#[test]
fn generated_cases_match_my_print_defaults() {
    if !tool_available() {
        return;
    }
    let mut failures = Vec::new();
    for (name, files) in CASES {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_str().unwrap().to_string();
        let mut main = None;
        for (f, text) in *files {
            let p = tree::file(tmp.path(), f, &text.replace("{D}", &d));
            main.get_or_insert(p);
        }
        if *name == "crlf_and_long_line" {
            let mut t = std::fs::read_to_string(main.as_ref().unwrap()).unwrap();
            t.push_str(&format!("long={}\nafter=1\n", "x".repeat(9000)));
            std::fs::write(main.as_ref().unwrap(), t).unwrap();
        }
        match compare(main.as_ref().unwrap()) {
            Ok(0) if !name.starts_with("fatal_") && *name != "missing_include_is_silent" => {
                failures.push(format!("[{name}] compared no options"))
            }
            Ok(_) => {}
            Err(m) => failures.push(format!("[{name}] {m}")),
        }
        if name.starts_with("fatal_") && reference(main.as_ref().unwrap()).ok {
            failures.push(format!("[{name}] expected my_print_defaults to fail"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn world_writable_files_are_ignored_with_an_issue() {
    if !tool_available() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let main = tree::file(
        tmp.path(),
        "main.cnf",
        &format!("[mysqld]\na=1\n!includedir {d}/conf.d\n"),
    );
    let ww = tree::file(tmp.path(), "conf.d/ww.cnf", "[mysqld]\nww=1\n");
    tree::file(tmp.path(), "conf.d/ok.cnf", "[mysqld]\nok=1\n");
    std::fs::set_permissions(&ww, std::fs::Permissions::from_mode(0o666)).unwrap();
    compare(&main).unwrap();
    let (set, issues) = ours(&main);
    assert_eq!(set.args(), ["--a=1", "--ok=1"]);
    assert!(
        issues
            .iter()
            .any(|i| i.path.ends_with("ww.cnf") && i.message.contains("world-writable")),
        "{issues:?}"
    );
}

#[test]
fn cycles_and_fatal_errors_are_reported_with_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let main = tree::file(
        tmp.path(),
        "main.cnf",
        &format!("[mysqld]\na=1\n!include {d}/main.cnf\n"),
    );
    let (set, issues) = ours(&main);
    // mysys re-reads the file at levels 0..=10: 11 copies, never endless.
    assert_eq!(set.args().len(), 11);
    assert!(
        issues
            .iter()
            .any(|i| i.line == Some(3) && i.message.contains("cycle")),
        "{issues:?}"
    );

    let bad = tree::file(tmp.path(), "bad.cnf", "a=1\n[mysqld]\n");
    let (set, issues) = ours(&bad);
    assert!(
        set.fatal.as_deref().unwrap().contains(":1:"),
        "{:?}",
        set.fatal
    );
    assert!(issues
        .iter()
        .any(|i| i.path.ends_with("bad.cnf") && i.line == Some(1)));
}

#[test]
fn namespace_folds_prefixes_and_keeps_provenance() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let main = tree::file(
        tmp.path(),
        "main.cnf",
        &format!("[mysqld]\ninnodb-buffer-pool-size = 1G\nloose-skip-innodb-buffer-pool-dump-at-shutdown\npassword = hunter2\n!includedir {d}/conf.d\n"),
    );
    tree::file(tmp.path(), "conf.d/99.cnf", "[mysqld]\ninnodb_buffer_pool_size=2G\nmax_connections = 500\ninnodb_buffer_pool_load_at_startup = yes\n");
    let (set, issues) = ours(&main);
    use driftaudit::unstable::facts::Entry;
    use driftaudit::unstable::value::Value;
    let get = |k: &str| match set.namespace.get(k) {
        Some(Entry::Set(s)) => s.clone(),
        other => panic!("{k}: {other:?}"),
    };
    let pool = get("Innodb-Buffer-Pool-Size");
    assert_eq!(pool.value, Value::Size(2.0 * 1073741824.0));
    assert_eq!(pool.evidence.len(), 2);
    assert_eq!(pool.evidence[0].line, Some(2));
    assert!(pool.evidence[0].path.ends_with("99.cnf"));
    assert!(pool.evidence[1].path.ends_with("main.cnf"));
    assert_eq!(pool.evidence[1].line, Some(2));
    assert_eq!(
        get("innodb_buffer_pool_dump_at_shutdown").value,
        Value::Bool(false)
    );
    assert_eq!(get("max_connections").value, Value::Number(500.0));
    assert_eq!(
        get("innodb_buffer_pool_load_at_startup").value,
        Value::Bool(false)
    );
    assert!(issues
        .iter()
        .any(|i| i.message.contains("`yes` is not recognised")));
    assert_eq!(get("password").raw, REDACTED);
    assert!(!format!("{set:?}").contains("hunter2"));
}

/// `mariadbd --defaults-file=F --help --verbose`: the server's value for every
/// variable after reading options ("Variables (--variable-name=value)" table),
/// keyed with underscores. `None` when the server refuses the file.
fn mariadbd_values(bin: &Path, file: &Path) -> Option<std::collections::BTreeMap<String, String>> {
    let out = Command::new(bin)
        .arg(format!("--defaults-file={}", file.display()))
        .args(["--user=root", "--help", "--verbose"])
        .output()
        .expect("run mariadbd --help --verbose");
    let text = String::from_utf8_lossy(&out.stdout);
    let table = text.split_once("-------------\n")?.1;
    Some(
        table
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(' ')?;
                Some((k.replace('-', "_"), v.trim().to_string()))
            })
            .collect(),
    )
}

/// The installed mariadbd and its version (`10.11.19-MariaDB-0+deb12u1`).
fn mariadbd_available() -> Option<(std::path::PathBuf, String)> {
    let bin = common::tool("mariadbd", "mariadb-server")?;
    let out = Command::new(&bin)
        .arg("--version")
        .output()
        .expect("run mariadbd --version");
    let v = String::from_utf8_lossy(&out.stdout);
    // `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for ...`
    let version = v
        .split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .expect("a version in mariadbd --version")
        .to_string();
    Some((bin, version))
}

/// driftaudit's `mycnf_effective` for `cnf` as /etc/my.cnf on a snapshot
/// whose dpkg database names the installed server (no runtime capture).
fn predicted(cnf: &str, version: &str) -> (driftaudit::unstable::facts::Facts, tempfile::TempDir) {
    let snap = tempfile::tempdir().unwrap();
    tree::file(snap.path(), "etc/my.cnf", cnf);
    tree::file(
        snap.path(),
        "var/lib/dpkg/status",
        &format!(
            "Package: mariadb-server-core\nStatus: install ok installed\nVersion: 1:{}\n",
            version.replace("-MariaDB", "")
        ),
    );
    let host = audit::host(snap.path());
    (
        driftaudit::unstable::facts::gather(&host, &driftaudit::unstable::facts::Needs::default()),
        snap,
    )
}

fn compare_values(
    bin: &Path,
    cnf: &str,
    version: &str,
    keys: &[String],
) -> (usize, Vec<String>, driftaudit::unstable::facts::Facts) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tree::file(tmp.path(), "my.cnf", cnf);
    let server = mariadbd_values(bin, &file).expect("mariadbd refused the generated file");
    let (facts, _snap) = predicted(cnf, version);
    let eff = &facts.namespaces["mycnf_effective"];
    let mut bad = Vec::new();
    let mut n = 0;
    for k in keys {
        let Some(want) = server.get(k) else {
            bad.push(format!("{k}: not in mariadbd's table"));
            continue;
        };
        use driftaudit::unstable::facts::Entry;
        use driftaudit::unstable::value::Value;
        let got = match eff.get(k) {
            Some(Entry::Set(s)) => s.value.clone(),
            other => {
                bad.push(format!("{k}: server {want}, driftaudit {other:?}"));
                continue;
            }
        };
        n += 1;
        let same = match &got {
            Value::Bool(b) => want == if *b { "TRUE" } else { "FALSE" },
            Value::Number(x) | Value::Size(x) => want.parse::<f64>().is_ok_and(|w| w == *x),
            other => other.to_plain() == *want,
        };
        if !same {
            bad.push(format!("{k}: server {want}, driftaudit {got:?}"));
        }
    }
    (n, bad, facts)
}

#[test]
fn prefixes_enable_disable_and_limits_match_mariadbd() {
    let Some((bin, version)) = mariadbd_available() else {
        return;
    };
    let v = driftaudit::unstable::facts::mysql::ServerVersion::parse(&version).unwrap();
    let Some(table) = driftaudit::unstable::facts::mysql::limits::table_for(&v) else {
        panic!("no option table for the installed {version}: run scripts/mysql-limits");
    };
    use driftaudit::unstable::facts::mysql::limits::{Kind, Lookup};
    // Every integer option of the main and plugin passes, written as its
    // longest unique prefix where it has one, with a value that is not a
    // multiple of its block size or lies outside its range.
    let mut cnf = String::from("[mysqld]\n");
    let mut keys = Vec::new();
    let mut prefixes = 0;
    for spec in table.options {
        let name = spec.name;
        // Not compared: secrets (redacted); wsrep/debug/gtid options (need a
        // cluster or a debug build); what the server derives from the process
        // (open_files_limit, and table_open_cache with its instances, lowered to
        // fit it: the running-server test and the drift rule treat those as
        // the server's adjustment); aria_checkpoint_interval (`--help` prints 0
        // whatever the file says).
        if !matches!(spec.kind, Kind::Int | Kind::Uint | Kind::Bool)
            || spec.pass == "early"
            || option_is_secret(name)
            || ["wsrep", "debug", "gtid"]
                .iter()
                .any(|p| name.starts_with(p))
            || [
                "open_files_limit",
                "table_open_cache",
                "table_open_cache_instances",
                "aria_checkpoint_interval",
            ]
            .contains(&name)
        {
            continue;
        }
        let short = &name[..name.len() - 1];
        let written = match table.resolve(short) {
            Lookup::Found(r) if r.name == name && table.get(short).is_none() => {
                prefixes += 1;
                short
            }
            _ => name,
        };
        let value = match spec.kind {
            Kind::Bool => "OFF".to_string(),
            _ => {
                let (lo, hi) = (spec.min.unwrap_or(0.0), spec.max.unwrap_or(0.0));
                let v = if hi >= 1000001.0 && lo <= 1000001.0 {
                    1000001.0
                } else if lo > 1000001.0 {
                    lo * 3.0 + 1.0
                } else {
                    ((lo + hi) / 2.0).floor() + 1.0
                };
                format!("{v}")
            }
        };
        cnf.push_str(&format!("{written} = {value}\n"));
        keys.push(name.to_string());
    }
    // skip-/disable-/enable- with and without `=0`, and prefixes of them.
    let forms = [
        ("skip-local-infile = 0", "local_infile"),
        ("enable-innodb-file-per-table = 0", "innodb_file_per_table"),
        (
            "disable-innodb-stats-on-metadata = 0",
            "innodb_stats_on_metadata",
        ),
        (
            "skip-innodb-buffer-pool-dump-at-shut",
            "innodb_buffer_pool_dump_at_shutdown",
        ),
        (
            "enable-innodb-buffer-pool-load-at-start = 0",
            "innodb_buffer_pool_load_at_startup",
        ),
        ("skip-symbolic-links = OFF", "symbolic_links"),
        ("skip-thread-cache-size", "thread_cache_size"),
        ("loose-key_buffer = 3K", "key_buffer_size"),
        ("max_conn = 5", "max_connections"),
        ("myisam-recover = BACKUP", "myisam_recover_options"),
    ];
    for (line, key) in forms {
        cnf.push_str(line);
        cnf.push('\n');
        keys.retain(|k| k != key);
        keys.push(key.to_string());
    }
    let (n, bad, facts) = compare_values(&bin, &cnf, &version, &keys);
    assert!(n >= 300, "only {n} options compared");
    assert!(prefixes >= 200, "only {prefixes} prefixes");
    eprintln!("{n} options ({prefixes} as prefixes) identical to mariadbd --help --verbose");
    assert!(
        bad.is_empty(),
        "{} differ:\n{}\n\nfile:\n{cnf}",
        bad.len(),
        bad.join("\n")
    );
    assert!(!facts
        .issues
        .iter()
        .any(|i| i.message.contains("takes no value")));

    // A refused value: mariadbd says so, and so does driftaudit.
    for (cnf, key) in [
        ("[mysqld]\nread = 1\n", "read"),
        (
            "[mysqld]\nmax_connections = 77 ;comment\n",
            "max_connections",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let file = tree::file(tmp.path(), "my.cnf", cnf);
        let out = Command::new(&bin)
            .arg(format!("--defaults-file={}", file.display()))
            .args(["--user=root", "--help", "--verbose"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("[ERROR]"), "{cnf:?}: {err}");
        let (facts, _s) = predicted(cnf, &version);
        assert!(
            facts
                .issues
                .iter()
                .any(|i| i.message.contains(key) && i.message.contains("refuses to start")),
            "{cnf:?}: {:#?}",
            facts.issues
        );
    }
}
