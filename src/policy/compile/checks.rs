//! A rule's conditions (`applies`) and its one check (`setting`+`expect`,
//! `assert` or `drift`) compiled into expressions. Must not evaluate them.

use serde_saphyr::Spanned;

use super::compiler::{Compiler, Place, RuleScope};
use crate::catalogue::{FLAT_NAMESPACES, RECORD_NAMESPACES};
use crate::expr::{self, BinOp, Expr};
use crate::policy::{
    parse_kernel_cond, Applies, Check, Condition, DriftCheck, DriftSpec, Expect, Expectation,
    Problem, RuleSpec,
};
use crate::value::Value;

/// `applies:`: kernel conditions, host paths (literal or `${params.X}`) and
/// `when` expressions; each problem points at its own condition.
pub(super) fn compile_applies(
    c: &mut Compiler,
    scope: &RuleScope,
    conds: &[Condition],
) -> Vec<Applies> {
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
                    Applies::Exists(p.clone().into())
                } else {
                    Applies::Missing(p.clone().into())
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
pub(super) fn compile_check(
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
pub(super) fn compile_drift(c: &mut Compiler, scope: &RuleScope, d: &DriftSpec) -> DriftCheck {
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
pub(super) fn compile_setting(
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
                // each entry lowered to the comparison the engine applies
                // (`SETTING OP VALUE`, see `Expectation`)
                let mut expect = Vec::new();
                let single = [
                    (BinOp::Eq, &ex.equals),
                    (BinOp::Ne, &ex.not),
                    (BinOp::Ge, &ex.min),
                    (BinOp::Le, &ex.max),
                    (BinOp::Gt, &ex.gt),
                    (BinOp::Lt, &ex.lt),
                ];
                for (op, v) in single {
                    if let Some(v) = v {
                        if let Some(e) = c.expect_value(v, id, &scope.names) {
                            scope.check_params(c, &e, Place::of_value(v));
                            expect.push(Expectation {
                                op,
                                one_of: false,
                                values: vec![e],
                            });
                        }
                    }
                }
                if let Some(list) = &ex.one_of {
                    let values: Vec<Expr> = list
                        .iter()
                        .filter_map(|v| {
                            let e = c.expect_value(v, id, &scope.names)?;
                            scope.check_params(c, &e, Place::of_value(v));
                            Some(e)
                        })
                        .collect();
                    expect.push(Expectation {
                        op: BinOp::Eq,
                        one_of: true,
                        values,
                    });
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
