//! Kernel upgrade findings: sysctl keys the host persists (the boot model
//! of systemd-sysctl and TuneD, and procps `sysctl --system`, from the
//! facts) that the target kernel no longer has, ignores, or reads with
//! another meaning. The running kernel comes from the facts. No reads here.

use std::collections::BTreeMap;

use crate::facts::{Entry, Evidence, Facts};
use crate::policy::{Severity, Target};
use crate::report::{Finding, Status};

use super::data::{Effect, Knowledge};
use super::kind::{finding, rule_id, Kind};

/// Persisted keys with every file line that sets them (winner first).
fn persisted(facts: &Facts) -> BTreeMap<String, (String, Vec<Evidence>)> {
    let mut out: BTreeMap<String, (String, Vec<Evidence>)> = BTreeMap::new();
    for ns in ["sysctl_boot", "sysctl_procps"] {
        let Some(n) = facts.namespaces.get(ns) else {
            continue;
        };
        for (k, e) in &n.entries {
            let Entry::Set(s) = e else { continue };
            let slot = out
                .entry(k.clone())
                .or_insert_with(|| (s.raw.clone(), Vec::new()));
            for ev in &s.evidence {
                if ev.line.is_some() && !slot.1.contains(ev) {
                    slot.1.push(ev.clone());
                }
            }
        }
    }
    out.retain(|_, (_, ev)| !ev.is_empty());
    out
}

pub(super) fn findings(facts: &Facts, t: &Target, k: &Knowledge) -> Vec<Finding> {
    let target = t.label();
    let keys = persisted(facts);
    let running = match &facts.kernel {
        Some(kv) => format!("the host runs Linux {}", kv.release),
        None => "the running kernel is unknown".to_string(),
    };
    let mut out = Vec::new();
    for e in &k.entries {
        let Some((raw, evidence)) = keys.get(&e.name) else {
            continue;
        };
        let at: Vec<String> = evidence.iter().map(ToString::to_string).collect();
        let at = at.join(", ");
        if let Some(r) = e.removed.as_ref().filter(|r| t.includes(&r.version)) {
            let (kind, what) = match r.effect {
                Effect::Ignored => (
                    Kind::IgnoredKey,
                    format!("{target} keeps the file but the value has no effect"),
                ),
                _ => (
                    Kind::RemovedKey,
                    format!("{target} has no such key: systemd-sysctl and `sysctl --system` report the line and skip it"),
                ),
            };
            let already = match &facts.kernel {
                Some(kv) if kv.cmp_parts(&r.version.0) != std::cmp::Ordering::Less => {
                    format!(" (already so on the running {})", kv.release)
                }
                _ => String::new(),
            };
            let replacement = e
                .replacement
                .as_ref()
                .map(|r| format!(" (see `{r}`)"))
                .unwrap_or_default();
            out.push(
                finding(
                    k,
                    kind,
                    Status::Fail,
                    e.severity.unwrap_or(kind.severity()),
                    e.line,
                )
                .with_subject(vec![e.name.clone()])
                .with_expected(format!("no `{}` in the persisted sysctl configuration", e.name))
                .with_actual(format!("{} = {raw} at {at}", e.name))
                .with_evidence(evidence.clone())
                .with_explanation(format!(
                    "`{} = {raw}` is persisted at {at}; the key was removed in Linux {}: {what}{already}; {running}",
                    e.name, r.version
                ))
                .with_fix(format!("{}{replacement}", e.action)),
            );
            continue;
        }
        let changes: Vec<_> = e
            .meaning
            .iter()
            .filter(|m| t.includes(&m.version))
            .collect();
        if changes.is_empty() {
            continue;
        }
        match &facts.kernel {
            Some(kv) => {
                let inside: Vec<_> = changes
                    .iter()
                    .filter(|m| kv.cmp_parts(&m.version.0) == std::cmp::Ordering::Less)
                    .collect();
                if inside.is_empty() {
                    continue;
                }
                let texts: Vec<String> = inside
                    .iter()
                    .map(|m| format!("from Linux {}: {}", m.version, m.text))
                    .collect();
                out.push(
                    finding(
                        k,
                        Kind::MeaningChanged,
                        Status::Fail,
                        e.severity.unwrap_or(Severity::Medium),
                        e.line,
                    )
                    .with_subject(vec![e.name.clone()])
                    .with_actual(format!("{} = {raw} at {at}", e.name))
                    .with_evidence(evidence.clone())
                    .with_explanation(format!(
                        "`{} = {raw}` is persisted at {at}; {}; {running}, {target} is the target",
                        e.name,
                        texts.join("; ")
                    ))
                    .with_fix(e.action.clone()),
                );
            }
            None => {
                out.push(
                    finding(k, Kind::MeaningChanged, Status::Unknown, Severity::Medium, e.line)
                        .with_subject(vec![e.name.clone()])
                        .with_evidence(evidence.clone())
                        .with_explanation(format!(
                            "`{} = {raw}` is persisted at {at}; its meaning changed in Linux {}, and the running kernel is unknown, so whether the upgrade to {target} crosses that change cannot be told",
                            e.name,
                            changes.iter().map(|m| m.version.to_string()).collect::<Vec<_>>().join(", ")
                        ))
                        .with_fix("capture `uname -r` (a snapshot records it) and check again"),
                );
            }
        }
    }
    for kind in [Kind::RemovedKey, Kind::IgnoredKey, Kind::MeaningChanged] {
        let id = rule_id(k.product, kind);
        if out.iter().any(|f| f.rule == id) {
            continue;
        }
        let mut f = finding(k, kind, Status::Pass, kind.severity(), 1);
        f.explanation = format!(
            "{} persisted sysctl keys checked against {target}: none affected; {running}",
            keys.len()
        );
        out.push(f);
    }
    out
}
