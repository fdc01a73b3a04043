//! `driftaudit fix`: remedies, edits, the CLI, the docs' examples, secrets and
//! hostile input.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/fix/; `cargo test --test fix MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod docs;
mod edits;
mod fix;
mod hostile;
mod kernel_keys;
mod remedies;
mod secrets;
