//! Product presence and path knowledge, decided from every piece of evidence
//! the readers gathered (never from one file): which domains a host has
//! (sysctl, MySQL, Zimbra, storage) and from which sources, the
//! `zimbra_installed`, `mysql_installed` and `storage_detected` facts, and the
//! table of host paths known to exist (the directory itself, a mount table or
//! /etc/fstab mount point, a `captures/du.txt` line, a `datadir` in an option
//! file or the runtime variables). Runs last in gathering; reads the host only
//! for a few existence probes, through [`Host`].

use std::collections::BTreeMap;

use crate::host::{Host, ReadError, SourceKind};
use crate::value::Value;

use super::{Entry, Evidence, Facts};

/// Where Zimbra lives (fixed by its packages).
pub const ZIMBRA_HOME: &str = "/opt/zimbra";
/// Zimbra's generated my.cnf (the `mysql_mycnf` default).
pub const ZIMBRA_MYCNF: &str = "/opt/zimbra/conf/my.cnf";

pub use super::model::{Detection, Domain};

/// Why a snapshot path is missing when `snapshot.json` lists it as `absent`:
/// the host did not have it when the snapshot was taken.
pub const SNAPSHOT_ABSENT: &str = "does not exist (snapshot.json `absent`)";

/// What is known about whether a host path exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathState {
    /// It exists; the evidence that shows it.
    Known(Evidence),
    /// It does not exist (a live host said so).
    Absent(String),
    /// Nothing shows it either way (a snapshot without it), with the reason.
    Unknown(String),
}

/// How a source shows a path, for messages.
fn show(e: &Evidence) -> String {
    let s = e.to_string();
    match s.strip_prefix("/captures/") {
        Some(rest) => format!("captures/{rest}"),
        None => s,
    }
}

fn norm(path: &str) -> String {
    let t = path.trim_end_matches('/');
    if t.is_empty() {
        "/".into()
    } else {
        t.to_string()
    }
}

/// Whether `p` is `base` or below it (whole path components).
fn at_or_below(p: &str, base: &str) -> bool {
    let (p, base) = (norm(p), norm(base));
    base == "/" || p == base || p.starts_with(&format!("{base}/"))
}

impl Facts {
    /// Whether `path` exists on the host, from every piece of evidence: the
    /// path itself (when a policy asked), or a known path at or below it (a
    /// mount point, an fstab entry, a du line, a configured `datadir`).
    pub fn path_state(&self, path: &str) -> PathState {
        let want = norm(path);
        if self.existing_paths.contains(path) || self.existing_paths.contains(&want) {
            return PathState::Known(Evidence::file(want));
        }
        if let Some((_, e)) = self.known_paths.iter().find(|(k, _)| at_or_below(k, &want)) {
            return PathState::Known(e.clone());
        }
        let reason = self
            .missing_paths
            .get(path)
            .or_else(|| self.missing_paths.get(&want))
            .cloned();
        let not_found = ReadError::NotFound.to_string();
        match (self.source, reason) {
            (SourceKind::Live, Some(r)) if r == not_found => {
                PathState::Absent(format!("{want} does not exist"))
            }
            (SourceKind::Live, Some(r)) => PathState::Unknown(format!("{want}: {r}")),
            (SourceKind::Live, None) => PathState::Unknown(format!("{want} was not looked at")),
            (SourceKind::Snapshot, Some(r)) if r == SNAPSHOT_ABSENT => {
                PathState::Absent(format!("{want} does not exist"))
            }
            (SourceKind::Snapshot, Some(r)) if r != not_found => {
                PathState::Unknown(format!("{want}: {r}"))
            }
            (SourceKind::Snapshot, _) => PathState::Unknown(format!(
                "{want} is not in the snapshot, and no mount table, /etc/fstab, captures/du.txt or option file names it (a snapshot holds files, not empty directories); capture `du -sb {want}` into captures/du.txt, or the mount table, to decide"
            )),
        }
    }

    /// The detection of a domain (not detected when presence never ran).
    pub fn detection(&self, domain: Domain) -> Detection {
        self.detections
            .iter()
            .find(|d| d.domain == domain)
            .cloned()
            .unwrap_or_else(|| Detection::new(domain, Vec::new(), "not looked for"))
    }
}

fn set_evidence(facts: &Facts, ns: &str, key: &str) -> Option<Evidence> {
    match facts.namespaces.get(ns)?.get(key)? {
        Entry::Set(s) => s.evidence.first().cloned(),
        _ => None,
    }
}

fn set_raw(facts: &Facts, ns: &str, key: &str) -> Option<String> {
    match facts.namespaces.get(ns)?.get(key)? {
        Entry::Set(s) if s.raw.starts_with('/') => Some(norm(&s.raw)),
        _ => None,
    }
}

/// Distinct files that set entries of a namespace (the winning location of each).
fn files_of(facts: &Facts, ns: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(space) = facts.namespaces.get(ns) {
        if space.unavailable.is_some() {
            return out;
        }
        for e in space.entries.values() {
            let ev = match e {
                Entry::Set(s) => s.evidence.first(),
                Entry::Unreadable { evidence, .. } => evidence.first(),
            };
            if let Some(ev) = ev {
                let p = if ev.path.starts_with("/proc/sys/") {
                    "/proc/sys".to_string()
                } else {
                    show(&Evidence::file(ev.path.clone()))
                };
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Decide presence and path knowledge from the gathered facts (runs after
/// every reader). Fills `facts.detections`, `facts.known_paths` and the
/// presence facts.
pub fn detect(host: &Host, facts: &mut Facts) {
    let exists = |p: &str| !matches!(host.kind_of(p), Err(ReadError::NotFound));
    let mut known: BTreeMap<String, Evidence> = BTreeMap::new();
    let add = |known: &mut BTreeMap<String, Evidence>, p: String, e: Evidence| {
        known.entry(p).or_insert(e);
    };

    // Paths known from the storage namespaces and du. Presence does not
    // depend on which rules were loaded: without the storage namespaces
    // (`--only zimbra.*`), fstab and the mount table are read on the side.
    let side = if ["fstab", "mount"]
        .iter()
        .all(|n| facts.namespaces.contains_key(*n))
    {
        None
    } else {
        let mut side = Facts::new(host);
        let needs = super::Needs {
            namespaces: ["fstab", "mount"].iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        super::storage::gather(host, &needs, &mut side);
        Some(side)
    };
    let mounts: &Facts = side.as_ref().unwrap_or(facts);
    let points = super::storage::mount_points(mounts);
    let mut storage_sources = Vec::new();
    for ns in ["fstab", "mount"] {
        if mounts
            .namespaces
            .get(ns)
            .is_some_and(|n| n.unavailable.is_none() && !n.entries.is_empty())
        {
            storage_sources.extend(files_of(mounts, ns));
        }
    }
    for (p, e) in points {
        add(&mut known, p, e);
    }
    let du = du_listing(host);
    for (p, line) in &du {
        add(
            &mut known,
            norm(p),
            Evidence::line(crate::catalogue::DU.path, *line),
        );
    }
    // Data directories named by option files or the runtime variables.
    for (ns, key) in [
        ("mycnf", "datadir"),
        ("mysql", "datadir"),
        ("zimbra_mycnf", "datadir"),
    ] {
        if let (Some(p), Some(e)) = (set_raw(facts, ns, key), set_evidence(facts, ns, key)) {
            add(&mut known, p, e);
        }
    }
    facts.known_paths = known;

    // sysctl: the running values, then the files that configure them.
    let mut sources = files_of(facts, "sysctl");
    sources.truncate(1);
    let sysctl = Detection::new(
        Domain::Sysctl,
        sources,
        "no /proc/sys and no captures/sysctl-a.txt",
    );

    // MySQL: server option files, the runtime capture, a data directory.
    let mut sources = files_of(facts, "mycnf");
    sources.extend(files_of(facts, "mysql"));
    let datadir = super::mysql::datadir(facts);
    let shown = sources.clone();
    if let Some(e) = facts
        .known_paths
        .iter()
        .find(|(k, _)| at_or_below(k, &datadir))
        .map(|(_, e)| e.clone())
        .filter(|e| !shown.contains(&show(&Evidence::file(e.path.clone()))))
    {
        sources.push(format!("{} ({datadir})", show(&e)));
    } else if host.kind() == SourceKind::Live && exists(&datadir) {
        sources.push(datadir.clone());
    }
    // a server package, a sosreport's du or process list
    sources.extend(facts.server_signs.iter().cloned());
    let mysql = Detection::new(
        Domain::Mysql,
        sources,
        "no option file configures a server, no captures/mysql-variables.tsv, no data directory",
    );

    // Zimbra: localconfig, the zmlocalconfig capture, its my.cnf, a mount or du entry.
    let mut sources = Vec::new();
    for p in [super::zimbra::LOCALCONFIG_XML, ZIMBRA_MYCNF] {
        if exists(p) {
            sources.push(p.to_string());
        }
    }
    if host.kind() == SourceKind::Snapshot && exists(crate::catalogue::ZMLOCALCONFIG.path) {
        sources.insert(
            0,
            format!("captures/{}", super::zimbra::ZMLOCALCONFIG_CAPTURE),
        );
    }
    for (p, e) in &facts.known_paths {
        if at_or_below(p, ZIMBRA_HOME) && (e.path != ZIMBRA_MYCNF) {
            sources.push(format!("{} ({p})", show(e)));
        }
    }
    let zimbra = Detection::new(
        Domain::Zimbra,
        sources,
        "no /opt/zimbra/conf/localconfig.xml, captures/zmlocalconfig.txt, /opt/zimbra/conf/my.cnf, nor a mount or du entry under /opt/zimbra",
    );

    // storage: /etc/fstab, the mount table, ext4 layouts.
    let storage = Detection::new(
        Domain::Storage,
        storage_sources,
        "no /etc/fstab and no mount table (/proc/self/mountinfo, /proc/mounts)",
    );

    facts.detections = vec![sysctl, mysql, zimbra, storage];
    for d in facts.detections.clone() {
        if let Some(name) = d.domain.fact() {
            facts
                .facts
                .insert(name.to_string(), Ok(Value::Bool(d.detected)));
        }
    }
}

/// Paths and line numbers of a snapshot's `captures/du.txt` (none on a live
/// host); malformed lines are reported by the directory-size reader.
fn du_listing(host: &Host) -> Vec<(String, usize)> {
    if host.kind() != SourceKind::Snapshot {
        return Vec::new();
    }
    let Ok(text) = host.capture("du.txt") else {
        return Vec::new();
    };
    crate::parse::numbered_lines(&text)
        .filter_map(|(n, line)| {
            let (b, p) = line
                .split_once('\t')
                .or_else(|| line.trim().split_once(char::is_whitespace))?;
            b.trim().parse::<u64>().ok()?;
            let p = p.trim();
            p.starts_with('/').then(|| (p.to_string(), n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_uses_whole_components() {
        assert!(at_or_below("/opt/zimbra/db/data", "/opt/zimbra/db"));
        assert!(at_or_below("/opt/zimbra/db/", "/opt/zimbra/db"));
        assert!(!at_or_below("/opt/zimbra/dbx", "/opt/zimbra/db"));
        assert!(!at_or_below("/opt", "/opt/zimbra"));
    }

    #[test]
    fn absence_is_proof_only_on_a_live_host() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("etc")).unwrap();
        let host = Host::snapshot(dir.path()).unwrap();
        let mut f = Facts::new(&host);
        let nf = ReadError::NotFound.to_string();
        f.missing_paths
            .insert("/opt/zimbra/index".into(), nf.clone());
        assert!(matches!(
            f.path_state("/opt/zimbra/index"),
            PathState::Unknown(r) if r.contains("not in the snapshot")
        ));
        f.known_paths.insert(
            "/opt/zimbra/index/".into(),
            Evidence::line("/etc/fstab", 12),
        );
        f.known_paths = f
            .known_paths
            .into_iter()
            .map(|(k, v)| (norm(&k), v))
            .collect();
        assert_eq!(
            f.path_state("/opt/zimbra/index"),
            PathState::Known(Evidence::line("/etc/fstab", 12))
        );
        assert_eq!(
            f.path_state("/opt/zimbra"),
            PathState::Known(Evidence::line("/etc/fstab", 12))
        );
        f.source = SourceKind::Live;
        f.missing_paths.insert("/opt/zimbra/db".into(), nf);
        assert!(matches!(
            f.path_state("/opt/zimbra/db"),
            PathState::Absent(_)
        ));
        f.missing_paths
            .insert("/srv/x".into(), "permission denied".into());
        assert!(matches!(f.path_state("/srv/x"), PathState::Unknown(_)));
    }
}
