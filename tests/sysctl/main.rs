//! sysctl and TuneD: semantics, the reference tools (systemd-sysctl, procps,
//! tuned) and the meminfo corpus.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/sysctl/; `cargo test --test sysctl MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod init_reference;
mod meminfo_corpus;
mod reference;
mod semantics;
mod slaac;
mod tuned_reference;
