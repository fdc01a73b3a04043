//! The option files a server reads: the default files, `!include` and
//! `!includedir`, the groups a server version reads and their order, and
//! the options that result, each with its file and line. Must not type
//! values (names.rs) or read captures (runtime.rs).

use std::collections::{BTreeMap, BTreeSet};

use super::model::{
    OptionSet, RawOption, MAX_BYTES_PROCESSED, MAX_FILES_READ, MAX_INCLUDE_DEPTH,
    MAX_ISSUES_PER_FILE, MAX_OPTIONS, SOURCE,
};
use super::names::{read_name, ReadAs};
use super::namespaces::build_namespaces;
use super::server::ServerVersion;

use crate::facts::{Evidence, FileIssue};
use crate::host::{EntryKind, Host, ReadError};
use crate::parse::mycnf::{self, canonical_option, Directive, StopKind};
use crate::secret::{self, REDACTED};

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

pub(super) struct Resolver<'a> {
    pub(super) host: &'a Host,
    pub(super) groups: BTreeSet<String>,
    pub(super) issues: &'a mut Vec<FileIssue>,
    pub(super) argv: Vec<RawOption>,
    pub(super) files_read: Vec<String>,
    pub(super) skipped_groups: BTreeSet<String>,
    pub(super) fatal: Option<String>,
    pub(super) reported: BTreeSet<String>,
    pub(super) budget_exhausted: bool,
    /// Who controls the file being read (host::Trust): includes are read on its behalf.
    pub(super) trust: crate::host::Trust,
    pub(super) versioned: Vec<(usize, RawOption)>,
    pub(super) read: ReadAs,
    pub(super) cache: BTreeMap<String, std::rc::Rc<CachedFile>>,
    pub(super) bytes_read: u64,
    pub(super) bytes_processed: u64,
}

/// One option file as parsed, kept for the rest of one resolution.
pub(super) struct CachedFile {
    pub(super) trust: crate::host::Trust,
    pub(super) directives: Vec<Directive>,
    pub(super) bytes: u64,
}

pub(super) enum FileResult {
    Read,
    Missing,
    /// mysys returned an error for this file (the includer, if top-level, aborts).
    Error(String),
}

impl Resolver<'_> {
    pub(super) fn issue(&mut self, path: &str, line: Option<usize>, message: String) {
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

    pub(super) fn read_file(
        &mut self,
        path: &str,
        depth: usize,
        stack: &mut Vec<String>,
    ) -> FileResult {
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

    pub(super) fn absolute(&mut self, file: &str, line: usize, p: &str, kw: &str) -> String {
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

    pub(super) fn note_cycle(&mut self, file: &str, line: usize, target: &str, stack: &[String]) {
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

pub(super) fn stop_text(reason: StopKind) -> &'static str {
    match reason {
        StopKind::UnclosedGroup => "group header without `]`",
        StopKind::OptionBeforeGroup => "option before any [group] header",
        StopKind::EmptyDirective => "`!include`/`!includedir` without a path",
    }
}

pub(super) fn stop_consequence(depth: usize) -> &'static str {
    if depth == 0 {
        "mysqld refuses to start (\"Fatal error in defaults handling. Program aborted\")"
    } else {
        "mysqld ignores the rest of this included file and continues with the including file"
    }
}

/// `[mysqld-X.Y]`, `[mariadb-X.Y]`, `[mariadbd-X.Y]`: read only by that version.
pub(super) fn is_versioned_group(g: &str) -> bool {
    ["mysqld-", "mariadb-", "mariadbd-"].iter().any(|p| {
        g.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

/// `fn_ext(name) == ".cnf"`: the extension after the last dot.
pub(super) fn has_cnf_ext(name: &str) -> bool {
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
/// with the rules of [`Reads::read_to_string_for`](crate::host::Reads::read_to_string_for) (only what that user
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

/// What the resolver keeps of `set` ([`crate::facts::OptionFilesRead`]):
/// the groups read (lowercase), the files in order, and every option line
/// under the namespace key `read` gives it (the key the namespaces use; a
/// line that names no option is left out).
pub fn lines_read(
    set: &OptionSet,
    groups: &[String],
    read: &ReadAs,
) -> crate::facts::OptionFilesRead {
    crate::facts::OptionFilesRead {
        groups: groups.iter().map(|g| g.to_lowercase()).collect(),
        files_read: set.files_read.clone(),
        options: set
            .argv
            .iter()
            .map(|o| crate::facts::OptionRead {
                key: read_name(read, &o.name, o.value.as_deref()).key,
                name: o.name.clone(),
                value: o.value.clone(),
                group: o.group.clone(),
                evidence: o.evidence.clone(),
            })
            .filter(|o| !o.key.is_empty())
            .collect(),
        fatal: set.fatal.clone(),
    }
}

pub(super) fn resolve_options(
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
