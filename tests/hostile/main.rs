//! Hostile input: confinement, formats, host names, option files, policy
//! output and bounded work (by bytes allocated).
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/hostile/; `cargo test --test hostile MODULE::` runs one of them.

#[path = "../common/alloc.rs"]
mod alloc;
#[path = "../common/mod.rs"]
mod common;

mod confinement;
mod formats;
mod host_name;
mod hostile;
mod localconfig;
mod merge;
mod merge_layouts;
mod mycnf;
mod policy_output;
mod storage;
mod sysctl;
mod volume;
