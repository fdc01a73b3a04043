//! MySQL/MariaDB facts: what the server reads and what it runs with.
//! Produces the `mycnf`, `mycnf_effective`, `mysql`, `mycnf_files`,
//! `mysql_next` and `mysql_sizing` namespaces and the `mysql_version` / `mysql_datadir`
//! facts. All reads go through [`Host`]; no policy logic here. This file
//! holds the entry point ([`gather`], which runs the rooms in order); the
//! folder's rooms, in the order data flows:
//!
//! - `model`: what the rooms share: the default option files, the bounds
//!   of one resolution and the option records ([`RawOption`],
//!   [`OptionSet`]).
//! - `service`: which option files the server reads, from its systemd
//!   unit and drop-ins (user, `MYSQL_HOME`, `--defaults-file`).
//! - `options`: the files in mysys's order, `!include`/`!includedir`,
//!   server groups, each option with its file and line.
//! - [`persisted`]: MySQL 8's `mysqld-auto.cnf`, the last option source.
//! - `names`: one option's name and value as the server reads them
//!   (prefixes, unique abbreviations, booleans, sizes).
//! - `server`: which server and version the host has (runtime capture,
//!   dpkg, rpm lists, upgrade-info).
//! - [`limits`] (generated per version by `table_gen.rs`) and
//!   [`documented`] (the vendors' tables): what one version accepts.
//! - `runtime`: the running server as captured (`SHOW GLOBAL VARIABLES`).
//! - `adjust`: how a configured number the server runs as another value is
//!   judged (limits, start-up arithmetic, drift).
//! - `namespaces`: the mycnf namespaces built from the resolved options.
//! - `startup`: option names the server does not know (it will not start).
//! - `next`: `mysql_next`, what the next start applies: the files'
//!   values, else what the server got at its start (derived, start-only
//!   and lowered variables), else the version's compiled default.
//! - [`files`] and [`sizing`]: the `mycnf_files` and `mysql_sizing`
//!   namespaces.
//! - `sides`: the running side for rules that judge both: the running
//!   server's (`mysql_running`), a sentence on both (`mysql_sides`) and
//!   the `mysql_captured` fact.
//! - `roles`: role evidence (a Galera node: `mysql_galera`, and from what).

use std::collections::BTreeMap;

use crate::host::{Host, ReadError};
use crate::parse::mycnf::canonical_option;
use crate::value::{format_size, Value};

mod adjust;
pub mod documented;
pub mod files;
pub mod limits;
mod model;
mod names;
mod namespaces;
mod next;
mod options;
pub mod persisted;
mod roles;
mod runtime;
mod server;
mod service;
mod sides;
pub mod sizing;
mod startup;

pub use model::{
    OptionSet, RawOption, DEFAULT_DATADIR, DEFAULT_FILES, MAX_BYTES_PROCESSED, MAX_FILES_READ,
    MAX_INCLUDE_DEPTH, MAX_OPTIONS, VARIABLES_CAPTURE,
};
pub use names::*;
pub use options::*;
pub use runtime::*;
pub use server::*;

use super::{Entry, Evidence, Facts, FileIssue, InstalledServer, Needs, OptionFilesAs};
use model::SOURCE;

/// The default option files read with each of `needs.option_groups` (an
/// upgrade target's groups), and the installed server when those files
/// exist and no runtime capture names the running version. Problems in the
/// files are reported by the server's own read ([`gather`]), not again.
pub fn gather_as(host: &Host, needs: &Needs, facts: &mut Facts) {
    for groups in &needs.option_groups {
        let mut reported_elsewhere = Vec::new();
        let set = effective_options(host, &DEFAULT_FILES, groups, &mut reported_elsewhere);
        let read = OptionFilesAs {
            set: set.namespace.entries.keys().cloned().collect(),
            files_read: set.files_read,
            argv: set.argv,
            fatal: set.fatal,
        };
        facts.option_files_as.insert(groups.clone(), read);
    }
    let running = matches!(
        facts.facts.get("mysql_version"),
        Some(Ok(Value::Str(s))) if ServerVersion::parse(s).is_some()
    );
    let files = facts
        .option_files_as
        .values()
        .any(|r| !r.files_read.is_empty());
    if running || !files {
        return;
    }
    let installed = installed_version(host, || datadir(facts));
    facts.installed_server = installed.map(|(v, from)| InstalledServer {
        parts: v.parts,
        mariadb: v.mariadb,
        from,
    });
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
    effective.absent_means = crate::facts::Namespace::of("mycnf_effective").absent_means;
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
    // A name the server does not know aborts the next start.
    let server_label = files_version.as_ref().map(ServerVersion::label);
    startup::unknown_options(
        &set.argv,
        &read,
        rt,
        server_label.as_deref(),
        &mut facts.issues,
    );
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
    // No generated table for the version (or none known): the documented
    // limits clamp what they decide.
    // (With a capture, the running value decides: `adjust::judge_runtime`.)
    if !(read.limits && read.table.is_some()) && rt.is_none() {
        adjust::clamp_documented(&mut effective, files_version.as_ref(), &mut facts.issues);
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
    facts.option_files = Some(lines_read(&set, &groups, &read));
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
    next::gather(files_version.as_ref(), facts);
    sizing::gather(host, files_version.as_ref(), facts);
    sides::gather(files_version.as_ref(), facts);
    roles::gather(facts);
    let dd = datadir(facts);
    facts
        .facts
        .insert("mysql_datadir".into(), Ok(Value::Str(dd)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Namespace, Setting};

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

    /// The simple reference the scan must equal: split into stanzas at
    /// blank lines, judge each.
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

    /// Stanzas of every shape: `deinstall ok installed` (still on disk)
    /// and `deinstall ok config-files` (removed), `Package:` not the first
    /// field or twice in a stanza, CRLF lines, a half-installed or held
    /// package, non-ASCII, `Package:` inside a description.
    const DPKG_PIECES: [&str; 10] = [
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

    proptest::proptest! {
        /// The scan judges as splitting into stanzas does, on those
        /// stanzas in any order, one to four blank lines or none between
        /// them, with or without a last newline, as UTF-8 and as Latin-1
        /// (invalid UTF-8, as old files hold it), read whole and in pieces
        /// cut anywhere.
        #[test]
        fn dpkg_status_scan_judges_as_the_stanza_split_does(
            stanzas in proptest::collection::vec((0..DPKG_PIECES.len(), 1usize..5), 0..6),
            last_newline: bool,
            latin1: bool,
            step in 1usize..70,
        ) {
            let mut text = String::new();
            for (i, (piece, newlines)) in stanzas.iter().enumerate() {
                if i > 0 {
                    text.push_str(&"\n".repeat(*newlines));
                }
                text.push_str(DPKG_PIECES[*piece]);
            }
            if last_newline {
                text.push('\n');
            }
            let bytes: Vec<u8> = if latin1 {
                text.chars().map(|c| u32::from(c).try_into().unwrap_or(b'?')).collect()
            } else {
                text.into_bytes()
            };
            let whole = dpkg_status_scan(&bytes);
            proptest::prop_assert_eq!(&whole, &dpkg_status_by_stanzas(&bytes));
            proptest::prop_assert_eq!(by_pieces(&bytes, step), whole);
        }
    }

    /// A `deinstall ok installed` package is still on disk, a
    /// `config-files` one is removed; this machine's own dpkg database
    /// reads as the reference reads it, in pieces too.
    #[test]
    fn dpkg_status_scan_reads_what_is_installed_and_the_real_database() {
        assert_eq!(
            dpkg_status_scan(DPKG_PIECES[0].as_bytes()).map(|(v, _)| v.parts),
            Some([10, 11, 19]),
            "deinstall ok installed is still installed"
        );
        assert_eq!(
            dpkg_status_scan(DPKG_PIECES[1].as_bytes()),
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
