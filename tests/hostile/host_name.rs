//! Hostile host names (issue 51): the report repeats a host's name in every
//! finding and metric, so a name read from a snapshot (`snapshot.json`, a
//! sosreport's `hostname` capture, `etc/hostname`, the directory's name) is
//! cut to the kernel's 64 bytes (`HOST_NAME_MAX`) on a character boundary,
//! with an input finding that says where it was read and how long it was,
//! without quoting it whole. The live host's name goes through the same
//! cut (`Host::live`) and is read within the same cap, which a test feeds in
//! a private mount namespace. Bounds are on bytes printed and allocated,
//! never on time.

use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::facts::{FileIssue, IssueLevel};
use driftaudit::unstable::render::{self, Format, RenderOptions};
use driftaudit::unstable::report::{Report, INPUT_RULE};

use crate::common;
use crate::common::audit;
use crate::hostile::minimal_snapshot;

const MIB: usize = 1024 * 1024;

/// The host name's input finding of a gather, and the host's name.
fn name_issue(dir: &Path) -> (String, Vec<FileIssue>) {
    let set = audit::builtin();
    let host = audit::host(dir);
    let facts = engine::gather(&set, &host);
    let issues = facts
        .issues
        .into_iter()
        .filter(|i| i.source == "hostname")
        .collect();
    (host.name().to_string(), issues)
}

/// Main took `host` from snapshot.json whole: a 1 MiB name gave 124 MB of
/// JUnit, a 4 MiB one 495 MB of JUnit (1.8 GB of memory), 185 MB of SARIF
/// and 130 MB of Prometheus.
#[test]
fn a_host_name_of_a_megabyte_is_cut_to_64_bytes_with_an_input_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("snap");
    let long = format!("web-{}", "h".repeat(MIB));
    minimal_snapshot(&root, &long);

    // every format stays small: the name is in it 64 bytes at a time
    let set = audit::builtin();
    let report = Report::new(vec![audit::report(&set, &root)], &set);
    let opts = RenderOptions {
        color: false,
        verbose: true,
        ..Default::default()
    };
    for format in [
        Format::Junit,
        Format::Sarif,
        Format::Prometheus,
        Format::Json,
    ] {
        let out = render::render(&report, format, opts);
        assert!(out.len() < MIB, "{format:?}: {} bytes", out.len());
        assert!(
            !out.contains(&"h".repeat(65)),
            "{format:?} has the long name"
        );
    }
    let input = report.hosts[0]
        .findings
        .iter()
        .find(|f| f.rule == INPUT_RULE && f.subject == ["/snapshot.json"])
        .expect("the host name's input finding");
    common::cli::says(&input.explanation, "HOST_NAME_MAX");

    let (name, issues) = name_issue(&root);
    assert_eq!(name.len(), 64);
    assert!(long.starts_with(&name));
    assert_eq!(issues.len(), 1, "{issues:#?}");
    let i = &issues[0];
    assert_eq!(i.path, "/snapshot.json");
    assert_eq!(i.level, IssueLevel::Problem);
    for part in [
        &format!("{} bytes", long.len()),
        "64 bytes",
        "HOST_NAME_MAX",
        "`web-hhhh",
    ] {
        common::cli::says(&i.message, part);
    }
    assert!(i.message.len() < 400, "{}", i.message);
}

/// The other places a snapshot's name is read: a sosreport's `hostname`
/// capture and `etc/hostname` (first line), cut on a character boundary (a
/// two-byte `é` straddling byte 64 is left out whole).
#[test]
fn a_long_host_name_in_a_hostname_file_is_cut_on_a_character_boundary() {
    let long = format!("a{}", "é".repeat(100_000));
    // etc/hostname of a hand-made tree
    let tree = common::snapshot_tree(&[("/etc/hostname", &format!("{long}\nsecond line\n"))]);
    let (name, issues) = name_issue(tree.path());
    assert_eq!(name.len(), 63);
    assert!(long.starts_with(&name));
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(issues[0].path, "/etc/hostname");
    common::cli::says(&issues[0].message, &format!("{} bytes", long.len()));
    common::cli::says(&issues[0].message, "63 bytes");
    assert!(issues[0].message.len() < 400, "{}", issues[0].message);

    // a sosreport's `hostname` output
    let sos = common::snapshot_tree(&[
        ("/sos_commands/host/hostname", &format!("{long}\n")),
        ("/version.txt", "sosreport: 4.5.6\n"),
        ("/etc/hostname", "short\n"),
    ]);
    let (name, issues) = name_issue(sos.path());
    assert_eq!(name.len(), 63);
    assert!(long.starts_with(&name));
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(issues[0].path, "/sos_commands/host/hostname");

    // no file names it: the directory's name (at most 255 bytes) is cut too
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d".repeat(200));
    common::tree::write_files(&dir, &[("etc/os-release", "ID=debian\n")]);
    let (name, issues) = name_issue(&dir);
    assert_eq!(name, "d".repeat(64));
    assert_eq!(issues.len(), 1, "{issues:#?}");
    assert_eq!(issues[0].path, "/");
    common::cli::says(&issues[0].message, "the snapshot directory's name");
    common::cli::says(&issues[0].message, "is 200 bytes");

    // a name of 64 bytes is kept whole, without a finding
    let ok = "b".repeat(64);
    let tree = common::snapshot_tree(&[("/etc/hostname", &format!("{ok}\n"))]);
    let (name, issues) = name_issue(tree.path());
    assert_eq!(name, ok);
    assert!(issues.is_empty(), "{issues:#?}");
}

/// `Host::live` in a child of this test, in a private mount namespace where
/// /proc/sys/kernel is an empty tmpfs (so the name comes from /etc/hostname)
/// and /etc/hostname is `file`: the bytes it allocated and the name's
/// length, from the child's `LIVE allocated name_len` output.
fn live_name_from(file: &Path) -> (usize, usize) {
    let exe = std::env::current_exe().unwrap();
    // this test again, by its libtest name
    let me = crate::common::mountns::libtest_name(
        module_path!(),
        "the_live_host_reads_etc_hostname_within_the_file_cap",
    );
    let sh = format!(
        "mount -t tmpfs tmpfs /proc/sys/kernel\nmount --bind '{}' /etc/hostname\n\
         DRIFTAUDIT_LIVE_NAME_CHILD=1 '{}' --exact {me} --nocapture --test-threads=1\n",
        file.display(),
        exe.display()
    );
    let (code, out, err) = common::mountns::run(&sh, common::mountns::Sh::Errexit, &[]);
    assert!(code == 0, "the child failed ({code}):\n{out}\n{err}");
    let line = out
        .lines()
        .find_map(|l| l.split_once("LIVE ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no LIVE line:\n{out}\n{err}"));
    let mut words = line.split_whitespace().map(|w| w.parse().unwrap());
    (words.next().unwrap(), words.next().unwrap())
}

/// `Host::live` read /etc/hostname with `fs::read_to_string`, with no cap
/// (and a FIFO there would block it): a 64 MiB file was read whole, and
/// copied, to keep 64 bytes of it. It is read as every other file of the
/// host is, within [`MAX_FILE_BYTES`]: a larger one names no host.
#[test]
fn the_live_host_reads_etc_hostname_within_the_file_cap() {
    use driftaudit::unstable::host::MAX_FILE_BYTES;
    if std::env::var_os("DRIFTAUDIT_LIVE_NAME_CHILD").is_some() {
        let (cost, host) = crate::alloc::measure(driftaudit::unstable::host::Host::live);
        println!("LIVE {} {}", cost.allocated, host.name().len());
        return;
    }
    let mut missing = Vec::new();
    if common::find_tool("unshare").is_none() {
        missing.push("unshare");
    }
    if !common::mountns::is_root() {
        missing.push("root (for unshare -m and the bind mounts)");
    }
    if !Path::new("/etc/hostname").is_file() {
        missing.push("an /etc/hostname to bind over");
    }
    if !missing.is_empty() {
        common::skip(
            &format!("live host name: needs {}", missing.join(", ")),
            "not available here",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // a sparse 64 MiB file: over the cap
    let huge = tmp.path().join("huge");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(64 * MIB as u64)
        .unwrap();
    let (allocated, name_len) = live_name_from(&huge);
    assert!(
        allocated < MAX_FILE_BYTES as usize + MIB,
        "Host::live allocated {allocated} bytes for a 64 MiB /etc/hostname"
    );
    assert_eq!(name_len, "localhost".len());
    // a megabyte, under the cap: read, and the name cut to 64 bytes
    let long = tmp.path().join("long");
    std::fs::write(&long, format!("{}\n", "h".repeat(MIB))).unwrap();
    let (_, name_len) = live_name_from(&long);
    assert_eq!(name_len, 64);
}
