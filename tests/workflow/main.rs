//! Snapshots, fleets, shards, baselines, git, upgrades, the resolver and the
//! CLI's messages.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/workflow/; `cargo test --test workflow MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod baseline;
mod cli_polish;
mod error_messages;
mod fleet;
mod foreign_snapshots;
mod git_roundtrip;
mod hosts;
mod profiles;
mod resolve;
mod secrets;
mod shard_cli;
mod shard_merge;
mod sos_reference;
mod upgrade;
mod workflow;
