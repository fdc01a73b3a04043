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
    let touched: Vec<(String, Value)> = {
        let mut seen = BTreeSet::new();
        cx.touched
            .borrow()
            .iter()
            .filter(|(_, k, _)| seen.insert(k.clone()))
            .map(|(_, k, s)| (k.clone(), s.value.clone()))
            .collect()
    };
    let actual: Vec<String> = touched
        .iter()
        .map(|(k, v)| format!("{k} = {}", brief(v)))
        .collect();
    // for people: a record's fields the check reads, not the whole record
    let read = fields_read(rule, e);
    let shown: Vec<String> = touched
        .iter()
        .map(|(k, v)| match v {
            Value::Record(m) if read.iter().any(|f| m.contains_key(f.as_str())) => {
                let parts: Vec<String> = read
                    .iter()
                    .filter_map(|f| Some(format!("{f}: {}", m.get(f.as_str())?.to_plain())))
                    .collect();
                // record namespaces (mount, fstab, ext4) are keyed by mount point
                format!("{}, mount: {k}", parts.join(", "))
            }
            _ => format!("{k} = {}", brief(v)),
        })
        .collect();
    let mut f = base_finding(rule, status);
    f.expected = Some(assert_text(rule));
    f.actual = (!shown.is_empty()).then(|| shown.join(", "));
    if shown != actual {
        f.actual_whole = Some(actual.join(", "));
    }
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(assert_text(rule)));
    cx.special
        .borrow_mut()
        .insert("actual".into(), Value::Str(actual.join(", ")));
    finish(rule, cx, status, &mut f);
    f
}

/// The record fields the check reads (`m.atime` in the assertion or a
/// `let` it uses), in the order they first appear.
fn fields_read(rule: &Rule, e: &Expr) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut note = |x: &Expr| {
        if let Expr::Field(_, f) = x {
            if !out.iter().any(|o| o == f) {
                out.push(f.clone());
            }
        }
    };
    crate::expr::walk(e, &mut note);
    for l in rule.lets.values() {
        crate::expr::walk(l, &mut note);
    }
    out
}

fn assert_text(rule: &Rule) -> String {
    // The source of an assert is not kept verbatim in the compiled rule; the
    // template of `expected` is the assert itself when one is needed.
    match &rule.check {
        Check::Assert(e) => e.to_string(),
        _ => String::new(),
    }
}
