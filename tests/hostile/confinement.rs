//! Confinement and writes under attack (issue 13): a snapshot tree that
//! changes while it is audited, `snapshot --out` next to a writer who swaps
//! paths, service users who point root at root-only files, read budgets and
//! file names that are not UTF-8. One test per class; each failed on the
//! main branch before the fix. Run as root (privilege cases use `setpriv`,
//! as tests/hostile/hostile.rs does).

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::timeout::within;
use crate::common::{can_unshare, cli};
use driftaudit::unstable::engine;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::policy::PolicySet;

/// Text that exists only in files outside the snapshot root.
const CANARY: &str = "CANARY-9b3e77a1-outside-the-root";

/// Every output of one audit of `host` with the built-in policies: text and
/// JSON reports and the gathered facts.
fn audit_outputs(set: &PolicySet, host: &Host) -> String {
    let facts = engine::gather(set, host);
    let report = engine::evaluate(set, &facts);
    crate::hostile::rendered(set, &facts, &report)
}

/// A minimal snapshot root with `files` sysctl.d files, in `tmp/snap`.
fn sysctl_snapshot(tmp: &Path, files: usize) -> PathBuf {
    let root = tmp.join("snap");
    crate::hostile::minimal_snapshot(&root, "racing");
    for i in 0..files {
        fs::write(
            root.join(format!("etc/sysctl.d/{i:02}-inside.conf")),
            "vm.swappiness = 10\n",
        )
        .unwrap();
    }
    root
}

/// `renameat2(RENAME_EXCHANGE)`: swap two names atomically.
fn exchange(a: &Path, b: &Path) -> bool {
    use std::ffi::CString;
    let a = CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = CString::new(b.as_os_str().as_bytes()).unwrap();
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    r == 0
}

/// A directory of the snapshot is swapped, again and again, between the
/// real directory and a symlink to a directory outside the root holding
/// files of the same names full of canary text, while audits run. Before
/// the fix, resolution checked each component with lstat and then `open()`
/// walked the path again, so some reads followed the swapped-in symlink and
/// quoted the outside file. Both resolvers are attacked: `openat2` and the
/// `openat` walk used without it.
#[test]
fn swapping_a_snapshot_directory_for_a_symlink_never_reads_outside() {
    let tmp = tempfile::tempdir().unwrap();
    let files = 40;
    let root = sysctl_snapshot(tmp.path(), files);
    let outside = tmp.path().join("outside/sysctl.d");
    fs::create_dir_all(&outside).unwrap();
    for i in 0..files {
        fs::write(
            outside.join(format!("{i:02}-inside.conf")),
            format!("net.ipv4.tcp_syncookies = 0\nkernel.{CANARY} = 1\n# {CANARY}\n"),
        )
        .unwrap();
    }
    let dir = root.join("etc/sysctl.d");
    let alt = root.join("etc/sysctl.d.swap");
    // An absolute link to the outside directory, and a relative one that
    // climbs out: both must resolve inside the root (where nothing is).
    symlink(&outside, &alt).unwrap();
    let rel = root.join("etc/sysctl.d.rel");
    symlink("../../outside/sysctl.d", &rel).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let racer = {
        let (stop, swaps) = (stop.clone(), swaps.clone());
        let (dir, alt, rel) = (dir.clone(), alt.clone(), rel.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let other = if n.is_multiple_of(2) { &alt } else { &rel };
                // Swap in the link, then back, then again: the directory
                // spends about half of the time as a symlink.
                if exchange(&dir, other) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::yield_now();
                exchange(&dir, other);
                std::thread::yield_now();
                n += 1;
            }
        })
    };

    let result = within(240, "racing audits", move || {
        let set = audit::builtin();
        let mut leaks = Vec::new();
        let mut inside = 0usize;
        for i in 0..400 {
            let host = audit::host(&root);
            let host = if i % 2 == 0 {
                host
            } else {
                host.without_openat2()
            };
            let out = audit_outputs(&set, &host);
            if out.contains(CANARY) {
                leaks.push(if i % 2 == 0 { "openat2" } else { "openat walk" });
            }
            if out.contains("inside.conf") {
                inside += 1;
            }
        }
        (leaks, inside)
    });
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    let (leaks, inside) = result;
    eprintln!("swaps {} inside {inside}", swaps.load(Ordering::Relaxed));
    assert!(
        swaps.load(Ordering::Relaxed) > 20,
        "the racer must really have swapped the directory"
    );
    assert!(
        inside > 0,
        "some audits must have read the real directory (the race was live)"
    );
    assert!(
        leaks.is_empty(),
        "{} of 400 audits quoted a file outside the snapshot root ({:?})",
        leaks.len(),
        &leaks[..leaks.len().min(5)]
    );
}

/// A `driftaudit` command whose live capture is long: run in a private
/// mount namespace where /etc/sysctl.d holds 20,000 small files (a bind
/// mount of a directory made once per test run), so the capture and the
/// write phase each take long enough for the racing thread of a test to
/// act inside them on any machine, not only when the scheduler happens to
/// let it. Without `unshare` (not root, off CI) the plain command.
fn long_capture(args: &[&OsStr]) -> std::process::Command {
    // A static is never dropped, so a `TempDir` here would leak 20,000
    // files (79 MB) into /tmp on every run: the directory lives in cargo's
    // per-target scratch space instead, is made once, and is reused.
    static BIG: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let big = BIG.get_or_init(|| {
        if !can_unshare("a long live capture") {
            return None;
        }
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("race-sysctl.d");
        let done = d.with_extension("complete");
        if !done.exists() {
            let _ = fs::remove_dir_all(&d);
            fs::create_dir_all(&d).unwrap();
            for i in 0..20_000 {
                fs::write(
                    d.join(format!("{i:05}-race.conf")),
                    format!("# file {i}\nnet.core.somaxconn = {}\n", 1024 + i % 7),
                )
                .unwrap();
            }
            fs::write(&done, "").unwrap();
        }
        Some(d)
    });
    match big {
        Some(d) => {
            let mut c = std::process::Command::new("unshare");
            c.args(["-m", "--propagation", "private", "sh", "-ec"])
                .arg("mount --bind \"$BIG\" /etc/sysctl.d; exec \"$DRIFTAUDIT\" \"$@\"")
                .arg("sh")
                .args(args)
                .env("BIG", d)
                .env("DRIFTAUDIT", cli::BIN);
            c
        }
        None => {
            let mut c = std::process::Command::new(cli::BIN);
            c.args(args);
            c
        }
    }
}

/// Every path below `dir` (for "nothing was written here").
fn tree(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// Whoever can write the parent of `--out` watches for the temporary
/// directory and swaps it for a symlink to a directory of theirs as soon as
/// it appears. Before the fix the name was `.NAME.tmp-PID` and files were
/// written by path, so root's copies landed in the attacker's directory and
/// `snapshot` exited 0. Now the directory has a random name, is written
/// through its descriptor, and a swap is an error; nothing lands outside.
#[test]
fn snapshot_temp_dir_swapped_for_a_symlink_writes_nothing_outside_out() {
    let tmp = tempfile::tempdir().unwrap();
    let parent = tmp.path().join("parent");
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir_all(&parent).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    for round in 0..4 {
        let out = parent.join(format!("snap{round}"));
        let prefix = format!(".snap{round}.tmp-");
        let stop = Arc::new(AtomicBool::new(false));
        let swapped = Arc::new(AtomicU64::new(0));
        let thief = {
            let (stop, swapped) = (stop.clone(), swapped.clone());
            let prefix = prefix.clone();
            let (parent, elsewhere) = (parent.clone(), elsewhere.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Ok(rd) = fs::read_dir(&parent) else {
                        continue;
                    };
                    for e in rd.flatten() {
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                        if name.starts_with(&prefix) && is_dir {
                            let p = e.path();
                            let stolen =
                                parent.join(format!("stolen-{}", swapped.load(Ordering::Relaxed)));
                            if fs::rename(&p, &stolen).is_ok() && symlink(&elsewhere, &p).is_ok() {
                                swapped.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                }
            })
        };
        let o = long_capture(&["snapshot".as_ref(), "--out".as_ref(), out.as_os_str()])
            .output()
            .unwrap();
        stop.store(true, Ordering::Relaxed);
        thief.join().unwrap();
        let written = tree(&elsewhere);
        assert!(
            written.is_empty(),
            "round {round}: snapshot wrote {} files outside --out (exit {:?}), e.g. {:?}",
            written.len(),
            o.status.code(),
            &written[..written.len().min(3)]
        );
        if swapped.load(Ordering::Relaxed) > 0 {
            assert!(
                !o.status.success(),
                "round {round}: the temporary directory was swapped and snapshot still exited 0"
            );
            assert!(
                fs::symlink_metadata(&out).map_or(true, |m| !m.file_type().is_symlink()),
                "round {round}: --out is the attacker's symlink"
            );
            return;
        }
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    panic!("the temporary directory was never seen in 4 snapshots: the attack did not run");
}

/// `--out` does not exist when the capture starts, and someone creates it
/// (with a file of theirs) while the capture runs: before the fix, the
/// final rename moved it aside and deleted it. Now the rename does not
/// replace (`RENAME_NOREPLACE`) and their directory is left alone. With
/// `--force`, a previous snapshot that is replaced by another directory
/// during the capture is not deleted either (only the snapshot checked at
/// the start is replaced).
#[test]
fn snapshot_never_deletes_what_appeared_at_out_during_the_capture() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    for force in [false, true] {
        let mut tried = 0;
        loop {
            tried += 1;
            assert!(
                tried <= 6,
                "force={force}: never planted a directory during the capture"
            );
            let out = tmp
                .path()
                .join(format!("{}{tried}", if force { "forced" } else { "plain" }));
            let prefix = format!(".{}.tmp-", out.file_name().unwrap().to_string_lossy());
            let mut args = vec![
                "snapshot".to_string(),
                "--out".into(),
                out.display().to_string(),
            ];
            if force {
                let o = std::process::Command::new(cli::BIN)
                    .args(&args)
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                args.push("--force".into());
            }
            let checked_ino = fs::metadata(&out).map(|m| m.ino()).ok();
            let done = Arc::new(AtomicBool::new(false));
            let planted = Arc::new(AtomicBool::new(false));
            let argv: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
            let child = long_capture(&argv)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let planter = {
                let (done, planted) = (done.clone(), planted.clone());
                let (out, prefix) = (out.clone(), prefix.clone());
                let parent = tmp.path().to_path_buf();
                std::thread::spawn(move || {
                    // After the start-up check of --out, before the capture
                    // writes anything (no temporary directory yet).
                    std::thread::sleep(Duration::from_millis(150 * tried as u64 / 2));
                    let writing = fs::read_dir(&parent).is_ok_and(|rd| {
                        rd.flatten()
                            .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                    });
                    if writing || done.load(Ordering::Relaxed) {
                        return;
                    }
                    if force {
                        if fs::metadata(&out).map(|m| m.ino()).ok() != checked_ino {
                            return;
                        }
                        fs::rename(&out, parent.join(format!("moved-away{tried}"))).unwrap();
                    }
                    // Not a snapshot (no snapshot.json): should this land
                    // before the start-up check on a slow machine, --force
                    // refuses it there instead.
                    if fs::create_dir(&out).is_ok() {
                        fs::write(out.join("precious.txt"), "mine").unwrap();
                        planted.store(true, Ordering::Relaxed);
                    }
                })
            };
            let o = child.wait_with_output().unwrap();
            done.store(true, Ordering::Relaxed);
            planter.join().unwrap();
            if !planted.load(Ordering::Relaxed) {
                continue; // the capture was too fast or already writing: again
            }
            assert_eq!(
                fs::read_to_string(out.join("precious.txt")).ok().as_deref(),
                Some("mine"),
                "force={force}: snapshot deleted or replaced a directory that appeared at --out during the capture (exit {:?}: {})",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(
                !o.status.success(),
                "force={force}: must fail, not report a snapshot it did not place"
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("left alone") || err.contains("is not empty"),
                "force={force}: {err}"
            );
            // No temporary directory is left behind.
            let left: Vec<_> = tree(tmp.path())
                .into_iter()
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
                })
                .collect();
            assert!(left.is_empty(), "force={force}: left behind {left:?}");
            break;
        }
    }
}

/// Run `script` in a private mount namespace (tmpfs mounts there never
/// touch the real host); `DRIFTAUDIT` is the binary.
fn in_private_mounts(script: &str) -> std::process::Output {
    crate::common::in_private_mounts(Path::new(cli::BIN), script)
}

/// A root-only (mode 600) sysctl.d file on the live host came out mode 644
/// in the snapshot (`fs::write` with the umask's default), readable by every
/// user who can read the snapshot. Copies keep at most their source's bits.
#[test]
fn snapshot_copies_are_never_more_readable_than_their_source() {
    if !can_unshare("snapshot modes") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("snap");
    let o = in_private_mounts(&format!(
        "mount -t tmpfs none /etc/sysctl.d
         printf 'vm.swappiness = 10\\n' > /etc/sysctl.d/60-private.conf
         chmod 600 /etc/sysctl.d/60-private.conf
         printf 'vm.swappiness = 20\\n' > /etc/sysctl.d/50-group.conf
         chmod 640 /etc/sysctl.d/50-group.conf
         printf 'vm.swappiness = 30\\n' > /etc/sysctl.d/40-public.conf
         chmod 755 /etc/sysctl.d/40-public.conf
         \"$DRIFTAUDIT\" snapshot --out '{}'",
        out.display()
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    use std::os::unix::fs::PermissionsExt;
    let mode = |n: &str| {
        fs::metadata(out.join("etc/sysctl.d").join(n))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("60-private.conf"), 0o600);
    assert_eq!(mode("50-group.conf"), 0o640);
    // never wider than the source, never executable
    assert_eq!(mode("40-public.conf"), 0o644);
}

/// Bytes this thread has read (`rchar` of /proc/thread-self/io): the
/// audit runs on the calling thread (the library starts none), and the
/// other tests of this binary read in parallel, which the process-wide
/// count (/proc/self/io) added to this audit's.
fn rchar() -> u64 {
    fs::read_to_string("/proc/thread-self/io")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Forty 15 MiB files, each under the 16 MiB per-file cap, made one audit
/// read 600 MiB: nothing bounded the total. A budget of 256 MiB per host is
/// shared by every reader; what could not be read for it is `unknown` with
/// the reason. The bound is checked on the bytes the process really read.
#[test]
fn total_bytes_read_from_one_host_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = sysctl_snapshot(tmp.path(), 0);
    for i in 0..40 {
        let f = fs::File::create(root.join(format!("etc/sysctl.d/{i:02}-big.conf"))).unwrap();
        f.set_len(15 * 1024 * 1024).unwrap(); // sparse: reads as NUL bytes
    }
    let (out, read) = within(120, "budget audit", move || {
        let set = audit::builtin();
        let before = rchar();
        let host = audit::host(&root);
        let out = audit_outputs(&set, &host);
        (out, rchar() - before)
    });
    let budget = 256 * 1024 * 1024;
    // the count is this audit's: it read up to the budget (so the thread's
    // count sees the reads), and not past it by more than one file
    assert!(
        read >= budget / 2,
        "read only {} MiB: not this audit's reads",
        read >> 20
    );
    assert!(
        read <= budget + 16 * 1024 * 1024,
        "read {} MiB from one host, more than the {} MiB budget and one file",
        read >> 20,
        budget >> 20
    );
    assert!(
        out.contains("read budget of 268435456 bytes for this host is spent"),
        "the files not read for the budget must be unknown with the reason"
    );
}

/// A sysctl.d file whose name is not UTF-8 (`50-\xff.conf`) was "no such
/// file" (its lossy name was looked up) and its settings vanished; with a
/// U+FFFD twin (`50-\u{fffd}.conf`) beside it, the twin was read in its
/// place. Names are bytes now: both files are read, in byte order (the
/// `\xff` one last, so it wins), and shown escaped (`\xff`). `snapshot`
/// copies such a name byte for byte.
#[test]
fn non_utf8_file_names_are_read_as_bytes_and_shown_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = sysctl_snapshot(tmp.path(), 0);
    let d = root.join("etc/sysctl.d");
    fs::write(
        d.join(OsStr::from_bytes(b"50-\xff.conf")),
        "vm.swappiness = 11\n",
    )
    .unwrap();
    fs::write(
        d.join("50-\u{fffd}.conf"),
        "vm.swappiness = 22\nvm.dirty_ratio = 7\n",
    )
    .unwrap();
    let set = audit::builtin();
    let host = audit::host(&root);
    let facts = engine::gather(&set, &host);
    let ns = &facts.namespaces["sysctl_boot"];
    let get = |k: &str| match ns.get(k) {
        Some(driftaudit::unstable::facts::Entry::Set(s)) => {
            Some(format!("{}@{}", s.raw, s.evidence[0]))
        }
        _ => None,
    };
    assert_eq!(
        get("vm.swappiness").as_deref(),
        Some("11@/etc/sysctl.d/50-\\xff.conf:1"),
        "the file with the invalid-UTF-8 name is read, last, and named escaped"
    );
    assert_eq!(
        get("vm.dirty_ratio").as_deref(),
        Some("7@/etc/sysctl.d/50-\u{fffd}.conf:2"),
        "the U+FFFD twin is a file of its own"
    );
    assert!(
        !facts.issues.iter().any(|i| i.path.contains("50-")),
        "no file is unreadable: {:?}",
        facts.issues
    );

    if !can_unshare("non-UTF-8 names in a snapshot") {
        return;
    }
    let out = tmp.path().join("taken");
    let o = in_private_mounts(&format!(
        "mount -t tmpfs none /etc/sysctl.d
         printf 'vm.swappiness = 11\\n' > \"$(printf '/etc/sysctl.d/50-\\377.conf')\"
         \"$DRIFTAUDIT\" snapshot --out '{}'",
        out.display()
    ));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        fs::read_to_string(
            out.join("etc/sysctl.d")
                .join(OsStr::from_bytes(b"50-\xff.conf"))
        )
        .unwrap(),
        "vm.swappiness = 11\n"
    );
}

/// A service user (here uid 65534) owns a directory of option files that
/// root's my.cnf includes: it can put an `!include` of, or a symlink to, a
/// root-only file there, and root's `check` quoted it and `snapshot`
/// copied it. On a live host a file reached through something root does
/// not own is read only if that user could read it; the finding says why.
#[test]
fn service_user_cannot_make_root_read_root_only_files() {
    let Some((_tmp, secret_dir, out)) = crate::mycnf::root_only_workspace("service-user includes")
    else {
        return;
    };
    let o = in_private_mounts(&format!(
        "mkdir -m 700 '{secret}'
         printf '[mysqld]\\ninnodb_buffer_pool_size = {CANARY}\\n' > '{secret}/secret.cnf'
         chmod 600 '{secret}/secret.cnf'
         mount -t tmpfs none /etc/mysql
         printf '[mysqld]\\nmax_connections = 100\\n!includedir /etc/mysql/conf.d/\\n' > /etc/mysql/my.cnf
         mkdir /etc/mysql/conf.d
         printf '[mysqld]\\n!include {secret}/secret.cnf\\n' > /etc/mysql/conf.d/a.cnf
         ln -s '{secret}/secret.cnf' /etc/mysql/conf.d/b.cnf
         chown -h 65534:65534 /etc/mysql/conf.d /etc/mysql/conf.d/a.cnf /etc/mysql/conf.d/b.cnf
         \"$DRIFTAUDIT\" check --format json || true
         \"$DRIFTAUDIT\" snapshot --out '{out}' >&2",
        secret = secret_dir.display(),
        out = out.display()
    ));
    crate::mycnf::root_only_file_refused(&o, CANARY, "a service user pointed it at");
    let copied: Vec<_> = tree(&out)
        .into_iter()
        .filter(|p| p.is_file() && fs::read_to_string(p).is_ok_and(|t| t.contains(CANARY)))
        .collect();
    assert!(
        copied.is_empty(),
        "snapshot copied the root-only file: {copied:?}"
    );
}

/// A snapshot file with another hard link may be a second name for a file
/// outside the root, and no path check can tell (docs/snapshot-format.md).
/// The report says so once per host, in the coverage section of every
/// format, never on each finding; a name with a newline stays on its line.
#[test]
fn hard_linked_snapshot_files_are_noted_once_in_the_coverage() {
    let tmp = tempfile::tempdir().unwrap();
    let snap = tmp.path().join("snap");
    fs::create_dir_all(snap.join("etc/sysctl.d")).unwrap();
    fs::write(snap.join("etc/hostname"), "linked\n").unwrap();
    let outside = tmp.path().join("outside.conf");
    fs::write(&outside, "vm.swappiness = 10\n").unwrap();
    fs::hard_link(&outside, snap.join("etc/sysctl.d/50-linked.conf")).unwrap();
    let odd = tmp.path().join("odd.conf");
    fs::write(&odd, "vm.dirty_ratio = 20\n").unwrap();
    fs::hard_link(&odd, snap.join("etc/sysctl.d/60-new\nline.conf")).unwrap();
    fs::write(
        snap.join("etc/sysctl.d/70-plain.conf"),
        "vm.overcommit_memory = 0\n",
    )
    .unwrap();
    let run = |format: &str| -> String {
        let o = std::process::Command::new(cli::BIN)
            .args([
                "check",
                "--snapshot",
                snap.to_str().unwrap(),
                "--format",
                format,
            ])
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{format}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    };

    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let h = &json["hosts"][0];
    assert_eq!(
        h["hard_links"],
        serde_json::json!([
            "/etc/sysctl.d/50-linked.conf",
            "/etc/sysctl.d/60-new\nline.conf"
        ]),
        "{h}"
    );
    for f in h["findings"].as_array().unwrap() {
        let t = f.to_string();
        assert!(
            !t.contains("hard link") && !t.contains("st_nlink"),
            "noted on a finding: {t}"
        );
    }

    let text = run("text");
    let note: Vec<&str> = text.lines().filter(|l| l.contains("hard links:")).collect();
    assert_eq!(note.len(), 1, "{text}");
    let cov = text.find("coverage:").expect("coverage section");
    assert!(text.find("hard links:").unwrap() > cov, "{text}");
    // the note's lines (wrapped), up to the first domain line
    let start = text.find("hard links:").unwrap();
    let end = start + text[start..].find("\n  sysctl:").unwrap();
    let block = text[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        block.contains("2 files read from the snapshot have more than one link"),
        "{text}"
    );
    assert!(
        block.contains("fs.protected_hardlinks") && block.contains("git does not store hard links"),
        "{text}"
    );
    assert!(block.contains("/etc/sysctl.d/50-linked.conf"), "{text}");
    assert!(
        block.contains("\"/etc/sysctl.d/60-new\\nline.conf\""),
        "name not quoted: {text}"
    );
    assert!(!text.lines().any(|l| l.starts_with("line.conf")), "{text}");
    assert!(!block.contains("70-plain"), "{text}");

    let md = run("markdown");
    assert_eq!(md.matches("**Hard links:** 2 files").count(), 1, "{md}");
    assert!(md.contains("`/etc/sysctl.d/50-linked.conf`"), "{md}");

    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    let cov = &sarif["runs"][0]["properties"]["coverage"][0];
    assert_eq!(cov["hard_links"], h["hard_links"], "{cov}");

    let junit = run("junit");
    assert_eq!(
        junit.matches("name=\"coverage.hard_links\"").count(),
        1,
        "{junit}"
    );

    // A snapshot without hard links says nothing about them.
    fs::remove_file(snap.join("etc/sysctl.d/50-linked.conf")).unwrap();
    fs::remove_file(snap.join("etc/sysctl.d/60-new\nline.conf")).unwrap();
    let text = run("text");
    assert!(!text.contains("hard link"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert!(json["hosts"][0].get("hard_links").is_none());
}

/// `diff --files` read every file of both sides through the host's 256 MiB
/// read budget and skipped what it could not read without a word: once the
/// budget was spent, the rest of the files were "not different" and the
/// exit status 0. Now each file not compared is named with the side and the
/// reason (text and JSON `files_not_compared`) and the exit status is 1.
#[test]
fn diff_files_after_the_read_budget_is_spent_names_what_was_not_compared() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("before"), tmp.path().join("after"));
    for d in [&a, &b] {
        fs::create_dir_all(d.join("etc/sysctl.d")).unwrap();
        fs::create_dir_all(d.join("var/big")).unwrap();
        fs::write(d.join("etc/hostname"), "db1\n").unwrap();
        // 18 sparse files of 15 MiB: 270 MiB, over the budget of one host
        for i in 0..18 {
            let f = fs::File::create(d.join(format!("var/big/f{i:02}"))).unwrap();
            f.set_len(15 * 1024 * 1024).unwrap();
        }
    }
    fs::write(a.join("etc/sysctl.d/50-a.conf"), "vm.swappiness = 10\n").unwrap();
    fs::write(b.join("etc/sysctl.d/50-a.conf"), "vm.swappiness = 60\n").unwrap();
    // sorted after /var/big: read once the budget is spent
    fs::create_dir_all(a.join("var/zz")).unwrap();
    fs::create_dir_all(b.join("var/zz")).unwrap();
    fs::write(a.join("var/zz/late.conf"), "x = 1\n").unwrap();
    fs::write(b.join("var/zz/late.conf"), "x = 2\n").unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--files"];
        args.extend_from_slice(extra);
        std::process::Command::new(cli::BIN)
            .args(&args)
            .output()
            .unwrap()
    };

    let o = run(&[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    says(&text, "not compared (the comparison is incomplete)");
    says(&text, "not compared: /var/zz/late.conf (cannot read either side: the read budget of 268435456 bytes for this host is spent");
    // what was compared before the budget ran out is still shown
    assert!(text.contains("+vm.swappiness = 60"), "{text}");

    let o = run(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let missed = v["files_not_compared"]
        .as_array()
        .expect("files_not_compared");
    assert!(
        missed.iter().any(|n| n["path"] == "/var/zz/late.conf"
            && n["side"] == "both"
            && n["reason"].as_str().unwrap().contains("read budget")),
        "{missed:?}"
    );
    // each file once: compared, changed or not compared
    let changed = cli::strs(&v["files"], "path");
    assert!(changed.contains(&"/etc/sysctl.d/50-a.conf"), "{changed:?}");
    for n in missed {
        assert!(!changed.contains(&n["path"].as_str().unwrap()), "{n}");
    }

    // One side alone: a budget spent on the after side only names that side.
    let d = driftaudit::unstable::diff::diff_hosts_files(
        &audit::host(&a).with_read_budget(1 << 40),
        &audit::host(&b).with_read_budget(4096),
    );
    assert!(!d.not_compared.is_empty());
    assert!(
        d.not_compared.iter().all(|n| n.side == "after"),
        "{:?}",
        d.not_compared
    );

    // Without a spent budget: everything compared, exit 0, an empty list.
    fs::remove_dir_all(a.join("var/big")).unwrap();
    fs::remove_dir_all(b.join("var/big")).unwrap();
    fs::write(b.join("etc/sysctl.d/50-a.conf"), "vm.swappiness = 10\n").unwrap();
    fs::write(b.join("var/zz/late.conf"), "x = 1\n").unwrap();
    let o = run(&["--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files_not_compared"], serde_json::json!([]));
}
