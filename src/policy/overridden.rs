//! The record of what a site overlay (or `--set`) changed on a rule
//! ([`Overridden`]) and where it was written ([`OverrideSource`]), shown
//! beside the findings. Plain data; must not apply an overlay (that is
//! `overlay.rs`'s).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where an override was written: file, line and column of its value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct OverrideSource {
    /// Policy file as given (`site/prod.yaml`); `--set` for the command line.
    pub path: String,
    /// 1-based line (0 for `--set`).
    pub line: usize,
    /// 1-based column (0 for `--set`).
    pub column: usize,
}

impl fmt::Display for OverrideSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.path)
        } else {
            write!(f, "{}:{}:{}", self.path, self.line, self.column)
        }
    }
}

/// One value of a rule that an overlay (or `--set`) changed, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overridden {
    /// What changed: `severity`, `disabled`, `params.NAME` or `applies`.
    pub field: String,
    /// The value now: a severity, the reason of `disabled`, a parameter
    /// value as written, an added condition (`exists: /srv/db`).
    pub value: String,
    /// The value before (the rule's own, or an earlier overlay's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
    /// Where it was set.
    pub set_by: OverrideSource,
}

impl fmt::Display for Overridden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field.as_str() {
            "disabled" => write!(f, "disabled by {}: {}", self.set_by, self.value),
            "applies" => write!(f, "applies also `{}` ({})", self.value, self.set_by),
            _ => {
                write!(f, "{} {}", self.field, self.value)?;
                if let Some(was) = &self.was {
                    write!(f, " (was {was})")?;
                }
                write!(f, " from {}", self.set_by)
            }
        }
    }
}
