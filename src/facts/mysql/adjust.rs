//! How a configured number the running server holds otherwise is judged:
//! by the version's generated option table ([`super::limits`], exact), by
//! its documented limits ([`super::documented`]: a difference they can
//! produce is the server's, anything else is drift), or by the start-up
//! adjustments mysqld derives from other settings (open-files limit,
//! buffer-pool chunk truncation, `innodb_open_files`); and text values as
//! the server compares them (enums and sets without case, key=value lists
//! by the keys the file sets). Writes the verdict
//! into `mycnf_effective` (the running value with a note, the configured
//! value with the reason it is drift, or unknown) and the notes into the
//! host's issues. No I/O.

use super::documented::{self, DocSpec};
use super::limits;
use super::model::SOURCE;
use super::names::ReadAs;
use super::server::ServerVersion;

use crate::facts::{Entry, FileIssue, Namespace};
use crate::value::{format_number, format_size, Value};

/// ` (N)` after a configured value written otherwise (`2G`), else nothing.
fn number_if_other(raw: &str, n: f64) -> String {
    let num = format_number(n);
    if raw.trim() == num {
        String::new()
    } else {
        format!(" ({num})")
    }
}

/// Add to a setting's note (a persisted value keeps saying where it came from).
fn add_note(note: &mut Option<String>, text: String) {
    *note = Some(match note.take() {
        Some(n) => format!("{n}; {text}"),
        None => text,
    });
}

fn num(ns: &Namespace, k: &str) -> Option<f64> {
    match ns.get(k) {
        Some(Entry::Set(s)) => s.value.as_f64(),
        _ => None,
    }
}

const MIB: f64 = 1048576.0;

/// mysqld's `TABLE_OPEN_CACHE_MIN` (MySQL 5.6 to 8.4, sql/sql_const.h): the
/// table cache is never lowered below it, and max_connections is lowered to
/// leave room for it twice.
const MYSQL_TABLE_OPEN_CACHE_MIN: f64 = 400.0;

/// What the server derived at start-up for `key` from other settings or the
/// process's limits (beyond the per-option limits), given the configured
/// (`effective`) and running (`rt`) values: the reason, when the running
/// value `have` is what that derivation gives.
///
/// - MySQL (5.6 to 8.4, sql/mysqld.cc `adjust_max_connections` and
///   `adjust_table_cache_size`): when the open files it got (the running
///   `open_files_limit`) are fewer than it asked for, max_connections is
///   lowered to `open_files_limit - 10 - 2 × 400` and table_open_cache to
///   `max((open_files_limit - 10 - max_connections) / 2, 400)`; so "Changed
///   limits: max_open_files: 1024 ... max_connections: 214 (requested 1000)
///   ... table_open_cache: 400 (requested 2000)". Only that exact value is
///   explained.
/// - MariaDB lowers max_connections and table_open_cache when the
///   open-files limit cannot hold max_connections + 2 × table_open_cache ×
///   instances + a few dozen descriptors, and keeps thread_cache_size at
///   most max_connections.
/// - InnoDB (MySQL) truncates `innodb_buffer_pool_chunk_size` to pool /
///   instances when chunk × instances is larger than the pool, and replaces
///   an `innodb_open_files` below 10 with table_open_cache (file-per-table,
///   cache above 300) or 300.
pub(super) fn startup_adjusted(
    key: &str,
    have: f64,
    effective: &Namespace,
    rt: &Namespace,
    version: Option<&ServerVersion>,
) -> Option<String> {
    let mysql = version.is_some_and(|v| !v.mariadb);
    let conf = |k: &str| num(effective, k).or(num(rt, k));
    match key {
        "max_connections" | "table_open_cache" if mysql => {
            let ofl = num(rt, "open_files_limit")?;
            let want = conf(key)?;
            let (limit, how) = if key == "max_connections" {
                (
                    ofl - 10.0 - 2.0 * MYSQL_TABLE_OPEN_CACHE_MIN,
                    format!(
                        "the open-files limit {} leaves {} connections after 10 descriptors and twice the minimum table cache of 400 (mysqld's adjust_max_connections)",
                        format_number(ofl),
                        format_number(ofl - 810.0)
                    ),
                )
            } else {
                let conns = num(rt, "max_connections")?;
                let l = ((ofl - 10.0 - conns) / 2.0)
                    .floor()
                    .max(MYSQL_TABLE_OPEN_CACHE_MIN);
                (
                    l,
                    format!(
                        "the open-files limit {} leaves max(({} - 10 - max_connections {}) / 2, 400) = {} tables (mysqld's adjust_table_cache_size)",
                        format_number(ofl),
                        format_number(ofl),
                        format_number(conns),
                        format_number(l)
                    ),
                )
            };
            (limit < want && have == limit).then(|| {
                format!("{how}, so the server lowered it at start-up (\"Changed limits\" in the error log); raise LimitNOFILE / open_files_limit or lower the setting")
            })
        }
        "max_connections" | "table_open_cache" | "table_open_cache_instances" => {
            let ofl = num(rt, "open_files_limit")?;
            let conns = conf("max_connections")?;
            let cache = conf("table_open_cache")?;
            let inst = num(rt, "table_open_cache_instances").unwrap_or(1.0);
            (ofl < conns + 2.0 * cache * inst + 64.0).then(|| format!(
                "the open-files limit {} cannot hold max_connections {} + 2 × table_open_cache {} × {} instance(s), so the server lowered it at start-up (\"Changed limits\" in the error log); raise LimitNOFILE / open_files_limit or lower the setting",
                format_number(ofl),
                format_number(conns),
                format_number(cache),
                format_number(inst)
            ))
        }
        "thread_cache_size" => {
            let conns = num(rt, "max_connections")?;
            (num(rt, key) == Some(conns))
                .then(|| "the server keeps thread_cache_size at most max_connections".to_string())
        }
        "innodb_buffer_pool_chunk_size" if mysql => {
            let pool = num(rt, "innodb_buffer_pool_size")?;
            let inst = num(rt, "innodb_buffer_pool_instances")
                .filter(|i| *i >= 1.0)
                .unwrap_or(1.0);
            let want = conf(key)?;
            let per = pool / inst;
            (want * inst > pool && (have - per).abs() < MIB).then(|| {
                format!(
                    "chunk size × {} instance(s) is larger than the pool of {}, so InnoDB truncates the chunk to pool / instances = {}",
                    format_number(inst),
                    format_size(pool),
                    format_size(have)
                )
            })
        }
        "innodb_open_files" if mysql => {
            let want = conf(key)?;
            let cache = num(rt, "table_open_cache")?;
            let per_table = match rt.get("innodb_file_per_table") {
                Some(Entry::Set(s)) => s.value.as_bool().unwrap_or(true),
                _ => true,
            };
            let ofl = num(rt, "open_files_limit");
            let predicted = if want < 10.0 {
                if per_table && cache > 300.0 {
                    cache
                } else {
                    300.0
                }
            } else if ofl.is_some_and(|o| want > o) {
                want.min(cache)
            } else {
                return None;
            };
            (have == predicted).then(|| {
                if want < 10.0 {
                    format!("InnoDB replaces an innodb_open_files below 10 with {} (table_open_cache when file-per-table and above 300, else 300)", format_number(predicted))
                } else {
                    format!("innodb_open_files is above the open-files limit, so InnoDB lowers it to table_open_cache {}", format_number(cache))
                }
            })
        }
        _ => None,
    }
}

fn label(v: Option<&ServerVersion>) -> String {
    v.map(ServerVersion::label)
        .unwrap_or_else(|| "this server".into())
}

/// Why a running value that differs from the configured one, which no
/// documented limit or adjustment produces, is drift: the server's compiled
/// default (it did not take the setting: not restarted, or the file is not
/// read), a variable `SET GLOBAL` cannot change (the file changed after the
/// start), or simply not what the file gives.
fn drift_reason(key: &str, spec: &DocSpec, table: &str, want: f64, have: f64) -> String {
    let mut why = Vec::new();
    if spec.default_number() == Some(have) && want != have {
        why.push(format!(
            "the server runs {table}'s compiled default {} ({}), not the configured value: it has not taken this setting (not restarted since the file changed, or it does not read this file)",
            format_number(have),
            spec.reference
        ));
    }
    if !spec.dynamic {
        why.push(format!(
            "`{key}` is not dynamic (`SET GLOBAL` cannot change it), so the option file changed after the server started; a restart applies it"
        ));
    }
    if why.is_empty() {
        why.push(format!(
            "no documented limit of {table} gives {} from the configured {} ({})",
            format_number(have),
            format_number(want),
            spec.reference
        ));
    }
    why.join("; ")
}

/// The value type of `key` for comparing text: the version's generated
/// table, else its documented table, else MariaDB 10.11's table or any
/// documented table as a reference (a variable's type rarely changes
/// between versions; a name the server's table knows only as a command-line
/// option, such as MariaDB 10.11's `transaction_isolation`, takes the type
/// the variable of that name has elsewhere).
fn kind_of(key: &str, read: &ReadAs, doc: Option<&documented::DocTable>) -> Option<limits::Kind> {
    let typed = |k: limits::Kind| !matches!(k, limits::Kind::Opt | limits::Kind::Str);
    read.table
        .and_then(|t| t.get(key).map(|s| s.kind))
        .filter(|k| typed(*k))
        .or_else(|| doc.and_then(|d| d.get(key).map(|s| s.kind)))
        .filter(|k| typed(*k))
        .or_else(|| {
            limits::table_for(&ServerVersion {
                parts: [10, 11, 0],
                mariadb: true,
            })
            .and_then(|t| t.get(key).map(|s| s.kind))
            .filter(|k| typed(*k))
        })
        .or_else(|| documented::kind_anywhere(key))
}

/// `key=value` pairs of a list variable: `optimizer_switch` (`,`) and
/// Galera's `wsrep_provider_options` (`;`, spaces around `=`), keys
/// lowercase.
fn pairs(text: &str, sep: char) -> Vec<(String, String)> {
    text.split(sep)
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// Two values of one key-value pair as the server compares them: booleans
/// in every spelling, sizes by meaning (`1G` and `1073741824`), else text
/// without case.
fn same_pair_value(a: &str, b: &str) -> bool {
    if let (Ok(x), Ok(y)) = (
        crate::parse::mycnf::parse_bool(a),
        crate::parse::mycnf::parse_bool(b),
    ) {
        return x == y;
    }
    for (x, y) in [(a, b), (b, a)] {
        if let (Ok(n), Ok(m)) = (crate::value::parse_size(x), y.parse::<f64>()) {
            if n == m {
                return true;
            }
        }
    }
    a.eq_ignore_ascii_case(b)
}

/// Text values compared as the server compares them: enum and set values
/// without case (`binlog_format = row` runs as `ROW`; a set in any order),
/// and of `optimizer_switch` / `wsrep_provider_options` only the keys the
/// file sets (the running value lists every default). Where they agree the
/// configured value takes the running one's spelling; where a listed key
/// runs otherwise, the note names it.
fn compare_text(
    effective: &mut Namespace,
    rt: &Namespace,
    read: &ReadAs,
    doc: Option<&documented::DocTable>,
) {
    let keys: Vec<String> = effective.entries.keys().cloned().collect();
    for key in keys {
        let (Some(Entry::Set(want)), Some(Entry::Set(have))) =
            (effective.entries.get(&key), rt.get(&key))
        else {
            continue;
        };
        if matches!(want.value, Value::Number(_) | Value::Size(_))
            || want.value.loosely_equals(&have.value)
        {
            continue;
        }
        let (w, h) = (want.value.to_plain(), have.value.to_plain());
        let list_sep = match key.as_str() {
            "wsrep_provider_options" => Some(';'),
            _ if kind_of(&key, read, doc) == Some(limits::Kind::Flagset) => Some(','),
            _ => None,
        };
        let same = match (list_sep, kind_of(&key, read, doc)) {
            (Some(sep), _) => {
                let running = pairs(&h, sep);
                let differ: Vec<String> = pairs(&w, sep)
                    .into_iter()
                    .filter_map(|(k, v)| match running.iter().find(|(rk, _)| *rk == k) {
                        Some((_, rv)) if same_pair_value(&v, rv) => None,
                        Some((_, rv)) => Some(format!("{k}={v} runs as {k}={rv}")),
                        None => Some(format!("{k}={v} is not in the running list")),
                    })
                    .collect();
                if !differ.is_empty() {
                    if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
                        add_note(
                            &mut s.note,
                            format!(
                                "only the keys the file sets are compared: {}",
                                differ.join(", ")
                            ),
                        );
                    }
                }
                differ.is_empty()
            }
            (None, Some(limits::Kind::Enum)) => w.trim().eq_ignore_ascii_case(h.trim()),
            (None, Some(limits::Kind::Set)) => {
                let set = |t: &str| {
                    let mut v: Vec<String> = t
                        .split(',')
                        .map(|i| i.trim().to_ascii_uppercase())
                        .filter(|i| !i.is_empty())
                        .collect();
                    v.sort();
                    v.dedup();
                    v
                };
                set(&w) == set(&h)
            }
            _ => false,
        };
        if same {
            let value = have.value.clone();
            if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
                s.value = value;
            }
        }
    }
}

/// Judge every configured number that runs otherwise (see the module doc).
pub(super) fn judge_runtime(
    effective: &mut Namespace,
    rt: &Namespace,
    read: &ReadAs,
    version: Option<&ServerVersion>,
    issues: &mut Vec<FileIssue>,
) {
    let doc = version.and_then(documented::for_version);
    compare_text(effective, rt, read, doc);
    let keys: Vec<String> = effective.entries.keys().cloned().collect();
    for key in keys {
        let modeled = read.limits && read.table.is_some_and(|t| t.get(&key).is_some());
        let Some(Entry::Set(want)) = effective.entries.get(&key) else {
            continue;
        };
        let Some(Entry::Set(have)) = rt.get(&key) else {
            continue;
        };
        let (Some(w), Some(h)) = (want.value.as_f64(), have.value.as_f64()) else {
            continue;
        };
        if !matches!(want.value, Value::Number(_) | Value::Size(_)) || w == h {
            continue;
        }
        let startup = startup_adjusted(&key, h, effective, rt, version);
        if modeled && startup.is_none() {
            // A variable `SET GLOBAL` cannot change runs otherwise only
            // because the file changed after the start: a pending restart.
            if let Some(spec) = doc.and_then(|t| t.get(&key)).filter(|s| !s.dynamic) {
                let text = format!(
                    "`{key}` is not dynamic (`SET GLOBAL` cannot change it; {}), so the option file changed after the server started: the next restart applies {} (a pending restart)",
                    spec.reference, want.raw
                );
                if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
                    add_note(&mut s.note, text);
                }
            }
            continue;
        }
        // A start-up adjustment only ever lowers the value.
        if modeled && h > w {
            continue;
        }
        let ev = want.evidence[0].clone();
        let server = label(version);
        let spec = doc.and_then(|t| t.get(&key).map(|s| (t.label, s)));
        // SET PERSIST_ONLY of a read-only variable: the server takes it at
        // the next restart and runs another value until then, whatever a
        // limits table could say (a pending restart, not unknown).
        let persist_only = ev.path.ends_with(super::persisted::FILE)
            && want
                .note
                .as_deref()
                .is_some_and(|n| n.contains("SET PERSIST_ONLY"));
        if persist_only && startup.is_none() {
            let manual = match spec {
                Some((table, s)) if !s.dynamic => {
                    format!(
                        " ({table}'s manual documents `{key}` as not dynamic: {})",
                        s.reference
                    )
                }
                _ => String::new(),
            };
            let text = format!(
                "the server runs {} until the next restart, which applies the persisted {}{manual} (a pending restart)",
                have.raw, want.raw
            );
            if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
                add_note(&mut s.note, text);
            }
            continue;
        }
        let (verb, why) = match (startup, spec) {
            (Some(s), _) => ("adjusted it", s),
            // The version's documented limits decide: what they give from
            // the configured value is what the server runs from the file.
            (None, Some((table, spec))) if !modeled => {
                let l = spec.limit(w);
                if l.value == h {
                    (
                        "adjusted it",
                        format!(
                            "{table}'s documented limits for `{key}`: {} ({})",
                            l.how.as_deref().unwrap_or("unchanged"),
                            spec.reference
                        ),
                    )
                } else {
                    let reason = drift_reason(&key, spec, table, l.value, h);
                    if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
                        let limited = match &l.how {
                            Some(how) => format!(
                                "configured {}{}; {table}'s documented limits: {how}: {}; ",
                                s.raw,
                                number_if_other(&s.raw, w),
                                format_number(l.value)
                            ),
                            None => String::new(),
                        };
                        add_note(&mut s.note, format!("{limited}{reason}"));
                        if l.value != w {
                            s.value = match s.value {
                                Value::Size(_) => Value::Size(l.value),
                                _ => Value::Number(l.value),
                            };
                        }
                    }
                    continue;
                }
            }
            (None, _) => {
                // No limits for this version (or variable): the one
                // modelled table is a reference for what a limit would
                // do, never a prediction for another version.
                let reference = limits::table_for(&ServerVersion {
                    parts: [10, 11, 0],
                    mariadb: true,
                });
                let spec = reference.and_then(|t| t.get(&key).map(|s| (t.label, s)));
                let missing = match (read.table, doc) {
                    (Some(t), _) if read.limits => {
                        format!("the {} table has no limits for `{key}`", t.label)
                    }
                    (_, Some(d)) => format!("{}'s documented table has no `{key}`", d.label),
                    _ => format!("no limits table for {server}"),
                };
                let limited = spec.map(|(label, s)| (label, s, s.limit(w)));
                match &limited {
                    Some((label, _, l)) if l.value == h => (
                        "may have adjusted it",
                        format!(
                            "{missing}; {label}'s limits for `{key}` give the same: {}",
                            l.how.as_deref().unwrap_or("unchanged")
                        ),
                    ),
                    // Raised above the configured value, which is at
                    // least the reference minimum: no limit explains it.
                    Some((_, s, _)) if h > w && s.min.is_some_and(|m| w >= m) => continue,
                    _ => {
                        let could = if h < w {
                            "a maximum or block size could lower it"
                        } else {
                            "a minimum could raise it"
                        };
                        let reference = match &limited {
                            Some((label, _, l)) => {
                                format!("; {label}'s limits would give {}", format_number(l.value))
                            }
                            None => String::new(),
                        };
                        let reason = format!(
                            "configured {}{} at {ev}, the server runs {}: the server may have adjusted it ({missing}: {could}{reference}), or it was changed since the start (`SET GLOBAL`); driftaudit cannot tell which: compare with the limits of this server (`mysqld --verbose --help`, or NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE and NUMERIC_BLOCK_SIZE in information_schema.SYSTEM_VARIABLES)",
                            want.raw,
                            number_if_other(&want.raw, w),
                            have.raw
                        );
                        effective.entries.insert(
                            key.clone(),
                            Entry::Unreadable {
                                reason,
                                evidence: vec![ev],
                            },
                        );
                        continue;
                    }
                }
            }
        };
        let text = format!(
            "configured {}{} at {ev}, the server runs {}: the server {verb} ({why})",
            want.raw,
            number_if_other(&want.raw, w),
            have.raw
        );
        issues.push(FileIssue {
            path: ev.path.clone(),
            line: ev.line,
            column: None,
            message: format!("`{key}`: {text}"),
            source: SOURCE.into(),
            level: crate::facts::IssueLevel::Note,
            read_error: None,
        });
        if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
            add_note(&mut s.note, text);
            s.value = match s.value {
                Value::Size(_) => Value::Size(h),
                _ => Value::Number(h),
            };
        }
    }
}

/// Clamp every configured number that no generated option table limits
/// (a version without one, or an unknown version) by the documented limits:
/// the version's documented table, or, with no version, what every
/// documented table that has the variable agrees on (each caps
/// `read_rnd_buffer_size` at 2147483647, so `1P` runs as that). The value
/// the server will run is what rules judge; the note and an input note say
/// so. A value no table decides is left as written.
pub(super) fn clamp_documented(
    effective: &mut Namespace,
    version: Option<&ServerVersion>,
    issues: &mut Vec<FileIssue>,
) {
    let own = version.and_then(documented::for_version);
    if version.is_some() && own.is_none() {
        return;
    }
    let keys: Vec<String> = effective.entries.keys().cloned().collect();
    for key in keys {
        if key == "innodb_buffer_pool_size" {
            continue;
        }
        let Some(Entry::Set(s)) = effective.entries.get(&key) else {
            continue;
        };
        if !matches!(s.value, Value::Number(_) | Value::Size(_)) {
            continue;
        }
        let Some(n) = s.value.as_f64() else { continue };
        let (value, how, warns, from) = match own {
            Some(t) => {
                let Some(spec) = t.get(&key) else { continue };
                let l = spec.limit(n);
                let Some(how) = l.how else { continue };
                (
                    l.value,
                    how,
                    l.warns,
                    format!("{}'s documented limits ({})", t.label, spec.reference),
                )
            }
            None => {
                let rows: Vec<(&str, &DocSpec)> = documented::tables()
                    .filter_map(|t| t.get(&key).map(|r| (t.label, r)))
                    .collect();
                let Some((_, first)) = rows.first() else {
                    continue;
                };
                let l = first.limit(n);
                let Some(how) = l.how.clone() else { continue };
                if rows.iter().any(|(_, r)| r.limit(n).value != l.value) {
                    continue;
                }
                let labels: Vec<&str> = rows.iter().map(|(l, _)| *l).collect();
                (
                    l.value,
                    how,
                    l.warns,
                    format!(
                        "the documented limits of every server line driftaudit has a table for agree ({}), though the version is unknown",
                        labels.join(", ")
                    ),
                )
            }
        };
        let ev = s.evidence[0].clone();
        let text = format!(
            "configured {}{}; {from}: {how}: {}",
            s.raw,
            number_if_other(&s.raw, n),
            format_number(value)
        );
        if warns {
            issues.push(FileIssue {
                path: ev.path.clone(),
                line: ev.line,
                column: None,
                message: format!("`{key}`: {text} (the server logs \"adjusted to\")"),
                source: SOURCE.into(),
                level: crate::facts::IssueLevel::Note,
                read_error: None,
            });
        }
        if let Some(Entry::Set(s)) = effective.entries.get_mut(&key) {
            add_note(&mut s.note, text);
            s.value = match s.value {
                Value::Size(_) => Value::Size(value),
                _ => Value::Number(value),
            };
        }
    }
}
