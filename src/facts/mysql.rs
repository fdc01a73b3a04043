//! MySQL/MariaDB facts: option files resolved as mysqld reads them (files in
//! order, server groups, `!include`/`!includedir`, world-writable files
//! skipped, last value wins with provenance), runtime variables from
//! `captures/mysql-variables.tsv`, and the values the server will run with
//! (its own buffer-pool rounding). Produces the `mycnf`, `mysql` and
//! `mycnf_effective` namespaces and the `mysql_version` / `mysql_datadir`
//! facts. All reads go through [`Host`]; no policy logic here.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::parse::mycnf::{self, canonical_option, Directive, StopKind};
use crate::parse::mysqlvars;
use crate::value::{format_size, Value};

use super::{
    is_secret_key, Entry, Evidence, Facts, FileIssue, Namespace, Needs, Setting, REDACTED,
};

/// Option files mysqld reads on Linux, in order (Debian/MariaDB and MySQL
/// packages built without `DEFAULT_SYSCONFDIR`).
pub const DEFAULT_FILES: [&str; 2] = ["/etc/my.cnf", "/etc/mysql/my.cnf"];

/// Deepest `!include` nesting mysys follows (directives at this depth are skipped).
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// Most option files read for one resolution (includes count every time);
/// keeps `!includedir` fan-out with cycles bounded.
pub const MAX_FILES_READ: usize = 2000;

/// The server's data directory when no option file sets `datadir`.
pub const DEFAULT_DATADIR: &str = "/var/lib/mysql";

/// Capture holding `mysql -NB -e 'SHOW GLOBAL VARIABLES'`.
pub const VARIABLES_CAPTURE: &str = "mysql-variables.tsv";

const SOURCE: &str = "mycnf";

/// One option as the server receives it, in argv order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RawOption {
    /// `--name=value` or `--name` exactly as `my_print_defaults` prints it
    /// (value replaced by [`REDACTED`] for secrets).
    pub arg: String,
    /// Option name as written.
    pub name: String,
    /// Value as the server receives it (`None` for a bare option; redacted for secrets).
    pub value: Option<String>,
    /// Group the line was in, as written.
    pub group: String,
    /// File and line.
    pub evidence: Evidence,
}

/// Options resolved from a set of option files.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OptionSet {
    /// Every option of the requested groups in the order the server receives
    /// them (before name normalisation): `my_print_defaults` output.
    pub argv: Vec<RawOption>,
    /// Effective options keyed by normalised name (lowercase, `_`, `loose_`
    /// stripped, `skip_`/`disable_`/`enable_` folded into a boolean); last
    /// value wins; evidence lists the winner first, then earlier assignments.
    pub namespace: Namespace,
    /// Host paths read, in order (a file included twice appears twice).
    pub files_read: Vec<String>,
    /// Groups seen in the files but not read (lowercase), e.g. `client`, `mysqld-8.0`.
    pub skipped_groups: BTreeSet<String>,
    /// When mysqld would refuse to start because of the option files: why,
    /// with file and line. Options after that point are not in `argv`.
    pub fatal: Option<String>,
}

impl OptionSet {
    /// The argv strings alone (`--name=value`).
    pub fn args(&self) -> Vec<String> {
        self.argv.iter().map(|o| o.arg.clone()).collect()
    }
}

/// The groups the server reads for a runtime `version` string
/// (`10.11.19-MariaDB-0+deb12u1`, `8.0.36`). Unknown version: the
/// unversioned MariaDB list (a MySQL server ignores the MariaDB-only groups).
pub fn server_groups(version: Option<&str>) -> Vec<String> {
    let mut g: Vec<String> = Vec::new();
    match version.and_then(ServerVersion::parse) {
        Some(v) if v.mariadb => {
            let xy = format!("{}.{}", v.parts[0], v.parts[1]);
            for n in ["mysqld", "server"] {
                g.push(n.into());
            }
            g.push(format!("mysqld-{xy}"));
            g.push("mariadb".into());
            g.push(format!("mariadb-{xy}"));
            g.push("mariadbd".into());
            g.push(format!("mariadbd-{xy}"));
            g.push("client-server".into());
            g.push("galera".into());
        }
        Some(v) => {
            g.push("mysqld".into());
            g.push("server".into());
            g.push(format!("mysqld-{}.{}", v.parts[0], v.parts[1]));
        }
        None => {
            for n in [
                "mysqld",
                "server",
                "mariadb",
                "mariadbd",
                "client-server",
                "galera",
            ] {
                g.push(n.into());
            }
        }
    }
    g
}

/// A server version from the runtime `version` variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    /// major, minor, patch.
    pub parts: [u64; 3],
    /// MariaDB rather than MySQL/Percona.
    pub mariadb: bool,
}

impl ServerVersion {
    /// Parse `10.11.19-MariaDB-0+deb12u1` or `8.0.36-28`.
    pub fn parse(s: &str) -> Option<ServerVersion> {
        let head: String = s
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let nums: Vec<u64> = head.split('.').map_while(|p| p.parse().ok()).collect();
        if nums.len() < 2 {
            return None;
        }
        let parts = [nums[0], nums[1], nums.get(2).copied().unwrap_or(0)];
        Some(ServerVersion {
            parts,
            mariadb: s.to_ascii_lowercase().contains("mariadb"),
        })
    }

    fn at_least(&self, v: [u64; 3]) -> bool {
        self.parts >= v
    }
}

struct Resolver<'a> {
    host: &'a Host,
    groups: BTreeSet<String>,
    issues: &'a mut Vec<FileIssue>,
    argv: Vec<RawOption>,
    files_read: Vec<String>,
    skipped_groups: BTreeSet<String>,
    fatal: Option<String>,
    reported: BTreeSet<String>,
    budget_exhausted: bool,
}

enum FileResult {
    Read,
    Missing,
    /// mysys returned an error for this file (the includer, if top-level, aborts).
    Error(String),
}

impl Resolver<'_> {
    fn issue(&mut self, path: &str, line: Option<usize>, message: String) {
        self.issues.push(FileIssue {
            path: path.to_string(),
            line,
            column: None,
            message,
            source: SOURCE.into(),
            level: crate::facts::IssueLevel::Problem,
        });
    }

    fn read_file(&mut self, path: &str, depth: usize, stack: &mut Vec<String>) -> FileResult {
        let resolved = match self.host.resolve(path) {
            Ok(r) => r,
            Err(ReadError::NotFound) => return FileResult::Missing,
            Err(e) => {
                self.issues.push(FileIssue::unreadable(SOURCE, path, &e));
                return FileResult::Missing;
            }
        };
        match self.host.kind_of(&resolved) {
            Ok(EntryKind::File) => {}
            Ok(EntryKind::Dir) => {
                self.issue(
                    path,
                    None,
                    "is a directory, not an option file; mysqld reads nothing from it".into(),
                );
                return FileResult::Read;
            }
            Ok(EntryKind::Other) => {
                self.issue(
                    path,
                    None,
                    "is not a regular file; driftaudit does not read it".into(),
                );
                return FileResult::Read;
            }
            Err(_) => return FileResult::Missing,
        }
        if let Ok(mode) = self.host.mode(&resolved) {
            if mode & 0o002 != 0 {
                self.issue(
                    path,
                    None,
                    "is world-writable: mysqld ignores it (\"World-writable config file is ignored\"); its settings do not apply"
                        .into(),
                );
                return FileResult::Read;
            }
        }
        if self.files_read.len() >= MAX_FILES_READ {
            if !self.budget_exhausted {
                self.budget_exhausted = true;
                self.issue(
                    path,
                    None,
                    format!(
                        "more than {MAX_FILES_READ} option files read (include loop?); stopped"
                    ),
                );
            }
            return FileResult::Read;
        }
        let text = match self.host.read_to_string(&resolved) {
            Ok(t) => t,
            Err(e) => {
                self.issues.push(FileIssue::unreadable(SOURCE, path, &e));
                return FileResult::Missing;
            }
        };
        self.files_read.push(path.to_string());
        let parsed = mycnf::parse(&text);
        if self.reported.insert(path.to_string()) {
            for i in &parsed.issues {
                self.issues.push(FileIssue::from_parse(SOURCE, path, i));
            }
        }
        stack.push(resolved.clone());
        let mut accepted = false;
        let mut group = String::new();
        let mut result = FileResult::Read;
        for d in parsed.directives {
            match d {
                Directive::Group { name, .. } => {
                    accepted = self.groups.contains(&name.to_lowercase());
                    if !accepted {
                        self.skipped_groups.insert(name.to_lowercase());
                    }
                    group = name;
                }
                Directive::Option { name, value, line } => {
                    if accepted {
                        let secret =
                            is_secret_key(&name) || is_secret_key(&canonical_option(&name).name);
                        let value = if secret {
                            value.map(|_| REDACTED.to_string())
                        } else {
                            value
                        };
                        let arg = match &value {
                            Some(v) => format!("--{name}={v}"),
                            None => format!("--{name}"),
                        };
                        self.argv.push(RawOption {
                            arg,
                            name,
                            value,
                            group: group.clone(),
                            evidence: Evidence::line(path, line),
                        });
                    }
                }
                Directive::Include { path: inc, line }
                | Directive::IncludeDir { path: inc, line }
                    if depth >= MAX_INCLUDE_DEPTH =>
                {
                    self.issue(
                        path,
                        Some(line),
                        format!("`{inc}` skipped: maximum include depth {MAX_INCLUDE_DEPTH} reached (mysqld skips it too)"),
                    );
                }
                Directive::Include { path: inc, line } => {
                    let target = self.absolute(path, line, &inc, "include");
                    self.note_cycle(path, line, &target, stack);
                    if let FileResult::Missing = self.read_file(&target, depth + 1, stack) {
                        self.issue(
                            path,
                            Some(line),
                            format!("`!include {inc}`: no such file; mysqld ignores a missing include silently"),
                        );
                        if let Some(last) = self.issues.last_mut() {
                            last.level = crate::facts::IssueLevel::Note;
                        }
                    }
                }
                Directive::IncludeDir { path: dir, line } => {
                    let target = self.absolute(path, line, &dir, "includedir");
                    match self.host.read_dir(&target) {
                        Ok(entries) => {
                            for e in entries {
                                if !has_cnf_ext(&e.name) {
                                    continue;
                                }
                                let file = format!("{}/{}", target.trim_end_matches('/'), e.name);
                                self.note_cycle(path, line, &file, stack);
                                self.read_file(&file, depth + 1, stack);
                            }
                        }
                        Err(e) => {
                            let why =
                                format!("`!includedir {dir}`: cannot read the directory ({e})");
                            self.issue(
                                path,
                                Some(line),
                                format!("{why}; {}", stop_consequence(depth)),
                            );
                            result = FileResult::Error(format!("{path}:{line}: {why}"));
                            break;
                        }
                    }
                }
                Directive::Stop { reason, line } => {
                    if reason == StopKind::EmptyDirective && depth >= MAX_INCLUDE_DEPTH {
                        continue;
                    }
                    self.issue(path, Some(line), stop_consequence(depth).to_string());
                    result = FileResult::Error(format!("{path}:{line}: {}", stop_text(reason)));
                    break;
                }
            }
        }
        stack.pop();
        result
    }

    fn absolute(&mut self, file: &str, line: usize, p: &str, kw: &str) -> String {
        if p.starts_with('/') {
            p.to_string()
        } else {
            self.issue(
                file,
                Some(line),
                format!("`!{kw} {p}` is relative: mysqld resolves it against its working directory, not this file's; taken relative to `/`"),
            );
            format!("/{p}")
        }
    }

    fn note_cycle(&mut self, file: &str, line: usize, target: &str, stack: &[String]) {
        let resolved = self
            .host
            .resolve(target)
            .unwrap_or_else(|_| target.to_string());
        if stack.contains(&resolved) {
            let key = format!("cycle {file}:{line}");
            if self.reported.insert(key) {
                self.issue(
                    file,
                    Some(line),
                    format!("include cycle: `{target}` is already being read; mysqld re-reads it until the include depth limit ({MAX_INCLUDE_DEPTH})"),
                );
            }
        }
    }
}

fn stop_text(reason: StopKind) -> &'static str {
    match reason {
        StopKind::UnclosedGroup => "group header without `]`",
        StopKind::OptionBeforeGroup => "option before any [group] header",
        StopKind::EmptyDirective => "`!include`/`!includedir` without a path",
    }
}

fn stop_consequence(depth: usize) -> &'static str {
    if depth == 0 {
        "mysqld refuses to start (\"Fatal error in defaults handling. Program aborted\")"
    } else {
        "mysqld ignores the rest of this included file and continues with the including file"
    }
}

/// `fn_ext(name) == ".cnf"`: the extension after the last dot.
fn has_cnf_ext(name: &str) -> bool {
    name.rfind('.').is_some_and(|i| &name[i..] == ".cnf")
}

/// Resolve option files as mysqld reads them: `files` in order (missing
/// ones skipped silently, as for default files), options of `groups`
/// (case-insensitive) only, includes followed through `host`. Problems go to
/// `facts_issues`.
pub fn effective_options(
    host: &Host,
    files: &[&str],
    groups: &[String],
    facts_issues: &mut Vec<FileIssue>,
) -> OptionSet {
    let mut r = Resolver {
        host,
        groups: groups.iter().map(|g| g.to_lowercase()).collect(),
        issues: facts_issues,
        argv: Vec::new(),
        files_read: Vec::new(),
        skipped_groups: BTreeSet::new(),
        fatal: None,
        reported: BTreeSet::new(),
        budget_exhausted: false,
    };
    for f in files {
        let mut stack = Vec::new();
        if let FileResult::Error(why) = r.read_file(f, 0, &mut stack) {
            r.fatal = Some(format!("mysqld would refuse to start: {why}"));
            break;
        }
    }
    let namespace = build_namespace(&r.argv, r.issues);
    OptionSet {
        argv: r.argv,
        namespace,
        files_read: r.files_read,
        skipped_groups: r.skipped_groups,
        fatal: r.fatal,
    }
}

/// Boolean options (server and InnoDB) whose values are ON/OFF.
const KNOWN_BOOLEANS: [&str; 27] = [
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
const BOOLEANS_REQUIRING_VALUE: [&str; 2] = [
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
const CUMULATIVE: &[&str] = &[
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

fn build_namespace(argv: &[RawOption], issues: &mut Vec<FileIssue>) -> Namespace {
    let mut ns = Namespace::new(
        "no option file the server reads sets this option: the compiled-in default applies",
    );
    ns.canonicalize = Some(canonical_name);
    let mut out: BTreeMap<String, Setting> = BTreeMap::new();
    for o in argv {
        let c = canonical_option(&o.name);
        if c.name.is_empty() {
            continue;
        }
        let ev = &o.evidence;
        let mut note_issue = |m: String| {
            issues.push(FileIssue {
                path: ev.path.clone(),
                line: ev.line,
                column: None,
                message: m,
                source: SOURCE.into(),
                level: crate::facts::IssueLevel::Problem,
            })
        };
        let secret = is_secret_key(&c.name);
        let (value, raw) = match (c.forced, &o.value) {
            (Some(b), v) => {
                if let Some(v) = v {
                    note_issue(format!(
                        "`--{}={v}`: a skip-/disable-/enable- option takes no value",
                        o.name
                    ));
                }
                (Value::Bool(b), o.name.clone())
            }
            (None, None) => {
                if BOOLEANS_REQUIRING_VALUE.contains(&c.name.as_str()) {
                    note_issue(format!(
                        "bare `{}`: MariaDB refuses to start (\"option '--{}' requires an argument\"); write `{} = ON`",
                        o.name,
                        c.name.replace('_', "-"),
                        o.name
                    ));
                }
                (Value::Bool(true), o.name.clone())
            }
            (None, Some(v)) if secret => (Value::Str(v.clone()), v.clone()),
            (None, Some(v)) => {
                let (value, warn) = typed_option(&c.name, v);
                if let Some(w) = warn {
                    note_issue(format!("`{}`: {w}", o.name));
                }
                (value, v.clone())
            }
        };
        let (value, raw) = if secret {
            (Value::Str(REDACTED.into()), REDACTED.to_string())
        } else {
            (value, raw)
        };
        let mut s = Setting::new(value, raw, o.evidence.clone());
        if let Some(prev) = out.remove(&c.name) {
            // Overriding across files is how conf.d layouts work; only a second,
            // different value in the same file is suspicious. Cumulative options
            // (plugin_load_add, replicate_*) add up and are never overrides.
            let same_file = prev
                .evidence
                .first()
                .is_some_and(|e| e.path == s.evidence[0].path);
            if same_file
                && !CUMULATIVE.contains(&c.name.as_str())
                && !prev.value.loosely_equals(&s.value)
            {
                if let Some(first) = prev.evidence.first() {
                    note_issue(format!(
                        "`{}` set again: `{}` here overrides `{}` from {first}; the last value wins",
                        c.name, s.raw, prev.raw
                    ));
                }
            }
            s.evidence.extend(prev.evidence);
        }
        out.insert(c.name, s);
    }
    ns.entries = out.into_iter().map(|(k, s)| (k, Entry::Set(s))).collect();
    ns
}

/// The data directory: `mycnf.datadir` when an option file sets it, else
/// [`DEFAULT_DATADIR`]. Call after [`gather`].
pub fn datadir(facts: &Facts) -> String {
    match facts.namespaces.get("mycnf").and_then(|n| n.get("datadir")) {
        Some(Entry::Set(s)) if !s.raw.is_empty() => s.raw.trim_end_matches('/').to_string(),
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

fn runtime_namespace(host: &Host, facts: &mut Facts) -> Namespace {
    let path = format!("/captures/{VARIABLES_CAPTURE}");
    let text = match host.capture(VARIABLES_CAPTURE) {
        Ok(t) => t,
        Err(e) => {
            let reason = match host.kind() {
                SourceKind::Live => "runtime MySQL/MariaDB variables are not read from a live host: take a snapshot with `driftaudit snapshot --mysql` (or capture `mysql -NB -e 'SHOW GLOBAL VARIABLES'` as captures/mysql-variables.tsv)".to_string(),
                SourceKind::Snapshot => format!("the snapshot has no captures/{VARIABLES_CAPTURE} ({e}): capture `mysql -NB -e 'SHOW GLOBAL VARIABLES'` to compare with the running server"),
            };
            return Namespace::unavailable(reason);
        }
    };
    let parsed = mysqlvars::parse(&text);
    for i in &parsed.issues {
        facts.issues.push(FileIssue::from_parse("mysql", &path, i));
    }
    let mut ns = Namespace::new(
        "the running server has no such variable (another version, or a plugin that is not loaded)",
    );
    ns.canonicalize = Some(crate::parse::mycnf::normalize_name);
    for v in parsed.vars {
        let (value, raw) = if is_secret_key(&v.name) {
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

fn runtime_number(ns: &Namespace, key: &str) -> Option<f64> {
    match ns.get(key) {
        Some(Entry::Set(s)) => s.value.as_f64(),
        _ => None,
    }
}

const MIB: f64 = 1048576.0;

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

/// Gather the `mysql`, `mycnf` and `mycnf_effective` namespaces and the
/// `mysql_version` and `mysql_datadir` facts.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let runtime = runtime_namespace(host, facts);
    let version_text = match runtime.get("version") {
        Some(Entry::Set(s)) => Some(s.raw.clone()),
        _ => None,
    };
    let version = version_text.as_deref().and_then(ServerVersion::parse);
    facts.facts.insert(
        "mysql_version".into(),
        version_text.clone().map(Value::Str).ok_or_else(|| {
            runtime
                .unavailable
                .clone()
                .unwrap_or_else(|| "the runtime capture has no `version` variable".into())
        }),
    );
    let groups = server_groups(version_text.as_deref());

    let mut files: Vec<String> = DEFAULT_FILES.iter().map(|s| s.to_string()).collect();
    for f in &needs.option_files {
        if !files.contains(f) {
            if !host.exists(f) {
                facts.issues.push(FileIssue {
                    path: f.clone(),
                    line: None,
                    column: None,
                    message: "option file named by a rule or the user does not exist".into(),
                    source: SOURCE.into(),
                    level: crate::facts::IssueLevel::Problem,
                });
            }
            files.push(f.clone());
        }
    }
    let file_refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let set = effective_options(host, &file_refs, &groups, &mut facts.issues);
    if version.is_none() {
        for g in &set.skipped_groups {
            let versioned = ["mysqld-", "mariadb-", "mariadbd-"].iter().any(|p| {
                g.strip_prefix(p)
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            });
            if versioned {
                facts.issues.push(FileIssue {
                    path: set.files_read.first().cloned().unwrap_or_else(|| DEFAULT_FILES[0].to_string()),
                    line: None,
                    column: None,
                    message: format!("group [{g}] is read only by that server version; the version is unknown (no runtime capture), so it was not applied"),
                    source: SOURCE.into(),
                    level: crate::facts::IssueLevel::Unknown,
                });
            }
        }
    }
    if let Some(f) = &set.fatal {
        facts.issues.push(FileIssue {
            path: set.files_read.last().cloned().unwrap_or_default(),
            line: None,
            column: None,
            message: f.clone(),
            source: SOURCE.into(),
            level: crate::facts::IssueLevel::Problem,
        });
    }

    let mut effective = set.namespace.clone();
    effective.absent_means =
        "not set in any option file: the server's compiled-in default applies".into();
    if let Some(Entry::Set(s)) = effective.entries.get_mut("innodb_buffer_pool_size") {
        if let Some(n) = s.value.as_f64() {
            let rt = if runtime.unavailable.is_none() {
                Some(&runtime)
            } else {
                None
            };
            let (v, how) = effective_buffer_pool(n, version.as_ref(), rt, &set.namespace);
            if v != n {
                s.note = Some(format!(
                    "configured {} ({}); {how}: {} ({})",
                    s.raw,
                    format_size(n),
                    crate::value::format_number(v),
                    format_size(v)
                ));
            } else {
                s.note = Some(how);
            }
            s.value = Value::Size(v);
        }
    }
    // A bare dump/load line is ON for my_print_defaults (`mycnf`), but the
    // server refuses it, so it runs with no value at all: rules on
    // `mycnf_effective` are unknown with that reason, never a passing ON.
    for key in BOOLEANS_REQUIRING_VALUE {
        let last = set
            .argv
            .iter()
            .rev()
            .find(|o| canonical_option(&o.name).name == key);
        if let Some(o) =
            last.filter(|o| o.value.is_none() && canonical_option(&o.name).forced.is_none())
        {
            effective.entries.insert(
                key.to_string(),
                Entry::Unreadable {
                    reason: format!(
                        "bare `{}` at {} (no `= ON`): the server refuses to start (\"option '--{}' requires an argument\", verified on MariaDB 10.11), so no value applies",
                        o.name,
                        o.evidence,
                        key.replace('_', "-")
                    ),
                    evidence: vec![o.evidence.clone()],
                },
            );
        }
    }
    let mut ns_mycnf = set.namespace;
    ns_mycnf.canonicalize = Some(canonical_name);
    facts.namespaces.insert("mycnf".into(), ns_mycnf);
    facts.namespaces.insert("mycnf_effective".into(), effective);
    facts.namespaces.insert("mysql".into(), runtime);
    let dd = datadir(facts);
    facts
        .facts
        .insert("mysql_datadir".into(), Ok(Value::Str(dd)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(pairs: &[(&str, f64)]) -> Namespace {
        let mut n = Namespace::new("");
        for (k, v) in pairs {
            n.set(
                *k,
                Setting::new(Value::Number(*v), "", Evidence::file("/x")),
            );
        }
        n
    }

    #[test]
    fn groups_for_versions() {
        assert_eq!(
            server_groups(Some("10.11.19-MariaDB-0+deb12u1")),
            [
                "mysqld",
                "server",
                "mysqld-10.11",
                "mariadb",
                "mariadb-10.11",
                "mariadbd",
                "mariadbd-10.11",
                "client-server",
                "galera"
            ]
        );
        assert_eq!(
            server_groups(Some("8.0.36")),
            ["mysqld", "server", "mysqld-8.0"]
        );
        assert_eq!(server_groups(None).len(), 6);
    }

    #[test]
    fn buffer_pool_rounding() {
        let empty = Namespace::new("");
        let new = ServerVersion::parse("10.11.19-MariaDB").unwrap();
        assert_eq!(
            effective_buffer_pool(300000000.0, Some(&new), None, &empty).0,
            299892736.0
        );
        assert_eq!(
            effective_buffer_pool(1048576000.0, Some(&new), None, &empty).0,
            1048576000.0
        );
        assert_eq!(
            effective_buffer_pool(1000.0, Some(&new), None, &empty).0,
            2.0 * MIB
        );
        // MySQL manual: 9G, 16 instances, 128M chunks -> 10G.
        let mysql = ServerVersion::parse("8.0.36").unwrap();
        let rt = ns(&[
            ("innodb_buffer_pool_instances", 16.0),
            ("innodb_buffer_pool_chunk_size", 128.0 * MIB),
        ]);
        assert_eq!(
            effective_buffer_pool(9.0 * 1024.0 * MIB, Some(&mysql), Some(&rt), &empty).0,
            10.0 * 1024.0 * MIB
        );
        // Default 8 instances for a >= 1 GiB pool on 5.7/8.0.
        assert_eq!(
            effective_buffer_pool(1100.0 * MIB, Some(&mysql), None, &empty).0,
            2048.0 * MIB
        );
        // MariaDB 10.6: one instance, 128M chunks.
        let m106 = ServerVersion::parse("10.6.16-MariaDB").unwrap();
        assert_eq!(
            effective_buffer_pool(1000.0 * MIB, Some(&m106), None, &empty).0,
            1024.0 * MIB
        );
        // Unknown version: no rounding.
        assert_eq!(
            effective_buffer_pool(300000000.0, None, None, &empty).0,
            300000000.0
        );
    }

    #[test]
    fn typing() {
        assert_eq!(
            typed_option("innodb_buffer_pool_size", "1G").0,
            Value::Size(1073741824.0)
        );
        assert_eq!(
            typed_option("innodb_buffer_pool_size", "1GB").0,
            Value::Size(1073741824.0)
        );
        assert!(typed_option("innodb_buffer_pool_size", "1Gfoo").1.is_some());
        assert_eq!(
            typed_option("max_connections", "500").0,
            Value::Number(500.0)
        );
        assert_eq!(
            typed_option("innodb_buffer_pool_dump_at_shutdown", "yes"),
            (
                Value::Bool(false),
                typed_option("innodb_buffer_pool_dump_at_shutdown", "yes").1
            )
        );
        assert!(typed_option("innodb_buffer_pool_dump_at_shutdown", "yes")
            .1
            .is_some());
        assert_eq!(
            typed_option("innodb_buffer_pool_dump_at_shutdown", "1").0,
            Value::Bool(true)
        );
        assert_eq!(
            typed_option("datadir", "/var/lib/mysql").0,
            Value::Str("/var/lib/mysql".into())
        );
        assert_eq!(typed_option("some_plugin_opt", "ON").0, Value::Bool(true));
        assert_eq!(
            typed_option("log_error", "5Mlog").0,
            Value::Str("5Mlog".into())
        );
        assert_eq!(typed_option("some_cache", "64M").0, Value::Size(67108864.0));
        assert!(typed_option("innodb_log_file_size", "1.5G").1.is_some());
        assert_eq!(
            typed_runtime("innodb_buffer_pool_size", "134217728"),
            Value::Size(134217728.0)
        );
        assert_eq!(
            typed_runtime("analyze_sample_percentage", "100.000000"),
            Value::Number(100.0)
        );
        assert_eq!(
            typed_runtime("version", "10.11.19-MariaDB"),
            Value::Str("10.11.19-MariaDB".into())
        );
    }

    #[test]
    fn cnf_extension() {
        assert!(has_cnf_ext("a.cnf"));
        assert!(has_cnf_ext(".cnf"));
        assert!(!has_cnf_ext("a.cnf.bak"));
        assert!(!has_cnf_ext("a.CNF"));
        assert!(!has_cnf_ext("a.ini"));
        assert!(!has_cnf_ext("cnf"));
    }
}
