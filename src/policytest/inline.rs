//! A case's inline snapshot: its `files:` written into a fresh private
//! temporary directory (mode 0700, made by this process), each at a host
//! path of plain names written once, then opened as a snapshot like any
//! other; a host whose files record no init (PID 1, /run/systemd,
//! /run/openrc, a snapshot.json of its own) is recorded as a systemd host.
//! Must not write outside that directory, follow or replace an
//! existing entry, or accept `..`, `.` or an empty component.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::host::Host;

use super::loader::{line_col, Loader};
use super::spec;
use super::MAX_INLINE_FILES;

impl Loader<'_> {
    /// Write inline files into a fresh private directory (mode 0700, made
    /// by this process) and open it as a snapshot. Each path is a host
    /// path, relative or absolute, of plain names: no `..`, no `.`, no
    /// empty component, each written once.
    pub(super) fn inline(
        &mut self,
        at: (usize, usize),
        files: &std::collections::BTreeMap<spec::Key, serde_saphyr::Spanned<String>>,
    ) -> Option<(Host, String, tempfile::TempDir)> {
        if files.is_empty() {
            self.problem(
                at,
                "`files` is empty: give at least one `PATH: CONTENT`".into(),
            );
            return None;
        }
        if files.len() > MAX_INLINE_FILES {
            self.problem(
                at,
                format!(
                    "`files` holds more than {MAX_INLINE_FILES} files: use a snapshot directory"
                ),
            );
            return None;
        }
        let dir = match tempfile::Builder::new()
            .prefix("driftaudit-test-")
            .tempdir()
        {
            Ok(d) => d,
            Err(e) => {
                self.problem(
                    at,
                    format!(
                        "cannot create a temporary directory for the inline snapshot: {}",
                        crate::reader::io_message(&e)
                    ),
                );
                return None;
            }
        };
        let mut seen = BTreeSet::new();
        let mut ok = true;
        for (k, content) in files {
            let kat = line_col(&k.0.referenced);
            let Some(rel) = inline_path(&k.0.value) else {
                self.problem(
                    kat,
                    format!(
                        "inline file `{}`: a host path of plain names (`/etc/sysctl.d/60-x.conf`), without `..` or `.`",
                        k.0.value
                    ),
                );
                ok = false;
                continue;
            };
            if !seen.insert(rel.clone()) {
                self.problem(kat, format!("inline file `{}` is given twice", k.0.value));
                ok = false;
                continue;
            }
            if let Err(e) = write_inline(dir.path(), &rel, &content.value) {
                self.problem(
                    kat,
                    format!(
                        "inline file `{}`: cannot write it: {}",
                        k.0.value,
                        crate::reader::io_message(&e)
                    ),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        // An inline host is a systemd host unless its files say otherwise
        // (docs/policy-language.md, "Policy tests"): without a record of
        // PID 1 no init is known, and nothing would be said of the next boot.
        let names = |p: &str| seen.iter().any(|r| r.starts_with(p));
        if !names("proc/1/comm")
            && !names("run/systemd")
            && !names("run/openrc")
            && !names("snapshot.json")
            && !names("sos_commands")
        {
            for (rel, text) in [
                ("proc/1/comm", "systemd\n"),
                ("run/systemd/system/.keep", ""),
            ] {
                if let Err(e) = write_inline(dir.path(), Path::new(rel), text) {
                    self.problem(
                        at,
                        format!(
                            "inline snapshot: cannot record PID 1 as systemd ({rel}): {}",
                            crate::reader::io_message(&e)
                        ),
                    );
                    return None;
                }
            }
        }
        match Host::snapshot(dir.path()) {
            Ok(h) => {
                // named by its files (etc/hostname, snapshot.json), else
                // `inline`, never by the random directory name
                let random = dir
                    .path()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                let name = if random.as_deref() == Some(h.name()) {
                    "inline".to_string()
                } else {
                    h.name().to_string()
                };
                Some((h, name, dir))
            }
            Err(e) => {
                self.problem(at, format!("inline snapshot: {e}"));
                None
            }
        }
    }
}

/// The relative path an inline file is written at, or `None` when the
/// name is not a plain host path.
fn inline_path(name: &str) -> Option<PathBuf> {
    let rel = name.trim_start_matches('/');
    if rel.is_empty() || rel.contains('\0') {
        return None;
    }
    let mut out = PathBuf::new();
    for part in rel.split('/') {
        if part.is_empty() {
            return None;
        }
        match Path::new(part).components().next() {
            Some(Component::Normal(_)) if part != "." => out.push(part),
            _ => return None,
        }
    }
    Some(out)
}

/// Write one inline file below `root` (a directory this process made and
/// no one else can write into), creating its parents; never follows or
/// replaces an existing entry.
fn write_inline(root: &Path, rel: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    f.write_all(content.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_paths_are_plain_host_paths() {
        assert_eq!(
            inline_path("/etc/sysctl.d/60-x.conf"),
            Some(PathBuf::from("etc/sysctl.d/60-x.conf"))
        );
        assert_eq!(
            inline_path("proc/sys/kernel/osrelease"),
            Some(PathBuf::from("proc/sys/kernel/osrelease"))
        );
        for bad in [
            "",
            "/",
            "../etc/x",
            "etc/../../x",
            "etc//x",
            "./etc/x",
            "etc/.",
            "a\0b",
        ] {
            assert_eq!(inline_path(bad), None, "{bad:?}");
        }
    }
}
