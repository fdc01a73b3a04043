//! Mounts, fstab and ext4: hosts, mount shapes, the reference tools and virtual
//! filesystems.
//!
//! One test binary for the area (issue 34): each module is one file of
//! tests/storage/; `cargo test --test storage MODULE::` runs one of them.

#[path = "../common/mod.rs"]
mod common;

mod hosts;
mod mount_shapes;
mod reference;
mod virtual_fs;
