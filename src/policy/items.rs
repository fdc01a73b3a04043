//! Texts with `${EXPR}` compiled at load: a `for_each` list item's fields
//! ([`ItemText`]; with its `when`, a `CompiledItem` of the model), parsed
//! once when the policy set is loaded (after overlays set the list), and
//! `applies` paths ([`PathText`]); never while a host is judged. A text that does not parse keeps the parser's message, and is
//! that error when evaluation reaches it (as it was when it was parsed
//! then): [`Unparsed::missing`]. Must not read host data or evaluate (the
//! engine evaluates a text in the rule's scope).

use serde::{Deserialize, Serialize};

use crate::expr::eval::Missing;
use crate::expr::{self, Expr};

/// A list item field's text with its `${EXPR}` placeholders parsed: the
/// engine's evaluation of it gives what evaluating the text gave, errors
/// included (a placeholder that does not parse is its error when
/// evaluation reaches it, with the same message: [`Unparsed::missing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ItemText {
    /// The text is one placeholder: its value keeps its type.
    Whole(Result<Expr, Unparsed>),
    /// Text around placeholders, in order.
    Parts(Vec<ItemPiece>),
}

/// A part of an [`ItemText::Parts`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ItemPiece {
    /// Text as written.
    Text(String),
    /// A placeholder, or why it is not one.
    Expr(Result<Expr, Unparsed>),
    /// A `${` without its `}`: the parts end here.
    Unclosed,
}

/// A placeholder that did not parse: its text and the parser's message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unparsed {
    /// The text between `${` and `}`.
    pub inner: String,
    /// The parser's message.
    pub message: String,
}

impl Unparsed {
    /// The error of reading the item field `field` whose placeholder this is.
    pub fn missing(&self, field: &str) -> Missing {
        Missing::Error(format!(
            "item field `{field}`: `{}`: {}",
            self.inner, self.message
        ))
    }
}

impl ItemText {
    /// `t` parsed: one placeholder, or text around placeholders.
    pub fn parse(t: &str) -> ItemText {
        let parse = |inner: &str| {
            expr::parse(inner).map_err(|e| Unparsed {
                inner: inner.to_string(),
                message: e.message,
            })
        };
        if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
            if !inner.contains('}') {
                return ItemText::Whole(parse(inner));
            }
        }
        let mut parts = Vec::new();
        let mut rest = t;
        while let Some(i) = rest.find("${") {
            parts.push(ItemPiece::Text(rest[..i].to_string()));
            let after = &rest[i + 2..];
            let Some(end) = after.find('}') else {
                parts.push(ItemPiece::Unclosed);
                return ItemText::Parts(parts);
            };
            parts.push(ItemPiece::Expr(parse(&after[..end])));
            rest = &after[end + 1..];
        }
        parts.push(ItemPiece::Text(rest.to_string()));
        ItemText::Parts(parts)
    }
}

/// An `applies: exists:`/`missing:` path: the text as written, and its
/// `${EXPR}` compiled when the policy is loaded (`None`: a literal path).
/// Prints, compares and serializes as its text (the frozen form compiles
/// it again when read, at load).
#[derive(Clone, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct PathText {
    text: String,
    expr: Option<Result<Expr, String>>,
}

impl PathText {
    /// `text` with its `${EXPR}` (the whole text) parsed.
    pub fn new(text: String) -> PathText {
        let expr = text
            .strip_prefix("${")
            .and_then(|x| x.strip_suffix('}'))
            .map(|inner| expr::parse(inner).map_err(|e| e.message));
        PathText { text, expr }
    }

    /// A path already worked out (an item's, evaluated on a host): taken
    /// as it is, nothing parsed.
    pub fn literal(text: String) -> PathText {
        PathText { text, expr: None }
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The expression of a `${EXPR}` path, or the parser's message; `None`
    /// for a literal path.
    pub fn expr(&self) -> Option<Result<&Expr, &str>> {
        self.expr
            .as_ref()
            .map(|r| r.as_ref().map_err(String::as_str))
    }
}

impl From<String> for PathText {
    fn from(text: String) -> PathText {
        PathText::new(text)
    }
}

impl From<&str> for PathText {
    fn from(text: &str) -> PathText {
        PathText::new(text.to_string())
    }
}

impl From<PathText> for String {
    fn from(p: PathText) -> String {
        p.text
    }
}

impl std::ops::Deref for PathText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl PartialEq for PathText {
    fn eq(&self, other: &PathText) -> bool {
        self.text == other.text
    }
}

impl std::fmt::Debug for PathText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.text, f)
    }
}

impl std::fmt::Display for PathText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
