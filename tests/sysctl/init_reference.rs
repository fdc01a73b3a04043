//! The init system and the services that apply sysctl values, against the
//! real thing: driftaudit run on the live host inside a private mount+pid
//! namespace whose PID 1 is not systemd (and one whose PID 1 is a program
//! named systemd with /run/systemd/system present), and ufw's own init
//! script (/usr/lib/ufw/ufw-init) run on a snapshot's files in private
//! mount and network namespaces, with recorders in place of `sysctl`,
//! `iptables` and `modprobe`, compared with what driftaudit says ufw applies.

use std::path::Path;

use serde_json::Value;

use crate::common;
use crate::common::cli::{self, BIN};
use crate::common::mountns::{self, Sh};
use crate::common::tree;

/// Root with `unshare`: namespaces can be made. Off CI a missing piece
/// skips with one line; in CI it fails.
fn can_unshare() -> bool {
    if !mountns::is_root() {
        common::skip("needs root for private namespaces", "not root");
        return false;
    }
    common::tool("unshare", "util-linux").is_some()
}

/// The JSON report of `driftaudit check` on the live host, run by
/// `pid1` (a path: the program PID 1 runs as, given `sh -c` arguments)
/// in a new pid namespace with its own /proc, after `setup` (shell).
fn live_report_as_pid1(pid1: &str, setup: &str) -> Value {
    live_report_of(
        pid1,
        setup,
        "--only 'sysctl.persisted-drift' --only 'mounts.dev-shm'",
    )
}

/// [`live_report_as_pid1`] with the rule selection given (`--only ...`).
fn live_report_of(pid1: &str, setup: &str, only: &str) -> Value {
    let inner = format!("{setup}\n'{BIN}' check --format json {only} > \"$OUT\" 2>/dev/null; true");
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.json");
    let script = format!("unshare --pid --fork --mount-proc '{pid1}' -c \"$INNER\"; cat \"$OUT\"");
    let (code, stdout, stderr) = mountns::run(
        &script,
        Sh::Plain,
        &[("INNER", inner.as_ref()), ("OUT", report.as_os_str())],
    );
    assert!(code == 0, "namespace script failed ({code}): {stderr}");
    cli::json(&stdout)
}

/// Every explanation of a rule's findings, and their statuses.
fn said(report: &Value, rule: &str) -> (Vec<String>, Vec<String>) {
    let fs = cli::findings(report, rule);
    (
        fs.iter()
            .map(|f| f["explanation"].as_str().unwrap_or("").to_string())
            .collect(),
        fs.iter()
            .map(|f| f["status"].as_str().unwrap_or("").to_string())
            .collect(),
    )
}

/// On a host whose PID 1 is not an init (here `sh`, in a pid namespace
/// of the live host), nothing applies the sysctl files at boot: main said
/// the drifting keys would change at the next boot and that "systemd mounts
/// /dev/shm itself". The init that is there applies nothing, so no such
/// claim may be made, and the report says what PID 1 is.
#[test]
fn a_pid1_that_is_not_systemd_makes_no_next_boot_or_systemd_claim() {
    if !can_unshare() {
        return;
    }
    let r = live_report_as_pid1("/bin/sh", "");
    let (why, status) = said(&r, "sysctl.persisted-drift");
    assert!(
        status.iter().all(|s| s != "fail"),
        "drift failed on a host whose PID 1 applies nothing: {why:?}"
    );
    for w in &why {
        assert!(!w.contains("next boot changes"), "{w}");
    }
    let (why, _) = said(&r, "mounts.dev-shm");
    for w in &why {
        assert!(!w.contains("systemd mounts /dev/shm itself"), "{w}");
    }
    assert!(
        r.to_string().contains("PID 1 is `sh`, not an init system"),
        "the report does not say what PID 1 is"
    );
}

/// The scalar hardening rules said "the next boot applies X" whatever the
/// init; on a host whose PID 1 is `sh` (a pid namespace of the live host)
/// nothing applies a sysctl file at boot, so they judge the running value
/// and say so, and their fix says where such a host's values come from.
#[test]
fn hardening_rules_claim_no_next_boot_where_pid1_applies_nothing() {
    if !can_unshare() {
        return;
    }
    let r = live_report_of("/bin/sh", "", "--only 'hardening.*'");
    let fs = r["findings"].as_array().cloned().unwrap_or_else(|| {
        r["hosts"][0]["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    });
    let judged: Vec<&Value> = fs
        .iter()
        .filter(|f| matches!(f["status"].as_str(), Some("pass" | "fail")))
        .filter(|f| {
            f["rule"]
                .as_str()
                .is_some_and(|r| r != "hardening.ip-forward")
        })
        .collect();
    assert!(!judged.is_empty(), "no hardening rule was judged: {r}");
    let mut said_running = 0;
    for f in &judged {
        let why = f["explanation"].as_str().unwrap_or("");
        assert!(!why.contains("next boot applies"), "{why}");
        if why.contains("so only the running value is judged") {
            said_running += 1;
        }
    }
    assert!(
        said_running > 0,
        "no rule said only the running value is judged: {judged:?}"
    );
}

/// PID 1 named systemd with /run/systemd/system present (a copy of `sh`
/// named systemd, a tmpfs over /run) passes systemd's own test
/// (sd_booted(3)), and driftaudit claims systemd; without the directory a
/// program named systemd is not taken for systemd.
#[test]
fn systemd_is_claimed_only_with_its_name_and_run_systemd_system() {
    if !can_unshare() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let fake = d.path().join("systemd");
    std::fs::copy("/bin/sh", &fake).unwrap();
    let fake = fake.display().to_string();
    let with = live_report_as_pid1(
        &fake,
        "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system",
    );
    let text = with.to_string();
    assert!(
        !text.contains("not an init system")
            && !text.contains("does not exist (systemd creates it"),
        "PID 1 `systemd` with /run/systemd/system was not taken for systemd"
    );
    let (why, _) = said(&with, "mounts.dev-shm");
    for w in &why {
        assert!(
            !w.contains("after the next boot") || w.contains("systemd mounts /dev/shm itself"),
            "{w}"
        );
    }
    let without = live_report_as_pid1(&fake, "mount -t tmpfs tmpfs /run");
    assert!(
        without
            .to_string()
            .contains("PID 1 is named `systemd` but /run/systemd/system does not exist"),
        "a program named systemd without /run/systemd/system was taken for systemd"
    );
}

/// The snapshot files ufw reads, with ENABLED as given.
fn ufw_snapshot(root: &Path, enabled: &str) {
    tree::file(root, "/proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
    tree::file(root, "/proc/sys/net/ipv4/conf/all/accept_redirects", "1\n");
    tree::file(root, "/proc/sys/net/ipv4/ip_forward", "0\n");
    tree::file(root, "/proc/1/comm", "systemd\n");
    tree::file(root, "/run/systemd/system/.keep", "");
    tree::file(
        root,
        "/etc/ufw/ufw.conf",
        &format!("# ufw.conf\nENABLED={enabled}\nLOGLEVEL=low\n"),
    );
    tree::file(
        root,
        "/etc/default/ufw",
        "IPV6=yes\nDEFAULT_INPUT_POLICY=\"DROP\"\nMANAGE_BUILTINS=no\nIPT_SYSCTL=/etc/ufw/sysctl.conf\nIPT_MODULES=\"\"\n",
    );
    tree::file(
        root,
        "/etc/ufw/sysctl.conf",
        "# ufw\nnet/ipv4/conf/all/accept_redirects=0\nnet/ipv4/ip_forward=1\n",
    );
}

/// The keys ufw's own init script asks `sysctl` to apply when started as
/// systemd starts it (`ufw-init start quiet`), on the snapshot's /etc/ufw
/// and /etc/default/ufw bound over the host's. Never on the host: private
/// mount and network namespaces, and since ufw-init-functions sets its own
/// PATH (/sbin:/bin:/usr/sbin:/usr/bin), a directory of recorders is bound
/// over /usr/sbin: `sysctl` writes down the keys of each file it is given
/// and writes nothing, `iptables -L` finds no chain, the rest succeed.
fn ufw_init_applies(root: &Path) -> Vec<String> {
    let bin = tempfile::tempdir().unwrap();
    let log = bin.path().join("sysctl.log");
    let fakes = bin.path().join("sbin");
    let sysctl = format!(
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -p ] && {{ shift; grep -v '^#' \"$1\" | cut -d= -f1 | tr / . >> '{}'; }}; shift; done\nexit 0\n",
        log.display()
    );
    let iptables = "#!/bin/sh\nfor a; do [ \"$a\" = -L ] && exit 1; done\nexit 0\n";
    let quiet = "#!/bin/sh\ncat >/dev/null 2>&1\nexit 0\n";
    for (prog, text) in [
        ("sysctl", sysctl.as_str()),
        ("iptables", iptables),
        ("ip6tables", iptables),
        ("iptables-restore", quiet),
        ("ip6tables-restore", quiet),
        ("modprobe", quiet),
    ] {
        tree::put_mode(&fakes, prog, text, 0o755);
    }
    let inner = format!(
        "set -e\nmount --bind '{f}' /usr/sbin\n[ -L /sbin ] || mount --bind '{f}' /sbin\n[ \"$(head -c 9 /sbin/sysctl)\" = '#!/bin/sh' ] || exit 9\nmount --bind '{r}/etc/ufw' /etc/ufw\nmount --bind '{r}/etc/default/ufw' /etc/default/ufw\n/usr/lib/ufw/ufw-init start quiet >/dev/null 2>&1 || true\ncat '{l}' 2>/dev/null || true\n",
        f = fakes.display(),
        r = root.display(),
        l = log.display()
    );
    let (code, out, stderr) = mountns::run(
        "unshare -n sh -c \"$INNER\"",
        Sh::Plain,
        &[("INNER", inner.as_ref())],
    );
    assert!(
        code == 0,
        "ufw-init namespace failed ({code}): {stderr}\n{inner}"
    );
    let mut keys: Vec<String> = out
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    keys.sort();
    keys
}

/// The keys driftaudit says ufw sets after boot on that snapshot.
fn driftaudit_ufw_keys(root: &Path) -> Vec<String> {
    let set = common::audit::builtin();
    let f = driftaudit::unstable::engine::gather(&set, &common::audit::host(root));
    let mut keys: Vec<String> = f.namespaces["sysctl_boot"]
        .entries
        .iter()
        .filter_map(|(k, e)| match e {
            driftaudit::unstable::facts::Entry::Set(s)
                if s.evidence[0].path == "/etc/ufw/sysctl.conf" =>
            {
                Some(k.clone())
            }
            _ => None,
        })
        .collect();
    keys.sort();
    keys
}

/// An installed but disabled ufw applies nothing (ufw-init exits before
/// anything at `start quiet` with ENABLED=no); main counted its
/// sysctl.conf as a persisted source and reported false drift. Enabled, it
/// applies every key of the file. driftaudit must say what ufw-init does.
#[test]
fn ufw_applies_its_sysctl_file_only_when_enabled_as_its_own_init_script_does() {
    if !can_unshare() {
        return;
    }
    if !Path::new("/usr/lib/ufw/ufw-init").exists() {
        common::skip(
            "needs ufw's init script",
            "not installed; apt-get install ufw",
        );
        return;
    }
    for enabled in ["yes", "no"] {
        let d = tempfile::tempdir().unwrap();
        ufw_snapshot(d.path(), enabled);
        let real = ufw_init_applies(d.path());
        let ours = driftaudit_ufw_keys(d.path());
        assert_eq!(ours, real, "ENABLED={enabled}: driftaudit vs ufw-init");
        if enabled == "yes" {
            assert_eq!(real.len(), 2, "ufw-init applied {real:?}");
        } else {
            assert!(real.is_empty(), "ufw-init applied {real:?}");
        }
    }
}

/// OpenRC's own sysctl service, init.d/sysctl.in at OpenRC commit
/// 04d75bc192486fee932e4e602bdfffc32a0d8b96 (github.com/OpenRC/openrc),
/// quoted: OpenRC cannot be installed beside this machine's init, so the
/// test reads the cited text. `BSD_sysctl` runs only on *BSD and GNU
/// (`start`'s case on $RC_UNAME); on Linux, `Linux_sysctl`.
const OPENRC_SYSCTL_UPSTREAM: &str = "#!/sbin/openrc-run
depend()
{
\tafter clock
\tbefore bootmisc logger
\tkeyword -prefix -systemd-nspawn -vserver
}

BSD_sysctl()
{
\t[ -e /etc/sysctl.conf ] || return 0
\tlocal retval=0 var= comments= conf=
\teindent
\tfor conf in /etc/sysctl.conf /etc/sysctl.d/*.conf; do
\t\tif [ -r \"$conf\" ]; then
\t\t\tvebegin \"applying $conf\"
\t\t\twhile read var comments; do
\t\t\t\tcase \"$var\" in
\t\t\t\t\"\"|\"#\"*) continue;;
\t\t\t\tesac
\t\t\t\tsysctl -w \"$var\" >/dev/null || retval=1
\t\t\tdone < \"$conf\"
\t\t\tveend $retval
\t\tfi
\tdone
\teoutdent
\treturn $retval
}

Linux_sysctl()
{
\tlocal quiet
\tyesno $rc_verbose || quiet=-q

\tsysctl ${quiet} --system
}

start()
{
\tlocal rc=0

\tebegin \"Configuring kernel parameters\"
\tcase \"$RC_UNAME\" in
\t*BSD|GNU) BSD_sysctl; rc=$? ;;
\tLinux) Linux_sysctl; rc=$? ;;
\tesac
\teend $rc \"Unable to configure some kernel parameters\"
}
";

/// `Linux_sysctl` as Alpine patches it for busybox's sysctl, which has no
/// `--system` (aports main/openrc
/// 0003-sysctl-add-compatibility-for-busybox-sysctl.patch, carried by
/// aports commit a4e163e8ec3312193260a46f70ded9110886da2b, openrc 0.38.3):
/// each file of the loop with `sysctl -p`, in the loop's order.
const OPENRC_SYSCTL_ALPINE: &str = "#!/sbin/openrc-run
Linux_sysctl()
{
\tlocal quiet retval=0
\tyesno $rc_verbose || quiet=-q

\tset --
\teindent
\tfor i in /run/sysctl.d/*.conf \\
\t\t\t/etc/sysctl.d/*.conf \\
\t\t\t/usr/local/lib/sysctl.d/*.conf \\
\t\t\t/usr/lib/sysctl.d/*.conf \\
\t\t\t/lib/sysctl.d/*.conf \\
\t\t\t/etc/sysctl.conf; do
\t\tif [ -e \"$i\" ]; then
\t\t\tvebegin \"applying $conf\"
\t\t\tsysctl ${quiet} -p \"$i\"
\t\t\tretval=$(( $retval + $? ))
\t\t\tveend $retval
\t\tfi
\tdone
\teoutdent

\treturn $retval
}
";

/// An OpenRC host (PID 1 `init`, /run/openrc, `sysctl` in the boot
/// runlevel) with the given service script and sysctl (`busybox` makes
/// /sbin/sysctl a link to busybox), a file in /etc/sysctl.d and one of
/// the same name in /usr/lib/sysctl.d that disagree, and the running value.
fn openrc_host(root: &Path, script: &str, busybox: bool, running: &str) {
    tree::file(root, "/proc/sys/kernel/osrelease", "6.6.58-0-lts\n");
    tree::file(root, "/proc/sys/vm/swappiness", &format!("{running}\n"));
    tree::file(root, "/proc/1/comm", "init\n");
    tree::file(root, "/run/openrc/softlevel", "default\n");
    tree::file(root, "/etc/runlevels/boot/sysctl", "");
    tree::file(root, "/etc/init.d/sysctl", script);
    tree::file(root, "/etc/sysctl.d/60-db.conf", "vm.swappiness = 10\n");
    tree::file(root, "/usr/lib/sysctl.d/60-db.conf", "vm.swappiness = 60\n");
    if busybox {
        std::fs::create_dir_all(root.join("bin")).unwrap();
        tree::file(root, "/bin/busybox", "");
        std::fs::create_dir_all(root.join("sbin")).unwrap();
        std::os::unix::fs::symlink("/bin/busybox", root.join("sbin/sysctl")).unwrap();
    }
}

/// The persisted-drift findings of `check` on a tree: (status, subject).
fn drift_on(root: &Path) -> Vec<(String, String)> {
    let dir = root.display().to_string();
    let (_, out, _) = cli::run(&[
        "check",
        "--snapshot",
        &dir,
        "--format",
        "json",
        "--only",
        "sysctl.persisted-drift",
    ]);
    cli::findings(&cli::json(&out), "sysctl.persisted-drift")
        .iter()
        .map(|f| {
            (
                f["status"].as_str().unwrap_or("").to_string(),
                f["subject"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default(),
            )
        })
        .collect()
}

/// OpenRC's sysctl service, as its cited script is written: upstream's
/// `Linux_sysctl` runs `sysctl --system` (no loop to read), Alpine's
/// applies /run, /etc, /usr/local/lib, /usr/lib, /lib sysctl.d, then
/// /etc/sysctl.conf, each file with `sysctl -p`. Main modelled OpenRC with
/// busybox as `BSD_sysctl` (/etc files only), which Linux never runs.
#[test]
fn openrc_sysctl_service_order_is_read_from_its_script() {
    assert_eq!(
        driftaudit::unstable::facts::init::openrc_sysctl_order(OPENRC_SYSCTL_UPSTREAM),
        None
    );
    let alpine =
        driftaudit::unstable::facts::init::openrc_sysctl_order(OPENRC_SYSCTL_ALPINE).unwrap();
    assert_eq!(
        alpine,
        driftaudit::unstable::facts::init::ALPINE_SYSCTL_ORDER.map(String::from)
    );

    // Alpine's loop applies /usr/lib/sysctl.d/60-db.conf after the /etc
    // file of the same name: 60 is what the boot ends with, so a kernel
    // running 60 is no drift and one running 10 is (main said the reverse:
    // it applied the /etc files only)
    for (running, status) in [("60", "pass"), ("10", "fail")] {
        let d = tempfile::tempdir().unwrap();
        openrc_host(d.path(), OPENRC_SYSCTL_ALPINE, true, running);
        let got = drift_on(d.path());
        let swappiness = got.iter().find(|(_, s)| s == "vm.swappiness");
        match status {
            "fail" => assert!(
                swappiness.is_some_and(|(st, _)| st == "fail"),
                "running {running}: {got:?}"
            ),
            _ => assert!(
                swappiness.is_none() && got.iter().any(|(st, _)| st == "pass"),
                "running {running}: {got:?}"
            ),
        }
    }

    // upstream's script with busybox's sysctl: `--system` is not an option
    // busybox knows, the service applies nothing, so nothing is drift
    let d = tempfile::tempdir().unwrap();
    openrc_host(d.path(), OPENRC_SYSCTL_UPSTREAM, true, "30");
    let got = drift_on(d.path());
    assert!(got.iter().all(|(st, _)| st == "skip"), "{got:?}");

    // upstream's script with procps: `sysctl --system`, which keeps the
    // /etc file of a name and drops the /usr/lib one: 10
    let d = tempfile::tempdir().unwrap();
    openrc_host(d.path(), OPENRC_SYSCTL_UPSTREAM, false, "60");
    let got = drift_on(d.path());
    assert!(
        got.iter()
            .any(|(st, s)| st == "fail" && s == "vm.swappiness"),
        "{got:?}"
    );
}
