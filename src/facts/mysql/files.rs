//! The `mycnf_files` namespace: each MySQL/MariaDB option file the server
//! reads, plus the well-known client credential files (Debian's
//! `/etc/mysql/debian.cnf`, root's `~/.my.cnf`), as a record of whether it
//! holds a secret (decided by [`crate::secret::option_is_secret`], by
//! meaning) and its permission bits: the live host's `stat`, or a
//! snapshot's `captures/file-modes.txt` (`stat -c '%a %n'` lines, which
//! `driftaudit snapshot` writes from [`modes_capture`]), never the mode of
//! the copied file (copies, git checkouts and the snapshot writer's umask do
//! not keep it); and the `mysql_history_root` fact, what root's
//! `~/.mysql_history` is (its link target or kind, never its content). All
//! reads go through [`Host`]; no policy logic.

use std::collections::BTreeMap;

use crate::facts::{Entry, Evidence, Facts, Namespace, Setting};
use crate::host::{Host, ReadError, SourceKind};
use crate::parse::mycnf::{self, Directive};
use crate::secret;
use crate::value::Value;

/// Client option files that hold credentials by design, read where they
/// exist (no server reads them, so the option-file resolution never does).
pub const CLIENT_FILES: [&str; 2] = ["/etc/mysql/debian.cnf", "/root/.my.cnf"];

/// Capture of permission bits in a snapshot: `stat -c '%a %n' FILE...`.
pub const FILE_MODES: crate::catalogue::Capture = crate::catalogue::FILE_MODES;

/// Where the mysql and mariadb clients keep root's command history.
pub const ROOT_HISTORY: &str = "/root/.mysql_history";

/// Most files described (the resolution itself is bounded far below this).
const MAX_FILES: usize = 2000;

/// Most secret options named per file.
const MAX_NAMED: usize = 16;

/// Fill `facts.namespaces["mycnf_files"]`.
pub fn gather(host: &Host, facts: &mut Facts) {
    let mut paths: Vec<String> = facts
        .option_files
        .as_ref()
        .map(|o| o.files_read.clone())
        .unwrap_or_default();
    for p in CLIENT_FILES {
        paths.push(p.to_string());
    }
    let modes = snapshot_modes(host);
    let mut ns = Namespace::of("mycnf_files");
    // the catalogue row's Canon::MountPoint (facts::canonicalizer)
    ns.canonicalize = Some(crate::facts::storage::normalize_point);
    for path in paths {
        if ns.entries.len() >= MAX_FILES {
            break;
        }
        if ns.entries.contains_key(&path) {
            continue;
        }
        let text = match host.read_to_string(&path) {
            Ok(t) => t,
            Err(ReadError::NotFound) => continue,
            Err(e) => {
                ns.entries.insert(
                    path.clone(),
                    Entry::Unreadable {
                        reason: format!("{path}: {e}"),
                        evidence: vec![Evidence::file(&path)],
                    },
                );
                continue;
            }
        };
        let (secrets, first_line) = secret_options(&text);
        let mut r = BTreeMap::new();
        r.insert("path".to_string(), Value::Str(path.clone()));
        r.insert("holds_secret".to_string(), Value::Bool(!secrets.is_empty()));
        r.insert(
            "secrets".to_string(),
            Value::List(secrets.into_iter().map(Value::Str).collect()),
        );
        match mode_of(host, &modes, &path) {
            Ok(m) => {
                r.insert(
                    "mode".to_string(),
                    Value::Str(format!("{:04o}", m & 0o7777)),
                );
                r.insert("other_readable".to_string(), Value::Bool(m & 0o004 != 0));
                r.insert("group_readable".to_string(), Value::Bool(m & 0o040 != 0));
            }
            Err(why) => {
                for f in ["mode", "other_readable", "group_readable"] {
                    r.insert(format!("{f}?"), Value::Str(why.clone()));
                }
            }
        }
        let evidence = match first_line {
            Some(l) => Evidence::line(&path, l),
            None => Evidence::file(&path),
        };
        let raw = r
            .get("mode")
            .map(|v| v.to_string())
            .unwrap_or_else(|| "mode unknown".into());
        ns.entries.insert(
            path,
            Entry::Set(Setting::new(Value::Record(r), raw, evidence)),
        );
    }
    facts.namespaces.insert("mycnf_files".into(), ns);
    facts
        .facts
        .insert("mysql_history_root".into(), root_history(host));
}

/// What root's `~/.mysql_history` is: `/dev/null` (a link to it), `absent`,
/// `a file`, `a link to TARGET`, or unknown. Its content is never read (it
/// holds every statement typed, passwords of `CREATE USER` included).
fn root_history(host: &Host) -> Result<Value, String> {
    if let Some(target) = host.read_link(ROOT_HISTORY) {
        return Ok(Value::Str(if target == "/dev/null" {
            "/dev/null".into()
        } else {
            format!("a link to {target}")
        }));
    }
    match host.kind_of(ROOT_HISTORY) {
        Ok(crate::host::EntryKind::File) => Ok(Value::Str("a file".into())),
        Ok(_) => Ok(Value::Str("not a file".into())),
        Err(ReadError::NotFound) if host.kind() == SourceKind::Live => {
            Ok(Value::Str("absent".into()))
        }
        Err(ReadError::NotFound) => {
            if declared_absent(host, ROOT_HISTORY) {
                Ok(Value::Str("absent".into()))
            } else {
                Err(format!(
                    "the snapshot holds no {ROOT_HISTORY} and its snapshot.json does not list it as absent (a copy of the files alone cannot prove absence): take it with `driftaudit snapshot`"
                ))
            }
        }
        Err(e) => Err(format!("{ROOT_HISTORY}: {e}")),
    }
}

/// Whether a snapshot's `snapshot.json` lists `path` in `absent`.
fn declared_absent(host: &Host, path: &str) -> bool {
    let Ok(text) = host.read_to_string("/snapshot.json") else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            v.get("absent")?
                .as_array()
                .map(|a| a.iter().any(|p| p.as_str() == Some(path)))
        })
        .unwrap_or(false)
}

/// `captures/file-modes.txt` for a snapshot of this host: a `stat -c '%a %n'`
/// line for every `mycnf_files` record whose mode is known (a path holding a
/// newline cannot be one line and is left out, so it stays unknown); `None`
/// when there is none.
pub fn modes_capture(facts: &Facts) -> Option<String> {
    let ns = facts.namespaces.get("mycnf_files")?;
    let mut out = String::new();
    for (path, e) in &ns.entries {
        let Entry::Set(s) = e else { continue };
        let Value::Record(r) = &s.value else { continue };
        let Some(Value::Str(mode)) = r.get("mode") else {
            continue;
        };
        let Ok(m) = u32::from_str_radix(mode, 8) else {
            continue;
        };
        if path.contains('\n') || path.contains('\r') {
            continue;
        }
        out.push_str(&format!("{m:o} {path}\n"));
    }
    (!out.is_empty()).then_some(out)
}

/// Names of the options of a file that take a secret (each once, in file
/// order, at most [`MAX_NAMED`]) and the line of the first.
fn secret_options(text: &str) -> (Vec<String>, Option<usize>) {
    let mut names: Vec<String> = Vec::new();
    let mut first = None;
    for d in mycnf::parse(text).directives {
        if let Directive::Option { name, line, .. } = d {
            if secret::option_is_secret(&name) {
                first.get_or_insert(line);
                let n = mycnf::normalize_name(name.split_whitespace().next().unwrap_or_default());
                if names.len() < MAX_NAMED && !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    (names, first)
}

/// A snapshot's recorded permission bits by host path; `None` on a live
/// host or without the capture.
fn snapshot_modes(host: &Host) -> Option<Result<BTreeMap<String, u32>, String>> {
    if host.kind() != SourceKind::Snapshot {
        return None;
    }
    Some(match host.capture(FILE_MODES.name) {
        Ok(text) => Ok(parse_modes(&text)),
        Err(ReadError::NotFound) => Err(format!(
            "the snapshot does not record the file's permission bits (a copied file's mode is not the host's: copies, git checkouts and the snapshot writer's umask change it); capture `{}` into captures/{}",
            FILE_MODES.command, FILE_MODES.name
        )),
        Err(e) => Err(format!("captures/{}: {e}", FILE_MODES.name)),
    })
}

/// `stat -c '%a %n'` lines: octal bits, one space, the path (which may hold
/// spaces). Other lines are ignored; the last line for a path wins.
pub fn parse_modes(text: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((bits, path)) = line.split_once(' ') else {
            continue;
        };
        if bits.is_empty() || bits.len() > 4 || !bits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            continue;
        }
        let Ok(m) = u32::from_str_radix(bits, 8) else {
            continue;
        };
        if path.starts_with('/') {
            out.insert(path.to_string(), m);
        }
    }
    out
}

fn mode_of(
    host: &Host,
    modes: &Option<Result<BTreeMap<String, u32>, String>>,
    path: &str,
) -> Result<u32, String> {
    match modes {
        None => host.mode(path).map_err(|e| format!("{path}: {e}")),
        Some(Err(why)) => Err(why.clone()),
        Some(Ok(map)) => map.get(path).copied().ok_or_else(|| {
            format!(
                "captures/{} has no line for {path}: add the output of `stat -c '%a %n' {path}`",
                FILE_MODES.name
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_octal_bits_by_path_and_other_lines_are_ignored() {
        let m = parse_modes("600 /root/.my.cnf\n644 /etc/mysql/my cnf.d/a b.cnf\nstat: cannot statx '/x': No such file\n9999 /bad\n640 relative\n");
        assert_eq!(m.get("/root/.my.cnf"), Some(&0o600));
        assert_eq!(m.get("/etc/mysql/my cnf.d/a b.cnf"), Some(&0o644));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn secret_options_are_found_by_meaning_in_any_group() {
        let (names, first) = secret_options(
            "[mysqld]\nuser = mysql\n[client]\nuser = root\npasswo = x\n[mysqldump]\npassword = \"y\"\n",
        );
        assert_eq!(names, vec!["passwo".to_string(), "password".to_string()]);
        assert_eq!(first, Some(5));
        assert_eq!(
            secret_options("[mysqld]\nport = 3306\n").0,
            Vec::<String>::new()
        );
    }
}
