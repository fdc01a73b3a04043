//! The loaded suite and its run: each case's policies, host, waivers and
//! expectations as the loader validated them, and each case audited
//! through the engine (the upgrade rules of its targets too), its waivers
//! applied, each expectation compared (see `expect`). Must not print, and
//! must not validate (that is `loader`).

use crate::engine::audit;
use crate::host::Host;
use crate::policy::PolicySet;
use crate::report::Finding;
use crate::waiver::WaiverSet;

use super::expect::{check, LoadedExpect};
use super::results::{CaseResult, FileResult, TestRun};

/// Test files loaded and validated, their snapshots opened: ready to run.
pub struct Suite {
    pub(super) files: Vec<LoadedFile>,
}

pub(super) struct LoadedFile {
    pub(super) path: String,
    pub(super) cases: Vec<LoadedCase>,
}

pub(super) struct LoadedCase {
    pub(super) name: String,
    pub(super) line: usize,
    /// With the upgrade rules of the file's `targets:`.
    pub(super) policies: PolicySet,
    pub(super) host: Host,
    pub(super) host_name: String,
    // kept until the case has run: the inline snapshot's directory
    pub(super) _inline: Option<tempfile::TempDir>,
    pub(super) waivers: Option<WaiverSet>,
    pub(super) today: String,
    pub(super) expect: Vec<LoadedExpect>,
}

impl Suite {
    /// How many cases the suite holds.
    pub fn cases(&self) -> usize {
        self.files.iter().map(|f| f.cases.len()).sum()
    }

    /// Run every case: audit its snapshot with its policies, apply its
    /// waivers, and compare each expectation with the report.
    pub fn run(&self) -> TestRun {
        TestRun {
            files: self
                .files
                .iter()
                .map(|f| FileResult {
                    path: f.path.clone(),
                    cases: f.cases.iter().map(run_case).collect(),
                })
                .collect(),
        }
    }
}

fn run_case(c: &LoadedCase) -> CaseResult {
    let hosts = std::slice::from_ref(&c.host);
    let mut report = audit(&c.policies, hosts);
    if let Some(w) = &c.waivers {
        w.apply(&mut report, &c.today);
    }
    let findings: &[Finding] = report
        .hosts
        .first()
        .map(|h| h.findings.as_slice())
        .unwrap_or_default();
    let checks = c.expect.iter().map(|e| check(findings, e)).collect();
    CaseResult {
        name: c.name.clone(),
        line: c.line,
        host: c.host_name.clone(),
        checks,
    }
}
