//! What the expression language's operators and built-in functions do to
//! values (`1G + 512M`, `min(...)`, `version(...)`). Pure: no context, no
//! host data, no I/O; the one evaluator ([`super::eval`]) applies them,
//! for constants and host data alike, so each operator means one thing
//! wherever it is evaluated.

use super::ast::{BinOp, UnOp};
use crate::value::{format_number, Value};

fn err<T>(msg: String) -> Result<T, String> {
    Err(msg)
}

/// A value as a number, or why not (`what` names the operator or function).
pub fn num(v: &Value, what: &str) -> Result<f64, String> {
    v.as_f64().map_or_else(
        || {
            err(format!(
                "{what} needs a number, got {} `{}`",
                v.type_name(),
                v.to_plain()
            ))
        },
        Ok,
    )
}

/// Truth of a value (booleans, ON/OFF, numbers != 0).
pub fn truthy(v: &Value) -> Result<bool, String> {
    v.as_bool().map_or_else(
        || {
            err(format!(
                "expected a boolean, got {} `{}`",
                v.type_name(),
                v.to_plain()
            ))
        },
        Ok,
    )
}

/// Apply a unary operator to a value.
pub fn unary(op: UnOp, v: &Value) -> Result<Value, String> {
    match (op, v) {
        (UnOp::Neg, Value::Size(n)) => Ok(Value::Size(-n)),
        (UnOp::Neg, v) => Ok(Value::Number(-num(v, "`-`")?)),
        (UnOp::Not, v) => Ok(Value::Bool(!truthy(v)?)),
    }
}

/// Apply an arithmetic or comparison operator to two values (`and`/`or`
/// decide from their left side first: see [`super::eval`]).
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, String> {
    let is_size = |v: &Value| matches!(v, Value::Size(_));
    match op {
        BinOp::Eq => Ok(Value::Bool(a.loosely_equals(b))),
        BinOp::Ne => Ok(Value::Bool(!a.loosely_equals(b))),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let (x, y) = (num(a, op.symbol())?, num(b, op.symbol())?);
            Ok(Value::Bool(match op {
                BinOp::Lt => x < y,
                BinOp::Le => x <= y,
                BinOp::Gt => x > y,
                _ => x >= y,
            }))
        }
        BinOp::Add | BinOp::Sub => {
            let (x, y) = (num(a, op.symbol())?, num(b, op.symbol())?);
            let r = if op == BinOp::Add { x + y } else { x - y };
            Ok(if is_size(a) || is_size(b) {
                Value::Size(r)
            } else {
                Value::Number(r)
            })
        }
        BinOp::Mul => {
            let (x, y) = (num(a, "*")?, num(b, "*")?);
            Ok(if is_size(a) != is_size(b) {
                Value::Size(x * y)
            } else {
                Value::Number(x * y)
            })
        }
        BinOp::Div => {
            let (x, y) = (num(a, "/")?, num(b, "/")?);
            if y == 0.0 {
                return err("division by zero".into());
            }
            Ok(if is_size(a) && !is_size(b) {
                Value::Size(x / y)
            } else {
                Value::Number(x / y)
            })
        }
        BinOp::And | BinOp::Or => err("internal: logic operator outside eval".into()),
    }
}

/// Apply a built-in function of values (every function but the lazy
/// `present`/`default` and the host's `du`/`mount_of`, which need a
/// context) to its evaluated arguments.
pub fn function(f: &str, vals: &[Value]) -> Result<Value, String> {
    let first = &vals[0];
    match f {
        "min" | "max" => {
            let flat: Vec<&Value> = match (vals.len(), first) {
                (1, Value::List(items)) => items.iter().collect(),
                _ => vals.iter().collect(),
            };
            let mut best: Option<(f64, &Value)> = None;
            for v in flat {
                let n = num(v, f)?;
                let better = match best {
                    None => true,
                    Some((b, _)) => (f == "min" && n < b) || (f == "max" && n > b),
                };
                if better {
                    best = Some((n, v));
                }
            }
            best.map(|(_, v)| v.clone())
                .ok_or_else(|| format!("`{f}` of an empty list"))
        }
        "round" | "floor" | "ceil" | "abs" => {
            let n = num(first, f)?;
            let places = vals.get(1).map(|v| num(v, f)).transpose()?.unwrap_or(0.0);
            let m = 10f64.powi(places as i32);
            let r = match f {
                "round" => (n * m).round() / m,
                "floor" => n.floor(),
                "ceil" => n.ceil(),
                _ => n.abs(),
            };
            Ok(match first {
                Value::Size(_) => Value::Size(r),
                _ => Value::Number(r),
            })
        }
        "contains" => Ok(Value::Bool(match first {
            Value::List(items) => items.iter().any(|i| i.loosely_equals(&vals[1])),
            Value::Str(s) => s.contains(&vals[1].to_plain()),
            other => {
                return err(format!(
                    "`contains` needs a list or string, got {}",
                    other.type_name()
                ))
            }
        })),
        "field" => {
            let name = vals[1].to_plain();
            match first {
                Value::List(items) => Ok(Value::List(
                    items
                        .iter()
                        .filter_map(|i| match i {
                            Value::Record(m) => m.get(&name).cloned(),
                            _ => None,
                        })
                        .collect(),
                )),
                other => err(format!(
                    "`field` needs a list of records, got {}",
                    other.type_name()
                )),
            }
        }
        "matches" => {
            let text = first.to_plain();
            let globs: Vec<String> = match &vals[1] {
                Value::List(items) => items.iter().map(Value::to_plain).collect(),
                one => vec![one.to_plain()],
            };
            let mut hit = false;
            for g in &globs {
                let (negated, g) = match g.strip_prefix('!') {
                    Some(rest) => (true, rest),
                    None => (false, g.as_str()),
                };
                let p = glob::Pattern::new(g)
                    .map_err(|e| format!("`matches`: `{g}` is not a glob: {}", e.msg))?;
                if p.matches(&text) {
                    hit = !negated;
                }
            }
            Ok(Value::Bool(hit))
        }
        "pct" => Ok(Value::Str(format!(
            "{} %",
            format_number((num(first, f)? * 1000.0).round() / 10.0)
        ))),
        "mib" => Ok(Value::Str(format!(
            "{} MiB",
            format_number((num(first, f)? / 1048576.0).round())
        ))),
        "gib" => Ok(Value::Str(format!(
            "{} GiB",
            format_number((num(first, f)? / 1073741824.0 * 10.0).round() / 10.0)
        ))),
        "size" => Ok(Value::Size(num(first, f)?)),
        "version" => version_number(&first.to_plain()),
        "number" => Ok(Value::Number(num(first, f)?)),
        "len" => Ok(Value::Number(match first {
            Value::List(i) => i.len() as f64,
            v => v.to_plain().chars().count() as f64,
        })),
        "join" => {
            let sep = vals
                .get(1)
                .map(Value::to_plain)
                .unwrap_or_else(|| ",".into());
            Ok(Value::Str(match first {
                Value::List(items) => items
                    .iter()
                    .map(Value::to_plain)
                    .collect::<Vec<_>>()
                    .join(&sep),
                v => v.to_plain(),
            }))
        }
        _ => err(format!("unknown function `{f}`")),
    }
}

/// `version("10.11.19-MariaDB-0+deb12u1")` = 10011019: the leading
/// `major.minor[.patch]` as major * 1e6 + minor * 1e3 + patch, so versions
/// compare as numbers (each part must stay below 1000).
fn version_number(s: &str) -> Result<Value, String> {
    let head: String = s
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let parts: Vec<u64> = head
        .split('.')
        .take(3)
        .map_while(|p| p.parse().ok())
        .collect();
    if parts.len() < 2 || parts.iter().any(|p| *p >= 1000) {
        return err(format!(
            "`version` needs a version like 10.11.19, got `{s}`"
        ));
    }
    let n = parts[0] * 1_000_000 + parts[1] * 1000 + parts.get(2).copied().unwrap_or(0);
    Ok(Value::Number(n as f64))
}

#[cfg(test)]
mod tests {
    use super::function;
    use crate::value::Value;

    fn s(t: &str) -> Value {
        Value::Str(t.into())
    }

    #[test]
    fn matches_reads_globs_and_the_last_matching_entry_decides() {
        let list = |gs: &[&str]| Value::List(gs.iter().map(|g| s(g)).collect());
        let m = |text: &str, globs: Value| function("matches", &[s(text), globs]).unwrap();
        assert_eq!(
            m("net.ipv4.conf.eth0.rp_filter", s("net.*")),
            Value::Bool(true)
        );
        assert_eq!(m("vm.swappiness", s("net.*")), Value::Bool(false));
        let open = list(&["net.ipv4.conf.*", "!net.ipv4.conf.all.*"]);
        assert_eq!(m("net.ipv4.conf.ens3.x", open.clone()), Value::Bool(true));
        assert_eq!(m("net.ipv4.conf.all.x", open.clone()), Value::Bool(false));
        assert_eq!(m("vm.x", open), Value::Bool(false));
        assert_eq!(m("a[*]b", s("a[[]*[]]b")), Value::Bool(true));
        assert_eq!(m("/srv", s("[!/]*")), Value::Bool(false));
        assert!(function("matches", &[s("x"), s("[")]).is_err());
    }

    #[test]
    fn field_takes_one_field_of_each_record() {
        let rec = |k: &str| Value::Record([("key".to_string(), s(k))].into_iter().collect());
        let got = function(
            "field",
            &[
                Value::List(vec![rec("a"), s("not a record"), rec("b")]),
                s("key"),
            ],
        )
        .unwrap();
        assert_eq!(got, Value::List(vec![s("a"), s("b")]));
        assert!(function("field", &[s("x"), s("key")]).is_err());
    }
}
