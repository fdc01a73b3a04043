//! The plan: what the policies need gathered, worked out from the compiled
//! rules alone (sysctl keys, `exists:` paths, namespaces, and the
//! directories `du(...)` sizes as plain data: a path, or the path a setting
//! or fact holds, which facts resolves once it has gathered them). Must not
//! read the host or evaluate an expression over host data: the plan is
//! made before gathering starts.

use crate::expr::{ops, Expr};
use crate::facts::{Need, Needs};
use crate::policy::{Applies, Policy, PolicySet, Rule};

/// Work out what the rules need gathered (sysctl keys, paths, namespaces,
/// directory sizes).
pub fn needs(policies: &PolicySet) -> Needs {
    let mut n = Needs::default();
    for r in &policies.rules {
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
    let param = |p: &str| {
        policy
            .and_then(|pol| pol.params.get(p))
            .cloned()
            .ok_or_else(|| format!("unknown parameter `{p}`"))
    };
    match e {
        Expr::Name(n) => match rule.lets.get(n) {
            Some(bound) if hops < MAX_LET_HOPS => path_need(bound, rule, policy, hops + 1),
            Some(_) => None,
            None => Some(Need::Fact(n.clone())),
        },
        Expr::Setting(ns, key) => {
            let key = ops::constant(key, "a key", &param).ok()?;
            Some(Need::Setting {
                ns: ns.clone(),
                key: key.to_plain(),
            })
        }
        other => ops::constant(other, "a path", &param)
            .ok()
            .map(|v| Need::Path(v.to_plain())),
    }
}
