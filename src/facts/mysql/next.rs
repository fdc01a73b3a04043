//! The `mysql_next` namespace: what the next start of the server applies,
//! one definition for every rule that judges the configured side (the
//! durability, sizing and mysqlsec rules) and for
//! `mysql.config-runtime-drift` (a `SET GLOBAL` the next restart reverts).
//! Per variable, the first that holds: the option files' value as the
//! server runs it (`mycnf_effective`); for a variable the server derives at
//! start from one a file sets (`innodb_dedicated_server` sizes the pool), a
//! variable it reads only at start, or one it lowers at start for the
//! open-files limit, what the running server got at its start; else the
//! compiled default of the version (documented tables), noted; else
//! unknown naming what decides it. Never a running value a restart
//! discards. Plus `innodb_redo_log_size`. Built from the gathered
//! namespaces; no I/O, no verdict.

use std::collections::BTreeSet;

use super::documented::{self, DocTable};
use super::model::{Gathered, VARIABLES_CAPTURE};
use super::server::ServerVersion;
use super::sizing;

use crate::facts::{Entry, Facts, Namespace};

/// The namespace's name.
pub const NAMESPACE: &str = "mysql_next";

/// Variables the server lowers at start-up for the open-files limit (or
/// keeps under another one): a running value below the compiled default is
/// the server's own adjustment, which the next start repeats, not a `SET
/// GLOBAL` (MariaDB 10.11.19 with 20000 open files runs
/// `table_open_cache_instances` 4, not 8).
const LOWERED_AT_START: [&str; 7] = [
    // MySQL: at most one page cleaner per buffer-pool instance
    "innodb_page_cleaners",
    "max_connections",
    "table_open_cache",
    "table_open_cache_instances",
    "thread_cache_size",
    "innodb_open_files",
    "open_files_limit",
];

/// Variables the server derives from others an option file may set: when
/// the file sets one of those, the compiled default is not what runs.
const DERIVED_FROM: [(&str, &[&str]); 12] = [
    // one setting under two names (MySQL 8.0, MariaDB 10.6+)
    ("binlog_expire_logs_seconds", &["expire_logs_days"]),
    ("expire_logs_days", &["binlog_expire_logs_seconds"]),
    // MariaDB 10.11's new names of the slow log's variables
    ("slow_query_log", &["log_slow_query"]),
    ("long_query_time", &["log_slow_query_time"]),
    // MySQL 5.7's old name
    ("transaction_isolation", &["tx_isolation"]),
    // MySQL 8.0.30+: the capacity is log file size x files when only they
    // are set; innodb_dedicated_server sizes pool, redo log and flushing
    (
        "innodb_redo_log_capacity",
        &[
            "innodb_log_file_size",
            "innodb_log_files_in_group",
            "innodb_dedicated_server",
        ],
    ),
    (
        "innodb_log_file_size",
        &["innodb_redo_log_capacity", "innodb_dedicated_server"],
    ),
    (
        "innodb_log_files_in_group",
        &["innodb_redo_log_capacity", "innodb_dedicated_server"],
    ),
    ("innodb_buffer_pool_size", &["innodb_dedicated_server"]),
    ("innodb_flush_method", &["innodb_dedicated_server"]),
    // sized from the pool (MariaDB 10.8+ autosizes the chunk; MySQL 1 or
    // 8 instances by pool size)
    (
        "innodb_buffer_pool_chunk_size",
        &["innodb_buffer_pool_size"],
    ),
    (
        "innodb_buffer_pool_instances",
        &["innodb_buffer_pool_size", "innodb_dedicated_server"],
    ),
];

/// Build `mysql_next` from `mycnf_effective`, the capture and the version
/// the option files were read for, and add it to `facts`.
pub(super) fn gather(version: Option<&ServerVersion>, facts: &mut Facts) {
    let g = Gathered::of(facts);
    let ns = build(&g, version);
    facts.namespaces.insert(NAMESPACE.into(), ns);
}

fn build(g: &Gathered, version: Option<&ServerVersion>) -> Namespace {
    let mut next = Namespace::of(NAMESPACE);
    next.canonicalize = Some(crate::parse::mycnf::normalize_name);
    if let Some(why) = g.effective.and_then(|e| e.unavailable.clone()) {
        next.unavailable = Some(why);
        return next;
    }
    let table = version.and_then(documented::for_version);
    // every variable MySQLTuner sizes, every option a file sets and every
    // variable the version's table documents
    let mut names: BTreeSet<String> = sizing::VARIABLES.iter().map(|s| s.to_string()).collect();
    if let Some(e) = g.effective {
        names.extend(e.entries.keys().cloned());
    }
    if let Some(t) = table {
        names.extend(t.rows.iter().map(|r| r.name.clone()));
    }
    for name in &names {
        let e = match g.effective.and_then(|e| e.get(name)) {
            Some(e) => Some(e.clone()),
            None => as_started(name, g, version, table).or_else(|| {
                sizing::resolve(name, g.effective, None, version, table, &g.first_file)
            }),
        };
        if let Some(e) = e {
            next.entries.insert(name.clone(), e);
        }
    }
    let redo = sizing::redo_log_size(&next, version, g.effective);
    next.entries.insert(sizing::REDO_SIZE.into(), redo);
    next
}

/// A variable no option file sets whose next value is what the running
/// server got at its start, the running value noted so: one the server
/// derives from a variable a file sets, one it sizes at start-up (`AUTO`),
/// one the version's table (else the nearest documented line's) says is
/// read only at start, or one the server lowered at start below its
/// compiled default. Without a capture,
/// a derived variable is unknown (only the running server shows what it
/// derived); the others take the compiled default.
fn as_started(
    name: &str,
    g: &Gathered,
    version: Option<&ServerVersion>,
    table: Option<&DocTable>,
) -> Option<Entry> {
    let derived_from = DERIVED_FROM
        .iter()
        .find(|(k, _)| *k == name)
        .and_then(|(_, from)| {
            from.iter()
                .find(|f| g.effective.is_some_and(|e| e.get(f).is_some()))
        });
    let running = match g.runtime.and_then(|rt| rt.get(name)) {
        Some(Entry::Set(s)) => Some(s),
        _ => None,
    };
    let note = if let Some(from) = derived_from {
        let Some(_) = running else {
            return Some(Entry::Unreadable {
                reason: format!("`{name}` is not set in any option file, and the server derives it at start from `{from}`, which one sets: only the running server shows what it derived (captures/{VARIABLES_CAPTURE}, `driftaudit snapshot --mysql`)"),
                evidence: vec![],
            });
        };
        format!("not set in any option file; the server derives it at start from `{from}`, which one sets, so the next start gives what it runs now (SHOW GLOBAL VARIABLES, captures/{VARIABLES_CAPTURE})")
    } else {
        let now = running?;
        let row = table.and_then(|t| t.get(name));
        let dynamic = match row {
            Some(row) => row.dynamic,
            None if documented::kind_anywhere(name).is_some() => {
                documented::is_dynamic(version, name)
            }
            None => return None,
        };
        let lowered = LOWERED_AT_START.contains(&name)
            && match (now.value.as_f64(), row.and_then(|r| r.default_number())) {
                (Some(h), Some(d)) => h < d,
                _ => false,
            };
        let auto = row.is_some_and(|r| r.default.as_deref().is_none_or(|d| d == "AUTO"));
        if auto {
            format!("not set in any option file; the server sizes it at start-up (no fixed compiled default: AUTO in the version's table), so the next start gives about what it runs now (SHOW GLOBAL VARIABLES, captures/{VARIABLES_CAPTURE})")
        } else if lowered {
            format!("not set in any option file; the server lowers it at start below its compiled default (for the open-files limit), so the next start gives about what it runs now (SHOW GLOBAL VARIABLES, captures/{VARIABLES_CAPTURE})")
        } else if !dynamic {
            format!("not set in any option file; the server reads it only at start, so the next start gives what it runs now (its command line or compiled default; SHOW GLOBAL VARIABLES, captures/{VARIABLES_CAPTURE})")
        } else {
            return None;
        }
    };
    let mut s = running?.clone();
    s.note = Some(note);
    Some(Entry::Set(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Evidence, Setting};
    use crate::value::Value;

    fn ns(rows: &[(&str, Value, &str)], path: &str) -> Namespace {
        let mut n = Namespace::default();
        for (i, (k, v, raw)) in rows.iter().enumerate() {
            n.set(
                *k,
                Setting::new(v.clone(), *raw, Evidence::line(path, i + 1)),
            );
        }
        n
    }

    /// Issue 48: the one `mysql_next` holds, for a pool the server sizes
    /// from `innodb_dedicated_server` (set in a file), what the running
    /// server sized, not the 128 MiB compiled default the two namespaces
    /// disagreed on; without a capture it is unknown naming the option.
    #[test]
    fn a_pool_derived_from_innodb_dedicated_server_is_the_running_one_not_the_default() {
        let files = ns(
            &[("innodb_dedicated_server", Value::Bool(true), "ON")],
            "/etc/my.cnf",
        );
        let rt = ns(
            &[(
                "innodb_buffer_pool_size",
                Value::Size(12.0 * 1073741824.0),
                "12884901888",
            )],
            "/captures/mysql-variables.tsv",
        );
        let v = ServerVersion::parse("8.0.36").unwrap();
        let g = Gathered {
            effective: Some(&files),
            runtime: Some(&rt),
            first_file: "/etc/my.cnf".into(),
        };
        match build(&g, Some(&v)).get("innodb_buffer_pool_size") {
            Some(Entry::Set(s)) => {
                assert_eq!(s.value.as_f64(), Some(12.0 * 1073741824.0));
                assert!(s
                    .note
                    .as_deref()
                    .unwrap_or("")
                    .contains("innodb_dedicated_server"));
            }
            other => panic!("{other:?}"),
        }
        let g = Gathered { runtime: None, ..g };
        match build(&g, Some(&v)).get("innodb_buffer_pool_size") {
            Some(Entry::Unreadable { reason, .. }) => {
                assert!(
                    reason.contains("derives it at start from `innodb_dedicated_server`"),
                    "{reason}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    /// A compiled default of a variable no file sets says that a running
    /// value that differs reverts to it at the next restart (what
    /// `mysql.config-runtime-drift` reports).
    #[test]
    fn a_compiled_default_says_a_set_global_reverts_to_it() {
        let files = ns(&[], "/etc/my.cnf");
        let rt = ns(
            &[("local_infile", Value::Bool(false), "OFF")],
            "/captures/mysql-variables.tsv",
        );
        let v = ServerVersion::parse("10.11.19-MariaDB").unwrap();
        let g = Gathered {
            effective: Some(&files),
            runtime: Some(&rt),
            first_file: "/etc/mysql/my.cnf".into(),
        };
        match build(&g, Some(&v)).get("local_infile") {
            Some(Entry::Set(s)) => {
                assert_eq!(s.value.as_bool(), Some(true));
                assert!(
                    s.note
                        .as_deref()
                        .unwrap_or("")
                        .contains("reverts to ON at the next restart"),
                    "{:?}",
                    s.note
                );
                assert_eq!(s.evidence[0].path, "/etc/mysql/my.cnf");
            }
            other => panic!("{other:?}"),
        }
    }
}
