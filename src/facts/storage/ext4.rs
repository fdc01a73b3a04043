//! The ext2/3/4 superblock of each filesystem in /etc/fstab and the live
//! mount table ([`Ext4Layouts`]): which device each mount point's
//! filesystem is on, and that device's layout, from the snapshot's
//! `tune2fs`/`dumpe2fs` captures (found by device name, UUID or label) or
//! the live device's head. One lookup per device. Builds the `ext4` entry
//! of a device; assembling the namespace is `namespaces`'s business.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::{Entry, Evidence, Facts, FileIssue, IssueLevel, Setting};
use crate::host::{Host, ReadError, SourceKind};
use crate::parse::ext4::{parse_device_head, parse_text, Ext4Layout};
use crate::parse::fstab::{spec_tag, FstabEntry};
use crate::parse::mountinfo::Mount;
use crate::parse::Issue;
use crate::value::Value;

use super::specs::resolve_spec;
use super::{fstab_key, normalize_point, strs, tag_of_spec, EXT_TYPES};

/// ext4 superblocks found for the fstab and live filesystems.
#[derive(Default)]
pub(super) struct Ext4Layouts {
    /// Mount point -> device (or unresolved spec) holding an ext2/3/4 filesystem.
    pub(super) device_of: BTreeMap<String, String>,
    /// Mount point -> the fstab spec when it is a tag (`UUID=...`, `LABEL=...`).
    pub(super) tag_of: BTreeMap<String, String>,
    /// Device -> the `ext4` namespace entry and the layout behind it.
    pub(super) by_device: BTreeMap<String, (Entry, Option<Ext4Layout>)>,
}

impl Ext4Layouts {
    pub(super) fn layout_at(&self, point: &str) -> Option<&Ext4Layout> {
        let d = self.device_of.get(point)?;
        self.by_device.get(d)?.1.as_ref()
    }
}

/// The devices of the ext2/3/4 filesystems that /etc/fstab lists and that
/// are mounted now, by mount point, and (when `lookup`) each device's
/// `ext4` entry and layout.
pub(super) fn ext4_layouts(
    host: &Host,
    fstab: Option<&Vec<FstabEntry>>,
    mounts: Option<&[Mount]>,
    lookup: bool,
    facts: &mut Facts,
) -> Ext4Layouts {
    let mut layouts = Ext4Layouts::default();
    if let Some(entries) = fstab {
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
    if let Some(ms) = mounts {
        for m in ms.iter().filter(|m| EXT_TYPES.contains(&m.fstype.as_str())) {
            layouts
                .device_of
                .insert(normalize_point(&m.target), m.source.clone());
        }
    }
    if lookup {
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
    layouts
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
        SourceKind::Snapshot => captured_entry(host, device, tag, tagged, facts),
        SourceKind::Live => superblock_entry(host, device),
    }
}

/// A snapshot's `ext4` entry for `device`: the capture named after the
/// device, checked against the captures that carry its tag (a UUID or
/// label on two devices is a problem), else the one capture with the tag,
/// else why it is unknown (every path tried).
fn captured_entry(
    host: &Host,
    device: &str,
    tag: Option<&str>,
    tagged: &mut Option<Vec<(String, String, Ext4Layout)>>,
    facts: &mut Facts,
) -> (Entry, Option<Ext4Layout>) {
    let paths = capture_paths(host, device);
    let mut tried = Vec::new();
    // a tag: every capture whose superblock has that UUID or label
    // (one per device: a second device with the same tag is a finding)
    let tags: Vec<(&str, &str)> = [Some(device), tag]
        .into_iter()
        .flatten()
        .filter_map(spec_tag)
        .filter(|(t, _)| matches!(*t, "UUID" | "LABEL"))
        .collect();
    let hits = tag_hits(host, &tags, tagged);
    let duplicate = duplicate_tag(host, &tags, &hits);
    let direct = direct_listing(host, &paths, &mut tried, facts);
    match (duplicate, direct) {
        // the mounted device is known: its layout, and the tag is a problem
        (Some((text, caps)), Some((path, l))) => {
            facts
                .issues
                .push(FileIssue::problem("ext4", &caps[0], None, text.clone()));
            let (mut entry, l) = captured(device, path, l);
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
        (None, Some((path, l))) => return captured(device, path, l),
        (None, None) => {}
    }
    if let Some((_, path, l)) = hits.into_iter().next() {
        return captured(device, path, l);
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

/// The snapshot paths of the captures named after `device` and after the
/// device its links resolve to, each once; none for a tag.
fn capture_paths(host: &Host, device: &str) -> Vec<String> {
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
    paths
}

/// Read and parse the capture `cap` (`tune2fs/NAME.txt`): its path, the
/// layout and the parse issues; `None`, with what was tried, when it
/// cannot be read.
fn read_capture(
    host: &Host,
    cap: &str,
    tried: &mut Vec<String>,
) -> Option<(String, Option<Ext4Layout>, Vec<Issue>)> {
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
}

/// The `ext4` entry of `device` from the capture at `path`.
fn captured(device: &str, path: String, l: Ext4Layout) -> (Entry, Option<Ext4Layout>) {
    let mut s = Setting::new(
        Value::Record(layout_record(&l, device, &path)),
        l.features.join(" "),
        Evidence::line(path, l.line),
    );
    s.note = approximation_note(&l);
    (Entry::Set(s), Some(l))
}

/// The captures whose superblock has one of `tags` (a UUID or label), one
/// per capture name. The captures are read and parsed once per host, into
/// `tagged`, whatever the number of tagged lines.
fn tag_hits(
    host: &Host,
    tags: &[(&str, &str)],
    tagged: &mut Option<Vec<(String, String, Ext4Layout)>>,
) -> Vec<(String, String, Ext4Layout)> {
    let mut hits: Vec<(String, String, Ext4Layout)> = Vec::new();
    if !tags.is_empty() {
        // read and parsed once per host, whatever the number of tagged lines
        let all = tagged.get_or_insert_with(|| tagged_captures(host));
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
    hits
}

/// Every `tune2fs` and `dumpe2fs` capture that holds a superblock listing
/// (at most [`MAX_TAG_CAPTURES`] looked at): its name without `.txt`, its
/// path and its layout.
fn tagged_captures(host: &Host) -> Vec<(String, String, Ext4Layout)> {
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
            if let Some((path, Some(l), _)) = read_capture(host, &cap, &mut Vec::new()) {
                let stem = f.name.trim_end_matches(".txt").to_string();
                all.push((stem, path, l));
            }
        }
    }
    all
}

/// When the captures with the tag are of more than one device: the
/// problem, for people, and those captures.
fn duplicate_tag(
    host: &Host,
    tags: &[(&str, &str)],
    hits: &[(String, String, Ext4Layout)],
) -> Option<(String, Vec<String>)> {
    let devices: BTreeSet<String> = hits
        .iter()
        .map(|(stem, _, _)| {
            let dev = format!("/dev/{}", stem.replace('_', "/"));
            host.resolve(&dev).unwrap_or(dev)
        })
        .collect();
    (devices.len() > 1).then(|| {
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
    })
}

/// The first of `paths` that holds a superblock listing, with its layout;
/// the parse issues of each path read recorded, what failed in `tried`.
fn direct_listing(
    host: &Host,
    paths: &[String],
    tried: &mut Vec<String>,
    facts: &mut Facts,
) -> Option<(String, Ext4Layout)> {
    for path in paths {
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
                    Some(l) => return Some((path.clone(), l)),
                    None => tried.push(format!("{path} holds no superblock listing")),
                }
            }
            Err(ReadError::NotFound) => tried.push(format!("no {path}")),
            Err(e) => tried.push(format!("{path}: {e}")),
        }
    }
    None
}

/// A live host's `ext4` entry for `device`: its superblock, read from the
/// device's first 2048 bytes.
fn superblock_entry(host: &Host, device: &str) -> (Entry, Option<Ext4Layout>) {
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
