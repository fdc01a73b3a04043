//! Volume of input problems (issue 29, item 5): a file of junk lines in any
//! reader is a few findings, not one per line. Each test copies a shipped
//! host, fills one file with `a` lines at 1 MiB and at 16 MiB (under the
//! file cap) and bounds what the audit makes of it: the findings, the bytes
//! of the JSON and SARIF reports, and the peak of live heap (a counting
//! global allocator with per-thread counters, tests/common/alloc.rs), never
//! the time. Before, 1 MiB in one sysctl.d file
//! was 524,288 findings, a 453 MB report and 1.36 GB of heap.

use std::fs;
use std::path::Path;

use crate::alloc::measure;
use crate::common::audit;
use crate::common::cli;

const MIB: usize = 1024 * 1024;

/// A copy of shipped host `host` whose `file` is its own text (or `head`
/// when given) followed by `a` lines up to `bytes`.
fn junk_host(host: &str, file: &str, head: Option<&str>, bytes: usize) -> tempfile::TempDir {
    // `cp -a`: the shipped hosts hold symlinks (as hosts do)
    let d = cli::copy_tree(&cli::testdata("hosts").join(host));
    let p = d.path().join(file);
    let own = fs::read_to_string(&p).unwrap_or_default();
    let _ = fs::remove_file(&p);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    let mut text = match head {
        Some(h) => h.to_string(),
        None => own,
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let junk = bytes.saturating_sub(text.len()) / 2;
    text.push_str(&"a\n".repeat(junk));
    fs::write(&p, text).unwrap();
    d
}

struct Cost {
    findings: usize,
    json: usize,
    sarif: usize,
    peak: usize,
    file_issues: usize,
}

/// What auditing the snapshot at `dir` and writing its report cost.
fn cost_of_audit(dir: &Path, file: &str) -> Cost {
    let set = audit::builtin();
    let (cost, report) = measure(|| audit::report(&set, dir));
    let peak = cost.peak;
    let json = serde_json::to_string(&report).unwrap().len();
    let run = driftaudit::Report::new(vec![report.clone()], &set);
    let sarif = driftaudit::render(
        &run,
        driftaudit::Format::Sarif,
        driftaudit::RenderOptions::default(),
    )
    .len();
    let want = format!("/{file}");
    let file_issues = report
        .findings
        .iter()
        .filter(|f| f.evidence.iter().any(|e| e.path == want))
        .count();
    Cost {
        findings: report.findings.len(),
        json,
        sarif,
        peak,
        file_issues,
    }
}

/// The junk in `file` of `host` is read (some finding names the file) and
/// costs a bounded number of findings, report bytes and heap at 1 MiB and
/// at 16 MiB.
fn bounded(host: &str, file: &str, head: Option<&str>, heap_per_byte: usize) {
    for size in [MIB, 16 * MIB - 4096] {
        let d = junk_host(host, file, head, size);
        let c = cost_of_audit(d.path(), file);
        let at = format!("{host}: {file} of {size} bytes");
        assert!(c.file_issues >= 1, "{at}: no finding names the file");
        assert!(
            c.file_issues <= 20,
            "{at}: {} findings name the file",
            c.file_issues
        );
        assert!(c.findings <= 400, "{at}: {} findings", c.findings);
        assert!(c.json < 2 * MIB, "{at}: JSON report of {} bytes", c.json);
        assert!(c.sarif < 4 * MIB, "{at}: SARIF report of {} bytes", c.sarif);
        eprintln!(
            "{at}: {} findings, {} naming the file, JSON {} B, SARIF {} B, peak heap {} B",
            c.findings, c.file_issues, c.json, c.sarif, c.peak
        );
        // the file is read whole and its lines kept as data: linear heap
        assert!(
            c.peak < heap_per_byte * size + 64 * MIB,
            "{at}: peak heap {} bytes",
            c.peak
        );
    }
}

#[test]
fn junk_lines_in_a_sysctl_d_file_are_one_finding_not_one_per_line() {
    bounded(
        "zimbra-zmlocalconfig-only",
        "etc/sysctl.d/60-zimbra.conf",
        None,
        16,
    );
}

#[test]
fn junk_lines_in_mysql_variables_tsv_are_one_finding_not_one_per_line() {
    bounded("mysql-healthy", "captures/mysql-variables.tsv", None, 16);
}

#[test]
fn junk_lines_in_fstab_are_one_finding_not_one_per_line() {
    bounded("zimbra-zmlocalconfig-only", "etc/fstab", None, 16);
}

#[test]
fn junk_lines_in_mountinfo_are_one_finding_not_one_per_line() {
    bounded("zimbra-zmlocalconfig-only", "proc/self/mountinfo", None, 16);
}

#[test]
fn junk_lines_in_zmlocalconfig_are_one_finding_not_one_per_line() {
    bounded(
        "zimbra-zmlocalconfig-only",
        "captures/zmlocalconfig.txt",
        None,
        16,
    );
}

#[test]
fn junk_lines_in_sysctl_a_are_one_finding_not_one_per_line() {
    bounded(
        "zimbra-zmlocalconfig-only",
        "captures/sysctl-a.txt",
        None,
        16,
    );
}

#[test]
fn junk_lines_in_du_txt_are_one_finding_not_one_per_line() {
    bounded("zimbra-zmlocalconfig-only", "captures/du.txt", None, 16);
}

#[test]
fn repeated_option_lines_in_my_cnf_are_one_finding_not_one_per_line() {
    // `a` under [mysqld] is an option prefix (a problem on each line) and
    // set again on each line after the first
    bounded(
        "mysql-healthy",
        "etc/mysql/mysql.conf.d/mysqld.cnf",
        Some("[mysqld]\ndatadir = /var/lib/mysql\n"),
        // every option line is kept as a directive with its evidence
        // (about 100 bytes of heap per 2-byte line, linear); the issues
        // are what this bounds
        160,
    );
}
