//! The mycnf namespaces (effective, per file, overridden) built from the
//! resolved options, with their evidence. Must not read the host.

use std::collections::{BTreeMap, BTreeSet};

use super::limits;
use super::model::{RawOption, MAX_OVERRIDDEN_EVIDENCE, SOURCE};
use super::names::{
    canonical_name, read_name, server_value, typed_option, Accept, ReadAs,
    BOOLEANS_REQUIRING_VALUE, CUMULATIVE,
};

use crate::facts::{Entry, Evidence, FileIssue, Namespace, Setting};
use crate::parse::mycnf;
use crate::secret::{self, REDACTED};
use crate::value::Value;

/// The `mycnf` namespace (every occurrence, last wins, as `my_print_defaults`
/// hands it over) and the start of `mycnf_effective` (only the occurrences
/// the server accepts; an option whose value the server refuses is
/// unreadable: the server does not start).
pub(super) fn build_namespaces(
    argv: &[RawOption],
    read: &ReadAs,
    issues: &mut Vec<FileIssue>,
) -> (Namespace, Namespace) {
    let mut ns = Namespace::of("mycnf");
    ns.canonicalize = Some(canonical_name);
    let mut eff = ns.clone();
    // Occurrences per key, in read order; the winner is the last. Building
    // the evidence once at the end keeps this linear in the number of lines.
    let mut out: BTreeMap<String, (Setting, Vec<Evidence>)> = BTreeMap::new();
    let mut eff_out: BTreeMap<String, (Setting, Vec<Evidence>)> = BTreeMap::new();
    let mut refused: BTreeMap<String, (String, Evidence)> = BTreeMap::new();
    // "set again" is said once per option and file, not once per line.
    let mut set_again: BTreeSet<(String, String)> = BTreeSet::new();
    // One issue per kind and file, however many lines (issue 29).
    let mut collected = crate::facts::IssueCollector::default();
    for o in argv {
        let name = read_name(read, &o.name, o.value.as_deref());
        if name.key.is_empty() {
            continue;
        }
        let ev = &o.evidence;
        let push = |issues: &mut crate::facts::IssueCollector, level, m: String| {
            issues.push(FileIssue {
                path: ev.path.clone(),
                line: ev.line,
                column: None,
                // Names and values are host data: one message stays one line of
                // reasonable size.
                message: crate::parse::truncate(&m, 800),
                source: SOURCE.into(),
                level,
                read_error: None,
            })
        };
        if let Some(m) = &name.ambiguous {
            push(&mut collected, crate::facts::IssueLevel::Problem, m.clone());
        }
        if let Some(p) = &name.prefix {
            push(
                &mut collected,
                crate::facts::IssueLevel::Note,
                format!(
                    "`{}` is read as `{}`: {} accepts a unique prefix of an option name, but says \"Using unique option prefix '{p}' is error-prone and can break in the future\" (a new option with the same beginning makes it ambiguous and stops the server; MySQL 8.0 refuses prefixes){}; write `{}`",
                    o.name,
                    name.key,
                    read.label(),
                    read.caveat(),
                    name.key
                ),
            );
        }
        let secret = secret::option_is_secret(&name.key);
        // A redacted value cannot be judged (and must not be quoted).
        let hidden = secret || o.value.as_deref() == Some(REDACTED);
        let (value, raw) = match (name.forced, &o.value) {
            (Some(b), _) => (Value::Bool(b), o.name.clone()),
            (None, None) => {
                if name.spec.is_none() && BOOLEANS_REQUIRING_VALUE.contains(&name.key.as_str()) {
                    push(
                        &mut collected,
                        crate::facts::IssueLevel::Problem,
                        format!(
                            "bare `{}`: MariaDB refuses to start (\"option '--{}' requires an argument\"); write `{} = ON`",
                            o.name,
                            name.key.replace('_', "-"),
                            o.name
                        ),
                    );
                }
                (Value::Bool(true), o.name.clone())
            }
            (None, Some(v)) if secret => (Value::Str(v.clone()), v.clone()),
            (None, Some(v)) => {
                let (value, warn) = match name.spec.map(|s| s.kind) {
                    Some(limits::Kind::Bool) => match mycnf::parse_bool(v) {
                        Ok(b) => (Value::Bool(b), None),
                        Err(b) => (
                            Value::Bool(b),
                            Some(format!("boolean value `{v}` is not recognised: the server sets OFF (use 1/0, ON/OFF, TRUE/FALSE)")),
                        ),
                    },
                    _ => typed_option(&name.key, v),
                };
                // A value the server refuses or ignores is reported below, once.
                let reported_below = !hidden
                    && !matches!(
                        server_value(&name, Some(v)),
                        Ok(Accept::AsTyped | Accept::Value(_))
                    );
                if let Some(w) = warn.filter(|_| !reported_below) {
                    push(
                        &mut collected,
                        crate::facts::IssueLevel::Problem,
                        format!("`{}`: {w}", o.name),
                    );
                }
                (value, v.clone())
            }
        };
        let (value, raw) = if secret {
            (Value::Str(REDACTED.into()), REDACTED.to_string())
        } else {
            (value, raw)
        };
        let s = Setting::new(value, raw, o.evidence.clone());
        // What the server does with this occurrence.
        let verdict = if hidden {
            Ok(Accept::AsTyped)
        } else {
            server_value(&name, o.value.as_deref())
        };
        let accepted = match verdict {
            Ok(Accept::AsTyped) => Some(s.clone()),
            Ok(Accept::Value(v)) if !secret => {
                let mut t = s.clone();
                t.value = v;
                Some(t)
            }
            Ok(Accept::Value(_)) => Some(s.clone()),
            Ok(Accept::Ignored) => {
                push(
                    &mut collected,
                    crate::facts::IssueLevel::Problem,
                    format!(
                        "`{}`: {} ignores this line (\"ignoring option '--{}' due to invalid value\"; use 1/0, ON/OFF, TRUE/FALSE){}",
                        o.name,
                        read.label(),
                        name.key.replace('_', "-"),
                        read.caveat()
                    ),
                );
                None
            }
            Err(why) if name.loose => {
                push(
                    &mut collected,
                    crate::facts::IssueLevel::Problem,
                    format!(
                        "`{}`: {why}; being `loose-`, {} ignores this line with a warning instead of refusing to start{}",
                        o.name,
                        read.label(),
                        read.caveat()
                    ),
                );
                None
            }
            Err(why) => {
                let shown = if secret {
                    crate::parse::truncate(&o.name, 120)
                } else {
                    crate::parse::truncate(o.arg.trim_start_matches('-'), 120)
                };
                let why = if secret {
                    "the server refuses its value".to_string()
                } else {
                    why
                };
                push(
                    &mut collected,
                    crate::facts::IssueLevel::Problem,
                    format!(
                        "`{shown}`: {why}: the server refuses to start (\"Error while setting value\" / \"Aborting\"){}",
                        read.caveat()
                    ),
                );
                refused.entry(name.key.clone()).or_insert_with(|| {
                    (
                        format!("`{shown}` at {}: {why}", o.evidence),
                        o.evidence.clone(),
                    )
                });
                None
            }
        };
        if let Some(prev) = out.get(&name.key) {
            // Overriding across files is how conf.d layouts work; only a second,
            // different value in the same file is suspicious. Cumulative options
            // (plugin_load_add, replicate_*) add up and are never overrides.
            let prev = &prev.0;
            let same_file = prev.evidence[0].path == s.evidence[0].path;
            if same_file
                && !CUMULATIVE.contains(&name.key.as_str())
                && !prev.value.loosely_equals(&s.value)
                && set_again.insert((name.key.clone(), ev.path.clone()))
            {
                push(
                    &mut collected,
                    crate::facts::IssueLevel::Problem,
                    format!(
                        "`{}` set again: `{}` here overrides `{}` from {}; the last value wins",
                        crate::parse::truncate(&name.key, 120),
                        crate::parse::truncate(&s.raw, 120),
                        crate::parse::truncate(&prev.raw, 120),
                        prev.evidence[0]
                    ),
                );
            }
        }
        for (map, setting) in [(&mut out, Some(s)), (&mut eff_out, accepted)] {
            let Some(setting) = setting else { continue };
            let ev = setting.evidence[0].clone();
            match map.get_mut(&name.key) {
                Some((win, all)) => {
                    *win = setting;
                    all.push(ev);
                    // Only the most recent assignments are kept (amortised O(1)).
                    if all.len() > 4 * (1 + MAX_OVERRIDDEN_EVIDENCE) {
                        all.drain(..all.len() - (1 + MAX_OVERRIDDEN_EVIDENCE));
                    }
                }
                None => {
                    map.insert(name.key.clone(), (setting, vec![ev]));
                }
            }
        }
    }
    let finish = |m: BTreeMap<String, (Setting, Vec<Evidence>)>| -> BTreeMap<String, Entry> {
        m.into_iter()
            .map(|(k, (mut s, mut all))| {
                all.reverse();
                all.truncate(1 + MAX_OVERRIDDEN_EVIDENCE);
                s.evidence = all;
                (k, Entry::Set(s))
            })
            .collect()
    };
    ns.entries = finish(out);
    eff.entries = finish(eff_out);
    for (k, (why, ev)) in refused {
        eff.entries.insert(
            k,
            Entry::Unreadable {
                reason: format!("the server refuses to start: {why}, so no value applies"),
                evidence: vec![ev],
            },
        );
    }
    issues.extend(collected.into_vec());
    (ns, eff)
}
