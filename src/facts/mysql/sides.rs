//! The two sides of every server variable, for rules that judge both (issue
//! 48): `mysql_next` (what the next start gives the server: the option
//! files' value as the server runs it, else the compiled default of its
//! version; never the running value, which a restart discards),
//! `mysql_running` (the running server's variables, plus the derived
//! `innodb_redo_log_size`), `mysql_sides` (one sentence per variable saying
//! what runs against what the next start applies) and the `mysql_captured`
//! fact (whether the running server's variables were read at all). Built
//! from the namespaces already gathered; no I/O, no verdict.

use std::collections::BTreeSet;

use super::documented;
use super::model::VARIABLES_CAPTURE;
use super::server::ServerVersion;
use super::sizing;

use crate::facts::{Entry, Facts, Namespace, Setting};
use crate::value::Value;

/// The configured side's namespace.
pub const NEXT: &str = "mysql_next";
/// The running side's namespace.
pub const RUNNING: &str = "mysql_running";
/// The sentence per variable.
pub const SIDES: &str = "mysql_sides";
/// The fact: the running server's variables were read.
pub const CAPTURED: &str = "mysql_captured";

/// Build the three namespaces and the fact from `mycnf_effective`, `mysql`
/// and the version the option files were read for.
pub fn gather(version: Option<&ServerVersion>, facts: &mut Facts) {
    let effective = facts.namespaces.get("mycnf_effective").cloned();
    let runtime = facts.namespaces.get("mysql").cloned().unwrap_or_default();
    let captured = runtime.unavailable.is_none();
    let first_file = facts
        .option_files
        .as_ref()
        .and_then(|o| o.files_read.first().cloned())
        .unwrap_or_else(|| super::model::DEFAULT_FILES[0].to_string());
    let table = version.and_then(documented::for_version);

    // Configured: every variable MySQLTuner sizes, every option a file sets
    // and every variable the version's table documents.
    let mut names: BTreeSet<String> = sizing::VARIABLES.iter().map(|s| s.to_string()).collect();
    if let Some(e) = &effective {
        names.extend(e.entries.keys().cloned());
    }
    if let Some(t) = table {
        names.extend(t.rows.iter().map(|r| r.name.clone()));
    }
    let mut next = Namespace::of(NEXT);
    next.canonicalize = Some(crate::parse::mycnf::normalize_name);
    for name in &names {
        let e = start_only(name, effective.as_ref(), &runtime, version, table).or_else(|| {
            sizing::resolve(name, effective.as_ref(), None, version, table, &first_file)
        });
        if let Some(e) = e {
            next.entries.insert(name.clone(), e);
        }
    }
    let redo = sizing::redo_log_size(&next, version, effective.as_ref());
    next.entries.insert(sizing::REDO_SIZE.into(), redo);

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
    facts.namespaces.insert(NEXT.into(), next);
    facts.namespaces.insert(RUNNING.into(), running);
    facts.namespaces.insert(SIDES.into(), sides);
}

/// A variable no option file sets that the version's table (else the
/// nearest documented line's) documents as read only at start: the next start gives it what the running server got
/// at its start (its command line, or the compiled default), since nothing
/// can have changed it since; the running value, noted so.
fn start_only(
    name: &str,
    effective: Option<&Namespace>,
    runtime: &Namespace,
    version: Option<&ServerVersion>,
    table: Option<&documented::DocTable>,
) -> Option<Entry> {
    if effective.is_some_and(|e| e.unavailable.is_some() || e.get(name).is_some()) {
        return None;
    }
    // the version's own table, else the nearest documented line's
    let dynamic = match table.and_then(|t| t.get(name)) {
        Some(row) => row.dynamic,
        None if documented::kind_anywhere(name).is_some() => documented::is_dynamic(version, name),
        None => return None,
    };
    if runtime.unavailable.is_some() || dynamic {
        return None;
    }
    let Some(Entry::Set(s)) = runtime.get(name) else {
        return None;
    };
    let mut s = s.clone();
    s.note = Some(format!(
        "not set in any option file; the server reads it only at start, so the next start gives what it runs now (its command line or compiled default; SHOW GLOBAL VARIABLES, captures/{VARIABLES_CAPTURE})"
    ));
    Some(Entry::Set(s))
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
