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

/// Page size assumed for tmpfs sizes (x86_64, most arm64 kernels).
pub const PAGE_SIZE: u64 = 4096;

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

/// Replace an earlier option with the same key (`size=1g` then `size=2g`).
fn set_keyed(out: &mut Vec<String>, opt: String) {
    let key = |s: &str| s.split('=').next().unwrap_or(s).to_string();
    let k = key(&opt);
    if let Some(i) = out.iter().position(|o| key(o) == k) {
        out.remove(i);
    }
    out.push(opt);
}

fn unknown(c: &mut Canonical, o: &str) {
    set_keyed(&mut c.options, o.to_string());
    if !c.unknown.iter().any(|u| u == o) {
        c.unknown.push(o.to_string());
    }
}

/// The kernel's `memparse`: `simple_strtoull(s, 0)` (decimal, `0x` hex,
/// leading-0 octal) then an optional K/M/G/T/P/E suffix (either case);
/// returns the value and the rest of the text.
pub fn memparse(s: &str) -> Option<(u64, &str)> {
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 && radix != 8 {
        return None;
    }
    let v = if end == 0 {
        0
    } else {
        u64::from_str_radix(&digits[..end], radix).ok()?
    };
    let rest = &digits[end..];
    let shift = match rest.chars().next() {
        Some('k' | 'K') => 10,
        Some('m' | 'M') => 20,
        Some('g' | 'G') => 30,
        Some('t' | 'T') => 40,
        Some('p' | 'P') => 50,
        Some('e' | 'E') => 60,
        _ => return Some((v, rest)),
    };
    Some((
        v.checked_shl(shift).filter(|x| x >> shift == v)?,
        &rest[1..],
    ))
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

/// One ext4 mount-option bit: the words that set and clear it and the word
/// the kernel shows (`fs/ext4/super.c`: `ext4_mount_opts`,
/// `_ext4_show_options`; checked on Linux 6.18).
struct Ext4Bit {
    set: &'static [&'static str],
    clear: &'static [&'static str],
    shown_set: &'static str,
    shown_clear: &'static str,
}

const EXT4_BITS: &[Ext4Bit] = &[
    Ext4Bit {
        set: &["minixdf"],
        clear: &["bsddf"],
        shown_set: "minixdf",
        shown_clear: "bsddf",
    },
    Ext4Bit {
        set: &["grpid", "bsdgroups"],
        clear: &["nogrpid", "sysvgroups"],
        shown_set: "grpid",
        shown_clear: "nogrpid",
    },
    Ext4Bit {
        set: &["block_validity"],
        clear: &["noblock_validity"],
        shown_set: "block_validity",
        shown_clear: "noblock_validity",
    },
    Ext4Bit {
        set: &["dioread_nolock"],
        clear: &["dioread_lock", "nodioread_nolock"],
        shown_set: "dioread_nolock",
        shown_clear: "nodioread_nolock",
    },
    Ext4Bit {
        set: &["discard"],
        clear: &["nodiscard"],
        shown_set: "discard",
        shown_clear: "nodiscard",
    },
    Ext4Bit {
        set: &["delalloc"],
        clear: &["nodelalloc"],
        shown_set: "delalloc",
        shown_clear: "nodelalloc",
    },
    Ext4Bit {
        set: &["warn_on_error"],
        clear: &["nowarn_on_error"],
        shown_set: "warn_on_error",
        shown_clear: "nowarn_on_error",
    },
    Ext4Bit {
        set: &["journal_checksum"],
        clear: &["nojournal_checksum"],
        shown_set: "journal_checksum",
        shown_clear: "nojournal_checksum",
    },
    Ext4Bit {
        set: &["noload", "norecovery"],
        clear: &[],
        shown_set: "norecovery",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["barrier", "barrier=1"],
        clear: &["nobarrier", "barrier=0"],
        shown_set: "barrier",
        shown_clear: "nobarrier",
    },
    Ext4Bit {
        set: &["noauto_da_alloc", "auto_da_alloc=0"],
        clear: &["auto_da_alloc", "auto_da_alloc=1"],
        shown_set: "noauto_da_alloc",
        shown_clear: "auto_da_alloc",
    },
    Ext4Bit {
        set: &[],
        clear: &["noinit_itable"],
        shown_set: "",
        shown_clear: "noinit_itable",
    },
    Ext4Bit {
        set: &["user_xattr"],
        clear: &[],
        shown_set: "user_xattr",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["acl"],
        clear: &[],
        shown_set: "acl",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["nouid32"],
        clear: &[],
        shown_set: "nouid32",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["debug"],
        clear: &[],
        shown_set: "debug",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["nombcache", "no_mbcache"],
        clear: &[],
        shown_set: "nombcache",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["no_prefetch_block_bitmaps"],
        clear: &["prefetch_block_bitmaps"],
        shown_set: "no_prefetch_block_bitmaps",
        shown_clear: "",
    },
    Ext4Bit {
        set: &["data_err=abort"],
        clear: &["data_err=ignore"],
        shown_set: "data_err=abort",
        shown_clear: "",
    },
];

/// Index of the bits that `ext4_set_def_opts` turns on by default.
fn ext4_default_bits(d: &Ext4Defaults) -> Vec<bool> {
    let has = |w: &str| d.default_mount_options.iter().any(|o| o == w);
    EXT4_BITS
        .iter()
        .map(|b| match b.shown_set {
            "grpid" => has("bsdgroups"),
            "block_validity" => true,
            // set when the block size is at most the page size (every common case)
            "dioread_nolock" => true,
            "discard" => has("discard"),
            "delalloc" => !has("nodelalloc"),
            "journal_checksum" => d.features.iter().any(|f| f == "metadata_csum"),
            "barrier" => !has("nobarrier"),
            // xattr user namespace and ACLs are on whatever the superblock says
            "user_xattr" | "acl" => true,
            "nouid32" => has("uid16"),
            "debug" => has("debug"),
            // init_itable: on by default, the bit is "clear" when noinit_itable
            _ => b.shown_set.is_empty(),
        })
        .collect()
}

/// Set or clear the bit whose cleared word is `clear_word`: `clear_on` true
/// means that word is in effect (the bit is clear).
fn set_ext4_bit(bits: &mut [bool], clear_word: &str, clear_on: bool) {
    if let Some(i) = EXT4_BITS.iter().position(|b| b.shown_clear == clear_word) {
        bits[i] = !clear_on;
    }
}

/// ext2/3/4 (`fs/ext4/super.c`).
fn ext4(opts: &[&str], cx: &FsContext, c: &mut Canonical) {
    let d = match &cx.ext4 {
        Some(d) => d.clone(),
        None => {
            c.assumptions.push(
                "the ext4 superblock defaults are unknown (no tune2fs capture or readable device): \
                 mke2fs defaults assumed (`user_xattr acl`, errors=continue)"
                    .into(),
            );
            Ext4Defaults {
                default_mount_options: vec!["user_xattr".into(), "acl".into()],
                errors_behavior: Some("Continue".into()),
                features: vec!["metadata_csum".into()],
            }
        }
    };
    let defaults = ext4_default_bits(&d);
    let mut bits = defaults.clone();
    let sb_jmode = d
        .default_mount_options
        .iter()
        .find_map(|o| match o.as_str() {
            "journal_data" => Some("journal"),
            "journal_data_ordered" => Some("ordered"),
            "journal_data_writeback" => Some("writeback"),
            _ => None,
        });
    let sb_errors = match d.errors_behavior.as_deref() {
        Some("Remount read-only") => "remount-ro",
        Some("Panic") => "panic",
        _ => "continue",
    };
    let mut data: Option<String> = None;
    let mut errors: Option<String> = None;
    let mut quota = (false, false, false);
    // numeric options with the default the kernel hides
    let numeric: &[(&str, u64)] = &[
        ("commit", 5),
        ("min_batch_time", 0),
        ("max_batch_time", 15000),
        ("stripe", 0),
        ("inode_readahead_blks", 32),
        ("init_itable", 10),
        ("max_dir_size_kb", 0),
        ("resuid", 0),
        ("resgid", 0),
        ("sb", 1),
    ];
    let mut nums: Vec<(&str, u64)> = Vec::new();
    let mut text: Vec<String> = Vec::new();
    for o in opts {
        if let Some(i) = EXT4_BITS.iter().position(|b| b.set.contains(o)) {
            bits[i] = true;
            continue;
        }
        if let Some(i) = EXT4_BITS.iter().position(|b| b.clear.contains(o)) {
            bits[i] = false;
            continue;
        }
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        match k {
            "data" if matches!(v, "journal" | "ordered" | "writeback") => data = Some(v.into()),
            "errors" if matches!(v, "continue" | "remount-ro" | "panic") => errors = Some(v.into()),
            "quota" | "usrquota" if v.is_empty() => quota.0 = true,
            "grpquota" if v.is_empty() => quota.1 = true,
            "prjquota" if v.is_empty() => quota.2 = true,
            "noquota" if v.is_empty() => quota = (false, false, false),
            "jqfmt" | "usrjquota" | "grpjquota" => set_keyed(&mut text, o.to_string()),
            // accepted, never shown (journal_ioprio) or refused by current kernels
            "journal_ioprio" => {}
            "nouser_xattr" | "noacl" if v.is_empty() => c.unchecked.push((
                o.to_string(),
                "Linux 6.x refuses it (the mount fails); older kernels ignored it".into(),
            )),
            "inlinecrypt" if v.is_empty() => c.unchecked.push((
                o.to_string(),
                "shown only by kernels built with inline encryption".into(),
            )),
            "mb_optimize_scan" => c.unchecked.push((
                o.to_string(),
                "its default depends on the number of block groups".into(),
            )),
            "init_itable" if v.is_empty() => {
                set_ext4_bit(&mut bits, "noinit_itable", false);
                nums.retain(|(x, _)| *x != "init_itable");
            }
            _ => match numeric.iter().find(|(n, _)| *n == k) {
                Some(&(name, _)) => match v.parse::<u64>() {
                    Ok(n) => {
                        // commit=0 means the default
                        let n = if name == "commit" && n == 0 { 5 } else { n };
                        if name == "init_itable" {
                            set_ext4_bit(&mut bits, "noinit_itable", false);
                        }
                        nums.retain(|(x, _)| *x != name);
                        nums.push((name, n));
                    }
                    Err(_) => unknown(c, o),
                },
                None => unknown(c, o),
            },
        }
    }
    // data=journal turns delalloc and dioread_nolock off (ext4_check_opt_consistency)
    if data.as_deref() == Some("journal") {
        for (i, b) in EXT4_BITS.iter().enumerate() {
            if matches!(b.shown_set, "delalloc" | "dioread_nolock") {
                bits[i] = false;
            }
        }
    }
    for (i, b) in EXT4_BITS.iter().enumerate() {
        if bits[i] != defaults[i] {
            let w = if bits[i] { b.shown_set } else { b.shown_clear };
            if !w.is_empty() {
                c.options.push(w.to_string());
            }
        }
    }
    if let Some(e) = errors.filter(|e| e != sb_errors) {
        c.options.push(format!("errors={e}"));
    }
    // an explicit data= is shown unless it is the superblock's journal mode
    if let Some(m) = data.filter(|m| Some(m.as_str()) != sb_jmode) {
        c.options.push(format!("data={m}"));
    }
    for (name, default) in numeric {
        if let Some(&(_, v)) = nums.iter().find(|(n, _)| n == name) {
            if v != *default {
                c.options.push(format!("{name}={v}"));
            }
        }
    }
    if quota.0 || quota.1 || quota.2 {
        c.options.push("quota".into());
        for (on, w) in [
            (quota.0, "usrquota"),
            (quota.1, "grpquota"),
            (quota.2, "prjquota"),
        ] {
            if on {
                c.options.push(w.into());
            }
        }
    }
    c.options.extend(text);
}

/// procfs (`fs/proc/root.c` parsing, `fs/proc/inode.c` `proc_show_options`).
fn proc_fs(opts: &[&str], c: &mut Canonical) {
    let mut hidepid: Option<&str> = None;
    let mut gid: Option<u64> = None;
    let mut subset = false;
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        match k {
            "hidepid" => match hidepid_name(v) {
                Some(n) => hidepid = Some(n),
                None => unknown(c, o),
            },
            "gid" => match v.parse() {
                Ok(g) => gid = Some(g),
                Err(_) => unknown(c, o),
            },
            "subset" if v == "pid" => subset = true,
            _ => unknown(c, o),
        }
    }
    if let Some(g) = gid.filter(|&g| g != 0) {
        c.options.push(format!("gid={g}"));
    }
    if let Some(h) = hidepid.filter(|&h| h != "off") {
        c.options.push(format!("hidepid={h}"));
    }
    if subset {
        c.options.push("subset=pid".into());
    }
}

/// `hidepid=` value by name as Linux 5.8+ shows it (`hidepid2str`).
fn hidepid_name(v: &str) -> Option<&'static str> {
    Some(match v {
        "0" | "off" => "off",
        "1" | "noaccess" => "noaccess",
        "2" | "invisible" => "invisible",
        "4" | "ptraceable" => "ptraceable",
        _ => return None,
    })
}

/// XFS (`fs/xfs/xfs_super.c`: `xfs_fs_parse_param`, `xfs_showargs`).
/// `xfs_showargs` prints the inode allocator, the log buffers and the quota
/// state even when they are the defaults (in [`Canonical::kernel_defaults`]).
fn xfs(opts: &[&str], ro: bool, c: &mut Canonical) {
    let mut quota: Vec<&str> = Vec::new();
    let mut noquota = false;
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        let word = match (k, v) {
            ("quota" | "uquota" | "usrquota", "") => {
                quota.retain(|q| !q.starts_with('u'));
                quota.push("usrquota");
                continue;
            }
            ("qnoenforce" | "uqnoenforce", "") => {
                quota.retain(|q| !q.starts_with('u'));
                quota.push("uqnoenforce");
                continue;
            }
            ("gquota" | "grpquota", "") => {
                quota.retain(|q| !q.starts_with('g'));
                quota.push("grpquota");
                continue;
            }
            ("gqnoenforce", "") => {
                quota.retain(|q| !q.starts_with('g'));
                quota.push("gqnoenforce");
                continue;
            }
            ("pquota" | "prjquota", "") => {
                quota.retain(|q| !q.starts_with('p'));
                quota.push("prjquota");
                continue;
            }
            ("pqnoenforce", "") => {
                quota.retain(|q| !q.starts_with('p'));
                quota.push("pqnoenforce");
                continue;
            }
            ("noquota", "") => {
                quota.clear();
                noquota = true;
                continue;
            }
            // removed in Linux 4.19: "xfs: Unknown parameter 'nobarrier'"
            ("barrier" | "nobarrier", "") => {
                c.refused.push((
                    o.to_string(),
                    "xfs dropped `barrier`/`nobarrier` in Linux 4.19 (write barriers are always on): the kernel refuses the option (`Unknown parameter`) and the mount fails".into(),
                ));
                continue;
            }
            ("norecovery" | "norecover", "") if !ro => {
                c.refused.push((
                    o.to_string(),
                    "xfs mounts with `norecovery` only read-only (`no-recovery mounts must be read-only`): the mount fails without `ro`".into(),
                ));
                continue;
            }
            // deprecated: accepted and ignored by current kernels, shown by older ones
            ("attr2" | "noattr2" | "ikeep" | "noikeep", "") => {
                c.unchecked.push((
                    o.to_string(),
                    "deprecated xfs option: current kernels accept it and do not show it, older ones show it".into(),
                ));
                continue;
            }
            ("bsdgroups" | "grpid", "") => "grpid".to_string(),
            ("sysvgroups" | "nogrpid", "") | ("nodiscard", "") | ("nolargeio", "") => {
                let cleared = match k {
                    "nodiscard" => "discard",
                    "nolargeio" => "largeio",
                    _ => "grpid",
                };
                c.options.retain(|x| x != cleared);
                continue;
            }
            ("inode64" | "inode32", "") => {
                c.options.retain(|x| x != "inode64" && x != "inode32");
                k.to_string()
            }
            ("norecovery" | "norecover", "") => "norecovery".to_string(),
            (
                "wsync" | "noalign" | "swalloc" | "nouuid" | "filestreams" | "discard" | "largeio",
                "",
            ) => k.to_string(),
            ("dax", "") => "dax=always".to_string(),
            ("dax", "always" | "never" | "inode") => o.to_string(),
            // `xfs_fs_validate_params`: a power of two from 16 KiB to 256 KiB
            ("logbsize", v) => match memparse(v) {
                Some((0, "")) => continue,
                Some((n, "")) if n.is_power_of_two() && (16 << 10..=256 << 10).contains(&n) => {
                    format!("logbsize={}k", n >> 10)
                }
                Some((_, "")) => {
                    c.refused.push((
                        o.to_string(),
                        "xfs takes a `logbsize` that is a power of two from 16k to 256k (`invalid logbufsize`): the mount fails".into(),
                    ));
                    continue;
                }
                _ => {
                    unknown(c, o);
                    continue;
                }
            },
            ("allocsize", v) => match memparse(v) {
                Some((n, "")) => format!("{k}={}k", n >> 10),
                _ => {
                    unknown(c, o);
                    continue;
                }
            },
            // `fsparam_u32`: the number is read as C reads it (base 0)
            ("logbufs" | "sunit" | "swidth", v) => match c_uint(v) {
                Some(0) if k == "logbufs" => continue,
                Some(n) if k == "logbufs" && !(2..=8).contains(&n) => {
                    c.refused.push((
                        o.to_string(),
                        "xfs takes 2 to 8 log buffers (`invalid logbufs value`): the mount fails"
                            .into(),
                    ));
                    continue;
                }
                Some(n) => format!("{k}={n}"),
                None => {
                    c.refused.push((
                        o.to_string(),
                        format!("the kernel reads `{k}` as a C number (0x hex, a leading 0 octal) and `{v}` is none: the mount fails"),
                    ));
                    continue;
                }
            },
            ("logdev" | "rtdev", _) => o.to_string(),
            _ => {
                unknown(c, o);
                continue;
            }
        };
        set_keyed(&mut c.options, word);
    }
    let has = |c: &Canonical, k: &str| {
        c.options
            .iter()
            .any(|x| x == k || x.split_once('=').is_some_and(|(xk, _)| xk == k))
    };
    if !has(c, "inode32") && !has(c, "inode64") {
        c.kernel_defaults.push("inode64".into());
    }
    if !has(c, "logbufs") {
        c.kernel_defaults.push("logbufs=8".into());
    }
    if !has(c, "logbsize") {
        c.kernel_defaults.push("logbsize=32k".into());
    }
    if quota.is_empty() {
        if noquota {
            c.options.push("noquota".into());
        } else {
            c.kernel_defaults.push("noquota".into());
        }
    }
    c.options.extend(quota.into_iter().map(str::to_string));
}

/// Btrfs (`fs/btrfs/super.c`: `btrfs_parse_param`, `btrfs_show_options`).
/// What it shows unasked (`discard=async` where the device can discard,
/// `space_cache=v2` with the free-space tree, `subvolid=`/`subvol=` of the
/// mounted subvolume, `ssd` on a non-rotational device) depends on the
/// device and the filesystem: in [`Canonical::kernel_defaults`] as a fresh
/// mkfs.btrfs on a loop device shows it, never compared.
fn btrfs(opts: &[&str], ro: bool, c: &mut Canonical) {
    let mut discard: Option<&str> = None; // None: the kernel's default
    let mut space_cache_given = false;
    let (mut subvol, mut subvolid): (Option<String>, Option<String>) = (None, None);
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        let clear = |c: &mut Canonical, words: &[&str]| {
            c.options.retain(|x| {
                let xk = x.split_once('=').map_or(x.as_str(), |(a, _)| a);
                !words.contains(&xk)
            })
        };
        let word = match (k, v) {
            ("compress" | "compress-force", v) => {
                clear(c, &["compress", "compress-force"]);
                // the default level is shown with the algorithm (zstd:3, zlib:3)
                let algo = match v.split_once(':') {
                    Some((a, l)) => (a, Some(l)),
                    None => (v, None),
                };
                match algo {
                    ("" | "zlib", None) => format!("{k}=zlib:3"),
                    ("zstd", None) => format!("{k}=zstd:3"),
                    ("lzo", None) => format!("{k}=lzo"),
                    ("no" | "none", None) => continue,
                    ("zlib" | "zstd", Some(l)) if l.parse::<u32>().is_ok() => {
                        format!("{k}={}:{}", algo.0, l.parse::<u32>().unwrap_or(0))
                    }
                    _ => {
                        unknown(c, o);
                        continue;
                    }
                }
            }
            ("ssd" | "ssd_spread", "") => {
                clear(c, &["ssd", "nossd", "ssd_spread"]);
                k.to_string()
            }
            ("nossd" | "nossd_spread", "") => {
                clear(c, &["ssd", "nossd", "ssd_spread"]);
                if k == "nossd_spread" {
                    continue;
                }
                "nossd".to_string()
            }
            ("discard", "" | "sync") => {
                discard = Some("discard");
                continue;
            }
            ("discard", "async") => {
                discard = Some("discard=async");
                continue;
            }
            ("nodiscard", "") => {
                discard = Some("");
                continue;
            }
            ("space_cache", "v2") => {
                space_cache_given = true;
                "space_cache=v2".to_string()
            }
            ("space_cache", "" | "v1") | ("nospace_cache", "") => {
                c.refused.push((
                    o.to_string(),
                    "a btrfs with the free-space tree (`space_cache=v2`, mkfs.btrfs's default since btrfs-progs 5.15) cannot be mounted with the v1 space cache or none: the mount fails".into(),
                ));
                continue;
            }
            ("commit", v) => match v.parse::<u64>() {
                Ok(0) | Ok(30) => {
                    clear(c, &["commit"]);
                    continue;
                }
                Ok(n) => format!("commit={n}"),
                Err(_) => {
                    unknown(c, o);
                    continue;
                }
            },
            ("max_inline", v) => match memparse(v) {
                Some((2048, "")) => {
                    clear(c, &["max_inline"]);
                    continue;
                }
                Some((n, "")) => format!("max_inline={n}"),
                _ => {
                    unknown(c, o);
                    continue;
                }
            },
            ("subvol", v) => {
                let w = format!("subvol=/{}", v.trim_matches('/'));
                subvol = Some(w.clone());
                w
            }
            ("subvolid", v) if v.parse::<u64>().is_ok() => {
                let w = format!("subvolid={}", v.parse::<u64>().unwrap_or(0));
                subvolid = Some(w.clone());
                w
            }
            ("nodatacow", "") => {
                set_keyed(&mut c.options, "nodatasum".into());
                "nodatacow".to_string()
            }
            // datacow leaves nodatasum (which nodatacow set) in place
            ("datacow", "") => {
                clear(c, &["nodatacow"]);
                continue;
            }
            ("datasum", "") => {
                clear(c, &["nodatasum", "nodatacow"]);
                continue;
            }
            ("autodefrag" | "flushoncommit" | "nobarrier" | "notreelog" | "noacl", "") => {
                k.to_string()
            }
            ("noautodefrag" | "noflushoncommit" | "barrier" | "treelog" | "acl", "") => {
                let on = match k {
                    "noautodefrag" => "autodefrag",
                    "noflushoncommit" => "flushoncommit",
                    "barrier" => "nobarrier",
                    "treelog" => "notreelog",
                    _ => "noacl",
                };
                clear(c, &[on]);
                continue;
            }
            (
                "nodatasum"
                | "degraded"
                | "user_subvol_rm_allowed"
                | "skip_balance"
                | "enospc_debug",
                "",
            ) => k.to_string(),
            ("fatal_errors", "bug") => {
                clear(c, &["fatal_errors"]);
                continue;
            }
            ("fatal_errors", "panic") => o.to_string(),
            // one-time actions at mount, not shown
            ("clear_cache" | "usebackuproot", "") | ("rescue", "usebackuproot") => continue,
            ("norecovery" | "nologreplay", "") | ("rescue", "nologreplay") if !ro => {
                c.refused.push((
                    o.to_string(),
                    "btrfs skips log replay only read-only (`nologreplay must be used with ro`): the mount fails without `ro`".into(),
                ));
                continue;
            }
            ("norecovery" | "nologreplay", "") | ("rescue", "nologreplay") => {
                "rescue=nologreplay".to_string()
            }
            ("check_int" | "check_int_data" | "inode_cache" | "noinode_cache", "")
            | ("check_int_print_mask", _) => {
                c.refused.push((
                    o.to_string(),
                    "removed from btrfs (Linux 5.11 to 6.6): the kernel refuses it and the mount fails"
                        .into(),
                ));
                continue;
            }
            ("thread_pool", _) => {
                c.unchecked.push((
                    o.to_string(),
                    "btrfs shows it only where it differs from min(CPUs + 2, 8)".into(),
                ));
                continue;
            }
            _ => {
                unknown(c, o);
                continue;
            }
        };
        set_keyed(&mut c.options, word);
    }
    match discard {
        Some("") => {}
        Some(d) => c.options.push(d.to_string()),
        None => c.kernel_defaults.push("discard=async".into()),
    }
    if !space_cache_given {
        c.kernel_defaults.push("space_cache=v2".into());
    }
    // the top-level subvolume is id 5 at `/`; another one's id or path is
    // not in the options
    let top = |w: &Option<String>, top: &str| w.as_deref().is_none_or(|w| w == top);
    if subvolid.is_none() && top(&subvol, "subvol=/") {
        c.kernel_defaults.push("subvolid=5".into());
    }
    if subvol.is_none() && top(&subvolid, "subvolid=5") {
        c.kernel_defaults.push("subvol=/".into());
    }
}

/// `kstrtouint(s, 0)`: decimal, `0x` hex, a leading `0` octal; an optional
/// trailing newline is not accepted here (mount options have none).
fn c_uint(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() {
        return None;
    }
    u32::from_str_radix(digits, radix).ok().map(u64::from)
}

/// FAT (`fs/fat/inode.c`: `fat_show_options` prints masks as `%04o`).
fn vfat(opts: &[&str], c: &mut Canonical) {
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        match k {
            "umask" | "fmask" | "dmask" | "allow_utime" => match u32::from_str_radix(v, 8) {
                Ok(m) => {
                    let keys: &[&str] = if k == "umask" {
                        &["fmask", "dmask"]
                    } else {
                        &[k]
                    };
                    for key in keys {
                        set_keyed(&mut c.options, format!("{key}={m:04o}"));
                    }
                }
                Err(_) => unknown(c, o),
            },
            "uid" | "gid" => match v.parse::<u64>() {
                Ok(0) => {}
                Ok(n) => set_keyed(&mut c.options, format!("{k}={n}")),
                Err(_) => unknown(c, o),
            },
            _ => unknown(c, o),
        }
    }
}

/// NFS (`fs/nfs/super.c` `nfs_show_mount_options`; mount.nfs-only options dropped).
fn nfs(opts: &[&str], c: &mut Canonical) {
    for o in opts {
        let (k, v) = o.split_once('=').unwrap_or((o, ""));
        match (k, v) {
            // mount.nfs(8) only, or ignored since Linux 2.6.25
            ("bg" | "fg" | "intr" | "nointr", "") | ("retry", _) => {}
            ("tcp", "") | ("udp", "") => set_keyed(&mut c.options, format!("proto={k}")),
            ("nfsvers" | "vers", v) if v.contains('.') => {
                set_keyed(&mut c.options, format!("vers={v}"))
            }
            ("nfsvers" | "vers", v) => c.unchecked.push((
                o.to_string(),
                format!("the kernel shows the version it negotiated (`vers={v}.N` for 4)"),
            )),
            ("rsize" | "wsize", _) => c.unchecked.push((
                o.to_string(),
                "negotiated with the server, which may lower it".into(),
            )),
            _ => unknown(c, o),
        }
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
