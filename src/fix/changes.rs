//! What to change for one failing finding: the target a remedy or a
//! `drift:` check names (a sysctl key, an option, a localconfig key, an
//! fstab field), the value it must take, and the words that describe it.
//! Must not edit files.

use std::collections::BTreeSet;

use crate::facts::Facts;
use crate::host::Host;
use crate::policy::{Bound, Check, PolicySet, Remedy, Rule, Severity};
use crate::report::Finding;
use crate::resolve::Resolver;
use crate::value::Value;

use super::model::{shown_id, FixOptions, Prefer};
use super::mount_flags::is_flag;

/// Where a change goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Target {
    Sysctl(String),
    Option(String),
    ZimbraPool,
    Localconfig(String),
    Mount(String),
}

/// What a change does.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Op {
    /// Write this value (persist and/or apply now).
    Set(Value, Bound),
    /// Delete the lines that set it.
    Remove,
    /// Mount flags: add, remove; `plain_remount`: `mount -o remount POINT`
    /// (the fstab options) rather than naming the added flags.
    Mount {
        add: Vec<String>,
        remove: Vec<String>,
        plain_remount: bool,
    },
}

/// One planned change, for one finding.
#[derive(Debug, Clone)]
pub(super) struct Change {
    pub(super) target: Target,
    pub(super) op: Op,
    /// Change the persisted configuration (the patch).
    pub(super) persist: bool,
    /// Change the running system (the runtime script).
    pub(super) apply_now: bool,
    /// `RULE SUBJECT` of each finding the change fixes (one change per
    /// target and operation: findings wanting the same are merged).
    pub(super) why: Vec<String>,
    /// The findings' keys ([`key_of`]), in the order of `why`.
    pub(super) keys: Vec<(String, String)>,
    pub(super) severity: Severity,
    /// Targets the finding's rule reads.
    pub(super) reads: BTreeSet<Target>,
}

/// What tells a finding's item apart across audits: a `for_each` item's
/// alias (the id the rule had before it was one rule per item), else the
/// rule id. Never shown: people read [`shown_id`](super::model::shown_id).
pub(super) fn id_of(f: &Finding) -> String {
    f.alias.clone().unwrap_or_else(|| f.rule.clone())
}

/// Findings are matched across audits by rule and subject.
pub(super) fn key_of(f: &Finding) -> (String, String) {
    (id_of(f), f.subject.join(", "))
}

pub(super) fn label(f: &Finding) -> String {
    format!(
        "{} {}",
        shown_id(&f.rule, f.alias.as_deref()),
        f.subject.join(", ")
    )
}

/// The target a namespace key is written through.
pub(super) fn target_of(ns: &str, key: &str) -> Option<Target> {
    match ns {
        "sysctl" | "sysctl_boot" | "sysctl_procps" => {
            Some(Target::Sysctl(crate::facts::sysctl::canonical_key(key)))
        }
        "mycnf" | "mycnf_effective" | "mysql_next" | "mysql" => {
            Some(Target::Option(crate::facts::mysql::canonical_name(key)))
        }
        "zimbra_mycnf" if crate::facts::mysql::canonical_name(key) == "innodb_buffer_pool_size" => {
            Some(Target::ZimbraPool)
        }
        "localconfig" => Some(Target::Localconfig(key.to_string())),
        "fstab" | "mount" if key != "*" => Some(Target::Mount(key.to_string())),
        _ => None,
    }
}

/// The key a target sets, as an edit lists it.
pub(super) fn key_name(t: &Target) -> &str {
    match t {
        Target::Sysctl(k) | Target::Option(k) | Target::Localconfig(k) | Target::Mount(k) => k,
        Target::ZimbraPool => "innodb_buffer_pool_size",
    }
}

pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() < 0.5,
        _ => a.to_plain() == b.to_plain(),
    }
}

/// The changes one failing finding's remedy asks for.
pub(super) fn changes_for(
    policies: &PolicySet,
    rule: &Rule,
    f: &Finding,
    facts: &Facts,
    host: &Host,
    opts: &FixOptions,
) -> Result<Vec<Change>, String> {
    let why = label(f);
    // a `setting:` built per `for_each` item: the rule as the finding's item
    // sees it (the item's key, its remedy on that key) and the value
    let item = match &rule.for_each {
        Some(fe) if fe.setting_key.is_some() => {
            let subject = f.subject.first().ok_or("the finding names no item")?;
            let (r, v) = crate::engine::item_remedy(rule, policies.policy_of(rule), facts, subject)
                .map_err(|m| {
                    format!("cannot build the remedy of the item: {}", missing_text(&m))
                })?;
            Some((r, v))
        }
        _ => None,
    };
    let rule = item.as_ref().map_or(rule, |(r, _)| r);
    let reads: BTreeSet<Target> = rule
        .settings_read()
        .iter()
        .filter_map(|(ns, k)| target_of(ns, k))
        .collect();
    let mk = |target: Target, op: Op, persist: bool, apply_now: bool| Change {
        target,
        op,
        persist,
        apply_now,
        why: vec![why.clone()],
        keys: vec![key_of(f)],
        severity: rule.severity,
        reads: reads.clone(),
    };
    let Some(remedy) = &rule.remedy else {
        return Err("the rule declares no remedy".into());
    };
    if let Some(q) = &rule.requires {
        let holds = crate::engine::eval_in_rule(rule, policies.policy_of(rule), facts, &q.when)
            .and_then(|v| crate::expr::eval::truthy(&v));
        let here = match holds {
            Ok(true) => None,
            Ok(false) => Some(format!(
                "it does not hold on this host ({})",
                read_here(rule, policies, facts, &q.when)
            )),
            Err(m) => Some(format!("it cannot be told here ({})", missing_text(&m))),
        };
        if let Some(here) = here {
            return Err(format!(
                "needs a decision: the change is safe only where `{}`, and {here}: {}; \
                 make it by hand once that is settled",
                q.text, q.why
            ));
        }
    }
    let cs = match (&item, remedy) {
        (Some((_, Some(v))), Remedy::Set { ns, key, bound, .. }) => {
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            vec![mk(target, Op::Set(v.clone(), *bound), true, true)]
        }
        _ => changes_of_remedy(policies, rule, remedy, f, facts, host, opts, &mk)?,
    };
    for c in &cs {
        if let Some(name) = secret_target(&c.target) {
            return Err(format!(
                "`{name}` holds a secret: `fix` never writes a secret value into a patch or a \
                 script; change it by hand"
            ));
        }
    }
    Ok(cs)
}

/// The secret name a target writes, if it is one ([`crate::secret`]).
pub(super) fn secret_target(t: &Target) -> Option<&str> {
    use crate::secret;
    match t {
        Target::Sysctl(k) => secret::sysctl_key_is_secret(k).then_some(k.as_str()),
        Target::Option(n) => (secret::option_is_secret(n) || secret::server_variable_is_secret(n))
            .then_some(n.as_str()),
        Target::Localconfig(k) => secret::localconfig_key_is_secret(k).then_some(k.as_str()),
        Target::ZimbraPool | Target::Mount(_) => None,
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn changes_of_remedy(
    policies: &PolicySet,
    rule: &Rule,
    remedy: &Remedy,
    f: &Finding,
    facts: &Facts,
    host: &Host,
    opts: &FixOptions,
    mk: &dyn Fn(Target, Op, bool, bool) -> Change,
) -> Result<Vec<Change>, String> {
    match remedy {
        Remedy::None { reason } => Err(format!("no automatic remedy: {reason}")),
        Remedy::Set {
            ns, key, to, bound, ..
        } => {
            let policy = policies.policy_of(rule);
            let v = crate::engine::eval_in_rule(rule, policy, facts, to)
                .map_err(|m| format!("cannot compute the remedy's value: {}", missing_text(&m)))?;
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            Ok(vec![mk(target, Op::Set(v, *bound), true, true)])
        }
        Remedy::Remove { ns, key } => {
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            Ok(vec![mk(target, Op::Remove, true, false)])
        }
        Remedy::Options { add, remove } => {
            // a `for_each` finding names its item first, then what it read
            let point = f
                .subject
                .get(usize::from(rule.for_each.is_some()))
                .ok_or("the finding names no mount point")?
                .clone();
            Ok(vec![mk(
                Target::Mount(point),
                Op::Mount {
                    add: add.clone(),
                    remove: remove.clone(),
                    plain_remount: false,
                },
                true,
                true,
            )])
        }
        Remedy::Drift => drift_changes(rule, f, host, facts, opts, mk),
    }
}

/// The settings `e` reads, each with its value on this host (`mysql.have_ssl
/// = DISABLED`, `... not set`): the evidence a held change is shown with.
fn read_here(rule: &Rule, policies: &PolicySet, facts: &Facts, e: &crate::expr::Expr) -> String {
    let mut reads = Vec::new();
    crate::expr::walk(e, &mut |x| {
        if matches!(x, crate::expr::Expr::Setting(..)) && !reads.contains(x) {
            reads.push(x.clone());
        }
    });
    let shown: Vec<String> = reads
        .iter()
        .map(|x| {
            let name = x.to_string();
            match crate::engine::eval_in_rule(rule, policies.policy_of(rule), facts, x) {
                Ok(v) => format!("{name} = {}", v.to_plain()),
                Err(m) => format!("{name}: {}", missing_text(&m)),
            }
        })
        .collect();
    if shown.is_empty() {
        "no setting read".into()
    } else {
        shown.join("; ")
    }
}

pub(super) fn missing_text(m: &crate::expr::eval::Missing) -> String {
    match m {
        crate::expr::eval::Missing::Absent { subject, reason }
        | crate::expr::eval::Missing::Unknown { subject, reason }
        | crate::expr::eval::Missing::Bounded {
            subject, reason, ..
        } => format!("{subject}: {reason}"),
        crate::expr::eval::Missing::Error(e) => e.to_string(),
    }
}

/// A drift finding: the configured value applied now, or the running value
/// written where the configured one wins.
pub(super) fn drift_changes(
    rule: &Rule,
    f: &Finding,
    host: &Host,
    facts: &Facts,
    opts: &FixOptions,
    mk: &dyn Fn(Target, Op, bool, bool) -> Change,
) -> Result<Vec<Change>, String> {
    let Check::Drift(d) = &rule.check else {
        return Err("a drift remedy on a rule without a drift check".into());
    };
    let key = f
        .subject
        .first()
        .ok_or("the finding names no setting")?
        .clone();
    let running = opts.prefer == Prefer::Running;
    let r = Resolver::from_facts(host, facts);
    let value_of = |ns: &str| -> Option<Value> {
        facts.namespaces.get(ns)?.get(&key).and_then(|e| match e {
            crate::facts::Entry::Set(s) => Some(s.value.clone()),
            _ => None,
        })
    };
    match (d.configured.as_str(), d.running.as_str()) {
        ("sysctl_boot", "sysctl") => {
            let t = Target::Sysctl(crate::facts::sysctl::canonical_key(&key));
            if running {
                let v = value_of("sysctl").ok_or("the running value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
            } else {
                let v = value_of("sysctl_boot").ok_or("the configured value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), false, true)])
            }
        }
        ("sysctl_boot", "sysctl_procps") => {
            let t = Target::Sysctl(crate::facts::sysctl::canonical_key(&key));
            let ns = if running {
                "sysctl_procps"
            } else {
                "sysctl_boot"
            };
            let v = value_of(ns).ok_or("the value to keep is not known")?;
            Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
        }
        ("mysql_next" | "mycnf_effective" | "mycnf", "mysql") => {
            let t = Target::Option(crate::facts::mysql::canonical_name(&key));
            if running {
                let v = value_of("mysql").ok_or("the running value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
            } else {
                let v = value_of(&d.configured).ok_or("the configured value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), false, true)])
            }
        }
        ("fstab", "mount") => {
            let m = r.mount(&key);
            let (Some(fs), Some(mounted)) = (m.fstab.set(), m.mounted.set()) else {
                return Err("the fstab entry or the mount is not known".into());
            };
            let conf: Vec<String> = fs.effective_options.clone();
            let run: Vec<String> = mounted.options.clone();
            if running {
                // the running flags go into the fstab entry
                let add: Vec<String> = run
                    .iter()
                    .filter(|o| is_flag(o) && !conf.contains(o))
                    .cloned()
                    .collect();
                Ok(vec![mk(
                    Target::Mount(key),
                    Op::Mount {
                        add,
                        remove: Vec::new(),
                        plain_remount: true,
                    },
                    true,
                    false,
                )])
            } else {
                let add: Vec<String> = conf.iter().filter(|o| !run.contains(o)).cloned().collect();
                Ok(vec![mk(
                    Target::Mount(key),
                    Op::Mount {
                        add,
                        remove: Vec::new(),
                        plain_remount: true,
                    },
                    false,
                    true,
                )])
            }
        }
        (c, rn) => Err(format!(
            "`fix` has no drift remedy for `{c}` against `{rn}`"
        )),
    }
}

/// A target's value on a host, in words (`net.ipv4.tcp_tw_recycle = 0`,
/// `/ fstab defaults,noatime, mounted rw,noatime`).
pub(super) fn describe(facts: &Facts, host: &Host, t: &Target) -> String {
    if let Some(name) = secret_target(t) {
        return format!("{name} = {}", crate::secret::REDACTED);
    }
    let r = Resolver::from_facts(host, facts);
    let raw = |l: &crate::resolve::Lookup<crate::resolve::Assignment>| match l {
        crate::resolve::Lookup::Set(a) => a.raw.clone(),
        crate::resolve::Lookup::Absent { .. } => "not set".into(),
        crate::resolve::Lookup::Unknown { .. } => "unknown".into(),
    };
    let ns_raw = |ns: &str, k: &str| -> String {
        match facts.namespaces.get(ns).and_then(|n| n.get(k)) {
            Some(crate::facts::Entry::Set(s)) => s.raw.clone(),
            Some(_) => "unknown".into(),
            None => "not set".into(),
        }
    };
    match t {
        Target::Sysctl(k) => {
            let s = r.sysctl(k);
            let (boot, run) = (raw(&s.boot), raw(&s.running));
            if boot == run {
                format!("{k} = {boot}")
            } else {
                format!("{k} = {boot} (running {run})")
            }
        }
        Target::Option(n) => {
            let o = r.option(n);
            let (file, run) = (raw(&o.effective), raw(&o.running));
            if run == "not set" || file == run {
                format!("{n} = {file}")
            } else {
                format!("{n} = {file} (running {run})")
            }
        }
        Target::ZimbraPool => format!(
            "innodb_buffer_pool_size = {}",
            ns_raw("zimbra_mycnf", "innodb_buffer_pool_size")
        ),
        Target::Localconfig(k) => format!("{k} = {}", ns_raw("localconfig", k)),
        Target::Mount(p) => {
            let m = r.mount(p);
            let fstab = m
                .fstab
                .set()
                .map(|f| f.options.clone())
                .unwrap_or_else(|| "no fstab entry".into());
            let mounted = m
                .mounted
                .set()
                .map(|x| x.options.join(","))
                .unwrap_or_else(|| "not mounted".into());
            format!(
                "{p} fstab {}, mounted {}",
                crate::secret::redact_mount_options(&fstab),
                crate::secret::redact_mount_options(&mounted)
            )
        }
    }
}

/// A number written in whole units of `unit` bytes, rounded the way the
/// bound allows.
pub(super) fn round_to(v: f64, unit: f64, bound: Bound) -> f64 {
    let q = v / unit;
    let q = match bound {
        Bound::AtLeast => (q - 1e-9).ceil(),
        Bound::AtMost => (q + 1e-9).floor(),
        Bound::Exact => q.round(),
    };
    q * unit
}

/// A value as a plain word for a file or a command (numbers without a
/// fraction, booleans as written by the value).
pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::Number(n) | Value::Size(n) => crate::value::format_number(n.round()),
        other => other.to_plain(),
    }
}
