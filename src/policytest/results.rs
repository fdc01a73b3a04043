//! What a run says: the verdict of a rule on a subject ([`Verdict`], the
//! findings folded by [`fold`]) and the results a run returns
//! ([`TestRun`], per file, case and expectation, with counts), the data
//! `render::policytest` prints (the order [`fold`] takes is in the
//! folder's map, `mod.rs`). Data only: must not load, run or print.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::report::{Finding, Status};

/// What a rule says about a subject: one of the report's statuses, or
/// nothing at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The folded status of the rule's findings.
    Status(Status),
    /// The rule reported no finding (on that subject).
    None,
}

impl Verdict {
    /// The name written in test files and printed (`fail`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Status(s) => s.as_str(),
            Verdict::None => "none",
        }
    }

    /// Every name a test file may write, in the order messages list them.
    pub const NAMES: &'static [&'static str] =
        &["pass", "fail", "skip", "unknown", "error", "waived", "none"];

    pub(super) fn parse(s: &str) -> Option<Verdict> {
        Some(match s {
            "pass" => Verdict::Status(Status::Pass),
            "fail" => Verdict::Status(Status::Fail),
            "skip" => Verdict::Status(Status::Skip),
            "unknown" => Verdict::Status(Status::Unknown),
            "error" => Verdict::Status(Status::Error),
            "waived" => Verdict::Status(Status::Waived),
            "none" => Verdict::None,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Fold findings into one verdict (see the module docs for the order).
pub fn fold<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Verdict {
    const ORDER: [Status; 6] = [
        Status::Fail,
        Status::Error,
        Status::Unknown,
        Status::Waived,
        Status::Pass,
        Status::Skip,
    ];
    let seen: BTreeSet<Status> = findings.into_iter().map(|f| f.status).collect();
    ORDER
        .iter()
        .find(|s| seen.contains(s))
        .map_or(Verdict::None, |s| Verdict::Status(*s))
}

/// The result of running test files.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    /// One entry per test file, in the order found.
    pub files: Vec<FileResult>,
}

/// The cases of one test file.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    /// The test file as found (relative to the working directory when given so).
    pub path: String,
    /// Its cases in file order.
    pub cases: Vec<CaseResult>,
}

/// One case: its expectations, each with what the report said.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Line of the case's `name:` in the test file.
    pub line: usize,
    /// The host name of its snapshot.
    pub host: String,
    /// Every expectation, in file order.
    pub checks: Vec<Checked>,
}

/// One expectation and the verdict the report gave.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// Rule id.
    pub rule: String,
    /// The subject, when the expectation names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// What the test file expects.
    pub expected: Verdict,
    /// What the report says.
    pub actual: Verdict,
    /// Line of the expectation in the test file.
    pub line: usize,
    /// Column of the expectation's `rule:`.
    pub column: usize,
    /// Why the report says so: the explanation of the first finding with
    /// the actual status (its expected and actual values), or, for `none`,
    /// the subjects the rule did report.
    pub detail: String,
}

impl Checked {
    /// Whether the report agrees with the expectation.
    pub fn ok(&self) -> bool {
        self.expected == self.actual
    }
}

impl CaseResult {
    /// Whether every expectation of the case holds.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(Checked::ok)
    }
}

/// Counts over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunSummary {
    /// Test files.
    pub files: usize,
    /// Cases.
    pub cases: usize,
    /// Cases whose every expectation held.
    pub passed: usize,
    /// Cases with a mismatch.
    pub failed: usize,
    /// Expectations.
    pub expectations: usize,
    /// Expectations the report disagreed with.
    pub mismatches: usize,
}

impl TestRun {
    /// Counts of files, cases and expectations.
    pub fn summary(&self) -> RunSummary {
        let mut s = RunSummary {
            files: self.files.len(),
            ..RunSummary::default()
        };
        for c in self.files.iter().flat_map(|f| &f.cases) {
            s.cases += 1;
            if c.passed() {
                s.passed += 1;
            } else {
                s.failed += 1;
            }
            s.expectations += c.checks.len();
            s.mismatches += c.checks.iter().filter(|k| !k.ok()).count();
        }
        s
    }

    /// Whether every case passed.
    pub fn passed(&self) -> bool {
        self.files
            .iter()
            .flat_map(|f| &f.cases)
            .all(CaseResult::passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fold_takes_the_worst_status_and_none_for_nothing() {
        let f = |s: Status| {
            Finding::new(
                "r",
                "p",
                "t",
                crate::policy::Severity::Low,
                s,
                crate::policy::RuleSource {
                    path: "p.yaml".into(),
                    line: 1,
                },
            )
        };
        assert_eq!(fold(std::iter::empty()), Verdict::None);
        assert_eq!(
            fold(&[f(Status::Pass), f(Status::Skip)]),
            Verdict::Status(Status::Pass)
        );
        assert_eq!(
            fold(&[f(Status::Pass), f(Status::Waived)]),
            Verdict::Status(Status::Waived)
        );
        assert_eq!(
            fold(&[f(Status::Unknown), f(Status::Fail)]),
            Verdict::Status(Status::Fail)
        );
        assert_eq!(fold(&[f(Status::Skip)]), Verdict::Status(Status::Skip));
    }
}
