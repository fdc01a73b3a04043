//! The syntax tree of an expression ([`Expr`] and its operators) and a
//! walk over it. The tree only: must not parse text, print it (that is
//! `canonical.rs`) or compute values.

use crate::value::Value;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Expr {
    /// A literal value.
    Lit(#[serde(with = "crate::value::tagged")] Value),
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// The operator as written (`>=`, `and`).
    pub fn symbol(self) -> &'static str {
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
