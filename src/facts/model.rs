//! The facts data model: settings namespaces with provenance ([`Evidence`],
//! [`Setting`], [`Entry`], [`Namespace`]), host facts ([`Facts`]), file
//! issues, the rule domains a host was found to have ([`Domain`], [`Detection`])
//! and what the policies [`Needs`] gathered. Plain data: no I/O and
//! no gathering (that is `facts/mod.rs` and its readers).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::host::{Host, ReadError, SourceKind};
use crate::parse::Issue;
use crate::value::Value;

/// Where a value was set on the host: a host path and, for files, a line.
/// `path` is the file an admin edits; when it was read through a symlink
/// (`/etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf`), `via` names the path
/// the reader opened, and the evidence reads `/etc/sysctl.conf:2 (via
/// /etc/sysctl.d/99-sysctl.conf)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct Evidence {
    /// Host path of the real file, e.g. `/etc/sysctl.d/99-tune.conf` or `/proc/sys/net/ipv4/tcp_tw_reuse`.
    pub path: String,
    /// 1-based line number, when the value comes from a line of a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The path it was read through, when that is a symlink to `path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

impl Evidence {
    /// Evidence pointing at a whole file or live value.
    pub fn file(path: impl Into<String>) -> Evidence {
        Evidence {
            path: path.into(),
            line: None,
            via: None,
        }
    }
    /// Evidence pointing at a line of a file.
    pub fn line(path: impl Into<String>, line: usize) -> Evidence {
        Evidence {
            path: path.into(),
            line: Some(line),
            via: None,
        }
    }
    /// `path` and line, without the link it was read through.
    pub fn location(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{}", self.path, l),
            None => self.path.clone(),
        }
    }
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.location())?;
        if let Some(v) = &self.via {
            write!(f, " (via {v})")?;
        }
        Ok(())
    }
}

/// One known setting: its typed value, the raw text it was read from, and where
/// it was set. `evidence` lists the winning location first, then the earlier
/// (overridden) assignments, most recent first (the one the winner replaced
/// comes second); readers keep a bounded number of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    /// Typed value.
    pub value: Value,
    /// The text as written on the host (redacted for secrets).
    pub raw: String,
    /// Winning location first, then overridden ones, most recent first.
    pub evidence: Vec<Evidence>,
    /// Extra context for explanations ("procps `sysctl --system` would apply 1 from ...").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Setting {
    /// A setting with one piece of evidence.
    pub fn new(value: Value, raw: impl Into<String>, evidence: Evidence) -> Setting {
        Setting {
            value,
            raw: raw.into(),
            evidence: vec![evidence],
            note: None,
        }
    }
}

/// The state of one key in a namespace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Entry {
    /// The key has a value.
    Set(Setting),
    /// The key exists but its value could not be read (permission denied, EIO,
    /// write-only): rules on it are `unknown` with this reason.
    Unreadable {
        /// Why it could not be read.
        reason: String,
        /// Where we tried.
        evidence: Vec<Evidence>,
    },
}

/// A namespace of settings (`sysctl`, `sysctl_boot`, `mycnf`, `mysql`,
/// `localconfig`, `fstab`, `mount`, `ext4`, ...), keyed by canonical name.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Namespace {
    /// Keys and their state.
    pub entries: BTreeMap<String, Entry>,
    /// When the whole source is unavailable (file missing, no capture), the reason:
    /// every lookup is then `unknown` rather than absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// What a missing key means, for explanations ("the running kernel has no such key").
    pub absent_means: String,
    /// How keys written in policies map to canonical keys (sysctl slash/dot, option dashes).
    #[serde(skip)]
    pub canonicalize: Option<fn(&str) -> String>,
    /// What decides the `unknown`s this namespace causes when its data was
    /// never read rather than refused (a live host's running MySQL server,
    /// which only `driftaudit snapshot --mysql` asks): the fix of those
    /// findings instead of [`Facts::unreadable_fix`], which speaks of
    /// privileges and confinement.
    #[serde(skip)]
    pub unknown_fix: Option<String>,
    /// Keys whose value is unknown here but known to lie in a range (the
    /// smallest and largest value the server's documentation allows): a
    /// rule reading one gets a range the evaluator can still decide on
    /// (`Missing::Bounded`), instead of a bare unknown.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub bounds: BTreeMap<String, (Value, Value)>,
}

impl Namespace {
    /// An empty namespace whose missing keys mean `absent_means`.
    pub fn new(absent_means: impl Into<String>) -> Namespace {
        Namespace {
            absent_means: absent_means.into(),
            ..Default::default()
        }
    }

    /// An empty namespace of the catalogue's row `name`: its missing keys
    /// mean what that row says ([`crate::catalogue::NamespaceSpec::absent`]),
    /// so the text is written once.
    pub fn of(name: &str) -> Namespace {
        let spec = crate::catalogue::namespace(name)
            .unwrap_or_else(|| panic!("`{name}` is not a namespace of the catalogue"));
        Namespace::new(spec.absent)
    }

    /// A namespace whose source could not be read at all.
    pub fn unavailable(reason: impl Into<String>) -> Namespace {
        Namespace {
            unavailable: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Canonical form of a key in this namespace.
    pub fn canonical(&self, key: &str) -> String {
        match self.canonicalize {
            Some(f) => f(key),
            None => key.to_string(),
        }
    }

    /// Look a key up (after canonicalisation).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(&self.canonical(key))
    }

    /// Set a key.
    pub fn set(&mut self, key: impl Into<String>, setting: Setting) {
        self.entries.insert(key.into(), Entry::Set(setting));
    }
}

/// A problem with a file on the host (a malformed line, an unreadable include,
/// a missing capture), reported as a finding of the built-in `driftaudit.input` rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, PartialOrd, Ord)]
pub struct FileIssue {
    /// Host path.
    pub path: String,
    /// Line, when the issue is about one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// Which reader reported it (`sysctl`, `mycnf`, `fstab`, ...).
    pub source: String,
    /// How serious it is; decides the finding's status.
    #[serde(skip_serializing_if = "IssueLevel::is_problem")]
    pub level: IssueLevel,
    /// Why the file could not be read, when that is the issue (set by
    /// [`FileIssue::unreadable`]; `None` for a problem with what it holds).
    /// `snapshot` lists these files as unreadable and `diff` as not
    /// compared, by this field rather than by the message's wording.
    #[serde(skip)]
    pub read_error: Option<String>,
}

/// Problems with host files as the readers find them, merged per file,
/// reader and level as [`crate::parse::Issues`] merges one parse's: problems
/// of one kind are one issue with the count, the first and last lines and a
/// sample, however many lines have them. A whole-file issue (no line) is
/// kept as it is.
#[derive(Debug, Default)]
pub struct IssueCollector {
    order: Vec<(String, String, IssueLevel)>,
    by_file: std::collections::HashMap<(String, String, IssueLevel), crate::parse::Issues>,
    whole: Vec<FileIssue>,
}

impl IssueCollector {
    /// Add one issue.
    pub fn push(&mut self, i: FileIssue) {
        let Some(line) = i.line else {
            self.whole.push(i);
            return;
        };
        let key = (i.path, i.source, i.level);
        let issue = Issue {
            line,
            column: i.column,
            message: i.message,
        };
        match self.by_file.get_mut(&key) {
            Some(is) => is.push(issue),
            None => {
                let mut is = crate::parse::Issues::new();
                is.push(issue);
                self.order.push(key.clone());
                self.by_file.insert(key, is);
            }
        }
    }

    /// The issues, in the order their files first came.
    pub fn into_vec(mut self) -> Vec<FileIssue> {
        let mut out = self.whole;
        for key in self.order {
            let Some(is) = self.by_file.remove(&key) else {
                continue;
            };
            let (path, source, level) = key;
            for i in is.into_vec() {
                out.push(FileIssue {
                    path: path.clone(),
                    line: Some(i.line),
                    column: i.column,
                    message: i.message,
                    source: source.clone(),
                    level,
                    read_error: None,
                });
            }
        }
        out
    }
}

impl Extend<FileIssue> for IssueCollector {
    fn extend<T: IntoIterator<Item = FileIssue>>(&mut self, iter: T) {
        for i in iter {
            self.push(i);
        }
    }
}

/// How a [`FileIssue`] is reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueLevel {
    /// Malformed input that the host's software skips or rejects: a `fail` finding.
    #[default]
    Problem,
    /// Data that could not be read or judged: an `unknown` finding.
    Unknown,
    /// Worth knowing, changes nothing (a missing optional include): a `skip` finding.
    Note,
}

impl IssueLevel {
    fn is_problem(&self) -> bool {
        *self == IssueLevel::Problem
    }
}

impl FileIssue {
    /// A file-level issue from a parse [`Issue`].
    pub fn from_parse(source: &str, path: &str, issue: &Issue) -> FileIssue {
        FileIssue {
            path: path.to_string(),
            line: Some(issue.line),
            column: issue.column,
            message: issue.message.clone(),
            source: source.to_string(),
            level: IssueLevel::Problem,
            read_error: None,
        }
    }

    /// A whole-file problem (unreadable, too large, not a regular file).
    pub fn unreadable(source: &str, path: &str, err: &ReadError) -> FileIssue {
        FileIssue {
            path: path.to_string(),
            line: None,
            column: None,
            message: format!("cannot read: {err}"),
            source: source.to_string(),
            level: IssueLevel::Unknown,
            read_error: Some(err.to_string()),
        }
    }

    /// A problem with a whole file or one line of it (a `fail` finding).
    pub fn problem(
        source: &str,
        path: &str,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> FileIssue {
        FileIssue {
            path: path.to_string(),
            line,
            column: None,
            message: message.into(),
            source: source.to_string(),
            level: IssueLevel::Problem,
            read_error: None,
        }
    }

    /// The same issue at another level.
    pub fn with_level(mut self, level: IssueLevel) -> FileIssue {
        self.level = level;
        self
    }
}

/// Parsed kernel release (`6.1.0-18-amd64` -> 6.1.0).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct KernelVersion {
    /// Numeric components (at least major and minor).
    pub parts: Vec<u64>,
    /// The full release string.
    pub release: String,
}

impl KernelVersion {
    /// Parse the leading `major.minor[.patch...]` of a release string.
    pub fn parse(release: &str) -> Option<KernelVersion> {
        let release = release.trim();
        let head: String = release
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let parts: Vec<u64> = head
            .split('.')
            .filter(|p| !p.is_empty())
            .map_while(|p| p.parse().ok())
            .collect();
        if parts.len() < 2 {
            return None;
        }
        Some(KernelVersion {
            parts,
            release: release.to_string(),
        })
    }

    /// Compare with a version given as numbers (missing parts are 0).
    pub fn cmp_parts(&self, other: &[u64]) -> std::cmp::Ordering {
        let n = self.parts.len().max(other.len());
        for i in 0..n {
            let a = self.parts.get(i).copied().unwrap_or(0);
            let b = other.get(i).copied().unwrap_or(0);
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => continue,
                o => return o,
            }
        }
        std::cmp::Ordering::Equal
    }
}

/// Everything known about one host. Built by [`super::gather`]; read by the engine.
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    /// Host name.
    pub host: String,
    /// Live or snapshot.
    pub source: SourceKind,
    /// A live host read by root: a refused read is then the host's
    /// confinement (a container, an LSM), not missing privileges, and the
    /// fix of an `unknown` finding says so ([`Facts::unreadable_fix`]).
    pub read_as_root: bool,
    /// Scalar facts: `mem_total` (bytes), `cpu_count`, `kernel_release`, `os_id`, ...
    /// A fact that could not be determined maps to `Err(reason)`.
    pub facts: BTreeMap<String, Result<Value, String>>,
    /// Parsed kernel release, if known.
    pub kernel: Option<KernelVersion>,
    /// Settings namespaces by name.
    pub namespaces: BTreeMap<String, Namespace>,
    /// Host paths that exist (those asked about by `applies: exists:` and by readers).
    pub existing_paths: BTreeSet<String>,
    /// Paths asked about that do not exist or cannot be read, with the reason.
    pub missing_paths: BTreeMap<String, String>,
    /// Directory sizes (`du -sb` style) by host path.
    pub dir_sizes: BTreeMap<String, Result<u64, String>>,
    /// Where each known directory size was read (a `du` capture and line);
    /// absent for a live walk, whose evidence is the directory itself.
    pub dir_size_evidence: BTreeMap<String, Evidence>,
    /// Problems in files read from the host.
    pub issues: Vec<FileIssue>,
    /// Which domains the host has, and from what ([`super::presence::detect`]).
    pub detections: Vec<Detection>,
    /// Host paths known to exist from other evidence than the path itself (a
    /// mount point, an fstab entry, a du line, a configured `datadir`), with
    /// that evidence; a path at or above one of them exists too.
    pub known_paths: BTreeMap<String, Evidence>,
    /// How the server read its option files (groups, files, every option
    /// line), for the resolver; `None` until the option-file reader ran.
    #[serde(skip)]
    pub option_files: Option<OptionFilesRead>,
    /// The same for Zimbra's own MariaDB and its option file (`mysql_mycnf`
    /// in localconfig.xml, else /opt/zimbra/conf/my.cnf); `None` when the
    /// Zimbra reader did not read one.
    #[serde(skip)]
    pub zimbra_option_files: Option<OptionFilesRead>,
    /// What shows a MySQL/MariaDB server besides its option files and
    /// runtime capture (an installed server package, a sosreport's `du` of
    /// the data directory or a running `mysqld`/`mariadbd`), for presence.
    #[serde(skip)]
    pub server_signs: Vec<String>,
    /// The default option files read with each of [`Needs::option_groups`],
    /// by those groups.
    #[serde(skip)]
    pub option_files_as: BTreeMap<Vec<String>, OptionFilesAs>,
    /// The installed server, when [`Needs::option_groups`] asked and no
    /// runtime capture names the running version.
    #[serde(skip)]
    pub installed_server: Option<InstalledServer>,
}

/// One option as the server receives it, in argv order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RawOption {
    /// `--name=value` or `--name` exactly as `my_print_defaults` prints it
    /// (value replaced by [`REDACTED`](crate::secret::REDACTED) for secrets).
    pub arg: String,
    /// Option name as written.
    pub name: String,
    /// Value as the server receives it (`None` for a bare option; redacted for secrets).
    pub value: Option<String>,
    /// Group the line was in, as written.
    pub group: String,
    /// File and line.
    pub evidence: Evidence,
}

/// The default option files (`/etc/my.cnf`, `/etc/mysql/my.cnf`) read as a
/// server of another release reads them: with that release's groups
/// (`[mariadb-10.11]`), one of [`Needs::option_groups`]. What the upgrade
/// rules judge.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptionFilesAs {
    /// Host paths read, in order (a file included twice appears twice).
    pub files_read: Vec<String>,
    /// Every option of those groups in the order the server receives them.
    pub argv: Vec<RawOption>,
    /// The options the files set, by normalised name (the keys of the
    /// `mycnf` namespace that read builds).
    pub set: BTreeSet<String>,
    /// Why that server would refuse to start because of the files; the
    /// options after that point are not in `argv`.
    pub fatal: Option<String>,
}

/// The MySQL/MariaDB server installed on the host and where that was read
/// (a package database or list, an upgrade-info file), looked up for
/// [`Needs::option_groups`] when no runtime capture names the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledServer {
    /// Major, minor, patch.
    pub parts: [u64; 3],
    /// MariaDB rather than MySQL/Percona.
    pub mariadb: bool,
    /// Where it was read, in words.
    pub from: String,
}

/// How the MySQL/MariaDB server reads its option files: the groups it reads,
/// the files in the order it read them, and every option line of those
/// groups with the namespace key it sets (after `loose-`, unique prefixes,
/// `skip-`/`enable-` and `-`/`_` are resolved). Kept by the option-file
/// reader so the resolver answers "every line that set X" without parsing
/// again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptionFilesRead {
    /// Groups the server reads, lowercase, in its order (`mysqld`, `server`, ...).
    pub groups: Vec<String>,
    /// Host paths read, in order (a file included twice appears twice).
    pub files_read: Vec<String>,
    /// Every option of those groups in the order the server receives them.
    pub options: Vec<OptionRead>,
    /// Why the server would refuse to start because of the files; options
    /// after that point are not in `options`.
    pub fatal: Option<String>,
}

/// One option line the server reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionRead {
    /// Namespace key it sets (`innodb_buffer_pool_size`).
    pub key: String,
    /// Option name as written (`loose-innodb-buffer-pool-size`).
    pub name: String,
    /// Value as written (`None` for a bare option; redacted for secrets).
    pub value: Option<String>,
    /// Group the line is in, as written.
    pub group: String,
    /// File and line.
    pub evidence: Evidence,
}

impl Facts {
    /// What to do about data the rules could not read, for the host this
    /// is: a snapshot lacks a capture; a live host read by another user
    /// lacks privileges; a live host read by root was refused by its
    /// confinement, which `run as root` would not change.
    pub fn unreadable_fix(&self) -> &'static str {
        match (self.source, self.read_as_root) {
            (SourceKind::Snapshot, _) => "Capture the data into the snapshot (`driftaudit snapshot` on the host as root, or the capture the explanation names) and audit again.",
            (SourceKind::Live, false) => "Make the data readable to driftaudit (run as root, or capture it into a snapshot) and audit again.",
            (SourceKind::Live, true) => "driftaudit already runs as root here: what refused the data is the host's confinement (a container without the capability or with a read-only /sys or /proc, or an LSM such as AppArmor or SELinux: see `dmesg` and the audit log). Audit from the host itself, or capture the data there into a snapshot, and audit again.",
        }
    }

    /// An empty fact set for a host.
    pub fn new(host: &Host) -> Facts {
        Facts {
            host: host.name().to_string(),
            source: host.kind(),
            read_as_root: host.kind() == SourceKind::Live && rustix::process::geteuid().is_root(),
            facts: BTreeMap::new(),
            kernel: None,
            namespaces: BTreeMap::new(),
            existing_paths: BTreeSet::new(),
            missing_paths: BTreeMap::new(),
            dir_sizes: BTreeMap::new(),
            dir_size_evidence: BTreeMap::new(),
            issues: Vec::new(),
            detections: Vec::new(),
            known_paths: BTreeMap::new(),
            option_files: None,
            zimbra_option_files: None,
            server_signs: Vec::new(),
            option_files_as: BTreeMap::new(),
            installed_server: None,
        }
    }

    /// The `mem_total` fact in bytes, if known.
    pub fn mem_total(&self) -> Option<f64> {
        self.facts
            .get("mem_total")
            .and_then(|v| v.as_ref().ok())
            .and_then(Value::as_f64)
    }
}

/// What the loaded policies need beyond the always-gathered facts: paths whose
/// existence is tested, sysctl keys and namespaces read, and directories
/// whose size is read. Plain data, planned from the compiled rules
/// (`engine::needs`) before any gathering.
#[derive(Debug, Clone, Default)]
pub struct Needs {
    /// Host paths tested with `applies: exists:` (a rule's, or a `for_each`
    /// item's `exists:` field).
    pub paths: BTreeSet<String>,
    /// sysctl keys (canonical dotted) read by any rule; the live namespace holds
    /// these plus every key the persisted configuration sets.
    pub sysctl_keys: BTreeSet<String>,
    /// sysctl key globs (`net.ipv4.conf.*.rp_filter`, a `for_each: { keys: }`):
    /// the live namespace also holds every key matching one.
    pub sysctl_globs: BTreeSet<String>,
    /// Namespaces referenced by any rule (others need not be gathered).
    pub namespaces: BTreeSet<String>,
    /// Directories whose size `du(...)` reads. A path that is the value of
    /// a setting or fact is resolved by [`crate::facts::gather`] once that
    /// value is gathered.
    pub dir_sizes: BTreeSet<Need>,
    /// Option groups the default option files are also read with, each as
    /// a server reading those groups reads them (an upgrade target's
    /// release: `[mysqld-8.0]`); with any, the installed server is looked
    /// up when no runtime capture names the running version.
    pub option_groups: BTreeSet<Vec<String>>,
}

/// A path the policies need, as the plan knows it before gathering.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Need {
    /// A path known from the policy (a literal or its parameters).
    Path(String),
    /// The path a setting holds (`localconfig.mysql_data_directory`):
    /// namespace and key as written.
    Setting {
        /// Namespace.
        ns: String,
        /// Key as the policy writes it (canonicalised when resolved).
        key: String,
    },
    /// The path a host fact holds (`mysql_datadir`).
    Fact(String),
}

impl Facts {
    /// The host path a [`Need`] names over the facts gathered so far: a
    /// setting or fact that is unset, unreadable or unknown names none
    /// (its rule is then `unknown` or skipped for that reason).
    pub fn resolve_need(&self, need: &Need) -> Option<String> {
        match need {
            Need::Path(p) => Some(p.clone()),
            Need::Setting { ns, key } => {
                let space = self.namespaces.get(ns)?;
                if space.unavailable.is_some() {
                    return None;
                }
                match space.entries.get(&space.canonical(key))? {
                    Entry::Set(s) => Some(s.value.to_plain()),
                    Entry::Unreadable { .. } => None,
                }
            }
            Need::Fact(name) => match self.facts.get(name)? {
                Ok(v) => Some(v.to_plain()),
                Err(_) => None,
            },
        }
    }
}

/// A domain of rules, for presence and coverage.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Domain {
    /// Kernel parameters.
    Sysctl,
    /// MySQL/MariaDB servers.
    Mysql,
    /// Zimbra Collaboration.
    Zimbra,
    /// Mounts, /etc/fstab, ext4 layout, disks.
    Storage,
}

impl Domain {
    /// Every domain, in report order.
    pub const ALL: [Domain; 4] = [
        Domain::Sysctl,
        Domain::Mysql,
        Domain::Zimbra,
        Domain::Storage,
    ];

    /// The name people use (`MySQL`, `Zimbra`).
    pub fn label(self) -> &'static str {
        match self {
            Domain::Sysctl => "sysctl",
            Domain::Mysql => "MySQL",
            Domain::Zimbra => "Zimbra",
            Domain::Storage => "storage",
        }
    }

    /// Lower-case id (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Sysctl => "sysctl",
            Domain::Mysql => "mysql",
            Domain::Zimbra => "zimbra",
            Domain::Storage => "storage",
        }
    }

    /// The fact that says whether the domain is present, if policies can use one.
    pub fn fact(self) -> Option<&'static str> {
        match self {
            Domain::Sysctl => None,
            Domain::Mysql => Some("mysql_installed"),
            Domain::Zimbra => Some("zimbra_installed"),
            Domain::Storage => Some("storage_detected"),
        }
    }

    /// The domain of a settings namespace or a reader (`mycnf`, `localconfig`, `fstab`).
    /// Namespaces and facts take theirs from their catalogue row.
    pub fn of_namespace(ns: &str) -> Option<Domain> {
        if let Some(d) = crate::catalogue::domain_of(ns) {
            return Domain::ALL.into_iter().find(|x| x.as_str() == d);
        }
        match ns {
            n if n.starts_with("sysctl") => Some(Domain::Sysctl),
            "mounts" => Some(Domain::Storage),
            _ => None,
        }
    }
}

/// Whether a domain was found on the host, and from what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Detection {
    /// The domain.
    pub domain: Domain,
    /// Found from at least one source.
    pub detected: bool,
    /// What showed it (host paths, with a line where one line is the proof), in
    /// the order they were looked at.
    pub sources: Vec<String>,
    /// What was looked for, when nothing was found.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub looked_for: String,
}

impl Detection {
    pub(super) fn new(domain: Domain, sources: Vec<String>, looked_for: &str) -> Detection {
        let mut uniq: Vec<String> = Vec::new();
        for s in sources {
            if !uniq.contains(&s) {
                uniq.push(s);
            }
        }
        let detected = !uniq.is_empty();
        Detection {
            domain,
            detected,
            sources: uniq,
            looked_for: if detected {
                String::new()
            } else {
                looked_for.to_string()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_versions_parse_and_compare() {
        let k = KernelVersion::parse("4.18.0-513.5.1.el8_9.x86_64").unwrap();
        assert_eq!(k.parts, [4, 18, 0]);
        assert_eq!(k.cmp_parts(&[4, 12]), std::cmp::Ordering::Greater);
        let k = KernelVersion::parse("6.10.0-rc3").unwrap();
        assert_eq!(k.cmp_parts(&[6, 10]), std::cmp::Ordering::Equal);
        assert!(KernelVersion::parse("garbage").is_none());
        assert_eq!(
            KernelVersion::parse("3.10").unwrap().cmp_parts(&[4, 12]),
            std::cmp::Ordering::Less
        );
    }

    /// Issue 30: as root in a container an EPERM on a block device said
    /// "run as root". The fix of an unreadable value now depends on who read
    /// what: a snapshot lacks a capture, root was refused by confinement.
    #[test]
    fn an_unreadable_value_says_what_would_decide_it_for_who_read_it() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean");
        let snap = Facts::new(&Host::snapshot(dir).unwrap());
        assert!(!snap.read_as_root);
        assert!(snap
            .unreadable_fix()
            .starts_with("Capture the data into the snapshot"));
        let mut live = Facts::new(&Host::live());
        live.read_as_root = false;
        assert!(live.unreadable_fix().contains("run as root"));
        live.read_as_root = true;
        let root = live.unreadable_fix();
        assert!(
            root.starts_with("driftaudit already runs as root"),
            "{root}"
        );
        assert!(
            root.contains("container") && root.contains("AppArmor or SELinux"),
            "{root}"
        );
        assert!(!root.contains("run as root,"), "{root}");
    }
}
