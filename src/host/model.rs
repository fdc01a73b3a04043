//! The host's state and vocabulary, shared by every room of `host/`: the
//! [`Host`] value with its root descriptor, read budget, read log, memo and
//! walk cache; the caps; the errors, entry kinds, directory entries, sizes,
//! read log and trust a read answers with. Must not open, walk or read
//! anything (the rooms do), and imports no room but `layout`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs;

use std::os::fd::OwnedFd;

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rustix::fs::{self as rfs, FileType as RType};

use serde::Serialize;

use super::layout::{self, Layout};

/// Largest file driftaudit reads in full (16 MiB). Larger files are refused
/// with [`ReadError::TooLarge`]; config files and captures are far smaller.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The longest host name kept, in bytes: the kernel's `HOST_NAME_MAX`
/// (sethostname(2) refuses a longer one). The report repeats the name in
/// every finding and metric, so a longer one read from a snapshot is cut to
/// this many bytes on a character boundary, and the cut is kept as a
/// [`NameCut`] for an input finding.
pub const MAX_HOST_NAME_BYTES: usize = 64;

/// A host name read longer than [`MAX_HOST_NAME_BYTES`]: where it was read
/// and how long it was; the host is named by its first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameCut {
    /// The host path the name was read from (`/snapshot.json`,
    /// `/etc/hostname`, ...); `/` for a snapshot named by its directory.
    pub path: String,
    /// Its length in bytes, as read.
    pub bytes: usize,
}

/// Largest head of a block device [`Reads::read_block_device_head`](super::Reads::read_block_device_head) reads.
pub const MAX_DEVICE_HEAD: u64 = 64 * 1024;

/// Most symlinks followed while resolving one path (as the kernel's ELOOP limit).
pub const MAX_SYMLINKS: usize = crate::reader::MAX_SYMLINKS;

/// Most bytes all readers together read from one host (256 MiB): a budget
/// shared by every clone of a [`Host`]; once spent, reads fail with
/// [`ReadError::Limit`] (an `unknown` finding with the reason). Bounds
/// amplification that stays under the per-file cap (includes of includes).
pub const MAX_HOST_READ_BYTES: u64 = 256 * 1024 * 1024;

/// Deepest directory nesting one path walk or [`Reads::dir_size`](super::Reads::dir_size) descends
/// (each level holds one descriptor).
pub const MAX_WALK_DEPTH: usize = 256;

/// Most entries [`Reads::dir_size`](super::Reads::dir_size) counts below one directory before it
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
    /// could not read it (see [`Reads::read_to_string_for`](super::Reads::read_to_string_for)).
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

/// What a kernel value's read failure means where the kernel refuses the
/// read by design: `net.ipv6.conf.*.stable_secret` answers EIO until a
/// secret is set (net/ipv6/addrconf.c, `addrconf_sysctl_stable_secret`:
/// `if (!write && !secret->initialized) err = -EIO`). `None`: a failure to
/// report.
pub fn expected_refusal(host_path: &str, err: &ReadError) -> Option<&'static str> {
    let eio = matches!(err, ReadError::Io(m) if m.contains("EIO"));
    (eio && host_path.starts_with("/proc/sys/net/ipv6/conf/") && host_path.ends_with("/stable_secret"))
        .then_some("not set: the kernel answers EIO until a stable_secret is written (net/ipv6/addrconf.c), so addresses use no stable-privacy secret")
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

/// One directory entry, as returned by [`Reads::read_dir`](super::Reads::read_dir).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// File name (no directory part) as a host path component: the name
    /// itself when it is UTF-8, otherwise with each invalid byte written
    /// `\xNN` (see [`escape_name`](super::escape_name)); every [`Host`] method reads the bytes
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
    pub(super) root: PathBuf,
    /// `O_PATH` descriptor of the root: every lookup starts here.
    pub(super) root_fd: Arc<OwnedFd>,
    /// Use `openat2(RESOLVE_IN_ROOT)` where the kernel has it.
    pub(super) kernel_resolve: bool,
    /// Files read that have more than one hard link (see [`Host::hard_linked`]).
    pub(super) hard_links: Arc<Mutex<BTreeSet<String>>>,
    /// Bytes read so far and the budget (see [`MAX_HOST_READ_BYTES`]).
    pub(super) read_budget: Arc<ReadBudget>,
    pub(super) kind: SourceKind,
    pub(super) name: String,
    /// The name as read was longer than [`MAX_HOST_NAME_BYTES`] and cut.
    pub(super) name_cut: Option<NameCut>,
    /// How a snapshot is laid out (`None` on the live host).
    pub(super) layout: Option<Layout>,
    /// Every successful read when recording (see [`Host::recording`]).
    pub(super) log: Option<Arc<Mutex<ReadLog>>>,
    /// Directories the walk has opened on the live root (see [`WalkCache`]).
    pub(super) walked: Arc<Mutex<WalkCache>>,
    /// What each path was when first looked at (see [`StatMemo`]).
    pub(super) stats: Arc<Mutex<StatMemo>>,
    /// Command output read from the live host's running services when the
    /// user asked for it (`--mysql`), by capture name: the text, or why it
    /// could not be read (see [`Host::set_live_capture`]).
    pub(super) live_captures: Arc<BTreeMap<String, Result<String, String>>>,
}

/// A path's type and permission bits as the first confined `stat`
/// found them, by lexical host path. The readers ask the same questions
/// several times (the option-file reader looks at `/etc/my.cnf` three times
/// before it reads it, the layout probes each listing it may use), and on a
/// snapshot each answer cost an `openat2`, an `fstat` and a `close`: a
/// generated fleet host made about 385 system calls for 17 files. Only
/// answers are kept, never descriptors, and every read still opens the file
/// confined and checks its type on the descriptor, so a file swapped
/// meanwhile is caught where it matters. The live host remembers the same
/// way (each `.cnf` was stat-ed four times and read twice), so one gather
/// sees one version of each file even while the host changes under it.
/// Kept only while one gather runs ([`Host::remember_stats`]):
/// a `Host` audited again later sees the tree as it is then. At most
/// [`MAX_STAT_MEMO`] paths: a full memo starts over.
#[derive(Debug, Default)]
pub(super) struct StatMemo {
    pub(super) on: bool,
    pub(super) known: HashMap<String, Result<Meta, ReadError>>,
    /// [`Reads::resolve`](super::Reads::resolve)'s answers by lexical path: the option-file reader
    /// and the evidence pass resolve the same files.
    pub(super) resolved: HashMap<String, Result<String, ReadError>>,
    /// Whole files already read in this gather, by lexical path (see
    /// [`FileMemo`]).
    pub(super) files: FileMemo,
    /// Whole directory listings already made in this gather, by lexical
    /// path (the sysctl.d folders and `/proc/sys/net/*/conf` are listed by
    /// two or three readers), at most [`MAX_MEMO_DIR_ENTRIES`] entries in
    /// all.
    pub(super) dirs: HashMap<String, Arc<Vec<DirEntry>>>,
    /// Entries held in `dirs`.
    pub(super) dir_entries: usize,
}

/// The bytes of small files already read in this gather: a
/// snapshot's `snapshot.json` is read by four readers and its `sysctl -a`
/// capture by two, each read costing two confined opens, two `fstat`s, a
/// `read` and two `close`s. One gather so sees one version of each file,
/// as a host audited at one moment should. Every answer is charged to the
/// host's read budget as a read would be; a file larger than
/// [`MAX_MEMO_FILE`], or one past [`MAX_MEMO_BYTES`] in all, is read
/// again each time. `snapshot.json`, read for the host name when the
/// [`Host`] is made, is kept for its first gather.
#[derive(Debug, Default)]
pub(super) struct FileMemo {
    pub(super) bytes: usize,
    pub(super) by_path: HashMap<String, Arc<Vec<u8>>>,
}

/// A descriptor and the host path components it was opened at.
pub(super) type Opened = (OwnedFd, Vec<Vec<u8>>);

/// Largest file [`FileMemo`] keeps.
pub(super) const MAX_MEMO_FILE: usize = 256 * 1024;
/// Most bytes [`FileMemo`] keeps for one gather.
pub(super) const MAX_MEMO_BYTES: usize = 4 * 1024 * 1024;

/// While alive, a snapshot host remembers what each path is (see
/// [`StatMemo`]); dropping it forgets.
pub(crate) struct StatsRemembered<'a>(pub(super) &'a Host);

impl Drop for StatsRemembered<'_> {
    fn drop(&mut self) {
        let mut g = self.0.stats.lock().unwrap_or_else(|p| p.into_inner());
        *g = StatMemo::default();
    }
}

/// Most paths [`StatMemo`] remembers at once.
pub(super) const MAX_STAT_MEMO: usize = 4096;
/// Most directory entries [`StatMemo`] keeps listed in one gather.
pub(super) const MAX_MEMO_DIR_ENTRIES: usize = 8192;

/// The live root's intermediate directories as [`Host::walk`] first opened
/// them, keyed by their resolved host path: `/etc`, `/etc/mysql`, `/usr/lib`
/// are on the way to dozens of files, and each visit cost an `openat`, an
/// `fstat` and a `close`. Only the live host keeps one (one per process, and
/// at most [`MAX_WALK_CACHE`] descriptors, so a fleet never holds any). A
/// cached descriptor is the directory the first walk checked: renaming or
/// replacing it later cannot redirect a walk outside the root, it only keeps
/// the audit on the directory it already trusted. Owner and mode are the
/// first walk's `fstat`; the trust check's own `fstat` of every directory on
/// the way ([`Reads::read_to_string_for`](super::Reads::read_to_string_for)) is still made each time.
#[derive(Debug, Default)]
pub(super) struct WalkCache {
    pub(super) dirs: std::collections::HashMap<Vec<u8>, CachedDir>,
}

#[derive(Debug)]
pub(super) struct CachedDir {
    pub(super) fd: Arc<OwnedFd>,
    pub(super) uid: u32,
    pub(super) mode: u32,
}

/// Most directory descriptors the live host's [`WalkCache`] keeps open.
pub(super) const MAX_WALK_CACHE: usize = 64;

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
    /// Paths whose kind was asked ([`Reads::kind_of`](super::Reads::kind_of)) that do not exist:
    /// `snapshot` records them so the snapshot can prove the absence too.
    pub absent: BTreeSet<String>,
    /// Symlinks whose raw target was asked ([`Reads::read_link`](super::Reads::read_link)).
    pub links: BTreeMap<String, String>,
    /// Directories whose size was asked ([`Reads::dir_size`](super::Reads::dir_size)).
    pub dir_sizes: BTreeSet<String>,
    /// Paths resolved ([`Reads::resolve`](super::Reads::resolve)) to another path through a symlink.
    pub resolved: BTreeMap<String, String>,
    /// Permission bits (`st_mode & 0o7777`) of the files read and probed, so
    /// a copy is never more readable than its source.
    pub modes: BTreeMap<String, u32>,
}

/// Who may have chosen a path a reader follows (see
/// [`Reads::read_to_string_for`](super::Reads::read_to_string_for)): root (the default) or a user who controls
/// a file or directory on the way to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    pub(super) uid: Option<u32>,
    pub(super) via: Option<String>,
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
pub(super) struct ReadBudget {
    pub(super) limit: u64,
    pub(super) used: AtomicU64,
}

/// Type and permission bits of a host path.
#[derive(Debug, Clone)]
pub(super) struct Meta {
    pub(super) kind: EntryKind,
    pub(super) special: &'static str,
    pub(super) mode: u32,
}

impl Meta {
    pub(super) fn from_stat(st: &rfs::Stat) -> Meta {
        Meta::from_mode(st.st_mode)
    }

    pub(super) fn from_std(m: &fs::Metadata) -> Meta {
        Meta::from_mode(m.mode())
    }

    pub(super) fn from_mode(mode: u32) -> Meta {
        let t = RType::from_raw_mode(mode);
        Meta {
            kind: kind_of_type(t),
            special: special_kind(t),
            mode,
        }
    }
}

pub(super) fn check_file(m: &Meta) -> Result<(), ReadError> {
    match m.kind {
        EntryKind::Dir => Err(ReadError::WrongKind("is a directory, not a file")),
        EntryKind::Other => Err(ReadError::NotRegular(m.special)),
        EntryKind::File => Ok(()),
    }
}

/// Result of [`Reads::dir_size`](super::Reads::dir_size).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirSize {
    /// Apparent size in bytes.
    pub bytes: u64,
    /// Entries counted.
    pub entries: u64,
    /// Host paths that could not be read (the size is then a lower bound).
    pub unreadable: Vec<String>,
}

pub(super) fn kind_of_type(t: RType) -> EntryKind {
    match t {
        RType::RegularFile => EntryKind::File,
        RType::Directory => EntryKind::Dir,
        _ => EntryKind::Other,
    }
}

pub(super) fn special_kind(t: RType) -> &'static str {
    match t {
        RType::Fifo => "FIFO",
        RType::Socket => "socket",
        RType::BlockDevice => "block device",
        RType::CharacterDevice => "character device",
        RType::Symlink => "symbolic link",
        _ => "special file",
    }
}

impl Host {
    pub(super) fn record(&self, f: impl FnOnce(&mut ReadLog)) {
        if let Some(l) = &self.log {
            let mut g = l.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_eio_of_a_stable_secret_is_an_expected_refusal() {
        let eio = ReadError::Io("input/output error (EIO)".into());
        let p = "/proc/sys/net/ipv6/conf/eth0/stable_secret";
        assert!(expected_refusal(p, &eio).is_some_and(|s| s.starts_with("not set")));
        assert!(expected_refusal(p, &ReadError::PermissionDenied).is_none());
        assert!(expected_refusal("/proc/sys/net/ipv4/tcp_syncookies", &eio).is_none());
        assert!(expected_refusal("/etc/stable_secret", &eio).is_none());
    }
}
