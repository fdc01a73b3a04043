//! The baseline's proof: the written policy loads, its globs match what
//! they should, and auditing the golden host with it passes every pin.
//! Must not write files.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::Host;
use crate::policy::PolicySet;
use crate::report::Status;
use crate::value::Value;

use super::model::{added_rule_id, rule_id, Baseline, BaselineError, LeftOut};
use super::open::open_lists;

/// Read the written policy back with the policy loader and compare it
/// with what was meant, structurally: one policy of the intended id,
/// exactly the intended parameters (each pin's key and value, each open
/// glob, nothing more), exactly the intended rules in order. Data that
/// became structure, or a string that does not read back, is an error.
pub(super) fn verify(b: &Baseline) -> Result<(), BaselineError> {
    let mismatch = |what: String| Err(BaselineError::Mismatch(what));
    if b.pins.is_empty() {
        // `rules: []` is no policy the loader takes: check it as YAML
        let top: serde_json::Value =
            serde_saphyr::from_str(&b.yaml).map_err(|e| BaselineError::Load(e.to_string()))?;
        let keys: BTreeSet<&str> = top
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if keys != BTreeSet::from(["policy", "title", "description", "rules"]) {
            return mismatch(format!("the top-level keys read back as {keys:?}"));
        }
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let [policy] = set.policies() else {
        return mismatch(format!("{} policies instead of one", set.policies().len()));
    };
    if policy.id != b.policy_id {
        return mismatch(format!("the policy id reads back as `{}`", policy.id));
    }
    let mut want: BTreeMap<String, Vec<Vec<(&str, String)>>> = BTreeMap::new();
    for (ns, pins) in &b.pins {
        want.insert(
            ns.clone(),
            pins.iter()
                .map(|p| vec![("key", p.key.clone()), ("value", p.value.clone())])
                .collect(),
        );
    }
    for (ns, globs) in open_lists(b) {
        want.insert(
            format!("{ns}_open"),
            globs
                .into_iter()
                .map(|(g, why)| vec![("glob", g), ("why", why)])
                .collect(),
        );
    }
    let names: Vec<&String> = policy.params.keys().collect();
    if names != want.keys().collect::<Vec<_>>() {
        return mismatch(format!("the parameters read back as {names:?}"));
    }
    for (name, items) in &want {
        let Some(Value::List(got)) = policy.params.get(name) else {
            return mismatch(format!("the parameter `{name}` is not a list"));
        };
        if got.len() != items.len() {
            return mismatch(format!(
                "the parameter `{name}` reads back with {} items, not {}",
                got.len(),
                items.len()
            ));
        }
        for (i, (g, w)) in got.iter().zip(items).enumerate() {
            let Value::Record(m) = g else {
                return mismatch(format!("item {} of `{name}` is not a map", i + 1));
            };
            let same = m.len() == w.len()
                && w.iter()
                    .all(|(f, v)| matches!(m.get(*f), Some(Value::Str(s)) if s == v));
            if !same {
                return mismatch(format!(
                    "item {} of `{name}` does not read back as written",
                    i + 1
                ));
            }
        }
    }
    let mut rules: Vec<String> = b
        .pins
        .iter()
        .map(|(ns, _)| rule_id(&b.policy_id, ns))
        .collect();
    rules.extend(
        open_lists(b)
            .iter()
            .map(|(ns, _)| added_rule_id(&b.policy_id, ns)),
    );
    let got: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
    if got != rules.iter().map(String::as_str).collect::<Vec<_>>() {
        return mismatch(format!("the rules read back as {got:?}"));
    }
    Ok(())
}

/// Audit the golden host with its own baseline; a pin that does not pass
/// there (a value the engine reads back differently) is left out with the
/// reason, never kept to fail every host.
pub(super) fn prove(b: &mut Baseline, host: &Host) -> Result<(), BaselineError> {
    if b.pins.is_empty() {
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let report = crate::engine::audit_host(&set, host);
    let mut bad: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &report.findings {
        if f.status == Status::Pass {
            continue;
        }
        for (ns, _) in &b.pins {
            if f.rule == rule_id(&b.policy_id, ns) {
                let e = bad.entry(ns.clone()).or_default();
                e.extend(f.subject.iter().cloned());
            }
            if f.rule == added_rule_id(&b.policy_id, ns) && f.status != Status::Skip {
                // a key of the golden host itself the closed world judges:
                // it is left out of the judging, with the reason
                match f.subject.first() {
                    Some(key) if f.status == Status::Fail => b.left_out.push(LeftOut {
                        namespace: ns.clone(),
                        key: key.clone(),
                        reason: "on the golden host but not pinned: not judged as added".into(),
                    }),
                    _ => {
                        return Err(BaselineError::Load(format!(
                            "the closed world of {ns} is {:?} on the golden host itself: {}",
                            f.status, f.explanation
                        )))
                    }
                }
            }
        }
    }
    for (ns, pins) in &mut b.pins {
        let Some(subjects) = bad.get(ns.as_str()) else {
            continue;
        };
        pins.retain(|p| {
            let keep = !subjects.contains(&p.key);
            if !keep {
                b.left_out.push(LeftOut {
                    namespace: ns.clone(),
                    key: p.key.clone(),
                    reason: "does not read back equal on the golden host itself".into(),
                });
            }
            keep
        });
    }
    b.pins.retain(|(_, p)| !p.is_empty());
    Ok(())
}
