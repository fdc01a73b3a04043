//! mysql-sizing held to MySQLTuner 1.9.9 on a real server: Debian's MariaDB
//! started (as root, on a unix socket in a temp dir) from three option trees
//! (defaults, undersized, oversized), `mysqltuner --json --forcemem MB`
//! run against it, and a driftaudit snapshot of the same server (its option
//! file, `SHOW GLOBAL VARIABLES`, `SHOW ENGINE PERFORMANCE_SCHEMA STATUS`,
//! `du -sb` of the data directory, a /proc/meminfo with the RAM given to
//! --forcemem) checked with `driftaudit check --snapshot`. The verdicts of
//! the rules MySQLTuner has a counterpart for must agree with its
//! recommendations, and mysql-sizing.peak-memory's figure must equal its
//! "Maximum possible memory usage" within 1 % (docs/coverage.md, "mysql-sizing
//! and MySQLTuner").

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common;
use crate::common::mariadb::{self, Args, Server};
use crate::common::tree;

/// The server's tools and MySQLTuner.
struct Tools {
    db: mariadb::Tools,
    tuner: PathBuf,
}

fn tools() -> Option<Tools> {
    Some(Tools {
        db: mariadb::tools()?,
        tuner: common::tool("mysqltuner", "mysqltuner")?,
    })
}

/// One option tree: its [mysqld] lines (besides the paths), the RAM given
/// to MySQLTuner, and SQL run before it (data for the pool/data check).
struct Tree {
    name: &'static str,
    options: &'static str,
    ram_mib: u64,
    setup: &'static str,
}

const TREES: [Tree; 3] = [
    Tree {
        name: "default",
        options: "",
        ram_mib: 16384,
        setup: "CREATE DATABASE IF NOT EXISTS t; CREATE TABLE IF NOT EXISTS t.small (i INT PRIMARY KEY) ENGINE=InnoDB; INSERT IGNORE INTO t.small VALUES (1),(2),(3);",
    },
    Tree {
        name: "undersized",
        options: "innodb_buffer_pool_size = 16M\ninnodb_log_file_size = 4M\nmax_connections = 20\ntmp_table_size = 64M\nmax_heap_table_size = 16M\n",
        ram_mib: 4096,
        // about 40 MiB of InnoDB data over a 16 MiB pool
        setup: "CREATE DATABASE IF NOT EXISTS t; CREATE TABLE IF NOT EXISTS t.big (i INT PRIMARY KEY AUTO_INCREMENT, b VARBINARY(1000)) ENGINE=InnoDB; INSERT INTO t.big (b) SELECT REPEAT('x', 1000) FROM t.seq_1_to_36000; ANALYZE TABLE t.big;",
    },
    Tree {
        name: "oversized",
        options: "innodb_buffer_pool_size = 1G\ninnodb_log_file_size = 64M\nmax_connections = 2000\nsort_buffer_size = 8M\njoin_buffer_size = 8M\nread_rnd_buffer_size = 4M\nmax_allowed_packet = 64M\nperformance_schema = ON\ninnodb_flush_log_at_trx_commit = 2\n",
        ram_mib: 8192,
        setup: "SELECT 1;",
    },
];

/// What MySQLTuner said about one server.
#[derive(Debug)]
struct Tuner {
    peak: f64,
    peak_pct: f64,
    log_pct: f64,
    pool_below_data: bool,
}

fn mysqltuner(t: &Tools, work: &Path, sock: &Path, ram_mib: u64) -> Tuner {
    // MySQLTuner passes `-S SOCK -P 3306` for --socket, and the MariaDB
    // client then connects over TCP: wrappers that add the socket instead.
    let admin = work.join("admin.sh");
    let client = work.join("client.sh");
    for (path, bin) in [(&admin, &t.db.admin), (&client, &t.db.client)] {
        tree::put(
            path,
            &format!(
                "#!/bin/sh\nexec {} --socket={} \"$@\"\n",
                bin.display(),
                sock.display()
            ),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = Command::new(&t.tuner)
        .args(["--nocolor", "--noask", "--json"])
        .args(["--forcemem", &ram_mib.to_string(), "--forceswap", "0"])
        .args(["--user", "root"])
        .arg("--mysqladmin")
        .arg(&admin)
        .arg("--mysqlcmd")
        .arg(&client)
        .stdin(Stdio::null())
        .output()
        .expect("run mysqltuner");
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').unwrap_or_else(|| {
        panic!(
            "mysqltuner printed no JSON ({}): {text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let json: Value = serde_json::from_str(&text[start..])
        .unwrap_or_else(|e| panic!("mysqltuner JSON: {e}: {text}"));
    let calc = &json["Calculations"];
    let num = |k: &str| -> f64 {
        match &calc[k] {
            Value::Number(n) => n.as_f64().unwrap(),
            Value::String(s) => s.parse().unwrap_or_else(|_| panic!("{k}: {s}")),
            v => panic!("mysqltuner Calculations.{k}: {v}"),
        }
    };
    let adjust = json["AdjustVariables"].to_string();
    Tuner {
        peak: num("max_peak_memory"),
        peak_pct: num("pct_max_physical_memory"),
        log_pct: num("innodb_log_size_pct"),
        pool_below_data: adjust.contains("innodb_buffer_pool_size (>="),
    }
}

/// driftaudit's findings for the sizing rules and mysql-innodb's pool rules.
fn driftaudit(snap: &Path) -> Vec<Value> {
    let snap = snap.display().to_string();
    let (_, stdout, stderr) = common::cli::run(&[
        "check",
        "--snapshot",
        &snap,
        "--format",
        "json",
        "--only",
        "mysql-sizing.*",
        "--only",
        "mysql.pool-*",
    ]);
    let json: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("driftaudit JSON: {e}: {stderr}"));
    let hosts = json["hosts"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![json.clone()]);
    hosts[0]["findings"].as_array().cloned().unwrap_or_default()
}

fn status<'a>(findings: &'a [Value], rule: &str) -> &'a str {
    let f: Vec<&Value> = findings.iter().filter(|f| f["rule"] == rule).collect();
    assert_eq!(f.len(), 1, "{rule}: {findings:#?}");
    f[0]["status"].as_str().unwrap()
}

fn verdict(bad: bool) -> &'static str {
    if bad {
        "fail"
    } else {
        "pass"
    }
}

#[test]
fn sizing_verdicts_and_peak_memory_agree_with_mysqltuner_on_three_option_trees() {
    let Some(t) = tools() else { return };
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let data = w.join("data");
    t.db.install_db(w);
    let mut problems = Vec::new();
    for tree in &TREES {
        // MySQLTuner 1.9.9 divides by innodb_buffer_pool_chunk_size, which
        // MariaDB 10.11 reports as 0 ("deprecated, no effect"): it dies
        // before its JSON unless the option is set. It changes nothing else.
        let cnf_text = format!(
            "[mysqld]\nuser = root\ndatadir = {d}\nsocket = {w}/s.sock\npid-file = {w}/p.pid\nlog-error = {w}/err.log\nskip-networking\ninnodb_buffer_pool_chunk_size = 1M\n{}",
            tree.options,
            d = data.display(),
            w = w.display()
        );
        let cnf = w.join("my.cnf");
        tree::put(&cnf, &cnf_text);
        // the file names the data directory, socket and log itself
        let server = Server::start(&t.db, &cnf, w, Args::None);
        server.sql(tree.setup);
        let tuner = mysqltuner(&t, w, &server.sock, tree.ram_mib);
        let snap = w.join(format!("snap-{}", tree.name));
        tree::put(&snap.join("etc/mysql/my.cnf"), &cnf_text);
        tree::put(
            &snap.join("captures/mysql-variables.tsv"),
            &server.sql("SHOW GLOBAL VARIABLES"),
        );
        tree::put(
            &snap.join("captures/mysql-performance-schema.tsv"),
            &server.sql("SHOW ENGINE PERFORMANCE_SCHEMA STATUS"),
        );
        tree::put(
            &snap.join("proc/meminfo"),
            &format!("MemTotal:       {} kB\n", tree.ram_mib * 1024),
        );
        let du = Command::new("du").arg("-sb").arg(&data).output().unwrap();
        tree::put(
            &snap.join("captures/du.txt"),
            &String::from_utf8_lossy(&du.stdout),
        );
        drop(server);

        let f = driftaudit(&snap);
        let name = tree.name;
        // Maximum possible memory usage: the figure and the 85 % verdict.
        let peak = f
            .iter()
            .find(|x| x["rule"] == "mysql-sizing.peak-memory")
            .and_then(|x| x["breakdown"]["parts"].as_array())
            .map(|parts| parts.iter().map(|p| p[1].as_f64().unwrap()).sum::<f64>())
            .unwrap_or_else(|| panic!("{name}: no peak-memory breakdown: {f:#?}"));
        let off = (peak - tuner.peak).abs() / tuner.peak;
        eprintln!(
            "{name}: driftaudit peak {peak} bytes, MySQLTuner {} bytes ({:.4} % apart); MySQLTuner: {tuner:?}",
            tuner.peak,
            off * 100.0
        );
        if off > 0.01 {
            problems.push(format!(
                "{name}: peak memory {peak} vs MySQLTuner's {} ({:.2} % apart)",
                tuner.peak,
                off * 100.0
            ));
        }
        // The redo log is no longer held to MySQLTuner's 20-30 % (issue 48:
        // a vendor default is never failed for a ratio, only a log far too
        // small for the pool is); its verdicts are the trees' own, below.
        let pairs = [("mysql-sizing.peak-memory", verdict(tuner.peak_pct > 85.0))];
        // where they differ by design: MySQLTuner flags MariaDB's own
        // defaults (96 MiB of redo for 128 MiB of pool, 75 %), which the
        // rule passes as the vendor's default
        if name == "default" && tuner.log_pct <= 30.0 {
            problems.push(format!(
                "{name}: MySQLTuner's redo log ratio is {} %, not the 75 % of MariaDB's defaults this comparison documents",
                tuner.log_pct
            ));
        }
        for (rule, want) in pairs {
            let got = status(&f, rule);
            if got != want {
                problems.push(format!("{name}: {rule} is {got}, MySQLTuner says {want}"));
            }
        }
        // InnoDB buffer pool / data size: the pool nobody set is
        // mysql-sizing's, a pool set in a file mysql-innodb's.
        let pool_rule = if tree.options.contains("innodb_buffer_pool_size") {
            "mysql.pool-too-small-for-data"
        } else {
            "mysql-sizing.pool-default"
        };
        let got = status(&f, pool_rule);
        let want = verdict(tuner.pool_below_data);
        if got != want {
            problems.push(format!(
                "{name}: {pool_rule} is {got}, MySQLTuner's pool / data size says {want}"
            ));
        }
        // The rules MySQLTuner has no unconditional counterpart for, on what
        // the tree sets (docs/coverage.md says why).
        // The redo log: 4 MiB for a 16 MiB pool (25 %) and 64 MiB for a
        // 1 GiB pool (6.25 %) are above the 5 % where a log is far too
        // small; the defaults are MariaDB's own 96 MiB for 128 MiB.
        let own: &[(&str, &str)] = match name {
            "undersized" => &[
                ("mysql-sizing.tmp-table-limit", "fail"),
                ("mysql-sizing.redo-log-ratio", "pass"),
            ],
            "oversized" => &[
                ("mysql-sizing.commit-durability", "fail"),
                ("mysql-sizing.redo-log-ratio", "pass"),
            ],
            _ => &[
                ("mysql-sizing.tmp-table-limit", "pass"),
                ("mysql-sizing.commit-durability", "pass"),
                ("mysql-sizing.table-cache-files", "pass"),
                ("mysql-sizing.redo-log-ratio", "pass"),
            ],
        };
        for (rule, want) in own {
            let got = status(&f, rule);
            if got != *want {
                problems.push(format!("{name}: {rule} is {got}, the tree makes it {want}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
