//! Compile one policy file: deserialize the raw spec, then validate and
//! compile it section by section (meta, params, each rule's applies, lets,
//! check, templates, breakdown), collecting every problem in one pass with
//! its span. Pure: text in, policy and rules or problems out; never reads
//! a file.

mod checks;
mod for_each;
mod remedy;
mod texts;

use checks::*;
use for_each::*;
use remedy::*;
use texts::*;

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::diagnostics::{line_col, problem_at, yaml_problem};
use super::values::{param_value, parse_kernel_cond};
use super::*;
use crate::catalogue::{FACT_NAMES, FLAT_NAMESPACES, RECORD_NAMESPACES};
use crate::expr::{self, Expr};
use crate::value::{parse_size, Value};

struct Compiler<'a> {
    path: &'a str,
    text: &'a str,
    problems: Vec<PolicyProblem>,
}

/// Where a problem is: a scalar's location, and how many characters into
/// its value the offending text starts.
#[derive(Clone, Copy)]
struct Place<'a> {
    at: &'a serde_saphyr::Location,
    /// The scalar's value, when the offset counts into it.
    value: Option<&'a str>,
    offset: usize,
}

impl<'a> Place<'a> {
    /// The start of a spanned scalar.
    fn of(s: &'a Spanned<String>) -> Place<'a> {
        Place {
            at: &s.referenced,
            value: Some(&s.value),
            offset: 0,
        }
    }

    /// The start of a parameter-like value (its text, when it is text).
    fn of_value(v: &'a Spanned<ParamValue>) -> Place<'a> {
        Place {
            at: &v.referenced,
            value: match &v.value {
                ParamValue::Text(t) => Some(t),
                _ => None,
            },
            offset: 0,
        }
    }

    /// The start of a value whose text is not at hand (a number, a mapping).
    fn at(at: &'a serde_saphyr::Location) -> Place<'a> {
        Place {
            at,
            value: None,
            offset: 0,
        }
    }

    /// `n` characters further into the same scalar.
    fn plus(self, n: usize) -> Place<'a> {
        Place {
            offset: self.offset + n,
            ..self
        }
    }
}

impl Compiler<'_> {
    fn problem(&mut self, place: Place, rule: &str, problem: Problem) {
        let line = place.at.line() as usize;
        let column = place.at.column() as usize + self.column_offset(place);
        self.problems.push(problem_at(
            self.path,
            self.text,
            line.max(1),
            column.max(1),
            Some(rule.to_string()),
            problem,
        ));
    }

    /// Columns from the scalar's start to its `offset`th character: known
    /// when the value stands on its source line as written (plain, or quoted
    /// without escapes); otherwise 0, and the caret marks the scalar itself
    /// rather than a wrong character.
    fn column_offset(&self, place: Place) -> usize {
        let Some(value) = place.value else {
            return 0;
        };
        let line = self
            .text
            .lines()
            .nth((place.at.line() as usize).saturating_sub(1))
            .unwrap_or("");
        let rest: String = line
            .chars()
            .skip((place.at.column() as usize).saturating_sub(1))
            .collect();
        let quote = usize::from(rest.starts_with(['"', '\'']));
        match value.get(..place.offset) {
            Some(before) if rest[quote..].starts_with(value) => quote + before.chars().count(),
            _ => 0,
        }
    }

    /// Parse the expression `inner`, found at `place`, and check its names.
    fn expr_at(
        &mut self,
        place: Place,
        inner: &str,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match expr::parse(inner) {
            Ok(e) => {
                self.check_names(&e, place, inner, rule, what, names);
                Some(e)
            }
            Err(err) => {
                self.problem(
                    place.plus(err.offset),
                    rule,
                    Problem::InvalidExpression {
                        context: what.to_string(),
                        reason: err.message,
                    },
                );
                None
            }
        }
    }

    fn expr(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        self.expr_at(Place::of(s), &s.value, rule, what, names)
    }

    fn check_names(
        &mut self,
        e: &Expr,
        place: Place,
        inner: &str,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) {
        let mut bad = Vec::new();
        expr::walk(e, &mut |x| {
            if let Expr::Name(n) = x {
                if !names.contains(n) && !FACT_NAMES.contains(&n.as_str()) {
                    bad.push(n.clone());
                }
            }
        });
        for n in bad {
            let mut cands: Vec<&str> = FACT_NAMES.to_vec();
            cands.extend(names.iter().map(String::as_str));
            cands.extend(FLAT_NAMESPACES.iter().copied());
            cands.extend(RECORD_NAMESPACES.iter().copied());
            let at = inner.find(n.as_str()).unwrap_or(0);
            self.problem(
                place.plus(at),
                rule,
                Problem::UnknownName {
                    context: what.to_string(),
                    suggestion: expr::suggest(&n, &cands),
                    name: n,
                },
            );
        }
    }

    fn template(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Template {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let text = s.value.as_str();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            if rest.starts_with("{{") {
                lit.push('{');
                i += 2;
            } else if rest.starts_with("}}") {
                lit.push('}');
                i += 2;
            } else if let Some(after) = rest.strip_prefix('{') {
                let Some(end) = after.find('}') else {
                    self.problem(
                        Place::of(s).plus(i),
                        rule,
                        Problem::UnclosedPlaceholder {
                            context: what.to_string(),
                        },
                    );
                    break;
                };
                let inner = &after[..end];
                if !lit.is_empty() {
                    parts.push(TemplatePart::Text(std::mem::take(&mut lit)));
                }
                if let Some(e) = self.expr_at(
                    Place::of(s).plus(i + 1),
                    inner,
                    rule,
                    &format!("{what} placeholder `{{{inner}}}`"),
                    names,
                ) {
                    parts.push(TemplatePart::Expr(e));
                }
                i += end + 2;
            } else {
                let c = rest.chars().next().unwrap_or(' ');
                lit.push(c);
                i += c.len_utf8();
            }
        }
        if !lit.is_empty() {
            parts.push(TemplatePart::Text(lit));
        }
        Template {
            parts,
            source: s.value.clone(),
        }
    }

    fn expect_value(
        &mut self,
        v: &Spanned<ParamValue>,
        rule: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match &v.value {
            ParamValue::Bool(b) => Some(Expr::Lit(Value::Bool(*b))),
            ParamValue::Number(n) => Some(Expr::Lit(Value::Number(*n))),
            ParamValue::Text(t) => {
                if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                    let place = Place {
                        at: &v.referenced,
                        value: Some(t),
                        offset: 2,
                    };
                    self.expr_at(place, inner, rule, "expect", names)
                } else if t.chars().next().is_some_and(|c| c.is_ascii_digit())
                    && parse_size(t).is_ok()
                {
                    Some(Expr::Lit(Value::Size(parse_size(t).unwrap_or(0.0))))
                } else {
                    Some(Expr::Lit(Value::Str(t.clone())))
                }
            }
            ParamValue::List(_) => {
                self.problem(
                    Place::at(&v.referenced),
                    rule,
                    Problem::YamlShape {
                        message: "expected a number, a boolean or text here; a list of items is a `params:` value".into(),
                    },
                );
                None
            }
        }
    }
}

/// One compiled policy file, with where its ids are written (line, column)
/// for the set's duplicate checks.
pub(super) struct Compiled {
    pub policy: Policy,
    pub rules: Vec<Rule>,
    pub policy_at: (usize, usize),
    pub rule_at: Vec<(usize, usize)>,
    /// The file's `overrides:` (validated; applied by the set).
    pub overrides: Vec<Spanned<OverrideSpec>>,
}

/// Compile one policy file.
pub(super) fn compile(path: &str, text: &str) -> Result<Compiled, PolicyError> {
    let raw = deserialize(path, text)?;
    let mut c = Compiler {
        path,
        text,
        problems: Vec::new(),
    };
    let pid = raw.policy.value.clone();
    let (params, param_defaults) = compile_params(&mut c, &pid, &raw.params);
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
            path: path.to_string(),
        },
        rules,
        policy_at: line_col(&raw.policy.referenced),
        rule_at,
        overrides: raw.overrides,
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

/// `params:`: each default's value and its text as written.
fn compile_params(
    c: &mut Compiler,
    pid: &str,
    raw: &BTreeMap<String, Spanned<ParamValue>>,
) -> (BTreeMap<String, Value>, BTreeMap<String, String>) {
    let mut params = BTreeMap::new();
    let mut param_defaults = BTreeMap::new();
    for (k, v) in raw {
        match param_value(&v.value) {
            Ok(val) => {
                params.insert(k.clone(), val);
            }
            Err(reason) => c.problem(
                Place::at(&v.referenced),
                pid,
                Problem::InvalidParam {
                    name: k.clone(),
                    reason,
                },
            ),
        }
        if let ParamValue::List(items) = &v.value {
            check_items(c, pid, k, v, items);
        }
        param_defaults.insert(k.clone(), super::values::param_text(&v.value));
    }
    (params, param_defaults)
}

/// What one rule's expressions may refer to: its id (for messages), the
/// names in scope and the policy's parameters.
struct RuleScope<'a> {
    id: String,
    names: BTreeSet<String>,
    params: &'a BTreeMap<String, Value>,
}

impl RuleScope<'_> {
    /// Every `params.X` in `e` must be a parameter of the policy.
    fn check_params(&self, c: &mut Compiler, e: &Expr, place: Place) {
        let mut bad = Vec::new();
        expr::walk(e, &mut |x| {
            if let Expr::Param(p) = x {
                if !self.params.contains_key(p) {
                    bad.push(p.clone());
                }
            }
        });
        for p in bad {
            let keys: Vec<&str> = self.params.keys().map(String::as_str).collect();
            // under `params.X` when the scalar's text is at hand
            let at = place
                .value
                .and_then(|v| v.get(place.offset..))
                .and_then(|v| v.find(&format!("params.{p}")))
                .unwrap_or(0);
            c.problem(
                place.plus(at),
                &self.id,
                Problem::UnknownParam {
                    suggestion: expr::suggest(&p, &keys),
                    name: p,
                },
            );
        }
    }

    /// Parse an expression of this rule and check its names and parameters.
    fn expr(&self, c: &mut Compiler, s: &Spanned<String>, what: &str) -> Option<Expr> {
        let e = c.expr(s, &self.id, what, &self.names)?;
        self.check_params(c, &e, Place::of(s));
        Some(e)
    }
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
    })
}

/// Namespaces `driftaudit fix` can write a `set`/`remove` remedy to
/// (mounts go through `options`).
pub(super) const WRITABLE: &[&str] = &[
    "sysctl",
    "sysctl_boot",
    "mycnf",
    "mycnf_effective",
    "zimbra_mycnf",
    "localconfig",
];
