//! The `mycnf_next` namespace: what the next start of the server runs
//! with, for the variables the running server holds: the option files'
//! value as the server runs it (`mycnf_effective`), else the compiled
//! default of the server's version from its documented table
//! ([`super::documented`]), with a note saying so. A `drift:` rule on it
//! sees a `SET GLOBAL` on an option no file sets, which the next restart
//! reverts. No I/O, no policy logic.

use super::documented;
use super::runtime::typed_runtime;
use super::server::ServerVersion;

use crate::facts::{Entry, Evidence, Namespace, Setting};

/// Variables the server lowers at start-up for the open-files limit (or
/// keeps under another one): a running value below the compiled default is
/// the server's own adjustment, not a `SET GLOBAL` (MariaDB 10.11.19 with
/// 20000 open files runs `table_open_cache_instances` 4, not 8).
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

/// The namespace from `mycnf_effective`, the running server's variables
/// (`None`: no capture, so the files' values alone) and the version; a
/// default's evidence is the first option file read (where the fix writes).
pub(super) fn build(
    effective: &Namespace,
    rt: Option<&Namespace>,
    version: Option<&ServerVersion>,
    first_file: &str,
) -> Namespace {
    let mut ns = effective.clone();
    ns.absent_means = Namespace::of("mycnf_next").absent_means;
    if ns.unavailable.is_some() {
        return ns;
    }
    let (Some(rt), Some(v)) = (rt, version) else {
        return ns;
    };
    let Some(table) = documented::for_version(v) else {
        return ns;
    };
    let label = format!(
        "{} {}.{}.{}",
        if v.mariadb { "MariaDB" } else { "MySQL" },
        v.parts[0],
        v.parts[1],
        v.parts[2]
    );
    for (key, entry) in &rt.entries {
        if effective.get(key).is_some() {
            continue;
        }
        let derived = DERIVED_FROM
            .iter()
            .find(|(k, _)| k == key)
            .is_some_and(|(_, from)| from.iter().any(|f| effective.get(f).is_some()));
        if derived {
            continue;
        }
        let Some(row) = table.get(key) else { continue };
        let Some(d) = row.default.as_deref().filter(|d| *d != "AUTO") else {
            continue;
        };
        let value = typed_runtime(key, d);
        if let Entry::Set(have) = entry {
            let lower = match (have.value.as_f64(), value.as_f64()) {
                (Some(h), Some(w)) => h < w,
                _ => false,
            };
            if lower && LOWERED_AT_START.contains(&key.as_str()) {
                continue;
            }
        }
        let mut s = Setting::new(value, d, Evidence::file(first_file));
        s.note = Some(format!(
            "no option file sets {key}: the next start runs the compiled default of {label}, {d} ({}); a running value that differs was set at run time (`SET GLOBAL`) and reverts to {d} at the next restart",
            row.reference
        ));
        ns.entries.insert(key.clone(), Entry::Set(s));
    }
    ns
}
