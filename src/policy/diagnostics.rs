//! Policy diagnostics: every problem a policy can have, with file, line,
//! column, the rule, and the offending source line with a caret; the error
//! type of loading. Must not compile or read anything.

use std::fmt;

use crate::expr;

/// One problem found while loading policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyProblem {
    /// Policy file.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// Rule id, when the problem is inside a rule.
    pub rule: Option<String>,
    /// Message (lowercase start, user input in backticks).
    pub message: String,
    /// The offending source line(s) with a caret, ready to print.
    pub snippet: String,
}

impl fmt::Display for PolicyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.path, self.line, self.column)?;
        if let Some(r) = &self.rule {
            write!(f, "rule `{r}`: ")?;
        }
        f.write_str(&self.message)?;
        if !self.snippet.is_empty() {
            write!(f, "\n{}", self.snippet)?;
        }
        Ok(())
    }
}

/// Error from loading policies: every problem found, in file order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy text is invalid.
    #[error("{}", .0.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<PolicyProblem>),
    /// A policy file or directory could not be read.
    #[error("cannot read policy `{path}`: {reason}")]
    Io {
        /// Path.
        path: String,
        /// Reason.
        reason: String,
    },
    /// A `--set` override is wrong.
    #[error("{0}")]
    Param(String),
}

impl PolicyError {
    /// The problems, if any.
    pub fn problems(&self) -> &[PolicyProblem] {
        match self {
            PolicyError::Invalid(p) => p,
            _ => &[],
        }
    }
}

const RULE_FIELDS: &[&str] = &[
    "id",
    "title",
    "severity",
    "applies",
    "let",
    "setting",
    "expect",
    "assert",
    "drift",
    "why",
    "fix",
    "references",
];

/// Widest part of a source line a snippet shows (in characters): a
/// one-line 2 MB YAML document must not print 2 MB of stderr per error.
const SNIPPET_WIDTH: usize = 100;

/// Longest message quoted from the YAML parser (it quotes keys and values).
const MESSAGE_WIDTH: usize = 300;

/// The source line at `line` with a caret under `column`, ready to print
/// (shared by every YAML input: policies and waivers). A line wider than
/// [`SNIPPET_WIDTH`] is cut to a window around the column, marked with `…`.
pub(crate) fn snippet(text: &str, line: usize, column: usize) -> String {
    let Some(src) = text.lines().nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let chars: Vec<char> = src.chars().collect();
    let col = column.saturating_sub(1).min(chars.len());
    let (start, end) = if chars.len() <= SNIPPET_WIDTH {
        (0, chars.len())
    } else {
        let start = col
            .saturating_sub(SNIPPET_WIDTH / 2)
            .min(chars.len() - SNIPPET_WIDTH);
        (start, start + SNIPPET_WIDTH)
    };
    let lead = if start > 0 { "…" } else { "" };
    let tail = if end < chars.len() { "…" } else { "" };
    let shown: String = chars[start..end].iter().collect();
    let width = line.to_string().len();
    // `…` is one column wide; tabs stay tabs so the caret lines up
    let caret_pad: String = lead
        .chars()
        .map(|_| ' ')
        .chain(
            chars[start..col]
                .iter()
                .map(|&c| if c == '\t' { '\t' } else { ' ' }),
        )
        .collect();
    format!(
        "{:>width$} | {lead}{shown}{tail}\n{:>width$} | {caret_pad}^",
        line, ""
    )
}

/// `message` cut to [`MESSAGE_WIDTH`] characters (on a char boundary).
fn clip(message: String) -> String {
    match message.char_indices().nth(MESSAGE_WIDTH) {
        Some((i, _)) => format!("{}…", &message[..i]),
        None => message,
    }
}

pub(super) fn problem_at(
    path: &str,
    text: &str,
    line: usize,
    column: usize,
    rule: Option<String>,
    message: String,
) -> PolicyProblem {
    PolicyProblem {
        path: path.to_string(),
        line,
        column,
        rule,
        snippet: snippet(text, line, column),
        message,
    }
}

/// Line, column and one-line message of a serde-saphyr error (its own
/// "line X column Y:" prefix and snippet dropped: callers print their own).
pub(crate) fn yaml_error_parts(e: &serde_saphyr::Error) -> (usize, usize, String) {
    let (line, column) = e
        .location()
        .map(|l| (l.line() as usize, l.column() as usize))
        .unwrap_or((1, 1));
    let raw = e.without_snippet().to_string();
    let mut message = raw
        .lines()
        .next()
        .unwrap_or("invalid YAML")
        .trim_start_matches("error: ")
        .to_string();
    if let Some(rest) = message.strip_prefix("line ") {
        if let Some((_, m)) = rest.split_once(": ") {
            message = m.to_string();
        }
    }
    (line, column, clip(message))
}

/// Turn a serde-saphyr error into a problem, with a did-you-mean for unknown fields.
pub(super) fn yaml_problem(path: &str, text: &str, e: &serde_saphyr::Error) -> PolicyProblem {
    let (line, column, mut message) = yaml_error_parts(e);
    if let Some(field) = message
        .strip_prefix("unknown field `")
        .and_then(|m| m.split('`').next())
    {
        let valid: Vec<&str> = match message.split_once("expected one of ") {
            Some((_, list)) => list
                .split(',')
                .map(|s| s.trim().trim_matches('`'))
                .collect(),
            None => RULE_FIELDS.to_vec(),
        };
        let s = expr::suggest(field, &valid);
        if !s.is_empty() {
            message = format!("unknown field `{field}`{s}");
        }
    }
    problem_at(path, text, line, column, None, message)
}
