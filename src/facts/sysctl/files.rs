//! The persisted configuration: which sysctl.d files and `/etc/sysctl.conf`
//! each tool reads, in the order it applies them (systemd-sysctl at boot,
//! procps `sysctl --system`), with the names a higher directory hides, and
//! each file read and parsed once ([`persisted_files`]). Decides which
//! files are read, not which line wins (`precedence`).

use std::collections::BTreeMap;

use crate::facts::{Facts, FileIssue};
use crate::host::{EntryKind, Host, ReadError};
use crate::parse::sysctl::ConfLine;
use crate::value::Value;

/// sysctl.d directories in systemd's priority order (highest first).
pub const SYSCTL_DIRS: [&str; 5] = [
    "/etc/sysctl.d",
    "/run/sysctl.d",
    "/usr/local/lib/sysctl.d",
    "/usr/lib/sysctl.d",
    "/lib/sysctl.d",
];

/// The parsed files systemd-sysctl and procps `sysctl --system` read, each
/// list in the order the tool applies them. Each file is read and parsed
/// once however many models use it.
pub(super) fn persisted_files(host: &Host, facts: &mut Facts) -> (ReadFiles, ReadFiles) {
    let mut conf = ConfCache::default();
    // Both tools read the same directories: listed once, picked twice.
    let listings = sysctl_dir_listings(host);
    let mut sd_files = conf_files(host, &listings, Tool::Systemd, &mut facts.issues);
    // RHEL/CentOS 7's systemd 219 carries a patch that reads /etc/sysctl.conf
    // directly after the sysctl.d files (so it wins, as under procps).
    if reads_sysctl_conf_directly(facts)
        && matches!(host.kind_of("/etc/sysctl.conf"), Ok(EntryKind::File))
    {
        sd_files.push("/etc/sysctl.conf".to_string());
    }
    let mut pp_files = conf_files(host, &listings, Tool::Procps, &mut Vec::new());
    // procps `sysctl --system`: /etc/sysctl.conf last, if a regular file.
    match host.kind_of("/etc/sysctl.conf") {
        Ok(EntryKind::File) => pp_files.push("/etc/sysctl.conf".to_string()),
        Ok(_) => facts.issues.push(FileIssue::problem(
            "sysctl",
            "/etc/sysctl.conf",
            None,
            "is not a regular file; procps `sysctl --system` cannot read it",
        )),
        Err(ReadError::NotFound) => {}
        Err(e) => facts
            .issues
            .push(FileIssue::unreadable("sysctl", "/etc/sysctl.conf", &e)),
    }
    for f in sd_files.iter().chain(pp_files.iter()) {
        conf.load(host, facts, f);
    }
    let parsed = conf.files(&sd_files, Tool::Systemd);
    let procps_files = conf.files(&pp_files, Tool::Procps);
    (parsed, procps_files)
}

/// The files a shell loop `for i in PATTERN...; do [ -e "$i" ] && sysctl
/// -p "$i"; done` applies, in its order: each `DIR/*.conf` expanded as the
/// shell does (names ending `.conf`, no hidden name, byte order), each
/// other pattern a literal path; a file is applied wherever it is, so one
/// name in two directories is applied twice (OpenRC's sysctl service as
/// Alpine patches it, [`crate::facts::init::BootSysctl::ScriptFiles`]).
pub(super) fn script_files(host: &Host, patterns: &[String]) -> ReadFiles {
    let mut paths: Vec<String> = Vec::new();
    for pat in patterns {
        match pat.strip_suffix("/*.conf") {
            Some(dir) => {
                let Ok(mut entries) = host.read_dir(dir) else {
                    continue;
                };
                entries.sort_by(|a, b| a.raw_name.cmp(&b.raw_name));
                for e in entries {
                    if e.name.ends_with(".conf")
                        && !e.name.starts_with('.')
                        && e.kind == Some(EntryKind::File)
                    {
                        paths.push(format!("{dir}/{}", e.name));
                    }
                }
            }
            None if matches!(host.kind_of(pat), Ok(EntryKind::File)) => paths.push(pat.clone()),
            None => {}
        }
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let text = host.read_to_string(&p).ok()?;
            // parse issues were reported when the tools' own lists were read
            let (lines, _) = crate::parse::sysctl::parse_conf(&text);
            Some((p, std::rc::Rc::new(lines)))
        })
        .collect()
}

/// Whether this host's systemd-sysctl reads /etc/sysctl.conf itself, last:
/// RHEL 7 and its rebuilds (systemd 219 with "sysctl: bring back /etc/sysctl.conf").
fn reads_sysctl_conf_directly(facts: &Facts) -> bool {
    let get = |k: &str| match facts.facts.get(k) {
        Some(Ok(Value::Str(s))) => s.to_ascii_lowercase(),
        _ => String::new(),
    };
    let id = get("os_id");
    let like = get("os_like");
    let rhel_family = ["rhel", "centos", "ol", "scientific", "cloudlinux"].contains(&id.as_str())
        || like.split_whitespace().any(|w| w == "rhel");
    rhel_family && get("os_version").split('.').next() == Some("7")
}

/// Which tool's reading rules a file list or a model follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    /// systemd-sysctl (the boot): `conf_files_list_strv()` in src/basic/conf-files.c
    /// and `parse_file()`/`apply_all()` in src/sysctl/sysctl.c.
    Systemd,
    /// procps `sysctl --system`: `PreloadSystem()`, `Preload()` and
    /// `write_setting_list()` in procps-ng src/sysctl.c.
    Procps,
}

/// Parsed configuration files by host path, each read and parsed once.
#[derive(Default)]
struct ConfCache {
    /// Path -> (every line, the lines systemd-sysctl reads).
    files: std::collections::HashMap<String, (Lines, Lines)>,
}

/// Parsed lines of one file, shared by the models.
pub(super) type Lines = std::rc::Rc<Vec<ConfLine>>;

/// The files a tool reads, in the order it applies them, with their lines.
pub(super) type ReadFiles = Vec<(String, Lines)>;

impl ConfCache {
    /// Read and parse `path` unless already done (the lists of
    /// [`conf_files`] hold only regular files).
    fn load(&mut self, host: &Host, facts: &mut Facts, path: &str) {
        if self.files.contains_key(path) {
            return;
        }
        // the lists hold only entries already seen to be files: no second stat
        let parsed = match host.read_to_string(path) {
            Ok(text) => {
                let f = crate::parse::sysctl::parse_conf_file(&text);
                for i in &f.issues {
                    facts.issues.push(FileIssue::from_parse("sysctl", path, i));
                }
                f
            }
            Err(e) => {
                facts.issues.push(FileIssue::unreadable("sysctl", path, &e));
                Default::default()
            }
        };
        let all: Lines = std::rc::Rc::new(parsed.lines);
        let systemd = match parsed.systemd_stops_at {
            Some(stop) => {
                std::rc::Rc::new(all.iter().filter(|l| l.line() < stop).cloned().collect())
            }
            None => all.clone(),
        };
        self.files.insert(path.to_string(), (all, systemd));
    }

    /// The parsed files for a list of paths, in that order, as `tool` reads them.
    fn files(&self, paths: &[String], tool: Tool) -> Vec<(String, Lines)> {
        paths
            .iter()
            .map(|p| {
                let lines = match (self.files.get(p), tool) {
                    (Some((_, sd)), Tool::Systemd) => sd.clone(),
                    (Some((all, _)), Tool::Procps) => all.clone(),
                    (None, _) => Lines::default(),
                };
                (p.clone(), lines)
            })
            .collect()
    }
}

/// The files a tool reads, in application order: `*.conf` from the
/// directories; a name taken by a higher directory hides the same name below,
/// whatever it is (systemd does not stat the entry: a dangling link or a link
/// to `/dev/null`, absolute or relative, hides the vendor file and reads as
/// nothing; procps does the same by name); sorted by basename in byte order.
/// systemd skips hidden names (`.60-x.conf`, `hidden_or_backup_file()`),
/// procps reads them. Entries that are not readable files are left out of the
/// list after they have hidden their name.
fn conf_files(
    host: &Host,
    listings: &[Listing],
    tool: Tool,
    issues: &mut Vec<FileIssue>,
) -> Vec<String> {
    conf_entries(host, listings, tool, issues)
        .into_iter()
        .filter_map(|(path, readable)| readable.then_some(path))
        .collect()
}

/// The entries systemd-sysctl picks from the sysctl.d directories, one per
/// basename, in the order it applies them, including those that read as
/// nothing (masks, dangling links): what `systemd-analyze cat-config
/// sysctl.d` lists. For differential tests and `explain`.
pub fn systemd_conf_entries(host: &Host) -> Vec<String> {
    conf_entries(
        host,
        &sysctl_dir_listings(host),
        Tool::Systemd,
        &mut Vec::new(),
    )
    .into_iter()
    .map(|(p, _)| p)
    .collect()
}

/// One sysctl.d directory and its listing.
type Listing = (&'static str, Result<Vec<crate::host::DirEntry>, ReadError>);

/// The sysctl.d directories in priority order with their listings, each
/// directory once: systemd resolves the directory list and drops duplicates
/// (`path_strv_resolve_uniq`): /lib is /usr/lib on merged-/usr systems.
/// Both tools' picks are made from one listing.
fn sysctl_dir_listings(host: &Host) -> Vec<Listing> {
    let mut seen_dirs: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for dir in SYSCTL_DIRS {
        let resolved = match host.resolve(dir) {
            Ok(r) => r,
            Err(_) => dir.to_string(),
        };
        if seen_dirs.contains(&resolved) {
            continue;
        }
        seen_dirs.push(resolved);
        out.push((dir, host.read_dir(dir)));
    }
    out
}

/// As [`conf_files`], with every entry that owns a name and whether it is a
/// readable file.
fn conf_entries(
    host: &Host,
    listings: &[Listing],
    tool: Tool,
    issues: &mut Vec<FileIssue>,
) -> Vec<(String, bool)> {
    // basename -> (entry that owns the name, whether it is a readable file)
    let mut by_name: BTreeMap<Vec<u8>, (String, bool)> = BTreeMap::new();
    for (dir, listing) in listings {
        let dir = *dir;
        let entries = match listing {
            Ok(e) => e,
            Err(ReadError::NotFound) => continue,
            Err(ReadError::WrongKind(_)) => continue,
            Err(e) => {
                if tool == Tool::Systemd {
                    issues.push(FileIssue::unreadable("sysctl", dir, e));
                }
                continue;
            }
        };
        for e in entries {
            let hidden = e.name.starts_with('.');
            let suffix_ok = match tool {
                // endswith(".conf") on a name that is not hidden
                Tool::Systemd => e.name.ends_with(".conf") && !hidden,
                // strlen >= 5 and the last five bytes are ".conf"
                Tool::Procps => e.name.ends_with(".conf"),
            };
            if !suffix_ok {
                if tool == Tool::Systemd && hidden && e.name.ends_with(".conf") {
                    issues.push(
                        FileIssue::problem(
                            "sysctl",
                            &format!("{dir}/{}", e.name),
                            None,
                            "is a hidden file: systemd-sysctl ignores it at boot, procps `sysctl --system` reads it",
                        )
                        .with_level(crate::facts::IssueLevel::Note),
                    );
                }
                continue;
            }
            let key = std::os::unix::ffi::OsStrExt::as_bytes(e.raw_name.as_os_str()).to_vec(); // byte order, as systemd
            let path = format!("{dir}/{}", e.name);
            if by_name.contains_key(&key) {
                continue; // a higher-priority directory already has this name
            }
            let readable = if is_dev_null(host, dir, e) {
                false // a mask: reads as empty
            } else {
                match e.kind {
                    Some(EntryKind::File) => true,
                    Some(EntryKind::Dir) | Some(EntryKind::Other) => {
                        if tool == Tool::Systemd {
                            issues.push(FileIssue::problem(
                                "sysctl",
                                &path,
                                None,
                                "is not a regular file; systemd-sysctl cannot read it (and it hides any file of this name in a lower-priority directory)",
                            ));
                        }
                        false
                    }
                    None => {
                        if tool == Tool::Systemd {
                            issues.push(
                                FileIssue::problem(
                                    "sysctl",
                                    &path,
                                    None,
                                    "is a symlink to a file that does not exist: systemd-sysctl skips it, and it hides any file of this name in a lower-priority directory",
                                )
                                .with_level(crate::facts::IssueLevel::Note),
                            );
                        }
                        false
                    }
                }
            };
            by_name.insert(key, (path, readable));
        }
    }
    by_name.into_values().collect()
}

/// Whether a directory entry is a mask: a symlink to `/dev/null`, written
/// absolute or relative (`../../dev/null`), whether or not the snapshot holds
/// a `/dev/null`. On a live host the link resolves to the character device,
/// which must not be reported as "not a regular file".
fn is_dev_null(host: &Host, dir: &str, e: &crate::host::DirEntry) -> bool {
    if !e.is_symlink {
        return false;
    }
    if e.target.as_deref() == Some("/dev/null") {
        return true;
    }
    match host.read_link(&format!("{dir}/{}", e.name)) {
        Some(t) => crate::host::lexical(&crate::host::join_host(dir, &t)) == "/dev/null",
        None => false,
    }
}
