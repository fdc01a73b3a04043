//! The working copy a plan is made on: a private copy of the snapshot (or
//! of a fresh snapshot of the live host) in a new temporary directory, the
//! original text of every file the plan edits, and the unified diff of
//! those edits. Writes only inside its own directory (never through a
//! symlink) and removes it when dropped; never touches the audited host.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::host::Host;

/// Most bytes copied from a snapshot (sos reports carry large logs).
const MAX_COPY_BYTES: u64 = 4 << 30;
/// Most entries copied.
const MAX_COPY_ENTRIES: usize = 2_000_000;
/// Largest single file the plan reads or edits.
const MAX_EDIT_BYTES: u64 = 16 << 20;

/// Whether an edit is part of the patch or only of the proof's simulation
/// of the runtime steps (captured live values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// A configuration file: in the patch.
    Config,
    /// A captured live value (`proc/sys`, `captures/*`, mountinfo,
    /// localconfig as `zmlocalconfig -e` would leave it): proof only.
    Simulated,
}

/// A private copy of a host tree.
#[derive(Debug)]
pub struct Tree {
    dir: PathBuf,
    root: PathBuf,
    /// Host path -> text before the plan (`None`: the file did not exist).
    original: BTreeMap<String, Option<String>>,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A new directory only this process can use, under the system temp dir.
fn private_dir() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for _ in 0..16 {
        let mut r = [0u8; 8];
        rustix::rand::getrandom(&mut r, rustix::rand::GetRandomFlags::empty())
            .map_err(io::Error::from)?;
        let name = format!(
            "driftaudit-fix-{}-{}",
            std::process::id(),
            r.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let p = base.join(name);
        match fs::create_dir(&p) {
            Ok(()) => {
                fs::set_permissions(&p, fs::Permissions::from_mode(0o700))?;
                return Ok(p);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(
        "cannot create a private temporary directory",
    ))
}

impl Tree {
    /// An empty working directory (the live host is snapshotted into
    /// [`Tree::root`] by the caller).
    pub fn empty() -> io::Result<Tree> {
        let dir = private_dir()?;
        let root = dir.join("root");
        Ok(Tree {
            dir,
            root,
            original: BTreeMap::new(),
        })
    }

    /// A copy of the snapshot directory `src`: directories, regular files
    /// and symlinks (as written, so links resolve inside the copy as they
    /// did inside the snapshot); FIFOs, sockets and devices are left out.
    pub fn copy_of(src: &Path) -> io::Result<Tree> {
        let tree = Tree::empty()?;
        fs::create_dir(&tree.root)?;
        let (mut bytes, mut entries) = (0u64, 0usize);
        for e in walkdir::WalkDir::new(src).follow_links(false).min_depth(1) {
            let e = e.map_err(io::Error::other)?;
            entries += 1;
            if entries > MAX_COPY_ENTRIES {
                return Err(io::Error::other("snapshot has too many entries to copy"));
            }
            let rel = e.path().strip_prefix(src).map_err(io::Error::other)?;
            let to = tree.root.join(rel);
            let ft = e.file_type();
            if ft.is_dir() {
                fs::create_dir(&to)?;
            } else if ft.is_symlink() {
                std::os::unix::fs::symlink(fs::read_link(e.path())?, &to)?;
            } else if ft.is_file() {
                let mut f = fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(e.path())?;
                if !f.metadata()?.is_file() {
                    continue;
                }
                let mut out = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&to)?;
                bytes += io::copy(&mut f, &mut out)?;
                if bytes > MAX_COPY_BYTES {
                    return Err(io::Error::other("snapshot is too large to copy"));
                }
            }
        }
        Ok(tree)
    }

    /// The copy's root directory (a snapshot layout).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The copy as a host.
    pub fn host(&self) -> io::Result<Host> {
        Host::snapshot(&self.root).map_err(|e| io::Error::other(e.to_string()))
    }

    /// The file for `host_path` inside the copy, refusing any path whose
    /// components pass through a symlink (links are resolved by the host
    /// reader first, so a real file is always a plain path).
    fn file(&self, host_path: &str) -> io::Result<PathBuf> {
        let mut p = self.root.clone();
        for c in host_path.split('/').filter(|c| !c.is_empty()) {
            if c == "." || c == ".." {
                return Err(io::Error::other(format!(
                    "`{host_path}` is not a plain path"
                )));
            }
            p.push(c);
            if fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(io::Error::other(format!(
                    "`{host_path}` passes through a symlink"
                )));
            }
        }
        Ok(p)
    }

    /// The current text of `host_path` in the copy (`None`: missing).
    pub fn read(&self, host_path: &str) -> io::Result<Option<String>> {
        let p = self.file(host_path)?;
        let f = match fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&p)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if !f.metadata()?.is_file() {
            return Err(io::Error::other(format!(
                "`{host_path}` is not a regular file"
            )));
        }
        let mut buf = Vec::new();
        f.take(MAX_EDIT_BYTES + 1).read_to_end(&mut buf)?;
        if buf.len() as u64 > MAX_EDIT_BYTES {
            return Err(io::Error::other(format!(
                "`{host_path}` is too large to edit"
            )));
        }
        String::from_utf8(buf)
            .map(Some)
            .map_err(|_| io::Error::other(format!("`{host_path}` is not UTF-8 text")))
    }

    /// Write `text` to `host_path` in the copy; a configuration edit keeps
    /// the file's original text for the patch.
    pub fn write(&mut self, host_path: &str, text: &str, kind: EditKind) -> io::Result<()> {
        if kind == EditKind::Config && !self.original.contains_key(host_path) {
            let before = self.read(host_path)?;
            self.original.insert(host_path.to_string(), before);
        }
        let p = self.file(host_path)?;
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        let tmp = p.with_extension("driftaudit-tmp");
        {
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
        }
        fs::rename(&tmp, &p)
    }

    /// Put every configuration file the plan edited back as it was, then
    /// apply `patch` (the printed text) to the copy with the strict applier
    /// ([`super::diff::apply_file`]): what the proof re-audits is what the
    /// patch writes, not what the planner meant to write.
    pub fn apply_patch(&mut self, patch: &str) -> Result<(), String> {
        let files = super::diff::parse(patch).map_err(|e| e.to_string())?;
        let originals: Vec<(String, Option<String>)> = self
            .original
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (path, text) in &originals {
            let res = match text {
                Some(t) => self.write(path, t, EditKind::Simulated),
                None => self.file(path).and_then(|p| match fs::remove_file(p) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                }),
            };
            res.map_err(|e| format!("cannot restore `{path}` in the copy: {e}"))?;
        }
        for fp in &files {
            let cur = self
                .read(&fp.path)
                .map_err(|e| format!("cannot read `{}` in the copy: {e}", fp.path))?;
            let new = super::diff::apply_file(fp, cur.as_deref()).map_err(|e| e.to_string())?;
            self.write(&fp.path, &new, EditKind::Config)
                .map_err(|e| format!("cannot write `{}` in the copy: {e}", fp.path))?;
        }
        Ok(())
    }

    /// Host paths the patch changes, sorted.
    pub fn edited(&self) -> Vec<&str> {
        self.original.keys().map(String::as_str).collect()
    }

    /// The text `host_path` had before the plan (`None`: it did not exist).
    pub fn original(&self, host_path: &str) -> io::Result<Option<String>> {
        match self.original.get(host_path) {
            Some(o) => Ok(o.clone()),
            None => self.read(host_path),
        }
    }

    /// The unified diff of every configuration edit, paths relative to the
    /// host root (`a/etc/...`, `b/etc/...`, quoted as git quotes an unusual
    /// name; `/dev/null` for a new file),
    /// never quoting a secret line ([`super::diff::unified`]).
    pub fn patch(&self) -> io::Result<String> {
        let mut out = String::new();
        for (path, before) in &self.original {
            let after = self.read(path)?.unwrap_or_default();
            let old = before.as_deref().unwrap_or("");
            if old == after {
                continue;
            }
            let rel = path.trim_start_matches('/');
            let (a, b) = (
                if before.is_some() {
                    super::diff::header_name(&format!("a/{rel}"))
                } else {
                    "/dev/null".to_string()
                },
                super::diff::header_name(&format!("b/{rel}")),
            );
            let d = super::diff::unified(path, old, &after, &a, &b)
                .map_err(|e| io::Error::other(e.to_string()))?;
            out.push_str(&d);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_through_a_symlink_in_the_copy_is_refused() {
        let src = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), src.path().join("etc")).unwrap();
        let mut t = Tree::copy_of(src.path()).unwrap();
        assert!(t
            .write("/etc/sysctl.conf", "x\n", EditKind::Config)
            .is_err());
        assert!(!outside.path().join("sysctl.conf").exists());
    }

    #[test]
    fn a_new_file_diffs_from_dev_null_and_the_copy_is_removed() {
        let src = tempfile::tempdir().unwrap();
        fs::create_dir(src.path().join("etc")).unwrap();
        fs::write(src.path().join("etc/a.conf"), "one\ntwo\n").unwrap();
        let mut t = Tree::copy_of(src.path()).unwrap();
        t.write("/etc/a.conf", "one\n2\n", EditKind::Config)
            .unwrap();
        t.write("/etc/sysctl.d/99-x.conf", "k = 1\n", EditKind::Config)
            .unwrap();
        t.write("/proc/x", "1\n", EditKind::Simulated).unwrap();
        let p = t.patch().unwrap();
        assert!(p.contains("--- a/etc/a.conf\n+++ b/etc/a.conf\n"), "{p}");
        assert!(
            p.contains("--- /dev/null\n+++ b/etc/sysctl.d/99-x.conf\n"),
            "{p}"
        );
        assert!(!p.contains("proc"), "{p}");
        assert_eq!(
            fs::read_to_string(src.path().join("etc/a.conf")).unwrap(),
            "one\ntwo\n"
        );
        let dir = t.dir.clone();
        drop(t);
        assert!(!dir.exists());
    }
}
