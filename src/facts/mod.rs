//! Facts gathering: dispatches every reader (system, sysctl, option files,
//! Zimbra, storage, presence) over a [`Host`] before any rule is evaluated,
//! and points evidence at the files an admin edits, and maps each catalogue
//! key canonicalisation to its function ([`canonicalizer`]). All I/O of an
//! audit happens here and below; the data types live in [`model`]
//! (re-exported here). What is secret is decided in [`crate::unstable::secret`].

use std::collections::{BTreeMap, BTreeSet};

use crate::host::Host;

pub(crate) mod disks;
pub mod init;
pub mod model;
pub mod mysql;
pub mod presence;
pub mod roles;
mod slaac;
pub mod storage;
pub mod sysctl;
pub mod system;
pub mod tuned;
pub mod zimbra;

pub use model::*;

/// The text shown instead of a secret value (decided in [`crate::unstable::secret`]).
pub use crate::secret::REDACTED;

/// Host trees whose paths are kernel objects, not files an admin edits:
/// their links (`/proc/self`, `/dev/mapper/x -> ../dm-2`) are not resolved
/// for evidence.
const NOT_EDITED: [&str; 3] = ["/proc/", "/sys/", "/dev/"];

/// Point every evidence at the file an admin edits: a path that resolves
/// through a symlink (inside the host root) becomes the real file, with the
/// link in `via`. Each distinct path is resolved once.
pub fn resolve_evidence_links(host: &Host, facts: &mut Facts) {
    let mut cache: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut fix = |e: &mut Evidence| {
        if e.via.is_some() || NOT_EDITED.iter().any(|p| e.path.starts_with(p)) {
            return;
        }
        let real = cache
            .entry(e.path.clone())
            .or_insert_with(|| {
                host.resolve(&e.path)
                    .ok()
                    .filter(|r| *r != crate::host::lexical(&e.path))
            })
            .clone();
        if let Some(real) = real {
            e.via = Some(std::mem::replace(&mut e.path, real));
        }
    };
    for ns in facts.namespaces.values_mut() {
        for entry in ns.entries.values_mut() {
            let evidence = match entry {
                Entry::Set(s) => &mut s.evidence,
                Entry::Unreadable { evidence, .. } => evidence,
            };
            evidence.iter_mut().for_each(&mut fix);
        }
    }
    for e in facts.dir_size_evidence.values_mut() {
        fix(e);
    }
    if let Some(o) = facts.option_files.as_mut() {
        o.options.iter_mut().for_each(|o| fix(&mut o.evidence));
    }
}

/// Gather every fact the policies need from a host. All I/O happens here.
pub fn gather(host: &Host, needs: &Needs) -> Facts {
    // The readers ask what a snapshot path is many times over: answered
    // once per gather (the memo goes with `_stats`).
    let _stats = host.remember_stats();
    let mut facts = Facts::new(host);
    system::gather(host, needs, &mut facts);
    init::gather(host, &mut facts);
    sysctl::gather(host, needs, &mut facts);
    roles::gather(host, &mut facts);
    slaac::gather(host, &mut facts);
    gather_extensions(host, needs, &mut facts);
    presence::detect(host, &mut facts);
    resolve_evidence_links(host, &mut facts);
    // the option files as other releases read them (upgrade targets), and
    // the installed server's version, which the `mycnf` namespace's
    // `datadir` may decide (its upgrade-info file)
    mysql::gather_as(host, needs, &mut facts);
    // Last: a directory may be the value of a setting or fact read above.
    let paths: BTreeSet<String> = needs
        .dir_sizes
        .iter()
        .filter_map(|n| facts.resolve_need(n))
        .collect();
    if !paths.is_empty() {
        gather_dir_sizes(host, &paths, &mut facts);
    }
    facts.issues.sort();
    facts.issues.dedup();
    // Problems of one kind in one file are one finding, whichever reader
    // found them (issue 29): the readers merge as they go, this merges
    // what came from different places.
    let mut all = IssueCollector::default();
    all.extend(std::mem::take(&mut facts.issues));
    facts.issues = all.into_vec();
    facts.issues.sort();
    facts
}

/// Gather directory sizes (`du -sb` style) for the given host paths: walked on a
/// live host, read from `captures/du.txt` in a snapshot.
pub fn gather_dir_sizes(host: &Host, paths: &BTreeSet<String>, facts: &mut Facts) {
    system::gather_dir_sizes(host, paths, facts);
}

/// The function that canonicalises keys the way a catalogue row says
/// ([`crate::catalogue::Canon`]); `None` keeps keys as written.
pub fn canonicalizer(canon: crate::catalogue::Canon) -> Option<fn(&str) -> String> {
    use crate::catalogue::Canon;
    match canon {
        Canon::Exact => None,
        Canon::SysctlKey => Some(sysctl::canonical_key),
        Canon::OptionName => Some(mysql::canonical_name),
        Canon::VariableName => Some(crate::parse::mycnf::normalize_name),
        Canon::MountPoint => Some(storage::normalize_point),
    }
}

/// Readers added by later domains (option files, Zimbra, storage) hook in here.
fn gather_extensions(host: &Host, needs: &Needs, facts: &mut Facts) {
    mysql::gather(host, needs, facts);
    zimbra::gather(host, needs, facts);
    storage::gather(host, needs, facts);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{self, Shape};
    use crate::value::Value;

    /// Keys that tell the canonicalisations apart.
    const PROBES: &[&str] = &[
        "net/ipv4/tcp_tw_reuse",
        "/proc/sys/vm/swappiness",
        "Innodb-Buffer-Pool-Size",
        "loose-key-buffer",
        "skip-name-resolve",
        "//opt//zimbra/db/",
        "/data/.",
        "zimbra_server_hostname",
    ];

    /// Every namespace a reader gathers is a catalogue row, and behaves as the
    /// row says: its shape, its canonicalisation and what absence means.
    #[test]
    fn gathered_namespaces_match_their_catalogue_rows() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");
        let mut seen = BTreeSet::new();
        let mut dirs: Vec<_> = std::fs::read_dir(root)
            .unwrap()
            .map(|d| d.unwrap().path())
            .collect();
        dirs.sort();
        for dir in dirs {
            let host = Host::snapshot(&dir).unwrap();
            let facts = gather(&host, &Needs::default());
            for (name, ns) in &facts.namespaces {
                let Some(spec) = catalogue::namespace(name) else {
                    panic!(
                        "{}: namespace `{name}` is not in src/catalogue/",
                        dir.display()
                    );
                };
                seen.insert(name.clone());
                if ns.unavailable.is_some() {
                    continue;
                }
                assert_eq!(ns.absent_means, spec.absent, "{}: `{name}`", dir.display());
                let want = canonicalizer(spec.canon);
                for k in PROBES {
                    let expect = want.map_or_else(|| k.to_string(), |f| f(k));
                    assert_eq!(ns.canonical(k), expect, "`{name}` canonicalises `{k}`");
                }
                for (key, e) in &ns.entries {
                    if let Entry::Set(s) = e {
                        let is_record = matches!(s.value, Value::Record(_));
                        assert_eq!(
                            is_record,
                            spec.shape == Shape::Record,
                            "{}: `{name}[{key}]` is {}",
                            dir.display(),
                            s.value.type_name()
                        );
                    }
                }
            }
            for fact in facts.facts.keys() {
                assert!(
                    catalogue::fact(fact).is_some(),
                    "fact `{fact}` is not in src/catalogue/"
                );
            }
        }
        for spec in catalogue::NAMESPACES {
            assert!(
                seen.contains(spec.name),
                "no reader gathers catalogue namespace `{}`",
                spec.name
            );
        }
    }

    /// Coverage counts a rule towards the domain of what it reads: the
    /// catalogue's domain of every namespace and fact is the one presence uses.
    #[test]
    fn catalogue_domains_are_the_domains_presence_uses() {
        for n in catalogue::NAMESPACES {
            assert_eq!(
                presence::Domain::of_namespace(n.name).map(|d| d.as_str()),
                Some(n.domain),
                "namespace `{}`",
                n.name
            );
        }
        for f in catalogue::FACTS {
            assert_eq!(
                presence::Domain::of_namespace(f.name).map(|d| d.as_str()),
                f.domain,
                "fact `{}`",
                f.name
            );
        }
    }
}
