//! Constants in a policy: parameter values, `applies` paths with
//! `${params.X}`, kernel version conditions, folded by the one evaluator
//! over the parameters alone ([`Scope::constant`]). Pure: never reads the host.

use super::{ParamValue, PathText, Policy};
use crate::expr::eval::{eval, Scope};
use crate::expr::{self, BinOp, Expr};

/// The parameters of a path outside any policy: none.
static NO_PARAMS: std::collections::BTreeMap<String, Value> = std::collections::BTreeMap::new();
use crate::value::Value;

/// Why a constant (a parameter value, an `applies` path) has no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstError {
    /// The expression does not parse.
    #[error("{0}")]
    Syntax(String),
    /// It does not evaluate to a constant (it names host data, or a type error).
    #[error("{0}")]
    Eval(String),
}

/// Why an `applies: kernel:` condition is not `OP VERSION[, OP VERSION]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernelCondError {
    /// A part without a version number.
    #[error("expected an operator and a version such as `< 4.12`")]
    NoVersion {
        /// Byte offset of the part in the condition.
        at: usize,
    },
    /// A version without an operator before it (`4.12`).
    #[error("no operator before `{version}`: expected <, <=, >, >=, == or != (`>= {version}`)")]
    MissingOperator {
        /// The version as written.
        version: String,
        /// Byte offset of the version in the condition.
        at: usize,
    },
    /// An operator that is not a comparison.
    #[error("unknown operator `{op}`: expected <, <=, >, >=, == or !=")]
    UnknownOperator {
        /// The operator as written.
        op: String,
        /// Byte offset of the operator in the condition.
        at: usize,
    },
    /// A version that is not dotted numbers.
    #[error("`{version}` is not a version such as 4.12")]
    BadVersion {
        /// The version as written.
        version: String,
        /// Byte offset of the version in the condition.
        at: usize,
    },
}

impl KernelCondError {
    /// Byte offset of the offending text in the condition.
    pub fn offset(&self) -> usize {
        match self {
            KernelCondError::NoVersion { at }
            | KernelCondError::MissingOperator { at, .. }
            | KernelCondError::UnknownOperator { at, .. }
            | KernelCondError::BadVersion { at, .. } => *at,
        }
    }
}

/// Parse a parameter value (number, bool, or text holding a constant expression).
pub fn param_value(v: &ParamValue) -> Result<Value, ConstError> {
    match v {
        ParamValue::Bool(b) => Ok(Value::Bool(*b)),
        ParamValue::Number(n) => Ok(Value::Number(*n)),
        ParamValue::Text(t) => {
            if t.starts_with('/') || t.is_empty() {
                return Ok(Value::Str(t.clone()));
            }
            match expr::parse(t) {
                Ok(e @ Expr::Lit(_)) | Ok(e @ Expr::Binary(..)) | Ok(e @ Expr::Unary(..)) => {
                    let scope = Scope::constant(None, "a constant");
                    eval(&e, &scope).map_err(|m| ConstError::Eval(m.to_string()))
                }
                _ => Ok(Value::Str(t.clone())),
            }
        }
        ParamValue::List(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let mut rec = std::collections::BTreeMap::new();
                for (k, v) in item {
                    let value = match v {
                        ParamValue::List(_) => {
                            return Err(ConstError::Eval(format!(
                                "item {} field `{k}` is a list; an item's fields are numbers, booleans or text",
                                i + 1
                            )))
                        }
                        // text as written: an id (`zimbra-db`), a path; `${EXPR}`
                        // and a `when` condition are evaluated per host
                        ParamValue::Text(t) => Value::Str(t.clone()),
                        other => param_value(other)?,
                    };
                    rec.insert(k.clone(), value);
                }
                out.push(Value::Record(rec));
            }
            Ok(Value::List(out))
        }
        ParamValue::Typed(_) => Err(ConstError::Eval(
            "a type is declared only in the policy's own `params:`; give the value alone here"
                .into(),
        )),
    }
}

/// The text of a parameter value as written (`--set`, `list`, notes).
pub fn param_text(v: &ParamValue) -> String {
    match v {
        ParamValue::Bool(b) => b.to_string(),
        ParamValue::Number(n) => crate::value::format_number(*n),
        ParamValue::Text(t) => t.clone(),
        ParamValue::Typed(d) => param_text(&d.default),
        ParamValue::List(items) => {
            let item = |m: &std::collections::BTreeMap<String, ParamValue>| {
                let fields: Vec<String> = m
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", param_text(v)))
                    .collect();
                format!("{{{}}}", fields.join(", "))
            };
            format!(
                "[{}]",
                items.iter().map(item).collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// The host path of an `applies: exists:`/`missing:` condition: literal, or
/// `${expr}` (compiled at load) over the policy's parameters
/// (`${params.zimbra_db_dir}`).
pub fn resolve_path(path: &PathText, policy: Option<&Policy>) -> Result<String, ConstError> {
    let e = match path.expr() {
        None => return Ok(path.to_string()),
        Some(Ok(e)) => e,
        Some(Err(message)) => return Err(ConstError::Syntax(message.to_string())),
    };
    let scope = Scope::constant(Some(policy.map_or(&NO_PARAMS, |p| &p.params)), "a path");
    eval(e, &scope)
        .map(|v| v.to_plain())
        .map_err(|m| ConstError::Eval(m.to_string()))
}

/// Parse `< 4.12`, `>= 4.10, < 4.12` into the comparisons of the
/// expression language (`=` is `==`): an operator that is none is an error
/// here, at load, so no operator text is matched when a rule is judged.
pub fn parse_kernel_cond(s: &str) -> Result<Vec<(BinOp, Vec<u64>)>, KernelCondError> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in s.split(',') {
        let at = start + (part.len() - part.trim_start().len());
        start += part.len() + 1;
        let p = part.trim();
        let op_len = p
            .find(|c: char| c.is_ascii_digit())
            .ok_or(KernelCondError::NoVersion { at })?;
        let op = p[..op_len].trim();
        if op.is_empty() {
            return Err(KernelCondError::MissingOperator {
                version: p.to_string(),
                at,
            });
        }
        let op = match op {
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" | "=" => BinOp::Eq,
            "!=" => BinOp::Ne,
            _ => {
                return Err(KernelCondError::UnknownOperator {
                    op: op.to_string(),
                    at,
                })
            }
        };
        let version = p[op_len..].trim();
        let v: Result<Vec<u64>, _> = version.split('.').map(str::parse).collect();
        let v = v.map_err(|_| KernelCondError::BadVersion {
            version: version.to_string(),
            at: at + op_len,
        })?;
        out.push((op, v));
    }
    Ok(out)
}
