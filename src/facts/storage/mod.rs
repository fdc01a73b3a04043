//! Storage facts: `/etc/fstab` and the systemd `.mount` units no fstab line
//! names (the configured mounts), live mounts (mountinfo or /proc/mounts),
//! ext4 layout (snapshot captures or the live device's superblock, found by
//! device, UUID or label) and whether a mount's disk is rotational
//! (`/sys/block`). Produces the `fstab`, `mount` and `ext4` namespaces,
//! keyed by mount point. All I/O goes through [`Host`](crate::host::Host);
//! parsing lives in `parse::{fstab, mountinfo, mountunit, ext4}`. No policy
//! logic here.
//!
//! This file is the folder's map and holds only the paths, the names and
//! the helper every room shares. The rooms, in the order data flows:
//!
//! - `points`: mount point text: the canonical form, the key of an fstab
//!   line, which mount point holds a path, the points a host names.
//! - `tables`: reading `/etc/fstab` and the live mount table (mountinfo,
//!   else /proc/mounts), with the `.mount` units and the automount
//!   placeholders they imply.
//! - `units`: the systemd `.mount` units and their drop-ins.
//! - `specs`: the device an fstab spec names (`UUID=`, `LABEL=`,
//!   `/dev/disk/by-*`) and a device's capture name.
//! - `ext4`: the ext2/3/4 superblock of each filesystem (snapshot captures
//!   or the live device's head).
//! - `fstab_model`: what the kernel would show for one fstab line and why
//!   the live mount differs from it.
//! - `media`: whether the disks under a mount spin (`/sys/block`, stacked
//!   devices, virtual and cloud disks).
//! - `namespaces`: [`gather`]: the `fstab`, `mount` and `ext4` namespaces
//!   assembled from the rooms above.

use crate::value::Value;

mod ext4;
mod fstab_model;
mod media;
mod namespaces;
mod points;
mod specs;
mod tables;
mod units;

pub use media::{rotational, rotational_counted};
pub use namespaces::gather;
pub use points::{fstab_key, mount_of, mount_points, normalize_point};
pub use specs::{capture_name, tag_of_spec};
pub use units::{read_mount_units, UnitMount, UNIT_DIRS};

/// Where /etc/fstab lives.
pub const FSTAB: &str = "/etc/fstab";
/// Preferred live mount table.
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
/// Fallback live mount table.
pub const PROC_MOUNTS: &str = "/proc/mounts";

/// Filesystem types whose layout the `ext4` namespace describes.
const EXT_TYPES: [&str; 3] = ["ext4", "ext3", "ext2"];

/// Namespace names this module fills.
pub const NAMESPACES: [&str; 3] = ["fstab", "mount", "ext4"];

/// A list of strings as a namespace value.
fn strs(v: &[String]) -> Value {
    Value::List(v.iter().map(|s| Value::Str(s.clone())).collect())
}
