//! xfs mount options as the kernel shows them (`xfs_fs_show_options`): what
//! it shows unasked, what it refuses, its spellings. Pure.

use super::canonical::{set_keyed, unknown, Canonical};
use super::numbers::{c_uint, memparse};

/// XFS (`fs/xfs/xfs_super.c`: `xfs_fs_parse_param`, `xfs_showargs`).
/// `xfs_showargs` prints the inode allocator, the log buffers and the quota
/// state even when they are the defaults (in [`Canonical::kernel_defaults`]).
pub(super) fn xfs(opts: &[&str], ro: bool, c: &mut Canonical) {
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
