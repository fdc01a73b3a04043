//! HTML report: one self-contained page (one style block, one script block
//! for the filters, inline SVG; nothing fetched from the network) from the
//! askama template `templates/report.html`, compiled and type-checked with
//! the crate, with HTML escaping on every value the template prints. The
//! style and script are `templates/report.css` and `templates/report.js`,
//! compiled in; the Content-Security-Policy allows exactly those two blocks
//! by their SHA-256 and no other inline code (no `'unsafe-inline'`, no event
//! handler or style attributes), so markup that escaped into the page by a
//! bug cannot run.
//! Sees only the [`Report`]: the values in it are already what every format
//! may show (secrets are redacted where they are read); never evaluates
//! rules or reads host data.
//!
//! Layout (docs/formats.md, HTML): an overview (one host's counts, or with
//! more than one host a table of hosts and the per-rule fleet summary),
//! then per host its coverage and its findings grouped by severity, each
//! with its rule's tags, the explanation, the evidence, expected and actual side by side,
//! the fix, a memory-budget breakdown drawn as an SVG bar, and the waiver;
//! a `drift:` finding as a before/after table (configured value and
//! file:line, running value and source, options removed and added);
//! severity and status filters above.

use std::collections::BTreeMap;

use askama::Template;

use crate::policy::Severity;
use crate::report::{BreakdownData, Finding, HostReport, Report, Status};

use super::printable;

/// The page's one style block and one script block, as written between
/// their tags (the CSP hashes exactly these bytes).
const STYLE: &str = include_str!("../../templates/report.css");
const SCRIPT: &str = include_str!("../../templates/report.js");

/// Standard base64 with padding (RFC 4648, section 4), as CSP hash sources
/// spell a digest.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A CSP hash source for an inline block: `'sha256-BASE64'`.
fn hash_source(text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's Content-Security-Policy: nothing loaded, no inline code but
/// the page's own style and script blocks (by hash), images only as data.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src {}; script-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        hash_source(STYLE),
        hash_source(SCRIPT)
    )
}

/// Statuses in the order the page lists and filters them.
const STATUSES: [Status; 6] = [
    Status::Fail,
    Status::Unknown,
    Status::Error,
    Status::Waived,
    Status::Pass,
    Status::Skip,
];

/// Statuses shown before the reader changes a filter (passes and skips are
/// in the page, unchecked).
fn shown_by_default(s: Status) -> bool {
    !matches!(s, Status::Pass | Status::Skip)
}

/// A value for the page: control characters and direction overrides made
/// visible (askama escapes the HTML).
fn show(s: &str) -> String {
    printable(s, true).into_owned()
}

/// Bytes as an admin reads them (binary units, one decimal).
fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n.abs();
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let sign = if n < 0.0 { "-" } else { "" };
    if u == 0 {
        format!("{sign}{v:.0} {}", UNITS[u])
    } else {
        format!("{sign}{v:.1} {}", UNITS[u])
    }
}

/// One segment of a breakdown bar.
struct Segment {
    label: String,
    size: String,
    /// Left edge and width in percent of the bar (the whole, or the sum of
    /// the parts when they exceed it).
    x: String,
    w: String,
    class: &'static str,
}

/// A breakdown drawn as one bar.
struct Bar {
    label: String,
    total: String,
    segments: Vec<Segment>,
    /// The parts add up to more than the whole.
    over: Option<String>,
    /// Where the whole ends, in percent of the bar, when the parts exceed it.
    total_at: Option<String>,
}

fn pct(v: f64) -> String {
    format!("{:.2}", v.clamp(0.0, 100.0))
}

fn bar(b: &BreakdownData) -> Bar {
    let used: f64 = b.parts.iter().map(|(_, v)| v.max(0.0)).sum();
    let scale = used.max(b.total).max(1.0);
    let mut x = 0.0;
    let mut segments = Vec::new();
    for (i, (label, v)) in b.parts.iter().enumerate() {
        let w = v.max(0.0) / scale * 100.0;
        segments.push(Segment {
            label: show(label),
            size: bytes(*v),
            x: pct(x),
            w: pct(w),
            class: ["p0", "p1", "p2", "p3"][i % 4],
        });
        x += w;
    }
    let rest = b.total - used;
    if rest > 0.0 {
        segments.push(Segment {
            label: show(&b.rest),
            size: bytes(rest),
            x: pct(x),
            w: pct(rest / scale * 100.0),
            class: "rest",
        });
    }
    Bar {
        label: show(&b.label),
        total: bytes(b.total),
        segments,
        over: (rest < 0.0).then(|| bytes(-rest)),
        total_at: (rest < 0.0).then(|| pct(b.total / scale * 100.0)),
    }
}

/// A `drift:` finding as a before/after table: the configured side (the
/// value and the file:line that sets it) against the running side (the
/// value and where it was read), and for option lists the options the
/// running side removed and added.
struct DriftView {
    configured: String,
    running: String,
    before: String,
    before_at: String,
    after: String,
    after_at: Vec<String>,
    added: Vec<String>,
    removed: Vec<String>,
}

fn location(e: &crate::facts::Evidence) -> String {
    let mut s = e.location();
    if let Some(via) = &e.via {
        s.push_str(&format!(" (read via {via})"));
    }
    show(&s)
}

fn drift_view(f: &Finding) -> Option<DriftView> {
    let d = f.drift.as_ref()?;
    let at = d.configured_at.as_ref();
    Some(DriftView {
        configured: show(&d.configured),
        running: show(&d.running),
        before: show(f.expected.as_deref().unwrap_or("—")),
        before_at: at.map(location).unwrap_or_else(|| "—".into()),
        after: show(f.actual.as_deref().unwrap_or("—")),
        // the evidence after the configured line is the running side's
        after_at: f
            .evidence
            .iter()
            .skip(usize::from(
                at.is_some_and(|a| f.evidence.first() == Some(a)),
            ))
            .map(location)
            .collect(),
        added: d.added.iter().map(|s| show(s)).collect(),
        removed: d.removed.iter().map(|s| show(s)).collect(),
    })
}

/// One finding as the page shows it.
struct Item {
    rule: String,
    /// The rule's profiles (`cis-l1-server, stig`), empty when none.
    tags: String,
    title: String,
    status: &'static str,
    severity: &'static str,
    subject: String,
    expected: Option<String>,
    actual: Option<String>,
    explanation: String,
    fix: String,
    evidence: Vec<String>,
    waiver: Option<String>,
    bar: Option<Bar>,
    drift: Option<DriftView>,
    hidden: bool,
}

impl Item {
    fn of(f: &Finding, tags: &BTreeMap<&str, &[String]>) -> Item {
        Item {
            rule: show(&f.rule),
            tags: show(
                &tags
                    .get(f.rule.as_str())
                    .map(|t| t.join(", "))
                    .unwrap_or_default(),
            ),
            title: show(&f.title),
            status: f.status.as_str(),
            severity: f.severity.as_str(),
            subject: show(&f.subject.join(", ")),
            expected: f.expected_for_people().map(show),
            actual: f.actual.as_deref().map(show),
            explanation: show(f.explanation.trim()),
            fix: if f.status == Status::Pass {
                String::new()
            } else {
                show(f.fix.trim())
            },
            evidence: f.evidence.iter().map(location).collect(),
            waiver: f.waiver.as_ref().map(|w| {
                show(&format!(
                    "waived until {} (was {}): {}",
                    w.expires,
                    w.original_status.as_str(),
                    w.reason.trim()
                ))
            }),
            bar: f.breakdown.as_ref().map(bar),
            drift: drift_view(f),
            hidden: !shown_by_default(f.status),
        }
    }
}

/// Findings of one severity on one host.
struct Group {
    severity: &'static str,
    items: Vec<Item>,
}

/// A count per status, in [`STATUSES`] order.
struct Count {
    status: &'static str,
    n: usize,
}

fn counts<'a>(findings: impl Iterator<Item = &'a Finding> + Clone) -> Vec<Count> {
    STATUSES
        .iter()
        .map(|s| Count {
            status: s.as_str(),
            n: findings.clone().filter(|f| f.status == *s).count(),
        })
        .collect()
}

/// One row of a host's coverage table.
struct CoverageRow {
    domain: &'static str,
    line: String,
    unevaluated: bool,
}

/// One host's section.
struct HostView {
    anchor: String,
    name: String,
    source: &'static str,
    verdict: String,
    counts: Vec<Count>,
    coverage: Vec<CoverageRow>,
    groups: Vec<Group>,
}

fn verdict(h: &HostReport) -> String {
    let unevaluated: Vec<&str> = h
        .unevaluated_domains()
        .iter()
        .map(|c| c.domain.as_str())
        .collect();
    match h.worst_failure() {
        Some(s) => format!("{} failing, worst severity {}", h.summary.fail, s.as_str()),
        None if !unevaluated.is_empty() => format!(
            "No failures in what was evaluated, but nothing of {} was evaluated",
            unevaluated.join(", ")
        ),
        None if h.has_unknown() => {
            "No failures in what was evaluated, but some rules could not be decided".into()
        }
        None => "No failures".into(),
    }
}

fn host_view(i: usize, h: &HostReport, tags: &BTreeMap<&str, &[String]>) -> HostView {
    let mut groups = Vec::new();
    for sev in Severity::ALL.iter().rev() {
        let mut items: Vec<&Finding> = h.findings.iter().filter(|f| f.severity == *sev).collect();
        if items.is_empty() {
            continue;
        }
        let rank = |s: Status| STATUSES.iter().position(|x| *x == s).unwrap_or(0);
        items.sort_by_key(|f| rank(f.status));
        groups.push(Group {
            severity: sev.as_str(),
            items: items.into_iter().map(|f| Item::of(f, tags)).collect(),
        });
    }
    HostView {
        anchor: format!("host-{i}"),
        name: show(&h.host),
        source: match h.source {
            crate::host::SourceKind::Live => "live host",
            crate::host::SourceKind::Snapshot => "snapshot",
        },
        verdict: verdict(h),
        counts: counts(h.findings.iter()),
        coverage: h
            .coverage
            .iter()
            .map(|c| CoverageRow {
                domain: c.domain.as_str(),
                line: show(&super::text::coverage_line(c)),
                unevaluated: c.detected && c.rules > 0 && c.evaluated == 0,
            })
            .collect(),
        groups,
    }
}

/// One row of the fleet's per-rule summary.
struct RuleRow {
    rule: String,
    title: String,
    severity: &'static str,
    fail: usize,
    unknown: usize,
    /// Of the unknown hosts, those a policy parameter would decide (the
    /// parameter, how many hosts).
    decided: Vec<(String, usize)>,
    error: usize,
    waived: usize,
    pass: usize,
    skip: usize,
    /// Up to three failing hosts (anchor, name).
    examples: Vec<(String, String)>,
}

fn rule_rows(report: &Report) -> Vec<RuleRow> {
    let mut rows: BTreeMap<&str, RuleRow> = BTreeMap::new();
    for r in &report.rules {
        rows.insert(
            r.id.as_str(),
            RuleRow {
                rule: show(&r.id),
                title: show(&r.title),
                severity: r.severity.as_str(),
                fail: 0,
                unknown: 0,
                decided: Vec::new(),
                error: 0,
                waived: 0,
                pass: 0,
                skip: 0,
                examples: Vec::new(),
            },
        );
    }
    for (i, h) in report.hosts.iter().enumerate() {
        // a rule counts once per host, by its worst finding there
        let mut worst: BTreeMap<&str, (Status, &Finding)> = BTreeMap::new();
        let rank = |s: Status| STATUSES.iter().position(|x| *x == s).unwrap_or(0);
        for f in &h.findings {
            let e = worst.entry(f.rule.as_str()).or_insert((f.status, f));
            if rank(f.status) < rank(e.0) {
                *e = (f.status, f);
            }
        }
        for (rule, (status, f)) in worst {
            let row = rows.entry(rule).or_insert_with(|| RuleRow {
                rule: show(rule),
                title: show(&f.title),
                severity: f.severity.as_str(),
                fail: 0,
                unknown: 0,
                decided: Vec::new(),
                error: 0,
                waived: 0,
                pass: 0,
                skip: 0,
                examples: Vec::new(),
            });
            match status {
                Status::Fail => {
                    row.fail += 1;
                    if row.examples.len() < 3 {
                        row.examples.push((format!("host-{i}"), show(&h.host)));
                    }
                }
                Status::Unknown => {
                    row.unknown += 1;
                    let by = h
                        .findings
                        .iter()
                        .filter(|x| x.rule == rule && x.status == Status::Unknown)
                        .find_map(|x| x.decided_by.as_deref());
                    if let Some(p) = by {
                        let p = show(p);
                        match row.decided.iter_mut().find(|(q, _)| *q == p) {
                            Some((_, n)) => *n += 1,
                            None => row.decided.push((p, 1)),
                        }
                    }
                }
                Status::Error => row.error += 1,
                Status::Waived => row.waived += 1,
                Status::Pass => row.pass += 1,
                Status::Skip => row.skip += 1,
            }
        }
    }
    let mut rows: Vec<RuleRow> = rows.into_values().collect();
    let sev_rank = |s: &str| {
        Severity::ALL
            .iter()
            .position(|x| x.as_str() == s)
            .unwrap_or(0)
    };
    rows.sort_by(|a, b| {
        b.fail
            .cmp(&a.fail)
            .then(sev_rank(b.severity).cmp(&sev_rank(a.severity)))
            .then(a.rule.cmp(&b.rule))
    });
    rows
}

/// One row of the fleet's host table.
struct HostRow {
    anchor: String,
    name: String,
    worst: &'static str,
    counts: Vec<Count>,
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page {
    version: &'static str,
    /// Written unescaped: built here from constants and base64 digests.
    csp: String,
    style: &'static str,
    script: &'static str,
    fleet: bool,
    severities: Vec<&'static str>,
    statuses: Vec<(&'static str, bool)>,
    totals: Vec<Count>,
    host_rows: Vec<HostRow>,
    rules: Vec<RuleRow>,
    hosts: Vec<HostView>,
}

/// Render the report as one self-contained HTML page.
pub fn render(report: &Report) -> String {
    // each finding shows its rule's tags (the rule catalogue has them)
    let tags: BTreeMap<&str, &[String]> = report
        .rules
        .iter()
        .filter(|r| !r.tags.is_empty())
        .map(|r| (r.id.as_str(), r.tags.as_slice()))
        .collect();
    let page = Page {
        version: env!("CARGO_PKG_VERSION"),
        csp: content_security_policy(),
        style: STYLE,
        script: SCRIPT,
        fleet: report.hosts.len() > 1,
        severities: Severity::ALL.iter().rev().map(|s| s.as_str()).collect(),
        statuses: STATUSES
            .iter()
            .map(|s| (s.as_str(), shown_by_default(*s)))
            .collect(),
        totals: counts(report.hosts.iter().flat_map(|h| h.findings.iter())),
        host_rows: report
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| HostRow {
                anchor: format!("host-{i}"),
                name: show(&h.host),
                worst: h.worst_failure().map(|s| s.as_str()).unwrap_or("none"),
                counts: counts(h.findings.iter()),
            })
            .collect(),
        rules: if report.hosts.len() > 1 {
            rule_rows(report)
        } else {
            Vec::new()
        },
        hosts: report
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| host_view(i, h, &tags))
            .collect(),
    };
    match page.render() {
        Ok(mut s) => {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
        Err(e) => format!(
            "<!DOCTYPE html>\n<title>driftaudit</title>\n<p>cannot render the report: {}</p>\n",
            show(&e.to_string())
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
        // FIPS 180-2's "abc" vector, as CSP writes it
        assert_eq!(
            hash_source("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
    }

    #[test]
    fn the_hashed_blocks_cannot_end_early() {
        // the HTML parser ends a raw-text block at `</script` / `</style`
        // (any case), so the hashed text must not hold one
        assert!(!SCRIPT.to_ascii_lowercase().contains("</script"));
        assert!(!SCRIPT.contains("<!--"));
        assert!(!STYLE.to_ascii_lowercase().contains("</style"));
        let csp = content_security_policy();
        assert!(!csp.contains('"') && !csp.contains('<') && !csp.contains("unsafe"));
    }

    #[test]
    fn bytes_read_like_an_admin_writes_them() {
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(12.0 * 1024.0 * 1024.0 * 1024.0), "12.0 GiB");
        assert_eq!(bytes(-1536.0), "-1.5 KiB");
    }

    #[test]
    fn an_overcommitted_breakdown_marks_where_the_whole_ends() {
        let b = BreakdownData {
            label: "RAM".into(),
            total: 100.0,
            parts: vec![("heap".into(), 80.0), ("pool".into(), 40.0)],
            rest: "rest".into(),
        };
        let bar = bar(&b);
        assert_eq!(bar.segments.len(), 2, "no rest when over");
        assert_eq!(bar.over.as_deref(), Some("20 B"));
        assert_eq!(bar.total_at.as_deref(), Some("83.33"));
        assert_eq!(bar.segments[1].x, "66.67");
    }
}
