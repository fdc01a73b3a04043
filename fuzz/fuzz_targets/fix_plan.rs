//! Fuzz target: the fix planner and patch writer. Snapshot bytes in (a
//! sysctl.d file and a running value), plan out; a patch the proof passed
//! must apply with GNU patch, and no patch line may carry a control
//! character other than tab. Must never panic, hang or allocate without bound.
#![no_main]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use driftaudit::unstable::fix::{self, FixOptions, Prefer};
use driftaudit::unstable::policy::PolicySet;
use libfuzzer_sys::fuzz_target;

static N: AtomicU64 = AtomicU64::new(0);

fn lay_out(root: &Path, conf: &[u8], running: &[u8]) {
    let w = |p: &str, b: &[u8]| {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b).unwrap();
    };
    w("etc/sysctl.d/60-fuzz.conf", conf);
    w("proc/sys/net/core/somaxconn", running);
    w("proc/sys/net/ipv4/tcp_tw_recycle", b"0\n");
    w("proc/sys/net/ipv4/tcp_tw_reuse", b"1\n");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (conf, running) = match rest.iter().position(|&b| b == 0xff) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b"128\n"[..]),
    };
    let base = std::env::temp_dir().join(format!(
        "driftaudit-fuzz-fix-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let (snap, copy) = (base.join("snap"), base.join("copy"));
    lay_out(&snap, conf, running);
    let opts = FixOptions {
        prefer: if mode & 1 == 0 {
            Prefer::Configured
        } else {
            Prefer::Running
        },
        ..FixOptions::default()
    };
    let set = PolicySet::builtin().unwrap();
    if let Ok(p) = fix::plan(&set, Some(&snap), &opts) {
        for l in p.patch.lines() {
            // CRs at a line's end are its line ending (a CRLF or CR CR LF
            // file is edited in place, docs/hostile-input.md), not data
            let l = l.trim_end_matches('\r');
            assert!(
                !l.chars().any(|c| c.is_control() && c != '\t'),
                "a control character in a patch line: {l:?}"
            );
        }
        if !p.patch.is_empty() && p.proof.as_ref().is_some_and(|pr| pr.passed()) {
            lay_out(&copy, conf, running);
            let mut child = Command::new("patch")
                .args(["-p1", "--batch", "--no-backup-if-mismatch", "-d"])
                .arg(&copy)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("GNU patch");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(p.patch.as_bytes())
                .unwrap();
            assert!(
                child.wait().unwrap().success(),
                "GNU patch refused a proven patch:\n{}",
                p.patch
            );
        }
    }
    let _ = std::fs::remove_dir_all(&base);
});
