//! What a baseline is: its options and defaults (the namespaces it pins,
//! the keys it ignores), the pins and what is left out, the error, and the
//! ids it gives its policy and rules. Data and names only: must not read
//! the host or write the policy text.

use std::collections::BTreeMap;

use crate::secret::Format;

/// The namespaces a baseline pins without `--namespace`: what an admin
/// means by a host's configuration, each as the software will apply it.
/// `sysctl_boot` rather than the running `sysctl`: the running kernel holds
/// ~1000 values that scale with RAM, CPUs and interfaces, and a running
/// value that differs from the configured one is `linux-sysctl`'s
/// `sysctl.persisted-drift`; `mycnf_effective` (mysqld's options as it will
/// run them) and `zimbra_mycnf` (Zimbra's own MariaDB option file);
/// `localconfig` (Zimbra); `fstab` (the options each mount point is given
/// at boot).
pub const DEFAULT_NAMESPACES: &[&str] = &[
    "sysctl_boot",
    "mycnf_effective",
    "zimbra_mycnf",
    "localconfig",
    "fstab",
];

/// Every namespace a baseline can pin, with the secret classification its
/// keys go through (`None` for mount points, whose options are checked one
/// by one).
pub(super) const PINNABLE: &[(&str, Option<Format>)] = &[
    ("sysctl_boot", Some(Format::Sysctl)),
    ("sysctl", Some(Format::Sysctl)),
    ("sysctl_procps", Some(Format::Sysctl)),
    ("mycnf_effective", Some(Format::OptionFile)),
    ("mycnf", Some(Format::OptionFile)),
    ("zimbra_mycnf", Some(Format::OptionFile)),
    ("mysql", Some(Format::ServerVariable)),
    ("localconfig", Some(Format::Localconfig)),
    ("fstab", None),
    ("mount", None),
];

/// Keys left out unless `--no-default-ignore`: values that change on their
/// own (counters, random values, per-boot ids) or that name the host itself,
/// so a baseline never fails a host for being another host or for time
/// passing. Globs over the key, as `--ignore` takes them.
pub const DEFAULT_IGNORE: &[(&str, &str)] = &[
    (
        "kernel.random.*",
        "random values and entropy counters, new on every read or boot",
    ),
    ("fs.dentry-state", "dentry cache counters"),
    ("fs.inode-nr", "inode counters"),
    ("fs.inode-state", "inode counters"),
    ("fs.file-nr", "open file handle counters"),
    ("fs.aio-nr", "asynchronous I/O requests in flight"),
    ("fs.quota.*", "quota statistics"),
    ("kernel.ns_last_pid", "the last process id handed out"),
    ("kernel.pty.nr", "pseudo-terminals in use"),
    (
        "kernel.tainted",
        "what has been loaded since boot, not configuration",
    ),
    ("kernel.sched_domain.*", "per-CPU scheduler topology"),
    (
        "net.netfilter.nf_conntrack_count",
        "connections being tracked now",
    ),
    ("dev.cdrom.info", "the state of the drive"),
    ("vm.stat_refresh", "write-only trigger"),
    ("*.stable_secret", "IPv6 address key material (secret)"),
    (
        "net.ipv4.tcp_fastopen_key",
        "TCP Fast Open key material (secret)",
    ),
    ("kernel.hostname", "each host's own name"),
    ("kernel.domainname", "each host's own NIS domain"),
    (
        "kernel.osrelease",
        "the running kernel's release, not configuration",
    ),
    (
        "kernel.version",
        "the running kernel's build, not configuration",
    ),
    ("server_id", "MySQL/MariaDB replication: unique per server"),
    (
        "report_host",
        "MySQL/MariaDB replication: this server's own name",
    ),
    ("wsrep_node_name", "Galera: this node's own name"),
    ("wsrep_node_address", "Galera: this node's own address"),
    (
        "wsrep_node_incoming_address",
        "Galera: this node's own address",
    ),
    (
        "wsrep_sst_receive_address",
        "Galera: this node's own address",
    ),
    ("zimbra_server_hostname", "Zimbra: this server's own name"),
    ("/run/user/*", "a login session's runtime directory"),
];

/// What to pin.
#[derive(Debug, Clone, Default)]
pub struct BaselineOptions {
    /// Namespaces (empty: [`DEFAULT_NAMESPACES`]).
    pub namespaces: Vec<String>,
    /// Only keys matching one of these globs (over `KEY` or `NS.KEY`).
    pub keys: Vec<String>,
    /// Leave out keys matching these globs (over `KEY` or `NS.KEY`).
    pub ignore: Vec<String>,
    /// Do not apply [`DEFAULT_IGNORE`].
    pub no_default_ignore: bool,
    /// Configuration namespaces left out of the closed world (`--open`): a
    /// setting the checked host has and the golden host lacks is not judged.
    pub open: Vec<String>,
}

/// The configuration namespaces a baseline closes by default: a setting a
/// checked host has there and the golden host lacks fails ("not on the
/// golden host"). The running `sysctl`, `mysql` and `mount` hold what the
/// kernel and server report whatever the configuration says (a thousand
/// kernel values, every server variable), so they stay open.
pub const CLOSED_NAMESPACES: &[&str] = &[
    "sysctl_boot",
    "sysctl_procps",
    "mycnf_effective",
    "mycnf",
    "zimbra_mycnf",
    "localconfig",
    "fstab",
];

/// Per-interface sysctl key families: `PREFIX.IFACE.KEY`. A checked host's
/// key of an interface the golden host has no key of is not judged as
/// added (interface names differ between hosts: `eth0`, `ens3`), except
/// for `all` and `default`, which every host has.
pub(super) const PER_INTERFACE: &[&str] = &[
    "net.ipv4.conf",
    "net.ipv6.conf",
    "net.ipv4.neigh",
    "net.ipv6.neigh",
];

/// Why a baseline could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// `--namespace` names something a baseline cannot pin.
    #[error("`--namespace {name}`: a baseline pins {known}")]
    UnknownNamespace {
        /// As given.
        name: String,
        /// The namespaces it can pin.
        known: String,
    },
    /// A `--keys` or `--ignore` glob does not parse.
    #[error("`{flag} {glob}`: {reason}")]
    BadGlob {
        /// `--keys` or `--ignore`.
        flag: &'static str,
        /// As given.
        glob: String,
        /// What is wrong.
        reason: String,
    },
    /// The generated policy does not load (a bug: the text is ours).
    #[error("the generated baseline does not load: {0}")]
    Load(String),
    /// The generated policy loads, but not as what was meant: read back by
    /// the policy loader, a pin, a parameter or a rule differs (a bug in
    /// the writer; nothing is written).
    #[error("the generated baseline does not read back as written: {0}; nothing was written (please report it)")]
    Mismatch(String),
}

/// One pinned value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The key as the namespace canonicalises it (a mount point for records).
    pub key: String,
    /// The value as written into the policy.
    pub value: String,
}

/// A key the golden host has that the baseline does not pin, and why
/// (never with its value).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LeftOut {
    /// Namespace.
    pub namespace: String,
    /// Key.
    pub key: String,
    /// Why.
    pub reason: String,
}

/// A generated baseline: the pins per namespace, what was left out, and the
/// policy text.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The golden host's name.
    pub host: String,
    /// `captured TIME` (`snapshot.json`), `read live TIME`, or that the
    /// time is unknown.
    pub captured: String,
    /// Policy id (`baseline-HOST`).
    pub policy_id: String,
    /// Pins per namespace, in namespace order.
    pub pins: Vec<(String, Vec<Pin>)>,
    /// Namespaces asked for that the golden host has nothing in, and why.
    pub empty: Vec<(String, String)>,
    /// Keys left out.
    pub left_out: Vec<LeftOut>,
    /// How many keys the default volatile list left out.
    pub volatile: usize,
    /// Per closed namespace, the globs of keys the closed world does not
    /// judge, before the namespace's left-out keys are added to them
    /// (namespaces not here are open).
    pub closed: BTreeMap<String, Vec<(String, String)>>,
    /// The policy YAML.
    pub yaml: String,
}

/// `baseline-HOST` with HOST lowercased and every run of characters other
/// than `a-z`, `0-9` turned into one `-` (`Mail.Example.COM` ->
/// `baseline-mail-example-com`): a valid, stable policy id.
pub fn policy_id(host: &str) -> String {
    let mut s = String::new();
    for c in host.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-');
    if s.is_empty() {
        "baseline-host".into()
    } else {
        format!("baseline-{s}")
    }
}

/// The rule id pinning `ns` (`baseline-db1.sysctl-boot`).
pub fn rule_id(policy: &str, ns: &str) -> String {
    format!("{policy}.{}", ns.replace('_', "-"))
}

/// The `--ignore`/`--include` globs of a flag, compiled (a bad one is
/// [`BaselineError::BadGlob`]).
pub(super) fn globs(
    flag: &'static str,
    gs: &[String],
) -> Result<Vec<glob::Pattern>, BaselineError> {
    gs.iter()
        .map(|g| {
            glob::Pattern::new(g).map_err(|e| BaselineError::BadGlob {
                flag,
                glob: g.clone(),
                reason: e.msg.to_string(),
            })
        })
        .collect()
}

/// Whether a key matches one of the globs, bare or as `NS.KEY`.
pub(super) fn matches(ps: &[glob::Pattern], ns: &str, key: &str) -> bool {
    let qualified = format!("{ns}.{key}");
    ps.iter().any(|p| p.matches(key) || p.matches(&qualified))
}

/// The rule id of a closed namespace's "not on the golden host" rule.
pub fn added_rule_id(policy: &str, ns: &str) -> String {
    format!("{}-added", rule_id(policy, ns))
}
