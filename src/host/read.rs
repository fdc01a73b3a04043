//! Reading through the confined root: whole files within the caps, kernel
//! values, pieces of large files, directory listings and sizes, device
//! heads, captures, modes and links; each open goes through `confine`, each
//! byte through the budget. These are `pub(crate)`: driftaudit's own tools
//! reach them through the unstable `Reads` trait, embedders never. Must not
//! parse what it reads.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use rustix::fs::{self as rfs, AtFlags, FileType as RType, Mode, OFlags};

use super::confine::*;
use super::layout::Layout;
use super::model::*;
use super::names::*;

impl Host {
    /// Whether the host path exists (inside the root).
    pub(crate) fn exists(&self, host_path: &str) -> bool {
        self.kind_of(host_path).is_ok()
    }

    /// The raw target of a symlink (not resolved), e.g. `/dev/null` for a masked
    /// sysctl.d file; `None` if the path is not a symlink.
    pub(crate) fn read_link(&self, host_path: &str) -> Option<String> {
        let mut comps = host_components(host_path).ok()?;
        let name = comps.pop()?;
        if name == b".." {
            return None;
        }
        let dir = self.walk(comps, true).ok()?;
        let dir = self.reopen(&dir, OFlags::DIRECTORY).ok()?;
        let target = rfs::readlinkat(&dir, name.as_slice(), Vec::new())
            .ok()
            .map(|t| escape_name(t.as_bytes()));
        if let Some(t) = &target {
            self.record(|l| {
                l.links.insert(lexical(host_path), t.clone());
            });
        }
        target
    }

    /// Unix permission bits of a host path.
    pub(crate) fn mode(&self, host_path: &str) -> Result<u32, ReadError> {
        let meta = self.stat_of(host_path)?;
        self.record(|l| {
            l.probes.insert(lexical(host_path), meta.kind);
            l.modes.insert(lexical(host_path), meta.mode & 0o7777);
        });
        Ok(meta.mode)
    }

    /// Read a whole file as bytes, at most [`MAX_FILE_BYTES`]. FIFOs, sockets and
    /// devices are refused without opening them for a blocking read.
    pub(crate) fn read_bytes(&self, host_path: &str) -> Result<Vec<u8>, ReadError> {
        self.read_bytes_capped(host_path, MAX_FILE_BYTES)
    }

    /// Host paths of the files read so far that have more than one hard
    /// link (`st_nlink > 1`). A hard link cannot be told from any other file
    /// by its path, so one inside a snapshot may name a file outside it
    /// (docs/snapshot-format.md, Confinement); reports list them once.
    pub(crate) fn hard_linked(&self) -> Vec<String> {
        let g = self.hard_links.lock().unwrap_or_else(|p| p.into_inner());
        g.iter().cloned().collect()
    }

    /// Open a regular file for reading, confined; with its link count and
    /// permission bits. The type is checked before the open, so a device or
    /// FIFO is never opened for reading, and again on the descriptor after it.
    pub(super) fn open_file_nlink(
        &self,
        host_path: &str,
    ) -> Result<(File, u64, u32, u64), ReadError> {
        let fd = match self.kind {
            // On the live root the kernel resolves links itself (same result
            // as the confined walk, whose root is `/`), in one stat instead
            // of one per component.
            SourceKind::Live => {
                // The `stat` before the open is the gather's own (one a
                // path, absent ones too, within a gather).
                crate::reader::check_regular(self.stat_of(host_path)?.mode)?;
                let o = crate::reader::open_known_regular(&live_path(host_path)?)?;
                return Ok((o.file, o.nlink, o.mode, o.size));
            }
            SourceKind::Snapshot => self.open_snapshot_file(host_path)?,
        };
        let (fd, st) = fd;
        let now = Meta::from_stat(&st);
        if now.kind != EntryKind::File {
            return Err(ReadError::NotRegular(now.special));
        }
        // nlink_t is u64 on x86_64 and u32 on other targets
        #[allow(clippy::unnecessary_cast)]
        let nlink = st.st_nlink as u64;
        Ok((
            File::from(fd),
            nlink,
            st.st_mode & 0o7777,
            st.st_size as u64,
        ))
    }

    /// The opened file with the `fstat` of its descriptor.
    pub(super) fn open_snapshot_file(
        &self,
        host_path: &str,
    ) -> Result<(OwnedFd, rfs::Stat), ReadError> {
        let comps = host_components(host_path)?;
        // The memo has just seen a regular file here: open it for reading
        // at once (`O_NONBLOCK`, so not even a FIFO swapped in meanwhile
        // could block), the caller checks the type on the descriptor.
        if self.memo_on() {
            let key = lexical(host_path);
            let file = self
                .memo(|m| matches!(m.known.get(&key), Some(Ok(k)) if k.kind == EntryKind::File));
            if file {
                let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
                if let Some(fd) = self.open_in_root(&comps, flags) {
                    let fd = fd?;
                    let now = rfs::fstat(&fd).map_err(errno)?;
                    return Ok((fd, now));
                }
            }
        }
        for _ in 0..3 {
            if let Some(pre) = self.open_in_root_noted(host_path, &comps, OFlags::PATH) {
                let pre = rfs::fstat(pre?).map_err(errno)?;
                check_file(&Meta::from_stat(&pre))?;
                let Some(fd) =
                    self.open_in_root(&comps, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)
                else {
                    break;
                };
                let fd = fd?;
                let now = rfs::fstat(&fd).map_err(errno)?;
                if (now.st_dev, now.st_ino) == (pre.st_dev, pre.st_ino) {
                    return Ok((fd, now));
                }
                continue; // replaced between the two opens: look again
            }
            let w = self.walk(comps.clone(), true)?;
            check_file(&Meta::from_stat(&w.stat))?;
            match self.reopen(&w, OFlags::empty()) {
                Err(e) if e == changed() => continue,
                r => {
                    let fd = r?;
                    let st = rfs::fstat(&fd).map_err(errno)?;
                    return Ok((fd, st));
                }
            }
        }
        Err(changed())
    }

    /// Read a kernel value file (`/proc/sys/...`) within `cap`, with its
    /// permission bits. On the live host without a read log: one `stat`
    /// (its type, so a FIFO or device is never opened), the open, an `fstat`
    /// and one `read`, where [`Host::mode`] then [`Host::read_bytes_capped`]
    /// take one more `stat`; the budget and hard-link checks are the same. Elsewhere
    /// (a snapshot, or recording one) it is exactly those two calls.
    pub(crate) fn read_kernel_value(
        &self,
        host_path: &str,
        cap: u64,
    ) -> Result<(Vec<u8>, u32), ReadError> {
        if self.kind != SourceKind::Live || self.log.is_some() {
            let mode = self.mode(host_path)?;
            if mode & 0o444 == 0 {
                return Ok((Vec::new(), mode));
            }
            return Ok((self.read_bytes_capped(host_path, cap)?, mode));
        }
        // A plain path below /proc/sys is a sysctl: procfs holds no FIFO or
        // device to keep from opening, so no `stat` before the open, and
        // the value is read in one `read`, as systemd-sysctl reads it.
        let virtual_file = is_plain_proc_sys(host_path);
        let open = if virtual_file {
            crate::reader::open_known_regular
        } else {
            crate::reader::open_regular
        };
        let o = match open(&live_path(host_path)?) {
            // Write-only keys refuse the open even to root: say so by mode.
            Err(crate::reader::Failure::PermissionDenied) => {
                let mode = self.mode(host_path)?;
                if mode & 0o444 == 0 {
                    return Ok((Vec::new(), mode));
                }
                return Err(ReadError::PermissionDenied);
            }
            r => r?,
        };
        if o.mode & 0o444 == 0 {
            return Ok((Vec::new(), o.mode));
        }
        if self.start_read(host_path, o.nlink)? < cap {
            // Near the budget's end: the one careful path decides.
            return Ok((self.read_bytes_capped(host_path, cap)?, o.mode));
        }
        let bytes = if virtual_file {
            crate::reader::read_virtual(&o.file, cap)?
        } else {
            crate::reader::read_capped_sized(o.file, cap, o.size)?
        };
        let b = &self.read_budget;
        b.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok((bytes, o.mode))
    }

    /// Read a file in pieces through one buffer of about `piece` bytes,
    /// within `cap` and the host's read budget, for a large file of which a
    /// reader keeps little (the dpkg database: 650 KB for a few lines).
    /// `each(bytes, at_end)` gets the bytes not yet taken, once the buffer
    /// is full or the file ends, and returns how many leading ones it is
    /// done with; the rest is handed again, with more, on the next call (the
    /// buffer grows only while `each` takes nothing), so each byte is
    /// scanned a bounded number of times however the reads come. No whole-file buffer is allocated, so a 650 KB file costs
    /// no 160 fresh pages. The checks are [`Host::read_bytes_capped`]'s: a
    /// FIFO or device is refused, a file over the cap is
    /// [`ReadError::TooLarge`] and one over the budget
    /// [`ReadError::Limit`] (what `each` saw before is then to be dropped).
    /// A host recording a read log reads the file whole, so the snapshot
    /// copies it.
    pub(crate) fn read_in_pieces(
        &self,
        host_path: &str,
        cap: u64,
        piece: usize,
        mut each: impl FnMut(&[u8], bool) -> usize,
    ) -> Result<(), ReadError> {
        if self.log.is_some() {
            let bytes = self.read_bytes_capped(host_path, cap)?;
            each(&bytes, true);
            return Ok(());
        }
        let (file, nlink, _, size) = self.open_file_nlink(host_path)?;
        let left = self.start_read(host_path, nlink)?;
        let b = &self.read_budget;
        let limit = cap.min(left);
        let piece = piece.clamp(4096, 1 << 20);
        let mut buf: Vec<u8> =
            Vec::with_capacity(size.saturating_add(1).min(piece as u64) as usize);
        let mut total = 0u64;
        loop {
            // `each` sees a full buffer (or the end), never one short read
            // at a time: a file served in tiny reads (FUSE) would otherwise
            // have the same bytes scanned again after every read.
            if buf.len() == buf.capacity() {
                let done = each(&buf, false).min(buf.len());
                buf.drain(..done);
                if buf.len() == buf.capacity() {
                    buf.reserve(piece.max(buf.len()));
                }
            }
            let n = match rustix::io::read(&file, rustix::buffer::spare_capacity(&mut buf)) {
                Err(rustix::io::Errno::INTR) => continue,
                r => r.map_err(|e| ReadError::from(std::io::Error::from(e)))?,
            };
            total += n as u64;
            b.used.fetch_add(n as u64, Ordering::Relaxed);
            if total > limit {
                if left < cap {
                    b.used.fetch_max(b.limit, Ordering::Relaxed);
                    return Err(self.budget_spent());
                }
                let on_disk = file.metadata().map(|m| m.len()).unwrap_or(0);
                return Err(ReadError::TooLarge(on_disk.max(cap.saturating_add(1))));
            }
            if n == 0 {
                each(&buf, true);
                return Ok(());
            }
        }
    }

    /// As [`Host::read_bytes`] with another cap (for example one superblock).
    pub(crate) fn read_bytes_capped(
        &self,
        host_path: &str,
        cap: u64,
    ) -> Result<Vec<u8>, ReadError> {
        let key = self.memo_on().then(|| lexical(host_path));
        if let Some(k) = &key {
            if let Some(bytes) = self.memo(|m| m.files.by_path.get(k).cloned()) {
                // Charged as a read; one the cap or budget would refuse is
                // made for real, so the refusal is the same.
                let b = &self.read_budget;
                let left = b.limit.saturating_sub(b.used.load(Ordering::Relaxed));
                if left > 0 && bytes.len() as u64 <= cap.min(left) {
                    b.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    return Ok(bytes.as_ref().clone());
                }
            }
        }
        let (file, nlink, mode, size) = self.open_file_nlink(host_path)?;
        let bytes = self.finish_read(host_path, file, (nlink, mode, size), cap)?;
        if key.is_some() {
            self.remember_file(host_path, &bytes);
        }
        Ok(bytes)
    }

    /// Read a file named by data that `trust` says who controls (an
    /// `!include` in an option file, a path in a service's config), as text.
    /// On a live host a path is followed for root only as far as it stays
    /// in the hands of root: once it passes through a directory, link or
    /// file root does not own (or `trust` already names a user), it is read
    /// only if that user could read it themselves by its permission bits
    /// (every directory searchable and the file readable by owner or
    /// other); otherwise [`ReadError::Untrusted`] says why. The file is read
    /// through the very descriptors that were checked. Returns the text and
    /// the trust for what this file names in turn. On a snapshot every path
    /// is confined to the root already: `trust` is passed through.
    pub(crate) fn read_to_string_for(
        &self,
        host_path: &str,
        trust: Trust,
    ) -> Result<(String, Trust), ReadError> {
        if self.kind != SourceKind::Live {
            return Ok((self.read_to_string(host_path)?, trust));
        }
        let w = self.walk(host_components(host_path)?, true)?;
        let meta = Meta::from_stat(&w.stat);
        check_file(&meta)?;
        let mut user = trust.uid;
        let mut via = trust.via.clone();
        for (uid, _, path) in &w.seen {
            if user.is_none() && *uid != 0 {
                user = Some(*uid);
                via = Some(path.clone());
            }
        }
        if let Some(u) = user {
            let via = via.clone().unwrap_or_else(|| host_path.to_string());
            let dirs_ok = w.stack.iter().all(|(fd, _)| {
                rfs::fstat(fd).is_ok_and(|st| {
                    (st.st_uid == u && st.st_mode & 0o100 != 0) || st.st_mode & 0o001 != 0
                })
            });
            let file_ok =
                (w.stat.st_uid == u && w.stat.st_mode & 0o400 != 0) || w.stat.st_mode & 0o004 != 0;
            if !(dirs_ok && file_ok) {
                return Err(ReadError::Untrusted(format!(
                    "reached through `{via}`, which uid {u} controls, and uid {u} cannot read `{}` itself: not followed (root reads for a service user only what that user could read)",
                    w.host_path()
                )));
            }
        }
        let fd = self.reopen(&w, OFlags::empty())?;
        // Logged under the path it resolved to, as a read after
        // [`Host::resolve`] would be.
        let bytes = self.finish_read(
            &w.host_path(),
            File::from(fd),
            (
                w.stat.st_nlink,
                w.stat.st_mode & 0o7777,
                w.stat.st_size as u64,
            ),
            MAX_FILE_BYTES,
        )?;
        self.remember_file(host_path, &bytes);
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Ok((text, Trust { uid: user, via }))
    }

    /// Read a whole file as text. Invalid UTF-8 is replaced (Latin-1 comments in
    /// old config files must not make a file unreadable); NUL bytes are kept.
    pub(crate) fn read_to_string(&self, host_path: &str) -> Result<String, ReadError> {
        let bytes = self.read_bytes(host_path)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Open a directory for listing, confined; returns its resolved
    /// components too.
    pub(super) fn open_dir(&self, host_path: &str) -> Result<(OwnedFd, Vec<Vec<u8>>), ReadError> {
        let comps = host_components(host_path)?;
        if self.memo_on() {
            let key = lexical(host_path);
            if self.memo(|m| matches!(m.resolved.get(&key), Some(Err(ReadError::NotFound)))) {
                return Err(ReadError::NotFound);
            }
        }
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::DIRECTORY;
        if let Some(found) = self.open_link_free(&comps, flags) {
            return found;
        }
        for _ in 0..3 {
            let w = self.walk(host_components(host_path)?, true)?;
            if RType::from_raw_mode(w.stat.st_mode) != RType::Directory {
                return Err(ReadError::WrongKind("is not a directory"));
            }
            match self.reopen(&w, OFlags::DIRECTORY) {
                Ok(fd) => return Ok((fd, w.comps())),
                Err(e) if e == changed() => continue,
                Err(e) => return Err(e),
            }
        }
        Err(changed())
    }

    /// List a directory, sorted by name in byte order (as `strcmp`). Names
    /// are bytes ([`DirEntry::raw_name`]); [`DirEntry::name`] is the same
    /// name as a host path component (see [`escape_name`]).
    pub(crate) fn read_dir(&self, host_path: &str) -> Result<Vec<DirEntry>, ReadError> {
        if let Some(known) = self.listed(host_path) {
            return Ok(known.as_ref().clone());
        }
        let listed = self.read_dir_matching(host_path, |_| true)?;
        self.remember_listing(host_path, &listed);
        Ok(listed)
    }

    /// [`Host::read_dir`] keeping only the entries whose raw name `keep`
    /// accepts: the others are neither named, typed nor followed (a link
    /// among them costs no walk), for a reader that wants a few names of a
    /// large directory (the `.mount` units of `/usr/lib/systemd/system`).
    pub(crate) fn read_dir_matching(
        &self,
        host_path: &str,
        keep: impl Fn(&[u8]) -> bool,
    ) -> Result<Vec<DirEntry>, ReadError> {
        if let Some(known) = self.listed(host_path) {
            let kept = known.iter().filter(|e| keep(e.raw_name.as_bytes()));
            return Ok(kept.cloned().collect());
        }
        let (fd, resolved) = self.open_dir(host_path)?;
        let resolved_path = comps_host_path(&resolved);
        let dir_fd = fd.try_clone().map_err(ReadError::from)?;
        let mut dir = rfs::Dir::new(fd).map_err(errno)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(errno)?;
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." || !keep(raw) {
                continue;
            }
            let raw = raw.to_vec();
            let name = escape_name(&raw);
            let mut ftype = entry.file_type();
            if ftype == RType::Unknown {
                ftype = rfs::statat(&dir_fd, raw.as_slice(), AtFlags::SYMLINK_NOFOLLOW)
                    .map(|s| RType::from_raw_mode(s.st_mode))
                    .unwrap_or(RType::Unknown);
            }
            // A plain entry of a resolved directory is itself resolved: its kind
            // comes from the directory listing (no stat per path component).
            if ftype != RType::Symlink && ftype != RType::Unknown {
                out.push(DirEntry {
                    target: Some(join_host(&resolved_path, &name)),
                    name,
                    raw_name: OsString::from_vec(raw),
                    kind: Some(kind_of_type(ftype)),
                    is_symlink: false,
                });
                continue;
            }
            let mut comps = resolved.clone();
            comps.push(raw.clone());
            let (kind, target) = match self.walk(comps, true) {
                Ok(w) => (Some(Meta::from_stat(&w.stat).kind), Some(w.host_path())),
                Err(_) => (None, None),
            };
            out.push(DirEntry {
                name,
                raw_name: OsString::from_vec(raw),
                kind,
                is_symlink: ftype == RType::Symlink,
                target,
            });
        }
        out.sort_by(|a, b| a.raw_name.as_bytes().cmp(b.raw_name.as_bytes()));
        self.record(|l| {
            l.dirs.insert(lexical(host_path));
        });
        Ok(out)
    }

    /// Apparent size of a directory tree like `du -sb`: `st_size` of every entry,
    /// symlinks not followed, hard-linked files counted once, staying inside the
    /// root. Unreadable subtrees are listed, not fatal. The walk goes through
    /// directory descriptors (`openat(O_NOFOLLOW)` per subdirectory) and stops
    /// after [`MAX_DIR_SIZE_ENTRIES`] entries with [`ReadError::Limit`].
    pub(crate) fn dir_size(&self, host_path: &str) -> Result<DirSize, ReadError> {
        let (fd, resolved) = self.open_dir(host_path)?;
        self.record(|l| {
            l.dir_sizes.insert(lexical(host_path));
        });
        let mut seen: HashSet<(u64, u64)> = HashSet::new();
        let top = rfs::fstat(&fd).map_err(errno)?;
        let mut size = DirSize {
            bytes: top.st_size as u64,
            entries: 1,
            unreadable: Vec::new(),
        };
        // (directory stream, its descriptor for *at calls, its host path)
        let mut stack: Vec<(rfs::Dir, OwnedFd, String)> = Vec::new();
        let dup = fd.try_clone()?;
        stack.push((
            rfs::Dir::new(fd).map_err(errno)?,
            dup,
            comps_host_path(&resolved),
        ));
        loop {
            let depth = stack.len();
            let Some((dir, dfd, path)) = stack.last_mut() else {
                break;
            };
            let Some(entry) = dir.read() else {
                stack.pop();
                continue;
            };
            let Ok(entry) = entry else {
                size.unreadable.push(path.clone());
                stack.pop();
                continue;
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            size.entries += 1;
            if size.entries > MAX_DIR_SIZE_ENTRIES {
                return Err(ReadError::Limit(format!(
                    "more than {MAX_DIR_SIZE_ENTRIES} entries below `{}`; driftaudit stops counting there (capture `du -sb` of it into a snapshot's captures/du.txt to decide)",
                    comps_host_path(&resolved)
                )));
            }
            let child = join_host(path, &escape_name(name));
            let st = match rfs::statat(&*dfd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(_) => {
                    size.unreadable.push(child);
                    continue;
                }
            };
            let ftype = RType::from_raw_mode(st.st_mode);
            if ftype != RType::Directory
                && st.st_nlink > 1
                && !seen.insert((st.st_dev, st.st_ino as u64))
            {
                size.entries -= 1;
                continue;
            }
            size.bytes += st.st_size as u64;
            if ftype == RType::Directory {
                if depth >= MAX_WALK_DEPTH {
                    size.unreadable.push(child);
                    continue;
                }
                let sub = rfs::openat(
                    &*dfd,
                    name,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                );
                let opened = sub.map_err(errno).and_then(|fd| {
                    let dup = fd.try_clone()?;
                    Ok((rfs::Dir::new(fd).map_err(errno)?, dup))
                });
                match opened {
                    Ok((d, f)) => {
                        stack.push((d, f, child));
                    }
                    Err(_) => size.unreadable.push(child),
                }
            }
        }
        Ok(size)
    }

    /// Read exactly `len` bytes from the start of a block device (an ext4
    /// superblock needs 2048). Live hosts only: a snapshot holds captures, not
    /// devices (`NotFound`). Opened read-only, non-blocking, never as a
    /// controlling terminal; anything but a block device or regular file is
    /// refused. At most [`MAX_DEVICE_HEAD`] bytes.
    pub(crate) fn read_block_device_head(
        &self,
        host_path: &str,
        len: usize,
    ) -> Result<Vec<u8>, ReadError> {
        if self.kind != SourceKind::Live {
            return Err(ReadError::NotFound);
        }
        if len as u64 > MAX_DEVICE_HEAD {
            return Err(ReadError::TooLarge(len as u64));
        }
        let w = self.walk(host_components(host_path)?, true)?;
        let t = RType::from_raw_mode(w.stat.st_mode);
        if !(t == RType::BlockDevice || t == RType::RegularFile) {
            return Err(ReadError::NotRegular(Meta::from_stat(&w.stat).special));
        }
        let mut file = File::from(self.reopen(&w, OFlags::empty())?);
        let mut buf = vec![0u8; len];
        file.read_exact(&mut buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                ReadError::Io(format!("device is shorter than {len} bytes"))
            }
            _ => ReadError::from(e),
        })?;
        Ok(buf)
    }

    /// Read `captures/NAME` of a snapshot (command output with no file on the
    /// host). On a live host, the output read from a running service when
    /// the user asked for it ([`Host::set_live_capture`]); otherwise there
    /// are no captures: `NotFound`.
    pub(crate) fn capture(&self, name: &str) -> Result<String, ReadError> {
        match self.kind {
            SourceKind::Snapshot => self.read_to_string(&format!("/captures/{name}")),
            SourceKind::Live => match self.live_captures.get(name) {
                Some(Ok(text)) => Ok(text.clone()),
                Some(Err(why)) => Err(ReadError::Io(why.clone())),
                None => Err(ReadError::NotFound),
            },
        }
    }

    /// What kind of entry a host path is.
    pub(crate) fn kind_of(&self, host_path: &str) -> Result<EntryKind, ReadError> {
        let meta = match self.stat_of(host_path) {
            Ok(m) => m,
            Err(ReadError::NotFound) => {
                self.record(|l| {
                    l.absent.insert(lexical(host_path));
                });
                return Err(ReadError::NotFound);
            }
            Err(e) => return Err(e),
        };
        self.record(|l| {
            l.probes.insert(lexical(host_path), meta.kind);
        });
        Ok(meta.kind)
    }
}

/// Whether a host path names a file below `/proc/sys` by plain components
/// only (no `.`, `..` or empty one, as a hostile key could spell).
fn is_plain_proc_sys(host_path: &str) -> bool {
    host_path.strip_prefix("/proc/sys/").is_some_and(|rest| {
        rest.split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
    })
}

/// The confined readers of a [`Host`], for driftaudit's own command-line
/// tool, tests, benches and fuzz targets (`driftaudit::unstable::host::Reads`,
/// no semver promise). Embedders open a `Host` and pass it to an audit or
/// a [`Resolver`](crate::Resolver); these primitives are not part of the
/// stable `Host`. Each method is the crate's own reader of that name (see
/// its documentation in `src/host/read.rs` and `src/host/confine.rs`).
pub trait Reads {
    /// Whether the host path exists (inside the root).
    fn exists(&self, host_path: &str) -> bool;
    /// The raw target of a symlink (not resolved); `None` if not a symlink.
    fn read_link(&self, host_path: &str) -> Option<String>;
    /// Unix permission bits of a host path.
    fn mode(&self, host_path: &str) -> Result<u32, ReadError>;
    /// A whole file as bytes, at most [`MAX_FILE_BYTES`].
    fn read_bytes(&self, host_path: &str) -> Result<Vec<u8>, ReadError>;
    /// As [`Reads::read_bytes`] with another cap.
    fn read_bytes_capped(&self, host_path: &str, cap: u64) -> Result<Vec<u8>, ReadError>;
    /// A kernel value (`/proc`, `/sys`) and its permission bits.
    fn read_kernel_value(&self, host_path: &str, cap: u64) -> Result<(Vec<u8>, u32), ReadError>;
    /// A file in pieces of `piece` bytes, each handed to `each` with whether
    /// it is the end; `each` returns how many bytes it used.
    fn read_in_pieces(
        &self,
        host_path: &str,
        cap: u64,
        piece: usize,
        each: impl FnMut(&[u8], bool) -> usize,
    ) -> Result<(), ReadError>;
    /// A whole file as text, with the trust of what it names in turn.
    fn read_to_string_for(
        &self,
        host_path: &str,
        trust: Trust,
    ) -> Result<(String, Trust), ReadError>;
    /// A whole file as text (invalid UTF-8 replaced).
    fn read_to_string(&self, host_path: &str) -> Result<String, ReadError>;
    /// A directory's entries, sorted bytewise.
    fn read_dir(&self, host_path: &str) -> Result<Vec<DirEntry>, ReadError>;
    /// The apparent size of a directory tree.
    fn dir_size(&self, host_path: &str) -> Result<DirSize, ReadError>;
    /// The first `len` bytes of a block device (live host only).
    fn read_block_device_head(&self, host_path: &str, len: usize) -> Result<Vec<u8>, ReadError>;
    /// A snapshot's `captures/NAME`.
    fn capture(&self, name: &str) -> Result<String, ReadError>;
    /// What kind of thing a host path is, after following links inside the root.
    fn kind_of(&self, host_path: &str) -> Result<EntryKind, ReadError>;
    /// The host path a path resolves to inside the root.
    fn resolve(&self, host_path: &str) -> Result<String, ReadError>;
    /// The path on the auditing machine a host path resolves to.
    fn real_path(&self, host_path: &str) -> Result<PathBuf, ReadError>;
    /// Host paths of the files read so far that have more than one hard link.
    fn hard_linked(&self) -> Vec<String>;
    /// What a recording host has seen so far (`None` when not recording).
    fn read_log(&self) -> Option<ReadLog>;
    /// How a snapshot is laid out; `None` for the live host.
    fn layout(&self) -> Option<Layout>;
}

impl Reads for Host {
    fn exists(&self, host_path: &str) -> bool {
        Host::exists(self, host_path)
    }
    fn read_link(&self, host_path: &str) -> Option<String> {
        Host::read_link(self, host_path)
    }
    fn mode(&self, host_path: &str) -> Result<u32, ReadError> {
        Host::mode(self, host_path)
    }
    fn read_bytes(&self, host_path: &str) -> Result<Vec<u8>, ReadError> {
        Host::read_bytes(self, host_path)
    }
    fn read_bytes_capped(&self, host_path: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
        Host::read_bytes_capped(self, host_path, cap)
    }
    fn read_kernel_value(&self, host_path: &str, cap: u64) -> Result<(Vec<u8>, u32), ReadError> {
        Host::read_kernel_value(self, host_path, cap)
    }
    fn read_in_pieces(
        &self,
        host_path: &str,
        cap: u64,
        piece: usize,
        each: impl FnMut(&[u8], bool) -> usize,
    ) -> Result<(), ReadError> {
        Host::read_in_pieces(self, host_path, cap, piece, each)
    }
    fn read_to_string_for(
        &self,
        host_path: &str,
        trust: Trust,
    ) -> Result<(String, Trust), ReadError> {
        Host::read_to_string_for(self, host_path, trust)
    }
    fn read_to_string(&self, host_path: &str) -> Result<String, ReadError> {
        Host::read_to_string(self, host_path)
    }
    fn read_dir(&self, host_path: &str) -> Result<Vec<DirEntry>, ReadError> {
        Host::read_dir(self, host_path)
    }
    fn dir_size(&self, host_path: &str) -> Result<DirSize, ReadError> {
        Host::dir_size(self, host_path)
    }
    fn read_block_device_head(&self, host_path: &str, len: usize) -> Result<Vec<u8>, ReadError> {
        Host::read_block_device_head(self, host_path, len)
    }
    fn capture(&self, name: &str) -> Result<String, ReadError> {
        Host::capture(self, name)
    }
    fn kind_of(&self, host_path: &str) -> Result<EntryKind, ReadError> {
        Host::kind_of(self, host_path)
    }
    fn resolve(&self, host_path: &str) -> Result<String, ReadError> {
        Host::resolve(self, host_path)
    }
    fn real_path(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        Host::real_path(self, host_path)
    }
    fn hard_linked(&self) -> Vec<String> {
        Host::hard_linked(self)
    }
    fn read_log(&self) -> Option<ReadLog> {
        Host::read_log(self)
    }
    fn layout(&self) -> Option<Layout> {
        Host::layout(self)
    }
}

pub(super) fn read_capped(file: File, cap: u64, size: u64) -> Result<Vec<u8>, ReadError> {
    Ok(crate::reader::read_capped_sized(file, cap, size)?)
}
