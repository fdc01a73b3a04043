//! Issue 48 on the real MariaDB 10.11 (and galera-4): rules judge what the
//! running server does as well as what its option files give the next
//! start, captured the way an admin captures it (`driftaudit snapshot
//! --mysql`). A file edited after the start (skip_name_resolve), a `SET
//! GLOBAL` the files contradict (innodb_buffer_pool_dump_at_shutdown: the
//! next shutdown goes by it) and a Galera node's documented flush mode.

use std::path::{Path, PathBuf};

use driftaudit::unstable::report::{Finding, Status};

use crate::common;
use crate::common::audit;
use crate::common::cli;
use crate::common::mariadb::{self, tools, Args, Server};
use crate::common::tree;

/// The one finding of `rule` in `findings`.
fn only<'a>(findings: &'a [Finding], rule: &str) -> &'a Finding {
    let f = common::of_rule(findings, rule);
    assert_eq!(f.len(), 1, "{rule}: {f:#?}");
    f[0]
}

fn evidence(f: &Finding) -> Vec<String> {
    f.evidence
        .iter()
        .map(|e| match e.line {
            Some(l) => format!("{}:{l}", e.path),
            None => e.path.clone(),
        })
        .collect()
}

/// Issue 48: `skip_name_resolve = ON` written to 99-local.cnf after the
/// server started (it reads the option only at start) leaves the running
/// server resolving host names. Before, the rule judged the file alone and
/// passed, and `diff` listed the edit under "Fixes". Now the rule fails
/// naming the running side, and the diff lists no fix.
#[test]
fn skip_name_resolve_written_after_the_start_fails_on_the_running_side_and_is_no_fix() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let port = 40000 + std::process::id() % 20000;
    let main = format!(
        "[mysqld]\nport = {port}\nbind-address = 127.0.0.1\n!includedir /etc/mysql/conf.d/\n"
    );
    // the server starts without the option (the directory is empty)
    let real = work.join("real.cnf");
    tree::put(
        &real,
        &format!("[mysqld]\nport = {port}\nbind-address = 127.0.0.1\n"),
    );
    let server = Server::start(&t, &real, work, Args::Paths);
    assert_eq!(
        server.sql("SELECT @@skip_name_resolve").trim(),
        "0",
        "the server resolves host names"
    );
    let capture = server.capture_with_snapshot(work);
    // skip_name_resolve is read only at start: the running server refuses
    // to change it
    assert!(
        capture.contains("skip_name_resolve\tOFF"),
        "the capture has skip_name_resolve OFF"
    );
    drop(server);

    let snap = |name: &str, local: Option<&str>| -> PathBuf {
        let dir = work.join(name);
        let mut files = vec![
            ("etc/my.cnf", main.as_str()),
            ("captures/mysql-variables.tsv", capture.as_str()),
        ];
        if let Some(text) = local {
            files.push(("etc/mysql/conf.d/99-local.cnf", text));
        }
        tree::write_files(&dir, &files);
        dir
    };
    let before = snap("before", None);
    let after = snap("after", Some("[mysqld]\nskip_name_resolve = ON\n"));
    let rules = audit::only(&["mysqlsec.*"]);

    let b = audit::findings(&rules, &before);
    assert_eq!(only(&b, "mysqlsec.skip-name-resolve").status, Status::Fail);
    let a = audit::findings(&rules, &after);
    let f = only(&a, "mysqlsec.skip-name-resolve");
    assert_eq!(f.status, Status::Fail, "{f:#?}");
    for part in [
        "skip_name_resolve is set to ON in the option files",
        "the running server runs OFF until the next restart, which applies ON",
    ] {
        assert!(f.explanation.contains(part), "{part}: {}", f.explanation);
    }
    let ev = evidence(f);
    assert!(
        ev.iter().any(|e| e == "/etc/mysql/conf.d/99-local.cnf:2")
            && ev
                .iter()
                .any(|e| e.starts_with("/captures/mysql-variables.tsv:")),
        "both sides' lines: {ev:?}"
    );

    let (code, out, err) = cli::run(&[
        "diff",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(code == 0 || code == 1, "diff: {err}");
    let d = cli::json(&out);
    let fixed: Vec<&str> = d["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["rule"].as_str())
        .collect();
    assert!(
        !fixed.contains(&"mysqlsec.skip-name-resolve"),
        "an edit the running server does not run is no fix: {fixed:?}"
    );
}

/// Issue 48: innodb_buffer_pool_dump_at_shutdown is read at shutdown, so
/// after `SET GLOBAL innodb_buffer_pool_dump_at_shutdown = OFF` the next
/// shutdown saves nothing, whatever the files say. The real server proves
/// it (no ib_buffer_pool after its shutdown); before, the rule passed on
/// the files' ON.
#[test]
fn dump_at_shutdown_switched_off_by_set_global_fails_whatever_the_files_say() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let cnf = "[mysqld]\ninnodb_buffer_pool_size = 64M\ninnodb_buffer_pool_dump_at_shutdown = ON\n";
    let real = work.join("server.cnf");
    tree::put(&real, cnf);
    let server = Server::start(&t, &real, work, Args::Isolated);
    // the bootstrap's own dump is not this server's
    let dump_file = work.join("data/ib_buffer_pool");
    let _ = std::fs::remove_file(&dump_file);
    server.sql("SET GLOBAL innodb_buffer_pool_dump_at_shutdown = OFF");
    let capture = server.capture_with_snapshot(work);
    drop(server);
    assert!(
        !dump_file.exists(),
        "the server saved its pool at shutdown although the running value was OFF"
    );

    let snap = work.join("snap");
    tree::write_files(
        &snap,
        &[
            ("etc/my.cnf", cnf),
            ("captures/mysql-variables.tsv", &capture),
        ],
    );
    // the rule judges pools from 1 GiB up: this test's server has 64 MiB
    let (code, out, err) = cli::run(&[
        "check",
        "--snapshot",
        snap.to_str().unwrap(),
        "--only",
        "mysql.warm-restart-dump",
        "--set",
        "mysql-innodb.warm_restart_min_pool=32M",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = cli::json(&out);
    let f = cli::findings(&report, "mysql.warm-restart-dump");
    assert_eq!(f.len(), 1, "{out}");
    assert_eq!(f[0]["status"], "fail");
    let text = f[0]["explanation"].as_str().unwrap();
    for part in [
        "set to ON in the option files",
        "the running server runs OFF until the next restart, which applies ON",
        "the next shutdown goes by the running value",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}

fn galera_provider() -> Option<&'static Path> {
    [
        "/usr/lib/galera/libgalera_smm.so",
        "/usr/lib64/galera-4/libgalera_smm.so",
    ]
    .into_iter()
    .map(Path::new)
    .find(|p| p.exists())
}

/// Issue 48: a real one-node Galera cluster (MariaDB 10.11 + galera-4,
/// `wsrep_on = ON`, `gcomm://`) with innodb_flush_log_at_trx_commit = 2,
/// the setting the MariaDB KB documents for Galera ("Configuring MariaDB
/// Galera Cluster": durability comes from the other nodes). Before,
/// mysql-sizing.commit-durability failed it. Now it passes and says it
/// inferred the role, and from what: the running server's wsrep_on with
/// its provider loaded, or, without the capture, the option files.
#[test]
fn a_galera_node_flushing_at_2_passes_saying_it_inferred_the_role() {
    let Some(t) = tools() else { return };
    let Some(provider) = galera_provider() else {
        common::skip("a Galera node", "needs galera-4 (libgalera_smm.so)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    t.install_db(work);
    let cnf = format!(
        "[mysqld]\ninnodb_buffer_pool_size = 64M\nbinlog_format = ROW\ninnodb_autoinc_lock_mode = 2\ninnodb_flush_log_at_trx_commit = 2\n\n[galera]\nwsrep_on = ON\nwsrep_provider = {}\nwsrep_cluster_address = gcomm://\nwsrep_node_address = 127.0.0.1\nwsrep_provider_options = \"gmcast.listen_addr=tcp://127.0.0.1:{}\"\n",
        provider.display(),
        45000 + (std::process::id() + 7) % 5000
    );
    let real = work.join("galera.cnf");
    tree::put(&real, &cnf);
    let server = Server::start(&t, &real, work, Args::Isolated);
    assert_eq!(
        server
            .sql("SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'")
            .split_whitespace()
            .last(),
        Some("1"),
        "the node runs as a one-node cluster"
    );
    let capture = server.capture_with_snapshot(work);
    drop(server);
    assert!(
        capture.contains("wsrep_on\tON"),
        "the node reports wsrep_on"
    );

    let rules = audit::only(&["mysql-sizing.commit-durability"]);
    let with_capture = work.join("snap");
    tree::write_files(
        &with_capture,
        &[
            ("etc/my.cnf", &cnf),
            ("captures/mysql-variables.tsv", &capture),
        ],
    );
    let f = audit::findings(&rules, &with_capture);
    let d = only(&f, "mysql-sizing.commit-durability");
    assert_eq!(d.status, Status::Pass, "{d:#?}");
    assert!(
        d.explanation
            .contains("galera = yes, inferred from the running server: wsrep_on = ON"),
        "{}",
        d.explanation
    );
    assert!(
        evidence(d)
            .iter()
            .any(|e| e.starts_with("/captures/mysql-variables.tsv:")),
        "the capture's wsrep_on line: {:?}",
        evidence(d)
    );

    // the option files alone (no capture) show the role as well
    let files_only = work.join("files-only");
    tree::write_files(&files_only, &[("etc/my.cnf", &cnf)]);
    let dpkg = "Package: mariadb-server-core\nStatus: install ok installed\nVersion: 1:10.11.19-0+deb12u1\n";
    tree::write_files(&files_only, &[("var/lib/dpkg/status", dpkg)]);
    let f = audit::findings(&rules, &files_only);
    let d = only(&f, "mysql-sizing.commit-durability");
    assert_eq!(d.status, Status::Pass, "{d:#?}");
    assert!(
        d.explanation
            .contains("galera = yes, inferred from the option files: wsrep_on = ON"),
        "{}",
        d.explanation
    );
    let ev = evidence(d);
    assert!(
        ev.contains(&"/etc/my.cnf:8".to_string()) && ev.contains(&"/etc/my.cnf:9".to_string()),
        "the wsrep_on and wsrep_provider lines: {ev:?}"
    );
}
