//! MySQL 8's persisted variables as the last option source: `SET PERSIST`
//! and `SET PERSIST_ONLY` write `DATADIR/mysqld-auto.cnf`, which the server
//! applies after every option file at each start (unless
//! `persisted_globals_load` is OFF or it runs with `--no-defaults`). Folds
//! them into `mycnf_effective` with the file, line and JSON key as
//! provenance; a `PERSIST_ONLY` value of a read-only variable is what the
//! next start runs, so a running value that differs is pending, not
//! matched. Never on MariaDB, which has no such file. Reads one file through
//! [`Host`]; no policy logic.

use std::collections::HashMap;

use super::model::{RawOption, SOURCE};
use super::names::{canonical_name, ReadAs};
use super::namespaces::build_namespaces;
use super::server::ServerVersion;

use crate::facts::{Entry, Evidence, FileIssue, IssueLevel, Namespace};
use crate::host::{Host, ReadError};
use crate::parse::mysqld_auto;
use crate::secret::REDACTED;

/// The file's name in the data directory.
pub const FILE: &str = "mysqld-auto.cnf";

fn issue(path: &str, line: Option<usize>, level: IssueLevel, message: String) -> FileIssue {
    FileIssue::problem(SOURCE, path, line, message).with_level(level)
}

/// Apply `DATADIR/mysqld-auto.cnf` to `effective` (see the module doc).
/// `files` is the option files' own namespace (for `persisted_globals_load`).
pub(super) fn apply(
    host: &Host,
    datadir: &str,
    version: Option<&ServerVersion>,
    files: &Namespace,
    read: &ReadAs,
    effective: &mut Namespace,
    issues: &mut Vec<FileIssue>,
) {
    match version {
        Some(v) if v.mariadb || v.parts[0] < 8 => return,
        _ => {}
    }
    let path = format!("{}/{FILE}", datadir.trim_end_matches('/'));
    let text = match host.read_to_string(&path) {
        Ok(t) => t,
        Err(ReadError::NotFound) => return,
        Err(e) => {
            if version.is_some() {
                let mut i = FileIssue::unreadable(SOURCE, &path, &e);
                i.message = format!(
                    "{}: the variables persisted with SET PERSIST, which the server applies after the option files, are not known",
                    i.message
                );
                issues.push(i);
            }
            return;
        }
    };
    if let Some(Entry::Set(s)) = files.get("persisted_globals_load") {
        if s.value.as_bool() == Some(false) {
            issues.push(issue(
                &path,
                None,
                IssueLevel::Note,
                format!(
                    "not applied: persisted_globals_load is OFF at {}, so the server ignores the variables persisted in it",
                    s.evidence[0]
                ),
            ));
            return;
        }
    }
    let parsed = mysqld_auto::parse(&text);
    for i in &parsed.issues {
        issues.push(issue(
            &path,
            Some(i.line),
            IssueLevel::Problem,
            i.message.clone(),
        ));
    }
    if parsed.encrypted {
        issues.push(issue(
            &path,
            None,
            IssueLevel::Note,
            "has sensitive variables persisted encrypted (mysql_sensitive_variables): their values need the server's keyring and are not compared".into(),
        ));
    }
    if version.is_none() && !parsed.variables.is_empty() {
        issues.push(issue(
            &path,
            None,
            IssueLevel::Note,
            "the server version is unknown; this file exists, which only MySQL 8.0 and later write, so its persisted variables are applied after the option files as MySQL does".into(),
        ));
    }
    let raws: Vec<RawOption> = parsed
        .variables
        .iter()
        .map(|p| {
            let value = if crate::secret::server_variable_is_secret(&p.name)
                || crate::secret::option_is_secret(&p.name)
            {
                REDACTED.to_string()
            } else {
                p.value.clone()
            };
            RawOption {
                arg: format!("--{}={value}", p.name),
                name: p.name.clone(),
                value: Some(value),
                group: FILE.into(),
                evidence: Evidence::line(path.clone(), p.line),
            }
        })
        .collect();
    if raws.is_empty() {
        return;
    }
    let mut scratch = Vec::new();
    let (_, persisted) = build_namespaces(&raws, read, &mut scratch);
    for i in scratch {
        issues.push(i);
    }
    // The last variable that sets each key, by its canonical name and by
    // its name as persisted: built once, so the file costs linear work (a
    // scan of every variable for each key was quadratic on a hostile file).
    let mut last: HashMap<String, usize> = HashMap::with_capacity(2 * parsed.variables.len());
    for (i, p) in parsed.variables.iter().enumerate() {
        last.insert(canonical_name(&p.name), i);
        last.insert(p.name.clone(), i);
    }
    for (key, entry) in persisted.entries {
        let p = last.get(&key).map(|&i| &parsed.variables[i]);
        let entry = match entry {
            Entry::Set(mut s) => {
                let how = match p {
                    Some(p) if p.at_restart => format!(
                        "persisted with SET PERSIST_ONLY ({FILE}, {}.{}): a read-only variable, taken at the next restart",
                        p.section, p.name
                    ),
                    Some(p) => format!(
                        "persisted with SET PERSIST ({FILE}, {}.{}), applied after the option files",
                        p.section, p.name
                    ),
                    None => format!("persisted in {FILE}"),
                };
                if let Some(Entry::Set(old)) = effective.entries.get(&key) {
                    s.evidence.extend(old.evidence.iter().cloned());
                    s.note = Some(format!(
                        "{how}; the option files set {} at {}",
                        old.raw, old.evidence[0]
                    ));
                } else {
                    s.note = Some(how);
                }
                Entry::Set(s)
            }
            other => other,
        };
        effective.entries.insert(key, entry);
    }
}
