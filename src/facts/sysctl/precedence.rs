//! Which line wins: the value each key ends with under systemd-sysctl's
//! rules ([`systemd_model`]: an ordered hashmap, exclusions, globs) and
//! under procps `sysctl --system`'s ([`procps_model`]: every line in
//! order, last write wins), each with the lines it overrode (at most
//! [`MAX_EVIDENCE`] kept). Pure over the parsed files: no I/O.

use std::collections::BTreeMap;

use crate::facts::{Evidence, Facts, FileIssue, Setting};
use crate::parse::sysctl::{is_glob, ConfLine};

use super::files::Lines;
use super::setting;

/// At most this many overridden locations are kept per key (most recent
/// first) besides the winning one: a key assigned 40,000 times must not make
/// every finding carry 40,000 locations.
pub const MAX_EVIDENCE: usize = 33;

/// Where one key's value was set: the winning line and the ones it overrode
/// (most recent first, at most [`MAX_EVIDENCE`] kept in all).
struct Track {
    raw: String,
    winner: Evidence,
    overridden: std::collections::VecDeque<Evidence>,
    dropped: usize,
}

impl Track {
    fn new(raw: String, winner: Evidence) -> Track {
        Track {
            raw,
            winner,
            overridden: std::collections::VecDeque::new(),
            dropped: 0,
        }
    }
    /// Record an earlier location that this one overrode.
    fn push_overridden(&mut self, ev: Evidence) {
        self.overridden.push_front(ev);
        if self.overridden.len() >= MAX_EVIDENCE {
            self.overridden.pop_back();
            self.dropped += 1;
        }
    }
    /// A new winning assignment; the old winner becomes overridden.
    fn set(&mut self, raw: String, winner: Evidence) {
        let old = std::mem::replace(&mut self.winner, winner);
        self.raw = raw;
        self.push_overridden(old);
    }
    fn into_setting(self, key: &str) -> Setting {
        let mut s = setting(key, &self.raw, self.winner);
        s.evidence.extend(self.overridden);
        s
    }
}

/// Report a key assigned so often that not every location is kept.
fn note_dropped(facts: &mut Facts, key: &str, t: &Track) {
    if t.dropped > 0 {
        facts.issues.push(
            FileIssue::problem(
                "sysctl",
                &t.winner.path,
                t.winner.line,
                format!(
                    "`{key}` is assigned {} times; findings cite the winning line and the {} before it",
                    t.dropped + t.overridden.len() + 1,
                    t.overridden.len()
                ),
            )
            .with_level(crate::facts::IssueLevel::Note),
        );
    }
}

/// One entry of systemd-sysctl's ordered hashmap: a key (or glob) with its
/// value, `None` for a `-key` exclusion.
struct SdOption {
    value: Option<String>,
    track: Track,
}

/// systemd-sysctl's result (src/sysctl/sysctl.c): lines go into an ordered
/// hashmap keyed by the normalised key or glob. A repeat with the **same**
/// value keeps the existing entry and its position (it only ORs the `-`
/// flag); a different value, or a `-key` exclusion, removes the entry and
/// appends a new one at the end. `apply_all()` then walks the map in order:
/// exclusions write nothing (so `key = v` followed by `-key` leaves `key`
/// unset), explicit keys write their value, and a glob writes every live key
/// it matches that has no entry of its own (assignment or exclusion) in the
/// map; a key matched by several globs ends with the last one in map order.
pub(super) fn systemd_model(
    files: &[(String, Lines)],
    glob_matches: &BTreeMap<String, Vec<String>>,
    facts: &mut Facts,
) -> BTreeMap<String, Setting> {
    let mut slots: Vec<Option<(String, SdOption)>> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (path, lines) in files {
        for l in lines.iter() {
            let (key, value) = match l {
                ConfLine::Assign { key, value, .. } => (key, Some(value)),
                ConfLine::Exclude { key, .. } => (key, None),
            };
            let ev = Evidence::line(path.clone(), l.line());
            if let Some(&i) = index.get(key) {
                let Some((_, existing)) = slots.get_mut(i).and_then(Option::as_mut) else {
                    continue;
                };
                if existing.value.as_ref() == value {
                    // same value: systemd keeps the earlier entry where it is
                    existing.track.push_overridden(ev);
                    continue;
                }
                let Some((_, mut old)) = slots.get_mut(i).and_then(Option::take) else {
                    continue;
                };
                if value.is_none() && old.value.is_some() {
                    facts.issues.push(
                        FileIssue::problem(
                            "sysctl",
                            path,
                            Some(l.line()),
                            format!(
                                "`-{key}` comes after the assignment at {}: systemd-sysctl does not set `{key}` at all (the exclusion replaces the assignment); procps `sysctl --system` still writes it",
                                old.track.winner
                            ),
                        )
                        .with_level(crate::facts::IssueLevel::Note),
                    );
                }
                old.track.set(value.cloned().unwrap_or_default(), ev);
                old.value = value.cloned();
                index.insert(key.clone(), slots.len());
                slots.push(Some((key.clone(), old)));
            } else {
                index.insert(key.clone(), slots.len());
                slots.push(Some((
                    key.clone(),
                    SdOption {
                        value: value.cloned(),
                        track: Track::new(value.cloned().unwrap_or_default(), ev),
                    },
                )));
            }
        }
    }
    let mut out: std::collections::HashMap<String, Track> = std::collections::HashMap::new();
    for (key, opt) in slots.into_iter().flatten() {
        let Some(value) = &opt.value else {
            continue; // exclusion: only there to keep globs away
        };
        if is_glob(&key) {
            for m in glob_matches.get(&key).map(Vec::as_slice).unwrap_or(&[]) {
                if index.contains_key(m) {
                    continue; // explicit setting exists
                }
                match out.get_mut(m) {
                    Some(t) => t.set(value.clone(), opt.track.winner.clone()),
                    None => {
                        let mut t = Track::new(value.clone(), opt.track.winner.clone());
                        for e in opt.track.overridden.iter().rev() {
                            t.push_overridden(e.clone());
                        }
                        out.insert(m.clone(), t);
                    }
                }
            }
        } else {
            note_dropped(facts, &key, &opt.track);
            out.insert(key, opt.track);
        }
    }
    out.into_iter()
        .map(|(k, t)| {
            let s = t.into_setting(&k);
            (k, s)
        })
        .collect()
}

/// procps `sysctl --system` (procps-ng src/sysctl.c, 4.0.x): every line of
/// every file goes into one list, in order, without de-duplication, and
/// `write_setting_list()` writes them in that order, so the last write of a
/// key wins. A glob writes every live key it matches unless the list holds an
/// entry with exactly that path (an assignment anywhere, or a `-key`
/// exclusion, or the glob itself: a key named `v*` is skipped by the glob
/// `v*`); an exclusion never unsets an explicit assignment. A
/// `- key = value` line keeps the blank in the key and writes nothing.
pub(super) fn procps_model(
    files: &[(String, Lines)],
    glob_matches: &BTreeMap<String, Vec<String>>,
) -> BTreeMap<String, Setting> {
    let listed: std::collections::HashSet<&str> = files
        .iter()
        .flat_map(|(_, ls)| ls.iter())
        .filter(|l| {
            !matches!(
                l,
                ConfLine::Assign {
                    dash_blank: true,
                    ..
                } | ConfLine::Assign {
                    procps_fails: true,
                    ..
                }
            )
        })
        // a glob's own text is a path too: an interface named `v*` is
        // not written by the line `net.ipv4.conf.v*.x = 1`, which names it
        .map(|l| l.key())
        .collect();
    let mut out: std::collections::HashMap<String, Track> = std::collections::HashMap::new();
    let mut put = |k: &str, value: &str, ev: Evidence| match out.get_mut(k) {
        Some(t) => t.set(value.to_string(), ev),
        None => {
            out.insert(k.to_string(), Track::new(value.to_string(), ev));
        }
    };
    for (path, lines) in files {
        for l in lines.iter() {
            let ConfLine::Assign {
                key,
                value,
                dash_blank: false,
                procps_fails: false,
                line,
                ..
            } = l
            else {
                continue;
            };
            if is_glob(key) {
                for m in glob_matches.get(key).map(Vec::as_slice).unwrap_or(&[]) {
                    if !listed.contains(m.as_str()) {
                        put(m, value, Evidence::line(path.clone(), *line));
                    }
                }
            } else {
                put(key, value, Evidence::line(path.clone(), *line));
            }
        }
    }
    out.into_iter()
        .map(|(k, t)| {
            let s = t.into_setting(&k);
            (k, s)
        })
        .collect()
}
