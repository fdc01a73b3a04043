//! ext2/3/4 mount options as the kernel shows them (`ext4_show_options`):
//! an option is hidden where it is the superblock's default, and older
//! spellings are normalised. Pure.

use super::canonical::{set_keyed, unknown, Canonical, Ext4Defaults, FsContext};

/// One ext4 mount-option bit: the words that set and clear it and the word
/// the kernel shows (`fs/ext4/super.c`: `ext4_mount_opts`,
/// `_ext4_show_options`; checked on Linux 6.18).
pub(super) struct Ext4Bit {
    pub(super) set: &'static [&'static str],
    pub(super) clear: &'static [&'static str],
    pub(super) shown_set: &'static str,
    pub(super) shown_clear: &'static str,
}

pub(super) const EXT4_BITS: &[Ext4Bit] = &[
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
pub(super) fn ext4_default_bits(d: &Ext4Defaults) -> Vec<bool> {
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
pub(super) fn set_ext4_bit(bits: &mut [bool], clear_word: &str, clear_on: bool) {
    if let Some(i) = EXT4_BITS.iter().position(|b| b.shown_clear == clear_word) {
        bits[i] = !clear_on;
    }
}

/// ext2/3/4 (`fs/ext4/super.c`).
pub(super) fn ext4(opts: &[&str], cx: &FsContext, c: &mut Canonical) {
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
