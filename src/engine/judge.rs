//! One rule judged in one context: its `applies`, then its check kind
//! (`setting`, `assert`, `drift`). The context is the rule's own or one
//! `for_each` item's; must not expand items or gather facts.

use super::eval::RuleCx;
use super::{applies, assert, drift, setting};
use crate::policy::{Check, Policy, Rule};
use crate::report::Finding;

/// A rule's `applies`, then its check, in a context (one `for_each` item's,
/// or the rule's own).
pub(super) fn judge(rule: &Rule, policy: Option<&Policy>, cx: &RuleCx) -> Vec<Finding> {
    if let Some(f) = applies::first_unmet(rule, policy, cx) {
        return vec![f];
    }
    match &rule.check {
        Check::Setting {
            ns,
            key,
            expect,
            presence,
        } => vec![setting::check(rule, cx, ns, key, expect, *presence)],
        Check::Assert(e) => vec![assert::check(rule, cx, e)],
        Check::Drift(d) => drift::check(rule, cx, d),
        // its producer (the upgrade checks) judges it
        Check::External => Vec::new(),
    }
}
