//! `remedy:` compiled, or derived from a check when it is unambiguous: what
//! `driftaudit fix` changes when the rule fails. Must not plan a fix.

use serde_saphyr::Spanned;

use super::compiler::{Compiler, Place, RuleScope};
use crate::catalogue::FLAT_NAMESPACES;
use crate::expr::BinOp;
use crate::policy::model::Requires;
use crate::policy::{param_text, Bound, Check, Expect, ParamValue, Problem, Remedy, RemedySpec};

/// Namespaces `driftaudit fix` can write a `set`/`remove` remedy to
/// (mounts go through `options`).
pub(super) const WRITABLE: &[&str] = &[
    "sysctl",
    "sysctl_boot",
    "mycnf",
    "mycnf_effective",
    "zimbra_mycnf",
    "localconfig",
];

/// The remedy a check implies when the rule declares none: one `equals`,
/// `min` or `max` of a writable setting (the value, rounded towards the
/// passing side), `absent: true` (remove the lines), or a `drift:` check.
pub(super) fn derived_remedy(check: &Check, written: Option<&Expect>) -> Option<Remedy> {
    match check {
        Check::Drift(_) => Some(Remedy::Drift),
        Check::Setting {
            ns,
            key,
            expect,
            presence,
        } if WRITABLE.contains(&ns.as_str()) => match (expect.as_slice(), presence) {
            ([], Some(false)) => Some(Remedy::Remove {
                ns: ns.clone(),
                key: key.clone(),
            }),
            // `present: true` beside the value: writing the value makes it present
            ([x], None | Some(true)) if x.values.len() == 1 && !x.one_of => {
                // `equals` (`==`), `min` (`>=`) and `max` (`<=`)
                let (bound, raw) = match x.op {
                    BinOp::Eq => (Bound::Exact, written.and_then(|w| w.equals.as_ref())),
                    BinOp::Ge => (Bound::AtLeast, written.and_then(|w| w.min.as_ref())),
                    BinOp::Le => (Bound::AtMost, written.and_then(|w| w.max.as_ref())),
                    _ => return None,
                };
                let text = match raw.map(|r| &r.value) {
                    Some(ParamValue::Bool(b)) => b.to_string(),
                    Some(ParamValue::Number(n)) => crate::value::format_number(*n),
                    Some(ParamValue::Text(t)) => t.clone(),
                    Some(other @ (ParamValue::List(_) | ParamValue::Typed(_))) => param_text(other),
                    None => "the expected value".to_string(),
                };
                Some(Remedy::Set {
                    ns: ns.clone(),
                    key: key.clone(),
                    to: x.values[0].clone(),
                    text,
                    bound,
                    derived: true,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// A remedy's `set`/`remove` target: `NAMESPACE.KEY` in a writable namespace.
pub(super) fn remedy_setting(
    c: &mut Compiler,
    id: &str,
    s: &Spanned<String>,
) -> Option<(String, String)> {
    let Some((ns, key)) = s.value.split_once('.').filter(|(ns, k)| {
        FLAT_NAMESPACES.contains(ns) && !k.is_empty() && !k.contains(char::is_whitespace)
    }) else {
        c.problem(
            Place::of(s),
            id,
            Problem::InvalidSetting {
                namespaces: FLAT_NAMESPACES.join(", "),
                found: s.value.clone(),
            },
        );
        return None;
    };
    if !WRITABLE.contains(&ns) {
        c.problem(
            Place::of(s),
            id,
            Problem::RemedyNotWritable {
                found: s.value.clone(),
                namespaces: WRITABLE.join(", "),
            },
        );
        return None;
    }
    Some((ns.to_string(), key.to_string()))
}

/// `remedy:`: exactly one kind, its setting writable, its value an
/// expression of the rule's scope, its reason or options not empty.
pub(super) fn compile_remedy(
    c: &mut Compiler,
    scope: &RuleScope,
    r: &Spanned<RemedySpec>,
) -> Option<Remedy> {
    let id = &scope.id;
    let spec = &r.value;
    let kinds = [
        spec.set.is_some(),
        spec.remove.is_some(),
        spec.options.is_some(),
        spec.none.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    let detail = if kinds > 1 {
        ", found several".to_string()
    } else if spec.to.is_some() && spec.set.is_none() {
        ": `to` goes with `set`".to_string()
    } else if spec.set.is_some() && spec.to.is_none() {
        ": `set` needs `to`".to_string()
    } else if kinds == 0 {
        ", found none".to_string()
    } else {
        String::new()
    };
    if !detail.is_empty() {
        c.problem(
            Place::at(&r.referenced),
            id,
            Problem::InvalidRemedy { detail },
        );
        return None;
    }
    if let (Some(set), Some(to)) = (&spec.set, &spec.to) {
        let target = remedy_setting(c, id, set);
        let e = c.expect_value(to, id, &scope.names)?;
        scope.check_params(c, &e, Place::of_value(to));
        let text = param_text(&to.value);
        let (ns, key) = target?;
        return Some(Remedy::Set {
            ns,
            key,
            to: e,
            text,
            bound: Bound::Exact,
            derived: false,
        });
    }
    if let Some(rm) = &spec.remove {
        let (ns, key) = remedy_setting(c, id, rm)?;
        return Some(Remedy::Remove { ns, key });
    }
    if let Some(o) = &spec.options {
        let clean = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        let (add, remove) = (clean(&o.add), clean(&o.remove));
        if add.is_empty() && remove.is_empty() {
            c.problem(Place::at(&r.referenced), id, Problem::EmptyRemedyOptions);
            return None;
        }
        return Some(Remedy::Options { add, remove });
    }
    let reason = spec.none.as_ref().map(|n| n.value.trim().to_string())?;
    if reason.is_empty() {
        let at = spec
            .none
            .as_ref()
            .map(|n| n.referenced)
            .unwrap_or(r.referenced);
        c.problem(Place::at(&at), id, Problem::RemedyWithoutReason);
        return None;
    }
    Some(Remedy::None { reason })
}

/// `remedy: { requires: { when, why } }`: the condition, an expression of
/// the rule's scope, and what the change breaks without it; only on a
/// remedy that changes something (`set`, `remove`, `options`).
pub(super) fn compile_requires(
    c: &mut Compiler,
    scope: &RuleScope,
    r: &Spanned<RemedySpec>,
) -> Option<Requires> {
    let q = r.value.requires.as_ref()?;
    if r.value.none.is_some() {
        c.problem(
            Place::of(&q.when),
            &scope.id,
            Problem::InvalidRemedy {
                detail: ": `requires` goes with `set`, `remove` or `options`, not `none`".into(),
            },
        );
        return None;
    }
    let why = q.why.value.trim().to_string();
    if why.is_empty() {
        c.problem(Place::of(&q.why), &scope.id, Problem::RemedyWithoutReason);
        return None;
    }
    let when = scope.expr(c, &q.when, "remedy `requires`")?;
    Some(Requires {
        when,
        text: q.when.value.trim().to_string(),
        why,
    })
}
