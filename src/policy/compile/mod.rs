//! Compile one policy file: deserialize the raw spec, then validate and
//! compile it section by section (meta, params, each rule's applies, lets,
//! check, templates, breakdown), collecting every problem in one pass with
//! its span. Pure: text in, policy and rules or problems out; never reads
//! a file.
//!
//! The folder, in the order a file is compiled: `compiler` (where problems
//! go with their spans, expressions and templates parsed and their names
//! checked, what a rule's expressions may refer to), this file (the file
//! and each rule, section by section), `params` (the policy's parameters
//! and their declared types), then one file per
//! section of a rule: `checks` (`applies` and the check), `for_each`,
//! `texts` (templates, title, tags, controls, breakdown) and `remedy`.

mod checks;
mod compiler;
mod for_each;
mod params;
mod remedy;
mod texts;

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::diagnostics::{line_col, problem_at, yaml_problem};
use super::*;
use crate::value::Value;

use checks::{compile_applies, compile_check};
use compiler::{Compiler, Place, RuleScope};
use for_each::compile_for_each;
pub(super) use for_each::compile_items;
use params::compile_params;
use remedy::{compile_remedy, compile_requires, derived_remedy};
use texts::{compile_breakdown, compile_controls, compile_tags, compile_texts};

/// One compiled policy file, with where its ids are written (line, column)
/// for the set's duplicate checks.
pub(super) struct Compiled {
    pub policy: Policy,
    pub rules: Vec<Rule>,
    pub policy_at: (usize, usize),
    pub rule_at: Vec<(usize, usize)>,
    /// The file's `overrides:` (validated; applied by the set).
    pub overrides: Vec<Spanned<OverrideSpec>>,
    /// What loads but is written in a retired spelling, with the fix.
    pub warnings: Vec<PolicyProblem>,
    /// The profiles the file chooses for every run (`profiles:`).
    pub profiles: Vec<String>,
}

/// Compile one policy file.
pub(super) fn compile(path: &str, text: &str) -> Result<Compiled, PolicyError> {
    let raw = deserialize(path, text)?;
    let mut c = Compiler {
        path,
        text,
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let pid = raw.policy.value.clone();
    let (params, param_defaults, param_types) = compile_params(&mut c, &pid, &raw.params);
    let mut rules = Vec::new();
    let mut rule_at = Vec::new();
    let mut seen = BTreeMap::new();
    for spec in &raw.rules {
        if let Some(rule) = compile_rule(&mut c, path, &pid, &params, &mut seen, spec) {
            rules.push(rule);
            rule_at.push(line_col(&spec.id.referenced));
        }
    }
    c.problems
        .extend(super::overrides::validate(path, text, &raw.overrides));
    let mut profiles = Vec::new();
    for p in &raw.profiles {
        let name = p.value.trim();
        if name == super::profiles::ALL_PROFILE || super::profiles::profile(name).is_some() {
            profiles.push(name.to_string());
        } else {
            let mut known: Vec<&str> = super::profiles::PROFILES.iter().map(|p| p.name).collect();
            known.push(super::profiles::ALL_PROFILE);
            c.problem(
                Place::of(p),
                &pid,
                Problem::UnknownProfile {
                    name: name.to_string(),
                    known: known.join(", "),
                    suggestion: crate::expr::suggest(name, &known),
                },
            );
        }
    }
    if raw.rules.is_empty() && raw.overrides.is_empty() {
        let (line, column) = line_col(&raw.policy.referenced);
        c.problems.push(problem_at(
            path,
            text,
            line,
            column,
            None,
            Problem::YamlShape {
                message: "a policy needs `rules`, or `overrides` that adjust other policies' rules"
                    .into(),
            },
        ));
    }
    if !c.problems.is_empty() {
        return Err(PolicyError::Invalid(c.problems));
    }
    Ok(Compiled {
        policy: Policy {
            id: pid,
            title: raw.title,
            description: raw.description.trim().to_string(),
            params,
            param_defaults,
            param_types,
            benchmark: raw.benchmark,
            path: path.to_string(),
        },
        rules,
        policy_at: line_col(&raw.policy.referenced),
        rule_at,
        overrides: raw.overrides,
        warnings: c.warnings,
        profiles,
    })
}

/// `applies:` conditions an `overrides` entry (in `path`) adds to `rule`,
/// compiled in the rule's scope: its `let` names, facts and `params`
/// (the rule's effective parameters).
pub(super) fn compile_override_applies(
    path: &str,
    text: &str,
    rule: &Rule,
    params: &BTreeMap<String, Value>,
    conds: &[Condition],
) -> Result<Vec<Applies>, Vec<PolicyProblem>> {
    let mut c = Compiler {
        path,
        text,
        problems: Vec::new(),
        warnings: Vec::new(),
    };
    let names = rule
        .lets
        .keys()
        .cloned()
        .chain(
            [
                "actual", "expected", "setting", "source", "missing", "extra",
            ]
            .map(String::from),
        )
        .collect();
    let scope = RuleScope {
        id: rule.id.clone(),
        names,
        params,
    };
    let applies = compile_applies(&mut c, &scope, conds);
    if c.problems.is_empty() {
        Ok(applies)
    } else {
        Err(c.problems)
    }
}

/// The raw spec of one file, or the one YAML problem that stops it.
fn deserialize(path: &str, text: &str) -> Result<PolicyFile, PolicyError> {
    serde_saphyr::from_str(text).map_err(|e| {
        // serde-saphyr deserializes while it parses, so a rule that a
        // mis-indented line cuts short fails as "missing field" at the rule's
        // first line before the parser reaches the bad line. When the text is
        // not valid YAML at all, the syntax error is the one to show: it
        // points at the offending line (as PyYAML and libyaml do).
        let (e, syntax) = match serde_saphyr::from_str::<serde::de::IgnoredAny>(text) {
            Err(syntax) => (syntax, true),
            Ok(_) => (e, false),
        };
        PolicyError::Invalid(vec![yaml_problem(path, text, &e, syntax)])
    })
}

/// One rule: id, applies, lets, the check, templates and breakdown.
fn compile_rule(
    c: &mut Compiler,
    path: &str,
    pid: &str,
    params: &BTreeMap<String, Value>,
    seen: &mut BTreeMap<String, u64>,
    spec: &RuleSpec,
) -> Option<Rule> {
    let id = spec.id.value.clone();
    let at = spec.id.referenced;
    if let Some(prev) = seen.insert(id.clone(), at.line()) {
        c.problem(
            Place::at(&at),
            &id,
            Problem::DuplicateRuleId {
                id: id.clone(),
                previous: format!("line {prev}"),
            },
        );
    }
    if id.is_empty() || id.contains(char::is_whitespace) {
        c.problem(Place::at(&at), &id, Problem::InvalidRuleId);
    }
    let bind = spec.for_each.as_ref().map(|fe| {
        fe.value
            .bind
            .as_ref()
            .map(|b| b.value.trim().to_string())
            .unwrap_or_else(|| "item".to_string())
    });
    let names: BTreeSet<String> = spec
        .lets
        .keys()
        .cloned()
        .chain(
            [
                "actual", "expected", "setting", "source", "missing", "extra",
            ]
            .map(String::from),
        )
        .chain(bind.clone())
        .collect();
    let scope = RuleScope { id, names, params };
    let for_each = match (&spec.for_each, bind) {
        (Some(fe), Some(bind)) => compile_for_each(c, &scope, spec, fe, bind),
        _ => {
            if let Some(s) = &spec.subject {
                c.problem(
                    Place::of(s),
                    &scope.id,
                    Problem::InvalidForEach {
                        detail: "is missing: `subject` names the item of a `for_each` rule".into(),
                    },
                );
            }
            if let Some(s) = &spec.alias {
                c.problem(
                    Place::of(s),
                    &scope.id,
                    Problem::InvalidForEach {
                        detail: "is missing: `alias` names the items of a `for_each` rule".into(),
                    },
                );
            }
            if let Some(s) = spec.setting.as_ref().filter(|s| s.value.contains("${")) {
                c.problem(
                    Place::of(s),
                    &scope.id,
                    Problem::InvalidForEach {
                        detail: "is missing: a `setting` built with `${...}` needs the item of a `for_each`".into(),
                    },
                );
            }
            None
        }
    };
    let mut lets = BTreeMap::new();
    for (k, v) in &spec.lets {
        if let Some(e) = scope.expr(c, v, &format!("let `{k}`")) {
            lets.insert(k.clone(), e);
        }
    }
    let applies = compile_applies(c, &scope, &spec.applies);
    let check = compile_check(c, &scope, &at, spec);
    let (why, fix) = compile_texts(c, &scope, spec);
    let breakdown = spec
        .breakdown
        .as_ref()
        .and_then(|b| compile_breakdown(c, &scope, b));
    let remedy = match &spec.remedy {
        Some(r) => compile_remedy(c, &scope, r),
        None => check
            .as_ref()
            .and_then(|ch| derived_remedy(ch, spec.expect.as_ref())),
    };
    let requires = spec
        .remedy
        .as_ref()
        .and_then(|r| compile_requires(c, &scope, r));
    let tags = compile_tags(c, &spec.tags, &scope.id);
    let controls = compile_controls(c, &spec.controls, &scope.id);
    Some(Rule {
        id: scope.id,
        policy: pid.to_string(),
        title: spec.title.value.trim().to_string(),
        severity: spec.severity,
        applies,
        lets,
        check: check?,
        why,
        fix,
        references: spec.references.clone(),
        tags,
        controls,
        source: RuleSource {
            path: path.to_string(),
            line: at.line() as usize,
        },
        breakdown,
        remedy,
        overridden: Vec::new(),
        for_each: for_each.map(Box::new),
        requires,
    })
}
