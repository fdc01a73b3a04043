//! Compile one policy file: deserialize the raw spec, then validate and
//! compile it section by section (meta, params, each rule's applies, lets,
//! check, templates, breakdown), collecting every problem in one pass with
//! its span. Pure: text in, policy and rules or problems out; never reads
//! a file.

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use super::diagnostics::{problem_at, yaml_problem};
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

impl Compiler<'_> {
    fn problem(&mut self, at: &serde_saphyr::Location, rule: &str, offset: usize, message: String) {
        let line = at.line() as usize;
        let column = at.column() as usize + offset;
        self.problems.push(problem_at(
            self.path,
            self.text,
            line.max(1),
            column.max(1),
            Some(rule.to_string()),
            message,
        ));
    }

    fn expr(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match expr::parse(&s.value) {
            Ok(e) => {
                self.check_names(&e, s, rule, what, names);
                Some(e)
            }
            Err(err) => {
                // a quoted scalar starts one column before its text
                let quoted = self.quote_offset(&s.referenced);
                self.problem(
                    &s.referenced,
                    rule,
                    err.offset + quoted,
                    format!("{what}: {}", err.message),
                );
                None
            }
        }
    }

    fn quote_offset(&self, at: &serde_saphyr::Location) -> usize {
        let line = self
            .text
            .lines()
            .nth((at.line() as usize).saturating_sub(1))
            .unwrap_or("");
        match line.chars().nth((at.column() as usize).saturating_sub(1)) {
            Some('"') | Some('\'') => 1,
            _ => 0,
        }
    }

    fn check_names(
        &mut self,
        e: &Expr,
        s: &Spanned<String>,
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
            let offset = s.value.find(n.as_str()).unwrap_or(0) + self.quote_offset(&s.referenced);
            self.problem(
                &s.referenced,
                rule,
                offset,
                format!("{what}: unknown name `{n}`{}", expr::suggest(&n, &cands)),
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
        let chars: Vec<char> = s.value.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '{' if chars.get(i + 1) == Some(&'{') => {
                    lit.push('{');
                    i += 2;
                }
                '}' if chars.get(i + 1) == Some(&'}') => {
                    lit.push('}');
                    i += 2;
                }
                '{' => {
                    let Some(end) = chars[i + 1..].iter().position(|c| *c == '}') else {
                        self.problem(&s.referenced, rule, 0, format!("{what}: `{{` without a closing `}}` (write `{{{{` for a literal brace)"));
                        break;
                    };
                    let inner: String = chars[i + 1..i + 1 + end].iter().collect();
                    if !lit.is_empty() {
                        parts.push(TemplatePart::Text(std::mem::take(&mut lit)));
                    }
                    let sp = Spanned {
                        value: inner,
                        referenced: s.referenced,
                        defined: s.defined,
                    };
                    if let Some(e) = self.expr(
                        &sp,
                        rule,
                        &format!("{what} placeholder `{{{}}}`", sp.value),
                        names,
                    ) {
                        parts.push(TemplatePart::Expr(e));
                    }
                    i += end + 2;
                }
                c => {
                    lit.push(c);
                    i += 1;
                }
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
        v: &ParamValue,
        at: &serde_saphyr::Location,
        rule: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match v {
            ParamValue::Bool(b) => Some(Expr::Lit(Value::Bool(*b))),
            ParamValue::Number(n) => Some(Expr::Lit(Value::Number(*n))),
            ParamValue::Text(t) => {
                if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                    let sp = Spanned {
                        value: inner.to_string(),
                        referenced: *at,
                        defined: *at,
                    };
                    self.expr(&sp, rule, "expect", names)
                } else if t.chars().next().is_some_and(|c| c.is_ascii_digit())
                    && parse_size(t).is_ok()
                {
                    Some(Expr::Lit(Value::Size(parse_size(t).unwrap_or(0.0))))
                } else {
                    Some(Expr::Lit(Value::Str(t.clone())))
                }
            }
        }
    }
}

/// Compile one policy file.
pub(super) fn compile(path: &str, text: &str) -> Result<(Policy, Vec<Rule>), PolicyError> {
    let raw = deserialize(path, text)?;
    let mut c = Compiler {
        path,
        text,
        problems: Vec::new(),
    };
    let pid = raw.policy.value.clone();
    let (params, param_defaults) = compile_params(&mut c, &pid, &raw.params);
    let mut rules = Vec::new();
    let mut seen = BTreeMap::new();
    for spec in &raw.rules {
        if let Some(rule) = compile_rule(&mut c, path, &pid, &params, &mut seen, spec) {
            rules.push(rule);
        }
    }
    if !c.problems.is_empty() {
        return Err(PolicyError::Invalid(c.problems));
    }
    Ok((
        Policy {
            id: pid,
            title: raw.title,
            description: raw.description.trim().to_string(),
            params,
            param_defaults,
            path: path.to_string(),
        },
        rules,
    ))
}

/// The raw spec of one file, or the one YAML problem that stops it.
fn deserialize(path: &str, text: &str) -> Result<PolicyFile, PolicyError> {
    serde_saphyr::from_str(text).map_err(|e| {
        // serde-saphyr deserializes while it parses, so a rule that a
        // mis-indented line cuts short fails as "missing field" at the rule's
        // first line before the parser reaches the bad line. When the text is
        // not valid YAML at all, the syntax error is the one to show: it
        // points at the offending line (as PyYAML and libyaml do).
        let e = match serde_saphyr::from_str::<serde::de::IgnoredAny>(text) {
            Err(syntax) => syntax,
            Ok(_) => e,
        };
        PolicyError::Invalid(vec![yaml_problem(path, text, &e)])
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
            Err(e) => c.problem(&v.referenced, pid, 0, format!("parameter `{k}`: {e}")),
        }
        param_defaults.insert(
            k.clone(),
            match &v.value {
                ParamValue::Bool(b) => b.to_string(),
                ParamValue::Number(n) => crate::value::format_number(*n),
                ParamValue::Text(t) => t.clone(),
            },
        );
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
    fn check_params(&self, c: &mut Compiler, e: &Expr, s: &Spanned<String>) {
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
            c.problem(
                &s.referenced,
                &self.id,
                0,
                format!("unknown parameter `params.{p}`{}", expr::suggest(&p, &keys)),
            );
        }
    }

    /// Parse an expression of this rule and check its names and parameters.
    fn expr(&self, c: &mut Compiler, s: &Spanned<String>, what: &str) -> Option<Expr> {
        let e = c.expr(s, &self.id, what, &self.names)?;
        self.check_params(c, &e, s);
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
            &at,
            &id,
            0,
            format!("duplicate rule id `{id}`: already defined at line {prev}"),
        );
    }
    if id.is_empty() || id.contains(char::is_whitespace) {
        c.problem(
            &at,
            &id,
            0,
            "rule id must be a non-empty word such as `linux.tcp-tw-recycle`".into(),
        );
    }
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
        .collect();
    let scope = RuleScope { id, names, params };
    let mut lets = BTreeMap::new();
    for (k, v) in &spec.lets {
        if let Some(e) = scope.expr(c, v, &format!("let `{k}`")) {
            lets.insert(k.clone(), e);
        }
    }
    let applies = compile_applies(c, &scope, &at, &spec.applies);
    let check = compile_check(c, &scope, &at, spec);
    let (why, fix) = compile_texts(c, &scope, &at, spec);
    let breakdown = spec
        .breakdown
        .as_ref()
        .and_then(|b| compile_breakdown(c, &scope, b));
    Some(Rule {
        id: scope.id,
        policy: pid.to_string(),
        title: spec.title.trim().to_string(),
        severity: spec.severity,
        applies,
        lets,
        check: check?,
        why,
        fix,
        references: spec.references.clone(),
        source: RuleSource {
            path: path.to_string(),
            line: at.line() as usize,
        },
        breakdown,
    })
}

/// `applies:`: kernel conditions, host paths (literal or `${params.X}`) and
/// `when` expressions.
fn compile_applies(
    c: &mut Compiler,
    scope: &RuleScope,
    at: &serde_saphyr::Location,
    conds: &[Condition],
) -> Vec<Applies> {
    let id = &scope.id;
    let mut applies = Vec::new();
    for cond in conds {
        match cond {
            Condition::Kernel(s) => match parse_kernel_cond(s) {
                Ok(v) => applies.push(Applies::Kernel(v, s.clone())),
                Err(e) => c.problem(at, id, 0, format!("applies.kernel `{s}`: {e}")),
            },
            Condition::Exists(p) | Condition::Missing(p) => {
                if let Some(inner) = p.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                    match expr::parse(inner) {
                        Ok(e) => {
                            let mut bad = Vec::new();
                            expr::walk(&e, &mut |x| match x {
                                Expr::Param(n) if !scope.params.contains_key(n) => {
                                    bad.push(format!("params.{n}"))
                                }
                                Expr::Name(n) | Expr::Setting(n, _) => bad.push(n.clone()),
                                _ => {}
                            });
                            for b in bad {
                                c.problem(at, id, 0, format!("applies path `{p}`: `{b}` cannot be used here; only parameters and constants"));
                            }
                        }
                        Err(e) => {
                            c.problem(at, id, 0, format!("applies path `{p}`: {}", e.message))
                        }
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
        c.problem(
            at,
            &scope.id,
            0,
            "a rule needs exactly one check: `setting` with `expect`, `assert`, or `drift`".into(),
        );
    }
    if let Some(a) = &spec.assert {
        scope.expr(c, a, "assert").map(Check::Assert)
    } else if let Some(d) = &spec.drift {
        Some(Check::Drift(compile_drift(c, scope, at, d)))
    } else if let (Some(s), Some(ex)) = (&spec.setting, &spec.expect) {
        compile_setting(c, scope, s, ex)
    } else {
        if spec.setting.is_some() != spec.expect.is_some() {
            c.problem(
                at,
                &scope.id,
                0,
                "`setting` and `expect` go together".into(),
            );
        }
        None
    }
}

/// `drift:`: two known namespaces, key globs, fields and the comparison.
fn compile_drift(
    c: &mut Compiler,
    scope: &RuleScope,
    at: &serde_saphyr::Location,
    d: &DriftSpec,
) -> DriftCheck {
    let id = &scope.id;
    for ns in [&d.configured, &d.running] {
        if !FLAT_NAMESPACES.contains(&ns.as_str()) && !RECORD_NAMESPACES.contains(&ns.as_str()) {
            let mut all: Vec<&str> = FLAT_NAMESPACES.to_vec();
            all.extend(RECORD_NAMESPACES);
            c.problem(
                at,
                id,
                0,
                format!("drift: unknown namespace `{ns}`{}", expr::suggest(ns, &all)),
            );
        }
    }
    let mut pats = |list: &[String]| -> Vec<glob::Pattern> {
        list.iter()
            .filter_map(|g| match glob::Pattern::new(g) {
                Ok(p) => Some(p),
                Err(e) => {
                    c.problem(at, id, 0, format!("drift key pattern `{g}`: {e}"));
                    None
                }
            })
            .collect()
    };
    let keys = pats(&d.keys);
    let ignore = pats(&d.ignore);
    DriftCheck {
        configured: d.configured.clone(),
        running: d.running.clone(),
        keys,
        ignore,
        field: d.field.clone(),
        running_field: d.running_field.clone().or_else(|| d.field.clone()),
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
                        if let Some(e) = c.expect_value(v, &s.referenced, id, &scope.names) {
                            expect.push((op, vec![e]));
                        }
                    }
                }
                if let Some(list) = &ex.one_of {
                    let es: Vec<Expr> = list
                        .iter()
                        .filter_map(|v| c.expect_value(v, &s.referenced, id, &scope.names))
                        .collect();
                    expect.push((ExpectOp::OneOf, es));
                }
                let presence = match (ex.present, ex.absent) {
                    (Some(true), _) => Some(true),
                    (_, Some(true)) => Some(false),
                    _ => None,
                };
                if expect.is_empty() && presence.is_none() {
                    c.problem(&s.referenced, id, 0, "`expect` needs at least one of equals, one_of, not, min, max, gt, lt, present, absent".into());
                }
                Some(Check::Setting {
                    ns,
                    key: key.to_plain(),
                    expect,
                    presence,
                })
            }
            _ => {
                c.problem(
                    &s.referenced,
                    id,
                    0,
                    "`setting` must name one key literally".into(),
                );
                None
            }
        },
        _ => {
            c.problem(
                &s.referenced,
                id,
                0,
                format!(
                    "`setting` must be NAMESPACE.KEY (namespaces: {}), found `{}`",
                    FLAT_NAMESPACES.join(", "),
                    s.value
                ),
            );
            None
        }
    }
}

/// `title`, `why` and `fix`: the templates, and that they say something.
fn compile_texts(
    c: &mut Compiler,
    scope: &RuleScope,
    at: &serde_saphyr::Location,
    spec: &RuleSpec,
) -> (Template, Template) {
    let id = &scope.id;
    let why = c.template(&spec.why, id, "why", &scope.names);
    let fix = c.template(&spec.fix, id, "fix", &scope.names);
    for t in [&why, &fix] {
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                scope.check_params(c, e, &spec.why);
            }
        }
    }
    if spec.title.trim().is_empty() {
        c.problem(at, id, 0, "`title` is empty".into());
    }
    if spec.why.value.trim().is_empty() || spec.fix.value.trim().is_empty() {
        c.problem(at, id, 0, "`why` and `fix` must say something".into());
    }
    (why, fix)
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
