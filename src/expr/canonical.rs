//! The canonical text of an expression (`Display` for [`Expr`]): what the
//! parser reads back to the same tree. Prints only: must not compute
//! values.

use std::fmt;

use super::ast::{BinOp, Expr, UnOp};
use super::parse::parse;
use crate::catalogue;
use crate::value::{format_number, format_size, Value};

/// Canonical text of an expression: what [`parse`](super::parse()) reads back to the same
/// tree. Binary operands that are themselves binary are bracketed (so the
/// text never leans on precedence), strings are double-quoted with `\` and
/// `"` escaped, booleans are `true`/`false`, sizes keep their unit when that
/// is exact (`1 GiB`, else `N bytes`), and a key is dotted
/// (`sysctl.net.ipv4.tcp_syncookies`) only when every part of it is a name;
/// otherwise it is bracketed (`sysctl["net.ipv4.conf.eth0/100.rp_filter"]`,
/// `mount["/"]`).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Lit(v) => write_literal(f, v),
            Expr::List(items) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            Expr::Name(n) => f.write_str(n),
            Expr::Param(p) => write!(f, "params.{p}"),
            Expr::Setting(ns, k) => write_setting(f, ns, k, true),
            Expr::Field(base, field) => {
                match base.as_ref() {
                    // a dotted key would swallow `.field`: bracket it
                    Expr::Setting(ns, k) => write_setting(f, ns, k, false)?,
                    Expr::Name(_) | Expr::Param(_) | Expr::Call(..) | Expr::Field(..) => {
                        write!(f, "{base}")?
                    }
                    other => write!(f, "({other})")?,
                }
                write!(f, ".{field}")
            }
            Expr::Unary(op, x) => {
                let word = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "not ",
                };
                // `not` reads a comparison, `-` only a postfix term
                let bracket = matches!(
                    (op, x.as_ref()),
                    (UnOp::Not, Expr::Binary(BinOp::And | BinOp::Or, ..))
                        | (UnOp::Neg, Expr::Binary(..) | Expr::Unary(UnOp::Not, _))
                );
                if bracket {
                    write!(f, "{word}({x})")
                } else {
                    write!(f, "{word}{x}")
                }
            }
            Expr::Binary(op, a, b) => {
                let logic = matches!(op, BinOp::And | BinOp::Or);
                let operand = |f: &mut fmt::Formatter<'_>, x: &Expr| match x {
                    Expr::Binary(..) => write!(f, "({x})"),
                    Expr::Unary(UnOp::Not, _) if !logic => write!(f, "({x})"),
                    _ => write!(f, "{x}"),
                };
                operand(f, a)?;
                write!(f, " {} ", op.symbol())?;
                operand(f, b)
            }
            Expr::Call(name, args) => {
                write!(f, "{name}(")?;
                write_list(f, args)?;
                f.write_str(")")
            }
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, e) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{e}")?;
    }
    Ok(())
}

/// `ns.a.b` where every part of the key is a name and the namespace is
/// flat (and `dotted_ok`), else `ns[KEY]`.
fn write_setting(f: &mut fmt::Formatter<'_>, ns: &str, key: &Expr, dotted_ok: bool) -> fmt::Result {
    let flat = catalogue::namespace(ns).is_none_or(|n| n.shape != catalogue::Shape::Record);
    if let Expr::Lit(Value::Str(s)) = key {
        let is_name = |part: &str| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if dotted_ok && flat && s.split('.').all(is_name) {
            return write!(f, "{ns}.{s}");
        }
    }
    write!(f, "{ns}[{key}]")
}

fn write_literal(f: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
    match v {
        Value::Str(s) => {
            f.write_str("\"")?;
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str("\"")
        }
        Value::Bool(b) => write!(f, "{b}"),
        Value::Number(n) => f.write_str(&exact_number(*n)),
        Value::Size(n) => {
            let human = format_size(*n);
            if parse(&human).ok() == Some(Expr::Lit(Value::Size(*n))) {
                f.write_str(&human)
            } else {
                write!(f, "{} bytes", exact_number(*n))
            }
        }
        Value::List(items) => {
            f.write_str("[")?;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write_literal(f, v)?;
            }
            f.write_str("]")
        }
        // no literal syntax for records: shown as text
        Value::Record(_) => write_literal(f, &Value::Str(v.to_plain())),
    }
}

/// A number as people write it (`0.15`, `4096`) when that reads back
/// exactly, else every digit Rust needs to round-trip it.
fn exact_number(n: f64) -> String {
    let short = format_number(n);
    if short.parse::<f64>().ok() == Some(n) {
        short
    } else {
        format!("{n}")
    }
}
