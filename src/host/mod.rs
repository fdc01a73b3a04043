//! Host sources: one read-only interface over the live root `/` or a snapshot
//! directory laid out like `/`. Owns path confinement (symlinks, `..` and
//! absolute paths never leave the root, even while the tree changes: every
//! lookup goes through directory descriptors or `openat2(RESOLVE_IN_ROOT)`),
//! size caps, FIFO/device safety, file names as bytes and the recording read
//! log `snapshot` copies from. Parses no file contents except a snapshot's
//! `snapshot.json` (the host name) and first lines of hostname files; must
//! never write anything.
//!
//! The folder, in the order a read goes through it: this file (the
//! constructors of a [`Host`] for the live root and a snapshot, and its
//! name, kind and layout), `model` (the `Host` value and its private state,
//! the caps, errors, entries and trust every room shares), `layout` (what
//! kind of snapshot a directory is), `names` (host path names as bytes,
//! lexical paths), `confine` (the confined walk and `openat2`), `memo`
//! (what one gather already learnt about paths), `budget` (the bytes one
//! host may be read for) and `read` (files, kernel values, listings, sizes,
//! captures). The rooms import `model`, never this file.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rustix::fs::{self as rfs, Mode, OFlags};

mod budget;
mod confine;
pub mod layout;
mod memo;
mod model;
mod names;
mod read;

use confine::errno;
pub use layout::Layout;
pub use model::{
    expected_refusal, DirEntry, DirSize, EntryKind, Host, NameCut, ReadError, ReadLog, SourceKind,
    Trust, MAX_DEVICE_HEAD, MAX_DIR_SIZE_ENTRIES, MAX_FILE_BYTES, MAX_HOST_NAME_BYTES,
    MAX_HOST_READ_BYTES, MAX_SYMLINKS, MAX_WALK_DEPTH,
};
use model::{ReadBudget, MAX_MEMO_FILE};
pub use names::{escape_name, join_host, lexical, unescape_name};
pub use read::Reads;

pub use crate::reader::io_message;

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
            name_cut: None,
            layout: None,
            log: None,
            walked: Arc::default(),
            stats: Arc::default(),
            kernel_resolve: true,
            hard_links: Arc::default(),
            live_captures: Arc::default(),
            read_budget: Arc::new(ReadBudget {
                limit: MAX_HOST_READ_BYTES,
                used: AtomicU64::new(0),
            }),
        })
    }

    /// The live machine (`/`). Its name is read as every file of the host
    /// is (within [`MAX_FILE_BYTES`], never from a FIFO or device), as a
    /// snapshot's `etc/hostname` is.
    pub fn live() -> Host {
        // `/` always opens (O_PATH needs no permission on the directory).
        let mut h = Host::with_root(PathBuf::from("/"), SourceKind::Live)
            .expect("the root directory `/` can be opened");
        let read = |path: &'static str| {
            h.read_to_string(path)
                .ok()
                .map(|s| (s.trim().to_string(), path))
        };
        let named = read("/proc/sys/kernel/hostname")
            .or_else(|| read("/etc/hostname"))
            .filter(|(s, _)| !s.is_empty());
        match named {
            Some((name, path)) => h.set_name(name, path),
            None => h.name = "localhost".to_string(),
        }
        h
    }

    /// Give a live host the output of a read-only command run against one
    /// of its services (`SHOW GLOBAL VARIABLES` for `--mysql`), or why it
    /// could not run: [`Host::capture`] then answers with it, as a
    /// snapshot's `captures/NAME` would. Ignored on a snapshot, which holds
    /// its own captures. The text is data, parsed as the capture is.
    pub(crate) fn set_live_capture(&mut self, name: &str, captured: Result<String, String>) {
        if self.kind == SourceKind::Live {
            Arc::make_mut(&mut self.live_captures).insert(name.to_string(), captured);
        }
    }

    /// Whether the live host was given a capture `name` (read or failed).
    pub(crate) fn has_live_capture(&self, name: &str) -> bool {
        self.kind == SourceKind::Live && self.live_captures.contains_key(name)
    }

    /// Name the host `name`, read at `path`, cut to [`MAX_HOST_NAME_BYTES`]
    /// on a character boundary (the cut kept for `Host::name_cut`).
    fn set_name(&mut self, mut name: String, path: &str) {
        if name.len() > MAX_HOST_NAME_BYTES {
            self.name_cut = Some(NameCut {
                path: path.to_string(),
                bytes: name.len(),
            });
            let mut end = MAX_HOST_NAME_BYTES;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
        }
        self.name = name;
    }

    /// Where the host name was read and how long it was, when it was longer
    /// than [`MAX_HOST_NAME_BYTES`] and [`Host::name`] is its first bytes.
    pub(crate) fn name_cut(&self) -> Option<&NameCut> {
        self.name_cut.as_ref()
    }

    /// The live machine, remembering every path read, listed or probed, so
    /// a snapshot can copy exactly what an audit reads (the read log is
    /// driftaudit's own, for its [`snapshot`](crate::snapshot)).
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

    /// What a recording host has seen so far (`None` when not recording).
    pub(crate) fn read_log(&self) -> Option<ReadLog> {
        self.log.as_ref().map(|l| {
            l.lock()
                .map(|g| g.clone())
                .unwrap_or_else(|p| p.into_inner().clone())
        })
    }

    /// A snapshot directory laid out like `/` (driftaudit's own, a hand-made
    /// tree or an extracted sosreport, see [`Layout`]). A directory that is
    /// none of these is [`ReadError::NotASnapshot`]. The host name comes from
    /// `snapshot.json`, then the layout's `hostname` capture (sosreport), then
    /// `etc/hostname`, then the directory name; one longer than
    /// [`MAX_HOST_NAME_BYTES`] is cut to that (`Host::name_cut`).
    ///
    /// ```
    /// let host = driftaudit::Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story"))?;
    /// assert_eq!(host.name(), "web-backend-02");
    /// assert_eq!(host.kind(), driftaudit::SourceKind::Snapshot);
    /// // Host paths are absolute and stay inside the snapshot.
    /// let s = driftaudit::Resolver::new(&host).sysctl("net.ipv4.tcp_tw_recycle");
    /// let driftaudit::Lookup::Set(boot) = &s.boot else { panic!("{:?}", s.boot) };
    /// assert_eq!(boot.at.path, "/etc/sysctl.d/60-perf.conf");
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
        let first_line = |path: &'static str| {
            host.read_to_string(path)
                .ok()
                .map(|s| s.lines().next().unwrap_or("").trim().to_string())
                .filter(|s| !s.is_empty())
                .map(|s| (s, path))
        };
        let (name, path) = host
            .snapshot_json_hostname()
            .map(|s| (s, "/snapshot.json"))
            .or_else(|| layout.hostname().iter().find_map(|p| first_line(p)))
            .or_else(|| first_line("/etc/hostname"))
            .unwrap_or_else(|| {
                let n = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "snapshot".into());
                (n, "/")
            });
        host.set_name(name, path);
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
    pub(crate) fn layout(&self) -> Option<Layout> {
        self.layout
    }

    /// The directory on the auditing machine that plays the role of `/`.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::confine::{host_components, live_path};
    use super::model::MAX_WALK_CACHE;
    use super::names::normalised;
    use super::*;
    use rustix::fs::FileType as RType;
    use std::collections::BTreeSet;
    use std::os::unix::ffi::OsStringExt;
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

    /// The shortcut for plain paths gives what the component loop gives.
    #[test]
    fn a_live_path_is_the_same_with_or_without_the_plain_shortcut() {
        let by_loop = |p: &str| -> Result<std::path::PathBuf, ReadError> {
            let mut out = Vec::new();
            for c in host_components(p)? {
                out.push(b'/');
                out.extend_from_slice(&c);
            }
            if out.is_empty() {
                out.push(b'/');
            }
            Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(out)))
        };
        for p in [
            "/",
            "",
            "/etc",
            "/etc/",
            "//etc//my.cnf",
            "/etc/./my.cnf",
            "/etc/.",
            "/etc/../x",
            "etc/my.cnf",
            "/etc/a\\x41b",
            "/etc/a\\x2fb",
            "/etc/a\0b",
            "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
            "/a/.b/..c",
        ] {
            assert_eq!(live_path(p), by_loop(p), "{p:?}");
        }
    }

    /// The live host remembers within one gather too: a file, a missing
    /// file and a listing are asked of the kernel once (the option-file
    /// reader, mycnf_files and the evidence pass asked for each `.cnf`
    /// three or four times), so one gather sees one version of each; after
    /// the gather they are read anew.
    #[test]
    fn a_gather_on_the_live_host_reads_a_file_and_a_listing_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let file = root.join("my.cnf").display().to_string();
        let absent = root.join("absent.cnf").display().to_string();
        let folder = root.display().to_string();
        fs::write(&file, "[mysqld]\n").unwrap();
        let host = Host::live();
        let g = host.remember_stats();
        assert_eq!(host.read_bytes(&file).unwrap(), b"[mysqld]\n");
        assert_eq!(host.read_bytes(&absent), Err(ReadError::NotFound));
        let names = |h: &Host| -> Vec<String> {
            h.read_dir(&folder)
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names(&host), ["my.cnf"]);
        fs::write(&file, "[mysqld]\nport = 1\n").unwrap();
        fs::write(&absent, "[client]\n").unwrap();
        assert_eq!(host.read_bytes(&file).unwrap(), b"[mysqld]\n");
        assert_eq!(host.read_bytes(&absent), Err(ReadError::NotFound));
        assert_eq!(names(&host), ["my.cnf"]);
        // a listing kept whole answers a filtered one too
        let only = host
            .read_dir_matching(&folder, |n| n.starts_with(b"ab"))
            .unwrap();
        assert!(only.is_empty(), "{only:?}");
        drop(g);
        assert_eq!(host.read_bytes(&file).unwrap(), b"[mysqld]\nport = 1\n");
        assert_eq!(host.read_bytes(&absent).unwrap(), b"[client]\n");
        assert_eq!(names(&host), ["absent.cnf", "my.cnf"]);
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
