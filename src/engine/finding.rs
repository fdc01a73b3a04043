//! How a rule's findings are shaped, whatever its check kind: the base
//! finding of a rule, the explanation and fix of a failure (templates
//! rendered over the rule's context), the pass summary, a value that could
//! not be known, the breakdown bar, and input problems as findings. Must
//! not decide a status (the check kinds do) or do I/O.

use std::collections::BTreeSet;

use super::domain::rule_domain;
use super::eval::RuleCx;
use crate::expr;
use crate::expr::eval::{eval, Missing};
use crate::facts::presence::Domain;
use crate::facts::{Evidence, FileIssue, IssueLevel};
use crate::policy::{Rule, Severity};
use crate::report::{input_rule_meta, BreakdownData, Finding, Status, INPUT_RULE};
use crate::value::Value;

pub(super) fn input_finding(i: &FileIssue) -> Finding {
    let meta = input_rule_meta();
    let status = match i.level {
        IssueLevel::Problem => Status::Fail,
        IssueLevel::Unknown => Status::Unknown,
        IssueLevel::Note => Status::Skip,
    };
    let loc = match (i.line, i.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", i.path),
        (Some(l), None) => format!("{}:{l}", i.path),
        _ => i.path.clone(),
    };
    Finding::new(
        INPUT_RULE,
        meta.policy,
        meta.title,
        Severity::Low,
        status,
        meta.source,
    )
    .with_subject(vec![i.path.clone()])
    .with_evidence(vec![Evidence {
        path: i.path.clone(),
        line: i.line,
        via: None,
    }])
    .with_explanation(format!("{loc}: {} ({} reader)", i.message, i.source))
    .with_fix(if status == Status::Fail {
        meta.fix
    } else {
        String::new()
    })
    .with_domain(Domain::of_namespace(&i.source))
}

pub(super) fn base_finding(rule: &Rule, status: Status) -> Finding {
    finding_in(rule, status, rule_domain(rule))
}

/// [`base_finding`] for a rule judged in `cx` (its own context, or its
/// item's), its domain from what the context already found the rule reads.
pub(super) fn rule_finding(rule: &Rule, cx: &RuleCx, status: Status) -> Finding {
    finding_in(rule, status, cx.domain_of(rule))
}

fn finding_in(rule: &Rule, status: Status, domain: Option<Domain>) -> Finding {
    Finding::new(
        rule.id.clone(),
        rule.policy.clone(),
        rule.title.clone(),
        rule.severity,
        status,
        rule.source.clone(),
    )
    .with_domain(domain)
    .with_overridden(rule.overridden.clone())
}

/// The finding of a rule a site overlay disabled: `skip`, never a pass,
/// its explanation naming the file, line and the reason.
pub(super) fn disabled_finding(rule: &Rule, d: &crate::policy::Overridden) -> Finding {
    base_finding(rule, Status::Skip).with_explanation(format!(
        "disabled by {}: {}",
        d.set_by,
        d.value.trim()
    ))
}

fn breakdown(rule: &Rule, cx: &RuleCx) -> Option<BreakdownData> {
    let b = rule.breakdown.as_ref()?;
    let total = eval(&b.total, cx).ok()?.as_f64()?;
    let parts = b
        .parts
        .iter()
        .map(|(l, e)| Some((l.clone(), eval(e, cx).ok()?.as_f64()?)))
        .collect::<Option<Vec<_>>>()?;
    Some(BreakdownData {
        label: b.label.clone(),
        total,
        parts,
        rest: b.rest.clone(),
    })
}

pub(super) fn finish(rule: &Rule, cx: &RuleCx, status: Status, f: &mut Finding) {
    if matches!(status, Status::Fail | Status::Pass) {
        f.breakdown = breakdown(rule, cx);
    }
    // Render first: settings a template reads are evidence too.
    match status {
        Status::Fail => {
            let mut text = cx.render(&rule.why);
            for n in cx.notes() {
                text.push_str(&format!(" Note: {n}."));
            }
            f.explanation = text;
            f.fix = cx.render(&rule.fix);
        }
        // a record the rule read: the fields it read, as `actual:` shows
        // them (the whole record stays in JSON's actual_whole)
        Status::Pass if f.explanation.is_empty() && f.actual_whole.is_some() => {
            f.explanation = format!("passes: {}", f.actual.as_deref().unwrap_or(""));
        }
        Status::Pass if f.explanation.is_empty() => {
            let mut seen = BTreeSet::new();
            let parts: Vec<String> = cx
                .touched
                .borrow()
                .iter()
                .filter(|(k, _)| seen.insert(k.as_str()))
                .map(|(k, s)| format!("{k} = {}", brief(&s.value)))
                .collect();
            f.explanation = if parts.is_empty() {
                "passes".into()
            } else {
                format!("passes: {}", parts.join(", "))
            };
        }
        _ => {}
    }
    f.subject = cx.subjects();
    f.evidence = cx.evidence();
}

pub(super) fn missing_finding(rule: &Rule, cx: &RuleCx, m: Missing) -> Finding {
    let (status, text) = match m {
        Missing::Absent { subject, reason } => (Status::Skip, format!("{subject}: {reason}")),
        Missing::Unknown { subject, reason } => (Status::Unknown, format!("{subject}: {reason}")),
        // a range that reached the verdict undecided
        Missing::Bounded {
            subject,
            reason,
            lo,
            hi,
        } => (
            Status::Unknown,
            format!(
                "{subject}: {reason} (it lies between {} and {}, and the answer differs over that range)",
                crate::expr::show(&lo),
                crate::expr::show(&hi)
            ),
        ),
        Missing::Error(e) => (
            Status::Error,
            format!("the rule could not be evaluated: {e}"),
        ),
    };
    let mut f = rule_finding(rule, cx, status);
    f.subject = cx.subjects();
    f.evidence = cx.evidence();
    f.explanation = text;
    if status == Status::Unknown {
        match undecided(cx, &f.explanation) {
            Some((fix, param)) => {
                f.fix = fix;
                f.decided_by = param;
            }
            None => {
                f.fix = cx
                    .unknown_fix
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| cx.facts.unreadable_fix().into())
            }
        }
    }
    f
}

/// What decides an unknown record field, when its reader says
/// (`FIELD?: {reason, decide, param}` in a record the rule read, such as a
/// virtual disk's `rotational`): the fix, better than the generic "capture
/// it", and the parameter that decides it.
fn undecided(cx: &RuleCx, explanation: &str) -> Option<(String, Option<String>)> {
    let (field, _) = explanation.split_once(": ")?;
    let key = format!("{field}?");
    cx.touched
        .borrow()
        .iter()
        .find_map(|(_, s)| match &s.value {
            Value::Record(m) => match m.get(&key) {
                Some(Value::Record(w)) => Some((
                    w.get("decide")?.to_plain(),
                    w.get("param").map(Value::to_plain),
                )),
                _ => None,
            },
            _ => None,
        })
}

/// A value for one-line summaries: records list their fields (`{k: v, ...}`),
/// other long text is cut.
pub(super) fn brief(v: &Value) -> String {
    let text = match v {
        Value::Record(map) => format!(
            "{{{}}}",
            map.iter()
                .filter(|(k, _)| !k.ends_with('?'))
                .map(|(k, v)| format!("{k}: {}", v.to_plain()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => expr::show(other),
    };
    if !matches!(v, Value::Record(_)) && text.chars().count() > 100 {
        format!("{}…", text.chars().take(99).collect::<String>())
    } else {
        text
    }
}
