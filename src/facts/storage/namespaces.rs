//! The namespace assembly: [`gather`] reads the mount tables (`tables`),
//! finds the ext4 layouts (`ext4`), then builds the `fstab` namespace (each
//! line or `.mount` unit with its [`FstabModel`]), the `mount` namespace
//! (each live mount with its disks, `media`) and the `ext4` namespace,
//! keyed by mount point. Decides what each entry says; reads nothing itself
//! beyond what the rooms it calls read.

use std::collections::BTreeMap;

use crate::facts::{Entry, Evidence, Facts, FileIssue, Namespace, Needs, Setting};
use crate::host::Host;
use crate::parse::fstab::{expand_defaults, kernel_atime, FstabEntry};
use crate::parse::mountinfo::Mount;
use crate::parse::mountopts;
use crate::value::Value;

use super::ext4::{ext4_layouts, Ext4Layouts};
use super::fstab_model::FstabModel;
use super::media::{medium_with, BlockFiles};
use super::points::canonical_point;
use super::points::point_cow;
use super::specs::spec_device;
use super::tables::{read_sources, Sources};
use super::{fstab_key, normalize_point, strs, UnitMount, FSTAB, NAMESPACES};

/// Gather the `fstab`, `mount` and `ext4` namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let wanted = |ns: &str| needs.namespaces.is_empty() || needs.namespaces.contains(ns);
    if !NAMESPACES.iter().any(|n| wanted(n)) {
        return;
    }
    let src = read_sources(host, wanted("fstab") || wanted("mount"), facts);
    // ext4 layouts first: the fstab model needs each filesystem's superblock defaults
    let layouts = ext4_layouts(
        host,
        src.fstab.as_ref().ok(),
        src.mounts.as_ref().ok().map(|(_, ms)| ms.as_slice()),
        wanted("ext4") || wanted("fstab"),
        facts,
    );
    let fstab_ns = fstab_namespace(host, &src, &layouts, facts);
    let mount_ns = mount_namespace(host, &src);
    if wanted("ext4") {
        let ext4_ns = ext4_namespace(&src, &layouts);
        facts.namespaces.insert("ext4".into(), ext4_ns);
    }
    facts.namespaces.insert("fstab".into(), fstab_ns);
    facts.namespaces.insert("mount".into(), mount_ns);
}

/// What each entry of the `fstab` namespace is built from.
struct FstabInputs<'a> {
    host: &'a Host,
    src: &'a Sources,
    /// The lines of /etc/fstab.
    entries: &'a [FstabEntry],
    /// The live mounts, when known.
    live: Option<&'a [Mount]>,
    layouts: &'a Ext4Layouts,
}

/// The `fstab` namespace: the first /etc/fstab line for each mount point,
/// then the `.mount` units for the points no line names.
fn fstab_namespace(
    host: &Host,
    src: &Sources,
    layouts: &Ext4Layouts,
    facts: &mut Facts,
) -> Namespace {
    let mut fstab_ns = Namespace::of("fstab");
    fstab_ns.canonicalize = Some(canonical_point);
    match &src.fstab {
        Err(reason) => fstab_ns.unavailable = Some(reason.clone()),
        Ok(entries) => {
            let cx = FstabInputs {
                host,
                src,
                entries,
                live: src.mounts.as_ref().ok().map(|(_, ms)| ms.as_slice()),
                layouts,
            };
            // systemd-fstab-generator and mount(8) use the first line for a mount point
            let mut lines: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for e in entries {
                lines.entry(fstab_key(e)).or_default().push(e.line);
            }
            for e in entries {
                let key = fstab_key(e);
                if fstab_ns.entries.contains_key(&key) {
                    continue;
                }
                let same: &[usize] = lines.get(&key).map(Vec::as_slice).unwrap_or(&[]);
                let s = line_setting(&cx, e, &key, same, facts);
                fstab_ns.entries.insert(key, Entry::Set(s));
            }
            // mounts systemd makes from .mount units that no fstab line names
            for u in &src.units {
                let from_fstab = u
                    .unit
                    .source_path
                    .as_ref()
                    .is_some_and(|p| point_cow(&p.value) == FSTAB);
                let key = u.point.clone();
                if from_fstab || fstab_ns.entries.contains_key(&key) {
                    continue; // the fstab line is the configuration (the generator's copy of it)
                }
                let Some(s) = unit_setting(&cx, u, &key, facts) else {
                    continue;
                };
                fstab_ns.entries.insert(key, Entry::Set(s));
            }
        }
    }
    fstab_ns
}

/// The `fstab` entry of line `e` for mount point `key`, the first of the
/// lines `same` that name that point; the options the line asks for that
/// do not mount are recorded as problems.
fn line_setting(
    cx: &FstabInputs,
    e: &FstabEntry,
    key: &str,
    same: &[usize],
    facts: &mut Facts,
) -> Setting {
    let host = cx.host;
    let placeholder = cx.src.placeholders.contains(key);
    let mounted = if cx.src.mounts.is_ok() {
        Some(cx.src.live_points.contains(key) && !placeholder)
    } else {
        None
    };
    let src_device = cx
        .live
        .and_then(|ms| ms.iter().rev().find(|m| point_cow(&m.target) == key))
        .filter(|m| m.source.starts_with("/dev/"))
        .map(|m| host.resolve(&m.source).unwrap_or_else(|_| m.source.clone()));
    let spec_device = spec_device(host, &e.spec).map(|d| (d, src_device));
    let model = FstabModel::new(e, key, cx.entries, cx.live, cx.layouts, facts, spec_device);
    for (o, why) in &model.canonical.refused {
        facts.issues.push(FileIssue::problem(
            "fstab",
            FSTAB,
            Some(e.line),
            format!("`{o}` for {key} ({}): {why}", e.vfstype),
        ));
    }
    let mut s = Setting::new(
        Value::Record(fstab_record(e, mounted, placeholder, &model)),
        e.options.clone().unwrap_or_default(),
        Evidence::line(FSTAB, e.line),
    );
    let mut notes = model.notes();
    if same.len() > 1 {
        let later: Vec<String> = same[1..].iter().map(|l| l.to_string()).collect();
        notes.insert(0, format!(
            "several /etc/fstab lines name this mount point; systemd-fstab-generator and mount use the first (line {}), line(s) {} are ignored",
            e.line,
            later.join(", ")
        ));
        for l in &same[1..] {
            s.evidence.push(Evidence::line(FSTAB, *l));
        }
    }
    if !notes.is_empty() {
        s.note = Some(notes.join("; "));
    }
    s
}

/// The `fstab` entry of the `.mount` unit `u` for mount point `key`, read
/// as the fstab line it stands for; `None`, with a problem recorded, for a
/// unit without `What=` (systemd refuses it).
fn unit_setting(cx: &FstabInputs, u: &UnitMount, key: &str, facts: &mut Facts) -> Option<Setting> {
    let host = cx.host;
    let Some(what) = &u.unit.what else {
        facts.issues.push(FileIssue::problem(
            "mount-unit",
            &u.files[0],
            None,
            format!("{} has no What=: systemd refuses to load it", u.name),
        ));
        return None;
    };
    let line = u.unit.options.as_ref().map_or(what.line, |o| o.line);
    let e = FstabEntry {
        line,
        spec: what.value.clone(),
        file: key.to_string(),
        vfstype: u
            .unit
            .fstype
            .as_ref()
            .map_or_else(|| "auto".to_string(), |t| t.value.clone()),
        options: u.unit.options.as_ref().map(|o| o.value.clone()),
        freq: 0,
        passno: 0,
    };
    let placeholder = cx.src.placeholders.contains(key);
    let mounted = cx
        .src
        .mounts
        .is_ok()
        .then(|| cx.src.live_points.contains(key) && !placeholder);
    let spec_device = spec_device(host, &e.spec);
    let model = FstabModel::new(
        &e,
        key,
        cx.entries,
        cx.live,
        cx.layouts,
        facts,
        spec_device.map(|d| (d, None)),
    );
    let mut r = fstab_record(&e, mounted, placeholder, &model);
    r.insert("unit".into(), Value::Str(u.name.clone()));
    r.insert("unit_files".into(), strs(&u.files));
    let at = if u.unit.options.is_some() {
        Evidence::line(u.options_file.clone(), line)
    } else {
        Evidence::line(u.files[0].clone(), what.line)
    };
    let mut s = Setting::new(Value::Record(r), e.options.clone().unwrap_or_default(), at);
    let mut notes = vec![format!(
        "mounted by the systemd unit {} ({}); no /etc/fstab line names {key}",
        u.name,
        u.files.join(", ")
    )];
    notes.extend(model.notes());
    s.note = Some(notes.join("; "));
    Some(s)
}

/// What an fstab line's mount point holds now, for people: `mounted`, the
/// automount placeholder, or why nothing is mounted (`noauto`, `nofail`,
/// `_netdev` lines are expected not to be, or allowed to fail).
fn mount_state(opts: &[String], mounted: bool, placeholder: bool) -> String {
    let has = |w: &str| opts.iter().any(|o| o == w);
    if mounted {
        return "mounted".into();
    }
    if placeholder {
        return "automount (x-systemd.automount): systemd's autofs placeholder is mounted, the filesystem itself mounts at the first access".into();
    }
    if has("noauto") {
        return "not mounted now (noauto: mounted only by hand or by a unit that asks for it)"
            .into();
    }
    match (has("nofail"), has("_netdev")) {
        (true, true) => "configured with nofail and _netdev, not mounted now".into(),
        (true, false) => "configured with nofail, not mounted now".into(),
        (false, true) => "configured with _netdev, not mounted now".into(),
        (false, false) => "not mounted now".into(),
    }
}

fn fstab_record(
    e: &FstabEntry,
    mounted: Option<bool>,
    placeholder: bool,
    model: &FstabModel,
) -> BTreeMap<String, Value> {
    let opts = expand_defaults(&e.option_list());
    let mut r = BTreeMap::new();
    r.insert("spec".into(), Value::Str(e.spec.clone()));
    r.insert("fstype".into(), Value::Str(e.vfstype.clone()));
    r.insert("options".into(), strs(&opts));
    r.insert("atime".into(), Value::Str(model.atime.into()));
    r.insert("kernel_options".into(), strs(&model.canonical.options));
    r.insert("freq".into(), Value::Number(f64::from(e.freq)));
    r.insert("passno".into(), Value::Number(f64::from(e.passno)));
    r.insert(
        "noauto".into(),
        Value::Bool(opts.iter().any(|o| o == "noauto")),
    );
    for (field, word) in [
        ("nofail", "nofail"),
        ("netdev", "_netdev"),
        ("automount", "x-systemd.automount"),
    ] {
        r.insert(field.into(), Value::Bool(opts.iter().any(|o| o == word)));
    }
    r.insert("automount_placeholder".into(), Value::Bool(placeholder));
    if let Some(m) = mounted {
        r.insert("mounted".into(), Value::Bool(m));
        r.insert(
            "mount_state".into(),
            Value::Str(mount_state(&opts, m, placeholder)),
        );
    }
    if !model.cause.is_empty() {
        r.insert("drift_cause".into(), Value::Str(model.cause.clone()));
    }
    r
}

/// The `mount` namespace: each live mount point's visible mount, with the
/// mounts stacked under it as evidence; a point where only the automount
/// placeholder is mounted is unknown.
fn mount_namespace(host: &Host, src: &Sources) -> Namespace {
    let mut mount_ns = Namespace::of("mount");
    mount_ns.canonicalize = Some(canonical_point);
    match &src.mounts {
        Err(reason) => mount_ns.unavailable = Some(reason.clone()),
        Ok((path, ms)) => {
            let mut block = BlockFiles::default();
            for m in ms {
                let key = normalize_point(&m.target);
                if src.placeholders.contains(&key) && m.fstype == "autofs" {
                    // the last (visible) mount here is the placeholder: the
                    // filesystem's own options are not known until it mounts
                    mount_ns.entries.insert(
                        key.clone(),
                        Entry::Unreadable {
                            reason: format!(
                                "only systemd's automount placeholder (autofs, {}) is mounted on {key}: the filesystem is mounted at the first access, so its options are not known yet (access it, e.g. `ls {key}`, or `systemctl start` its .mount unit, and audit again)",
                                m.source
                            ),
                            evidence: vec![Evidence::line(path.clone(), m.line)],
                        },
                    );
                    continue;
                }
                let mut s = Setting::new(
                    Value::Record(mount_record(host, m, &mut block)),
                    m.options.join(","),
                    Evidence::line(path.clone(), m.line),
                );
                if let Some(Entry::Set(prev)) = mount_ns.entries.remove(&key) {
                    s.evidence.extend(prev.evidence);
                    s.note = Some(
                        "several mounts are stacked on this mount point; the last one is visible"
                            .into(),
                    );
                }
                mount_ns.entries.insert(key, Entry::Set(s));
            }
        }
    }
    mount_ns
}

fn mount_record(host: &Host, m: &Mount, block: &mut BlockFiles) -> BTreeMap<String, Value> {
    let mut r = BTreeMap::new();
    r.insert("source".into(), Value::Str(m.source.clone()));
    r.insert("fstype".into(), Value::Str(m.fstype.clone()));
    r.insert(
        "options".into(),
        strs(&mountopts::running(&m.options, &m.fstype)),
    );
    let per_mount = m.mount_options.as_deref().unwrap_or(&m.options);
    r.insert(
        "atime".into(),
        Value::Str(kernel_atime(per_mount).as_str().into()),
    );
    if let Some(o) = &m.mount_options {
        r.insert("mount_options".into(), strs(o));
    }
    if let Some(o) = &m.super_options {
        r.insert("super_options".into(), strs(o));
    }
    if let Some(root) = &m.root {
        r.insert("root".into(), Value::Str(root.clone()));
    }
    if m.source.starts_with("/dev/") {
        r.insert("device".into(), Value::Str(m.source.clone()));
    }
    let md = medium_with(host, &m.source, m.devno.as_deref(), block);
    let media_hidden = md.not_the_medium.is_some();
    match (md.rotational, md.not_the_medium) {
        (Some(rot), _) => {
            r.insert("rotational".into(), Value::Bool(rot));
        }
        (None, Some((reason, decide))) => {
            // `rotational?`: why the flag is not the medium and what decides
            // it (the evaluator answers `m.rotational` with this unknown)
            r.insert(
                "rotational?".into(),
                Value::Record(BTreeMap::from([
                    ("reason".to_string(), Value::Str(reason)),
                    ("decide".to_string(), Value::Str(decide)),
                    (
                        "param".to_string(),
                        Value::Str("storage.assume_media".into()),
                    ),
                ])),
            );
        }
        (None, None) if m.source.starts_with("/dev/") => {
            r.insert(
                "rotational?".into(),
                Value::Str(format!(
                    "no sysfs queue/rotational for {} (/sys/block{})",
                    m.source,
                    if block.sys_block_is_dir(host) {
                        " has no such disk"
                    } else {
                        " is not in the snapshot"
                    }
                )),
            );
        }
        (None, None) => {
            if let Some(why) = not_a_block_device(m) {
                r.insert("rotational?".into(), Value::Str(why));
            } else if matches!(m.fstype.as_str(), "tmpfs" | "ramfs") {
                // memory: nothing spins
                r.insert("rotational".into(), Value::Bool(false));
            }
        }
    }
    r.insert("virtual_disk".into(), Value::Bool(md.virtual_disk));
    // the flag is not the medium's (a virtual, cloud or RAID controller's
    // disk): what the site says backs it decides
    r.insert("media_hidden".into(), Value::Bool(media_hidden));
    // what a rule about sharing a volume says of a virtual disk: one
    // virtual disk is not one set of spindles
    if md.virtual_disk {
        r.insert(
            "disk_note".into(),
            Value::Str(format!(
                "{} is a virtual disk, so sharing it is sharing the hypervisor's storage, \
                 which may still be apart from the system's I/O on a SAN-backed or cloud volume. ",
                md.leaves.join(", ")
            )),
        );
    }
    if !md.leaves.is_empty() {
        r.insert("disks".into(), Value::Str(md.leaves.join(", ")));
    }
    r
}

/// Why a mount whose source is not a `/dev/` block device has no
/// rotational flag, and what would tell it; `None` for kernel pseudo
/// filesystems and memory, which no data directory lives on.
fn not_a_block_device(m: &Mount) -> Option<String> {
    let fs = m.fstype.as_str();
    let pseudo = matches!(
        fs,
        "proc"
            | "sysfs"
            | "cgroup"
            | "cgroup2"
            | "devpts"
            | "mqueue"
            | "debugfs"
            | "tracefs"
            | "securityfs"
            | "pstore"
            | "bpf"
            | "configfs"
            | "fusectl"
            | "hugetlbfs"
            | "autofs"
            | "binfmt_misc"
            | "efivarfs"
            | "selinuxfs"
            | "nsfs"
            | "rpc_pipefs"
            | "devtmpfs"
            | "tmpfs"
            | "ramfs"
    );
    if pseudo || m.source.starts_with("/dev/") {
        return None;
    }
    let network = matches!(
        fs,
        "nfs"
            | "nfs4"
            | "cifs"
            | "smb3"
            | "smbfs"
            | "ceph"
            | "glusterfs"
            | "9p"
            | "fuse.sshfs"
            | "fuse.glusterfs"
            | "fuse.cephfs"
            | "lustre"
            | "gpfs"
            | "beegfs"
    );
    Some(if network {
        format!(
            "{} is a network filesystem ({fs}): its disks are on the server, which this host's /sys/block does not describe; judge them there",
            m.source
        )
    } else if fs == "zfs" {
        let pool = m.source.split('/').next().unwrap_or(&m.source);
        format!(
            "{} is a ZFS dataset: the disks of pool {pool} decide (`zpool status {pool}` lists them; each one's /sys/block/DEV/queue/rotational)",
            m.source
        )
    } else {
        format!(
            "the source {} ({fs}) is not a block device, so the mount table does not say which disks hold it",
            m.source
        )
    })
}

/// The `ext4` namespace: the layout of the filesystem on each mount point
/// that /etc/fstab lists or that is mounted now.
fn ext4_namespace(src: &Sources, layouts: &Ext4Layouts) -> Namespace {
    let mut ext4_ns = Namespace::of("ext4");
    ext4_ns.canonicalize = Some(canonical_point);
    if let (Err(f), Err(m)) = (&src.fstab, &src.mounts) {
        // no list of filesystems at all: every mount point is unknown, not absent
        ext4_ns.unavailable = Some(format!("{m}; {f}"));
    }
    for (point, device) in &layouts.device_of {
        if let Some((entry, _)) = layouts.by_device.get(device) {
            ext4_ns.entries.insert(point.clone(), entry.clone());
        }
    }
    ext4_ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn snapshot(files: &[(&str, &str)]) -> (tempfile::TempDir, Host) {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let p = dir.path().join(p.trim_start_matches('/'));
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, c).unwrap();
        }
        let host = Host::snapshot(dir.path()).unwrap();
        (dir, host)
    }

    #[test]
    fn snapshot_namespaces() {
        let (_d, host) = snapshot(&[
            ("/etc/fstab", "/dev/sda1 / ext4 defaults 0 1\n/dev/mapper/vg-db /opt/zimbra/db ext4 defaults,noatime 0 2\n/dev/sdc1 /backup ext4 noauto 0 0\nUUID=x none swap sw 0 0\nbroken\n"),
            ("/proc/self/mountinfo", "20 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n30 20 253:0 / /opt/zimbra/db rw,relatime - ext4 /dev/mapper/vg-db rw\n"),
            ("/sys/block/sda/queue/rotational", "1\n"),
            ("/sys/block/sda/sda1/partition", "1\n"),
            ("/sys/block/nvme0n1/queue/rotational", "0\n"),
            ("/sys/block/nvme0n1/nvme0n1p1/partition", "1\n"),
            ("/sys/block/dm-0/dm/name", "vg-db\n"),
            ("/sys/block/dm-0/queue/rotational", "1\n"),
            ("/sys/block/dm-0/slaves/nvme0n1p1/partition", "1\n"),
            ("/captures/tune2fs/mapper_vg-db.txt", "Filesystem volume name:   db\nFilesystem features:      has_journal dir_index\nInode count:              20992000\nBlock count:              52428800\nReserved block count:     1048576\nBlock size:               4096\nInodes per group:         13120\nInode size:\t          256\n"),
        ]);
        let mut facts = Facts::new(&host);
        gather(&host, &Needs::default(), &mut facts);
        let rec = |ns: &str, k: &str| match facts.namespaces[ns].get(k) {
            Some(Entry::Set(s)) => match &s.value {
                Value::Record(r) => r.clone(),
                v => panic!("{v:?}"),
            },
            e => panic!("{ns} {k}: {e:?}"),
        };
        let db = rec("fstab", "/opt/zimbra/db/");
        assert_eq!(db["atime"], Value::Str("noatime".into()));
        assert_eq!(db["mounted"], Value::Bool(true));
        assert_eq!(rec("fstab", "/backup")["mounted"], Value::Bool(false));
        assert_eq!(rec("fstab", "/backup")["noauto"], Value::Bool(true));
        assert!(facts.namespaces["fstab"].get("swap:UUID=x").is_some());
        assert_eq!(
            rec("fstab", "/")["kernel_options"],
            strs(&["rw".into(), "relatime".into()])
        );
        let m = rec("mount", "/opt/zimbra/db");
        assert_eq!(m["atime"], Value::Str("relatime".into()));
        assert_eq!(
            m["rotational"],
            Value::Bool(false),
            "dm-0 maps to its nvme slave"
        );
        assert_eq!(rec("mount", "/")["rotational"], Value::Bool(true));
        let e = rec("ext4", "/opt/zimbra/db");
        assert_eq!(e["bytes_per_inode"], Value::Number(10240.0));
        assert_eq!(e["reserved_pct"], Value::Number(2.0));
        assert!(matches!(
            facts.namespaces["ext4"].get("/"),
            Some(Entry::Unreadable { .. })
        ));
        assert!(matches!(
            facts.namespaces["ext4"].get("/backup"),
            Some(Entry::Unreadable { .. })
        ));
        assert!(facts
            .issues
            .iter()
            .any(|i| i.path == "/etc/fstab" && i.line == Some(5)));
    }
}
