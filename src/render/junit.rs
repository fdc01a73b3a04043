//! JUnit XML renderer (quick-junit writer, which escapes markup; every value
//! first made printable, so no character XML 1.0 forbids is written) shaped for GitLab's unit test reports, which key a test case
//! by `classname` and `name`, keep only the first of equal keys and show
//! `classname` as the suite: one `<testsuite>` per host (named by its unique
//! label), one `<testcase>` per rule and subject on the host (`classname` =
//! `HOST.policy`, `name` = `rule[subject]`, `file` = the evidence path
//! relative to the repository root), every suite name and (classname, name)
//! pair unique in the report as an XML parser reads it back. Sees only the
//! [`Report`]; never evaluates rules or reads host data.
//!
//! Verdict of a rule's findings on one subject of a host, first match wins
//! (docs/formats.md):
//! 1. any `fail` → `<failure>` (message: the first explanation; body: every
//!    failing finding with expected/actual, evidence and fix);
//! 2. any `error` → `<error>` (the rule could not be evaluated);
//! 3. any `unknown` → `<skipped>` (type `unknown`, the reason: data missing);
//! 4. any `pass` or `waived` → passed; waived findings are listed in the
//!    test case's `<system-out>` with reason and expiry, never dropped;
//! 5. only `skip` → `<skipped>` (type `skip`, the reason it does not apply);
//!
//! a rule with no finding on the host is one test case named by the rule
//! alone, passing with a `<system-out>` note.
//! Each suite's properties carry `source` and one `coverage.DOMAIN` per
//! domain, the text report's coverage line (and `coverage.hard_links` when a
//! snapshot file read has other hard links).
//! Findings that did not decide the verdict are listed in `<system-out>`.
//! No timestamps or durations, so the output is reproducible.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::host::SourceKind;
use crate::report::{Finding, HostReport, Report, Status};

/// The verdict of one rule on one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// At least one finding failed.
    Failed,
    /// No failure, but the rule could not be evaluated somewhere.
    Errored,
    /// Data was missing (unknown), or the rule applies nowhere (only skips).
    Skipped,
    /// Everything that applied passed or was waived.
    Passed,
}

/// Fold a rule's findings on one host into one verdict (see the module docs).
pub fn verdict<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Verdict {
    let mut seen = [false; 6];
    for f in findings {
        seen[match f.status {
            Status::Fail => 0,
            Status::Error => 1,
            Status::Unknown => 2,
            Status::Pass => 3,
            Status::Waived => 4,
            Status::Skip => 5,
        }] = true;
    }
    if seen[0] {
        Verdict::Failed
    } else if seen[1] {
        Verdict::Errored
    } else if seen[2] {
        Verdict::Skipped
    } else if seen[3] || seen[4] {
        Verdict::Passed
    } else if seen[5] {
        Verdict::Skipped
    } else {
        Verdict::Passed
    }
}

fn evidence(f: &Finding) -> String {
    f.evidence
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One finding as a block of text for a failure body or system-out.
fn describe(out: &mut String, f: &Finding) {
    let subject = if f.subject.is_empty() {
        String::new()
    } else {
        format!(" {}", f.subject.join(", "))
    };
    let _ = writeln!(out, "[{} {}]{subject}", f.status.as_str(), f.severity);
    if let Some(e) = &f.expected {
        let _ = writeln!(out, "  expected: {e}");
    }
    if let Some(a) = &f.actual {
        let _ = writeln!(out, "  actual: {a}");
    }
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "  evidence: {}", evidence(f));
    }
    if let Some(w) = &f.waiver {
        let _ = writeln!(
            out,
            "  waived until {} (was {}): {}",
            w.expires,
            w.original_status.as_str(),
            w.reason.trim()
        );
    }
    let _ = writeln!(out, "  {}", f.explanation.trim());
    if !f.fix.is_empty() {
        let _ = writeln!(out, "  fix: {}", f.fix.trim());
    }
}

fn block<'a>(findings: impl Iterator<Item = &'a Finding>) -> String {
    let mut out = String::new();
    for (i, f) in findings.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        describe(&mut out, f);
    }
    out
}

/// Message (the first explanation), type and body (every finding) of a
/// failure, error or skip.
fn non_success(status: &mut TestCaseStatus, ty: &str, list: &[&Finding]) {
    if let Some(first) = list.first() {
        status.set_message(x(first.explanation.trim()));
    }
    status.set_type(ty);
    status.set_description(x(&block(list.iter().copied())));
}

/// The test case name of a rule's findings on one subject: the rule id,
/// then the subject in brackets (`linux.tcp-tw-recycle[net.ipv4.tcp_tw_recycle]`),
/// the way parametrised tests are named.
pub fn case_name(rule: &str, subject: &[String]) -> String {
    if subject.is_empty() {
        rule.to_string()
    } else {
        format!("{rule}[{}]", subject.join(", "))
    }
}

/// The evidence file of a test case: the first deciding finding with
/// evidence, else any finding with evidence; relative to the repository
/// root when inside it, else absolute.
fn case_file(
    h: &HostReport,
    decided: Status,
    findings: &[&Finding],
    repo_root: Option<&Path>,
) -> Option<String> {
    let e = findings
        .iter()
        .filter(|f| f.status == decided)
        .chain(findings.iter())
        .find_map(|f| f.evidence.first())?;
    let p = match super::sarif::repo_path(h.root.as_deref(), &e.path, repo_root) {
        Ok(rel) | Err(rel) => rel,
    };
    Some(p.to_string_lossy().into_owned())
}

fn case(
    h: &HostReport,
    classname: &str,
    name: &str,
    findings: &[&Finding],
    repo_root: Option<&Path>,
) -> TestCase {
    let v = verdict(findings.iter().copied());
    let of = |s: Status| -> Vec<&Finding> {
        findings.iter().copied().filter(|f| f.status == s).collect()
    };
    let (status, decided) = match v {
        Verdict::Failed => {
            let list = of(Status::Fail);
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let sev = list
                .iter()
                .map(|f| f.severity)
                .max()
                .map(|s| s.as_str())
                .unwrap_or("fail");
            non_success(&mut st, sev, &list);
            (st, Status::Fail)
        }
        Verdict::Errored => {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Error);
            non_success(&mut st, "error", &of(Status::Error));
            (st, Status::Error)
        }
        Verdict::Skipped => {
            let (ty, s) = if findings.iter().any(|f| f.status == Status::Unknown) {
                ("unknown", Status::Unknown)
            } else {
                ("skip", Status::Skip)
            };
            let mut st = TestCaseStatus::skipped();
            non_success(&mut st, ty, &of(s));
            (st, s)
        }
        Verdict::Passed => (TestCaseStatus::success(), Status::Pass),
    };
    let mut tc = TestCase::new(name, status);
    tc.set_classname(classname);
    tc.set_assertions(findings.len());
    if let Some(file) = case_file(h, decided, findings, repo_root) {
        tc.extra.insert("file".into(), x(&file).into());
    }
    // Everything that did not decide the verdict and is not a plain pass.
    let rest: Vec<&Finding> = findings
        .iter()
        .copied()
        .filter(|f| f.status != decided && f.status != Status::Pass)
        .collect();
    if findings.is_empty() {
        tc.set_system_out("no findings for this rule on this host\n");
    } else if !rest.is_empty() {
        tc.set_system_out(x(&block(rest.into_iter())));
    }
    tc
}

fn suite(
    h: &HostReport,
    label: &str,
    report: &Report,
    used: &mut BTreeSet<(String, String)>,
    repo_root: Option<&Path>,
) -> TestSuite {
    // rule id -> policy, from the catalogue and from the findings themselves.
    let mut rules: BTreeMap<&str, &str> = report
        .rules
        .iter()
        .map(|r| (r.id.as_str(), r.policy.as_str()))
        .collect();
    for f in &h.findings {
        rules.entry(f.rule.as_str()).or_insert(f.policy.as_str());
    }
    let mut s = TestSuite::new(label);
    s.add_property(Property::new(
        "source",
        match h.source {
            SourceKind::Live => "live",
            SourceKind::Snapshot => "snapshot",
        },
    ));
    for c in &h.coverage {
        s.add_property(Property::new(
            format!("coverage.{}", c.domain.as_str()),
            x(&super::text::coverage_line(c)),
        ));
    }
    if let Some(line) = super::text::hard_links_line(h, |p| p.to_string()) {
        s.add_property(Property::new("coverage.hard_links", x(&line)));
    }
    for (rule, policy) in rules {
        let classname = format!("{label}.{}", key(policy));
        // one test case per subject of the rule, in the report's order
        let mut by_subject: BTreeMap<&[String], Vec<&Finding>> = BTreeMap::new();
        for f in h.findings.iter().filter(|f| f.rule == rule) {
            by_subject.entry(f.subject.as_slice()).or_default().push(f);
        }
        if by_subject.is_empty() {
            by_subject.insert(&[], Vec::new());
        }
        for (subject, fs) in by_subject {
            let base = key(&case_name(rule, subject)).into_owned();
            let mut name = base.clone();
            // Unique in the whole report as a reader gets it back, whatever
            // a hostile name holds (`a[b]` as a rule id, a subject that
            // repeats another's name).
            let mut n = 1;
            while used.contains(&(classname.clone(), name.clone())) {
                n += 1;
                name = format!("{base} #{n}");
            }
            used.insert((classname.clone(), name.clone()));
            s.add_test_case(case(h, &classname, &name, &fs, repo_root));
        }
    }
    s
}

/// Each host's suite name, the host part of its class names: unique as an
/// XML reader gets it back ([`super::unique_labels`] over [`key`]), so no
/// two hosts share a suite or a GitLab class.
fn host_labels(report: &Report) -> Vec<String> {
    super::labels::unique_labels_shown(report.hosts.iter().map(|h| h.host.as_str()), key)
}

/// A name that keys the report (suite name, classname, test case name) as
/// an XML reader gets it back: [`x`] with a newline shown as `\n` (an
/// attribute reads it back as a space) and a tab as `\t` (quick-junit
/// drops it), so names that differ stay different, and unique where they
/// are made unique.
fn key(s: &str) -> Cow<'_, str> {
    let shown = super::printable(s, false);
    if shown.contains('\t') {
        Cow::Owned(shown.replace('\t', "\\t"))
    } else {
        shown
    }
}

/// A value for the XML: every character XML 1.0 forbids (U+FFFE, U+FFFF,
/// C0 but tab and newline) and every other control made visible.
fn x(s: &str) -> String {
    super::printable(s, true).into_owned()
}

/// Render the report as JUnit XML, `file` attributes relative to
/// `repo_root` (absolute, canonical: the CLI passes the working directory),
/// absolute outside it or without one.
pub fn render_with(report: &Report, repo_root: Option<&Path>) -> String {
    let mut r = quick_junit::Report::new("driftaudit");
    let mut used = BTreeSet::new();
    for (h, label) in report.hosts.iter().zip(host_labels(report)) {
        r.add_test_suite(suite(h, &label, report, &mut used, repo_root));
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

/// [`render_with`] without a repository root: `file` attributes are
/// absolute paths.
pub fn render(report: &Report) -> String {
    render_with(report, None)
}
