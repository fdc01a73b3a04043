//! `for_each:` rules: the items of a list parameter, of the keys of a flat
//! namespace matching a `*` glob, or of the records of a record namespace
//! (optionally filtered), expanded over gathered facts, and each judged as
//! its own finding (the rule's id, the item first in the subject). An empty
//! expansion is never a silent pass: `unknown` when the namespace was not
//! captured, one `skip` saying the set is empty otherwise. Must not do I/O:
//! the plan gathered every key a glob can match before evaluation starts.
//! This file judges the items: [`check`] (one finding per item, or why
//! there are none), the rule as one item sees it, and [`item_remedy`] for
//! `driftaudit fix`; listing the items is `foreach_items`, evaluating their
//! `${...}` fields is `item_fields`.

use std::collections::BTreeMap;

use super::domain::{item_domain, shared_reads, Reads};
use super::eval::{DomainOf, ItemKey, RuleCx};
use super::finding::{base_finding, missing_finding};
use super::foreach_items::{expand, Item};
use super::item_fields::{apply_fields, field_values, item_path, render_plain};
use crate::expr::eval::{eval, Binding, Host, Missing};
use crate::facts::presence::Domain;
use crate::facts::Facts;
use crate::policy::{
    Applies, Check, CompiledItem, ForEach, ForEachSource, ItemSelection, PathText, Policy, Remedy,
    Rule,
};
use crate::report::{Finding, Status};
use crate::value::Value;

/// For `driftaudit fix`: the rule as the item whose subject is `subject`
/// sees it ([`ItemView::into_rule`]: its `setting:` key, and a remedy on
/// that setting, built from the item; `for_each` gone), and that remedy's
/// `set` value evaluated in the item's scope (`None` for a remedy that sets
/// nothing). The item is found and its view built as when it is judged.
pub(super) fn item_remedy(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    subject: &str,
) -> Result<(Rule, Option<Value>), Missing> {
    let items = expand(rule, policy, facts, fe).map_err(|f| Missing::Unknown {
        subject: subject.to_string(),
        reason: f.explanation,
    })?;
    let reads = shared_reads(rule);
    let shared = Shared::of(rule, fe, &reads);
    let on = On {
        facts,
        rule,
        policy,
        reads: &reads,
    };
    for item in items {
        let compiled = compiled(fe, item.index);
        let mut st = ItemState::new(binding(fe, item.value, item.key));
        let view = on.step(&mut st, on.shared(), |cx| {
            let errors = resolve_in(cx, compiled);
            let own = fe.subject.as_ref().map(|t| on.subject(cx, t));
            if own.filter(|s| !s.is_empty()).unwrap_or(item.subject) != subject {
                return None;
            }
            if let Some(b) = &mut cx.item {
                b.field_errors = errors;
            }
            Some(ItemView::of(rule, &shared, fe, cx))
        });
        let Some(view) = view else { continue };
        let r = view?.into_rule(rule);
        let v = match &r.remedy {
            Some(Remedy::Set { to, .. }) => Some(on.step(&mut st, on.shared(), |cx| eval(to, cx))?),
            _ => None,
        };
        return Ok((r, v));
    }
    Err(Missing::Absent {
        subject: subject.to_string(),
        reason: "no item of the rule's `for_each` has this subject on this host".into(),
    })
}

/// What every item of a rule shares, found once per rule and host: the
/// domain of an item's findings ([`item_domain`]: the rule's reads, its
/// own `applies`, not its `for_each`), and whether an item builds its own
/// `applies` paths or `setting:` key.
struct Shared {
    domain: Option<Domain>,
    per_item_path: bool,
    per_item_key: bool,
}

impl Shared {
    fn of(rule: &Rule, fe: &ForEach, reads: &Reads) -> Shared {
        Shared {
            domain: item_domain(&rule.applies, reads),
            per_item_path: rule.applies.iter().any(
                |a| matches!(a, Applies::Exists(p) | Applies::Missing(p) if p.contains(&fe.bind)),
            ),
            per_item_key: fe.setting_key.is_some() && matches!(rule.check, Check::Setting { .. }),
        }
    }
}

/// The item bound to the rule's `as:` name, as written.
fn binding(fe: &ForEach, value: Value, key: Option<ItemKey>) -> Binding {
    Binding {
        name: fe.bind.clone(),
        value,
        key,
        field_errors: BTreeMap::new(),
    }
}

/// Judge a `for_each` rule: one finding per item (a `drift:` check may
/// give several), or the one finding that says why there are no items.
/// The items are judged with the rule itself, each step of an item (its
/// alias, `when`, fields, check, subject) in a context made afresh for it
/// ([`On::step`]): no copy of the rule.
pub(super) fn check(
    rule: &Rule,
    policy: Option<&Policy>,
    chosen: &ItemSelection,
    facts: &Facts,
    fe: &ForEach,
) -> Vec<Finding> {
    let items = match expand(rule, policy, facts, fe) {
        Ok(items) => items,
        Err(f) => {
            // a set that cannot be listed on a host the rule does not apply
            // to (no fstab, no storage at all) is the rule's skip, as for a
            // rule without `for_each`; only a condition met leaves the unknown
            if f.status == Status::Unknown {
                let cx = RuleCx::new(facts, rule, policy);
                if let Some(skip) = super::applies::first_unmet(rule, policy, &cx) {
                    if skip.status == Status::Skip {
                        return vec![skip];
                    }
                }
            }
            return vec![*f];
        }
    };
    // what it reads outside `applies` and `for_each`, for every item's findings
    let reads = shared_reads(rule);
    let shared = Shared::of(rule, fe, &reads);
    let on = On {
        facts,
        rule,
        policy,
        reads: &reads,
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Item {
            value,
            key,
            subject: default_subject,
            index,
        } = item;
        let compiled = compiled(fe, index);
        let mut st = ItemState::new(binding(fe, value, key));
        let alias = fe
            .alias
            .as_ref()
            .map(|t| on.step(&mut st, on.shared(), |cx| cx.render(t)));
        if !chosen.selects(alias.as_deref()) {
            continue;
        }
        let mut subject = None;
        let mut findings = match fe.except.iter().find(|(k, _)| *k == default_subject) {
            // left out by the rule, with its reason in plain words
            Some((_, why)) => {
                let mut f = base_finding(rule, Status::Skip);
                f.explanation = why.clone();
                vec![f]
            }
            None => judge(&on, &shared, fe, compiled, &mut st, &mut subject),
        };
        let subject = match &fe.subject {
            None => default_subject,
            Some(t) => {
                // an item not judged as far as its fields: its subject over
                // them now
                let text = subject.unwrap_or_else(|| {
                    on.step(&mut st, on.shared(), |cx| {
                        resolve_in(cx, compiled);
                        cx.render(t)
                    })
                });
                if text.is_empty() {
                    default_subject
                } else {
                    text
                }
            }
        };
        for f in &mut findings {
            f.alias = alias.clone();
            let mut subjects = vec![subject.clone()];
            for s in f.subject.drain(..) {
                if !subjects.contains(&s) {
                    subjects.push(s);
                }
            }
            f.subject = subjects;
        }
        out.extend(findings);
    }
    out
}

/// What one `for_each` rule's items share and their contexts borrow: the
/// host's facts, the rule, its policy and what it reads in the parts its
/// items keep as they are ([`shared_reads`], found once for them all).
struct On<'a> {
    facts: &'a Facts,
    rule: &'a Rule,
    policy: Option<&'a Policy>,
    reads: &'a Reads,
}

/// What one item carries from one step of its judgement to the next: the
/// item bound to its name, what its check set (`setting`, `actual`,
/// `source`) and the fix a namespace gave for the unknowns read for it.
/// Each step reads and evaluates afresh: what one step read or evaluated
/// is not the next one's.
struct ItemState {
    binding: Option<Binding>,
    special: BTreeMap<String, Value>,
    unknown_fix: Option<String>,
}

impl ItemState {
    fn new(binding: Binding) -> ItemState {
        ItemState {
            binding: Some(binding),
            special: BTreeMap::new(),
            unknown_fix: None,
        }
    }
}

impl<'a> On<'a> {
    /// The domain of an item's findings about the rule itself (its `when`
    /// or fields that cannot be evaluated): the rule's, `for_each` and all.
    fn shared(&self) -> DomainOf<'a> {
        DomainOf::Shared(self.reads)
    }

    /// The item's `subject:` over its fields as evaluated in `cx`, in a
    /// context of its own (no field read as an error).
    fn subject(&self, cx: &RuleCx, t: &crate::policy::Template) -> String {
        let mut own = ItemState::new(cx.item.clone().expect("the item is bound"));
        self.step(&mut own, self.shared(), |cx| cx.render(t))
    }

    /// `f` in a context made afresh for one step of an item, its findings'
    /// domain `domain`: the item's state moved in, and back out after.
    fn step<R>(
        &self,
        st: &mut ItemState,
        domain: DomainOf<'a>,
        f: impl FnOnce(&mut RuleCx<'a>) -> R,
    ) -> R {
        let mut cx = RuleCx::new(self.facts, self.rule, self.policy);
        cx.domain = domain;
        cx.item = st.binding.take();
        *cx.special.get_mut() = std::mem::take(&mut st.special);
        *cx.unknown_fix.get_mut() = st.unknown_fix.take();
        let out = f(&mut cx);
        st.binding = cx.item.take();
        st.special = cx.special.into_inner();
        st.unknown_fix = cx.unknown_fix.into_inner();
        out
    }
}

/// The bound item's `${...}` fields evaluated in `cx` (which binds the
/// item as written), the results written into the bound record in place
/// (not into a copy of it); the fields that could not be evaluated, with
/// their reasons.
fn resolve_in(cx: &mut RuleCx, compiled: Option<&CompiledItem>) -> BTreeMap<String, Missing> {
    let values = match cx.item.as_ref().map(|b| &b.value) {
        Some(Value::Record(_)) => field_values(compiled, cx),
        _ => return BTreeMap::new(),
    };
    match cx.item.as_mut().map(|b| &mut b.value) {
        Some(Value::Record(m)) => apply_fields(m, values),
        _ => BTreeMap::new(),
    }
}

/// The compiled form of the list item at `index` (none for a key or record
/// item).
fn compiled(fe: &ForEach, index: Option<usize>) -> Option<&CompiledItem> {
    index.and_then(|i| fe.items.get(i))
}

/// One item judged, each step in a context of its own ([`On::step`]), and
/// its `subject:` rendered into `subject` once its fields are evaluated
/// (left `None` for an item not judged as far). The item is judged with the
/// rule itself, the parts an item changes given beside it ([`ItemView`],
/// its own `when` compiled at load); its findings' domain is that of the
/// rule without its `for_each` ([`Shared`]). A finding about the item
/// itself (a `when` or field that cannot be evaluated) is the rule's,
/// `for_each` and all.
fn judge(
    on: &On,
    shared: &Shared,
    fe: &ForEach,
    compiled: Option<&CompiledItem>,
    st: &mut ItemState,
    subject: &mut Option<String>,
) -> Vec<Finding> {
    let (rule, policy) = (on.rule, on.policy);
    // the item's own `when` first, over the item as written: an item that
    // does not apply is skipped before its `${...}` fields are evaluated
    if let Some((w, parsed)) = compiled.and_then(|c| c.when.as_ref()) {
        let unmet = match parsed {
            Ok(only_when) => {
                let domain = DomainOf::Found(item_domain([only_when], on.reads));
                on.step(st, domain, |cx| {
                    super::applies::first_unmet_of(rule, [only_when], policy, cx)
                })
            }
            Err(message) => Some(on.step(st, on.shared(), |cx| {
                missing_finding(
                    rule,
                    cx,
                    Missing::Error(format!("item `when: {w}`: {message}")),
                )
            })),
        };
        if let Some(f) = unmet {
            return vec![f];
        }
    }
    let fields = on.step(st, on.shared(), |cx| {
        let errors = resolve_in(cx, compiled);
        if let Some(t) = &fe.subject {
            *subject = Some(on.subject(cx, t));
        }
        let exists_error = errors.get("exists").cloned();
        if let Some(b) = &mut cx.item {
            b.field_errors = errors;
        }
        let view = ItemView::of(rule, shared, fe, cx)
            .map_err(|m| Box::new(missing_finding(rule, cx, m)))?;
        // the item's `exists` field: a path that must exist for it to apply
        if let Some(m) = exists_error {
            return Err(Box::new(missing_finding(rule, cx, m)));
        }
        let exists = match cx.item.as_ref().map(|b| &b.value) {
            Some(Value::Record(m)) => m
                .get("exists")
                .map(|p| Applies::Exists(PathText::literal(p.to_plain()))),
            _ => None,
        };
        Ok((view, exists))
    });
    let (view, exists) = match fields {
        Ok(parts) => parts,
        Err(f) => return vec![*f],
    };
    on.step(st, DomainOf::Found(shared.domain), |cx| {
        if let (Some(ItemKey { ns, key, .. }), ForEachSource::Records { .. }) =
            (cx.item.as_ref().and_then(|b| b.key.as_ref()), &fe.source)
        {
            // a record item is read from its namespace: its line is evidence
            let _ = cx.setting(ns, key);
        }
        // the item's `exists` first, then the rule's own as the item sees it
        let applies = exists.iter().chain(view.applies(rule));
        super::judge::judge_as(rule, applies, view.key.as_deref(), policy, cx)
    })
}

/// The rule as one item sees it, for judging and for `driftaudit fix`
/// alike ([`ItemView::of`], in the item's context, its fields evaluated):
/// its `applies` paths, by their place in the rule's (`None` where the
/// rule's own stands; none at all when no path names the item), and its
/// `setting:` key. Judging reads it beside the rule, copying nothing; fix
/// takes a copy of the rule so made ([`ItemView::into_rule`]).
struct ItemView {
    paths: Vec<Option<Applies>>,
    key: Option<String>,
}

impl ItemView {
    /// The view of the item bound in `cx`.
    fn of(rule: &Rule, shared: &Shared, fe: &ForEach, cx: &RuleCx) -> Result<ItemView, Missing> {
        let mut paths = Vec::new();
        if shared.per_item_path {
            paths.reserve(rule.applies.len());
            for a in &rule.applies {
                paths.push(match a {
                    Applies::Exists(p) if p.contains(&fe.bind) => {
                        Some(Applies::Exists(PathText::literal(item_path(p, cx)?)))
                    }
                    Applies::Missing(p) if p.contains(&fe.bind) => {
                        Some(Applies::Missing(PathText::literal(item_path(p, cx)?)))
                    }
                    _ => None,
                });
            }
        }
        let key = match &fe.setting_key {
            Some(t) if shared.per_item_key => Some(render_plain(t, cx)?),
            _ => None,
        };
        Ok(ItemView { paths, key })
    }

    /// The rule's `applies`, each path the item's where it builds one.
    fn applies<'v>(&'v self, rule: &'v Rule) -> impl Iterator<Item = &'v Applies> {
        rule.applies
            .iter()
            .enumerate()
            .map(|(i, a)| self.paths.get(i).and_then(Option::as_ref).unwrap_or(a))
    }

    /// A copy of `rule` as the item sees it, for `driftaudit fix`: without
    /// its `for_each` ([`Rule::copy_with`]), the item's `applies` and
    /// `setting:` key, a remedy on that setting following it.
    fn into_rule(self, rule: &Rule) -> Rule {
        let mut r = rule.copy_with(self.applies(rule).cloned().collect());
        if let (Some(built), Check::Setting { key, .. }) = (self.key, &mut r.check) {
            let written = std::mem::replace(key, built.clone());
            match &mut r.remedy {
                Some(Remedy::Set { key, .. }) | Some(Remedy::Remove { key, .. })
                    if *key == written =>
                {
                    *key = built
                }
                _ => {}
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySet;

    /// What the built-in rules leave out: an item's `when` that is false
    /// or cannot be told, an `exists` field (one that cannot be built), an
    /// `setting:` key and a `subject:` built from the item. (An `applies`
    /// path naming the item is a load error.)
    const ITEMS: &str = r#"policy: t
title: t
params:
  base: /etc
  dirs:
    - { id: all, path: "${params.base}", when: "true", exists: "${params.base}/fstab" }
    - { id: default, path: /var/log, min: 2, exists: "${params.nope}" }
    - { id: never, path: /nowhere, when: "false" }
    - { id: unknown, path: /x, when: "mycnf.nosuch > 1" }
    - { id: ip_forward, path: "${dir.nope}" }
    - { id: swappiness, path: /proc, when: "sysctl.vm.swappiness >= 0" }
rules:
  - id: t.dir
    title: directory items
    severity: low
    for_each: { param: dirs, as: dir }
    subject: "{dir.id}:{dir.path}"
    applies:
      - when: "true"
    setting: "sysctl.net.ipv4.conf.${dir.id}.rp_filter"
    expect: { min: "${default(dir.min, 1)}" }
    why: "{dir.id} at {dir.path}: {actual} from {source}"
    fix: "set {setting} to at least {expected}"
  - id: t.assert
    title: assert items
    severity: low
    for_each: { param: dirs, as: dir }
    assert: "dir.id != 'all'"
    why: "{dir.id}: {sysctl.vm.swappiness}"
    fix: "f"
"#;

    #[test]
    fn nothing_is_parsed_while_hosts_are_judged() {
        let mut set = PolicySet::builtin().unwrap();
        set.add_str("items.yaml", ITEMS).unwrap();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");
        let hosts: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| crate::host::Host::snapshot(e.unwrap().path()).unwrap())
            .collect();
        // loaded: every text is compiled; from here on nothing is parsed
        let before = crate::expr::PARSED.with(|n| n.get());
        let mut findings = 0;
        for host in &hosts {
            findings += crate::engine::audit_host(&set, host).findings.len();
        }
        assert!(findings > 1000, "{findings}");
        assert_eq!(crate::expr::PARSED.with(|n| n.get()), before);
    }

    #[test]
    fn items_of_every_for_each_rule_are_judged_on_every_shipped_host() {
        let mut set = PolicySet::builtin().unwrap();
        set.add_str("items.yaml", ITEMS).unwrap();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");
        let mut hosts: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        hosts.sort();
        let (mut rules, mut findings) = (0, 0);
        let mut statuses = Vec::new();
        for h in hosts {
            let host = crate::host::Host::snapshot(&h).unwrap();
            let facts = crate::engine::gather(&set, &host);
            for rule in set.rules() {
                let Some(fe) = &rule.for_each else { continue };
                let policy = set.policy_of(rule);
                let now = check(rule, policy, set.item_selection(rule), &facts, fe);
                rules += 1;
                findings += now.len();
                if rule.id.starts_with("t.") {
                    statuses.extend(now.iter().map(|f| (f.status, f.explanation.clone())));
                }
            }
        }
        assert!(
            rules > 50 && findings > 200,
            "{rules} rules, {findings} findings"
        );
        for st in [Status::Pass, Status::Fail, Status::Skip, Status::Unknown] {
            assert!(
                statuses.iter().any(|(s, _)| *s == st),
                "{st:?}: {statuses:#?}"
            );
        }
    }
}
