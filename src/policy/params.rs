//! Typed policy parameters: the types a `params:` entry may declare
//! (`{type: ratio, default: 0.7}`), the check every value passes before a
//! rule can read it (the default at load, `--set`, an overlay's `params:`),
//! and the type suggested for a parameter declared without one. Pure: must
//! not read files, the host, or evaluate rules.

use serde::{Deserialize, Serialize};

use crate::value::{format_number, Value};

/// The type a parameter declares: which values `--set`, an overlay or the
/// default may give it. A value of another type is refused at load with
/// what is allowed, so no rule ever evaluates with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ParamType {
    /// A number, optionally within `min`..=`max`.
    Number {
        /// Smallest allowed value.
        min: Option<f64>,
        /// Largest allowed value.
        max: Option<f64>,
    },
    /// A size in bytes, written `1G`, `512M` or a number (never negative).
    Size,
    /// A share of a whole: a number from 0 to 1, or a percentage (`70%`).
    Ratio,
    /// `true` or `false`.
    Bool,
    /// One of the listed words, as written (`auto`, `true`, `false`).
    Enum(Vec<String>),
    /// An absolute path.
    Path,
    /// Any text.
    Text,
    /// A list of items for `for_each: { param: NAME }`.
    List,
}

/// The type names a declaration may use.
pub const TYPE_NAMES: &[&str] = &[
    "number", "size", "ratio", "bool", "enum", "path", "text", "list",
];

impl ParamType {
    /// What values the type allows, as a phrase (`a number from 0 to 1`).
    pub fn allowed(&self) -> String {
        match self {
            ParamType::Number { min, max } => match (min, max) {
                (Some(lo), Some(hi)) => format!(
                    "a number from {} to {}",
                    format_number(*lo),
                    format_number(*hi)
                ),
                (Some(lo), None) => format!("a number of at least {}", format_number(*lo)),
                (None, Some(hi)) => format!("a number of at most {}", format_number(*hi)),
                (None, None) => "a number".into(),
            },
            ParamType::Size => "a size such as 512M, 10G or a number of bytes".into(),
            ParamType::Ratio => "a ratio from 0 to 1, or a percentage such as 70%".into(),
            ParamType::Bool => "true or false".into(),
            ParamType::Enum(values) => {
                let v: Vec<String> = values
                    .iter()
                    .map(|v| {
                        if v.is_empty() {
                            "`` (empty)".to_string()
                        } else {
                            format!("`{v}`")
                        }
                    })
                    .collect();
                format!("one of {}", v.join(", "))
            }
            ParamType::Path => "an absolute path".into(),
            ParamType::Text => "text".into(),
            ParamType::List => "a list of items (set it in an overlay)".into(),
        }
    }

    /// Whether a value given as text (`--set`) is taken as written rather
    /// than read as a constant expression: paths, text and enum words.
    pub(crate) fn literal(&self) -> bool {
        matches!(self, ParamType::Path | ParamType::Text | ParamType::Enum(_))
    }

    /// The value of text taken as written: `true` and `false` are the
    /// booleans a policy's YAML makes of them; anything else is text.
    pub(crate) fn literal_value(&self, text: &str) -> Value {
        match text {
            "true" if !matches!(self, ParamType::Path | ParamType::Text) => Value::Bool(true),
            "false" if !matches!(self, ParamType::Path | ParamType::Text) => Value::Bool(false),
            _ => Value::Str(text.to_string()),
        }
    }

    /// The type's name as a declaration writes it.
    pub fn name(&self) -> &'static str {
        match self {
            ParamType::Number { .. } => "number",
            ParamType::Size => "size",
            ParamType::Ratio => "ratio",
            ParamType::Bool => "bool",
            ParamType::Enum(_) => "enum",
            ParamType::Path => "path",
            ParamType::Text => "text",
            ParamType::List => "list",
        }
    }

    /// Whether `value` (as [`super::param_value`] made it) is of this
    /// type; `Err` is what is allowed, with a did-you-mean for a word
    /// close to one an enum allows.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let ok = match (self, value) {
            (ParamType::Number { min, max }, Value::Number(n)) => {
                n.is_finite() && min.is_none_or(|lo| *n >= lo) && max.is_none_or(|hi| *n <= hi)
            }
            (ParamType::Size, Value::Number(n) | Value::Size(n)) => n.is_finite() && *n >= 0.0,
            (ParamType::Ratio, Value::Number(n)) => (0.0..=1.0).contains(n),
            (ParamType::Bool, Value::Bool(_)) => true,
            (ParamType::Enum(values), v) if !matches!(v, Value::List(_) | Value::Record(_)) => {
                let text = match v {
                    Value::Bool(b) => b.to_string(),
                    other => other.to_plain(),
                };
                if values.contains(&text) {
                    true
                } else {
                    let refs: Vec<&str> = values.iter().map(String::as_str).collect();
                    return Err(format!(
                        "{}{}",
                        self.allowed(),
                        crate::expr::suggest(&text, &refs)
                    ));
                }
            }
            (ParamType::Path, Value::Str(s)) => s.starts_with('/'),
            (ParamType::Text, Value::Str(_)) => true,
            (ParamType::List, Value::List(_)) => true,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.allowed())
        }
    }

    /// The type a parameter declared without one most likely has, from its
    /// default (the suggestion in the `untyped-param` warning).
    pub fn suggested(value: &Value) -> ParamType {
        match value {
            Value::Bool(_) => ParamType::Bool,
            Value::List(_) => ParamType::List,
            Value::Size(_) => ParamType::Size,
            Value::Number(n) if (0.0..=1.0).contains(n) && n.fract() != 0.0 => ParamType::Ratio,
            Value::Number(_) => ParamType::Number {
                min: None,
                max: None,
            },
            Value::Str(s) if s.starts_with('/') => ParamType::Path,
            _ => ParamType::Text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--set` makes of `t` (numbers, sizes and percentages are constants).
    fn val(t: &str) -> Value {
        if let Some(p) = t.strip_suffix('%') {
            return Value::Number(p.parse::<f64>().unwrap() / 100.0);
        }
        if let Ok(n) = t.parse::<f64>() {
            return Value::Number(n);
        }
        match crate::value::parse_size(t) {
            Ok(n) if t.starts_with(|c: char| c.is_ascii_digit()) => Value::Size(n),
            _ => ParamType::Text.literal_value(t),
        }
    }

    #[test]
    fn a_ratio_refuses_words_and_shares_above_one() {
        assert!(ParamType::Ratio.check(&val("0.7")).is_ok());
        assert!(ParamType::Ratio.check(&val("70%")).is_ok());
        assert!(ParamType::Ratio.check(&val("abc")).is_err());
        assert!(ParamType::Ratio.check(&val("1.5")).is_err());
    }

    #[test]
    fn an_enum_names_the_word_meant() {
        let t = ParamType::Enum(vec!["".into(), "ssd".into(), "hdd".into()]);
        assert!(t.check(&val("hdd")).is_ok());
        assert!(t.check(&Value::Str(String::new())).is_ok());
        let e = t.check(&val("banana")).unwrap_err();
        assert!(e.contains("`ssd`") && e.contains("`hdd`"), "{e}");
        let e = t.check(&val("sdd")).unwrap_err();
        assert!(e.contains("did you mean"), "{e}");
    }

    #[test]
    fn a_bool_written_in_an_enum_matches_its_word() {
        let t = ParamType::Enum(vec!["auto".into(), "true".into(), "false".into()]);
        assert!(t.check(&val("true")).is_ok());
        assert!(t.check(&val("auto")).is_ok());
        assert!(t.check(&val("yes")).is_err());
    }

    #[test]
    fn a_size_refuses_text_and_negative_numbers() {
        assert!(ParamType::Size.check(&val("10G")).is_ok());
        assert!(ParamType::Size.check(&val("ten")).is_err());
        assert!(ParamType::Size.check(&val("-1")).is_err());
    }
}
