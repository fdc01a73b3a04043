//! The fleet summary as data: per rule counts and worst examples over many
//! host reports, and the small per-host digest it is folded from. Prints
//! nothing (the text form is in `render/fleet.rs`) and reads no host.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::policy::{PolicySet, Severity};
use crate::report::{input_rule_meta, Finding, HostReport, Status};

/// Hosts kept as worst examples per rule in the summary.
pub const WORST_EXAMPLES: usize = 3;

/// Schema id of the fleet summary (JSON `fleet` member, last `--format jsonl` line).
pub const FLEET_SCHEMA: &str = "driftaudit.fleet/1";

/// One host among the worst examples of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Example {
    /// Host name.
    pub host: String,
    /// Snapshot folder relative to the fleet directory.
    pub path: String,
    /// Failing subjects of the rule on this host (what the ranking uses).
    pub failing: usize,
    /// Worst severity among the failures (rules have one severity; kept for clarity).
    pub severity: Severity,
    /// The subject of its first failing finding (the key or item whose
    /// value `actual` is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subject: Vec<String>,
    /// The host's value (`actual`) of its first failing finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// Per-rule fleet counts: each host counts once per rule, under the worst
/// status among that rule's findings (fail > error > unknown > waived > pass > skip).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RuleStats {
    /// Rule title.
    pub title: String,
    /// Rule severity.
    pub severity: Option<Severity>,
    /// Hosts where the rule failed.
    pub hosts_failing: usize,
    /// Hosts where it passed.
    pub hosts_passing: usize,
    /// Hosts where it did not apply.
    pub hosts_skipped: usize,
    /// Hosts where data was missing.
    pub hosts_unknown: usize,
    /// Of the unknown hosts, those a policy parameter would decide, by
    /// parameter (`storage.assume_media`: a virtual disk's medium).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts_unknown_decided_by: BTreeMap<String, usize>,
    /// Hosts where the rule could not be evaluated.
    pub hosts_error: usize,
    /// Hosts where a waiver covered it.
    #[serde(skip_serializing_if = "is_zero")]
    pub hosts_waived: usize,
    /// Up to [`WORST_EXAMPLES`] hosts with the most failing subjects (ties: path order).
    pub worst: Vec<Example>,
    /// Set on the row of a `for_each` item's alias (a rule's old id, e.g.
    /// `storage.noatime-zimbra-db`): the rule it is an item of. The rule's
    /// own row counts every item; an alias row counts that item alone, so
    /// the ids users know keep their numbers. Per-rule metrics
    /// (Prometheus) leave alias rows out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The fleet summary: per rule counts and worst examples, and host totals.
/// Small (one entry per rule), whatever the number of hosts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetSummary {
    /// Always [`FLEET_SCHEMA`].
    pub schema: &'static str,
    /// Hosts audited.
    pub hosts: usize,
    /// Hosts with at least one failing finding.
    pub hosts_failing: usize,
    /// Hosts whose worst failure is at or above the `--fail-on` severity.
    pub hosts_failing_at_threshold: usize,
    /// Per rule, by rule id.
    pub rules: BTreeMap<String, RuleStats>,
    /// Findings about the run rather than one host, judged once every host
    /// is in: the `driftaudit.waiver` findings of expired and stale
    /// waivers (a fleet streams its hosts before they can be judged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_findings: Vec<crate::report::Finding>,
}

/// What the fleet summary keeps of one host: per rule, the worst status, the
/// number of failing subjects and the first failing value. Much smaller than
/// the report it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostDigest {
    /// Host name.
    pub host: String,
    /// Snapshot folder relative to the fleet directory.
    pub path: String,
    /// Any failing finding.
    pub failing: bool,
    /// A failure at or above the threshold.
    pub failing_at_threshold: bool,
    /// One entry per rule that produced findings.
    pub rules: Vec<RuleDigest>,
}

/// One rule's outcome on one host, inside a [`HostDigest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleDigest {
    /// Rule id.
    pub rule: String,
    /// Rule title (used only if the summary has not seen the rule).
    pub title: String,
    /// Rule severity.
    pub severity: Severity,
    /// Worst status among the rule's findings.
    pub worst: Status,
    /// Failing findings (subjects).
    pub failing: usize,
    /// Subject of the first failing finding.
    pub subject: Vec<String>,
    /// `actual` of the first failing finding.
    pub actual: Option<String>,
    /// The parameter that would decide an unknown finding of the rule.
    pub decided_by: Option<String>,
    /// For an alias row: the rule id it is an item of (see [`RuleStats::alias_of`]).
    pub alias_of: Option<String>,
}

/// What a [`HostDigest`] reads of one finding: a [`Finding`] of a host
/// report (a trait, so another form of a finding folds by the same code).
pub trait DigestFinding {
    /// Why [`DigestFinding::failure`] could not read the finding (never, for
    /// a [`Finding`]).
    type Error;
    /// Rule id.
    fn rule(&self) -> &str;
    /// The item's alias (a `for_each` rule's old id), if any.
    fn alias(&self) -> Option<&str>;
    /// Rule title.
    fn title(&self) -> &str;
    /// Rule severity.
    fn severity(&self) -> Severity;
    /// Verdict.
    fn status(&self) -> Status;
    /// The parameter that would decide an unknown verdict.
    fn decided_by(&self) -> Option<&str>;
    /// Subject and `actual` value: read only for a rule's first failing finding.
    fn failure(&self) -> Result<(Vec<String>, Option<String>), Self::Error>;
}

impl DigestFinding for Finding {
    type Error = std::convert::Infallible;
    fn rule(&self) -> &str {
        &self.rule
    }
    fn alias(&self) -> Option<&str> {
        self.alias.as_deref()
    }
    fn title(&self) -> &str {
        &self.title
    }
    fn severity(&self) -> Severity {
        self.severity
    }
    fn status(&self) -> Status {
        self.status
    }
    fn decided_by(&self) -> Option<&str> {
        self.decided_by.as_deref()
    }
    fn failure(&self) -> Result<(Vec<String>, Option<String>), Self::Error> {
        Ok((self.subject.clone(), self.actual.clone()))
    }
}

impl HostDigest {
    /// Reduce a host report.
    pub fn of(report: &HostReport, path: &str, fail_on: Severity) -> HostDigest {
        let Ok(d) = HostDigest::from_findings(
            &report.host,
            path,
            report.summary.fail > 0,
            report.worst_failure().is_some_and(|s| s >= fail_on),
            &report.findings,
        );
        d
    }

    /// Reduce a host given by its name, folder, whether it has a failing
    /// finding (its summary's `fail`), whether one is at or above the
    /// threshold, and its findings in report order.
    pub fn from_findings<F: DigestFinding>(
        host: &str,
        path: &str,
        failing: bool,
        failing_at_threshold: bool,
        findings: &[F],
    ) -> Result<HostDigest, F::Error> {
        let mut rules: Vec<RuleDigest> = Vec::new();
        // row index by id, so a rule's items (and their aliases) fold into
        // one row each wherever they appear in the report
        let mut at: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(findings.len());
        // findings come sorted by rule: the row of the finding before is
        // looked up first
        let mut last: Option<(&str, usize)> = None;
        for f in findings {
            // every finding counts under its rule id; an item with an alias
            // (a `for_each` rule's old id) also under that alias, so fleet
            // summaries keep the ids users know without losing the rule's total
            let ids =
                std::iter::once((f.rule(), None)).chain(f.alias().map(|a| (a, Some(f.rule()))));
            for (id, alias_of) in ids {
                let known = last.filter(|(l, _)| alias_of.is_none() && *l == id);
                let i = known.map(|(_, i)| i).unwrap_or_else(|| {
                    *at.entry(id).or_insert_with(|| {
                        rules.push(RuleDigest {
                            rule: id.to_string(),
                            title: f.title().to_string(),
                            severity: f.severity(),
                            worst: f.status(),
                            failing: 0,
                            subject: Vec::new(),
                            actual: None,
                            decided_by: None,
                            alias_of: alias_of.map(str::to_string),
                        });
                        rules.len() - 1
                    })
                });
                if alias_of.is_none() {
                    last = Some((id, i));
                }
                let r = &mut rules[i];
                if rank(f.status()) > rank(r.worst) {
                    r.worst = f.status();
                }
                if f.status() == Status::Unknown && r.decided_by.is_none() {
                    r.decided_by = f.decided_by().map(str::to_string);
                }
                if f.status() == Status::Fail {
                    r.failing += 1;
                    if r.failing == 1 {
                        (r.subject, r.actual) = f.failure()?;
                    }
                }
            }
        }
        Ok(HostDigest {
            host: host.to_string(),
            path: path.to_string(),
            failing,
            failing_at_threshold,
            rules,
        })
    }
}

fn rank(s: Status) -> u8 {
    match s {
        Status::Fail => 5,
        Status::Error => 4,
        Status::Unknown => 3,
        Status::Waived => 2,
        Status::Pass => 1,
        _ => 0,
    }
}

impl FleetSummary {
    /// An empty summary listing every rule of `policies` (so a rule no host
    /// failed still shows its passing count) plus `driftaudit.input`.
    pub fn new(policies: &PolicySet) -> FleetSummary {
        let mut rules = BTreeMap::new();
        for r in policies.rules() {
            rules.insert(
                r.id.clone(),
                RuleStats {
                    title: r.title.clone(),
                    severity: Some(r.severity),
                    ..Default::default()
                },
            );
        }
        let input = input_rule_meta();
        rules.insert(
            input.id,
            RuleStats {
                title: input.title,
                severity: Some(input.severity),
                ..Default::default()
            },
        );
        FleetSummary {
            schema: FLEET_SCHEMA,
            rules,
            ..Default::default()
        }
    }

    /// Fold one host's report in. `path` is the snapshot folder relative to the
    /// fleet directory; `fail_on` is the exit-code threshold.
    pub fn add(&mut self, report: &HostReport, path: &str, fail_on: Severity) {
        self.add_digest(HostDigest::of(report, path, fail_on));
    }

    /// Fold in a host already reduced to its [`HostDigest`] (made on a worker
    /// thread, so the full report can be dropped there).
    pub fn add_digest(&mut self, d: HostDigest) {
        self.hosts += 1;
        if d.failing {
            self.hosts_failing += 1;
        }
        if d.failing_at_threshold {
            self.hosts_failing_at_threshold += 1;
        }
        for r in d.rules {
            let st = self.rules.entry(r.rule).or_insert_with(|| RuleStats {
                title: r.title,
                severity: Some(r.severity),
                ..Default::default()
            });
            if st.alias_of.is_none() {
                st.alias_of = r.alias_of;
            }
            match r.worst {
                Status::Fail => st.hosts_failing += 1,
                Status::Error => st.hosts_error += 1,
                Status::Unknown => {
                    st.hosts_unknown += 1;
                    if let Some(p) = &r.decided_by {
                        *st.hosts_unknown_decided_by.entry(p.clone()).or_default() += 1;
                    }
                }
                Status::Waived => st.hosts_waived += 1,
                Status::Pass => st.hosts_passing += 1,
                _ => st.hosts_skipped += 1,
            }
            if r.failing > 0 {
                push_worst(
                    &mut st.worst,
                    Example {
                        host: d.host.clone(),
                        path: d.path.clone(),
                        failing: r.failing,
                        severity: r.severity,
                        subject: r.subject,
                        actual: r.actual,
                    },
                );
            }
        }
    }

    /// Add findings about the run, each with the host it concerns (a
    /// waiver's first scoped host): kept whole in `run_findings` and
    /// counted in their rule's row, one host each.
    pub fn add_run_findings(&mut self, findings: Vec<(crate::report::Finding, String)>) {
        for (f, host) in findings {
            let st = self
                .rules
                .entry(f.rule.clone())
                .or_insert_with(|| RuleStats {
                    title: f.title.clone(),
                    severity: Some(f.severity),
                    ..Default::default()
                });
            match f.status {
                Status::Fail => st.hosts_failing += 1,
                Status::Error => st.hosts_error += 1,
                Status::Unknown => st.hosts_unknown += 1,
                _ => st.hosts_passing += 1,
            }
            if f.status == Status::Fail {
                push_worst(
                    &mut st.worst,
                    Example {
                        host: host.clone(),
                        path: f.subject.first().cloned().unwrap_or_default(),
                        failing: 1,
                        severity: f.severity,
                        subject: Vec::new(),
                        actual: f.actual.clone(),
                    },
                );
            }
            self.run_findings.push(f);
        }
    }

    /// Merge another summary (from another thread) into this one.
    pub fn merge(&mut self, other: FleetSummary) {
        self.hosts += other.hosts;
        self.hosts_failing += other.hosts_failing;
        self.hosts_failing_at_threshold += other.hosts_failing_at_threshold;
        for (id, o) in other.rules {
            let st = self.rules.entry(id).or_insert_with(|| RuleStats {
                title: o.title.clone(),
                severity: o.severity,
                ..Default::default()
            });
            if st.alias_of.is_none() {
                st.alias_of = o.alias_of.clone();
            }
            st.hosts_failing += o.hosts_failing;
            st.hosts_passing += o.hosts_passing;
            st.hosts_skipped += o.hosts_skipped;
            st.hosts_unknown += o.hosts_unknown;
            for (p, n) in o.hosts_unknown_decided_by {
                *st.hosts_unknown_decided_by.entry(p).or_default() += n;
            }
            st.hosts_error += o.hosts_error;
            st.hosts_waived += o.hosts_waived;
            for ex in o.worst {
                push_worst(&mut st.worst, ex);
            }
        }
    }
}

/// Keep the [`WORST_EXAMPLES`] examples with the most failing subjects; ties go
/// to the smaller path, so the result does not depend on completion order.
fn push_worst(list: &mut Vec<Example>, ex: Example) {
    list.push(ex);
    list.sort_by(|a, b| {
        (b.severity, b.failing)
            .cmp(&(a.severity, a.failing))
            .then_with(|| a.path.cmp(&b.path))
    });
    list.truncate(WORST_EXAMPLES);
}
