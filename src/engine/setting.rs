//! `setting:` + `expect:` rules (and `expect: {present: ...}`, alone or
//! beside a value check, which then fails a missing setting): one
//! setting's value compared with each expectation, the expected text, and
//! the pass wording. Must not do I/O or evaluate other check kinds.

use super::eval::RuleCx;
use super::finding::{finish, missing_finding, rule_finding};
use crate::expr::eval::{eval, Host, Missing};
use crate::expr::{self, Expr};
use crate::policy::{ExpectOp, Rule};
use crate::report::{Conversion, Finding, Status};
use crate::value::{format_number, normalize_ws, parse_size, Value};

/// The steps that turned the text read on the host (`raw`) into the value
/// compared, as goss records them: a size written with a unit is
/// `to-bytes`, a boolean spelt `0`, `off` or `yes` is `to-boolean`, a value
/// the reader changed from what the text says (a server's rounding, whose
/// note the finding carries) is `adjusted`, and text or a boolean that a
/// `min`/`max`/`gt`/`lt` compares as a number is `to-numeric`. Empty when
/// the value is the text as read.
fn conversions(raw: &str, v: &Value, numeric: bool) -> Vec<Conversion> {
    let raw = raw.trim();
    let step = |s: &str, v: String| Conversion {
        step: s.into(),
        value: v,
    };
    let mut out = Vec::new();
    if raw.is_empty() {
        return out;
    }
    match v {
        Value::Size(n) => match parse_size(raw) {
            Ok(b) => {
                if normalize_ws(raw) != format_number(b) {
                    out.push(step("to-bytes", format_number(b)));
                }
                if b != *n {
                    out.push(step("adjusted", format_number(*n)));
                }
            }
            Err(_) => out.push(step("to-bytes", format_number(*n))),
        },
        Value::Number(n) => match raw.parse::<f64>() {
            Ok(x) if x == *n => {}
            Ok(_) => out.push(step("adjusted", format_number(*n))),
            Err(_) => out.push(step("to-numeric", format_number(*n))),
        },
        Value::Bool(b) if !raw.eq_ignore_ascii_case(if *b { "ON" } else { "OFF" }) => {
            out.push(step("to-boolean", b.to_string()))
        }
        _ => {}
    }
    if numeric && matches!(v, Value::Str(_) | Value::Bool(_)) {
        if let Some(n) = v.as_f64() {
            out.push(step("to-numeric", format_number(n)));
        }
    }
    out
}

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

/// The expectations as people read them (`at least 1`, `0`, `one of a, b`):
/// the formats for people show these, JSON keeps [`expected_text`] and
/// has these only where they differ from it.
fn expected_words(expect: &[(ExpectOp, Vec<Value>)]) -> Option<String> {
    let words = expect
        .iter()
        .map(|(op, vals)| {
            let vs = vals.iter().map(expr::show).collect::<Vec<_>>().join(", ");
            let word = match op {
                ExpectOp::Equals => return vs,
                ExpectOp::OneOf => "one of",
                ExpectOp::Not => "not",
                ExpectOp::Min => "at least",
                ExpectOp::Max => "at most",
                ExpectOp::Gt => "more than",
                ExpectOp::Lt => "less than",
            };
            format!("{word} {vs}")
        })
        .collect::<Vec<_>>()
        .join(" and ");
    (words != expected_text(expect)).then_some(words)
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
    // the text read on the host, before templates read more settings
    let raw = match &got {
        Ok(_) => cx.touched.borrow().last().map(|(_, s)| s.raw.clone()),
        Err(_) => None,
    };
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
        if let Some((_, s)) = cx.touched.borrow().last() {
            if let Some(e) = s.evidence.first() {
                cx.special
                    .borrow_mut()
                    .insert("source".into(), Value::Str(e.to_string()));
            }
        }
    }
    // `present: true` beside a value check: a missing setting fails (a
    // baseline's pin of a key the golden host sets) instead of skipping.
    if presence == Some(true) && !expect.is_empty() {
        if let Err(Missing::Absent { reason, .. }) = &got {
            // `{source}` says why there is no place that sets it
            let mut special = cx.special.borrow_mut();
            special.insert("actual".into(), Value::Str("not set".into()));
            special.insert("source".into(), Value::Str(reason.clone()));
            drop(special);
            let mut f = rule_finding(rule, cx, Status::Fail);
            f.actual = Some("absent".into());
            f.subject = vec![canon.clone()];
            let mut evaluated = Vec::new();
            for (op, es) in expect {
                let vals: Result<Vec<Value>, Missing> = es.iter().map(|e| eval(e, cx)).collect();
                match vals {
                    Ok(v) => evaluated.push((*op, v)),
                    Err(m) => return missing_finding(rule, cx, m),
                }
            }
            let expected = expected_text(&evaluated);
            cx.special
                .borrow_mut()
                .insert("expected".into(), Value::Str(expected.clone()));
            f.expected = Some(expected);
            f.expected_words = expected_words(&evaluated);
            finish(rule, cx, Status::Fail, &mut f);
            if f.subject.is_empty() {
                f.subject = vec![canon];
            }
            return f;
        }
    }
    if let Some(must_exist) = presence.filter(|p| !*p || expect.is_empty()) {
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
        let mut f = rule_finding(rule, cx, status);
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
                        let mut f = rule_finding(rule, cx, Status::Error);
                        f.subject = vec![canon.clone()];
                        f.actual = Some(expr::show(&actual));
                        f.expected = Some(expected.clone());
                        f.expected_words = expected_words(&evaluated);
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
    let mut f = rule_finding(rule, cx, status);
    f.expected = Some(expected.clone());
    f.expected_words = expected_words(&evaluated);
    f.actual = Some(expr::show(&actual));
    if let Some(raw) = &raw {
        let numeric = evaluated.iter().any(|(op, _)| {
            matches!(
                op,
                ExpectOp::Min | ExpectOp::Max | ExpectOp::Gt | ExpectOp::Lt
            )
        });
        f = f.with_conversions(raw.trim(), conversions(raw, &actual, numeric));
    }
    if status == Status::Pass {
        f.explanation = format!(
            "{canon} is {}, as expected ({expected})",
            expr::show(&actual)
        );
    }
    finish(rule, cx, status, &mut f);
    f
}
