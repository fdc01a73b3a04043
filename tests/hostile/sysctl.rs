//! Hostile sysctl input (issue 13, resource limits): one key repeated tens of
//! thousands of times, tens of thousands of files in sysctl.d, and one line
//! of megabytes. Bounds are on work, never on time: bytes allocated (a
//! counting global allocator with per-thread counters,
//! tests/common/alloc.rs), the peak of live heap, the locations a finding
//! carries, and the size of what is kept and printed. Growth is
//! checked by comparing the work at N and 4N: linear work grows about 4x,
//! the quadratic code these tests pin grew 16x.

use std::fs;

use crate::common::audit;
use crate::common::tree;
use driftaudit::unstable::engine;
use driftaudit::unstable::facts::Entry;

/// (bytes allocated, peak live bytes above the start) while running `f`, on
/// this thread (tests/common/alloc.rs).
fn measure<T>(f: impl FnOnce() -> T) -> (usize, usize, T) {
    let (cost, out) = crate::alloc::measure(f);
    (cost.allocated, cost.peak, out)
}

fn repeated_key_host(n: usize) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let text: String = (0..n)
        .map(|i| format!("net.core.somaxconn = {}\n", 1000 + i % 7))
        .collect();
    tree::file(d.path(), "/etc/sysctl.d/50-repeat.conf", &text);
    tree::file(d.path(), "/proc/sys/net/core/somaxconn", "4096\n");
    tree::systemd_pid1(d.path());
    d
}

const MIB: usize = 1024 * 1024;

#[test]
fn one_key_repeated_40000_times_costs_linear_work_and_bounded_evidence() {
    let set = audit::builtin();
    let small = repeated_key_host(10_000);
    let big = repeated_key_host(40_000);
    let (w_small, _, _) = measure(|| audit::report(&set, small.path()));
    let (w_big, _, report) = measure(|| audit::report(&set, big.path()));
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
    let facts = engine::gather(&set, &audit::host(big.path()));
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
    let set = audit::builtin();
    let small = many_files_host(2_500);
    let big = many_files_host(10_000);
    let (w_small, _, _) = measure(|| engine::gather(&set, &audit::host(small.path())));
    let (w_big, _, facts) = measure(|| engine::gather(&set, &audit::host(big.path())));
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
    let set = audit::builtin();
    let d = tempfile::tempdir().unwrap();
    tree::systemd_pid1(d.path());
    // below systemd's 1 MiB line limit: the value is read, and kept to a page
    let value = "x".repeat(MIB - 100);
    tree::file(
        d.path(),
        "/etc/sysctl.d/50-big.conf",
        &format!("kernel.core_pattern = {value}\nvm.swappiness = 10\n"),
    );
    // above it: systemd stops reading the file there
    let huge = "y".repeat(15 * MIB);
    tree::file(
        d.path(),
        "/etc/sysctl.d/60-huge.conf",
        &format!("vm.dirty_ratio = 5\nkernel.hostname = {huge}\nvm.overcommit_memory = 1\n"),
    );
    tree::file(d.path(), "/proc/sys/kernel/core_pattern", "core\n");
    let (total, peak, report) = measure(|| audit::report(&set, d.path()));
    // reading 16 MB of files costs about that; 2.2 GB was the bug
    assert!(peak < 80 * MIB, "peak heap {peak} bytes");
    assert!(total < 300 * MIB, "{total} bytes allocated");
    let out = serde_json::to_string(&report).unwrap();
    assert!(out.len() < MIB, "report is {} bytes", out.len());

    let facts = engine::gather(&set, &audit::host(d.path()));
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
    let set = audit::builtin();
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("etc")).unwrap();
    let huge = "z".repeat(15 * MIB);
    let mut cap = format!("kernel.core_pattern = {huge}\n");
    for _ in 0..10_000 {
        cap.push_str("dev.cdrom.info = drive name:\n");
    }
    tree::file(d.path(), "/captures/sysctl-a.txt", &cap);
    let (_, peak, facts) = measure(|| engine::gather(&set, &audit::host(d.path())));
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

/// A snapshot where tuned.service is enabled with the profile `hostile`,
/// whose tuned.conf (in /usr/lib/tuned/hostile) is `profile`.
fn tuned_host(profile: &str) -> tempfile::TempDir {
    tuned_host_named("hostile", profile)
}

/// [`tuned_host`] with the profile called `name` (its tuned.conf in
/// /usr/lib/tuned/`name`).
fn tuned_host_named(name: &str, profile: &str) -> tempfile::TempDir {
    crate::common::snapshot_tree(&[
        (
            "/etc/systemd/system/multi-user.target.wants/tuned.service",
            "",
        ),
        ("/etc/tuned/active_profile", &format!("{name}\n")),
        (&format!("/usr/lib/tuned/{name}/tuned.conf"), profile),
        // a systemd host (tuned is its unit)
        ("/proc/1/comm", "systemd\n"),
        ("/run/systemd/system/.keep", ""),
    ])
}

const TUNED_CONF: &str = "/usr/lib/tuned/hostile/tuned.conf";

/// The tuned input findings at `line` of the hostile profile.
fn tuned_issues_at(facts: &driftaudit::unstable::facts::Facts, line: usize) -> Vec<&str> {
    facts
        .issues
        .iter()
        .filter(|i| i.path == TUNED_CONF && i.line == Some(line))
        .map(|i| i.message.as_str())
        .collect()
}

/// A TuneD `[sysctl]` value is capped as a sysctl.d one is, after its
/// `${...}` are expanded: main kept tuned's values whole, so a 4 kB
/// variable used 256 times made each of 16 keys a megabyte (a 6.4 MB profile
/// gave a 516 MB report and 1.45 GB of memory), and a value under the cap
/// as written (`${i:PROFILE_DIR}` 250 times) went over it expanded.
#[test]
fn a_tuned_sysctl_value_is_capped_after_expansion_with_an_input_finding() {
    let cap = driftaudit::unstable::parse::sysctl::MAX_VALUE_BYTES;
    let page = "x".repeat(4000);
    let uses = "${page}".repeat(256);
    let mut profile = format!("[main]\nsummary=hostile\n\n[variables]\npage={page}\n\n[sysctl]\n");
    // line 8: under the cap as written, over it expanded
    profile.push_str(&format!(
        "kernel.core_pattern={}\n",
        "${i:PROFILE_DIR}".repeat(250)
    ));
    profile.push_str("vm.swappiness=10\n");
    for i in 0..16 {
        profile.push_str(&format!("kernel.hostile_{i:02}={uses}\n"));
    }
    let host = tuned_host(&profile);
    let set = audit::builtin();
    let (_, peak, (facts, report)) = measure(|| {
        let h = audit::host(host.path());
        let facts = engine::gather(&set, &h);
        let report = engine::evaluate(&set, &facts);
        (facts, report)
    });
    let facts_json = serde_json::to_string(&facts).unwrap();
    let report_json = serde_json::to_string(&report).unwrap();
    assert!(
        facts_json.len() < MIB,
        "facts are {} bytes",
        facts_json.len()
    );
    assert!(
        report_json.len() < MIB,
        "report is {} bytes",
        report_json.len()
    );
    assert!(peak < 16 * MIB, "peak heap {peak} bytes");

    let boot = &facts.namespaces["sysctl_boot"];
    let raw = |key: &str| match boot.get(key) {
        Some(Entry::Set(s)) => s.raw.clone(),
        other => panic!("{key}: {other:?}"),
    };
    // expanded, then kept to the cap
    let dir = "/usr/lib/tuned/hostile";
    let core = raw("kernel.core_pattern");
    assert_eq!(core.len(), cap);
    assert!(core.starts_with(&format!("{dir}{dir}")), "{}", &core[..60]);
    assert_eq!(raw("vm.swappiness"), "10");
    assert_eq!(raw("kernel.hostile_15"), "x".repeat(cap));

    // an input finding for the capped values: file, line, key, length, cap;
    // the 17 lines of one kind merged into one, as every reader's are
    let expanded = 250 * dir.len();
    let at8 = tuned_issues_at(&facts, 8);
    assert!(
        at8.iter().any(|m| m.contains("`kernel.core_pattern`")
            && m.contains(&format!("{expanded} bytes"))
            && m.contains(&format!("at most {cap} bytes"))
            && m.contains("17 lines like it in this file, the first line 8, the last line 25")),
        "{at8:?}"
    );
    assert!(tuned_issues_at(&facts, 9).is_empty());
    // no message quotes a value
    assert!(facts.issues.iter().all(|i| i.message.len() < 1000));
}

/// Each `[variables]` entry doubling the one before: the 14th expands to
/// 65,536,000 bytes, the 40th would be 4 PB. Main expanded every variable
/// whole (and copied every earlier one for each); now a variable is kept to
/// the cap with its length, so the finding still says how long the value is.
#[test]
fn a_tuned_variable_doubled_fourteen_times_is_expanded_within_a_bound() {
    let mut profile = format!("[variables]\nv0={}\n", "y".repeat(4000));
    for i in 1..=14 {
        profile.push_str(&format!("v{i}=${{v{}}}${{v{}}}\n", i - 1, i - 1));
    }
    profile.push_str("\n[sysctl]\nkernel.core_pattern=${v14}\n");
    let line = 19;
    let host = tuned_host(&profile);
    let set = audit::builtin();
    let (total, peak, facts) = measure(|| engine::gather(&set, &audit::host(host.path())));
    assert!(peak < 16 * MIB, "peak heap {peak} bytes");
    assert!(total < 64 * MIB, "{total} bytes allocated");
    match facts.namespaces["sysctl_boot"].get("kernel.core_pattern") {
        Some(Entry::Set(s)) => assert_eq!(
            s.raw.len(),
            driftaudit::unstable::parse::sysctl::MAX_VALUE_BYTES
        ),
        other => panic!("{other:?}"),
    }
    let at = tuned_issues_at(&facts, line);
    assert!(
        at.iter().any(|m| m.contains("`kernel.core_pattern`")
            && m.contains(&format!("{} bytes", 4000u64 << 14))),
        "{at:?}"
    );
}

/// 20,000 variables `vN=${b}` then 20,000 `[sysctl]` values `${b}`, `b` of
/// 4,000 bytes, in a profile of 360 KB: each expansion was capped at 4 KB
/// but kept, so the profile took 4 KB a line (a 16 MiB profile of such
/// lines, gigabytes). Now the bytes variables add are counted against one
/// budget for the set of profiles (4 MiB, `MAX_EXPANSION_BYTES` in
/// src/facts/tuned/profile.rs); the
/// values past it are unknown, said once with the line of the first.
#[test]
fn tuned_variables_used_forty_thousand_times_expand_within_one_budget_with_one_finding() {
    let n = 20_000;
    let mut profile = format!("[variables]\nb={}\n", "y".repeat(4000));
    for i in 0..n {
        profile.push_str(&format!("v{i}=${{b}}\n"));
    }
    profile.push_str("[sysctl]\nkernel.core_pattern=${v0}\n");
    for i in 0..n {
        profile.push_str(&format!("kernel.x{i}=${{b}}\n"));
    }
    let host = tuned_host(&profile);
    let set = audit::builtin();
    let (total, peak, facts) = measure(|| engine::gather(&set, &audit::host(host.path())));
    assert!(peak < 64 * MIB, "peak heap {peak} bytes");
    assert!(total < 256 * MIB, "{total} bytes allocated");
    // `${b}` adds 3,996 bytes: 1,049 of them fit in 4 MiB; `v1049`, at line
    // 3 + 1049, is the first left out
    let fit = 4 * MIB / 3996;
    let first = 3 + fit;
    let left_out = (n - fit) + 1 + n;
    let budget: Vec<&str> = facts
        .issues
        .iter()
        .filter(|i| i.message.contains(&(4 * MIB).to_string()))
        .map(|i| i.message.as_str())
        .collect();
    assert_eq!(budget.len(), 1, "{budget:?}");
    let at = tuned_issues_at(&facts, first);
    assert!(
        at.iter().any(
            |m| m.contains(&format!("{left_out} values")) && m.contains(&(4 * MIB).to_string())
        ),
        "{at:?}"
    );
    match facts.namespaces["sysctl_boot"].get("kernel.core_pattern") {
        Some(Entry::Unreadable { reason, .. }) => {
            assert!(reason.contains(&(4 * MIB).to_string()), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// `${i:PROFILE_DIR}` in every option of a 4 MB profile whose directory
/// name is 255 bytes (a 270-byte directory for a 16-byte reference): main
/// replaced it in every value of every section as the profile loaded, before
/// any cap, so the profile took 17 times its size in memory at once (250
/// times with a long `profile_dirs`). Now it is expanded where a value is
/// used, within the same bound as a variable. Measured against the same
/// profile naming a directory variable that does not exist.
#[test]
fn profile_dir_in_every_option_of_a_profile_costs_what_the_profile_does() {
    let name = "p".repeat(255);
    let dir = format!("/usr/lib/tuned/{name}");
    let profile = |var: &str| {
        let value = var.repeat(250);
        let mut p = String::from("[cpu]\n");
        for i in 0..1000 {
            p.push_str(&format!("option_{i:04}={value}\n"));
        }
        p.push_str(&format!("[sysctl]\nkernel.core_pattern={var}/x\n"));
        p
    };
    let set = audit::builtin();
    let cost = |var: &str| {
        let host = tuned_host_named(&name, &profile(var));
        measure(|| engine::gather(&set, &audit::host(host.path())))
    };
    let (w_plain, p_plain, _) = cost("${i:PROFILE_DIX}");
    let (w_dir, p_dir, facts) = cost("${i:PROFILE_DIR}");
    assert!(
        p_dir < p_plain + p_plain / 2,
        "peak heap {p_dir} bytes with the directory, {p_plain} without"
    );
    assert!(
        w_dir < w_plain + w_plain / 2,
        "{w_dir} bytes allocated with the directory, {w_plain} without"
    );
    // the directory is still what `${i:PROFILE_DIR}` stands for
    match facts.namespaces["sysctl_boot"].get("kernel.core_pattern") {
        Some(Entry::Set(s)) => assert_eq!(s.raw, format!("{dir}/x")),
        other => panic!("{other:?}"),
    }
}

/// Every message and reason the tuned model wrote for `host`, with the
/// notes of the values it set.
fn tuned_texts(host: &std::path::Path) -> Vec<String> {
    let set = audit::builtin();
    let facts = engine::gather(&set, &audit::host(host));
    let mut out: Vec<String> = facts
        .issues
        .iter()
        .filter(|i| i.source == "tuned")
        .map(|i| i.message.clone())
        .collect();
    for e in facts.namespaces["sysctl_boot"].entries.values() {
        match e {
            Entry::Unreadable { reason, .. } => out.push(reason.clone()),
            Entry::Set(s) => out.extend(s.note.clone()),
        }
    }
    out
}

/// A TuneD profile's option keys (and its unit names, a `priority`, the
/// profile names it includes) were quoted whole in input findings and in
/// the reasons of unknown values: a 1 MiB key made each message a megabyte,
/// a key written `kernel/...` three (tuned's version decides where it
/// writes). They are quoted as sysctl.d's are, cut with `…`.
#[test]
fn a_tuned_key_of_a_megabyte_is_quoted_in_a_few_bytes() {
    let long = "k".repeat(MIB);
    let big = "x".repeat(4000);
    let keys = format!(
        "[variables]\nbig={big}\n[sysctl]\n-{long}=1\nkernel.a{long}=${{nope}}\nkernel.b{long}=a\n  b\nkernel.c{long}=${{big}}${{big}}\nkernel/d{long}=1\n"
    );
    let unit = format!("[u{long}]\ntype=sysctl\ncpuinfo_regex=x\nkernel.x=1\n");
    let priority = format!("[sysctl]\npriority={long}\nkernel.x=1\n");
    let include = format!("[main]\ninclude=p{long}\n[sysctl]\nkernel.x=1\n");
    for (what, profile, says) in [
        ("keys", keys, "`-kkkk"),
        ("unit name", unit, "`[ukkk"),
        ("priority", priority, "`priority=kkkk"),
        ("include", include, "`pkkkk"),
    ] {
        let host = tuned_host(&profile);
        let texts = tuned_texts(host.path());
        for t in &texts {
            assert!(
                t.len() < 2000,
                "{what}: a text of {} bytes: {}",
                t.len(),
                &t[..200]
            );
        }
        assert!(
            texts.iter().any(|t| t.contains(says) && t.contains('…')),
            "{what}: no message quotes the start of it, cut: {texts:?}"
        );
    }
    // a word of a megabyte after the active profile's name (not a name
    // tuned loads): the note on each value tuned sets quoted the list
    let host = crate::common::snapshot_tree(&[
        (
            "/etc/systemd/system/multi-user.target.wants/tuned.service",
            "",
        ),
        ("/etc/tuned/active_profile", &format!("hostile /{long}\n")),
        (TUNED_CONF, "[sysctl]\nkernel.x=1\nkernel.y=2\n"),
    ]);
    let texts = tuned_texts(host.path());
    assert!(texts.iter().any(|t| t.contains("`hostile /kkk")));
    for t in &texts {
        assert!(
            t.len() < 2000,
            "active profile: a text of {} bytes",
            t.len()
        );
    }
}
