//! `setting:` + `expect:` rules (and `expect: {present: ...}`, alone or
//! beside a value check, which then fails a missing setting): one
//! setting's value compared with each expectation, the expected text, and
//! the pass wording. Must not do I/O or evaluate other check kinds.

use super::eval::RuleCx;
use super::finding::{finish, missing_finding, rule_finding};
use crate::expr::eval::{eval, Host, Missing};
use crate::expr::{self, ops, BinOp};
use crate::policy::{Expectation, Rule};
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

/// The expectations with their values evaluated.
type Evaluated<'r> = [(&'r Expectation, Vec<Value>)];

fn expected_text(expect: &Evaluated) -> String {
    expect
        .iter()
        .map(|(x, vals)| {
            let vs: Vec<String> = vals.iter().map(expr::show).collect();
            format!("{} {}", x.words(), vs.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The expectations as people read them (`at least 1`, `0`, `one of a, b`):
/// the formats for people show these, JSON keeps [`expected_text`] and
/// has these only where they differ from it.
fn expected_words(expect: &Evaluated) -> Option<String> {
    let words = expect
        .iter()
        .map(|(x, vals)| {
            let vs = vals.iter().map(expr::show).collect::<Vec<_>>().join(", ");
            let word = match x.op {
                _ if x.one_of => "one of",
                BinOp::Eq => return vs,
                BinOp::Ne => "not",
                BinOp::Ge => "at least",
                BinOp::Le => "at most",
                BinOp::Gt => "more than",
                BinOp::Lt => "less than",
                _ => x.words(),
            };
            format!("{word} {vs}")
        })
        .collect::<Vec<_>>()
        .join(" and ");
    (words != expected_text(expect)).then_some(words)
}

/// Whether the setting's value meets one expectation: the comparison it
/// was lowered to, applied by the expression language
/// ([`ops::binary`]: `SETTING OP VALUE`, for `one_of` against any value).
/// `Err`: an ordering (`>=`, `<`, ...) of a value that is no number.
fn holds(x: &Expectation, actual: &Value, vals: &[Value]) -> Result<bool, String> {
    let test = |v: &Value| ops::binary(x.op, actual, v).and_then(|r| ops::truthy(&r));
    if x.one_of {
        vals.iter().try_fold(false, |hit, v| Ok(hit || test(v)?))
    } else {
        vals.iter().try_fold(true, |all, v| Ok(all && test(v)?))
    }
}

/// Judge a `setting:` rule over its context: one finding.
pub(super) fn check(
    rule: &Rule,
    cx: &RuleCx,
    ns: &str,
    key: &str,
    expect: &[Expectation],
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
            for x in expect {
                let vals: Result<Vec<Value>, Missing> =
                    x.values.iter().map(|e| eval(e, cx)).collect();
                match vals {
                    Ok(v) => evaluated.push((x, v)),
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
    let mut evaluated: Vec<(&Expectation, Vec<Value>)> = Vec::new();
    for x in expect {
        let mut vals = Vec::new();
        for e in &x.values {
            match eval(e, cx) {
                Ok(v) => vals.push(v),
                Err(m) => return missing_finding(rule, cx, m),
            }
        }
        evaluated.push((x, vals));
    }
    let expected = expected_text(&evaluated);
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(expected.clone()));
    let mut ok = true;
    for (x, vals) in &evaluated {
        match holds(x, &actual, vals) {
            Ok(h) => ok &= h,
            // an ordering of a value that is no number
            Err(_) => {
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
    let status = if ok { Status::Pass } else { Status::Fail };
    let mut f = rule_finding(rule, cx, status);
    f.expected = Some(expected.clone());
    f.expected_words = expected_words(&evaluated);
    f.actual = Some(expr::show(&actual));
    if let Some(raw) = &raw {
        let numeric = evaluated.iter().any(|(x, _)| x.orders());
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

#[cfg(test)]
mod tests {
    use super::holds;
    use crate::policy::{Check, Expectation, PolicySet};
    use crate::value::Value;

    /// The judge of `expect:` before it was lowered to the expression
    /// language (issue 47), by the entry's YAML key: `None` where it made
    /// the finding an `error` (an ordering of a value that is no number).
    fn before(key: &str, actual: &Value, vals: &[Value]) -> Option<bool> {
        match key {
            "equals" => Some(actual.loosely_equals(&vals[0])),
            "not" => Some(!actual.loosely_equals(&vals[0])),
            "one_of" => Some(vals.iter().any(|v| actual.loosely_equals(v))),
            _ => match (actual.as_f64(), vals[0].as_f64()) {
                (Some(a), Some(b)) => Some(match key {
                    "min" => a >= b,
                    "max" => a <= b,
                    "gt" => a > b,
                    _ => a < b,
                }),
                _ => None,
            },
        }
    }

    const KEYS: [&str; 7] = ["equals", "not", "one_of", "min", "max", "gt", "lt"];

    /// The `expect:` entry `key` as the policy compiler lowers it.
    fn lowered(key: &str) -> Expectation {
        let value = if key == "one_of" { "[1]" } else { "1" };
        let yaml = format!(
            "policy: t\ntitle: T\nrules:\n  - id: t.r\n    title: t\n    severity: low\n    \
             setting: sysctl.vm.swappiness\n    expect: {{ {key}: {value} }}\n    why: w\n    \
             fix: f\n    references: []\n"
        );
        let mut set = PolicySet::new();
        set.add_str("t.yaml", &yaml).unwrap();
        let Check::Setting { expect, .. } = &set.rules()[0].check else {
            panic!("{key}: not a setting check");
        };
        assert_eq!(expect.len(), 1, "{key}");
        expect[0].clone()
    }

    /// Values of every type a setting or an expectation takes: numbers,
    /// sizes and their texts, the spellings of a boolean, text in two cases
    /// and with spaces, lists (a port range read as two numbers).
    fn spread() -> Vec<Value> {
        let s = |t: &str| Value::Str(t.into());
        let mut out = vec![
            Value::Number(0.0),
            Value::Number(1.0),
            Value::Number(-1.0),
            Value::Number(1.5),
            Value::Number(1024.0),
            Value::Number(1073741824.0),
            Value::Size(1024.0),
            Value::Size(1073741824.0),
            Value::Size(0.0),
            Value::Bool(true),
            Value::Bool(false),
            Value::List(vec![]),
            Value::List(vec![Value::Number(1.0)]),
            Value::List(vec![s("32768"), s("60999")]),
            Value::List(vec![Value::Number(32768.0), Value::Number(60999.0)]),
            Value::Record([("a".to_string(), s("1"))].into_iter().collect()),
        ];
        for t in [
            "",
            "0",
            "1",
            "1.0",
            " 1 ",
            "-1",
            "1.5",
            "1024",
            "1K",
            "1k",
            "1G",
            "1073741824",
            "ON",
            "on",
            "OFF",
            "off",
            "true",
            "TRUE",
            "false",
            "yes",
            "no",
            "abc",
            "ABC",
            " a  b ",
            "a b",
            "32768 60999",
            "32768\t60999",
            "NaN",
            "inf",
            "1e3",
        ] {
            out.push(s(t));
        }
        out
    }

    /// Issue 47: `expect:` entries are lowered at load to the expression
    /// language's comparisons (`min` is `>=`, `one_of` `==` any) and judged
    /// by its one evaluator; for every entry and every pair (and, for
    /// `one_of`, every two) of values of each type, the verdict is the one
    /// the former judge gave, `error` included.
    #[test]
    fn lowered_expect_judges_every_value_type_as_the_former_judge() {
        let vals = spread();
        for key in KEYS {
            let x = lowered(key);
            for actual in &vals {
                for a in &vals {
                    let one = [a.clone()];
                    assert_eq!(
                        holds(&x, actual, &one).ok(),
                        before(key, actual, &one),
                        "{key}: {actual:?} against {a:?}"
                    );
                    if x.one_of {
                        for b in &vals {
                            let two = [a.clone(), b.clone()];
                            assert_eq!(
                                holds(&x, actual, &two).ok(),
                                before(key, actual, &two),
                                "{key}: {actual:?} against {two:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The words of the expected text stay as they were per entry.
    #[test]
    fn lowered_expect_keeps_its_words() {
        let words: Vec<&str> = KEYS.iter().map(|k| lowered(k).words()).collect();
        assert_eq!(words, ["=", "not", "one of", ">=", "<=", ">", "<"]);
        let orders: Vec<bool> = KEYS.iter().map(|k| lowered(k).orders()).collect();
        assert_eq!(orders, [false, false, false, true, true, true, true]);
    }

    /// A fleet report's policy digest hashes the compiled rules' Debug
    /// text: a lowered entry keeps the former `(ExpectOp, values)` spelling,
    /// so the digest of an unchanged policy stays what it was.
    #[test]
    fn lowered_expect_keeps_the_debug_text_the_policy_digest_hashes() {
        let debug: Vec<String> = KEYS.iter().map(|k| format!("{:?}", lowered(k))).collect();
        let one = "[Lit(Number(1.0))]";
        assert_eq!(
            debug,
            ["Equals", "Not", "OneOf", "Min", "Max", "Gt", "Lt"].map(|n| format!("({n}, {one})"))
        );
    }

    fn value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        prop_oneof![
            any::<f64>().prop_map(Value::Number),
            (-1e12f64..1e12).prop_map(Value::Size),
            any::<bool>().prop_map(Value::Bool),
            "[ 0-9.eEkKmMgGonfOFNa-]{0,8}".prop_map(Value::Str),
            proptest::collection::vec("[0-9 ]{0,4}".prop_map(Value::Str), 0..3)
                .prop_map(Value::List),
        ]
    }

    proptest::proptest! {
        /// As [`lowered_expect_judges_every_value_type_as_the_former_judge`],
        /// over random numbers, sizes, texts and lists.
        #[test]
        fn lowered_expect_judges_random_values_as_the_former_judge(
            k in 0..KEYS.len(),
            actual in value(),
            vals in proptest::collection::vec(value(), 1..3),
        ) {
            let key = KEYS[k];
            let vals = if key == "one_of" { vals } else { vals[..1].to_vec() };
            proptest::prop_assert_eq!(
                holds(&lowered(key), &actual, &vals).ok(),
                before(key, &actual, &vals)
            );
        }
    }
}
