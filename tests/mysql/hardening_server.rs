//! Real-server test of the mysql-hardening policy: Debian's MariaDB started
//! from a hardened and from a default option tree. The values its rules
//! judge from the option files and the compiled-in defaults (a snapshot
//! whose capture holds only `version`) equal what `SHOW GLOBAL VARIABLES`
//! reports, so every verdict is the same with the full capture as without
//! it, and the verdicts are the ones the benchmark expects of each tree.

use std::collections::BTreeMap;
use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{gather, Entry, Needs};
use driftaudit::unstable::host::Host;
use driftaudit::unstable::report::Status;

use crate::common::audit;
use crate::common::mariadb::{self, Args, Server, Tools};
use crate::common::tree;

/// A snapshot at `dir` (emptied first) of the option file and a capture.
fn snapshot_of(dir: &Path, cnf: &str, capture: &str) -> Host {
    let _ = std::fs::remove_dir_all(dir);
    tree::write_files(
        dir,
        &[
            ("etc/my.cnf", cnf),
            ("captures/mysql-variables.tsv", capture),
        ],
    );
    audit::host(dir)
}

/// Each mysql-hardening rule's verdict on a host.
fn verdicts(host: &Host) -> BTreeMap<String, Status> {
    let p = audit::only(&["mysqlsec.*"]);
    let report = engine::audit_host(&p, host);
    let mut out = BTreeMap::new();
    for f in &report.findings {
        if f.rule.starts_with("mysqlsec.") {
            assert!(
                out.insert(f.rule.clone(), f.status).is_none(),
                "{} has more than one finding",
                f.rule
            );
        }
    }
    assert_eq!(out.len(), 12, "{out:?}");
    out
}

/// The value of a variable in the full capture.
fn runtime(capture: &str, name: &str) -> String {
    capture
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('\t'))
        .unwrap_or_else(|| panic!("the server reports no {name}"))
        .to_string()
}

/// Start the server from `cnf`, and judge the tree twice: from the option
/// files and the compiled-in defaults of the version only, and with the
/// server's full capture. Returns both verdict sets, the capture and the
/// host of the first.
fn judge(
    t: &Tools,
    work: &Path,
    name: &str,
    cnf: &str,
) -> (
    BTreeMap<String, Status>,
    BTreeMap<String, Status>,
    String,
    Host,
) {
    let real = work.join(format!("{name}.cnf"));
    tree::put(&real, cnf);
    // from the file alone: only the data directory, socket and pid file
    // come from the command line
    let server = Server::start(t, &real, work, Args::Paths);
    let capture = server.sql("SHOW GLOBAL VARIABLES");
    drop(server);
    let version = format!("version\t{}\n", runtime(&capture, "version"));
    let files_only = snapshot_of(&work.join(format!("{name}-files")), cnf, &version);
    let with_runtime = snapshot_of(&work.join(format!("{name}-runtime")), cnf, &capture);
    (
        verdicts(&files_only),
        verdicts(&with_runtime),
        capture,
        files_only,
    )
}

fn status_table(expected: &[(&str, Status)]) -> BTreeMap<String, Status> {
    expected
        .iter()
        .map(|(r, s)| (format!("mysqlsec.{r}"), *s))
        .collect()
}

#[test]
fn hardening_verdicts_from_files_and_compiled_defaults_equal_the_running_mariadb() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let port = 40000 + std::process::id() % 20000;
    let files = work.join("files");
    std::fs::create_dir_all(&files).unwrap();

    // Hardened: every judged option set in the file.
    let hardened = format!(
        "[mysqld]\nport = {port}\nlocal_infile = 0\nskip-symbolic-links\nsecure_file_priv = {}\nbind-address = 127.0.0.1\nlog_error = {}\nsql_mode = STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION\nskip-name-resolve\nrequire_secure_transport = ON\nold_passwords = 0\n",
        files.display(),
        work.join("err.log").display()
    );
    let (from_files, from_runtime, capture, host) = judge(&t, work, "hardened", &hardened);
    // the values the option files give are the values the server runs
    let facts = gather(&host, &Needs::default());
    let eff = &facts.namespaces["mycnf_effective"];
    let mut problems = Vec::new();
    for (option, variable) in [
        ("local_infile", "local_infile"),
        ("bind_address", "bind_address"),
        ("log_error", "log_error"),
        ("sql_mode", "sql_mode"),
        ("skip_name_resolve", "skip_name_resolve"),
        ("require_secure_transport", "require_secure_transport"),
        ("old_passwords", "old_passwords"),
        ("secure_file_priv", "secure_file_priv"),
        ("symbolic_links", "have_symlink"),
    ] {
        let Some(Entry::Set(s)) = eff.get(option) else {
            problems.push(format!("{option}: not in mycnf_effective"));
            continue;
        };
        let predicted = s.value.to_string();
        let running = runtime(&capture, variable);
        let same = match option {
            // the server adds a trailing slash to the directory
            "secure_file_priv" => running.trim_end_matches('/') == predicted.trim_end_matches('/'),
            "symbolic_links" => predicted == "OFF" && running == "DISABLED",
            _ => predicted.eq_ignore_ascii_case(&running),
        };
        if !same {
            problems.push(format!(
                "{option}: driftaudit reads {predicted:?}, the server runs {variable} = {running:?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let mut rows: Vec<(&str, Status)> = [
        "local-infile symbolic-links secure-file-priv bind-address log-error strict-sql-mode",
        "skip-name-resolve require-secure-transport old-passwords",
    ]
    .iter()
    .flat_map(|l| l.split(' '))
    .map(|r| (r, Status::Pass))
    .collect();
    rows.extend([
        // runtime only: not in a capture of `version` alone
        ("have-ssl", Status::Skip),
        // no option file holds a password
        ("option-file-permissions", Status::Skip),
        // the test's snapshot neither holds root's history nor lists it absent
        ("root-command-history", Status::Unknown),
    ]);
    let mut expected = status_table(&rows);
    assert_eq!(from_files, expected, "hardened, from the files");
    // no certificate configured: the server reports have_ssl DISABLED
    expected.insert("mysqlsec.have-ssl".into(), Status::Fail);
    assert_eq!(
        from_runtime, expected,
        "hardened, with SHOW GLOBAL VARIABLES"
    );

    // Default: nothing judged is set, so every verdict comes from the
    // compiled-in defaults of 10.11 that the policy states, and must equal
    // the verdict from what the server really runs.
    let default = format!("[mysqld]\nport = {port}\n");
    let (from_files, from_runtime, capture, host) = judge(&t, work, "default", &default);
    let facts = gather(&host, &Needs::default());
    let eff = &facts.namespaces["mycnf_effective"];
    for option in [
        "local_infile",
        "symbolic_links",
        "secure_file_priv",
        "bind_address",
        "log_error",
        "sql_mode",
        "skip_name_resolve",
        "require_secure_transport",
        "old_passwords",
    ] {
        assert!(
            !matches!(eff.get(option), Some(Entry::Set(_))),
            "{option} is set in the default tree"
        );
    }
    let mut expected = status_table(&[
        ("local-infile", Status::Fail),
        ("symbolic-links", Status::Fail),
        ("secure-file-priv", Status::Fail),
        ("bind-address", Status::Fail),
        ("log-error", Status::Fail),
        ("strict-sql-mode", Status::Pass),
        ("skip-name-resolve", Status::Fail),
        ("have-ssl", Status::Skip),
        ("require-secure-transport", Status::Fail),
        ("old-passwords", Status::Pass),
        ("option-file-permissions", Status::Skip),
        ("root-command-history", Status::Unknown),
    ]);
    assert_eq!(
        from_files, expected,
        "default, from the compiled-in defaults"
    );
    expected.insert("mysqlsec.have-ssl".into(), Status::Fail);
    assert_eq!(
        from_runtime, expected,
        "default, with SHOW GLOBAL VARIABLES (local_infile {}, have_symlink {}, secure_file_priv {:?}, bind_address {:?}, log_error {:?}, sql_mode {}, skip_name_resolve {}, require_secure_transport {}, old_passwords {})",
        runtime(&capture, "local_infile"),
        runtime(&capture, "have_symlink"),
        runtime(&capture, "secure_file_priv"),
        runtime(&capture, "bind_address"),
        runtime(&capture, "log_error"),
        runtime(&capture, "sql_mode"),
        runtime(&capture, "skip_name_resolve"),
        runtime(&capture, "require_secure_transport"),
        runtime(&capture, "old_passwords"),
    );
}
