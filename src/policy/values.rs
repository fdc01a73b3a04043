//! Constants in a policy: parameter values, `applies` paths with
//! `${params.X}`, kernel version conditions. Pure: never reads the host.

use super::{ParamValue, Policy};
use crate::expr::{self, Expr};
use crate::value::Value;

/// Parse a parameter value (number, bool, or text holding a constant expression).
pub fn param_value(v: &ParamValue) -> Result<Value, String> {
    match v {
        ParamValue::Bool(b) => Ok(Value::Bool(*b)),
        ParamValue::Number(n) => Ok(Value::Number(*n)),
        ParamValue::Text(t) => {
            if t.starts_with('/') || t.is_empty() {
                return Ok(Value::Str(t.clone()));
            }
            match expr::parse(t) {
                Ok(e @ Expr::Lit(_)) | Ok(e @ Expr::Binary(..)) | Ok(e @ Expr::Unary(..)) => {
                    expr::eval(&e, &NoContext).map_err(|m| m.to_string())
                }
                _ => Ok(Value::Str(t.clone())),
            }
        }
    }
}

struct NoContext;
impl expr::Context for NoContext {
    fn name(&self, n: &str) -> Result<Value, expr::Missing> {
        Err(expr::Missing::Error(format!(
            "`{n}` cannot be used in a constant"
        )))
    }
    fn param(&self, n: &str) -> Result<Value, expr::Missing> {
        self.name(n)
    }
    fn setting(&self, ns: &str, _k: &str) -> Result<Value, expr::Missing> {
        self.name(ns)
    }
    fn dir_size(&self, _p: &str) -> Result<Value, expr::Missing> {
        self.name("du")
    }
    fn mount_of(&self, _p: &str) -> Result<Value, expr::Missing> {
        self.name("mount_of")
    }
}

/// The host path of an `applies: exists:`/`missing:` condition: literal, or
/// `${expr}` over the policy's parameters (`${params.zimbra_db_dir}`).
pub fn resolve_path(text: &str, policy: Option<&Policy>) -> Result<String, String> {
    let Some(inner) = text.strip_prefix("${").and_then(|x| x.strip_suffix('}')) else {
        return Ok(text.to_string());
    };
    let e = expr::parse(inner).map_err(|e| e.message)?;
    struct Params<'a>(Option<&'a Policy>);
    impl expr::Context for Params<'_> {
        fn name(&self, n: &str) -> Result<Value, expr::Missing> {
            Err(expr::Missing::Error(format!(
                "`{n}` cannot be used in a path"
            )))
        }
        fn param(&self, n: &str) -> Result<Value, expr::Missing> {
            self.0
                .and_then(|p| p.params.get(n))
                .cloned()
                .ok_or_else(|| expr::Missing::Error(format!("unknown parameter `{n}`")))
        }
        fn setting(&self, ns: &str, _k: &str) -> Result<Value, expr::Missing> {
            self.name(ns)
        }
        fn dir_size(&self, _p: &str) -> Result<Value, expr::Missing> {
            self.name("du")
        }
        fn mount_of(&self, _p: &str) -> Result<Value, expr::Missing> {
            self.name("mount_of")
        }
    }
    expr::eval(&e, &Params(policy))
        .map(|v| v.to_plain())
        .map_err(|m| m.to_string())
}

/// Parse `< 4.12`, `>= 4.10, < 4.12`.
pub fn parse_kernel_cond(s: &str) -> Result<Vec<(String, Vec<u64>)>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        let op_len = p
            .find(|c: char| c.is_ascii_digit())
            .ok_or("expected an operator and a version such as `< 4.12`")?;
        let op = p[..op_len].trim();
        if !matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=" | "=") {
            return Err(format!(
                "unknown operator `{op}`: expected <, <=, >, >=, == or !="
            ));
        }
        let v: Result<Vec<u64>, _> = p[op_len..].trim().split('.').map(str::parse).collect();
        let v = v.map_err(|_| format!("`{}` is not a version such as 4.12", p[op_len..].trim()))?;
        out.push((
            if op == "=" {
                "==".into()
            } else {
                op.to_string()
            },
            v,
        ));
    }
    Ok(out)
}
