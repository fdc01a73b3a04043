//! sysctl semantics that auditors commonly get wrong, one test each: vendor
//! files overridden in /etc, keys missing from the running kernel, TAB-separated
//! values, globs with exclusions, masking, procps vs systemd order, dotted
//! interface names, unreadable keys, captures, and snapshot confinement.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::Entry;
use driftaudit::unstable::report::Status;

use crate::common;
use crate::common::cli::says;
use crate::common::{audit, tree};

fn live(root: &Path, key: &str, value: &str) {
    let path = format!(
        "/proc/sys/{}",
        driftaudit::unstable::parse::sysctl::swap_dot_slash(key)
    );
    tree::file(root, &path, &format!("{value}\n"));
}

const DRIFT: &str = "policy: t\ntitle: t\nrules:\n  - id: t.drift\n    title: t\n    severity: medium\n    drift: {configured: sysctl_boot, running: sysctl}\n    why: \"{setting} is {actual}, configured {expected} at {source}\"\n    fix: f\n";

/// `VALUE@SOURCE:LINE` of `key` in namespace `ns` (`sysctl_boot`: what
/// systemd-sysctl sets at boot; `sysctl_procps`: what `sysctl --system` does).
fn value_in(root: &Path, ns: &str, key: &str) -> Option<String> {
    let set = audit::builtin();
    let f = engine::gather(&set, &audit::host(root));
    match f.namespaces[ns].get(key)? {
        Entry::Set(s) => Some(format!("{}@{}", s.raw, s.evidence[0])),
        _ => None,
    }
}

fn boot_value(root: &Path, key: &str) -> Option<String> {
    value_in(root, "sysctl_boot", key)
}

/// `key`'s boot value is `want` (`VALUE@SOURCE:LINE`).
#[track_caller]
fn assert_boot(root: &Path, key: &str, want: &str) {
    assert_eq!(boot_value(root, key).as_deref(), Some(want), "boot {key}");
}

/// `key`'s value after `sysctl --system` is `want` (`VALUE@SOURCE:LINE`).
#[track_caller]
fn assert_procps(root: &Path, key: &str, want: &str) {
    assert_eq!(
        procps_value(root, key).as_deref(),
        Some(want),
        "procps {key}"
    );
}

#[test]
fn vendor_file_overridden_by_same_name_in_etc_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/usr/lib/sysctl.d/50-x.conf", "vm.swappiness = 60\n");
    tree::file(h, "/etc/sysctl.d/50-x.conf", "vm.swappiness = 10\n");
    live(h, "vm.swappiness", "10");
    assert_boot(h, "vm.swappiness", "10@/etc/sysctl.d/50-x.conf:1");
    let r = audit::report(&audit::policy(DRIFT), h);
    assert!(
        r.findings.iter().all(|f| f.status != Status::Fail),
        "{:#?}",
        r.findings
    );
}

#[test]
fn later_basename_wins_regardless_of_directory() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.d/10-a.conf", "vm.swappiness = 10\n");
    tree::file(h, "/usr/lib/sysctl.d/90-b.conf", "vm.swappiness = 90\n");
    assert_boot(h, "vm.swappiness", "90@/usr/lib/sysctl.d/90-b.conf:1");
}

#[test]
fn sysctl_conf_counts_only_through_the_99_link_and_procps_differs() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.conf", "vm.swappiness = 5\n");
    symlink("../sysctl.conf", h.join("etc/sysctl.d/99-sysctl.conf")).ok();
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    let _ = symlink("../sysctl.conf", h.join("etc/sysctl.d/99-sysctl.conf"));
    tree::file(h, "/etc/sysctl.d/zz-local.conf", "vm.swappiness = 30\n");
    live(h, "vm.swappiness", "30");
    // systemd: zz-local.conf sorts after 99-sysctl.conf and wins
    assert_boot(h, "vm.swappiness", "30@/etc/sysctl.d/zz-local.conf:1");
    // procps applies /etc/sysctl.conf last: the built-in rule says they disagree
    let set = audit::builtin();
    let r = audit::report(&set, h);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "sysctl.procps-disagrees" && f.status == Status::Fail)
        .unwrap();
    assert_eq!(f.subject, ["vm.swappiness"]);
    assert_eq!(f.actual.as_deref(), Some("5"));
    says(&f.explanation, "/etc/sysctl.conf");
}

#[test]
fn without_the_link_sysctl_conf_is_not_read_by_systemd() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.conf", "vm.swappiness = 5\n");
    assert_eq!(boot_value(h, "vm.swappiness"), None);
}

#[test]
fn masked_vendor_file_is_ignored() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/usr/lib/sysctl.d/60-v.conf", "vm.swappiness = 60\n");
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink("/dev/null", h.join("etc/sysctl.d/60-v.conf")).unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
}

#[test]
fn key_missing_from_running_kernel_skips_instead_of_failing() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    live(h, "kernel.osrelease", "6.1.0");
    // only a complete source proves a key missing (a partial proc/sys tree is unknown)
    tree::file(h, "/snapshot.json", r#"{"complete": ["sysctl"]}"#);
    let p = "policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: high\n    setting: sysctl.net.bridge.bridge-nf-call-iptables\n    expect: {equals: 1}\n    why: w\n    fix: f\n";
    let r = audit::report(&audit::policy(p), h);
    assert_eq!(r.findings[0].status, Status::Skip);
    assert!(r.findings[0]
        .explanation
        .contains("running kernel has no such key"));
    // and a persisted line for it is no drift (the stale-line rule judges it)
    tree::file(
        h,
        "/etc/sysctl.d/10.conf",
        "-net.bridge.bridge-nf-call-iptables = 0\n",
    );
    let r = audit::report(&audit::policy(DRIFT), h);
    crate::common::all_are(&r.findings, Status::Pass);
}

#[test]
fn tab_separated_values_compare_as_tokens() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(
        h,
        "/etc/sysctl.d/10.conf",
        "net.ipv4.ip_local_port_range = 1024    65000\n",
    );
    live(h, "net.ipv4.ip_local_port_range", "1024\t65000");
    let r = audit::report(&audit::policy(DRIFT), h);
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].status, Status::Pass);
}

#[test]
fn globs_expand_to_live_keys_except_explicit_and_excluded() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    for i in ["all", "default", "eth0", "hub0", "eth0.100"] {
        live(
            h,
            &format!("net.ipv4.conf.{}.rp_filter", i.replace('.', "/")),
            "0",
        );
    }
    tree::file(
        h,
        "/etc/sysctl.d/50.conf",
        "net.ipv4.conf.default.rp_filter = 2\nnet.ipv4.conf.*.rp_filter = 2\n-net.ipv4.conf.all.rp_filter\nnet.ipv4.conf.hub0.rp_filter = 1\n",
    );
    assert_boot(
        h,
        "net.ipv4.conf.eth0.rp_filter",
        "2@/etc/sysctl.d/50.conf:2",
    );
    assert_boot(
        h,
        "net.ipv4.conf.eth0/100.rp_filter",
        "2@/etc/sysctl.d/50.conf:2",
    );
    assert_boot(
        h,
        "net.ipv4.conf.hub0.rp_filter",
        "1@/etc/sysctl.d/50.conf:4",
    );
    assert_eq!(boot_value(h, "net.ipv4.conf.all.rp_filter"), None);
    // also written the slash way
    assert_boot(
        h,
        "net/ipv4/conf/eth0.100/rp_filter",
        "2@/etc/sysctl.d/50.conf:2",
    );
}

#[test]
fn unreadable_live_key_is_unknown_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    live(h, "vm.drop_caches", "0");
    let p = h.join("proc/sys/vm/drop_caches");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o200)).unwrap();
    let pol = "policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: high\n    setting: sysctl.vm.drop_caches\n    expect: {equals: 0}\n    why: w\n    fix: f\n";
    let r = audit::report(&audit::policy(pol), h);
    assert_eq!(r.findings[0].status, Status::Unknown);
    says(&r.findings[0].explanation, "write-only");
}

#[test]
fn capture_is_used_when_proc_sys_is_absent() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(
        h,
        "/captures/sysctl-a.txt",
        "kernel.osrelease = 4.9.0-8-amd64\nnet.ipv4.tcp_tw_recycle = 1\nnet.ipv4.ip_local_port_range = 32768\t60999\n",
    );
    let set = audit::builtin();
    let r = audit::report(&set, h);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "linux.tcp-tw-recycle")
        .unwrap();
    assert_eq!(f.status, Status::Fail);
    assert_eq!(f.evidence[0].path, "/captures/sysctl-a.txt");
    assert_eq!(f.evidence[0].line, Some(2));
}

#[test]
fn no_live_source_makes_live_rules_unknown_not_pass() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/hostname", "empty\n");
    let set = audit::builtin();
    let r = audit::report(&set, h);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "linux.tcp-syncookies")
        .unwrap();
    assert_eq!(f.status, Status::Unknown);
    says(&f.explanation, "captures/sysctl-a.txt");
}

#[test]
fn config_symlink_pointing_outside_the_root_stays_inside() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.conf"), "vm.swappiness = 77\n").unwrap();
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink(
        outside.path().join("secret.conf"),
        h.join("etc/sysctl.d/10-evil.conf"),
    )
    .unwrap();
    symlink(
        "../../../../../../../../".to_string()
            + outside.path().join("secret.conf").to_str().unwrap(),
        h.join("etc/sysctl.d/11-evil.conf"),
    )
    .unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
}

#[test]
fn every_sysctl_corpus_file_parses_without_panic() {
    let Some(dir) = common::corpus_dir("sysctl") else {
        return;
    };
    let mut n = 0;
    for e in fs::read_dir(&dir).expect("corpus dir") {
        let bytes = fs::read(e.unwrap().path()).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let (lines, issues) = driftaudit::unstable::parse::sysctl::parse_conf(&text);
        let (vals, issues2) = driftaudit::unstable::parse::sysctl::parse_capture(&text);
        assert!(lines.len() + issues.len() + vals.len() + issues2.len() > 0);
        n += 1;
    }
    assert!(n >= 30);
}

#[test]
fn rhel7_systemd_reads_sysctl_conf_last() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/os-release", "ID=\"centos\"\nVERSION_ID=\"7\"\n");
    tree::file(h, "/etc/sysctl.conf", "vm.swappiness = 5\n");
    tree::file(h, "/etc/sysctl.d/zz-local.conf", "vm.swappiness = 30\n");
    assert_boot(h, "vm.swappiness", "5@/etc/sysctl.conf:1");
    // on Debian the same files give the sysctl.d value
    tree::file(h, "/etc/os-release", "ID=debian\nVERSION_ID=\"12\"\n");
    assert_boot(h, "vm.swappiness", "30@/etc/sysctl.d/zz-local.conf:1");
}

#[test]
fn ufw_sysctl_conf_is_a_persisted_source_applied_after_boot_when_ufw_is_enabled() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.d/10.conf", "net.ipv4.ip_forward = 0\n");
    tree::file(h, "/etc/ufw/sysctl.conf", "# ufw\nnet/ipv4/ip_forward=1\n");
    tree::file(h, "/etc/default/ufw", "IPT_SYSCTL=/etc/ufw/sysctl.conf\n");
    tree::file(h, "/etc/ufw/ufw.conf", "ENABLED=yes\n");
    assert_boot(h, "net.ipv4.ip_forward", "1@/etc/ufw/sysctl.conf:2");
    // disabled, ufw-init exits before applying anything
    tree::file(h, "/etc/ufw/ufw.conf", "ENABLED=no\n");
    assert_boot(h, "net.ipv4.ip_forward", "0@/etc/sysctl.d/10.conf:1");
}

#[test]
fn stale_line_on_a_new_kernel_is_reported_with_its_line() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    live(h, "kernel.osrelease", "5.15.0-105-generic");
    tree::file(
        h,
        "/etc/sysctl.d/60-perf.conf",
        "net.ipv4.tcp_tw_reuse = 1\nnet.ipv4.tcp_tw_recycle = 1\n",
    );
    let set = audit::builtin();
    let r = audit::report(&set, h);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "linux.tcp-tw-recycle-stale-line")
        .unwrap();
    assert_eq!(f.status, Status::Fail);
    assert_eq!(f.severity, driftaudit::unstable::policy::Severity::Low);
    assert_eq!(f.evidence[0].to_string(), "/etc/sysctl.d/60-perf.conf:2");
    says(&f.explanation, "5.15.0-105-generic");
    // and the value rule is skipped, not failed
    let v = r
        .findings
        .iter()
        .find(|f| f.rule == "linux.tcp-tw-recycle")
        .unwrap();
    assert_eq!(v.status, Status::Skip);
}

fn procps_value(root: &Path, key: &str) -> Option<String> {
    value_in(root, "sysctl_procps", key)
}

fn issues_for(root: &Path, path: &str) -> Vec<String> {
    let set = audit::builtin();
    let f = engine::gather(&set, &audit::host(root));
    f.issues
        .iter()
        .filter(|i| i.path == path)
        .map(|i| i.message.clone())
        .collect()
}

#[test]
fn dotfile_in_sysctl_d_is_ignored_by_systemd_and_read_by_procps() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.d/.60-hidden.conf", "vm.swappiness = 7\n");
    tree::file(h, "/etc/sysctl.d/.conf", "vm.overcommit_memory = 1\n");
    assert_eq!(boot_value(h, "vm.swappiness"), None);
    assert_eq!(boot_value(h, "vm.overcommit_memory"), None);
    assert_procps(h, "vm.swappiness", "7@/etc/sysctl.d/.60-hidden.conf:1");
    // procps takes any name of at least five bytes ending in `.conf`
    assert_procps(h, "vm.overcommit_memory", "1@/etc/sysctl.d/.conf:1");
    let msgs = issues_for(h, "/etc/sysctl.d/.60-hidden.conf");
    assert!(
        msgs.iter().any(|m| m.contains("systemd-sysctl ignores it")),
        "{msgs:?}"
    );
}

#[test]
fn dangling_symlink_in_etc_hides_the_vendor_file_of_the_same_name() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/usr/lib/sysctl.d/50-v.conf", "vm.swappiness = 60\n");
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink("/nonexistent/50-v.conf", h.join("etc/sysctl.d/50-v.conf")).unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
    assert_eq!(procps_value(h, "vm.swappiness"), None);
    // also in /run, above /usr/lib
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/usr/lib/sysctl.d/50-v.conf", "vm.swappiness = 60\n");
    fs::create_dir_all(h.join("run/sysctl.d")).unwrap();
    fs::create_dir_all(h.join("etc")).unwrap(); // a snapshot has etc/
    symlink("missing.conf", h.join("run/sysctl.d/50-v.conf")).unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
}

#[test]
fn relative_link_to_dev_null_masks_the_vendor_file() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/usr/lib/sysctl.d/60-v.conf", "vm.swappiness = 60\n");
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink("../../dev/null", h.join("etc/sysctl.d/60-v.conf")).unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
    assert_eq!(procps_value(h, "vm.swappiness"), None);
    assert_eq!(
        issues_for(h, "/etc/sysctl.d/60-v.conf"),
        Vec::<String>::new()
    );
}

/// On a live host `/dev/null` is a character device: a mask must not be
/// reported as "not a regular file". A snapshot holding a real device node at
/// `/dev/null` (we run as root) takes the same path through the resolver as
/// the live host does; the live host itself is compared in a private mount
/// namespace in tests/sysctl/reference.rs.
#[test]
fn mask_resolving_to_a_device_is_a_mask_not_an_irregular_file() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    fs::create_dir_all(h.join("dev")).unwrap();
    let ok = std::process::Command::new("mknod")
        .arg(h.join("dev/null"))
        .args(["c", "1", "3"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "mknod failed under CI (the suite runs as root there)"
        );
        eprintln!("skipped: cannot create a device node (not root)");
        return;
    }
    tree::file(h, "/usr/lib/sysctl.d/60-v.conf", "vm.swappiness = 60\n");
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink("../../dev/null", h.join("etc/sysctl.d/60-v.conf")).unwrap();
    symlink("/dev/null", h.join("etc/sysctl.d/61-w.conf")).unwrap();
    assert_eq!(boot_value(h, "vm.swappiness"), None);
    for p in ["/etc/sysctl.d/60-v.conf", "/etc/sysctl.d/61-w.conf"] {
        assert_eq!(issues_for(h, p), Vec::<String>::new(), "{p}");
    }
}

#[test]
fn exclusion_after_an_explicit_assignment_means_systemd_does_not_set_the_key() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(
        h,
        "/usr/lib/sysctl.d/50-v.conf",
        "net.ipv4.conf.all.rp_filter = 1\n",
    );
    tree::file(
        h,
        "/etc/sysctl.d/60-x.conf",
        "-net.ipv4.conf.all.rp_filter\n",
    );
    assert_eq!(boot_value(h, "net.ipv4.conf.all.rp_filter"), None);
    // procps: an exclusion only keeps globs away
    assert_procps(
        h,
        "net.ipv4.conf.all.rp_filter",
        "1@/usr/lib/sysctl.d/50-v.conf:1",
    );
    let msgs = issues_for(h, "/etc/sysctl.d/60-x.conf");
    assert!(
        msgs.iter()
            .any(|m| m.contains("does not set `net.ipv4.conf.all.rp_filter` at all")),
        "{msgs:?}"
    );
    // the other order: the assignment after the exclusion is set
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(
        h,
        "/etc/sysctl.d/50-x.conf",
        "-net.ipv4.conf.all.rp_filter\n",
    );
    tree::file(
        h,
        "/etc/sysctl.d/60-v.conf",
        "net.ipv4.conf.all.rp_filter = 1\n",
    );
    assert_boot(
        h,
        "net.ipv4.conf.all.rp_filter",
        "1@/etc/sysctl.d/60-v.conf:1",
    );
}

#[test]
fn glob_repeated_with_the_same_value_keeps_its_place_so_a_later_specific_glob_wins() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    for i in ["all", "default", "eth0", "lo"] {
        live(h, &format!("net.ipv4.conf.{i}.rp_filter"), "0");
    }
    tree::file(
        h,
        "/usr/lib/sysctl.d/10-a.conf",
        "net.ipv4.conf.*.rp_filter = 2\n",
    );
    tree::file(
        h,
        "/etc/sysctl.d/20-b.conf",
        "net.ipv4.conf.eth*.rp_filter = 1\n",
    );
    tree::file(
        h,
        "/etc/sysctl.d/30-c.conf",
        "net.ipv4.conf.*.rp_filter = 2\n",
    );
    // systemd: the repeat keeps 10-a's position, 20-b is applied after it
    assert_boot(
        h,
        "net.ipv4.conf.eth0.rp_filter",
        "1@/etc/sysctl.d/20-b.conf:1",
    );
    assert_boot(
        h,
        "net.ipv4.conf.lo.rp_filter",
        "2@/usr/lib/sysctl.d/10-a.conf:1",
    );
    // procps writes every line in order: 30-c's glob comes last
    assert_procps(
        h,
        "net.ipv4.conf.eth0.rp_filter",
        "2@/etc/sysctl.d/30-c.conf:1",
    );
    // a different value moves the glob to the end: it wins under systemd too
    tree::file(
        h,
        "/etc/sysctl.d/30-c.conf",
        "net.ipv4.conf.*.rp_filter = 0\n",
    );
    assert_boot(
        h,
        "net.ipv4.conf.eth0.rp_filter",
        "0@/etc/sysctl.d/30-c.conf:1",
    );
}

#[test]
fn dash_blank_key_is_set_by_systemd_and_ignored_by_procps() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/sysctl.d/50-x.conf", "- vm.swappiness = 10\n");
    assert_boot(h, "vm.swappiness", "10@/etc/sysctl.d/50-x.conf:1");
    assert_eq!(procps_value(h, "vm.swappiness"), None);
    let msgs = issues_for(h, "/etc/sysctl.d/50-x.conf");
    assert!(msgs.iter().any(|m| m.contains("procps")), "{msgs:?}");
}

fn enable_tuned(root: &Path, profile: &str) {
    let wants = root.join("etc/systemd/system/multi-user.target.wants");
    fs::create_dir_all(&wants).unwrap();
    symlink(
        "/usr/lib/systemd/system/tuned.service",
        wants.join("tuned.service"),
    )
    .unwrap();
    tree::file(root, "/etc/tuned/active_profile", &format!("{profile}\n"));
}

fn boot_note(root: &Path, key: &str) -> Option<String> {
    let set = audit::builtin();
    let f = engine::gather(&set, &audit::host(root));
    match f.namespaces["sysctl_boot"].get(key)? {
        Entry::Set(s) => s.note.clone(),
        _ => None,
    }
}

const TP: &str = "[main]\nsummary=Broadly applicable tuning\n\n[cpu]\ngovernor=performance\n\n[sysctl]\n# tuned's own comment\nvm.swappiness=10\nvm.dirty_ratio = 40\nkernel.sched_migration_cost_ns = 5000000 # inline comment\n";

#[test]
fn tuned_profile_beats_a_vendor_file_and_loses_to_an_admin_file_in_etc() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "throughput-performance");
    tree::file(h, "/usr/lib/tuned/throughput-performance/tuned.conf", TP);
    tree::file(
        h,
        "/usr/lib/sysctl.d/50-vendor.conf",
        "vm.swappiness = 60\nvm.dirty_ratio = 20\n",
    );
    tree::file(h, "/etc/sysctl.d/60-admin.conf", "vm.dirty_ratio = 30\n");
    live(h, "vm.swappiness", "10");
    live(h, "vm.dirty_ratio", "30");
    assert_boot(
        h,
        "vm.swappiness",
        "10@/usr/lib/tuned/throughput-performance/tuned.conf:9",
    );
    let note = boot_note(h, "vm.swappiness").unwrap();
    assert!(note.contains("profile `throughput-performance`"), "{note}");
    // tuned re-applies /etc/sysctl.d after its profile
    assert_boot(h, "vm.dirty_ratio", "30@/etc/sysctl.d/60-admin.conf:1");
    assert_boot(
        h,
        "kernel.sched_migration_cost_ns",
        "5000000@/usr/lib/tuned/throughput-performance/tuned.conf:11",
    );
    // and the drift rule sees no drift: the live values are tuned's
    let r = audit::report(&audit::policy(DRIFT), h);
    assert!(
        r.findings.iter().all(|f| f.status != Status::Fail),
        "{:#?}",
        r.findings
    );
}

#[test]
fn tuned_profile_in_etc_overrides_usr_lib_with_include_chain_and_variables() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "custom");
    tree::file(h, "/usr/lib/tuned/throughput-performance/tuned.conf", TP);
    tree::file(
        h,
        "/usr/lib/tuned/custom/tuned.conf",
        "[sysctl]\nvm.swappiness=99\n",
    );
    tree::file(
        h,
        "/etc/tuned/custom/tuned.conf",
        "[main]\ninclude=throughput-performance\n\n[variables]\nbase=5\nsw=${base}\ninclude=${i:PROFILE_DIR}/vars.conf\n\n[sysctl]\nvm.swappiness=${sw}\nvm.overcommit_memory=\"${ovc}\"\nkernel.pid_max=\\${base}\n",
    );
    tree::file(h, "/etc/tuned/custom/vars.conf", "ovc=2\n");
    assert_boot(h, "vm.swappiness", "5@/etc/tuned/custom/tuned.conf:10");
    assert_boot(
        h,
        "vm.overcommit_memory",
        "2@/etc/tuned/custom/tuned.conf:11",
    );
    // `\${...}` is not expanded
    assert_boot(
        h,
        "kernel.pid_max",
        "${base}@/etc/tuned/custom/tuned.conf:12",
    );
    // from the included profile
    assert_boot(
        h,
        "vm.dirty_ratio",
        "40@/usr/lib/tuned/throughput-performance/tuned.conf:10",
    );
}

#[test]
fn tuned_reapply_uses_its_own_order_and_parser() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "tp");
    tree::file(
        h,
        "/usr/lib/tuned/tp/tuned.conf",
        "[sysctl]\nvm.swappiness=10\n",
    );
    tree::file(h, "/etc/sysctl.conf", "vm.swappiness = 5\n");
    fs::create_dir_all(h.join("etc/sysctl.d")).unwrap();
    symlink("../sysctl.conf", h.join("etc/sysctl.d/99-sysctl.conf")).unwrap();
    tree::file(h, "/etc/sysctl.d/zz-local.conf", "vm.swappiness = 30\n");
    // /run wins over /etc in tuned's list (the opposite of systemd)
    tree::file(h, "/etc/sysctl.d/50-a.conf", "vm.dirty_ratio = 11\n");
    tree::file(h, "/run/sysctl.d/50-a.conf", "vm.dirty_ratio = 22\n");
    // `-key` and globs mean nothing to tuned's parser
    tree::file(
        h,
        "/etc/sysctl.d/60-b.conf",
        "-vm.overcommit_memory = 1\nnet.ipv4.conf.*.rp_filter = 2\n",
    );
    tree::file(
        h,
        "/usr/lib/tuned/tp/tuned.conf",
        "[sysctl]\nvm.swappiness=10\nvm.overcommit_memory=2\n",
    );
    // systemd alone would end with zz-local.conf's 30; tuned re-applies
    // /etc/sysctl.conf last
    assert_boot(h, "vm.swappiness", "5@/etc/sysctl.conf:1");
    assert_boot(h, "vm.dirty_ratio", "22@/run/sysctl.d/50-a.conf:1");
    assert_boot(
        h,
        "vm.overcommit_memory",
        "2@/usr/lib/tuned/tp/tuned.conf:3",
    );
    // reapply_sysctl = 0: the profile's value stays
    tree::file(
        h,
        "/etc/tuned/tuned-main.conf",
        "daemon = 1\nreapply_sysctl = 0\n",
    );
    assert_boot(h, "vm.swappiness", "10@/usr/lib/tuned/tp/tuned.conf:2");
}

#[test]
fn tuned_installed_but_not_enabled_changes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    tree::file(h, "/etc/tuned/active_profile", "tp\n");
    tree::file(
        h,
        "/usr/lib/tuned/tp/tuned.conf",
        "[sysctl]\nvm.swappiness=10\n",
    );
    tree::file(h, "/usr/lib/sysctl.d/50-v.conf", "vm.swappiness = 60\n");
    assert_boot(h, "vm.swappiness", "60@/usr/lib/sysctl.d/50-v.conf:1");
}

#[test]
fn tuned_enabled_without_a_known_profile_or_with_a_run_time_value_is_unknown() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "");
    // the recommender's first rule depends on virt-what, which no file holds
    tree::file(
        h,
        "/usr/lib/tuned/recommend.d/50-tuned.conf",
        "[virtual-guest]\nvirt=.+\n\n[balanced]\n",
    );
    let msgs = issues_for(h, "/etc/tuned/active_profile");
    assert!(
        msgs.iter()
            .any(|m| m.contains("recommender") && m.contains("virt-what")),
        "{msgs:?}"
    );

    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "cpu-partitioning");
    tree::file(
        h,
        "/usr/lib/tuned/cpu-partitioning/tuned.conf",
        "[variables]\nisolated=${f:calc_isolated_cores:1}\n[sysctl]\nkernel.hung_task_timeout_secs = 600\nvm.stat_interval = ${isolated}\nkernel.x = ${f:exec:/bin/true}\n",
    );
    let set = audit::builtin();
    let f = engine::gather(&set, &audit::host(h));
    let boot = &f.namespaces["sysctl_boot"];
    assert!(
        matches!(boot.get("kernel.hung_task_timeout_secs"), Some(Entry::Set(s)) if s.raw == "600")
    );
    for k in ["vm.stat_interval", "kernel.x"] {
        assert!(
            matches!(boot.get(k), Some(Entry::Unreadable { reason, .. }) if reason.contains("running host")),
            "{k}: {:?}",
            boot.get(k)
        );
    }
}

#[test]
fn tuned_include_cycle_and_missing_profile_do_not_hang_or_guess() {
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "a");
    tree::file(
        h,
        "/usr/lib/tuned/a/tuned.conf",
        "[main]\ninclude=b\n[sysctl]\nvm.swappiness=1\n",
    );
    tree::file(
        h,
        "/usr/lib/tuned/b/tuned.conf",
        "[main]\ninclude=a\n[sysctl]\nvm.swappiness=2\nvm.dirty_ratio=3\n",
    );
    assert_boot(h, "vm.swappiness", "1@/usr/lib/tuned/a/tuned.conf:4");
    assert_boot(h, "vm.dirty_ratio", "3@/usr/lib/tuned/b/tuned.conf:5");
    let d = tempfile::tempdir().unwrap();
    let h = d.path();
    enable_tuned(h, "nosuch");
    let msgs = issues_for(h, "/etc/tuned/active_profile");
    assert!(
        msgs.iter().any(|m| m.contains("`nosuch` not found")),
        "{msgs:?}"
    );
}
