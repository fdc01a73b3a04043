//! Whether the disks under a mount spin: the kernel name of a mount's
//! source, the whole disk under a partition, the members of a stacked
//! device (dm, md) each looked at once, and whether a leaf's
//! `queue/rotational` flag describes its medium at all (virtual and cloud
//! disks, [`crate::facts::disks`]). Reads `/sys/block`, `/sys/class/block`,
//! `/sys/dev/block` and `/proc/partitions` only; builds no namespace.

use std::collections::BTreeMap;

use crate::facts::disks::{classify, DiskId, DiskKind};
use crate::host::{EntryKind, Host};

/// Most levels of stacked block devices followed (dm on md on partitions...).
const MAX_STACK_DEPTH: usize = 8;

/// What the rotational lookups of a host's mounts share, read once for all
/// of them instead of once per mount: a live host has dozens of virtual
/// mounts (`proc`, `tmpfs`, cgroups), each of which used to stat
/// `/sys/block` and read `/proc/partitions` again for its `0:N` device.
#[derive(Default)]
pub(super) struct BlockFiles {
    sys_block_is_dir: Option<bool>,
    partitions: Option<Option<String>>,
}

impl BlockFiles {
    pub(super) fn sys_block_is_dir(&mut self, host: &Host) -> bool {
        *self
            .sys_block_is_dir
            .get_or_insert_with(|| matches!(host.kind_of("/sys/block"), Ok(EntryKind::Dir)))
    }

    fn partitions(&mut self, host: &Host) -> Option<&str> {
        self.partitions
            .get_or_insert_with(|| host.read_to_string("/proc/partitions").ok())
            .as_deref()
    }
}

/// Kernel block-device name (`sda1`, `dm-3`, `nvme0n1p2`) of a mount source.
fn kernel_name(
    host: &Host,
    source: &str,
    devno: Option<&str>,
    block: &mut BlockFiles,
) -> Option<String> {
    if let Some(rest) = source.strip_prefix("/dev/") {
        if let Ok(real) = host.resolve(source) {
            if let Some(n) = real.rsplit('/').next().filter(|n| {
                host.exists(&format!("/sys/class/block/{n}"))
                    || host.exists(&format!("/sys/block/{n}"))
            }) {
                return Some(n.to_string());
            }
        }
        if let Some(name) = rest.strip_prefix("mapper/") {
            if let Ok(entries) = host.read_dir("/sys/block") {
                for e in entries.iter().filter(|e| e.name.starts_with("dm-")) {
                    if let Ok(n) = host.read_to_string(&format!("/sys/block/{}/dm/name", e.name)) {
                        if n.trim() == name {
                            return Some(e.name.clone());
                        }
                    }
                }
            }
        }
        if !rest.contains('/') && !rest.is_empty() {
            return Some(rest.to_string());
        }
    }
    let devno = devno?;
    if let Ok(real) = host.resolve(&format!("/sys/dev/block/{devno}")) {
        return real.rsplit('/').next().map(str::to_string);
    }
    // A snapshot without /sys/dev (an sosreport copies /proc/partitions and
    // /sys/block/*/queue/ only): /proc/partitions maps major:minor to the name.
    let (major, minor) = devno.split_once(':')?;
    let text = block.partitions(host)?;
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() == 4 && f[0] == major && f[1] == minor).then(|| f[3].to_string())
    })
}

/// Whole disk holding a partition (`sda1` -> `sda`), or the name itself.
fn disk_of(host: &Host, name: &str) -> Option<String> {
    if host.exists(&format!("/sys/block/{name}")) {
        return Some(name.to_string());
    }
    let entries = host.read_dir("/sys/block").ok()?;
    entries
        .into_iter()
        .map(|e| e.name)
        .find(|d| host.exists(&format!("/sys/block/{d}/{name}")))
}

/// Rotational state of a device and the devices below it, each device
/// looked at once: `memo` holds finished answers and `None` for a device
/// being looked at (a device that lists itself below itself, directly or
/// through others, is unknown), so a sysfs where devices list each other as
/// slaves costs one visit per device, not one per path (K=6 took 25 s).
struct Rotational<'h> {
    host: &'h Host,
    memo: BTreeMap<String, Option<Option<bool>>>,
    visited: usize,
    /// Leaves whose flag is not their medium (virtual and cloud disks),
    /// with why, in the order they were met.
    not_the_medium: Vec<(String, DiskKind, Option<bool>)>,
    /// Every leaf disk met, in order.
    leaves: Vec<String>,
}

impl Rotational<'_> {
    fn of(&mut self, name: &str, depth: usize) -> Option<bool> {
        if depth > MAX_STACK_DEPTH {
            return None;
        }
        match self.memo.get(name) {
            Some(Some(done)) => return *done,
            Some(None) => return None, // a cycle
            None => {}
        }
        self.memo.insert(name.to_string(), None);
        self.visited += 1;
        let v = self.compute(name, depth);
        self.memo.insert(name.to_string(), Some(v));
        v
    }

    fn compute(&mut self, name: &str, depth: usize) -> Option<bool> {
        let host = self.host;
        let disk = disk_of(host, name)?;
        let slaves: Vec<String> = host
            .read_dir(&format!("/sys/block/{disk}/slaves"))
            .map(|v| v.into_iter().map(|e| e.name).collect())
            .unwrap_or_default();
        if !slaves.is_empty() {
            // stacked device (dm, md): rotational if any member is; solid-state only
            // when every member is known to be
            let mut all_known = true;
            for s in &slaves {
                match self.of(s, depth + 1) {
                    Some(true) => return Some(true),
                    Some(false) => {}
                    None => all_known = false,
                }
            }
            return if all_known { Some(false) } else { None };
        }
        let flag = host
            .read_to_string(&format!("/sys/block/{disk}/queue/rotational"))
            .ok()
            .and_then(|t| match t.trim() {
                "1" => Some(true),
                "0" => Some(false),
                _ => None,
            });
        self.leaves.push(disk.clone());
        let kind = disk_kind(host, &disk);
        if !kind.flag_is_the_medium() {
            self.not_the_medium.push((disk, kind, flag));
            return None;
        }
        flag
    }
}

/// What a whole disk is ([`classify`]) from its sysfs
/// `device/` files (a missing one reads as empty).
fn disk_kind(host: &Host, disk: &str) -> DiskKind {
    let read = |f: &str| {
        host.read_to_string(&format!("/sys/block/{disk}/device/{f}"))
            .unwrap_or_default()
    };
    let (vendor, model, modalias) = (read("vendor"), read("model"), read("modalias"));
    classify(&DiskId {
        name: disk,
        vendor: &vendor,
        model: &model,
        modalias: &modalias,
    })
}

/// What the rotational lookup of a mount found: the flag when it describes
/// the medium, else why not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Medium {
    /// Whether the disks spin; `None` when unknown.
    pub rotational: Option<bool>,
    /// Why `rotational` is unknown because of what the disk is (a virtual
    /// or cloud disk), with what decides it.
    pub not_the_medium: Option<(String, String)>,
    /// Whether a leaf is a virtual or cloud disk (not a RAID controller's
    /// virtual disk, which is its drives).
    pub virtual_disk: bool,
    /// The leaf disks (`sda, sdb` under an md array).
    pub leaves: Vec<String>,
    /// Block devices looked at.
    pub visited: usize,
}

/// How a site says what backs a virtual disk (the storage policy's
/// `assume_media` parameter).
pub(crate) const DECIDE_MEDIUM: &str = "Say what backs it: `--set storage.assume_media=ssd` (or `hdd`) \
     for this host, or a site overlay `overrides: [{rule: \"storage.*\", params: {assume_media: ssd}}]` \
     (docs/policy-language.md, Overrides); physical disks keep their own flag";

/// Whether the disk under a mount source spins: `None` when unknown (no
/// `/sys/block` data, a network or virtual filesystem).
pub fn rotational(host: &Host, source: &str, devno: Option<&str>) -> Option<bool> {
    rotational_counted(host, source, devno).0
}

/// [`rotational`] and the number of block devices it looked at (each at most
/// once, whatever the slaves links say).
pub fn rotational_counted(host: &Host, source: &str, devno: Option<&str>) -> (Option<bool>, usize) {
    rotational_with(host, source, devno, &mut BlockFiles::default())
}

/// [`rotational_counted`] sharing `block` with the other mounts of the host.
fn rotational_with(
    host: &Host,
    source: &str,
    devno: Option<&str>,
    block: &mut BlockFiles,
) -> (Option<bool>, usize) {
    let m = medium_with(host, source, devno, block);
    (m.rotational, m.visited)
}

/// The rotational lookup of a mount source with what the disks are.
pub(super) fn medium_with(
    host: &Host,
    source: &str,
    devno: Option<&str>,
    block: &mut BlockFiles,
) -> Medium {
    if !block.sys_block_is_dir(host) {
        return Medium::default();
    }
    let Some(name) = kernel_name(host, source, devno, block) else {
        return Medium::default();
    };
    let mut r = Rotational {
        host,
        memo: BTreeMap::new(),
        visited: 0,
        not_the_medium: Vec::new(),
        leaves: Vec::new(),
    };
    let rotational = r.of(&name, 0);
    let not_the_medium = r.not_the_medium.first().map(|(disk, kind, flag)| {
        let what = if *disk == name {
            disk.clone()
        } else {
            format!("{name} (on {disk})")
        };
        let decide = match kind {
            DiskKind::Controller { decides, .. } => format!(
                "{DECIDE_MEDIUM}. What backs it: the drives behind the controller, as {decides} shows."
            ),
            DiskKind::Cloud { decides, .. } => {
                format!("{DECIDE_MEDIUM}. What backs it: {decides}.")
            }
            _ => format!(
                "{DECIDE_MEDIUM}. What backs it: the hypervisor's storage (its datastore, pool or volume type)."
            ),
        };
        (kind.reason(&what, *flag), decide)
    });
    Medium {
        rotational,
        // a RAID controller's virtual disk is its drives: sharing it is
        // sharing spindles, as for a physical disk
        virtual_disk: r
            .not_the_medium
            .iter()
            .any(|(_, k, _)| !matches!(k, DiskKind::Controller { .. })),
        not_the_medium,
        leaves: r.leaves,
        visited: r.visited,
    }
}
