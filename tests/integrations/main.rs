//! The integrations: the Ansible role and the CI templates.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/integrations/; `cargo test --test integrations MODULE::` runs one of
//! them.

#[path = "../common/mod.rs"]
mod common;

mod ansible;
mod ci;
