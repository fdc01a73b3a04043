//! Coverage against the benchmarks and tools: ComplianceAsCode controls, Lynis,
//! OpenSCAP, MySQLTuner.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/coverage/; `cargo test --test coverage MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod controls;
mod lynis;
mod mysqltuner;
mod openscap;
