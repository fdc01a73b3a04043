//! Waivers: a YAML list of accepted findings (rule glob, optional subject and
//! host globs, reason, expiry date), loaded with file:line:column errors and
//! applied to a finished [`Report`] after evaluation. Owns waiver matching,
//! expiry and the built-in `driftaudit.waiver` findings (expired and stale
//! waivers); must not evaluate rules or read host data.

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::host::io_message;
use crate::policy::{RuleSource, Severity};
use crate::report::{Finding, HostReport, Report, RuleMeta, Status, WaiverNote};

/// Id of the built-in rule that reports expired and stale waivers.
pub const WAIVER_RULE: &str = "driftaudit.waiver";

/// Largest waiver file read.
const MAX_WAIVER_FILE: u64 = 4 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaiver {
    rule: Spanned<String>,
    #[serde(default)]
    subject: Option<Spanned<String>>,
    #[serde(default)]
    host: Option<Spanned<String>>,
    reason: Spanned<String>,
    expires: Spanned<String>,
}

/// One waiver: what it covers (globs as written in the file), why, until
/// when, and where. Read through its methods; [`WaiverSet::apply`] does the
/// matching.
#[derive(Debug, Clone)]
pub struct Waiver {
    /// Rule id or glob.
    rule: glob::Pattern,
    /// Subject glob (any of a finding's subjects must match).
    subject: Option<glob::Pattern>,
    /// Host glob.
    host: Option<glob::Pattern>,
    /// Why the finding is accepted.
    reason: String,
    /// Last day the waiver applies (`YYYY-MM-DD`, inclusive).
    expires: String,
    /// Line of the waiver in its file.
    line: usize,
}

impl Waiver {
    /// The rule id or glob it covers, as written (trimmed).
    pub fn rule(&self) -> &str {
        self.rule.as_str()
    }

    /// The subject glob, as written, if it names one (any of a finding's
    /// subjects must match).
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_ref().map(glob::Pattern::as_str)
    }

    /// The host glob, as written, if it names one.
    pub fn host(&self) -> Option<&str> {
        self.host.as_ref().map(glob::Pattern::as_str)
    }

    /// Why the finding is accepted.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Last day the waiver applies (`YYYY-MM-DD`, inclusive).
    pub fn expires(&self) -> &str {
        &self.expires
    }

    /// Line of the waiver in its file.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether the waiver scopes host `host` (no `host:` glob scopes every host).
    fn scopes(&self, host: &str) -> bool {
        self.host.as_ref().is_none_or(|h| h.matches(host))
    }

    fn matches(&self, host: &str, f: &Finding) -> bool {
        f.rule_matches(&self.rule)
            && self.scopes(host)
            && self
                .subject
                .as_ref()
                .is_none_or(|s| f.subject.iter().any(|x| s.matches(x)))
    }
}

/// A loaded waiver file.
#[derive(Debug, Clone)]
pub struct WaiverSet {
    /// Path as given (used in findings: `FILE:LINE`).
    path: String,
    /// Waivers in file order.
    waivers: Vec<Waiver>,
}

impl WaiverSet {
    /// The file's path as it was given (what findings name as `FILE:LINE`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The waivers, in file order.
    pub fn waivers(&self) -> &[Waiver] {
        &self.waivers
    }
}

/// A problem in a waiver file, with position and the offending line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}{}",
    if *.line == 0 { format!("`{}`: {}", .path, .message) }
    else { format!("{}:{}:{}: {}", .path, .line, .column, .message) },
    if *.line == 0 || .snippet.is_empty() { String::new() } else { format!("\n{}", .snippet) }
)]
pub struct WaiverError {
    /// File.
    pub path: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// The source line with a caret under the column.
    pub snippet: String,
}

fn err_at(path: &str, text: &str, line: usize, column: usize, message: String) -> WaiverError {
    let (line, column) = (line.max(1), column.max(1));
    WaiverError {
        path: path.to_string(),
        line,
        column,
        snippet: crate::policy::snippet(text, line, column),
        message,
    }
}

/// Whether `s` is a valid `YYYY-MM-DD` date.
pub fn valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<u32>().ok());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    if !s
        .chars()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Today's date (`YYYY-MM-DD`, UTC): env `DRIFTAUDIT_TODAY` when set (tests,
/// reproducible CI runs), else the system clock.
pub fn today() -> String {
    match std::env::var("DRIFTAUDIT_TODAY") {
        Ok(d) if valid_date(d.trim()) => d.trim().to_string(),
        _ => {
            let now = crate::snapshot::rfc3339_now();
            now.get(..10).unwrap_or("1970-01-01").to_string()
        }
    }
}

impl WaiverSet {
    /// Load a waiver file (not host data: an ordinary file of the user's).
    pub fn load(path: impl AsRef<Path>) -> Result<WaiverSet, WaiverError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let read_err = |m: String| WaiverError {
            path: shown.clone(),
            line: 0,
            column: 0,
            message: m,
            snippet: String::new(),
        };
        let io = |e: std::io::Error| read_err(format!("cannot read: {}", io_message(&e)));
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(read_err("cannot read: not a regular file".into()));
        }
        if meta.len() > MAX_WAIVER_FILE {
            return Err(read_err(format!(
                "cannot read: larger than {MAX_WAIVER_FILE} bytes"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        WaiverSet::parse(&shown, &text)
    }

    /// Parse waiver YAML text; `path` names it in errors and findings.
    pub fn parse(path: &str, text: &str) -> Result<WaiverSet, WaiverError> {
        if text.trim().is_empty() {
            return Ok(WaiverSet {
                path: path.to_string(),
                waivers: Vec::new(),
            });
        }
        let raw: Vec<Spanned<RawWaiver>> = serde_saphyr::from_str(text).map_err(|e| {
            let (line, column, message) = crate::policy::yaml_error_parts(&e);
            err_at(path, text, line, column, message)
        })?;
        let mut waivers = Vec::new();
        for w in raw {
            let line = w.referenced.line() as usize;
            let w = w.value;
            let pat = |s: &Spanned<String>, what: &str| {
                glob::Pattern::new(s.value.trim()).map_err(|e| {
                    err_at(
                        path,
                        text,
                        s.referenced.line() as usize,
                        s.referenced.column() as usize,
                        format!("{what} `{}` is not a valid glob: {e}", s.value),
                    )
                })
            };
            if w.reason.value.trim().is_empty() {
                return Err(err_at(
                    path,
                    text,
                    w.reason.referenced.line() as usize,
                    w.reason.referenced.column() as usize,
                    "`reason` must say why the finding is accepted".into(),
                ));
            }
            let expires = w.expires.value.trim().to_string();
            if !valid_date(&expires) {
                return Err(err_at(
                    path,
                    text,
                    w.expires.referenced.line() as usize,
                    w.expires.referenced.column() as usize,
                    format!("`expires` must be a date YYYY-MM-DD, found `{expires}`"),
                ));
            }
            waivers.push(Waiver {
                rule: pat(&w.rule, "rule")?,
                subject: w.subject.as_ref().map(|s| pat(s, "subject")).transpose()?,
                host: w.host.as_ref().map(|s| pat(s, "host")).transpose()?,
                reason: w.reason.value.trim().to_string(),
                expires,
                line,
            });
        }
        Ok(WaiverSet {
            path: path.to_string(),
            waivers,
        })
    }

    /// Apply to a finished report: a fail/unknown/error finding matched by a
    /// waiver that has not expired (`today` <= `expires`) becomes
    /// [`Status::Waived`]. Then each waiver is judged over the whole run
    /// ([`WaiverSet::verdicts`]): an expired one, or one that scopes a host
    /// of this run and matched nothing on any of them, becomes a
    /// `driftaudit.waiver` finding (low) on the first host it scopes. A
    /// waiver whose `host:` glob scopes no host of this run, or whose rule
    /// did not run (not selected: profiles, `--only`, `--skip`), is not
    /// judged, so one waiver file serves a whole fleet, host by host or at
    /// once, and every selection.
    pub fn apply(&self, report: &mut Report, today: &str) {
        let mut usage = Usage::new(self);
        for h in &mut report.hosts {
            usage.add(&self.apply_host(h, today));
        }
        attach(report, self.verdicts(&usage, today));
    }

    /// Apply to one host's report (a fleet applies host by host, on any
    /// thread): its covered findings become waived, its summary is
    /// recounted. Returns what this host tells about each waiver, for
    /// [`Usage::add`] and, once every host is in, [`WaiverSet::verdicts`].
    pub fn apply_host(&self, h: &mut HostReport, today: &str) -> Usage {
        let mut usage = Usage::new(self);
        let name = h.host.clone();
        // a waiver scopes a host only where its rule ran: one whose rule
        // this run did not select (a profile not chosen, --only, --skip)
        // is not judged stale
        for (i, w) in self.waivers.iter().enumerate() {
            if w.scopes(&name) && h.findings.iter().any(|f| f.rule_matches(&w.rule)) {
                usage.first_host[i] = Some(name.clone());
            }
        }
        let mut changed = false;
        for f in &mut h.findings {
            if !matches!(f.status, Status::Fail | Status::Unknown | Status::Error)
                || f.rule == WAIVER_RULE
            {
                continue;
            }
            let hit = self
                .waivers
                .iter()
                .enumerate()
                .find(|(_, w)| w.expires.as_str() >= today && w.matches(&name, f));
            if let Some((i, w)) = hit {
                usage.used[i] = true;
                f.waiver = Some(WaiverNote {
                    reason: w.reason.clone(),
                    expires: w.expires.clone(),
                    original_status: f.status,
                });
                f.status = Status::Waived;
                changed = true;
            }
        }
        if changed {
            let findings = std::mem::take(&mut h.findings);
            h.set_findings(findings);
        }
        usage
    }

    /// The `driftaudit.waiver` findings of a run, each with the host it
    /// belongs to (the first host the waiver scoped): expired waivers, and
    /// waivers that scoped at least one host and matched no finding on any.
    /// A waiver that scoped no host is not judged.
    pub fn verdicts(&self, usage: &Usage, today: &str) -> Vec<(Finding, String)> {
        let mut out = Vec::new();
        for (i, w) in self.waivers.iter().enumerate() {
            let Some(host) = usage.first_host.get(i).cloned().flatten() else {
                continue;
            };
            let expired = w.expires.as_str() < today;
            if usage.used.get(i).copied().unwrap_or(false) && !expired {
                continue;
            }
            out.push((self.verdict(w, expired, today), host));
        }
        out
    }

    fn verdict(&self, w: &Waiver, expired: bool, today: &str) -> Finding {
        let at = format!("{}:{}", self.path, w.line);
        let (explanation, fix) = if expired {
            (
                format!(
                    "waiver at {at} expired on {} (rule `{}`: {}); it no longer applies, so the findings it covered are reported again",
                    w.expires, w.rule, w.reason
                ),
                format!("Fix the findings, or renew the waiver at {at} with a new `expires` date after reviewing its reason."),
            )
        } else {
            (
                format!(
                    "stale waiver at {at} (rule `{}`{}{}) matched nothing: no fail, unknown or error finding fits it any more on the hosts it scopes",
                    w.rule,
                    w.subject.as_ref().map(|s| format!(", subject `{s}`")).unwrap_or_default(),
                    w.host.as_ref().map(|s| format!(", host `{s}`")).unwrap_or_default(),
                ),
                format!("Delete the waiver at {at}, or correct its rule/subject/host globs."),
            )
        };
        let meta = waiver_rule_meta();
        Finding::new(
            WAIVER_RULE,
            meta.policy,
            meta.title,
            meta.severity,
            Status::Fail,
            meta.source,
        )
        .with_subject(vec![at.clone()])
        .with_expected(if expired {
            format!("expires on or after {today}")
        } else {
            "matches at least one finding".into()
        })
        .with_actual(if expired {
            format!("expired on {}", w.expires)
        } else {
            "matched nothing".into()
        })
        .with_evidence(vec![crate::facts::Evidence::line(
            self.path.clone(),
            w.line,
        )])
        .with_explanation(explanation)
        .with_fix(fix)
    }
}

/// What the hosts of a run told about each waiver (defined with the
/// report's run metadata, where a shard records it).
pub use crate::report::merge::WaiverUsage as Usage;

impl Usage {
    /// Nothing seen yet, for the waivers of `set`.
    pub fn new(set: &WaiverSet) -> Usage {
        Usage {
            first_host: vec![None; set.waivers.len()],
            used: vec![false; set.waivers.len()],
        }
    }
}

/// Put [`WaiverSet::verdicts`] on the hosts they concern (the first host
/// when that one is not in `report`), recounting them, and the waiver
/// rule in the catalogue when there is one.
pub fn attach(report: &mut Report, verdicts: Vec<(Finding, String)>) {
    if verdicts.is_empty() {
        return;
    }
    for (finding, host) in verdicts {
        let t = report
            .hosts
            .iter()
            .position(|h| h.host == host)
            .unwrap_or(0);
        if let Some(h) = report.hosts.get_mut(t) {
            let mut findings = std::mem::take(&mut h.findings);
            findings.push(finding);
            h.set_findings(findings);
        }
    }
    if !report.rules.iter().any(|r| r.id == WAIVER_RULE) {
        report.rules.push(waiver_rule_meta());
    }
}

/// Metadata of [`WAIVER_RULE`].
pub fn waiver_rule_meta() -> RuleMeta {
    RuleMeta {
        id: WAIVER_RULE.into(),
        policy: "driftaudit".into(),
        title: "Waivers are current and still needed".into(),
        severity: Severity::Low,
        why: "An expired waiver no longer hides its findings; a waiver that matches nothing hides nothing and should be removed before it silently covers a future failure.".into(),
        fix: "Renew or delete the waiver named in the finding.".into(),
        references: vec![],
        tags: vec![],
        source: RuleSource {
            path: "(built-in)".into(),
            line: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_validated() {
        assert!(valid_date("2024-02-29"));
        assert!(!valid_date("2023-02-29"));
        assert!(!valid_date("2024-13-01"));
        assert!(!valid_date("2024-1-01"));
        assert!(!valid_date("tomorrow"));
        assert!(!valid_date("2024-01-0x"));
    }

    #[test]
    fn errors_point_at_the_line_with_a_caret() {
        let text = "- rule: linux.aslr\n  reason: lab host\n  expires: 2024-02-30\n";
        let e = WaiverSet::parse("w.yaml", text).unwrap_err();
        assert_eq!((e.line, e.column), (3, 12));
        let s = e.to_string();
        assert!(
            s.starts_with("w.yaml:3:12: `expires` must be a date"),
            "{s}"
        );
        assert!(
            s.contains("3 |   expires: 2024-02-30\n  |            ^"),
            "{s}"
        );

        let e = WaiverSet::parse("w.yaml", "- rule: x\n  expires: 2030-01-01\n").unwrap_err();
        assert!(e.to_string().contains("reason"), "{e}");
        let e = WaiverSet::parse(
            "w.yaml",
            "- rule: x\n  reason: r\n  expires: 2030-01-01\n  hots: a\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
    }

    #[test]
    fn today_can_be_overridden_format() {
        assert!(valid_date(&today()));
    }
}
