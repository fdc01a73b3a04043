//! Hostile sysctl input (issue 13, resource limits): one key repeated tens of
//! thousands of times, tens of thousands of files in sysctl.d, and one line
//! of megabytes. Bounds are on work, never on time: bytes allocated (a
//! counting global allocator with per-thread counters,
//! tests/common/alloc.rs), the peak of live heap, the locations a finding
//! carries, and the size of what is kept and printed. Growth is
//! checked by comparing the work at N and 4N: linear work grows about 4x,
//! the quadratic code these tests pin grew 16x.

use std::fs;
use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::Entry;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::PolicySet;

/// (bytes allocated, peak live bytes above the start) while running `f`, on
/// this thread (tests/common/alloc.rs).
fn measure<T>(f: impl FnOnce() -> T) -> (usize, usize, T) {
    let (cost, out) = crate::alloc::measure(f);
    (cost.allocated, cost.peak, out)
}

fn write(root: &Path, path: &str, text: &str) {
    let p = root.join(path.trim_start_matches('/'));
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn repeated_key_host(n: usize) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let text: String = (0..n)
        .map(|i| format!("net.core.somaxconn = {}\n", 1000 + i % 7))
        .collect();
    write(d.path(), "/etc/sysctl.d/50-repeat.conf", &text);
    write(d.path(), "/proc/sys/net/core/somaxconn", "4096\n");
    d
}

const MIB: usize = 1024 * 1024;

#[test]
fn one_key_repeated_40000_times_costs_linear_work_and_bounded_evidence() {
    let set = PolicySet::builtin().unwrap();
    let small = repeated_key_host(10_000);
    let big = repeated_key_host(40_000);
    let (w_small, _, _) =
        measure(|| engine::audit_host(&set, &Host::snapshot(small.path()).unwrap()));
    let (w_big, _, report) =
        measure(|| engine::audit_host(&set, &Host::snapshot(big.path()).unwrap()));
    assert!(
        w_big <= 5 * w_small,
        "allocation grew {:.1}x for 4x the lines ({w_small} -> {w_big} bytes)",
        w_big as f64 / w_small as f64
    );
    // the whole audit of a ~1 MB file allocates tens of megabytes at most
    assert!(w_big < 200 * MIB, "{w_big} bytes allocated");
    // every finding carries a bounded list of locations
    for f in &report.findings {
        assert!(
            f.evidence.len() <= driftaudit::unstable::facts::sysctl::MAX_EVIDENCE + 2,
            "{}: {} locations",
            f.rule,
            f.evidence.len()
        );
    }
    // and the boot value says how many assignments there were
    let facts = engine::gather(&set, &Host::snapshot(big.path()).unwrap());
    match facts.namespaces["sysctl_boot"].get("net.core.somaxconn") {
        Some(Entry::Set(s)) => {
            assert_eq!(s.evidence[0].line, Some(40_000));
            assert_eq!(
                s.evidence.len(),
                driftaudit::unstable::facts::sysctl::MAX_EVIDENCE
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(facts
        .issues
        .iter()
        .any(|i| i.message.contains("is assigned 40000 times")));
}

fn many_files_host(n: usize) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("etc/sysctl.d");
    fs::create_dir_all(&dir).unwrap();
    for i in 0..n {
        // half the files set one key (the evidence chain), half a key each
        let text = if i % 2 == 0 {
            format!("vm.swappiness = {}\n", i % 100)
        } else {
            format!("net.ipv4.conf.if{i}.rp_filter = 1\n")
        };
        fs::write(dir.join(format!("{i:06}.conf")), text).unwrap();
    }
    d
}

#[test]
fn many_files_in_sysctl_d_cost_linear_work() {
    let set = PolicySet::builtin().unwrap();
    let small = many_files_host(2_500);
    let big = many_files_host(10_000);
    let (w_small, _, _) = measure(|| engine::gather(&set, &Host::snapshot(small.path()).unwrap()));
    let (w_big, _, facts) = measure(|| engine::gather(&set, &Host::snapshot(big.path()).unwrap()));
    assert!(
        w_big <= 5 * w_small,
        "allocation grew {:.1}x for 4x the files ({w_small} -> {w_big} bytes)",
        w_big as f64 / w_small as f64
    );
    // every file was read: the last one's key is there
    assert!(facts.namespaces["sysctl_boot"]
        .get("net.ipv4.conf.if9999.rp_filter")
        .is_some());
}

#[test]
fn a_megabyte_value_is_capped_at_parse_time_and_said_so() {
    let set = PolicySet::builtin().unwrap();
    let d = tempfile::tempdir().unwrap();
    // below systemd's 1 MiB line limit: the value is read, and kept to a page
    let value = "x".repeat(MIB - 100);
    write(
        d.path(),
        "/etc/sysctl.d/50-big.conf",
        &format!("kernel.core_pattern = {value}\nvm.swappiness = 10\n"),
    );
    // above it: systemd stops reading the file there
    let huge = "y".repeat(15 * MIB);
    write(
        d.path(),
        "/etc/sysctl.d/60-huge.conf",
        &format!("vm.dirty_ratio = 5\nkernel.hostname = {huge}\nvm.overcommit_memory = 1\n"),
    );
    write(d.path(), "/proc/sys/kernel/core_pattern", "core\n");
    let (total, peak, report) =
        measure(|| engine::audit_host(&set, &Host::snapshot(d.path()).unwrap()));
    // reading 16 MB of files costs about that; 2.2 GB was the bug
    assert!(peak < 80 * MIB, "peak heap {peak} bytes");
    assert!(total < 300 * MIB, "{total} bytes allocated");
    let out = serde_json::to_string(&report).unwrap();
    assert!(out.len() < MIB, "report is {} bytes", out.len());

    let facts = engine::gather(&set, &Host::snapshot(d.path()).unwrap());
    let boot = &facts.namespaces["sysctl_boot"];
    match boot.get("kernel.core_pattern") {
        Some(Entry::Set(s)) => assert_eq!(
            s.raw.len(),
            driftaudit::unstable::parse::sysctl::MAX_VALUE_BYTES
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(boot.get("vm.swappiness"), Some(Entry::Set(s)) if s.raw == "10"));
    assert!(matches!(boot.get("vm.dirty_ratio"), Some(Entry::Set(s)) if s.raw == "5"));
    // systemd-sysctl stopped at the long line: neither it nor what follows is set
    assert!(boot.get("kernel.hostname").is_none());
    assert!(boot.get("vm.overcommit_memory").is_none());
    let msgs: Vec<&str> = facts.issues.iter().map(|i| i.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("the kernel takes at most 4096 bytes")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("stops reading the file here")),
        "{msgs:?}"
    );
    // no message quotes the value
    assert!(msgs.iter().all(|m| m.len() < 1000));
}

#[test]
fn a_megabyte_value_in_a_sysctl_a_capture_is_capped() {
    let set = PolicySet::builtin().unwrap();
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("etc")).unwrap();
    let huge = "z".repeat(15 * MIB);
    let mut cap = format!("kernel.core_pattern = {huge}\n");
    for _ in 0..10_000 {
        cap.push_str("dev.cdrom.info = drive name:\n");
    }
    write(d.path(), "/captures/sysctl-a.txt", &cap);
    let (_, peak, facts) = measure(|| engine::gather(&set, &Host::snapshot(d.path()).unwrap()));
    assert!(peak < 80 * MIB, "peak heap {peak} bytes");
    let cap_max = driftaudit::unstable::parse::sysctl::MAX_CAPTURE_VALUE_BYTES;
    // the rules may not ask for it; the capture's issue is there either way
    if let Some(Entry::Set(s)) = facts.namespaces["sysctl"].get("kernel.core_pattern") {
        assert_eq!(s.raw.len(), cap_max);
    }
    assert!(facts
        .issues
        .iter()
        .any(|i| i.message.contains("only the first")));
}
