//! Prometheus text exposition format 0.0.4 (not OpenMetrics) for
//! node_exporter's textfile collector: a few gauges per host and per rule,
//! never a label holding a setting's value, a path or a subject, so the
//! number of series is bounded by hosts × statuses × severities and by the
//! rule catalogue. Sees only the [`Report`] (or, for a streamed fleet, the
//! per-host counts and the fleet summary) and the time it is handed (only
//! [`now`], which callers call, reads the clock); never evaluates rules or
//! reads host data.
//!
//! Series (docs/formats.md, Prometheus):
//! - `driftaudit_findings{host,status,severity}`: findings of the host by
//!   status and rule severity, every combination written (a zero is a
//!   value, an absent series is not); host labels are unique by
//!   construction (a second host of one name is `HOST#N` with the first N
//!   no host has), so no series repeats;
//! - `driftaudit_unevaluated_domains{host}`: detected domains none of whose
//!   rules reached a verdict (never a silent all-clear);
//! - `driftaudit_rule_failing_hosts{rule,policy,severity}`: hosts on which
//!   the rule fails, for a report of more than one host (a fleet);
//! - `driftaudit_hosts`: hosts audited;
//! - `driftaudit_last_run_timestamp_seconds`: when the audit ran;
//! - `driftaudit_build_info{version}`: always 1.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::policy::{PolicySet, Severity};
use crate::report::fleet::FleetSummary;
use crate::report::{HostReport, Report, RuleMeta, Status};

/// Statuses in the order they are written.
const STATUSES: [Status; 6] = [
    Status::Fail,
    Status::Unknown,
    Status::Error,
    Status::Waived,
    Status::Skip,
    Status::Pass,
];

fn status_index(s: Status) -> usize {
    STATUSES.iter().position(|x| *x == s).unwrap_or(0)
}

fn severity_index(s: Severity) -> usize {
    Severity::ALL.iter().position(|x| *x == s).unwrap_or(0)
}

/// One host's numbers: all a fleet run keeps of a host after it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCounts {
    /// Host name.
    pub host: String,
    /// Findings by status (in [`Status`] order fail, unknown, error,
    /// waived, skip, pass) and severity (lowest first).
    pub findings: [[usize; 5]; 6],
    /// Detected domains with no rule evaluated.
    pub unevaluated_domains: usize,
}

impl HostCounts {
    /// Count a host report.
    pub fn of(h: &HostReport) -> HostCounts {
        let mut findings = [[0usize; 5]; 6];
        for f in &h.findings {
            findings[status_index(f.status)][severity_index(f.severity)] += 1;
        }
        HostCounts {
            host: h.host.clone(),
            findings,
            unevaluated_domains: h.unevaluated_domains().len(),
        }
    }
}

/// Per rule: its policy, severity and the hosts it fails on.
pub type RuleFailures = BTreeMap<String, (String, Option<Severity>, usize)>;

/// Per-rule failing hosts of a whole report.
fn rule_failures(report: &Report) -> RuleFailures {
    let mut out = catalogue_failures(&report.rules);
    for h in &report.hosts {
        count_failures(&mut out, h, None);
    }
    out
}

/// Every rule of a catalogue, failing on no host yet.
fn catalogue_failures(rules: &[RuleMeta]) -> RuleFailures {
    rules
        .iter()
        .map(|r| (r.id.clone(), (r.policy.clone(), Some(r.severity), 0)))
        .collect()
}

/// Count the rules failing on `h`, a host after those already counted; a
/// rule the catalogue lacks takes its policy and severity from the first
/// host it fails on. `first`: `h` comes before every host counted (those
/// rules take it from `h`), with the catalogue's rule ids.
fn count_failures(out: &mut RuleFailures, h: &HostReport, first: Option<&BTreeSet<String>>) {
    let mut failing: Vec<&str> = h
        .findings
        .iter()
        .filter(|f| f.status == Status::Fail)
        .map(|f| f.rule.as_str())
        .collect();
    failing.sort_unstable();
    failing.dedup();
    for rule in failing {
        let f = h.findings.iter().find(|f| f.rule == rule);
        let policy = f.map(|f| f.policy.clone()).unwrap_or_default();
        let severity = f.map(|f| f.severity);
        let e = out
            .entry(rule.to_string())
            .or_insert_with(|| (policy.clone(), severity, 0));
        if first.is_some_and(|catalogue| !catalogue.contains(rule)) {
            (e.0, e.1) = (policy, severity);
        }
        e.2 += 1;
    }
}

/// The metrics of a report (as [`render_at`] writes them) taken a host at
/// a time, in report order (`driftaudit merge`): each host's counts and
/// the per-rule failing hosts are kept, never a host. The first host may
/// be put in last ([`ReportMetrics::hold_first`]), when what it holds is
/// known only at the end.
#[derive(Debug)]
pub struct ReportMetrics {
    hosts: Vec<HostCounts>,
    rules: RuleFailures,
    catalogue: BTreeSet<String>,
    first_held: bool,
}

impl ReportMetrics {
    /// No host yet, over the report's rule catalogue.
    pub fn new(rules: &[RuleMeta]) -> ReportMetrics {
        ReportMetrics {
            hosts: Vec::new(),
            rules: catalogue_failures(rules),
            catalogue: rules.iter().map(|r| r.id.clone()).collect(),
            first_held: false,
        }
    }

    /// Count the next host.
    pub fn add(&mut self, h: &HostReport) {
        self.hosts.push(HostCounts::of(h));
        count_failures(&mut self.rules, h, None);
    }

    /// Keep the first host's place, for [`ReportMetrics::put_first`].
    pub fn hold_first(&mut self) {
        self.first_held = true;
        self.hosts.push(HostCounts {
            host: String::new(),
            findings: [[0; 5]; 6],
            unevaluated_domains: 0,
        });
    }

    /// Count the first host, whose place [`ReportMetrics::hold_first`] kept.
    pub fn put_first(&mut self, h: &HostReport) {
        if let (true, Some(place)) = (self.first_held, self.hosts.first_mut()) {
            *place = HostCounts::of(h);
            count_failures(&mut self.rules, h, Some(&self.catalogue));
            self.first_held = false;
        }
    }

    /// The metrics at `now`, as [`render_at`] writes them for the report.
    pub fn render(&self, now: f64) -> String {
        let rules = (self.hosts.len() > 1).then_some(&self.rules);
        render_counts(&self.hosts, rules, now)
    }
}

/// Per-rule failing hosts from a streamed fleet's summary.
pub fn fleet_rule_failures(summary: &FleetSummary, policies: &PolicySet) -> RuleFailures {
    let input = crate::report::input_rule_meta();
    let mut policy: BTreeMap<&str, &str> = policies
        .rules()
        .iter()
        .map(|r| (r.id.as_str(), r.policy.as_str()))
        .collect();
    policy.insert(input.id.as_str(), input.policy.as_str());
    summary
        .rules
        .iter()
        // an alias row repeats an item of its rule's row: per rule only
        .filter(|(_, s)| s.alias_of.is_none())
        .map(|(id, s)| {
            (
                id.clone(),
                (
                    policy.get(id.as_str()).copied().unwrap_or("").to_string(),
                    s.severity,
                    s.hosts_failing,
                ),
            )
        })
        .collect()
}

/// A label value in the text format: control characters, line separators
/// and direction overrides first made visible ([`super::printable`]: a CR
/// is the two characters `\r`), then `\`, `"` and newline escaped, so no
/// byte the exposition format or its consumers mishandle is written raw.
pub fn label_value(s: &str) -> String {
    let s = super::printable(s, false);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\\\t"),
            c => out.push(c),
        }
    }
    out
}

fn header(out: &mut String, name: &str, help: &str) {
    // HELP text escapes `\` and newline; ours are fixed strings without them.
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
}

/// Write the metrics of hosts (and, for more than one host, the per-rule
/// failing hosts) at `now` (seconds since the Unix epoch).
pub fn render_counts(hosts: &[HostCounts], rules: Option<&RuleFailures>, now: f64) -> String {
    // A series must be unique: host labels are unique by construction
    // (`HOST#N` with the first N no host has, whatever the names hold).
    let labels: Vec<String> = super::labels::unique_labels(hosts.iter().map(|h| h.host.as_str()))
        .iter()
        .map(|l| label_value(l))
        .collect();
    let mut out = String::new();
    header(
        &mut out,
        "driftaudit_findings",
        "Findings of the last audit by host, status and rule severity.",
    );
    for (h, host) in hosts.iter().zip(&labels) {
        for (si, status) in STATUSES.iter().enumerate() {
            for (vi, sev) in Severity::ALL.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "driftaudit_findings{{host=\"{host}\",status=\"{}\",severity=\"{}\"}} {}",
                    status.as_str(),
                    sev.as_str(),
                    h.findings[si][vi]
                );
            }
        }
    }
    header(
        &mut out,
        "driftaudit_unevaluated_domains",
        "Domains detected on the host none of whose rules reached a verdict.",
    );
    for (h, host) in hosts.iter().zip(&labels) {
        let _ = writeln!(
            out,
            "driftaudit_unevaluated_domains{{host=\"{host}\"}} {}",
            h.unevaluated_domains
        );
    }
    if let Some(rules) = rules {
        header(
            &mut out,
            "driftaudit_rule_failing_hosts",
            "Hosts on which the rule fails.",
        );
        for (id, (policy, sev, n)) in rules {
            let _ = writeln!(
                out,
                "driftaudit_rule_failing_hosts{{rule=\"{}\",policy=\"{}\",severity=\"{}\"}} {n}",
                label_value(id),
                label_value(policy),
                sev.map(|s| s.as_str()).unwrap_or("none")
            );
        }
    }
    header(&mut out, "driftaudit_hosts", "Hosts audited.");
    let _ = writeln!(out, "driftaudit_hosts {}", hosts.len());
    header(
        &mut out,
        "driftaudit_last_run_timestamp_seconds",
        "When the audit ran, in seconds since the Unix epoch.",
    );
    let _ = writeln!(out, "driftaudit_last_run_timestamp_seconds {now:.3}");
    header(
        &mut out,
        "driftaudit_build_info",
        "The driftaudit version that wrote these metrics; always 1.",
    );
    let _ = writeln!(
        out,
        "driftaudit_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    out
}

/// Render a report's metrics as of `now` (seconds since the Unix epoch).
pub fn render_at(report: &Report, now: f64) -> String {
    let hosts: Vec<HostCounts> = report.hosts.iter().map(HostCounts::of).collect();
    let rules = (report.hosts.len() > 1).then(|| rule_failures(report));
    render_counts(&hosts, rules.as_ref(), now)
}

/// Seconds since the Unix epoch, now (the one clock read of this format,
/// made by the caller of [`render_at`]).
pub fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_escape_backslash_quote_and_newline() {
        // a newline is host data shown as its escape (`\n`, printable), whose
        // backslash the exposition format then escapes: it parses back as `\n`
        assert_eq!(label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\\\nd");
        assert_eq!(label_value("web1"), "web1");
    }
}
