//! Storage facts: `/etc/fstab` and the systemd `.mount` units no fstab line
//! names (the configured mounts), live mounts (mountinfo or /proc/mounts),
//! ext4 layout (snapshot captures or the live device's superblock, found by
//! device, UUID or label) and whether a mount's disk is rotational
//! (`/sys/block`). Produces the `fstab`, `mount` and `ext4` namespaces,
//! keyed by mount point. All I/O goes through [`Host`]; parsing lives in
//! `parse::{fstab, mountinfo, mountunit, ext4}`.

use std::collections::{BTreeMap, BTreeSet};

use crate::host::{EntryKind, Host, ReadError, SourceKind};
use crate::parse::ext4::{parse_device_head, parse_text, Ext4Layout};
use crate::parse::fstab::{self, expand_defaults, kernel_atime, spec_tag, FstabEntry};
use crate::parse::mountinfo::{parse_mountinfo, parse_mounts, Mount};
use crate::parse::mountopts::{self, Canonical, Ext4Defaults, FsContext, PER_MOUNT_FLAGS};
use crate::parse::mountunit;
use crate::secret::{redact_text, FileKind};
use crate::value::Value;

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel, Namespace, Needs, Setting};

/// Where /etc/fstab lives.
pub const FSTAB: &str = "/etc/fstab";
/// Preferred live mount table.
pub const MOUNTINFO: &str = "/proc/self/mountinfo";
/// Fallback live mount table.
pub const PROC_MOUNTS: &str = "/proc/mounts";

/// Filesystem types whose layout the `ext4` namespace describes.
const EXT_TYPES: [&str; 3] = ["ext4", "ext3", "ext2"];

/// Most levels of stacked block devices followed (dm on md on partitions...).
const MAX_STACK_DEPTH: usize = 8;

/// Namespace names this module fills.
pub const NAMESPACES: [&str; 3] = ["fstab", "mount", "ext4"];

/// Gather the `fstab`, `mount` and `ext4` namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let wanted = |ns: &str| needs.namespaces.is_empty() || needs.namespaces.contains(ns);
    if !NAMESPACES.iter().any(|n| wanted(n)) {
        return;
    }
    let mounts = read_mounts(host, facts);
    let fstab = read_fstab(host, facts);
    let live_points: BTreeSet<String> = match &mounts {
        Ok((_, ms)) => ms.iter().map(|m| normalize_point(&m.target)).collect(),
        Err(_) => BTreeSet::new(),
    };
    // .mount units configure the mount points no fstab line names
    let no_fstab = matches!(&fstab, Err(r) if *r == format!("{FSTAB} does not exist"));
    let units = if (fstab.is_ok() || no_fstab) && (wanted("fstab") || wanted("mount")) {
        read_mount_units(host, facts)
    } else {
        Vec::new()
    };
    // a host without /etc/fstab that mounts by units (a minimal or
    // image-based system): the units are its configured mounts
    let fstab = if no_fstab && !units.is_empty() {
        Ok(Vec::new())
    } else {
        fstab
    };
    let placeholders = automount_placeholders(mounts.as_ref().ok(), fstab.as_ref().ok(), &units);

    // ext4 layouts first: the fstab model needs each filesystem's superblock defaults
    let mut layouts = Ext4Layouts::default();
    if let Ok(entries) = &fstab {
        for e in entries
            .iter()
            .filter(|e| EXT_TYPES.contains(&e.vfstype.as_str()))
        {
            layouts
                .device_of
                .insert(fstab_key(e), resolve_spec(host, &e.spec));
            if let Some(tag) = tag_of_spec(&e.spec) {
                layouts.tag_of.insert(fstab_key(e), tag);
            }
        }
    }
    if let Ok((_, ms)) = &mounts {
        for m in ms.iter().filter(|m| EXT_TYPES.contains(&m.fstype.as_str())) {
            layouts
                .device_of
                .insert(normalize_point(&m.target), m.source.clone());
        }
    }
    if wanted("ext4") || wanted("fstab") {
        // one lookup per device, with the fstab tag of any mount point on it
        let mut tag_by_device: BTreeMap<String, Option<String>> = BTreeMap::new();
        for (point, d) in &layouts.device_of {
            let tag = layouts.tag_of.get(point).cloned();
            let slot = tag_by_device.entry(d.clone()).or_default();
            if slot.is_none() {
                *slot = tag;
            }
        }
        // the captures with their UUID and label, read at the first tag
        let mut tagged = None;
        for (d, tag) in tag_by_device {
            let found = ext4_entry(host, &d, tag.as_deref(), &mut tagged, facts);
            layouts.by_device.insert(d, found);
        }
    }

    // fstab
    let mut fstab_ns = Namespace::new("/etc/fstab has no entry for this mount point");
    fstab_ns.canonicalize = Some(canonical_point);
    match &fstab {
        Err(reason) => fstab_ns.unavailable = Some(reason.clone()),
        Ok(entries) => {
            let live = mounts.as_ref().ok().map(|(_, ms)| ms.as_slice());
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
                let placeholder = placeholders.contains(&key);
                let mounted = if mounts.is_ok() {
                    Some(live_points.contains(&key) && !placeholder)
                } else {
                    None
                };
                let src_device = live
                    .and_then(|ms| ms.iter().rev().find(|m| normalize_point(&m.target) == key))
                    .filter(|m| m.source.starts_with("/dev/"))
                    .map(|m| host.resolve(&m.source).unwrap_or_else(|_| m.source.clone()));
                let spec_device = spec_device(host, &e.spec).map(|d| (d, src_device));
                let model = FstabModel::new(e, &key, entries, live, &layouts, facts, spec_device);
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
                let same: &[usize] = lines.get(&key).map(Vec::as_slice).unwrap_or(&[]);
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
                fstab_ns.entries.insert(key, Entry::Set(s));
            }
            // mounts systemd makes from .mount units that no fstab line names
            for u in &units {
                let from_fstab = u
                    .unit
                    .source_path
                    .as_ref()
                    .is_some_and(|p| normalize_point(&p.value) == FSTAB);
                let key = u.point.clone();
                if from_fstab || fstab_ns.entries.contains_key(&key) {
                    continue; // the fstab line is the configuration (the generator's copy of it)
                }
                let Some(what) = &u.unit.what else {
                    facts.issues.push(FileIssue::problem(
                        "mount-unit",
                        &u.files[0],
                        None,
                        format!("{} has no What=: systemd refuses to load it", u.name),
                    ));
                    continue;
                };
                let line = u.unit.options.as_ref().map_or(what.line, |o| o.line);
                let e = FstabEntry {
                    line,
                    spec: what.value.clone(),
                    file: key.clone(),
                    vfstype: u
                        .unit
                        .fstype
                        .as_ref()
                        .map_or_else(|| "auto".to_string(), |t| t.value.clone()),
                    options: u.unit.options.as_ref().map(|o| o.value.clone()),
                    freq: 0,
                    passno: 0,
                };
                let placeholder = placeholders.contains(&key);
                let mounted = mounts
                    .is_ok()
                    .then(|| live_points.contains(&key) && !placeholder);
                let spec_device = spec_device(host, &e.spec);
                let model = FstabModel::new(
                    &e,
                    &key,
                    entries,
                    live,
                    &layouts,
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
                let mut s =
                    Setting::new(Value::Record(r), e.options.clone().unwrap_or_default(), at);
                let mut notes = vec![format!(
                    "mounted by the systemd unit {} ({}); no /etc/fstab line names {key}",
                    u.name,
                    u.files.join(", ")
                )];
                notes.extend(model.notes());
                s.note = Some(notes.join("; "));
                fstab_ns.entries.insert(key, Entry::Set(s));
            }
        }
    }

    // mount
    let mut mount_ns = Namespace::new("nothing is mounted on this mount point now");
    mount_ns.canonicalize = Some(canonical_point);
    match &mounts {
        Err(reason) => mount_ns.unavailable = Some(reason.clone()),
        Ok((path, ms)) => {
            let mut block = BlockFiles::default();
            for m in ms {
                let key = normalize_point(&m.target);
                if placeholders.contains(&key) && m.fstype == "autofs" {
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

    // ext4
    if wanted("ext4") {
        let mut ext4_ns = Namespace::new(
            "no ext2/3/4 filesystem is mounted or listed in /etc/fstab on this mount point",
        );
        ext4_ns.canonicalize = Some(canonical_point);
        if let (Err(f), Err(m)) = (&fstab, &mounts) {
            // no list of filesystems at all: every mount point is unknown, not absent
            ext4_ns.unavailable = Some(format!("{m}; {f}"));
        }
        for (point, device) in &layouts.device_of {
            if let Some((entry, _)) = layouts.by_device.get(device) {
                ext4_ns.entries.insert(point.clone(), entry.clone());
            }
        }
        facts.namespaces.insert("ext4".into(), ext4_ns);
    }
    facts.namespaces.insert("fstab".into(), fstab_ns);
    facts.namespaces.insert("mount".into(), mount_ns);
}

/// The mount point holding `path`, the one answer for the engine's
/// `mount_of()` and the bind-mount inference: the longest mount point that is
/// `path` or one of its parent directories, compared on whole path components
/// after [`normalize_point`] on both sides (`/var//lib/`, `/var/./lib` and
/// `/var/lib` are one path; `/opt/zimbra/db` does not hold
/// `/opt/zimbra/dbx`), `/` when nothing longer matches. Mount points that are
/// not absolute (`swap:...` keys, `none`) are ignored.
///
/// `Err` with the reason when no answer can be given from the text alone: a
/// relative path, or one with a `..` component (which directory that is
/// depends on the host's symlinks, as `findmnt --target` resolves it).
pub fn mount_of<'a>(
    mount_points: impl Iterator<Item = &'a str>,
    path: &str,
) -> Result<String, &'static str> {
    if !path.starts_with('/') {
        return Err("not an absolute path, so no mount point can hold it");
    }
    let path = normalize_point(path);
    if path.split('/').any(|c| c == "..") {
        return Err("has a `..` component, which only the host's symlinks resolve");
    }
    let mut best = "/".to_string();
    for mp in mount_points.filter(|m| m.starts_with('/')) {
        let mp = normalize_point(mp);
        let holds = mp == "/"
            || path == mp
            || path
                .strip_prefix(mp.as_str())
                .is_some_and(|rest| rest.starts_with('/'));
        if holds && mp.len() > best.len() {
            best = mp;
        }
    }
    Ok(best)
}

/// A mount point or path in canonical form, as the kernel names it in
/// mountinfo: duplicate and trailing slashes and `.` components removed (`/`
/// stays `/`; `//srv/./data/` is `/srv/data`). `..` is kept: resolving it
/// needs the host's symlinks. Text that is not an absolute path is returned
/// unchanged.
pub fn normalize_point(p: &str) -> String {
    if !p.starts_with('/') {
        return p.to_string();
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    format!("/{}", parts.join("/"))
}

/// Mount points the live mount table and /etc/fstab name, with the line
/// that names each (mount table first): a mount point is a directory that
/// exists, whether or not a snapshot holds it (git keeps no empty
/// directories). Path knowledge for `facts::presence`.
pub fn mount_points(facts: &Facts) -> Vec<(String, Evidence)> {
    let mut out = Vec::new();
    for ns in ["mount", "fstab"] {
        let Some(space) = facts.namespaces.get(ns) else {
            continue;
        };
        for (key, entry) in &space.entries {
            if let (true, Entry::Set(s)) = (key.starts_with('/'), entry) {
                if let Some(e) = s.evidence.first() {
                    out.push((key.clone(), e.clone()));
                }
            }
        }
    }
    out
}

fn canonical_point(p: &str) -> String {
    normalize_point(p)
}

/// Key of an fstab entry: its mount point, or `swap:SPEC` for swap lines
/// (whose mount point is `none`/`swap`) and other entries without an
/// absolute mount point.
pub fn fstab_key(e: &FstabEntry) -> String {
    if e.is_swap() || !e.file.starts_with('/') {
        format!("{}:{}", if e.is_swap() { "swap" } else { "other" }, e.spec)
    } else {
        normalize_point(&e.file)
    }
}

fn strs(v: &[String]) -> Value {
    Value::List(v.iter().map(|s| Value::Str(s.clone())).collect())
}

/// Mount points where the visible live mount is an automount placeholder
/// (autofs) standing for a configured filesystem: the fstab line (its
/// `x-systemd.automount`, or a type other than autofs) or `.mount` unit for
/// that point says what will be mounted at the first access. An autofs
/// mount nothing configures (systemd's own binfmt_misc automount, an
/// automount(8) map) is a mount like any other.
fn automount_placeholders(
    mounts: Option<&(String, Vec<Mount>)>,
    fstab: Option<&Vec<FstabEntry>>,
    units: &[UnitMount],
) -> BTreeSet<String> {
    let mut visible: BTreeMap<String, &Mount> = BTreeMap::new();
    for m in mounts.map(|(_, ms)| ms.as_slice()).unwrap_or(&[]) {
        visible.insert(normalize_point(&m.target), m);
    }
    let first_line = |key: &str| fstab.and_then(|es| es.iter().find(|e| fstab_key(e) == key));
    visible
        .into_iter()
        .filter(|(key, m)| {
            m.fstype == "autofs"
                && (first_line(key).is_some_and(|e| {
                    e.vfstype != "autofs"
                        || e.option_list().iter().any(|o| o == "x-systemd.automount")
                }) || units.iter().any(|u| {
                    u.point == *key && u.unit.fstype.as_ref().is_none_or(|t| t.value != "autofs")
                }))
        })
        .map(|(k, _)| k)
        .collect()
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

/// ext4 superblocks found for the fstab and live filesystems.
#[derive(Default)]
struct Ext4Layouts {
    /// Mount point -> device (or unresolved spec) holding an ext2/3/4 filesystem.
    device_of: BTreeMap<String, String>,
    /// Mount point -> the fstab spec when it is a tag (`UUID=...`, `LABEL=...`).
    tag_of: BTreeMap<String, String>,
    /// Device -> the `ext4` namespace entry and the layout behind it.
    by_device: BTreeMap<String, (Entry, Option<Ext4Layout>)>,
}

impl Ext4Layouts {
    fn layout_at(&self, point: &str) -> Option<&Ext4Layout> {
        let d = self.device_of.get(point)?;
        self.by_device.get(d)?.1.as_ref()
    }
}

/// What the kernel would show for one fstab line: its canonical option list,
/// atime mode, what the model could not judge, and the likely cause of a
/// difference from the live mount.
struct FstabModel {
    canonical: Canonical,
    fstype: String,
    atime: &'static str,
    /// A bind line: where the options come from.
    bind_source: Option<String>,
    cause: String,
}

impl FstabModel {
    fn new(
        e: &FstabEntry,
        key: &str,
        entries: &[FstabEntry],
        live: Option<&[Mount]>,
        layouts: &Ext4Layouts,
        facts: &Facts,
        spec_device: Option<(String, Option<String>)>,
    ) -> FstabModel {
        let opts = expand_defaults(&e.option_list());
        let is_bind = opts.iter().any(|o| o == "bind" || o == "rbind");
        let cx = |fstype: &str, point: &str| FsContext {
            fstype: fstype.to_string(),
            mem_total: facts.mem_total().map(|m| m as u64),
            ext4: layouts.layout_at(point).map(|l| Ext4Defaults {
                default_mount_options: l.default_mount_options.clone(),
                errors_behavior: l.errors_behavior.clone(),
                features: l.features.clone(),
            }),
        };
        let mut bind_source = None;
        let mut canonical = mountopts::configured(&opts, &cx(&e.vfstype, key));
        if is_bind {
            if let Some((src, c)) = bind_options(e, key, &opts, entries, live, &cx) {
                bind_source = Some(src);
                canonical = c;
            } else {
                canonical.assumptions.push(format!(
                    "the source of this bind mount (`{}`) is neither mounted nor in /etc/fstab: its options are unknown, only the line's own are compared",
                    e.spec
                ));
                canonical
                    .options
                    .retain(|o| PER_MOUNT_FLAGS.contains(&o.as_str()));
                canonical.unknown.clear();
            }
        }
        let atime = kernel_atime(&canonical.options).as_str();
        let mut m = FstabModel {
            canonical,
            fstype: e.vfstype.clone(),
            atime,
            bind_source,
            cause: String::new(),
        };
        m.cause = m.likely_cause(e, key, live, spec_device);
        m
    }

    fn notes(&self) -> Vec<String> {
        let c = &self.canonical;
        let mut out = Vec::new();
        if let Some(src) = &self.bind_source {
            out.push(format!(
                "a bind mount has the options of its source ({src}) unless the line names them"
            ));
        }
        if !c.unknown.is_empty() {
            out.push(format!(
                "{} not in driftaudit's model of {} mount options and compared as written",
                quote_list(&c.unknown),
                self.fstype
            ));
        }
        for (o, why) in &c.unchecked {
            out.push(format!("`{o}` is not compared: {why}"));
        }
        for (o, why) in &c.refused {
            out.push(format!(
                "`{o}` is not compared: {why}; this line does not mount as written"
            ));
        }

        out.extend(c.assumptions.iter().cloned());
        out
    }

    /// Why the live mount differs from this line, as far as the host data
    /// says; empty when it shows everything the line asks for.
    /// `spec_device`: the device the spec names and what the live mount's
    /// source resolves to, when both are known (a `/dev/disk/by-uuid/X` or
    /// `UUID=` spec is the device its link or tag points at, never the
    /// text compared with mountinfo's `/dev/sdb1`).
    fn likely_cause(
        &self,
        e: &FstabEntry,
        key: &str,
        live: Option<&[Mount]>,
        spec_device: Option<(String, Option<String>)>,
    ) -> String {
        let Some(m) =
            live.and_then(|ms| ms.iter().rev().find(|m| normalize_point(&m.target) == key))
        else {
            return String::new();
        };
        let running = mountopts::running(&m.options, &m.fstype);
        let missing: Vec<&String> = self
            .canonical
            .options
            .iter()
            .filter(|o| !running.contains(o))
            .collect();
        // an automount placeholder is no drift: the mount namespace says so
        if missing.is_empty() || (m.fstype == "autofs" && e.vfstype != "autofs") {
            return String::new();
        }
        let different = match &spec_device {
            Some((spec_dev, Some(src_dev))) => spec_dev != src_dev,
            _ => false,
        };
        if self.bind_source.is_none() && different && m.source.starts_with("/dev/") {
            return format!(
                "A different filesystem is mounted there ({}) than this line names ({}): it was mounted by hand or by another unit, not from this line.",
                m.source, e.spec
            );
        }
        if !e.vfstype.is_empty()
            && e.vfstype != "none"
            && e.vfstype != "auto"
            && !e.vfstype.contains(',')
            && m.fstype != e.vfstype
            && self.bind_source.is_none()
        {
            return format!(
                "A {} filesystem is mounted there, not the {} this line names: it was mounted by hand or by another unit.",
                m.fstype, e.vfstype
            );
        }
        let fixed: Vec<&&String> = missing
            .iter()
            .filter(|o| {
                EXT_TYPES.contains(&m.fstype.as_str())
                    && (o.starts_with("data=") || o.starts_with("journal"))
            })
            .collect();
        if !fixed.is_empty() && fixed.len() == missing.len() {
            let what = fixed
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let root = if key == "/" {
                " (the root filesystem is mounted by the initramfs, with `rootflags=` from the kernel command line)"
            } else {
                ""
            };
            return format!(
                "{what} cannot be changed by a remount: the filesystem keeps what it was first mounted with{root}, and the line takes effect only at the next mount."
            );
        }
        if let Some(src) = &self.bind_source {
            return format!(
                "A bind mount takes its options from its source ({src}); the source or this mount was remounted with other options after it was made, or the line was edited since."
            );
        }
        "The file was edited after the volume was mounted and it was never remounted (systemd reloads fstab but does not remount), or it was mounted or remounted by hand with other options.".to_string()
    }
}

fn quote_list(v: &[String]) -> String {
    let q: Vec<String> = v.iter().map(|o| format!("`{o}`")).collect();
    match q.len() {
        1 => format!("{} is", q[0]),
        _ => format!("{} are", q.join(", ")),
    }
}

/// A bind line's options as the kernel shows them: the per-mount flags and
/// superblock options of the mount that holds the source directory (live,
/// else that mount's fstab line), with the per-mount flags the line names
/// applied on top (mount(8) remounts the bind with them; the filesystem's own
/// options cannot change through a bind).
fn bind_options(
    e: &FstabEntry,
    key: &str,
    opts: &[String],
    entries: &[FstabEntry],
    live: Option<&[Mount]>,
    cx: &dyn Fn(&str, &str) -> FsContext,
) -> Option<(String, Canonical)> {
    let src = normalize_point(&e.spec);
    if !src.starts_with('/') {
        return None;
    }
    let named: Vec<&String> = opts
        .iter()
        .filter(|o| {
            PER_MOUNT_FLAGS.contains(&o.as_str())
                || matches!(
                    o.as_str(),
                    "atime" | "strictatime" | "suid" | "dev" | "exec" | "diratime" | "symfollow"
                )
        })
        .collect();
    // (per-mount words, superblock words, where from)
    let (mut per, sb, from): (Vec<String>, Vec<String>, String) = if let Some(ms) = live {
        let points = ms
            .iter()
            .map(|m| m.target.as_str())
            .filter(|t| normalize_point(t) != key);
        let point = mount_of(points, &src).ok()?;
        let m = ms
            .iter()
            .rev()
            .find(|m| normalize_point(&m.target) == point)?;
        let per = m.mount_options.clone().unwrap_or_else(|| {
            m.options
                .iter()
                .filter(|o| PER_MOUNT_FLAGS.contains(&o.as_str()))
                .cloned()
                .collect()
        });
        let sb: Vec<String> = match &m.super_options {
            Some(s) => s
                .iter()
                .filter(|o| *o != "ro" && *o != "rw")
                .cloned()
                .collect(),
            None => m
                .options
                .iter()
                .filter(|o| !PER_MOUNT_FLAGS.contains(&o.as_str()))
                .cloned()
                .collect(),
        };
        (
            per,
            mountopts::running(&sb, &m.fstype),
            format!("{point}, mounted now"),
        )
    } else {
        let points = entries
            .iter()
            .map(|x| x.file.as_str())
            .filter(|t| normalize_point(t) != key);
        let point = mount_of(points, &src).ok()?;
        let x = entries.iter().find(|x| fstab_key(x) == point)?;
        let c = mountopts::configured(&expand_defaults(&x.option_list()), &cx(&x.vfstype, &point));
        let (per, sb): (Vec<String>, Vec<String>) = c.options.into_iter().partition(|o| {
            PER_MOUNT_FLAGS.contains(&o.as_str())
                || matches!(o.as_str(), "sync" | "dirsync" | "mand" | "lazytime")
        });
        (per, sb, format!("{point}, /etc/fstab line {}", x.line))
    };
    if !named.is_empty() {
        // the flags the line names replace the source's words for the same flag
        let mut w: Vec<String> = per.clone();
        w.extend(named.iter().map(|s| s.to_string()));
        let c = mountopts::configured(&w, &FsContext::default());
        per = c
            .options
            .into_iter()
            .filter(|o| PER_MOUNT_FLAGS.contains(&o.as_str()))
            .collect();
    }
    let mut options = per;
    options.extend(sb);
    Some((
        from,
        Canonical {
            options,
            ..Canonical::default()
        },
    ))
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

fn read_mounts(host: &Host, facts: &mut Facts) -> Result<(String, Vec<Mount>), String> {
    let mut reasons = Vec::new();
    for (path, info) in [(MOUNTINFO, true), (PROC_MOUNTS, false)] {
        match host.read_to_string(path) {
            Ok(text) => {
                // CIFS `password=` and `user=u%pw` never get past this point.
                let text = redact_text(FileKind::MountTable, &text);
                let (ms, issues) = if info {
                    parse_mountinfo(&text)
                } else {
                    parse_mounts(&text)
                };
                for i in &issues {
                    // the kernel wrote this file: a bad line is data we cannot judge
                    facts.issues.push(
                        FileIssue::from_parse("mounts", path, i).with_level(IssueLevel::Unknown),
                    );
                }
                return Ok((path.to_string(), ms));
            }
            Err(ReadError::NotFound) => reasons.push(format!("{path}: not found")),
            Err(e) => {
                facts.issues.push(FileIssue::unreadable("mounts", path, &e));
                reasons.push(format!("{path}: {e}"));
            }
        }
    }
    Err(format!("live mounts unknown ({})", reasons.join("; ")))
}

fn read_fstab(host: &Host, facts: &mut Facts) -> Result<Vec<FstabEntry>, String> {
    match host.read_to_string(FSTAB) {
        Ok(text) => {
            // CIFS `password=` and `user=u%pw` never get past this point.
            let text = redact_text(FileKind::MountTable, &text);
            let (entries, issues) = fstab::parse(&text);
            for i in &issues {
                facts.issues.push(FileIssue::from_parse("fstab", FSTAB, i));
            }
            Ok(entries)
        }
        Err(ReadError::NotFound) => Err(format!("{FSTAB} does not exist")),
        Err(e) => {
            facts.issues.push(FileIssue::unreadable("fstab", FSTAB, &e));
            Err(format!("{FSTAB}: {e}"))
        }
    }
}

/// The unit directories systemd (252) loads `.mount` units from, highest
/// priority first (systemd.unit(5), "Unit File Load Path"): the first
/// directory holding `NAME.mount` gives the unit, and a drop-in
/// `NAME.mount.d/X.conf` in a higher directory hides the same `X.conf` in a
/// lower one. `/run/systemd/generator` is where systemd-fstab-generator puts
/// the units it makes from /etc/fstab.
pub const UNIT_DIRS: [&str; 7] = [
    "/etc/systemd/system",
    "/run/systemd/system",
    "/run/systemd/generator",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
    "/run/systemd/generator.late",
];

/// Most `.mount` units (and drop-ins per unit) read from one host.
const MAX_UNITS: usize = 512;

/// A `.mount` unit as systemd loads it.
pub struct UnitMount {
    /// `srv-data.mount`.
    pub name: String,
    /// The mount point (`Where=`, which systemd requires to match the name).
    pub point: String,
    /// The unit file, then its drop-ins in the order they apply.
    pub files: Vec<String>,
    /// The `[Mount]` settings after every file.
    pub unit: mountunit::MountUnit,
    /// The file whose line set `Options=` last.
    pub options_file: String,
}

/// The `.mount` units of a host, each read with its drop-ins. Masked units
/// (linked to /dev/null) and units systemd refuses (a `Where=` that is not
/// the path the name encodes) are left out, the latter with an issue.
pub fn read_mount_units(host: &Host, facts: &mut Facts) -> Vec<UnitMount> {
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for dir in UNIT_DIRS {
        let Ok(list) = host.read_dir(dir) else {
            continue;
        };
        for e in list.iter().filter(|e| e.name.ends_with(".mount")) {
            if names.len() >= MAX_UNITS {
                break;
            }
            names
                .entry(e.name.clone())
                .or_insert_with(|| format!("{dir}/{}", e.name));
        }
    }
    let mut out = Vec::new();
    for (name, path) in names {
        if host.resolve(&path).is_ok_and(|r| r == "/dev/null") {
            continue; // masked
        }
        let Some(from_name) = mountunit::unit_path(&name) else {
            continue;
        };
        let mut drop_ins: BTreeMap<String, String> = BTreeMap::new();
        for dir in UNIT_DIRS {
            let d = format!("{dir}/{name}.d");
            let Ok(list) = host.read_dir(&d) else {
                continue;
            };
            for e in list.iter().filter(|e| e.name.ends_with(".conf")) {
                if drop_ins.len() >= MAX_UNITS {
                    break;
                }
                drop_ins
                    .entry(e.name.clone())
                    .or_insert_with(|| format!("{d}/{}", e.name));
            }
        }
        let mut files = vec![path.clone()];
        files.extend(
            drop_ins
                .into_values()
                .filter(|p| !host.resolve(p).is_ok_and(|r| r == "/dev/null")),
        );
        let mut unit = mountunit::MountUnit::default();
        let mut options_file = path.clone();
        for f in &files {
            let text = match host.read_to_string(f) {
                Ok(t) => t,
                Err(ReadError::NotFound) => continue,
                Err(e) => {
                    facts
                        .issues
                        .push(FileIssue::unreadable("mount-unit", f, &e));
                    continue;
                }
            };
            let before = unit.options.clone();
            for i in mountunit::apply(&mut unit, &text) {
                facts
                    .issues
                    .push(FileIssue::from_parse("mount-unit", f, &i));
            }
            if unit.options != before {
                options_file = f.clone();
            }
        }
        let point = match &unit.where_ {
            Some(w) if normalize_point(&w.value) != from_name => {
                facts.issues.push(FileIssue::problem(
                    "mount-unit",
                    &path,
                    Some(w.line),
                    format!(
                        "Where={} is not the path the unit name {name} stands for ({from_name}): systemd refuses to load this unit; rename it to `systemd-escape --path --suffix=mount {}`",
                        w.value, w.value
                    ),
                ));
                continue;
            }
            _ => from_name,
        };
        out.push(UnitMount {
            name,
            point,
            files,
            unit,
            options_file,
        });
    }
    out
}

/// Resolve `UUID=`/`LABEL=`/`PARTUUID=`/`PARTLABEL=` through `/dev/disk/by-*`
/// (inside the host root); other specs are returned unchanged.
fn resolve_spec(host: &Host, spec: &str) -> String {
    let Some((tag, value)) = spec_tag(spec) else {
        return spec.to_string();
    };
    let dir = match tag {
        "UUID" => "by-uuid",
        "LABEL" => "by-label",
        "PARTUUID" => "by-partuuid",
        "PARTLABEL" => "by-partlabel",
        _ => return spec.to_string(),
    };
    if value.contains('/') {
        return spec.to_string();
    }
    match host.resolve(&format!("/dev/disk/{dir}/{value}")) {
        Ok(p) if p.starts_with("/dev/") => p,
        _ => spec.to_string(),
    }
}

/// The device an fstab spec names: a `/dev/` path with its links followed,
/// or the device a tag's `/dev/disk/by-*` link points at; `None` when it
/// cannot be told here (a tag or by-* link the host or snapshot lacks).
fn spec_device(host: &Host, spec: &str) -> Option<String> {
    let dev = match spec_tag(spec) {
        Some(_) => resolve_spec(host, spec),
        None => spec.to_string(),
    };
    if !dev.starts_with("/dev/") {
        return None;
    }
    let real = match host.resolve(&dev) {
        Ok(r) => r,
        // a by-* link the host (or snapshot) lacks names no device we know
        Err(_) if tag_of_spec(&dev).is_some() => return None,
        Err(_) => dev,
    };
    Some(real)
}

/// The udev symlink directories under `/dev/disk/` and the tag each names:
/// `/dev/disk/by-uuid/X` is the device `UUID=X` names (udev's
/// 60-persistent-storage.rules make these links from the same blkid values).
const BY_DIRS: [(&str, &str); 4] = [
    ("by-uuid", "UUID"),
    ("by-label", "LABEL"),
    ("by-partuuid", "PARTUUID"),
    ("by-partlabel", "PARTLABEL"),
];

/// The tag a spec names, as `TAG=value`: `UUID=`/`LABEL=`/... as written,
/// or a `/dev/disk/by-{uuid,label,partuuid,partlabel}/NAME` path, whose
/// NAME udev wrote with `\xNN` for bytes outside `[A-Za-z0-9#+-.:=@_]`
/// (a label `my data` is `by-label/my\x20data`).
pub fn tag_of_spec(spec: &str) -> Option<String> {
    if let Some((t, v)) = spec_tag(spec) {
        return Some(format!("{t}={v}"));
    }
    let rest = spec.strip_prefix("/dev/disk/")?;
    let (dir, name) = rest.split_once('/')?;
    let tag = BY_DIRS.iter().find(|(d, _)| *d == dir)?.1;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some(format!("{tag}={}", udev_unescape(name)))
}

/// Undo udev's `\xNN` encoding of a /dev/disk/by-* link name; a broken
/// escape stays as written.
fn udev_unescape(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            if let Some(v) = name
                .get(i + 2..i + 4)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The capture name for a device: path without `/dev/`, `/` replaced by `_`.
pub fn capture_name(device: &str) -> String {
    device
        .strip_prefix("/dev/")
        .unwrap_or(device)
        .trim_start_matches('/')
        .replace('/', "_")
}

/// The note a finding that reads this layout carries when its
/// `bytes_per_inode` is not the exact mkfs `-i`.
fn approximation_note(l: &Ext4Layout) -> Option<String> {
    let a = l.bytes_per_inode_approximation()?;
    let raw = l.bytes_per_inode_raw()?;
    Some(format!(
        "bytes_per_inode {} is {a}; the layout holds one inode per {raw:.1} bytes",
        l.bytes_per_inode()?
    ))
}

fn layout_record(l: &Ext4Layout, device: &str, source: &str) -> BTreeMap<String, Value> {
    let mut r = BTreeMap::new();
    r.insert("features".into(), strs(&l.features));
    if let Some(b) = l.bytes_per_inode() {
        r.insert("bytes_per_inode".into(), Value::Number(b as f64));
    }
    if let Some(b) = l.bytes_per_inode_raw() {
        r.insert(
            "bytes_per_inode_raw".into(),
            Value::Number((b * 10.0).round() / 10.0),
        );
    }
    if let Some(a) = l.bytes_per_inode_approximation() {
        r.insert("bytes_per_inode_approximate".into(), Value::Str(a));
    }
    if let Some(p) = l.reserved_pct() {
        r.insert("reserved_pct".into(), Value::Number(p));
    }
    r.insert("block_size".into(), Value::Number(l.block_size as f64));
    if let Some(s) = l.inode_size {
        r.insert("inode_size".into(), Value::Number(s as f64));
    }
    r.insert("inode_count".into(), Value::Number(l.inode_count as f64));
    r.insert("block_count".into(), Value::Number(l.block_count as f64));
    r.insert(
        "reserved_blocks".into(),
        Value::Number(l.reserved_block_count as f64),
    );
    r.insert(
        "default_mount_options".into(),
        strs(&l.default_mount_options),
    );
    if let Some(v) = &l.label {
        r.insert("label".into(), Value::Str(v.clone()));
    }
    if let Some(v) = &l.uuid {
        r.insert("uuid".into(), Value::Str(v.clone()));
    }
    if let Some(v) = &l.state {
        r.insert("state".into(), Value::Str(v.clone()));
    }
    if let Some(v) = &l.errors_behavior {
        r.insert("errors_behavior".into(), Value::Str(v.clone()));
    }
    r.insert("device".into(), Value::Str(device.to_string()));
    r.insert("source".into(), Value::Str(source.to_string()));
    r
}

/// Most capture files read when looking for a `UUID=`/`LABEL=` match.
const MAX_TAG_CAPTURES: usize = 256;

/// The `ext4` entry of a device and the layout behind it. In a snapshot the
/// capture is `captures/{tune2fs,dumpe2fs}/NAME.txt` by device name; a
/// `UUID=`/`LABEL=` spec (the device's own, or `tag` from the fstab line for
/// that mount point) is also found by the UUID or label inside the captures
/// (`tagged`, read once); two devices whose captures carry that tag are a
/// problem, not a pick.
fn ext4_entry(
    host: &Host,
    device: &str,
    tag: Option<&str>,
    tagged: &mut Option<Vec<(String, String, Ext4Layout)>>,
    facts: &mut Facts,
) -> (Entry, Option<Ext4Layout>) {
    match host.kind() {
        SourceKind::Snapshot => {
            let layout = host.layout().unwrap_or(crate::host::Layout::Tree);
            let mut paths = Vec::new();
            if spec_tag(device).is_none() {
                paths = layout.ext4_listings(device);
                if let Ok(real) = host.resolve(device) {
                    for p in layout.ext4_listings(&real) {
                        if !paths.contains(&p) {
                            paths.push(p);
                        }
                    }
                }
            }
            let mut tried = Vec::new();
            let read = |cap: &str, tried: &mut Vec<String>| {
                let path = format!("/captures/{cap}");
                match host.capture(cap) {
                    Ok(text) => {
                        let (layout, issues) = parse_text(&text);
                        Some((path, layout, issues))
                    }
                    Err(ReadError::NotFound) => {
                        tried.push(format!("no {path}"));
                        None
                    }
                    Err(e) => {
                        tried.push(format!("{path}: {e}"));
                        None
                    }
                }
            };
            let found = |path: String, l: Ext4Layout| {
                let mut s = Setting::new(
                    Value::Record(layout_record(&l, device, &path)),
                    l.features.join(" "),
                    Evidence::line(path, l.line),
                );
                s.note = approximation_note(&l);
                (Entry::Set(s), Some(l))
            };
            // a tag: every capture whose superblock has that UUID or label
            // (one per device: a second device with the same tag is a finding)
            let tags: Vec<(&str, &str)> = [Some(device), tag]
                .into_iter()
                .flatten()
                .filter_map(spec_tag)
                .filter(|(t, _)| matches!(*t, "UUID" | "LABEL"))
                .collect();
            let mut hits: Vec<(String, String, Ext4Layout)> = Vec::new();
            if !tags.is_empty() {
                // read and parsed once per host, whatever the number of tagged lines
                let all = tagged.get_or_insert_with(|| {
                    let mut all = Vec::new();
                    let mut looked = 0usize;
                    for tool in ["tune2fs", "dumpe2fs"] {
                        let Ok(list) = host.read_dir(&format!("/captures/{tool}")) else {
                            continue;
                        };
                        for f in list.iter().filter(|f| f.name.ends_with(".txt")) {
                            if looked >= MAX_TAG_CAPTURES {
                                break;
                            }
                            looked += 1;
                            let cap = format!("{tool}/{}", f.name);
                            if let Some((path, Some(l), _)) = read(&cap, &mut Vec::new()) {
                                let stem = f.name.trim_end_matches(".txt").to_string();
                                all.push((stem, path, l));
                            }
                        }
                    }
                    all
                });
                for (stem, path, l) in all.iter() {
                    let hit = tags.iter().any(|(t, v)| match *t {
                        "UUID" => l.uuid.as_deref().is_some_and(|u| u.eq_ignore_ascii_case(v)),
                        _ => l.label.as_deref() == Some(*v),
                    });
                    if hit && !hits.iter().any(|(s, _, _)| s == stem) {
                        hits.push((stem.clone(), path.clone(), l.clone()));
                    }
                }
            }
            let devices: BTreeSet<String> = hits
                .iter()
                .map(|(stem, _, _)| {
                    let dev = format!("/dev/{}", stem.replace('_', "/"));
                    host.resolve(&dev).unwrap_or(dev)
                })
                .collect();
            let duplicate = (devices.len() > 1).then(|| {
                let what: Vec<String> = tags.iter().map(|(t, v)| format!("{t}={v}")).collect();
                let caps: Vec<String> = hits.iter().map(|(_, p, _)| p.clone()).collect();
                let text = format!(
                    "{} is on {} devices ({}), so which one mounts depends on which one udev or blkid finds first; \
                     give each filesystem its own UUID (`tune2fs -U random DEVICE`, unmounted) or label (`e2label DEVICE NEW`)",
                    what.join(" or "),
                    devices.len(),
                    caps.join(", ")
                );
                (text, caps)
            });
            let mut direct = None;
            for path in &paths {
                match host.read_to_string(path) {
                    Ok(text) => {
                        let (layout, issues) = parse_text(&text);
                        for i in &issues {
                            let level = if layout.is_some() {
                                IssueLevel::Note
                            } else {
                                IssueLevel::Unknown
                            };
                            facts
                                .issues
                                .push(FileIssue::from_parse("ext4", path, i).with_level(level));
                        }
                        match layout {
                            Some(l) => {
                                direct = Some((path.clone(), l));
                                break;
                            }
                            None => tried.push(format!("{path} holds no superblock listing")),
                        }
                    }
                    Err(ReadError::NotFound) => tried.push(format!("no {path}")),
                    Err(e) => tried.push(format!("{path}: {e}")),
                }
            }
            match (duplicate, direct) {
                // the mounted device is known: its layout, and the tag is a problem
                (Some((text, caps)), Some((path, l))) => {
                    facts
                        .issues
                        .push(FileIssue::problem("ext4", &caps[0], None, text.clone()));
                    let (mut entry, l) = found(path, l);
                    if let Entry::Set(s) = &mut entry {
                        s.note = Some(match s.note.take() {
                            Some(n) => format!("{n}; {text}"),
                            None => text,
                        });
                    }
                    return (entry, l);
                }
                (Some((text, caps)), None) => {
                    return (
                        Entry::Unreadable {
                            reason: text,
                            evidence: caps.iter().map(|p| Evidence::file(p.as_str())).collect(),
                        },
                        None,
                    );
                }
                (None, Some((path, l))) => return found(path, l),
                (None, None) => {}
            }
            if let Some((_, path, l)) = hits.into_iter().next() {
                return found(path, l);
            }
            if !tags.is_empty() {
                let what: Vec<String> = tags.iter().map(|(t, v)| format!("{t}={v}")).collect();
                tried.push(format!(
                    "no capture in /captures/tune2fs or /captures/dumpe2fs has {}",
                    what.join(" or ")
                ));
            }
            let evidence = match paths.first() {
                Some(p) => p.clone(),
                None => "/captures/tune2fs/".to_string(),
            };
            (
                Entry::Unreadable {
                    reason: format!("ext4 layout of {device} unknown: {}", tried.join(", ")),
                    evidence: vec![Evidence::file(evidence)],
                },
                None,
            )
        }
        SourceKind::Live => {
            if !device.starts_with('/') {
                return (
                    Entry::Unreadable {
                        reason: format!("ext4 layout unknown: `{device}` is not a device path"),
                        evidence: Vec::new(),
                    },
                    None,
                );
            }
            match host
                .read_block_device_head(device, 2048)
                .map_err(|e| e.to_string())
                .and_then(|h| parse_device_head(&h))
            {
                Ok(l) => {
                    let mut s = Setting::new(
                        Value::Record(layout_record(&l, device, device)),
                        l.features.join(" "),
                        Evidence::file(device),
                    );
                    s.note = approximation_note(&l);
                    (Entry::Set(s), Some(l))
                }
                Err(reason) => (
                    Entry::Unreadable {
                        reason: format!("cannot read the superblock of {device}: {reason}"),
                        evidence: vec![Evidence::file(device)],
                    },
                    None,
                ),
            }
        }
    }
}

/// What the rotational lookups of a host's mounts share, read once for all
/// of them instead of once per mount: a live host has dozens of virtual
/// mounts (`proc`, `tmpfs`, cgroups), each of which used to stat
/// `/sys/block` and read `/proc/partitions` again for its `0:N` device.
#[derive(Default)]
struct BlockFiles {
    sys_block_is_dir: Option<bool>,
    partitions: Option<Option<String>>,
}

impl BlockFiles {
    fn sys_block_is_dir(&mut self, host: &Host) -> bool {
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
    not_the_medium: Vec<(String, super::disks::DiskKind, Option<bool>)>,
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

/// What a whole disk is ([`super::disks::classify`]) from its sysfs
/// `device/` files (a missing one reads as empty).
fn disk_kind(host: &Host, disk: &str) -> super::disks::DiskKind {
    let read = |f: &str| {
        host.read_to_string(&format!("/sys/block/{disk}/device/{f}"))
            .unwrap_or_default()
    };
    let (vendor, model, modalias) = (read("vendor"), read("model"), read("modalias"));
    super::disks::classify(&super::disks::DiskId {
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
    /// Whether a leaf is a virtual or cloud disk.
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
fn medium_with(host: &Host, source: &str, devno: Option<&str>, block: &mut BlockFiles) -> Medium {
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
            super::disks::DiskKind::Cloud { decides, .. } => {
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
        virtual_disk: !r.not_the_medium.is_empty(),
        not_the_medium,
        leaves: r.leaves,
        visited: r.visited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn mount_of_uses_whole_components() {
        let pts = ["/", "/opt/zimbra", "/opt/zimbra/db", "/opt/zimbra/dbx"];
        let m = |p: &str| mount_of(pts.iter().copied(), p);
        assert_eq!(m("/opt/zimbra/db/data").as_deref(), Ok("/opt/zimbra/db"));
        assert_eq!(m("/opt/zimbra/db").as_deref(), Ok("/opt/zimbra/db"));
        assert_eq!(m("/opt/zimbra/db2/x").as_deref(), Ok("/opt/zimbra"));
        assert_eq!(m("/opt/zimbra/dbz").as_deref(), Ok("/opt/zimbra"));
        // a prefix that is not a whole component does not hold the path
        assert_eq!(m("/opt/zimbrax/store").as_deref(), Ok("/"));
        assert_eq!(m("/var//lib/").as_deref(), Ok("/"));
        assert_eq!(mount_of(["/srv"].into_iter(), "/etc").as_deref(), Ok("/"));
        assert!(m("relative").is_err());
        assert!(m("").is_err());
    }

    #[test]
    fn mount_of_normalises_both_sides_as_an_admin_writes_paths() {
        // mount points as fstab lines may spell them
        let pts = [
            "/",
            "/srv/data/",
            "//var//lib",
            "/opt/./zimbra",
            "swap:/dev/sda2",
            "none",
        ];
        let m = |p: &str| mount_of(pts.iter().copied(), p);
        assert_eq!(m("/srv/data").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/data/").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv//data///mysql").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/./data/./mysql").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/database").as_deref(), Ok("/"));
        assert_eq!(m("/var/lib/mysql").as_deref(), Ok("/var/lib"));
        assert_eq!(m("/opt/zimbra/db").as_deref(), Ok("/opt/zimbra"));
        assert_eq!(m("/").as_deref(), Ok("/"));
        assert_eq!(m("//").as_deref(), Ok("/"));
        assert_eq!(m("/.").as_deref(), Ok("/"));
        // `..` depends on symlinks: no guess
        assert!(m("/srv/data/../x").is_err());
        // no mount table entries at all: the root holds everything
        assert_eq!(mount_of(std::iter::empty(), "/x/y").as_deref(), Ok("/"));
        // a root written as `//` or `/./` is the root
        assert_eq!(
            mount_of(["//", "/./home"].into_iter(), "/home/u").as_deref(),
            Ok("/home")
        );
    }

    #[test]
    fn normalize_point_edge_cases() {
        assert_eq!(normalize_point("/"), "/");
        assert_eq!(normalize_point("//"), "/");
        assert_eq!(normalize_point("/."), "/");
        assert_eq!(normalize_point("/./"), "/");
        assert_eq!(normalize_point("//srv/./data/"), "/srv/data");
        assert_eq!(normalize_point("/srv/.data"), "/srv/.data");
        assert_eq!(normalize_point("/srv/../x"), "/srv/../x");
        assert_eq!(normalize_point("none"), "none");
        assert_eq!(normalize_point("swap:/dev/sda2"), "swap:/dev/sda2");
    }

    #[test]
    fn disk_by_links_are_tags_with_udev_escapes_decoded() {
        let t = |s: &str| tag_of_spec(s);
        assert_eq!(t("/dev/disk/by-uuid/ab-12").as_deref(), Some("UUID=ab-12"));
        assert_eq!(
            t("/dev/disk/by-label/db\\x20data").as_deref(),
            Some("LABEL=db data")
        );
        assert_eq!(
            t("/dev/disk/by-partuuid/p1").as_deref(),
            Some("PARTUUID=p1")
        );
        assert_eq!(
            t("/dev/disk/by-partlabel/x").as_deref(),
            Some("PARTLABEL=x")
        );
        assert_eq!(t("LABEL=\"a b\"").as_deref(), Some("LABEL=a b"));
        // not a tag: other link directories, nested names, plain devices
        assert_eq!(t("/dev/disk/by-id/ata-X"), None);
        assert_eq!(t("/dev/disk/by-uuid/"), None);
        assert_eq!(t("/dev/disk/by-uuid/a/b"), None);
        assert_eq!(t("/dev/sda1"), None);
        // a broken escape stays as written; never a panic on a short tail
        assert_eq!(udev_unescape("a\\x2"), "a\\x2");
        assert_eq!(udev_unescape("a\\x+1b"), "a\\x+1b");
        assert_eq!(udev_unescape("\\x41\\"), "A\\");
    }

    #[test]
    fn capture_names() {
        assert_eq!(capture_name("/dev/sdb1"), "sdb1");
        assert_eq!(capture_name("/dev/mapper/vg-db"), "mapper_vg-db");
    }

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
