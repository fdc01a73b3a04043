//! An item's `${EXPR}` texts evaluated in the rule's scope: a list item's
//! fields ([`item_text`], each text parsed once per thread and kept in a
//! memo; [`resolve_fields`]), an `applies` path ([`item_path`]) and a
//! template rendered as plain text ([`render_plain`]), and a list item's
//! `when` parsed once per thread ([`item_when`]). Must not do I/O or judge
//! anything: it only gives values (or why they are missing).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::eval::RuleCx;
use crate::expr::eval::{eval, InScope, Missing, Scope};
use crate::expr::Expr;
use crate::policy::{Applies, Template, TemplatePart};
use crate::value::Value;

/// A template rendered as plain text (a key, a path): each placeholder's
/// value as it is, nothing quoted or folded.
pub(super) fn render_plain(t: &Template, cx: &RuleCx) -> Result<String, Missing> {
    let mut out = String::new();
    for p in &t.parts {
        match p {
            TemplatePart::Text(s) => out.push_str(s),
            TemplatePart::Expr(e) => out.push_str(&eval(e, cx)?.to_plain()),
        }
    }
    Ok(out)
}

/// A list item's field text with its `${EXPR}` placeholders evaluated: a
/// field that is one placeholder keeps the value's type (a size stays a
/// size), text around placeholders makes text (`${params.base}/data`).
/// The text is parsed once ([`parsed`]), not on each use.
pub(super) fn item_text(field: &str, t: &str, cx: &Scope) -> Result<Value, Missing> {
    parsed(t).eval(field, cx)
}

/// A list item field's text with its `${EXPR}` placeholders parsed:
/// [`ItemText::eval`] gives what evaluating the text gives, errors
/// included (a placeholder that does not parse is its error when
/// evaluation reaches it, with the same message).
enum ItemText {
    /// The text is one placeholder: its value keeps its type.
    Whole(Result<Expr, Unparsed>),
    /// Text around placeholders, in order.
    Parts(Vec<Piece>),
}

/// A part of an [`ItemText::Parts`].
enum Piece {
    /// Text as written.
    Text(String),
    /// A placeholder, or why it is not one.
    Expr(Result<Expr, Unparsed>),
    /// A `${` without its `}`: the parts end here.
    Unclosed,
}

/// A placeholder that did not parse: its text and the parser's message.
struct Unparsed {
    inner: String,
    message: String,
}

impl Unparsed {
    fn missing(&self, field: &str) -> Missing {
        Missing::Error(format!(
            "item field `{field}`: `{}`: {}",
            self.inner, self.message
        ))
    }
}

impl ItemText {
    fn parse(t: &str) -> ItemText {
        let parse = |inner: &str| {
            crate::expr::parse(inner).map_err(|e| Unparsed {
                inner: inner.to_string(),
                message: e.message,
            })
        };
        if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
            if !inner.contains('}') {
                return ItemText::Whole(parse(inner));
            }
        }
        let mut parts = Vec::new();
        let mut rest = t;
        while let Some(i) = rest.find("${") {
            parts.push(Piece::Text(rest[..i].to_string()));
            let after = &rest[i + 2..];
            let Some(end) = after.find('}') else {
                parts.push(Piece::Unclosed);
                return ItemText::Parts(parts);
            };
            parts.push(Piece::Expr(parse(&after[..end])));
            rest = &after[end + 1..];
        }
        parts.push(Piece::Text(rest.to_string()));
        ItemText::Parts(parts)
    }

    /// The value of the item field `field` holding this text, in `cx`.
    fn eval(&self, field: &str, cx: &Scope) -> Result<Value, Missing> {
        match self {
            ItemText::Whole(e) => eval(e.as_ref().map_err(|u| u.missing(field))?, cx),
            ItemText::Parts(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        Piece::Text(s) => out.push_str(s),
                        Piece::Expr(e) => out.push_str(
                            &eval(e.as_ref().map_err(|u| u.missing(field))?, cx)?.to_plain(),
                        ),
                        Piece::Unclosed => {
                            return Err(Missing::Error(format!(
                                "item field `{field}`: `${{` without its `}}`"
                            )))
                        }
                    }
                }
                Ok(Value::Str(out))
            }
        }
    }
}

/// Item-field texts parsed on this thread, by text: a text is parsed
/// once, for every rule, item and host that uses it (the plan, then each
/// host's evaluation; a fleet's worker threads each keep their own).
/// Parsing is a function of the text alone, so the memo cannot change a
/// result; it is emptied when it reaches [`MAX_PARSED`] texts.
const MAX_PARSED: usize = 512;

thread_local! {
    static PARSED: RefCell<HashMap<String, Rc<ItemText>>> = RefCell::new(HashMap::new());
}

/// `t` parsed as an item field's text, from the memo when it was before.
fn parsed(t: &str) -> Rc<ItemText> {
    PARSED.with(|m| {
        if let Some(p) = m.borrow().get(t) {
            return Rc::clone(p);
        }
        let p = Rc::new(ItemText::parse(t));
        let mut m = m.borrow_mut();
        if m.len() >= MAX_PARSED {
            m.clear();
        }
        m.insert(t.to_string(), Rc::clone(&p));
        p
    })
}

thread_local! {
    static WHENS: RefCell<HashMap<String, Rc<Result<Applies, String>>>> = RefCell::new(HashMap::new());
}

/// A list item's `when` text as the condition it is (`Applies::When`), or
/// the parser's message: parsed once per thread, for every item and host
/// that has it, as [`parsed`] does for field texts (and emptied the same
/// way at [`MAX_PARSED`] texts).
pub(super) fn item_when(w: &str) -> Rc<Result<Applies, String>> {
    WHENS.with(|m| {
        if let Some(p) = m.borrow().get(w) {
            return Rc::clone(p);
        }
        let p = Rc::new(
            crate::expr::parse(w)
                .map(|e| Applies::When(e, w.to_string()))
                .map_err(|e| e.message),
        );
        let mut m = m.borrow_mut();
        if m.len() >= MAX_PARSED {
            m.clear();
        }
        m.insert(w.to_string(), Rc::clone(&p));
        p
    })
}

/// A list item's fields with `${EXPR}` in them, evaluated in the rule's
/// scope; a field that cannot be evaluated here is left out with its reason
/// (reading it is then that reason: a field only some templates use does
/// not make the whole item unknown).
pub(super) fn resolve_fields(value: &Value, cx: &RuleCx) -> (Value, BTreeMap<String, Missing>) {
    let Value::Record(m) = value else {
        return (value.clone(), BTreeMap::new());
    };
    let mut out = m.clone();
    let errors = apply_fields(&mut out, field_values(m, cx));
    (Value::Record(out), errors)
}

/// The values of a record's `${EXPR}` fields (`when` aside), in the
/// record's order, each evaluated in `cx` over the record as written.
pub(super) fn field_values(
    m: &BTreeMap<String, Value>,
    cx: &RuleCx,
) -> Vec<(String, Result<Value, Missing>)> {
    let mut out = Vec::new();
    let scope = cx.scope();
    for (k, v) in m {
        if k == "when" {
            continue;
        }
        if let Value::Str(t) = v {
            if t.contains("${") {
                out.push((k.clone(), item_text(k, t, &scope)));
            }
        }
    }
    out
}

/// [`field_values`] written into the record they came from: a value
/// replaces its text, a field that has none is taken out and its reason
/// returned.
pub(super) fn apply_fields(
    m: &mut BTreeMap<String, Value>,
    values: Vec<(String, Result<Value, Missing>)>,
) -> BTreeMap<String, Missing> {
    let mut errors = BTreeMap::new();
    for (k, v) in values {
        match v {
            Ok(x) => {
                m.insert(k, x);
            }
            Err(e) => {
                m.remove(&k);
                errors.insert(k, e);
            }
        }
    }
    errors
}

/// `${...}` in an `applies` path, over the item (`exists: "${dir.path}"`).
pub(super) fn item_path(p: &str, cx: &RuleCx) -> Result<String, Missing> {
    let Some(inner) = p.strip_prefix("${").and_then(|x| x.strip_suffix('}')) else {
        return Ok(p.to_string());
    };
    let e = crate::expr::parse(inner).map_err(|e| Missing::Error(e.message))?;
    Ok(eval(&e, cx)?.to_plain())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::item_text;
    use crate::expr::eval::{Missing, Scope};
    use crate::value::Value;

    #[test]
    fn item_text_parsed_once_reads_as_written_each_time() {
        // `params.n` is 3; nothing else has a value
        let params: BTreeMap<String, Value> = [("n".to_string(), Value::Number(3.0))].into();
        let n = Scope::constant(Some(&params), "a test");
        for _ in 0..2 {
            // the second round comes from the memo: same values, same errors
            assert_eq!(item_text("f", "${params.n}", &n), Ok(Value::Number(3.0)));
            assert_eq!(
                item_text("f", "a ${params.n}/${params.n} b", &n),
                Ok(Value::Str("a 3/3 b".into()))
            );
            let err = |f: &str, t: &str| match item_text(f, t, &n) {
                Err(Missing::Error(e)) => e,
                other => panic!("{other:?}"),
            };
            assert_eq!(
                err("g", "x ${params.n"),
                "item field `g`: `${` without its `}`"
            );
            assert!(
                err("h", "${params.}").starts_with("item field `h`: `params.`: "),
                "{}",
                err("h", "${params.}")
            );
            // the first failing placeholder decides, in the text's order
            assert_eq!(err("k", "${params.m} ${params.n"), "unknown parameter `m`");
        }
    }
}
