//! MySQL and MariaDB: option files against the real servers, the corpus,
//! hardening, hosts and upgrades.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/mysql/; `cargo test --test mysql MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod corpus;
mod hardening_files;
mod hardening_server;
mod hosts;
mod live_read;
mod mariadb_server;
mod mycnf_reference;
mod pool_resize;
mod real_world;
mod restart_server;
mod running_side;
mod upgrade_server;
