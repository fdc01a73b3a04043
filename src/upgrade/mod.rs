//! Pre-upgrade readiness: the upgrade rules (`upgrade.mariadb.removed-option`,
//! ...) that `--target mariadb=10.11` (`mysql=8.0`, `kernel=6.1`) adds to
//! the policy set, and how the engine judges one: what a host's persisted
//! configuration does on the target release, from the facts (the option
//! files as the target server reads them, persisted sysctl files) against
//! the shipped knowledge ([`data`]), as ordinary [`Finding`]s of the rule,
//! so filters, overlays, waivers and `--fail-on` treat them like any other.
//! Reads nothing: the engine's plan asks facts for what the targets need
//! ([`plan`]) and the engine judges each rule over the gathered facts
//! ([`judge`]).
//!
//! The files, from the request to the findings:
//! - `target.rs`: parsing a `--target` against the shipped data (the
//!   [`Target`] itself is the policy model's) and why one is refused;
//! - `data.rs`: the shipped knowledge of each product's releases;
//! - `kind.rs`: the kinds of finding, their rule ids and texts;
//! - `options.rs`: option files against a server release;
//! - `kernel.rs`: persisted sysctl keys against a kernel release;
//! - this file: the rules in the catalogue and policy set, what they need
//!   gathered, and the judging of one.

pub mod data;
mod kernel;
mod kind;
mod options;
mod target;

use crate::facts::{Facts, Needs};
use crate::host::Host;
use crate::policy::{Check, Policy, PolicyError, PolicySet, Rule, RuleSource, UpgradeCheck};
use crate::policy::{Template, TemplatePart};
use crate::report::{Finding, RuleMeta, Status};

pub use crate::policy::Target;
pub use data::{DataError, Knowledge, Product, Version};
pub use kind::POLICY;
pub use target::{accepted_forms, TargetError};

use kind::{rule_id, Kind};

/// The catalogue entries of the upgrade rules for these targets (SARIF rule
/// descriptors, JUnit, `explain`), one per product and kind.
pub fn rule_metas(targets: &[Target]) -> Vec<RuleMeta> {
    let products: Vec<Product> = targets.iter().map(|t| t.product).collect();
    metas_of(&products)
}

/// The kinds of finding of a product, one rule each.
fn kinds_of(p: Product) -> &'static [Kind] {
    match p {
        Product::Kernel => &Kind::KERNEL,
        _ => &Kind::SERVER,
    }
}

/// One entry per product (in the order given, each once) and kind. Made
/// without the data: a rule is its product and kind.
fn metas_of(products: &[Product]) -> Vec<RuleMeta> {
    let mut out: Vec<RuleMeta> = Vec::new();
    for &p in products {
        for &kind in kinds_of(p) {
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
                    path: data::builtin_path(p).into(),
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
        param_types: Default::default(),
        benchmark: false,
        path: "policies/upgrade".into(),
    }
}

/// A catalogue entry as a rule of the set, judging `targets` (those of its
/// product).
fn as_rule(m: RuleMeta, targets: Vec<Target>) -> Rule {
    let literal = |s: String| Template {
        parts: vec![TemplatePart::Text(s.clone())],
        source: s,
    };
    Rule {
        why: literal(m.why),
        fix: literal(m.fix),
        references: m.references,
        tags: m.tags,
        ..Rule::bare(
            m.id,
            m.policy,
            m.title,
            m.severity,
            Check::Upgrade(UpgradeCheck { targets }),
            m.source,
        )
    }
}

/// The rule ids of a product the run has no target for, as [`metas_of`]
/// would name them.
fn dormant_ids(p: Product) -> Vec<String> {
    kinds_of(p).iter().map(|&k| rule_id(p, k)).collect()
}

/// Put the upgrade rules of the targets' products in the set, each judging
/// the targets of its product (in the order given), before site overlays
/// are loaded (so their `overrides:` reach them), the other products' ids
/// as dormant (an overlay naming them is no problem in a run without their
/// `--target`). With no targets no rule is added. A product whose rules
/// the set already holds is a duplicate-id problem: give every target at
/// once.
pub fn register(set: &mut PolicySet, targets: &[Target]) -> Result<(), PolicyError> {
    let mut products: Vec<Product> = Vec::new();
    for t in targets {
        if !products.contains(&t.product) {
            products.push(t.product);
        }
    }
    register_products(set, &products, targets)
}

/// [`register`] for every product, judging nothing (`explain` and the
/// completions, which evaluate nothing).
pub fn register_all(set: &mut PolicySet) -> Result<(), PolicyError> {
    register_products(set, &Product::ALL, &[])
}

fn register_products(
    set: &mut PolicySet,
    products: &[Product],
    targets: &[Target],
) -> Result<(), PolicyError> {
    // A dormant id is the product and the kind, nothing of the data: a run
    // without --target (every plain `check`) does not parse the 52 KB of
    // shipped upgrade YAML to learn it (it was a third of a live check).
    let dormant: Vec<String> = Product::ALL
        .into_iter()
        .filter(|p| !products.contains(p))
        .flat_map(dormant_ids)
        .collect();
    let mut rules: Vec<Rule> = Vec::new();
    for &p in products {
        let of_product: Vec<Target> = targets.iter().filter(|t| t.product == p).cloned().collect();
        for m in metas_of(&[p]) {
            rules.push(as_rule(m, of_product.clone()));
        }
    }
    if rules.is_empty() && dormant.is_empty() {
        return Ok(());
    }
    set.add_shipped(policy(), rules, dormant)
}

impl PolicySet {
    /// Add the upgrade rules of `targets` (`mariadb=10.11`, `kernel=6.1`),
    /// what `driftaudit check --target` adds: one rule per product and
    /// kind of change (`upgrade.mariadb.removed-option`), judged by
    /// [`audit`](crate::audit) like every other rule of the set: what each
    /// host's persisted configuration does on the target release. Filters,
    /// waivers and the overlays loaded after this reach them; give every
    /// target in one call (a product added twice is a duplicate-id error).
    ///
    /// ```
    /// use driftaudit::{audit, Host, PolicySet, Status, UpgradeTarget};
    ///
    /// let mut policies = PolicySet::builtin()?;
    /// policies.add_upgrade_targets(&[UpgradeTarget::parse("mysql=8.0")?])?;
    /// let host = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/upgrade-mysql-5.7"))?;
    /// let report = audit(&policies, &[host]);
    /// // options MySQL 8.0 removed are findings of the upgrade rules
    /// assert!(report.hosts[0].findings.iter().any(|f| f.rule == "upgrade.mysql.removed-option" && f.status == Status::Fail));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_upgrade_targets(&mut self, targets: &[Target]) -> Result<(), PolicyError> {
        register(self, targets)
    }
}

/// What an upgrade rule needs gathered: the option files read as each
/// target server reads them (its groups).
pub fn plan(check: &UpgradeCheck, needs: &mut Needs) {
    for t in &check.targets {
        if t.product != Product::Kernel {
            needs.option_groups.insert(options::groups(t));
        }
    }
}

/// Judge an upgrade rule over one host's gathered facts: for each target,
/// the findings of the rule's kind (its id), with the severity an overlay
/// gave the rule. No I/O.
pub fn judge(rule: &Rule, check: &UpgradeCheck, facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    for t in &check.targets {
        let all = match data::builtin_for(t.product) {
            Ok(k) => match t.product {
                Product::Kernel => kernel::findings(facts, t, k),
                _ => options::findings(facts, t, k),
            },
            // a build defect, reported instead of a silent pass
            Err(e) => vec![Finding::new(
                rule.id.clone(),
                POLICY,
                rule.title.clone(),
                rule.severity,
                Status::Error,
                rule.source.clone(),
            )
            .with_explanation(format!("the shipped upgrade data is invalid: {e}"))],
        };
        out.extend(all.into_iter().filter(|f| f.rule == rule.id));
    }
    if rule.overridden.iter().any(|o| o.field == "severity") {
        for f in &mut out {
            f.severity = rule.severity;
        }
    }
    out
}

/// Check a host against targets with the shipped rules as they are (no
/// filters or overlays): gathers what they need, then judges each rule.
pub fn check(host: &Host, targets: &[Target]) -> Vec<Finding> {
    let mut set = PolicySet::new();
    if targets.is_empty() || register(&mut set, targets).is_err() {
        return Vec::new();
    }
    let upgrade_rules = || {
        set.rules().iter().filter_map(|r| match &r.check {
            Check::Upgrade(u) => Some((r, u)),
            _ => None,
        })
    };
    let mut needs = Needs::default();
    for (_, u) in upgrade_rules() {
        plan(u, &mut needs);
    }
    let facts = crate::facts::gather(host, &needs);
    upgrade_rules()
        .flat_map(|(r, u)| judge(r, u, &facts))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dormant_ids_are_the_ids_of_the_rules_each_product_registers() {
        for p in Product::ALL {
            assert_eq!(data::builtin_for(p).unwrap().product, p);
            let from_data: Vec<String> = metas_of(&[p]).into_iter().map(|m| m.id).collect();
            assert_eq!(dormant_ids(p), from_data, "{p:?}");
        }
    }

    /// The fleet JSON's `policies` digest of a `--target` run is what it
    /// was when the upgrade rules were stubs holding no targets.
    #[test]
    fn the_policy_digest_counts_an_upgrade_rule_as_before_its_targets() {
        let digest = |targets: &[&str]| {
            let mut set = PolicySet::new();
            let t: Vec<Target> = targets.iter().map(|t| Target::parse(t).unwrap()).collect();
            register(&mut set, &t).unwrap();
            crate::report::merge::policy_digest(&set)
        };
        assert_eq!(digest(&["mariadb=10.11"]), digest(&["mariadb=11.4"]));
        assert_eq!(
            digest(&["mysql=8.0", "kernel=6.1"]),
            digest(&["mysql=8.4", "kernel=5.15"])
        );
        assert_ne!(digest(&["mysql=8.0"]), digest(&["mariadb=10.11"]));
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
