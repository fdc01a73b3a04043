//! Real-server tests of what the next restart does (issue 48): a `SET
//! GLOBAL` on an option no file sets reverts to the compiled default, a
//! non-dynamic option edited in a file while the server runs waits for the
//! restart, an option name the server does not know stops it from starting,
//! and a value above the maximum runs clamped. Each against Debian's
//! MariaDB started on a unix socket in a temp dir (tests/common/mariadb.rs);
//! the same option file is laid out in a snapshot with the server's
//! `SHOW GLOBAL VARIABLES` as its capture.

use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{gather, Entry, Needs};
use driftaudit::unstable::report::{Finding, Status};

use crate::common;
use crate::common::audit;
use crate::common::mariadb::{self, Args, Server, Started};
use crate::common::tree;

/// The snapshot of a server whose option file is `cnf` and whose running
/// variables are `variables`, in `work/snap`.
fn snapshot(work: &Path, cnf: &str, variables: &str) -> std::path::PathBuf {
    let snap = work.join("snap");
    let _ = std::fs::remove_dir_all(&snap);
    tree::put(&snap.join("etc/my.cnf"), cnf);
    if !variables.is_empty() {
        tree::put(&snap.join("captures/mysql-variables.tsv"), variables);
    }
    snap
}

fn drift(snap: &Path) -> Vec<Finding> {
    let report = engine::audit_host(
        &audit::only(&["mysql.config-runtime-drift"]),
        &audit::host(snap),
    );
    common::of_rule(&report.findings, "mysql.config-runtime-drift")
        .into_iter()
        .cloned()
        .collect()
}

/// `local_infile` turned OFF with `SET GLOBAL` on a server no file
/// configures it for runs OFF now and ON after the next restart (the real
/// server, restarted, says ON). The drift rule said nothing: it compared
/// only options some file sets. Now it fails, names the compiled default
/// and says the restart reverts it; the untouched server shows no drift.
#[test]
fn set_global_on_an_option_no_file_sets_reverts_at_the_restart() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\n";
    let file = work.join("server.cnf");
    tree::put(&file, cnf);
    let server = Server::start(&t, &file, work, Args::Isolated);
    let untouched = server.sql("SHOW GLOBAL VARIABLES");
    server.sql("SET GLOBAL local_infile = OFF");
    let changed = server.sql("SHOW GLOBAL VARIABLES");
    drop(server);
    assert!(changed.contains("local_infile\tOFF\n"), "{changed}");
    let server = Server::start(&t, &file, work, Args::Isolated);
    let restarted = server.sql("SELECT @@GLOBAL.local_infile");
    drop(server);
    assert_eq!(
        restarted.trim(),
        "1",
        "the restart brings local_infile back"
    );

    let clean = drift(&snapshot(work, cnf, &untouched));
    assert!(
        !clean.is_empty() && clean.iter().all(|f| f.status == Status::Pass),
        "a server running its compiled defaults shows no drift: {clean:#?}"
    );
    let found = drift(&snapshot(work, cnf, &changed));
    let f = found
        .iter()
        .find(|f| f.subject == ["local_infile"])
        .unwrap_or_else(|| panic!("no drift for local_infile: {found:#?}"));
    assert_eq!(f.status, Status::Fail);
    assert_eq!(
        (f.expected.as_deref(), f.actual.as_deref()),
        (Some("ON"), Some("OFF"))
    );
    assert!(
        f.explanation.contains("no option file sets local_infile")
            && f.explanation.contains("reverts to ON at the next restart"),
        "{}",
        f.explanation
    );
    assert_eq!(
        found.iter().filter(|f| f.status == Status::Fail).count(),
        1,
        "{found:#?}"
    );
}

/// A non-dynamic option edited in the file while the server runs: the
/// server keeps the value it started with (`SET GLOBAL` is refused), the
/// drift rule fails and says the next restart applies the file's value.
#[test]
fn a_non_dynamic_option_edited_while_running_is_a_pending_restart() {
    let Some((t, tmp, server)) = mariadb::running() else {
        return;
    };
    let work = tmp.path();
    let refused = std::process::Command::new(&t.client)
        .args(["--no-defaults", "-S"])
        .arg(&server.sock)
        .args([
            "--user=root",
            "-e",
            "SET GLOBAL innodb_log_buffer_size = 33554432",
        ])
        .output()
        .unwrap();
    assert!(
        !refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("read only"),
        "innodb_log_buffer_size is not dynamic: {refused:?}"
    );
    let variables = server.sql("SHOW GLOBAL VARIABLES");
    drop(server);
    let cnf = "[mysqld]\ndatadir = /var/lib/mysql\ninnodb_log_buffer_size = 32M\n";
    let found = drift(&snapshot(work, cnf, &variables));
    let f = found
        .iter()
        .find(|f| f.subject == ["innodb_log_buffer_size"])
        .unwrap_or_else(|| panic!("no drift: {found:#?}"));
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.explanation.contains("not dynamic") && f.explanation.contains("pending restart"),
        "{}",
        f.explanation
    );
    // and the restart does apply it
    let file = work.join("server.cnf");
    tree::put(&file, "[mysqld]\ninnodb_log_buffer_size = 32M\n");
    let server = Server::start(&t, &file, work, Args::Isolated);
    assert_eq!(
        server.sql("SELECT @@GLOBAL.innodb_log_buffer_size").trim(),
        "33554432"
    );
}

/// An option name the server does not know, without `loose-`, stops the
/// next start ("unknown variable"); it was listed as a setting with no
/// finding. Now it is a problem naming the file, the line and the server's
/// own message; `loose-` makes it a warning the server starts with.
#[test]
fn an_unknown_option_name_is_a_server_that_will_not_start() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let (_, word) = mariadb::version(&t.mariadbd);
    let variables = format!("version\t{word}\n");
    let numbers: String = word
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    for (line, written) in [
        ("interactive-timeot = 88", "interactive-timeot=88"),
        ("--interactive-timeout = 88", "--interactive-timeout=88"),
    ] {
        let cnf = format!("[mysqld]\nmax_connections = 50\n{line}\n");
        let file = work.join("refused.cnf");
        tree::put(&file, &cnf);
        let (server, started) = Server::try_start(&t, &file, work, Args::Isolated);
        let log = server.log();
        drop(server);
        assert!(matches!(started, Started::Exited(_)), "{line}: {log}");
        let said = format!("unknown variable '{written}'");
        assert!(
            log.contains(&format!("mariadbd: {said}")) && log.contains("[ERROR] Aborting"),
            "{line}: the server said {log}"
        );
        for capture in [variables.as_str(), ""] {
            let snap = snapshot(work, &cnf, capture);
            // without a capture the installed package names the version
            if capture.is_empty() {
                tree::put(
                    &snap.join("var/lib/dpkg/status"),
                    &format!("Package: mariadb-server-core\nStatus: install ok installed\nVersion: 1:{numbers}-1\n"),
                );
            }
            let facts = gather(&audit::host(&snap), &Needs::default());
            let issue = facts
                .issues
                .iter()
                .find(|i| i.line == Some(3) && i.message.contains("refuses to start"))
                .unwrap_or_else(|| panic!("{line}: {:#?}", facts.issues));
            assert!(
                issue.message.contains(&format!("[ERROR] mariadbd: {said}"))
                    && issue.message.contains("Aborting"),
                "{}",
                issue.message
            );
            assert_eq!(issue.path, "/etc/my.cnf");
        }
    }
    // `loose-`: the server starts with a warning, and driftaudit raises no
    // refused start.
    let cnf = "[mysqld]\nloose-interactive-timeot = 88\n";
    let file = work.join("loose.cnf");
    tree::put(&file, cnf);
    let server = Server::start(&t, &file, work, Args::Isolated);
    assert!(server
        .log()
        .contains("unknown variable 'loose-interactive-timeot=88'"));
    drop(server);
    let facts = gather(
        &audit::host(snapshot(work, cnf, &variables)),
        &Needs::default(),
    );
    assert!(
        !facts
            .issues
            .iter()
            .any(|i| i.message.contains("refuses to start")),
        "{:#?}",
        facts.issues
    );
}

/// `read_rnd_buffer_size = 1P` runs as the maximum 2147483647 with an
/// "adjusted" warning. Without a capture (version unknown) driftaudit judged
/// 1 PiB; now the value every rule reads is the server's, with a note.
#[test]
fn a_value_above_the_maximum_runs_clamped_and_rules_judge_that() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let cnf = "[mysqld]\nread_rnd_buffer_size = 1P\n";
    let file = work.join("clamp.cnf");
    tree::put(&file, cnf);
    let server = Server::start(&t, &file, work, Args::Isolated);
    let running = server.sql("SELECT @@GLOBAL.read_rnd_buffer_size");
    let variables = server.sql("SHOW GLOBAL VARIABLES");
    drop(server);
    assert_eq!(running.trim(), "2147483647");
    for capture in [variables.as_str(), ""] {
        let facts = gather(
            &audit::host(snapshot(work, cnf, capture)),
            &Needs::default(),
        );
        for ns in ["mycnf_effective", "mysql_sizing"] {
            match facts.namespaces[ns].get("read_rnd_buffer_size") {
                Some(Entry::Set(s)) => {
                    assert_eq!(s.value.as_f64(), Some(2147483647.0), "{ns}: {s:?}");
                    assert!(
                        s.note
                            .as_deref()
                            .unwrap_or("")
                            .contains("maximum 2147483647"),
                        "{ns}: {s:?}"
                    );
                }
                other => panic!("{ns}: {other:?}"),
            }
        }
    }
}
