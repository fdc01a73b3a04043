//! `explain`: a rule's full description in words (rationale, fix, tags, references,
//! parameters with defaults, what site overlays changed and where, and the
//! facts and settings it reads). Pure text
//! from the compiled policy; no host data.

use std::fmt::Write;

use super::wrap::wrap;
use crate::expr::Expr;
use crate::policy::{
    Applies, Check, ForEachSource, Policy, PolicySet, Rule, Template, TemplatePart,
};
use crate::value::Value;

/// A rule's full description in words, by its id or an item's alias (what
/// `driftaudit explain RULE` prints); `None` when no loaded rule has it.
///
/// ```
/// use driftaudit::{explain_rule, PolicySet};
///
/// let policies = PolicySet::builtin()?;
/// let text = explain_rule(&policies, "hardening.kptr-restrict").unwrap();
/// assert!(text.contains("tags: stig, anssi-intermediary"));
/// assert!(explain_rule(&policies, "no.such-rule").is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn explain_rule(set: &PolicySet, id: &str) -> Option<String> {
    set.rule_or_alias(id).map(|r| explain(set, r))
}

/// Describe a rule for people.
pub fn explain(set: &PolicySet, rule: &Rule) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}  ({})", rule.id, rule.severity);
    let _ = writeln!(o, "{}", rule.title);
    let _ = writeln!(
        o,
        "policy: {}  defined at {}:{}",
        rule.policy, rule.source.path, rule.source.line
    );
    if !rule.overridden.is_empty() {
        let _ = writeln!(o, "\noverridden (site overlays, --set):");
        for x in &rule.overridden {
            for l in wrap(&x.to_string(), 76) {
                let _ = writeln!(o, "  {l}");
            }
        }
    }
    if !rule.applies.is_empty() {
        let _ = writeln!(o, "\napplies when:");
        for a in &rule.applies {
            let _ = match a {
                Applies::Kernel(_, t) => writeln!(o, "  kernel {t}"),
                Applies::Exists(p) => writeln!(o, "  {p} exists"),
                Applies::Missing(p) => writeln!(o, "  {p} does not exist"),
                Applies::When(_, t) => writeln!(o, "  {}", t.trim()),
            };
        }
    }
    let _ = writeln!(o, "\ncheck:");
    let _ = match &rule.check {
        Check::Setting {
            ns,
            key,
            presence: Some(p),
            ..
        } => {
            writeln!(
                o,
                "  {ns}.{key} must be {}",
                if *p { "present" } else { "absent" }
            )
        }
        Check::Setting {
            ns, key, expect, ..
        } => writeln!(
            o,
            "  {ns}.{key} {}",
            expect
                .iter()
                .map(|x| format!(
                    "{} {}",
                    x.words(),
                    x.values
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Check::Assert(e) => writeln!(o, "  {e}"),
        Check::Upgrade(_) => writeln!(
            o,
            "  the option files and persisted sysctl files as the target release reads them, against the shipped upgrade data ({}); runs with `--target`",
            rule.source.path
        ),
        Check::Drift(d) => {
            let (configured, running) = (&d.configured, &d.running);
            writeln!(
                o,
                "  every key of {configured} equals the same key of {running}"
            )
        }
    };
    // the templates in words: parameters and a `for_each` item's fields
    // filled in, what only a host can tell shown as ‹expression›
    let policy = set.policy_of(rule);
    let items = static_items(rule, policy);
    if items.is_empty() {
        for (head, t) in [("why", &rule.why), ("fix", &rule.fix)] {
            let _ = writeln!(o, "\n{head}:");
            for l in wrap(&words(t, None, policy), 76) {
                let _ = writeln!(o, "  {l}");
            }
        }
    } else {
        for (name, item) in &items {
            for (head, t) in [("why", &rule.why), ("fix", &rule.fix)] {
                let _ = writeln!(o, "\n{head} ({name}):");
                for l in wrap(&words(t, Some(item), policy), 76) {
                    let _ = writeln!(o, "  {l}");
                }
            }
        }
    }
    let _ = writeln!(o, "\nremedy (driftaudit fix):");
    let remedy = rule.describe_remedy();
    for l in wrap(&remedy, 76) {
        let _ = writeln!(o, "  {l}");
    }
    if let Some(p) = set.policy_of(rule) {
        let used: Vec<(&String, &String)> = p
            .param_defaults
            .iter()
            .filter(|(k, _)| uses_param(rule, k))
            .collect();
        if !used.is_empty() {
            let _ = writeln!(o, "\nparameters (override with --set {}.NAME=VALUE):", p.id);
            for (k, v) in used {
                let cur = p.params.get(k).map(crate::expr::show).unwrap_or_default();
                let field = format!("params.{k}");
                match rule.overridden.iter().find(|x| x.field == field) {
                    Some(x) => writeln!(o, "  {k} = {cur}  (default {v})  set by {}", x.set_by),
                    None => writeln!(o, "  {k} = {cur}  (default {v})"),
                }
                .ok();
            }
        }
    }
    let reads = rule.settings_read();
    let facts = rule.facts_read();
    if !reads.is_empty() || !facts.is_empty() {
        let _ = writeln!(o, "\nreads:");
        for (ns, k) in reads {
            let _ = writeln!(o, "  setting {ns}.{k}");
        }
        for f in facts {
            let _ = writeln!(o, "  fact {f}");
        }
    }
    if !rule.tags.is_empty() {
        let _ = writeln!(o, "\ntags: {}", rule.tags.join(", "));
    }
    if !rule.controls.is_empty() {
        let _ = writeln!(o, "\nbenchmark items: {}", rule.controls.join(", "));
    }
    if !rule.references.is_empty() {
        let _ = writeln!(o, "\nreferences:");
        for r in &rule.references {
            let _ = writeln!(o, "  {r}");
        }
    }
    o
}

/// A `for_each: { param: LIST }` rule's items, each with the name it is
/// shown by (its alias, else its `id`, else its place), bound name first.
fn static_items<'a>(
    rule: &'a Rule,
    policy: Option<&'a Policy>,
) -> Vec<(String, (&'a str, &'a Value))> {
    let Some(fe) = &rule.for_each else {
        return Vec::new();
    };
    let ForEachSource::Param(p) = &fe.source else {
        return Vec::new();
    };
    let Some(Value::List(items)) = policy.and_then(|pol| pol.params.get(p)) else {
        return Vec::new();
    };
    let aliases = fe.static_aliases(policy);
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let id = match item {
                Value::Record(m) => m.get("id").map(Value::to_plain),
                _ => None,
            };
            let name = aliases
                .get(i)
                .cloned()
                .flatten()
                .or(id)
                .unwrap_or_else(|| format!("item {}", i + 1));
            (name, (fe.bind.as_str(), item))
        })
        .collect()
}

/// A template in words: `{params.X}` and an item's `{NAME.FIELD}` filled in
/// (an item field's own `${params.X}` too), any other expression, which
/// only a host can tell, shown as `‹expression›`.
fn words(t: &Template, item: Option<&(&str, &Value)>, policy: Option<&Policy>) -> String {
    let param = |name: &str| policy.and_then(|p| p.params.get(name)).map(Value::to_plain);
    let mut out = String::new();
    for part in &t.parts {
        match part {
            TemplatePart::Text(s) => out.push_str(s),
            TemplatePart::Expr(Expr::Param(p)) => match param(p) {
                Some(v) => out.push_str(&v),
                None => out.push_str(&format!("‹params.{p}›")),
            },
            TemplatePart::Expr(e @ Expr::Field(base, f)) => {
                let field = item.and_then(|(bind, v)| match (base.as_ref(), v) {
                    (Expr::Name(n), Value::Record(m)) if n == bind => m.get(f),
                    _ => None,
                });
                match field {
                    Some(v) => out.push_str(&fill_params(&v.to_plain(), &param)),
                    None => out.push_str(&format!("‹{e}›")),
                }
            }
            TemplatePart::Expr(e) => out.push_str(&format!("‹{e}›")),
        }
    }
    out
}

/// `${params.X}` in an item's text replaced by the parameter's value; any
/// other `${...}` shown as `‹...›`.
fn fill_params(text: &str, param: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find('}') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let inner = &rest[i + 2..i + j];
        match inner.strip_prefix("params.").and_then(param) {
            Some(v) => out.push_str(&v),
            None => out.push_str(&format!("‹{inner}›")),
        }
        rest = &rest[i + j + 1..];
    }
    out.push_str(rest);
    out
}

fn uses_param(rule: &Rule, name: &str) -> bool {
    let mut hit = false;
    for e in rule.expressions() {
        crate::expr::walk(e, &mut |x| {
            if matches!(x, crate::expr::Expr::Param(p) if p == name) {
                hit = true;
            }
        });
    }
    hit
}
