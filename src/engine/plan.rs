//! The plan: what the policies need gathered, worked out from the compiled
//! rules alone (sysctl keys, `exists:` paths, namespaces, the directories
//! `du(...)` sizes as plain data: a path, or the path a setting or fact
//! holds, which facts resolves once it has gathered them; and the option
//! groups an upgrade rule's target servers read). Must not
//! read the host or evaluate an expression over host data: the plan is
//! made before gathering starts.

use std::cell::OnceCell;

use crate::expr::eval::{eval, Constant, Context, Missing};
use crate::expr::Expr;
use crate::facts::{Need, Needs};
use crate::policy::{
    Applies, Check, ForEach, ForEachSource, Policy, PolicySet, Rule, TemplatePart,
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
static NO_PARAMS: std::collections::BTreeMap<String, Value> = std::collections::BTreeMap::new();

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
    let constant = |what| Constant {
        params: Some(policy.map_or(&NO_PARAMS, |p| &p.params)),
        what,
    };
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
            for item in items {
                let cx = ConstCx {
                    bind: &fe.bind,
                    item,
                    policy,
                    resolved: OnceCell::new(),
                };
                for a in &r.applies {
                    if let Applies::Exists(p) | Applies::Missing(p) = a {
                        if let Some(path) = const_text(p, &cx) {
                            n.paths.insert(path);
                        }
                    }
                }
                // the item's own `exists` field
                if let Some(p) = cx.field("exists") {
                    n.paths.insert(p.to_plain());
                }
                if let (Some(t), Check::Setting { ns, .. }) = (&fe.setting_key, &r.check) {
                    let mut key = String::new();
                    let ok = t.parts.iter().all(|p| match p {
                        TemplatePart::Text(s) => {
                            key.push_str(s);
                            true
                        }
                        TemplatePart::Expr(e) => crate::expr::eval::eval(e, &cx)
                            .map(|v| key.push_str(&v.to_plain()))
                            .is_ok(),
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

/// `${EXPR}` over one list item and the parameters, when it is a constant.
fn const_text(p: &str, cx: &ConstCx) -> Option<String> {
    let inner = p.strip_prefix("${")?.strip_suffix('}')?;
    let e = crate::expr::parse(inner).ok()?;
    crate::expr::eval::eval(&e, cx).ok().map(|v| v.to_plain())
}

/// A list item and the policy's parameters, nothing of the host: an item
/// field written `${params.X}` is the parameter's value, any other
/// `${...}` field is not known before gathering. The item's fields are
/// worked out once, on the first expression that names the item.
struct ConstCx<'a> {
    bind: &'a str,
    item: &'a Value,
    policy: Option<&'a Policy>,
    resolved: OnceCell<Value>,
}

impl ConstCx<'_> {
    /// One field of the item as [`Context::name`] gives it, without
    /// working out the others: `None` when the item is not a record, has
    /// no such field, or the field names host data.
    fn field(&self, k: &str) -> Option<Value> {
        let Value::Record(m) = self.item else {
            return None;
        };
        match m.get(k)? {
            Value::Str(t) if t.contains("${") => {
                super::item_fields::item_text(k, t, &ParamsCx(self.policy)).ok()
            }
            v => Some(v.clone()),
        }
    }

    /// The item with each `${...}` field evaluated over the parameters
    /// (a field that names host data left out).
    fn resolve(&self) -> Value {
        let Value::Record(m) = self.item else {
            return self.item.clone();
        };
        let mut out = m.clone();
        let params_only = ParamsCx(self.policy);
        for (k, v) in m {
            if let Value::Str(t) = v {
                if t.contains("${") {
                    match super::item_fields::item_text(k, t, &params_only) {
                        Ok(c) => out.insert(k.clone(), c),
                        Err(_) => out.remove(k),
                    };
                }
            }
        }
        Value::Record(out)
    }

    fn not_constant<T>(what: &str) -> Result<T, Missing> {
        Err(Missing::Error(format!(
            "{what} is not known before gathering"
        )))
    }
}

impl Context for ConstCx<'_> {
    fn name(&self, name: &str) -> Result<Value, Missing> {
        if name != self.bind {
            return Self::not_constant(name);
        }
        Ok(self.resolved.get_or_init(|| self.resolve()).clone())
    }
    fn param(&self, name: &str) -> Result<Value, Missing> {
        self.policy
            .and_then(|p| p.params.get(name))
            .cloned()
            .ok_or_else(|| Missing::Error(format!("unknown parameter `{name}`")))
    }
    fn setting(&self, ns: &str, _key: &str) -> Result<Value, Missing> {
        Self::not_constant(ns)
    }
    fn dir_size(&self, path: &str) -> Result<Value, Missing> {
        Self::not_constant(path)
    }
    fn mount_of(&self, path: &str) -> Result<Value, Missing> {
        Self::not_constant(path)
    }
}

/// The policy's parameters and nothing else: an item field written
/// `${params.X}` has a value before gathering, one naming host data has not.
struct ParamsCx<'a>(Option<&'a Policy>);

impl Context for ParamsCx<'_> {
    fn name(&self, name: &str) -> Result<Value, Missing> {
        ConstCx::not_constant(name)
    }
    fn param(&self, name: &str) -> Result<Value, Missing> {
        self.0
            .and_then(|p| p.params.get(name))
            .cloned()
            .ok_or_else(|| Missing::Error(format!("unknown parameter `{name}`")))
    }
    fn setting(&self, ns: &str, _key: &str) -> Result<Value, Missing> {
        ConstCx::not_constant(ns)
    }
    fn dir_size(&self, path: &str) -> Result<Value, Missing> {
        ConstCx::not_constant(path)
    }
    fn mount_of(&self, path: &str) -> Result<Value, Missing> {
        ConstCx::not_constant(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `for_each` list item of the built-in policies with its
    /// context, as `plan_for_each` makes them.
    fn items(set: &PolicySet) -> Vec<(&ForEach, Option<&Policy>, &Value)> {
        let mut out = Vec::new();
        for r in set.rules() {
            let policy = set.policy_of(r);
            let Some(fe) = &r.for_each else { continue };
            let ForEachSource::Param(name) = &fe.source else {
                continue;
            };
            if let Some(Value::List(list)) = policy.and_then(|p| p.params.get(name)) {
                out.extend(list.iter().map(|item| (&**fe, policy, item)));
            }
        }
        out
    }

    /// [`needs`] as it was before the one walk: the rule's collected
    /// setting reads, then a second walk for `du(...)`. The reference.
    fn needs_walking_twice(policies: &PolicySet) -> Needs {
        let mut n = Needs::default();
        for r in policies.rules() {
            let policy = policies.policy_of(r);
            for a in &r.applies {
                if let Applies::Exists(p) | Applies::Missing(p) = a {
                    if let Ok(path) = crate::policy::resolve_path(p, policy) {
                        n.paths.insert(path);
                    }
                }
            }
            if let Some(fe) = &r.for_each {
                plan_for_each(&mut n, r, fe, policy);
            }
            for (ns, key) in r.settings_read() {
                if ns.starts_with("sysctl") && key != "*" {
                    n.sysctl_keys
                        .insert(crate::parse::sysctl::normalize_key(&key));
                }
                n.namespaces.insert(ns);
            }
            for e in r.expressions() {
                crate::expr::walk(e, &mut |x| {
                    if let Expr::Call(name, args) = x {
                        if name == "du" {
                            n.dir_sizes.extend(path_need(&args[0], r, policy, 0));
                        }
                    }
                });
            }
        }
        n
    }

    #[test]
    fn plan_in_one_walk_needs_what_two_walks_needed() {
        let set = PolicySet::builtin().unwrap();
        let (new, old) = (needs(&set), needs_walking_twice(&set));
        assert_eq!(format!("{new:?}"), format!("{old:?}"));
        // every kind of need is planned by the built-in rules
        assert!(!new.dir_sizes.is_empty() && !new.sysctl_keys.is_empty());
        assert!(!new.paths.is_empty() && !new.namespaces.is_empty());
    }

    #[test]
    fn item_worked_out_once_reads_as_when_worked_out_per_expression() {
        let set = PolicySet::builtin().unwrap();
        let items = items(&set);
        assert!(!items.is_empty());
        let mut templated = 0;
        for (fe, policy, item) in items {
            let cx = ConstCx {
                bind: &fe.bind,
                item,
                policy,
                resolved: OnceCell::new(),
            };
            // the reference: the whole item worked out on each call
            let whole = cx.resolve();
            for _ in 0..2 {
                assert_eq!(cx.name(&fe.bind), Ok(whole.clone()));
            }
            assert!(cx.name("other").is_err());
            if let Value::Record(m) = item {
                for k in m.keys().map(String::as_str).chain(["exists", "no-such"]) {
                    let by_whole = match &whole {
                        Value::Record(w) => w.get(k).cloned(),
                        _ => None,
                    };
                    assert_eq!(cx.field(k), by_whole, "{k}");
                }
                templated += m
                    .values()
                    .filter(|v| matches!(v, Value::Str(t) if t.contains("${")))
                    .count();
            }
        }
        // the built-in lists hold fields written with placeholders
        assert!(templated > 0);
    }
}
