//! The problems an `overrides:` entry (written as a
//! [`super::OverrideSpec`]) has on its own, before any rule is matched: a
//! target, something to change, a valid glob, a reason for `disabled`,
//! constant parameter values. Applying overrides to compiled rules is
//! `overlay.rs`'s; this file must not look at rules.

use serde_saphyr::Spanned;

use super::diagnostics::{line_col, problem_at};
use super::values::param_value;
use super::{OverrideSpec, PolicyProblem, Problem};

/// Problems of the entries themselves, before any rule is matched: a
/// target (exactly one of `rule`, `policy`), something to change, a valid
/// glob, a reason for `disabled`, constant parameter values.
pub(super) fn validate(
    path: &str,
    text: &str,
    entries: &[Spanned<OverrideSpec>],
) -> Vec<PolicyProblem> {
    let mut out = Vec::new();
    let mut at = |loc: &serde_saphyr::Location, problem: Problem| {
        let (l, c) = line_col(loc);
        out.push(problem_at(path, text, l, c, None, problem));
    };
    for e in entries {
        let s = &e.value;
        let target = match (&s.rule, &s.policy) {
            (Some(r), None) => r,
            (None, Some(p)) => p,
            (r, p) => {
                at(
                    &e.referenced,
                    Problem::InvalidOverride {
                        detail: if r.is_some() && p.is_some() {
                            "gives both `rule` and `policy`".into()
                        } else {
                            "names no target: add `rule: ID-OR-GLOB` (or `policy:` for parameters)"
                                .into()
                        },
                    },
                );
                continue;
            }
        };
        if let Err(err) = glob::Pattern::new(&target.value) {
            at(
                &target.referenced,
                Problem::InvalidGlob {
                    pattern: target.value.clone(),
                    reason: err.msg.to_string(),
                },
            );
        }
        if s.policy.is_some()
            && (s.severity.is_some() || s.disabled.is_some() || !s.applies.is_empty())
        {
            at(
                &e.referenced,
                Problem::InvalidOverride {
                    detail: "with `policy` sets only `params`; use `rule: \"POLICY-PREFIX.*\"` for severity, disabled or applies".into(),
                },
            );
        }
        if s.severity.is_none()
            && s.disabled.is_none()
            && s.params.is_empty()
            && s.applies.is_empty()
        {
            at(
                &e.referenced,
                Problem::InvalidOverride {
                    detail: "changes nothing: give `severity`, `disabled`, `params` or `applies`"
                        .into(),
                },
            );
        }
        if let Some(d) = &s.disabled {
            let reason = d.value.trim();
            if reason.is_empty()
                || ["true", "false", "yes", "no", "on", "off"]
                    .iter()
                    .any(|w| reason.eq_ignore_ascii_case(w))
            {
                at(&d.referenced, Problem::DisabledWithoutReason);
            }
        }
        for (k, v) in &s.params {
            if let Err(reason) = param_value(&v.value) {
                at(
                    &v.referenced,
                    Problem::InvalidParam {
                        name: k.clone(),
                        reason,
                    },
                );
            }
        }
    }
    out
}
