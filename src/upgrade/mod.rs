//! Pre-upgrade readiness: what a host's persisted configuration does on a
//! target release (`--target mariadb=10.11`, `mysql=8.0`, `kernel=6.1`).
//! Reads the host only through [`Host`] and the facts readers (option files
//! as the target server reads them, persisted sysctl files), compares with
//! the shipped knowledge ([`data`]) and returns ordinary [`Finding`]s with
//! stable rule ids (`upgrade.mariadb.removed-option`, ...) so renderers,
//! waivers and `--fail-on` treat them like any other. Evaluation of rules
//! from policies is not here (that is the engine's).
//!
//! The files, from the request to the findings:
//! - `target.rs`: what `--target` names ([`Target`]) and why one is refused;
//! - `data.rs`: the shipped knowledge of each product's releases;
//! - `kind.rs`: the kinds of finding, their rule ids and texts;
//! - `options.rs`: option files against a server release;
//! - `kernel.rs`: persisted sysctl keys against a kernel release;
//! - this file: the rules in the catalogue and policy set, and the checks
//!   that gather the facts and run the two above.

pub mod data;
mod kernel;
mod kind;
mod options;
mod target;

use crate::facts::{Facts, Needs};
use crate::host::Host;
use crate::policy::{Check, Policy, PolicyError, PolicySet, Rule, RuleSource, Severity};
use crate::policy::{Template, TemplatePart};
use crate::report::{Finding, RuleMeta, Status};

pub use data::{DataError, Knowledge, Product, Version};
pub use kind::POLICY;
pub use target::{accepted_forms, Target, TargetError};

use kind::{rule_id, Kind};

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
