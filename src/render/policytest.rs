//! Printers of a policy-test run (`driftaudit test`): text (one line per
//! case, `PASS`/`FAIL` and the case's place, every mismatch under a failing
//! case at the expectation's file:line:column with rule, subject, expected
//! and actual verdict and why, then a summary, in the manner of `opa test`
//! and `conftest verify`) and JUnit XML in the conventions of `junit.rs`
//! (quick-junit, no timestamps or durations, every (classname, name) pair
//! unique): one `<testsuite>` per test file, one `<testcase>` per case
//! (`classname` = the test file, `name` = the case, `file` and `line` its
//! place), a mismatch a `<failure>` whose message is the first mismatch and
//! whose body lists them all. Sees only the [`TestRun`]; never runs a case.

use std::collections::BTreeSet;
use std::fmt::Write;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use crate::policytest::{CaseResult, Checked, FileResult, TestRun};

/// One expectation as a line: `FILE:LINE:COL: RULE [SUBJECT]: expected X, got Y: why`.
pub fn mismatch_line(file: &str, k: &Checked) -> String {
    let subject = k
        .subject
        .as_ref()
        .map(|s| format!(" [{s}]"))
        .unwrap_or_default();
    let why = if k.detail.is_empty() {
        String::new()
    } else {
        format!(": {}", k.detail)
    };
    format!(
        "{file}:{}:{}: {}{subject}: expected {}, got {}{why}",
        k.line, k.column, k.rule, k.expected, k.actual
    )
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The summary line: `3 test files, 12 cases: 11 passed, 1 failed (40 expectations, 2 mismatched)`.
pub fn summary_line(run: &TestRun) -> String {
    let s = run.summary();
    format!(
        "{}, {}: {} passed, {} failed ({}, {} mismatched)",
        plural(s.files, "test file", "test files"),
        plural(s.cases, "case", "cases"),
        s.passed,
        s.failed,
        plural(s.expectations, "expectation", "expectations"),
        s.mismatches
    )
}

fn case_line(out: &mut String, f: &FileResult, c: &CaseResult, verbose: bool) {
    let word = if c.passed() { "PASS" } else { "FAIL" };
    let _ = writeln!(
        out,
        "{word} {}:{}: {} ({}, host {})",
        f.path,
        c.line,
        c.name,
        plural(c.checks.len(), "expectation", "expectations"),
        c.host
    );
    for k in &c.checks {
        if !k.ok() {
            let _ = writeln!(out, "  {}", mismatch_line(&f.path, k));
        } else if verbose {
            let subject = k
                .subject
                .as_ref()
                .map(|s| format!(" [{s}]"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  ok {}:{}:{}: {}{subject}: {}",
                f.path, k.line, k.column, k.rule, k.actual
            );
        }
    }
}

/// The run as text; `verbose` also lists every expectation that held.
pub fn text(run: &TestRun, verbose: bool) -> String {
    let mut out = String::new();
    for f in &run.files {
        for c in &f.cases {
            case_line(&mut out, f, c, verbose);
        }
    }
    if !run.files.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(out, "{}", summary_line(run));
    out
}

/// The run as JUnit XML (see the module docs).
pub fn junit(run: &TestRun) -> String {
    // every value made printable: no character XML 1.0 forbids is written
    let x = |s: &str| super::printable(s, true).into_owned();
    let mut r = quick_junit::Report::new("driftaudit test");
    let mut used = BTreeSet::new();
    for f in &run.files {
        let path = x(&f.path);
        let mut s = TestSuite::new(path.as_str());
        for c in &f.cases {
            let bad: Vec<&Checked> = c.checks.iter().filter(|k| !k.ok()).collect();
            let status = if bad.is_empty() {
                TestCaseStatus::success()
            } else {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(x(&mismatch_line(&f.path, bad[0])));
                st.set_type("mismatch");
                let body: Vec<String> = bad.iter().map(|k| mismatch_line(&f.path, k)).collect();
                st.set_description(x(&body.join("\n")));
                st
            };
            let mut name = x(&c.name);
            let mut n = 1;
            while used.contains(&(path.clone(), name.clone())) {
                n += 1;
                name = format!("{} #{n}", x(&c.name));
            }
            used.insert((path.clone(), name.clone()));
            let mut tc = TestCase::new(name, status);
            tc.set_classname(path.as_str());
            tc.set_assertions(c.checks.len());
            tc.extra.insert("file".into(), path.as_str().into());
            tc.extra
                .insert("line".into(), c.line.to_string().as_str().into());
            let held: Vec<String> = c
                .checks
                .iter()
                .filter(|k| k.ok())
                .map(|k| {
                    let subject = k
                        .subject
                        .as_ref()
                        .map(|s| format!(" [{s}]"))
                        .unwrap_or_default();
                    format!("ok {}{subject}: {}", k.rule, k.actual)
                })
                .collect();
            if !held.is_empty() {
                tc.set_system_out(x(&format!("host {}\n{}\n", c.host, held.join("\n"))));
            }
            s.add_test_case(tc);
        }
        r.add_test_suite(s);
    }
    match r.to_string() {
        Ok(mut s) => {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
        Err(e) => format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- cannot write JUnit: {} -->\n<testsuites/>\n",
            e.to_string().replace("--", "- -")
        ),
    }
}
