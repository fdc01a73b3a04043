//! The report model every renderer reads: hosts, findings with status,
//! expected/actual values, provenance and explanations, per-domain coverage
//! (detected or not, from what, and what the rules of that domain did), plus
//! the catalogue of rules that ran. Pure data; no rendering and no evaluation
//! here.

pub mod diff;
pub mod fleet;
pub mod merge;
mod order;
pub mod shard;

pub use order::sort_findings;

use serde::Serialize;

use crate::facts::presence::{Detection, Domain};
use crate::facts::Evidence;
use crate::host::SourceKind;
use crate::policy::{Overridden, PolicySet, RuleSource, Severity};

/// Schema id of the JSON report.
pub const REPORT_SCHEMA: &str = "driftaudit.report/1";

/// Outcome of one rule for one subject.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct WaiverNote {
    /// Reason given in the waiver file.
    pub reason: String,
    /// Expiry date (YYYY-MM-DD).
    pub expires: String,
    /// Status the finding had before it was waived.
    pub original_status: Status,
}

/// One step that turned the text read on the host into the value a rule
/// compared, as goss records them ("got `128` after to-numeric").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Conversion {
    /// The step: `to-bytes` (a size with a unit), `to-numeric` (text or a
    /// boolean compared as a number), `to-boolean` (`0`, `off`, `yes`...).
    pub step: String,
    /// The value after the step (bytes for `to-bytes`).
    pub value: String,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    /// `expected` for people where `expected` is an expression (an
    /// `assert:` rule's `pool >= target`): the setting or field it reads,
    /// the comparison in words and the value computed on this host
    /// (`innodb_buffer_pool_size at least 10.6 GiB`). Absent when it would
    /// say the same as `expected`; text, HTML and Markdown show it in place
    /// of `expected` ([`Finding::expected_for_people`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_words: Option<String>,
    /// What the host has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// `actual` with every field of the records it names, where `actual`
    /// shows only the fields the rule reads (JSON only, when it differs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_whole: Option<String>,
    /// The host's value as read, before the conversions (only when one was
    /// applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_raw: Option<String>,
    /// The conversions applied to `actual_raw` to compare it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversions: Vec<Conversion>,
    /// Host files and lines that set the values (winning first).
    pub evidence: Vec<Evidence>,
    /// Plain-words explanation with the host's numbers.
    pub explanation: String,
    /// What to change (empty for passing findings).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
    /// Where the rule is defined.
    pub rule_source: RuleSource,
    /// Waiver that covered the finding, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiver: Option<WaiverNote>,
    /// How a whole divides into parts (RAM into heap, pool and the rest), when the rule draws one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<BreakdownData>,
    /// A `drift:` rule's failing key: the two sides compared (configured
    /// before, running after) and, for option lists, what differs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<DriftData>,
    /// The domain the rule belongs to (from what it reads), for coverage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<Domain>,
    /// Values of the rule a site overlay (or `--set`) changed, each with
    /// the file, line and column that set it (`disabled` among them when
    /// an overlay turned the rule off: the finding is then `skip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overridden: Vec<Overridden>,
    /// A `for_each` item's second id (the rule's `alias:`, e.g. the id the
    /// rule had before it was one rule per item): `--only`, `--skip`,
    /// waivers, policy tests and fleet summaries match it as well as `rule`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// An `unknown` finding that a policy parameter would decide (a
    /// virtual disk's medium: `storage.assume_media`), when the reader
    /// names one; fleet summaries count such hosts apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

impl Finding {
    /// The one way to start a finding: the rule's identity and the outcome;
    /// everything else empty until a `with_*` setter fills it.
    pub fn new(
        rule: impl Into<String>,
        policy: impl Into<String>,
        title: impl Into<String>,
        severity: Severity,
        status: Status,
        rule_source: RuleSource,
    ) -> Finding {
        Finding {
            rule: rule.into(),
            policy: policy.into(),
            title: title.into(),
            severity,
            status,
            subject: Vec::new(),
            expected: None,
            expected_words: None,
            actual: None,
            actual_whole: None,
            actual_raw: None,
            conversions: Vec::new(),
            evidence: Vec::new(),
            explanation: String::new(),
            fix: String::new(),
            rule_source,
            waiver: None,
            breakdown: None,
            drift: None,
            domain: None,
            overridden: Vec::new(),
            alias: None,
            decided_by: None,
        }
    }

    /// Whether `pattern` (a rule id glob) names this finding: its rule id
    /// or its item's alias.
    pub(crate) fn rule_matches(&self, pattern: &glob::Pattern) -> bool {
        pattern.matches(&self.rule) || self.alias.as_deref().is_some_and(|a| pattern.matches(a))
    }

    /// Canonical names of the settings (or paths) involved.
    pub fn with_subject(mut self, subject: Vec<String>) -> Finding {
        self.subject = subject;
        self
    }

    /// What the rule expects, in words.
    pub fn with_expected(mut self, expected: impl Into<String>) -> Finding {
        self.expected = Some(expected.into());
        self
    }

    /// What the rule expects as the formats for people show it: the words
    /// of an expression where there are some, else `expected`.
    pub fn expected_for_people(&self) -> Option<&str> {
        self.expected_words.as_deref().or(self.expected.as_deref())
    }

    /// What the host has.
    pub fn with_actual(mut self, actual: impl Into<String>) -> Finding {
        self.actual = Some(actual.into());
        self
    }

    /// The host's value as read and the conversions that made `actual` of
    /// it (nothing is kept when there were none).
    pub fn with_conversions(mut self, raw: impl Into<String>, steps: Vec<Conversion>) -> Finding {
        if !steps.is_empty() {
            self.actual_raw = Some(raw.into());
        }
        self.conversions = steps;
        self
    }

    /// Host files and lines that set the values (winning first).
    pub fn with_evidence(mut self, evidence: Vec<Evidence>) -> Finding {
        self.evidence = evidence;
        self
    }

    /// The explanation with the host's numbers.
    pub fn with_explanation(mut self, explanation: impl Into<String>) -> Finding {
        self.explanation = explanation.into();
        self
    }

    /// What to change.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Finding {
        self.fix = fix.into();
        self
    }

    /// The domain the rule belongs to.
    pub fn with_domain(mut self, domain: Option<Domain>) -> Finding {
        self.domain = domain;
        self
    }

    /// The rule's values that overlays changed, with where.
    pub fn with_overridden(mut self, overridden: Vec<Overridden>) -> Finding {
        self.overridden = overridden;
        self
    }

    /// The override that disabled the rule, when one did.
    pub fn disabled(&self) -> Option<&Overridden> {
        self.overridden.iter().find(|o| o.field == "disabled")
    }
}

/// Evaluated breakdown: a total in bytes and the parts taken out of it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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

/// The two sides of a `drift:` finding (`expected` is the configured
/// value, `actual` the running one): where each was read and, when either is
/// a list of items (mount options, a comma or space separated value), the
/// items the running side added and removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DriftData {
    /// Namespace of the configured values (`sysctl_boot`, `fstab`, ...).
    pub configured: String,
    /// Namespace of the running values (`sysctl`, `mounts`, ...).
    pub running: String,
    /// The file and line that configure the value (also `evidence[0]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_at: Option<Evidence>,
    /// Items running but not configured (list values only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Items configured but not running (list values only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

/// Counts per status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
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
    #[serde(default, skip_serializing_if = "is_zero")]
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
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HostReport {
    /// Host name.
    pub host: String,
    /// Live or snapshot.
    pub source: SourceKind,
    /// With `check --fleet`: the snapshot folder relative to the fleet
    /// directory (`.` when it is the snapshot itself); what `merge` orders
    /// hosts by and the fleet summary's examples cite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Counts.
    pub summary: Summary,
    /// Per domain (sysctl, MySQL, Zimbra, storage): detected or not, from
    /// what, and how its rules came out.
    pub coverage: Vec<DomainCoverage>,
    /// Snapshot files read that have more than one hard link (`st_nlink >
    /// 1`), once per host: a hard link cannot be told by its path from a
    /// file outside the snapshot (docs/snapshot-format.md, Confinement).
    /// Empty for a live host. Part of the coverage section in every format.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hard_links: Vec<String>,
    /// With `check --fleet`: the snapshot folder relative to the repository
    /// root (`--sarif-root`, else the working directory), as SARIF and JUnit
    /// paths start (`snapshots/db1`); outside that root, as given on the
    /// command line (`--fleet DIR` joined with `path`), so never an absolute
    /// path of the auditing machine unless `--fleet` was one. What `merge`
    /// places the host's files with: relative to its own repository root,
    /// wherever the merge job runs. JSON member `root`.
    #[serde(default, rename = "root", skip_serializing_if = "Option::is_none")]
    pub repo_dir: Option<String>,
    /// The directory the host's files were read from: the snapshot
    /// directory (canonical) for a snapshot, `None` for the live host. SARIF
    /// places findings with it (`snapshots/db1/etc/sysctl.conf`); not part of
    /// the JSON report, which must not name the auditing machine's paths
    /// (`repo_dir` is the JSON's form of it).
    #[serde(skip)]
    pub root: Option<std::path::PathBuf>,
    /// Findings, sorted by rule id then subject.
    pub findings: Vec<Finding>,
}

impl HostReport {
    /// Build a host report; sorts findings deterministically and counts them.
    /// Coverage lists every domain as not detected until
    /// [`HostReport::with_detections`] says otherwise.
    pub fn new(host: String, source: SourceKind, mut findings: Vec<Finding>) -> HostReport {
        sort_findings(&mut findings);
        let mut h = HostReport {
            host,
            source,
            path: None,
            summary: Summary::of(&findings),
            coverage: Vec::new(),
            hard_links: Vec::new(),
            repo_dir: None,
            root: None,
            findings,
        };
        h.coverage = coverage(&[], &h.findings);
        h
    }

    /// [`HostReport::new`]`(host, source, findings)`[`.with_detections`](HostReport::with_detections)`(detections)`,
    /// the coverage worked out once rather than twice (the engine's
    /// report of a host).
    pub(crate) fn detected(
        host: String,
        source: SourceKind,
        mut findings: Vec<Finding>,
        detections: &[Detection],
    ) -> HostReport {
        sort_findings(&mut findings);
        HostReport {
            host,
            source,
            path: None,
            summary: Summary::of(&findings),
            coverage: coverage(detections, &findings),
            hard_links: Vec::new(),
            repo_dir: None,
            root: None,
            findings,
        }
    }

    /// The same report noting the hard-linked files read from a snapshot
    /// (`Host::hard_linked`); the engine passes none for a live host.
    pub fn with_hard_links(mut self, mut paths: Vec<String>) -> HostReport {
        paths.sort();
        paths.dedup();
        self.hard_links = paths;
        self
    }

    /// The same report noting the directory its files were read from (the
    /// snapshot directory; the engine passes none for a live host).
    pub fn with_root(mut self, root: Option<std::path::PathBuf>) -> HostReport {
        self.root = root;
        self
    }

    /// The same report with the host's domain detections (from the facts).
    pub fn with_detections(mut self, detections: &[Detection]) -> HostReport {
        self.coverage = coverage(detections, &self.findings);
        self
    }

    /// Replace the findings (after waivers): sorts, recounts the summary and
    /// the coverage, keeping what was detected.
    pub fn set_findings(&mut self, mut findings: Vec<Finding>) {
        sort_findings(&mut findings);
        let detections: Vec<Detection> = self
            .coverage
            .iter()
            .map(|c| Detection {
                domain: c.domain,
                detected: c.detected,
                sources: c.sources.clone(),
                looked_for: c.looked_for.clone(),
            })
            .collect();
        self.summary = Summary::of(&findings);
        self.coverage = coverage(&detections, &findings);
        self.findings = findings;
    }

    /// The worst severity among failing findings (waived ones excluded).
    pub fn worst_failure(&self) -> Option<Severity> {
        self.findings
            .iter()
            .filter(|f| f.status == Status::Fail)
            .map(|f| f.severity)
            .max()
    }

    /// Whether any finding is `unknown` or `error` (waived ones excluded).
    pub fn has_unknown(&self) -> bool {
        self.findings
            .iter()
            .any(|f| matches!(f.status, Status::Unknown | Status::Error))
    }

    /// Detected domains none of whose rules was evaluated (all skipped or
    /// unknown): a host like this must never read as a plain all-clear.
    pub fn unevaluated_domains(&self) -> Vec<&DomainCoverage> {
        self.coverage
            .iter()
            .filter(|c| c.detected && c.rules > 0 && c.evaluated == 0)
            .collect()
    }
}

/// Coverage of one domain on one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DomainCoverage {
    /// The domain.
    pub domain: Domain,
    /// Whether any of its evidence is on the host.
    pub detected: bool,
    /// What showed it (host paths, a line where one line is the proof).
    pub sources: Vec<String>,
    /// What was looked for, when not detected.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub looked_for: String,
    /// Rules of the domain that ran on the host.
    pub rules: usize,
    /// Rules that reached a verdict (passed, failed or waived).
    pub evaluated: usize,
    /// Rules by outcome: a rule with several findings counts once, by its
    /// worst (fail, error, unknown, waived, pass, skip).
    pub pass: usize,
    /// Rules that failed.
    pub fail: usize,
    /// Rules that could not be decided (data missing).
    pub unknown: usize,
    /// Rules that could not be evaluated.
    pub error: usize,
    /// Rules that did not apply.
    pub skip: usize,
    /// Rules whose failures are all waived.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waived: usize,
    /// The leading reasons of unknown, error and skipped rules, most rules first.
    pub reasons: Vec<CoverageReason>,
}

/// One reason shared by rules that did not reach a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CoverageReason {
    /// `unknown`, `error` or `skip`.
    pub status: Status,
    /// The explanation the rules gave.
    pub reason: String,
    /// How many rules gave it.
    pub rules: usize,
}

/// Reasons kept per domain.
const MAX_REASONS: usize = 3;

fn rank(s: Status) -> u8 {
    match s {
        Status::Fail => 0,
        Status::Error => 1,
        Status::Unknown => 2,
        Status::Waived => 3,
        Status::Pass => 4,
        Status::Skip => 5,
    }
}

/// Fold findings into per-domain coverage (the built-in input and waiver
/// rules are not counted; their findings name files, not rules).
pub fn coverage(detections: &[Detection], findings: &[Finding]) -> Vec<DomainCoverage> {
    use std::collections::BTreeMap;
    // rule -> (domain, worst finding)
    let mut rules: BTreeMap<&str, (Domain, &Finding)> = BTreeMap::new();
    for f in findings {
        let Some(d) = f.domain else { continue };
        if f.rule.starts_with("driftaudit.") {
            continue;
        }
        let e = rules.entry(f.rule.as_str()).or_insert((d, f));
        if rank(f.status) < rank(e.1.status) {
            e.1 = f;
        }
    }
    Domain::ALL
        .iter()
        .map(|&domain| {
            let det = detections.iter().find(|d| d.domain == domain);
            let mut c = DomainCoverage {
                domain,
                detected: det.is_some_and(|d| d.detected),
                sources: det.map(|d| d.sources.clone()).unwrap_or_default(),
                looked_for: det.map(|d| d.looked_for.clone()).unwrap_or_default(),
                rules: 0,
                evaluated: 0,
                pass: 0,
                fail: 0,
                unknown: 0,
                error: 0,
                skip: 0,
                waived: 0,
                reasons: Vec::new(),
            };
            let mut reasons: Vec<CoverageReason> = Vec::new();
            for (_, f) in rules.values().filter(|(d, _)| *d == domain) {
                c.rules += 1;
                match f.status {
                    Status::Pass => c.pass += 1,
                    Status::Fail => c.fail += 1,
                    Status::Waived => c.waived += 1,
                    Status::Unknown => c.unknown += 1,
                    Status::Error => c.error += 1,
                    Status::Skip => c.skip += 1,
                }
                if matches!(f.status, Status::Unknown | Status::Error | Status::Skip) {
                    match reasons
                        .iter_mut()
                        .find(|r| r.status == f.status && r.reason == f.explanation)
                    {
                        Some(r) => r.rules += 1,
                        None => reasons.push(CoverageReason {
                            status: f.status,
                            reason: f.explanation.clone(),
                            rules: 1,
                        }),
                    }
                }
            }
            c.evaluated = c.pass + c.fail + c.waived;
            // most rules first; unknown and error before skip at equal counts
            reasons.sort_by(|a, b| {
                b.rules
                    .cmp(&a.rules)
                    .then(rank(a.status).cmp(&rank(b.status)))
            });
            reasons.truncate(MAX_REASONS);
            c.reasons = reasons;
            c
        })
        .collect()
}

/// Metadata of a rule that ran (for SARIF rule descriptors, JUnit, `explain`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    /// Profiles the rule belongs to (`tags:`); absent from JSON when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Where defined.
    pub source: RuleSource,
}

/// The rules a run chose (`--profile`, a site's `profiles:`), recorded in
/// the report: what ran and what each profile not run would add.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Selection {
    /// The profiles that ran, sorted; empty: the default run (the drift
    /// and domain policies).
    #[serde(default)]
    pub profiles: Vec<String>,
    /// The profiles not run, each with the rules it would add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles_not_run: Vec<crate::policy::NotRun>,
    /// Benchmark rules left out of this run (`--profile all` adds them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub benchmark_rules_left_out: usize,
}

impl Selection {
    /// The choice `policies` records ([`PolicySet::choose_profiles`]).
    pub fn of(policies: &PolicySet) -> Selection {
        Selection {
            profiles: policies.profiles().to_vec(),
            profiles_not_run: policies.profiles_not_run().to_vec(),
            benchmark_rules_left_out: policies.benchmark_rules_left_out(),
        }
    }
}

/// A whole report: one or more hosts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The profiles that ran and those that did not.
    #[serde(flatten)]
    pub selection: Selection,
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
            .rules()
            .iter()
            .map(|r| RuleMeta {
                id: r.id.clone(),
                policy: r.policy.clone(),
                title: r.title.clone(),
                severity: r.severity,
                why: r.why.source.trim().to_string(),
                fix: r.fix.source.trim().to_string(),
                references: r.references.clone(),
                tags: r.tags.clone(),
                source: r.source.clone(),
            })
            .collect();
        rules.push(input_rule_meta());
        Report {
            schema: REPORT_SCHEMA,
            selection: Selection::of(policies),
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

    /// Whether any host has an `unknown` or `error` finding (`--fail-on unknown`).
    pub fn has_unknown(&self) -> bool {
        self.hosts.iter().any(HostReport::has_unknown)
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
        tags: vec![],
        source: RuleSource { path: "(built-in)".into(), line: 0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finding_new_starts_empty_and_setters_fill_only_their_field() {
        let src = RuleSource {
            path: "p.yaml".into(),
            line: 3,
        };
        let f = Finding::new("a.b", "a", "t", Severity::High, Status::Fail, src.clone());
        assert!(f.subject.is_empty() && f.evidence.is_empty());
        assert!(f.expected.is_none() && f.actual.is_none() && f.domain.is_none());
        assert!(f.explanation.is_empty() && f.fix.is_empty());
        let json = serde_json::to_value(&f).unwrap();
        for absent in ["expected", "actual", "fix", "waiver", "breakdown", "domain"] {
            assert!(json.get(absent).is_none(), "{absent} in {json}");
        }
        let g = f
            .with_expected("x <= 1")
            .with_actual("x = 2")
            .with_fix("lower x")
            .with_subject(vec!["x".into()]);
        assert_eq!(g.expected.as_deref(), Some("x <= 1"));
        assert_eq!(g.actual.as_deref(), Some("x = 2"));
        assert_eq!((g.fix.as_str(), g.subject.len()), ("lower x", 1));
        assert_eq!((g.rule.as_str(), g.rule_source), ("a.b", src));
    }
}
