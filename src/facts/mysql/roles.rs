//! Role evidence for the server (issue 48): whether it is a Galera cluster
//! node, and from what that was inferred, as the `mysql_galera` and
//! `mysql_galera_from` facts and the `mysql_roles.galera` setting (a short
//! `yes, inferred from ...` / `no: ...` with the lines it was read from, so
//! a passing finding that reads it says so). The running server decides where it was
//! captured and reports `wsrep_on` (MariaDB Galera: `wsrep_on = ON` with a
//! provider loaded); otherwise the option files (`wsrep_on` and a
//! `wsrep_provider` that is not `none`, what a node needs to join a
//! cluster). Built from gathered namespaces; no I/O, no verdict.

use super::model::Gathered;

use crate::facts::{Entry, Evidence, Facts, Namespace, Setting};
use crate::value::Value;

/// The fact: the server is a Galera node.
pub const GALERA: &str = "mysql_galera";
/// The fact: what that was inferred from, in words.
pub const GALERA_FROM: &str = "mysql_galera_from";
/// The namespace of roles as settings.
pub const ROLES: &str = "mysql_roles";

fn set<'a>(ns: Option<&'a Namespace>, key: &str) -> Option<&'a crate::facts::Setting> {
    match ns?.get(key) {
        Some(Entry::Set(s)) => Some(s),
        _ => None,
    }
}

fn on(v: &Value) -> bool {
    v.as_bool().unwrap_or(false)
}

fn provider_loaded(raw: &str) -> bool {
    let p = raw.trim();
    !p.is_empty() && !p.eq_ignore_ascii_case("none")
}

/// Where a setting was read (the evidence's own Display: `path:line`).
fn at(s: &crate::facts::Setting) -> String {
    match s.evidence.first() {
        Some(e) => e.to_string(),
        None => "the option files".into(),
    }
}

/// Add the two facts from `mysql` (running) and `mycnf_effective` (files).
pub fn gather(facts: &mut Facts) {
    let g = Gathered::of(facts);
    let running = g.runtime;
    let files = g.effective.filter(|n| n.unavailable.is_none());
    let mut lines: Vec<Evidence> = Vec::new();
    let mut keep = |s: Option<&Setting>| {
        if let Some(e) = s.and_then(|s| s.evidence.first()) {
            lines.push(e.clone());
        }
    };
    let (galera, from, short) = match set(running, "wsrep_on") {
        Some(w) => {
            keep(Some(w));
            keep(set(running, "wsrep_provider"));
            let provider = set(running, "wsrep_provider").map(|p| p.raw.clone());
            let loaded = provider.as_deref().is_some_and(provider_loaded);
            if on(&w.value) && loaded {
                (
                    true,
                    format!(
                        "the running server reports wsrep_on = ON with the provider {} loaded (SHOW GLOBAL VARIABLES, {})",
                        provider.unwrap_or_default(),
                        at(w)
                    ),
                    "yes, inferred from the running server: wsrep_on = ON, a wsrep_provider loaded",
                )
            } else {
                (
                    false,
                    format!(
                        "the running server reports wsrep_on = {} and wsrep_provider = {} (SHOW GLOBAL VARIABLES): it is not a Galera node",
                        w.raw,
                        provider.unwrap_or_else(|| "(not reported)".into())
                    ),
                    "no: the running server reports wsrep_on OFF or no wsrep_provider",
                )
            }
        }
        None => {
            let w = set(files, "wsrep_on");
            let p = set(files, "wsrep_provider");
            keep(w);
            keep(p);
            match (w, p) {
                (Some(w), Some(p)) if on(&w.value) && provider_loaded(&p.raw) => (
                    true,
                    format!(
                        "the option files set wsrep_on = {} ({}) and wsrep_provider = {} ({})",
                        w.raw,
                        at(w),
                        p.raw,
                        at(p)
                    ),
                    "yes, inferred from the option files: wsrep_on = ON and a wsrep_provider",
                ),
                _ => (
                    false,
                    "neither the running server (wsrep_on) nor the option files (wsrep_on with a wsrep_provider) show a Galera node".to_string(),
                    "no: neither the running server nor the option files show wsrep_on with a provider",
                ),
            }
        }
    };
    // a role is a setting only where some line shows it either way; with
    // no wsrep_on anywhere the key is absent (no evidence to point at)
    let mut roles = Namespace::of(ROLES);
    roles.canonicalize = Some(crate::parse::mycnf::normalize_name);
    if let Some(first) = lines.first().cloned() {
        let mut s = Setting::new(Value::Str(short.into()), short, first);
        s.evidence.extend(lines.into_iter().skip(1));
        s.note = Some(from.clone());
        roles.entries.insert("galera".into(), Entry::Set(s));
    }
    facts.namespaces.insert(ROLES.into(), roles);
    facts.facts.insert(GALERA.into(), Ok(Value::Bool(galera)));
    facts.facts.insert(GALERA_FROM.into(), Ok(Value::Str(from)));
}
