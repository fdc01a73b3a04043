//! SARIF 2.1.0 renderer (serde-sarif types, generated from the official
//! schema): one run, the rule catalogue as `tool.driver.rules`, one result per
//! fail/unknown/error/waived finding located at the host file and line that set
//! the value. Sees only the [`Report`]; never evaluates rules or reads host data.
//!
//! Mapping (docs/formats.md):
//! - rule: `shortDescription` = title, `fullDescription` = why, `help` = why +
//!   fix, `helpUri` = first reference, `defaultConfiguration.level` from severity;
//! - result: `level` from severity (critical/high → error, medium → warning,
//!   low/info → note), `message` = explanation (+ fix), location = the first
//!   evidence entry (the winning file and line) as a path relative to the
//!   `HOSTROOT` base (the host's `/` or the snapshot directory);
//! - waived results carry a `suppressions` entry (`external`, `accepted`) whose
//!   justification is the waiver reason;
//! - `properties`: `host`, `status`, `severity`, `subject`, `expected`, `actual`;
//! - run `properties`: `hosts`, and `coverage` (per host, the report's
//!   per-domain coverage objects, as in the JSON report, and `hard_links`
//!   when snapshot files read had other hard links).

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};
use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, PropertyBag,
    Region, ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run,
    Sarif, Suppression, Tool, ToolComponent,
};

use crate::facts::Evidence;
use crate::policy::Severity;
use crate::report::{Finding, Report, RuleMeta, Status};

/// The `uriBaseId` every result location is relative to: the root of the
/// audited host (`/` on a live host, the snapshot directory otherwise).
pub const URI_BASE_ID: &str = "HOSTROOT";

/// SARIF level for a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

fn result_level(severity: Severity) -> ResultLevel {
    match level(severity) {
        "error" => ResultLevel::Error,
        "warning" => ResultLevel::Warning,
        _ => ResultLevel::Note,
    }
}

/// Whether a finding becomes a SARIF result (pass and skip do not).
pub fn is_reported(status: Status) -> bool {
    matches!(
        status,
        Status::Fail | Status::Unknown | Status::Error | Status::Waived
    )
}

/// Percent-encode a host path (without its leading `/`) as a relative URI
/// reference: unreserved characters and `/` stay, everything else is `%XX`.
pub fn host_path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.trim_start_matches('/').bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn bag(props: BTreeMap<String, Json>, tags: Option<Vec<String>>) -> PropertyBag {
    let mut b = PropertyBag::builder().additional_properties(props).build();
    b.tags = tags;
    b
}

fn text(s: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

fn descriptor(r: &RuleMeta) -> ReportingDescriptor {
    let help = if r.fix.is_empty() {
        r.why.clone()
    } else {
        format!("{}\n\nFix: {}", r.why, r.fix)
    };
    let mut props = BTreeMap::new();
    props.insert("severity".to_string(), json!(r.severity.as_str()));
    props.insert("policy".to_string(), json!(r.policy));
    props.insert(
        "source".to_string(),
        json!(format!("{}:{}", r.source.path, r.source.line)),
    );
    let mut d = ReportingDescriptor::builder()
        .id(&r.id)
        .short_description(text(&r.title))
        .full_description(text(&r.why))
        .help(text(&help))
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level(r.severity)))
                .build(),
        )
        .properties(bag(props, Some(vec![r.policy.clone()])))
        .build();
    d.help_uri = r.references.first().cloned();
    d
}

fn location(e: &Evidence) -> Location {
    let artifact = ArtifactLocation::builder()
        .uri(host_path_uri(&e.path))
        .uri_base_id(URI_BASE_ID)
        .build();
    let mut physical = PhysicalLocation::builder()
        .artifact_location(artifact)
        .build();
    if let Some(line) = e.line.filter(|l| *l >= 1) {
        physical.region = Some(Region::builder().start_line(line as i64).build());
    }
    let mut l = Location::builder().physical_location(physical).build();
    if let Some(via) = &e.via {
        // the file is the real one an admin edits; say which link was read
        l.message = Some(Message::builder().text(format!("read via {via}")).build());
    }
    l
}

fn result(host: &str, f: &Finding, rule_index: Option<usize>) -> SarifResult {
    let mut msg = f.explanation.trim().to_string();
    if !f.fix.is_empty() && f.status != Status::Pass {
        msg.push_str("\n\nFix: ");
        msg.push_str(f.fix.trim());
    }
    let mut props = BTreeMap::new();
    props.insert("host".to_string(), json!(host));
    props.insert("status".to_string(), json!(f.status.as_str()));
    props.insert("severity".to_string(), json!(f.severity.as_str()));
    props.insert("subject".to_string(), json!(f.subject));
    if let Some(e) = &f.expected {
        props.insert("expected".to_string(), json!(e));
    }
    if let Some(a) = &f.actual {
        props.insert("actual".to_string(), json!(a));
    }
    let mut r = SarifResult::builder()
        .rule_id(&f.rule)
        .message(Message::builder().text(msg).build())
        .level(result_level(f.severity))
        .properties(bag(props, None))
        .build();
    r.rule_index = rule_index.and_then(|i| i64::try_from(i).ok());
    // The winning location only: code scanning annotates that line. The
    // remaining evidence (e.g. the live /proc value) goes to relatedLocations.
    let mut ev = f.evidence.iter();
    if let Some(first) = ev.next() {
        r.locations = Some(vec![location(first)]);
        let related: Vec<Location> = ev
            .enumerate()
            .map(|(i, e)| {
                let mut l = location(e);
                l.id = Some(i as i64 + 1);
                l
            })
            .collect();
        if !related.is_empty() {
            r.related_locations = Some(related);
        }
    }
    if let Some(w) = &f.waiver {
        let mut props = BTreeMap::new();
        props.insert("expires".to_string(), json!(w.expires));
        props.insert(
            "originalStatus".to_string(),
            json!(w.original_status.as_str()),
        );
        r.suppressions = Some(vec![Suppression::builder()
            .kind(json!("external"))
            .status(json!("accepted"))
            .justification(&w.reason)
            .properties(bag(props, None))
            .build()]);
    } else if f.status == Status::Waived {
        r.suppressions = Some(vec![Suppression::builder()
            .kind(json!("external"))
            .status(json!("accepted"))
            .build()]);
    }
    r
}

/// Build the SARIF log for a report.
pub fn sarif(report: &Report) -> Sarif {
    let rules: Vec<ReportingDescriptor> = report.rules.iter().map(descriptor).collect();
    let index: BTreeMap<&str, usize> = report
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    let mut results = Vec::new();
    for h in &report.hosts {
        for f in h.findings.iter().filter(|f| is_reported(f.status)) {
            results.push(result(&h.host, f, index.get(f.rule.as_str()).copied()));
        }
    }
    let driver = ToolComponent::builder()
        .name("driftaudit")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let mut bases = BTreeMap::new();
    bases.insert(
        URI_BASE_ID.to_string(),
        ArtifactLocation::builder()
            .description(Message::from(
                "Root of the audited host: / on a live host, the snapshot directory for a snapshot.",
            ))
            .build(),
    );
    let mut run_props = BTreeMap::new();
    run_props.insert(
        "hosts".to_string(),
        json!(report.hosts.iter().map(|h| &h.host).collect::<Vec<_>>()),
    );
    run_props.insert(
        "coverage".to_string(),
        json!(report
            .hosts
            .iter()
            .map(|h| {
                let mut c = json!({"host": h.host, "domains": h.coverage});
                if !h.hard_links.is_empty() {
                    c["hard_links"] = json!(h.hard_links);
                }
                c
            })
            .collect::<Vec<_>>()),
    );
    let run = Run::builder()
        .tool(Tool::from(driver))
        .results(results)
        .original_uri_base_ids(bases)
        .properties(bag(run_props, None))
        .build();
    Sarif::builder()
        .schema(serde_sarif::sarif::SCHEMA_URL)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// Render the report as a pretty SARIF 2.1.0 document with a trailing newline.
pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(&sarif(report))
        .unwrap_or_else(|e| format!("{{\"error\": {}}}", json!(e.to_string())));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_encodes_everything_but_unreserved_and_slash() {
        assert_eq!(
            host_path_uri("/etc/sysctl.d/60-perf.conf"),
            "etc/sysctl.d/60-perf.conf"
        );
        assert_eq!(
            host_path_uri("/etc/my dir/a#b?.cnf"),
            "etc/my%20dir/a%23b%3F.cnf"
        );
        assert_eq!(host_path_uri("/etc/é"), "etc/%C3%A9");
    }

    #[test]
    fn levels_follow_severity() {
        assert_eq!(level(Severity::Critical), "error");
        assert_eq!(level(Severity::High), "error");
        assert_eq!(level(Severity::Medium), "warning");
        assert_eq!(level(Severity::Low), "note");
        assert_eq!(level(Severity::Info), "note");
    }
}
