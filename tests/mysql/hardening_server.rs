//! Real-server test of the mysql-hardening policy: Debian's MariaDB started
//! from a hardened and from a default option tree. The values its rules
//! judge from the option files and the compiled-in defaults (a snapshot
//! whose capture holds only `version`) equal what `SHOW GLOBAL VARIABLES`
//! reports, so every verdict is the same with the full capture as without
//! it, and the verdicts are the ones the benchmark expects of each tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{gather, Entry, Needs};
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::report::Status;

use crate::common;

struct Tools {
    mariadbd: PathBuf,
    install_db: PathBuf,
    client: PathBuf,
    admin: PathBuf,
}

fn tools() -> Option<Tools> {
    Some(Tools {
        mariadbd: common::tool("mariadbd", "mariadb-server")?,
        install_db: common::tool("mariadb-install-db", "mariadb-server")?,
        client: common::tool("mariadb", "mariadb-client")?,
        admin: common::tool("mariadb-admin", "mariadb-client")?,
    })
}

/// A running server; shut down (and killed if need be) when dropped, also on panic.
struct Server {
    child: Child,
    sock: PathBuf,
    admin: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(&self.admin)
            .arg("--no-defaults")
            .arg("-S")
            .arg(&self.sock)
            .arg("--user=root")
            .arg("shutdown")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A fresh data directory in `work/data` (root without a password).
fn install_db(t: &Tools, work: &Path) {
    let mut last = String::new();
    for _ in 0..2 {
        let data = work.join("data");
        let _ = std::fs::remove_dir_all(&data);
        let out = Command::new(&t.install_db)
            .args([
                "--no-defaults",
                "--auth-root-authentication-method=normal",
                "--user=root",
            ])
            .arg(format!("--datadir={}", data.display()))
            .stdin(Stdio::null())
            .output()
            .expect("mariadb-install-db");
        if out.status.success() {
            return;
        }
        last = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    panic!("mariadb-install-db failed: {last}");
}

/// Start the server from `cnf` alone: only the data directory, socket and
/// pid file come from the command line, so networking, the error log and
/// every judged option are the file's or the compiled-in default.
fn start(t: &Tools, cnf: &Path, work: &Path) -> Server {
    let sock = work.join("s.sock");
    let _ = std::fs::remove_file(&sock);
    let child = Command::new(&t.mariadbd)
        .arg(format!("--defaults-file={}", cnf.display()))
        .arg(format!("--datadir={}", work.join("data").display()))
        .arg(format!("--socket={}", sock.display()))
        .arg(format!("--pid-file={}", work.join("p.pid").display()))
        .arg("--user=root")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mariadbd");
    let mut server = Server {
        child,
        sock: sock.clone(),
        admin: t.admin.clone(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while !sock.exists() {
        if let Ok(Some(st)) = server.child.try_wait() {
            panic!("mariadbd exited ({st}) with {}", cnf.display());
        }
        assert!(
            Instant::now() < deadline,
            "mariadbd did not open its socket in 30 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

/// The server's `SHOW GLOBAL VARIABLES`, as `snapshot --mysql` captures it.
fn show_global_variables(t: &Tools, server: &Server) -> String {
    let out = Command::new(&t.client)
        .arg("--no-defaults")
        .arg("-S")
        .arg(&server.sock)
        .args(["--user=root", "-NB", "-e", "SHOW GLOBAL VARIABLES"])
        .output()
        .expect("run mariadb client");
    assert!(
        out.status.success(),
        "SHOW GLOBAL VARIABLES failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A snapshot of the option file and a capture.
fn snapshot(dir: &Path, cnf: &str, capture: &str) -> Host {
    let _ = std::fs::remove_dir_all(dir);
    write(&dir.join("etc/my.cnf"), cnf);
    write(&dir.join("captures/mysql-variables.tsv"), capture);
    Host::snapshot(dir).expect("snapshot host")
}

/// Each mysql-hardening rule's verdict on a host.
fn verdicts(host: &Host) -> BTreeMap<String, Status> {
    let mut p = PolicySet::builtin().unwrap();
    p.filter(&["mysqlsec.*".to_string()], &[]).unwrap();
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
    write(&real, cnf);
    let server = start(t, &real, work);
    let capture = show_global_variables(t, &server);
    drop(server);
    let version = format!("version\t{}\n", runtime(&capture, "version"));
    let files_only = snapshot(&work.join(format!("{name}-files")), cnf, &version);
    let with_runtime = snapshot(&work.join(format!("{name}-runtime")), cnf, &capture);
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
    let Some(t) = tools() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    install_db(&t, work);
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
    let mut expected = status_table(&[
        ("local-infile", Status::Pass),
        ("symbolic-links", Status::Pass),
        ("secure-file-priv", Status::Pass),
        ("bind-address", Status::Pass),
        ("log-error", Status::Pass),
        ("strict-sql-mode", Status::Pass),
        ("skip-name-resolve", Status::Pass),
        // runtime only: not in a capture of `version` alone
        ("have-ssl", Status::Skip),
        ("require-secure-transport", Status::Pass),
        ("old-passwords", Status::Pass),
        // no option file holds a password
        ("option-file-permissions", Status::Skip),
        // the test's snapshot neither holds root's history nor lists it absent
        ("root-command-history", Status::Unknown),
    ]);
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
