//! A counting global allocator for the tests that bound work by bytes
//! allocated (tests/hostile/: localconfig, storage, sysctl, volume). Only
//! the binary that declares this module registers it (`#[path]` in its
//! main.rs); no other test binary pays for the counting.
//!
//! The counters are per thread: a measurement sees only the allocations of
//! the thread that runs it, so the other tests of the same binary, running
//! on other threads, cannot inflate it and no lock is needed. The code the
//! tests measure (the parsers, `engine::gather` and `engine::audit_host` on a
//! snapshot directory) runs on the calling thread; it starts no thread of
//! its own (a snapshot is read, not captured: no command runs).
//!
//! What is counted, as the four files counted before they shared it:
//! `allocated` is every byte asked for (a growing `realloc` adds its growth,
//! as `hostile_localconfig`, `hostile_sysctl` and `hostile_volume` did);
//! `live` and `peak` follow the bytes held, and a `realloc` counts the new
//! block before the old one is freed (as std's default `realloc`, which
//! `hostile_storage` used, counted it), so a peak is never lower than any of
//! the four measured it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

/// This thread's counters. `isize` for `live` and `peak`: a block allocated
/// on one thread may be freed on another, whose `live` then goes below zero.
struct Counters {
    allocated: Cell<usize>,
    live: Cell<isize>,
    peak: Cell<isize>,
}

thread_local! {
    // const-initialised and without Drop: reading it never allocates and
    // works while the thread is being torn down.
    static COUNTERS: Counters = const {
        Counters {
            allocated: Cell::new(0),
            live: Cell::new(0),
            peak: Cell::new(0),
        }
    };
}

fn grew(n: usize) {
    let _ = COUNTERS.try_with(|c| {
        c.allocated.set(c.allocated.get().wrapping_add(n));
        let live = c.live.get().wrapping_add(n as isize);
        c.live.set(live);
        if live > c.peak.get() {
            c.peak.set(live);
        }
    });
}

fn shrank(n: usize) {
    let _ = COUNTERS.try_with(|c| c.live.set(c.live.get().wrapping_sub(n as isize)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // the new block while the old one is still held, then the old one
            // freed; `allocated` grows by the growth only
            let _ = COUNTERS.try_with(|c| {
                c.allocated.set(
                    c.allocated
                        .get()
                        .wrapping_add(new_size.saturating_sub(layout.size())),
                );
                let held = c.live.get().wrapping_add(new_size as isize);
                if held > c.peak.get() {
                    c.peak.set(held);
                }
                c.live.set(held.wrapping_sub(layout.size() as isize));
            });
        }
        p
    }
}

#[global_allocator]
static A: Counting = Counting;

/// What running one closure cost on this thread.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    /// Bytes asked for while it ran (freed or not).
    pub allocated: usize,
    /// The most bytes held at once beyond what was held before it.
    pub peak: usize,
}

/// Runs `f` on this thread and returns what it allocated, with its result.
pub fn measure<T>(f: impl FnOnce() -> T) -> (Cost, T) {
    let (start_total, start_live) = COUNTERS.with(|c| {
        c.peak.set(c.live.get());
        (c.allocated.get(), c.live.get())
    });
    let out = f();
    let cost = COUNTERS.with(|c| Cost {
        allocated: c.allocated.get().wrapping_sub(start_total),
        peak: c.peak.get().saturating_sub(start_live).max(0) as usize,
    });
    (cost, out)
}
