//! The confined, atomic write of a snapshot: the checks on `--out` at the
//! start (absent, an empty directory, or with `--force` a previous
//! snapshot), then the plan and the manifest written into a private
//! temporary directory next to `--out` through directory descriptors only
//! (`openat` with `O_NOFOLLOW`, `O_EXCL`, `mkdirat`, `symlinkat`), renamed
//! into place only if `--out` is still what was checked; and why a write
//! fails ([`SnapshotError`], [`Race`]). Must not decide what is written,
//! and must never follow a path someone else can change.

use std::fs;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, RenameFlags};

use crate::host::{io_message, lexical, unescape_name};

use super::manifest::SnapshotMeta;
use super::plan::Writer;

/// Why a snapshot could not be written. Nothing is left half-written: the
/// capture goes into a temporary directory that replaces `--out` only at
/// the end (see [`take`](super::take)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// `--out` (or a directory above it) could not be inspected.
    #[error("`{}`: {}", .path.display(), io_message(.source))]
    Inspect {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `--out` is a file, a symlink or a device.
    #[error("`{}` exists and is not a directory", .out.display())]
    NotADirectory {
        /// `--out`.
        out: PathBuf,
    },
    /// `--out` holds something and `--force` was not given.
    #[error("`{}` is not empty; give --force to replace a previous snapshot", .out.display())]
    NotEmpty {
        /// `--out`.
        out: PathBuf,
    },
    /// `--force`, but `--out` holds something that is not a snapshot.
    #[error(
        "`{}` is not empty and has no snapshot.json: --force only replaces a previous snapshot",
        .out.display()
    )]
    NotASnapshot {
        /// `--out`.
        out: PathBuf,
    },
    /// `--out` has no last component (`/`, `..`).
    #[error("`{}`: --out must name a directory", .out.display())]
    NoName {
        /// `--out`.
        out: PathBuf,
    },
    /// A step of the write failed.
    #[error("`{}`: {step}: {}", .out.display(), io_message(.source))]
    Write {
        /// `--out`.
        out: PathBuf,
        /// What was being done, or the file of the snapshot being written.
        step: String,
        /// The error.
        source: std::io::Error,
    },
    /// Something else changed `--out` or the temporary directory while the
    /// snapshot was taken; what was found is left alone.
    #[error("`{}`: {race}", .out.display())]
    Race {
        /// `--out`.
        out: PathBuf,
        /// What changed.
        race: Race,
    },
}

/// What changed under the snapshot writer (see [`SnapshotError::Race`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Race {
    /// The temporary directory is no longer the one created.
    #[error("the temporary directory was moved or replaced while it was written; nothing placed")]
    TemporaryReplaced,
    /// `--out` was absent at the start and is there now.
    #[error("appeared while the snapshot was taken; left alone, nothing written")]
    Appeared,
    /// `--out` was there at the start and is gone now.
    #[error("was removed while the snapshot was taken; nothing written")]
    Removed,
    /// `--out` is no longer the previous snapshot checked at the start.
    #[error("changed while the snapshot was taken (not the snapshot checked at the start); left alone, nothing written")]
    SnapshotChanged,
    /// `--out` is no longer the empty directory checked at the start.
    #[error("changed while the snapshot was taken (no longer the empty directory checked at the start); left alone, nothing written")]
    EmptyChanged,
    /// What is at `--out` right after the rename is not the snapshot.
    #[error(
        "replaced by something else right after the snapshot was renamed into place; check it"
    )]
    ReplacedAfter,
}

/// What `--out` was when the capture started: the rename at the end
/// replaces only that (see [`Writer::write_atomically`]).
#[derive(Debug, Clone, Copy)]
pub(super) enum OutState {
    /// Nothing there.
    Absent,
    /// An empty directory (device, inode).
    Empty(u64, u64),
    /// A previous snapshot, replaced with `--force` (device, inode).
    Snapshot(u64, u64),
}

/// Refuse a non-empty `out` unless `force` and it is a previous snapshot.
pub(super) fn check_out_dir(out: &Path, force: bool) -> Result<OutState, SnapshotError> {
    let inspect = |source| SnapshotError::Inspect {
        path: out.to_path_buf(),
        source,
    };
    let meta = match fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutState::Absent),
        Err(e) => return Err(inspect(e)),
    };
    let out = out.to_path_buf();
    if !meta.is_dir() {
        return Err(SnapshotError::NotADirectory { out });
    }
    let id = (meta.dev(), meta.ino());
    let empty = fs::read_dir(&out).map_err(inspect)?.next().is_none();
    if empty {
        return Ok(OutState::Empty(id.0, id.1));
    }
    if !force {
        return Err(SnapshotError::NotEmpty { out });
    }
    if !out.join("snapshot.json").is_file() {
        return Err(SnapshotError::NotASnapshot { out });
    }
    Ok(OutState::Snapshot(id.0, id.1))
}

impl Writer {
    /// Write everything into a new directory with a random name next to
    /// `out` (created with `mkdirat`, mode 0700 while it is filled, checked
    /// to be ours), through directory descriptors only (`openat` with
    /// `O_NOFOLLOW`, `O_EXCL`, `mkdirat`, `symlinkat`), so whoever can write
    /// the parent cannot redirect a write elsewhere. Then rename it into
    /// place: `renameat2(RENAME_NOREPLACE)` when `out` was absent (what
    /// appeared there meanwhile is left alone), `RENAME_EXCHANGE` when it
    /// was an empty directory or, with `--force`, a previous snapshot, then
    /// the old one is removed only if it is the very directory checked at
    /// the start (same device and inode), else it is swapped back.
    pub(super) fn write_atomically(
        &self,
        out: &Path,
        meta: &SnapshotMeta,
        checked: OutState,
    ) -> Result<(), SnapshotError> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Some(name) = out.file_name() else {
            return Err(SnapshotError::NoName {
                out: out.to_path_buf(),
            });
        };
        let name = name.as_bytes();
        fs::create_dir_all(&parent).map_err(|source| SnapshotError::Inspect {
            path: parent.clone(),
            source,
        })?;
        let io = |what: &str, e: rustix::io::Errno| SnapshotError::Write {
            out: out.to_path_buf(),
            step: what.to_string(),
            source: e.into(),
        };
        let race = |race: Race| SnapshotError::Race {
            out: out.to_path_buf(),
            race,
        };
        let pfd = rfs::open(
            &parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io("cannot open its parent directory", e))?;
        let (tmp, tfd) = make_temp_dir(&pfd, name).map_err(|e| io("temporary directory", e))?;
        let tst = rfs::fstat(&tfd).map_err(|e| io("temporary directory", e))?;
        let result = self
            .write_into(&tfd, meta)
            .map_err(|(file, e)| SnapshotError::Write {
                out: out.to_path_buf(),
                step: file,
                source: e,
            })
            .and_then(|()| {
                let ours = |n: &[u8]| {
                    rfs::statat(&pfd, n, AtFlags::SYMLINK_NOFOLLOW)
                        .is_ok_and(|st| (st.st_dev, st.st_ino) == (tst.st_dev, tst.st_ino))
                };
                if !ours(&tmp) {
                    return Err(race(Race::TemporaryReplaced));
                }
                rfs::fchmod(&tfd, Mode::from_raw_mode(0o755))
                    .map_err(|e| io("temporary directory", e))?;
                place(&pfd, &tmp, name, checked).map_err(|e| match e {
                    Placed::Race(r) => race(r),
                    Placed::Errno(e) => SnapshotError::Inspect {
                        path: out.to_path_buf(),
                        source: e.into(),
                    },
                })?;
                if !ours(name) {
                    return Err(race(Race::ReplacedAfter));
                }
                Ok(())
            });
        if result.is_err() {
            // Remove the temporary directory, if it is still ours.
            if let Ok(st) = rfs::statat(&pfd, tmp.as_slice(), AtFlags::SYMLINK_NOFOLLOW) {
                if (st.st_dev, st.st_ino) == (tst.st_dev, tst.st_ino) {
                    let _ = remove_tree_at(&pfd, &tmp, 0);
                }
            }
        }
        result
    }

    /// Fill the temporary directory; an error names the file of the
    /// snapshot it stopped at.
    fn write_into(
        &self,
        root: &OwnedFd,
        meta: &SnapshotMeta,
    ) -> Result<(), (String, std::io::Error)> {
        let io = |p: &str, e: rustix::io::Errno| (format!("`{p}`"), std::io::Error::from(e));
        for d in &self.dirs {
            open_dirs(root, &path_parts(d)).map_err(|e| io(d, e))?;
        }
        for (path, bytes) in &self.files {
            let mut parts = path_parts(path);
            let Some(name) = parts.pop() else { continue };
            let dir = open_dirs(root, &parts).map_err(|e| io(path, e))?;
            let mode = self.modes.get(path).map_or(0o644, |m| m & 0o644);
            write_new(&dir, &name, bytes, mode).map_err(|e| io(path, e))?;
        }
        for (path, target) in &self.links {
            let mut parts = path_parts(path);
            let Some(name) = parts.pop() else { continue };
            let dir = open_dirs(root, &parts).map_err(|e| io(path, e))?;
            match rfs::symlinkat(unescape_path(target), &dir, name.as_slice()) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(io(path, e)),
            }
        }
        let mut json = serde_json::to_string_pretty(meta)
            .map_err(|e| ("`/snapshot.json`".to_string(), std::io::Error::other(e)))?;
        json.push('\n');
        write_new(root, b"snapshot.json", json.as_bytes(), 0o644)
            .map_err(|e| io("/snapshot.json", e))
    }
}

/// The components of a host path as file-name bytes (`\xNN` escapes of
/// names that are not UTF-8 read back).
fn path_parts(host_path: &str) -> Vec<Vec<u8>> {
    lexical(host_path)
        .split('/')
        .filter(|c| !c.is_empty())
        .map(unescape_name)
        .filter(|c| !c.contains(&b'/') && !c.contains(&0))
        .collect()
}

/// A symlink target as bytes (each component's escapes read back).
fn unescape_path(target: &str) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = target.split('/').map(unescape_name).collect();
    parts.join(&b'/')
}

/// `mkdirat` then `openat(O_DIRECTORY | O_NOFOLLOW)` for each component,
/// from `root`: a component that is a symlink fails (`ELOOP`/`ENOTDIR`).
fn open_dirs(root: &OwnedFd, parts: &[Vec<u8>]) -> rustix::io::Result<OwnedFd> {
    let mut cur = root.try_clone().map_err(|_| rustix::io::Errno::MFILE)?;
    for p in parts {
        match rfs::mkdirat(&cur, p.as_slice(), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
        cur = rfs::openat(
            &cur,
            p.as_slice(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    Ok(cur)
}

/// Create a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`) in `dir` and write it.
fn write_new(dir: &OwnedFd, name: &[u8], bytes: &[u8], mode: u32) -> rustix::io::Result<()> {
    let fd = rfs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    let mut f = fs::File::from(fd);
    f.write_all(bytes)
        .map_err(|e| rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::IO))
}

/// `mkdirat(parent, ".NAME.tmp-RANDOM", 0700)` with 16 random hex digits
/// (`getrandom`), retried on a clash; opened `O_NOFOLLOW` and checked to be
/// a directory owned by us with mode 0700 (not one swapped in).
fn make_temp_dir(parent: &OwnedFd, name: &[u8]) -> rustix::io::Result<(Vec<u8>, OwnedFd)> {
    for _ in 0..16 {
        let mut r = [0u8; 8];
        let mut got = 0;
        while got < r.len() {
            got += rustix::rand::getrandom(&mut r[got..], rustix::rand::GetRandomFlags::empty())?;
        }
        let mut tmp = b".".to_vec();
        tmp.extend_from_slice(name);
        tmp.extend_from_slice(b".tmp-");
        for b in r {
            tmp.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        match rfs::mkdirat(parent, tmp.as_slice(), Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
        let fd = rfs::openat(
            parent,
            tmp.as_slice(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let st = rfs::fstat(&fd)?;
        if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o077 != 0 {
            return Err(rustix::io::Errno::PERM);
        }
        return Ok((tmp, fd));
    }
    Err(rustix::io::Errno::EXIST)
}

/// Move the finished temporary directory `tmp` to `name` (see
/// [`Writer::write_atomically`]).
fn place(parent: &OwnedFd, tmp: &[u8], name: &[u8], checked: OutState) -> Result<(), Placed> {
    let (dev, ino, snapshot) = match checked {
        OutState::Absent => {
            return match rfs::renameat_with(parent, tmp, parent, name, RenameFlags::NOREPLACE) {
                Ok(()) => Ok(()),
                Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                    Err(Placed::Race(Race::Appeared))
                }
                Err(e) => Err(Placed::Errno(e)),
            };
        }
        OutState::Empty(d, i) => (d, i, false),
        OutState::Snapshot(d, i) => (d, i, true),
    };
    rfs::renameat_with(parent, tmp, parent, name, RenameFlags::EXCHANGE).map_err(|e| match e {
        rustix::io::Errno::NOENT => Placed::Race(Race::Removed),
        e => Placed::Errno(e),
    })?;
    // `tmp` now names what was at `out`: remove it only if it is what was checked.
    let same = rfs::statat(parent, tmp, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| (st.st_dev, st.st_ino) == (dev, ino));
    let still_snapshot = !snapshot
        || rfs::statat(
            parent,
            [tmp, b"/snapshot.json"].concat(),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|st| rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::RegularFile);
    let removed = same
        && still_snapshot
        && if snapshot {
            remove_tree_at(parent, tmp, 0).is_ok()
        } else {
            rfs::unlinkat(parent, tmp, AtFlags::REMOVEDIR).is_ok()
        };
    if removed {
        return Ok(());
    }
    // Not what was checked (replaced, or filled meanwhile): put it back.
    let _ = rfs::renameat_with(parent, tmp, parent, name, RenameFlags::EXCHANGE);
    Err(Placed::Race(if snapshot {
        Race::SnapshotChanged
    } else {
        Race::EmptyChanged
    }))
}

/// Why [`place`] did not place the snapshot.
enum Placed {
    Race(Race),
    Errno(rustix::io::Errno),
}

/// Remove the tree `name` in `dir` without following symlinks.
fn remove_tree_at(dir: &OwnedFd, name: &[u8], depth: usize) -> rustix::io::Result<()> {
    if depth > 64 {
        return Err(rustix::io::Errno::LOOP);
    }
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let dfd = fd.try_clone().map_err(|_| rustix::io::Errno::MFILE)?;
    let mut names = Vec::new();
    for e in rfs::Dir::new(fd)? {
        let e = e?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push((n.to_vec(), e.file_type()));
        }
    }
    for (n, t) in names {
        let t = if t == rfs::FileType::Unknown {
            rfs::statat(&dfd, n.as_slice(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|s| rfs::FileType::from_raw_mode(s.st_mode))?
        } else {
            t
        };
        if t == rfs::FileType::Directory {
            remove_tree_at(&dfd, &n, depth + 1)?;
        } else {
            rfs::unlinkat(&dfd, n.as_slice(), AtFlags::empty())?;
        }
    }
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::CommandError;

    #[test]
    fn snapshot_errors_read_as_one_lowercase_line_with_the_path_in_backticks() {
        let out = PathBuf::from("/srv/snap");
        let io = || std::io::Error::from_raw_os_error(2);
        let all = [
            SnapshotError::Inspect {
                path: out.clone(),
                source: io(),
            },
            SnapshotError::NotADirectory { out: out.clone() },
            SnapshotError::NotEmpty { out: out.clone() },
            SnapshotError::NotASnapshot { out: out.clone() },
            SnapshotError::NoName { out: out.clone() },
            SnapshotError::Write {
                out: out.clone(),
                step: "temporary directory".into(),
                source: io(),
            },
            SnapshotError::Race {
                out: out.clone(),
                race: Race::Appeared,
            },
        ];
        for e in &all {
            let m = e.to_string();
            assert!(m.starts_with("`/srv/snap`"), "{m}");
            assert!(
                !m.contains('\n') && !m.ends_with('.') && !m.contains("os error"),
                "{m}"
            );
        }
        assert_eq!(
            all[5].to_string(),
            "`/srv/snap`: temporary directory: no such file or directory"
        );
        for e in [
            CommandError::NoClient,
            CommandError::Spawn(io()),
            CommandError::Timeout(20),
        ] {
            let m = e.to_string();
            assert!(
                m.chars().next().is_some_and(|c| !c.is_uppercase()) && !m.ends_with('.'),
                "{m}"
            );
        }
    }
}
