//! The integrations: the Ansible role and the CI templates.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/integrations/; `cargo test --test integrations MODULE::` runs one of
//! them.

#[path = "../common/mod.rs"]
mod common;

mod ansible;
mod ci;

/// Held by a test while it has the driftaudit package installed on this
/// machine (`/usr/bin/driftaudit`), and by the tests that need no
/// driftaudit in `/usr/bin` (the CI templates would run it instead of
/// building or unpacking theirs): the tests of one binary run in parallel.
pub(crate) static HOST_PACKAGE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`HOST_PACKAGE`], whether or not a test that held it panicked.
pub(crate) fn host_package() -> std::sync::MutexGuard<'static, ()> {
    HOST_PACKAGE.lock().unwrap_or_else(|p| p.into_inner())
}
