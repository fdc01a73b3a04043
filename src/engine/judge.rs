//! One rule judged in one context: its `applies`, then its check kind
//! (`setting`, `assert`, `drift`, and an upgrade rule's targets, which
//! `upgrade` judges over the facts). The context is the rule's own or one
//! `for_each` item's; must not expand items or gather facts.

use super::eval::RuleCx;
use super::{applies, assert, drift, setting};
use crate::policy::{Applies, Check, Policy, Rule};
use crate::report::Finding;

/// A rule's `applies`, then its check, in a context (one `for_each` item's,
/// or the rule's own).
pub(super) fn judge(rule: &Rule, policy: Option<&Policy>, cx: &RuleCx) -> Vec<Finding> {
    judge_as(rule, &rule.applies, None, policy, cx)
}

/// [`judge`] as one `for_each` item sees the rule, without a copy of it:
/// `applies` in place of the rule's own, `key` (when given) in place of its
/// `setting:` key. The rule's other parts are the item's too.
pub(super) fn judge_as<'a>(
    rule: &Rule,
    applies: impl IntoIterator<Item = &'a Applies>,
    key: Option<&str>,
    policy: Option<&Policy>,
    cx: &RuleCx,
) -> Vec<Finding> {
    if let Some(f) = applies::first_unmet_of(rule, applies, policy, cx) {
        return vec![f];
    }
    match &rule.check {
        Check::Setting {
            ns,
            key: written,
            expect,
            presence,
        } => {
            let key = key.unwrap_or(written);
            vec![setting::check(rule, cx, ns, key, expect, *presence)]
        }
        Check::Assert(e) => vec![assert::check(rule, cx, e)],
        Check::Drift(d) => drift::check(rule, cx, d),
        Check::Upgrade(u) => crate::upgrade::judge(rule, u, cx.facts),
    }
}
