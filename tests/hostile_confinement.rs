//! Confinement and writes under attack (issue 13): a snapshot tree that
//! changes while it is audited, `snapshot --out` next to a writer who swaps
//! paths, service users who point root at root-only files, read budgets and
//! file names that are not UTF-8. One test per class; each failed on the
//! main branch before the fix. Run as root (privilege cases use `setpriv`,
//! as tests/hostile.rs does).

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use driftaudit::engine;
use driftaudit::host::Host;
use driftaudit::policy::PolicySet;
use driftaudit::render::{self, Format, RenderOptions};
use driftaudit::report::Report;

/// Text that exists only in files outside the snapshot root.
const CANARY: &str = "CANARY-9b3e77a1-outside-the-root";

/// Run `f` on a thread; fail if it takes longer than `secs` (a hang) or panics.
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => {
            let _ = h.join();
            v
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {secs}s (hang)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => panic!("{what}: worker ended without a result"),
        },
    }
}

/// Every output of one audit of `host` with the built-in policies: text and
/// JSON reports and the gathered facts.
fn audit_outputs(set: &PolicySet, host: &Host) -> String {
    let facts = engine::gather(set, host);
    let report = engine::evaluate(set, &facts);
    let full = Report::new(vec![report], set);
    let opts = RenderOptions {
        color: false,
        verbose: true,
    };
    let mut out = render::render(&full, Format::Text, opts);
    out.push_str(&render::render(&full, Format::Json, opts));
    out.push_str(&serde_json::to_string(&facts).unwrap());
    out
}

/// A minimal snapshot root with `files` sysctl.d files, in `tmp/snap`.
fn sysctl_snapshot(tmp: &Path, files: usize) -> PathBuf {
    let root = tmp.join("snap");
    fs::create_dir_all(root.join("etc/sysctl.d")).unwrap();
    fs::create_dir_all(root.join("captures")).unwrap();
    fs::create_dir_all(root.join("proc")).unwrap();
    fs::write(
        root.join("snapshot.json"),
        r#"{"schema":"driftaudit.snapshot/1","host":"racing"}"#,
    )
    .unwrap();
    fs::write(
        root.join("captures/sysctl-a.txt"),
        "kernel.osrelease = 6.1.0-18-amd64\nnet.ipv4.tcp_syncookies = 1\nvm.swappiness = 60\n",
    )
    .unwrap();
    fs::write(root.join("proc/meminfo"), "MemTotal: 8000000 kB\n").unwrap();
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
                let other = if n % 2 == 0 { &alt } else { &rel };
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
        let set = PolicySet::builtin().expect("built-in policies load");
        let mut leaks = Vec::new();
        let mut inside = 0usize;
        for i in 0..400 {
            let host = Host::snapshot(&root).expect("snapshot opens");
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
