//! `driftaudit snapshot`: capture the live host into the documented snapshot
//! layout (docs/snapshot-format.md). Owns what is copied (exactly the files the
//! loaded policies' readers read, found with a recording [`Host`], plus the
//! fixed captures), redaction of secrets in copied files, determinism and the
//! atomic write. Reads the host only through [`Host`] (and runs `tune2fs -l`,
//! `rpm -qa` and, on request, the `mysql` client, read-only; capture paths
//! from [`crate::catalogue`]); never changes the host.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, RenameFlags};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::catalogue::{DU, INSTALLED_RPMS, MYSQL_VARIABLES, SYSCTL_A, TUNE2FS};
use crate::engine;
use crate::facts::FileIssue;
use crate::host::{io_message, lexical, unescape_name, EntryKind, Host, ReadLog};
use crate::parse::sysctl::swap_dot_slash;
use crate::policy::PolicySet;
use crate::secret::{self, REDACTED};

/// `mysql` client arguments for `captures/mysql-variables.tsv`, after
/// `--defaults-file=/dev/stdin` (see [`mysql_client_defaults`]): batch TSV,
/// escaped (`\t`, `\n`, `\\`), without column names.
pub const MYSQL_CAPTURE_ARGS: [&str; 10] = [
    "--batch",
    "--skip-column-names",
    "--skip-table",
    "--skip-vertical",
    "--skip-html",
    "--skip-xml",
    "--skip-raw",
    "--skip-auto-vertical-output",
    "-e",
    "SHOW GLOBAL VARIABLES",
];

/// Option groups the `mysql`/`mariadb` client reads (MariaDB 10.11's
/// `load_default_groups`; MySQL's client reads `mysql` and `client`).
pub const MYSQL_CLIENT_GROUPS: [&str; 5] = [
    "mysql",
    "mariadb-client",
    "client",
    "client-server",
    "client-mariadb",
];

/// Client options that say how to connect and authenticate: the only ones
/// taken from the user's option files for the capture. Display and
/// behaviour options (`table`, `vertical`, `pager`, `tee`, which opens its
/// file as soon as it is read, `verbose`, which cannot be switched off
/// again, `init-command`, which would run SQL, `safe-updates`, ...) are not.
const MYSQL_CONNECTION_OPTIONS: [&str; 33] = [
    "user",
    "password",
    "host",
    "port",
    "socket",
    "protocol",
    "ssl",
    "ssl_ca",
    "ssl_capath",
    "ssl_cert",
    "ssl_cipher",
    "ssl_key",
    "ssl_crl",
    "ssl_crlpath",
    "ssl_verify_server_cert",
    "ssl_mode",
    "ssl_fips_mode",
    "tls_version",
    "tls_ciphersuites",
    "default_auth",
    "plugin_dir",
    "enable_cleartext_plugin",
    "connect_timeout",
    "compress",
    "compression_algorithms",
    "zstd_compression_level",
    "secure_auth",
    "server_public_key_path",
    "get_server_public_key",
    "character_sets_dir",
    "default_character_set",
    "bind_address",
    "connect_expired_password",
];

/// The connection options of the user's client option files (as
/// `my_print_defaults` resolves them: the same files, includes and groups
/// as the client), written as an option file of one `[client]` group for
/// the client to read from stdin. `None` when `my_print_defaults` cannot
/// run (the client then runs with `--no-defaults`).
pub fn mysql_client_defaults() -> Option<String> {
    let tool = find_program("my_print_defaults")?;
    let mut out = run_capped(Command::new(&tool).args(MYSQL_CLIENT_GROUPS)).ok()?;
    // MySQL's my_print_defaults masks passwords unless `--show` (MariaDB's
    // has no such option and never masks).
    if out.lines().any(|l| {
        l.split_once('=').is_some_and(|(n, v)| {
            n.contains("pass") && !v.is_empty() && v.bytes().all(|b| b == b'*')
        })
    }) {
        out = run_capped(Command::new(&tool).arg("--show").args(MYSQL_CLIENT_GROUPS)).ok()?;
    }
    Some(client_defaults_file(&out))
}

/// The `[client]` option file for [`mysql_client_defaults`] from
/// `my_print_defaults` output (`--name=value` per line, values as the
/// client receives them): connection options only, in order (the last
/// one wins, as in the user's files), each value double-quoted with the
/// escapes mysys reads back (`\\`, `\"`, `\n`, `\t`, `\r`, `\b`), so a
/// password with `#`, quotes, spaces or backslashes arrives unchanged.
pub fn client_defaults_file(print_defaults: &str) -> String {
    let mut out = String::from("[client]\n");
    for line in print_defaults.lines() {
        let Some(arg) = line.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg, None),
        };
        let norm = name.to_ascii_lowercase().replace('-', "_");
        let norm = norm.strip_prefix("loose_").unwrap_or(&norm);
        let base = ["skip_", "disable_", "enable_"]
            .iter()
            .find_map(|p| norm.strip_prefix(p))
            .filter(|b| !MYSQL_CONNECTION_OPTIONS.contains(&norm) && !b.is_empty())
            .unwrap_or(norm);
        // A unique prefix the client accepts (`pass` for `password`).
        let known = MYSQL_CONNECTION_OPTIONS.contains(&base)
            || (base.len() >= 4
                && MYSQL_CONNECTION_OPTIONS
                    .iter()
                    .filter(|o| o.starts_with(base))
                    .count()
                    == 1
                && ![
                    "pager",
                    "prompt",
                    "print_query_on_error",
                    "progress_reports",
                ]
                .iter()
                .any(|o| o.starts_with(base)));
        if !known {
            continue;
        }
        match value {
            // A bare `password` asks on the terminal: never here.
            None if base.starts_with("pass") => {}
            None => {
                out.push_str(name);
                out.push('\n');
            }
            Some(v) => {
                out.push_str(name);
                out.push_str(" = \"");
                for c in v.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '"' => out.push_str("\\\""),
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        '\r' => out.push_str("\\r"),
                        '\u{8}' => out.push_str("\\b"),
                        c => out.push(c),
                    }
                }
                out.push_str("\"\n");
            }
        }
    }
    out
}

/// `SHOW GLOBAL VARIABLES` through the `mysql` (else `mariadb`) client on
/// the user's connection settings: `--defaults-file=/dev/stdin` reads only
/// the connection options of [`mysql_client_defaults`] from a pipe (so no
/// password is on a command line or in the environment, and nothing of the
/// user's `[mysql]` display settings applies), then the capture format is
/// fixed by [`MYSQL_CAPTURE_ARGS`].
pub fn mysql_capture() -> Result<String, CommandError> {
    let client = find_program("mysql")
        .or_else(|| find_program("mariadb"))
        .ok_or(CommandError::NoClient)?;
    let mut cmd = Command::new(client);
    let input = match mysql_client_defaults() {
        Some(d) => {
            cmd.arg("--defaults-file=/dev/stdin");
            Some(d)
        }
        None => {
            cmd.arg("--no-defaults");
            None
        }
    };
    cmd.args(MYSQL_CAPTURE_ARGS);
    run_capped_input(&mut cmd, input.as_deref().map(str::as_bytes))
}

/// `rpm` arguments for `captures/installed-rpms` (read-only query of the
/// package database; one `NAME-VERSION-RELEASE.ARCH` a line, as the first
/// column of sos's `installed-rpms`).
pub const RPM_CAPTURE_ARGS: [&str; 5] = ["-qa", "--nodigest", "--nosignature", "--qf", "%{NVRA}\n"];

/// An executable named `name` in a directory of `PATH` (or the usual
/// system directories when `PATH` is unset).
fn find_program(name: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Why a snapshot could not be written. Nothing is left half-written: the
/// capture goes into a temporary directory that replaces `--out` only at
/// the end (see [`take`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// `--out` (or a directory above it) could not be inspected.
    #[error("`{}`: {}", .path.display(), io_message(.source))]
    Inspect {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `--out` is a file, a symlink or a device.
    #[error("`{}` exists and is not a directory", .out.display())]
    NotADirectory {
        /// `--out`.
        out: PathBuf,
    },
    /// `--out` holds something and `--force` was not given.
    #[error("`{}` is not empty; give --force to replace a previous snapshot", .out.display())]
    NotEmpty {
        /// `--out`.
        out: PathBuf,
    },
    /// `--force`, but `--out` holds something that is not a snapshot.
    #[error(
        "`{}` is not empty and has no snapshot.json: --force only replaces a previous snapshot",
        .out.display()
    )]
    NotASnapshot {
        /// `--out`.
        out: PathBuf,
    },
    /// `--out` has no last component (`/`, `..`).
    #[error("`{}`: --out must name a directory", .out.display())]
    NoName {
        /// `--out`.
        out: PathBuf,
    },
    /// A step of the write failed.
    #[error("`{}`: {step}: {}", .out.display(), io_message(.source))]
    Write {
        /// `--out`.
        out: PathBuf,
        /// What was being done, or the file of the snapshot being written.
        step: String,
        /// The error.
        source: std::io::Error,
    },
    /// Something else changed `--out` or the temporary directory while the
    /// snapshot was taken; what was found is left alone.
    #[error("`{}`: {race}", .out.display())]
    Race {
        /// `--out`.
        out: PathBuf,
        /// What changed.
        race: Race,
    },
}

/// What changed under the snapshot writer (see [`SnapshotError::Race`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Race {
    /// The temporary directory is no longer the one created.
    #[error("the temporary directory was moved or replaced while it was written; nothing placed")]
    TemporaryReplaced,
    /// `--out` was absent at the start and is there now.
    #[error("appeared while the snapshot was taken; left alone, nothing written")]
    Appeared,
    /// `--out` was there at the start and is gone now.
    #[error("was removed while the snapshot was taken; nothing written")]
    Removed,
    /// `--out` is no longer the previous snapshot checked at the start.
    #[error("changed while the snapshot was taken (not the snapshot checked at the start); left alone, nothing written")]
    SnapshotChanged,
    /// `--out` is no longer the empty directory checked at the start.
    #[error("changed while the snapshot was taken (no longer the empty directory checked at the start); left alone, nothing written")]
    EmptyChanged,
    /// What is at `--out` right after the rename is not the snapshot.
    #[error(
        "replaced by something else right after the snapshot was renamed into place; check it"
    )]
    ReplacedAfter,
}

/// Why an external command (`tune2fs -l`, `rpm -qa`, the `mysql` client)
/// gave no capture; the text is the capture's `unreadable` reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// Neither client is installed.
    #[error("no `mysql` or `mariadb` client on PATH")]
    NoClient,
    /// The command could not be started.
    #[error("cannot run: {}", io_message(.0))]
    Spawn(std::io::Error),
    /// It ran longer than the timeout and was killed.
    #[error("timed out after {0}s")]
    Timeout(u64),
    /// Waiting for it failed.
    #[error("{}", io_message(.0))]
    Wait(std::io::Error),
    /// It exited unsuccessfully; the first line it wrote to stderr.
    #[error("{status}: {stderr}")]
    Failed {
        /// Exit status.
        status: std::process::ExitStatus,
        /// First non-empty line of stderr.
        stderr: String,
    },
}

/// Schema id written to `snapshot.json`.
pub const SNAPSHOT_SCHEMA: &str = "driftaudit.snapshot/1";

/// Largest value read from one `/proc/sys` file for `captures/sysctl-a.txt`.
const SYSCTL_VALUE_CAP: u64 = 64 * 1024;
/// Deepest directory level walked below `/proc/sys`.
const SYSCTL_MAX_DEPTH: usize = 12;
/// Most `/sys/block` devices captured.
const MAX_BLOCK_DEVICES: usize = 4096;
/// Time allowed to each external command (`tune2fs`, `mysql`).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);
/// Largest output kept from an external command.
const COMMAND_OUTPUT_CAP: u64 = 8 * 1024 * 1024;

/// `tune2fs -l` fields that change on every mount or write; dropped so a
/// snapshot committed to git changes only when the layout does.
const VOLATILE_TUNE2FS: [&str; 13] = [
    "Last mount time",
    "Last write time",
    "Last checked",
    "Next check after",
    "Mount count",
    "Free blocks",
    "Free inodes",
    "Lifetime writes",
    "Checksum",
    "Last orphan inode",
    "Last error time",
    "First error time",
    "Last mounted on",
];

/// Live kernel values that change on their own (counters, random values);
/// left out of `captures/sysctl-a.txt` so a committed snapshot changes only
/// when the configuration does. Prefixes end with `.`.
const VOLATILE_SYSCTL: [&str; 14] = [
    "fs.aio-nr",
    "fs.dentry-state",
    "fs.file-nr",
    "fs.inode-nr",
    "fs.inode-state",
    "fs.quota.",
    "kernel.ns_last_pid",
    "kernel.pty.nr",
    "kernel.random.boot_id",
    "kernel.random.entropy_avail",
    "kernel.random.uuid",
    "net.netfilter.nf_conntrack_count",
    "kernel.sched_domain.",
    "net.ipv4.tcp_mem_usage",
];

pub(crate) fn volatile_sysctl(key: &str) -> bool {
    VOLATILE_SYSCTL
        .iter()
        .any(|v| key == *v || (v.ends_with('.') && key.starts_with(v)))
}

/// Keep only the stable lines of `/proc/meminfo` (the totals) and
/// `/proc/cpuinfo` (everything but the current clock speed).
pub fn stable_proc(path: &str, text: &str) -> String {
    let keep = |l: &str| match path {
        "/proc/meminfo" => {
            let name = l.split(':').next().unwrap_or("");
            name.contains("Total") || name == "Hugepagesize"
        }
        "/proc/cpuinfo" => !l.starts_with("cpu MHz"),
        _ => true,
    };
    let mut out: String = text
        .lines()
        .filter(|l| keep(l))
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}

/// Options of [`take`].
#[derive(Debug, Clone, Default)]
pub struct SnapshotOptions {
    /// Replace an existing non-empty `--out` (only if it is a snapshot).
    pub force: bool,
    /// Also capture `SHOW GLOBAL VARIABLES` with the `mysql` client.
    pub mysql: bool,
}

/// The files the readers could not read, with the reason: the issues that
/// carry a [`FileIssue::read_error`] (not the ones whose message happens to
/// start like one).
fn unreadable_files(issues: &[FileIssue]) -> Vec<Unreadable> {
    issues
        .iter()
        .filter_map(|i| {
            Some(Unreadable {
                path: i.path.clone(),
                reason: i.read_error.clone()?,
            })
        })
        .collect()
}

/// A path that could not be captured, with the reason (listed in `snapshot.json`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unreadable {
    /// Host path, `captures/NAME` or a command.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// `snapshot.json`.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotMeta {
    /// Always [`SNAPSHOT_SCHEMA`].
    pub schema: &'static str,
    /// Host name.
    pub host: String,
    /// driftaudit version that took the snapshot.
    pub driftaudit: String,
    /// Capture time, UTC, RFC 3339.
    pub captured_at: String,
    /// Ids of the policies whose readers decided what was copied.
    pub policies: Vec<String>,
    /// Host paths copied (sorted).
    pub files: Vec<String>,
    /// What could not be captured.
    pub unreadable: Vec<Unreadable>,
    /// Host paths copied from files with more than one hard link (a hard
    /// link cannot be told from the file it names; docs/snapshot-format.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hard_links: Vec<String>,
    /// Host paths the readers looked for (`applies: exists:`, presence
    /// probes) that did not exist, so that the snapshot proves their absence
    /// as the live host does (a path missing from a snapshot alone is
    /// unknown: it may just not have been copied).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
    /// What the snapshot captured completely, so that a key missing from it
    /// is absent on the host rather than unknown: `sysctl` (every readable
    /// `/proc/sys` key is in `captures/sysctl-a.txt`, except the volatile
    /// ones left out by design and those listed in `unreadable`).
    pub complete: Vec<&'static str>,
}

/// Capture the live host into `out`, copying what `policies` read.
pub fn take(
    policies: &PolicySet,
    out: &Path,
    opts: &SnapshotOptions,
) -> Result<SnapshotMeta, SnapshotError> {
    let checked = check_out_dir(out, opts.force)?;
    let host = Host::recording();
    let facts = engine::gather(policies, &host);
    let mut unreadable = unreadable_files(&facts.issues);

    // Fixed files every snapshot has, read through the same recording host.
    for p in [
        "/proc/meminfo",
        "/proc/cpuinfo",
        "/etc/os-release",
        "/etc/hostname",
        "/proc/self/mountinfo",
        "/proc/mounts",
    ] {
        if let Err(e) = host.read_bytes(p) {
            unreadable.push(Unreadable {
                path: p.into(),
                reason: e.to_string(),
            });
        }
    }
    capture_block_devices(&host);
    let log = host.read_log().unwrap_or_default();

    let mut w = Writer::default();
    plan_from_log(&host, &log, &mut w);

    // captures/
    let (sysctl, mut bad) = sysctl_capture(&host);
    unreadable.append(&mut bad);
    w.files.insert(SYSCTL_A.path.into(), sysctl.into_bytes());
    // Values of root-only keys (tcp_fastopen_key, ...) keep the capture root-only.
    let root_only = host.read_log().is_some_and(|l| {
        l.modes
            .iter()
            .any(|(p, m)| p.starts_with("/proc/sys/") && m & 0o004 == 0 && m & 0o444 != 0)
    });
    if root_only {
        w.modes.insert(SYSCTL_A.path.into(), 0o600);
    }
    let mut du = String::new();
    for (path, size) in &facts.dir_sizes {
        match size {
            Ok(b) => du.push_str(&format!("{b}\t{path}\n")),
            Err(e) => unreadable.push(Unreadable {
                path: path.clone(),
                reason: format!("directory size: {e}"),
            }),
        }
    }
    if !du.is_empty() {
        w.files.insert(DU.path.into(), du.into_bytes());
    }
    // the option and credential files' permission bits (a copy's own mode is not the host's)
    if let Some(text) = crate::facts::mysql::files::modes_capture(&facts) {
        w.files
            .insert(crate::catalogue::FILE_MODES.path.into(), text.into_bytes());
    }
    let mountinfo = log
        .files
        .get("/proc/self/mountinfo")
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    for (name, dev) in ext4_devices(&mountinfo) {
        match run_capped(Command::new("tune2fs").arg("-l").arg(&dev)) {
            Ok(text) => {
                w.files.insert(
                    format!("{}{name}.txt", TUNE2FS.path),
                    stable_tune2fs(&text).into_bytes(),
                );
            }
            Err(e) => unreadable.push(Unreadable {
                path: format!("captures/{}{name}.txt", TUNE2FS.name),
                reason: format!("tune2fs -l {dev}: {e}"),
            }),
        }
    }
    if opts.mysql {
        // The user's [mysql] group may set `table`, `vertical`, `html`, `xml`,
        // `raw`, `tee`, `pager`, `init-command`, `verbose`: only the user's
        // connection options reach the client, so the capture is always
        // the batch TSV the readers expect and the user's credentials apply.
        match mysql_capture() {
            Ok(text) => {
                w.modes.insert(MYSQL_VARIABLES.path.into(), 0o600);
                w.files
                    .insert(MYSQL_VARIABLES.path.into(), mysql_tsv(&text).into_bytes());
            }
            Err(e) => unreadable.push(Unreadable {
                path: format!("captures/{}", MYSQL_VARIABLES.name),
                reason: format!("{}: {e}", MYSQL_VARIABLES.command),
            }),
        }
    }

    // The installed server package on an RPM host: the version decides which
    // versioned option groups ([mariadb-10.11], [mysqld-8.0]) the server
    // reads, and `check` reads no RPM database. Only server packages are kept
    // (a full list changes on every update); no rpm on the host: nothing.
    if let Some(rpm) = find_program("rpm") {
        match run_capped(Command::new(rpm).args(RPM_CAPTURE_ARGS)) {
            Ok(text) => {
                let servers: String = text
                    .lines()
                    .filter(|l| crate::facts::mysql::server_package(l).is_some())
                    .map(|l| format!("{}\n", l.trim()))
                    .collect();
                if !servers.is_empty() {
                    w.files
                        .insert(INSTALLED_RPMS.path.into(), servers.into_bytes());
                }
            }
            Err(e) => unreadable.push(Unreadable {
                path: format!("captures/{}", INSTALLED_RPMS.name),
                reason: format!("{}: {e}", INSTALLED_RPMS.command),
            }),
        }
    }

    unreadable.sort();
    unreadable.dedup();
    let meta = SnapshotMeta {
        schema: SNAPSHOT_SCHEMA,
        host: host.name().to_string(),
        driftaudit: env!("CARGO_PKG_VERSION").to_string(),
        captured_at: rfc3339_now(),
        policies: policies.policies.iter().map(|p| p.id.clone()).collect(),
        files: w.files.keys().cloned().collect(),
        unreadable,
        hard_links: host.hard_linked(),
        absent: log
            .absent
            .iter()
            .filter(|p| {
                !excluded(p)
                    && !w.files.contains_key(*p)
                    && !w.links.contains_key(*p)
                    && !w.dirs.contains(*p)
            })
            .cloned()
            .collect(),
        complete: vec!["sysctl"],
    };
    let mut meta = meta;
    if let OutState::Snapshot(..) = checked {
        if let Some(at) = unchanged_since(out, &w, &meta) {
            meta.captured_at = at;
        }
    }
    w.write_atomically(out, &meta, checked)?;
    Ok(meta)
}

/// The `captured_at` of the snapshot `--force` replaces when the new
/// capture is the same in every byte but that (same files, contents,
/// links and metadata): re-capturing an unchanged host into its folder in
/// git then changes nothing. Read through the capped FIFO-safe reader;
/// anything unreadable or different is a change.
fn unchanged_since(out: &Path, w: &Writer, meta: &SnapshotMeta) -> Option<String> {
    let read =
        |rel: &str| crate::reader::read_file(&out.join(rel), crate::host::MAX_FILE_BYTES).ok();
    let old: serde_json::Value = serde_json::from_slice(&read("snapshot.json")?).ok()?;
    let at = old.get("captured_at")?.as_str()?.to_string();
    let mut new = serde_json::to_value(meta).ok()?;
    new["captured_at"] = serde_json::Value::String(at.clone());
    if new != old {
        return None;
    }
    for (path, bytes) in &w.files {
        if read(path.trim_start_matches('/'))? != *bytes {
            return None;
        }
    }
    for (path, target) in &w.links {
        let old = fs::read_link(out.join(path.trim_start_matches('/'))).ok()?;
        if old.as_os_str() != std::ffi::OsStr::new(target) {
            return None;
        }
    }
    Some(at)
}

/// What `--out` was when the capture started: the rename at the end
/// replaces only that (see [`Writer::write_atomically`]).
#[derive(Debug, Clone, Copy)]
enum OutState {
    /// Nothing there.
    Absent,
    /// An empty directory (device, inode).
    Empty(u64, u64),
    /// A previous snapshot, replaced with `--force` (device, inode).
    Snapshot(u64, u64),
}

/// Refuse a non-empty `out` unless `force` and it is a previous snapshot.
fn check_out_dir(out: &Path, force: bool) -> Result<OutState, SnapshotError> {
    let inspect = |source| SnapshotError::Inspect {
        path: out.to_path_buf(),
        source,
    };
    let meta = match fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutState::Absent),
        Err(e) => return Err(inspect(e)),
    };
    let out = out.to_path_buf();
    if !meta.is_dir() {
        return Err(SnapshotError::NotADirectory { out });
    }
    let id = (meta.dev(), meta.ino());
    let empty = fs::read_dir(&out).map_err(inspect)?.next().is_none();
    if empty {
        return Ok(OutState::Empty(id.0, id.1));
    }
    if !force {
        return Err(SnapshotError::NotEmpty { out });
    }
    if !out.join("snapshot.json").is_file() {
        return Err(SnapshotError::NotASnapshot { out });
    }
    Ok(OutState::Snapshot(id.0, id.1))
}

/// Read the storage facts the storage reader uses (rotational flags, device
/// mapper names, slaves), so they are in the log whatever the policies read.
fn capture_block_devices(host: &Host) {
    // the hypervisor or cloud, named in findings about virtual disks
    for f in ["sys_vendor", "product_name"] {
        let _ = host.read_bytes_capped(&format!("/sys/class/dmi/id/{f}"), 4096);
    }
    let Ok(devs) = host.read_dir("/sys/block") else {
        return;
    };
    // loop, ram and zram devices come and go with package and image
    // activity (snaps, installers, swap) and hold no data directory: left
    // out unless a mount uses one, which the storage reader then read
    let transient = |n: &str| {
        ["loop", "ram", "zram"].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    for d in devs
        .iter()
        .filter(|d| !transient(&d.name))
        .take(MAX_BLOCK_DEVICES)
    {
        let base = format!("/sys/block/{}", d.name);
        let _ = host.read_bytes_capped(&format!("{base}/queue/rotational"), 4096);
        // what the disk is: a virtual or cloud disk's flag is not its medium
        for f in ["device/vendor", "device/model", "device/modalias"] {
            let _ = host.read_bytes_capped(&format!("{base}/{f}"), 4096);
        }
        let _ = host.read_bytes_capped(&format!("{base}/dm/name"), 4096);
        if let Ok(slaves) = host.read_dir(&format!("{base}/slaves")) {
            for s in slaves {
                let _ = host.read_link(&format!("{base}/slaves/{}", s.name));
            }
        }
    }
}

/// Files, symlinks and directories to write, by host path.
#[derive(Debug, Default)]
struct Writer {
    files: BTreeMap<String, Vec<u8>>,
    /// Permission bits of each file's source; a copy is never wider.
    modes: BTreeMap<String, u32>,
    links: BTreeMap<String, String>,
    dirs: BTreeSet<String>,
}

/// Whether a host path is left out of the copy: `/proc/sys` is captured as
/// one `captures/sysctl-a.txt` (a `proc/sys` directory in the snapshot would
/// make the sysctl reader look for one file per key there).
fn excluded(path: &str) -> bool {
    path == "/proc/sys" || path.starts_with("/proc/sys/") || path == "/" || path == "/proc"
}

fn plan_from_log(host: &Host, log: &ReadLog, w: &mut Writer) {
    for (path, bytes) in &log.files {
        if excluded(path) {
            continue;
        }
        let bytes = if path == "/proc/meminfo" || path == "/proc/cpuinfo" {
            stable_proc(path, &String::from_utf8_lossy(bytes)).into_bytes()
        } else if path == "/var/lib/dpkg/status" {
            // only the server packages' stanzas: the rest of the database
            // changes with every update and no reader uses it
            crate::facts::mysql::dpkg_server_stanzas(bytes)
        } else {
            redact_file(path, bytes)
        };
        // A symlinked config file (99-sysctl.conf -> ../sysctl.conf) is kept
        // as a link to a copy of its target, as on the host.
        let link = log.links.get(path).cloned().or_else(|| {
            host.read_link(path)
                .filter(|_| !path.starts_with("/proc/") && !path.starts_with("/sys/"))
        });
        match (link, host.resolve(path)) {
            (Some(target), Ok(resolved)) if resolved != *path && !excluded(&resolved) => {
                // Keep the link text when it leads straight to the copy; a
                // chain through files not copied (/etc/alternatives) is
                // replaced by the absolute path it resolved to.
                let parent = Path::new(path)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "/".into());
                let direct = lexical(&crate::host::join_host(&parent, &target)) == resolved;
                let target = if direct { target } else { resolved.clone() };
                w.links.insert(path.clone(), target);
                if let Some(m) = log.modes.get(path) {
                    w.modes.entry(resolved.clone()).or_insert(*m);
                }
                w.files.entry(resolved).or_insert(bytes);
            }
            _ => {
                if let Some(m) = log.modes.get(path) {
                    w.modes.insert(path.clone(), *m);
                }
                w.files.insert(path.clone(), bytes);
            }
        }
    }
    for (path, target) in &log.links {
        if excluded(path) || w.files.contains_key(path) {
            continue;
        }
        w.links
            .entry(path.clone())
            .or_insert_with(|| target.clone());
    }
    // Readers that resolve a path before reading it (option files) read the
    // target; keep the name they asked for as a link to the copy.
    for (path, resolved) in &log.resolved {
        let below = format!("{path}/");
        let taken = w.files.contains_key(path)
            || w.links.contains_key(path)
            || w.files.keys().any(|f| f.starts_with(&below))
            || log.dirs.iter().any(|d| d == path || d.starts_with(&below));
        if excluded(path) || taken || !w.files.contains_key(resolved) {
            continue;
        }
        let target = log.links.get(path).cloned().filter(|t| {
            let parent = Path::new(path)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|| "/".into());
            lexical(&crate::host::join_host(&parent, t)) == *resolved
        });
        w.links
            .insert(path.clone(), target.unwrap_or_else(|| resolved.clone()));
    }
    for d in &log.dirs {
        if !excluded(d) {
            w.dirs.insert(d.clone());
        }
    }
    for (p, kind) in &log.probes {
        if excluded(p) || w.files.contains_key(p) || w.links.contains_key(p) {
            continue;
        }
        match kind {
            EntryKind::Dir => {
                w.dirs.insert(p.clone());
            }
            // Existence-only probe of a file that no reader read: an empty
            // placeholder keeps `exists(...)` true in the snapshot.
            EntryKind::File => {
                w.files.insert(p.clone(), Vec::new());
            }
            EntryKind::Other => {}
        }
    }
}

impl Writer {
    /// Write everything into a new directory with a random name next to
    /// `out` (created with `mkdirat`, mode 0700 while it is filled, checked
    /// to be ours), through directory descriptors only (`openat` with
    /// `O_NOFOLLOW`, `O_EXCL`, `mkdirat`, `symlinkat`), so whoever can write
    /// the parent cannot redirect a write elsewhere. Then rename it into
    /// place: `renameat2(RENAME_NOREPLACE)` when `out` was absent (what
    /// appeared there meanwhile is left alone), `RENAME_EXCHANGE` when it
    /// was an empty directory or, with `--force`, a previous snapshot, then
    /// the old one is removed only if it is the very directory checked at
    /// the start (same device and inode), else it is swapped back.
    fn write_atomically(
        &self,
        out: &Path,
        meta: &SnapshotMeta,
        checked: OutState,
    ) -> Result<(), SnapshotError> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Some(name) = out.file_name() else {
            return Err(SnapshotError::NoName {
                out: out.to_path_buf(),
            });
        };
        let name = name.as_bytes();
        fs::create_dir_all(&parent).map_err(|source| SnapshotError::Inspect {
            path: parent.clone(),
            source,
        })?;
        let io = |what: &str, e: rustix::io::Errno| SnapshotError::Write {
            out: out.to_path_buf(),
            step: what.to_string(),
            source: e.into(),
        };
        let race = |race: Race| SnapshotError::Race {
            out: out.to_path_buf(),
            race,
        };
        let pfd = rfs::open(
            &parent,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io("cannot open its parent directory", e))?;
        let (tmp, tfd) = make_temp_dir(&pfd, name).map_err(|e| io("temporary directory", e))?;
        let tst = rfs::fstat(&tfd).map_err(|e| io("temporary directory", e))?;
        let result = self
            .write_into(&tfd, meta)
            .map_err(|(file, e)| SnapshotError::Write {
                out: out.to_path_buf(),
                step: file,
                source: e,
            })
            .and_then(|()| {
                let ours = |n: &[u8]| {
                    rfs::statat(&pfd, n, AtFlags::SYMLINK_NOFOLLOW)
                        .is_ok_and(|st| (st.st_dev, st.st_ino) == (tst.st_dev, tst.st_ino))
                };
                if !ours(&tmp) {
                    return Err(race(Race::TemporaryReplaced));
                }
                rfs::fchmod(&tfd, Mode::from_raw_mode(0o755))
                    .map_err(|e| io("temporary directory", e))?;
                place(&pfd, &tmp, name, checked).map_err(|e| match e {
                    Placed::Race(r) => race(r),
                    Placed::Errno(e) => SnapshotError::Inspect {
                        path: out.to_path_buf(),
                        source: e.into(),
                    },
                })?;
                if !ours(name) {
                    return Err(race(Race::ReplacedAfter));
                }
                Ok(())
            });
        if result.is_err() {
            // Remove the temporary directory, if it is still ours.
            if let Ok(st) = rfs::statat(&pfd, tmp.as_slice(), AtFlags::SYMLINK_NOFOLLOW) {
                if (st.st_dev, st.st_ino) == (tst.st_dev, tst.st_ino) {
                    let _ = remove_tree_at(&pfd, &tmp, 0);
                }
            }
        }
        result
    }

    /// Fill the temporary directory; an error names the file of the
    /// snapshot it stopped at.
    fn write_into(
        &self,
        root: &OwnedFd,
        meta: &SnapshotMeta,
    ) -> Result<(), (String, std::io::Error)> {
        let io = |p: &str, e: rustix::io::Errno| (format!("`{p}`"), std::io::Error::from(e));
        for d in &self.dirs {
            open_dirs(root, &path_parts(d)).map_err(|e| io(d, e))?;
        }
        for (path, bytes) in &self.files {
            let mut parts = path_parts(path);
            let Some(name) = parts.pop() else { continue };
            let dir = open_dirs(root, &parts).map_err(|e| io(path, e))?;
            let mode = self.modes.get(path).map_or(0o644, |m| m & 0o644);
            write_new(&dir, &name, bytes, mode).map_err(|e| io(path, e))?;
        }
        for (path, target) in &self.links {
            let mut parts = path_parts(path);
            let Some(name) = parts.pop() else { continue };
            let dir = open_dirs(root, &parts).map_err(|e| io(path, e))?;
            match rfs::symlinkat(unescape_path(target), &dir, name.as_slice()) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(io(path, e)),
            }
        }
        let mut json = serde_json::to_string_pretty(meta)
            .map_err(|e| ("`/snapshot.json`".to_string(), std::io::Error::other(e)))?;
        json.push('\n');
        write_new(root, b"snapshot.json", json.as_bytes(), 0o644)
            .map_err(|e| io("/snapshot.json", e))
    }
}

/// The components of a host path as file-name bytes (`\xNN` escapes of
/// names that are not UTF-8 read back).
fn path_parts(host_path: &str) -> Vec<Vec<u8>> {
    lexical(host_path)
        .split('/')
        .filter(|c| !c.is_empty())
        .map(unescape_name)
        .filter(|c| !c.contains(&b'/') && !c.contains(&0))
        .collect()
}

/// A symlink target as bytes (each component's escapes read back).
fn unescape_path(target: &str) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = target.split('/').map(unescape_name).collect();
    parts.join(&b'/')
}

/// `mkdirat` then `openat(O_DIRECTORY | O_NOFOLLOW)` for each component,
/// from `root`: a component that is a symlink fails (`ELOOP`/`ENOTDIR`).
fn open_dirs(root: &OwnedFd, parts: &[Vec<u8>]) -> rustix::io::Result<OwnedFd> {
    let mut cur = root.try_clone().map_err(|_| rustix::io::Errno::MFILE)?;
    for p in parts {
        match rfs::mkdirat(&cur, p.as_slice(), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
        cur = rfs::openat(
            &cur,
            p.as_slice(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    Ok(cur)
}

/// Create a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`) in `dir` and write it.
fn write_new(dir: &OwnedFd, name: &[u8], bytes: &[u8], mode: u32) -> rustix::io::Result<()> {
    let fd = rfs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )?;
    let mut f = fs::File::from(fd);
    f.write_all(bytes)
        .map_err(|e| rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::IO))
}

/// `mkdirat(parent, ".NAME.tmp-RANDOM", 0700)` with 16 random hex digits
/// (`getrandom`), retried on a clash; opened `O_NOFOLLOW` and checked to be
/// a directory owned by us with mode 0700 (not one swapped in).
fn make_temp_dir(parent: &OwnedFd, name: &[u8]) -> rustix::io::Result<(Vec<u8>, OwnedFd)> {
    for _ in 0..16 {
        let mut r = [0u8; 8];
        let mut got = 0;
        while got < r.len() {
            got += rustix::rand::getrandom(&mut r[got..], rustix::rand::GetRandomFlags::empty())?;
        }
        let mut tmp = b".".to_vec();
        tmp.extend_from_slice(name);
        tmp.extend_from_slice(b".tmp-");
        for b in r {
            tmp.extend_from_slice(format!("{b:02x}").as_bytes());
        }
        match rfs::mkdirat(parent, tmp.as_slice(), Mode::from_raw_mode(0o700)) {
            Ok(()) => {}
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
        let fd = rfs::openat(
            parent,
            tmp.as_slice(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let st = rfs::fstat(&fd)?;
        if st.st_uid != rustix::process::geteuid().as_raw() || st.st_mode & 0o077 != 0 {
            return Err(rustix::io::Errno::PERM);
        }
        return Ok((tmp, fd));
    }
    Err(rustix::io::Errno::EXIST)
}

/// Move the finished temporary directory `tmp` to `name` (see
/// [`Writer::write_atomically`]).
fn place(parent: &OwnedFd, tmp: &[u8], name: &[u8], checked: OutState) -> Result<(), Placed> {
    let (dev, ino, snapshot) = match checked {
        OutState::Absent => {
            return match rfs::renameat_with(parent, tmp, parent, name, RenameFlags::NOREPLACE) {
                Ok(()) => Ok(()),
                Err(rustix::io::Errno::EXIST) | Err(rustix::io::Errno::NOTEMPTY) => {
                    Err(Placed::Race(Race::Appeared))
                }
                Err(e) => Err(Placed::Errno(e)),
            };
        }
        OutState::Empty(d, i) => (d, i, false),
        OutState::Snapshot(d, i) => (d, i, true),
    };
    rfs::renameat_with(parent, tmp, parent, name, RenameFlags::EXCHANGE).map_err(|e| match e {
        rustix::io::Errno::NOENT => Placed::Race(Race::Removed),
        e => Placed::Errno(e),
    })?;
    // `tmp` now names what was at `out`: remove it only if it is what was checked.
    let same = rfs::statat(parent, tmp, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| (st.st_dev, st.st_ino) == (dev, ino));
    let still_snapshot = !snapshot
        || rfs::statat(
            parent,
            [tmp, b"/snapshot.json"].concat(),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok_and(|st| rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::RegularFile);
    let removed = same
        && still_snapshot
        && if snapshot {
            remove_tree_at(parent, tmp, 0).is_ok()
        } else {
            rfs::unlinkat(parent, tmp, AtFlags::REMOVEDIR).is_ok()
        };
    if removed {
        return Ok(());
    }
    // Not what was checked (replaced, or filled meanwhile): put it back.
    let _ = rfs::renameat_with(parent, tmp, parent, name, RenameFlags::EXCHANGE);
    Err(Placed::Race(if snapshot {
        Race::SnapshotChanged
    } else {
        Race::EmptyChanged
    }))
}

/// Why [`place`] did not place the snapshot.
enum Placed {
    Race(Race),
    Errno(rustix::io::Errno),
}

/// Remove the tree `name` in `dir` without following symlinks.
fn remove_tree_at(dir: &OwnedFd, name: &[u8], depth: usize) -> rustix::io::Result<()> {
    if depth > 64 {
        return Err(rustix::io::Errno::LOOP);
    }
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let dfd = fd.try_clone().map_err(|_| rustix::io::Errno::MFILE)?;
    let mut names = Vec::new();
    for e in rfs::Dir::new(fd)? {
        let e = e?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push((n.to_vec(), e.file_type()));
        }
    }
    for (n, t) in names {
        let t = if t == rfs::FileType::Unknown {
            rfs::statat(&dfd, n.as_slice(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|s| rfs::FileType::from_raw_mode(s.st_mode))?
        } else {
            t
        };
        if t == rfs::FileType::Directory {
            remove_tree_at(&dfd, &n, depth + 1)?;
        } else {
            rfs::unlinkat(&dfd, n.as_slice(), AtFlags::empty())?;
        }
    }
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR)
}

/// Redact secrets in a copied file, in the file's own syntax and keeping
/// every line where it was (see [`crate::secret::redact_file`]: the one place
/// that decides what is secret and how each format hides it).
pub fn redact_file(path: &str, bytes: &[u8]) -> Vec<u8> {
    secret::redact_file(path, bytes)
}

/// Walk `/proc/sys` and print every readable key as procps `sysctl -a` does
/// (`key = value`, one line per value line), sorted by key. Write-only keys
/// and `vm.stat_refresh` are skipped; unreadable ones are returned.
pub fn sysctl_capture(host: &Host) -> (String, Vec<Unreadable>) {
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut stack: Vec<(String, usize)> = vec![("/proc/sys".into(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let entries = match host.read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                bad.push(Unreadable {
                    path: dir,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        for e in entries {
            if e.is_symlink {
                continue;
            }
            let path = format!("{dir}/{}", e.name);
            match e.kind {
                Some(EntryKind::Dir) if depth < SYSCTL_MAX_DEPTH => stack.push((path, depth + 1)),
                Some(EntryKind::File) => {
                    let key = swap_dot_slash(path.trim_start_matches("/proc/sys/"));
                    if key == "vm.stat_refresh" || volatile_sysctl(&key) {
                        continue;
                    }
                    match host.mode(&path) {
                        Ok(m) if m & 0o444 == 0 => continue,
                        Ok(_) => {}
                        Err(err) => {
                            bad.push(Unreadable {
                                path,
                                reason: err.to_string(),
                            });
                            continue;
                        }
                    }
                    match host.read_bytes_capped(&path, SYSCTL_VALUE_CAP) {
                        Ok(b) => {
                            let v = String::from_utf8_lossy(&b);
                            let v = v.strip_suffix('\n').unwrap_or(&v).to_string();
                            values.insert(key, v);
                        }
                        Err(err) => bad.push(Unreadable {
                            path,
                            reason: err.to_string(),
                        }),
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = String::new();
    for (k, v) in &values {
        let v = if secret::sysctl_key_is_secret(k) {
            REDACTED
        } else {
            v.as_str()
        };
        for line in v.split('\n') {
            out.push_str(&format!("{k} = {line}\n"));
        }
    }
    (out, bad)
}

/// Mounted ext4 filesystems from mountinfo: (capture name, device).
/// The name is the device path without `/dev/`, `/` replaced by `_`.
pub fn ext4_devices(mountinfo: &str) -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for line in mountinfo.lines() {
        let Some((_, post)) = line.split_once(" - ") else {
            continue;
        };
        let mut f = post.split_whitespace();
        let (Some(fstype), Some(src)) = (f.next(), f.next()) else {
            continue;
        };
        if fstype != "ext4" || !src.starts_with("/dev/") {
            continue;
        }
        let src = crate::parse::unescape_octal(src);
        let name: String = src
            .trim_start_matches("/dev/")
            .chars()
            .map(|c| {
                if c == '/' || c.is_whitespace() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        out.entry(name).or_insert(src);
    }
    out.into_iter().collect()
}

/// Drop the `tune2fs -l` lines that change on every mount or write.
pub fn stable_tune2fs(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let field = line.split(':').next().unwrap_or("").trim();
        if VOLATILE_TUNE2FS.contains(&field) {
            continue;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `SHOW GLOBAL VARIABLES` output with secrets redacted; TSV rows (what
/// `mysql -NB` prints) sorted so a snapshot changes only when a value does.
/// Any other shape (a table or `\G` output) is kept in its order, redacted.
pub fn mysql_tsv(text: &str) -> String {
    let redacted = secret::redact_text(secret::FileKind::ServerVariables, text);
    let rows: Vec<&str> = redacted.lines().filter(|l| !l.trim().is_empty()).collect();
    let tsv = rows.iter().all(|l| l.contains('\t'));
    let mut rows: Vec<String> = rows.into_iter().map(str::to_string).collect();
    if tsv {
        rows.sort();
    }
    let mut out = rows.join("\n");
    out.push('\n');
    out
}

/// Run a command with no stdin, a timeout and an output cap; stdout on success.
fn run_capped(cmd: &mut Command) -> Result<String, CommandError> {
    run_capped_input(cmd, None)
}

/// [`run_capped`] with `input` (if any) on stdin, then end of file.
fn run_capped_input(cmd: &mut Command, input: Option<&[u8]>) -> Result<String, CommandError> {
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(CommandError::Spawn)?;
    if let (Some(mut stdin), Some(bytes)) = (child.stdin.take(), input) {
        let bytes = bytes.to_vec();
        // A thread, so a child that does not read cannot block us; the pipe
        // closes when it is done.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let out_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(COMMAND_OUTPUT_CAP).read_to_end(&mut buf);
        }
        buf
    });
    let err_t = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stderr {
            let _ = s.take(64 * 1024).read_to_end(&mut buf);
        }
        buf
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > COMMAND_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CommandError::Timeout(COMMAND_TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(CommandError::Wait(e)),
        }
    };
    let out = out_t.join().unwrap_or_default();
    let err = err_t.join().unwrap_or_default();
    if !status.success() {
        let msg = String::from_utf8_lossy(&err);
        let first = msg.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(CommandError::Failed {
            status,
            stderr: first.trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86400) as i64);
    let s = secs % 86400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_files_are_picked_by_their_read_error_not_their_wording() {
        let host =
            Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean")).unwrap();
        let err = host.read_bytes("/etc/no-such-file").unwrap_err();
        let issues = vec![
            FileIssue::unreadable("sysctl", "/etc/sysctl.d/a.conf", &err),
            // a content problem worded like a read error is not an unreadable file
            FileIssue::problem("mycnf", "/etc/my.cnf", Some(3), "cannot read the directory"),
            FileIssue::problem("mycnf", "/etc/my.cnf", Some(4), "cannot read: x"),
        ];
        assert_eq!(
            unreadable_files(&issues),
            [Unreadable {
                path: "/etc/sysctl.d/a.conf".into(),
                reason: err.to_string(),
            }]
        );
    }

    #[test]
    fn snapshot_errors_read_as_one_lowercase_line_with_the_path_in_backticks() {
        let out = PathBuf::from("/srv/snap");
        let io = || std::io::Error::from_raw_os_error(2);
        let all = [
            SnapshotError::Inspect {
                path: out.clone(),
                source: io(),
            },
            SnapshotError::NotADirectory { out: out.clone() },
            SnapshotError::NotEmpty { out: out.clone() },
            SnapshotError::NotASnapshot { out: out.clone() },
            SnapshotError::NoName { out: out.clone() },
            SnapshotError::Write {
                out: out.clone(),
                step: "temporary directory".into(),
                source: io(),
            },
            SnapshotError::Race {
                out: out.clone(),
                race: Race::Appeared,
            },
        ];
        for e in &all {
            let m = e.to_string();
            assert!(m.starts_with("`/srv/snap`"), "{m}");
            assert!(
                !m.contains('\n') && !m.ends_with('.') && !m.contains("os error"),
                "{m}"
            );
        }
        assert_eq!(
            all[5].to_string(),
            "`/srv/snap`: temporary directory: no such file or directory"
        );
        for e in [
            CommandError::NoClient,
            CommandError::Spawn(io()),
            CommandError::Timeout(20),
        ] {
            let m = e.to_string();
            assert!(
                m.chars().next().is_some_and(|c| !c.is_uppercase()) && !m.ends_with('.'),
                "{m}"
            );
        }
    }

    #[test]
    fn option_file_secrets_are_redacted_in_place() {
        let text = "[client]\nuser = backup\npassword = hunter2\n# password = old\nloose-password=x\n[mysqld]\ninnodb_buffer_pool_size = 6G\n";
        let r = String::from_utf8(redact_file("/etc/mysql/my.cnf", text.as_bytes())).unwrap();
        assert_eq!(
            r,
            "[client]\nuser = backup\npassword = <redacted>\n# password = <redacted>\nloose-password=<redacted>\n[mysqld]\ninnodb_buffer_pool_size = 6G\n"
        );
        assert_eq!(r.lines().count(), text.lines().count());
    }

    #[test]
    fn localconfig_secret_values_are_redacted_keeping_lines() {
        let xml = "<localconfig>\n  <key name=\"zimbra_mysql_password\">\n    <value>s3cr\net</value>\n  </key>\n  <key name=\"mysql_memory_percent\">\n    <value>30</value>\n  </key>\n</localconfig>\n";
        let r = String::from_utf8(redact_file(
            "/opt/zimbra/conf/localconfig.xml",
            xml.as_bytes(),
        ))
        .unwrap();
        assert!(!r.contains("s3cr"), "{r}");
        assert!(r.contains("<value>&lt;redacted&gt;</value>\n"), "{r}");
        assert!(r.contains("<value>30</value>"));
        assert_eq!(r.matches('\n').count(), xml.matches('\n').count());
    }

    #[test]
    fn ext4_mounts_are_found_in_mountinfo() {
        let mi = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n23 22 253:0 / /opt/zimbra rw - ext4 /dev/mapper/vg-zimbra rw\n24 1 0:5 / /proc rw - proc proc rw\n25 1 0:30 / /x rw - overlay overlay rw\n";
        assert_eq!(
            ext4_devices(mi),
            [
                (
                    "mapper_vg-zimbra".to_string(),
                    "/dev/mapper/vg-zimbra".to_string()
                ),
                ("sda1".to_string(), "/dev/sda1".to_string())
            ]
        );
    }

    #[test]
    fn tune2fs_volatile_fields_are_dropped() {
        let t = "tune2fs 1.47.0 (5-Feb-2023)\nInode size:\t          256\nMount count:              12\nLast write time:          Mon Jan  1 00:00:00 2024\nBlock size:               4096\n";
        assert_eq!(
            stable_tune2fs(t),
            "tune2fs 1.47.0 (5-Feb-2023)\nInode size:\t          256\nBlock size:               4096\n"
        );
    }

    #[test]
    fn client_defaults_keep_only_connection_options() {
        let printed = "--socket=/run/mysqld/mysqld.sock\n--user=backup\n--table\n--tee=/tmp/x\n--pager=less\n--init-command=SET GLOBAL x=1\n--verbose\n--loose-ssl-ca=/etc/ca.pem\n--skip-ssl\n--pass=p a\"s#\\x\n--password\n--prompt=x\n--local-infile=1\n";
        assert_eq!(
            client_defaults_file(printed),
            "[client]\nsocket = \"/run/mysqld/mysqld.sock\"\nuser = \"backup\"\nloose-ssl-ca = \"/etc/ca.pem\"\nskip-ssl\npass = \"p a\\\"s#\\\\x\"\n"
        );
    }

    #[test]
    fn mysql_rows_are_sorted_and_secrets_redacted() {
        assert_eq!(
            mysql_tsv("max_connections\t151\nwsrep_sst_auth\tx\nautocommit\tON\n"),
            "autocommit\tON\nmax_connections\t151\nwsrep_sst_auth\t<redacted>\n"
        );
    }

    #[test]
    fn volatile_values_are_left_out() {
        assert!(volatile_sysctl("kernel.random.uuid"));
        assert!(volatile_sysctl("fs.quota.lookups"));
        assert!(!volatile_sysctl("kernel.randomize_va_space"));
        assert_eq!(
            stable_proc(
                "/proc/meminfo",
                "MemTotal: 10 kB\nMemFree: 3 kB\nSwapTotal: 0 kB\nHugepagesize: 2048 kB\n"
            ),
            "MemTotal: 10 kB\nSwapTotal: 0 kB\nHugepagesize: 2048 kB\n"
        );
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
