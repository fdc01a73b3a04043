//! `assert:` rules: one boolean expression over the rule's context; the
//! expected text is the expression's canonical text (and, for people, the
//! same in words with the values computed on this host) and the actual
//! text the settings it read. Must not do I/O or evaluate other check kinds.

use std::collections::BTreeSet;

use super::eval::RuleCx;
use super::finding::{brief, finish, missing_finding, rule_finding};
use crate::expr::eval::{eval, truthy};
use crate::expr::{BinOp, Expr, UnOp};
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
    // for people: a record's fields the check reads, not the whole record
    let read = fields_read(rule, e);
    let (actual, shown) = {
        // each setting read once, in the order read (borrowed: the words
        // below evaluate again, after this is done)
        let touched = cx.touched.borrow();
        let mut seen = BTreeSet::new();
        let mut actual = Vec::new();
        let mut shown = Vec::new();
        for (k, s) in touched.iter().filter(|(k, _)| seen.insert(k.as_str())) {
            let whole = format!("{k} = {}", brief(&s.value));
            shown.push(match &s.value {
                Value::Record(m) if read.iter().any(|f| m.contains_key(f.as_str())) => {
                    let parts: Vec<String> = read
                        .iter()
                        .filter_map(|f| Some(format!("{f}: {}", m.get(f.as_str())?.to_plain())))
                        .collect();
                    // record namespaces (mount, fstab, ext4) are keyed by mount point
                    format!("{}, mount: {k}", parts.join(", "))
                }
                _ => whole.clone(),
            });
            actual.push(whole);
        }
        (actual, shown)
    };
    let mut f = rule_finding(rule, cx, status);
    let expected = assert_text(rule);
    // after `touched` is taken: the words evaluate the sides again
    let words = in_words(rule, cx, e, 0);
    if expected != words {
        f.expected_words = Some(words);
    }
    f.expected = Some(expected.clone());
    f.actual = (!shown.is_empty()).then(|| shown.join(", "));
    let differs = shown != actual;
    let actual = actual.join(", ");
    if differs {
        f.actual_whole = Some(actual.clone());
    }
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(expected));
    cx.special
        .borrow_mut()
        .insert("actual".into(), Value::Str(actual));
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

/// Deeper than any `let` chain a policy writes; the words stop there.
const MAX_WORDS_DEPTH: usize = 32;

/// The assertion in words: each comparison as the setting or field its left
/// side reads, the operator in words and the value of the other side on
/// this host (`pool >= target` is `innodb_buffer_pool_size at least 10.6
/// GiB`); a comparison of two computed values, and anything but a
/// comparison, `and`, `or`, `not` or a read, keeps its canonical text.
fn in_words(rule: &Rule, cx: &RuleCx, e: &Expr, depth: usize) -> String {
    if depth > MAX_WORDS_DEPTH {
        return e.to_string();
    }
    match e {
        Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
            let side = |x: &Expr| match x {
                Expr::Binary(o @ (BinOp::And | BinOp::Or), ..) if o != op => {
                    format!("({})", in_words(rule, cx, x, depth + 1))
                }
                _ => in_words(rule, cx, x, depth + 1),
            };
            let word = if *op == BinOp::And { "and" } else { "or" };
            format!("{} {word} {}", side(a), side(b))
        }
        Expr::Binary(op, a, b) => {
            let Some(word) = comparison(*op) else {
                return e.to_string();
            };
            match (read_name(rule, cx, a, depth), read_name(rule, cx, b, depth)) {
                (Some(name), _) => format!("{name} {word} {}", value(cx, b)),
                (None, Some(name)) => {
                    let flipped = comparison(flip(*op)).unwrap_or(word);
                    format!("{name} {flipped} {}", value(cx, a))
                }
                // two computed sides: the name the policy gave the left
                (None, None) => match (label(rule, a), label(rule, b)) {
                    (Some(name), _) => format!("{name} {word} {}", value(cx, b)),
                    (None, Some(name)) => {
                        let flipped = comparison(flip(*op)).unwrap_or(word);
                        format!("{name} {flipped} {}", value(cx, a))
                    }
                    (None, None) => e.to_string(),
                },
            }
        }
        Expr::Unary(UnOp::Not, x) => match x.as_ref() {
            // `not a == b` is `a is not b`
            Expr::Binary(op, a, b) if comparison(*op).is_some() => in_words(
                rule,
                cx,
                &Expr::Binary(negate(*op), a.clone(), b.clone()),
                depth + 1,
            ),
            Expr::Binary(BinOp::And | BinOp::Or, ..) => {
                format!("not ({})", in_words(rule, cx, x, depth + 1))
            }
            _ => format!("not {}", in_words(rule, cx, x, depth + 1)),
        },
        other => read_name(rule, cx, other, depth).unwrap_or_else(|| other.to_string()),
    }
}

/// A comparison operator in words, `None` for any other.
fn comparison(op: BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Eq => "is",
        BinOp::Ne => "is not",
        BinOp::Lt => "less than",
        BinOp::Le => "at most",
        BinOp::Gt => "more than",
        BinOp::Ge => "at least",
        _ => return None,
    })
}

/// The comparison that holds when `op` does not (`not a < b` is `a >= b`).
fn negate(op: BinOp) -> BinOp {
    match op {
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        other => other,
    }
}

/// The comparison with its sides swapped (`1 < x` is `x > 1`).
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

/// The name of what an operand reads from the host, if it reads one thing
/// directly: a setting's key, a record's field, a fact, the `for_each`
/// item, or a `let` bound to one of these. A computed operand has none.
fn read_name(rule: &Rule, cx: &RuleCx, x: &Expr, depth: usize) -> Option<String> {
    if depth > MAX_WORDS_DEPTH {
        return None;
    }
    match x {
        Expr::Setting(_, key) => match key.as_ref() {
            Expr::Lit(Value::Str(k)) => Some(k.clone()),
            k => match eval(k, cx) {
                Ok(Value::Str(k)) => Some(k),
                _ => None,
            },
        },
        Expr::Field(base, field) => {
            let reads = matches!(base.as_ref(), Expr::Setting(..))
                || read_name(rule, cx, base, depth + 1).is_some();
            reads.then(|| field.clone())
        }
        Expr::Name(n) => match rule.lets.get(n) {
            Some(l) => read_name(rule, cx, l, depth + 1),
            None => (crate::expr::FACTS.contains(&n.as_str())
                || cx.special.borrow().contains_key(n)
                || cx.item.as_ref().is_some_and(|b| b.name == *n))
            .then(|| n.clone()),
        },
        _ => None,
    }
}

/// The name the policy gives a computed operand: a record field's name
/// (`entry.atime` is `atime`) or a `let`'s (`heap`).
fn label(rule: &Rule, x: &Expr) -> Option<String> {
    match x {
        Expr::Field(_, field) => Some(field.clone()),
        Expr::Name(n) if rule.lets.contains_key(n) => Some(n.clone()),
        _ => None,
    }
}

/// An operand's value on this host as people read it (a string unquoted,
/// a size with its unit), or its canonical text when it cannot be computed.
fn value(cx: &RuleCx, x: &Expr) -> String {
    match eval(x, cx) {
        Ok(Value::Str(s)) if s.is_empty() => "empty".into(),
        Ok(v) => brief(&v),
        Err(_) => x.to_string(),
    }
}
