//! The one capped, FIFO-safe way to read a file of this machine: the type is
//! checked before a non-blocking open and again on the descriptor, so a
//! FIFO, socket or device is never read, and no more than the cap is ever
//! read, so `/dev/zero` or a growing file cannot fill memory. Used by the
//! host's readers (`host`) and by the policy loader (`policy::set`). A leaf:
//! imports nothing of the crate; must not confine paths to a root, keep a
//! read log or a budget (that is `host`).

use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Most symbolic links the kernel follows on one path (`ELOOP` beyond).
pub const MAX_SYMLINKS: usize = 40;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// No such file or directory.
    #[error("no such file or directory")]
    NotFound,
    /// Permission denied (EACCES/EPERM).
    #[error("permission denied")]
    PermissionDenied,
    /// A FIFO, socket or device where a file was expected.
    #[error("is a {0}, not a regular file")]
    NotRegular(&'static str),
    /// A directory where a file was expected.
    #[error("{DIRECTORY}")]
    Directory,
    /// The file is larger than the cap (its size, at least cap + 1).
    #[error("file is {0} bytes, larger than the cap")]
    TooLarge(u64),
    /// Too many symbolic links (a loop).
    #[error("too many levels of symbolic links (more than {MAX_SYMLINKS})")]
    SymlinkLoop,
    /// Any other I/O error.
    #[error("{0}")]
    Io(String),
}

/// An I/O error as part of a message in the house style: lowercase and
/// without the `(os error N)` suffix (`No such file or directory (os error
/// 2)` reads `no such file or directory`).
///
/// ```
/// let e = std::io::Error::from_raw_os_error(2);
/// assert_eq!(driftaudit::unstable::host::io_message(&e), "no such file or directory");
/// ```
pub fn io_message(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => &text[..at],
        _ => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The text of [`Failure::Directory`].
pub const DIRECTORY: &str = "is a directory, not a file";

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::NotFound => Failure::NotFound,
            ErrorKind::PermissionDenied => Failure::PermissionDenied,
            _ => match e.raw_os_error() {
                Some(libc::ELOOP) => Failure::SymlinkLoop,
                Some(libc::ENOTDIR) => Failure::NotFound,
                Some(libc::EIO) => Failure::Io("input/output error (EIO)".into()),
                _ => Failure::Io(e.to_string()),
            },
        }
    }
}

/// What a file mode says the file is: `Ok(true)` a regular file,
/// `Ok(false)` a directory, `Err(kind)` anything else (`"FIFO"`, ...).
pub fn kind_of_mode(mode: u32) -> Result<bool, &'static str> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Ok(true),
        libc::S_IFDIR => Ok(false),
        libc::S_IFIFO => Err("FIFO"),
        libc::S_IFSOCK => Err("socket"),
        libc::S_IFBLK => Err("block device"),
        libc::S_IFCHR => Err("character device"),
        libc::S_IFLNK => Err("symbolic link"),
        _ => Err("special file"),
    }
}

/// `Ok` for a regular file's mode, else why it is not read.
pub fn check_regular(mode: u32) -> Result<(), Failure> {
    match kind_of_mode(mode) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Failure::Directory),
        Err(kind) => Err(Failure::NotRegular(kind)),
    }
}

/// An opened regular file with its link count and permission bits.
#[derive(Debug)]
pub struct Opened {
    /// The file, opened read-only and non-blocking.
    pub file: File,
    /// `st_nlink` of the descriptor.
    pub nlink: u64,
    /// Permission bits (`st_mode & 0o7777`) of the descriptor.
    pub mode: u32,
    /// `st_size` of the descriptor (0 for most procfs files): the size
    /// [`read_capped_sized`] reads in one go.
    pub size: u64,
}

/// Open an absolute path of this machine for reading, following links as
/// the kernel does: its type is checked by `stat` before the open (a FIFO
/// or device is never opened for reading), the open is `O_NONBLOCK |
/// O_NOCTTY`, and the descriptor is checked again (a file swapped for a
/// FIFO between the two is refused).
pub fn open_regular(path: &Path) -> Result<Opened, Failure> {
    check_regular(fs::metadata(path)?.mode())?;
    open_known_regular(path)
}

/// Read an opened file to its end, at most `cap` bytes: one byte more is a
/// [`Failure::TooLarge`] with the file's size.
pub fn read_capped(file: File, cap: u64) -> Result<Vec<u8>, Failure> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    read_capped_sized(file, cap, size)
}

/// Bytes a read starts with when the file's size says nothing (procfs).
const FIRST_READ: u64 = 4096;

/// [`read_capped`] for a file whose `st_size` the caller has from its own
/// `fstat`: the buffer starts at that size plus the byte that tells the
/// end, so a regular file takes one `read`, instead of a series doubling
/// from 32 bytes and a last one that returns 0. A read that comes back short
/// once the bytes read reach that size is the end (the kernel fills a
/// regular file's read up to its end); a short read before that (a file
/// that shrank, a FUSE file system's partial read) is followed by more
/// reads until one returns 0. A size of 0 is a kernel file (procfs, sysfs:
/// `st_size` 0) or an empty one: the buffer starts at a page and the file
/// is read until a `read` returns 0, because a seq_file (`/proc/cpuinfo`,
/// `/proc/self/mountinfo`) hands over whole records only and so returns
/// short reads before its end. The size is a hint only: a file that grew
/// meanwhile reads on, within the cap.
pub fn read_capped_sized(file: File, cap: u64, size: u64) -> Result<Vec<u8>, Failure> {
    let limit = cap.saturating_add(1);
    let first = if size == 0 {
        FIRST_READ
    } else {
        size.saturating_add(1)
    };
    // Read into the spare capacity: a 700 KB dpkg status is not zeroed first.
    let mut buf: Vec<u8> = Vec::with_capacity(first.min(limit) as usize);
    loop {
        let len = buf.len();
        if len >= buf.capacity() {
            if len as u64 >= limit {
                let on_disk = file.metadata().map(|m| m.len()).unwrap_or(0);
                return Err(Failure::TooLarge(on_disk.max(limit)));
            }
            let grown = (len as u64).saturating_mul(2).clamp(FIRST_READ, limit);
            buf.reserve_exact(grown as usize - len);
        }
        let n = match rustix::io::read(&file, rustix::buffer::spare_capacity(&mut buf)) {
            Err(rustix::io::Errno::INTR) => continue,
            r => r.map_err(std::io::Error::from)?,
        };
        if buf.len() as u64 > cap {
            let on_disk = file.metadata().map(|m| m.len()).unwrap_or(0);
            return Err(Failure::TooLarge(on_disk.max(limit)));
        }
        if n == 0 || (size > 0 && buf.len() < buf.capacity() && buf.len() as u64 >= size) {
            break;
        }
    }
    Ok(buf)
}

/// [`open_regular`] without its `stat` before the open, for a path the
/// caller knows to be a regular file: one it has just `stat`-ed, or one on
/// procfs, which holds no FIFO or device. The open is still `O_NONBLOCK |
/// O_NOCTTY` and the type is checked on the descriptor. For a path of
/// unknown type use [`open_regular`], whose `stat` keeps a device from
/// being opened at all.
pub fn open_known_regular(path: &Path) -> Result<Opened, Failure> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let now = file.metadata()?;
    check_regular(now.mode())?;
    Ok(Opened {
        file,
        nlink: now.nlink(),
        mode: now.mode() & 0o7777,
        size: now.len(),
    })
}

/// Read a kernel value file whole the way systemd's `read_virtual_file()`
/// does: in one `read` into a buffer larger than the value. A sysctl or
/// sysfs attribute hands over its whole value on the first read (the
/// kernel formats it anew on each read, so a second `read` could see a
/// newer value instead of the end); a read that fills the buffer is made
/// again from the start with a buffer twice as large, up to `cap` (one
/// byte more is a [`Failure::TooLarge`]). Not for seq_files
/// (`/proc/self/mountinfo`, `/proc/cpuinfo`), which hand over whole records
/// only: read those with [`read_capped_sized`].
pub fn read_virtual(file: &File, cap: u64) -> Result<Vec<u8>, Failure> {
    let limit = cap.saturating_add(1);
    let mut size = FIRST_READ.min(limit);
    loop {
        let mut buf: Vec<u8> = Vec::with_capacity(size as usize);
        let n = loop {
            match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buf), 0) {
                Err(rustix::io::Errno::INTR) => continue,
                r => break r.map_err(std::io::Error::from)?,
            }
        };
        if (n as u64) < size {
            return Ok(buf);
        }
        if size >= limit {
            return Err(Failure::TooLarge(limit));
        }
        size = size.saturating_mul(2).min(limit);
    }
}

/// [`open_regular`] then [`read_capped`].
pub fn read_file(path: &Path, cap: u64) -> Result<Vec<u8>, Failure> {
    let o = open_regular(path)?;
    read_capped_sized(o.file, cap, o.size)
}

#[cfg(test)]
mod tests {

    /// A kernel value is read whole in one `read` when it fits the first
    /// buffer, whole over several when it does not, and refused past the cap.
    #[test]
    fn a_virtual_file_is_read_whole_in_one_read_within_the_cap() {
        let o = open_known_regular(Path::new("/proc/sys/kernel/ostype")).unwrap();
        assert_eq!(
            read_virtual(&o.file, 64 * 1024).unwrap(),
            fs::read("/proc/sys/kernel/ostype").unwrap()
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        let text: Vec<u8> = (0..10_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        fs::write(&p, &text).unwrap();
        let f = open_known_regular(&p).unwrap().file;
        assert_eq!(read_virtual(&f, 10_000).unwrap(), text);
        assert_eq!(read_virtual(&f, 9_999), Err(Failure::TooLarge(10_000)));
        // exactly a buffer's worth is not mistaken for more
        fs::write(&p, &text[..4096]).unwrap();
        assert_eq!(read_virtual(&f, 4096).unwrap(), &text[..4096]);
        // the type is checked on the descriptor
        assert_eq!(
            open_known_regular(dir.path()).map(|_| ()),
            Err(Failure::Directory)
        );
    }

    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking_and_a_big_file_is_capped() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(read_file(&fifo, 10), Err(Failure::NotRegular("FIFO")));
        let big = d.path().join("big");
        fs::write(&big, vec![b'x'; 100]).unwrap();
        assert_eq!(read_file(&big, 99), Err(Failure::TooLarge(100)));
        assert_eq!(read_file(&big, 100).unwrap().len(), 100);
        assert_eq!(read_file(d.path(), 100), Err(Failure::Directory));
        assert_eq!(read_file(&d.path().join("none"), 1), Err(Failure::NotFound));
        let small = d.path().join("small");
        fs::write(&small, vec![b'y'; 5000]).unwrap();
        let open = |p: &Path| open_regular(p).unwrap().file;
        // Size hints: exact, too small (the file grew), too large (it shrank),
        // none; the cap one byte short.
        for hint in [5000, 10, 9000, 0] {
            let got = read_capped_sized(open(&small), 5000, hint).unwrap();
            assert_eq!(got, vec![b'y'; 5000], "size hint {hint}");
            assert_eq!(
                read_capped_sized(open(&small), 4999, hint),
                Err(Failure::TooLarge(5000)),
                "size hint {hint}"
            );
        }
        assert_eq!(
            read_capped_sized(open(&big), 4096, 0).unwrap(),
            vec![b'x'; 100]
        );
        let empty = d.path().join("empty");
        fs::write(&empty, b"").unwrap();
        assert_eq!(read_capped_sized(open(&empty), 10, 0).unwrap(), b"");
        // A seq_file larger than a page returns short reads before its end
        // (3,912 of 4,096 bytes, then more): all of it is read.
        let kallsyms = Path::new("/proc/kallsyms");
        if let Ok(want) = fs::read(kallsyms) {
            assert!(want.len() > 8192, "/proc/kallsyms is {} bytes", want.len());
            let got = read_capped_sized(open(kallsyms), 1 << 30, 0).unwrap();
            assert_eq!(got.len(), want.len(), "/proc/kallsyms read short");
            assert!(got == want, "/proc/kallsyms read differs");
        }
        let osrelease = Path::new("/proc/sys/kernel/osrelease");
        let want = fs::read(osrelease).unwrap();
        assert_eq!(
            read_capped_sized(open(osrelease), 64 * 1024, 0).unwrap(),
            want
        );
        assert_eq!(
            read_file(Path::new("/dev/zero"), 1),
            Err(Failure::NotRegular("character device"))
        );
    }
}
