//! Hostile option files (issue 13): the resolver's work is bounded by the
//! input, never by how often includes reach a file. Each test asserts a bound
//! on work (bytes read and processed, files visited, options, evidence,
//! issues), not on time; benches/parsers.rs measures lines per second.

use std::path::Path;

use driftaudit::facts::mysql::{
    effective_options, server_groups, OptionSet, MAX_BYTES_PROCESSED, MAX_FILES_READ,
};
use driftaudit::facts::{Entry, FileIssue};
use driftaudit::host::Host;

fn resolve(main: &Path) -> (OptionSet, Vec<FileIssue>) {
    let mut issues = Vec::new();
    let set = effective_options(
        &Host::live(),
        &[main.to_str().unwrap()],
        &server_groups(Some("10.11.19-MariaDB")),
        &mut issues,
    );
    (set, issues)
}

#[test]
fn one_option_repeated_40000_times_is_linear_work() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("[mysqld]\n");
    for i in 0..40_000 {
        text.push_str(&format!("max_connections = {}\n", 100 + i));
    }
    let main = tmp.path().join("my.cnf");
    std::fs::write(&main, &text).unwrap();
    let (set, issues) = resolve(&main);
    assert_eq!(set.argv.len(), 40_000);
    assert_eq!(set.bytes_read, text.len() as u64);
    let Some(Entry::Set(s)) = set.namespace.get("max_connections") else {
        panic!("max_connections not set");
    };
    assert_eq!(s.raw, "40099");
    assert_eq!(s.evidence[0].line, Some(40_001));
    // The winner and the most recent overridden lines, not 40,000 of them.
    assert!(
        s.evidence.len() <= 17,
        "{} pieces of evidence",
        s.evidence.len()
    );
    assert_eq!(s.evidence[1].line, Some(40_000));
    // "set again" once for the file, not once per line.
    let again = issues
        .iter()
        .filter(|i| i.message.contains("set again"))
        .count();
    assert_eq!(again, 1, "{issues:#?}");
}

#[test]
fn self_including_directories_read_each_file_once_within_a_byte_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("conf.d");
    std::fs::create_dir_all(&d).unwrap();
    // Two 1 MiB files that each include their own directory: mysys follows
    // this to depth 10 (2^11 visits, 2 GiB); the issue measured 1.7 GB read.
    let pad = "#\n".repeat(1 << 19);
    for name in ["a.cnf", "b.cnf"] {
        std::fs::write(
            d.join(name),
            format!("[mysqld]\nx_{name} = 1\n!includedir {}\n{pad}", d.display()),
        )
        .unwrap();
    }
    let main = tmp.path().join("my.cnf");
    std::fs::write(&main, format!("[mysqld]\n!includedir {}\n", d.display())).unwrap();
    let (set, issues) = resolve(&main);
    let file_bytes: u64 = ["a.cnf", "b.cnf"]
        .iter()
        .map(|n| std::fs::metadata(d.join(n)).unwrap().len())
        .sum::<u64>()
        + std::fs::metadata(&main).unwrap().len();
    // Each file read from the host once.
    assert_eq!(set.bytes_read, file_bytes);
    assert!(set.bytes_processed <= MAX_BYTES_PROCESSED);
    assert!(set.files_read.len() <= MAX_FILES_READ);
    assert!(
        issues
            .iter()
            .any(|i| i.message.contains("MiB of option files processed")),
        "{issues:#?}"
    );
    // The options of both files are there, in mysys order, as far as the budget goes.
    assert!(set.argv.iter().any(|o| o.name == "x_b.cnf"));

    // Small files: the visit budget stops the 2^11 visits, still one read each.
    let d = tmp.path().join("small.d");
    std::fs::create_dir_all(&d).unwrap();
    for name in ["a.cnf", "b.cnf"] {
        std::fs::write(
            d.join(name),
            format!("[mysqld]\nx = 1\n!includedir {}\n", d.display()),
        )
        .unwrap();
    }
    std::fs::write(&main, format!("[mysqld]\n!includedir {}\n", d.display())).unwrap();
    let (set, issues) = resolve(&main);
    let file_bytes: u64 = ["a.cnf", "b.cnf"]
        .iter()
        .map(|n| std::fs::metadata(d.join(n)).unwrap().len())
        .sum::<u64>()
        + std::fs::metadata(&main).unwrap().len();
    assert_eq!(set.bytes_read, file_bytes);
    assert_eq!(set.files_read.len(), MAX_FILES_READ);
    assert!(
        issues
            .iter()
            .any(|i| i.message.contains("option files read (include loop?)")),
        "{issues:#?}"
    );
}

#[test]
fn a_15_mib_line_is_cut_where_mariadb_cuts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("my.cnf");
    let text = format!("[mysqld]\nv = {}\nafter = 1\n", "x y".repeat(5 << 20));
    std::fs::write(&main, &text).unwrap();
    let (set, issues) = resolve(&main);
    assert_eq!(set.bytes_read, text.len() as u64);
    // MariaDB reads lines in 4094-byte pieces: no value or name is longer.
    for o in &set.argv {
        assert!(o.arg.len() <= 4096 + 2, "{} bytes", o.arg.len());
    }
    assert!(set.argv.iter().any(|o| o.name == "after"));
    // Messages stay small: bounded count, bounded size.
    assert!(issues.len() <= 110, "{} issues", issues.len());
    let bytes: usize = issues.iter().map(|i| i.message.len()).sum();
    assert!(bytes < 128 * 1024, "{bytes} bytes of messages");
}
