//! Host-wide facts: memory, CPUs, kernel release, OS identity, paths tested by
//! policies and directory sizes (live walk or `captures/du.txt`). Reads through
//! [`Host`] only; no policy logic.

use std::collections::BTreeSet;

use crate::catalogue::DU;
use crate::host::layout::{self, du_unit, DuSource, Layout};
use crate::host::{EntryKind, Host, NameCut, ReadError, SourceKind, MAX_HOST_NAME_BYTES};
use crate::parse;
use crate::value::Value;

use super::{Evidence, Facts, FileIssue, IssueLevel, KernelVersion, Needs};

/// The input finding for a host name read longer than the kernel allows:
/// where it was read, how long it was, and the name kept (never the name
/// as read, which may be megabytes).
fn name_cut_issue(kept: &str, cut: &NameCut) -> FileIssue {
    let what = if cut.path == "/" {
        "the snapshot directory's name, which names the host (no file in it does),"
    } else {
        "the host name read here"
    };
    FileIssue::problem(
        "hostname",
        &cut.path,
        None,
        format!(
            "{what} is {} bytes, longer than the {MAX_HOST_NAME_BYTES} bytes a Linux host name can be (HOST_NAME_MAX); the report names the host by its first {} bytes, `{kept}`",
            cut.bytes,
            kept.len()
        ),
    )
}

/// Gather system facts into `facts`.
pub fn gather(host: &Host, needs: &Needs, facts: &mut Facts) {
    // Memory
    let mem = match host.read_to_string("/proc/meminfo") {
        Ok(text) => {
            let (fields, issues) = parse::meminfo::parse(&text);
            match fields.iter().find(|f| f.name == "MemTotal" && f.bytes) {
                Some(f) => Ok(Value::Size(f.value as f64)),
                None => {
                    // Without MemTotal the malformed lines matter: report them.
                    for i in &issues {
                        facts
                            .issues
                            .push(FileIssue::from_parse("meminfo", "/proc/meminfo", i));
                    }
                    Err("/proc/meminfo has no MemTotal line".to_string())
                }
            }
        }
        Err(e) => {
            if e != ReadError::NotFound {
                facts
                    .issues
                    .push(FileIssue::unreadable("meminfo", "/proc/meminfo", &e));
            }
            Err(format!("/proc/meminfo: {e}"))
        }
    };
    facts.facts.insert("mem_total".into(), mem);

    // CPUs: /proc/cpuinfo processor lines (snapshot) or available parallelism (live).
    let cpus = match host.read_to_string("/proc/cpuinfo") {
        Ok(text) => {
            let n = text.lines().filter(|l| l.starts_with("processor")).count();
            if n > 0 {
                Ok(Value::Number(n as f64))
            } else {
                Err("/proc/cpuinfo lists no processor".to_string())
            }
        }
        Err(e) if host.kind() == SourceKind::Live => std::thread::available_parallelism()
            .map(|n| Value::Number(n.get() as f64))
            .map_err(|_| format!("/proc/cpuinfo: {e}")),
        Err(e) => Err(format!("/proc/cpuinfo: {e}")),
    };
    facts.facts.insert("cpu_count".into(), cpus);

    // Kernel release: /proc/sys/kernel/osrelease, else the `kernel.osrelease`
    // line of the snapshot's `sysctl -a` listing, else field 3 of `uname -a`.
    let release = host
        .read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .or_else(|e| {
            let layout = host.layout().ok_or_else(|| e.clone())?;
            let from_listing = layout.sysctl_listing().iter().find_map(|p| {
                let t = host.read_to_string(p).ok()?;
                // one key: scan lines instead of parsing the whole capture
                // (the sysctl reader parses it fully once)
                t.lines().find_map(|l| {
                    let (k, v) = l.split_once(" = ")?;
                    (k.starts_with("kernel")
                        && parse::sysctl::normalize_key(k) == "kernel.osrelease")
                        .then(|| v.trim().to_string())
                })
            });
            from_listing
                .or_else(|| {
                    layout.uname().iter().find_map(|p| {
                        let t = host.read_to_string(p).ok()?;
                        uname_release(t.lines().next()?)
                    })
                })
                .ok_or(e)
        });
    match release {
        Ok(r) if !r.is_empty() => {
            facts.kernel = KernelVersion::parse(&r);
            facts
                .facts
                .insert("kernel_release".into(), Ok(Value::Str(r)));
        }
        Ok(_) => {
            facts.facts.insert(
                "kernel_release".into(),
                Err("kernel release is empty".into()),
            );
        }
        Err(e) => {
            facts.facts.insert(
                "kernel_release".into(),
                Err(format!("/proc/sys/kernel/osrelease: {e}")),
            );
        }
    }

    // OS identity (os-release(5): /etc/os-release, else /usr/lib/os-release; never merged)
    let os = host
        .read_to_string("/etc/os-release")
        .or_else(|_| host.read_to_string("/usr/lib/os-release"));
    match os {
        Ok(text) => {
            let kv = parse_os_release(&text);
            for (k, fact) in [
                ("ID", "os_id"),
                ("VERSION_ID", "os_version"),
                ("PRETTY_NAME", "os_name"),
            ] {
                if let Some((_, v)) = kv.iter().rev().find(|(kk, _)| kk == k) {
                    facts.facts.insert(fact.into(), Ok(Value::Str(v.clone())));
                }
            }
            if let Some((_, v)) = kv.iter().rev().find(|(k, _)| k == "ID_LIKE") {
                facts
                    .facts
                    .insert("os_like".into(), Ok(Value::Str(v.clone())));
            }
        }
        Err(e) => {
            facts
                .facts
                .insert("os_id".into(), Err(format!("/etc/os-release: {e}")));
        }
    }
    facts
        .facts
        .insert("hostname".into(), Ok(Value::Str(host.name().to_string())));
    if let Some(cut) = host.name_cut() {
        facts.issues.push(name_cut_issue(host.name(), cut));
    }

    // Paths asked about by policies; a snapshot proves an absence only by
    // listing the path in snapshot.json `absent` (what `snapshot` looked for
    // and did not find).
    let declared = if needs.paths.is_empty() {
        BTreeSet::new()
    } else {
        declared_absent(host)
    };
    for p in &needs.paths {
        match host.kind_of(p) {
            Ok(_) => {
                facts.existing_paths.insert(p.clone());
            }
            Err(ReadError::NotFound) if declared.contains(&crate::host::lexical(p)) => {
                facts
                    .missing_paths
                    .insert(p.clone(), super::presence::SNAPSHOT_ABSENT.to_string());
            }
            Err(e) => {
                facts.missing_paths.insert(p.clone(), e.to_string());
            }
        }
    }
}

/// Host paths a snapshot's `snapshot.json` lists as `absent` (none on a
/// live host, or without the list).
pub(crate) fn declared_absent(host: &Host) -> BTreeSet<String> {
    if host.kind() != SourceKind::Snapshot {
        return BTreeSet::new();
    }
    let Ok(text) = host.read_to_string("/snapshot.json") else {
        return BTreeSet::new();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return BTreeSet::new();
    };
    v.get("absent")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|p| p.as_str())
                .filter(|p| p.starts_with('/'))
                .map(crate::host::lexical)
                .collect()
        })
        .unwrap_or_default()
}

/// Gather sizes of `paths` (live walk or `captures/du.txt`).
pub fn gather_dir_sizes(
    host: &Host,
    paths: &std::collections::BTreeSet<String>,
    facts: &mut Facts,
) {
    if let Some(Layout::Sosreport) = host.layout() {
        return sos_dir_sizes(host, paths, facts);
    }
    match host.kind() {
        SourceKind::Snapshot => {
            let captured = match host.capture(DU.name) {
                Ok(text) => parse_du(&text, facts),
                Err(e) => {
                    for p in paths {
                        facts
                            .dir_sizes
                            .insert(p.clone(), Err(format!("captures/{}: {e}", DU.name)));
                    }
                    return;
                }
            };
            for p in paths {
                let want = p.trim_end_matches('/');
                let v = captured
                    .iter()
                    .find(|(path, _, _)| path.trim_end_matches('/') == want)
                    .map(|(_, b, line)| {
                        facts
                            .dir_size_evidence
                            .insert(p.clone(), Evidence::line(DU.path, *line));
                        Ok(*b)
                    })
                    .unwrap_or_else(|| Err(format!("captures/{} has no line for {p}", DU.name)));
                facts.dir_sizes.insert(p.clone(), v);
            }
        }
        SourceKind::Live => {
            for p in paths {
                let v = match host.dir_size(p) {
                    Ok(s) if s.unreadable.is_empty() => Ok(s.bytes),
                    Ok(s) => Err(format!(
                        "{} could not be read in full ({} unreadable, e.g. {}); run as a user that can read it",
                        p,
                        s.unreadable.len(),
                        s.unreadable[0]
                    )),
                    Err(e) => Err(format!("{p}: {e}")),
                };
                facts.dir_sizes.insert(p.clone(), v);
            }
        }
    }
}

/// Most `du` capture files of a sosreport read.
const MAX_SOS_DU_FILES: usize = 64;

/// Directory sizes from a sosreport's `du` captures: every
/// `sos_commands/PLUGIN/du_*` file whose flags give a known unit (plain
/// `du -s`: KiB of disk usage, so sizes are `KiB * 1024`, not apparent
/// bytes). A path with its own line takes it; a path whose entries were
/// listed (`du -s /var/lib/mysql/*`, sos's mysql plugin, has no line for
/// `/var/lib/mysql` itself) is the sum of its entries' lines.
fn sos_dir_sizes(host: &Host, paths: &std::collections::BTreeSet<String>, facts: &mut Facts) {
    let DuSource::SosCommands(root) = Layout::Sosreport.du_source() else {
        return;
    };
    // (path, bytes, file, line)
    let mut lines: Vec<(String, u64, String, usize)> = Vec::new();
    let mut files = 0usize;
    for plugin in host.read_dir(root).unwrap_or_default() {
        if plugin.kind != Some(EntryKind::Dir) {
            continue;
        }
        let dir = format!("{root}/{}", plugin.name);
        for f in host.read_dir(&dir).unwrap_or_default() {
            let Some(unit) = du_unit(&f.name) else {
                continue;
            };
            if f.kind != Some(EntryKind::File) || files >= MAX_SOS_DU_FILES {
                continue;
            }
            files += 1;
            let path = format!("{dir}/{}", f.name);
            let text = match host.read_to_string(&path) {
                Ok(t) => t,
                Err(e) => {
                    facts.issues.push(FileIssue::unreadable("du", &path, &e));
                    continue;
                }
            };
            for (n, line) in parse::numbered_lines(&text) {
                let parsed = line.split_once('\t').and_then(|(b, p)| {
                    Some((b.trim().parse::<u64>().ok()?, p.trim_end_matches('\r')))
                });
                match parsed {
                    Some((b, p)) if p.starts_with('/') => lines.push((
                        super::storage::normalize_point(p),
                        b.saturating_mul(unit),
                        path.clone(),
                        n,
                    )),
                    // du's own complaints (`du: cannot access ...`) are data, not host defects
                    _ if line.trim().is_empty() => {}
                    _ => facts.issues.push(
                        FileIssue::problem(
                            "du",
                            &path,
                            Some(n),
                            "not a `SIZE<TAB>/path` line as `du` prints it; ignored",
                        )
                        .with_level(IssueLevel::Note),
                    ),
                }
            }
        }
    }
    for p in paths {
        let want = super::storage::normalize_point(p);
        if let Some((_, b, file, line)) = lines.iter().find(|(path, ..)| *path == want) {
            facts
                .dir_size_evidence
                .insert(p.clone(), Evidence::line(file.clone(), *line));
            facts.dir_sizes.insert(p.clone(), Ok(*b));
            continue;
        }
        let children: Vec<&(String, u64, String, usize)> = lines
            .iter()
            .filter(|(path, ..)| {
                path.rsplit_once('/')
                    .is_some_and(|(parent, _)| parent == want || (parent.is_empty() && want == "/"))
            })
            .collect();
        if let Some(first) = children.first() {
            let sum = children.iter().fold(0u64, |a, c| a.saturating_add(c.1));
            facts
                .dir_size_evidence
                .insert(p.clone(), Evidence::file(first.2.clone()));
            facts.dir_sizes.insert(p.clone(), Ok(sum));
            continue;
        }
        facts.dir_sizes.insert(
            p.clone(),
            Err(format!(
                "the sosreport has no `du` line for {p} (sos's mysql plugin writes sos_commands/mysql/{} for the default datadir)",
                layout::sos_mangle("du -s /var/lib/mysql/*")
            )),
        );
    }
}

/// Parse `du -sb PATH` lines (`bytes<TAB>path`), with their line numbers.
fn parse_du(text: &str, facts: &mut Facts) -> Vec<(String, u64, usize)> {
    let mut out = Vec::new();
    let mut issues = crate::facts::IssueCollector::default();
    for (n, line) in parse::numbered_lines(text) {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = line
            .split_once('\t')
            .or_else(|| line.trim().split_once(char::is_whitespace))
            .and_then(|(b, p)| Some((b.trim().parse::<u64>().ok()?, p.trim().to_string())));
        match parsed {
            Some((b, p)) if p.starts_with('/') => out.push((p, b, n)),
            _ => issues.push(FileIssue {
                path: DU.path.into(),
                line: Some(n),
                column: None,
                message: "expected `BYTES<TAB>/path` as `du -sb` prints it".into(),
                source: "du".into(),
                level: crate::facts::IssueLevel::Problem,
                read_error: None,
            }),
        }
    }
    facts.issues.extend(issues.into_vec());
    out
}

/// The kernel release in a `uname -a` line (`Linux HOST RELEASE #1 SMP ...`).
pub fn uname_release(line: &str) -> Option<String> {
    let mut f = line.split_whitespace();
    let sys = f.next()?;
    if sys != "Linux" {
        return None;
    }
    let _host = f.next()?;
    let release = f.next()?;
    KernelVersion::parse(release).map(|_| release.to_string())
}

/// Parse os-release(5) `KEY=value` lines (quotes and backslash escapes).
pub fn parse_os_release(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let v = v.trim();
        let unq = if v.len() >= 2
            && ((v.starts_with('"') && v.ends_with('"'))
                || (v.starts_with('\'') && v.ends_with('\'')))
        {
            let inner = &v[1..v.len() - 1];
            let mut s = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        s.push(n);
                    }
                } else {
                    s.push(c);
                }
            }
            s
        } else {
            v.to_string()
        };
        out.push((k.trim().to_string(), unq));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_release_quotes() {
        let kv = parse_os_release(
            "ID=debian\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n# c\nX='a\\\"b'\n",
        );
        assert_eq!(kv[1].1, "Debian GNU/Linux 12 (bookworm)");
        assert_eq!(kv[2].1, "a\"b");
    }
}
