//! `driftaudit baseline`: a policy that pins a known-good ("golden") host's
//! effective values, one `for_each` rule per namespace over a list
//! parameter of `{key, value}` items (docs/policy-language.md, "Baselines"),
//! and per closed configuration namespace one `for_each` over its keys
//! whose `where:` leaves out the pins and the `NS_open` globs, so a setting
//! the golden host lacks fails as "not on the golden host".
//! Reads the host through the facts readers, leaves out volatile keys (a
//! documented default list) and secrets (never written, not even in a
//! note), writes every value through `serde_json` (valid YAML flow, so `yes`,
//! `0x10` or `: x` stay strings) and proves the result: the generated policy
//! is loaded and audited against the golden host itself, and a pin that
//! does not pass there is left out with the reason. Must not print or write
//! files (the CLI does) and never puts a secret value in a pin or an error.
//!
//! The folder: this file (options, the pins and what is left out, the
//! choice of keys), `yaml` (the policy text) and `prove` (the proof).

mod prove;
mod yaml;

use prove::*;
use yaml::*;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::facts::{self, Entry, Facts, Needs};
use crate::host::{Host, SourceKind};
use crate::policy::PolicySet;
use crate::report::Status;
use crate::secret::{self, Format, REDACTED};
use crate::value::{format_number, Value};

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
const PINNABLE: &[(&str, Option<Format>)] = &[
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
const PER_INTERFACE: &[&str] = &[
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

/// The text a value is pinned as when the golden host's own spelling does
/// not read back ([`golden_spelling`]): what the engine's comparison
/// (`Value::loosely_equals`) finds equal to the value read, sizes in bytes,
/// booleans as ON/OFF, numbers in full precision, lists space-separated.
fn pin_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) | Value::Size(n) => {
            if n.fract() == 0.0 && n.abs() < 1e18 {
                Some(format_number(*n))
            } else if n.is_finite() {
                Some(format!("{n}"))
            } else {
                None
            }
        }
        Value::Bool(_) | Value::Str(_) => Some(v.to_plain()),
        Value::List(items) => items
            .iter()
            .map(pin_text)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(" ")),
        Value::Record(_) => None,
    }
}

/// The golden host's own text for a value (`10G`, not `10737418240`), when
/// it reads back equal under the engine's comparison; `None` when it does
/// not (quoted text, a boolean written as a bare option name), and the
/// value is pinned as [`pin_text`] writes it.
fn golden_spelling(v: &Value, raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || matches!(v, Value::Record(_)) {
        return None;
    }
    v.loosely_equals(&Value::Str(raw.to_string()))
        .then(|| raw.to_string())
}

fn globs(flag: &'static str, gs: &[String]) -> Result<Vec<glob::Pattern>, BaselineError> {
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

fn matches(ps: &[glob::Pattern], ns: &str, key: &str) -> bool {
    let qualified = format!("{ns}.{key}");
    ps.iter().any(|p| p.matches(key) || p.matches(&qualified))
}

/// `captured TIME` as `snapshot.json` records it, `read live TIME` for the
/// live host, else that the time is unknown.
fn captured_at(host: &Host) -> String {
    if host.kind() == SourceKind::Live {
        return format!("read live {}", crate::snapshot::rfc3339_now());
    }
    host.read_to_string("/snapshot.json")
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("captured_at")?.as_str().map(str::to_string))
        .filter(|s| !s.is_empty())
        .map(|t| format!("captured {t}"))
        .unwrap_or_else(|| "capture time unknown, no snapshot.json".into())
}

/// A mount point's options are pinned only when none carries a secret.
fn options_secret(opts: &Value) -> bool {
    let Value::List(items) = opts else {
        return false;
    };
    items.iter().any(|o| {
        let t = o.to_plain();
        let (n, v) = t
            .split_once('=')
            .map_or((t.as_str(), None), |(n, v)| (n, Some(v)));
        t.contains(REDACTED) || secret::mount_option_is_secret(n, v)
    })
}

/// Read `host` and pin what `opts` select. The policy is audited against
/// `host` before it is returned; a pin that does not pass there is left out
/// with the reason.
pub fn generate(host: &Host, opts: &BaselineOptions) -> Result<Baseline, BaselineError> {
    let wanted: Vec<String> = if opts.namespaces.is_empty() {
        DEFAULT_NAMESPACES.iter().map(|s| s.to_string()).collect()
    } else {
        let mut seen = BTreeSet::new();
        let mut v = Vec::new();
        for n in &opts.namespaces {
            if !PINNABLE.iter().any(|(p, _)| p == n) {
                return Err(BaselineError::UnknownNamespace {
                    name: n.clone(),
                    known: PINNABLE
                        .iter()
                        .map(|(p, _)| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            if seen.insert(n.clone()) {
                v.push(n.clone());
            }
        }
        v
    };
    for n in &opts.open {
        if !PINNABLE.iter().any(|(p, _)| p == n) {
            return Err(BaselineError::UnknownNamespace {
                name: n.clone(),
                known: PINNABLE
                    .iter()
                    .map(|(p, _)| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let keys = globs("--keys", &opts.keys)?;
    let ignore = globs("--ignore", &opts.ignore)?;
    let volatile: Vec<glob::Pattern> = if opts.no_default_ignore {
        Vec::new()
    } else {
        DEFAULT_IGNORE
            .iter()
            .map(|(g, _)| glob::Pattern::new(g).expect("default ignore globs parse"))
            .collect()
    };
    let needs = Needs {
        namespaces: wanted.iter().cloned().collect(),
        ..Needs::default()
    };
    let facts = facts::gather(host, &needs);
    let name = host.name().to_string();
    let captured = captured_at(host);
    let policy = policy_id(&name);

    let mut pins = Vec::new();
    let mut empty = Vec::new();
    let mut left_out = Vec::new();
    let mut volatile_count = 0;
    for ns in &wanted {
        let format = PINNABLE.iter().find(|(p, _)| p == ns).and_then(|(_, f)| *f);
        let got = pick(
            &facts,
            ns,
            format,
            (&keys, &ignore, &volatile),
            &mut left_out,
            &mut volatile_count,
        );
        match got {
            Ok(p) if p.is_empty() => empty.push((
                ns.clone(),
                if opts.keys.is_empty() && opts.ignore.is_empty() {
                    "no value set here".into()
                } else {
                    "no value left after --keys and --ignore".into()
                },
            )),
            Ok(p) => pins.push((ns.clone(), p)),
            Err(why) => empty.push((ns.clone(), why)),
        }
    }
    let closed = wanted
        .iter()
        .filter(|ns| CLOSED_NAMESPACES.contains(&ns.as_str()) && !opts.open.contains(ns))
        .filter_map(|ns| {
            let p = pins.iter().find(|(n, _)| n == ns)?;
            Some((ns.clone(), open_globs(ns, &p.1, opts)))
        })
        .collect();
    let mut b = Baseline {
        host: name,
        captured,
        policy_id: policy,
        pins,
        empty,
        left_out,
        volatile: volatile_count,
        closed,
        yaml: String::new(),
    };
    b.yaml = render(&b);
    prove(&mut b, host)?;
    b.left_out.sort();
    b.yaml = render(&b);
    verify(&b)?;
    Ok(b)
}

/// A baseline of `pins` (per namespace) for a golden host named `host`,
/// without reading a host: the same filtering of keys and values a pin
/// cannot hold ([`unpinnable`], glob keys), the same writer, the same
/// closed world (default options) and the same read-back check as
/// [`generate`], but no audit of the golden host. For tests of the writer.
pub fn from_pins(
    host: &str,
    captured: &str,
    pins: Vec<(String, Vec<Pin>)>,
) -> Result<Baseline, BaselineError> {
    let mut left_out = Vec::new();
    let mut kept = Vec::new();
    for (ns, list) in pins {
        let mut out: Vec<Pin> = Vec::new();
        for p in list {
            let why = unpinnable(&p.key)
                .or_else(|| unpinnable(&p.value))
                .or_else(|| {
                    p.key
                        .contains(['*', '?', '['])
                        .then_some("a glob key: it names no one setting")
                })
                .or_else(|| {
                    out.iter()
                        .any(|o| o.key == p.key)
                        .then_some("a second value of one key")
                });
            match why {
                Some(reason) => left_out.push(LeftOut {
                    namespace: ns.clone(),
                    key: p.key,
                    reason: reason.into(),
                }),
                None => out.push(p),
            }
        }
        if !out.is_empty() {
            kept.push((ns, out));
        }
    }
    let opts = BaselineOptions::default();
    let closed = kept
        .iter()
        .filter(|(ns, _)| CLOSED_NAMESPACES.contains(&ns.as_str()))
        .map(|(ns, p)| (ns.clone(), open_globs(ns, p, &opts)))
        .collect();
    left_out.sort();
    let mut b = Baseline {
        host: host.to_string(),
        captured: captured.to_string(),
        policy_id: policy_id(host),
        pins: kept,
        empty: Vec::new(),
        left_out,
        volatile: 0,
        closed,
        yaml: String::new(),
    };
    b.yaml = render(&b);
    verify(&b)?;
    Ok(b)
}

type Filters<'a> = (
    &'a [glob::Pattern],
    &'a [glob::Pattern],
    &'a [glob::Pattern],
);

fn pick(
    facts: &Facts,
    ns: &str,
    format: Option<Format>,
    (keys, ignore, volatile): Filters,
    left_out: &mut Vec<LeftOut>,
    volatile_count: &mut usize,
) -> Result<Vec<Pin>, String> {
    let Some(space) = facts.namespaces.get(ns) else {
        return Err("not gathered on this host".into());
    };
    if let Some(reason) = &space.unavailable {
        return Err(reason.clone());
    }
    let record = format.is_none();
    let mut out = Vec::new();
    let mut leave = |key: &str, reason: &str| {
        left_out.push(LeftOut {
            namespace: ns.to_string(),
            key: key.to_string(),
            reason: reason.to_string(),
        })
    };
    for (key, entry) in &space.entries {
        if !keys.is_empty() && !matches(keys, ns, key) {
            continue;
        }
        if matches(ignore, ns, key) {
            continue;
        }
        if matches(volatile, ns, key) {
            *volatile_count += 1;
            continue;
        }
        if let Some(f) = format {
            if secret::is_secret(f, key) {
                leave(key, "secret: its value is never written");
                continue;
            }
        }
        if key.contains(['*', '?', '[']) {
            leave(key, "a glob key: it names no one setting");
            continue;
        }
        if record && !key.starts_with('/') {
            leave(key, "not a mount point (swap or a pseudo entry)");
            continue;
        }
        let setting = match entry {
            Entry::Set(s) => s,
            Entry::Unreadable { .. } => {
                leave(
                    key,
                    "unknown on the golden host (unreadable, or not in its snapshot)",
                );
                continue;
            }
        };
        let value = if record {
            let Value::Record(r) = &setting.value else {
                leave(key, "not a record");
                continue;
            };
            let Some(opts) = r.get("options") else {
                leave(key, "no options field");
                continue;
            };
            if options_secret(opts) {
                leave(key, "an option carries a secret: never written");
                continue;
            }
            match opts {
                Value::List(items) => Some(
                    items
                        .iter()
                        .map(Value::to_plain)
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                other => pin_text(other),
            }
        } else {
            if setting.raw.contains(REDACTED) || setting.value.to_plain().contains(REDACTED) {
                leave(key, "secret: its value is never written");
                continue;
            }
            golden_spelling(&setting.value, &setting.raw).or_else(|| pin_text(&setting.value))
        };
        if let Some(why) = unpinnable(key).or_else(|| value.as_deref().and_then(unpinnable)) {
            leave(key, why);
            continue;
        }
        match value {
            Some(value) => out.push(Pin {
                key: key.clone(),
                value,
            }),
            None => leave(key, "a value a pin cannot hold"),
        }
    }
    Ok(out)
}

/// Why a key or value is not pinned though it could be written: `${`,
/// which a policy reads as a reference, and control characters (C0 but
/// TAB, DEL, C1), which no reviewer reads in a policy and no check output
/// shows as they are. `None`: it is pinned.
pub fn unpinnable(s: &str) -> Option<&'static str> {
    if s.contains("${") {
        return Some("holds `$` then `{`, which a policy reads as a reference: not pinned");
    }
    if s.chars().any(|c| c != '\t' && c.is_control()) {
        return Some("holds a control character (a newline, ESC, DEL, ...): not pinned");
    }
    None
}

/// The rule id of a closed namespace's "not on the golden host" rule.
pub fn added_rule_id(policy: &str, ns: &str) -> String {
    format!("{}-added", rule_id(policy, ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_ids_are_sanitised_host_names() {
        assert_eq!(policy_id("db1"), "baseline-db1");
        assert_eq!(policy_id("Mail.Example.COM"), "baseline-mail-example-com");
        assert_eq!(policy_id("--web_01--"), "baseline-web-01");
        assert_eq!(policy_id("ü"), "baseline-host");
        assert_eq!(
            rule_id("baseline-db1", "sysctl_boot"),
            "baseline-db1.sysctl-boot"
        );
    }

    #[test]
    fn pinned_text_reads_back_equal_under_the_engines_comparison() {
        let cases = [
            Value::Size(2147483648.0),
            Value::Number(0.123456789),
            Value::Number(10.0),
            Value::Bool(true),
            Value::Str("yes".into()),
            Value::Str("32768\t60999".into()),
            Value::List(vec![Value::Number(32768.0), Value::Number(60999.0)]),
        ];
        for v in cases {
            let t = pin_text(&v).unwrap();
            assert!(v.loosely_equals(&Value::Str(t.clone())), "{v:?} as {t:?}");
        }
        assert_eq!(
            pin_text(&Value::Number(0.123456789)).unwrap(),
            "0.123456789"
        );
    }

    #[test]
    fn a_key_name_with_a_newline_adds_no_yaml_and_every_character_reads_back() {
        let hostile = "x\noverrides:\n  - {rule: \"*\", severity: info}";
        let odd = "a\u{7f}b\u{85}c\u{2028}d\u{feff}e\u{ffff}f\u{1b}[31m\r\\\"";
        let b = Baseline {
            host: "h\nrules: []".into(),
            captured: "now".into(),
            policy_id: "baseline-h".into(),
            pins: vec![(
                "localconfig".into(),
                vec![Pin {
                    key: odd.into(),
                    value: odd.into(),
                }],
            )],
            empty: vec![],
            left_out: vec![LeftOut {
                namespace: "localconfig".into(),
                key: hostile.into(),
                reason: "r".into(),
            }],
            volatile: 0,
            closed: BTreeMap::new(),
            yaml: String::new(),
        };
        let y = render(&b);
        let v: serde_json::Value =
            serde_saphyr::from_str(&y).unwrap_or_else(|e| panic!("{e}\n{y}"));
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert!(v.get("overrides").is_none(), "{keys:?}\n{y}");
        let pin = &v["params"]["localconfig"][0];
        assert_eq!(pin["key"], odd, "{y}");
        assert_eq!(pin["value"], odd, "{y}");
    }

    #[test]
    fn quoting_keeps_yaml_specials_strings() {
        for s in [
            "yes", "0x10", "1e3", ": x", "# c", "a\tb", "\"q\"", "null", "~",
        ] {
            let yaml = format!("v: {}\n", q(s));
            let back: BTreeMap<String, String> = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(back["v"], s, "{yaml}");
        }
    }
}
