//! The running server as captured (`SHOW GLOBAL VARIABLES`): its typed
//! values, the data directory, and the buffer pool the server really
//! runs with. Must not read option files.

use super::model::{DEFAULT_DATADIR, VARIABLES_CAPTURE};
use super::names::is_size_option;
use super::server::ServerVersion;

use crate::facts::{Entry, Evidence, Facts, FileIssue, Namespace, Setting};
use crate::host::{Host, SourceKind};
use crate::parse::mysqlvars;
use crate::secret::{self, REDACTED};
use crate::value::{format_size, Value};

/// The data directory: `mycnf.datadir` when an option file sets it, else
/// [`DEFAULT_DATADIR`]. Call after [`gather`](super::gather).
pub fn datadir(facts: &Facts) -> String {
    match facts.namespaces.get("mycnf").and_then(|n| n.get("datadir")) {
        // `datadir = /` is the root directory, not an empty path.
        Some(Entry::Set(s)) if !s.raw.is_empty() => match s.raw.trim_end_matches('/') {
            "" => "/".to_string(),
            d => d.to_string(),
        },
        _ => DEFAULT_DATADIR.to_string(),
    }
}

/// Typed runtime value: ON/OFF booleans, sizes for byte options, numbers.
pub fn typed_runtime(name: &str, value: &str) -> Value {
    match value {
        "ON" => return Value::Bool(true),
        "OFF" => return Value::Bool(false),
        _ => {}
    }
    let int = value.strip_prefix('-').unwrap_or(value);
    if !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = value.parse::<f64>() {
            return if is_size_option(name) {
                Value::Size(n)
            } else {
                Value::Number(n)
            };
        }
    }
    if value.contains('.')
        && value.parse::<f64>().is_ok_and(f64::is_finite)
        && !value.ends_with('.')
    {
        if let Ok(n) = value.parse::<f64>() {
            return Value::Number(n);
        }
    }
    Value::Str(value.to_string())
}

/// The fix of an `unknown` that only the running server decides, on a live
/// host audited without `--mysql`: driftaudit queries a server only when
/// asked (nothing was refused, so the generic fix does not fit).
pub(super) fn not_read_live_fix(host: &Host) -> Option<String> {
    (host.kind() == SourceKind::Live && !host.has_live_capture(VARIABLES_CAPTURE)).then(|| {
        "Run it again with `--mysql` (`check --mysql`, `diff SNAPSHOT live --mysql`): driftaudit then reads the running server read-only with `SHOW GLOBAL VARIABLES` through the mysql client, on your client option files, `--mysql-defaults-file FILE` or `--mysql-socket PATH`; or audit a snapshot taken with `driftaudit snapshot --mysql`.".to_string()
    })
}

pub(super) fn runtime_namespace(host: &Host, facts: &mut Facts) -> Namespace {
    let path = format!("/captures/{VARIABLES_CAPTURE}");
    let text = match host.capture(VARIABLES_CAPTURE) {
        Ok(t) => t,
        Err(e) => {
            let reason = match host.kind() {
                SourceKind::Live if host.has_live_capture(VARIABLES_CAPTURE) => format!("the running server was not read (--mysql): {e}"),
                SourceKind::Live => "runtime MySQL/MariaDB variables are read from a live host only with --mysql (or audit a snapshot taken with `driftaudit snapshot --mysql`)".to_string(),
                SourceKind::Snapshot => format!("the snapshot has no captures/{VARIABLES_CAPTURE} ({e}): capture `mysql -NB -e 'SHOW GLOBAL VARIABLES'` to compare with the running server"),
            };
            let mut ns = Namespace::unavailable(reason);
            ns.unknown_fix = not_read_live_fix(host);
            return ns;
        }
    };
    let parsed = mysqlvars::parse(&text);
    for i in &parsed.issues {
        facts.issues.push(FileIssue::from_parse("mysql", &path, i));
    }
    let mut ns = Namespace::of("mysql");
    ns.canonicalize = Some(crate::parse::mycnf::normalize_name);
    for v in parsed.vars {
        let (value, raw) = if secret::server_variable_is_secret(&v.name) {
            (Value::Str(REDACTED.into()), REDACTED.to_string())
        } else {
            (typed_runtime(&v.name, &v.value), v.value.clone())
        };
        ns.set(
            v.name,
            Setting::new(value, raw, Evidence::line(path.clone(), v.line)),
        );
    }
    ns
}

pub(super) fn runtime_number(ns: &Namespace, key: &str) -> Option<f64> {
    match ns.get(key) {
        Some(Entry::Set(s)) => s.value.as_f64(),
        _ => None,
    }
}

pub(super) const MIB: f64 = 1048576.0;

/// The buffer pool size the server runs with for a configured size, as
/// InnoDB rounds it. `runtime`/`config` supply chunk size and instances when
/// known. Returns the size and how it was derived.
pub fn effective_buffer_pool(
    configured: f64,
    version: Option<&ServerVersion>,
    runtime: Option<&Namespace>,
    config: &Namespace,
) -> (f64, String) {
    let min = 2.0 * MIB;
    let mut n = configured.max(min);
    let clamp_note = if configured < min {
        " (raised to the 2 MiB minimum)"
    } else {
        ""
    };
    let Some(v) = version else {
        return (
            n,
            format!("server version unknown: its rounding is not applied{clamp_note}"),
        );
    };
    let lookup = |key: &str| {
        runtime
            .and_then(|r| runtime_number(r, key))
            .or_else(|| runtime_number(config, key))
    };
    let name = if v.mariadb { "MariaDB" } else { "MySQL" };
    let ver = format!("{name} {}.{}.{}", v.parts[0], v.parts[1], v.parts[2]);
    let new_mariadb = v.mariadb
        && ((v.parts[0] == 10 && v.parts[1] == 11 && v.at_least([10, 11, 12]))
            || (v.parts[0] == 11 && v.parts[1] == 4 && v.at_least([11, 4, 6]))
            || v.at_least([11, 8, 2]));
    if new_mariadb {
        n = (n / MIB).floor() * MIB;
        return (
            n,
            format!("{ver} sizes the pool in 1 MiB steps (rounded down){clamp_note}"),
        );
    }
    let old_rules = !v.mariadb && v.at_least([5, 7, 5]) || v.mariadb && v.at_least([10, 2, 0]);
    if !old_rules {
        return (n, format!("{ver}: no chunk rounding{clamp_note}"));
    }
    let default_instances = if v.mariadb && v.at_least([10, 5, 0]) || n < 1024.0 * MIB {
        1.0
    } else {
        8.0
    };
    let instances = lookup("innodb_buffer_pool_instances")
        .filter(|i| *i >= 1.0)
        .unwrap_or(default_instances);
    let autosize = v.mariadb && v.at_least([10, 8, 0]);
    let mut chunk = match lookup("innodb_buffer_pool_chunk_size") {
        Some(c) if c > 0.0 => c,
        _ if autosize => (((n / 64.0) / MIB).floor() * MIB).max(MIB),
        _ => 128.0 * MIB,
    };
    if chunk * instances > n {
        chunk = ((n / instances / MIB).floor() * MIB).max(MIB);
    }
    let unit = chunk * instances;
    let rounded = (n / unit).ceil() * unit;
    (
        rounded,
        format!(
            "{ver} rounds the pool up to a multiple of chunk size × instances ({} × {}){clamp_note}",
            format_size(chunk),
            instances
        ),
    )
}
