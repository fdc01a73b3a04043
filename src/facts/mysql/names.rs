//! One option's name and value as the server reads them: prefixes
//! (`loose-`, `skip-`, `enable-`, `disable-`, `maximum-`), unique
//! abbreviations, booleans, sizes and cumulative options. Pure: no I/O.

use super::limits;
use super::server::ServerVersion;

use crate::parse::mycnf::{self, canonical_option};
use crate::value::Value;

/// Boolean options (server and InnoDB) whose values are ON/OFF.
pub(super) const KNOWN_BOOLEANS: [&str; 27] = [
    "innodb_buffer_pool_dump_at_shutdown",
    "innodb_buffer_pool_load_at_startup",
    "innodb_buffer_pool_dump_now",
    "innodb_buffer_pool_load_now",
    "innodb_buffer_pool_load_abort",
    "innodb_buffer_pool_in_core_dump",
    "innodb_file_per_table",
    "innodb_dedicated_server",
    "innodb_numa_interleave",
    "innodb_adaptive_hash_index",
    "innodb_stats_on_metadata",
    "innodb_status_output",
    "innodb_print_all_deadlocks",
    "performance_schema",
    "read_only",
    "super_read_only",
    "local_infile",
    "symbolic_links",
    "general_log",
    "slow_query_log",
    "log_queries_not_using_indexes",
    "log_slave_updates",
    "log_replica_updates",
    "explicit_defaults_for_timestamp",
    "large_pages",
    "relay_log_recovery",
    "gtid_strict_mode",
];

/// InnoDB booleans that MariaDB 10.11 refuses bare (verified:
/// "option '--innodb-buffer-pool-dump-at-shutdown' requires an argument").
pub(super) const BOOLEANS_REQUIRING_VALUE: [&str; 2] = [
    "innodb_buffer_pool_dump_at_shutdown",
    "innodb_buffer_pool_load_at_startup",
];

/// Whether an option's value is a byte count.
pub fn is_size_option(name: &str) -> bool {
    const COUNTS: [&str; 6] = [
        "thread_cache_size",
        "host_cache_size",
        "max_join_size",
        "innodb_purge_batch_size",
        "metadata_locks_cache_size",
        "table_open_cache_size",
    ];
    if COUNTS.contains(&name) || name.starts_with("performance_schema_") {
        return false;
    }
    name.ends_with("_size")
        || name.ends_with("_size_max")
        || name.ends_with("_size_auto_min")
        || matches!(
            name,
            "max_allowed_packet"
                | "slave_max_allowed_packet"
                | "thread_stack"
                | "query_cache_limit"
                | "net_buffer_length"
                | "innodb_log_buffer_size"
        )
}

/// Type an option value as mysqld would read it. Returns the value and, when
/// the server would warn or reject it, why.
pub fn typed_option(name: &str, value: &str) -> (Value, Option<String>) {
    if KNOWN_BOOLEANS.contains(&name) || crate::parse::mycnf::REAL_SKIP_NAMES.contains(&name) {
        return match mycnf::parse_bool(value) {
            Ok(b) => (Value::Bool(b), None),
            Err(b) => (
                Value::Bool(b),
                Some(format!("boolean value `{value}` is not recognised: the server sets OFF (use 1/0, ON/OFF, TRUE/FALSE)")),
            ),
        };
    }
    let size_like = is_size_option(name);
    let strict_int = {
        let t = value.strip_prefix('-').unwrap_or(value);
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
    };
    let strict_suffixed = {
        let digits = value.bytes().take_while(u8::is_ascii_digit).count();
        let rest = &value.as_bytes()[digits..];
        digits > 0 && matches!(rest, [s] | [s, b'b' | b'B'] if b"kmgtpeKMGTPE".contains(s))
    };
    if size_like || strict_int || strict_suffixed {
        match mycnf::parse_int(value) {
            Ok((n, suffixed)) => {
                let v = n as f64;
                let note = if size_like && !strict_int && !strict_suffixed {
                    Some(format!("`{value}`: characters after the size suffix are ignored by MariaDB (read as {n})"))
                } else {
                    None
                };
                return (
                    if size_like || suffixed {
                        Value::Size(v)
                    } else {
                        Value::Number(v)
                    },
                    note,
                );
            }
            Err(e) if size_like => {
                return (
                    Value::Str(value.to_string()),
                    Some(format!("{e}: the server rejects it")),
                )
            }
            Err(_) => {}
        }
    }
    match mycnf::parse_bool(value) {
        Ok(b) if !value.bytes().all(|c| c.is_ascii_digit()) => (Value::Bool(b), None),
        _ => (Value::Str(value.to_string()), None),
    }
}

/// Canonical option name for lookups (`Innodb-Buffer-Pool-Size`, `loose-x`).
pub fn canonical_name(key: &str) -> String {
    canonical_option(key).name
}

/// Options that may be given many times and accumulate instead of overriding.
pub(super) const CUMULATIVE: &[&str] = &[
    "plugin_load_add",
    "replicate_do_db",
    "replicate_ignore_db",
    "replicate_do_table",
    "replicate_ignore_table",
    "replicate_wild_do_table",
    "replicate_wild_ignore_table",
    "replicate_rewrite_db",
    "binlog_do_db",
    "binlog_ignore_db",
    "optimizer_switch",
    "ignore_db_dirs",
    "early_plugin_load",
];

/// How option names and values are read: with the option table of the
/// server version when driftaudit has one (prefixes, ambiguity, which
/// options need a value, value types), else by name alone.
#[derive(Debug, Clone, Copy)]
pub struct ReadAs {
    /// The table used for names.
    pub table: Option<&'static limits::ServerTable>,
    /// The table is used although the server version is unknown (no runtime
    /// capture, nothing on disk): findings say so.
    pub assumed: bool,
    /// Apply the table's numeric limits (only for a known version).
    pub limits: bool,
}

impl ReadAs {
    /// For a known or unknown server version.
    pub fn version(v: Option<&ServerVersion>) -> ReadAs {
        match v {
            Some(v) => ReadAs {
                table: limits::table_for(v),
                assumed: false,
                limits: true,
            },
            None => ReadAs {
                table: limits::table_for(&ServerVersion {
                    parts: [10, 11, 0],
                    mariadb: true,
                }),
                assumed: true,
                limits: false,
            },
        }
    }

    pub(super) fn caveat(&self) -> String {
        match (self.table, self.assumed) {
            (Some(t), true) => format!(
                " (the server version is unknown; read as {} reads it)",
                t.label
            ),
            _ => String::new(),
        }
    }

    pub(super) fn label(&self) -> &'static str {
        self.table.map_or("the server", |t| t.label)
    }
}

/// One option name as the server resolves it.
pub(super) struct NameRead {
    /// Namespace key.
    pub(super) key: String,
    /// `loose-`: a refused value is ignored with a warning.
    pub(super) loose: bool,
    /// `skip-`/`disable-`/`enable-`: the boolean the prefix gives (with the
    /// value `0` inverting it).
    pub(super) forced: Option<bool>,
    /// The option's entry in the table.
    pub(super) spec: Option<&'static limits::OptionSpec>,
    /// The unique prefix written instead of the full name.
    pub(super) prefix: Option<String>,
    /// Why the server refuses the name (ambiguous prefix).
    pub(super) ambiguous: Option<String>,
    /// The table was consulted and no pass knows the name.
    pub(super) unknown: bool,
}

pub(super) fn read_name(read: &ReadAs, raw: &str, value: Option<&str>) -> NameRead {
    let fallback = || {
        let c = canonical_option(raw);
        NameRead {
            key: c.name,
            loose: c.loose,
            forced: c.forced.map(|b| limits::forced_value(b, value)),
            spec: None,
            prefix: None,
            ambiguous: None,
            unknown: false,
        }
    };
    let Some(table) = read.table else {
        return fallback();
    };
    let norm = crate::parse::mycnf::normalize_name(raw);
    match table.resolve(&norm) {
        limits::Lookup::Found(r) => {
            let forced = match r.special {
                Some(limits::Special::Skip | limits::Special::Disable) => {
                    Some(limits::forced_value(false, value))
                }
                Some(limits::Special::Enable) => Some(limits::forced_value(true, value)),
                _ => None,
            };
            let key = match r.special {
                Some(limits::Special::Maximum) => format!("maximum_{}", r.name),
                Some(limits::Special::Autoset) => format!("autoset_{}", r.name),
                _ => r.name.clone(),
            };
            let spec = match r.special {
                Some(limits::Special::Maximum | limits::Special::Autoset) => None,
                _ => table.get(&r.name),
            };
            NameRead {
                key,
                loose: r.loose,
                forced,
                spec,
                prefix: r.prefix,
                ambiguous: None,
                unknown: false,
            }
        }
        limits::Lookup::Ambiguous {
            written,
            candidates,
            pass,
        } => {
            let effect = match pass.strip_prefix("plugin:") {
                None => "the server refuses to start".to_string(),
                Some("innodb") => "the server disables InnoDB (\"Parsing options for plugin 'InnoDB' failed\") and, InnoDB being the default storage engine, refuses to start".to_string(),
                Some(p) => format!("the server disables the {p} plugin (\"Parsing options for plugin failed\")"),
            };
            NameRead {
                ambiguous: Some(format!(
                    "`{raw}` is ambiguous: `{written}` is the beginning of `{}` and `{}`, so {effect} (\"ambiguous option '--{raw}'\"){}; write the full name",
                    candidates[0],
                    candidates[1],
                    read.caveat()
                )),
                ..fallback()
            }
        }
        limits::Lookup::Unknown => NameRead {
            unknown: true,
            ..fallback()
        },
    }
}

/// What the server does with one occurrence of an option.
pub(super) enum Accept {
    /// Takes it as `mycnf` types it.
    AsTyped,
    /// Takes it with this value.
    Value(Value),
    /// Ignores this line with a warning.
    Ignored,
}

/// Read the value of one occurrence as the server does; `Err`: the server
/// refuses it.
pub(super) fn server_value(name: &NameRead, value: Option<&str>) -> Result<Accept, String> {
    let Some(spec) = name.spec else {
        return Ok(Accept::AsTyped);
    };
    if let Some(b) = name.forced {
        return Ok(Accept::Value(match spec.kind {
            limits::Kind::Int | limits::Kind::Uint | limits::Kind::Double => {
                Value::Number(if b { 1.0 } else { 0.0 })
            }
            _ => Value::Bool(b),
        }));
    }
    let Some(v) = value else {
        if spec.arg == limits::Arg::Required {
            return Err(format!(
                "option '--{}' requires an argument",
                spec.name.replace('_', "-")
            ));
        }
        return Ok(Accept::AsTyped);
    };
    match spec.kind {
        limits::Kind::Uint | limits::Kind::Int => {
            let n = limits::getopt_int(v, spec.kind == limits::Kind::Uint)?;
            Ok(Accept::Value(if is_size_option(spec.name) {
                Value::Size(n)
            } else {
                Value::Number(n)
            }))
        }
        limits::Kind::Double => Ok(Accept::Value(Value::Number(limits::getopt_double(v)?))),
        // A flag boolean (`arg` none) ignores a value it does not know ("ignoring
        // option due to invalid value"); the others set OFF with a warning.
        limits::Kind::Bool if spec.arg == limits::Arg::None => Ok(mycnf::parse_bool(v)
            .map(|b| Accept::Value(Value::Bool(b)))
            .unwrap_or(Accept::Ignored)),
        _ => Ok(Accept::AsTyped),
    }
}
