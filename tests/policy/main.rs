//! The policy language: errors, schema, policy tests, overlays, for_each,
//! applicability and properties.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/policy/; `cargo test --test policy MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod applicability;
mod errors;
mod for_each;
mod for_each_docs;
mod overlay;
mod overlay_docs;
mod params;
mod policytest;
mod policytest_docs;
mod properties;
mod schema;
