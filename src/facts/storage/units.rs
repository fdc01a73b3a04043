//! The systemd `.mount` units of a host: which unit directories systemd
//! loads them from, each unit with its drop-ins in the order they apply,
//! masked and refused units left out. Reads the units only; what a unit
//! means for the `fstab` namespace is `namespaces`'s business.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::{Facts, FileIssue};
use crate::host::{Host, ReadError};
use crate::parse::mountunit;
use crate::shell;

use super::points::point_cow;

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
    // What each unit directory holds, so a unit's drop-in directory is
    // listed only where its name is (most hosts have none): `None`, the
    // directory could not be listed for another reason than not being
    // there (its drop-in directories are tried as they are).
    let mut listed: Vec<Option<BTreeSet<String>>> = Vec::with_capacity(UNIT_DIRS.len());
    for dir in UNIT_DIRS {
        let list = match host
            .read_dir_matching(dir, |n| n.ends_with(b".mount") || n.ends_with(b".mount.d"))
        {
            Ok(list) => list,
            Err(e) => {
                listed.push((e == ReadError::NotFound).then(BTreeSet::new));
                continue;
            }
        };
        listed.push(Some(
            list.iter()
                .filter(|e| e.name.ends_with(".mount.d"))
                .map(|e| e.name.clone())
                .collect(),
        ));
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
        let drop_in_dir = format!("{name}.d");
        for (dir, listing) in UNIT_DIRS.iter().zip(&listed) {
            if listing.as_ref().is_some_and(|l| !l.contains(&drop_in_dir)) {
                continue;
            }
            let d = format!("{dir}/{drop_in_dir}");
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
            Some(w) if point_cow(&w.value) != from_name => {
                facts.issues.push(FileIssue::problem(
                    "mount-unit",
                    &path,
                    Some(w.line),
                    format!(
                        "Where={} is not the path the unit name {name} stands for ({from_name}): systemd refuses to load this unit; rename it to `{}`",
                        w.value,
                        // the host's path as one sh word: the command is for pasting
                        shell::command(&["systemd-escape", "--path", "--suffix=mount", &w.value])
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
