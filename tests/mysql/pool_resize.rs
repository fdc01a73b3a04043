//! Issue 48 on the real MariaDB 10.11: the buffer-pool sizing rules
//! (`mysql.pool-too-small-for-data`, `mysql.pool-too-large-for-ram`) judge
//! the pool the running server holds as well as the option files' pool.
//! innodb_buffer_pool_size is dynamic (MariaDB 10.2+, MySQL 5.7.5+): a real
//! `SET GLOBAL` resize runs until the next restart, which reverts it to the
//! files' value, so a file within the host's numbers no longer hides a
//! running pool outside them.

use std::path::Path;

use driftaudit::unstable::report::{Finding, Status};

use crate::common;
use crate::common::audit;
use crate::common::mariadb::{self, Args, Server};
use crate::common::tree;

/// The one finding of `rule` in `findings`.
fn only<'a>(findings: &'a [Finding], rule: &str) -> &'a Finding {
    let f = common::of_rule(findings, rule);
    assert_eq!(f.len(), 1, "{rule}: {f:#?}");
    f[0]
}

/// Resize the running pool to `bytes` and wait until the server reports
/// it (MariaDB resizes in the background; the variable shows the new size
/// once the resize is done).
fn resize(server: &Server, bytes: u64) {
    server.sql(&format!("SET GLOBAL innodb_buffer_pool_size = {bytes}"));
    for _ in 0..600 {
        if server.sql("SELECT @@innodb_buffer_pool_size").trim() == bytes.to_string() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!(
        "the server did not resize its pool to {bytes}: {}",
        server.sql("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")
    );
}

/// The capture's data directory (the server's own, in the test's temp dir).
fn datadir(capture: &str) -> String {
    capture
        .lines()
        .find_map(|l| l.strip_prefix("datadir\t"))
        .expect("the capture has datadir")
        .trim_end_matches('/')
        .to_string()
}

/// A snapshot of the server's option file, the capture, a `du` of its
/// data directory (`data` bytes; under the packaged path, which the file
/// does not move, and the running server's own) and a machine of `ram_kib`.
fn snapshot(dir: &Path, cnf: &str, capture: &str, data: u64, ram_kib: u64) {
    let du = format!("{data}\t/var/lib/mysql\n{data}\t{}\n", datadir(capture));
    let meminfo = format!("MemTotal:       {ram_kib} kB\n");
    tree::write_files(
        dir,
        &[
            ("etc/my.cnf", cnf),
            ("captures/mysql-variables.tsv", capture),
            ("captures/du.txt", &du),
            ("proc/meminfo", &meminfo),
        ],
    );
}

/// A server started on a 128 MiB pool from its option file, then resized
/// with `SET GLOBAL`: down to 64 MiB (below the 100 MiB of data on a 1 GiB
/// machine) and up to 320 MiB (above 80 % of a 384 MiB machine). The file's
/// 128 MiB passes both rules on both machines; before, both rules judged
/// the file alone and passed. Now each fails, naming the running side and
/// the pool the next restart brings back.
#[test]
fn a_pool_resized_with_set_global_outside_the_hosts_numbers_fails_on_the_running_side() {
    let Some((t, tmp)) = mariadb::installed() else {
        return;
    };
    let work = tmp.path();
    let cnf = "[mysqld]\ninnodb_buffer_pool_size = 128M\n";
    let real = work.join("server.cnf");
    tree::put(&real, cnf);
    let server = Server::start(&t, &real, work, Args::Isolated);
    resize(&server, 64 << 20);
    let shrunk = server.capture_with_snapshot(work);
    resize(&server, 320 << 20);
    let grown = server.capture_with_snapshot(work);
    drop(server);
    assert!(shrunk.contains("innodb_buffer_pool_size\t67108864"));
    assert!(grown.contains("innodb_buffer_pool_size\t335544320"));

    let rules = audit::only(&["mysql.pool-too-*"]);
    // 100 MiB of data on a 1 GiB machine: the file's 128 MiB holds it, the
    // running 64 MiB does not
    let small = work.join("shrunk");
    snapshot(&small, cnf, &shrunk, 100 << 20, 1 << 20);
    let f = audit::findings(&rules, &small);
    let s = only(&f, "mysql.pool-too-small-for-data");
    assert_eq!(s.status, Status::Fail, "{s:#?}");
    for part in [
        "The next start gives a buffer pool of 128 MiB",
        "the running server runs 64 MiB until the next restart, which applies 128 MiB",
        "with the smaller pool, 64 MiB,",
    ] {
        assert!(s.explanation.contains(part), "{part}: {}", s.explanation);
    }
    assert_eq!(
        only(&f, "mysql.pool-too-large-for-ram").status,
        Status::Pass
    );

    // a 384 MiB machine: 80 % is 307 MiB; the file's 128 MiB is within
    // it, the running 320 MiB is not
    let large = work.join("grown");
    snapshot(&large, cnf, &grown, 100 << 20, 384 << 10);
    let f = audit::findings(&rules, &large);
    let l = only(&f, "mysql.pool-too-large-for-ram");
    assert_eq!(l.status, Status::Fail, "{l:#?}");
    for part in [
        "The next start gives a buffer pool of 128 MiB",
        "the running server runs 320 MiB until the next restart, which applies 128 MiB",
        "The larger of the two, 320 MiB,",
    ] {
        assert!(l.explanation.contains(part), "{part}: {}", l.explanation);
    }
    assert!(
        l.evidence
            .iter()
            .any(|e| e.path == "/captures/mysql-variables.tsv"),
        "the running side's line: {:?}",
        l.evidence
    );
}
