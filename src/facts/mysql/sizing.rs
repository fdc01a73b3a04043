//! The `mysql_sizing` namespace: every variable MySQLTuner's sizing checks
//! read (buffers, caches, connection limits, redo log, durability), each as
//! the server runs it: the option files' value (`mycnf_effective`), else the
//! running server's (`SHOW GLOBAL VARIABLES`), else the compiled default of
//! the server's version from the documented tables, else unknown with the
//! capture that would decide it; never absent unless the version has no such
//! variable. Also `performance_schema_memory`, the figure MySQLTuner adds to
//! its peak memory (`SHOW ENGINE PERFORMANCE_SCHEMA STATUS`). No I/O beyond
//! that one capture through [`Host`]; no policy logic.

use super::documented;
use super::model::Gathered;
use super::runtime::typed_runtime;
use super::server::ServerVersion;

use crate::facts::{Entry, Evidence, Facts, Namespace, Setting};
use crate::host::Host;
use crate::value::Value;

/// The namespace's name.
pub const NAMESPACE: &str = "mysql_sizing";

/// Capture holding `mysql -NB -e 'SHOW ENGINE PERFORMANCE_SCHEMA STATUS'`.
pub const PFS_CAPTURE: &str = crate::catalogue::MYSQL_PERFORMANCE_SCHEMA.name;

/// The pseudo-variable holding the Performance Schema's memory.
pub const PFS_MEMORY: &str = "performance_schema_memory";

/// The pseudo-variable holding the redo log's total size.
pub const REDO_SIZE: &str = "innodb_redo_log_size";

/// The variables of MySQLTuner 1.9.9's memory, InnoDB, table-cache and
/// temporary-table checks (`calculations`, `mysql_stats`, `mysql_innodb`).
pub const VARIABLES: &[&str] = &[
    "aria_pagecache_buffer_size",
    "innodb_additional_mem_pool_size",
    "innodb_buffer_pool_size",
    "innodb_flush_log_at_trx_commit",
    "innodb_log_buffer_size",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_redo_log_capacity",
    "join_buffer_size",
    "key_buffer_size",
    "max_allowed_packet",
    "max_connections",
    "max_heap_table_size",
    "open_files_limit",
    "performance_schema",
    "query_cache_size",
    "read_buffer_size",
    "read_rnd_buffer_size",
    "sort_buffer_size",
    "sync_binlog",
    "table_open_cache",
    "thread_stack",
    "tmp_table_size",
];

/// Compiled defaults the documented tables do not hold, per server family,
/// each checked as the comment says.
fn extra_default(name: &str, v: &ServerVersion) -> Extra {
    match (name, v.mariadb) {
        // MariaDB's Aria page cache: 128 MiB (mariadbd 10.11.19 --no-defaults:
        // 134217728; the KB's aria_pagecache_buffer_size); MySQL has no Aria.
        ("aria_pagecache_buffer_size", true) => Extra::Value("134217728"),
        ("aria_pagecache_buffer_size", false) => Extra::NoSuchVariable,
        // OFF by default in MariaDB since 10.0.12 (KB performance_schema;
        // mariadbd 10.11.19 --no-defaults: OFF); ON in MySQL since 5.6.6.
        ("performance_schema", true) => Extra::Value("OFF"),
        ("performance_schema", false) => Extra::Value("ON"),
        // 1 on every line of both servers (MySQL 5.6, 5.7, 8.0 and 8.4
        // manuals, "Default Value 1"; MariaDB's system-variable reference,
        // whose change history from 10.2 to 11.4 records no other default),
        // so a line without a table (MariaDB 10.3, 10.4) has it too.
        ("innodb_flush_log_at_trx_commit", _) => Extra::Value("1"),
        // Removed in MySQL 5.7.4 and MariaDB 10.2.2: every tabled line lacks it.
        ("innodb_additional_mem_pool_size", _) => Extra::NoSuchVariable,
        // MySQL 8.0.30+ only (innodb_redo_log_capacity replaced the two below).
        ("innodb_redo_log_capacity", false) if v.parts < [8, 0, 30] => Extra::NoSuchVariable,
        _ => Extra::Table,
    }
}

enum Extra {
    Value(&'static str),
    NoSuchVariable,
    Table,
}

/// Build the namespace from the gathered `mycnf_effective` and `mysql`
/// namespaces and the version the option files were read for.
pub fn gather(host: &Host, version: Option<&ServerVersion>, facts: &mut Facts) {
    let mut ns = Namespace::of("mysql_sizing");
    ns.canonicalize = Some(crate::parse::mycnf::normalize_name);
    // what only the running server decides is decided as the runtime
    // capture's own unknowns are
    ns.unknown_fix = facts
        .namespaces
        .get("mysql")
        .and_then(|n| n.unknown_fix.clone());
    let g = Gathered::of(facts);
    let (effective, runtime) = (g.effective, g.runtime);
    let table = version.and_then(documented::for_version);
    for name in VARIABLES {
        let entry = resolve(
            name,
            effective,
            Some(runtime),
            version,
            table,
            &g.first_file,
        );
        if let Some(e) = entry {
            ns.entries.insert((*name).to_string(), e);
        }
    }
    let redo = redo_log_size(&ns, version, effective);
    ns.entries.insert(REDO_SIZE.into(), redo);
    let pfs = pfs_memory(host, ns.entries.get("performance_schema"));
    ns.entries.insert(PFS_MEMORY.into(), pfs);
    facts.namespaces.insert(NAMESPACE.into(), ns);
}

fn label(v: &ServerVersion) -> String {
    v.label()
}

/// `name` as the option files give it, else (for `mysql_sizing`: `runtime`
/// is `Some`, the capture where there is one) the running server's value,
/// else the compiled default of `version`; for the next start (`runtime`
/// `None`) never the running value, which a restart discards.
pub(super) fn resolve(
    name: &str,
    effective: Option<&Namespace>,
    runtime: Option<Option<&Namespace>>,
    version: Option<&ServerVersion>,
    table: Option<&documented::DocTable>,
    first_file: &str,
) -> Option<Entry> {
    if let Some(eff) = effective {
        if let Some(reason) = &eff.unavailable {
            return Some(Entry::Unreadable {
                reason: reason.clone(),
                evidence: vec![],
            });
        }
        if let Some(e) = eff.get(name) {
            return Some(e.clone());
        }
    }
    // A capture without the variable: the version's compiled default when
    // its table has the variable (the capture is partial), else the
    // running server has no such variable.
    let mut capture_lacks = false;
    let next_start = runtime.is_none();
    if let Some(rt) = runtime.flatten() {
        match rt.get(name) {
            Some(Entry::Set(s)) => {
                let mut s = s.clone();
                s.note = Some(format!(
                    "not set in any option file: the running server's value (SHOW GLOBAL VARIABLES, captures/{})",
                    super::model::VARIABLES_CAPTURE
                ));
                return Some(Entry::Set(s));
            }
            Some(other) => return Some(other.clone()),
            None => capture_lacks = true,
        }
    }
    let capture_fix = format!(
        "capture `mysql -NB -e 'SHOW GLOBAL VARIABLES'` as captures/{}",
        super::model::VARIABLES_CAPTURE
    );
    let Some(v) = version else {
        if capture_lacks {
            return None;
        }
        return Some(Entry::Unreadable {
            reason: format!("`{name}` is not set in any option file and the server version is unknown (no runtime capture, no installed package names it), so its compiled default is unknown: {capture_fix}"),
            evidence: vec![],
        });
    };
    let default = match extra_default(name, v) {
        Extra::NoSuchVariable => return None,
        Extra::Value(d) => Some((d.to_string(), "driftaudit's sizing defaults (src/facts/mysql/sizing.rs)".to_string())),
        Extra::Table => match table {
            None if capture_lacks => return None,
            // the next start applies the compiled default whatever the
            // running server holds: what decides it is that default, or a
            // line in the files
            None if next_start => {
                return Some(Entry::Unreadable {
                    reason: format!("`{name}` is not set in any option file, so the next start applies the compiled default of {}, and driftaudit has no table of that line's defaults (src/facts/mysql/documented/ holds {}): set it in an option file, which decides it", label(v), documented::lines()),
                    evidence: vec![],
                })
            }
            None => {
                return Some(Entry::Unreadable {
                    reason: format!("`{name}` is not set in any option file and driftaudit has no table of {}'s compiled defaults: {capture_fix}", label(v)),
                    evidence: vec![],
                })
            }
            Some(t) => match t.get(name) {
                // Every tabled line's table holds each variable it has (a
                // test checks VARIABLES against the tables).
                None => return None,
                Some(row) => match &row.default {
                    Some(d) if d != "AUTO" => Some((d.clone(), format!("{} ({})", t.label, row.reference))),
                    _ if capture_lacks => return None,
                    _ => {
                        return Some(Entry::Unreadable {
                            reason: format!("`{name}` is not set in any option file and {} sizes it at start-up (from the open-files limit the service gives it), so only the running server can tell: {capture_fix}", label(v)),
                            evidence: vec![],
                        })
                    }
                },
            },
        },
    };
    let (d, from) = default?;
    let mut s = Setting::new(
        typed_runtime(name, &d),
        d.clone(),
        Evidence::file(first_file),
    );
    s.note = Some(if capture_lacks {
        format!(
            "not set in any option file, and the runtime capture (captures/{}) lacks it though {} has it (a partial capture): the compiled default of {}, {d}, from {from}",
            super::model::VARIABLES_CAPTURE,
            label(v),
            label(v)
        )
    } else if next_start {
        format!(
            "no option file sets {name}: the next start runs the compiled default of {}, {d} ({from}); a running value that differs was set at run time (`SET GLOBAL`) and reverts to {d} at the next restart",
            label(v)
        )
    } else {
        format!(
            "not set in any option file: the compiled default of {}, {d}, from {from}",
            label(v)
        )
    });
    Some(Entry::Set(s))
}

fn number(e: Option<&Entry>) -> Result<Option<(f64, Setting)>, Entry> {
    match e {
        Some(Entry::Set(s)) => match s.value.as_f64() {
            Some(n) => Ok(Some((n, s.clone()))),
            None => Err(Entry::Unreadable {
                reason: format!("`{}` is not a number", s.raw),
                evidence: s.evidence.clone(),
            }),
        },
        Some(u) => Err(u.clone()),
        None => Ok(None),
    }
}

/// The redo log's total size: `innodb_redo_log_capacity` on MySQL 8.0.30+
/// (unless only the two old variables are set in the files: their product,
/// as the manual says), else `innodb_log_file_size` x
/// `innodb_log_files_in_group` (1 where the server has no such variable,
/// as MySQLTuner counts it; MariaDB 10.5+ has one redo log file).
pub(super) fn redo_log_size(
    ns: &Namespace,
    version: Option<&ServerVersion>,
    effective: Option<&Namespace>,
) -> Entry {
    let in_files = |k: &str| effective.is_some_and(|e| matches!(e.get(k), Some(Entry::Set(_))));
    let capacity = ns.entries.get("innodb_redo_log_capacity");
    let mysql_capacity = version.is_some_and(|v| !v.mariadb && v.parts >= [8, 0, 30]);
    let legacy_only = !in_files("innodb_redo_log_capacity")
        && (in_files("innodb_log_file_size") || in_files("innodb_log_files_in_group"));
    if mysql_capacity && !legacy_only {
        return match number(capacity) {
            Ok(Some((n, mut s))) => {
                s.value = Value::Size(n);
                s.note = Some(format!(
                    "innodb_redo_log_capacity ({}){}",
                    s.raw,
                    s.note.map(|n| format!("; {n}")).unwrap_or_default()
                ));
                Entry::Set(s)
            }
            Ok(None) => Entry::Unreadable {
                reason: "innodb_redo_log_capacity is neither in the option files nor among the running server's variables (captures/mysql-variables.tsv), though MySQL 8.0.30+ has it".into(),
                evidence: vec![],
            },
            Err(e) => e,
        };
    }
    let size = match number(ns.entries.get("innodb_log_file_size")) {
        Ok(Some(x)) => x,
        Ok(None) => {
            return Entry::Unreadable {
                reason: "innodb_log_file_size is neither in the option files nor among the running server's variables (captures/mysql-variables.tsv): capture the complete `SHOW GLOBAL VARIABLES`".into(),
                evidence: vec![],
            }
        }
        Err(e) => return e,
    };
    let files = match number(ns.entries.get("innodb_log_files_in_group")) {
        Ok(Some((n, _))) => n,
        Ok(None) => 1.0,
        Err(e) => return e,
    };
    let (n, mut s) = size;
    s.value = Value::Size(n * files);
    s.note = Some(format!(
        "innodb_log_file_size {} x innodb_log_files_in_group {}{}",
        crate::value::format_number(n),
        crate::value::format_number(files),
        s.note
            .map(|n| format!("; innodb_log_file_size: {n}"))
            .unwrap_or_default()
    ));
    Entry::Set(s)
}

/// The Performance Schema's memory as MySQLTuner counts it: 0 when it is
/// OFF, else the `performance_schema.memory` row of `SHOW ENGINE
/// PERFORMANCE_SCHEMA STATUS`.
fn pfs_memory(host: &Host, state: Option<&Entry>) -> Entry {
    let path = format!("/captures/{PFS_CAPTURE}");
    let on = match state {
        Some(Entry::Set(s)) => match &s.value {
            Value::Bool(b) => *b,
            v => v.as_f64().map(|n| n != 0.0).unwrap_or(true),
        },
        Some(Entry::Unreadable { reason, evidence }) => {
            return Entry::Unreadable {
                reason: format!("whether performance_schema is on is unknown: {reason}"),
                evidence: evidence.clone(),
            }
        }
        None => false,
    };
    if !on {
        let mut s = Setting::new(
            Value::Size(0.0),
            "0",
            match state {
                Some(Entry::Set(s)) => s
                    .evidence
                    .first()
                    .cloned()
                    .unwrap_or_else(|| Evidence::file(path.clone())),
                _ => Evidence::file(path.clone()),
            },
        );
        s.note =
            Some("performance_schema is OFF: it allocates nothing (MySQLTuner counts 0)".into());
        return Entry::Set(s);
    }
    let text = match host.capture(PFS_CAPTURE) {
        Ok(t) => t,
        Err(_) => {
            return Entry::Unreadable {
                reason: format!("performance_schema is ON and its memory is known only to the running server: capture `mysql -NB -e 'SHOW ENGINE PERFORMANCE_SCHEMA STATUS'` as captures/{PFS_CAPTURE}"),
                evidence: vec![],
            }
        }
    };
    for (i, line) in text.lines().enumerate() {
        let mut cols = line.split('\t');
        let (Some(_), Some(name), Some(n), None) =
            (cols.next(), cols.next(), cols.next(), cols.next())
        else {
            continue;
        };
        if name.trim() == "performance_schema.memory" {
            if let Ok(n) = n.trim().parse::<u64>() {
                return Entry::Set(Setting::new(
                    Value::Size(n as f64),
                    n.to_string(),
                    Evidence::line(path, i + 1),
                ));
            }
        }
    }
    Entry::Unreadable {
        reason: format!("captures/{PFS_CAPTURE} has no `performance_schema.memory` row with a whole number of bytes: capture `mysql -NB -e 'SHOW ENGINE PERFORMANCE_SCHEMA STATUS'` again"),
        evidence: vec![Evidence::file(path)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable missing from a documented table is read as "this line has
    /// no such variable": true only where the table is complete for
    /// VARIABLES, which this pins per table.
    #[test]
    fn every_tabled_line_holds_each_sizing_variable_it_has() {
        let absent_ok = [
            ("MySQL 8.0", "query_cache_size"),
            ("MySQL 8.4", "query_cache_size"),
            ("MariaDB 10.11", "innodb_log_files_in_group"),
            ("MariaDB 10.11", "innodb_redo_log_capacity"),
            ("MariaDB 10.5", "innodb_redo_log_capacity"),
        ];
        for (file, t) in documented::all() {
            let t = t.unwrap_or_else(|e| panic!("{file}: {e}"));
            let v = ServerVersion::parse(&format!(
                "{}{}",
                t.label.split(' ').nth(1).unwrap(),
                if t.label.starts_with("MariaDB") {
                    "-MariaDB"
                } else {
                    ""
                }
            ))
            .unwrap();
            for name in VARIABLES {
                if !matches!(extra_default(name, &v), Extra::Table) {
                    continue;
                }
                let listed = t.get(name).is_some();
                let excused = absent_ok.contains(&(t.label, name));
                assert!(
                    listed != excused,
                    "{}: {name} listed={listed} excused={excused}",
                    t.label
                );
            }
        }
    }

    fn snapshot(files: &[(&str, &str)]) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        let cnf = [("/etc/my.cnf", "[mysqld]\n")];
        for (p, text) in files.iter().chain(&cnf) {
            let path = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let host = Host::snapshot(dir.path()).unwrap();
        (dir, host)
    }

    fn on() -> Entry {
        Entry::Set(Setting::new(
            Value::Bool(true),
            "ON",
            Evidence::file("/etc/my.cnf"),
        ))
    }

    /// A hostile or foreign status capture never yields a number it does
    /// not hold: wrong column counts, a non-numeric or negative figure, a
    /// row of another name are skipped, and with no usable row the memory
    /// is unknown, naming the capture.
    #[test]
    fn performance_schema_memory_is_read_only_from_its_exact_row() {
        let cases = [
            (
                "performance_schema\tperformance_schema.memory\t123\n",
                Some(123.0),
            ),
            ("x\tperformance_schema.memory\t123\textra\n", None),
            ("performance_schema\tperformance_schema.memory\t-5\n", None),
            ("performance_schema\tperformance_schema.memory\t1e9\n", None),
            ("performance_schema\t(events).memory\t99\n", None),
            ("", None),
            ("\t\t\n\n\u{0}\t\u{0}\t\u{0}\n", None),
        ];
        for (text, want) in cases {
            let (_d, host) = snapshot(&[("/captures/mysql-performance-schema.tsv", text)]);
            let got = match pfs_memory(&host, Some(&on())) {
                Entry::Set(s) => s.value.as_f64(),
                Entry::Unreadable { reason, .. } => {
                    assert!(reason.contains(PFS_CAPTURE), "{reason}");
                    None
                }
            };
            assert_eq!(got, want, "{text:?}");
        }
        // long input: one pass, the row found at the end
        let mut big = "performance_schema\tx.memory\t1\n".repeat(200_000);
        big.push_str("performance_schema\tperformance_schema.memory\t7\n");
        let (_d, host) = snapshot(&[("/captures/mysql-performance-schema.tsv", &big)]);
        assert!(
            matches!(pfs_memory(&host, Some(&on())), Entry::Set(s) if s.value.as_f64() == Some(7.0))
        );
        // OFF: nothing allocated, whatever the capture says; no capture when ON: unknown
        let (_d, host) = snapshot(&[]);
        let off = Entry::Set(Setting::new(
            Value::Bool(false),
            "OFF",
            Evidence::file("/etc/my.cnf"),
        ));
        assert!(
            matches!(pfs_memory(&host, Some(&off)), Entry::Set(s) if s.value.as_f64() == Some(0.0))
        );
        assert!(matches!(
            pfs_memory(&host, Some(&on())),
            Entry::Unreadable { .. }
        ));
    }

    /// A capture that lacks `innodb_log_file_size` (a partial `SHOW GLOBAL
    /// VARIABLES`): the redo log is the version's compiled default, said
    /// so, not unknown (issue 48: `mysql-sizing.pool-default` was unknown on
    /// a 64 GiB host with 40 GiB of data for want of it).
    #[test]
    fn a_partial_capture_takes_the_versions_compiled_default_and_says_so() {
        let (_d, host) = snapshot(&[(
            "/captures/mysql-variables.tsv",
            "version\t10.11.19-MariaDB-0+deb12u1\ninnodb_buffer_pool_size\t134217728\n",
        )]);
        let facts = crate::facts::gather(&host, &crate::facts::Needs::default());
        match facts.namespaces[NAMESPACE].get(REDO_SIZE) {
            Some(Entry::Set(s)) => {
                assert_eq!(s.value.as_f64(), Some(100663296.0));
                let note = s.note.as_deref().unwrap_or("");
                assert!(
                    note.contains("lacks it")
                        && note.contains("compiled default of MariaDB 10.11.19"),
                    "{note}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// The order the namespace documents: the option files, then the running
    /// server, then the version's compiled default, then unknown.
    #[test]
    fn a_value_comes_from_the_files_then_the_server_then_the_versions_default() {
        let mut files = Namespace::new("x");
        files.set(
            "sort_buffer_size",
            Setting::new(
                Value::Size(1048576.0),
                "1M",
                Evidence::line("/etc/my.cnf", 3),
            ),
        );
        let mut rt = Namespace::new("x");
        rt.set(
            "sort_buffer_size",
            Setting::new(
                Value::Size(2097152.0),
                "2097152",
                Evidence::line("/captures/mysql-variables.tsv", 9),
            ),
        );
        rt.set(
            "join_buffer_size",
            Setting::new(
                Value::Size(524288.0),
                "524288",
                Evidence::line("/captures/mysql-variables.tsv", 5),
            ),
        );
        let v = ServerVersion::parse("10.11.19-MariaDB").unwrap();
        let t = documented::for_version(&v);
        let get = |name: &str, rt: Option<&Namespace>, v: Option<&ServerVersion>| match resolve(
            name,
            Some(&files),
            Some(rt),
            v,
            v.and_then(documented::for_version),
            "/etc/my.cnf",
        ) {
            Some(Entry::Set(s)) => Some(s.value.as_f64().unwrap()),
            _ => None,
        };
        assert!(t.is_some());
        assert_eq!(
            get("sort_buffer_size", Some(&rt), Some(&v)),
            Some(1048576.0)
        );
        assert_eq!(get("join_buffer_size", Some(&rt), Some(&v)), Some(524288.0));
        // the capture lacks a variable the version has (a partial
        // capture): the version's compiled default, said so (issue 48)
        match resolve(
            "read_buffer_size",
            Some(&files),
            Some(Some(&rt)),
            Some(&v),
            t,
            "/etc/my.cnf",
        ) {
            Some(Entry::Set(s)) => {
                assert_eq!(s.value.as_f64(), Some(131072.0));
                assert!(
                    s.note.as_deref().unwrap_or("").contains("lacks it"),
                    "{:?}",
                    s.note
                );
            }
            other => panic!("{other:?}"),
        }
        // a variable the version does not have stays absent
        assert_eq!(
            resolve(
                "query_cache_size",
                Some(&files),
                Some(Some(&rt)),
                Some(&ServerVersion::parse("8.0.36").unwrap()),
                documented::for_version(&ServerVersion::parse("8.0.36").unwrap()),
                "/etc/my.cnf"
            ),
            None
        );
        assert_eq!(get("join_buffer_size", None, Some(&v)), Some(262144.0));
        assert_eq!(
            get("aria_pagecache_buffer_size", None, Some(&v)),
            Some(134217728.0)
        );
        assert!(matches!(
            resolve(
                "join_buffer_size",
                Some(&files),
                Some(None),
                None,
                None,
                "/etc/my.cnf"
            ),
            Some(Entry::Unreadable { .. })
        ));
        // MySQL 5.6: no table of its defaults
        let old = ServerVersion::parse("5.6.51").unwrap();
        assert!(matches!(
            resolve("join_buffer_size", Some(&files), Some(None), Some(&old), None, "/etc/my.cnf"),
            Some(Entry::Unreadable { reason, .. }) if reason.contains("MySQL 5.6.51")
        ));
        // the next start on a line without a table: the compiled default
        // decides, not a capture (MariaDB 10.3 on a partial capture)
        let mdb103 = ServerVersion::parse("10.3.39-MariaDB-0+deb10u2").unwrap();
        match resolve(
            "join_buffer_size",
            Some(&files),
            None,
            Some(&mdb103),
            None,
            "/etc/my.cnf",
        ) {
            Some(Entry::Unreadable { reason, .. }) => {
                assert!(
                    reason
                        .contains("the next start applies the compiled default of MariaDB 10.3.39"),
                    "{reason}"
                );
                assert!(reason.contains("set it in an option file"), "{reason}");
                assert!(!reason.contains("capture `mysql"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // a default the same on every line decides it there too
        match resolve(
            "innodb_flush_log_at_trx_commit",
            Some(&files),
            None,
            Some(&mdb103),
            None,
            "/etc/my.cnf",
        ) {
            Some(Entry::Set(s)) => assert_eq!(s.value.as_f64(), Some(1.0)),
            other => panic!("{other:?}"),
        }
    }
}
