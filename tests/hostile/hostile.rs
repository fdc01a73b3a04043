//! Snapshots that attack the reader, one test per case: symlink loops, links to
//! /dev/zero and outside the root, FIFOs and device files where config files
//! should be, a multi-GB sparse file, include cycles and deep include chains,
//! invalid UTF-8, Latin-1, CRLF and NUL bytes. Each case must finish within a
//! timeout, must not panic, must name the path in a finding (or read the file
//! correctly), and a canary file planted outside the snapshot root must never
//! show up in any output. Also: a live audit as an unprivileged user.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::common::timeout::within;
use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{Entry, Facts};
use driftaudit::unstable::host::MAX_FILE_BYTES;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::render::{self, Format, RenderOptions};
use driftaudit::unstable::report::{HostReport, Report, Status, INPUT_RULE};
use driftaudit::unstable::value::Value;

use crate::common;
use crate::common::audit;

/// Text that exists only in the canary file outside the snapshot root.
const CANARY: &str = "CANARY-5e1f0c7d-outside-the-root";

/// What a user reads of one host's audit: the verbose text and the JSON
/// report, and the gathered facts as JSON.
pub(crate) fn rendered(set: &PolicySet, facts: &Facts, report: &HostReport) -> String {
    let full = Report::new(vec![report.clone()], set);
    let opts = RenderOptions {
        color: false,
        verbose: true,
        ..Default::default()
    };
    let mut out = render::render(&full, Format::Text, opts);
    out.push_str(&render::render(&full, Format::Json, opts));
    out.push_str(&serde_json::to_string(facts).unwrap());
    out
}

/// A snapshot root inside a temp dir, and a canary dir beside it (outside the root).
struct Case {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    canary_dir: PathBuf,
}

/// A snapshot root named `host` with an empty etc/sysctl.d, a `sysctl -a`
/// capture (kernel 6.1) and /proc/meminfo (8 GB).
pub(crate) fn minimal_snapshot(root: &Path, host: &str) {
    fs::create_dir_all(root.join("etc/sysctl.d")).unwrap();
    crate::common::tree::write_files(
        root,
        &[
            (
                "snapshot.json",
                &format!(r#"{{"schema":"driftaudit.snapshot/1","host":"{host}"}}"#),
            ),
            (
                "captures/sysctl-a.txt",
                "kernel.osrelease = 6.1.0-18-amd64\nnet.ipv4.tcp_syncookies = 1\nvm.swappiness = 60\n",
            ),
            ("proc/meminfo", "MemTotal: 8000000 kB\n"),
        ],
    );
    crate::common::tree::systemd_pid1(root);
}

impl Case {
    fn new() -> Case {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("snap");
        let canary_dir = tmp.path().join("outside");
        minimal_snapshot(&root, "hostile");
        fs::create_dir_all(&canary_dir).unwrap();
        // the canary, in sysctl, option-file and localconfig shapes
        fs::write(
            canary_dir.join("canary.conf"),
            format!("net.ipv4.tcp_syncookies = 0\nkernel.{CANARY} = 1\n[mysqld]\ninnodb_buffer_pool_size = 7\n# {CANARY}\n"),
        )
        .unwrap();
        fs::write(
            canary_dir.join("localconfig.xml"),
            format!("<localconfig><key name=\"mailboxd_java_heap_size\"><value>{CANARY}</value></key></localconfig>\n"),
        )
        .unwrap();
        Case {
            _tmp: tmp,
            root,
            canary_dir,
        }
    }

    fn path(&self, host_path: &str) -> PathBuf {
        let p = self.root.join(host_path.trim_start_matches('/'));
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).unwrap();
        }
        p
    }

    fn put(&self, host_path: &str, bytes: impl AsRef<[u8]>) {
        fs::write(self.path(host_path), bytes).unwrap();
    }

    fn link(&self, host_path: &str, target: impl AsRef<Path>) {
        symlink(target, self.path(host_path)).unwrap();
    }

    fn canary(&self) -> PathBuf {
        self.canary_dir.join("canary.conf")
    }

    /// Audit with the built-in policies on a thread with a timeout; returns the
    /// facts, the report, and every output format rendered. Asserts the
    /// canary never appears anywhere.
    fn audited(&self) -> Audited {
        let root = self.root.clone();
        let a = within(20, "audit", move || {
            let set = audit::builtin();
            let host = audit::host(&root);
            let facts = engine::gather(&set, &host);
            let report = engine::evaluate(&set, &facts);
            let out = rendered(&set, &facts, &report);
            Audited { facts, report, out }
        });
        assert!(
            !a.out.contains(CANARY),
            "content from outside the snapshot root leaked into the output:\n{}",
            a.out
        );
        a
    }
}

struct Audited {
    facts: Facts,
    report: HostReport,
    out: String,
}

impl Audited {
    /// `driftaudit.input` findings whose subject or explanation names `path`.
    fn input_about(&self, path: &str) -> Vec<String> {
        self.report
            .findings
            .iter()
            .filter(|f| f.rule == INPUT_RULE)
            .filter(|f| f.subject.iter().any(|s| s == path) || f.explanation.contains(path))
            .map(|f| format!("{}: {}", f.status.as_str(), f.explanation))
            .collect()
    }

    fn assert_input_finding(&self, path: &str, needle: &str) {
        let found = self.input_about(path);
        assert!(
            found.iter().any(|e| e.contains(needle)),
            "expected a driftaudit.input finding about {path} containing `{needle}`; got {found:#?}\nall input findings: {:#?}",
            self.report
                .findings
                .iter()
                .filter(|f| f.rule == INPUT_RULE)
                .map(|f| &f.explanation)
                .collect::<Vec<_>>()
        );
    }

    fn setting(&self, ns: &str, key: &str) -> Option<&driftaudit::unstable::facts::Setting> {
        match self.facts.namespaces.get(ns)?.get(key)? {
            Entry::Set(s) => Some(s),
            _ => None,
        }
    }
}

fn mknod(path: &Path, kind: libc::mode_t, major: u32, minor: u32) -> bool {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let dev = libc::makedev(major, minor);
    // SAFETY: plain syscall on a valid NUL-terminated path.
    unsafe { libc::mknod(c.as_ptr(), kind | 0o644, dev) == 0 }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: plain syscall on a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// mknod needs CAP_MKNOD: skip locally without it, fail in CI.
fn need_mknod(ok: bool, what: &str) -> bool {
    if ok {
        return true;
    }
    common::skip(
        &format!("needs to create {what}"),
        "mknod not permitted: not root / no CAP_MKNOD",
    );
    false
}

#[test]
fn symlink_loop_in_place_of_sysctl_conf() {
    let c = Case::new();
    c.link("/etc/sysctl.d/90-a.conf", "91-b.conf");
    c.link("/etc/sysctl.d/91-b.conf", "90-a.conf");
    c.link("/etc/sysctl.conf", "/etc/sysctl.conf");
    c.link("/etc/my.cnf", "/etc/mysql/my.cnf");
    c.link("/etc/mysql/my.cnf", "/etc/my.cnf");
    let a = c.audited();
    // looping sysctl.d entries cannot be resolved: systemd-sysctl skips them; we say so
    a.assert_input_finding("/etc/sysctl.d/90-a.conf", "symlink");
    a.assert_input_finding("/etc/sysctl.conf", "symbolic links");
    a.assert_input_finding("/etc/my.cnf", "symbolic links");
}

#[test]
fn link_to_dev_zero_without_and_with_a_device_inside_the_root() {
    let c = Case::new();
    c.link("/etc/sysctl.d/70-zero.conf", "/dev/zero");
    c.link("/etc/my.cnf", "../../../../../../dev/zero");
    c.link("/captures/mysql-variables.tsv", "/dev/zero");
    // /dev/zero does not exist inside the root: the links dangle inside it.
    let a = c.audited();
    a.assert_input_finding("/etc/sysctl.d/70-zero.conf", "does not exist");
    assert!(
        a.setting("mycnf", "innodb_buffer_pool_size").is_none(),
        "a dangling my.cnf must not produce options"
    );
    // Now a real character device 1:5 (zero) at /dev/zero inside the root.
    if !need_mknod(
        mknod(&c.path("/dev/zero"), libc::S_IFCHR, 1, 5),
        "a character device",
    ) {
        return;
    }
    let a = c.audited();
    a.assert_input_finding("/etc/sysctl.d/70-zero.conf", "not a regular file");
    a.assert_input_finding("/etc/my.cnf", "not a regular file");
}

#[test]
fn links_outside_the_root_never_read_the_canary() {
    let c = Case::new();
    let canary = c.canary();
    c.link("/etc/sysctl.d/80-out.conf", &canary);
    let rel = format!("../../../../../../../../..{}", canary.display());
    c.link("/etc/sysctl.conf", &rel);
    c.link("/etc/my.cnf", &canary);
    c.link(
        "/opt/zimbra/conf/localconfig.xml",
        c.canary_dir.join("localconfig.xml"),
    );
    c.put(
        "/etc/mysql/my.cnf",
        format!(
            "[mysqld]\n!include {}\n!includedir {}\n!include ../../../../../..{}\n",
            canary.display(),
            c.canary_dir.display(),
            canary.display()
        ),
    );
    let a = c.audited(); // asserts the canary is absent from every output
                         // the canary sets tcp_syncookies = 0: it must not have been applied
    if let Some(s) = a.setting("sysctl_boot", "net.ipv4.tcp_syncookies") {
        assert!(
            s.evidence.iter().all(|e| !e.path.contains("outside")),
            "{s:?}"
        );
    }
    assert!(a.setting("mycnf", "innodb_buffer_pool_size").is_none());
    // the absolute link resolves inside the root, where nothing exists
    a.assert_input_finding("/etc/sysctl.d/80-out.conf", "does not exist");
    a.assert_input_finding("/etc/mysql/my.cnf", &canary.display().to_string());
}

#[test]
fn fifo_where_config_files_should_be_does_not_block() {
    let c = Case::new();
    mkfifo(&c.path("/etc/sysctl.conf"));
    mkfifo(&c.path("/etc/sysctl.d/50-fifo.conf"));
    mkfifo(&c.path("/etc/my.cnf"));
    mkfifo(&c.path("/proc/meminfo.tmp"));
    fs::remove_file(c.path("/proc/meminfo")).unwrap();
    mkfifo(&c.path("/proc/meminfo"));
    fs::remove_file(c.path("/captures/sysctl-a.txt")).unwrap();
    mkfifo(&c.path("/captures/sysctl-a.txt"));
    let a = c.audited(); // a blocking open would hang here and trip the timeout
    a.assert_input_finding("/etc/sysctl.d/50-fifo.conf", "not a regular file");
    a.assert_input_finding("/etc/my.cnf", "not a regular file");
    a.assert_input_finding("/etc/sysctl.conf", "not a regular file");
    a.assert_input_finding("/proc/meminfo", "FIFO");
    assert!(
        a.out.contains("FIFO"),
        "the FIFO must be named in the report"
    );
}

#[test]
fn device_files_where_config_files_should_be_are_not_read() {
    let c = Case::new();
    let ok = mknod(&c.path("/etc/sysctl.d/60-dev.conf"), libc::S_IFCHR, 1, 3)
        && mknod(&c.path("/etc/my.cnf"), libc::S_IFBLK, 7, 0);
    if !need_mknod(ok, "device files") {
        return;
    }
    let a = c.audited();
    a.assert_input_finding("/etc/sysctl.d/60-dev.conf", "not a regular file");
    a.assert_input_finding("/etc/my.cnf", "not a regular file");
}

#[test]
fn sparse_file_of_gigabytes_is_capped_and_reported() {
    let c = Case::new();
    let gb5 = 5u64 << 30;
    for p in [
        "/etc/sysctl.d/50-huge.conf",
        "/etc/my.cnf",
        "/opt/zimbra/conf/localconfig.xml",
    ] {
        let f = fs::File::create(c.path(p)).unwrap();
        f.set_len(gb5).unwrap();
    }
    let a = c.audited();
    let cap = MAX_FILE_BYTES.to_string();
    a.assert_input_finding("/etc/sysctl.d/50-huge.conf", &cap);
    a.assert_input_finding("/etc/my.cnf", &cap);
    a.assert_input_finding("/opt/zimbra/conf/localconfig.xml", &cap);
    // the live audit of a huge capture too
    let f = fs::File::create(c.path("/captures/sysctl-a.txt")).unwrap();
    f.set_len(gb5).unwrap();
    let a = c.audited();
    a.assert_input_finding("/captures/sysctl-a.txt", &cap);
}

#[test]
fn include_cycle_is_reported_and_stops() {
    let c = Case::new();
    c.put(
        "/etc/my.cnf",
        "[mysqld]\nmax_connections = 10\n!include /etc/mysql/a.cnf\n",
    );
    c.put(
        "/etc/mysql/a.cnf",
        "[mysqld]\n!include /etc/mysql/b.cnf\nmax_connections = 20\n",
    );
    c.put(
        "/etc/mysql/b.cnf",
        "[mysqld]\n!include /etc/mysql/a.cnf\n!includedir /etc/mysql\nmax_connections = 30\n",
    );
    let a = c.audited();
    a.assert_input_finding("/etc/mysql/a.cnf", "cycle");
    assert!(
        a.setting("mycnf", "max_connections").is_some(),
        "options before and inside the cycle are still read"
    );
}

#[test]
fn deep_include_chain_stops_at_the_depth_cap() {
    let c = Case::new();
    c.put("/etc/my.cnf", "[mysqld]\n!include /etc/mysql/d0.cnf\n");
    for i in 0..200 {
        c.put(
            &format!("/etc/mysql/d{i}.cnf"),
            format!(
                "[mysqld]\nmax_connections = {i}\n!include /etc/mysql/d{}.cnf\n",
                i + 1
            ),
        );
    }
    let a = c.audited();
    let depth = driftaudit::unstable::facts::mysql::MAX_INCLUDE_DEPTH.to_string();
    assert!(
        a.report.findings.iter().any(|f| f.rule == INPUT_RULE
            && f.explanation.contains("include depth")
            && f.explanation.contains(&depth)),
        "a chain deeper than {depth} must be reported: {:#?}",
        a.report
            .findings
            .iter()
            .filter(|f| f.rule == INPUT_RULE)
            .map(|f| &f.explanation)
            .collect::<Vec<_>>()
    );
}

#[test]
fn invalid_utf8_and_latin1_comments_do_not_hide_settings() {
    let c = Case::new();
    c.put(
        "/etc/sysctl.d/40-latin1.conf",
        b"# r\xe9glage pour le caf\xe9 (Latin-1)\nnet.ipv4.tcp_syncookies = 0\n# \xff\xfe\xfd\n",
    );
    c.put(
        "/etc/my.cnf",
        b"# cr\xe8me br\xfbl\xe9e\n[mysqld]\nmax_connections = 77 # caf\xe9\n",
    );
    c.put("/etc/sysctl.d/41-badkey.conf", b"net.ipv4.\xff\xfe = 1\n");
    let a = c.audited();
    let s = a
        .setting("sysctl_boot", "net.ipv4.tcp_syncookies")
        .expect("the assignment after a Latin-1 comment is read");
    assert_eq!(s.value, Value::Number(0.0));
    assert_eq!(s.evidence[0].path, "/etc/sysctl.d/40-latin1.conf");
    assert_eq!(s.evidence[0].line, Some(2));
    let m = a
        .setting("mycnf", "max_connections")
        .expect("option after a Latin-1 comment is read");
    assert_eq!(m.value, Value::Number(77.0));
    // the undecodable key is kept (with U+FFFD) and named with its file
    assert!(a.out.contains("/etc/sysctl.d/41-badkey.conf"));
}

#[test]
fn crlf_line_endings_are_read_like_lf() {
    let c = Case::new();
    c.put(
        "/etc/sysctl.d/40-crlf.conf",
        "# windows editor\r\nnet.ipv4.tcp_syncookies = 0\r\nvm.swappiness = 10\r\n",
    );
    c.put(
        "/etc/my.cnf",
        "[mysqld]\r\ninnodb_buffer_pool_size = 1G\r\nmax_connections = 50\r\n",
    );
    let a = c.audited();
    assert_eq!(
        a.setting("sysctl_boot", "vm.swappiness").map(|s| &s.value),
        Some(&Value::Number(10.0))
    );
    assert_eq!(
        a.setting("sysctl_boot", "net.ipv4.tcp_syncookies")
            .map(|s| &s.value),
        Some(&Value::Number(0.0))
    );
    assert_eq!(
        a.setting("mycnf", "max_connections").map(|s| &s.value),
        Some(&Value::Number(50.0))
    );
}

#[test]
fn nul_bytes_are_data_not_terminators() {
    let c = Case::new();
    c.put(
        "/etc/sysctl.d/40-nul.conf",
        b"vm.swappiness = 1\x000\nnet.ipv4.tcp_syncookies = 0\n\x00\x00\x00\n",
    );
    c.put(
        "/etc/my.cnf",
        b"[mysqld]\nmax_connections = 5\x00\nbind\x00address = 1\n",
    );
    c.put("/proc/meminfo", b"MemTotal: 8\x000 kB\n");
    let a = c.audited();
    // the line after the NUL-bearing one is still read
    assert_eq!(
        a.setting("sysctl_boot", "net.ipv4.tcp_syncookies")
            .map(|s| &s.value),
        Some(&Value::Number(0.0))
    );
    // the NUL-bearing lines are findings or read as text naming their file
    assert!(
        !a.input_about("/etc/sysctl.d/40-nul.conf").is_empty()
            || a.out.contains("/etc/sysctl.d/40-nul.conf")
    );
    assert!(
        !a.input_about("/proc/meminfo").is_empty(),
        "{:?}",
        a.facts.facts.get("mem_total")
    );
}

#[test]
fn hostile_fleet_completes_through_the_cli() {
    // Every hostile shape in one fleet, through the binary: finishes, no panic,
    // valid JSON, canary absent.
    let tmp = tempfile::tempdir().unwrap();
    let fleet = tmp.path().join("fleet");
    let canary = tmp.path().join("canary.conf");
    fs::write(&canary, format!("kernel.{CANARY} = 1\n")).unwrap();
    for (i, kind) in ["loop", "fifo", "out", "sparse", "empty"]
        .iter()
        .enumerate()
    {
        let root = fleet.join(format!("h{i}-{kind}"));
        fs::create_dir_all(root.join("etc/sysctl.d")).unwrap();
        match *kind {
            "loop" => symlink("/etc/sysctl.conf", root.join("etc/sysctl.conf")).unwrap(),
            "fifo" => mkfifo(&root.join("etc/sysctl.conf")),
            "out" => symlink(&canary, root.join("etc/sysctl.d/99-x.conf")).unwrap(),
            "sparse" => fs::File::create(root.join("etc/sysctl.conf"))
                .unwrap()
                .set_len(3 << 30)
                .unwrap(),
            _ => {}
        }
    }
    // a snapshot folder that cannot be opened (unreadable is moot as root: a dangling dir link is skipped)
    let bin = crate::common::cli::BIN;
    let fleet2 = fleet.clone();
    let out = within(60, "check --fleet", move || {
        std::process::Command::new(bin)
            .args(["check", "--format", "json", "--fleet"])
            .arg(&fleet2)
            .output()
            .unwrap()
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stdout.contains(CANARY));
    let v: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("invalid JSON ({e}): {stdout}\n{stderr}"));
    assert_eq!(v["hosts"].as_array().unwrap().len(), 5);
    assert_eq!(v["fleet"]["hosts"], 5);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{:?} {stderr}",
        out.status
    );
}

/// The built binary as an unprivileged user on the live host: exits 0 or 1,
/// prints valid JSON, and what it could not read is `unknown`, not a crash.
#[test]
fn live_audit_as_unprivileged_user_exits_cleanly() {
    let bin = crate::common::cli::BIN;
    let is_root = unsafe { libc::geteuid() } == 0;
    if !is_root {
        // already unprivileged: run directly
    }
    let mut cmd = if is_root {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            bin,
        ]);
        c
    } else {
        std::process::Command::new(bin)
    };
    cmd.args(["check", "--format", "json"]).env("NO_COLOR", "1");
    let out = match within(60, "unprivileged live check", move || cmd.output()) {
        Ok(o) => o,
        Err(e) => {
            common::skip("needs `setpriv` to drop privileges", &e.to_string());
            return;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if is_root
        && (stderr.contains("setpriv:")
            || stderr.contains("Permission denied") && out.stdout.is_empty())
    {
        common::skip(
            "needs to run the binary as nobody",
            &format!("cannot drop privileges: {}", stderr.trim()),
        );
        return;
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("invalid JSON as nobody ({e}): {stderr}"));
    let findings = v["hosts"][0]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    // whatever could not be read is unknown with "permission denied", never fail/error
    for f in findings {
        let expl = f["explanation"].as_str().unwrap_or("");
        if expl.contains("permission denied") {
            assert_eq!(f["status"], "unknown", "{f}");
        }
        assert_ne!(f["status"], "error", "no rule may error as nobody: {f}");
    }
    // Files the user may not read, in a snapshot, as nobody: unknown, named.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("snap");
    fs::create_dir_all(root.join("etc/sysctl.d")).unwrap();
    fs::write(
        root.join("etc/sysctl.d/50-private.conf"),
        "vm.swappiness = 1\n",
    )
    .unwrap();
    fs::write(root.join("etc/my.cnf"), "[mysqld]\nmax_connections = 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (p, mode) in [
        (tmp.path().to_path_buf(), 0o755),
        (root.clone(), 0o755),
        (root.join("etc"), 0o755),
        (root.join("etc/sysctl.d"), 0o755),
        (root.join("etc/sysctl.d/50-private.conf"), 0o600),
        (root.join("etc/my.cnf"), 0o600),
    ] {
        fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
    }
    let mut cmd = std::process::Command::new(if is_root { "setpriv" } else { bin });
    if is_root {
        cmd.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            bin,
        ]);
    }
    cmd.args(["check", "--format", "json", "--snapshot"])
        .arg(&root);
    let out = within(60, "unprivileged snapshot check", move || {
        cmd.output().unwrap()
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = v["hosts"][0]["findings"].as_array().unwrap();
    for path in ["/etc/sysctl.d/50-private.conf", "/etc/my.cnf"] {
        assert!(
            findings.iter().any(|f| f["rule"] == INPUT_RULE
                && f["status"] == Status::Unknown.as_str()
                && f["explanation"].as_str().unwrap_or("").contains(path)
                && f["explanation"]
                    .as_str()
                    .unwrap_or("")
                    .contains("permission denied")),
            "{path} unreadable as nobody must be an unknown finding: {findings:#?}"
        );
    }
}
