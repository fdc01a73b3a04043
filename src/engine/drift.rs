//! `drift:` rules: every configured value of one namespace against the
//! running value of another (one finding per key that differs, a pass that
//! counts what was compared, `unknown` where either side cannot be read).
//! Must not do I/O or evaluate other check kinds.

use super::eval::RuleCx;
use super::finding::rule_finding;
use crate::expr;
use crate::facts::Entry;
use crate::policy::{CompareMode, DriftCheck, Rule};
use crate::report::{DriftData, Finding, Status};
use crate::value::Value;

/// The value compared by a drift check: the whole setting, or one record field.
fn drift_value(v: &Value, field: &Option<String>) -> Option<Value> {
    match (field, v) {
        (None, v) => Some(v.clone()),
        (Some(f), Value::Record(map)) => map.get(f).cloned(),
        (Some(_), _) => None,
    }
}

fn items(v: &Value) -> Vec<String> {
    match v {
        Value::List(items) => items.iter().map(Value::to_plain).collect(),
        other => other
            .to_plain()
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    }
}

/// Judge a `drift:` rule: one finding per key that differs, or one pass.
pub(super) fn check(rule: &Rule, cx: &RuleCx, d: &DriftCheck) -> Vec<Finding> {
    let (configured, running, keys, ignore) = (
        d.configured.as_str(),
        d.running.as_str(),
        &d.keys,
        &d.ignore,
    );
    let facts = cx.facts;
    let (Some(conf), Some(run)) = (
        facts.namespaces.get(configured),
        facts.namespaces.get(running),
    ) else {
        let mut f = rule_finding(rule, cx, Status::Unknown);
        f.explanation =
            format!("no `{configured}` or `{running}` values were gathered for this host");
        return vec![f];
    };
    let selected = |key: &String| {
        (keys.is_empty() || keys.iter().any(|p| p.matches(key)))
            && !ignore.iter().any(|p| p.matches(key))
    };
    if conf.unavailable.is_none() && !conf.entries.keys().any(selected) {
        let mut f = rule_finding(rule, cx, Status::Skip);
        f.explanation = format!("nothing in {configured} to compare: no configured value is set");
        return vec![f];
    }
    for (ns, space) in [(configured, conf), (running, run)] {
        if let Some(reason) = &space.unavailable {
            let mut f = rule_finding(rule, cx, Status::Unknown);
            f.explanation = format!("cannot compare: {ns}: {reason}");
            return vec![f];
        }
    }
    let mut out = Vec::new();
    let mut compared = 0usize;
    for (key, entry) in &conf.entries {
        if (!keys.is_empty() && !keys.iter().any(|p| p.matches(key)))
            || ignore.iter().any(|p| p.matches(key))
        {
            continue;
        }
        let want = match entry {
            Entry::Set(want) => want,
            // The configured value cannot be told (the server's adjustment
            // is not modelled, a value it refuses): unknown where the server
            // has the key, never silently left out of the comparison.
            Entry::Unreadable { reason, evidence } if run.entries.contains_key(key) => {
                let mut f = rule_finding(rule, cx, Status::Unknown);
                f.subject = vec![key.clone()];
                f.evidence = evidence.clone();
                f.explanation = format!("{key}: {reason}");
                out.push(f);
                continue;
            }
            _ => continue,
        };
        match run.entries.get(key) {
            None => continue, // absent on the running side: other rules judge stale settings
            Some(Entry::Unreadable { reason, evidence }) => {
                let mut f = rule_finding(rule, cx, Status::Unknown);
                f.subject = vec![key.clone()];
                f.expected = Some(want.raw.clone());
                f.evidence = want
                    .evidence
                    .iter()
                    .chain(evidence.iter())
                    .cloned()
                    .collect();
                f.explanation = format!("{key}: the running value cannot be read: {reason}");
                out.push(f);
            }
            Some(Entry::Set(have)) => {
                let (Some(want_v), Some(have_v)) = (
                    drift_value(&want.value, &d.field),
                    drift_value(&have.value, &d.running_field),
                ) else {
                    continue;
                };
                compared += 1;
                let (want_items, have_items) = (items(&want_v), items(&have_v));
                let missing: Vec<String> = want_items
                    .iter()
                    .filter(|i| !have_items.contains(i))
                    .cloned()
                    .collect();
                let extra: Vec<String> = have_items
                    .iter()
                    .filter(|i| !want_items.contains(i))
                    .cloned()
                    .collect();
                let same = match d.compare {
                    CompareMode::Equal => want_v.loosely_equals(&have_v),
                    CompareMode::Subset => missing.is_empty(),
                };
                if same {
                    continue;
                }
                let rcx = RuleCx::new(facts, rule, cx.policy);
                {
                    let mut sp = rcx.special.borrow_mut();
                    sp.insert("setting".into(), Value::Str(key.clone()));
                    sp.insert("expected".into(), want_v.clone());
                    sp.insert("actual".into(), have_v.clone());
                    sp.insert("missing".into(), Value::Str(missing.join(",")));
                    sp.insert("extra".into(), Value::Str(extra.join(",")));
                    if let Some(e) = want.evidence.first() {
                        sp.insert("source".into(), Value::Str(e.to_string()));
                    }
                }
                let mut f = rule_finding(rule, cx, Status::Fail);
                f.subject = vec![key.clone()];
                f.expected = Some(show_items(&want_v));
                f.actual = Some(show_items(&have_v));
                f.evidence = want
                    .evidence
                    .iter()
                    .take(1)
                    .chain(have.evidence.iter())
                    .cloned()
                    .collect();
                let list = want_items.len() > 1 || have_items.len() > 1;
                f.drift = Some(DriftData {
                    configured: configured.to_string(),
                    running: running.to_string(),
                    configured_at: want.evidence.first().cloned(),
                    added: if list { extra } else { Vec::new() },
                    removed: if list { missing } else { Vec::new() },
                });
                let mut text = rcx.render(&rule.why);
                if let Some(n) = &want.note {
                    text.push_str(&format!(" Note: {n}."));
                }
                f.explanation = text;
                f.fix = rcx.render(&rule.fix);
                out.push(f);
            }
        }
    }
    if out.iter().all(|f| f.status != Status::Fail) {
        let mut f = rule_finding(rule, cx, Status::Pass);
        f.explanation = format!(
            "{compared} configured value(s) in {configured} match the running values in {running}"
        );
        out.push(f);
    }
    out
}

fn show_items(v: &Value) -> String {
    match v {
        Value::List(items) => items
            .iter()
            .map(Value::to_plain)
            .collect::<Vec<_>>()
            .join(","),
        other => expr::show(other),
    }
}
