//! The namespace assembly: [`gather`] takes the live values (`live`), the
//! persisted files (`files`) and tuned's writes, runs both tools' models
//! (`precedence`), lays what ufw and TuneD write after boot over the
//! systemd model, notes where procps would differ, and fills the `sysctl`,
//! `sysctl_boot` and `sysctl_procps` namespaces. Reads only the
//! after-boot sources (`EXTRA_SOURCES`) itself.

use std::collections::BTreeMap;

use crate::facts::tuned::{self, Write};
use crate::facts::{Entry, Facts, FileIssue, Namespace, Needs, Setting};
use crate::host::{EntryKind, Host, SourceKind};
use crate::parse::sysctl::parse_conf;

use super::files::persisted_files;
use super::live::{live_namespace, live_source, read_listing, wanted_keys};
use super::precedence::{procps_model, systemd_model};
use super::{canonical_key, MAX_EVIDENCE};

/// Other persisted sources applied after boot by the software that owns them.
const EXTRA_SOURCES: [(&str, &str); 1] = [(
    "/etc/ufw/sysctl.conf",
    "ufw applies it when the firewall starts",
)];

/// Gather the three sysctl namespaces.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    let proc_dir = matches!(host.kind_of("/proc/sys"), Ok(EntryKind::Dir));
    // The listing's text outlives `live`, whose values borrow from it.
    let listing = (host.kind() != SourceKind::Live).then(|| read_listing(host, facts));
    let live = live_source(host, facts, &listing, proc_dir);

    // Persisted configuration: the files each tool reads.
    let (parsed, procps_files) = persisted_files(host, facts);

    // TuneD, where it is enabled: what it writes after boot, in order.
    let tuned = tuned::sysctl_writes(host, facts);

    // Keys we need live values for: rule keys + explicit persisted keys + glob expansions.
    let (wanted, glob_matches) = wanted_keys(host, needs, &tuned, &parsed, &procps_files, &live);

    let mut live_ns = live_namespace(host, &live, &wanted, proc_dir);

    // Boot (systemd) model
    let mut boot = systemd_model(&parsed, &glob_matches, facts);
    // then tuned's writes after boot
    let boot_unknown = apply_tuned(&mut boot, tuned);
    apply_extra_sources(host, &mut boot, &glob_matches, facts);

    // procps `sysctl --system` model: its own file list, /etc/sysctl.conf last.
    let procps = procps_model(&procps_files, &glob_matches);
    note_procps_differences(&mut boot, &procps);
    cite_configuration(&mut live_ns, &boot);

    let mut boot_ns = Namespace::of("sysctl_boot");
    boot_ns.canonicalize = Some(canonical_key);
    boot_ns.entries = boot.into_iter().map(|(k, s)| (k, Entry::Set(s))).collect();
    boot_ns.entries.extend(boot_unknown);
    let mut procps_ns = Namespace::of("sysctl_procps");
    procps_ns.canonicalize = Some(canonical_key);
    procps_ns.entries = procps
        .into_iter()
        .map(|(k, s)| (k, Entry::Set(s)))
        .collect();

    facts.namespaces.insert("sysctl".into(), live_ns);
    facts.namespaces.insert("sysctl_boot".into(), boot_ns);
    facts.namespaces.insert("sysctl_procps".into(), procps_ns);
}

/// Lay tuned's writes over the boot model, in order; returns the keys
/// whose value tuned makes unknown.
fn apply_tuned(boot: &mut BTreeMap<String, Setting>, tuned: Vec<Write>) -> BTreeMap<String, Entry> {
    let mut boot_unknown: BTreeMap<String, Entry> = BTreeMap::new();
    for w in tuned {
        let k = w.key.clone();

        if let (Some(v), Some(cur)) = (&w.keep_if, boot.get(&k)) {
            if cur.raw == *v {
                continue;
            }
        }
        // a `>`/`<` value is judged against the value at that time
        let Some(e) = tuned::resolve(w, boot.get(&k)) else {
            continue;
        };
        match e {
            Entry::Set(mut s) => {
                if let Some(prev) = boot.get(&k) {
                    if prev.raw == s.raw && prev.evidence.first() == s.evidence.first() {
                        continue; // re-applied unchanged
                    }
                }
                boot_unknown.remove(&k);
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                    s.evidence.truncate(MAX_EVIDENCE);
                }
                boot.insert(k, s);
            }
            other => {
                boot.remove(&k);
                boot_unknown.insert(k, other);
            }
        }
    }
    boot_unknown
}

/// Lay the other persisted sources (`EXTRA_SOURCES`, applied after boot by
/// the software that owns them) over the boot model.
fn apply_extra_sources(
    host: &Host,
    boot: &mut BTreeMap<String, Setting>,
    glob_matches: &BTreeMap<String, Vec<String>>,
    facts: &mut Facts,
) {
    for (path, why) in EXTRA_SOURCES {
        if let Ok(text) = host.read_to_string(path) {
            let (lines, issues) = parse_conf(&text);
            for i in &issues {
                facts.issues.push(FileIssue::from_parse("sysctl", path, i));
            }
            let extra = systemd_model(
                &[(path.to_string(), std::rc::Rc::new(lines))],
                glob_matches,
                facts,
            );
            for (k, mut s) in extra {
                s.note = Some(format!("set by {path} ({why}), after systemd-sysctl"));
                if let Some(prev) = boot.remove(&k) {
                    s.evidence.extend(prev.evidence);
                    s.evidence.truncate(MAX_EVIDENCE);
                }
                boot.insert(k, s);
            }
        }
    }
}

/// Note where procps would end with another value.
fn note_procps_differences(
    boot: &mut BTreeMap<String, Setting>,
    procps: &BTreeMap<String, Setting>,
) {
    for (k, s) in boot.iter_mut() {
        if let Some(p) = procps.get(k) {
            if !p.value.loosely_equals(&s.value) && s.note.is_none() {
                s.note = Some(format!(
                    "procps `sysctl --system` would apply `{}` from {} instead (it applies /etc/sysctl.conf last)",
                    p.raw, p.evidence[0]
                ));
            }
        }
    }
}

/// A live value that the configuration also sets to the same value was set
/// by that file: cite the file and line first, then the live path.
fn cite_configuration(live_ns: &mut Namespace, boot: &BTreeMap<String, Setting>) {
    for (k, e) in live_ns.entries.iter_mut() {
        if let (Entry::Set(live), Some(conf)) = (e, boot.get(k)) {
            if live.value.loosely_equals(&conf.value) {
                let mut ev = vec![conf.evidence[0].clone()];
                ev.append(&mut live.evidence);
                live.evidence = ev;
            }
        }
    }
}
