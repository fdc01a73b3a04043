//! Reading the mount tables: `/etc/fstab` and the live mount table
//! (`/proc/self/mountinfo`, else `/proc/mounts`), both redacted before they
//! are parsed, with the `.mount` units a host mounts by and the automount
//! placeholders they all imply ([`Sources`]). Reads and records issues;
//! builds no namespace entry.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::{Facts, FileIssue, IssueLevel};
use crate::host::{Host, ReadError};
use crate::parse::fstab::{self, FstabEntry};
use crate::parse::mountinfo::{parse_mountinfo, parse_mounts, Mount};
use crate::secret::{redact_text, FileKind};

use super::{
    fstab_key, normalize_point, read_mount_units, UnitMount, FSTAB, MOUNTINFO, PROC_MOUNTS,
};

/// What the `fstab`, `mount` and `ext4` namespaces are built from, each
/// read once.
pub(super) struct Sources {
    /// The live mount table's path and mounts, or why they are unknown.
    pub(super) mounts: Result<(String, Vec<Mount>), String>,
    /// The lines of /etc/fstab (none when a host without one mounts by
    /// units), or why they are unknown.
    pub(super) fstab: Result<Vec<FstabEntry>, String>,
    /// The `.mount` units, read when the fstab or mount namespace is wanted.
    pub(super) units: Vec<UnitMount>,
    /// The mount points of the live mount table.
    pub(super) live_points: BTreeSet<String>,
    /// Mount points where only an automount placeholder is mounted.
    pub(super) placeholders: BTreeSet<String>,
}

/// Read the mount table, /etc/fstab and (when `units_wanted`) the `.mount`
/// units, in that order.
pub(super) fn read_sources(host: &Host, units_wanted: bool, facts: &mut Facts) -> Sources {
    let mounts = read_mounts(host, facts);
    let fstab = read_fstab(host, facts);
    let live_points: BTreeSet<String> = match &mounts {
        Ok((_, ms)) => ms.iter().map(|m| normalize_point(&m.target)).collect(),
        Err(_) => BTreeSet::new(),
    };
    // .mount units configure the mount points no fstab line names
    let no_fstab = matches!(&fstab, Err(r) if *r == format!("{FSTAB} does not exist"));
    let units = if (fstab.is_ok() || no_fstab) && units_wanted {
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
    Sources {
        mounts,
        fstab,
        units,
        live_points,
        placeholders,
    }
}

/// Mount points where the visible live mount is an automount placeholder
/// (autofs) standing for a configured filesystem: the fstab line (its
/// `x-systemd.automount`, or a type other than autofs) or `.mount` unit for
/// that point says what will be mounted at the first access. An autofs
/// mount nothing configures (systemd's own binfmt_misc automount, an
/// automount(8) map) is a mount like any other.
pub(super) fn automount_placeholders(
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

pub(super) fn read_mounts(host: &Host, facts: &mut Facts) -> Result<(String, Vec<Mount>), String> {
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

pub(super) fn read_fstab(host: &Host, facts: &mut Facts) -> Result<Vec<FstabEntry>, String> {
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
