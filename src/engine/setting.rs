//! `setting:` + `expect:` rules (and `expect: {present: ...}`): one
//! setting's value compared with each expectation, the expected text, and
//! the pass wording. Must not do I/O or evaluate other check kinds.

use super::eval::RuleCx;
use super::finding::{base_finding, finish, missing_finding};
use crate::eval::{eval, Context, Missing};
use crate::expr::{self, Expr};
use crate::policy::{ExpectOp, Rule};
use crate::report::{Finding, Status};
use crate::value::Value;

fn expected_text(expect: &[(ExpectOp, Vec<Value>)]) -> String {
    expect
        .iter()
        .map(|(op, vals)| {
            let vs: Vec<String> = vals.iter().map(expr::show).collect();
            format!("{} {}", op.words(), vs.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Judge a `setting:` rule over its context: one finding.
pub(super) fn check(
    rule: &Rule,
    cx: &RuleCx,
    ns: &str,
    key: &str,
    expect: &[(ExpectOp, Vec<Expr>)],
    presence: Option<bool>,
) -> Finding {
    let got = cx.setting(ns, key);
    let canon = cx
        .facts
        .namespaces
        .get(ns)
        .map(|n| n.canonical(key))
        .unwrap_or_else(|| key.to_string());
    cx.special
        .borrow_mut()
        .insert("setting".into(), Value::Str(canon.clone()));
    if let Ok(v) = &got {
        cx.special.borrow_mut().insert("actual".into(), v.clone());
        if let Some((_, _, s)) = cx.touched.borrow().last() {
            if let Some(e) = s.evidence.first() {
                cx.special
                    .borrow_mut()
                    .insert("source".into(), Value::Str(e.to_string()));
            }
        }
    }
    if let Some(must_exist) = presence {
        let (status, actual) = match (&got, must_exist) {
            (Ok(v), true) => (Status::Pass, Some(expr::show(v))),
            (Ok(v), false) => (Status::Fail, Some(expr::show(v))),
            (Err(Missing::Absent { .. }), true) => (Status::Fail, Some("absent".into())),
            (Err(Missing::Absent { .. }), false) => (Status::Pass, Some("absent".into())),
            (Err(m), _) => return missing_finding(rule, cx, m.clone()),
        };
        let expected = if must_exist { "present" } else { "absent" };
        cx.special
            .borrow_mut()
            .insert("expected".into(), Value::Str(expected.into()));
        let mut f = base_finding(rule, status);
        f.expected = Some(expected.into());
        f.actual = actual;
        f.subject = vec![canon.clone()];
        if status == Status::Pass {
            f.explanation = format!("{canon} is {expected}, as required");
        }
        finish(rule, cx, status, &mut f);
        if f.subject.is_empty() {
            f.subject = vec![canon];
        }
        return f;
    }
    let actual = match got {
        Ok(v) => v,
        Err(m) => {
            let mut f = missing_finding(rule, cx, m);
            if f.subject.is_empty() {
                f.subject = vec![canon];
            }
            return f;
        }
    };
    // evaluate expectations
    let mut evaluated: Vec<(ExpectOp, Vec<Value>)> = Vec::new();
    for (op, es) in expect {
        let mut vals = Vec::new();
        for e in es {
            match eval(e, cx) {
                Ok(v) => vals.push(v),
                Err(m) => return missing_finding(rule, cx, m),
            }
        }
        evaluated.push((*op, vals));
    }
    let expected = expected_text(&evaluated);
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(expected.clone()));
    let mut ok = true;
    for (op, vals) in &evaluated {
        let holds = match op {
            ExpectOp::Equals => actual.loosely_equals(&vals[0]),
            ExpectOp::Not => !actual.loosely_equals(&vals[0]),
            ExpectOp::OneOf => vals.iter().any(|v| actual.loosely_equals(v)),
            ExpectOp::Min | ExpectOp::Max | ExpectOp::Gt | ExpectOp::Lt => {
                match (actual.as_f64(), vals[0].as_f64()) {
                    (Some(a), Some(b)) => match op {
                        ExpectOp::Min => a >= b,
                        ExpectOp::Max => a <= b,
                        ExpectOp::Gt => a > b,
                        _ => a < b,
                    },
                    _ => {
                        let mut f = base_finding(rule, Status::Error);
                        f.subject = vec![canon.clone()];
                        f.actual = Some(expr::show(&actual));
                        f.expected = Some(expected.clone());
                        f.evidence = cx.evidence();
                        f.explanation = format!(
                            "{canon} is `{}`, which is not a number, so it cannot be compared ({expected})",
                            actual.to_plain()
                        );
                        return f;
                    }
                }
            }
        };
        ok &= holds;
    }
    let status = if ok { Status::Pass } else { Status::Fail };
    let mut f = base_finding(rule, status);
    f.expected = Some(expected.clone());
    f.actual = Some(expr::show(&actual));
    if status == Status::Pass {
        f.explanation = format!(
            "{canon} is {}, as expected ({expected})",
            expr::show(&actual)
        );
    }
    finish(rule, cx, status, &mut f);
    f
}
