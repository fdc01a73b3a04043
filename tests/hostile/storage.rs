//! Hostile storage data (issue 13): sysfs devices that list each other as
//! slaves (exponential before: K=6 took 25 s, K=8 never finished) and one
//! 15 MiB mountinfo or fstab line (4.5 GB and 944 MB before). The tests bound
//! the work, not the time: devices visited, and bytes allocated while parsing
//! (a counting global allocator, tests/common/alloc.rs, whose counters are
//! per thread, so the peak is the test's own).

use std::path::Path;

use crate::alloc::measure;
use crate::common::audit;
use crate::common::tree;
use driftaudit::unstable::facts::storage::rotational_counted;
use driftaudit::unstable::parse::fstab::{self, MAX_LINE_BYTES, MAX_OPTIONS};
use driftaudit::unstable::parse::mountinfo;

/// Bytes allocated at the peak of `f` beyond what was live before it (this
/// thread's allocations: tests/common/alloc.rs).
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let (cost, v) = measure(f);
    (v, cost.peak)
}

/// Write (host path, content) pairs built at run time below `root`.
fn write_owned(root: &Path, files: &[(String, String)]) {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    tree::write_files(root, &refs);
}

/// K device-mapper devices, each listing every other one under `slaves/`.
fn slave_mesh(root: &Path, k: usize) {
    let mut files = vec![
        (
            "etc/fstab".to_string(),
            "/dev/dm-0 / ext4 defaults 0 1\n".to_string(),
        ),
        (
            "proc/self/mountinfo".to_string(),
            "20 1 253:0 / / rw,relatime - ext4 /dev/dm-0 rw\n".to_string(),
        ),
    ];
    for i in 0..k {
        files.push((format!("sys/block/dm-{i}/queue/rotational"), "0\n".into()));
        for j in (0..k).filter(|&j| j != i) {
            files.push((
                format!("sys/block/dm-{i}/slaves/dm-{j}/dev"),
                format!("253:{j}\n"),
            ));
        }
    }
    write_owned(root, &files);
}

#[test]
fn slaves_that_list_each_other_are_visited_once() {
    for k in [6usize, 8, 40] {
        let dir = tempfile::tempdir().unwrap();
        slave_mesh(dir.path(), k);
        let host = audit::host(dir.path());
        let (rot, visited) = rotational_counted(&host, "/dev/dm-0", Some("253:0"));
        assert!(visited <= k, "K={k}: {visited} devices visited");
        assert_eq!(
            rot, None,
            "K={k}: a device that is its own slave has no known disk"
        );
    }
}

#[test]
fn shared_slaves_are_visited_once_and_still_decide() {
    // dm-0 on md0 and md1, both on the same two partitions of one SSD, 8 levels of diamonds
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![
        (
            "etc/fstab".to_string(),
            "/dev/dm-0 / ext4 defaults 0 1\n".to_string(),
        ),
        (
            "proc/self/mountinfo".to_string(),
            "20 1 253:0 / / rw,relatime - ext4 /dev/dm-0 rw\n".to_string(),
        ),
        (
            "sys/block/nvme0n1/queue/rotational".to_string(),
            "0\n".to_string(),
        ),
        (
            "sys/block/nvme0n1/nvme0n1p1/partition".to_string(),
            "1\n".to_string(),
        ),
    ];
    for level in 0..7 {
        for side in ["a", "b"] {
            let name = if level == 0 {
                "dm-0".to_string()
            } else {
                format!("dm-{level}{side}")
            };
            let below: Vec<String> = if level == 6 {
                vec!["nvme0n1p1".into()]
            } else {
                vec![format!("dm-{}a", level + 1), format!("dm-{}b", level + 1)]
            };
            files.push((format!("sys/block/{name}/queue/rotational"), "1\n".into()));
            for b in below {
                files.push((format!("sys/block/{name}/slaves/{b}/dev"), "x\n".into()));
            }
        }
    }
    write_owned(dir.path(), &files);
    let host = audit::host(dir.path());
    let (rot, visited) = rotational_counted(&host, "/dev/dm-0", Some("253:0"));
    assert_eq!(rot, Some(false), "every path ends on the SSD");
    // dm-0, 12 dm-Nx devices, the partition: each once (2^6 paths before)
    assert!(visited <= 14, "{visited} visits");
}

fn long_line(bytes: usize) -> String {
    let unit = "opt,";
    unit.repeat(bytes / unit.len())
}

#[test]
fn a_15_mib_mountinfo_line_is_capped_at_parse_time_with_an_issue() {
    let text = format!(
        "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
         21 20 8:2 / /data rw,relatime - ext4 /dev/sda2 rw,{}\n\
         22 20 8:3 / /srv rw,{} - ext4 /dev/sda3 rw\n\
         23 20 8:4 / /home rw,noatime - ext4 /dev/sda4 rw\n",
        long_line(15 << 20),
        "a ".repeat(7 << 20)
    );
    let ((mounts, issues), peak) = peak_of(|| mountinfo::parse_mountinfo(&text));
    assert_eq!(mounts.len(), 2, "the short lines are read");
    // both long lines are one problem of one kind: one issue naming both
    // (issue 29)
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(
        issues[0]
            .message
            .contains("the first line 2, the last line 3"),
        "{issues:?}"
    );
    assert!(
        issues
            .iter()
            .all(|i| i.message.contains(&MAX_LINE_BYTES.to_string())),
        "{issues:?}"
    );
    assert!(
        issues.iter().all(|i| i.message.len() < 300),
        "the message does not quote the line"
    );
    assert!(
        peak < 256 << 10,
        "{peak} bytes allocated to parse a {} byte file",
        text.len()
    );

    // under the line cap, more options than anyone writes: an issue, bounded work
    let many = format!(
        "21 20 8:2 / /data rw - ext4 /dev/sda2 rw,{}\n",
        long_line((MAX_OPTIONS + 10) * 4)
    );
    assert!(many.len() < MAX_LINE_BYTES);
    let ((mounts, issues), peak) = peak_of(|| mountinfo::parse_mountinfo(&many));
    assert!(mounts.is_empty());
    assert!(
        issues[0].message.contains(&MAX_OPTIONS.to_string()),
        "{issues:?}"
    );
    assert!(peak < 256 << 10, "{peak}");
}

#[test]
fn a_15_mib_fstab_line_is_capped_at_parse_time_with_an_issue() {
    let text = format!(
        "/dev/sda1 / ext4 defaults 0 1\n/dev/sda2 /data ext4 defaults,{} 0 2\n/dev/sda3 /srv ext4 noatime 0 2\n",
        long_line(15 << 20)
    );
    let ((entries, issues), peak) = peak_of(|| fstab::parse(&text));
    assert_eq!(entries.len(), 2);
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].line, 2);
    assert!(
        issues[0].message.contains(&MAX_LINE_BYTES.to_string()),
        "{issues:?}"
    );
    assert!(peak < 64 << 10, "{peak} bytes allocated");

    // the whole storage gather on a snapshot holding both files
    let dir = tempfile::tempdir().unwrap();
    let mi = format!(
        "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n21 20 8:2 / /data rw,relatime - ext4 /dev/sda2 rw,{}\n",
        long_line(15 << 20)
    );
    tree::write_files(
        dir.path(),
        &[
            ("etc/fstab", text.as_str()),
            ("proc/self/mountinfo", mi.as_str()),
        ],
    );
    drop(text);
    let host = audit::host(dir.path());
    let (facts, peak) = peak_of(|| driftaudit::unstable::facts::gather(&host, &Default::default()));
    assert!(facts
        .issues
        .iter()
        .any(|i| i.path == "/etc/fstab" && i.line == Some(2)));
    assert!(facts
        .issues
        .iter()
        .any(|i| i.path == "/proc/self/mountinfo" && i.line == Some(2)));
    // the two files are read (30 MiB); parsing and the facts add little
    assert!(peak < 48 << 20, "{} MiB at the peak", peak >> 20);
}
