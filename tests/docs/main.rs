//! The docs and the crate's shape: generated tables, documented commands, the
//! library API, the architecture.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/docs/; `cargo test --test docs MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod architecture;
mod catalogue;
mod commands;
mod library_api;
mod test_names;
