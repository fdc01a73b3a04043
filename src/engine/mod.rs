//! The engine: plans what the policies need ([`plan`]), has facts gather
//! it from a host (all I/O), then evaluates each rule over the gathered
//! facts without any I/O (`eval` is the rule's context; `judge` runs a
//! rule's `applies`, then its check, in a context; `applies`, `setting`,
//! `assert` and `drift` judge one part each, and `upgrade` an upgrade
//! rule's targets; `finding` shapes the findings and `domain` says which
//! domain a rule belongs to), producing the host's report. The entry
//! points here keep that order. Must not read the host outside [`gather`],
//! evaluate an expression over host data before gathering is done (the
//! plan evaluates only constants: parameters and `for_each` list items), or
//! render reports
//! (that is render/).
//!
//! A `for_each:` rule takes three files, in the order data flows:
//! `foreach_items` lists what it expands to on the host (list items, keys
//! matching a glob, records, a `where:` filter), `item_fields` evaluates an
//! item's `${...}` texts (parsed once per thread), and `foreach` judges
//! each item as its own finding (and gives `driftaudit fix` the rule as one
//! item sees it).

use crate::expr::Expr;
use crate::facts::{self, Facts, Needs};
use crate::host::{Host, SourceKind};
use crate::policy::{ItemSelection, Policy, PolicyError, PolicySet, Rule};
use crate::report::{Finding, HostReport, Report};

mod applies;
mod assert;
mod domain;
mod drift;
mod eval;
mod finding;
mod foreach;
mod foreach_items;
mod item_fields;
mod judge;
pub mod plan;
mod setting;

pub use domain::rule_domain;

use eval::RuleCx;
use judge::judge;

/// Work out what the rules need gathered (sysctl keys, paths, namespaces,
/// directory sizes), from the compiled rules alone: see [`plan`].
pub fn needs(policies: &PolicySet) -> Needs {
    plan::needs(policies)
}

/// Audit one host: gather, then evaluate.
pub fn audit_host(policies: &PolicySet, host: &Host) -> HostReport {
    audit_host_planned(policies, &needs(policies), host)
}

/// [`audit_host`] with the plan already made: `needs` is
/// [`needs`]`(policies)`, worked out once for many hosts (a fleet) since it
/// depends on the compiled rules alone.
pub fn audit_host_planned(policies: &PolicySet, needs: &Needs, host: &Host) -> HostReport {
    let facts = facts::gather(host, needs);
    // Hard links matter where a root confines the reads (a snapshot).
    let hard_links = match host.kind() {
        SourceKind::Snapshot => host.hard_linked(),
        SourceKind::Live => Vec::new(),
    };
    let root = (host.kind() == SourceKind::Snapshot).then(|| host.root().to_path_buf());
    evaluate(policies, &facts)
        .with_hard_links(hard_links)
        .with_root(root)
}

/// Audit several hosts into one report.
///
/// ```
/// use driftaudit::{audit, Host, PolicySet, Status};
///
/// let policies = PolicySet::builtin()?;
/// let clean = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean"))?;
/// let report = audit(&policies, &[clean]);
/// assert!(report.hosts[0].findings.iter().all(|f| f.status != Status::Fail));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit(policies: &PolicySet, hosts: &[Host]) -> Report {
    Report::new(
        hosts.iter().map(|h| audit_host(policies, h)).collect(),
        policies,
    )
}

/// Audit hosts for an upgrade: the policies' rules and, for each target
/// (`mariadb=10.11`, `kernel=6.1`), what the host's persisted configuration
/// does on that release. [`audit`] over a copy of `policies` with the
/// targets' upgrade rules added ([`PolicySet::add_upgrade_targets`]), so
/// the report's catalogue lists them and waivers applied to the report
/// reach their findings. What `driftaudit check --target` does (which adds
/// them before its site overlays, so those reach them too).
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
    targets: &[crate::upgrade::Target],
) -> Result<Report, PolicyError> {
    let mut set = policies.clone();
    set.add_upgrade_targets(targets)?;
    Ok(audit(&set, hosts))
}

/// Gather every fact the policies need (all I/O of an audit happens here):
/// the plan first ([`needs`], from the compiled rules alone), then facts
/// gathers it, directory sizes last because their paths may be the value
/// of a setting (`du(localconfig.mysql_data_directory)`), which facts
/// resolves itself once it has read it. No expression is evaluated here.
pub fn gather(policies: &PolicySet, host: &Host) -> Facts {
    facts::gather(host, &needs(policies))
}

/// Evaluate every rule over gathered facts. Pure: no I/O.
pub fn evaluate(policies: &PolicySet, facts: &Facts) -> HostReport {
    let mut findings = Vec::new();
    for rule in policies.rules() {
        let policy = policies.policy_of(rule);
        let items = policies.item_selection(rule);
        findings.extend(evaluate_items(rule, policy, items, facts));
    }
    findings.extend(facts.issues.iter().map(finding::input_finding));
    HostReport::detected(
        facts.host.clone(),
        facts.source,
        findings,
        &facts.detections,
    )
}

/// Evaluate `e` in `rule`'s scope (its `let` names, parameters, settings
/// and facts) exactly as the rule's own check would see it: `driftaudit
/// fix` computes a remedy's value this way.
pub fn eval_in_rule(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    e: &Expr,
) -> Result<crate::value::Value, crate::expr::eval::Missing> {
    crate::expr::eval::eval(e, &RuleCx::new(facts, rule, policy))
}

/// For `driftaudit fix`: a `for_each` rule as the item whose subject is
/// `subject` sees it (the `setting:` key and a remedy on it built from the
/// item), and the remedy's `set` value evaluated in that item's scope.
pub(crate) fn item_remedy(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    subject: &str,
) -> Result<(Rule, Option<crate::value::Value>), crate::expr::eval::Missing> {
    let Some(fe) = &rule.for_each else {
        return Err(crate::expr::eval::Missing::Error(
            "the rule has no `for_each` items".into(),
        ));
    };
    foreach::item_remedy(rule, policy, facts, fe, subject)
}

/// Evaluate one rule: zero or more findings (drift rules give one per key),
/// a `for_each` rule's for every item (`--only`/`--skip` choose items in
/// [`evaluate`], from the set).
pub fn evaluate_rule(rule: &Rule, policy: Option<&Policy>, facts: &Facts) -> Vec<Finding> {
    evaluate_items(rule, policy, ItemSelection::every(), facts)
}

/// [`evaluate_rule`], a `for_each` rule's items those `items` selects.
fn evaluate_items(
    rule: &Rule,
    policy: Option<&Policy>,
    items: &ItemSelection,
    facts: &Facts,
) -> Vec<Finding> {
    // a site overlay turned it off: skipped, saying who and why
    if let Some(d) = rule.disabled() {
        return vec![finding::disabled_finding(rule, d)];
    }
    if let Some(fe) = &rule.for_each {
        return foreach::check(rule, policy, items, facts, fe);
    }
    judge(rule, policy, &RuleCx::new(facts, rule, policy))
}

#[cfg(test)]
mod rule_tests {
    use super::*;
    use crate::facts::{Entry, Evidence, Namespace, Need, Setting};
    use crate::host::Host;
    use crate::report::Status;
    use crate::value::Value;

    fn facts_with(ns: &str, key: &str, v: Value) -> Facts {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean");
        let host = Host::snapshot(dir).unwrap();
        let mut f = Facts::new(&host);
        f.facts
            .insert("mem_total".into(), Ok(Value::Size(24.0 * 1073741824.0)));
        let mut n = Namespace::new("not set");
        n.set(key, Setting::new(v, "x", Evidence::line("/etc/my.cnf", 7)));
        f.namespaces.insert(ns.into(), n);
        f
    }

    fn rules(yaml: &str) -> PolicySet {
        let mut s = PolicySet::new();
        s.add_str("t.yaml", yaml).unwrap();
        s
    }

    #[test]
    fn assert_failure_cites_values_and_evidence() {
        let set = rules("policy: t\ntitle: t\nparams:\n  share: 0.4\nrules:\n  - id: t.pool\n    title: t\n    severity: high\n    assert: \"mycnf.innodb_buffer_pool_size <= params.share * mem_total\"\n    why: \"pool {mycnf.innodb_buffer_pool_size} is {pct(mycnf.innodb_buffer_pool_size / mem_total)} of {mem_total}\"\n    fix: \"set it below {params.share * mem_total}\"\n");
        let f = facts_with(
            "mycnf",
            "innodb_buffer_pool_size",
            Value::Size(12.0 * 1073741824.0),
        );
        let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].status, Status::Fail);
        assert_eq!(out[0].explanation, "pool 12 GiB is 50 % of 24 GiB");
        assert_eq!(out[0].fix, "set it below 9.6 GiB");
        assert_eq!(out[0].subject, ["innodb_buffer_pool_size"]);
        assert_eq!(out[0].evidence[0].to_string(), "/etc/my.cnf:7");
        assert_eq!(
            out[0].actual.as_deref(),
            Some("innodb_buffer_pool_size = 12 GiB")
        );
    }

    #[test]
    fn a_key_known_only_to_lie_in_a_range_is_judged_when_the_range_decides() {
        // the data directory holds 1000 GiB; the redo log inside it could
        // not be read, but the server allows at most 512 GiB of it
        let yaml = "policy: t\ntitle: t\nrules:\n  - id: t.pool\n    title: t\n    severity: high\n    let:\n      data: size(mycnf.dir - mycnf.redo)\n    assert: \"mycnf.pool >= min(data, 0.75 * mem_total)\"\n    why: \"{data} of data\"\n    fix: f\n";
        let set = rules(yaml);
        let mut f = facts_with("mycnf", "pool", Value::Size(128.0 * 1048576.0));
        let ns = f.namespaces.get_mut("mycnf").unwrap();
        let at = Evidence::line("/etc/my.cnf", 1);
        ns.set(
            "dir",
            Setting::new(Value::Size(1000.0 * 1073741824.0), "x", at),
        );
        let unread = || Entry::Unreadable {
            reason: "not in the capture".into(),
            evidence: vec![],
        };
        ns.entries.insert("redo".into(), unread());
        let judge = |f: &Facts| evaluate_rule(&set.rules()[0], set.policies().first(), f);
        // without a range: unknown
        assert_eq!(judge(&f)[0].status, Status::Unknown);
        // 1 MiB..512 GiB leaves at least 488 GiB of data over 18 GiB of RAM's share
        let ns = f.namespaces.get_mut("mycnf").unwrap();
        ns.bounds.insert(
            "redo".into(),
            (Value::Size(1048576.0), Value::Size(512.0 * 1073741824.0)),
        );
        let out = judge(&f);
        assert_eq!(out[0].status, Status::Fail, "{}", out[0].explanation);
        assert!(
            out[0]
                .explanation
                .contains("(unknown redo, between 488 GiB"),
            "{}",
            out[0].explanation
        );
        // a range that straddles the answer stays unknown, saying so
        let ns = f.namespaces.get_mut("mycnf").unwrap();
        ns.set(
            "dir",
            Setting::new(
                Value::Size(20.0 * 1073741824.0),
                "x",
                Evidence::line("/etc/my.cnf", 2),
            ),
        );
        ns.bounds.insert(
            "redo".into(),
            (Value::Size(1048576.0), Value::Size(20.0 * 1073741824.0)),
        );
        let out = judge(&f);
        assert_eq!(out[0].status, Status::Unknown);
        assert!(
            out[0].explanation.contains("differs over its range"),
            "{}",
            out[0].explanation
        );
    }

    #[test]
    fn missing_namespace_is_unknown_not_pass() {
        let set = rules("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: high\n    setting: mysql.version\n    expect: {present: true}\n    why: w\n    fix: f\n");
        let f = facts_with("mycnf", "x", Value::Number(1.0));
        let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
        assert_eq!(out[0].status, Status::Unknown);
    }

    #[test]
    fn an_unknown_from_data_never_read_has_its_namespaces_fix_not_the_refusal_one() {
        // a live host's running server: not refused, only `snapshot --mysql` reads it
        let yaml = "policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: high\n    setting: mysql.local_infile\n    expect: {equals: 'OFF'}\n    why: w\n    fix: f\n  - id: t.when\n    title: t\n    severity: high\n    applies: [{when: \"mysql.local_infile == 'OFF'\"}]\n    setting: mycnf.x\n    expect: {present: true}\n    why: w\n    fix: f\n";
        let set = rules(yaml);
        let mut f = facts_with("mycnf", "x", Value::Number(1.0));
        let mut ns = Namespace::unavailable("not read from a live host");
        ns.unknown_fix = Some("take a snapshot with --mysql".into());
        f.namespaces.insert("mysql".into(), ns);
        for r in set.rules() {
            let out = evaluate_rule(r, set.policies().first(), &f);
            assert_eq!(out[0].status, Status::Unknown, "{}", r.id);
            assert_eq!(out[0].fix, "take a snapshot with --mysql", "{}", r.id);
        }
        // without one, the host's generic fix for data it could not read
        f.namespaces.get_mut("mysql").unwrap().unknown_fix = None;
        let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
        assert_eq!(out[0].fix, f.unreadable_fix());
    }

    #[test]
    fn let_bindings_and_cycles() {
        let set = rules("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    let:\n      a: \"b + 1\"\n      b: \"a + 1\"\n    assert: \"a > 0\"\n    why: w\n    fix: f\n");
        let f = facts_with("mycnf", "x", Value::Number(1.0));
        let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
        assert_eq!(out[0].status, Status::Error);
        assert!(
            out[0].explanation.contains("refers to itself"),
            "{}",
            out[0].explanation
        );
    }

    #[test]
    fn mount_of_normalises_paths_and_a_relative_one_is_unknown() {
        let mut f = facts_with("mycnf", "x", Value::Number(1.0));
        let mut m = Namespace::new("not mounted");
        for p in ["/", "/srv/data"] {
            m.set(
                p,
                Setting::new(
                    Value::Str(p.into()),
                    "x",
                    Evidence::line("/proc/self/mountinfo", 1),
                ),
            );
        }
        f.namespaces.insert("mount".into(), m);
        let run = |arg: &str| {
            let set = rules(&format!("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    assert: \"mount_of('{arg}') == '/srv/data'\"\n    why: w\n    fix: f\n"));
            let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
            (out[0].status, out[0].explanation.clone())
        };
        assert_eq!(run("/srv//data/./mysql/").0, Status::Pass);
        assert_eq!(run("/srv/database").0, Status::Fail);
        let (status, why) = run("srv/data");
        assert_eq!(status, Status::Unknown, "{why}");
        assert!(why.contains("not an absolute path"), "{why}");
    }

    #[test]
    fn the_plan_names_du_directories_as_data_before_anything_is_gathered() {
        let shipped = needs(&PolicySet::builtin().unwrap()).dir_sizes;
        assert!(
            shipped.contains(&Need::Fact("mysql_datadir".into())),
            "{shipped:?}"
        );
        assert!(
            shipped.contains(&Need::Setting {
                ns: "localconfig".into(),
                key: "mysql_data_directory".into()
            }),
            "{shipped:?}"
        );
        let set = rules("policy: t\ntitle: t\nparams:\n  dir: /srv\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    let:\n      d: \"du(params.dir) + du(mycnf[params.dir]) + du(here) + du('/a' + 'b')\"\n      here: \"mount_of('/x')\"\n      a: \"du(b)\"\n      b: \"a\"\n    assert: \"d > 0 and a > 0\"\n    why: w\n    fix: f\n");
        let planned: Vec<Need> = needs(&set).dir_sizes.into_iter().collect();
        assert_eq!(
            planned,
            [
                Need::Path("/srv".into()),
                Need::Setting {
                    ns: "mycnf".into(),
                    key: "/srv".into()
                }
            ],
            "a host function or a `let` cycle is not planned; a string sum is not a path"
        );
    }

    #[test]
    fn facts_resolve_a_setting_need_once_the_setting_is_gathered() {
        let f = facts_with(
            "localconfig",
            "mysql_data_directory",
            Value::Str("/opt/zimbra/db/data".into()),
        );
        let need = Need::Setting {
            ns: "localconfig".into(),
            key: "mysql_data_directory".into(),
        };
        assert_eq!(
            f.resolve_need(&need).as_deref(),
            Some("/opt/zimbra/db/data")
        );
        let unset = Need::Setting {
            ns: "localconfig".into(),
            key: "nothing_here".into(),
        };
        assert_eq!(f.resolve_need(&unset), None);
        assert_eq!(
            f.resolve_need(&Need::Fact("mem_total".into())).as_deref(),
            Some("25769803776")
        );
        // on a real snapshot: the localconfig value is the directory sized
        let host = Host::snapshot(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/hosts/zimbra-khimki-12g"
        ))
        .unwrap();
        let facts = gather(&PolicySet::builtin().unwrap(), &host);
        let dir = facts
            .resolve_need(&need)
            .expect("localconfig names the data directory");
        assert!(
            facts.dir_sizes.contains_key(&dir),
            "{dir}: {:?}",
            facts.dir_sizes
        );
    }

    #[test]
    fn actual_keeps_the_raw_value_and_each_conversion_as_goss_records_them() {
        let run = |raw: &str, v: Value, expect: &str| {
            let host = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean"))
                .unwrap();
            let mut f = Facts::new(&host);
            let mut n = Namespace::new("not set");
            n.set("x", Setting::new(v, raw, Evidence::line("/etc/my.cnf", 3)));
            f.namespaces.insert("mycnf".into(), n);
            let set = rules(&format!("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    setting: mycnf.x\n    expect: {expect}\n    why: w\n    fix: f\n"));
            let out = evaluate_rule(&set.rules()[0], set.policies().first(), &f);
            let steps: Vec<(String, String)> = out[0]
                .conversions
                .iter()
                .map(|c| (c.step.clone(), c.value.clone()))
                .collect();
            (out[0].status, out[0].actual_raw.clone(), steps)
        };
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        // goss's own example: expected > 200, got `128` after to-numeric
        assert_eq!(
            run("128", Value::Str("128".into()), "{gt: 200}"),
            (
                Status::Fail,
                Some("128".into()),
                vec![s("to-numeric", "128")]
            )
        );
        assert_eq!(
            run("16G", Value::Size(16.0 * 1073741824.0), "{max: 8G}"),
            (
                Status::Fail,
                Some("16G".into()),
                vec![s("to-bytes", "17179869184")]
            )
        );
        // a server's rounding is a step of its own
        assert_eq!(
            run("1000000", Value::Size(1048576.0), "{max: 8G}"),
            (
                Status::Pass,
                Some("1000000".into()),
                vec![s("adjusted", "1048576")]
            )
        );
        assert_eq!(
            run("0", Value::Bool(false), "{equals: true}"),
            (
                Status::Fail,
                Some("0".into()),
                vec![s("to-boolean", "false")]
            )
        );
        // no conversion, nothing kept: the value is the text as read
        assert_eq!(
            run("200", Value::Number(200.0), "{min: 100}"),
            (Status::Pass, None, vec![])
        );
        assert_eq!(
            run("OFF", Value::Bool(false), "{equals: false}"),
            (Status::Pass, None, vec![])
        );
        assert_eq!(
            run("17179869184", Value::Size(16.0 * 1073741824.0), "{max: 8G}"),
            (Status::Fail, None, vec![])
        );
    }
}
