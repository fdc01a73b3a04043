//! btrfs mount options as the kernel shows them (`btrfs_show_options`): what
//! it shows unasked, what it refuses, its spellings. Pure.

use super::canonical::{set_keyed, unknown, Canonical};
use super::numbers::memparse;

/// Btrfs (`fs/btrfs/super.c`: `btrfs_parse_param`, `btrfs_show_options`).
/// What it shows unasked (`discard=async` where the device can discard,
/// `space_cache=v2` with the free-space tree, `subvolid=`/`subvol=` of the
/// mounted subvolume, `ssd` on a non-rotational device) depends on the
/// device and the filesystem: in [`Canonical::kernel_defaults`] as a fresh
/// mkfs.btrfs on a loop device shows it, never compared.
pub(super) fn btrfs(opts: &[&str], ro: bool, c: &mut Canonical) {
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
