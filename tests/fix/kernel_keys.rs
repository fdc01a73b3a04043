//! Issue 48, "Absence is a state": `fix` plans no sysctl key the running
//! kernel lacks. On a kernel without Yama a `kernel.yama.ptrace_scope`
//! line only makes systemd-sysctl log "Couldn't write" at every boot and
//! `sysctl -w` fails; the plan says why (no CONFIG_SECURITY_YAMA) and what
//! to do instead, while `hardening.ptrace-scope` still fails.

use crate::common::cli::says;
use crate::common::cli::{copy_tree as copy, run, testdata};

#[test]
fn fix_on_a_kernel_without_yama_plans_no_ptrace_scope_line_and_says_why() {
    // mysql-healthy's `sysctl -a` capture is complete and has no kernel.yama
    let dir = testdata("hosts/mysql-healthy");
    let dir = dir.to_str().unwrap();
    let (code, out, _) = run(&[
        "check",
        "--snapshot",
        dir,
        "--only",
        "hardening.ptrace-scope",
    ]);
    assert_ne!(code, 0, "{out}");
    says(&out, "FAIL hardening.ptrace-scope");
    let (code, patch, err) = run(&["fix", "--snapshot", dir, "--only", "hardening.ptrace-scope"]);
    // unfixable: exit 1 (docs/fix.md)
    assert_eq!(code, 1, "{err}\n{patch}");
    assert!(!patch.contains("ptrace_scope"), "{patch}");
    assert!(!err.contains("sysctl -w kernel.yama"), "{err}");
    says(&err, "the running kernel has no `kernel.yama.ptrace_scope`");
    says(&err, "CONFIG_SECURITY_YAMA");
    says(&err, "Couldn't write");
}

#[test]
fn fix_plans_ptrace_scope_where_the_kernel_has_yama() {
    // the control: the same host whose kernel has the key at 0
    let t = copy(&testdata("hosts/mysql-healthy"));
    let f = t.path().join("captures/sysctl-a.txt");
    let mut s = std::fs::read_to_string(&f).unwrap();
    s.push_str("kernel.yama.ptrace_scope = 0\n");
    std::fs::write(&f, s).unwrap();
    let dir = t.path().to_str().unwrap();
    let (code, patch, err) = run(&["fix", "--snapshot", dir, "--only", "hardening.ptrace-scope"]);
    assert_eq!(code, 0, "{err}\n{patch}");
    says(&patch, "+kernel.yama.ptrace_scope = 1");
    assert!(!err.contains("has no `kernel.yama"), "{err}");
}
