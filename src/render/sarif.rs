//! SARIF 2.1.0 renderer (serde-sarif types, generated from the official
//! schema) shaped for GitHub code scanning: one run, the rule catalogue as
//! `tool.driver.rules`, one result per fail/unknown/error/waived finding
//! located at the file and line that set the value, as a path relative to the
//! repository root. Sees only the [`Report`] and [`SarifOptions`]; never
//! evaluates rules, reads host data or touches the filesystem.
//!
//! Mapping (docs/formats.md):
//! - rule: `shortDescription` = title, `fullDescription` = why, `help` = why +
//!   fix + references (text and Markdown), `helpUri` = first reference,
//!   `defaultConfiguration.level` from severity, `properties.security-severity`
//!   and `problem.severity` from severity;
//! - result: `level` from severity (critical/high → error, medium → warning,
//!   low/info → note), `message` = explanation (+ fix), location = the first
//!   evidence entry (the winning file and line): the host path joined to the
//!   host's snapshot directory and made relative to the repository root
//!   ([`SarifOptions::root`]), `uriBaseId` `%SRCROOT%`; outside the root (or
//!   a live host), an absolute `file://` URI;
//! - `partialFingerprints` from rule, host and subject (never the line or the
//!   value), so an alert keeps its identity while the file around it changes;
//! - waived results carry a `suppressions` entry (`external`, `accepted`) whose
//!   justification is the waiver reason;
//! - a rule a site overlay disabled is a result of `kind` `notApplicable`,
//!   `level` `none`, with the same kind of suppression whose justification
//!   is `disabled by FILE:LINE:COLUMN: REASON` (never an alert, never
//!   silent);
//! - `properties`: `host`, `status`, `severity`, `subject`, `expected`, `actual`;
//! - run `properties`: `hosts`, and `coverage` (per host, the report's
//!   per-domain coverage objects, as in the JSON report, and `hard_links`
//!   when snapshot files read had other hard links).
//!
//! One run for every host, not a run per host: GitHub rejects a file with
//! more than 20 runs and, since July 2025, several runs of one tool with the
//! same category; every host's paths already differ (each is its own
//! snapshot directory), and one run lets the upload step's `category` tell
//! shards apart (docs/formats.md, SARIF).

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};
use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, PropertyBag,
    Region, ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultKind,
    ResultLevel, Run, Sarif, Suppression, Tool, ToolComponent,
};

use crate::facts::Evidence;
use crate::policy::Severity;
use crate::report::{Finding, HostReport, Report, RuleMeta, Status};

/// The `uriBaseId` of every repository-relative location: by the SARIF
/// convention (3.4.4) the root of the source tree, which for code scanning is
/// the repository root. Not listed in `originalUriBaseIds`: code scanning
/// ignores that table (github/codeql-action#2215) and an absolute path of
/// the auditing machine would make the same report differ between machines.
pub const URI_BASE_ID: &str = "%SRCROOT%";

/// The key of driftaudit's own fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "driftaudit/v1";

/// Where SARIF locations are anchored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SarifOptions {
    /// The repository root (absolute and canonical, as the CLI resolves the
    /// working directory or `--sarif-root`): a snapshot's files are written
    /// relative to it (`snapshots/db1/etc/sysctl.conf`). `None`, or a file
    /// outside it, gives an absolute `file://` URI, which code scanning maps
    /// back through the upload's `checkout_path`.
    pub root: Option<PathBuf>,
}

impl SarifOptions {
    /// Locations relative to `root`.
    pub fn with_root(root: impl Into<PathBuf>) -> SarifOptions {
        SarifOptions {
            root: Some(root.into()),
        }
    }
}

/// SARIF level for a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// GitHub's `security-severity` score for a severity (its bands: over 9.0
/// critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low); `None` for info,
/// which has no security severity.
pub fn security_severity(severity: Severity) -> Option<&'static str> {
    match severity {
        Severity::Critical => Some("9.5"),
        Severity::High => Some("8.0"),
        Severity::Medium => Some("5.5"),
        Severity::Low => Some("2.0"),
        Severity::Info => None,
    }
}

/// GitHub's `problem.severity` (error, warning, recommendation).
fn problem_severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "recommendation",
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

fn encode_into(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Percent-encode a host path (without its leading `/`) as a relative URI
/// reference: unreserved characters and `/` stay, everything else is `%XX`.
pub fn host_path_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    encode_into(&mut out, path.trim_start_matches('/').as_bytes());
    out
}

/// Where a host path lies on the auditing machine: below the host's root
/// directory (a snapshot) or as it is (the live host); `Ok` relative to the
/// repository root when a snapshot's file lies inside it, else `Err` with
/// the absolute path. A live host's file is always `Err`: `/etc/sysctl.conf`
/// is not a file of the repository even when the audit runs from `/` or
/// `/etc`. Purely lexical: both roots are canonical already (a snapshot root
/// is canonicalised when opened).
pub fn repo_path(
    host_root: Option<&Path>,
    host_path: &str,
    repo_root: Option<&Path>,
) -> Result<PathBuf, PathBuf> {
    let rel = host_path.trim_start_matches('/');
    let Some(host_root) = host_root else {
        return Err(Path::new("/").join(rel));
    };
    let full = host_root.join(rel);
    match repo_root.and_then(|root| full.strip_prefix(root).ok()) {
        Some(inner) if !inner.as_os_str().is_empty() => Ok(inner.to_path_buf()),
        _ => Err(full),
    }
}

/// The URI of a host path ([`repo_path`]): a percent-encoded relative
/// reference inside the repository, else an absolute `file://` URI.
pub fn artifact_uri(host_root: Option<&Path>, host_path: &str, repo_root: Option<&Path>) -> String {
    let mut out = String::new();
    match repo_path(host_root, host_path, repo_root) {
        Ok(rel) => encode_into(&mut out, rel.as_os_str().as_bytes()),
        Err(abs) => {
            out.push_str("file://");
            encode_into(&mut out, abs.as_os_str().as_bytes());
        }
    }
    out
}

/// A fingerprint of the finding's identity: rule, host and subject, never
/// the line, the value or the status, so an alert survives edits around the
/// line and a value that changes but still fails. FNV-1a 128 over a
/// length-prefixed encoding (no separator in a hostile name can make two
/// identities collide by construction); stable across releases and machines.
pub fn fingerprint(rule: &str, host: &str, subject: &[String]) -> String {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    let mut h = OFFSET;
    let mut feed = |bytes: &[u8]| {
        for &b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            h ^= u128::from(b);
            h = h.wrapping_mul(PRIME);
        }
    };
    feed(FINGERPRINT_KEY.as_bytes());
    feed(rule.as_bytes());
    feed(host.as_bytes());
    for s in subject {
        feed(s.as_bytes());
    }
    format!("{h:032x}")
}

fn bag(props: BTreeMap<String, Json>, tags: Option<Vec<String>>) -> PropertyBag {
    let mut b = PropertyBag::builder().additional_properties(props).build();
    b.tags = tags;
    b
}

fn text(s: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

/// Code scanning's limit on a rule's short and full description.
pub const DESCRIPTION_LIMIT: usize = 1024;

/// `s` cut to at most `limit` characters (an ellipsis marks the cut); the
/// help text always carries the whole of it.
fn clip(s: &str, limit: usize) -> String {
    if s.chars().count() <= limit {
        return s.to_string();
    }
    let mut out: String = s.chars().take(limit - 1).collect();
    out.push('…');
    out
}

/// Policy text for a Markdown page: HTML is shown, not interpreted (a
/// policy is input too); code spans and emphasis the author wrote stay.
fn md_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn help_markdown(r: &RuleMeta) -> String {
    let mut md = format!("**{}** ({})\n\n", md_text(&r.title), r.severity.as_str());
    md.push_str(&md_text(&r.why));
    if !r.fix.is_empty() {
        md.push_str("\n\n## Fix\n\n");
        md.push_str(&md_text(&r.fix));
    }
    if !r.references.is_empty() {
        md.push_str("\n\n## References\n\n");
        for u in &r.references {
            let web = (u.starts_with("https://") || u.starts_with("http://"))
                && !u.contains(|c: char| c.is_whitespace() || matches!(c, '<' | '>'));
            if web {
                md.push_str(&format!("- <{u}>\n"));
            } else {
                md.push_str(&format!("- {}\n", md_text(u)));
            }
        }
    }
    md.trim_end().to_string()
}

fn descriptor(r: &RuleMeta) -> ReportingDescriptor {
    let mut help = r.why.clone();
    if !r.fix.is_empty() {
        help.push_str("\n\nFix: ");
        help.push_str(&r.fix);
    }
    if !r.references.is_empty() {
        help.push_str("\n\nReferences:");
        for u in &r.references {
            help.push_str("\n- ");
            help.push_str(u);
        }
    }
    let mut props = BTreeMap::new();
    props.insert("severity".to_string(), json!(r.severity.as_str()));
    props.insert("policy".to_string(), json!(r.policy));
    props.insert(
        "source".to_string(),
        json!(format!("{}:{}", r.source.path, r.source.line)),
    );
    props.insert(
        "problem.severity".to_string(),
        json!(problem_severity(r.severity)),
    );
    if let Some(s) = security_severity(r.severity) {
        props.insert("security-severity".to_string(), json!(s));
    }
    props.insert("precision".to_string(), json!("very-high"));
    let mut d = ReportingDescriptor::builder()
        .id(&r.id)
        .name(&r.id)
        .short_description(text(&clip(&r.title, DESCRIPTION_LIMIT)))
        .full_description(text(&clip(&r.why, DESCRIPTION_LIMIT)))
        .help(
            MultiformatMessageString::builder()
                .text(&help)
                .markdown(help_markdown(r))
                .build(),
        )
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level(r.severity)))
                .build(),
        )
        .properties(bag(
            props,
            // the policy, then the rule's own profiles (`cis-l1-server`):
            // code-scanning UIs filter alerts by these
            Some(
                std::iter::once(r.policy.clone())
                    .chain(r.tags.iter().cloned())
                    .collect(),
            ),
        ))
        .build();
    d.help_uri = r.references.first().cloned();
    d
}

fn location(h: &HostReport, e: &Evidence, opts: &SarifOptions) -> Location {
    let uri = artifact_uri(h.root.as_deref(), &e.path, opts.root.as_deref());
    let mut artifact = ArtifactLocation::builder().uri(uri.as_str()).build();
    if !uri.starts_with("file://") {
        artifact.uri_base_id = Some(URI_BASE_ID.to_string());
    }
    let mut physical = PhysicalLocation::builder()
        .artifact_location(artifact)
        .build();
    // A value without a line (a /proc/sys file, a whole file) is anchored at
    // line 1: code scanning shows an alert only with a start line, and the
    // whole line is meant (no endColumn: SARIF's default is the line's end).
    let line = e.line.filter(|l| *l >= 1).unwrap_or(1) as i64;
    physical.region = Some(
        Region::builder()
            .start_line(line)
            .start_column(1)
            .end_line(line)
            .build(),
    );
    let mut l = Location::builder().physical_location(physical).build();
    let mut notes = Vec::new();
    if e.line.is_none() {
        notes.push("the whole file".to_string());
    }
    if let Some(via) = &e.via {
        // the file is the real one an admin edits; say which link was read
        notes.push(format!("read via {via}"));
    }
    if !notes.is_empty() {
        l.message = Some(Message::builder().text(notes.join("; ")).build());
    }
    l
}

/// Where a finding without evidence is shown: the host's root directory
/// (the snapshot folder), so the alert still names the host.
fn fallback_location(h: &HostReport, opts: &SarifOptions) -> Location {
    let mut uri = artifact_uri(h.root.as_deref(), "/", opts.root.as_deref());
    if !uri.ends_with('/') {
        uri.push('/');
    }
    let mut artifact = ArtifactLocation::builder().uri(uri.as_str()).build();
    if !uri.starts_with("file://") {
        artifact.uri_base_id = Some(URI_BASE_ID.to_string());
    }
    let physical = PhysicalLocation::builder()
        .artifact_location(artifact)
        .build();
    let mut l = Location::builder().physical_location(physical).build();
    l.message = Some(Message::from("no file holds this value on the host"));
    l
}

fn result(
    h: &HostReport,
    f: &Finding,
    rule_index: Option<usize>,
    occurrence: usize,
    opts: &SarifOptions,
) -> SarifResult {
    let mut msg = f.explanation.trim().to_string();
    if !f.fix.is_empty() && f.status != Status::Pass {
        msg.push_str("\n\nFix: ");
        msg.push_str(f.fix.trim());
    }
    let mut props = BTreeMap::new();
    props.insert("host".to_string(), json!(h.host));
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
    let fp = fingerprint(&f.rule, &h.host, &f.subject);
    let mut fps = BTreeMap::new();
    // Code scanning reads only `primaryLocationLineHash` (its docs); when it
    // is absent, upload-sarif hashes the source line, and a changed value on
    // that line would then close the alert and open a new one. `:N` counts
    // findings of the same identity in report order (two malformed lines of
    // one file, two snapshots of one host), as GitHub's own line hashes do.
    fps.insert(
        "primaryLocationLineHash".to_string(),
        format!("{}:{occurrence}", &fp[..16]),
    );
    fps.insert(FINGERPRINT_KEY.to_string(), format!("{fp}:{occurrence}"));
    r.partial_fingerprints = Some(fps);
    // The winning location only: code scanning annotates that line. The
    // remaining evidence (e.g. the live /proc value) goes to relatedLocations.
    let mut ev = f.evidence.iter();
    match ev.next() {
        Some(first) => {
            r.locations = Some(vec![location(h, first, opts)]);
            let related: Vec<Location> = ev
                .enumerate()
                .map(|(i, e)| {
                    let mut l = location(h, e, opts);
                    l.id = Some(i as i64 + 1);
                    l
                })
                .collect();
            if !related.is_empty() {
                r.related_locations = Some(related);
            }
        }
        None => r.locations = Some(vec![fallback_location(h, opts)]),
    }
    if let Some(d) = f.disabled() {
        // a rule a site overlay turned off: on record, never an alert
        r.kind = Some(ResultKind::NotApplicable);
        r.level = Some(ResultLevel::None);
        let mut props = BTreeMap::new();
        props.insert("disabledBy".to_string(), json!(d.set_by.to_string()));
        r.suppressions = Some(vec![Suppression::builder()
            .kind(json!("external"))
            .status(json!("accepted"))
            .justification(format!("disabled by {}: {}", d.set_by, d.value.trim()))
            .properties(bag(props, None))
            .build()]);
    } else if let Some(w) = &f.waiver {
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
pub fn sarif(report: &Report, opts: &SarifOptions) -> Sarif {
    let rules: Vec<ReportingDescriptor> = report.rules.iter().map(descriptor).collect();
    let index: BTreeMap<&str, usize> = report
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    let mut results = Vec::new();
    // Occurrences count over the whole run: two snapshots of one host name
    // (before and after) in one report stay two alerts.
    let mut seen: BTreeMap<(&str, &str, &[String]), usize> = BTreeMap::new();
    for h in &report.hosts {
        for f in h
            .findings
            .iter()
            .filter(|f| is_reported(f.status) || f.disabled().is_some())
        {
            let key = (h.host.as_str(), f.rule.as_str(), f.subject.as_slice());
            let n = seen.entry(key).or_insert(0);
            *n += 1;
            results.push(result(h, f, index.get(f.rule.as_str()).copied(), *n, opts));
        }
    }
    let driver = ToolComponent::builder()
        .name("driftaudit")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
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
        .properties(bag(run_props, None))
        .build();
    Sarif::builder()
        .schema(serde_sarif::sarif::SCHEMA_URL)
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build()
}

/// Render the report as a pretty SARIF 2.1.0 document with a trailing
/// newline, locations anchored as `opts` says.
pub fn render_with(report: &Report, opts: &SarifOptions) -> String {
    let mut s = serde_json::to_string_pretty(&sarif(report, opts))
        .unwrap_or_else(|e| format!("{{\"error\": {}}}", json!(e.to_string())));
    s.push('\n');
    s
}

/// [`render_with`] without a repository root: every location is an
/// absolute `file://` URI (the CLI passes the working directory or
/// `--sarif-root`).
pub fn render(report: &Report) -> String {
    render_with(report, &SarifOptions::default())
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
    fn a_live_hosts_files_are_absolute_whatever_the_repository_root() {
        for root in ["/", "/etc", "/home/runner/work/repo"] {
            assert_eq!(
                artifact_uri(None, "/etc/sysctl.conf", Some(Path::new(root))),
                "file:///etc/sysctl.conf",
                "{root}"
            );
        }
        assert_eq!(
            artifact_uri(
                Some(Path::new("/r/snapshots/db1")),
                "/etc/sysctl.conf",
                Some(Path::new("/r"))
            ),
            "snapshots/db1/etc/sysctl.conf"
        );
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
