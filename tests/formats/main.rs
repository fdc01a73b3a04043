//! Report formats: text, JSON, SARIF, JUnit, Markdown, HTML, Prometheus, colour
//! and their consumers.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/formats/; `cargo test --test formats MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod colour;
mod consumers;
mod dispatch;
mod formats;
mod html;
mod prometheus;
