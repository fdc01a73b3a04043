//! The report model every renderer reads: hosts, findings with status,
//! expected/actual values, provenance and explanations, plus the catalogue of
//! rules that ran. Pure data; no rendering and no evaluation here.

use serde::Serialize;

use crate::facts::Evidence;
use crate::host::SourceKind;
use crate::policy::{PolicySet, RuleSource, Severity};

/// Schema id of the JSON report.
pub const REPORT_SCHEMA: &str = "driftaudit.report/1";

/// Outcome of one rule for one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Status {
    /// The rule failed.
    Fail,
    /// Data was missing or unreadable.
    Unknown,
    /// The rule could not be evaluated.
    Error,
    /// A failure (or unknown/error) covered by a waiver.
    Waived,
    /// The rule does not apply.
    Skip,
    /// The rule passed.
    Pass,
}

impl Status {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Skip => "skip",
            Status::Unknown => "unknown",
            Status::Error => "error",
            Status::Waived => "waived",
        }
    }
}

/// A waiver that covered a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaiverNote {
    /// Reason given in the waiver file.
    pub reason: String,
    /// Expiry date (YYYY-MM-DD).
    pub expires: String,
    /// Status the finding had before it was waived.
    pub original_status: Status,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Rule id.
    pub rule: String,
    /// Policy id.
    pub policy: String,
    /// Rule title.
    pub title: String,
    /// Rule severity.
    pub severity: Severity,
    /// Outcome.
    pub status: Status,
    /// Canonical names of the settings involved.
    pub subject: Vec<String>,
    /// What the rule expects, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What the host has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Host files and lines that set the values (winning first).
    pub evidence: Vec<Evidence>,
    /// Plain-words explanation with the host's numbers.
    pub explanation: String,
    /// What to change (empty for passing findings).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
    /// Where the rule is defined.
    pub rule_source: RuleSource,
    /// Waiver that covered the finding, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiver: Option<WaiverNote>,
    /// How a whole divides into parts (RAM into heap, pool and the rest), when the rule draws one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<BreakdownData>,
}

/// Evaluated breakdown: a total in bytes and the parts taken out of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakdownData {
    /// Name of the whole (`RAM`).
    pub label: String,
    /// The whole, in bytes.
    pub total: f64,
    /// Parts in order (label, bytes).
    pub parts: Vec<(String, f64)>,
    /// Name of what is left.
    pub rest: String,
}

/// Counts per status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// Failed.
    pub fail: usize,
    /// Skipped.
    pub skip: usize,
    /// Unknown.
    pub unknown: usize,
    /// Errors.
    pub error: usize,
    /// Waived.
    #[serde(skip_serializing_if = "is_zero")]
    pub waived: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Count findings.
    pub fn of(findings: &[Finding]) -> Summary {
        let mut s = Summary::default();
        for f in findings {
            match f.status {
                Status::Pass => s.pass += 1,
                Status::Fail => s.fail += 1,
                Status::Skip => s.skip += 1,
                Status::Unknown => s.unknown += 1,
                Status::Error => s.error += 1,
                Status::Waived => s.waived += 1,
            }
        }
        s
    }
}

/// Findings for one host.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostReport {
    /// Host name.
    pub host: String,
    /// Live or snapshot.
    pub source: SourceKind,
    /// Counts.
    pub summary: Summary,
    /// Findings, sorted by rule id then subject.
    pub findings: Vec<Finding>,
}

impl HostReport {
    /// Build a host report; sorts findings deterministically and counts them.
    pub fn new(host: String, source: SourceKind, mut findings: Vec<Finding>) -> HostReport {
        sort_findings(&mut findings);
        HostReport {
            host,
            source,
            summary: Summary::of(&findings),
            findings,
        }
    }

    /// The worst severity among failing findings (waived ones excluded).
    pub fn worst_failure(&self) -> Option<Severity> {
        self.findings
            .iter()
            .filter(|f| f.status == Status::Fail)
            .map(|f| f.severity)
            .max()
    }
}

/// Sort findings by rule id, subject, then evidence, so reports diff cleanly.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        (&a.rule, &a.subject, &a.evidence, a.status).cmp(&(
            &b.rule,
            &b.subject,
            &b.evidence,
            b.status,
        ))
    });
}

/// Metadata of a rule that ran (for SARIF rule descriptors, JUnit, `explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleMeta {
    /// Rule id.
    pub id: String,
    /// Policy id.
    pub policy: String,
    /// Title.
    pub title: String,
    /// Severity.
    pub severity: Severity,
    /// Rationale template text as written.
    pub why: String,
    /// Fix template text as written.
    pub fix: String,
    /// References.
    pub references: Vec<String>,
    /// Where defined.
    pub source: RuleSource,
}

/// A whole report: one or more hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// Hosts in the order audited.
    pub hosts: Vec<HostReport>,
    /// Rules that ran (not part of the JSON report).
    #[serde(skip)]
    pub rules: Vec<RuleMeta>,
}

impl Report {
    /// A report over hosts, with the rule catalogue of `policies`.
    pub fn new(hosts: Vec<HostReport>, policies: &PolicySet) -> Report {
        let mut rules: Vec<RuleMeta> = policies
            .rules
            .iter()
            .map(|r| RuleMeta {
                id: r.id.clone(),
                policy: r.policy.clone(),
                title: r.title.clone(),
                severity: r.severity,
                why: r.why.source.trim().to_string(),
                fix: r.fix.source.trim().to_string(),
                references: r.references.clone(),
                source: r.source.clone(),
            })
            .collect();
        rules.push(input_rule_meta());
        Report {
            schema: REPORT_SCHEMA,
            hosts,
            rules,
        }
    }

    /// Whether any host has a failure at or above `fail_on`.
    pub fn fails_at(&self, fail_on: Severity) -> bool {
        self.hosts
            .iter()
            .any(|h| h.worst_failure().is_some_and(|s| s >= fail_on))
    }
}

/// Id of the built-in rule that reports unreadable or malformed host files.
pub const INPUT_RULE: &str = "driftaudit.input";

/// Metadata of [`INPUT_RULE`].
pub fn input_rule_meta() -> RuleMeta {
    RuleMeta {
        id: INPUT_RULE.into(),
        policy: "driftaudit".into(),
        title: "Host files are readable and well-formed".into(),
        severity: Severity::Low,
        why: "A malformed line is skipped (or, for some formats, stops the service that reads the file); an unreadable file means the audit could not verify what it sets.".into(),
        fix: "Correct or remove the line named in the finding, or make the file readable to the auditing user.".into(),
        references: vec![],
        source: RuleSource { path: "(built-in)".into(), line: 0 },
    }
}
