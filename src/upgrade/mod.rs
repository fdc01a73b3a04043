//! Pre-upgrade readiness: what a host's persisted configuration does on a
//! target release (`--target mariadb=10.11`, `mysql=8.0`, `kernel=6.1`).
//! Reads the host only through [`Host`] and the facts readers (option files
//! as the target server reads them, persisted sysctl files), compares with
//! the shipped knowledge ([`data`]) and returns ordinary [`Finding`]s with
//! stable rule ids (`upgrade.mariadb.removed-option`, ...) so renderers,
//! waivers and `--fail-on` treat them like any other. Evaluation of rules
//! from policies is not here (that is the engine's).

pub mod data;
mod kernel;
mod options;

use std::fmt;

use crate::facts::presence::Domain;
use crate::facts::{Facts, Needs};
use crate::host::Host;
use crate::policy::{Check, Policy, PolicyError, PolicySet, Rule, RuleSource, Severity};
use crate::policy::{Template, TemplatePart};
use crate::report::{Finding, RuleMeta, Status};

pub use data::{DataError, Knowledge, Product, Version};

/// A release to check the host against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The product.
    pub product: Product,
    /// The version as given (`10.11`: the whole series).
    pub version: Version,
}

/// Why a `--target` was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not `NAME=VERSION` with a known name.
    #[error("unknown target `{given}`: expected {accepted}")]
    Unknown {
        /// What was given.
        given: String,
        /// The accepted forms.
        accepted: String,
    },
    /// A known product with a version the data does not cover.
    #[error("no upgrade data for `{given}`: expected {accepted}")]
    Version {
        /// What was given.
        given: String,
        /// The accepted forms.
        accepted: String,
    },
    /// The shipped data is broken (a build defect).
    #[error("the shipped upgrade data is invalid: {0}")]
    Data(String),
}

impl Target {
    /// Parse `mariadb=10.11`, `mysql=8.0`, `kernel=6.1`.
    pub fn parse(s: &str) -> Result<Target, TargetError> {
        let accepted = accepted_forms();
        let unknown = || TargetError::Unknown {
            given: s.to_string(),
            accepted: accepted.clone(),
        };
        let (name, version) = s.split_once('=').ok_or_else(unknown)?;
        let product = Product::parse(name).ok_or_else(unknown)?;
        let bad_version = || TargetError::Version {
            given: s.to_string(),
            accepted: accepted.clone(),
        };
        let version = Version::parse(version).ok_or_else(bad_version)?;
        let k = data::builtin_for(product).map_err(|e| TargetError::Data(e.to_string()))?;
        if !k.targets.is_empty() && !k.targets.iter().any(|t| t.series() == version.series()) {
            return Err(bad_version());
        }
        Ok(Target { product, version })
    }

    /// `MariaDB 10.11`.
    pub fn label(&self) -> String {
        format!("{} {}", self.product.label(), self.version)
    }

    /// The newest release the target stands for: `10.11` is every 10.11.x,
    /// so a change made in 10.11.3 is in it; `10.11.2` is exactly that.
    pub fn upper(&self) -> Vec<u64> {
        let mut v = self.version.0.clone();
        if v.len() < 3 {
            v.resize(2, 0);
            v.push(u64::MAX);
        }
        v
    }

    /// Whether a change made in `version` is in the target.
    pub fn includes(&self, version: &Version) -> bool {
        version.cmp_to(&self.upper()) != std::cmp::Ordering::Greater
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.product.as_str(), self.version)
    }
}

/// The `--target` forms the shipped data accepts, for messages and help.
pub fn accepted_forms() -> String {
    let Ok(all) = data::builtin() else {
        return "mariadb=X.Y, mysql=X.Y or kernel=X.Y".into();
    };
    let mut parts = Vec::new();
    for k in all {
        if k.targets.is_empty() {
            parts.push(format!(
                "{}=X.Y (e.g. {}=6.1)",
                k.product.as_str(),
                k.product.as_str()
            ));
        } else {
            let v: Vec<String> = k.targets.iter().map(ToString::to_string).collect();
            parts.push(format!("{}={}", k.product.as_str(), v.join("|")));
        }
    }
    parts.join(", ")
}

/// The kinds of upgrade finding, one rule id each per product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The target refuses the option: the server does not start.
    Removed,
    /// The target accepts the option and ignores it.
    Ignored,
    /// A `loose-` option the target no longer knows: the line does nothing.
    LooseRemoved,
    /// Deprecated in the target (still works).
    Deprecated,
    /// A value the target refuses.
    RemovedValue,
    /// The host runs with a default the target changes.
    DefaultChanged,
    /// (kernel) a persisted key the target kernel lacks.
    RemovedKey,
    /// (kernel) a persisted key the target kernel ignores.
    IgnoredKey,
    /// (kernel) a persisted key whose meaning changes.
    MeaningChanged,
}

impl Kind {
    const SERVER: [Kind; 6] = [
        Kind::Removed,
        Kind::Ignored,
        Kind::LooseRemoved,
        Kind::Deprecated,
        Kind::RemovedValue,
        Kind::DefaultChanged,
    ];
    const KERNEL: [Kind; 3] = [Kind::RemovedKey, Kind::IgnoredKey, Kind::MeaningChanged];

    fn slug(self) -> &'static str {
        match self {
            Kind::Removed => "removed-option",
            Kind::Ignored => "ignored-option",
            Kind::LooseRemoved => "loose-removed-option",
            Kind::Deprecated => "deprecated-option",
            Kind::RemovedValue => "removed-value",
            Kind::DefaultChanged => "default-changed",
            Kind::RemovedKey => "removed-key",
            Kind::IgnoredKey => "ignored-key",
            Kind::MeaningChanged => "meaning-changed",
        }
    }

    fn severity(self) -> Severity {
        match self {
            Kind::Removed | Kind::RemovedValue => Severity::High,
            Kind::DefaultChanged | Kind::MeaningChanged => Severity::Medium,
            Kind::Ignored | Kind::RemovedKey | Kind::IgnoredKey => Severity::Low,
            Kind::LooseRemoved | Kind::Deprecated => Severity::Info,
        }
    }

    fn title(self, p: Product) -> String {
        let l = p.label();
        match self {
            Kind::Removed => format!("{l}: the target release refuses an option in the option files (the server will not start)"),
            Kind::Ignored => format!("{l}: the target release ignores an option in the option files"),
            Kind::LooseRemoved => format!("{l}: a loose- option the target release no longer has does nothing"),
            Kind::Deprecated => format!("{l}: an option in the option files is deprecated in the target release"),
            Kind::RemovedValue => format!("{l}: the target release refuses a value in the option files (the server will not start)"),
            Kind::DefaultChanged => format!("{l}: a setting left at its default changes with the target release"),
            Kind::RemovedKey => "Linux: a persisted sysctl key does not exist in the target kernel".into(),
            Kind::IgnoredKey => "Linux: a persisted sysctl key has no effect in the target kernel".into(),
            Kind::MeaningChanged => "Linux: a persisted sysctl key means something else in the target kernel".into(),
        }
    }

    fn why(self) -> &'static str {
        match self {
            Kind::Removed | Kind::RemovedValue => "mysqld/mariadbd stop at start-up with \"unknown variable\" (or a refused value) when an option file sets something the release no longer has, unless the option carries the loose- prefix: the upgrade ends with a server that does not start.",
            Kind::Ignored => "The release accepts the line with a warning and does nothing with it: whatever the line was meant to tune is no longer tuned.",
            Kind::LooseRemoved => "With loose- the server only warns about an option it does not know; the line is dead configuration after the upgrade.",
            Kind::Deprecated => "Deprecated options are removed in a later release; replacing them now avoids a start-up failure then.",
            Kind::DefaultChanged => "A setting nobody wrote down runs with the compiled-in default; when the release changes that default the same host behaves differently after the upgrade (character sets, SQL modes, InnoDB flushing, authentication).",
            Kind::RemovedKey => "systemd-sysctl and sysctl --system report a key the kernel does not have and skip it: the tuning the line was meant to apply is gone, and boot logs an error.",
            Kind::IgnoredKey => "The kernel keeps the file but the value has no effect: the tuning the line was meant to apply is gone.",
            Kind::MeaningChanged => "The same persisted value does something else on the target kernel.",
        }
    }

    fn domain(p: Product) -> Domain {
        match p {
            Product::Kernel => Domain::Sysctl,
            _ => Domain::Mysql,
        }
    }
}

/// Rule id of a kind for a product (`upgrade.mariadb.removed-option`).
pub(crate) fn rule_id(p: Product, kind: Kind) -> String {
    format!("upgrade.{}.{}", p.as_str(), kind.slug())
}

/// Id of the policy the upgrade rules belong to.
pub const POLICY: &str = "upgrade";

/// The catalogue entries of the upgrade rules for these targets (SARIF rule
/// descriptors, JUnit, `explain`), one per product and kind.
pub fn rule_metas(targets: &[Target]) -> Vec<RuleMeta> {
    let products: Vec<Product> = targets.iter().map(|t| t.product).collect();
    metas_of(&products)
}

/// One entry per product (in the order given, each once) and kind.
fn metas_of(products: &[Product]) -> Vec<RuleMeta> {
    let mut out: Vec<RuleMeta> = Vec::new();
    for &p in products {
        let Ok(k) = data::builtin_for(p) else {
            continue;
        };
        let kinds: &[Kind] = match p {
            Product::Kernel => &Kind::KERNEL,
            _ => &Kind::SERVER,
        };
        for &kind in kinds {
            let id = rule_id(p, kind);
            if out.iter().any(|m| m.id == id) {
                continue;
            }
            out.push(RuleMeta {
                id,
                policy: POLICY.into(),
                title: kind.title(p),
                severity: kind.severity(),
                why: kind.why().into(),
                fix: "Each finding names the file and line, the release that changed it, and what to do instead (from the data file's `action`).".into(),
                references: vec!["docs/upgrade.md".into()],
                tags: vec![],
                source: RuleSource {
                    path: k.path.clone(),
                    line: 1,
                },
            });
        }
    }
    out
}

/// The policy the upgrade rules belong to (no parameters).
pub fn policy() -> Policy {
    Policy {
        id: POLICY.into(),
        title: "Upgrade readiness (--target PRODUCT=VERSION)".into(),
        description: "What the host's persisted configuration does on a target release, from the shipped data in policies/upgrade/ (docs/upgrade.md).".into(),
        params: Default::default(),
        param_defaults: Default::default(),
        path: "policies/upgrade".into(),
    }
}

/// A catalogue entry as a rule of the registry, judged by this module
/// ([`Check::External`]).
fn as_rule(m: RuleMeta) -> Rule {
    let literal = |s: String| Template {
        parts: vec![TemplatePart::Text(s.clone())],
        source: s,
    };
    Rule {
        id: m.id,
        policy: m.policy,
        title: m.title,
        severity: m.severity,
        applies: Vec::new(),
        lets: Default::default(),
        check: Check::External,
        why: literal(m.why),
        fix: literal(m.fix),
        references: m.references,
        tags: m.tags,
        controls: Vec::new(),
        source: m.source,
        breakdown: None,
        remedy: None,
        overridden: Vec::new(),
        for_each: None,
    }
}

/// The rule ids of a product the run has no target for, as [`metas_of`]
/// would name them.
fn dormant_ids(p: Product) -> Vec<String> {
    let kinds: &[Kind] = match p {
        Product::Kernel => &Kind::KERNEL,
        _ => &Kind::SERVER,
    };
    kinds.iter().map(|&k| rule_id(p, k)).collect()
}

/// Every product the shipped data covers.
fn all_products() -> Vec<Product> {
    data::builtin()
        .map(|all| all.iter().map(|k| k.product).collect())
        .unwrap_or_default()
}

/// Put the upgrade rules of the targets' products in the registry, before
/// site overlays are loaded (so their `overrides:` reach them), the other
/// products' ids as dormant (an overlay naming them is no problem in a run
/// without their `--target`). With no targets nothing is added.
pub fn register(set: &mut PolicySet, targets: &[Target]) -> Result<(), PolicyError> {
    let mut products: Vec<Product> = Vec::new();
    for t in targets {
        if !products.contains(&t.product) {
            products.push(t.product);
        }
    }
    register_products(set, &products)
}

/// [`register`] for every product (`explain`, which evaluates nothing).
pub fn register_all(set: &mut PolicySet) -> Result<(), PolicyError> {
    register_products(set, &all_products())
}

fn register_products(set: &mut PolicySet, products: &[Product]) -> Result<(), PolicyError> {
    // A dormant id is the product and the kind, nothing of the data: a run
    // without --target (every plain `check`) does not parse the 52 KB of
    // shipped upgrade YAML to learn it (it was a third of a live check).
    let dormant: Vec<String> = Product::ALL
        .into_iter()
        .filter(|p| !products.contains(p))
        .flat_map(dormant_ids)
        .collect();
    let rules: Vec<Rule> = metas_of(products).into_iter().map(as_rule).collect();
    if rules.is_empty() && dormant.is_empty() {
        return Ok(());
    }
    set.add_external(policy(), rules, dormant)
}

/// Keep the findings whose rule the set still holds (`--only`/`--skip`
/// left it in) and is not disabled (the engine reported it skipped), with
/// the severity an overlay gave the rule. A set holding no upgrade rules at
/// all (a library caller that did not [`register`]) keeps every finding as
/// shipped; the data-error finding is always kept.
fn admit(set: &PolicySet, findings: &mut Vec<Finding>) {
    if !set.policies().iter().any(|p| p.id == POLICY) {
        return;
    }
    findings.retain_mut(|f| {
        let Some(rule) = set.rule(&f.rule) else {
            return f.status == Status::Error && f.rule.ends_with(".data");
        };
        if rule.disabled().is_some() {
            return false;
        }
        if rule.overridden.iter().any(|o| o.field == "severity") {
            f.severity = rule.severity;
        }
        true
    });
}

/// Start a finding of `kind` for an entry (or the data file, line 1).
pub(crate) fn finding(
    k: &Knowledge,
    kind: Kind,
    status: Status,
    severity: Severity,
    line: usize,
) -> Finding {
    Finding::new(
        rule_id(k.product, kind),
        POLICY,
        kind.title(k.product),
        severity,
        status,
        RuleSource {
            path: k.path.clone(),
            line,
        },
    )
    .with_domain(Some(Kind::domain(k.product)))
}

/// Check a host against targets with the shipped rules as they are (no
/// filters or overlays): gathers what it needs, then evaluates.
pub fn check(host: &Host, targets: &[Target]) -> Vec<Finding> {
    if targets.is_empty() {
        return Vec::new();
    }
    let facts = crate::facts::gather(host, &Needs::default());
    check_with_facts(host, &facts, targets, &PolicySet::new())
}

/// Check a host against targets as the registry `set` has the upgrade
/// rules ([`register`]): only rules it holds, with its severities.
pub fn check_in(host: &Host, targets: &[Target], set: &PolicySet) -> Vec<Finding> {
    if targets.is_empty() {
        return Vec::new();
    }
    let facts = crate::facts::gather(host, &Needs::default());
    check_with_facts(host, &facts, targets, set)
}

/// [`check_in`] with facts already gathered for the host (the option files
/// are read again as each target server reads them: its groups).
pub fn check_with_facts(
    host: &Host,
    facts: &Facts,
    targets: &[Target],
    set: &PolicySet,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for t in targets {
        let k = match data::builtin_for(t.product) {
            Ok(k) => k,
            Err(e) => {
                // A build defect, reported instead of a silent pass.
                let mut f = Finding::new(
                    format!("upgrade.{}.data", t.product.as_str()),
                    POLICY,
                    "The upgrade data could not be loaded",
                    Severity::High,
                    Status::Error,
                    RuleSource {
                        path: "policies/upgrade".into(),
                        line: 0,
                    },
                );
                f.explanation = format!("the shipped upgrade data is invalid: {e}");
                out.push(f);
                continue;
            }
        };
        match t.product {
            Product::Kernel => out.extend(kernel::findings(facts, t, k)),
            _ => out.extend(options::findings(host, facts, t, k)),
        }
    }
    admit(set, &mut out);
    out
}

/// Add upgrade findings to one host's report (recounting its summary and
/// coverage), for callers that audit host by host (`check --fleet`); `set`
/// is the registry the report was audited with.
pub fn extend_host(
    report: &mut crate::report::HostReport,
    host: &Host,
    targets: &[Target],
    set: &PolicySet,
) {
    if targets.is_empty() {
        return;
    }
    let mut findings = std::mem::take(&mut report.findings);
    findings.extend(check_in(host, targets, set));
    report.set_findings(findings);
}

/// Add upgrade findings to a report made by [`crate::engine::audit`] over
/// the same hosts, in the same order, with the same `set` (whose registry
/// holds the upgrade rules and so gave the report their catalogue entries).
/// Run it before waivers are applied so they cover upgrade findings too.
pub fn extend_report(
    report: &mut crate::report::Report,
    hosts: &[Host],
    targets: &[Target],
    set: &PolicySet,
) {
    if targets.is_empty() {
        return;
    }
    for (h, host) in report.hosts.iter_mut().zip(hosts) {
        extend_host(h, host, targets, set);
    }
    // a set without the rules registered: their catalogue entries still
    for m in rule_metas(targets) {
        if !report.rules.iter().any(|r| r.id == m.id) {
            report.rules.push(m);
        }
    }
}

/// Audit hosts for an upgrade: the policies' rules and, for each target
/// (`mariadb=10.11`, `kernel=6.1`), what the host's persisted configuration
/// does on that release. The upgrade rules join a copy of `policies` as
/// rules of its registry, so the report's catalogue lists them and waivers
/// applied to the report reach their findings. What `driftaudit check
/// --target` does.
///
/// ```
/// use driftaudit::{audit_upgrade, Host, PolicySet, Status, UpgradeTarget};
///
/// let policies = PolicySet::builtin()?;
/// let host = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/upgrade-mysql-5.7"))?;
/// let target = UpgradeTarget::parse("mysql=8.0")?;
/// let report = audit_upgrade(&policies, &[host], &[target])?;
/// // options MySQL 8.0 removed are findings, listed in the report's catalogue
/// let f = report.hosts[0].findings.iter().find(|f| f.rule.starts_with("upgrade.") && f.status == Status::Fail);
/// assert!(f.is_some());
/// assert!(report.rules.iter().any(|r| Some(&r.id) == f.map(|f| &f.rule)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit_upgrade(
    policies: &PolicySet,
    hosts: &[Host],
    targets: &[Target],
) -> Result<crate::report::Report, PolicyError> {
    let mut set = policies.clone();
    register(&mut set, targets)?;
    let mut report = crate::engine::audit(&set, hosts);
    extend_report(&mut report, hosts, targets, &set);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dormant_ids_are_the_ids_the_data_gives_each_product() {
        assert_eq!(all_products(), Product::ALL);
        for p in Product::ALL {
            let from_data: Vec<String> = metas_of(&[p]).into_iter().map(|m| m.id).collect();
            assert_eq!(dormant_ids(p), from_data, "{p:?}");
        }
    }

    #[test]
    fn a_target_is_name_equals_a_series_the_data_covers() {
        let t = Target::parse("mariadb=10.11").unwrap();
        assert_eq!(
            (t.product, t.version.to_string()),
            (Product::Mariadb, "10.11".into())
        );
        assert!(t.includes(&Version::parse("10.11.3").unwrap()));
        assert!(!t.includes(&Version::parse("11.0.0").unwrap()));
        assert!(Target::parse("mysql=8.4").is_ok());
        assert!(Target::parse("kernel=6.1").is_ok());
        let e = Target::parse("postgres=16").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown target `postgres=16`: expected mariadb="),
            "{e}"
        );
        assert!(
            e.contains("mysql=5.7|8.0|8.4") && e.contains("kernel=X.Y"),
            "{e}"
        );
        let e = Target::parse("mariadb=10.9").unwrap_err().to_string();
        assert!(e.starts_with("no upgrade data for `mariadb=10.9`"), "{e}");
        assert!(Target::parse("mariadb").is_err());
        assert!(Target::parse("kernel=six").is_err());
    }

    #[test]
    fn every_rule_id_is_listed_once_per_product() {
        let targets = [
            Target::parse("mariadb=10.11").unwrap(),
            Target::parse("mariadb=11.4").unwrap(),
            Target::parse("kernel=6.1").unwrap(),
        ];
        let ids: Vec<String> = rule_metas(&targets).into_iter().map(|m| m.id).collect();
        insta::assert_snapshot!(ids.join("\n"));
    }
}
