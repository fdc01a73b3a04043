//! The one catalogue of what policies can read: settings namespaces (record
//! or flat, key canonicalisation, what absence means, the captures that feed
//! them), host facts, expression functions and the snapshot capture paths.
//! Plain const data, a leaf: imports nothing of the crate. The expression
//! parser, the policy loader, the snapshot writer, the host layout and the
//! readers (capture paths) and the docs and facts tests read it.
//!
//! Adding a namespace is one parser (`src/parse/`), one facts file
//! (`src/facts/`) and one row of [`NAMESPACES`]; see docs/architecture.md.
//!
//! The folder: this file (captures, namespaces, facts and the lookups) and
//! `functions.rs` (the expression functions, [`FUNCTIONS`]).

mod functions;
pub use functions::{FunctionSpec, FUNCTIONS};

/// A capture: command output a snapshot keeps under `captures/` because it has
/// no file on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capture {
    /// Host path inside a snapshot (`/captures/du.txt`); a trailing `/` is a
    /// directory of one file per device.
    pub path: &'static str,
    /// The path without the leading `/captures/` (`du.txt`), as
    /// [`Reads::capture`](crate::host::Reads::capture) takes it.
    pub name: &'static str,
    /// The command whose output it holds.
    pub command: &'static str,
}

macro_rules! capture {
    ($name:literal, $command:literal) => {
        Capture {
            path: concat!("/captures/", $name),
            name: $name,
            command: $command,
        }
    };
}

/// `sysctl -a`: the complete live listing, preferred over `proc/sys/`.
pub const SYSCTL_A: Capture = capture!("sysctl-a.txt", "sysctl -a");
/// `uname -a`: the kernel release when neither `proc/sys` nor `sysctl -a` has it.
pub const UNAME_A: Capture = capture!("uname-a.txt", "uname -a");
/// `du -sb PATH` lines (bytes TAB path): directory sizes.
pub const DU: Capture = capture!("du.txt", "du -sb PATH");
/// `SHOW GLOBAL VARIABLES` of the running MySQL/MariaDB server.
pub const MYSQL_VARIABLES: Capture = capture!(
    "mysql-variables.tsv",
    "mysql -NB -e 'SHOW GLOBAL VARIABLES'"
);
/// `SHOW ENGINE PERFORMANCE_SCHEMA STATUS`: the Performance Schema's memory.
pub const MYSQL_PERFORMANCE_SCHEMA: Capture = capture!(
    "mysql-performance-schema.tsv",
    "mysql -NB -e 'SHOW ENGINE PERFORMANCE_SCHEMA STATUS'"
);
/// `zmlocalconfig -s`: Zimbra's localconfig, for keys localconfig.xml lacks.
pub const ZMLOCALCONFIG: Capture = capture!("zmlocalconfig.txt", "zmlocalconfig -s");
/// `tune2fs -l DEVICE` per ext2/3/4 volume, `NAME.txt` (device without `/dev/`, `/` as `_`).
pub const TUNE2FS: Capture = capture!("tune2fs/", "tune2fs -l DEVICE");
/// `dumpe2fs -h DEVICE` per ext2/3/4 volume, when there is no `tune2fs/` file.
pub const DUMPE2FS: Capture = capture!("dumpe2fs/", "dumpe2fs -h DEVICE");

/// `rpm -qa` lines of the installed MySQL/MariaDB server packages: the
/// server version when there is no runtime capture.
pub const INSTALLED_RPMS: Capture = capture!("installed-rpms", "rpm -qa");
/// Permission bits of the MySQL option and credential files (`mycnf_files`).
pub const FILE_MODES: Capture = capture!("file-modes.txt", "stat -c '%a %n' FILE...");

/// Every capture a snapshot of ours may hold (docs/snapshot-format.md).
pub const CAPTURES: &[Capture] = &[
    SYSCTL_A,
    UNAME_A,
    DU,
    TUNE2FS,
    DUMPE2FS,
    MYSQL_VARIABLES,
    MYSQL_PERFORMANCE_SCHEMA,
    INSTALLED_RPMS,
    ZMLOCALCONFIG,
    FILE_MODES,
];

/// How a namespace's values are addressed in an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Keys written dotted after the name: `sysctl.net.ipv4.tcp_tw_reuse`,
    /// `mycnf.innodb_buffer_pool_size` (or `NS["key"]`).
    Flat,
    /// Keyed by mount point, values are records: `mount["/data"].atime`.
    Record,
}

impl Shape {
    /// `flat` or `record`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Shape::Flat => "flat",
            Shape::Record => "record",
        }
    }
}

/// How a key written in a policy becomes the namespace's canonical key. The
/// facts layer maps each to its function (`facts::canonicalizer`); a facts
/// test checks every gathered namespace uses the one its row names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Canon {
    /// As written.
    Exact,
    /// sysctl keys: `/` and `.` swapped as sysctl.d(5) allows, a leading
    /// `/proc/sys/` dropped.
    SysctlKey,
    /// Option-file names: lowercase, `-` as `_`, `loose-`/`skip-`/`disable-`/
    /// `enable-` prefixes folded, a unique prefix as the option it abbreviates.
    OptionName,
    /// Server variable names: lowercase, `-` as `_`.
    VariableName,
    /// Mount points: lexically normalised absolute paths (`//data/` is `/data`).
    MountPoint,
}

impl Canon {
    /// What the canonicalisation does, in words (for the docs table).
    pub const fn describe(self) -> &'static str {
        match self {
            Canon::Exact => "as written",
            Canon::SysctlKey => "`/` and `.` swapped as sysctl.d(5) allows, `/proc/sys/` dropped",
            Canon::OptionName => {
                "lowercase, `-` as `_`, `loose-`/`skip-`/`disable-`/`enable-` folded, unique prefixes expanded"
            }
            Canon::VariableName => "lowercase, `-` as `_`",
            Canon::MountPoint => "lexically normalised mount point",
        }
    }
}

/// One settings namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceSpec {
    /// The name policies write (`sysctl`, `mount`).
    pub name: &'static str,
    /// Flat keys or records.
    pub shape: Shape,
    /// How keys are canonicalised.
    pub canon: Canon,
    /// What a missing key means (the facts reader may add host detail).
    pub absent: &'static str,
    /// Captures that feed it in a snapshot (besides the host's own files).
    pub captures: &'static [Capture],
    /// The domain its rules count towards in coverage (`sysctl`, `mysql`,
    /// `zimbra`, `storage`), as `facts::presence::Domain::as_str` spells it.
    pub domain: &'static str,
    /// One line: where the values come from.
    pub description: &'static str,
}

/// Every settings namespace, in docs order.
pub const NAMESPACES: &[NamespaceSpec] = &[
    NamespaceSpec {
        name: "sysctl",
        shape: Shape::Flat,
        canon: Canon::SysctlKey,
        absent: "the running kernel has no such key (removed, not yet added, or its module is not loaded)",
        captures: &[SYSCTL_A],
        domain: "sysctl",
        description: "live kernel values (`/proc/sys`, or `sysctl -a` in a snapshot)",
    },
    NamespaceSpec {
        name: "sysctl_boot",
        shape: Shape::Flat,
        canon: Canon::SysctlKey,
        absent: "no sysctl configuration file sets this key",
        captures: &[],
        domain: "sysctl",
        description: "what the next boot applies (the init's applier: systemd-sysctl, or procps `sysctl --system` under sysvinit or OpenRC, nothing in a container without an init; then an enabled ufw and TuneD), with file and line",
    },
    NamespaceSpec {
        name: "sysctl_procps",
        shape: Shape::Flat,
        canon: Canon::SysctlKey,
        absent: "no sysctl configuration file sets this key",
        captures: &[],
        domain: "sysctl",
        description: "what procps `sysctl --system` would apply, with file and line",
    },
    NamespaceSpec {
        name: "sysctl_sides",
        shape: Shape::Flat,
        canon: Canon::SysctlKey,
        absent: "neither the running kernel nor a sysctl file is known to have this key",
        captures: &[],
        domain: "sysctl",
        description: "one clause per key saying what the next start gives it, in the words of the init that is there (\"the next boot applies 1 (/etc/sysctl.d/60-x.conf:3)\"; in a container without an init \"nothing on this host applies sysctl files when it starts ..., so only the running value is judged\"; the unknown and its reason where the init is not recorded and the inits disagree)",
    },
    NamespaceSpec {
        name: "mycnf",
        shape: Shape::Flat,
        canon: Canon::OptionName,
        absent: "no option file the server reads sets this option: the compiled-in default applies",
        captures: &[MYSQL_VARIABLES, INSTALLED_RPMS],
        domain: "mysql",
        description: "what the MySQL/MariaDB option files configure for the server, with file and line",
    },
    NamespaceSpec {
        name: "mycnf_effective",
        shape: Shape::Flat,
        canon: Canon::OptionName,
        absent: "not set in any option file: the server's compiled-in default applies",
        captures: &[MYSQL_VARIABLES, INSTALLED_RPMS],
        domain: "mysql",
        description: "`mycnf` as the server will run it: clamped and rounded by the version's option table",
    },
    NamespaceSpec {
        name: "mysql",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "the running server has no such variable (another version, or a plugin that is not loaded)",
        captures: &[MYSQL_VARIABLES],
        domain: "mysql",
        description: "the running server's global variables; unknown without the capture",
    },
    NamespaceSpec {
        name: "mycnf_files",
        shape: Shape::Record,
        canon: Canon::MountPoint,
        absent: "the server reads no such option file, and it is not a client credential file driftaudit looks for",
        captures: &[FILE_MODES],
        domain: "mysql",
        description: "each option file the server reads, `/etc/mysql/debian.cnf` and `/root/.my.cnf`: whether it holds a secret and its permission bits",
    },
    NamespaceSpec {
        name: "mysql_sizing",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "this server version has no such variable (removed, not yet added, or another product's)",
        captures: &[MYSQL_VARIABLES, MYSQL_PERFORMANCE_SCHEMA],
        domain: "mysql",
        description: "MySQLTuner's sizing variables as the server runs them: option files, else the running value, else the version's compiled default; `innodb_redo_log_size`, `performance_schema_memory`",
    },
    NamespaceSpec {
        name: "mysql_next",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "not set in any option file, and driftaudit knows no compiled default of this version for it (or the version has no such variable): the rule states the default it assumes",
        captures: &[MYSQL_VARIABLES, INSTALLED_RPMS],
        domain: "mysql",
        description: "what the next start applies: the option files' value as the server runs it; for a variable derived from one a file sets, read only at start, or lowered at start, what the server got at its start; else the version's compiled default, noted (never a running value a restart discards); `innodb_redo_log_size`",
    },
    NamespaceSpec {
        name: "mysql_running",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "the running server has no such variable (another version, or a plugin that is not loaded)",
        captures: &[MYSQL_VARIABLES],
        domain: "mysql",
        description: "the running server's global variables and its `innodb_redo_log_size`; unknown without the capture (guard with `mysql_captured`)",
    },
    NamespaceSpec {
        name: "mysql_sides",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "neither the next start nor the running server is known to have this variable",
        captures: &[MYSQL_VARIABLES],
        domain: "mysql",
        description: "one clause per variable on its running value against `mysql_next` (\"the running server runs OFF until the next restart, which applies ON\"), or that the running server is not captured",
    },
    NamespaceSpec {
        name: "mysql_roles",
        shape: Shape::Flat,
        canon: Canon::VariableName,
        absent: "no line shows the role either way (for `galera`: no wsrep_on in the capture or the option files), or driftaudit infers no such role",
        captures: &[MYSQL_VARIABLES],
        domain: "mysql",
        description: "the roles inferred for the server, each a short `yes, inferred from ...` or `no: ...` with the lines it was read from: `galera` (wsrep_on with a provider, running or in the option files)",
    },
    NamespaceSpec {
        name: "fstab",
        shape: Shape::Record,
        canon: Canon::MountPoint,
        absent: "/etc/fstab has no entry for this mount point",
        captures: &[],
        domain: "storage",
        description: "/etc/fstab entries by mount point, with file and line",
    },
    NamespaceSpec {
        name: "mount",
        shape: Shape::Record,
        canon: Canon::MountPoint,
        absent: "nothing is mounted on this mount point now",
        captures: &[],
        domain: "storage",
        description: "live mounts from /proc/self/mountinfo (or /proc/mounts), with line",
    },
    NamespaceSpec {
        name: "ext4",
        shape: Shape::Record,
        canon: Canon::MountPoint,
        absent: "no ext2/3/4 filesystem is mounted or listed in /etc/fstab on this mount point",
        captures: &[TUNE2FS, DUMPE2FS],
        domain: "storage",
        description: "ext2/3/4 superblock layout per mount point (`tune2fs -l`, `dumpe2fs -h` or the live device)",
    },
    NamespaceSpec {
        name: "localconfig",
        shape: Shape::Flat,
        canon: Canon::Exact,
        absent: "not set in /opt/zimbra/conf/localconfig.xml and no compiled default known to driftaudit (Zimbra treats it as null)",
        captures: &[ZMLOCALCONFIG],
        domain: "zimbra",
        description: "Zimbra localconfig.xml over the compiled defaults, `${key}` expanded, secrets redacted",
    },
    NamespaceSpec {
        name: "zimbra_mycnf",
        shape: Shape::Flat,
        canon: Canon::OptionName,
        absent: "no option file the server reads sets this option: the compiled-in default applies",
        captures: &[],
        domain: "zimbra",
        description: "Zimbra's own MariaDB option file (`${mysql_mycnf}`), read as its server reads it",
    },
];

/// One host fact usable by name in expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactSpec {
    /// The name (`mem_total`).
    pub name: &'static str,
    /// Its type (`size`, `number`, `string`, `boolean`).
    pub kind: &'static str,
    /// Captures that can decide it in a snapshot.
    pub captures: &'static [Capture],
    /// The domain it belongs to, if any (`mysql` for `mysql_version`).
    pub domain: Option<&'static str>,
    /// One line: what it is and where it comes from.
    pub description: &'static str,
}

/// Every host fact, in docs order.
pub const FACTS: &[FactSpec] = &[
    FactSpec {
        name: "mem_total",
        kind: "size",
        captures: &[],
        domain: None,
        description: "MemTotal of /proc/meminfo, in bytes",
    },
    FactSpec {
        name: "cpu_count",
        kind: "number",
        captures: &[],
        domain: None,
        description: "`processor` lines of /proc/cpuinfo (live: available parallelism)",
    },
    FactSpec {
        name: "kernel_release",
        kind: "string",
        captures: &[SYSCTL_A, UNAME_A],
        domain: None,
        description:
            "/proc/sys/kernel/osrelease, else `kernel.osrelease` of `sysctl -a`, else `uname -a`",
    },
    FactSpec {
        name: "os_id",
        kind: "string",
        captures: &[],
        domain: None,
        description: "`ID` of /etc/os-release (else /usr/lib/os-release): `debian`, `rhel`",
    },
    FactSpec {
        name: "os_version",
        kind: "string",
        captures: &[],
        domain: None,
        description: "`VERSION_ID` of /etc/os-release",
    },
    FactSpec {
        name: "os_name",
        kind: "string",
        captures: &[],
        domain: None,
        description: "`PRETTY_NAME` of /etc/os-release",
    },
    FactSpec {
        name: "os_like",
        kind: "string",
        captures: &[],
        domain: None,
        description: "`ID_LIKE` of /etc/os-release (`rhel fedora`); absent when the file has none",
    },
    FactSpec {
        name: "hostname",
        kind: "string",
        captures: &[],
        domain: None,
        description: "the host's name, as the report shows it",
    },
    FactSpec {
        name: "init_system",
        kind: "string",
        captures: &[],
        domain: None,
        description: "the init system learned from /proc/1/comm and /run/systemd/system or /run/openrc: `systemd`, `sysvinit`, `openrc`, `none` (a container without an init); unknown in a snapshot that does not record PID 1",
    },
    FactSpec {
        name: "sysctl_at_boot",
        kind: "string",
        captures: &[],
        domain: Some("sysctl"),
        description: "in words, what applies the persisted sysctl files at the next start and from what evidence (systemd-sysctl, procps `sysctl --system` run by sysvinit's or OpenRC's script, or nothing)",
    },
    FactSpec {
        name: "sysctl_applied_at_boot",
        kind: "boolean",
        captures: &[],
        domain: Some("sysctl"),
        description: "whether anything applies the persisted sysctl files at the next start (false in a container without an init); unknown where the snapshot does not record the init",
    },
    FactSpec {
        name: "sysctl_persist_note",
        kind: "string",
        captures: &[],
        domain: Some("sysctl"),
        description: "a sentence for a fix that persists a kernel parameter: empty where an init applies sysctl files at boot; in a container without an init, that no file is applied when it starts and where the value comes from instead (the host, the container runtime)",
    },
    FactSpec {
        name: "sysctl_may_apply_at_boot",
        kind: "boolean",
        captures: &[],
        domain: Some("sysctl"),
        description: "false only where it is known that nothing applies the persisted sysctl files at the next start (a container without an init); with the init unknown it is true, and `sysctl_boot` holds only the values every init gives alike (the others are unknown)",
    },
    FactSpec {
        name: "dev_shm_at_boot",
        kind: "string",
        captures: &[],
        domain: None,
        description: "in words, who mounts /dev/shm at the next start when /etc/fstab does not name it, and with which options",
    },
    FactSpec {
        name: "dev_shm_mounted_at_boot",
        kind: "boolean",
        captures: &[],
        domain: None,
        description: "whether the host's init mounts /dev/shm at the next start (false in a container without an init, whose runtime mounts it); unknown where the snapshot does not record the init",
    },
    FactSpec {
        name: "dev_shm_boot_options",
        kind: "list",
        captures: &[],
        domain: None,
        description: "the options the init mounts /dev/shm with when /etc/fstab does not name it (`nosuid`, `nodev`, ...); unknown where nothing on the host mounts it (a container) or the init is not recorded",
    },
    FactSpec {
        name: "dev_shm_boot_options_every_init",
        kind: "list",
        captures: &[],
        domain: None,
        description: "the options every init driftaudit knows mounts /dev/shm with (`nosuid`, `nodev`): one of them the running mount has is there after the next start whatever the init, so a rule can decide it where the init is not recorded",
    },
    FactSpec {
        name: "routes_inferred",
        kind: "boolean",
        captures: &[],
        domain: None,
        description: "the host routes on purpose: `net.ipv4.ip_forward = 1` in an /etc or /run sysctl file, or Docker, containerd, Podman, Kubernetes, libvirt, CRI-O or WireGuard installed (a snapshot that does not show those paths counts what it shows, and `routes_evidence` says so)",
    },
    FactSpec {
        name: "routes_evidence",
        kind: "string",
        captures: &[],
        domain: None,
        description: "in words, what `routes_inferred` was decided from",
    },
    FactSpec {
        name: "slaac_interfaces",
        kind: "list",
        captures: &[],
        domain: None,
        description: "interfaces whose IPv6 comes from router advertisements, named as the sysctl keys spell them: systemd-networkd (`IPv6AcceptRA=` or its default), NetworkManager (`[ipv6] method=auto`, its default), netplan (by renderer), ifupdown (`inet6 auto`/`dhcp`, `accept_ra`, with its sources), or a global address in /proc/net/if_inet6 that is not permanent (docs/coverage.md, \"Roles and the init system\")",
    },
    FactSpec {
        name: "slaac_evidence",
        kind: "string",
        captures: &[],
        domain: None,
        description: "in words, what `slaac_interfaces` was decided from",
    },
    FactSpec {
        name: "mysql_version",
        kind: "string",
        captures: &[MYSQL_VARIABLES],
        domain: Some("mysql"),
        description: "the running server's `version`; unknown without the capture",
    },
    FactSpec {
        name: "mysql_captured",
        kind: "boolean",
        captures: &[MYSQL_VARIABLES],
        domain: Some("mysql"),
        description: "the running server's variables were read (`captures/mysql-variables.tsv`): rules judge the running side only then",
    },
    FactSpec {
        name: "mysql_galera",
        kind: "boolean",
        captures: &[MYSQL_VARIABLES],
        domain: Some("mysql"),
        description: "the server is a Galera cluster node: the running server reports `wsrep_on = ON` with a provider loaded, or, without that, the option files set `wsrep_on` and a `wsrep_provider` other than `none`",
    },
    FactSpec {
        name: "mysql_galera_from",
        kind: "string",
        captures: &[MYSQL_VARIABLES],
        domain: Some("mysql"),
        description: "what `mysql_galera` was inferred from, in words (the variables and their file and line)",
    },
    FactSpec {
        name: "mysql_datadir",
        kind: "string",
        captures: &[],
        domain: Some("mysql"),
        description: "`datadir` from the option files, else /var/lib/mysql",
    },
    FactSpec {
        name: "zimbra_installed",
        kind: "boolean",
        captures: &[ZMLOCALCONFIG, DU],
        domain: Some("zimbra"),
        description: "Zimbra is present (see the presence table below)",
    },
    FactSpec {
        name: "mysql_installed",
        kind: "boolean",
        captures: &[MYSQL_VARIABLES, DU],
        domain: Some("mysql"),
        description: "a MySQL/MariaDB server is present (see the presence table below)",
    },
    FactSpec {
        name: "mysql_history_root",
        kind: "string",
        captures: &[],
        domain: Some("mysql"),
        description: "what root's `~/.mysql_history` is: `/dev/null` (a link to it), `absent`, `a file`, `a link to TARGET`; unknown in a snapshot that neither holds it nor lists it as absent",
    },
    FactSpec {
        name: "storage_detected",
        kind: "boolean",
        captures: &[],
        domain: Some("storage"),
        description: "a readable, non-empty /etc/fstab or mount table",
    },
];

/// The namespace called `name`, if there is one.
pub fn namespace(name: &str) -> Option<&'static NamespaceSpec> {
    NAMESPACES.iter().find(|n| n.name == name)
}

/// The fact called `name`, if there is one.
pub fn fact(name: &str) -> Option<&'static FactSpec> {
    FACTS.iter().find(|f| f.name == name)
}

/// The domain of a namespace or fact (`mysql` for `mycnf` and
/// `mysql_version`), if it has one.
pub fn domain_of(name: &str) -> Option<&'static str> {
    match namespace(name) {
        Some(n) => Some(n.domain),
        None => fact(name).and_then(|f| f.domain),
    }
}

/// The function called `name`, if there is one.
pub fn function(name: &str) -> Option<&'static FunctionSpec> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

const fn count(shape: Shape) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < NAMESPACES.len() {
        if NAMESPACES[i].shape as u8 == shape as u8 {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn names<const N: usize>(shape: Shape) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut j) = (0, 0);
    while i < NAMESPACES.len() {
        if NAMESPACES[i].shape as u8 == shape as u8 {
            out[j] = NAMESPACES[i].name;
            j += 1;
        }
        i += 1;
    }
    out
}

const fn fact_names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = FACTS[i].name;
        i += 1;
    }
    out
}

const FLAT_ARRAY: [&str; count(Shape::Flat)] = names(Shape::Flat);
const RECORD_ARRAY: [&str; count(Shape::Record)] = names(Shape::Record);
const FACT_ARRAY: [&str; FACTS.len()] = fact_names();

/// Names of the flat namespaces, in catalogue order.
pub const FLAT_NAMESPACES: &[&str] = &FLAT_ARRAY;
/// Names of the record namespaces, in catalogue order.
pub const RECORD_NAMESPACES: &[&str] = &RECORD_ARRAY;
/// Names of the host facts, in catalogue order.
pub const FACT_NAMES: &[&str] = &FACT_ARRAY;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn capture_list(c: &[Capture]) -> String {
    if c.is_empty() {
        return "-".into();
    }
    c.iter()
        .map(|c| format!("`{}`", c.path.trim_start_matches('/')))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The namespace table of docs/policy-language.md, as Markdown.
pub fn namespaces_markdown() -> String {
    let mut s = String::from(
        "| namespace | domain | shape | keys canonicalised | a missing key means | captures | values |\n|---|---|---|---|---|---|---|\n",
    );
    for n in NAMESPACES {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} | {} |\n",
            n.name,
            n.domain,
            n.shape.as_str(),
            cell(n.canon.describe()),
            cell(n.absent),
            capture_list(n.captures),
            cell(n.description)
        ));
    }
    s
}

/// The fact table of docs/policy-language.md, as Markdown.
pub fn facts_markdown() -> String {
    let mut s = String::from("| fact | type | captures | value |\n|---|---|---|---|\n");
    for f in FACTS {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.name,
            f.kind,
            capture_list(f.captures),
            cell(f.description)
        ));
    }
    s
}

/// The function table of docs/policy-language.md, as Markdown.
pub fn functions_markdown() -> String {
    let mut s = String::from("| function | returns |\n|---|---|\n");
    for f in FUNCTIONS {
        s.push_str(&format!(
            "| `{}` | {} |\n",
            f.signature,
            cell(f.description)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_listed_once() {
        let mut all: Vec<&str> = NAMESPACES.iter().map(|n| n.name).collect();
        all.extend(FACTS.iter().map(|f| f.name));
        all.extend(FUNCTIONS.iter().map(|f| f.name));
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "a name is in the catalogue twice");
    }

    #[test]
    fn shape_lists_follow_the_table() {
        let flat: Vec<&str> = NAMESPACES
            .iter()
            .filter(|n| n.shape == Shape::Flat)
            .map(|n| n.name)
            .collect();
        assert_eq!(FLAT_NAMESPACES, flat.as_slice());
        assert!(RECORD_NAMESPACES.contains(&"mount"));
        assert_eq!(
            FLAT_NAMESPACES.len() + RECORD_NAMESPACES.len(),
            NAMESPACES.len()
        );
        assert_eq!(FACT_NAMES.len(), FACTS.len());
        assert_eq!(FACT_NAMES[0], FACTS[0].name);
    }

    #[test]
    fn capture_paths_are_under_captures_and_signatures_name_the_function() {
        for c in CAPTURES {
            assert_eq!(c.path, format!("/captures/{}", c.name));
        }
        for f in FUNCTIONS {
            assert!(
                f.signature.starts_with(&format!("{}(", f.name)),
                "{}",
                f.signature
            );
            assert!(f.min_args >= 1 && f.min_args <= f.max_args);
        }
    }
}
