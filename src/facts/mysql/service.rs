//! Which option files the server reads, from how the host starts it: its
//! systemd unit (`mariadb.service`, `mysql.service` or `mysqld.service`, with
//! drop-ins) says the user (`User=`, whose home holds `~/.my.cnf`), the
//! environment (`Environment=`, `EnvironmentFile=`: `MYSQL_HOME`,
//! `MARIADB_HOME`), whether homes are hidden (`ProtectHome=`) and the
//! leading `--no-defaults`/`--defaults-file=`/`--defaults-extra-file=` of
//! `ExecStart=`. mysys reads, in order: /etc/my.cnf, /etc/mysql/my.cnf,
//! `$MARIADB_HOME`/`$MYSQL_HOME`/my.cnf, the extra file, ~/.my.cnf; a
//! defaults file replaces them all. Without a unit, only the two /etc files
//! are followed, and a `~/.my.cnf` that may apply is noted as not followed.
//! Reads through [`Host`]; no policy logic.

use super::model::{DEFAULT_FILES, SOURCE};

use crate::facts::{FileIssue, IssueLevel};
use crate::host::Host;
use crate::parse::unit;

/// Unit names a packaged server runs as, most common first.
const UNITS: [&str; 3] = ["mariadb.service", "mysql.service", "mysqld.service"];

/// Unit directories, highest priority first (systemd.unit(5)).
const UNIT_DIRS: [&str; 4] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
];

/// Most drop-ins read for the unit.
const MAX_DROPINS: usize = 64;

/// What the host's service definition says.
#[derive(Debug, Default)]
pub(super) struct ServerFiles {
    /// Option files in the order the server reads them.
    pub files: Vec<String>,
}

fn note(path: &str, line: Option<usize>, message: String) -> FileIssue {
    FileIssue::problem(SOURCE, path, line, message).with_level(IssueLevel::Note)
}

/// The settings of the unit that matter here, after its drop-ins.
#[derive(Debug, Default)]
struct Service {
    user: Option<String>,
    exec_start: Option<(String, String, usize)>,
    env: Vec<(String, String)>,
    env_files: Vec<String>,
    protect_home: Option<String>,
}

fn apply(s: &mut Service, path: &str, text: &str) {
    let (a, _) = unit::assignments(text);
    for x in a.into_iter().filter(|x| x.section == "Service") {
        match x.key.as_str() {
            "User" => s.user = (!x.value.is_empty()).then_some(x.value),
            "ExecStart" if x.value.is_empty() => s.exec_start = None,
            "ExecStart" => s.exec_start = Some((x.value, path.to_string(), x.line)),
            "Environment" if x.value.is_empty() => s.env.clear(),
            "Environment" => {
                for w in unit::command_words(&format!("x {}", x.value))
                    .into_iter()
                    .skip(1)
                {
                    if let Some((k, v)) = w.split_once('=') {
                        s.env.push((k.to_string(), v.to_string()));
                    }
                }
            }
            "EnvironmentFile" if x.value.is_empty() => s.env_files.clear(),
            "EnvironmentFile" => s.env_files.push(x.value),
            "ProtectHome" => s.protect_home = Some(x.value.to_ascii_lowercase()),
            _ => {}
        }
    }
}

/// The unit and its drop-ins, read as systemd merges them: the unit from
/// the highest-priority directory that has it, drop-ins `NAME.d/*.conf`
/// from every directory (one name from the highest) in name order.
fn load(host: &Host) -> Option<(String, Service)> {
    for name in UNITS {
        let Some((path, text)) = UNIT_DIRS.iter().find_map(|d| {
            let p = format!("{d}/{name}");
            host.read_to_string(&p).ok().map(|t| (p, t))
        }) else {
            continue;
        };
        if text.trim().is_empty() {
            continue; // masked (a link to /dev/null) or empty
        }
        let mut s = Service::default();
        apply(&mut s, &path, &text);
        let mut dropins: std::collections::BTreeMap<String, String> = Default::default();
        for d in UNIT_DIRS {
            let dir = format!("{d}/{name}.d");
            if let Ok(entries) = host.read_dir(&dir) {
                for e in entries.into_iter().filter(|e| e.name.ends_with(".conf")) {
                    dropins
                        .entry(e.name.clone())
                        .or_insert(format!("{dir}/{}", e.name));
                }
            }
        }
        for p in dropins.values().take(MAX_DROPINS) {
            if let Ok(t) = host.read_to_string(p) {
                apply(&mut s, p, &t);
            }
        }
        return Some((path, s));
    }
    None
}

/// A variable of the service's environment (`Environment=` wins over an
/// `EnvironmentFile=` read earlier, as the later assignment).
fn env_of(host: &Host, s: &Service, key: &str) -> Option<String> {
    let mut val = None;
    for f in &s.env_files {
        let path = f.trim_start_matches('-');
        if let Ok(t) = host.read_to_string(path) {
            for l in t.lines() {
                let l = l.trim();
                if let Some((k, v)) = l.split_once('=') {
                    if k.trim() == key {
                        val = Some(v.trim().trim_matches(['"', '\'']).to_string());
                    }
                }
            }
        }
    }
    s.env
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .or(val)
}

/// `$VAR` and `${VAR}` in a command line, from the service's environment.
fn expand(host: &Host, s: &Service, words: Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        let name = w
            .strip_prefix("${")
            .and_then(|r| r.strip_suffix('}'))
            .or_else(|| w.strip_prefix('$'));
        match name {
            Some(n)
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                let v = env_of(host, s, n).unwrap_or_default();
                // `$VAR` splits into words, `${VAR}` is one
                if w.starts_with("${") {
                    out.push(v);
                } else {
                    out.extend(v.split_whitespace().map(str::to_string));
                }
            }
            _ => out.push(w),
        }
    }
    out
}

/// A user's home from /etc/passwd.
fn home_of(host: &Host, user: &str) -> Option<String> {
    let t = host.read_to_string("/etc/passwd").ok()?;
    t.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[0] == user).then(|| f[5].to_string())
    })
}

/// The option files the server reads on this host, and notes saying how
/// that was decided.
pub(super) fn option_files(host: &Host, issues: &mut Vec<FileIssue>) -> ServerFiles {
    let defaults: Vec<String> = DEFAULT_FILES.iter().map(|s| s.to_string()).collect();
    let Some((unit_path, s)) = load(host) else {
        // nothing says who runs the server: ~/.my.cnf of root or of the
        // mysql user may apply and is not followed
        let mut candidates = vec!["/root/.my.cnf".to_string()];
        if let Some(h) = home_of(host, "mysql") {
            candidates.push(format!("{}/.my.cnf", h.trim_end_matches('/')));
        }
        for c in candidates {
            if host.read_to_string(&c).is_ok_and(|t| {
                t.lines().any(|l| {
                    let l = l.trim().to_ascii_lowercase();
                    l == "[mysqld]" || l == "[server]" || l == "[mariadbd]" || l == "[mariadb]"
                })
            }) {
                issues.push(note(
                    &c,
                    None,
                    "not followed: this file has a server group, and the server reads ~/.my.cnf of the user it runs as, but no systemd unit (mariadb.service, mysql.service, mysqld.service) says which user that is; its options are not in mycnf_effective".into(),
                ));
            }
        }
        return ServerFiles { files: defaults };
    };
    let words = match &s.exec_start {
        Some((v, _, _)) => expand(host, &s, unit::command_words(v)),
        None => Vec::new(),
    };
    let mut defaults_file = None;
    let mut extra = None;
    let mut no_defaults = false;
    // mysys honours these only as the first options
    for w in words.iter().skip(1) {
        if w == "--no-defaults" {
            no_defaults = true;
        } else if let Some(f) = w.strip_prefix("--defaults-file=") {
            defaults_file = Some(f.to_string());
        } else if let Some(f) = w.strip_prefix("--defaults-extra-file=") {
            extra = Some(f.to_string());
        } else if w.starts_with("--defaults-group-suffix=") || w == "--print-defaults" {
        } else {
            break;
        }
    }
    let at = s.exec_start.as_ref().map(|(_, p, l)| (p.clone(), *l));
    let (at_path, at_line) = at.clone().unwrap_or((unit_path.clone(), 0));
    let at_line = (at_line > 0).then_some(at_line);
    if no_defaults {
        issues.push(note(
            &at_path,
            at_line,
            "the server starts with --no-defaults: it reads no option file".into(),
        ));
        return ServerFiles { files: Vec::new() };
    }
    if let Some(f) = defaults_file {
        issues.push(note(
            &at_path,
            at_line,
            format!("the server starts with --defaults-file={f}: it reads that file only"),
        ));
        return ServerFiles { files: vec![f] };
    }
    let mut files = defaults;
    if let Some(h) = env_of(host, &s, "MARIADB_HOME").or_else(|| env_of(host, &s, "MYSQL_HOME")) {
        if !h.is_empty() {
            files.push(format!("{}/my.cnf", h.trim_end_matches('/')));
        }
    }
    if let Some(f) = extra {
        files.push(f);
    }
    let user = s.user.clone().unwrap_or_else(|| "root".into());
    let home = match home_of(host, &user) {
        Some(h) => Some(h),
        None if user == "root" => Some("/root".to_string()),
        None => None,
    };
    match home {
        Some(h) => {
            let hidden = matches!(
                s.protect_home.as_deref(),
                Some("yes" | "true" | "1" | "on" | "tmpfs")
            ) && ["/home", "/root", "/run/user"]
                .iter()
                .any(|p| h == *p || h.starts_with(&format!("{p}/")));
            let cnf = format!("{}/.my.cnf", h.trim_end_matches('/'));
            if hidden {
                if host.kind_of(&cnf).is_ok() {
                    issues.push(note(
                        &cnf,
                        None,
                        format!(
                            "not read by the server: {unit_path} runs it as {user} with ProtectHome={}, which hides {h}",
                            s.protect_home.as_deref().unwrap_or_default()
                        ),
                    ));
                }
            } else if h != "/nonexistent" && !h.is_empty() {
                files.push(cnf);
            }
        }
        None => issues.push(note(
            &unit_path,
            None,
            format!("the server runs as {user}, who is not in /etc/passwd: its ~/.my.cnf is not followed"),
        )),
    }
    ServerFiles { files }
}
