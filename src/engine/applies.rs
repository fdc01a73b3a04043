//! `applies:` conditions of a rule (kernel release, `exists:`/`missing:`
//! paths, `when:` expressions) decided over gathered facts, and the words
//! that say why a rule was skipped. Must not do I/O or judge the rule's
//! check itself (that is setting/assert/drift).

use super::eval::RuleCx;
use super::finding::rule_finding;
use crate::expr::eval::{eval, truthy, Missing};
use crate::expr::{self, Expr};
use crate::facts::Facts;
use crate::policy::{Applies, Policy, Rule};
use crate::report::{Finding, Status};

/// The first `applies` condition that does not hold, as the finding that
/// says so (`skip`, or `unknown`/`error` when it cannot be told); `None`
/// when every condition holds and the check runs.
pub(super) fn first_unmet(rule: &Rule, policy: Option<&Policy>, cx: &RuleCx) -> Option<Finding> {
    first_unmet_of(rule, &rule.applies, policy, cx)
}

/// [`first_unmet`] of `applies` in place of the rule's own (a `for_each`
/// item's paths, or its own `when`), without a copy of the rule.
pub(super) fn first_unmet_of<'a>(
    rule: &Rule,
    applies: impl IntoIterator<Item = &'a Applies>,
    policy: Option<&Policy>,
    cx: &RuleCx,
) -> Option<Finding> {
    let facts = cx.facts;
    for a in applies {
        let outcome: Option<(Status, String)> = match a {
            Applies::Kernel(conds, text) => match &facts.kernel {
                None => Some((
                    Status::Unknown,
                    format!("applies to kernels {text}, but this host's kernel release is unknown"),
                )),
                Some(k) => {
                    if conds.iter().all(|(op, v)| kernel_ok(op, k.cmp_parts(v))) {
                        None
                    } else {
                        Some((
                            Status::Skip,
                            format!(
                                "applies only to kernels {text}; this host runs {}",
                                k.release
                            ),
                        ))
                    }
                }
            },
            Applies::Exists(p) | Applies::Missing(p) => {
                let want = matches!(a, Applies::Exists(_));
                match crate::policy::resolve_path(p, policy) {
                    Err(e) => Some((Status::Error, format!("path `{p}`: {e}"))),
                    Ok(path) => path_condition(facts, &path, want),
                }
            }
            Applies::When(e, text) => match eval(e, cx).and_then(|v| truthy(&v)) {
                Ok(true) => None,
                Ok(false) => Some((
                    Status::Skip,
                    match not_detected(facts, e) {
                        Some(why) => why,
                        None => format!("applies only when `{}`, which is false here", text.trim()),
                    },
                )),
                Err(Missing::Absent { subject, reason }) => Some((
                    Status::Skip,
                    format!("applies only when `{}`; {subject}: {reason}", text.trim()),
                )),
                Err(Missing::Unknown { subject, reason }) => Some((
                    Status::Unknown,
                    format!(
                        "cannot tell whether `{}` holds: {subject}: {reason}",
                        text.trim()
                    ),
                )),
                Err(Missing::Error(e)) => {
                    Some((Status::Error, format!("condition `{}`: {e}", text.trim())))
                }
            },
        };
        if let Some((status, why)) = outcome {
            let mut f = rule_finding(rule, cx, status);
            f.subject = cx.subjects();
            f.evidence = cx.evidence();
            f.explanation = why;
            if status == Status::Unknown {
                if let Some(fix) = cx.unknown_fix.borrow().clone() {
                    f.fix = fix;
                }
            }
            return Some(f);
        }
    }
    None
}

fn kernel_ok(op: &str, ord: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        "<" => ord == Less,
        "<=" => ord != Greater,
        ">" => ord == Greater,
        ">=" => ord != Less,
        "==" => ord == Equal,
        "!=" => ord != Equal,
        _ => false,
    }
}

/// An `exists:`/`missing:` condition decided from every piece of evidence
/// ([`Facts::path_state`]): a path the snapshot does not show either way
/// makes the rule `unknown` (naming what would decide it), never `skip`.
fn path_condition(facts: &Facts, path: &str, want: bool) -> Option<(Status, String)> {
    use crate::facts::presence::PathState;
    match (facts.path_state(path), want) {
        (PathState::Known(_), true) | (PathState::Absent(_), false) => None,
        (PathState::Known(e), false) => Some((
            Status::Skip,
            format!("applies only where {path} does not exist; it does ({e})"),
        )),
        (PathState::Absent(_), true) => Some((
            Status::Skip,
            format!("applies only where {path} exists; it does not on this host"),
        )),
        (PathState::Unknown(why), _) => Some((
            Status::Unknown,
            format!(
                "applies only where {path} {}; not known: {why}",
                if want { "exists" } else { "does not exist" }
            ),
        )),
    }
}

/// For a `when:` that is false because a domain's presence fact is false
/// (`zimbra_installed`, `not zimbra_installed` excluded), the reason in words:
/// what was looked for and not found.
fn not_detected(facts: &Facts, e: &Expr) -> Option<String> {
    let mut names = Vec::new();
    let mut collect = |x: &Expr| {
        if let Expr::Name(n) = x {
            names.push(n.clone());
        }
    };
    match e {
        Expr::Name(_) => expr::walk(e, &mut collect),
        Expr::Binary(expr::BinOp::And, a, b) => {
            for side in [a.as_ref(), b.as_ref()] {
                if let Expr::Name(_) = side {
                    expr::walk(side, &mut collect)
                }
            }
        }
        _ => return None,
    }
    facts
        .detections
        .iter()
        .filter(|d| !d.detected)
        .find(|d| {
            d.domain
                .fact()
                .is_some_and(|f| names.iter().any(|n| n == f))
        })
        .map(|d| {
            let what = match d.domain {
                crate::facts::presence::Domain::Storage => {
                    "mounts or /etc/fstab are known".to_string()
                }
                other => format!("{} is installed", other.label()),
            };
            format!(
                "applies only where {what}; not detected on this host: {}",
                d.looked_for
            )
        })
}
