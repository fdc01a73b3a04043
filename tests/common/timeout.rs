//! Failing a test on a hang instead of hanging the suite: the work runs on
//! a thread of its own and the test waits for it a bounded time. Work whose
//! allocations are measured (tests/common/alloc.rs counts per thread) must
//! not go through here.

use std::sync::mpsc;
use std::time::Duration;

/// Run `f` on a thread; fail if it takes longer than `secs` (a hang) or panics.
pub fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
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
