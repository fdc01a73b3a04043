//! The canonical form being built for one fstab option list ([`Canonical`]),
//! the facts a filesystem's model needs besides the options ([`FsContext`],
//! [`Ext4Defaults`]), and how an option is recorded in the form (a later
//! `key=` replacing an earlier one, an unknown option kept as written).
//! Types and recording only: must not know any filesystem's options.

/// What the ext4 superblock says about defaults (`tune2fs -l`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ext4Defaults {
    /// `Default mount options:` words (`user_xattr acl`, `journal_data`, ...).
    pub default_mount_options: Vec<String>,
    /// `Errors behavior:` (`Continue`, `Remount read-only`, `Panic`).
    pub errors_behavior: Option<String>,
    /// `Filesystem features:` words (`metadata_csum` makes journal_checksum the default).
    pub features: Vec<String>,
}

/// The facts the model needs besides the options.
#[derive(Debug, Clone, Default)]
pub struct FsContext {
    /// Filesystem type as in fstab field 3 (`tmpfs`, `ext4`, ...).
    pub fstype: String,
    /// MemTotal in bytes (tmpfs `size=N%` and the size default).
    pub mem_total: Option<u64>,
    /// The ext4 superblock defaults, when a tune2fs capture or the device says.
    pub ext4: Option<Ext4Defaults>,
}

/// The kernel's form of one fstab option list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Canonical {
    /// Options as the kernel shows them: `ro|rw`, generic flags, then the
    /// filesystem's own options (those it hides left out).
    pub options: Vec<String>,
    /// Options the model does not know for this filesystem type: kept as
    /// written and compared as text.
    pub unknown: Vec<String>,
    /// Options left out of the comparison, with the reason (their display
    /// depends on something the host data does not say).
    pub unchecked: Vec<(String, String)>,
    /// Assumptions made (`ext4 superblock defaults unknown: ...`).
    pub assumptions: Vec<String>,
    /// Options the kernel refuses for this filesystem type, with the reason:
    /// `mount` fails for the line (xfs `nobarrier` since Linux 4.19).
    pub refused: Vec<(String, String)>,
    /// What the kernel shows without being asked (xfs `inode64`,
    /// `logbufs=8`, `logbsize=32k`, `noquota` on current kernels): with
    /// `options` it is the whole mountinfo field; not compared, since older
    /// kernels show fewer of them.
    pub kernel_defaults: Vec<String>,
}

/// Replace an earlier option with the same key (`size=1g` then `size=2g`).
pub(super) fn set_keyed(out: &mut Vec<String>, opt: String) {
    let key = |s: &str| s.split('=').next().unwrap_or(s).to_string();
    let k = key(&opt);
    if let Some(i) = out.iter().position(|o| key(o) == k) {
        out.remove(i);
    }
    out.push(opt);
}

/// An option the model does not know for the filesystem: kept as written
/// (a later `key=` wins) and listed as unknown.
pub(super) fn unknown(c: &mut Canonical, o: &str) {
    set_keyed(&mut c.options, o.to_string());
    if !c.unknown.iter().any(|u| u == o) {
        c.unknown.push(o.to_string());
    }
}
