//! Every setting and host fact that differs between two gathered hosts
//! ([`diff_facts`]): host facts, each namespace's settings (option files
//! by what the server makes of a key, `skip-X` as `X = OFF`), directory
//! sizes and the paths the policies test, each change with its evidence on
//! both sides. Values are compared loosely ([`same_value`]). Reads gathered
//! facts only; must not look at verdicts or files.

use std::collections::{BTreeMap, BTreeSet};

use crate::expr;
use crate::facts::{Entry, Evidence, Facts, Namespace};
use crate::report::diff::{Change, ChangeKind};
use crate::value::Value;

fn entry_text(e: &Entry) -> String {
    match e {
        Entry::Set(s) => {
            let shown = expr::show(&s.value);
            let raw = s.raw.trim();
            if !raw.is_empty() && raw != shown && raw != s.value.to_plain() {
                format!("{shown} ({raw})")
            } else {
                shown
            }
        }
        Entry::Unreadable { reason, .. } => format!("unreadable: {reason}"),
    }
}

fn entry_evidence(e: &Entry) -> Vec<Evidence> {
    match e {
        Entry::Set(s) => s.evidence.clone(),
        Entry::Unreadable { evidence, .. } => evidence.clone(),
    }
}

/// Loose equality of two values for the diff: [`Value::loosely_equals`],
/// plus boolean spellings on both sides (`ON` as text against `1`), which
/// `loosely_equals` only accepts when one side is already a boolean.
pub fn same_value(a: &Value, b: &Value) -> bool {
    if a.loosely_equals(b) {
        return true;
    }
    let boolish = |v: &Value| match v {
        Value::Bool(x) => Some(*x),
        Value::Number(n) if *n == 0.0 || *n == 1.0 => Some(*n == 1.0),
        Value::Str(s) => crate::value::parse_bool(s),
        _ => None,
    };
    matches!((boolish(a), boolish(b)), (Some(x), Some(y)) if x == y)
}

fn entries_equal(a: &Entry, b: &Entry) -> bool {
    match (a, b) {
        (Entry::Set(x), Entry::Set(y)) => same_value(&x.value, &y.value),
        (Entry::Unreadable { .. }, Entry::Unreadable { .. }) => true,
        _ => false,
    }
}

fn change(
    ns: &str,
    subject: &str,
    before: Option<String>,
    after: Option<String>,
    eb: Vec<Evidence>,
    ea: Vec<Evidence>,
) -> Change {
    let kind = match (&before, &after) {
        (Some(_), Some(_)) | (None, None) => ChangeKind::Changed,
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
    };
    Change {
        subject: subject.to_string(),
        namespace: ns.to_string(),
        kind,
        before,
        after,
        evidence_before: eb,
        evidence_after: ea,
    }
}

/// Namespaces built only from others for rules to read (each MySQL
/// variable's running side, a sentence on both, the roles inferred, each
/// sysctl key's two sides): a change there is a change of their sources,
/// shown once, there. (`mysql_next`, what the next start applies, is
/// shown: a compiled default a new version changes is a change nothing
/// else shows.)
const VIEWS: [&str; 4] = [
    "mysql_running",
    "mysql_sides",
    "mysql_roles",
    "sysctl_sides",
];

/// Option-file namespaces, where `skip-X` is `X = OFF` to the server.
const OPTION_NAMESPACES: [&str; 4] = ["mycnf", "mycnf_effective", "mysql_next", "zimbra_mycnf"];

/// An option's key and value as the server takes them: `skip_X` set (on)
/// is `X` off, so `skip-external-locking` before and `external_locking =
/// OFF` after (how each release's option table names it) are one setting.
fn server_meaning<'a>(k: &'a str, e: &Entry) -> (&'a str, Option<bool>) {
    let as_bool = |e: &Entry| match e {
        Entry::Set(s) => match &s.value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) if *n == 0.0 || *n == 1.0 => Some(*n == 1.0),
            Value::Str(x) => crate::value::parse_bool(x),
            _ => None,
        },
        Entry::Unreadable { .. } => None,
    };
    match (k.strip_prefix("skip_"), as_bool(e)) {
        (Some(base), Some(b)) => (base, Some(!b)),
        (_, b) => (k, b),
    }
}

fn diff_namespace(name: &str, b: Option<&Namespace>, a: Option<&Namespace>, out: &mut Vec<Change>) {
    let empty = Namespace::default();
    let (nb, na) = (b.unwrap_or(&empty), a.unwrap_or(&empty));
    // not read on either side (for whatever reason each gives): the same
    // state, not a change
    if nb.unavailable.is_some() && na.unavailable.is_some() {
        return;
    }
    if nb.unavailable.is_some() || na.unavailable.is_some() {
        let describe = |n: &Namespace| match &n.unavailable {
            Some(r) => format!("unavailable: {r}"),
            None => format!("{} setting(s)", n.entries.len()),
        };
        if nb.unavailable != na.unavailable {
            out.push(change(
                name,
                "*",
                Some(describe(nb)),
                Some(describe(na)),
                Vec::new(),
                Vec::new(),
            ));
        }
        return;
    }
    if OPTION_NAMESPACES.contains(&name) {
        diff_options(name, nb, na, out);
        return;
    }
    let keys: BTreeSet<&String> = nb.entries.keys().chain(na.entries.keys()).collect();
    // counters and random values the kernel changes by itself (a snapshot
    // leaves them out of its capture): never a change
    let volatile = |k: &str| {
        name == "sysctl" && (crate::snapshot::volatile_sysctl(k) || k == "vm.stat_refresh")
    };
    for k in keys.into_iter().filter(|k| !volatile(k)) {
        match (nb.entries.get(k), na.entries.get(k)) {
            (Some(x), Some(y)) if entries_equal(x, y) => {}
            // a live key no one can read (write-only, EIO) against a capture
            // that could not list it: nothing is known to have changed
            (None, Some(Entry::Unreadable { .. })) | (Some(Entry::Unreadable { .. }), None)
                if name == "sysctl" => {}
            (x, y) => out.push(change(
                name,
                k,
                x.map(entry_text),
                y.map(entry_text),
                x.map(entry_evidence).unwrap_or_default(),
                y.map(entry_evidence).unwrap_or_default(),
            )),
        }
    }
}

/// A namespace's entries by what the server makes of each key.
type ByMeaning<'a> = BTreeMap<&'a str, (&'a String, &'a Entry, Option<bool>)>;

fn by_meaning(n: &Namespace) -> ByMeaning<'_> {
    n.entries
        .iter()
        .map(|(k, e)| {
            let (m, b) = server_meaning(k, e);
            (m, (k, e, b))
        })
        .collect()
}

/// [`diff_namespace`] of option files: keys compared by what the server
/// makes of them ([`server_meaning`]), shown as written.
fn diff_options(name: &str, nb: &Namespace, na: &Namespace, out: &mut Vec<Change>) {
    let (sb, sa) = (by_meaning(nb), by_meaning(na));
    let keys: BTreeSet<&str> = sb.keys().chain(sa.keys()).copied().collect();
    for k in keys {
        let (x, y) = (sb.get(k), sa.get(k));
        let same = match (x, y) {
            (Some((_, _, Some(p))), Some((_, _, Some(q)))) => p == q,
            (Some((_, e, _)), Some((_, f, _))) => entries_equal(e, f),
            _ => false,
        };
        if same {
            continue;
        }
        let shown = y.or(x).map_or(k, |(orig, _, _)| orig.as_str());
        out.push(change(
            name,
            shown,
            x.map(|(_, e, _)| entry_text(e)),
            y.map(|(_, e, _)| entry_text(e)),
            x.map(|(_, e, _)| entry_evidence(e)).unwrap_or_default(),
            y.map(|(_, e, _)| entry_evidence(e)).unwrap_or_default(),
        ));
    }
}

/// Every setting and fact that differs between two gathered hosts. Values are
/// compared with [`same_value`] after the namespaces'
/// own canonicalisation of names, so spelling differences are not changes.
pub fn diff_facts(b: &Facts, a: &Facts) -> Vec<Change> {
    let mut out = Vec::new();
    // Host facts (the host name is in the header, not a change).
    let keys: BTreeSet<&String> = b.facts.keys().chain(a.facts.keys()).collect();
    for k in keys.into_iter().filter(|k| k.as_str() != "hostname") {
        let show = |v: &Result<crate::value::Value, String>| match v {
            Ok(v) => expr::show(v),
            Err(e) => format!("unknown: {e}"),
        };
        match (b.facts.get(k), a.facts.get(k)) {
            (Some(Ok(x)), Some(Ok(y))) if same_value(x, y) => {}
            (Some(Err(_)), Some(Err(_))) => {}
            (x, y) => out.push(change(
                "facts",
                k,
                x.map(show),
                y.map(show),
                x.map(|_| fact_evidence(k, b)).unwrap_or_default(),
                y.map(|_| fact_evidence(k, a)).unwrap_or_default(),
            )),
        }
    }
    // Settings namespaces, but not the views rules judge by, which say
    // again what `mycnf_effective` and `mysql` say (issue 48).
    let names: BTreeSet<&String> = b
        .namespaces
        .keys()
        .chain(a.namespaces.keys())
        .filter(|n| !VIEWS.contains(&n.as_str()))
        .collect();
    for n in names {
        diff_namespace(n, b.namespaces.get(n), a.namespaces.get(n), &mut out);
    }
    // Directory sizes.
    let dirs: BTreeSet<&String> = b.dir_sizes.keys().chain(a.dir_sizes.keys()).collect();
    for d in dirs {
        let show = |v: &Result<u64, String>| match v {
            Ok(n) => crate::value::format_size(*n as f64),
            Err(e) => format!("unknown: {e}"),
        };
        match (b.dir_sizes.get(d), a.dir_sizes.get(d)) {
            (Some(Ok(x)), Some(Ok(y))) if x == y => {}
            (Some(Err(_)), Some(Err(_))) => {}
            (x, y) => out.push(change(
                "du",
                d,
                x.map(show),
                y.map(show),
                Vec::new(),
                Vec::new(),
            )),
        }
    }
    // Paths the policies test for.
    let paths: BTreeSet<&String> = b
        .existing_paths
        .iter()
        .chain(a.existing_paths.iter())
        .collect();
    for p in paths {
        let (x, y) = (b.existing_paths.contains(p), a.existing_paths.contains(p));
        if x != y {
            let s = |e: bool| e.then(|| "exists".to_string());
            out.push(change("paths", p, s(x), s(y), Vec::new(), Vec::new()));
        }
    }
    out
}

/// Where a host fact comes from (the file its reader reads first).
fn fact_evidence(name: &str, f: &Facts) -> Vec<Evidence> {
    let path = match name {
        "mem_total" => "/proc/meminfo",
        "cpu_count" => "/proc/cpuinfo",
        "kernel_release" => {
            let from_capture = f.namespaces.get("sysctl").is_some_and(|n| {
                n.entries
                    .values()
                    .flat_map(entry_evidence)
                    .any(|e| e.path.starts_with("/captures/"))
            });
            if from_capture {
                "/captures/sysctl-a.txt"
            } else {
                "/proc/sys/kernel/osrelease"
            }
        }
        n if n.starts_with("os_") => "/etc/os-release",
        _ => return Vec::new(),
    };
    vec![Evidence::file(path)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Setting;
    use crate::host::Host;
    use crate::value::parse_size;

    fn facts(host: &str, ns: &str, canon: fn(&str) -> String, kv: &[(&str, Value, &str)]) -> Facts {
        let h =
            Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean")).unwrap();
        let mut f = Facts::new(&h);
        f.host = host.into();
        let mut n = Namespace::new("not set");
        n.canonicalize = Some(canon);
        for (k, v, raw) in kv {
            n.set(
                n.canonical(k),
                Setting::new(v.clone(), *raw, Evidence::line("/etc/my.cnf", 3)),
            );
        }
        f.namespaces.insert(ns.into(), n);
        f
    }

    fn option_canon(k: &str) -> String {
        k.trim().to_ascii_lowercase().replace('-', "_")
    }

    #[test]
    fn spelling_differences_are_not_changes() {
        let b = facts(
            "db1",
            "mycnf",
            option_canon,
            &[
                (
                    "innodb_buffer_pool_size",
                    Value::Size(parse_size("2048M").unwrap()),
                    "2048M",
                ),
                ("Skip-Name-Resolve", Value::Str("ON".into()), "ON"),
                ("max_connections", Value::Number(151.0), "151"),
            ],
        );
        let a = facts(
            "db1",
            "mycnf",
            option_canon,
            &[
                (
                    "innodb-buffer-pool-size",
                    Value::Number(2147483648.0),
                    "2147483648",
                ),
                ("skip_name_resolve", Value::Number(1.0), "1"),
                ("max_connections", Value::Number(500.0), "500"),
                ("log_bin", Value::Str("mysql-bin".into()), "mysql-bin"),
            ],
        );
        let c = diff_facts(&b, &a);
        let got: Vec<(&str, ChangeKind)> = c.iter().map(|c| (c.subject.as_str(), c.kind)).collect();
        assert_eq!(
            got,
            [
                ("log_bin", ChangeKind::Added),
                ("max_connections", ChangeKind::Changed)
            ]
        );
        assert_eq!(c[1].before.as_deref(), Some("151"));
        assert_eq!(c[1].evidence_after, [Evidence::line("/etc/my.cnf", 3)]);
        // and the reverse direction gives a removal
        let r = diff_facts(&a, &b);
        assert!(r
            .iter()
            .any(|c| c.subject == "log_bin" && c.kind == ChangeKind::Removed));
    }
}
