//! Reading the live host's running server (issue 48): `check --mysql` and
//! `diff SNAPSHOT live --mysql` read a real MariaDB read-only, named by the
//! client's own option file or socket (no `HOME` trick), as `snapshot
//! --mysql` captures it; without `--mysql` no server is contacted, and a
//! read that fails says why on stderr and in the unknowns.

use std::path::Path;

use crate::common::cli::{self, says};
use crate::common::{mariadb, tree};

/// `driftaudit ARGS` with an empty `HOME` (no ~/.my.cnf of whoever runs
/// the tests) and no client environment.
fn da(home: &Path, args: &[&str]) -> (i32, String, String) {
    cli::parts(
        cli::cmd()
            .env("HOME", home)
            .env_remove("MYSQL_UNIX_PORT")
            .env_remove("MYSQL_HOST")
            .env_remove("MYSQL_TCP_PORT")
            .env_remove("MYSQL_HOME")
            .args(args)
            .output()
            .expect("run driftaudit"),
    )
}

/// Whether a check report's findings hold evidence from the server's
/// variables (`/captures/mysql-variables.tsv`), and how many findings are
/// unknown because the live server was not read.
fn runtime_evidence(report: &serde_json::Value) -> (usize, usize) {
    let text = report.to_string();
    (
        text.matches("/captures/mysql-variables.tsv").count(),
        text.matches("read from a live host only with --mysql")
            .count(),
    )
}

#[test]
fn check_and_diff_read_the_running_server_only_when_asked_with_mysql() {
    let Some((_t, tmp, server)) = mariadb::running() else {
        return;
    };
    let work = tmp.path();
    let home = work.join("home");
    std::fs::create_dir_all(&home).unwrap();
    // the client's own option file names the account; the socket is given
    // on its own (each flag alone implies --mysql)
    let client = tree::file(work, "client.cnf", "[client]\nuser = root\n");
    let client = client.to_str().unwrap();
    let sock = server.sock.to_str().unwrap().to_string();
    server.sql("SET GLOBAL max_connections = 77");

    let snap = work.join("snap");
    let snap = snap.to_str().unwrap();
    let (code, _, err) = da(
        &home,
        &[
            "snapshot",
            "--mysql-defaults-file",
            client,
            "--mysql-socket",
            &sock,
            "--out",
            snap,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let captured = std::fs::read_to_string(work.join("snap/captures/mysql-variables.tsv")).unwrap();
    assert!(captured.contains("max_connections\t77\n"), "{captured}");

    // the server changes after the snapshot: `diff … live --mysql` sees it
    server.sql("SET GLOBAL max_connections = 88");
    let (_, out, err) = da(
        &home,
        &[
            "diff",
            snap,
            "live",
            "--mysql-defaults-file",
            client,
            "--mysql-socket",
            &sock,
        ],
    );
    says(&out, "max_connections: 77 -> 88");
    assert!(!out.contains("-> unavailable"), "{out}\n{err}");
    assert!(
        !out.contains("server version") || !out.contains("-> unknown"),
        "{out}"
    );
    // without --mysql the live side has no running values, and says how to get them
    let (_, out, _) = da(&home, &["diff", snap, "live"]);
    says(&out, "-> unavailable");
    says(&out, "only with --mysql");

    // check on the live host: the runtime rules judge the server's values
    let (code, out, err) = da(
        &home,
        &[
            "check",
            "--mysql-defaults-file",
            client,
            "--mysql-socket",
            &sock,
            "--format",
            "json",
        ],
    );
    assert!((0..=1).contains(&code), "{err}");
    let (evidence, unread) = runtime_evidence(&cli::json(&out));
    assert!(evidence > 0, "no finding read the running server: {out}");
    assert_eq!(unread, 0, "{out}");
    assert!(
        out.contains("77") || out.contains("88"),
        "the server's own values are not in the report"
    );
    // without --mysql nothing is read, and the unknowns say how to read it
    let (_, out, _) = da(&home, &["check", "--format", "json"]);
    let (evidence, unread) = runtime_evidence(&cli::json(&out));
    assert_eq!(evidence, 0, "a live check read the server unasked");
    assert!(unread > 0, "{out}");

    // a read that fails is said on stderr and in the unknowns, never a pass
    let gone = work.join("gone.sock");
    let (_, out, err) = da(
        &home,
        &[
            "check",
            "--mysql-defaults-file",
            client,
            "--mysql-socket",
            gone.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    says(&err, "--mysql: the running server was not read");
    says(&err, "gone.sock");
    says(&out, "the running server was not read (--mysql)");
}

#[test]
fn mysql_reads_the_live_server_so_it_is_refused_with_snapshots() {
    let host = cli::host("nat-story");
    let (code, _, err) = cli::run(&["check", "--snapshot", &host, "--mysql"]);
    assert_eq!(code, 2, "{err}");
    says(&err, "--mysql reads the live host's running server");
    let (code, _, err) = cli::run(&["diff", &host, &host, "--mysql-socket", "/nonexistent"]);
    assert_eq!(code, 2, "{err}");
    says(&err, "name `live` as one side");
}

#[test]
fn every_command_names_the_server_the_same_way() {
    for cmd in ["check", "diff", "fix", "snapshot"] {
        let (_, help, _) = cli::run(&[cmd, "--help"]);
        for flag in ["--mysql\n", "--mysql-defaults-file", "--mysql-socket"] {
            assert!(help.contains(flag), "`{cmd} --help` has no {flag}:\n{help}");
        }
    }
}
