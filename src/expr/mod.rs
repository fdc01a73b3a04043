//! The expression language of `assert:`, `when:`, `let:` and templates, as
//! syntax: the AST, its canonical text ([`fmt::Display`]), the lexer and
//! parser ([`parse`]), static walks, and what each operator and function
//! does to values ([`ops`], with constant folding for policy parameters).
//! Which names are namespaces (and their shape), facts and functions (and
//! their arity) comes from [`crate::catalogue`]. The layer the policy loader
//! imports: must not evaluate over host data (that is [`crate::eval`],
//! above facts) and must not do I/O.

use std::fmt;

use crate::catalogue;
use crate::value::{format_number, format_size, Value};

pub mod ops;
mod parse;

pub use parse::{parse, MAX_TOKENS, MAX_TREE_DEPTH};

/// Namespaces whose keys are written dotted after the namespace name
/// (`sysctl.net.ipv4.tcp_tw_reuse`, `mycnf.innodb_buffer_pool_size`): the
/// flat rows of [`catalogue::NAMESPACES`].
pub const FLAT_NAMESPACES: &[&str] = catalogue::FLAT_NAMESPACES;

/// Namespaces keyed by mount point whose values are records
/// (`mount["/data"].atime`): the record rows of [`catalogue::NAMESPACES`].
pub const RECORD_NAMESPACES: &[&str] = catalogue::RECORD_NAMESPACES;

/// Host facts usable by name ([`catalogue::FACTS`]).
pub const FACTS: &[&str] = catalogue::FACT_NAMES;

/// Functions and their arity (name, min, max), from [`catalogue::FUNCTIONS`].
pub const FUNCTIONS: &[(&str, usize, usize)] = &FUNCTION_ARITIES;

const FUNCTION_ARITIES: [(&str, usize, usize); catalogue::FUNCTIONS.len()] = {
    let mut out = [("", 0, 0); catalogue::FUNCTIONS.len()];
    let mut i = 0;
    while i < out.len() {
        let f = &catalogue::FUNCTIONS[i];
        out[i] = (f.name, f.min_args, f.max_args);
        i += 1;
    }
    out
};

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// A literal value.
    Lit(Value),
    /// A list literal.
    List(Vec<Expr>),
    /// A fact or `let` name.
    Name(String),
    /// `params.NAME`.
    Param(String),
    /// A setting: namespace and key expression.
    Setting(String, Box<Expr>),
    /// Field access on a record: `mount["/"].atime`.
    Field(Box<Expr>, String),
    /// Unary operator.
    Unary(UnOp, Box<Expr>),
    /// Binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Function call.
    Call(String, Vec<Expr>),
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

/// Canonical text of an expression: what [`parse`] reads back to the same
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

/// A syntax error: byte offset into the expression text and a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at character {})", .offset + 1)]
pub struct SyntaxError {
    /// 0-based character offset in the expression.
    pub offset: usize,
    /// What was expected.
    pub message: String,
}

/// `, did you mean `x`?` for the closest candidate within edit distance 3, else "".
pub fn suggest(word: &str, candidates: &[&str]) -> String {
    let best = candidates
        .iter()
        .map(|c| (levenshtein(word, c), *c))
        .filter(|(d, c)| *d <= 3.min(c.len().max(1)))
        .min();
    match best {
        Some((_, c)) => format!(", did you mean `{c}`?"),
        None => String::new(),
    }
}

/// Edit distance between two strings.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Visit every sub-expression (for static analysis: which settings a rule reads).
pub fn walk<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match e {
        Expr::List(items) | Expr::Call(_, items) => items.iter().for_each(|i| walk(i, f)),
        Expr::Setting(_, k) => walk(k, f),
        Expr::Field(b, _) | Expr::Unary(_, b) => walk(b, f),
        Expr::Binary(_, a, b) => {
            walk(a, f);
            walk(b, f);
        }
        Expr::Lit(_) | Expr::Name(_) | Expr::Param(_) => {}
    }
}

/// Human rendering of a value for explanations: sizes as `2 GiB`.
pub fn show(v: &Value) -> String {
    match v {
        Value::Size(n) => format_size(*n),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_arity_list_follows_the_catalogue() {
        assert_eq!(FUNCTIONS.len(), crate::catalogue::FUNCTIONS.len());
        assert!(FUNCTIONS.contains(&("join", 1, 2)));
        assert!(FUNCTIONS.contains(&("min", 1, usize::MAX)));
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        let e = parse("mem_total >").unwrap_err();
        assert_eq!(e.offset, 11);
        let e = parse("mx(1, 2)").unwrap_err();
        assert!(e.message.contains("did you mean `max`"), "{}", e.message);
        assert!(parse("1 +").is_err());
        assert!(parse("12 apples").is_err());
        assert!(parse(&"(".repeat(500)).is_err());
        assert!(parse("mount.x").is_err());
    }

    /// Every expression a rule holds, in the built-in set and compiled
    /// again from the YAML.
    fn shipped_expressions() -> Vec<(String, Expr)> {
        let mut sets = vec![crate::policy::PolicySet::builtin().unwrap()];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/policies");
        let mut from_yaml = crate::policy::PolicySet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let test = path.to_string_lossy().ends_with(".test.yaml");
            if path.extension().is_some_and(|x| x == "yaml") && !test {
                let text = std::fs::read_to_string(&path).unwrap();
                from_yaml
                    .add_str(&path.display().to_string(), &text)
                    .unwrap();
            }
        }
        sets.push(from_yaml);
        let mut out = Vec::new();
        for set in &sets {
            for r in set.rules() {
                out.extend(
                    r.expressions()
                        .into_iter()
                        .map(|e| (r.id.clone(), e.clone())),
                );
            }
        }
        out
    }

    #[test]
    fn display_of_every_shipped_expression_parses_back_to_the_same_tree() {
        let all = shipped_expressions();
        assert!(all.len() > 400, "only {} expressions", all.len());
        for (rule, e) in all {
            let text = e.to_string();
            assert_eq!(parse(&text).as_ref(), Ok(&e), "{rule}: `{text}`");
        }
    }

    #[test]
    fn display_is_canonical_where_precedence_or_spelling_could_mislead() {
        let shown = |s: &str| parse(s).unwrap().to_string();
        assert_eq!(shown("dump == true"), "dump == true"); // not `ON`, a name
        assert_eq!(shown("a + b * c"), "a + (b * c)");
        assert_eq!(shown("(a - b) - c"), "(a - b) - c");
        assert_eq!(shown("a - (b - c)"), "a - (b - c)");
        assert_eq!(shown("not (a and b)"), "not (a and b)");
        assert_eq!(shown("(not a) == b"), "(not a) == b");
        assert_eq!(shown("not a == b"), "not a == b");
        assert_eq!(shown("-(a + b)"), "-(a + b)");
        assert_eq!(shown("1G + 512M"), "1 GiB + 512 MiB");
        assert_eq!(shown("1.3G"), "1.3 GiB");
        // `1.3 GiB` would not read back as 1.33G: every digit instead
        assert_eq!(shown("1.33G"), format!("{} bytes", 1.33 * 1073741824.0));
        assert_eq!(shown("15%"), "0.15");
        assert_eq!(shown("0.123456"), "0.123456");
        assert_eq!(shown("'say \"hi\" \\\\ there'"), r#""say \"hi\" \\ there""#);
        assert_eq!(
            shown("sysctl.net.ipv4.tcp_syncookies"),
            "sysctl.net.ipv4.tcp_syncookies"
        );
        assert_eq!(
            shown("sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]"),
            "sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]"
        );
        assert_eq!(
            shown("mycnf[\"innodb-log-file-size\"]"),
            "mycnf[\"innodb-log-file-size\"]"
        );
        assert_eq!(shown("mount[\"/\"].atime"), "mount[\"/\"].atime");
        assert_eq!(shown("mycnf[\"x\"].y"), "mycnf[\"x\"].y");
        assert_eq!(shown("(1 + 2).f"), "(1 + 2).f");
        assert_eq!(
            shown("params.share * mem_total"),
            "params.share * mem_total"
        );
        assert_eq!(shown("min([1, 2], 3)"), "min([1, 2], 3)");
    }

    #[test]
    fn keywords_are_never_read_as_names() {
        // found by the round-trip proptest: `not` after `==` was a name minus 0
        for src in ["0 == not -0", "a == not b", "1 + and", "or"] {
            assert!(parse(src).is_err(), "`{src}` parsed as {:?}", parse(src));
        }
        assert!(parse("0 == (not -0)").is_ok());
        assert!(
            parse("mycnf.not").is_ok(),
            "a key after `.` may be any word"
        );
    }

    /// Source text of a random well-formed expression.
    fn source() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            (0u32..100_000).prop_map(|n| n.to_string()),
            (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
            (
                1u32..2000,
                prop::sample::select(vec!["K", "M", "G", "GiB", "T", "%", " MiB"])
            )
                .prop_map(|(n, u)| format!("{n}{u}")),
            "[a-z \"'\\\\/.]{0,8}"
                .prop_map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))),
            prop::sample::select(vec![
                "mem_total",
                "true",
                "false",
                "params.share",
                "zimbra_installed",
                "sysctl.net.ipv4.tcp_syncookies",
                "mycnf.innodb_buffer_pool_size",
                "sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]",
                "mount[\"/data\"].atime",
                "mycnf[\"a-b\"]",
                "fstab[params.dir]",
                "x.y.z",
            ])
            .prop_map(str::to_string),
        ];
        leaf.prop_recursive(5, 40, 3, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    prop::sample::select(vec![
                        "+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "and", "or", "&&",
                    ]),
                    inner.clone()
                )
                    .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
                inner.clone().prop_map(|a| format!("({a})")),
                inner.clone().prop_map(|a| format!("not {a}")),
                inner.clone().prop_map(|a| format!("-{a}")),
                inner.clone().prop_map(|a| format!("({a}).f")),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(", "))),
                (inner.clone(), inner).prop_map(|(a, b)| format!("max({a}, {b})")),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn display_of_any_parsed_expression_parses_back_to_the_same_tree(src in source()) {
            // operator chains can be ill-formed (`a < b < c`): only trees
            // the parser accepts are compared
            if let Ok(e) = parse(&src) {
                let text = e.to_string();
                proptest::prop_assert_eq!(parse(&text), Ok(e.clone()), "{} -> {}", src, text);
                proptest::prop_assert_eq!(parse(&text).unwrap().to_string(), text);
            }
        }
    }
}
