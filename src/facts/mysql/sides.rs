//! The running side of every server variable and the sentence on both
//! sides, for rules that judge both (issue 48): `mysql_running` (the
//! running server's variables, plus the derived `innodb_redo_log_size`),
//! `mysql_sides` (one sentence per variable saying what runs against what
//! the next start applies, `mysql_next` from [`super::next`]) and the
//! `mysql_captured` fact (whether the running server's variables were read
//! at all). Built from the namespaces already gathered; no I/O, no verdict.

use std::collections::BTreeSet;

use super::model::VARIABLES_CAPTURE;
use super::next;
use super::server::ServerVersion;
use super::sizing;

use crate::facts::{Entry, Facts, Namespace, Setting};
use crate::value::Value;

/// The running side's namespace.
pub const RUNNING: &str = "mysql_running";
/// The sentence per variable.
pub const SIDES: &str = "mysql_sides";
/// The fact: the running server's variables were read.
pub const CAPTURED: &str = "mysql_captured";

/// Build `mysql_running`, `mysql_sides` and the fact from `mysql`,
/// `mysql_next` and the version the option files were read for.
pub fn gather(version: Option<&ServerVersion>, facts: &mut Facts) {
    let runtime = facts.namespaces.get("mysql").cloned().unwrap_or_default();
    let captured = runtime.unavailable.is_none();
    let next = facts
        .namespaces
        .get(next::NAMESPACE)
        .cloned()
        .unwrap_or_default();

    // Running: the capture as it is, plus the redo log's total size for the
    // running server's own version.
    let mut running = Namespace::of(RUNNING);
    running.canonicalize = Some(crate::parse::mycnf::normalize_name);
    running.unknown_fix = runtime.unknown_fix.clone();
    if let Some(why) = &runtime.unavailable {
        running.unavailable = Some(why.clone());
    } else {
        running.entries = runtime.entries.clone();
        let run_version = match runtime.get("version") {
            Some(Entry::Set(s)) => ServerVersion::parse(&s.raw),
            _ => None,
        }
        .or_else(|| version.cloned());
        // a capture without the redo variables does not report the size
        // (absent, as any variable it lacks), rather than unknown
        if let Entry::Set(redo) = sizing::redo_log_size(&running, run_version.as_ref(), None) {
            running
                .entries
                .insert(sizing::REDO_SIZE.into(), Entry::Set(redo));
        }
    }

    let mut sides = Namespace::of(SIDES);
    sides.canonicalize = Some(crate::parse::mycnf::normalize_name);
    let mut keys: BTreeSet<String> = next.entries.keys().cloned().collect();
    keys.extend(running.entries.keys().cloned());
    for key in keys {
        // without a capture and without a configured value there is nothing
        // to point at: absent, and the rule says so in its own words
        if !captured && !matches!(next.entries.get(&key), Some(Entry::Set(_))) {
            continue;
        }
        let (text, evidence) = sentence(&key, next.entries.get(&key), &running, captured);
        let mut s = Setting::new(Value::Str(text.clone()), text, evidence.clone());
        s.evidence = evidence_list(evidence, next.entries.get(&key));
        sides.entries.insert(key, Entry::Set(s));
    }
    facts
        .facts
        .insert(CAPTURED.into(), Ok(Value::Bool(captured)));
    facts.namespaces.insert(RUNNING.into(), running);
    facts.namespaces.insert(SIDES.into(), sides);
}

/// The running side's evidence first (the capture's line), then the
/// configured side's (the option file's line), so a finding points at both.
fn evidence_list(
    first: crate::facts::Evidence,
    next: Option<&Entry>,
) -> Vec<crate::facts::Evidence> {
    let mut out = vec![first];
    if let Some(Entry::Set(s)) = next {
        if let Some(e) = s.evidence.first() {
            if !out.contains(e) {
                out.push(e.clone());
            }
        }
    }
    out
}

/// What runs against what the next start applies, in one clause.
fn sentence(
    key: &str,
    next: Option<&Entry>,
    running: &Namespace,
    captured: bool,
) -> (String, crate::facts::Evidence) {
    let capture = crate::facts::Evidence::file(format!("/captures/{VARIABLES_CAPTURE}"));
    if !captured {
        // no capture to point at: the configured side's line
        let ev = match next {
            Some(Entry::Set(n)) => n.evidence.first().cloned(),
            _ => None,
        };
        return (
            format!("the running server is not captured (captures/{VARIABLES_CAPTURE}, `driftaudit snapshot --mysql`), so only what the next start applies is judged"),
            ev.unwrap_or(capture),
        );
    }
    let Some(Entry::Set(now)) = running.entries.get(key) else {
        return (
            "the running server does not report it (SHOW GLOBAL VARIABLES)".into(),
            capture,
        );
    };
    let ev = now.evidence.first().cloned().unwrap_or(capture);
    let shown = |v: &Value, raw: &str| match v {
        Value::Bool(b) => (if *b { "ON" } else { "OFF" }).to_string(),
        Value::Size(_) => v.to_string(),
        _ if raw.is_empty() => "\"\" (empty)".to_string(),
        _ => raw.to_string(),
    };
    let now_text = shown(&now.value, &now.raw);
    match next {
        Some(Entry::Set(n)) if n.value.loosely_equals(&now.value) => {
            (format!("the running server runs {now_text} as well"), ev)
        }
        Some(Entry::Set(n)) => (
            format!(
                "the running server runs {now_text} until the next restart, which applies {}",
                shown(&n.value, &n.raw)
            ),
            ev,
        ),
        _ => (format!("the running server runs {now_text}"), ev),
    }
}
