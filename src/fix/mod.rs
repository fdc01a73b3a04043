//! `driftaudit fix`, library side: plan the change for every failing finding
//! that has a remedy, where the resolver says the value is decided (one file
//! per kind of edit: [`sysctl`], [`mycnf`], [`zimbra`], [`mounts`]), as a
//! unified diff plus POSIX sh runtime steps, and prove it by re-auditing a
//! private copy of the host with the patch applied and the runtime steps
//! simulated on the captured live values. Never changes the audited host:
//! every write goes to the copy ([`tree`]); the caller writes the outputs.
//!
//! The folder, in the order a plan is made: `model` (what is asked and
//! handed back: [`FixOptions`], [`Plan`], [`Step`], [`Edit`], [`Proof`],
//! and the plan's texts), `planner` (the rounds: audit the copy, plan,
//! apply, re-audit, prove), `changes` (what one finding asks to change),
//! `schedule` (their order), `context` (the copy's files as edited so
//! far), the editors per format (`sysctl`, `mycnf`, `zimbra`, `mounts`,
//! with `mount_flags` the table of per-mount flags), `tree` (the private
//! copy), `diff` (the patch text) and `shell` (the runtime steps' quoting).
//! This file only names them and says which server variables change at run
//! time.

mod changes;
mod context;
pub mod diff;
mod model;
mod mount_flags;
mod mounts;
mod mycnf;
mod planner;
mod schedule;
pub mod shell;
mod sysctl;
mod tree;
mod zimbra;

pub use model::{Edit, FixOptions, Fixed, Plan, Prefer, Proof, Step, Unfixable, FIX_SCHEMA};
pub use planner::{plan, plan_on};
pub use tree::{EditKind, Tree};
