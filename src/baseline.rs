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

/// Read the written policy back with the policy loader and compare it
/// with what was meant, structurally: one policy of the intended id,
/// exactly the intended parameters (each pin's key and value, each open
/// glob, nothing more), exactly the intended rules in order. Data that
/// became structure, or a string that does not read back, is an error.
fn verify(b: &Baseline) -> Result<(), BaselineError> {
    let mismatch = |what: String| Err(BaselineError::Mismatch(what));
    if b.pins.is_empty() {
        // `rules: []` is no policy the loader takes: check it as YAML
        let top: serde_json::Value =
            serde_saphyr::from_str(&b.yaml).map_err(|e| BaselineError::Load(e.to_string()))?;
        let keys: BTreeSet<&str> = top
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if keys != BTreeSet::from(["policy", "title", "description", "rules"]) {
            return mismatch(format!("the top-level keys read back as {keys:?}"));
        }
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let [policy] = set.policies.as_slice() else {
        return mismatch(format!("{} policies instead of one", set.policies.len()));
    };
    if policy.id != b.policy_id {
        return mismatch(format!("the policy id reads back as `{}`", policy.id));
    }
    let mut want: BTreeMap<String, Vec<Vec<(&str, String)>>> = BTreeMap::new();
    for (ns, pins) in &b.pins {
        want.insert(
            ns.clone(),
            pins.iter()
                .map(|p| vec![("key", p.key.clone()), ("value", p.value.clone())])
                .collect(),
        );
    }
    for (ns, globs) in open_lists(b) {
        want.insert(
            format!("{ns}_open"),
            globs
                .into_iter()
                .map(|(g, why)| vec![("glob", g), ("why", why)])
                .collect(),
        );
    }
    let names: Vec<&String> = policy.params.keys().collect();
    if names != want.keys().collect::<Vec<_>>() {
        return mismatch(format!("the parameters read back as {names:?}"));
    }
    for (name, items) in &want {
        let Some(Value::List(got)) = policy.params.get(name) else {
            return mismatch(format!("the parameter `{name}` is not a list"));
        };
        if got.len() != items.len() {
            return mismatch(format!(
                "the parameter `{name}` reads back with {} items, not {}",
                got.len(),
                items.len()
            ));
        }
        for (i, (g, w)) in got.iter().zip(items).enumerate() {
            let Value::Record(m) = g else {
                return mismatch(format!("item {} of `{name}` is not a map", i + 1));
            };
            let same = m.len() == w.len()
                && w.iter()
                    .all(|(f, v)| matches!(m.get(*f), Some(Value::Str(s)) if s == v));
            if !same {
                return mismatch(format!(
                    "item {} of `{name}` does not read back as written",
                    i + 1
                ));
            }
        }
    }
    let mut rules: Vec<String> = b
        .pins
        .iter()
        .map(|(ns, _)| rule_id(&b.policy_id, ns))
        .collect();
    rules.extend(
        open_lists(b)
            .iter()
            .map(|(ns, _)| added_rule_id(&b.policy_id, ns)),
    );
    let got: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
    if got != rules.iter().map(String::as_str).collect::<Vec<_>>() {
        return mismatch(format!("the rules read back as {got:?}"));
    }
    Ok(())
}

/// A key as a glob that matches only it (`[*]` for a `*`); a leading `!`,
/// which `matches` reads as "judge again", is written `?` (such a key's
/// glob also matches any other first character).
fn exact_glob(key: &str) -> String {
    let g = no_reference(&glob::Pattern::escape(key));
    match g.strip_prefix('!') {
        Some(rest) => format!("?{rest}"),
        None => g,
    }
}

/// The globs of keys of `ns` the closed world does not judge: per-interface
/// keys of interfaces the golden host has no key of, then (with `--keys`)
/// every key those globs do not select, whatever its interface, then the
/// default ignore list and `--ignore`. The namespace's
/// left-out keys are added when the policy is written. In `matches`
/// order: the last glob that matches decides, `!GLOB` judges again.
fn open_globs(ns: &str, pins: &[Pin], opts: &BaselineOptions) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let own = |g: &str| -> Option<String> {
        match g.split_once('.') {
            Some((n, rest)) if n == ns => Some(rest.to_string()),
            Some((n, _)) if PINNABLE.iter().any(|(p, _)| *p == n) => None,
            _ => Some(g.to_string()),
        }
    };
    if ns.starts_with("sysctl") {
        let mut ifaces = BTreeSet::new();
        for p in pins {
            for fam in PER_INTERFACE {
                if let Some(rest) = p.key.strip_prefix(fam).and_then(|r| r.strip_prefix('.')) {
                    if let Some((iface, _)) = rest.split_once('.') {
                        ifaces.insert((*fam, iface.to_string()));
                    }
                }
            }
        }
        for fam in PER_INTERFACE {
            out.push((
                format!("{fam}.*"),
                "an interface the golden host has no key of (names differ between hosts)".into(),
            ));
            for iface in ["all", "default"] {
                out.push((
                    format!("!{fam}.{iface}.*"),
                    "every host has it: judged".into(),
                ));
            }
            for (_, iface) in ifaces.iter().filter(|(f, _)| f == fam) {
                if iface != "all" && iface != "default" {
                    out.push((
                        format!("!{fam}.{}.*", glob::Pattern::escape(iface)),
                        "an interface of the golden host: judged".into(),
                    ));
                }
            }
        }
    }
    if !opts.keys.is_empty() {
        out.push(("*".into(), "not selected by `--keys`".into()));
        out.extend(
            opts.keys
                .iter()
                .filter_map(|g| own(g))
                .map(|g| (format!("!{g}"), "selected by `--keys`".into())),
        );
    }
    if ns == "fstab" || ns == "mount" {
        out.push((
            "[!/]*".into(),
            "not a mount point (swap or a pseudo entry)".into(),
        ));
    }
    if !opts.no_default_ignore {
        out.extend(
            DEFAULT_IGNORE
                .iter()
                .filter(|(g, _)| ignore_applies(g, ns))
                .map(|(g, why)| (g.to_string(), why.to_string())),
        );
    }
    out.extend(
        opts.ignore
            .iter()
            .filter_map(|g| own(g))
            .map(|g| (no_reference(&g), "left out by `--ignore`".into())),
    );
    out
}

/// A glob with each `$` written `[$]`: the same keys, and no `${` that
/// the policy loader would read as a reference.
fn no_reference(glob: &str) -> String {
    glob.replace('$', "[$]")
}

/// Whether a [`DEFAULT_IGNORE`] glob can match a key of `ns`: mount points
/// in `fstab`/`mount`, `zimbra_*` in `localconfig`, dotted kernel keys in
/// the sysctl namespaces, the others (MySQL options) in the MySQL ones.
fn ignore_applies(glob: &str, ns: &str) -> bool {
    if glob.starts_with('/') {
        matches!(ns, "fstab" | "mount")
    } else if glob.starts_with("zimbra_") {
        ns == "localconfig"
    } else if glob.contains('.') {
        ns.starts_with("sysctl")
    } else {
        matches!(ns, "mycnf_effective" | "mycnf" | "zimbra_mycnf" | "mysql")
    }
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

/// A YAML double-quoted scalar, the one way a generated policy writes a
/// string: every character YAML does not print as itself (C0 and C1
/// controls, DEL, the line and paragraph separators, the BOM, U+FFFE and
/// U+FFFF) is an escape, so no value can end the scalar or the line.
fn q(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || ('\u{7f}'..='\u{9f}').contains(&c) => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Host data in a comment line: as it is when every character prints as
/// itself, else written as [`q`] writes it, so a newline in a key name
/// cannot end the comment and start YAML.
fn c(s: &str) -> String {
    let plain = s.chars().all(|ch| {
        !ch.is_control()
            && !matches!(
                ch,
                '"' | '\\' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
            )
    });
    if plain {
        s.to_string()
    } else {
        q(s)
    }
}

fn render(b: &Baseline) -> String {
    let mut y = String::new();
    let host = &b.host;
    let when = &b.captured;
    let _ = writeln!(
        y,
        "# Generated by `driftaudit baseline` (driftaudit {}) from the golden host",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(y, "# {}, {}. Check other hosts with", c(host), c(when));
    let _ = writeln!(
        y,
        "#   driftaudit check --no-builtin --policy THIS_FILE --snapshot HOST (or --fleet DIR)"
    );
    let _ = writeln!(
        y,
        "# Regenerate it when the golden host changes; docs/policy-language.md, \"Baselines\"."
    );
    if b.volatile > 0 {
        let _ = writeln!(
            y,
            "# Left out: {} volatile or host-specific key(s) (the default ignore list).",
            b.volatile
        );
    }
    for l in &b.left_out {
        let _ = writeln!(y, "# Left out: {}.{}: {}", l.namespace, c(&l.key), l.reason);
    }
    for (ns, why) in &b.empty {
        let _ = writeln!(y, "# Not pinned: {ns}: {}", c(why));
    }
    let _ = writeln!(y, "policy: {}", q(&b.policy_id));
    let _ = writeln!(y, "title: {}", q(&format!("Baseline of {host} ({when})")));
    let counts: Vec<String> = b
        .pins
        .iter()
        .map(|(ns, p)| format!("{} {ns}", p.len()))
        .collect();
    let _ = writeln!(
        y,
        "description: {}",
        q(&format!(
            "The effective configuration of the golden host {host} ({when}): {}. \
             Every host checked against it must have the same values; each value that \
             differs is one failure with both values and the file and line that set it.",
            if counts.is_empty() {
                "nothing pinned".to_string()
            } else {
                counts.join(", ")
            }
        ))
    );
    if b.pins.is_empty() {
        let _ = writeln!(y, "rules: []");
        return y;
    }
    let _ = writeln!(y, "params:");
    for (ns, pins) in &b.pins {
        let _ = writeln!(y, "  {ns}:");
        for p in pins {
            let _ = writeln!(y, "    - {{key: {}, value: {}}}", q(&p.key), q(&p.value));
        }
    }
    for (ns, globs) in open_lists(b) {
        let _ = writeln!(
            y,
            "  # keys of {ns} the golden host lacks that are not judged as added (`matches` order)"
        );
        if globs.is_empty() {
            let _ = writeln!(y, "  {ns}_open: []");
        } else {
            let _ = writeln!(y, "  {ns}_open:");
            for (g, why) in globs {
                let _ = writeln!(y, "    - {{glob: {}, why: {}}}", q(&g), q(&why));
            }
        }
    }
    let _ = writeln!(y, "rules:");
    for (ns, _) in &b.pins {
        rule(&mut y, b, ns);
    }
    for (ns, _) in open_lists(b) {
        added_rule(&mut y, b, &ns);
    }
    y
}

/// Each closed namespace that has pins, with its `NS_open` globs: the
/// options' globs, then every key of it the baseline left out.
fn open_lists(b: &Baseline) -> Vec<(String, Vec<(String, String)>)> {
    b.pins
        .iter()
        .filter_map(|(ns, _)| {
            let mut globs = b.closed.get(ns)?.clone();
            globs.extend(
                b.left_out
                    .iter()
                    .filter(|l| &l.namespace == ns)
                    .map(|l| (exact_glob(&l.key), format!("left out: {}", l.reason))),
            );
            Some((ns.clone(), globs))
        })
        .collect()
}

/// The rule id of a closed namespace's "not on the golden host" rule.
pub fn added_rule_id(policy: &str, ns: &str) -> String {
    format!("{}-added", rule_id(policy, ns))
}

/// The closed world of `ns`: every key the checked host has that the
/// golden host's pins do not name and `NS_open` does not match fails.
fn added_rule(y: &mut String, b: &Baseline, ns: &str) {
    let host = &literal(&b.host);
    let when = &literal(&b.captured);
    let record = PINNABLE.iter().any(|(p, f)| *p == ns && f.is_none());
    let what = match ns {
        "sysctl_boot" => "kernel parameter the next boot applies",
        "sysctl_procps" => "kernel parameter procps `sysctl --system` applies",
        "mycnf_effective" => "MySQL/MariaDB option the server runs with",
        "mycnf" => "MySQL/MariaDB option the option files write",
        "zimbra_mycnf" => "Zimbra MariaDB option",
        "localconfig" => "Zimbra localconfig key",
        "fstab" => "/etc/fstab mount point",
        _ => "setting",
    };
    let bind = if record { "m" } else { "k" };
    let filter = format!(
        "not contains(field(params.{ns}, \"key\"), {bind}.key) and not matches({bind}.key, field(params.{ns}_open, \"glob\"))"
    );
    let _ = writeln!(y, "  - id: {}", q(&added_rule_id(&b.policy_id, ns)));
    let _ = writeln!(
        y,
        "    title: {}",
        q(&format!("No {what} that the golden host {host} lacks"))
    );
    let _ = writeln!(y, "    severity: medium");
    let _ = writeln!(y, "    for_each:");
    if record {
        let _ = writeln!(y, "      records: {ns}");
    } else {
        let _ = writeln!(y, "      keys: {}", q(&format!("{ns}.*")));
    }
    let _ = writeln!(y, "      as: {bind}");
    let _ = writeln!(y, "      where: {}", q(&filter));
    let fix = format!(
        "Remove it (the evidence is the line that sets it); or, if this host is right, \
         regenerate the baseline from a golden host that has it, or add it to params.{ns}_open."
    );
    if record {
        let _ = writeln!(y, "    let:");
        let _ = writeln!(
            y,
            "      options: {}",
            q("default(join(m.options, \",\"), \"(none)\")")
        );
        let _ = writeln!(y, "    assert: \"false\"");
        let _ = writeln!(
            y,
            "    why: {}",
            q(&format!(
                "{{m.key}} is mounted here with the options {{options}}, but it is not on the \
                 golden host {host} ({when})."
            ))
        );
        let _ = writeln!(y, "    fix: {}", q(&format!("{{m.key}}: {fix}")));
    } else {
        let _ = writeln!(y, "    setting: {}", q(&format!("{ns}.${{k.key}}")));
        let _ = writeln!(y, "    expect: {{ absent: true }}");
        let _ = writeln!(
            y,
            "    why: {}",
            q(&format!(
                "{{setting}} is {{actual}} here ({{source}}), but it is not on the golden host \
                 {host} ({when})."
            ))
        );
        let _ = writeln!(y, "    fix: {}", q(&format!("{{setting}}: {fix}")));
    }
    let _ = writeln!(y, "    references: []");
}

/// Text pasted into a `why`/`fix` template: braces would open an
/// expression, so a hostile host name loses them.
fn literal(s: &str) -> String {
    s.chars().filter(|c| !matches!(c, '{' | '}')).collect()
}

fn rule(y: &mut String, b: &Baseline, ns: &str) {
    let host = &literal(&b.host);
    let when = &literal(&b.captured);
    let id = rule_id(&b.policy_id, ns);
    let record = PINNABLE.iter().any(|(p, f)| *p == ns && f.is_none());
    let what = match ns {
        "sysctl_boot" => "Kernel parameters the next boot applies",
        "sysctl" => "Running kernel parameters",
        "sysctl_procps" => "Kernel parameters procps `sysctl --system` applies",
        "mycnf_effective" => "MySQL/MariaDB options as the server runs them",
        "mycnf" => "MySQL/MariaDB options as the option files write them",
        "zimbra_mycnf" => "Zimbra's MariaDB options",
        "mysql" => "The running MySQL/MariaDB server's variables",
        "localconfig" => "Zimbra localconfig",
        "fstab" => "/etc/fstab mount options",
        "mount" => "Live mount options",
        _ => ns,
    };
    let _ = writeln!(y, "  - id: {}", q(&id));
    let _ = writeln!(
        y,
        "    title: {}",
        q(&format!("{what} match the golden host {host}"))
    );
    let _ = writeln!(y, "    severity: medium");
    let _ = writeln!(y, "    for_each: {{ param: {ns}, as: pin }}");
    if record {
        let _ = writeln!(y, "    let:");
        let _ = writeln!(
            y,
            "      options: {}",
            q(&format!(
                "default(join({ns}[pin.key].options, \",\"), \"(no entry)\")"
            ))
        );
        let _ = writeln!(y, "    assert: options == pin.value");
        let _ = writeln!(
            y,
            "    why: {}",
            q(&format!(
                "{{pin.key}} has the options {{options}} here, but the golden host {host} \
                 ({when}) has {{pin.value}}."
            ))
        );
        let _ = writeln!(
            y,
            "    fix: {}",
            q(
                "Give {pin.key} the options {pin.value} (the evidence is the line to edit) \
               and remount it, or, if this host is right, regenerate the baseline from a \
               golden host that has it."
            )
        );
    } else {
        let _ = writeln!(y, "    setting: {}", q(&format!("{ns}.${{pin.key}}")));
        let _ = writeln!(
            y,
            "    expect: {{ equals: {}, present: true }}",
            q("${pin.value}")
        );
        let _ = writeln!(
            y,
            "    why: {}",
            q(&format!(
                "{{setting}} is {{actual}} here ({{source}}), but the golden host {host} \
                 ({when}) has {{pin.value}}."
            ))
        );
        let _ = writeln!(
            y,
            "    fix: {}",
            q(
                "Set {setting} to {pin.value} (the evidence is the line to edit; add one where \
                 none sets it) and apply it; or, if this host is right, regenerate the \
                 baseline from a golden host that has it."
            )
        );
    }
    let _ = writeln!(y, "    references: []");
}

/// Audit the golden host with its own baseline; a pin that does not pass
/// there (a value the engine reads back differently) is left out with the
/// reason, never kept to fail every host.
fn prove(b: &mut Baseline, host: &Host) -> Result<(), BaselineError> {
    if b.pins.is_empty() {
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let report = crate::engine::audit_host(&set, host);
    let mut bad: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &report.findings {
        if f.status == Status::Pass {
            continue;
        }
        for (ns, _) in &b.pins {
            if f.rule == rule_id(&b.policy_id, ns) {
                let e = bad.entry(ns.clone()).or_default();
                e.extend(f.subject.iter().cloned());
            }
            if f.rule == added_rule_id(&b.policy_id, ns) && f.status != Status::Skip {
                // a key of the golden host itself the closed world judges:
                // it is left out of the judging, with the reason
                match f.subject.first() {
                    Some(key) if f.status == Status::Fail => b.left_out.push(LeftOut {
                        namespace: ns.clone(),
                        key: key.clone(),
                        reason: "on the golden host but not pinned: not judged as added".into(),
                    }),
                    _ => {
                        return Err(BaselineError::Load(format!(
                            "the closed world of {ns} is {:?} on the golden host itself: {}",
                            f.status, f.explanation
                        )))
                    }
                }
            }
        }
    }
    for (ns, pins) in &mut b.pins {
        let Some(subjects) = bad.get(ns.as_str()) else {
            continue;
        };
        pins.retain(|p| {
            let keep = !subjects.contains(&p.key);
            if !keep {
                b.left_out.push(LeftOut {
                    namespace: ns.clone(),
                    key: p.key.clone(),
                    reason: "does not read back equal on the golden host itself".into(),
                });
            }
            keep
        });
    }
    b.pins.retain(|(_, p)| !p.is_empty());
    Ok(())
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
