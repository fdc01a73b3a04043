//! The plan: what the policies need gathered, worked out from the compiled
//! rules alone (sysctl keys, `exists:` paths, namespaces, the directories
//! `du(...)` sizes as plain data: a path, or the path a setting or fact
//! holds, which facts resolves once it has gathered them; and the option
//! groups an upgrade rule's target servers read). Must not
//! read the host or evaluate an expression over host data: the plan is
//! made before gathering starts.

use std::collections::BTreeMap;

use crate::expr::eval::{eval, Binding, NoHost, Scope};
use crate::expr::Expr;
use crate::facts::{Need, Needs};
use crate::policy::{
    Applies, Check, CompiledItem, ForEach, ForEachSource, PathText, Policy, PolicySet, Rule,
    TemplatePart,
};
use crate::value::Value;

/// Work out what the rules need gathered (sysctl keys, paths, namespaces,
/// directory sizes).
pub fn needs(policies: &PolicySet) -> Needs {
    let mut n = Needs::default();
    for r in policies.rules() {
        let policy = policies.policy_of(r);
        for a in &r.applies {
            match a {
                Applies::Exists(p) | Applies::Missing(p) => {
                    if let Ok(path) = crate::policy::resolve_path(p, policy) {
                        n.paths.insert(path);
                    }
                }
                _ => {}
            }
        }
        if let Some(fe) = &r.for_each {
            plan_for_each(&mut n, r, fe, policy);
        }
        // the option files as each target server reads them
        if let Check::Upgrade(u) = &r.check {
            crate::upgrade::plan(u, &mut n);
        }
        // the rule's reads one at a time, nothing collected or copied,
        // and its `du(...)` calls in the same walk of its expressions
        let (keys, namespaces, dir_sizes) =
            (&mut n.sysctl_keys, &mut n.namespaces, &mut n.dir_sizes);
        r.each_read(
            &mut |ns, key| {
                if ns.starts_with("sysctl") && key != "*" {
                    keys.insert(crate::parse::sysctl::normalize_key(key));
                }
                if !namespaces.contains(ns) {
                    namespaces.insert(ns.to_string());
                }
            },
            &mut |x| {
                if let Expr::Call(name, args) = x {
                    if name == "du" {
                        dir_sizes.extend(path_need(&args[0], r, policy, 0));
                    }
                }
            },
        );
    }
    n
}

/// The parameters of a rule outside any policy: none.
static NO_PARAMS: BTreeMap<String, Value> = BTreeMap::new();

/// `let` names followed at most this deep when a `du` argument is one (a
/// `let` that names itself is an error at evaluation, not a hang here).
const MAX_LET_HOPS: usize = 16;

/// The directory a `du(...)` argument names, as data: a constant (a
/// literal, the policy's parameters, arithmetic over them) is a path; a
/// setting with a constant key, or a host fact, is the path it holds once
/// gathered; a `let` name is what its expression names. `None` for any
/// other argument: its size is not gathered, and the rule says so when it
/// is evaluated ("directory size was not gathered").
fn path_need(e: &Expr, rule: &Rule, policy: Option<&Policy>, hops: usize) -> Option<Need> {
    let constant = |what| Scope::constant(Some(policy.map_or(&NO_PARAMS, |p| &p.params)), what);
    match e {
        Expr::Name(n) => match rule.lets.get(n) {
            Some(bound) if hops < MAX_LET_HOPS => path_need(bound, rule, policy, hops + 1),
            Some(_) => None,
            None => Some(Need::Fact(n.clone())),
        },
        Expr::Setting(ns, key) => {
            let key = eval(key, &constant("a key")).ok()?;
            Some(Need::Setting {
                ns: ns.clone(),
                key: key.to_plain(),
            })
        }
        other => eval(other, &constant("a path"))
            .ok()
            .map(|v| Need::Path(v.to_plain())),
    }
}

/// What a `for_each` needs before any host data is read: a sysctl key glob
/// is gathered key by key; for a list parameter, each item's `applies`
/// paths and `setting:` key, where they follow from the item and the
/// policy's parameters alone (a field that is host data, `${mysql_datadir}`,
/// is not planned: the rule says so when evaluated).
fn plan_for_each(n: &mut Needs, r: &Rule, fe: &ForEach, policy: Option<&Policy>) {
    match &fe.source {
        ForEachSource::Keys { ns, pattern, .. } => {
            if ns.starts_with("sysctl") {
                n.sysctl_globs.insert(pattern.clone());
            }
        }
        ForEachSource::Records { .. } => {}
        ForEachSource::Param(name) => {
            let Some(Value::List(items)) = policy.and_then(|p| p.params.get(name)) else {
                return;
            };
            let params_only = Scope {
                params: Some(policy.map_or(&NO_PARAMS, |p| &p.params)),
                specials: None,
                item: None,
                lets: None,
                host: None,
                no_host: NoHost::BeforeGathering,
            };
            for (i, item) in items.iter().enumerate() {
                // the item with each `${...}` field worked out over the
                // parameters (a field that names host data left out)
                let bound = Binding {
                    name: fe.bind.clone(),
                    value: constant_fields(item, fe.items.get(i), &params_only),
                    key: None,
                    field_errors: BTreeMap::new(),
                };
                let cx = Scope {
                    item: Some(&bound),
                    ..params_only
                };
                for a in &r.applies {
                    if let Applies::Exists(p) | Applies::Missing(p) = a {
                        if let Some(path) = const_text(p, &cx) {
                            n.paths.insert(path);
                        }
                    }
                }
                // the item's own `exists` field
                if let Value::Record(m) = &bound.value {
                    if let Some(p) = m.get("exists") {
                        n.paths.insert(p.to_plain());
                    }
                }
                if let (Some(t), Check::Setting { ns, .. }) = (&fe.setting_key, &r.check) {
                    let mut key = String::new();
                    let ok = t.parts.iter().all(|p| match p {
                        TemplatePart::Text(s) => {
                            key.push_str(s);
                            true
                        }
                        TemplatePart::Expr(e) => {
                            eval(e, &cx).map(|v| key.push_str(&v.to_plain())).is_ok()
                        }
                    });
                    if ok && ns.starts_with("sysctl") {
                        n.sysctl_keys
                            .insert(crate::parse::sysctl::normalize_key(&key));
                    }
                }
            }
        }
    }
}

/// A `${EXPR}` path (compiled at load) over one list item and the
/// parameters, when it is a constant.
fn const_text(p: &PathText, cx: &Scope) -> Option<String> {
    let e = p.expr()?.ok()?;
    eval(e, cx).ok().map(|v| v.to_plain())
}

/// A list item with each `${...}` field (compiled at load) evaluated in
/// `params_only` (a field that names host data is not known before
/// gathering: left out).
fn constant_fields(item: &Value, compiled: Option<&CompiledItem>, params_only: &Scope) -> Value {
    let (Value::Record(m), Some(c)) = (item, compiled) else {
        return item.clone();
    };
    let mut out = m.clone();
    for (k, t) in &c.fields {
        match super::item_fields::item_text(t, k, params_only) {
            Ok(v) => out.insert(k.clone(), v),
            Err(_) => out.remove(k),
        };
    }
    Value::Record(out)
}
