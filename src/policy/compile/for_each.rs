//! `for_each:` compiled: the set it ranges over (a list parameter, a flat
//! namespace's keys matching a glob, a record namespace's records), the
//! name each item is bound to, the items' subjects and aliases, and the
//! `${...}` fields of list items. Must not evaluate host data.

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::compiler::{Compiler, Place, RuleScope};
use crate::catalogue::{FACT_NAMES, FLAT_NAMESPACES, RECORD_NAMESPACES};
use crate::expr::{self, Expr};
use crate::policy::{
    Applies, CompiledItem, ConstError, Filter, ForEach, ForEachSource, ForEachSpec, ItemText,
    ParamValue, Problem, RuleSpec, Template, TemplatePart,
};
use crate::value::Value;

/// Names a `for_each` item cannot be bound to: they mean something already.
pub(super) const RESERVED_BINDS: &[&str] = &[
    "actual", "expected", "setting", "source", "missing", "extra", "params", "true", "false",
    "and", "or", "not",
];

/// A `where:` over records in the old spelling, where a bare name was
/// first a field of the record: each bare name that is no fact, `let` or
/// the bound name itself becomes `BIND.NAME`, and is added to `bare`.
fn bind_bare_fields(e: &mut Expr, bind: &str, spec: &RuleSpec, bare: &mut BTreeSet<String>) {
    let mut go = |x: &mut Expr| bind_bare_fields(x, bind, spec, bare);
    match e {
        Expr::Name(n)
            if n != bind && !FACT_NAMES.contains(&n.as_str()) && !spec.lets.contains_key(n) =>
        {
            let field = std::mem::take(n);
            *e = Expr::Field(Box::new(Expr::Name(bind.to_string())), field.clone());
            bare.insert(field);
        }
        Expr::Lit(_) | Expr::Name(_) | Expr::Param(_) => {}
        Expr::List(xs) | Expr::Call(_, xs) => xs.iter_mut().for_each(go),
        Expr::Setting(_, x) | Expr::Field(x, _) | Expr::Unary(_, x) => go(x),
        Expr::Binary(_, a, b) => {
            go(a);
            go(b);
        }
    }
}

/// Each item of a list parameter compiled, in the list's order (none for a
/// value that is not a list).
pub(in crate::policy) fn compile_items(list: Option<&Value>) -> Vec<CompiledItem> {
    let Some(Value::List(items)) = list else {
        return Vec::new();
    };
    items.iter().map(compile_item).collect()
}

/// One item compiled: its `${...}` fields and its `when`.
fn compile_item(item: &Value) -> CompiledItem {
    let Value::Record(m) = item else {
        return CompiledItem::default();
    };
    let mut out = CompiledItem::default();
    for (k, v) in m {
        if k == "when" {
            let w = v.to_plain();
            let cond = expr::parse(&w)
                .map(|e| Applies::When(e, w.clone()))
                .map_err(|e| e.message);
            out.when = Some((w, cond));
            continue;
        }
        if let Value::Str(t) = v {
            if t.contains("${") {
                out.fields.push((k.clone(), ItemText::parse(t)));
            }
        }
    }
    out
}

/// `for_each:`: exactly one set (a list parameter, `NS.GLOB` keys of a flat
/// namespace whose only wildcard is `*`, or a record namespace with an
/// optional `where`), a bound name that shadows nothing, the `subject`
/// template, and a `setting:` key built with `${...}`.
pub(super) fn compile_for_each(
    c: &mut Compiler,
    scope: &RuleScope,
    spec: &RuleSpec,
    fe: &Spanned<ForEachSpec>,
    bind: String,
) -> Option<ForEach> {
    let id = &scope.id;
    let f = &fe.value;
    let bad = |c: &mut Compiler, place: Place, detail: String| {
        c.problem(place, id, Problem::InvalidForEach { detail });
    };
    let whole = Place::at(&fe.referenced);
    let n = [f.param.is_some(), f.keys.is_some(), f.records.is_some()]
        .iter()
        .filter(|x| **x)
        .count();
    if n != 1 {
        let found = if n == 0 { "none" } else { "several" };
        bad(
            c,
            whole,
            format!("needs exactly one of `param`, `keys` or `records`, found {found}"),
        );
        return None;
    }
    let bind_place = f.bind.as_ref().map(Place::of).unwrap_or(whole);
    let ident = bind
        .chars()
        .next()
        .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
        && bind
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    if !ident {
        bad(
            c,
            bind_place,
            format!("`as: {bind}`: the bound name must be a plain name (letters, digits, `_`)"),
        );
    } else if RESERVED_BINDS.contains(&bind.as_str())
        || FACT_NAMES.contains(&bind.as_str())
        || FLAT_NAMESPACES.contains(&bind.as_str())
        || RECORD_NAMESPACES.contains(&bind.as_str())
        || spec.lets.contains_key(&bind)
    {
        bad(
            c,
            bind_place,
            format!("`as: {bind}` would hide the fact, namespace, `let` or word of that name; pick another"),
        );
    }
    if let (Some(w), Some(_)) = (&f.filter, &f.param) {
        bad(
            c,
            Place::of(w),
            "`where` filters `keys` and `records`; a list parameter's items have `when:`".into(),
        );
    }
    // `where` is read in the rule's scope, the item bound to its name
    // (`f.holds_secret`, `iface.key`); a record's field written bare (the
    // old spelling) is read as `BIND.FIELD`, with a warning saying so
    let filter = match &f.filter {
        None => None,
        Some(w) => match expr::parse(&w.value) {
            Ok(mut e) => {
                scope.check_params(c, &e, Place::of(w));
                let mut written = None;
                if f.records.is_some() && ident {
                    let mut bare = BTreeSet::new();
                    let as_written = e.clone();
                    bind_bare_fields(&mut e, &bind, spec, &mut bare);
                    if !bare.is_empty() {
                        written = Some(as_written);
                    }
                    for name in bare {
                        c.warning(
                            Place::of(w),
                            id,
                            Problem::WhereBareField {
                                name,
                                bind: bind.clone(),
                            },
                        );
                    }
                }
                Some(Filter {
                    expr: e,
                    text: w.value.clone(),
                    written,
                })
            }
            Err(err) => {
                c.problem(
                    Place::of(w).plus(err.offset),
                    id,
                    Problem::InvalidExpression {
                        context: "for_each.where".into(),
                        reason: err.message,
                    },
                );
                None
            }
        },
    };
    let source = if let Some(p) = &f.param {
        let name = p.value.trim();
        match scope.params.get(name) {
            Some(crate::value::Value::List(_)) => ForEachSource::Param(name.to_string()),
            Some(other) => {
                bad(
                    c,
                    Place::of(p),
                    format!(
                        "`param: {name}` is a {}, not a list of items (`{name}: [{{id: a, ...}}, ...]`)",
                        other.type_name()
                    ),
                );
                return None;
            }
            None => {
                let keys: Vec<&str> = scope.params.keys().map(String::as_str).collect();
                c.problem(
                    Place::of(p),
                    id,
                    Problem::UnknownParam {
                        suggestion: expr::suggest(name, &keys),
                        name: name.to_string(),
                    },
                );
                return None;
            }
        }
    } else if let Some(k) = &f.keys {
        let Some((ns, pattern)) = k
            .value
            .split_once('.')
            .filter(|(ns, p)| FLAT_NAMESPACES.contains(ns) && !p.is_empty())
        else {
            bad(
                c,
                Place::of(k),
                format!(
                    "`keys: {}` is not NAMESPACE.GLOB over a flat namespace ({})",
                    k.value,
                    FLAT_NAMESPACES.join(", ")
                ),
            );
            return None;
        };
        if let Some(i) = pattern.find(['?', '[', ']', '{', '}']) {
            bad(
                c,
                Place::of(k).plus(ns.len() + 1 + i),
                format!(
                    "`keys: {}`: the only wildcard is `*` (each `*` binds the text it matched)",
                    k.value
                ),
            );
            return None;
        }
        if !pattern.contains('*') {
            bad(
                c,
                Place::of(k),
                format!(
                    "`keys: {}` has no `*`: a rule over one key needs no `for_each`",
                    k.value
                ),
            );
            return None;
        }
        ForEachSource::Keys {
            ns: ns.to_string(),
            pattern: pattern.to_string(),
            filter,
        }
    } else {
        let r = f.records.as_ref()?;
        let ns = r.value.trim();
        if !RECORD_NAMESPACES.contains(&ns) {
            bad(
                c,
                Place::of(r),
                format!(
                    "`records: {ns}` is not a record namespace ({}){}",
                    RECORD_NAMESPACES.join(", "),
                    expr::suggest(ns, RECORD_NAMESPACES)
                ),
            );
            return None;
        }
        ForEachSource::Records {
            ns: ns.to_string(),
            filter,
        }
    };
    let subject = spec.subject.as_ref().map(|s| {
        let t = c.template(s, id, "subject", &scope.names);
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                scope.check_params(c, e, Place::of(s));
            }
        }
        t
    });
    let setting_key = spec
        .setting
        .as_ref()
        .filter(|s| s.value.contains("${"))
        .and_then(|s| {
            let start = s.value.find('.')? + 1;
            Some(dollar_template(c, scope, s, start))
        });
    let alias = spec.alias.as_ref().and_then(|s| {
        if !matches!(source, ForEachSource::Param(_)) {
            bad(
                c,
                Place::of(s),
                "`alias` names the items of a `param` list (keys and records have no fixed ids)".into(),
            );
            return None;
        }
        let t = c.template(s, id, "alias", &scope.names);
        let plain = t.parts.iter().all(|p| match p {
            TemplatePart::Text(_) => true,
            TemplatePart::Expr(Expr::Field(b, _)) => matches!(b.as_ref(), Expr::Name(n) if *n == bind),
            _ => false,
        });
        if !plain {
            bad(
                c,
                Place::of(s),
                format!("`alias` placeholders are the item's fields (`{{{bind}.id}}`), so the ids are known before a host is read"),
            );
            return None;
        }
        Some(t)
    });
    let mut except = Vec::new();
    for (item, why) in &f.except {
        if why.value.trim().is_empty() {
            bad(
                c,
                Place::of(why),
                format!("`except: {{{item}: ...}}` needs the reason in plain words, which reports show for the skipped item"),
            );
        } else {
            except.push((item.clone(), why.value.trim().to_string()));
        }
    }
    let mut item_params = BTreeSet::new();
    if let ForEachSource::Param(p) = &source {
        if let Some(Value::List(items)) = scope.params.get(p) {
            for item in items {
                let Value::Record(m) = item else { continue };
                for v in m.values() {
                    let mut rest = v.to_plain();
                    while let Some(i) = rest.find("params.") {
                        rest = rest[i + "params.".len()..].to_string();
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        item_params.insert(name);
                    }
                }
            }
        }
    }
    Some(ForEach {
        source,
        bind,
        subject,
        setting_key,
        alias,
        item_params: item_params.into_iter().collect(),
        except,
        items: Vec::new(),
    })
}

/// The text of `s` from byte `start` as a template whose placeholders are
/// written `${EXPR}` (a `setting:` key built from a `for_each` item).
pub(super) fn dollar_template(
    c: &mut Compiler,
    scope: &RuleScope,
    s: &Spanned<String>,
    start: usize,
) -> Template {
    let text = &s.value[start..];
    let mut parts = Vec::new();
    let mut rest = text;
    let mut at = start;
    while let Some(i) = rest.find("${") {
        if i > 0 {
            parts.push(TemplatePart::Text(rest[..i].to_string()));
        }
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            c.problem(
                Place::of(s).plus(at + i),
                &scope.id,
                Problem::UnclosedPlaceholder {
                    context: "setting".into(),
                },
            );
            rest = "";
            break;
        };
        let inner = &after[..end];
        let place = Place::of(s).plus(at + i + 2);
        if let Some(e) = c.expr_at(place, inner, &scope.id, "setting", &scope.names) {
            scope.check_params(c, &e, place);
            parts.push(TemplatePart::Expr(e));
        }
        at += i + 2 + end + 1;
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Text(rest.to_string()));
    }
    Template {
        parts,
        source: text.to_string(),
    }
}

/// The items of a list parameter: every `${EXPR}` field and `when`
/// condition parses (they are evaluated per host, in the rule's scope).
pub(super) fn check_items(
    c: &mut Compiler,
    pid: &str,
    name: &str,
    v: &Spanned<ParamValue>,
    items: &[BTreeMap<String, ParamValue>],
) {
    for (i, item) in items.iter().enumerate() {
        for (field, fv) in item {
            let ParamValue::Text(t) = fv else { continue };
            let mut exprs: Vec<&str> = Vec::new();
            if field == "when" {
                exprs.push(t);
            } else {
                let mut rest = t.as_str();
                while let Some(i) = rest.find("${") {
                    let after = &rest[i + 2..];
                    let end = after.find('}').unwrap_or(after.len());
                    exprs.push(&after[..end]);
                    rest = after.get(end + 1..).unwrap_or("");
                }
            }
            for inner in exprs {
                let Err(e) = expr::parse(inner) else { continue };
                c.problem(
                    Place::at(&v.referenced),
                    pid,
                    Problem::InvalidParam {
                        name: name.to_string(),
                        reason: ConstError::Syntax(format!(
                            "item {} field `{field}`: `{inner}`: {}",
                            i + 1,
                            e.message
                        )),
                    },
                );
            }
        }
    }
}
