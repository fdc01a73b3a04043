//! A policy's `params:`: each default's value, its text as written and its
//! declared type (`{type: ratio, default: 0.7}`), the default checked
//! against it; a bare value loads as before with a warning that suggests a
//! type. Must not read files or evaluate rules.

use std::collections::BTreeMap;

use serde_saphyr::Spanned;

use super::compiler::{Compiler, Place};
use super::for_each::check_items;
use crate::policy::spec::{ParamValue, TypedParam};
use crate::policy::values::{param_text, param_value, ConstError};
use crate::policy::{ParamType, Problem, TYPE_NAMES};
use crate::value::Value;

/// The compiled `params:`: values, defaults as written, declared types.
pub(super) type Params = (
    BTreeMap<String, Value>,
    BTreeMap<String, String>,
    BTreeMap<String, ParamType>,
);

/// `params:`: each default's value, its text as written and its declared
/// type (the default must be of it); a parameter without a type loads as
/// before, with a warning that suggests one.
pub(super) fn compile_params(
    c: &mut Compiler,
    pid: &str,
    raw: &BTreeMap<String, Spanned<ParamValue>>,
) -> Params {
    let mut params = BTreeMap::new();
    let mut param_defaults = BTreeMap::new();
    let mut types = BTreeMap::new();
    for (k, v) in raw {
        let (written, ty) = match &v.value {
            ParamValue::Typed(d) => match declared(d) {
                Ok(t) => (&d.default, Some(t)),
                Err(reason) => {
                    c.problem(
                        Place::at(&v.referenced),
                        pid,
                        Problem::InvalidParam {
                            name: k.clone(),
                            reason: ConstError::Eval(reason),
                        },
                    );
                    continue;
                }
            },
            w => (w, None),
        };
        match param_value(written) {
            Ok(val) => {
                match &ty {
                    Some(t) => match t.check(&val) {
                        Ok(()) => {
                            types.insert(k.clone(), t.clone());
                        }
                        Err(allowed) => c.problem(
                            Place::at(&v.referenced),
                            pid,
                            Problem::ParamType {
                                name: k.clone(),
                                value: param_text(written),
                                allowed,
                            },
                        ),
                    },
                    // a list's shape is its type: `list` is the only one
                    None if matches!(val, Value::List(_)) => {}
                    None => c.warning(
                        Place::of_value(v),
                        pid,
                        Problem::UntypedParam {
                            name: k.clone(),
                            suggestion: format!(
                                "{{type: {}, default: {}}}",
                                ParamType::suggested(&val).name(),
                                param_text(written)
                            ),
                        },
                    ),
                }
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
        if let ParamValue::List(items) = written {
            check_items(c, pid, k, v, items);
        }
        param_defaults.insert(k.clone(), param_text(written));
    }
    (params, param_defaults, types)
}

/// The type of a declaration: `type` with its `values` (enum) and
/// `min`/`max` (number); `Err` says what is wrong.
fn declared(decl: &TypedParam) -> Result<ParamType, String> {
    let bounds = decl.min.is_some() || decl.max.is_some();
    let ty = match decl.kind.as_str() {
        "number" => ParamType::Number {
            min: decl.min,
            max: decl.max,
        },
        "enum" => {
            if decl.values.is_empty() {
                return Err("an `enum` parameter lists its `values`".into());
            }
            ParamType::Enum(decl.values.iter().map(param_text).collect())
        }
        other => {
            let ty = match other {
                "size" => ParamType::Size,
                "ratio" => ParamType::Ratio,
                "bool" => ParamType::Bool,
                "path" => ParamType::Path,
                "text" => ParamType::Text,
                "list" => ParamType::List,
                _ => {
                    return Err(format!(
                        "unknown type `{other}`: expected one of {}{}",
                        TYPE_NAMES.join(", "),
                        crate::expr::suggest(other, TYPE_NAMES)
                    ))
                }
            };
            if bounds {
                return Err(format!(
                    "`min` and `max` go with `type: number`, not `{other}`"
                ));
            }
            ty
        }
    };
    if !decl.values.is_empty() && decl.kind != "enum" {
        return Err("`values` go with `type: enum`".into());
    }
    Ok(ty)
}
