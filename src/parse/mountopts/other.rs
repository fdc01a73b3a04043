//! proc (`hidepid` by name), vfat and nfs mount options as the kernel shows
//! them. Pure.

use super::canonical::{set_keyed, unknown, Canonical};

/// procfs (`fs/proc/root.c` parsing, `fs/proc/inode.c` `proc_show_options`).
pub(super) fn proc_fs(opts: &[&str], c: &mut Canonical) {
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
pub(super) fn hidepid_name(v: &str) -> Option<&'static str> {
    Some(match v {
        "0" | "off" => "off",
        "1" | "noaccess" => "noaccess",
        "2" | "invisible" => "invisible",
        "4" | "ptraceable" => "ptraceable",
        _ => return None,
    })
}

/// FAT (`fs/fat/inode.c`: `fat_show_options` prints masks as `%04o`).
pub(super) fn vfat(opts: &[&str], c: &mut Canonical) {
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
pub(super) fn nfs(opts: &[&str], c: &mut Canonical) {
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
