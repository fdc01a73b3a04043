//! Zimbra memory: the localconfig corpus, the shipped hosts and a live-shaped
//! install.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/zimbra/; `cargo test --test zimbra MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod hosts;
mod live;
