//! Path confinement: every lookup of a host path walks the root's directory
//! descriptors one component at a time (symlinks resolved inside the root,
//! `..` stopping at it), or asks `openat2(RESOLVE_IN_ROOT)` where the kernel
//! has it, and re-checks what it opened. Must not read file contents.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use rustix::fs::{self as rfs, FileType as RType, Mode, OFlags, ResolveFlags};

use super::model::*;
use super::names::*;

/// Where a confined walk ended.
pub(super) struct Walked {
    /// The directories walked to the parent of the final object, with their
    /// names (the root itself is not in it).
    pub(super) stack: Vec<(Arc<OwnedFd>, Vec<u8>)>,
    /// The final object (an `O_PATH` descriptor) and its name; `None` for
    /// the root itself.
    pub(super) last: Option<(Arc<OwnedFd>, Vec<u8>)>,
    /// `fstat` of the final object.
    pub(super) stat: rfs::Stat,
    /// Symlinks followed.
    pub(super) links: usize,
    /// Owner, mode and resolved host path of every object the walk opened
    /// (directories, links, the final object), in order.
    pub(super) seen: Vec<(u32, u32, String)>,
}

impl Walked {
    pub(super) fn comps(&self) -> Vec<Vec<u8>> {
        self.stack
            .iter()
            .chain(self.last.iter())
            .map(|(_, c)| c.clone())
            .collect()
    }

    pub(super) fn host_path(&self) -> String {
        comps_host_path(&self.comps())
    }
}

/// `openat2` availability, learnt on first use.
static OPENAT2: AtomicU8 = AtomicU8::new(OPENAT2_UNKNOWN);
const OPENAT2_UNKNOWN: u8 = 0;
const OPENAT2_YES: u8 = 1;
const OPENAT2_NO: u8 = 2;

impl Host {
    /// Walk a path from the root directory descriptor one component at a
    /// time: `openat(O_PATH | O_NOFOLLOW)` relative to the directory reached
    /// so far, symlinks read with `readlinkat` and expanded here (absolute
    /// targets restart at the root), `..` pops the directories walked (it
    /// never goes above the root, whatever is renamed meanwhile). Nothing is
    /// ever looked up by a path of more than one component, so swapping a
    /// directory for a symlink during the walk cannot lead outside the root.
    pub(super) fn walk(&self, comps: Vec<Vec<u8>>, follow_last: bool) -> Result<Walked, ReadError> {
        let mut stack: Vec<(Arc<OwnedFd>, Vec<u8>)> = Vec::new();
        let cache = self.kind == SourceKind::Live;
        let mut pending: Vec<Vec<u8>> = comps.into_iter().rev().collect();
        let mut links = 0usize;
        let mut seen: Vec<(u32, u32, String)> = Vec::new();
        loop {
            let Some(comp) = pending.pop() else {
                // Ended on a directory already walked (or the root itself).
                let last = stack.pop();
                let stat = match &last {
                    Some((fd, _)) => rfs::fstat(fd),
                    None => rfs::fstat(&*self.root_fd),
                }
                .map_err(errno)?;
                return Ok(Walked {
                    stack,
                    last,
                    stat,
                    links,
                    seen,
                });
            };
            if comp == b".." {
                stack.pop();
                continue;
            }
            if stack.len() >= MAX_WALK_DEPTH {
                return Err(ReadError::Io(format!(
                    "path is deeper than {MAX_WALK_DEPTH} directories"
                )));
            }
            // An intermediate directory the live walk has opened before.
            let key = if cache && !pending.is_empty() {
                let mut k = Vec::with_capacity(64);
                for (_, c) in &stack {
                    k.push(b'/');
                    k.extend_from_slice(c);
                }
                k.push(b'/');
                k.extend_from_slice(&comp);
                let hit = {
                    let g = self.walked.lock().unwrap_or_else(|p| p.into_inner());
                    g.dirs.get(&k).map(|d| (d.fd.clone(), d.uid, d.mode))
                };
                if let Some((fd, uid, mode)) = hit {
                    let mut p: Vec<Vec<u8>> = stack.iter().map(|(_, c)| c.clone()).collect();
                    p.push(comp.clone());
                    seen.push((uid, mode, comps_host_path(&p)));
                    stack.push((fd, comp));
                    continue;
                }
                Some(k)
            } else {
                None
            };
            let parent = match stack.last() {
                Some((fd, _)) => fd.as_fd(),
                None => self.root_fd.as_fd(),
            };
            let fd = rfs::openat(
                parent,
                comp.as_slice(),
                OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(errno)?;
            let stat = rfs::fstat(&fd).map_err(errno)?;
            let ftype = RType::from_raw_mode(stat.st_mode);
            if self.kind == SourceKind::Live {
                let mut p: Vec<Vec<u8>> = stack.iter().map(|(_, c)| c.clone()).collect();
                p.push(comp.clone());
                seen.push((stat.st_uid, stat.st_mode, comps_host_path(&p)));
            }
            if ftype == RType::Symlink && (follow_last || !pending.is_empty()) {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(ReadError::SymlinkLoop);
                }
                let target = rfs::readlinkat(&fd, c"", Vec::new()).map_err(errno)?;
                let target = target.as_bytes();
                if target.first() == Some(&b'/') {
                    stack.clear();
                }
                for c in byte_components(target).into_iter().rev() {
                    pending.push(c);
                }
                continue;
            }
            if pending.is_empty() {
                return Ok(Walked {
                    stack,
                    last: Some((Arc::new(fd), comp)),
                    stat,
                    links,
                    seen,
                });
            }
            if ftype != RType::Directory {
                return Err(ReadError::NotFound);
            }
            let fd = Arc::new(fd);
            if let Some(k) = key {
                let mut g = self.walked.lock().unwrap_or_else(|p| p.into_inner());
                if g.dirs.len() < MAX_WALK_CACHE {
                    g.dirs.insert(
                        k,
                        CachedDir {
                            fd: fd.clone(),
                            uid: stat.st_uid,
                            mode: stat.st_mode,
                        },
                    );
                }
            }
            stack.push((fd, comp));
        }
    }

    /// Open the object a walk ended on for reading (`O_RDONLY | O_NONBLOCK |
    /// O_NOFOLLOW | O_NOCTTY`, relative to its parent's descriptor) and check
    /// it is still the object the walk saw.
    pub(super) fn reopen(&self, w: &Walked, extra: OFlags) -> Result<OwnedFd, ReadError> {
        let flags = OFlags::RDONLY
            | OFlags::NONBLOCK
            | OFlags::NOCTTY
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | extra;
        let fd = match &w.last {
            Some((_, name)) => {
                let parent = match w.stack.last() {
                    Some((fd, _)) => fd.as_fd(),
                    None => self.root_fd.as_fd(),
                };
                rfs::openat(parent, name.as_slice(), flags, Mode::empty())
            }
            None => rfs::openat(&*self.root_fd, c".", flags, Mode::empty()),
        }
        .map_err(errno)?;
        let now = rfs::fstat(&fd).map_err(errno)?;
        if (now.st_dev, now.st_ino) != (w.stat.st_dev, w.stat.st_ino) {
            return Err(changed());
        }
        Ok(fd)
    }

    /// Open a host path inside the root with the kernel's confinement
    /// (`openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)`), or `None` when
    /// this kernel has no `openat2` (or it is turned off for this host).
    pub(super) fn open_in_root(
        &self,
        comps: &[Vec<u8>],
        flags: OFlags,
    ) -> Option<Result<OwnedFd, ReadError>> {
        if !self.kernel_resolve || OPENAT2.load(Ordering::Relaxed) == OPENAT2_NO {
            return None;
        }
        let mut path = Vec::with_capacity(64);
        for c in comps {
            path.push(b'/');
            path.extend_from_slice(c);
        }
        if path.is_empty() {
            path.push(b'/');
        }
        for _ in 0..8 {
            match rfs::openat2(
                &*self.root_fd,
                path.as_slice(),
                flags | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS,
            ) {
                Ok(fd) => {
                    OPENAT2.store(OPENAT2_YES, Ordering::Relaxed);
                    return Some(Ok(fd));
                }
                // A rename raced with `..`: the kernel asks to try again.
                Err(rustix::io::Errno::AGAIN) => continue,
                // No openat2 (kernel < 5.6) or a seccomp filter refusing it.
                Err(e @ (rustix::io::Errno::NOSYS | rustix::io::Errno::PERM))
                    if OPENAT2.load(Ordering::Relaxed) != OPENAT2_YES =>
                {
                    if e == rustix::io::Errno::NOSYS || !self.openat2_works() {
                        OPENAT2.store(OPENAT2_NO, Ordering::Relaxed);
                        return None;
                    }
                    return Some(Err(errno(e)));
                }
                Err(e) => return Some(Err(errno(e))),
            }
        }
        // Still racing: resolve with the walk instead.
        None
    }

    /// Whether `openat2` opens the root itself (tells a seccomp `EPERM`
    /// from a real permission error).
    pub(super) fn openat2_works(&self) -> bool {
        rfs::openat2(
            &*self.root_fd,
            c".",
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::IN_ROOT,
        )
        .is_ok()
    }

    /// Stat a host path after confined resolution (following a final link).
    pub(super) fn stat_in_root(&self, host_path: &str) -> Result<rfs::Stat, ReadError> {
        let comps = host_components(host_path)?;
        if let Some(fd) = self.open_in_root_noted(host_path, &comps, OFlags::PATH) {
            return rfs::fstat(fd?).map_err(errno);
        }
        Ok(self.walk(comps, true)?.stat)
    }

    /// [`Host::open_in_root`], trying `RESOLVE_NO_SYMLINKS` first while a
    /// gather remembers (see [`Host::open_link_free`]): a path that opens so
    /// passes no link, so it resolves to itself, and [`Host::resolve`] is
    /// answered from the memo instead of opening it again. A path with a
    /// link costs one more `openat2` (the one that says `ELOOP`).
    pub(super) fn open_in_root_noted(
        &self,
        host_path: &str,
        comps: &[Vec<u8>],
        flags: OFlags,
    ) -> Option<Result<OwnedFd, ReadError>> {
        if self.memo_on() {
            match self.open_link_free(comps, flags) {
                Some(Ok((fd, plain))) => {
                    self.note_resolved(lexical(host_path), Ok(comps_host_path(&plain)));
                    return Some(Ok(fd));
                }
                Some(Err(e)) => {
                    // a missing component, as the walk would find it
                    self.note_resolved(lexical(host_path), Err(e.clone()));
                    return Some(Err(e));
                }
                None => {}
            }
        }
        self.open_in_root(comps, flags)
    }

    /// Resolve a host path to a real path below the root, following symlinks
    /// component by component. Absolute link targets restart at the root, `..`
    /// stops at the root: nothing can name a file outside it.
    /// The result is the resolved host path (e.g. `/etc/mysql/mariadb.cnf`).
    ///
    /// A path with no symlink on the way is answered by one confined
    /// `openat2(RESOLVE_NO_SYMLINKS)` instead of the walk's `openat`, `fstat`
    /// and `close` per component; within one gather on a snapshot each
    /// answer is remembered.
    pub(crate) fn resolve(&self, host_path: &str) -> Result<String, ReadError> {
        let key = self.memo_on().then(|| lexical(host_path));
        if let Some(k) = &key {
            if let Some(r) = self.memo(|m| m.resolved.get(k).cloned()) {
                return r;
            }
        }
        let got = self.resolve_uncached(host_path);
        if let Some(k) = key {
            self.note_resolved(k, got.clone());
        }
        got
    }

    pub(super) fn resolve_uncached(&self, host_path: &str) -> Result<String, ReadError> {
        let comps = host_components(host_path)?;
        if let Some(found) = self.open_link_free(&comps, OFlags::PATH) {
            return found.map(|(_, plain)| comps_host_path(&plain));
        }
        let w = self.walk(comps, true)?;
        let out = w.host_path();
        if w.links > 0 {
            self.record(|l| {
                l.resolved.insert(lexical(host_path), out.clone());
            });
        }
        Ok(out)
    }

    /// Open a host path that has no symlink anywhere on the way, confined
    /// (`openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS)`), with the
    /// components it resolved to (`..` taken lexically, which is what it
    /// means when no link is passed). A missing component is
    /// [`ReadError::NotFound`], as the walk would find it: with
    /// `RESOLVE_NO_SYMLINKS` the kernel stops at the first link with
    /// `ELOOP`, so `ENOENT` means every component before the missing one is
    /// a plain directory, the very ones the walk would pass. `None` when the
    /// path has a link, fails otherwise, is deeper than the walk goes, or
    /// this kernel has no `openat2`: the walk then decides, with its own
    /// answer or error.
    pub(super) fn open_link_free(
        &self,
        comps: &[Vec<u8>],
        flags: OFlags,
    ) -> Option<Result<Opened, ReadError>> {
        if comps.is_empty()
            || comps.len() >= MAX_WALK_DEPTH
            || !self.kernel_resolve
            || OPENAT2.load(Ordering::Relaxed) == OPENAT2_NO
        {
            return None;
        }
        let mut path = Vec::with_capacity(64);
        for c in comps {
            path.push(b'/');
            path.extend_from_slice(c);
        }
        let fd = rfs::openat2(
            &*self.root_fd,
            path.as_slice(),
            flags | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::IN_ROOT | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        );
        let fd = match fd {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Some(Err(ReadError::NotFound)),
            Err(_) => return None,
        };
        let mut plain: Vec<Vec<u8>> = Vec::with_capacity(comps.len());
        for c in comps {
            if c.as_slice() == b".." {
                plain.pop();
            } else {
                plain.push(c.clone());
            }
        }
        Some(Ok((fd, plain)))
    }

    /// The real path on the auditing machine for a host path, after confined
    /// resolution. For messages only: opening it by path would walk it again
    /// outside the confinement; read through the other methods.
    pub(crate) fn real_path(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        let w = self.walk(host_components(host_path)?, true)?;
        let mut p = self.root.clone();
        for (_, c) in w.stack.iter().chain(w.last.iter()) {
            p.push(OsStr::from_bytes(c));
        }
        Ok(p)
    }
}

pub(super) fn comps_host_path(comps: &[Vec<u8>]) -> String {
    let mut out = String::new();
    for c in comps {
        out.push('/');
        out.push_str(&escape_name(c));
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The components of a host path as file-name bytes (`\xNN` escapes read
/// back, see [`escape_name`]), `.` and empty parts dropped, `..` kept.
pub(super) fn host_components(host_path: &str) -> Result<Vec<Vec<u8>>, ReadError> {
    let mut out = Vec::new();
    for c in host_path.split('/') {
        if c.is_empty() || c == "." {
            continue;
        }
        let b = unescape_name(c);
        if b.contains(&b'/') || b.contains(&0) {
            return Err(ReadError::NotFound);
        }
        out.push(b);
    }
    Ok(out)
}

/// The components of a raw symlink target.
pub(super) fn byte_components(path: &[u8]) -> Vec<Vec<u8>> {
    path.split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(<[u8]>::to_vec)
        .collect()
}

pub(super) fn errno(e: rustix::io::Errno) -> ReadError {
    ReadError::from(std::io::Error::from_raw_os_error(e.raw_os_error()))
}

pub(super) fn changed() -> ReadError {
    ReadError::Io("changed while being read (replaced during the audit)".into())
}

/// A host path on the live root, as an absolute path of this machine.
pub(super) fn live_path(host_path: &str) -> Result<PathBuf, ReadError> {
    // Most paths are already what the loop below would make of them: an
    // absolute path of plain components, nothing escaped, no NUL.
    let plain = host_path.len() > 1
        && host_path.starts_with('/')
        && !host_path.ends_with('/')
        && !host_path.bytes().any(|b| b == b'\\' || b == 0)
        && host_path[1..].split('/').all(|c| !c.is_empty() && c != ".");
    if plain {
        return Ok(PathBuf::from(host_path));
    }
    let mut p = Vec::with_capacity(host_path.len() + 1);
    for c in host_components(host_path)? {
        p.push(b'/');
        p.extend_from_slice(&c);
    }
    if p.is_empty() {
        p.push(b'/');
    }
    Ok(PathBuf::from(OsString::from_vec(p)))
}
