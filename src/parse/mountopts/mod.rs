//! The kernel's canonical form of mount options, per filesystem type: what
//! /proc/self/mountinfo shows for a mount made from given fstab options
//! (tmpfs/devtmpfs sizes as numbers of KiB, modes in octal without the
//! default, ext4 options hidden where they are the superblock's default,
//! proc `hidepid` by name, xfs and btrfs spellings and what they show unasked
//! or refuse, vfat and nfs spellings), and the same normalisation of what an
//! older kernel printed; it owns the one table of generic (VFS) mount flags,
//! option-string splitting, `defaults` and the userspace-only words, which
//! `fstab` uses too (never the other way). Each rule cites the kernel
//! function it models. Pure: takes the facts it needs (MemTotal, the ext4
//! superblock defaults) as arguments, never touches the filesystem.
//!
//! The folder: `canonical` (the form being built, [`Canonical`], and the
//! facts a model takes, [`FsContext`]), `numbers` (the kernel's number
//! parsers, [`memparse`]), this file (the generic flags, splitting,
//! `defaults`, tmpfs, the entry points [`configured`] and [`running`]),
//! then one file per filesystem family: `ext4`, `xfs`, `btrfs`, `other`
//! (proc, vfat, nfs).

mod btrfs;
mod canonical;
mod ext4;
mod numbers;
mod other;
mod xfs;

pub use canonical::{Canonical, Ext4Defaults, FsContext};
pub use numbers::memparse;

use btrfs::btrfs;
use canonical::{set_keyed, unknown};
use ext4::ext4;
use other::{hidepid_name, nfs, proc_fs, vfat};
use xfs::xfs;

/// Page size assumed for tmpfs sizes (x86_64, most arm64 kernels).
pub const PAGE_SIZE: u64 = 4096;

/// Split an option string on commas outside double quotes
/// (`context="a,b",ro` -> [`context="a,b"`, `ro`]); empty items are dropped.
pub fn split_options(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// What `defaults` stands for (mount(8)).
pub const DEFAULTS: [&str; 7] = ["rw", "suid", "dev", "exec", "auto", "nouser", "async"];

/// The option list with `defaults` made explicit as libmount applies it:
/// `defaults` sets nothing (util-linux `optmap.c` maps it to no flag), so
/// `ro,defaults` mounts read-only and `nosuid,nodev,noexec,defaults` keeps
/// all three. The words it stands for are the state every list starts
/// from, so they go first (once, when the list names `defaults`) and every
/// other option follows in its own order; expanding it in place would undo
/// the options written before it.
pub fn expand_defaults(opts: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(opts.len() + 6);
    if opts.iter().any(|o| o == "defaults") {
        out.extend(DEFAULTS.iter().map(|s| s.to_string()));
    }
    out.extend(opts.iter().filter(|o| *o != "defaults").cloned());
    out
}

/// Options that only mount(8), systemd or swapon read: never passed to the
/// kernel, never in /proc/mounts.
pub fn is_userspace_only(opt: &str) -> bool {
    let name = opt.split('=').next().unwrap_or(opt);
    matches!(
        opt,
        "defaults"
            | "auto"
            | "noauto"
            | "user"
            | "users"
            | "nouser"
            | "owner"
            | "group"
            | "nofail"
            | "_netdev"
            | "sw"
            | "bind"
            | "rbind"
            | "move"
            | "remount"
            | "loop"
            | "nocanonicalize"
    ) || matches!(
        name,
        "comment"
            | "pri"
            | "loop"
            | "offset"
            | "sizelimit"
            | "encryption"
            | "helper"
            | "uhelper"
            | "verity.hashdevice"
    ) || name.starts_with("x-")
        || name.starts_with("X-")
}

/// Generic (VFS) flags after left-to-right processing: the one table of
/// mount flags, used here and by `fstab::kernel_options` and `atime_mode`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub(crate) ro: bool,
    pub(crate) nosuid: bool,
    pub(crate) nodev: bool,
    pub(crate) noexec: bool,
    pub(crate) sync: bool,
    pub(crate) dirsync: bool,
    pub(crate) mand: bool,
    pub(crate) lazytime: bool,
    pub(crate) noatime: bool,
    pub(crate) strictatime: bool,
    pub(crate) nodiratime: bool,
    pub(crate) nosymfollow: bool,
}

/// Apply a generic flag (mount(8) and `path_mount`); false when `opt` is
/// not one. `defaults` is a no-op, as in libmount (see [`expand_defaults`]).
pub(crate) fn apply_flag(f: &mut Flags, opt: &str) -> bool {
    match opt {
        "ro" => f.ro = true,
        "rw" => f.ro = false,
        "suid" => f.nosuid = false,
        "nosuid" => f.nosuid = true,
        "dev" => f.nodev = false,
        "nodev" => f.nodev = true,
        "exec" => f.noexec = false,
        "noexec" => f.noexec = true,
        "sync" => f.sync = true,
        "async" => f.sync = false,
        "dirsync" => f.dirsync = true,
        "mand" => f.mand = true,
        "nomand" => f.mand = false,
        "lazytime" => f.lazytime = true,
        "nolazytime" => f.lazytime = false,
        "atime" => f.noatime = false,
        "noatime" => f.noatime = true,
        "strictatime" => f.strictatime = true,
        "nostrictatime" => f.strictatime = false,
        // MS_RELATIME is the kernel default either way (since 2.6.30).
        "relatime" | "norelatime" => {}
        "diratime" => f.nodiratime = false,
        "nodiratime" => f.nodiratime = true,
        "symfollow" => f.nosymfollow = false,
        "nosymfollow" => f.nosymfollow = true,
        "user" | "users" => {
            f.noexec = true;
            f.nosuid = true;
            f.nodev = true;
        }
        "owner" | "group" => {
            f.nosuid = true;
            f.nodev = true;
        }
        // libmount maps `defaults` to no flag: it undoes nothing written before it
        "defaults" => {}
        "silent" | "loud" | "iversion" | "noiversion" | "i_version" | "rec" => {}
        _ => return false,
    }
    true
}

/// Propagation flags (`shared`, `rslave`, ...): never in the option field.
pub(crate) fn is_propagation(o: &str) -> bool {
    matches!(
        o,
        "shared"
            | "rshared"
            | "slave"
            | "rslave"
            | "private"
            | "rprivate"
            | "unbindable"
            | "runbindable"
    )
}

/// Per-mount flags (mountinfo field 6) a bind mount takes from its source
/// unless the fstab line names them.
pub const PER_MOUNT_FLAGS: [&str; 9] = [
    "ro",
    "rw",
    "nosuid",
    "nodev",
    "noexec",
    "noatime",
    "nodiratime",
    "relatime",
    "nosymfollow",
];

/// The generic flags as the kernel shows them: `ro|rw`, superblock flags,
/// per-mount flags (the implied `relatime`; `strictatime` shows no word).
pub(crate) fn flag_words(f: &Flags) -> Vec<String> {
    let mut out = vec![if f.ro { "ro" } else { "rw" }.to_string()];
    let mut push = |cond: bool, s: &str| {
        if cond {
            out.push(s.to_string())
        }
    };
    push(f.sync, "sync");
    push(f.dirsync, "dirsync");
    push(f.mand, "mand");
    push(f.lazytime, "lazytime");
    push(f.nosuid, "nosuid");
    push(f.nodev, "nodev");
    push(f.noexec, "noexec");
    push(!f.strictatime && f.noatime, "noatime");
    push(f.nodiratime, "nodiratime");
    push(!f.strictatime && !f.noatime, "relatime");
    push(f.nosymfollow, "nosymfollow");
    out
}

/// The kernel's canonical form of an fstab option list (`defaults` expanded
/// here) for a mount of `cx.fstype`.
pub fn configured(opts: &[String], cx: &FsContext) -> Canonical {
    let opts = expand_defaults(opts);
    let mut f = Flags::default();
    let mut fs_opts: Vec<&str> = Vec::new();
    for o in &opts {
        if apply_flag(&mut f, o) || is_userspace_only(o) || is_propagation(o) {
            continue;
        }
        fs_opts.push(o);
    }
    let mut c = Canonical {
        options: flag_words(&f),
        ..Canonical::default()
    };
    let fstype = cx.fstype.as_str();
    match fstype {
        "tmpfs" | "devtmpfs" => tmpfs(&fs_opts, cx, &mut c),
        "ext4" | "ext3" | "ext2" => ext4(&fs_opts, cx, &mut c),
        "proc" => proc_fs(&fs_opts, &mut c),
        "xfs" => xfs(&fs_opts, f.ro, &mut c),
        "btrfs" => btrfs(&fs_opts, f.ro, &mut c),
        "vfat" | "msdos" => vfat(&fs_opts, &mut c),
        "nfs" | "nfs4" => nfs(&fs_opts, &mut c),
        _ => {
            // no model: every filesystem option compared as written, a later key= wins
            for o in fs_opts {
                set_keyed(&mut c.options, o.to_string());
                if !c.unknown.iter().any(|u| u == o) {
                    c.unknown.push(o.to_string());
                }
            }
        }
    }
    c
}

/// tmpfs and devtmpfs (`mm/shmem.c`: `shmem_parse_one`, `shmem_show_options`).
fn tmpfs(opts: &[&str], cx: &FsContext, c: &mut Canonical) {
    let pages = cx.mem_total.map(|m| m / PAGE_SIZE);
    let mut blocks: Option<u64> = None;
    let mut inodes: Option<u64> = None;
    let mut mode: Option<u32> = None;
    let mut uid: Option<u64> = None;
    let mut gid: Option<u64> = None;
    let mut huge: Option<String> = None;
    let mut rest: Vec<String> = Vec::new();
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        match (k, v) {
            ("size", v) => {
                let Some((n, r)) = memparse(v) else {
                    unknown(c, o);
                    continue;
                };
                if r == "%" {
                    match pages {
                        Some(p) => {
                            let bytes = u128::from(n) * u128::from(p * PAGE_SIZE) / 100;
                            blocks = Some(bytes.div_ceil(u128::from(PAGE_SIZE)) as u64);
                        }
                        None => {
                            c.unchecked.push((
                                o.to_string(),
                                "a percentage of RAM, and MemTotal is unknown".into(),
                            ));
                            blocks = None;
                        }
                    }
                } else if r.is_empty() {
                    blocks = Some(n.div_ceil(PAGE_SIZE));
                } else {
                    unknown(c, o);
                }
            }
            ("nr_blocks", v) => match memparse(v) {
                Some((n, "")) => blocks = Some(n),
                _ => unknown(c, o),
            },
            ("nr_inodes", v) => match memparse(v) {
                Some((n, "")) => inodes = Some(n),
                _ => unknown(c, o),
            },
            ("mode", v) => match u32::from_str_radix(v, 8) {
                Ok(m) => mode = Some(m & 0o7777),
                Err(_) => unknown(c, o),
            },
            ("uid", v) => match v.parse() {
                Ok(n) => uid = Some(n),
                Err(_) => unknown(c, o),
            },
            ("gid", v) => match v.parse() {
                Ok(n) => gid = Some(n),
                Err(_) => unknown(c, o),
            },
            ("huge", "never" | "always" | "within_size" | "advise") => huge = Some(v.to_string()),
            ("inode64", "") => rest.retain(|r| r != "inode32" && r != "inode64"),
            ("inode32", "") => {
                rest.retain(|r| r != "inode64");
                c.unchecked.push((
                    o.to_string(),
                    "shown only by kernels built with CONFIG_TMPFS_INODE64".into(),
                ));
            }
            ("noswap", "") => rest.push("noswap".into()),
            _ => unknown(c, o),
        }
        if *o == "inode64" {
            rest.push("inode64".into());
        }
    }
    // shown only when not the default of half the RAM (shmem_default_max_blocks)
    if let Some(b) = blocks {
        if pages.map(|p| p / 2) != Some(b) {
            c.options.push(format!("size={}k", b * (PAGE_SIZE / 1024)));
        }
    }
    if let Some(n) = inodes {
        if pages.map(|p| p / 2) != Some(n) {
            c.options.push(format!("nr_inodes={n}"));
        }
    }
    if let Some(m) = mode.filter(|&m| m != 0o1777) {
        c.options.push(format!("mode={m:03o}"));
    }
    if let Some(u) = uid.filter(|&u| u != 0) {
        c.options.push(format!("uid={u}"));
    }
    if let Some(g) = gid.filter(|&g| g != 0) {
        c.options.push(format!("gid={g}"));
    }
    c.options.extend(rest);
    if let Some(h) = huge.filter(|h| h != "never") {
        c.options.push(format!("huge={h}"));
    }
}

/// Normalise options the kernel printed (mountinfo, /proc/mounts) so that an
/// older kernel's spelling reads like the current one: proc `hidepid=2` ->
/// `hidepid=invisible` (before Linux 5.8), ext4 `barrier=0` -> `nobarrier`
/// and `barrier=1` dropped (before 3.x kernels' `nobarrier`).
pub fn running(opts: &[String], fstype: &str) -> Vec<String> {
    opts.iter()
        .filter_map(|o| {
            let (k, v) = o.split_once('=').unwrap_or((o, ""));
            match (fstype, k) {
                ("proc", "hidepid") => hidepid_name(v)
                    .map(|n| format!("hidepid={n}"))
                    .or_else(|| Some(o.clone())),
                ("ext4" | "ext3" | "ext2", "barrier") => match v {
                    "0" => Some("nobarrier".into()),
                    "1" => None,
                    _ => Some(o.clone()),
                },
                _ => Some(o.clone()),
            }
        })
        .collect()
}

/// Convenience for tests and tools: `configured` on an option string.
pub fn configured_str(opts: &str, cx: &FsContext) -> Canonical {
    configured(&split_options(opts), cx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(fstype: &str) -> FsContext {
        FsContext {
            fstype: fstype.into(),
            // 24684084 kB, the machine the reference values were taken on
            mem_total: Some(24684084 * 1024),
            ext4: Some(Ext4Defaults {
                default_mount_options: vec!["user_xattr".into(), "acl".into()],
                errors_behavior: Some("Continue".into()),
                features: vec!["metadata_csum".into()],
            }),
        }
    }

    fn opts(s: &str, fstype: &str) -> Vec<String> {
        configured_str(s, &cx(fstype)).options
    }

    #[test]
    fn tmpfs_sizes_are_numbers_of_kib() {
        // values read back from Linux 6.18 mountinfo
        assert_eq!(
            opts("defaults,size=2G,mode=1777,nr_inodes=10k", "tmpfs"),
            ["rw", "relatime", "size=2097152k", "nr_inodes=10240"]
        );
        assert_eq!(
            opts("size=512m,mode=0755", "tmpfs"),
            ["rw", "relatime", "size=524288k", "mode=755"]
        );
        assert_eq!(
            opts("size=50%,uid=0,gid=5", "tmpfs"),
            ["rw", "relatime", "size=12342044k", "gid=5"]
        );
        assert_eq!(opts("size=1g,size=100%", "tmpfs")[2], "size=24684084k");
        assert_eq!(memparse("0x10k"), Some((16384, "")));
        assert_eq!(memparse("010"), Some((8, "")));
        assert_eq!(memparse("20%"), Some((20, "%")));
        assert_eq!(memparse("99999999999999999999"), None);
        let c = configured_str(
            "size=10%,bogus=1",
            &FsContext {
                fstype: "tmpfs".into(),
                ..FsContext::default()
            },
        );
        assert_eq!(c.unknown, ["bogus=1"]);
        assert_eq!(c.unchecked.len(), 1);
    }

    #[test]
    fn defaults_after_hardening_options_undoes_none_of_them() {
        // libmount: `defaults` sets no flag (read back from mount -a -T in
        // tests/storage_mount_units.rs)
        assert_eq!(
            opts("nosuid,nodev,noexec,defaults", "tmpfs"),
            ["rw", "nosuid", "nodev", "noexec", "relatime"]
        );
        assert_eq!(opts("ro,defaults", "tmpfs"), ["ro", "relatime"]);
        assert_eq!(
            opts("sync,defaults,noatime", "ext4"),
            ["rw", "sync", "noatime"]
        );
        assert_eq!(
            expand_defaults(&split_options("nosuid,defaults,defaults")),
            ["rw", "suid", "dev", "exec", "auto", "nouser", "async", "nosuid"]
        );
    }

    #[test]
    fn ext4_hides_superblock_defaults() {
        assert_eq!(
            opts(
                "barrier=0,acl,user_xattr,errors=remount-ro,data=ordered,noatime,commit=5,nodelalloc",
                "ext4"
            ),
            ["rw", "noatime", "nodelalloc", "nobarrier", "errors=remount-ro", "data=ordered"]
        );
        assert_eq!(opts("defaults", "ext4"), ["rw", "relatime"]);
        assert_eq!(
            opts("data=journal,quota,errors=continue,commit=0", "ext4"),
            [
                "rw",
                "relatime",
                "nodioread_nolock",
                "nodelalloc",
                "data=journal",
                "quota",
                "usrquota"
            ]
        );
        let mut c = cx("ext4");
        c.ext4.as_mut().unwrap().errors_behavior = Some("Remount read-only".into());
        c.ext4
            .as_mut()
            .unwrap()
            .default_mount_options
            .push("journal_data_ordered".into());
        assert_eq!(
            configured_str("errors=remount-ro,data=ordered", &c).options,
            ["rw", "relatime"]
        );
        assert_eq!(
            running(&["rw".into(), "barrier=0".into()], "ext4"),
            ["rw", "nobarrier"]
        );
    }

    #[test]
    fn proc_hidepid_by_name() {
        assert_eq!(
            opts("hidepid=2,gid=0", "proc"),
            ["rw", "relatime", "hidepid=invisible"]
        );
        assert_eq!(
            running(&["rw".into(), "hidepid=2".into()], "proc"),
            ["rw", "hidepid=invisible"]
        );
    }

    #[test]
    fn other_types() {
        assert_eq!(
            opts("umask=022,uid=1000,utf8", "vfat"),
            [
                "rw",
                "relatime",
                "fmask=0022",
                "dmask=0022",
                "uid=1000",
                "utf8"
            ]
        );
        assert_eq!(
            opts("logbsize=256k,uquota,nodiscard", "xfs"),
            ["rw", "relatime", "logbsize=256k", "usrquota"]
        );
        let c = configured_str("nobarrier,ikeep,inode32,noquota", &cx("xfs"));
        assert_eq!(c.options, ["rw", "relatime", "inode32", "noquota"]);
        assert_eq!(c.refused.len(), 1);
        assert_eq!(c.unchecked.len(), 1);
        assert_eq!(c.kernel_defaults, ["logbufs=8", "logbsize=32k"]);
        let c = configured_str("norecovery", &cx("xfs"));
        assert_eq!(c.refused.len(), 1);
        let c = configured_str("ro,norecovery,discard,nodiscard", &cx("xfs"));
        assert_eq!(c.options, ["ro", "relatime", "norecovery"]);
        let c = configured_str("nfsvers=4,tcp,bg,hard", &cx("nfs"));
        assert_eq!(c.options, ["rw", "relatime", "proto=tcp", "hard"]);
        assert_eq!(c.unknown, ["hard"]);
        assert_eq!(c.unchecked.len(), 1);
        let c = configured_str("foo=1,bar", &cx("zfs"));
        assert_eq!(c.unknown, ["foo=1", "bar"]);
    }
}
