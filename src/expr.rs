//! The expression language of `assert:`, `when:`, `let:` and templates: a
//! lexer, a parser to an AST, and a pure evaluator over a [`Context`]. Which
//! names are namespaces (and their shape), facts and functions (and their
//! arity) comes from [`crate::catalogue`]. Must not do I/O: every value comes
//! from the context (facts gathered earlier).

use std::fmt;

use crate::catalogue;
use crate::value::{format_number, format_size, unit_multiplier, Value};

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 0-based character offset in the expression.
    pub offset: usize,
    /// What was expected.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at character {})", self.message, self.offset + 1)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Ident(String),
    Sym(&'static str),
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, SyntaxError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            while i < chars.len()
                && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '_')
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().filter(|c| **c != '_').collect();
            let mut n: f64 = text.parse().map_err(|_| SyntaxError {
                offset: start,
                message: format!("`{text}` is not a number"),
            })?;
            // unit: optional spaces then a unit word, or %
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            if j < chars.len() && chars[j] == '%' {
                out.push((Tok::Num(n / 100.0), start));
                i = j + 1;
                continue;
            }
            let ustart = j;
            while j < chars.len() && chars[j].is_ascii_alphabetic() {
                j += 1;
            }
            let unit: String = chars[ustart..j].iter().collect();
            let is_word_end =
                j >= chars.len() || !(chars[j].is_ascii_alphanumeric() || chars[j] == '_');
            if !unit.is_empty() && is_word_end && !matches!(unit.as_str(), "and" | "or" | "not") {
                match unit_multiplier(&unit) {
                    Some(m) => {
                        n *= m;
                        out.push((Tok::Sym("size"), start));
                        out.push((Tok::Num(n), start));
                        i = j;
                        continue;
                    }
                    None if ustart == i => {
                        return Err(SyntaxError {
                            offset: ustart,
                            message: format!(
                            "unknown unit `{unit}`: expected K, M, G, T, KiB, MiB, GiB, TiB or %"
                        ),
                        })
                    }
                    None => {}
                }
            }
            out.push((Tok::Num(n), start));
            continue;
        }
        if c == '"' || c == '\'' {
            let q = c;
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => {
                        return Err(SyntaxError {
                            offset: start,
                            message: "unterminated string".into(),
                        })
                    }
                    Some(ch) if *ch == q => {
                        i += 1;
                        break;
                    }
                    Some('\\') if chars.get(i + 1).is_some() => {
                        s.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(ch) => {
                        s.push(*ch);
                        i += 1;
                    }
                }
            }
            out.push((Tok::Str(s), start));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(chars[start..i].iter().collect()), start));
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let sym2 = ["==", "!=", "<=", ">=", "&&", "||"]
            .into_iter()
            .find(|s| *s == two);
        if let Some(s) = sym2 {
            let s = match s {
                "&&" => "and",
                "||" => "or",
                s => s,
            };
            out.push((Tok::Sym(s), start));
            i += 2;
            continue;
        }
        let sym = match c {
            '+' => "+",
            '-' => "-",
            '*' => "*",
            '/' => "/",
            '<' => "<",
            '>' => ">",
            '(' => "(",
            ')' => ")",
            '[' => "[",
            ']' => "]",
            ',' => ",",
            '.' => ".",
            '!' => "not",
            _ => {
                return Err(SyntaxError {
                    offset: start,
                    message: format!("unexpected character `{c}`"),
                })
            }
        };
        out.push((Tok::Sym(sym), start));
        i += 1;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    len: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 64;

/// Most tokens one expression may have: bounds the work of lexing and
/// parsing one expression and the size of its tree.
pub const MAX_TOKENS: usize = 500;

/// Deepest tree an expression may have (operators, calls and brackets
/// counted alike). Evaluation, display, static walks and drop recurse over
/// the tree, so a flat chain like `1+1+...` (20,000 terms, each `+` one
/// level deeper) is an error at parse time instead of a stack overflow
/// later. The built-in policies stay under 12 levels.
pub const MAX_TREE_DEPTH: usize = 64;

/// Depth of a tree, without recursion (the tree may be the one too deep).
fn tree_depth(e: &Expr) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(e, 1usize)];
    while let Some((e, d)) = todo.pop() {
        deepest = deepest.max(d);
        match e {
            Expr::List(items) | Expr::Call(_, items) => {
                todo.extend(items.iter().map(|i| (i, d + 1)))
            }
            Expr::Setting(_, k) | Expr::Field(k, _) | Expr::Unary(_, k) => todo.push((k, d + 1)),
            Expr::Binary(_, a, b) => {
                todo.push((a, d + 1));
                todo.push((b, d + 1));
            }
            Expr::Lit(_) | Expr::Name(_) | Expr::Param(_) => {}
        }
    }
    deepest
}

/// Parse an expression.
pub fn parse(src: &str) -> Result<Expr, SyntaxError> {
    let toks = lex(src)?;
    if let Some((_, offset)) = toks.get(MAX_TOKENS) {
        return Err(SyntaxError {
            offset: *offset,
            message: format!(
                "expression too long: more than {MAX_TOKENS} tokens (split it into `let:` names)"
            ),
        });
    }
    let mut p = Parser {
        toks,
        pos: 0,
        len: src.chars().count(),
        depth: 0,
    };
    let e = p.or()?;
    if p.pos < p.toks.len() {
        return Err(p.err("expected an operator or the end of the expression"));
    }
    if tree_depth(&e) > MAX_TREE_DEPTH {
        return Err(SyntaxError {
            offset: 0,
            message: format!(
                "expression too deep: more than {MAX_TREE_DEPTH} levels of operators (split it into `let:` names)"
            ),
        });
    }
    Ok(e)
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(self.len)
    }
    fn err(&self, msg: &str) -> SyntaxError {
        let found = match self.peek() {
            None => "the end".to_string(),
            Some(Tok::Num(n)) => format!("`{}`", format_number(*n)),
            Some(Tok::Str(s)) => format!("\"{s}\""),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Sym(s)) => format!("`{s}`"),
        };
        SyntaxError {
            offset: self.offset(),
            message: format!("{msg}, found {found}"),
        }
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(x)) if x == w)
            || matches!(self.peek(), Some(Tok::Sym(x)) if *x == w)
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SyntaxError {
                offset: self.offset(),
                message: "expression nested too deeply".into(),
            });
        }
        Ok(())
    }
    fn or(&mut self) -> Result<Expr, SyntaxError> {
        self.enter()?;
        let mut l = self.and()?;
        while self.eat_word("or") {
            let r = self.and()?;
            l = Expr::Binary(BinOp::Or, Box::new(l), Box::new(r));
        }
        self.depth -= 1;
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, SyntaxError> {
        let mut l = self.not()?;
        while self.eat_word("and") {
            let r = self.not()?;
            l = Expr::Binary(BinOp::And, Box::new(l), Box::new(r));
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Expr, SyntaxError> {
        if self.eat_word("not") {
            self.enter()?;
            let e = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Unary(UnOp::Not, Box::new(e)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Expr, SyntaxError> {
        let l = self.add()?;
        let op = match self.peek() {
            Some(Tok::Sym("==")) => BinOp::Eq,
            Some(Tok::Sym("!=")) => BinOp::Ne,
            Some(Tok::Sym("<")) => BinOp::Lt,
            Some(Tok::Sym("<=")) => BinOp::Le,
            Some(Tok::Sym(">")) => BinOp::Gt,
            Some(Tok::Sym(">=")) => BinOp::Ge,
            _ => return Ok(l),
        };
        self.pos += 1;
        let r = self.add()?;
        Ok(Expr::Binary(op, Box::new(l), Box::new(r)))
    }
    fn add(&mut self) -> Result<Expr, SyntaxError> {
        let mut l = self.mul()?;
        loop {
            let op = if self.eat_sym("+") {
                BinOp::Add
            } else if self.eat_sym("-") {
                BinOp::Sub
            } else {
                return Ok(l);
            };
            let r = self.mul()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn mul(&mut self) -> Result<Expr, SyntaxError> {
        let mut l = self.unary()?;
        loop {
            let op = if self.eat_sym("*") {
                BinOp::Mul
            } else if self.eat_sym("/") {
                BinOp::Div
            } else {
                return Ok(l);
            };
            let r = self.unary()?;
            l = Expr::Binary(op, Box::new(l), Box::new(r));
        }
    }
    fn unary(&mut self) -> Result<Expr, SyntaxError> {
        if self.eat_sym("-") {
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Unary(UnOp::Neg, Box::new(e)));
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Expr, SyntaxError> {
        let mut e = self.primary()?;
        loop {
            if self.eat_sym(".") {
                match self.peek().cloned() {
                    Some(Tok::Ident(f)) => {
                        self.pos += 1;
                        e = Expr::Field(Box::new(e), f);
                    }
                    _ => return Err(self.err("expected a field name after `.`")),
                }
            } else if matches!(self.peek(), Some(Tok::Sym("["))) && matches!(e, Expr::Field(..)) {
                return Err(self.err("indexing a field is not supported"));
            } else {
                return Ok(e);
            }
        }
    }
    fn primary(&mut self) -> Result<Expr, SyntaxError> {
        let Some((tok, off)) = self.toks.get(self.pos).cloned() else {
            return Err(self.err("expected a value"));
        };
        self.pos += 1;
        match tok {
            Tok::Sym("size") => match self.toks.get(self.pos).cloned() {
                Some((Tok::Num(n), _)) => {
                    self.pos += 1;
                    Ok(Expr::Lit(Value::Size(n)))
                }
                _ => Err(self.err("expected a size")),
            },
            Tok::Num(n) => Ok(Expr::Lit(Value::Number(n))),
            Tok::Str(s) => Ok(Expr::Lit(Value::Str(s))),
            Tok::Sym("(") => {
                let e = self.or()?;
                if !self.eat_sym(")") {
                    return Err(self.err("expected `)`"));
                }
                Ok(e)
            }
            Tok::Sym("[") => {
                let mut items = Vec::new();
                if !self.eat_sym("]") {
                    loop {
                        items.push(self.or()?);
                        if self.eat_sym("]") {
                            break;
                        }
                        if !self.eat_sym(",") {
                            return Err(self.err("expected `,` or `]` in list"));
                        }
                    }
                }
                Ok(Expr::List(items))
            }
            Tok::Ident(name) => self.ident(name, off),
            Tok::Sym(_) => {
                self.pos -= 1;
                Err(self.err("expected a value"))
            }
        }
    }
    fn ident(&mut self, name: String, off: usize) -> Result<Expr, SyntaxError> {
        match name.as_str() {
            "true" => return Ok(Expr::Lit(Value::Bool(true))),
            "false" => return Ok(Expr::Lit(Value::Bool(false))),
            _ => {}
        }
        if self.eat_sym("(") {
            let mut args = Vec::new();
            if !self.eat_sym(")") {
                loop {
                    args.push(self.or()?);
                    if self.eat_sym(")") {
                        break;
                    }
                    if !self.eat_sym(",") {
                        return Err(self.err("expected `,` or `)` after a function argument"));
                    }
                }
            }
            let Some(spec) = catalogue::function(&name) else {
                let names: Vec<&str> = catalogue::FUNCTIONS.iter().map(|f| f.name).collect();
                return Err(SyntaxError {
                    offset: off,
                    message: format!("unknown function `{name}`{}", suggest(&name, &names)),
                });
            };
            let (lo, hi) = (spec.min_args, spec.max_args);
            if args.len() < lo || args.len() > hi {
                return Err(SyntaxError {
                    offset: off,
                    message: format!("`{name}` takes {}", arity_text(lo, hi)),
                });
            }
            return Ok(Expr::Call(name, args));
        }
        if name == "params" {
            if !self.eat_sym(".") {
                return Err(self.err("expected `.NAME` after `params`"));
            }
            return match self.peek().cloned() {
                Some(Tok::Ident(p)) => {
                    self.pos += 1;
                    Ok(Expr::Param(p))
                }
                _ => Err(self.err("expected a parameter name after `params.`")),
            };
        }
        if let Some(ns) = catalogue::namespace(&name) {
            let rec = ns.shape == catalogue::Shape::Record;
            if self.eat_sym("[") {
                let key = self.or()?;
                if !self.eat_sym("]") {
                    return Err(self.err("expected `]`"));
                }
                return Ok(Expr::Setting(name, Box::new(key)));
            }
            if rec {
                return Err(self.err(&format!("expected `[\"/mount/point\"]` after `{name}`")));
            }
            // dotted key: consume `.ident` / `.number` chain without spaces
            let mut key = String::new();
            while matches!(self.peek(), Some(Tok::Sym("."))) {
                self.pos += 1;
                match self.toks.get(self.pos).cloned() {
                    Some((Tok::Ident(s), _)) => key.push_str(&s),
                    Some((Tok::Num(n), _)) => key.push_str(&format_number(n)),
                    _ => return Err(self.err("expected a key after `.`")),
                }
                self.pos += 1;
                // identifiers like `ipv4` lex as Ident; `eth0` fine; a number followed by an ident
                // (e.g. `0rp`) cannot occur in sysctl keys.
                key.push('.');
            }
            key.pop();
            if key.is_empty() {
                return Err(self.err(&format!("expected `.key` or `[\"key\"]` after `{name}`")));
            }
            return Ok(Expr::Setting(name, Box::new(Expr::Lit(Value::Str(key)))));
        }
        Ok(Expr::Name(name))
    }
}

fn arity_text(lo: usize, hi: usize) -> String {
    if lo == hi {
        format!("{lo} argument{}", if lo == 1 { "" } else { "s" })
    } else if hi == usize::MAX {
        format!("at least {lo} argument{}", if lo == 1 { "" } else { "s" })
    } else {
        format!("{lo} to {hi} arguments")
    }
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

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq)]
pub enum Missing {
    /// A setting does not exist: rules skip (or `absent` passes).
    Absent {
        /// Canonical subject (`net.ipv4.tcp_tw_recycle`).
        subject: String,
        /// Why it is absent, in words.
        reason: String,
    },
    /// Data could not be read: rules are `unknown`.
    Unknown {
        /// Subject.
        subject: String,
        /// Reason.
        reason: String,
    },
    /// The expression itself is wrong for this data (type error): rules are `error`.
    Error(String),
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::Absent { subject, reason } => write!(f, "{subject}: {reason}"),
            Missing::Unknown { subject, reason } => write!(f, "{subject}: {reason}"),
            Missing::Error(e) => f.write_str(e),
        }
    }
}

/// What the evaluator needs from the outside world. Implemented by the engine
/// over gathered facts; must not do I/O.
pub trait Context {
    /// A fact or `let` name.
    fn name(&self, name: &str) -> Result<Value, Missing>;
    /// A policy parameter.
    fn param(&self, name: &str) -> Result<Value, Missing>;
    /// A setting in a namespace.
    fn setting(&self, ns: &str, key: &str) -> Result<Value, Missing>;
    /// Size of a directory in bytes.
    fn dir_size(&self, path: &str) -> Result<Value, Missing>;
    /// The mount point that holds a path.
    fn mount_of(&self, path: &str) -> Result<Value, Missing>;
}

fn err<T>(msg: String) -> Result<T, Missing> {
    Err(Missing::Error(msg))
}

fn num(v: &Value, what: &str) -> Result<f64, Missing> {
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

/// Evaluate an expression.
pub fn eval(e: &Expr, cx: &dyn Context) -> Result<Value, Missing> {
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::List(items) => Ok(Value::List(
            items
                .iter()
                .map(|i| eval(i, cx))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Name(n) => cx.name(n),
        Expr::Param(p) => cx.param(p),
        Expr::Setting(ns, key) => {
            let k = eval(key, cx)?;
            cx.setting(ns, &k.to_plain())
        }
        Expr::Field(base, field) => match eval(base, cx)? {
            Value::Record(map) => map.get(field).cloned().ok_or_else(|| Missing::Absent {
                subject: field.clone(),
                reason: format!("has no field `{field}`"),
            }),
            other => err(format!(
                "`.{field}` needs a record, got {}",
                other.type_name()
            )),
        },
        Expr::Unary(UnOp::Neg, x) => match eval(x, cx)? {
            Value::Size(n) => Ok(Value::Size(-n)),
            v => Ok(Value::Number(-num(&v, "`-`")?)),
        },
        Expr::Unary(UnOp::Not, x) => Ok(Value::Bool(!truthy(&eval(x, cx)?)?)),
        Expr::Binary(BinOp::And, a, b) => {
            // false and <missing> is false
            let l = eval(a, cx);
            match l {
                Ok(v) if !truthy(&v)? => Ok(Value::Bool(false)),
                Ok(_) => Ok(Value::Bool(truthy(&eval(b, cx)?)?)),
                Err(m) => match eval(b, cx) {
                    Ok(v) if !truthy(&v)? => Ok(Value::Bool(false)),
                    _ => Err(m),
                },
            }
        }
        Expr::Binary(BinOp::Or, a, b) => {
            let l = eval(a, cx);
            match l {
                Ok(v) if truthy(&v)? => Ok(Value::Bool(true)),
                Ok(_) => Ok(Value::Bool(truthy(&eval(b, cx)?)?)),
                Err(m) => match eval(b, cx) {
                    Ok(v) if truthy(&v)? => Ok(Value::Bool(true)),
                    _ => Err(m),
                },
            }
        }
        Expr::Binary(op, a, b) => binary(*op, &eval(a, cx)?, &eval(b, cx)?),
        Expr::Call(f, args) => call(f, args, cx),
    }
}

/// Truth of a value (booleans, ON/OFF, numbers != 0).
pub fn truthy(v: &Value) -> Result<bool, Missing> {
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

/// Apply a binary operator to two values.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, Missing> {
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
        BinOp::And | BinOp::Or => unreachable_logic(),
    }
}

fn unreachable_logic() -> Result<Value, Missing> {
    err("internal: logic operator outside eval".into())
}

fn call(f: &str, args: &[Expr], cx: &dyn Context) -> Result<Value, Missing> {
    match f {
        "present" => match eval(&args[0], cx) {
            Ok(_) => Ok(Value::Bool(true)),
            Err(Missing::Absent { .. }) => Ok(Value::Bool(false)),
            Err(m) => Err(m),
        },
        "default" => match eval(&args[0], cx) {
            Err(Missing::Absent { .. }) => eval(&args[1], cx),
            other => other,
        },
        _ => {
            let vals: Vec<Value> = args.iter().map(|a| eval(a, cx)).collect::<Result<_, _>>()?;
            call_values(f, &vals, cx)
        }
    }
}

fn call_values(f: &str, vals: &[Value], cx: &dyn Context) -> Result<Value, Missing> {
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
                .ok_or_else(|| Missing::Error(format!("`{f}` of an empty list")))
        }
        "du" => cx.dir_size(&first.to_plain()),
        "mount_of" => cx.mount_of(&first.to_plain()),
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
fn version_number(s: &str) -> Result<Value, Missing> {
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
    use std::collections::BTreeMap;

    struct Cx(BTreeMap<String, Value>);
    impl Context for Cx {
        fn name(&self, n: &str) -> Result<Value, Missing> {
            self.0.get(n).cloned().ok_or(Missing::Absent {
                subject: n.into(),
                reason: "unset".into(),
            })
        }
        fn param(&self, n: &str) -> Result<Value, Missing> {
            self.name(&format!("params.{n}"))
        }
        fn setting(&self, ns: &str, k: &str) -> Result<Value, Missing> {
            self.name(&format!("{ns}:{k}"))
        }
        fn dir_size(&self, p: &str) -> Result<Value, Missing> {
            self.name(&format!("du:{p}"))
        }
        fn mount_of(&self, _p: &str) -> Result<Value, Missing> {
            Ok(Value::Str("/".into()))
        }
    }

    #[test]
    fn the_function_arity_list_follows_the_catalogue() {
        assert_eq!(FUNCTIONS.len(), crate::catalogue::FUNCTIONS.len());
        assert!(FUNCTIONS.contains(&("join", 1, 2)));
        assert!(FUNCTIONS.contains(&("min", 1, usize::MAX)));
    }

    #[test]
    fn every_catalogue_function_is_implemented_and_parses_at_its_arity() {
        for f in crate::catalogue::FUNCTIONS {
            let args: Vec<&str> = (0..f.min_args).map(|_| "\"10.11.5\"").collect();
            let src = format!("{}({})", f.name, args.join(", "));
            let e = parse(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
            if let Err(Missing::Error(m)) = eval(&e, &cx()) {
                assert!(!m.starts_with("unknown function"), "{src}: {m}");
            }
            if f.max_args != usize::MAX {
                let too_many = format!("{}({})", f.name, vec!["1"; f.max_args + 1].join(", "));
                assert!(parse(&too_many).is_err(), "{too_many} parsed");
            }
        }
    }

    fn cx() -> Cx {
        let mut m = BTreeMap::new();
        m.insert("mem_total".into(), Value::Size(24.0 * 1073741824.0));
        m.insert("params.share".into(), Value::Number(0.8));
        m.insert(
            "mycnf:innodb_buffer_pool_size".into(),
            Value::Size(12.0 * 1073741824.0),
        );
        m.insert(
            "sysctl:net.ipv4.conf.eth0/100.rp_filter".into(),
            Value::Number(1.0),
        );
        m.insert("sysctl:net.ipv4.tcp_timestamps".into(), Value::Number(1.0));
        Cx(m)
    }

    fn ev(s: &str) -> Result<Value, Missing> {
        eval(&parse(s).unwrap(), &cx())
    }

    #[test]
    fn arithmetic_with_units() {
        assert_eq!(ev("1G + 512M").unwrap(), Value::Size(1610612736.0));
        assert_eq!(ev("10 GiB / 2").unwrap(), Value::Size(5.0 * 1073741824.0));
        assert_eq!(ev("15%").unwrap(), Value::Number(0.15));
        assert_eq!(ev("2 * 3 + 1").unwrap(), Value::Number(7.0));
        assert_eq!(ev("1G / 512M").unwrap(), Value::Number(2.0));
    }

    #[test]
    fn settings_params_and_facts() {
        assert_eq!(
            ev("mycnf.innodb_buffer_pool_size <= params.share * mem_total").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            ev("mycnf.innodb_buffer_pool_size / mem_total").unwrap(),
            Value::Number(0.5)
        );
        assert_eq!(
            ev("sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"] == 1").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            ev("sysctl.net.ipv4.tcp_timestamps == 1").unwrap(),
            Value::Bool(true)
        );
    }

    #[test]
    fn missing_values_propagate_and_present_default_handle_them() {
        assert!(matches!(
            ev("sysctl.net.ipv4.tcp_tw_recycle == 0"),
            Err(Missing::Absent { .. })
        ));
        assert_eq!(
            ev("present(sysctl.net.ipv4.tcp_tw_recycle)").unwrap(),
            Value::Bool(false)
        );
        assert_eq!(
            ev("default(sysctl.net.ipv4.tcp_tw_recycle, 0) == 0").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(ev("false and sysctl.x.y == 1").unwrap(), Value::Bool(false));
        assert_eq!(ev("min(1G, 2G, 512M)").unwrap(), Value::Size(536870912.0));
    }

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(
            ev("version(\"10.11.19-MariaDB-0+deb12u1\")").unwrap(),
            Value::Number(10011019.0)
        );
        assert_eq!(
            ev("version(\"5.6.51-91.0-log\") >= version(\"5.7.7\")").unwrap(),
            Value::Bool(false)
        );
        assert_eq!(
            ev("version(\"8.0\") >= version(\"5.7.7\")").unwrap(),
            Value::Bool(true)
        );
        assert!(matches!(ev("version(\"MariaDB\")"), Err(Missing::Error(_))));
        assert!(matches!(
            ev("version(\"1.1000.1\")"),
            Err(Missing::Error(_))
        ));
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

    #[test]
    fn a_flat_chain_is_capped_at_parse_time_and_the_largest_allowed_one_evaluates() {
        // 20,000 terms: an error at the first token past the cap, not a stack overflow
        let long = vec!["1"; 20_000].join("+");
        let e = parse(&long).unwrap_err();
        assert_eq!(e.offset, MAX_TOKENS); // one character per token: `1`, `+`, `1`, ...
        assert!(e.message.contains("expression too long"), "{}", e.message);
        // within the token cap but too deep: 200 terms are 200 levels
        let e = parse(&vec!["1"; 200].join("+")).unwrap_err();
        assert!(e.message.contains("expression too deep"), "{}", e.message);
        // the deepest accepted chain (64 levels: 64 terms) parses, evaluates,
        // walks and drops on a thread with a quarter of the 2 MiB a spawned
        // thread gets (debug build)
        let ok = vec!["1"; MAX_TREE_DEPTH].join("+");
        let n = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let e = parse(&ok).unwrap();
                let v = eval(&e, &cx()).unwrap();
                let mut nodes = 0;
                walk(&e, &mut |_| nodes += 1);
                (v, nodes)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(n, (Value::Number(64.0), 127));
        assert!(parse(&vec!["1"; MAX_TREE_DEPTH + 1].join("+")).is_err());
    }

    /// Every expression a rule holds, in the built-in set and compiled
    /// again from the YAML.
    fn shipped_expressions() -> Vec<(String, Expr)> {
        let mut sets = vec![crate::policy::PolicySet::builtin().unwrap()];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/policies");
        let mut from_yaml = crate::policy::PolicySet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                from_yaml
                    .add_str(&path.display().to_string(), &text)
                    .unwrap();
            }
        }
        sets.push(from_yaml);
        let mut out = Vec::new();
        for set in &sets {
            for r in &set.rules {
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
