//! Host sources: one read-only interface over the live root `/` or a snapshot
//! directory laid out like `/`. Owns path confinement (symlinks, `..` and
//! absolute paths never leave the root, even while the tree changes: every
//! lookup goes through directory descriptors or `openat2(RESOLVE_IN_ROOT)`),
//! size caps, FIFO/device safety, file names as bytes and the recording read
//! log `snapshot` copies from. Parses no file contents except a snapshot's
//! `snapshot.json` (the host name) and first lines of hostname files; must
//! never write anything.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use rustix::fs::{self as rfs, AtFlags, FileType as RType, Mode, OFlags, ResolveFlags};

use serde::Serialize;

pub mod layout;
pub use layout::Layout;

/// Largest file driftaudit reads in full (16 MiB). Larger files are refused
/// with [`ReadError::TooLarge`]; config files and captures are far smaller.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Largest head of a block device [`Host::read_block_device_head`] reads.
pub const MAX_DEVICE_HEAD: u64 = 64 * 1024;

/// Most symlinks followed while resolving one path (as the kernel's ELOOP limit).
pub const MAX_SYMLINKS: usize = crate::reader::MAX_SYMLINKS;

/// Most bytes all readers together read from one host (256 MiB): a budget
/// shared by every clone of a [`Host`]; once spent, reads fail with
/// [`ReadError::Limit`] (an `unknown` finding with the reason). Bounds
/// amplification that stays under the per-file cap (includes of includes).
pub const MAX_HOST_READ_BYTES: u64 = 256 * 1024 * 1024;

/// Deepest directory nesting one path walk or [`Host::dir_size`] descends
/// (each level holds one descriptor).
pub const MAX_WALK_DEPTH: usize = 256;

/// Most entries [`Host::dir_size`] counts below one directory before it
/// gives up with [`ReadError::Limit`] (a data directory pointed at `/`).
pub const MAX_DIR_SIZE_ENTRIES: u64 = 200_000;

/// Where a host's data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The machine driftaudit runs on.
    Live,
    /// A captured snapshot directory.
    Snapshot,
}

/// Why a path could not be read. Every variant becomes an `unknown` finding
/// (or "absent" for [`ReadError::NotFound`]) with this text as the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// No such file or directory.
    #[error("no such file or directory")]
    NotFound,
    /// Permission denied (EACCES/EPERM).
    #[error("permission denied")]
    PermissionDenied,
    /// The path is a FIFO, socket or device where a file was expected.
    #[error("is a {0}, not a regular file")]
    NotRegular(&'static str),
    /// A directory where a file was expected, or a file where a directory was.
    #[error("{0}")]
    WrongKind(&'static str),
    /// The file is larger than the cap.
    #[error("file is {0} bytes, larger than the {MAX_FILE_BYTES}-byte cap driftaudit reads")]
    TooLarge(u64),
    /// Too many symlinks (a loop).
    #[error("too many levels of symbolic links (more than {MAX_SYMLINKS})")]
    SymlinkLoop,
    /// A bound on work was reached (entries walked, bytes read); the text
    /// says which.
    #[error("{0}")]
    Limit(String),
    /// Not followed: a user other than root controls the way to the file and
    /// could not read it (see [`Host::read_to_string_for`]).
    #[error("{0}")]
    Untrusted(String),
    /// Any other I/O error (EIO on stable_secret, ...).
    #[error("{0}")]
    Io(String),
    /// A directory given as a snapshot holds nothing a snapshot has (see
    /// [`layout::detect`]).
    #[error("not a snapshot: it holds none of {}", layout::SNAPSHOT_MARKERS)]
    NotASnapshot,
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::from(crate::reader::Failure::from(e))
    }
}

impl From<crate::reader::Failure> for ReadError {
    fn from(e: crate::reader::Failure) -> Self {
        use crate::reader::Failure;
        match e {
            Failure::NotFound => ReadError::NotFound,
            Failure::PermissionDenied => ReadError::PermissionDenied,
            Failure::NotRegular(kind) => ReadError::NotRegular(kind),
            Failure::Directory => ReadError::WrongKind(crate::reader::DIRECTORY),
            Failure::TooLarge(n) => ReadError::TooLarge(n),
            Failure::SymlinkLoop => ReadError::SymlinkLoop,
            Failure::Io(e) => ReadError::Io(e),
        }
    }
}

pub use crate::reader::io_message;

/// What kind of thing a host path is (after following symlinks inside the root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Regular file.
    File,
    /// Directory.
    Dir,
    /// Anything else (FIFO, socket, device).
    Other,
}

/// One directory entry, as returned by [`Host::read_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// File name (no directory part) as a host path component: the name
    /// itself when it is UTF-8, otherwise with each invalid byte written
    /// `\xNN` (see [`escape_name`]); every [`Host`] method reads the bytes
    /// back, so `format!("{dir}/{}", e.name)` names this very file.
    pub name: String,
    /// The file name as the bytes the directory holds.
    pub raw_name: OsString,
    /// Kind after resolving symlinks inside the root; `None` if it cannot be resolved
    /// (dangling or looping link, permission denied).
    pub kind: Option<EntryKind>,
    /// Whether the entry itself is a symlink.
    pub is_symlink: bool,
    /// Where the entry resolves to inside the root (a host path), if it resolves.
    pub target: Option<String>,
}

/// A host to audit: the live machine or a snapshot directory, read through one
/// confined interface. Paths given to every method are **host paths**
/// (`/etc/sysctl.conf`); on a snapshot they resolve below its root.
#[derive(Debug, Clone)]
pub struct Host {
    root: PathBuf,
    /// `O_PATH` descriptor of the root: every lookup starts here.
    root_fd: Arc<OwnedFd>,
    /// Use `openat2(RESOLVE_IN_ROOT)` where the kernel has it.
    kernel_resolve: bool,
    /// Files read that have more than one hard link (see [`Host::hard_linked`]).
    hard_links: Arc<Mutex<BTreeSet<String>>>,
    /// Bytes read so far and the budget (see [`MAX_HOST_READ_BYTES`]).
    read_budget: Arc<ReadBudget>,
    kind: SourceKind,
    name: String,
    /// How a snapshot is laid out (`None` on the live host).
    layout: Option<Layout>,
    /// Every successful read when recording (see [`Host::recording`]).
    log: Option<Arc<Mutex<ReadLog>>>,
    /// Directories the walk has opened on the live root (see [`WalkCache`]).
    walked: Arc<Mutex<WalkCache>>,
    /// What each snapshot path was when first looked at (see [`StatMemo`]).
    stats: Arc<Mutex<StatMemo>>,
}

/// A snapshot path's type and permission bits as the first confined `stat`
/// found them, by lexical host path. The readers ask the same questions
/// several times (the option-file reader looks at `/etc/my.cnf` three times
/// before it reads it, the layout probes each listing it may use), and on a
/// snapshot each answer cost an `openat2`, an `fstat` and a `close`: a
/// generated fleet host made about 385 system calls for 17 files. Only
/// answers are kept, never descriptors, and every read still opens the file
/// confined and checks its type on the descriptor, so a file swapped
/// meanwhile is caught where it matters. The live host keeps none (its
/// files change under the audit and are stat-ed through the kernel's own
/// path walk). Kept only while one gather runs ([`Host::remember_stats`]):
/// a `Host` audited again later sees the tree as it is then. At most
/// [`MAX_STAT_MEMO`] paths: a full memo starts over.
#[derive(Debug, Default)]
struct StatMemo {
    on: bool,
    known: HashMap<String, Result<Meta, ReadError>>,
    /// [`Host::resolve`]'s answers by lexical path: the option-file reader
    /// and the evidence pass resolve the same files.
    resolved: HashMap<String, Result<String, ReadError>>,
    /// Whole files already read in this gather, by lexical path (see
    /// [`FileMemo`]).
    files: FileMemo,
}

/// The bytes of small snapshot files already read in this gather: a
/// snapshot's `snapshot.json` is read by four readers and its `sysctl -a`
/// capture by two, each read costing two confined opens, two `fstat`s, a
/// `read` and two `close`s. One gather so sees one version of each file,
/// as a host audited at one moment should. Every answer is charged to the
/// host's read budget as a read would be; a file larger than
/// [`MAX_MEMO_FILE`], or one past [`MAX_MEMO_BYTES`] in all, is read
/// again each time. `snapshot.json`, read for the host name when the
/// [`Host`] is made, is kept for its first gather.
#[derive(Debug, Default)]
struct FileMemo {
    bytes: usize,
    by_path: HashMap<String, Arc<Vec<u8>>>,
}

/// A descriptor and the host path components it was opened at.
type Opened = (OwnedFd, Vec<Vec<u8>>);

/// Largest file [`FileMemo`] keeps.
const MAX_MEMO_FILE: usize = 256 * 1024;
/// Most bytes [`FileMemo`] keeps for one gather.
const MAX_MEMO_BYTES: usize = 4 * 1024 * 1024;

/// While alive, a snapshot host remembers what each path is (see
/// [`StatMemo`]); dropping it forgets.
pub(crate) struct StatsRemembered<'a>(&'a Host);

impl Drop for StatsRemembered<'_> {
    fn drop(&mut self) {
        let mut g = self.0.stats.lock().unwrap_or_else(|p| p.into_inner());
        *g = StatMemo::default();
    }
}

/// Most snapshot paths [`StatMemo`] remembers at once.
const MAX_STAT_MEMO: usize = 4096;

/// The live root's intermediate directories as [`Host::walk`] first opened
/// them, keyed by their resolved host path: `/etc`, `/etc/mysql`, `/usr/lib`
/// are on the way to dozens of files, and each visit cost an `openat`, an
/// `fstat` and a `close`. Only the live host keeps one (one per process, and
/// at most [`MAX_WALK_CACHE`] descriptors, so a fleet never holds any). A
/// cached descriptor is the directory the first walk checked: renaming or
/// replacing it later cannot redirect a walk outside the root, it only keeps
/// the audit on the directory it already trusted. Owner and mode are the
/// first walk's `fstat`; the trust check's own `fstat` of every directory on
/// the way ([`Host::read_to_string_for`]) is still made each time.
#[derive(Debug, Default)]
struct WalkCache {
    dirs: std::collections::HashMap<Vec<u8>, CachedDir>,
}

#[derive(Debug)]
struct CachedDir {
    fd: Arc<OwnedFd>,
    uid: u32,
    mode: u32,
}

/// Most directory descriptors the live host's [`WalkCache`] keeps open.
const MAX_WALK_CACHE: usize = 64;

/// What a recording [`Host`] saw: the data `driftaudit snapshot` copies.
/// Keys are host paths as the readers asked for them (lexically normalised).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadLog {
    /// Files read in full, with the bytes read.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Directories listed.
    pub dirs: BTreeSet<String>,
    /// Paths whose kind was asked (`exists`, `kind_of`, `mode`) and exist.
    pub probes: BTreeMap<String, EntryKind>,
    /// Paths whose kind was asked ([`Host::kind_of`]) that do not exist:
    /// `snapshot` records them so the snapshot can prove the absence too.
    pub absent: BTreeSet<String>,
    /// Symlinks whose raw target was asked ([`Host::read_link`]).
    pub links: BTreeMap<String, String>,
    /// Directories whose size was asked ([`Host::dir_size`]).
    pub dir_sizes: BTreeSet<String>,
    /// Paths resolved ([`Host::resolve`]) to another path through a symlink.
    pub resolved: BTreeMap<String, String>,
    /// Permission bits (`st_mode & 0o7777`) of the files read and probed, so
    /// a copy is never more readable than its source.
    pub modes: BTreeMap<String, u32>,
}

impl Host {
    fn with_root(root: PathBuf, kind: SourceKind) -> Result<Host, ReadError> {
        let fd = rfs::open(
            &root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        Ok(Host {
            root,
            root_fd: Arc::new(fd),
            kind,
            name: String::new(),
            layout: None,
            log: None,
            walked: Arc::default(),
            stats: Arc::default(),
            kernel_resolve: true,
            hard_links: Arc::default(),
            read_budget: Arc::new(ReadBudget {
                limit: MAX_HOST_READ_BYTES,
                used: AtomicU64::new(0),
            }),
        })
    }

    /// The live machine (`/`).
    pub fn live() -> Host {
        let name = fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| fs::read_to_string("/etc/hostname"))
            .map(|s| s.trim().to_string())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        // `/` always opens (O_PATH needs no permission on the directory).
        let mut h = Host::with_root(PathBuf::from("/"), SourceKind::Live)
            .expect("the root directory `/` can be opened");
        h.name = name;
        h
    }

    /// The live machine, remembering every path read, listed or probed (see
    /// [`Host::read_log`]), so a snapshot can copy exactly what an audit reads.
    pub fn recording() -> Host {
        let mut h = Host::live();
        h.log = Some(Arc::new(Mutex::new(ReadLog::default())));
        h
    }

    /// The same host, resolving snapshot paths with the `openat` walk only
    /// (never `openat2`): what kernels before 5.6 get. For tests of the
    /// fallback.
    #[doc(hidden)]
    pub fn without_openat2(mut self) -> Host {
        self.kernel_resolve = false;
        self
    }

    /// The same host with another total read budget (bytes; see
    /// [`MAX_HOST_READ_BYTES`]), shared by its clones.
    pub fn with_read_budget(mut self, bytes: u64) -> Host {
        self.read_budget = Arc::new(ReadBudget {
            limit: bytes,
            used: AtomicU64::new(0),
        });
        self
    }

    /// Bytes read from this host so far, by all readers and clones.
    pub fn bytes_read(&self) -> u64 {
        self.read_budget.used.load(Ordering::Relaxed)
    }

    /// What a recording host has seen so far (`None` when not recording).
    pub fn read_log(&self) -> Option<ReadLog> {
        self.log.as_ref().map(|l| {
            l.lock()
                .map(|g| g.clone())
                .unwrap_or_else(|p| p.into_inner().clone())
        })
    }

    fn record(&self, f: impl FnOnce(&mut ReadLog)) {
        if let Some(l) = &self.log {
            let mut g = l.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut g);
        }
    }

    /// A snapshot directory laid out like `/` (driftaudit's own, a hand-made
    /// tree or an extracted sosreport, see [`Layout`]). A directory that is
    /// none of these is [`ReadError::NotASnapshot`]. The host name comes from
    /// `snapshot.json`, then the layout's `hostname` capture (sosreport), then
    /// `etc/hostname`, then the directory name.
    ///
    /// ```
    /// let host = driftaudit::Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story"))?;
    /// assert_eq!(host.name(), "web-backend-02");
    /// // Host paths are absolute and stay inside the snapshot.
    /// assert!(host.read_to_string("/etc/sysctl.d/60-perf.conf")?.contains("tcp_tw_recycle"));
    /// # Ok::<(), driftaudit::ReadError>(())
    /// ```
    pub fn snapshot(dir: impl AsRef<Path>) -> Result<Host, ReadError> {
        let dir = dir.as_ref();
        let meta = fs::metadata(dir)?;
        if !meta.is_dir() {
            return Err(ReadError::WrongKind("snapshot path is not a directory"));
        }
        let root = fs::canonicalize(dir)?;
        let layout = layout::detect(&root).ok_or(ReadError::NotASnapshot)?;
        let mut host = Host::with_root(root, SourceKind::Snapshot)?;
        host.layout = Some(layout);
        let first_line = |path: &str| {
            host.read_to_string(path)
                .ok()
                .map(|s| s.lines().next().unwrap_or("").trim().to_string())
                .filter(|s| !s.is_empty())
        };
        host.name = host
            .snapshot_json_hostname()
            .or_else(|| layout.hostname().iter().find_map(|p| first_line(p)))
            .or_else(|| first_line("/etc/hostname"))
            .unwrap_or_else(|| {
                dir.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "snapshot".into())
            });
        Ok(host)
    }

    fn snapshot_json_hostname(&self) -> Option<String> {
        let bytes = self.read_bytes("/snapshot.json").ok()?;
        // Kept for the first gather, which reads it again (see [`FileMemo`]).
        if bytes.len() <= MAX_MEMO_FILE {
            let seed = Arc::new(bytes.clone());
            self.memo(|m| {
                m.files.bytes += seed.len();
                m.files.by_path.insert("/snapshot.json".to_string(), seed);
            });
        }
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("host")?
            .as_str()
            .map(str::to_string)
            .filter(|s| !s.is_empty())
    }

    /// Host name used in reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Live or snapshot.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// How a snapshot is laid out; `None` for the live host.
    pub fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// The directory on the auditing machine that plays the role of `/`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Walk a path from the root directory descriptor one component at a
    /// time: `openat(O_PATH | O_NOFOLLOW)` relative to the directory reached
    /// so far, symlinks read with `readlinkat` and expanded here (absolute
    /// targets restart at the root), `..` pops the directories walked (it
    /// never goes above the root, whatever is renamed meanwhile). Nothing is
    /// ever looked up by a path of more than one component, so swapping a
    /// directory for a symlink during the walk cannot lead outside the root.
    fn walk(&self, comps: Vec<Vec<u8>>, follow_last: bool) -> Result<Walked, ReadError> {
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
    fn reopen(&self, w: &Walked, extra: OFlags) -> Result<OwnedFd, ReadError> {
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
    fn open_in_root(&self, comps: &[Vec<u8>], flags: OFlags) -> Option<Result<OwnedFd, ReadError>> {
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
    fn openat2_works(&self) -> bool {
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
    fn stat_in_root(&self, host_path: &str) -> Result<rfs::Stat, ReadError> {
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
    fn open_in_root_noted(
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

    /// Remember [`Host::resolve`]'s answer for a lexical path.
    fn note_resolved(&self, key: String, got: Result<String, ReadError>) {
        self.memo(|m| {
            if m.resolved.len() >= MAX_STAT_MEMO {
                m.resolved.clear();
            }
            m.resolved.insert(key, got);
        });
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
    pub fn resolve(&self, host_path: &str) -> Result<String, ReadError> {
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

    fn resolve_uncached(&self, host_path: &str) -> Result<String, ReadError> {
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
    fn open_link_free(
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

    /// Whether this gather remembers answers (a snapshot inside
    /// [`Host::remember_stats`], not recording a read log).
    fn memo_on(&self) -> bool {
        self.kind == SourceKind::Snapshot && self.log.is_none() && self.memo(|m| m.on)
    }

    fn memo<R>(&self, f: impl FnOnce(&mut StatMemo) -> R) -> R {
        let mut g = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// The real path on the auditing machine for a host path, after confined
    /// resolution. For messages only: opening it by path would walk it again
    /// outside the confinement; read through the other methods.
    pub fn real_path(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        let w = self.walk(host_components(host_path)?, true)?;
        let mut p = self.root.clone();
        for (_, c) in w.stack.iter().chain(w.last.iter()) {
            p.push(OsStr::from_bytes(c));
        }
        Ok(p)
    }

    /// What kind of entry a host path is.
    pub fn kind_of(&self, host_path: &str) -> Result<EntryKind, ReadError> {
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

    fn stat_of(&self, host_path: &str) -> Result<Meta, ReadError> {
        Ok(match self.kind {
            // On the live root confinement is the identity: let the kernel
            // follow links in one stat instead of one lstat per component.
            SourceKind::Live => Meta::from_std(&fs::metadata(live_path(host_path)?)?),
            SourceKind::Snapshot => {
                let key = self.memo_on().then(|| lexical(host_path));
                if let Some(k) = &key {
                    if let Some(known) = self.memo(|m| m.known.get(k).cloned()) {
                        return known;
                    }
                }
                let got = self.stat_in_root(host_path).map(|st| Meta::from_stat(&st));
                if let Some(k) = key {
                    self.memo(|m| {
                        if m.known.len() >= MAX_STAT_MEMO {
                            m.known.clear();
                        }
                        m.known.insert(k, got.clone());
                    });
                }
                got?
            }
        })
    }

    /// Remember what each snapshot path is until the guard is dropped (one
    /// gather: see [`StatMemo`]). No effect on the live host.
    pub(crate) fn remember_stats(&self) -> StatsRemembered<'_> {
        let mut g = self.stats.lock().unwrap_or_else(|p| p.into_inner());
        g.on = self.kind == SourceKind::Snapshot;
        drop(g);
        StatsRemembered(self)
    }

    /// Whether the host path exists (inside the root).
    pub fn exists(&self, host_path: &str) -> bool {
        self.kind_of(host_path).is_ok()
    }

    /// The raw target of a symlink (not resolved), e.g. `/dev/null` for a masked
    /// sysctl.d file; `None` if the path is not a symlink.
    pub fn read_link(&self, host_path: &str) -> Option<String> {
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
    pub fn mode(&self, host_path: &str) -> Result<u32, ReadError> {
        let meta = self.stat_of(host_path)?;
        self.record(|l| {
            l.probes.insert(lexical(host_path), meta.kind);
            l.modes.insert(lexical(host_path), meta.mode & 0o7777);
        });
        Ok(meta.mode)
    }

    /// Read a whole file as bytes, at most [`MAX_FILE_BYTES`]. FIFOs, sockets and
    /// devices are refused without opening them for a blocking read.
    pub fn read_bytes(&self, host_path: &str) -> Result<Vec<u8>, ReadError> {
        self.read_bytes_capped(host_path, MAX_FILE_BYTES)
    }

    /// Host paths of the files read so far that have more than one hard
    /// link (`st_nlink > 1`). A hard link cannot be told from any other file
    /// by its path, so one inside a snapshot may name a file outside it
    /// (docs/snapshot-format.md, Confinement); reports list them once.
    pub fn hard_linked(&self) -> Vec<String> {
        let g = self.hard_links.lock().unwrap_or_else(|p| p.into_inner());
        g.iter().cloned().collect()
    }

    /// Open a regular file for reading, confined; with its link count and
    /// permission bits. The type is checked before the open, so a device or
    /// FIFO is never opened for reading, and again on the descriptor after it.
    fn open_file_nlink(&self, host_path: &str) -> Result<(File, u64, u32, u64), ReadError> {
        let fd = match self.kind {
            // On the live root the kernel resolves links itself (same result
            // as the confined walk, whose root is `/`), in one stat instead
            // of one per component.
            SourceKind::Live => {
                let o = crate::reader::open_regular(&live_path(host_path)?)?;
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
    fn open_snapshot_file(&self, host_path: &str) -> Result<(OwnedFd, rfs::Stat), ReadError> {
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
    pub fn read_kernel_value(
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
        let o = match crate::reader::open_regular(&live_path(host_path)?) {
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
        let bytes = crate::reader::read_capped_sized(o.file, cap, o.size)?;
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
    pub fn read_in_pieces(
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
    pub fn read_bytes_capped(&self, host_path: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
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
        if let Some(k) = key {
            self.memo(|m| {
                let f = &mut m.files;
                if bytes.len() <= MAX_MEMO_FILE && f.bytes + bytes.len() <= MAX_MEMO_BYTES {
                    f.bytes += bytes.len();
                    f.by_path.insert(k, Arc::new(bytes.clone()));
                }
            });
        }
        Ok(bytes)
    }

    /// Before reading an opened file: note a hard link, and what is left of
    /// the host's read budget (none is [`ReadError::Limit`]).
    fn start_read(&self, host_path: &str, nlink: u64) -> Result<u64, ReadError> {
        if nlink > 1 {
            let mut g = self.hard_links.lock().unwrap_or_else(|p| p.into_inner());
            g.insert(lexical(host_path));
        }
        let b = &self.read_budget;
        match b.limit.saturating_sub(b.used.load(Ordering::Relaxed)) {
            0 => Err(self.budget_spent()),
            left => Ok(left),
        }
    }

    fn budget_spent(&self) -> ReadError {
        ReadError::Limit(format!(
            "the read budget of {} bytes for this host is spent (driftaudit reads at most that much from one host)",
            self.read_budget.limit
        ))
    }

    /// Read an opened file within the caps and the host's budget, and log it.
    fn finish_read(
        &self,
        host_path: &str,
        file: File,
        (nlink, mode, size): (u64, u32, u64),
        cap: u64,
    ) -> Result<Vec<u8>, ReadError> {
        let left = self.start_read(host_path, nlink)?;
        let b = &self.read_budget;
        let bytes = match read_capped(file, cap.min(left), size) {
            Err(ReadError::TooLarge(_)) if left < cap => {
                // What was read counts: the budget is spent.
                b.used.fetch_max(b.limit, Ordering::Relaxed);
                return Err(self.budget_spent());
            }
            r => r?,
        };
        b.used.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.record(|l| {
            l.files.insert(lexical(host_path), bytes.clone());
            l.modes.insert(lexical(host_path), mode);
        });
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
    pub fn read_to_string_for(
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
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Ok((text, Trust { uid: user, via }))
    }

    /// Read a whole file as text. Invalid UTF-8 is replaced (Latin-1 comments in
    /// old config files must not make a file unreadable); NUL bytes are kept.
    pub fn read_to_string(&self, host_path: &str) -> Result<String, ReadError> {
        let bytes = self.read_bytes(host_path)?;
        Ok(match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Open a directory for listing, confined; returns its resolved
    /// components too.
    fn open_dir(&self, host_path: &str) -> Result<(OwnedFd, Vec<Vec<u8>>), ReadError> {
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
    pub fn read_dir(&self, host_path: &str) -> Result<Vec<DirEntry>, ReadError> {
        let (fd, resolved) = self.open_dir(host_path)?;
        let resolved_path = comps_host_path(&resolved);
        let dir_fd = fd.try_clone().map_err(ReadError::from)?;
        let mut dir = rfs::Dir::new(fd).map_err(errno)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(errno)?;
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." {
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
    pub fn dir_size(&self, host_path: &str) -> Result<DirSize, ReadError> {
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
    pub fn read_block_device_head(
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
    /// host). On a live host there are no captures: `NotFound`.
    pub fn capture(&self, name: &str) -> Result<String, ReadError> {
        match self.kind {
            SourceKind::Snapshot => self.read_to_string(&format!("/captures/{name}")),
            SourceKind::Live => Err(ReadError::NotFound),
        }
    }
}

/// Who may have chosen a path a reader follows (see
/// [`Host::read_to_string_for`]): root (the default) or a user who controls
/// a file or directory on the way to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    uid: Option<u32>,
    via: Option<String>,
}

impl Trust {
    /// Paths chosen by root.
    pub fn root() -> Trust {
        Trust::default()
    }

    /// Paths chosen by `uid`, because of `via` (a host path it controls).
    pub fn user(uid: u32, via: &str) -> Trust {
        Trust {
            uid: (uid != 0).then_some(uid),
            via: Some(via.to_string()),
        }
    }

    /// The user who controls the path, if not root.
    pub fn uid(&self) -> Option<u32> {
        self.uid
    }
}

/// The total read budget of one host.
#[derive(Debug)]
struct ReadBudget {
    limit: u64,
    used: AtomicU64,
}

/// Where a confined walk ended.
struct Walked {
    /// The directories walked to the parent of the final object, with their
    /// names (the root itself is not in it).
    stack: Vec<(Arc<OwnedFd>, Vec<u8>)>,
    /// The final object (an `O_PATH` descriptor) and its name; `None` for
    /// the root itself.
    last: Option<(Arc<OwnedFd>, Vec<u8>)>,
    /// `fstat` of the final object.
    stat: rfs::Stat,
    /// Symlinks followed.
    links: usize,
    /// Owner, mode and resolved host path of every object the walk opened
    /// (directories, links, the final object), in order.
    seen: Vec<(u32, u32, String)>,
}

impl Walked {
    fn comps(&self) -> Vec<Vec<u8>> {
        self.stack
            .iter()
            .chain(self.last.iter())
            .map(|(_, c)| c.clone())
            .collect()
    }

    fn host_path(&self) -> String {
        comps_host_path(&self.comps())
    }
}

fn comps_host_path(comps: &[Vec<u8>]) -> String {
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

/// Type and permission bits of a host path.
#[derive(Debug, Clone)]
struct Meta {
    kind: EntryKind,
    special: &'static str,
    mode: u32,
}

impl Meta {
    fn from_stat(st: &rfs::Stat) -> Meta {
        Meta::from_mode(st.st_mode)
    }

    fn from_std(m: &fs::Metadata) -> Meta {
        Meta::from_mode(m.mode())
    }

    fn from_mode(mode: u32) -> Meta {
        let t = RType::from_raw_mode(mode);
        Meta {
            kind: kind_of_type(t),
            special: special_kind(t),
            mode,
        }
    }
}

fn check_file(m: &Meta) -> Result<(), ReadError> {
    match m.kind {
        EntryKind::Dir => Err(ReadError::WrongKind("is a directory, not a file")),
        EntryKind::Other => Err(ReadError::NotRegular(m.special)),
        EntryKind::File => Ok(()),
    }
}

fn changed() -> ReadError {
    ReadError::Io("changed while being read (replaced during the audit)".into())
}

fn errno(e: rustix::io::Errno) -> ReadError {
    ReadError::from(std::io::Error::from_raw_os_error(e.raw_os_error()))
}

/// `openat2` availability, learnt on first use.
static OPENAT2: AtomicU8 = AtomicU8::new(OPENAT2_UNKNOWN);
const OPENAT2_UNKNOWN: u8 = 0;
const OPENAT2_YES: u8 = 1;
const OPENAT2_NO: u8 = 2;

/// Result of [`Host::dir_size`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirSize {
    /// Apparent size in bytes.
    pub bytes: u64,
    /// Entries counted.
    pub entries: u64,
    /// Host paths that could not be read (the size is then a lower bound).
    pub unreadable: Vec<String>,
}

fn kind_of_type(t: RType) -> EntryKind {
    match t {
        RType::RegularFile => EntryKind::File,
        RType::Directory => EntryKind::Dir,
        _ => EntryKind::Other,
    }
}

fn special_kind(t: RType) -> &'static str {
    match t {
        RType::Fifo => "FIFO",
        RType::Socket => "socket",
        RType::BlockDevice => "block device",
        RType::CharacterDevice => "character device",
        RType::Symlink => "symbolic link",
        _ => "special file",
    }
}

fn read_capped(file: File, cap: u64, size: u64) -> Result<Vec<u8>, ReadError> {
    Ok(crate::reader::read_capped_sized(file, cap, size)?)
}

/// A host path on the live root, as an absolute path of this machine.
fn live_path(host_path: &str) -> Result<PathBuf, ReadError> {
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

/// The components of a host path as file-name bytes (`\xNN` escapes read
/// back, see [`escape_name`]), `.` and empty parts dropped, `..` kept.
fn host_components(host_path: &str) -> Result<Vec<Vec<u8>>, ReadError> {
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
fn byte_components(path: &[u8]) -> Vec<Vec<u8>> {
    path.split(|b| *b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .map(<[u8]>::to_vec)
        .collect()
}

/// A file name (bytes) as a host path component: UTF-8 names as they are;
/// each byte that is not part of valid UTF-8 as `\xNN` (lowercase hex), and
/// a backslash that would read as such an escape as `\x5c`. The mapping is
/// one-to-one, so a name with invalid UTF-8 and its U+FFFD look-alike stay
/// two files, and [`Host`] methods turn the escapes back into bytes.
pub fn escape_name(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        let valid = chunk.valid();
        let mut rest = valid;
        while let Some(i) = rest.find('\\') {
            out.push_str(&rest[..i]);
            if is_escape(&rest.as_bytes()[i..]) {
                out.push_str("\\x5c");
            } else {
                out.push('\\');
            }
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Whether `s` starts with `\xNN` (two hex digits).
fn is_escape(s: &[u8]) -> bool {
    s.len() >= 4
        && s[0] == b'\\'
        && s[1] == b'x'
        && s[2].is_ascii_hexdigit()
        && s[3].is_ascii_hexdigit()
}

/// The bytes of a host path component: `\xNN` escapes read back.
pub fn unescape_name(name: &str) -> Vec<u8> {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if is_escape(&b[i..]) {
            let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Split a path into normal components, dropping `.` and empty parts; `..` is kept.
fn components(path: &str) -> Vec<String> {
    Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            _ => None,
        })
        .collect()
}

/// Lexically normalise a host path: absolute, no `.`, no empty parts, `..`
/// removes the previous part and stops at `/` (as [`Host::resolve`] does).
pub fn lexical(path: &str) -> String {
    // Most paths asked for are already so: `/`, then parts that are
    // neither empty, `.` nor `..`.
    if path.starts_with('/')
        && (path.len() == 1
            || path[1..]
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."))
    {
        return path.to_string();
    }
    normalised(path)
}

/// [`lexical`] part by part.
fn normalised(path: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for c in components(path) {
        if c == ".." {
            out.pop();
        } else {
            out.push(c);
        }
    }
    format!("/{}", out.join("/"))
}

/// Join a host directory path and a name.
pub fn join_host(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    let d = dir.trim_end_matches('/');
    format!("{d}/{name}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn snap() -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("etc/sysctl.d")).unwrap();
        fs::write(dir.path().join("etc/sysctl.conf"), "vm.swappiness = 10\n").unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        (dir, host)
    }

    /// A live-rooted host on a temporary directory (the walk cache is kept
    /// for live hosts only).
    fn live_at(dir: &Path) -> Host {
        Host::with_root(dir.to_path_buf(), SourceKind::Live).unwrap()
    }

    #[test]
    fn the_live_walk_opens_each_directory_once_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("etc/mysql/conf.d")).unwrap();
        for i in 0..3 {
            fs::write(
                dir.path().join(format!("etc/mysql/conf.d/{i}.cnf")),
                format!("[mysqld]\nx={i}\n"),
            )
            .unwrap();
        }
        symlink("mysql/conf.d", dir.path().join("etc/alt")).unwrap();
        let host = live_at(dir.path());
        let cached = |h: &Host| {
            let g = h.walked.lock().unwrap();
            let mut k: Vec<String> = g
                .dirs
                .keys()
                .map(|k| String::from_utf8_lossy(k).into_owned())
                .collect();
            k.sort();
            k
        };
        for i in 0..3 {
            let p = format!("/etc/mysql/conf.d/{i}.cnf");
            let (text, _) = host.read_to_string_for(&p, Trust::root()).unwrap();
            assert_eq!(text, format!("[mysqld]\nx={i}\n"));
            assert_eq!(host.resolve(&p).unwrap(), p);
        }
        // Reached through a link: resolved to the same cached directories.
        assert_eq!(
            host.resolve("/etc/alt/1.cnf").unwrap(),
            "/etc/mysql/conf.d/1.cnf"
        );
        assert_eq!(cached(&host), ["/etc", "/etc/mysql", "/etc/mysql/conf.d"]);
        // The walk's trust record is the same from the cache as from a fresh walk.
        let fresh = live_at(dir.path());
        let a = host
            .walk(host_components("/etc/mysql/conf.d/2.cnf").unwrap(), true)
            .unwrap();
        let b = fresh
            .walk(host_components("/etc/mysql/conf.d/2.cnf").unwrap(), true)
            .unwrap();
        assert_eq!(a.seen, b.seen);
        assert_eq!(a.host_path(), b.host_path());
        // `..` and a missing file behave as without a cache.
        assert_eq!(
            host.resolve("/etc/mysql/conf.d/../../alt/0.cnf").unwrap(),
            "/etc/mysql/conf.d/0.cnf"
        );
        assert!(matches!(
            host.resolve("/etc/mysql/nope/x"),
            Err(ReadError::NotFound)
        ));
        // At most MAX_WALK_CACHE descriptors, however many directories.
        for i in 0..(MAX_WALK_CACHE + 20) {
            fs::create_dir_all(dir.path().join(format!("d{i}/e"))).unwrap();
            fs::write(dir.path().join(format!("d{i}/e/f")), "x").unwrap();
            host.read_bytes_capped(&format!("/d{i}/e/f"), 16).ok();
            // (resolve answers a link-free path without the walk)
            host.read_to_string_for(&format!("/d{i}/e/f"), Trust::root())
                .unwrap();
        }
        assert_eq!(host.walked.lock().unwrap().dirs.len(), MAX_WALK_CACHE);
        // A snapshot keeps none (a fleet holds many hosts at once).
        let snap = Host::snapshot(dir.path()).unwrap();
        snap.resolve("/etc/alt/1.cnf").unwrap();
        assert!(snap.walked.lock().unwrap().dirs.is_empty());
    }

    #[test]
    fn absolute_symlink_resolves_inside_root() {
        let (dir, host) = snap();
        symlink(
            "/etc/sysctl.conf",
            dir.path().join("etc/sysctl.d/99-sysctl.conf"),
        )
        .unwrap();
        assert_eq!(
            host.resolve("/etc/sysctl.d/99-sysctl.conf").unwrap(),
            "/etc/sysctl.conf"
        );
        assert_eq!(
            host.read_to_string("/etc/sysctl.d/99-sysctl.conf").unwrap(),
            "vm.swappiness = 10\n"
        );
    }

    #[test]
    fn dotdot_and_links_cannot_escape() {
        let (dir, host) = snap();
        symlink("../../../../../../etc/shadow", dir.path().join("etc/evil")).unwrap();
        symlink("/etc/passwd", dir.path().join("etc/evil2")).unwrap();
        // Both resolve inside the root, where no such file exists.
        assert_eq!(host.read_to_string("/etc/evil"), Err(ReadError::NotFound));
        assert_eq!(host.read_to_string("/etc/evil2"), Err(ReadError::NotFound));
        assert_eq!(
            host.read_to_string("/../../../etc/passwd"),
            Err(ReadError::NotFound)
        );
        assert_eq!(
            host.resolve("/etc/../../etc/sysctl.conf").unwrap(),
            "/etc/sysctl.conf"
        );
    }

    #[test]
    fn recording_host_logs_reads_listings_links_and_resolutions() {
        let (dir, mut host) = snap();
        symlink(
            "../sysctl.conf",
            dir.path().join("etc/sysctl.d/99-sysctl.conf"),
        )
        .unwrap();
        host.log = Some(Arc::new(Mutex::new(ReadLog::default())));
        host.read_dir("/etc/sysctl.d").unwrap();
        host.read_link("/etc/sysctl.d/99-sysctl.conf").unwrap();
        host.read_to_string("/etc/./sysctl.d/99-sysctl.conf")
            .unwrap();
        host.resolve("/etc/sysctl.d/99-sysctl.conf").unwrap();
        assert!(host.read_to_string("/etc/missing").is_err());
        let log = host.read_log().unwrap();
        assert_eq!(
            log.files.keys().collect::<Vec<_>>(),
            ["/etc/sysctl.d/99-sysctl.conf"]
        );
        assert!(log.dirs.contains("/etc/sysctl.d"));
        assert_eq!(log.links["/etc/sysctl.d/99-sysctl.conf"], "../sysctl.conf");
        assert_eq!(
            log.resolved["/etc/sysctl.d/99-sysctl.conf"],
            "/etc/sysctl.conf"
        );
        assert!(Host::live().read_log().is_none());
    }

    #[test]
    fn name_escapes_are_one_to_one() {
        let names: [&[u8]; 6] = [
            b"50-\xff.conf",
            "50-\u{fffd}.conf".as_bytes(),
            b"50-\\xff.conf",
            b"a\\b",
            b"\\\xfe",
            b"plain",
        ];
        let escaped: BTreeSet<String> = names.iter().map(|n| escape_name(n)).collect();
        assert_eq!(escaped.len(), names.len());
        for n in names {
            assert_eq!(unescape_name(&escape_name(n)), n);
        }
        assert_eq!(escape_name(b"50-\xff.conf"), "50-\\xff.conf");
        assert_eq!(escape_name(b"a\\b"), "a\\b");
    }

    #[test]
    fn hard_linked_files_are_noted_once() {
        let (dir, host) = snap();
        fs::hard_link(
            dir.path().join("etc/sysctl.conf"),
            dir.path().join("etc/sysctl.d/99-sysctl.conf"),
        )
        .unwrap();
        fs::write(dir.path().join("etc/sysctl.d/10-a.conf"), "").unwrap();
        host.read_bytes("/etc/sysctl.d/99-sysctl.conf").unwrap();
        host.read_bytes("/etc/sysctl.d/10-a.conf").unwrap();
        host.clone().read_bytes("/etc/sysctl.conf").unwrap();
        assert_eq!(
            host.hard_linked(),
            ["/etc/sysctl.conf", "/etc/sysctl.d/99-sysctl.conf"]
        );
    }

    #[test]
    fn the_openat_walk_resolves_like_openat2() {
        let (dir, host) = snap();
        symlink("/etc", dir.path().join("etc/sysctl.d/up")).unwrap();
        symlink("../../../etc/sysctl.conf", dir.path().join("etc/rel")).unwrap();
        for h in [host.clone(), host.without_openat2()] {
            assert_eq!(
                h.read_to_string("/etc/sysctl.d/up/sysctl.d/../sysctl.conf")
                    .unwrap(),
                "vm.swappiness = 10\n"
            );
            assert_eq!(
                h.read_to_string("/etc/rel").unwrap(),
                "vm.swappiness = 10\n"
            );
            assert_eq!(h.kind_of("/etc/sysctl.d/up").unwrap(), EntryKind::Dir);
            assert_eq!(
                h.read_to_string("/etc/sysctl.conf/x"),
                Err(ReadError::NotFound)
            );
            assert_eq!(h.read_dir("/").unwrap().len(), 1);
        }
    }

    #[test]
    fn symlink_loop_is_an_error_not_a_hang() {
        let (dir, host) = snap();
        symlink("b", dir.path().join("etc/a")).unwrap();
        symlink("a", dir.path().join("etc/b")).unwrap();
        assert_eq!(host.read_to_string("/etc/a"), Err(ReadError::SymlinkLoop));
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let (dir, host) = snap();
        let p = dir.path().join("etc/fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(
            host.read_to_string("/etc/fifo"),
            Err(ReadError::NotRegular("FIFO"))
        );
    }

    #[test]
    fn oversized_file_is_capped() {
        let (dir, host) = snap();
        fs::write(dir.path().join("etc/big"), vec![b'x'; 2048]).unwrap();
        assert!(matches!(
            host.read_bytes_capped("/etc/big", 1024),
            Err(ReadError::TooLarge(_))
        ));
        assert_eq!(
            host.read_bytes_capped("/etc/big", 4096).unwrap().len(),
            2048
        );
    }

    #[test]
    fn read_dir_is_sorted_bytewise_and_resolves_links() {
        let (dir, host) = snap();
        for n in ["b.conf", "A.conf", "10.conf", "9.conf"] {
            fs::write(dir.path().join("etc/sysctl.d").join(n), "").unwrap();
        }
        symlink("/dev/null", dir.path().join("etc/sysctl.d/mask.conf")).unwrap();
        let names: Vec<_> = host
            .read_dir("/etc/sysctl.d")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            ["10.conf", "9.conf", "A.conf", "b.conf", "mask.conf"]
        );
        let mask = host.read_dir("/etc/sysctl.d").unwrap().pop().unwrap();
        assert!(mask.is_symlink);
        assert_eq!(mask.target.as_deref(), None); // /dev/null does not exist inside the root
    }

    /// The already-lexical fast path gives what the normalisation gives.
    #[test]
    fn lexical_of_a_lexical_path_is_itself_and_others_are_normalised() {
        for p in [
            "/",
            "/etc",
            "/etc/sysctl.conf",
            "//etc",
            "/etc/",
            "/etc//x",
            "/./etc",
            "/etc/.",
            "/etc/..",
            "/etc/../x",
            "/..",
            "etc/x",
            "",
            ".",
            "/etc/.hidden",
            "/etc/..x",
            "/etc/x..",
            "/a/b/../../..",
        ] {
            assert_eq!(lexical(p), normalised(p), "{p:?}");
        }
    }

    /// `resolve` and `read_dir` answer a link-free path with one
    /// `openat2(RESOLVE_NO_SYMLINKS)`: the answer (or error) must be the
    /// walk's for every shape of path, with and without links, `..`, a file
    /// used as a directory, a missing component, a link out of the root.
    #[test]
    fn the_link_free_fast_path_answers_as_the_walk_does() {
        let (dir, host) = snap();
        let d = dir.path();
        fs::create_dir_all(d.join("etc/mysql/conf.d")).unwrap();
        fs::write(d.join("etc/mysql/conf.d/a.cnf"), "[mysqld]\n").unwrap();
        fs::write(d.join("etc/mysql/my.cnf"), "[mysqld]\n").unwrap();
        symlink("mysql/conf.d", d.join("etc/alt")).unwrap();
        symlink("/etc/mysql/my.cnf", d.join("etc/my.cnf")).unwrap();
        symlink("../../../../..", d.join("etc/up")).unwrap();
        let paths = [
            "/etc/sysctl.conf",
            "/etc//sysctl.conf",
            "/./etc/sysctl.conf",
            "/etc/mysql/conf.d/a.cnf",
            "/etc/mysql/conf.d/../my.cnf",
            "/etc/mysql/conf.d/../../sysctl.conf",
            "/../../etc/sysctl.conf",
            "/etc/mysql/..",
            "/..",
            "/",
            "/etc/alt/a.cnf",
            "/etc/my.cnf",
            "/etc/up/etc/sysctl.conf",
            "/etc/sysctl.conf/..",
            "/etc/nope/../sysctl.conf",
            "/etc/nope",
            "/etc/nope/deeper/still",
            "/etc/alt/nope",
            "/etc/up/nope",
            "/etc/sysctl.conf/nope",
            "/etc/mysql/conf.d",
        ];
        for p in paths {
            let walked = host
                .walk(host_components(p).unwrap(), true)
                .map(|w| w.host_path());
            assert_eq!(host.resolve(p), walked, "resolve {p}");
            // the same within a gather, from the memo the second time
            let g = host.remember_stats();
            assert_eq!(host.resolve(p), walked, "resolve {p} (first, memo on)");
            assert_eq!(host.resolve(p), walked, "resolve {p} (memo)");
            drop(g);
            // noted by a stat or a read before it is resolved
            let g = host.remember_stats();
            let _ = host.kind_of(p);
            let _ = host.read_bytes(p);
            assert_eq!(host.resolve(p), walked, "resolve {p} (after a stat)");
            drop(g);
            let listed = host.read_dir(p).map(|v| {
                v.into_iter()
                    .map(|e| (e.name, e.is_symlink))
                    .collect::<Vec<_>>()
            });
            let by_walk = host.walk(host_components(p).unwrap(), true).and_then(|w| {
                if RType::from_raw_mode(w.stat.st_mode) != RType::Directory {
                    return Err(ReadError::WrongKind("is not a directory"));
                }
                Ok(())
            });
            let g = host.remember_stats();
            let _ = host.kind_of(p);
            let listed_in_gather = host.read_dir(p).map(|v| {
                v.into_iter()
                    .map(|e| (e.name, e.is_symlink))
                    .collect::<Vec<_>>()
            });
            drop(g);
            assert_eq!(listed_in_gather, listed, "read_dir {p} in a gather");
            match by_walk {
                Ok(()) => assert!(listed.is_ok(), "read_dir {p}: {listed:?}"),
                Err(e) => assert_eq!(listed.unwrap_err(), e, "read_dir {p}"),
            }
        }
        // the fast path is taken: a link-free path needs no walk, a linked one does
        let comps = host_components("/etc/mysql/conf.d/a.cnf").unwrap();
        assert!(matches!(
            host.open_link_free(&comps, OFlags::PATH),
            Some(Ok(_))
        ));
        let comps = host_components("/etc/nope/x").unwrap();
        assert!(matches!(
            host.open_link_free(&comps, OFlags::PATH),
            Some(Err(ReadError::NotFound))
        ));
        let comps = host_components("/etc/alt/a.cnf").unwrap();
        assert!(host.open_link_free(&comps, OFlags::PATH).is_none());
        // a link before the missing component: the walk decides
        let comps = host_components("/etc/alt/nope").unwrap();
        assert!(host.open_link_free(&comps, OFlags::PATH).is_none());
    }

    /// Within one gather a snapshot file is read once: later reads come
    /// from the memo, are charged to the budget as reads, and a cap the file
    /// exceeds still refuses it; after the gather the file is read anew.
    #[test]
    fn a_gather_reads_a_snapshot_file_once_and_still_charges_and_caps() {
        let (dir, host) = snap();
        let g = host.remember_stats();
        let first = host.read_bytes("/etc/sysctl.conf").unwrap();
        let spent = host.bytes_read();
        fs::write(dir.path().join("etc/sysctl.conf"), "vm.swappiness = 60\n").unwrap();
        assert_eq!(host.read_bytes("/etc/sysctl.conf").unwrap(), first);
        assert_eq!(host.bytes_read(), 2 * spent);
        assert!(matches!(
            host.read_bytes_capped("/etc/sysctl.conf", 4),
            Err(ReadError::TooLarge(_))
        ));
        drop(g);
        assert_eq!(
            host.read_bytes("/etc/sysctl.conf").unwrap(),
            b"vm.swappiness = 60\n"
        );
        // a budget the memo's answer would pass is refused as a read would be
        let small = Host::snapshot(dir.path()).unwrap().with_read_budget(30);
        let g = small.remember_stats();
        assert!(small.read_bytes("/etc/sysctl.conf").is_ok());
        assert!(matches!(
            small.read_bytes("/etc/sysctl.conf"),
            Err(ReadError::Limit(_))
        ));
        drop(g);
    }

    /// A file read in pieces comes whole through `each`, within the cap
    /// and the budget, and a FIFO is refused without blocking.
    #[test]
    fn a_file_read_in_pieces_is_the_file_within_cap_and_budget() {
        let (dir, host) = snap();
        let text: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        fs::write(dir.path().join("etc/big"), &text).unwrap();
        let mut got = Vec::new();
        let mut calls = 0;
        host.read_in_pieces("/etc/big", MAX_FILE_BYTES, 4096, |b, at_end| {
            calls += 1;
            // take all but the last 10 bytes until the end
            let take = if at_end {
                b.len()
            } else {
                b.len().saturating_sub(10)
            };
            got.extend_from_slice(&b[..take]);
            take
        })
        .unwrap();
        assert_eq!(got, text);
        assert!(calls >= 3, "{calls} calls for 10,000 bytes in 4 KiB pieces");
        assert_eq!(host.bytes_read(), 10_000);
        // a reader that can use nothing before the end gets the whole file then
        let mut last = Vec::new();
        host.read_in_pieces("/etc/big", MAX_FILE_BYTES, 4096, |b, at_end| {
            if at_end {
                last = b.to_vec();
            }
            0
        })
        .unwrap();
        assert_eq!(last, text);
        assert!(matches!(
            host.read_in_pieces("/etc/big", 5000, 4096, |b, _| b.len()),
            Err(ReadError::TooLarge(_))
        ));
        let small = Host::snapshot(dir.path()).unwrap().with_read_budget(3000);
        assert!(matches!(
            small.read_in_pieces("/etc/big", MAX_FILE_BYTES, 4096, |b, _| b.len()),
            Err(ReadError::Limit(_))
        ));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("etc/fifo"),
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(matches!(
            host.read_in_pieces("/etc/fifo", MAX_FILE_BYTES, 4096, |b, _| b.len()),
            Err(ReadError::NotRegular(_))
        ));
    }
}
