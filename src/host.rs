//! Host sources: one read-only interface over the live root `/` or a snapshot
//! directory laid out like `/`. Owns path confinement (symlinks, `..` and
//! absolute paths never leave the root), size caps and FIFO/device safety.
//! Must not parse file contents and must never write anything.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

pub mod layout;
pub use layout::Layout;

/// Largest file driftaudit reads in full (16 MiB). Larger files are refused
/// with [`ReadError::TooLarge`]; config files and captures are far smaller.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Largest head of a block device [`Host::read_block_device_head`] reads.
pub const MAX_DEVICE_HEAD: u64 = 64 * 1024;

/// Most symlinks followed while resolving one path (as the kernel's ELOOP limit).
pub const MAX_SYMLINKS: usize = 40;

/// Where a host's data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The machine driftaudit runs on.
    Live,
    /// A captured snapshot directory.
    Snapshot,
}

/// Why a path could not be read. Every variant becomes an `unknown` finding
/// (or "absent" for [`ReadError::NotFound`]) with this text as the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// No such file or directory.
    NotFound,
    /// Permission denied (EACCES/EPERM).
    PermissionDenied,
    /// The path is a FIFO, socket or device where a file was expected.
    NotRegular(&'static str),
    /// A directory where a file was expected, or a file where a directory was.
    WrongKind(&'static str),
    /// The file is larger than the cap.
    TooLarge(u64),
    /// Too many symlinks (a loop).
    SymlinkLoop,
    /// Any other I/O error (EIO on stable_secret, ...).
    Io(String),
    /// A directory given as a snapshot holds nothing a snapshot has (see
    /// [`layout::detect`]).
    NotASnapshot,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotFound => f.write_str("no such file or directory"),
            ReadError::PermissionDenied => f.write_str("permission denied"),
            ReadError::NotRegular(kind) => write!(f, "is a {kind}, not a regular file"),
            ReadError::WrongKind(what) => write!(f, "{what}"),
            ReadError::TooLarge(n) => write!(
                f,
                "file is {n} bytes, larger than the {MAX_FILE_BYTES}-byte cap driftaudit reads"
            ),
            ReadError::SymlinkLoop => write!(
                f,
                "too many levels of symbolic links (more than {MAX_SYMLINKS})"
            ),
            ReadError::Io(e) => f.write_str(e),
            ReadError::NotASnapshot => write!(
                f,
                "not a snapshot: it holds none of {}",
                layout::SNAPSHOT_MARKERS
            ),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::NotFound => ReadError::NotFound,
            ErrorKind::PermissionDenied => ReadError::PermissionDenied,
            _ => match e.raw_os_error() {
                Some(libc::ELOOP) => ReadError::SymlinkLoop,
                Some(libc::ENOTDIR) => ReadError::NotFound,
                Some(libc::EIO) => ReadError::Io("input/output error (EIO)".into()),
                _ => ReadError::Io(e.to_string()),
            },
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

/// One directory entry, as returned by [`Host::read_dir`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// File name (no directory part).
    pub name: String,
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
    kind: SourceKind,
    name: String,
    /// How a snapshot is laid out (`None` on the live host).
    layout: Option<Layout>,
    /// Every successful read when recording (see [`Host::recording`]).
    log: Option<Arc<Mutex<ReadLog>>>,
}

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
    /// Symlinks whose raw target was asked ([`Host::read_link`]).
    pub links: BTreeMap<String, String>,
    /// Directories whose size was asked ([`Host::dir_size`]).
    pub dir_sizes: BTreeSet<String>,
    /// Paths resolved ([`Host::resolve`]) to another path through a symlink.
    pub resolved: BTreeMap<String, String>,
}

impl Host {
    /// The live machine (`/`).
    pub fn live() -> Host {
        let name = fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| fs::read_to_string("/etc/hostname"))
            .map(|s| s.trim().to_string())
            .ok()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        Host {
            root: PathBuf::from("/"),
            kind: SourceKind::Live,
            name,
            layout: None,
            log: None,
        }
    }

    /// The live machine, remembering every path read, listed or probed (see
    /// [`Host::read_log`]), so a snapshot can copy exactly what an audit reads.
    pub fn recording() -> Host {
        let mut h = Host::live();
        h.log = Some(Arc::new(Mutex::new(ReadLog::default())));
        h
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
    /// # Ok::<(), driftaudit::host::ReadError>(())
    /// ```
    pub fn snapshot(dir: impl AsRef<Path>) -> Result<Host, ReadError> {
        let dir = dir.as_ref();
        let meta = fs::metadata(dir)?;
        if !meta.is_dir() {
            return Err(ReadError::WrongKind("snapshot path is not a directory"));
        }
        let root = fs::canonicalize(dir)?;
        let layout = layout::detect(&root).ok_or(ReadError::NotASnapshot)?;
        let mut host = Host {
            root,
            kind: SourceKind::Snapshot,
            name: String::new(),
            layout: Some(layout),
            log: None,
        };
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
        let text = self.read_to_string("/snapshot.json").ok()?;
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

    /// Resolve a host path to a real path below the root, following symlinks
    /// component by component. Absolute link targets restart at the root, `..`
    /// stops at the root: nothing can name a file outside it.
    /// The result is the resolved host path (e.g. `/etc/mysql/mariadb.cnf`).
    pub fn resolve(&self, host_path: &str) -> Result<String, ReadError> {
        let mut resolved: Vec<String> = Vec::new();
        let mut pending: Vec<String> = components(host_path).into_iter().rev().collect();
        let mut links = 0usize;
        while let Some(comp) = pending.pop() {
            if comp == ".." {
                resolved.pop();
                continue;
            }
            resolved.push(comp);
            let real = self.real_path_of(&resolved);
            let meta = match fs::symlink_metadata(&real) {
                Ok(m) => m,
                Err(e) => {
                    // A missing final component is "not found"; a missing middle one too.
                    return Err(e.into());
                }
            };
            if meta.file_type().is_symlink() {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(ReadError::SymlinkLoop);
                }
                let target = fs::read_link(&real)?;
                let target = target.to_string_lossy().into_owned();
                resolved.pop();
                if target.starts_with('/') {
                    resolved.clear();
                }
                for c in components(&target).into_iter().rev() {
                    pending.push(c);
                }
            } else if !pending.is_empty() && !meta.is_dir() {
                return Err(ReadError::NotFound);
            }
        }
        let out = format!("/{}", resolved.join("/"));
        if links > 0 {
            self.record(|l| {
                l.resolved.insert(lexical(host_path), out.clone());
            });
        }
        Ok(out)
    }

    fn real_path_of(&self, comps: &[String]) -> PathBuf {
        let mut p = self.root.clone();
        for c in comps {
            p.push(c);
        }
        p
    }

    /// The real path on the auditing machine for a host path, after confined resolution.
    pub fn real_path(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        let resolved = self.resolve(host_path)?;
        Ok(self.real_path_of(&components(&resolved)))
    }

    /// What kind of entry a host path is.
    pub fn kind_of(&self, host_path: &str) -> Result<EntryKind, ReadError> {
        let meta = match self.kind {
            // On the live root confinement is the identity: let the kernel
            // follow links in one stat instead of one lstat per component.
            SourceKind::Live => fs::metadata(live_path(host_path))?,
            SourceKind::Snapshot => fs::symlink_metadata(self.real_path(host_path)?)?,
        };
        let kind = kind_of_meta(&meta);
        self.record(|l| {
            l.probes.insert(lexical(host_path), kind);
        });
        Ok(kind)
    }

    /// Whether the host path exists (inside the root).
    pub fn exists(&self, host_path: &str) -> bool {
        self.kind_of(host_path).is_ok()
    }

    /// The raw target of a symlink (not resolved), e.g. `/dev/null` for a masked
    /// sysctl.d file; `None` if the path is not a symlink.
    pub fn read_link(&self, host_path: &str) -> Option<String> {
        let parent = Path::new(host_path)
            .parent()?
            .to_string_lossy()
            .into_owned();
        let name = Path::new(host_path)
            .file_name()?
            .to_string_lossy()
            .into_owned();
        let dir = self.resolve(&parent).ok()?;
        let real = self.real_path_of(&components(&join_host(&dir, &name)));
        let target = fs::read_link(real)
            .ok()
            .map(|t| t.to_string_lossy().into_owned());
        if let Some(t) = &target {
            self.record(|l| {
                l.links.insert(lexical(host_path), t.clone());
            });
        }
        target
    }

    /// Unix permission bits of a host path.
    pub fn mode(&self, host_path: &str) -> Result<u32, ReadError> {
        let meta = match self.kind {
            SourceKind::Live => fs::metadata(live_path(host_path))?,
            SourceKind::Snapshot => fs::symlink_metadata(self.real_path(host_path)?)?,
        };
        let kind = kind_of_meta(&meta);
        self.record(|l| {
            l.probes.insert(lexical(host_path), kind);
        });
        Ok(meta.mode())
    }

    /// Read a whole file as bytes, at most [`MAX_FILE_BYTES`]. FIFOs, sockets and
    /// devices are refused without opening them for a blocking read.
    pub fn read_bytes(&self, host_path: &str) -> Result<Vec<u8>, ReadError> {
        self.read_bytes_capped(host_path, MAX_FILE_BYTES)
    }

    /// As [`Host::read_bytes`] with another cap (for example one superblock).
    pub fn read_bytes_capped(&self, host_path: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
        // On the live root the kernel resolves links itself (same result as the
        // confined walk, whose root is `/`), in one stat instead of one per
        // component; the type is still checked before the open, so a device
        // is never opened, and again after it.
        let (real, meta, nofollow) = match self.kind {
            SourceKind::Live => {
                let real = live_path(host_path);
                let meta = fs::metadata(&real)?;
                (real, meta, 0)
            }
            SourceKind::Snapshot => {
                let real = self.real_path(host_path)?;
                let meta = fs::symlink_metadata(&real)?;
                (real, meta, libc::O_NOFOLLOW)
            }
        };
        match kind_of_meta(&meta) {
            EntryKind::Dir => return Err(ReadError::WrongKind("is a directory, not a file")),
            EntryKind::Other => return Err(ReadError::NotRegular(special_kind(&meta))),
            EntryKind::File => {}
        }
        let file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | nofollow | libc::O_NOCTTY)
            .open(&real)?;
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            return Err(ReadError::NotRegular(special_kind(&meta)));
        }
        let bytes = read_capped(file, cap)?;
        self.record(|l| {
            l.files.insert(lexical(host_path), bytes.clone());
        });
        Ok(bytes)
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

    /// List a directory, sorted by name in byte order (as `strcmp`).
    pub fn read_dir(&self, host_path: &str) -> Result<Vec<DirEntry>, ReadError> {
        let resolved = self.resolve(host_path)?;
        let real = self.real_path_of(&components(&resolved));
        let meta = fs::symlink_metadata(&real)?;
        if !meta.is_dir() {
            return Err(ReadError::WrongKind("is not a directory"));
        }
        let mut out = Vec::new();
        for entry in fs::read_dir(&real)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = join_host(&resolved, &name);
            let ftype = entry.file_type().ok();
            let is_symlink = ftype.is_some_and(|t| t.is_symlink());
            // A plain entry of a resolved directory is itself resolved: its kind
            // comes from the directory listing (no stat per path component).
            if let Some(t) = ftype.filter(|t| !t.is_symlink()) {
                let kind = if t.is_file() {
                    EntryKind::File
                } else if t.is_dir() {
                    EntryKind::Dir
                } else {
                    EntryKind::Other
                };
                out.push(DirEntry {
                    name,
                    kind: Some(kind),
                    is_symlink: false,
                    target: Some(child),
                });
                continue;
            }
            let (kind, target) = match self.resolve(&child) {
                Ok(t) => {
                    let k = fs::symlink_metadata(self.real_path_of(&components(&t)))
                        .ok()
                        .map(|m| kind_of_meta(&m));
                    (k, Some(t))
                }
                Err(_) => (None, None),
            };
            out.push(DirEntry {
                name,
                kind,
                is_symlink,
                target,
            });
        }
        out.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        self.record(|l| {
            l.dirs.insert(lexical(host_path));
        });
        Ok(out)
    }

    /// Apparent size of a directory tree like `du -sb`: `st_size` of every entry,
    /// symlinks not followed, hard-linked files counted once, staying inside the
    /// root. Unreadable subtrees are listed, not fatal.
    pub fn dir_size(&self, host_path: &str) -> Result<DirSize, ReadError> {
        let real = self.real_path(host_path)?;
        let meta = fs::symlink_metadata(&real)?;
        if !meta.is_dir() {
            return Err(ReadError::WrongKind("is not a directory"));
        }
        self.record(|l| {
            l.dir_sizes.insert(lexical(host_path));
        });
        let mut seen: HashSet<(u64, u64)> = HashSet::new();
        let mut size = DirSize::default();
        for entry in walkdir::WalkDir::new(&real)
            .follow_links(false)
            .same_file_system(false)
        {
            match entry {
                Ok(e) => {
                    let Ok(m) = e.metadata() else { continue };
                    if !m.is_dir() && m.nlink() > 1 && !seen.insert((m.dev(), m.ino())) {
                        continue;
                    }
                    size.bytes += m.len();
                    size.entries += 1;
                }
                Err(e) => {
                    let p = e
                        .path()
                        .and_then(|p| p.strip_prefix(&self.root).ok())
                        .map(|p| format!("/{}", p.display()))
                        .unwrap_or_else(|| host_path.to_string());
                    size.unreadable.push(p);
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
        let real = self.real_path(host_path)?;
        let meta = fs::symlink_metadata(&real)?;
        let t = meta.file_type();
        if !(t.is_block_device() || t.is_file()) {
            return Err(ReadError::NotRegular(special_kind(&meta)));
        }
        let mut file = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
            .open(&real)?;
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

fn kind_of_meta(meta: &fs::Metadata) -> EntryKind {
    let t = meta.file_type();
    if t.is_file() {
        EntryKind::File
    } else if t.is_dir() {
        EntryKind::Dir
    } else {
        EntryKind::Other
    }
}

fn special_kind(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

fn read_capped(file: File, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    let mut limited = file.take(cap + 1);
    limited.read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        let len = limited
            .into_inner()
            .metadata()
            .map(|m| m.len())
            .unwrap_or(0);
        return Err(ReadError::TooLarge(len.max(cap + 1)));
    }
    Ok(buf)
}

/// A host path on the live root, as an absolute path of this machine.
fn live_path(host_path: &str) -> PathBuf {
    Path::new("/").join(host_path.trim_start_matches('/'))
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
}
