//! MySQL/MariaDB facts: option files resolved as mysqld reads them (files in
//! order, server groups, `!include`/`!includedir`, world-writable files
//! skipped, last value wins with provenance; each file read once per
//! resolution, work bounded in files, bytes and options), option names and
//! values read with the server version's option table ([`limits`]: unique
//! prefixes, `skip-`/`enable-` with `=0`, values the server refuses, numeric
//! limits), the version from the runtime capture or else the installed
//! package (dpkg database, RPM package lists, upgrade-info file), runtime variables from `captures/mysql-variables.tsv`, and the
//! values the server will run with (its limits and buffer-pool rounding).
//! Produces the `mycnf`, `mycnf_effective`, `mysql` (and, in [`files`],
//! `mycnf_files`) namespaces and the
//! `mysql_version` / `mysql_datadir` facts. All reads go through [`Host`];
//! no policy logic here.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::parse::mycnf::{self, canonical_option, Directive, StopKind};
use crate::parse::mysqlvars;
use crate::secret::{self, REDACTED};
use crate::value::{format_size, Value};

mod adjust;
pub mod documented;
pub mod files;
pub mod limits;
pub mod persisted;
mod service;
pub mod sizing;

use super::{Entry, Evidence, Facts, FileIssue, Namespace, Needs, Setting};

/// Option files mysqld reads on Linux, in order (Debian/MariaDB and MySQL
/// packages built without `DEFAULT_SYSCONFDIR`).
pub const DEFAULT_FILES: [&str; 2] = ["/etc/my.cnf", "/etc/mysql/my.cnf"];

/// Deepest `!include` nesting mysys follows (directives at this depth are skipped).
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// Most option files read for one resolution (includes count every time);
/// keeps `!includedir` fan-out with cycles bounded.
pub const MAX_FILES_READ: usize = 2000;

/// Most bytes of option files processed for one resolution, counting a file
/// each time an include reaches it (it is read from the host only once).
pub const MAX_BYTES_PROCESSED: u64 = 64 * 1024 * 1024;

/// Most options taken from the files for one resolution (a real server's
/// files hold hundreds).
pub const MAX_OPTIONS: usize = 200_000;

/// Parse problems listed per file; the rest are counted.
const MAX_ISSUES_PER_FILE: usize = 100;

/// Most earlier (overridden) assignments kept as evidence for one option.
const MAX_OVERRIDDEN_EVIDENCE: usize = 16;

/// The server's data directory when no option file sets `datadir`.
pub const DEFAULT_DATADIR: &str = "/var/lib/mysql";

/// Capture holding `mysql -NB -e 'SHOW GLOBAL VARIABLES'`.
pub const VARIABLES_CAPTURE: &str = crate::catalogue::MYSQL_VARIABLES.name;

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
    /// The options the server accepts, keyed like `namespace`: a line the
    /// server ignores (a `loose-` option with a value it refuses) does not
    /// override, and an option whose value makes the server refuse to start
    /// is unreadable with that reason. Numeric limits are not applied yet
    /// (see `gather`).
    pub effective: Namespace,
    /// Host paths read, in order (a file included twice appears twice).
    pub files_read: Vec<String>,
    /// Groups seen in the files but not read (lowercase), e.g. `client`, `mysqld-8.0`.
    pub skipped_groups: BTreeSet<String>,
    /// Options (names and lines; no values) in versioned server groups
    /// (`[mysqld-8.0]`, `[mariadb-10.11]`) that were not read, each with the
    /// number of `argv` options read before it.
    pub versioned: Vec<(usize, RawOption)>,
    /// Bytes read from the host (each file once per resolution).
    pub bytes_read: u64,
    /// Bytes of option files processed, counting a file each time it is
    /// included (bounded by [`MAX_BYTES_PROCESSED`]).
    pub bytes_processed: u64,
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
    /// Who controls the file being read (host::Trust): includes are read on its behalf.
    trust: crate::host::Trust,
    versioned: Vec<(usize, RawOption)>,
    read: ReadAs,
    cache: BTreeMap<String, std::rc::Rc<CachedFile>>,
    bytes_read: u64,
    bytes_processed: u64,
}

/// One option file as parsed, kept for the rest of one resolution.
struct CachedFile {
    trust: crate::host::Trust,
    directives: Vec<Directive>,
    bytes: u64,
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
            read_error: None,
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
        // Each file is read and parsed once per resolution; a file reached
        // again (mysys re-reads it) replays the parsed lines, within a budget
        // of bytes processed, so self-including directories stay bounded.
        let outer = self.trust.clone();
        let parsed = match self.cache.get(&resolved) {
            Some(p) => {
                // Replayed: its includes keep the trust of its first reading
                // when a service user controlled it then.
                if p.trust.uid().is_some() {
                    self.trust = p.trust.clone();
                }
                p.clone()
            }
            None => {
                // By the name it was given, so the check sees who controls
                // the way there (host::Trust); what it includes is read on
                // its owner's behalf.
                let text = match self.host.read_to_string_for(path, outer.clone()) {
                    Ok((t, inner)) => {
                        self.trust = inner;
                        t
                    }
                    Err(e) => {
                        self.issues.push(FileIssue::unreadable(SOURCE, path, &e));
                        return FileResult::Missing;
                    }
                };
                self.bytes_read += text.len() as u64;
                let p = mycnf::parse(&text);
                if self.reported.insert(path.to_string()) {
                    for i in p.issues.iter().take(MAX_ISSUES_PER_FILE) {
                        self.issues.push(FileIssue::from_parse(SOURCE, path, i));
                    }
                    if p.issues.len() > MAX_ISSUES_PER_FILE {
                        self.issue(
                            path,
                            None,
                            format!(
                                "{} more problems in this file not listed",
                                p.issues.len() - MAX_ISSUES_PER_FILE
                            ),
                        );
                    }
                }
                let cached = std::rc::Rc::new(CachedFile {
                    trust: self.trust.clone(),
                    directives: p.directives,
                    bytes: text.len() as u64,
                });
                self.cache.insert(resolved.clone(), cached.clone());
                cached
            }
        };
        if self.bytes_processed + parsed.bytes > MAX_BYTES_PROCESSED {
            if !self.budget_exhausted {
                self.budget_exhausted = true;
                self.issue(
                    path,
                    None,
                    format!(
                        "more than {} MiB of option files processed (include loop?); stopped",
                        MAX_BYTES_PROCESSED >> 20
                    ),
                );
            }
            return FileResult::Read;
        }
        self.bytes_processed += parsed.bytes;
        self.files_read.push(path.to_string());
        stack.push(resolved.clone());
        let mut accepted = false;
        let mut versioned = false;
        let mut group = String::new();
        let mut result = FileResult::Read;
        for d in parsed.directives.iter().cloned() {
            match d {
                Directive::Group { name, .. } => {
                    accepted = self.groups.contains(&name.to_lowercase());
                    versioned = !accepted && is_versioned_group(&name.to_lowercase());
                    if !accepted {
                        self.skipped_groups.insert(name.to_lowercase());
                    }
                    group = name;
                }
                Directive::Option { name, value, line } => {
                    if versioned && self.versioned.len() < MAX_FILES_READ {
                        self.versioned.push((
                            self.argv.len(),
                            RawOption {
                                arg: String::new(),
                                name: name.clone(),
                                value: None,
                                group: group.clone(),
                                evidence: Evidence::line(path, line),
                            },
                        ));
                    }
                    if accepted && self.argv.len() >= MAX_OPTIONS {
                        if self.reported.insert("options budget".into()) {
                            self.issue(
                                path,
                                Some(line),
                                format!("more than {MAX_OPTIONS} options read (include loop?); the rest is not read"),
                            );
                        }
                    } else if accepted {
                        // By the option the server resolves the name to, too:
                        // `passw` is `password` to MariaDB.
                        let resolved = read_name(&self.read, &name, None);
                        let secret = if resolved.spec.is_some() {
                            secret::option_is_secret(&resolved.key)
                        } else {
                            secret::option_is_secret(&name)
                                || secret::option_is_secret(&canonical_option(&name).name)
                        };
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
        self.trust = outer;
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

/// `[mysqld-X.Y]`, `[mariadb-X.Y]`, `[mariadbd-X.Y]`: read only by that version.
fn is_versioned_group(g: &str) -> bool {
    ["mysqld-", "mariadb-", "mariadbd-"].iter().any(|p| {
        g.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
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
    effective_options_for(
        host,
        files,
        groups,
        crate::host::Trust::root(),
        facts_issues,
    )
}

/// [`effective_options`] for option files whose paths `trust` says who
/// chose (a `mysql_mycnf` named in a localconfig.xml the `zimbra` user
/// owns): on a live host each file, and everything it includes, is read
/// with the rules of [`Host::read_to_string_for`] (only what that user
/// could read; a file that is not is reported unreadable with the reason).
pub fn effective_options_for(
    host: &Host,
    files: &[&str],
    groups: &[String],
    trust: crate::host::Trust,
    facts_issues: &mut Vec<FileIssue>,
) -> OptionSet {
    resolve_options(
        host,
        files,
        groups,
        &ReadAs::version(None),
        trust,
        facts_issues,
    )
}

/// [`effective_options`] with names and values read as `read` says (the
/// server version's option table).
pub fn effective_options_as(
    host: &Host,
    files: &[&str],
    groups: &[String],
    read: &ReadAs,
    facts_issues: &mut Vec<FileIssue>,
) -> OptionSet {
    resolve_options(
        host,
        files,
        groups,
        read,
        crate::host::Trust::root(),
        facts_issues,
    )
}

fn resolve_options(
    host: &Host,
    files: &[&str],
    groups: &[String],
    read: &ReadAs,
    trust: crate::host::Trust,
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
        trust,
        versioned: Vec::new(),
        read: *read,
        cache: BTreeMap::new(),
        bytes_read: 0,
        bytes_processed: 0,
    };
    for f in files {
        let mut stack = Vec::new();
        if let FileResult::Error(why) = r.read_file(f, 0, &mut stack) {
            r.fatal = Some(format!("mysqld would refuse to start: {why}"));
            break;
        }
    }
    let (namespace, effective) = build_namespaces(&r.argv, read, r.issues);
    OptionSet {
        argv: r.argv,
        namespace,
        effective,
        files_read: r.files_read,
        skipped_groups: r.skipped_groups,
        versioned: r.versioned,
        bytes_read: r.bytes_read,
        bytes_processed: r.bytes_processed,
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

    fn caveat(&self) -> String {
        match (self.table, self.assumed) {
            (Some(t), true) => format!(
                " (the server version is unknown; read as {} reads it)",
                t.label
            ),
            _ => String::new(),
        }
    }

    fn label(&self) -> &'static str {
        self.table.map_or("the server", |t| t.label)
    }
}

/// One option name as the server resolves it.
struct NameRead {
    /// Namespace key.
    key: String,
    /// `loose-`: a refused value is ignored with a warning.
    loose: bool,
    /// `skip-`/`disable-`/`enable-`: the boolean the prefix gives (with the
    /// value `0` inverting it).
    forced: Option<bool>,
    /// The option's entry in the table.
    spec: Option<&'static limits::OptionSpec>,
    /// The unique prefix written instead of the full name.
    prefix: Option<String>,
    /// Why the server refuses the name (ambiguous prefix).
    ambiguous: Option<String>,
}

fn read_name(read: &ReadAs, raw: &str, value: Option<&str>) -> NameRead {
    let fallback = || {
        let c = canonical_option(raw);
        NameRead {
            key: c.name,
            loose: c.loose,
            forced: c.forced.map(|b| limits::forced_value(b, value)),
            spec: None,
            prefix: None,
            ambiguous: None,
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
        limits::Lookup::Unknown => fallback(),
    }
}

/// What the server does with one occurrence of an option.
enum Accept {
    /// Takes it as `mycnf` types it.
    AsTyped,
    /// Takes it with this value.
    Value(Value),
    /// Ignores this line with a warning.
    Ignored,
}

/// Read the value of one occurrence as the server does; `Err`: the server
/// refuses it.
fn server_value(name: &NameRead, value: Option<&str>) -> Result<Accept, String> {
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

/// The `mycnf` namespace (every occurrence, last wins, as `my_print_defaults`
/// hands it over) and the start of `mycnf_effective` (only the occurrences
/// the server accepts; an option whose value the server refuses is
/// unreadable: the server does not start).
fn build_namespaces(
    argv: &[RawOption],
    read: &ReadAs,
    issues: &mut Vec<FileIssue>,
) -> (Namespace, Namespace) {
    let mut ns = Namespace::new(
        "no option file the server reads sets this option: the compiled-in default applies",
    );
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

/// The data directory: `mycnf.datadir` when an option file sets it, else
/// [`DEFAULT_DATADIR`]. Call after [`gather`].
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

/// dpkg packages that carry the server binary, most specific first.
const SERVER_PACKAGES: [&str; 8] = [
    "mariadb-server-core",
    "mariadb-server",
    "mysql-server-core",
    "mysql-community-server-core",
    "mysql-server",
    "percona-server-server",
    "mysql-community-server",
    "mariadb-server-10",
];

/// The installed server's version from what is on disk, first found wins:
/// the dpkg database (`/var/lib/dpkg/status`: an installed
/// `mariadb-server-core`, `mariadb-server-core-10.5`, `mysql-server-core-8.0`,
/// ...); a package listing (an sosreport's `installed-rpms`, `package-data`
/// or `installed-debs`, `rpm -qa` output in a snapshot's
/// `captures/installed-rpms`, the daily `/var/log/rpmpkgs`: see
/// [`server_package`]); else the `mariadb_upgrade_info`/`mysql_upgrade_info`
/// file `mariadb-upgrade` (and MySQL 8.0's own upgrade) leaves in the data
/// directory (`datadir` is asked for only then: finding it reads the option
/// files). Returns the version and where it was read.
///
/// The RPM database itself (`/var/lib/rpm`: Berkeley DB or SQLite holding
/// binary package headers) is not read, and a live `check` runs no command
/// (`rpm -q`) on the audited host: `driftaudit snapshot` captures the server
/// packages of `rpm -qa` instead (docs/snapshot-format.md).
pub fn installed_version(
    host: &Host,
    datadir: impl FnOnce() -> String,
) -> Option<(ServerVersion, String)> {
    if let Some(found) = dpkg_status_version(host) {
        return Some(found);
    }
    if let Some(found) = listed_package_version(host) {
        return Some(found);
    }
    let datadir = datadir();
    for f in ["mariadb_upgrade_info", "mysql_upgrade_info"] {
        let path = format!("{}/{f}", datadir.trim_end_matches('/'));
        if let Ok(t) = host.read_to_string(&path) {
            let t = t.trim_matches(|c: char| c.is_whitespace() || c == '\0');
            if let Some(v) = ServerVersion::parse(t) {
                return Some((v, format!("`{}` in {path}", crate::parse::truncate(t, 80))));
            }
        }
    }
    None
}

fn dpkg_status_version(host: &Host) -> Option<(ServerVersion, String)> {
    let mut best = None;
    host.read_in_pieces(
        "/var/lib/dpkg/status",
        crate::host::MAX_FILE_BYTES,
        64 * 1024,
        |bytes, at_end| dpkg_status_piece(bytes, at_end, &mut best),
    )
    .ok()?;
    best.map(|(_, v, why)| (v, why))
}

/// Scan the whole stanzas of one piece of a dpkg status file read in
/// pieces: up to and including its last blank line (`\n\n`), or all of it
/// at the end of the file. Returns how many bytes it took. A stanza never
/// spans two scans, and each stanza is judged as the whole file's scan
/// would judge it (the blank line that ends one piece is the one that ends
/// its last stanza; a piece that starts after it starts a stanza), so
/// `best` ends as [`dpkg_status_scan`] of the whole file.
fn dpkg_status_piece(
    bytes: &[u8],
    at_end: bool,
    best: &mut Option<(usize, ServerVersion, String)>,
) -> usize {
    let take = if at_end {
        bytes.len()
    } else {
        match memchr::memmem::rfind(bytes, b"\n\n") {
            Some(i) => i + 2,
            None => return 0,
        }
    };
    dpkg_status_scan_into(&bytes[..take], best);
    take
}

/// The best installed server package of a dpkg status file. A host lists
/// hundreds of packages (650 KB here) and at most a few are servers, so the
/// file is neither decoded nor split into stanzas: a SIMD search finds each
/// line that starts with `Package:`, the name alone decides whether to look
/// further, and only for a server package that would beat the best so far
/// is its stanza (the text between the blank lines around it) decoded and
/// judged, exactly as the whole file read as text (invalid UTF-8 replaced,
/// as [`Host::read_to_string`] does) and split on `\n\n` would be: first
/// `Package:`, `Status:` and `Version:` line of the stanza; installed,
/// including `deinstall ok installed`, which is still on disk. Newlines are
/// ASCII, so decoding a stanza alone gives the same text as decoding the
/// file. Nothing is copied but the winner's description.
#[cfg(test)]
fn dpkg_status_scan(status: &[u8]) -> Option<(ServerVersion, String)> {
    let mut best = None;
    dpkg_status_scan_into(status, &mut best);
    best.map(|(_, v, why)| (v, why))
}

/// [`dpkg_status_scan`] onto the best found so far (rank, version, why).
fn dpkg_status_scan_into(status: &[u8], best: &mut Option<(usize, ServerVersion, String)>) {
    // Stanzas already judged end here: a later hit inside one is its
    // second `Package:` line, which the first one's verdict already covers.
    let mut judged_to = 0usize;
    let starts = status
        .starts_with(b"Package:")
        .then_some(0)
        .into_iter()
        .chain(memchr::memmem::find_iter(status, b"\nPackage:").map(|i| i + 1));
    for at in starts {
        if at < judged_to {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &status[at..]).map_or(status.len(), |n| at + n);
        let name = String::from_utf8_lossy(&status[at + 8..line_end]);
        let Some(rank) = dpkg_server_rank(name.trim()) else {
            continue;
        };
        if best.as_ref().is_some_and(|b| rank >= b.0) {
            continue;
        }
        let start = memchr::memmem::rfind(&status[..at], b"\n\n").map_or(0, |i| i + 2);
        let end = memchr::memmem::find(&status[at..], b"\n\n").map_or(status.len(), |i| at + i);
        judged_to = end;
        let para = String::from_utf8_lossy(&status[start..end]);
        if let Some(b) = dpkg_stanza(&para, best.as_ref().map(|b| b.0)) {
            *best = Some(b);
        }
    }
}

/// One dpkg status stanza's verdict: an installed server package (first
/// `Package:`, `Status:` and `Version:` line; installed includes
/// `deinstall ok installed`, still on disk) ranked better than `beat`, with
/// its rank, version and description. The scan and its test reference both
/// judge stanzas with this.
fn dpkg_stanza(para: &str, beat: Option<usize>) -> Option<(usize, ServerVersion, String)> {
    let field = |f: &str| para.lines().find_map(|l| l.strip_prefix(f).map(str::trim));
    let pkg = field("Package:")?;
    let rank = dpkg_server_rank(pkg)?;
    if beat.is_some_and(|b| rank >= b) {
        return None;
    }
    let (st, ver) = (field("Status:")?, field("Version:")?);
    if !st.ends_with(" installed") {
        return None;
    }
    let v = deb_version(pkg, ver)?;
    Some((
        rank,
        v,
        format!("installed package {pkg} {ver} (/var/lib/dpkg/status)"),
    ))
}

/// The stanzas of a dpkg status file that name a server package, whole
/// and in file order, each ended by a blank line: all [`installed_version`]
/// reads of it, so a snapshot keeps them alone (the whole database changes
/// with every package update on the host; these only when a server
/// package does). The same scan as the reader's: a `Package:` line at a
/// line start, stanzas split on blank lines.
pub fn dpkg_server_stanzas(status: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut taken_to = 0usize;
    let starts = status
        .starts_with(b"Package:")
        .then_some(0)
        .into_iter()
        .chain(memchr::memmem::find_iter(status, b"\nPackage:").map(|i| i + 1));
    for at in starts {
        if at < taken_to {
            continue;
        }
        let line_end = memchr::memchr(b'\n', &status[at..]).map_or(status.len(), |n| at + n);
        let name = String::from_utf8_lossy(&status[at + 8..line_end]);
        if dpkg_server_rank(name.trim()).is_none() {
            continue;
        }
        let start = memchr::memmem::rfind(&status[..at], b"\n\n").map_or(0, |i| i + 2);
        let end = memchr::memmem::find(&status[at..], b"\n\n").map_or(status.len(), |i| at + i);
        taken_to = end;
        out.extend_from_slice(
            status[start..end]
                .strip_suffix(b"\n")
                .unwrap_or(&status[start..end]),
        );
        out.extend_from_slice(b"\n\n");
    }
    out
}

fn dpkg_server_rank(pkg: &str) -> Option<usize> {
    SERVER_PACKAGES.iter().position(|p| {
        pkg == *p
            || pkg
                .strip_prefix(p)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// `1:10.11.19-0+deb12u1`: the epoch goes, the upstream version stays.
fn deb_version(pkg: &str, ver: &str) -> Option<ServerVersion> {
    let upstream = ver.split_once(':').map_or(ver, |(_, v)| v);
    let mut v = ServerVersion::parse(upstream)?;
    v.mariadb = pkg.starts_with("mariadb");
    Some(v)
}

/// Most lines read from one package listing (a host has a few thousand packages).
const MAX_LISTING_LINES: usize = 200_000;

fn listed_package_version(host: &Host) -> Option<(ServerVersion, String)> {
    let mut files: Vec<String> = host
        .layout()
        .map(|l| l.package_listings())
        .unwrap_or(&[])
        .iter()
        .map(|s| s.to_string())
        .collect();
    if host.layout() == Some(crate::host::layout::Layout::Sosreport) {
        if let Ok(entries) = host.read_dir(crate::host::layout::SOS_RPM_DIR) {
            for e in entries {
                if crate::host::layout::is_sos_rpm_query(&e.name) {
                    files.push(format!("{}/{}", crate::host::layout::SOS_RPM_DIR, e.name));
                }
            }
        }
    }
    files.push("/var/log/rpmpkgs".into());
    for path in files {
        let Ok(text) = host.read_to_string(&path) else {
            continue;
        };
        let mut best: Option<(usize, ServerVersion, String)> = None;
        for (i, line) in text.lines().take(MAX_LISTING_LINES).enumerate() {
            let Some((rank, v, what)) = server_package(line) else {
                continue;
            };
            if best.as_ref().is_none_or(|b| rank < b.0) {
                let daily = if path == "/var/log/rpmpkgs" {
                    ", the daily package list"
                } else {
                    ""
                };
                best = Some((
                    rank,
                    v,
                    format!("installed package {what} ({path}:{}{daily})", i + 1),
                ));
            }
        }
        if let Some((_, v, why)) = best {
            return Some((v, why));
        }
    }
    None
}

/// The server package a line of a package listing names, with its rank
/// (lower: more specific), version and the package as written. Lines are
/// `NAME-VERSION-RELEASE.ARCH` first (sos's `installed-rpms`, padded and
/// followed by the install date; `package-data`, tab-separated;
/// `/var/log/rpmpkgs` with `.rpm`), or `dpkg -l` rows (`ii  NAME  VERSION
/// ARCH  DESCRIPTION`). RPM server packages: `MariaDB-server` (MariaDB's
/// repository), `mariadb-server`/`mysql-server` and their versioned
/// variants (`mariadb105-server` on Amazon Linux, `mariadb10.11-server`,
/// `mysql8.0-server` on Fedora), `mysql-community-server` (Oracle's
/// repository), `percona-server-server` and `Percona-Server-server-57`,
/// `MariaDB-Galera-server`/`mariadb-galera-server`. Software Collections
/// (`rh-mariadb105-mariadb-server`) read other option files and are not
/// taken.
pub fn server_package(line: &str) -> Option<(usize, ServerVersion, String)> {
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if first == "ii" || first == "hi" {
        // dpkg -l: installed (or held) packages only.
        let pkg = words.next()?;
        let ver = words.next()?;
        let name = pkg.split_once(':').map_or(pkg, |(n, _)| n);
        let rank = dpkg_server_rank(name)?;
        return Some((
            rank,
            deb_version(name, ver)?,
            format!(
                "{} {}",
                crate::parse::truncate(name, 80),
                crate::parse::truncate(ver, 80)
            ),
        ));
    }
    let nvra = first.strip_suffix(".rpm").unwrap_or(first);
    // `.ARCH` has no `-`; the release and version are the last two `-` fields.
    let nvr = match nvra.rsplit_once('.') {
        Some((nvr, arch)) if !arch.contains('-') && !arch.is_empty() => nvr,
        _ => nvra,
    };
    let (nv, _release) = nvr.rsplit_once('-')?;
    let (name, version) = nv.rsplit_once('-')?;
    let lower = name.to_ascii_lowercase();
    let versioned = |base: &str| {
        lower
            .strip_prefix(base)
            .and_then(|r| r.strip_suffix("-server"))
            .is_some_and(|mid| mid.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    let rank = if name == "MariaDB-server" || name == "mariadb-server" || name == "mysql-server" {
        0
    } else if lower == "mysql-community-server" || lower == "percona-server-server" {
        1
    } else if lower
        .strip_prefix("percona-server-server-")
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        || versioned("mariadb")
        || versioned("mysql")
    {
        2
    } else if lower == "mariadb-galera-server" {
        3
    } else {
        return None;
    };
    let mut v = ServerVersion::parse(version)?;
    v.mariadb = lower.contains("mariadb");
    Some((rank, v, crate::parse::truncate(nvra, 120)))
}

/// What was looked for when the server version stays unknown.
const UNKNOWN_VERSION_WHY: &str = "no runtime capture, no server package in a package list (dpkg status, installed-rpms, /var/log/rpmpkgs), no upgrade-info file in the data directory";

/// What would decide the server version.
const UNKNOWN_VERSION_FIX: &str = "capture `SHOW GLOBAL VARIABLES` (driftaudit snapshot --mysql) or the installed server package (`rpm -qa`: driftaudit snapshot, sos's installed-rpms)";

/// The sosreport's own signs of a server: sos's `du -s /var/lib/mysql/*`
/// (the mysql plugin runs it only where a server package is installed) and
/// a `mysqld`/`mariadbd` in its `ps auxwww`. Empty for other layouts.
fn sos_server_signs(host: &Host) -> Vec<String> {
    use crate::host::layout::{sos_mangle, Layout};
    if host.layout() != Some(Layout::Sosreport) {
        return Vec::new();
    }
    let mut signs = Vec::new();
    let du = format!(
        "/sos_commands/mysql/{}",
        sos_mangle("du -s /var/lib/mysql/*")
    );
    if let Ok(t) = host.read_to_string(&du) {
        if t.lines().any(|l| l.contains("/var/lib/mysql")) {
            signs.push(format!("{du} (the data directory's size)"));
        }
    }
    let ps = "/sos_commands/process/ps_auxwww";
    if let Ok(t) = host.read_to_string(ps) {
        // USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND
        if let Some((n, _)) = t.lines().enumerate().find(|(_, l)| {
            l.split_whitespace().nth(10).is_some_and(|c| {
                let prog = c.rsplit('/').next().unwrap_or(c);
                matches!(prog, "mysqld" | "mariadbd")
            })
        }) {
            signs.push(format!("{ps}:{} (a running server)", n + 1));
        }
    }
    signs
}

/// Gather the `mysql`, `mycnf` and `mycnf_effective` namespaces and the
/// `mysql_version` and `mysql_datadir` facts.
pub fn gather(host: &Host, _needs: &Needs, facts: &mut Facts) {
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

    // the files the host's service definition says the server reads
    let server_files = service::option_files(host, &mut facts.issues);
    let file_refs: Vec<&str> = server_files.files.iter().map(String::as_str).collect();

    // Without a runtime capture the version comes from what is installed; the
    // data directory (for its upgrade-info file, the last place looked) from
    // a first read of the files, made only when no package names the server.
    let installed = match version {
        Some(_) => None,
        None => installed_version(host, || {
            let mut scratch = Vec::new();
            let probe = effective_options(host, &file_refs, &server_groups(None), &mut scratch);
            match probe.namespace.get("datadir") {
                Some(Entry::Set(s)) if !s.raw.is_empty() => s.raw.clone(),
                _ => DEFAULT_DATADIR.to_string(),
            }
        }),
    };
    let files_version = version
        .clone()
        .or_else(|| installed.as_ref().map(|i| i.0.clone()));
    let groups = match (&version_text, &installed) {
        (Some(t), _) => server_groups(Some(t)),
        (None, Some((v, _))) => server_groups(Some(&format!(
            "{}.{}.{}{}",
            v.parts[0],
            v.parts[1],
            v.parts[2],
            if v.mariadb { "-MariaDB" } else { "" }
        ))),
        (None, None) => server_groups(None),
    };
    let read = ReadAs::version(files_version.as_ref());
    let set = effective_options_as(host, &file_refs, &groups, &read, &mut facts.issues);
    if let Some((v, src)) = &installed {
        let name = if v.mariadb { "MariaDB" } else { "MySQL" };
        facts.issues.push(FileIssue {
            path: set
                .files_read
                .first()
                .cloned()
                .unwrap_or_else(|| DEFAULT_FILES[0].to_string()),
            line: None,
            column: None,
            message: format!(
                "no runtime capture: option files read as {name} {}.{}.{} reads them, the version of the {src} (the running server may be older until it is restarted)",
                v.parts[0], v.parts[1], v.parts[2]
            ),
            source: SOURCE.into(),
            level: crate::facts::IssueLevel::Note,
            read_error: None,
        });
    }
    // Versioned groups with no version at all: every option they set is
    // unknown, not silently "not applied".
    let mut unknown_versioned: BTreeMap<String, (String, Evidence)> = BTreeMap::new();
    if files_version.is_none() {
        let mut last_known: BTreeMap<String, usize> = BTreeMap::new();
        for (i, o) in set.argv.iter().enumerate() {
            last_known.insert(read_name(&read, &o.name, None).key, i);
        }
        for (pos, o) in &set.versioned {
            let key = read_name(&read, &o.name, None).key;
            // A later line in a group that is read overrides it anyway.
            if last_known.get(&key).is_some_and(|i| i >= pos) {
                continue;
            }
            unknown_versioned.insert(key, {
                (
                    format!(
                        "`{}` is set in [{}] at {}, a group only that server version reads; the server version is unknown ({UNKNOWN_VERSION_WHY}), so whether it applies cannot be told: {UNKNOWN_VERSION_FIX}",
                        o.name, o.group, o.evidence
                    ),
                    o.evidence.clone(),
                )
            });
        }
        for g in &set.skipped_groups {
            if is_versioned_group(g) {
                facts.issues.push(FileIssue {
                    path: set.files_read.first().cloned().unwrap_or_else(|| DEFAULT_FILES[0].to_string()),
                    line: None,
                    column: None,
                    message: format!("group [{g}] is read only by that server version; the version is unknown ({UNKNOWN_VERSION_WHY}), so the options it sets are unknown: {UNKNOWN_VERSION_FIX}"),
                    source: SOURCE.into(),
                    level: crate::facts::IssueLevel::Unknown,
                    read_error: None,
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
            read_error: None,
        });
    }

    let mut effective = set.effective.clone();
    effective.absent_means =
        "not set in any option file: the server's compiled-in default applies".into();
    // MySQL 8 applies the variables persisted with SET PERSIST after every
    // option file (the `mycnf` namespace stays what my_print_defaults sees).
    let persist_dir = match set.namespace.get("datadir") {
        Some(Entry::Set(s)) if !s.raw.is_empty() => s.raw.clone(),
        _ => DEFAULT_DATADIR.to_string(),
    };
    persisted::apply(
        host,
        &persist_dir,
        files_version.as_ref(),
        &set.namespace,
        &read,
        &mut effective,
        &mut facts.issues,
    );
    let rt = if runtime.unavailable.is_none() {
        Some(&runtime)
    } else {
        None
    };
    // The server's numeric limits for this version (clamp, block size).
    if let (true, Some(table)) = (read.limits, read.table) {
        let keys: Vec<String> = effective.entries.keys().cloned().collect();
        for key in keys {
            if key == "innodb_buffer_pool_size" {
                continue;
            }
            let Some(spec) = table.get(&key) else {
                continue;
            };
            if !matches!(
                spec.kind,
                limits::Kind::Int | limits::Kind::Uint | limits::Kind::Double
            ) {
                continue;
            }
            let Some(Entry::Set(s)) = effective.entries.get_mut(&key) else {
                continue;
            };
            let Some(n) = s.value.as_f64() else { continue };
            let l = spec.limit(n);
            if let Some(how) = &l.how {
                let text = format!(
                    "configured {} ({}); {}: {how}: {}",
                    s.raw,
                    crate::value::format_number(n),
                    table.label,
                    crate::value::format_number(l.value)
                );
                if l.warns {
                    if let Some(ev) = s.evidence.first() {
                        facts.issues.push(FileIssue {
                            path: ev.path.clone(),
                            line: ev.line,
                            column: None,
                            message: format!("`{key}`: {text} (the server logs \"adjusted to\")"),
                            source: SOURCE.into(),
                            level: crate::facts::IssueLevel::Note,
                            read_error: None,
                        });
                    }
                }
                s.note = Some(text);
                s.value = match s.value {
                    Value::Size(_) => Value::Size(l.value),
                    _ => Value::Number(l.value),
                };
            }
        }
        // On a case-sensitive file system (Linux) MariaDB runs
        // lower_case_table_names = 2 as 0 (verified with mariadbd --help).
        if table.label.starts_with("MariaDB") {
            if let Some(Entry::Set(s)) = effective.entries.get_mut("lower_case_table_names") {
                if s.value.as_f64() == Some(2.0) {
                    s.note = Some(format!(
                        "configured {}; {} on a case-sensitive file system (Linux) sets 2 to 0 (\"lower_case_table_names was set to 2, even though your system doesn't seem to be case insensitive\")",
                        s.raw, table.label
                    ));
                    s.value = Value::Number(0.0);
                }
            }
        }
        // MariaDB keeps thread_cache_size at most max_connections (verified:
        // 500 with max_connections = 100 runs as 100).
        if table.label.starts_with("MariaDB") {
            let max_conn = match effective.entries.get("max_connections") {
                Some(Entry::Set(s)) => s.value.as_f64(),
                _ => None,
            }
            .unwrap_or(151.0);
            if let Some(Entry::Set(s)) = effective.entries.get_mut("thread_cache_size") {
                if let Some(n) = s.value.as_f64().filter(|n| *n > max_conn) {
                    s.note = Some(format!(
                        "configured {} ({}); {} keeps thread_cache_size at most max_connections: {}",
                        s.raw,
                        crate::value::format_number(n),
                        table.label,
                        crate::value::format_number(max_conn)
                    ));
                    s.value = Value::Number(max_conn);
                }
            }
        }
    }
    if let Some(Entry::Set(s)) = effective.entries.get_mut("innodb_buffer_pool_size") {
        if let Some(n) = s.value.as_f64() {
            let (v, how) = effective_buffer_pool(n, files_version.as_ref(), rt, &set.namespace);
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
    // InnoDB refuses a pool below 6 MiB with 16 KiB pages (verified on
    // MariaDB 10.11.19: "innodb_page_size=16384 requires innodb_buffer_pool_size
    // >= 6 MiB", then "Unknown/unsupported storage engine: InnoDB", Aborting).
    if let (true, Some(table)) = (read.limits, read.table) {
        let page = match effective.entries.get("innodb_page_size") {
            Some(Entry::Set(s)) => s.value.as_f64(),
            _ => None,
        }
        .unwrap_or(16384.0);
        if let Some(Entry::Set(s)) = effective.entries.get("innodb_buffer_pool_size") {
            let min = 6.0 * MIB;
            if page == 16384.0 && s.value.as_f64().is_some_and(|n| n < min) {
                let ev = s.evidence[0].clone();
                let why = format!(
                    "innodb_buffer_pool_size {} at {ev} is below the 6 MiB InnoDB needs with 16 KiB pages: {} refuses to start (\"innodb_page_size=16384 requires innodb_buffer_pool_size >= 6 MiB\", then \"Unknown/unsupported storage engine: InnoDB\")",
                    s.raw, table.label
                );
                facts.issues.push(FileIssue {
                    path: ev.path.clone(),
                    line: ev.line,
                    column: None,
                    message: why.clone(),
                    source: SOURCE.into(),
                    level: crate::facts::IssueLevel::Problem,
                    read_error: None,
                });
                effective.entries.insert(
                    "innodb_buffer_pool_size".into(),
                    Entry::Unreadable {
                        reason: format!("{why}, so no value applies"),
                        evidence: vec![ev],
                    },
                );
            }
        }
    }
    // A bare dump/load line is ON for my_print_defaults (`mycnf`), but the
    // server refuses it, so it runs with no value at all: rules on
    // `mycnf_effective` are unknown with that reason, never a passing ON.
    // (With an option table every option that needs a value is handled this
    // way when the namespaces are built.)
    if read.table.is_none() {
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
    }
    if let Some(rt) = rt {
        adjust::judge_runtime(
            &mut effective,
            rt,
            &read,
            files_version.as_ref(),
            &mut facts.issues,
        );
    }
    facts.option_files = Some(crate::facts::OptionFilesRead {
        groups: groups.iter().map(|g| g.to_lowercase()).collect(),
        files_read: set.files_read.clone(),
        options: set
            .argv
            .iter()
            .map(|o| crate::facts::OptionRead {
                key: read_name(&read, &o.name, o.value.as_deref()).key,
                name: o.name.clone(),
                value: o.value.clone(),
                group: o.group.clone(),
                evidence: o.evidence.clone(),
            })
            .filter(|o| !o.key.is_empty())
            .collect(),
        fatal: set.fatal.clone(),
    });
    let mut ns_mycnf = set.namespace;
    for (key, (reason, ev)) in unknown_versioned {
        for ns in [&mut ns_mycnf, &mut effective] {
            ns.entries.insert(
                key.clone(),
                Entry::Unreadable {
                    reason: reason.clone(),
                    evidence: vec![ev.clone()],
                },
            );
        }
    }
    ns_mycnf.canonicalize = Some(canonical_name);
    // A server the report shows (its package, du, process) whose option
    // files the report does not hold: its configuration is not known, which
    // is not "no option file configures it" (sos's mysql plugin on Debian
    // and Ubuntu copies /etc/mysql/conf.d/mysql* only).
    let mut signs = sos_server_signs(host);
    if let Some((_, src)) = &installed {
        if host.layout() == Some(crate::host::layout::Layout::Sosreport) {
            signs.insert(0, src.clone());
        }
    }
    if !signs.is_empty()
        && runtime.unavailable.is_some()
        && DEFAULT_FILES
            .iter()
            .all(|f| matches!(host.kind_of(f), Err(ReadError::NotFound)))
    {
        let reason = format!(
            "MySQL/MariaDB is present ({}), but the sosreport holds none of its option files ({}): sos's mysql plugin copies /etc/my.cnf, /etc/my.cnf.d/ on RHEL and only /etc/mysql/conf.d/mysql* on Debian and Ubuntu. Audit a driftaudit snapshot of the host instead (`driftaudit snapshot --mysql`), or copy the host's /etc/mysql/ into the extracted report at its path",
            signs.join(", "),
            DEFAULT_FILES.join(", ")
        );
        ns_mycnf.unavailable = Some(reason.clone());
        effective.unavailable = Some(reason);
    }
    facts.server_signs = signs;
    facts.namespaces.insert("mycnf".into(), ns_mycnf);
    facts.namespaces.insert("mycnf_effective".into(), effective);
    facts.namespaces.insert("mysql".into(), runtime);
    files::gather(host, facts);
    sizing::gather(host, files_version.as_ref(), facts);
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

    /// The dpkg database picks the most specific installed server package,
    /// the first of equal rank; packages that are not installed, not servers
    /// or without a version are passed over wherever they stand.
    #[test]
    fn dpkg_status_picks_the_most_specific_installed_server_package() {
        let status = "Package: mariadb-common\nStatus: install ok installed\nVersion: 1:10.11.19-0+deb12u1\n\n\
Package: mariadb-server\nStatus: install ok installed\nVersion: 1:10.5.1-1\n\n\
Package: mariadb-server-10.5\nStatus: install ok installed\nVersion: 1:10.5.2-1\n\n\
Package: mariadb-server-core\nStatus: deinstall ok config-files\nVersion: 1:10.3.1-1\n\n\
Package: mariadb-server-core\nStatus: install ok installed\nDescription: no version\n\n\
Package: mariadb-server-core-10.11\nStatus: install ok installed\nPriority: optional\nVersion:  1:10.11.19-0+deb12u1 \n\n\
Package: mariadb-server-core\nStatus: install ok installed\nVersion: 1:11.4.2-1\n";
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("var/lib/dpkg")).unwrap();
        std::fs::write(dir.path().join("var/lib/dpkg/status"), status).unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        let (v, why) = dpkg_status_version(&host).unwrap();
        assert_eq!(v.parts[..3], [10, 11, 19]);
        assert!(v.mariadb);
        assert_eq!(
            why,
            "installed package mariadb-server-core-10.11 1:10.11.19-0+deb12u1 (/var/lib/dpkg/status)"
        );
        std::fs::write(
            dir.path().join("var/lib/dpkg/status"),
            "Package: mysql-server-core-8.0\nStatus: install ok installed\nVersion: 8.0.36-0ubuntu0.22.04.1\n\nPackage: mysql-server\nStatus: install ok installed\nVersion: 8.0.35\n",
        )
        .unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        let (v, why) = dpkg_status_version(&host).unwrap();
        assert_eq!((v.parts[..3].to_vec(), v.mariadb), (vec![8, 0, 36], false));
        assert!(
            why.starts_with("installed package mysql-server-core-8.0 "),
            "{why}"
        );
        std::fs::write(
            dir.path().join("var/lib/dpkg/status"),
            "Package: mariadb-client\nStatus: install ok installed\nVersion: 1:10.11.19\n",
        )
        .unwrap();
        assert!(dpkg_status_version(&Host::snapshot(dir.path()).unwrap()).is_none());
    }

    /// The stanza split the SIMD scan replaced, kept as the reference.
    fn dpkg_status_by_stanzas(status: &[u8]) -> Option<(ServerVersion, String)> {
        let status = String::from_utf8_lossy(status);
        let mut best: Option<(usize, ServerVersion, String)> = None;
        for para in status.split("\n\n") {
            if let Some(b) = dpkg_stanza(para, best.as_ref().map(|b| b.0)) {
                best = Some(b);
            }
        }
        best.map(|(_, v, why)| (v, why))
    }

    /// The scan judges exactly as splitting into stanzas did, on stanzas in
    /// every order and shape: `deinstall ok installed` (still on disk) and
    /// `deinstall ok config-files` (removed), `Package:` not the first
    /// field or twice in a stanza, CRLF lines, runs of blank lines, no
    /// trailing newline; and on this machine's own dpkg database.
    #[test]
    fn dpkg_status_scan_judges_as_the_stanza_split_did() {
        let pieces = [
            "Package: mariadb-server-core-10.11\nStatus: deinstall ok installed\nVersion: 1:10.11.19-0+deb12u1",
            "Package: mariadb-server-core\nStatus: deinstall ok config-files\nVersion: 1:10.3.1-1",
            "Status: install ok installed\nPackage: mysql-server-core-8.0\nVersion: 8.0.36-0ubuntu0.22.04.1",
            "Package: mariadb-common\nPackage: mariadb-server\nStatus: install ok installed\nVersion: 1:10.5.1-1",
            "Package: mariadb-server\r\nStatus: install ok installed\r\nVersion: 1:10.6.2-1\r",
            "Package:mysql-server\nStatus: install ok installed\nVersion: 8.0.35",
            "Package: percona-server-server\nStatus: install ok half-installed\nVersion: 8.0.1",
            "Package: mariadb-server-10\nVersion: 1:10.1.1\nStatus: hold ok installed",
            "Package: mariadb-server-10.\u{e9}\nStatus: install ok installed\nVersion: 1:10.4.1 \u{e9}t\u{e9}",
            "Description: Package: mariadb-server-core\n Package: mysql-server\nPackage: libc6\nStatus: install ok installed\nVersion: 2.36",
        ];
        let seps = ["\n\n", "\n\n\n", "\n\n\n\n", "\n"];
        let mut cases = 0;
        for a in 0..pieces.len() {
            for b in 0..pieces.len() {
                for c in [0, 3, 8] {
                    for (i, sep) in seps.iter().enumerate() {
                        let text = format!(
                            "{}{sep}{}{}{}{}",
                            pieces[a],
                            pieces[b],
                            seps[(i + 1) % seps.len()],
                            pieces[c],
                            if a % 2 == 0 { "\n" } else { "" }
                        );
                        // And as Latin-1 (invalid UTF-8), as old files hold it.
                        let latin1: Vec<u8> = text
                            .chars()
                            .map(|c| u32::from(c).try_into().unwrap_or(b'?'))
                            .collect();
                        for bytes in [text.as_bytes(), &latin1] {
                            let whole = dpkg_status_scan(bytes);
                            assert_eq!(whole, dpkg_status_by_stanzas(bytes), "{text:?}");
                            // read in pieces, cut anywhere
                            for step in [1, 2, 3, 5, 8, 13, 64] {
                                assert_eq!(by_pieces(bytes, step), whole, "{text:?} by {step}");
                            }
                        }
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 900);
        assert_eq!(
            dpkg_status_scan(pieces[0].as_bytes()).map(|(v, _)| v.parts),
            Some([10, 11, 19]),
            "deinstall ok installed is still installed"
        );
        assert_eq!(
            dpkg_status_scan(pieces[1].as_bytes()),
            None,
            "config-files is removed"
        );
        if let Ok(real) = std::fs::read("/var/lib/dpkg/status") {
            let whole = dpkg_status_scan(&real);
            assert_eq!(whole, dpkg_status_by_stanzas(&real));
            for step in [4096, 65536, 1 << 20] {
                assert_eq!(by_pieces(&real, step), whole);
            }
        }
    }

    /// [`dpkg_status_piece`] fed as [`Host::read_in_pieces`] feeds it,
    /// `step` bytes a read.
    fn by_pieces(bytes: &[u8], step: usize) -> Option<(ServerVersion, String)> {
        let (mut best, mut buf, mut pos) = (None, Vec::new(), 0);
        loop {
            let n = step.min(bytes.len() - pos);
            buf.extend_from_slice(&bytes[pos..pos + n]);
            pos += n;
            let done = dpkg_status_piece(&buf, n == 0, &mut best);
            if n == 0 {
                break;
            }
            buf.drain(..done);
        }
        best.map(|(_, v, why)| (v, why))
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
    fn server_packages_in_listings() {
        let v = |l: &str| server_package(l).map(|(_, v, name)| (v.parts, v.mariadb, name));
        assert_eq!(
            v("MariaDB-server-10.11.6-1.el9.x86_64                         Tue 05 Mar 2024"),
            Some((
                [10, 11, 6],
                true,
                "MariaDB-server-10.11.6-1.el9.x86_64".into()
            ))
        );
        assert_eq!(
            v("mariadb-server-3:10.3.39-1.module+el8.8.0+1452+2a7eab68.x86_64").map(|x| x.0),
            None,
            "an epoch is not part of NVRA"
        );
        assert_eq!(
            v("mariadb-server-10.3.39-1.module+el8.8.0+1452+2a7eab68.x86_64").map(|x| x.0),
            Some([10, 3, 39])
        );
        assert_eq!(
            v("mysql8.0-server-8.0.36-1.fc39.x86_64").map(|x| (x.0, x.1)),
            Some(([8, 0, 36], false))
        );
        assert_eq!(
            v("Percona-Server-server-57-5.7.44-48.1.el7.x86_64").map(|x| x.0),
            Some([5, 7, 44])
        );
        assert_eq!(
            v("MariaDB-server-10.11.6-1.el7.centos.x86_64.rpm").map(|x| x.0),
            Some([10, 11, 6])
        );
        assert_eq!(
            v("ii  mariadb-server-core            1:10.11.19-0+deb12u1          amd64        MariaDB database core server files")
                .map(|x| (x.0, x.1)),
            Some(([10, 11, 19], true))
        );
        assert_eq!(
            v("rc  mariadb-server-core 1:10.11.19-0+deb12u1 amd64 x"),
            None
        );
        for not_server in [
            "mariadb-server-utils-10.5.22-1.el9_2.x86_64",
            "MariaDB-client-10.11.6-1.el9.x86_64",
            "rh-mariadb105-mariadb-server-10.5.22-1.el7.x86_64",
            "mysql-community-server-debug-8.0.36-1.el9.x86_64",
            "",
            "-",
            "mariadb-server",
        ] {
            assert_eq!(v(not_server), None, "{not_server}");
        }
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
