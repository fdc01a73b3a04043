//! An item's `${EXPR}` texts, compiled at load, evaluated in the rule's
//! scope: a list item's fields ([`item_text`], [`field_values`]), an
//! `applies` path ([`item_path`]) and a template rendered as plain text
//! ([`render_plain`]). Must not do I/O, parse or judge anything: it only
//! gives values (or why they are missing).

use std::collections::BTreeMap;

use super::eval::RuleCx;
use crate::expr::eval::{eval, InScope, Missing, Scope};
use crate::policy::{CompiledItem, ItemPiece, ItemText, PathText, Template, TemplatePart};
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

/// A list item's field text, compiled at load, with its `${EXPR}`
/// placeholders evaluated in `cx`: a field that is one placeholder keeps
/// the value's type (a size stays a size), text around placeholders makes
/// text (`${params.base}/data`); a placeholder that did not parse is its
/// error, as when it was parsed here.
pub(super) fn item_text(text: &ItemText, field: &str, cx: &Scope) -> Result<Value, Missing> {
    match text {
        ItemText::Whole(e) => eval(e.as_ref().map_err(|u| u.missing(field))?, cx),
        ItemText::Parts(parts) => {
            let mut out = String::new();
            for p in parts {
                match p {
                    ItemPiece::Text(s) => out.push_str(s),
                    ItemPiece::Expr(e) => out
                        .push_str(&eval(e.as_ref().map_err(|u| u.missing(field))?, cx)?.to_plain()),
                    ItemPiece::Unclosed => {
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

/// The values of a list item's `${EXPR}` fields (`when` aside), compiled
/// at load, in the item's field order, each evaluated in `cx` (which binds
/// the item as written). An item that is not from a list has none.
pub(super) fn field_values(
    compiled: Option<&CompiledItem>,
    cx: &RuleCx,
) -> Vec<(String, Result<Value, Missing>)> {
    let Some(c) = compiled else {
        return Vec::new();
    };
    let scope = cx.scope();
    c.fields
        .iter()
        .map(|(k, t)| (k.clone(), item_text(t, k, &scope)))
        .collect()
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
pub(super) fn item_path(p: &PathText, cx: &RuleCx) -> Result<String, Missing> {
    match p.expr() {
        None => Ok(p.to_string()),
        Some(Ok(e)) => Ok(eval(e, cx)?.to_plain()),
        Some(Err(message)) => Err(Missing::Error(message.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::item_text;
    use crate::expr::eval::{Missing, Scope};
    use crate::policy::ItemText;
    use crate::value::Value;

    #[test]
    fn an_item_text_compiled_at_load_reads_as_written_and_keeps_its_errors() {
        // `params.n` is 3; nothing else has a value
        let params: BTreeMap<String, Value> = [("n".to_string(), Value::Number(3.0))].into();
        let n = Scope::constant(Some(&params), "a test");
        let text = |f: &str, t: &str| item_text(&ItemText::parse(t), f, &n);
        assert_eq!(text("f", "${params.n}"), Ok(Value::Number(3.0)));
        assert_eq!(
            text("f", "a ${params.n}/${params.n} b"),
            Ok(Value::Str("a 3/3 b".into()))
        );
        let err = |f: &str, t: &str| match text(f, t) {
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
