//! `applies:` conditions of a rule (kernel release, `exists:`/`missing:`
//! paths, `when:` expressions) decided over gathered facts, and the words
//! that say why a rule was skipped. Must not do I/O or judge the rule's
//! check itself (that is setting/assert/drift).

use super::eval::RuleCx;
use super::finding::rule_finding;
use crate::expr::eval::{eval, truthy, Missing};
use crate::expr::{self, ops, BinOp, Expr};
use crate::facts::{Facts, KernelVersion};
use crate::policy::{Applies, Policy, Rule};
use crate::report::{Finding, Status};
use crate::value::Value;

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
                Some(k) => match kernel_holds(k, conds) {
                    Ok(true) => None,
                    Ok(false) => Some((
                        Status::Skip,
                        format!(
                            "applies only to kernels {text}; this host runs {}",
                            k.release
                        ),
                    )),
                    Err(e) => Some((Status::Error, format!("condition `{text}`: {e}"))),
                },
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
                Err(
                    Missing::Unknown { subject, reason }
                    | Missing::Bounded {
                        subject, reason, ..
                    },
                ) => Some((
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

/// Whether the running kernel meets every comparison of a `kernel:`
/// condition (lowered at load: `(OP, VERSION)`), by the expression
/// language's comparison: `release OP version` is `order OP 0`, with the
/// order of the two versions as -1, 0 or 1 (dotted parts compared one by
/// one, so `4.12` and `4.12.0` are equal and no part has a bound).
fn kernel_holds(k: &KernelVersion, conds: &[(BinOp, Vec<u64>)]) -> Result<bool, String> {
    let zero = Value::Number(0.0);
    conds.iter().try_fold(true, |all, (op, v)| {
        let order = Value::Number(k.cmp_parts(v) as i8 as f64);
        Ok(all && ops::truthy(&ops::binary(*op, &order, &zero)?)?)
    })
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

#[cfg(test)]
mod tests {
    use super::kernel_holds;
    use crate::facts::KernelVersion;
    use crate::policy::{parse_kernel_cond, KernelCondError};

    /// The kernel judge before issue 47 lowered `kernel:` conditions: the
    /// operator text matched at evaluation, anything else silently false.
    fn before(op: &str, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match op {
            "<" => ord == Less,
            "<=" => ord != Greater,
            ">" => ord == Greater,
            ">=" => ord != Less,
            "==" | "=" => ord == Equal,
            "!=" => ord != Equal,
            _ => false,
        }
    }

    /// Issue 47: `kernel: ">= 3.6"` is lowered at load to a comparison of
    /// the expression language; every operator judges every release as the
    /// former string match did, and `=` reads as `==`.
    #[test]
    fn lowered_kernel_conditions_judge_as_the_former_string_match() {
        let releases = [
            "3.6",
            "3.6.0",
            "3.10.0-1160.el7.x86_64",
            "4.12",
            "4.12.1",
            "5.15.0-91-generic",
            "6.1.0-18-amd64",
            "6.10.0-rc3",
        ];
        let versions = [
            "3", "3.6", "3.6.0", "4.12", "4.12.0.1", "5.15", "6.1.0", "10",
        ];
        for op in ["<", "<=", ">", ">=", "==", "=", "!="] {
            for v in versions {
                let cond = format!("{op} {v}");
                let lowered = parse_kernel_cond(&cond).unwrap();
                let parts: Vec<u64> = v.split('.').map(|p| p.parse().unwrap()).collect();
                for r in releases {
                    let k = KernelVersion::parse(r).unwrap();
                    assert_eq!(
                        kernel_holds(&k, &lowered),
                        Ok(before(op, k.cmp_parts(&parts))),
                        "{r} against `{cond}`"
                    );
                }
            }
        }
        // two comparisons: both must hold
        let k = KernelVersion::parse("4.11.2").unwrap();
        assert_eq!(
            kernel_holds(&k, &parse_kernel_cond(">= 4.10, < 4.12").unwrap()),
            Ok(true)
        );
        assert_eq!(
            kernel_holds(&k, &parse_kernel_cond(">= 4.10, < 4.11").unwrap()),
            Ok(false)
        );
    }

    /// A fleet report's policy digest hashes the compiled rules' Debug
    /// text: a lowered kernel condition keeps the former spelling (the
    /// operator as text, `=` as `==`).
    #[test]
    fn lowered_kernel_condition_keeps_the_debug_text_the_policy_digest_hashes() {
        let text = ">= 4.10, = 4.12, != 5";
        let a = crate::policy::Applies::Kernel(parse_kernel_cond(text).unwrap(), text.into());
        assert_eq!(
            format!("{a:?}"),
            r#"Kernel([(">=", [4, 10]), ("==", [4, 12]), ("!=", [5])], ">= 4.10, = 4.12, != 5")"#
        );
    }

    /// An operator that is no comparison is refused at load (the policy
    /// does not load: `invalid-kernel-condition`), so nothing is left to
    /// match, or to decide silently false, when the rule is judged.
    #[test]
    fn an_unknown_kernel_operator_is_a_load_error_not_a_false_condition() {
        for cond in [
            "=> 3.6",
            "=< 3.6",
            "<> 3.6",
            "~ 3.6",
            ">= 3.6, ~> 4",
            "! 3.6",
        ] {
            assert!(
                matches!(
                    parse_kernel_cond(cond),
                    Err(KernelCondError::UnknownOperator { .. })
                ),
                "{cond}: {:?}",
                parse_kernel_cond(cond)
            );
        }
        let yaml =
            "policy: t\ntitle: T\nrules:\n  - id: t.r\n    title: t\n    severity: low\n    \
                    applies:\n      - kernel: \"=> 3.6\"\n    assert: \"true\"\n    why: w\n    \
                    fix: f\n    references: []\n";
        let mut set = crate::policy::PolicySet::new();
        let err = set.add_str("t.yaml", yaml).unwrap_err();
        assert!(err.to_string().contains("unknown operator `=>`"), "{err}");
    }
}
