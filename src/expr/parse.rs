//! The lexer and parser of the expression language: text in, an [`Expr`]
//! or a [`SyntaxError`] with the character it points at out. Bounded: at
//! most [`MAX_TOKENS`] tokens and [`MAX_TREE_DEPTH`] levels, so hostile
//! policy text cannot overflow the stack. Pure: never evaluates.

use super::ast::{BinOp, Expr, UnOp};
use super::syntax_error::{suggest, SyntaxError};
use crate::catalogue;
use crate::value::{format_number, unit_multiplier, Value};

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

#[cfg(test)]
thread_local! {
    /// How many texts this thread parsed: the engine's tests hold that
    /// evaluation parses none (everything was compiled at load).
    pub(crate) static PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Parse an expression.
pub fn parse(src: &str) -> Result<Expr, SyntaxError> {
    #[cfg(test)]
    PARSED.with(|n| n.set(n.get() + 1));
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
            // keywords are never names: `0 == not -0` once read as `0 == (not - 0)`
            "not" => {
                return Err(SyntaxError {
                    offset: off,
                    message: "`not` binds looser than comparisons and arithmetic: \
                              put it in parentheses, e.g. `a == (not b)`"
                        .into(),
                })
            }
            "and" | "or" => {
                return Err(SyntaxError {
                    offset: off,
                    message: format!("expected a value, found `{name}`"),
                })
            }
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
