//! Site overlays: a policy file's `overrides:` adjust rules it did not
//! write (severity, `disabled` with a reason, parameters, extra `applies`
//! conditions) without copying them, and record on each rule which file,
//! line and column set each value. Owns the composition rules: entries of
//! one file apply in order, files of one `--policy` argument have equal
//! precedence (different values for one rule's field are a load error
//! naming both places), and a later `--policy` argument wins over an
//! earlier one (docs/policy-language.md, Overrides). Pure: works on
//! compiled rules and policy text already read; never reads a file or
//! evaluates a rule.

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::diagnostics::{line_col, problem_at};
use super::values::param_value;
use super::{
    Applies, Condition, Overridden, OverrideSource, OverrideSpec, ParamValue, Policy,
    PolicyProblem, Problem, Rule, Severity,
};
use crate::expr::{self, Expr};
use crate::value::Value;

// ------------------------------------------------------------ the layers

/// The overrides of one policy file, kept with its text (for carets).
#[derive(Debug, Clone)]
pub(super) struct Layer {
    pub path: String,
    pub text: String,
    pub entries: Vec<Spanned<OverrideSpec>>,
}

fn source(path: &str, at: &serde_saphyr::Location) -> OverrideSource {
    let (line, column) = line_col(at);
    OverrideSource {
        path: path.to_string(),
        line,
        column,
    }
}

fn show_param(v: &ParamValue) -> String {
    super::values::param_text(v)
}

/// A condition as written, for notes and explanations.
fn show_condition(c: &Condition) -> String {
    match c {
        Condition::Kernel(s) => format!("kernel: {}", s.value),
        Condition::Exists(s) => format!("exists: {}", s.value),
        Condition::Missing(s) => format!("missing: {}", s.value),
        Condition::When(s) => format!("when: {}", s.value),
    }
}

/// Parameters a rule reads (`params.X` in its expressions and in its
/// `applies` paths).
pub(super) fn params_read(rule: &Rule) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in rule.expressions() {
        expr::walk(e, &mut |x| {
            if let Expr::Param(p) = x {
                out.insert(p.clone());
            }
        });
    }
    if let Some(fe) = &rule.for_each {
        if let super::ForEachSource::Param(p) = &fe.source {
            out.insert(p.clone());
        }
        out.extend(fe.item_params.iter().cloned());
    }
    for a in &rule.applies {
        if let Applies::Exists(p) | Applies::Missing(p) = a {
            let mut rest = p.as_str();
            while let Some(i) = rest.find("params.") {
                rest = &rest[i + "params.".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
    }
    out
}

/// One value an entry sets, keyed by what it sets it on: a rule's field
/// (`severity`, `disabled`, `params.X`) or a policy's parameter.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Rule(String, String),
    Policy(String, String),
}

/// What one entry sets on one target, and where.
struct Assignment {
    shown: String,
    value: Setting,
    at: OverrideSource,
    /// Index of the file in its level (files of one level conflict).
    file: usize,
}

enum Setting {
    Severity(Severity),
    Disabled,
    Param(Value),
}

/// Record an assignment of one level: a later entry of the same file
/// replaces an earlier one; another file of the level giving a different
/// value is a conflict naming both places.
fn assign(
    assigned: &mut BTreeMap<Target, Assignment>,
    problems: &mut Vec<PolicyProblem>,
    layer: &Layer,
    target: Target,
    a: Assignment,
) {
    if let Some(prev) = assigned.get(&target) {
        if prev.file != a.file {
            // one problem per pair of places, however many rules a glob matched
            let place = format!("{}:{}:{}", layer.path, a.at.line, a.at.column);
            let pair = format!("set at {}", prev.at);
            let seen = problems
                .iter()
                .any(|p| p.to_string().starts_with(&place) && p.message.contains(&pair));
            if prev.shown != a.shown && !seen {
                let (what, field) = match &target {
                    Target::Rule(r, f) => (format!("rule `{r}`"), f.clone()),
                    Target::Policy(p, f) => (format!("policy `{p}`"), f.clone()),
                };
                problems.push(problem_at(
                    &layer.path,
                    &layer.text,
                    a.at.line,
                    a.at.column,
                    None,
                    Problem::ConflictingOverride {
                        target: what,
                        field,
                        value: a.shown,
                        other_value: prev.shown.clone(),
                        other: prev.at.to_string(),
                    },
                ));
            }
            // the same value from two files: the first one stands
            return;
        }
    }
    assigned.insert(target, a);
}

/// The result of applying a set of levels: parameter values per policy and
/// per rule, with their sources.
#[derive(Debug, Clone, Default)]
pub(super) struct ParamOverrides {
    /// `(policy id, param)` → value and where it was set.
    pub policy: BTreeMap<(String, String), (Value, String, OverrideSource)>,
    /// `(rule id, param)` → value and where it was set.
    pub rule: BTreeMap<(String, String), (Value, String, OverrideSource)>,
}

/// Apply `levels` (each a list of files of equal precedence, lowest
/// precedence first) to `rules` and `policies`. `quiet_unmatched` leaves
/// out "matches nothing" problems (other files failed to load, so their
/// rules are missing). A rule glob that matches only `dormant` ids (rules
/// that exist but are not loaded in this run: the upgrade rules of a
/// product no `--target` names) changes nothing and is no problem, so one
/// site overlay serves runs with and without `--target`.
pub(super) fn apply(
    levels: &[Vec<Layer>],
    rules: &mut [Rule],
    policies: &mut [Policy],
    params: &mut ParamOverrides,
    quiet_unmatched: bool,
    dormant: &[String],
) -> Vec<PolicyProblem> {
    let mut problems = Vec::new();
    for level in levels {
        apply_level(
            level,
            rules,
            policies,
            params,
            (quiet_unmatched, dormant),
            &mut problems,
        );
    }
    problems
}

fn apply_level(
    level: &[Layer],
    rules: &mut [Rule],
    policies: &mut [Policy],
    params: &mut ParamOverrides,
    (quiet_unmatched, dormant): (bool, &[String]),
    problems: &mut Vec<PolicyProblem>,
) {
    let mut assigned: BTreeMap<Target, Assignment> = BTreeMap::new();
    // conditions are added, never replaced: no conflict among them
    let mut conditions: Vec<(usize, &Layer, &Condition, OverrideSource)> = Vec::new();
    let ids: Vec<String> = rules.iter().map(|r| r.id.clone()).collect();
    let pids: Vec<String> = policies.iter().map(|p| p.id.clone()).collect();
    for (file, layer) in level.iter().enumerate() {
        let problem = |problems: &mut Vec<PolicyProblem>, loc: &serde_saphyr::Location, p| {
            let (l, c) = line_col(loc);
            problems.push(problem_at(&layer.path, &layer.text, l, c, None, p));
        };
        let set = |assigned: &mut BTreeMap<Target, Assignment>,
                   problems: &mut Vec<PolicyProblem>,
                   target: Target,
                   shown: String,
                   value: Setting,
                   at: OverrideSource| {
            assign(
                assigned,
                problems,
                layer,
                target,
                Assignment {
                    shown,
                    value,
                    at,
                    file,
                },
            )
        };
        for entry in &layer.entries {
            let s = &entry.value;
            let (glob_s, is_rule) = match (&s.rule, &s.policy) {
                (Some(r), None) => (r, true),
                (None, Some(p)) => (p, false),
                _ => continue,
            };
            let Ok(pat) = glob::Pattern::new(&glob_s.value) else {
                continue;
            };
            let pool = if is_rule { &ids } else { &pids };
            let matched: Vec<usize> = pool
                .iter()
                .enumerate()
                .filter(|(_, id)| pat.matches(id))
                .map(|(i, _)| i)
                .collect();
            if matched.is_empty() {
                let sleeps = is_rule && dormant.iter().any(|d| pat.matches(d));
                if !quiet_unmatched && !sleeps {
                    let cands: Vec<&str> = pool.iter().map(String::as_str).collect();
                    problem(
                        problems,
                        &glob_s.referenced,
                        Problem::OverrideMatchesNothing {
                            what: if is_rule { "rule" } else { "policy" }.into(),
                            pattern: glob_s.value.clone(),
                            suggestion: expr::suggest(&glob_s.value, &cands),
                        },
                    );
                }
                continue;
            }
            if is_rule {
                for &i in &matched {
                    let id = &ids[i];
                    if let Some(sev) = &s.severity {
                        set(
                            &mut assigned,
                            problems,
                            Target::Rule(id.clone(), "severity".into()),
                            sev.value.as_str().to_string(),
                            Setting::Severity(sev.value),
                            source(&layer.path, &sev.referenced),
                        );
                    }
                    if let Some(d) = &s.disabled {
                        set(
                            &mut assigned,
                            problems,
                            Target::Rule(id.clone(), "disabled".into()),
                            d.value.trim().to_string(),
                            Setting::Disabled,
                            source(&layer.path, &d.referenced),
                        );
                    }
                }
                for c in &s.applies {
                    for &i in &matched {
                        conditions.push((i, layer, c, condition_source(&layer.path, c)));
                    }
                }
            }
            for (name, v) in &s.params {
                let Ok(value) = param_value(&v.value) else {
                    continue;
                };
                let shown = show_param(&v.value);
                let at = source(&layer.path, &v.referenced);
                let mut hit = false;
                // a value not of the parameter's declared type is refused
                // once, where the overlay writes it, and reaches no rule
                let mut refused = false;
                let mut typed = |problems: &mut Vec<PolicyProblem>, p: &Policy| match p
                    .param_types
                    .get(name)
                    .map(|t| t.check(&value))
                {
                    Some(Err(allowed)) => {
                        if !refused {
                            refused = true;
                            problem(
                                problems,
                                &v.referenced,
                                Problem::ParamType {
                                    name: name.clone(),
                                    value: shown.clone(),
                                    allowed,
                                },
                            );
                        }
                        false
                    }
                    _ => true,
                };
                if is_rule {
                    for &i in &matched {
                        let r = &rules[i];
                        let pol = policies.iter().find(|p| p.id == r.policy);
                        let has = pol.is_some_and(|p| p.params.contains_key(name));
                        if has && params_read(r).contains(name) {
                            hit = true;
                            if pol.is_some_and(|p| !typed(problems, p)) {
                                continue;
                            }
                            set(
                                &mut assigned,
                                problems,
                                Target::Rule(ids[i].clone(), format!("params.{name}")),
                                shown.clone(),
                                Setting::Param(value.clone()),
                                at.clone(),
                            );
                        }
                    }
                } else {
                    for &i in &matched {
                        if policies[i].params.contains_key(name) {
                            hit = true;
                            if !typed(problems, &policies[i]) {
                                continue;
                            }
                            set(
                                &mut assigned,
                                problems,
                                Target::Policy(pids[i].clone(), format!("params.{name}")),
                                shown.clone(),
                                Setting::Param(value.clone()),
                                at.clone(),
                            );
                        }
                    }
                }
                if !hit {
                    let known: BTreeSet<String> = if is_rule {
                        matched
                            .iter()
                            .flat_map(|&i| params_read(&rules[i]))
                            .collect()
                    } else {
                        matched
                            .iter()
                            .flat_map(|&i| policies[i].params.keys().cloned())
                            .collect()
                    };
                    let cands: Vec<&str> = known.iter().map(String::as_str).collect();
                    problem(
                        problems,
                        &v.referenced,
                        Problem::OverrideParamUnused {
                            name: name.clone(),
                            pattern: glob_s.value.clone(),
                            what: if is_rule {
                                "no rule it matches reads"
                            } else {
                                "no policy it matches has"
                            }
                            .into(),
                            suggestion: expr::suggest(name, &cands),
                        },
                    );
                }
            }
        }
    }
    // apply: values in target order, conditions in file order
    for (target, a) in assigned {
        match (target, a.value) {
            (Target::Rule(id, field), value) => {
                let Some(rule) = rules.iter_mut().find(|r| r.id == id) else {
                    continue;
                };
                let was = match &value {
                    Setting::Severity(sev) => {
                        let was = rule.severity.as_str().to_string();
                        rule.severity = *sev;
                        Some(was)
                    }
                    Setting::Param(v) => {
                        let name = field.trim_start_matches("params.").to_string();
                        let was = rule_param_now(rule, policies, params, &name);
                        params.rule.insert(
                            (id.clone(), name),
                            (v.clone(), a.shown.clone(), a.at.clone()),
                        );
                        was
                    }
                    _ => None,
                };
                let was = was.filter(|w| *w != a.shown);
                note(rule, &field, a.shown, was, a.at);
            }
            (Target::Policy(pid, field), Setting::Param(v)) => {
                let name = field.trim_start_matches("params.").to_string();
                let Some(policy) = policies.iter_mut().find(|p| p.id == pid) else {
                    continue;
                };
                let was = policy.params.get(&name).map(expr::show);
                policy.params.insert(name.clone(), v.clone());
                params.policy.insert(
                    (pid.clone(), name.clone()),
                    (v, a.shown.clone(), a.at.clone()),
                );
                for rule in rules.iter_mut() {
                    if rule.policy == pid
                        && !params.rule.contains_key(&(rule.id.clone(), name.clone()))
                        && params_read(rule).contains(&name)
                    {
                        let was = was.clone().filter(|w| *w != a.shown);
                        note(rule, &field, a.shown.clone(), was, a.at.clone());
                    }
                }
            }
            _ => {}
        }
    }
    for (i, layer, cond, at) in conditions {
        let rule = &rules[i];
        let mut scope_params = policies
            .iter()
            .find(|p| p.id == rule.policy)
            .map(|p| p.params.clone())
            .unwrap_or_default();
        for ((rid, name), (v, _, _)) in &params.rule {
            if rid == &rule.id {
                scope_params.insert(name.clone(), v.clone());
            }
        }
        match super::compile::compile_override_applies(
            &layer.path,
            &layer.text,
            rule,
            &scope_params,
            std::slice::from_ref(cond),
        ) {
            Ok(mut compiled) => {
                let rule = &mut rules[i];
                rule.applies.append(&mut compiled);
                rule.overridden.push(Overridden {
                    field: "applies".into(),
                    value: show_condition(cond),
                    was: None,
                    set_by: at,
                });
            }
            Err(mut p) => {
                // one problem per place in the overlay, not one per matched rule
                p.retain(|x| {
                    !problems
                        .iter()
                        .any(|y| (&y.path, y.line, y.column) == (&x.path, x.line, x.column))
                });
                problems.extend(p);
            }
        }
    }
}

fn condition_source(path: &str, c: &Condition) -> OverrideSource {
    match c {
        Condition::Kernel(s)
        | Condition::Exists(s)
        | Condition::Missing(s)
        | Condition::When(s) => source(path, &s.referenced),
    }
}

/// A rule's parameter value before this level, as shown.
fn rule_param_now(
    rule: &Rule,
    policies: &[Policy],
    params: &ParamOverrides,
    name: &str,
) -> Option<String> {
    if let Some((_, shown, _)) = params.rule.get(&(rule.id.clone(), name.to_string())) {
        return Some(shown.clone());
    }
    policies
        .iter()
        .find(|p| p.id == rule.policy)
        .and_then(|p| p.params.get(name))
        .map(expr::show)
}

/// Record on `rule` that `field` now has `value`, set at `at` (replacing an
/// earlier level's note for the same field).
fn note(rule: &mut Rule, field: &str, value: String, was: Option<String>, at: OverrideSource) {
    rule.overridden.retain(|o| o.field != field);
    rule.overridden.push(Overridden {
        field: field.to_string(),
        value,
        was,
        set_by: at,
    });
}

/// The effective policy of each rule with rule-level parameter overrides:
/// its policy with those values in place.
pub(super) fn rule_policies(
    policies: &[Policy],
    rules: &[Rule],
    params: &ParamOverrides,
) -> BTreeMap<String, Policy> {
    let mut out: BTreeMap<String, Policy> = BTreeMap::new();
    for ((rid, name), (v, _, _)) in &params.rule {
        let Some(rule) = rules.iter().find(|r| &r.id == rid) else {
            continue;
        };
        let Some(base) = policies.iter().find(|p| p.id == rule.policy) else {
            continue;
        };
        out.entry(rid.clone())
            .or_insert_with(|| base.clone())
            .params
            .insert(name.clone(), v.clone());
    }
    out
}

/// Record `--set [POLICY.]NAME=VALUE` on the rules that read the parameter:
/// the command line is applied last, over every overlay.
pub(super) fn note_set(rules: &mut [Rule], policy: Option<&str>, name: &str, value: &str) {
    let field = format!("params.{name}");
    for rule in rules {
        if policy.is_some_and(|p| p != rule.policy) || !params_read(rule).contains(name) {
            continue;
        }
        let was = rule
            .overridden
            .iter()
            .find(|o| o.field == field)
            .map(|o| o.value.clone());
        note(
            rule,
            &field,
            value.to_string(),
            was,
            OverrideSource {
                path: "--set".into(),
                line: 0,
                column: 0,
            },
        );
    }
}
