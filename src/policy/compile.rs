//! Compile one policy file: deserialize the raw spec, then validate and
//! compile it section by section (meta, params, each rule's applies, lets,
//! check, templates, breakdown), collecting every problem in one pass with
//! its span. Pure: text in, policy and rules or problems out; never reads
//! a file.

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

/// The items of a list parameter: every `${EXPR}` field and `when`
/// condition parses (they are evaluated per host, in the rule's scope).
fn check_items(
    c: &mut Compiler,
    pid: &str,
    name: &str,
    v: &Spanned<ParamValue>,
    items: &[BTreeMap<String, ParamValue>],
) {
    for (i, item) in items.iter().enumerate() {
        for (field, fv) in item {
            let ParamValue::Text(t) = fv else { continue };
            let mut exprs: Vec<&str> = Vec::new();
            if field == "when" {
                exprs.push(t);
            } else {
                let mut rest = t.as_str();
                while let Some(i) = rest.find("${") {
                    let after = &rest[i + 2..];
                    let end = after.find('}').unwrap_or(after.len());
                    exprs.push(&after[..end]);
                    rest = after.get(end + 1..).unwrap_or("");
                }
            }
            for inner in exprs {
                let Err(e) = expr::parse(inner) else { continue };
                c.problem(
                    Place::at(&v.referenced),
                    pid,
                    Problem::InvalidParam {
                        name: name.to_string(),
                        reason: super::ConstError::Syntax(format!(
                            "item {} field `{field}`: `{inner}`: {}",
                            i + 1,
                            e.message
                        )),
                    },
                );
            }
        }
    }
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

/// Names a `for_each` item cannot be bound to: they mean something already.
const RESERVED_BINDS: &[&str] = &[
    "actual", "expected", "setting", "source", "missing", "extra", "params", "true", "false",
    "and", "or", "not",
];

/// `for_each:`: exactly one set (a list parameter, `NS.GLOB` keys of a flat
/// namespace whose only wildcard is `*`, or a record namespace with an
/// optional `where`), a bound name that shadows nothing, the `subject`
/// template, and a `setting:` key built with `${...}`.
fn compile_for_each(
    c: &mut Compiler,
    scope: &RuleScope,
    spec: &RuleSpec,
    fe: &Spanned<ForEachSpec>,
    bind: String,
) -> Option<ForEach> {
    let id = &scope.id;
    let f = &fe.value;
    let bad = |c: &mut Compiler, place: Place, detail: String| {
        c.problem(place, id, Problem::InvalidForEach { detail });
    };
    let whole = Place::at(&fe.referenced);
    let n = [f.param.is_some(), f.keys.is_some(), f.records.is_some()]
        .iter()
        .filter(|x| **x)
        .count();
    if n != 1 {
        let found = if n == 0 { "none" } else { "several" };
        bad(
            c,
            whole,
            format!("needs exactly one of `param`, `keys` or `records`, found {found}"),
        );
        return None;
    }
    let bind_place = f.bind.as_ref().map(Place::of).unwrap_or(whole);
    let ident = bind
        .chars()
        .next()
        .is_some_and(|ch| ch.is_ascii_alphabetic() || ch == '_')
        && bind
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
    if !ident {
        bad(
            c,
            bind_place,
            format!("`as: {bind}`: the bound name must be a plain name (letters, digits, `_`)"),
        );
    } else if RESERVED_BINDS.contains(&bind.as_str())
        || FACT_NAMES.contains(&bind.as_str())
        || FLAT_NAMESPACES.contains(&bind.as_str())
        || RECORD_NAMESPACES.contains(&bind.as_str())
        || spec.lets.contains_key(&bind)
    {
        bad(
            c,
            bind_place,
            format!("`as: {bind}` would hide the fact, namespace, `let` or word of that name; pick another"),
        );
    }
    if let (Some(w), Some(_)) = (&f.filter, &f.param) {
        bad(
            c,
            Place::of(w),
            "`where` filters `keys` and `records`; a list parameter's items have `when:`".into(),
        );
    }
    // `where` names the record's fields or the key item's `NAME.key` and
    // `NAME.value` (and the bound name): not checked against facts, since
    // the fields are the item's own
    let filter = match &f.filter {
        None => None,
        Some(w) => match expr::parse(&w.value) {
            Ok(e) => {
                scope.check_params(c, &e, Place::of(w));
                Some((e, w.value.clone()))
            }
            Err(err) => {
                c.problem(
                    Place::of(w).plus(err.offset),
                    id,
                    Problem::InvalidExpression {
                        context: "for_each.where".into(),
                        reason: err.message,
                    },
                );
                None
            }
        },
    };
    let source = if let Some(p) = &f.param {
        let name = p.value.trim();
        match scope.params.get(name) {
            Some(crate::value::Value::List(_)) => ForEachSource::Param(name.to_string()),
            Some(other) => {
                bad(
                    c,
                    Place::of(p),
                    format!(
                        "`param: {name}` is a {}, not a list of items (`{name}: [{{id: a, ...}}, ...]`)",
                        other.type_name()
                    ),
                );
                return None;
            }
            None => {
                let keys: Vec<&str> = scope.params.keys().map(String::as_str).collect();
                c.problem(
                    Place::of(p),
                    id,
                    Problem::UnknownParam {
                        suggestion: expr::suggest(name, &keys),
                        name: name.to_string(),
                    },
                );
                return None;
            }
        }
    } else if let Some(k) = &f.keys {
        let Some((ns, pattern)) = k
            .value
            .split_once('.')
            .filter(|(ns, p)| FLAT_NAMESPACES.contains(ns) && !p.is_empty())
        else {
            bad(
                c,
                Place::of(k),
                format!(
                    "`keys: {}` is not NAMESPACE.GLOB over a flat namespace ({})",
                    k.value,
                    FLAT_NAMESPACES.join(", ")
                ),
            );
            return None;
        };
        if let Some(i) = pattern.find(['?', '[', ']', '{', '}']) {
            bad(
                c,
                Place::of(k).plus(ns.len() + 1 + i),
                format!(
                    "`keys: {}`: the only wildcard is `*` (each `*` binds the text it matched)",
                    k.value
                ),
            );
            return None;
        }
        if !pattern.contains('*') {
            bad(
                c,
                Place::of(k),
                format!(
                    "`keys: {}` has no `*`: a rule over one key needs no `for_each`",
                    k.value
                ),
            );
            return None;
        }
        ForEachSource::Keys {
            ns: ns.to_string(),
            pattern: pattern.to_string(),
            filter,
        }
    } else {
        let r = f.records.as_ref()?;
        let ns = r.value.trim();
        if !RECORD_NAMESPACES.contains(&ns) {
            bad(
                c,
                Place::of(r),
                format!(
                    "`records: {ns}` is not a record namespace ({}){}",
                    RECORD_NAMESPACES.join(", "),
                    expr::suggest(ns, RECORD_NAMESPACES)
                ),
            );
            return None;
        }
        ForEachSource::Records {
            ns: ns.to_string(),
            filter,
        }
    };
    let subject = spec.subject.as_ref().map(|s| {
        let t = c.template(s, id, "subject", &scope.names);
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                scope.check_params(c, e, Place::of(s));
            }
        }
        t
    });
    let setting_key = spec
        .setting
        .as_ref()
        .filter(|s| s.value.contains("${"))
        .and_then(|s| {
            let start = s.value.find('.')? + 1;
            Some(dollar_template(c, scope, s, start))
        });
    let alias = spec.alias.as_ref().and_then(|s| {
        if !matches!(source, ForEachSource::Param(_)) {
            bad(
                c,
                Place::of(s),
                "`alias` names the items of a `param` list (keys and records have no fixed ids)".into(),
            );
            return None;
        }
        let t = c.template(s, id, "alias", &scope.names);
        let plain = t.parts.iter().all(|p| match p {
            TemplatePart::Text(_) => true,
            TemplatePart::Expr(Expr::Field(b, _)) => matches!(b.as_ref(), Expr::Name(n) if *n == bind),
            _ => false,
        });
        if !plain {
            bad(
                c,
                Place::of(s),
                format!("`alias` placeholders are the item's fields (`{{{bind}.id}}`), so the ids are known before a host is read"),
            );
            return None;
        }
        Some(t)
    });
    let mut except = Vec::new();
    for (item, why) in &f.except {
        if why.value.trim().is_empty() {
            bad(
                c,
                Place::of(why),
                format!("`except: {{{item}: ...}}` needs the reason in plain words, which reports show for the skipped item"),
            );
        } else {
            except.push((item.clone(), why.value.trim().to_string()));
        }
    }
    let mut item_params = BTreeSet::new();
    if let ForEachSource::Param(p) = &source {
        if let Some(Value::List(items)) = scope.params.get(p) {
            for item in items {
                let Value::Record(m) = item else { continue };
                for v in m.values() {
                    let mut rest = v.to_plain();
                    while let Some(i) = rest.find("params.") {
                        rest = rest[i + "params.".len()..].to_string();
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        item_params.insert(name);
                    }
                }
            }
        }
    }
    Some(ForEach {
        source,
        bind,
        subject,
        setting_key,
        alias,
        only: Vec::new(),
        skip: Vec::new(),
        item_params: item_params.into_iter().collect(),
        except,
    })
}

/// The text of `s` from byte `start` as a template whose placeholders are
/// written `${EXPR}` (a `setting:` key built from a `for_each` item).
fn dollar_template(
    c: &mut Compiler,
    scope: &RuleScope,
    s: &Spanned<String>,
    start: usize,
) -> Template {
    let text = &s.value[start..];
    let mut parts = Vec::new();
    let mut rest = text;
    let mut at = start;
    while let Some(i) = rest.find("${") {
        if i > 0 {
            parts.push(TemplatePart::Text(rest[..i].to_string()));
        }
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            c.problem(
                Place::of(s).plus(at + i),
                &scope.id,
                Problem::UnclosedPlaceholder {
                    context: "setting".into(),
                },
            );
            rest = "";
            break;
        };
        let inner = &after[..end];
        let place = Place::of(s).plus(at + i + 2);
        if let Some(e) = c.expr_at(place, inner, &scope.id, "setting", &scope.names) {
            scope.check_params(c, &e, place);
            parts.push(TemplatePart::Expr(e));
        }
        at += i + 2 + end + 1;
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Text(rest.to_string()));
    }
    Template {
        parts,
        source: text.to_string(),
    }
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

/// The remedy a check implies when the rule declares none: one `equals`,
/// `min` or `max` of a writable setting (the value, rounded towards the
/// passing side), `absent: true` (remove the lines), or a `drift:` check.
fn derived_remedy(check: &Check, written: Option<&Expect>) -> Option<Remedy> {
    match check {
        Check::Drift(_) => Some(Remedy::Drift),
        Check::Setting {
            ns,
            key,
            expect,
            presence,
        } if WRITABLE.contains(&ns.as_str()) => match (expect.as_slice(), presence) {
            ([], Some(false)) => Some(Remedy::Remove {
                ns: ns.clone(),
                key: key.clone(),
            }),
            // `present: true` beside the value: writing the value makes it present
            ([(op, es)], None | Some(true)) if es.len() == 1 => {
                let (bound, raw) = match op {
                    ExpectOp::Equals => (Bound::Exact, written.and_then(|w| w.equals.as_ref())),
                    ExpectOp::Min => (Bound::AtLeast, written.and_then(|w| w.min.as_ref())),
                    ExpectOp::Max => (Bound::AtMost, written.and_then(|w| w.max.as_ref())),
                    _ => return None,
                };
                let text = match raw.map(|r| &r.value) {
                    Some(ParamValue::Bool(b)) => b.to_string(),
                    Some(ParamValue::Number(n)) => crate::value::format_number(*n),
                    Some(ParamValue::Text(t)) => t.clone(),
                    Some(other @ ParamValue::List(_)) => super::values::param_text(other),
                    None => "the expected value".to_string(),
                };
                Some(Remedy::Set {
                    ns: ns.clone(),
                    key: key.clone(),
                    to: es[0].clone(),
                    text,
                    bound,
                    derived: true,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// A remedy's `set`/`remove` target: `NAMESPACE.KEY` in a writable namespace.
fn remedy_setting(c: &mut Compiler, id: &str, s: &Spanned<String>) -> Option<(String, String)> {
    let Some((ns, key)) = s.value.split_once('.').filter(|(ns, k)| {
        FLAT_NAMESPACES.contains(ns) && !k.is_empty() && !k.contains(char::is_whitespace)
    }) else {
        c.problem(
            Place::of(s),
            id,
            Problem::InvalidSetting {
                namespaces: FLAT_NAMESPACES.join(", "),
                found: s.value.clone(),
            },
        );
        return None;
    };
    if !WRITABLE.contains(&ns) {
        c.problem(
            Place::of(s),
            id,
            Problem::RemedyNotWritable {
                found: s.value.clone(),
                namespaces: WRITABLE.join(", "),
            },
        );
        return None;
    }
    Some((ns.to_string(), key.to_string()))
}

/// `remedy:`: exactly one kind, its setting writable, its value an
/// expression of the rule's scope, its reason or options not empty.
fn compile_remedy(c: &mut Compiler, scope: &RuleScope, r: &Spanned<RemedySpec>) -> Option<Remedy> {
    let id = &scope.id;
    let spec = &r.value;
    let kinds = [
        spec.set.is_some(),
        spec.remove.is_some(),
        spec.options.is_some(),
        spec.none.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    let detail = if kinds > 1 {
        ", found several".to_string()
    } else if spec.to.is_some() && spec.set.is_none() {
        ": `to` goes with `set`".to_string()
    } else if spec.set.is_some() && spec.to.is_none() {
        ": `set` needs `to`".to_string()
    } else if kinds == 0 {
        ", found none".to_string()
    } else {
        String::new()
    };
    if !detail.is_empty() {
        c.problem(
            Place::at(&r.referenced),
            id,
            Problem::InvalidRemedy { detail },
        );
        return None;
    }
    if let (Some(set), Some(to)) = (&spec.set, &spec.to) {
        let target = remedy_setting(c, id, set);
        let e = c.expect_value(to, id, &scope.names)?;
        scope.check_params(c, &e, Place::of_value(to));
        let text = super::values::param_text(&to.value);
        let (ns, key) = target?;
        return Some(Remedy::Set {
            ns,
            key,
            to: e,
            text,
            bound: Bound::Exact,
            derived: false,
        });
    }
    if let Some(rm) = &spec.remove {
        let (ns, key) = remedy_setting(c, id, rm)?;
        return Some(Remedy::Remove { ns, key });
    }
    if let Some(o) = &spec.options {
        let clean = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        };
        let (add, remove) = (clean(&o.add), clean(&o.remove));
        if add.is_empty() && remove.is_empty() {
            c.problem(Place::at(&r.referenced), id, Problem::EmptyRemedyOptions);
            return None;
        }
        return Some(Remedy::Options { add, remove });
    }
    let reason = spec.none.as_ref().map(|n| n.value.trim().to_string())?;
    if reason.is_empty() {
        let at = spec
            .none
            .as_ref()
            .map(|n| n.referenced)
            .unwrap_or(r.referenced);
        c.problem(Place::at(&at), id, Problem::RemedyWithoutReason);
        return None;
    }
    Some(Remedy::None { reason })
}

/// `applies:`: kernel conditions, host paths (literal or `${params.X}`) and
/// `when` expressions; each problem points at its own condition.
fn compile_applies(c: &mut Compiler, scope: &RuleScope, conds: &[Condition]) -> Vec<Applies> {
    let id = &scope.id;
    let mut applies = Vec::new();
    for cond in conds {
        match cond {
            Condition::Kernel(s) => match parse_kernel_cond(&s.value) {
                Ok(v) => applies.push(Applies::Kernel(v, s.value.clone())),
                Err(reason) => c.problem(
                    Place::of(s).plus(reason.offset()),
                    id,
                    Problem::InvalidKernelCondition {
                        text: s.value.clone(),
                        reason,
                    },
                ),
            },
            Condition::Exists(s) | Condition::Missing(s) => {
                let p = &s.value;
                if let Some(inner) = p.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                    let place = Place::of(s).plus(2);
                    match expr::parse(inner) {
                        Ok(e) => {
                            scope.check_params(c, &e, Place::of(s));
                            let mut bad = Vec::new();
                            expr::walk(&e, &mut |x| {
                                if let Expr::Name(n) | Expr::Setting(n, _) = x {
                                    bad.push(n.clone())
                                }
                            });
                            for name in bad {
                                let at = inner.find(name.as_str()).unwrap_or(0);
                                c.problem(
                                    place.plus(at),
                                    id,
                                    Problem::AppliesPathNotConstant {
                                        path: p.clone(),
                                        name,
                                    },
                                );
                            }
                        }
                        Err(e) => c.problem(
                            place.plus(e.offset),
                            id,
                            Problem::InvalidAppliesPath {
                                path: p.clone(),
                                reason: e.message,
                            },
                        ),
                    }
                }
                applies.push(if matches!(cond, Condition::Exists(_)) {
                    Applies::Exists(p.clone())
                } else {
                    Applies::Missing(p.clone())
                });
            }
            Condition::When(s) => {
                if let Some(e) = scope.expr(c, s, "applies.when") {
                    applies.push(Applies::When(e, s.value.clone()));
                }
            }
        }
    }
    applies
}

/// The one check of a rule: `assert`, `drift`, or `setting` with `expect`.
fn compile_check(
    c: &mut Compiler,
    scope: &RuleScope,
    at: &serde_saphyr::Location,
    spec: &RuleSpec,
) -> Option<Check> {
    let n_checks = [
        spec.setting.is_some() || spec.expect.is_some(),
        spec.assert.is_some(),
        spec.drift.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if n_checks != 1 {
        c.problem(Place::at(at), &scope.id, Problem::CheckCount);
    }
    if let Some(a) = &spec.assert {
        scope.expr(c, a, "assert").map(Check::Assert)
    } else if let Some(d) = &spec.drift {
        Some(Check::Drift(compile_drift(c, scope, d)))
    } else if let (Some(s), Some(ex)) = (&spec.setting, &spec.expect) {
        compile_setting(c, scope, s, ex)
    } else {
        if spec.setting.is_some() != spec.expect.is_some() {
            c.problem(Place::at(at), &scope.id, Problem::SettingWithoutExpect);
        }
        None
    }
}

/// `drift:`: two known namespaces, key globs, fields and the comparison;
/// each problem points at its own value.
fn compile_drift(c: &mut Compiler, scope: &RuleScope, d: &DriftSpec) -> DriftCheck {
    let id = &scope.id;
    for ns in [&d.configured, &d.running] {
        let name = ns.value.as_str();
        if !FLAT_NAMESPACES.contains(&name) && !RECORD_NAMESPACES.contains(&name) {
            let mut all: Vec<&str> = FLAT_NAMESPACES.to_vec();
            all.extend(RECORD_NAMESPACES);
            c.problem(
                Place::of(ns),
                id,
                Problem::UnknownNamespace {
                    name: name.to_string(),
                    suggestion: expr::suggest(name, &all),
                },
            );
        }
    }
    let mut pats = |list: &[Spanned<String>]| -> Vec<glob::Pattern> {
        list.iter()
            .filter_map(|g| match glob::Pattern::new(&g.value) {
                Ok(p) => Some(p),
                Err(e) => {
                    c.problem(
                        Place::of(g).plus(e.pos),
                        id,
                        Problem::InvalidGlob {
                            pattern: g.value.clone(),
                            reason: e.msg.to_string(),
                        },
                    );
                    None
                }
            })
            .collect()
    };
    let keys = pats(&d.keys);
    let ignore = pats(&d.ignore);
    DriftCheck {
        configured: d.configured.value.clone(),
        running: d.running.value.clone(),
        keys,
        ignore,
        field: d.field.as_ref().map(|x| x.value.clone()),
        running_field: d
            .running_field
            .as_ref()
            .or(d.field.as_ref())
            .map(|x| x.value.clone()),
        compare: d.compare.unwrap_or_default(),
    }
}

/// `setting:` naming one key literally, and its `expect:` entries.
fn compile_setting(
    c: &mut Compiler,
    scope: &RuleScope,
    s: &Spanned<String>,
    ex: &Expect,
) -> Option<Check> {
    let id = &scope.id;
    // `NS.key` takes the rest of the text literally (keys may contain `-` or `/`);
    // `NS["key"]` is parsed as an expression.
    let literal = s.value.split_once('.').filter(|(ns, k)| {
        FLAT_NAMESPACES.contains(ns) && !k.is_empty() && !k.contains(char::is_whitespace)
    });
    let parsed = match literal {
        Some((ns, k)) => Ok(Expr::Setting(
            ns.to_string(),
            Box::new(Expr::Lit(Value::Str(k.to_string()))),
        )),
        None => expr::parse(&s.value),
    };
    match parsed {
        Ok(Expr::Setting(ns, k)) => match *k {
            Expr::Lit(key) => {
                let mut expect = Vec::new();
                let single = [
                    (ExpectOp::Equals, &ex.equals),
                    (ExpectOp::Not, &ex.not),
                    (ExpectOp::Min, &ex.min),
                    (ExpectOp::Max, &ex.max),
                    (ExpectOp::Gt, &ex.gt),
                    (ExpectOp::Lt, &ex.lt),
                ];
                for (op, v) in single {
                    if let Some(v) = v {
                        if let Some(e) = c.expect_value(v, id, &scope.names) {
                            scope.check_params(c, &e, Place::of_value(v));
                            expect.push((op, vec![e]));
                        }
                    }
                }
                if let Some(list) = &ex.one_of {
                    let es: Vec<Expr> = list
                        .iter()
                        .filter_map(|v| {
                            let e = c.expect_value(v, id, &scope.names)?;
                            scope.check_params(c, &e, Place::of_value(v));
                            Some(e)
                        })
                        .collect();
                    expect.push((ExpectOp::OneOf, es));
                }
                let presence = match (ex.present, ex.absent) {
                    (Some(true), _) => Some(true),
                    (_, Some(true)) => Some(false),
                    _ => None,
                };
                if expect.is_empty() && presence.is_none() {
                    c.problem(Place::at(&s.referenced), id, Problem::EmptyExpect);
                }
                Some(Check::Setting {
                    ns,
                    key: key.to_plain(),
                    expect,
                    presence,
                })
            }
            _ => {
                c.problem(Place::at(&s.referenced), id, Problem::SettingNotLiteral);
                None
            }
        },
        _ => {
            c.problem(
                Place::at(&s.referenced),
                id,
                Problem::InvalidSetting {
                    namespaces: FLAT_NAMESPACES.join(", "),
                    found: s.value.clone(),
                },
            );
            None
        }
    }
}

/// `title`, `why` and `fix`: the templates, and that they say something.
fn compile_texts(c: &mut Compiler, scope: &RuleScope, spec: &RuleSpec) -> (Template, Template) {
    let id = &scope.id;
    let why = c.template(&spec.why, id, "why", &scope.names);
    let fix = c.template(&spec.fix, id, "fix", &scope.names);
    for (t, s) in [(&why, &spec.why), (&fix, &spec.fix)] {
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                scope.check_params(c, e, Place::of(s));
            }
        }
    }
    if spec.title.value.trim().is_empty() {
        c.problem(Place::at(&spec.title.referenced), id, Problem::EmptyTitle);
    }
    for s in [&spec.why, &spec.fix] {
        if s.value.trim().is_empty() {
            c.problem(Place::at(&s.referenced), id, Problem::EmptyText);
            break;
        }
    }
    (why, fix)
}

/// `tags:`: each a lowercase word (`cis-l1-server`), none twice.
fn compile_tags(c: &mut Compiler, tags: &[Spanned<String>], id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for t in tags {
        let tag = t.value.as_str();
        if !is_tag(tag) {
            c.problem(
                Place::at(&t.referenced),
                id,
                Problem::InvalidTag {
                    tag: tag.to_string(),
                    reason: "a tag is a lowercase word of letters, digits and `-` that starts with a letter or digit (`cis-l1-server`)",
                },
            );
        } else if out.iter().any(|o| o == tag) {
            c.problem(
                Place::at(&t.referenced),
                id,
                Problem::InvalidTag {
                    tag: tag.to_string(),
                    reason: "the rule already has this tag",
                },
            );
        } else {
            out.push(tag.to_string());
        }
    }
    out
}

/// `controls:`: each `FRAMEWORK:ITEM`, the framework a tag-like word, the
/// item without spaces or `:`, none twice.
fn compile_controls(c: &mut Compiler, controls: &[Spanned<String>], id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(controls.len());
    for t in controls {
        let v = t.value.as_str();
        let well_formed = v.split_once(':').is_some_and(|(fw, item)| {
            is_tag(fw)
                && !item.is_empty()
                && !item.contains(|ch: char| ch.is_whitespace() || ch == ':')
        });
        let reason = if !well_formed {
            "a benchmark item is `FRAMEWORK:ITEM`, the framework a lowercase word (`cis-debian12:3.3.9`, `stig-rhel9:RHEL-09-253025`)"
        } else if out.iter().any(|o| o == v) {
            "the rule already names this item"
        } else {
            out.push(v.to_string());
            continue;
        };
        c.problem(
            Place::at(&t.referenced),
            id,
            Problem::InvalidControl {
                control: v.to_string(),
                reason,
            },
        );
    }
    out
}

/// Whether `t` is a tag: `[a-z0-9][a-z0-9-]*`, at most 64 characters.
pub(crate) fn is_tag(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && t.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `breakdown:`: the whole and its parts, as expressions.
fn compile_breakdown(c: &mut Compiler, scope: &RuleScope, b: &BreakdownSpec) -> Option<Breakdown> {
    let total = c.expr(&b.total, &scope.id, "breakdown.total", &scope.names)?;
    let parts: Vec<(String, Expr)> = b
        .parts
        .iter()
        .filter_map(|p| {
            Some((
                p.label.clone(),
                c.expr(&p.value, &scope.id, "breakdown part", &scope.names)?,
            ))
        })
        .collect();
    Some(Breakdown {
        label: b.label.clone(),
        total,
        parts,
        rest: b.rest.clone(),
    })
}
