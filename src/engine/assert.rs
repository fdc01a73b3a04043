//! `assert:` rules: one boolean expression over the rule's context; the
//! expected text is the expression's canonical text and the actual text
//! the settings it read. Must not do I/O or evaluate other check kinds.

use std::collections::BTreeSet;

use super::eval::RuleCx;
use super::finding::{base_finding, brief, finish, missing_finding};
use crate::eval::{eval, truthy};
use crate::expr::Expr;
use crate::policy::{Check, Rule};
use crate::report::{Finding, Status};
use crate::value::Value;

/// Judge an `assert:` rule over its context: one finding.
pub(super) fn check(rule: &Rule, cx: &RuleCx, e: &Expr) -> Finding {
    let result = eval(e, cx).and_then(|v| truthy(&v));
    let status = match result {
        Ok(true) => Status::Pass,
        Ok(false) => Status::Fail,
        Err(m) => return missing_finding(rule, cx, m),
    };
    let actual: Vec<String> = {
        let mut seen = BTreeSet::new();
        cx.touched
            .borrow()
            .iter()
            .filter(|(_, k, _)| seen.insert(k.clone()))
            .map(|(_, k, s)| format!("{k} = {}", brief(&s.value)))
            .collect()
    };
    let mut f = base_finding(rule, status);
    f.expected = Some(assert_text(rule));
    f.actual = (!actual.is_empty()).then(|| actual.join(", "));
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(assert_text(rule)));
    cx.special
        .borrow_mut()
        .insert("actual".into(), Value::Str(actual.join(", ")));
    finish(rule, cx, status, &mut f);
    f
}

fn assert_text(rule: &Rule) -> String {
    // The source of an assert is not kept verbatim in the compiled rule; the
    // template of `expected` is the assert itself when one is needed.
    match &rule.check {
        Check::Assert(e) => e.to_string(),
        _ => String::new(),
    }
}
