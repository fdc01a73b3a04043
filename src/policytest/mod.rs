//! Policy tests (`driftaudit test`, docs/policy-language.md "Policy
//! tests"): finds `*.test.yaml` files, loads and validates them (every
//! problem of every file at once, each at file:line:column with the source
//! line and a caret, like policy errors), writes inline snapshots into a
//! private temporary directory that is then read through the confined
//! snapshot reader like any other snapshot, runs each case through the
//! engine (waivers applied when the case names them) and compares every
//! expected verdict with the report's. The result is data
//! ([`TestRun`]); its printers are in `render::policytest`. Must not print,
//! and never writes outside its own temporary directories.
//!
//! A rule's verdict on a host folds its findings (on one subject, when the
//! expectation names one), the first match winning: any `fail`, any
//! `error`, any `unknown`, any `waived`, any `pass`, any `skip`; `none`
//! when the rule reported nothing there (a drift rule reports only the keys
//! that differ).
//!
//! This file holds the bounds and [`run`]; the folder's rooms, in the
//! order data flows:
//!
//! - `discover`: which test files the paths name, and which policies a
//!   test file tests when it names none.
//! - [`spec`]: a test file as written (serde types with positions).
//! - `loader`: reading and validating each test file into a [`Suite`]
//!   (policies, parameters, snapshots, waivers, expectations), every
//!   problem collected.
//! - `inline`: a case's inline `files:` written into a private temporary
//!   directory and opened as a snapshot.
//! - `errors`: why the tests could not run ([`TestError`], [`TestProblem`]).
//! - `suite`: the loaded cases and running each one through the engine
//!   (the upgrade rules of its targets too) and its waivers.
//! - `expect`: one expectation compared with the report's findings.
//! - `results`: the verdicts ([`Verdict`], [`fold`]) and what a run
//!   returns ([`TestRun`]), the data the renderers print.

pub mod spec;

mod discover;
mod errors;
mod expect;
mod inline;
mod loader;
mod results;
mod suite;

pub use discover::{discover, is_test_file};
pub use errors::{TestError, TestProblem};
pub use loader::load;
pub use results::{fold, CaseResult, Checked, FileResult, RunSummary, TestRun, Verdict};
pub use suite::Suite;

use std::path::PathBuf;

/// Largest test file read (inline snapshots are small files).
pub const MAX_TEST_BYTES: u64 = 4 * 1024 * 1024;

/// How deep below a directory argument test files are looked for.
pub const MAX_DEPTH: usize = 8;

/// Most inline files one case may write.
pub const MAX_INLINE_FILES: usize = 1000;

/// Find, load, validate and run the test files `paths` name.
pub fn run(paths: &[PathBuf]) -> Result<TestRun, TestError> {
    Ok(load(paths)?.run())
}
