//! Option names the server will not start with: a name no option of its
//! version has, written without `loose-`, aborts the next start ("unknown
//! variable"). Decided by the version's generated option table
//! ([`super::limits`]) and the running server's variables (a plugin's
//! options); with no table for the version whether it knows the name is
//! unknown: a note says so, never a guessed refusal. Writes issues only; no I/O, no policy logic.

use super::documented;
use super::limits;
use super::model::{RawOption, SOURCE};
use super::names::{read_name, ReadAs};
use super::server::ServerVersion;

use crate::facts::{Entry, FileIssue, IssueLevel, Namespace};

/// Plugin-loading options: a plugin they load brings options no table lists.
const PLUGIN_LOADS: [&str; 3] = ["plugin_load", "plugin_load_add", "early_plugin_load"];

/// One issue per option line the server does not know. `rt`: the running
/// server's variables (a loaded plugin's options are among them); `server`:
/// the version's name (`MariaDB 10.11.19`), when known.
pub(super) fn unknown_options(
    argv: &[RawOption],
    read: &ReadAs,
    rt: Option<&Namespace>,
    server: Option<&str>,
    issues: &mut Vec<FileIssue>,
) {
    let plugins: Vec<&RawOption> = argv
        .iter()
        .filter(|o| PLUGIN_LOADS.contains(&read_name(read, &o.name, None).key.as_str()))
        .collect();
    let reference = limits::table_for(&ServerVersion {
        parts: [10, 11, 0],
        mariadb: true,
    });
    // One issue per file however many lines (issue 29).
    let mut collected = crate::facts::IssueCollector::default();
    for o in argv {
        let name = read_name(read, &o.name, o.value.as_deref());
        if name.loose || name.key.is_empty() {
            continue;
        }
        let exact = read.table.is_some() && !read.assumed && server.is_some();
        let known = if read.table.is_some() {
            !name.unknown
        } else {
            // no table for the version: MariaDB 10.11's as a reference
            reference.is_some_and(|t| {
                !matches!(
                    t.resolve(&crate::parse::mycnf::normalize_name(&o.name)),
                    limits::Lookup::Unknown
                )
            })
        };
        if known || (!exact && documented::kind_anywhere(&name.key).is_some()) {
            continue;
        }
        // No table for the version, but a running server started with
        // these files: nothing to add to what the capture shows.
        if !exact && rt.is_some() {
            continue;
        }
        // The running server holds a variable of that name (or one it
        // begins): a plugin that is loaded knows it.
        if rt.is_some_and(|rt| {
            matches!(rt.get(&name.key), Some(Entry::Set(_)))
                || rt
                    .entries
                    .range(name.key.clone()..)
                    .next()
                    .is_some_and(|(k, _)| k.starts_with(&name.key))
        }) {
            continue;
        }
        let shown = crate::parse::truncate(o.arg.strip_prefix("--").unwrap_or(&o.arg), 120);
        let said =
            format!("the error log says \"[ERROR] mariadbd: unknown variable '{shown}'\" (the program as started: /usr/sbin/mariadbd under systemd), then \"[ERROR] Aborting\"");
        let (level, message) = match (read.table, server) {
            (Some(t), Some(v)) if exact => {
                let unless = match (rt.is_some(), plugins.first()) {
                    (true, _) => " (nor is it among the running server's variables, so no loaded plugin defines it)".to_string(),
                    (false, Some(p)) => format!(
                        "; unless the plugin loaded at {} defines it",
                        p.evidence
                    ),
                    (false, None) => " (unless a plugin installed with INSTALL SONAME, listed in mysql.plugin, defines it: no runtime capture shows the plugins)".to_string(),
                };
                (
                    IssueLevel::Problem,
                    format!(
                        "`{}`: {v} has no such option{unless}, and it is not written `loose-`: the server refuses to start ({said}, as {} says it); correct the name or prefix it with `loose-`",
                        o.name,
                        t.label
                    ),
                )
            }
            // No table for the version: not a verdict (MySQL has options
            // MariaDB lacks, such as mysqlx-bind-address), a note.
            _ => (
                IssueLevel::Note,
                format!(
                    "`{}`: neither MariaDB 10.11's option table nor the documented tables know this name, and driftaudit has no option table for {}, so whether that server knows it is unknown; if it does not, it refuses to start (as MariaDB 10.11 does: {said}): check with `mysqld --verbose --help`, or prefix it with `loose-`",
                    o.name,
                    server.unwrap_or("a server of unknown version")
                ),
            ),
        };
        collected.push(FileIssue {
            path: o.evidence.path.clone(),
            line: o.evidence.line,
            column: None,
            message,
            source: SOURCE.into(),
            level,
            read_error: None,
        });
    }
    issues.extend(collected.into_vec());
}
