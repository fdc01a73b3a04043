//! Which host paths the snapshot holds, and as what: from the recording
//! host's read log, each file the readers read as a copy (redacted in its
//! own syntax, `/proc/meminfo` and `/proc/cpuinfo` kept to their stable
//! lines, the dpkg database to the server packages' stanzas), each symlink
//! as a link to its copy, each directory listed, and an empty placeholder
//! for a file only probed for. The result is [`Writer`], data only: must
//! not write (that is `write`) nor read anything but the host it is given.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::host::{lexical, EntryKind, Host, ReadLog};
use crate::secret;

/// Files, symlinks and directories to write, by host path.
#[derive(Debug, Default)]
pub(super) struct Writer {
    pub(super) files: BTreeMap<String, Vec<u8>>,
    /// Permission bits of each file's source; a copy is never wider.
    pub(super) modes: BTreeMap<String, u32>,
    pub(super) links: BTreeMap<String, String>,
    pub(super) dirs: BTreeSet<String>,
}

/// Whether a host path is left out of the copy: `/proc/sys` is captured as
/// one `captures/sysctl-a.txt` (a `proc/sys` directory in the snapshot would
/// make the sysctl reader look for one file per key there).
pub(super) fn excluded(path: &str) -> bool {
    path == "/proc/sys" || path.starts_with("/proc/sys/") || path == "/" || path == "/proc"
}

pub(super) fn plan_from_log(host: &Host, log: &ReadLog, w: &mut Writer) {
    for (path, bytes) in &log.files {
        if excluded(path) {
            continue;
        }
        let bytes = if path == "/proc/meminfo" || path == "/proc/cpuinfo" {
            stable_proc(path, &String::from_utf8_lossy(bytes)).into_bytes()
        } else if path == "/var/lib/dpkg/status" {
            // only the server packages' stanzas: the rest of the database
            // changes with every update and no reader uses it
            crate::facts::mysql::dpkg_server_stanzas(bytes)
        } else {
            redact_file(path, bytes)
        };
        // A symlinked config file (99-sysctl.conf -> ../sysctl.conf) is kept
        // as a link to a copy of its target, as on the host.
        let link = log.links.get(path).cloned().or_else(|| {
            host.read_link(path)
                .filter(|_| !path.starts_with("/proc/") && !path.starts_with("/sys/"))
        });
        match (link, host.resolve(path)) {
            (Some(target), Ok(resolved)) if resolved != *path && !excluded(&resolved) => {
                // Keep the link text when it leads straight to the copy; a
                // chain through files not copied (/etc/alternatives) is
                // replaced by the absolute path it resolved to.
                let parent = Path::new(path)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "/".into());
                let direct = lexical(&crate::host::join_host(&parent, &target)) == resolved;
                let target = if direct { target } else { resolved.clone() };
                w.links.insert(path.clone(), target);
                if let Some(m) = log.modes.get(path) {
                    w.modes.entry(resolved.clone()).or_insert(*m);
                }
                w.files.entry(resolved).or_insert(bytes);
            }
            _ => {
                if let Some(m) = log.modes.get(path) {
                    w.modes.insert(path.clone(), *m);
                }
                w.files.insert(path.clone(), bytes);
            }
        }
    }
    for (path, target) in &log.links {
        if excluded(path) || w.files.contains_key(path) {
            continue;
        }
        w.links
            .entry(path.clone())
            .or_insert_with(|| target.clone());
    }
    // Readers that resolve a path before reading it (option files) read the
    // target; keep the name they asked for as a link to the copy.
    for (path, resolved) in &log.resolved {
        let below = format!("{path}/");
        let taken = w.files.contains_key(path)
            || w.links.contains_key(path)
            || w.files.keys().any(|f| f.starts_with(&below))
            || log.dirs.iter().any(|d| d == path || d.starts_with(&below));
        if excluded(path) || taken || !w.files.contains_key(resolved) {
            continue;
        }
        let target = log.links.get(path).cloned().filter(|t| {
            let parent = Path::new(path)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|| "/".into());
            lexical(&crate::host::join_host(&parent, t)) == *resolved
        });
        w.links
            .insert(path.clone(), target.unwrap_or_else(|| resolved.clone()));
    }
    for d in &log.dirs {
        if !excluded(d) {
            w.dirs.insert(d.clone());
        }
    }
    for (p, kind) in &log.probes {
        if excluded(p) || w.files.contains_key(p) || w.links.contains_key(p) {
            continue;
        }
        match kind {
            EntryKind::Dir => {
                w.dirs.insert(p.clone());
            }
            // Existence-only probe of a file that no reader read: an empty
            // placeholder keeps `exists(...)` true in the snapshot.
            EntryKind::File => {
                w.files.insert(p.clone(), Vec::new());
            }
            EntryKind::Other => {}
        }
    }
}

/// Keep only the stable lines of `/proc/meminfo` (the totals) and
/// `/proc/cpuinfo` (everything but the current clock speed).
pub fn stable_proc(path: &str, text: &str) -> String {
    let keep = |l: &str| match path {
        "/proc/meminfo" => {
            let name = l.split(':').next().unwrap_or("");
            name.contains("Total") || name == "Hugepagesize"
        }
        "/proc/cpuinfo" => !l.starts_with("cpu MHz"),
        _ => true,
    };
    let mut out: String = text
        .lines()
        .filter(|l| keep(l))
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}

/// Redact secrets in a copied file, in the file's own syntax and keeping
/// every line where it was (see [`crate::secret::redact_file`]: the one place
/// that decides what is secret and how each format hides it).
pub fn redact_file(path: &str, bytes: &[u8]) -> Vec<u8> {
    secret::redact_file(path, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_file_secrets_are_redacted_in_place() {
        let text = "[client]\nuser = backup\npassword = hunter2\n# password = old\nloose-password=x\n[mysqld]\ninnodb_buffer_pool_size = 6G\n";
        let r = String::from_utf8(redact_file("/etc/mysql/my.cnf", text.as_bytes())).unwrap();
        assert_eq!(
            r,
            "[client]\nuser = backup\npassword = <redacted>\n# password = <redacted>\nloose-password=<redacted>\n[mysqld]\ninnodb_buffer_pool_size = 6G\n"
        );
        assert_eq!(r.lines().count(), text.lines().count());
    }

    #[test]
    fn localconfig_secret_values_are_redacted_keeping_lines() {
        let xml = "<localconfig>\n  <key name=\"zimbra_mysql_password\">\n    <value>s3cr\net</value>\n  </key>\n  <key name=\"mysql_memory_percent\">\n    <value>30</value>\n  </key>\n</localconfig>\n";
        let r = String::from_utf8(redact_file(
            "/opt/zimbra/conf/localconfig.xml",
            xml.as_bytes(),
        ))
        .unwrap();
        assert!(!r.contains("s3cr"), "{r}");
        assert!(r.contains("<value>&lt;redacted&gt;</value>\n"), "{r}");
        assert!(r.contains("<value>30</value>"));
        assert_eq!(r.matches('\n').count(), xml.matches('\n').count());
    }
}
