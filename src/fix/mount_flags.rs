//! Which mount options are per-mount flags (the mountinfo field before
//! ` - `) and which of them exclude each other. A table only: must not edit
//! an fstab line.

/// Options that exclude each other: adding one drops the others.
pub(super) const EXCLUSIVE: &[&[&str]] = &[
    &["noatime", "relatime", "strictatime", "atime"],
    &["ro", "rw"],
    &["nodev", "dev"],
    &["nosuid", "suid"],
    &["noexec", "exec"],
    &["nodiratime", "diratime"],
];

/// Per-mount flags (the mountinfo field before ` - `); the rest are
/// filesystem (superblock) options.
pub(super) fn is_flag(o: &str) -> bool {
    EXCLUSIVE.iter().any(|g| g.contains(&o))
}
