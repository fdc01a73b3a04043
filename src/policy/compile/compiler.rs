//! The compiler's state and its tools: where problems go ([`Compiler`],
//! with the span of each), where in a scalar a problem is ([`Place`]),
//! expressions and templates parsed with their names checked, and what one
//! rule's expressions may refer to ([`RuleScope`]). Must not know the
//! sections of a policy file (the other files compile those).

use std::collections::{BTreeMap, BTreeSet};

use serde_saphyr::Spanned;

use crate::catalogue::{FACT_NAMES, FLAT_NAMESPACES, RECORD_NAMESPACES};
use crate::expr::{self, Expr};
use crate::policy::diagnostics::problem_at;
use crate::policy::{ParamValue, PolicyProblem, Problem, Template, TemplatePart};
use crate::value::{parse_size, Value};

/// One file's compilation: its path and text (for spans) and every
/// problem found so far.
pub(super) struct Compiler<'a> {
    pub(super) path: &'a str,
    pub(super) text: &'a str,
    pub(super) problems: Vec<PolicyProblem>,
    /// What loads but is written in a retired spelling, with the fix.
    pub(super) warnings: Vec<PolicyProblem>,
}

/// Where a problem is: a scalar's location, and how many characters into
/// its value the offending text starts.
#[derive(Clone, Copy)]
pub(super) struct Place<'a> {
    pub(super) at: &'a serde_saphyr::Location,
    /// The scalar's value, when the offset counts into it.
    pub(super) value: Option<&'a str>,
    pub(super) offset: usize,
}

impl<'a> Place<'a> {
    /// The start of a spanned scalar.
    pub(super) fn of(s: &'a Spanned<String>) -> Place<'a> {
        Place {
            at: &s.referenced,
            value: Some(&s.value),
            offset: 0,
        }
    }

    /// The start of a parameter-like value (its text, when it is text).
    pub(super) fn of_value(v: &'a Spanned<ParamValue>) -> Place<'a> {
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
    pub(super) fn at(at: &'a serde_saphyr::Location) -> Place<'a> {
        Place {
            at,
            value: None,
            offset: 0,
        }
    }

    /// `n` characters further into the same scalar.
    pub(super) fn plus(self, n: usize) -> Place<'a> {
        Place {
            offset: self.offset + n,
            ..self
        }
    }
}

impl Compiler<'_> {
    /// A problem that does not stop loading: a retired spelling read as
    /// its new one ([`Compiler::warnings`]).
    pub(super) fn warning(&mut self, place: Place, rule: &str, problem: Problem) {
        let before = self.problems.len();
        self.problem(place, rule, problem);
        let w = self.problems.split_off(before);
        self.warnings.extend(w);
    }

    pub(super) fn problem(&mut self, place: Place, rule: &str, problem: Problem) {
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
    pub(super) fn column_offset(&self, place: Place) -> usize {
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
    pub(super) fn expr_at(
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

    pub(super) fn expr(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        self.expr_at(Place::of(s), &s.value, rule, what, names)
    }

    pub(super) fn check_names(
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

    pub(super) fn template(
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

    pub(super) fn expect_value(
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
            ParamValue::List(_) | ParamValue::Typed(_) => {
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

/// What one rule's expressions may refer to: its id (for messages), the
/// names in scope and the policy's parameters.
pub(super) struct RuleScope<'a> {
    pub(super) id: String,
    pub(super) names: BTreeSet<String>,
    pub(super) params: &'a BTreeMap<String, Value>,
}

impl RuleScope<'_> {
    /// Every `params.X` in `e` must be a parameter of the policy.
    pub(super) fn check_params(&self, c: &mut Compiler, e: &Expr, place: Place) {
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
    pub(super) fn expr(&self, c: &mut Compiler, s: &Spanned<String>, what: &str) -> Option<Expr> {
        let e = c.expr(s, &self.id, what, &self.names)?;
        self.check_params(c, &e, Place::of(s));
        Some(e)
    }
}
