//! Typed values shared by parsers, facts and the evaluator: numbers, byte sizes,
//! booleans, strings, lists and records, with unit parsing and human formatting.
//! Pure: never touches the filesystem.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

/// A typed value as the evaluator sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Value {
    /// A plain number (counts, ratios, percentages as fractions).
    Number(f64),
    /// A quantity of bytes.
    Size(f64),
    /// A boolean (ON/OFF, 1/0, true/false).
    Bool(bool),
    /// Text.
    Str(String),
    /// A list of values (multi-value sysctl keys, option lists).
    List(Vec<Value>),
    /// Named fields (a mount, an ext4 layout).
    Record(BTreeMap<String, Value>),
}

const KIB: f64 = 1024.0;

impl Value {
    /// The value as a number, if it is numeric (numbers, sizes, booleans as 0/1,
    /// strings that hold one decimal number).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) | Value::Size(n) => Some(*n),
            Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            Value::Str(s) => s.trim().parse::<f64>().ok().filter(|n| n.is_finite()),
            Value::List(items) if items.len() == 1 => items[0].as_f64(),
            _ => None,
        }
    }

    /// The value as a boolean where it has one (ON/OFF, TRUE/FALSE, 1/0, yes/no).
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Number(n) | Value::Size(n) => Some(*n != 0.0),
            Value::Str(s) => parse_bool(s),
            _ => None,
        }
    }

    /// A short name of the type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Number(_) => "number",
            Value::Size(_) => "size",
            Value::Bool(_) => "boolean",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Record(_) => "record",
        }
    }

    /// Loose equality used by checks and drift: numbers compare numerically,
    /// booleans accept ON/1/true, strings compare whitespace-normalised, lists
    /// element-wise.
    pub fn loosely_equals(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.loosely_equals(y))
            }
            (Value::List(a), b) | (b, Value::List(a)) if a.len() != 1 => {
                // "32768 60999" as a string against a list
                match b {
                    Value::Str(s) => normalize_ws(s) == normalize_ws(&self_list_text(a)),
                    _ => false,
                }
            }
            (Value::Bool(a), b) | (b, Value::Bool(a)) => b.as_bool() == Some(*a),
            // `ON` against 1: both spell a boolean
            (Value::Str(s), n @ Value::Number(_)) | (n @ Value::Number(_), Value::Str(s))
                if s.trim().parse::<f64>().is_err() && parse_bool(s).is_some() =>
            {
                matches!(n.as_f64(), Some(x) if x == 0.0 || x == 1.0)
                    && parse_bool(s) == n.as_bool()
            }
            (Value::Str(a), Value::Str(b)) => normalize_ws(a) == normalize_ws(b),
            // `10G` against a size read as 10737418240 bytes: by meaning
            (Value::Size(n), Value::Str(s)) | (Value::Str(s), Value::Size(n))
                if s.trim().parse::<f64>().is_err() && parse_size(s).is_ok() =>
            {
                let m = parse_size(s).unwrap_or(f64::NAN);
                (n - m).abs() <= f64::EPSILON * n.abs().max(m.abs()).max(1.0)
            }
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()).max(1.0),
                _ => normalize_ws(&a.to_plain()) == normalize_ws(&b.to_plain()),
            },
        }
    }

    /// The value as plain text, without units or decoration (sizes in bytes).
    pub fn to_plain(&self) -> String {
        match self {
            Value::Number(n) | Value::Size(n) => format_number(*n),
            Value::Bool(b) => if *b { "ON" } else { "OFF" }.to_string(),
            Value::Str(s) => s.clone(),
            Value::List(items) => self_list_text(items),
            Value::Record(map) => map
                .iter()
                // `FIELD?` says why FIELD is unknown: not a value
                .filter(|(k, _)| !k.ends_with('?'))
                .map(|(k, v)| format!("{k}={}", v.to_plain()))
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

fn self_list_text(items: &[Value]) -> String {
    items
        .iter()
        .map(Value::to_plain)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Collapse runs of whitespace (tabs included) to one space and trim.
pub fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parse a boolean the way MySQL and most config files spell it.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Some(true),
        "0" | "off" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// Format a number without a trailing `.0` for integers.
pub fn format_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e18 {
        format!("{}", n as i64)
    } else if n.is_finite() {
        let s = format!("{n:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{n}")
    }
}

/// Human form of a byte count: `2 GiB`, `2458 MiB`, `9.4 GiB`, `512 bytes`.
pub fn format_size(bytes: f64) -> String {
    let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes.abs() < KIB {
        return format!("{} bytes", format_number(bytes));
    }
    let mut v = bytes;
    let mut unit = "bytes";
    for u in units {
        if v.abs() < KIB {
            break;
        }
        v /= KIB;
        unit = u;
    }
    let rounded = (v * 10.0).round() / 10.0;
    format!("{} {unit}", format_number(rounded))
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Size(n) => f.write_str(&format_size(*n)),
            Value::Number(n) => f.write_str(&format_number(*n)),
            other => f.write_str(&other.to_plain()),
        }
    }
}

/// Error from [`parse_size`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError(pub String);

/// Parse a size as people write it in policies: `1024`, `1G`, `1GiB`, `1 GB`,
/// `512M`, `1.5T`, `64k`. K/M/G/T/P/E and KiB..EiB and KB..EB are all powers
/// of 1024, as in MySQL option files and `free`.
pub fn parse_size(text: &str) -> Result<f64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| SizeError(format!("`{text}` is not a size: expected a number")))?;
    let mult = unit_multiplier(unit.trim())
        .ok_or_else(|| SizeError(format!("`{text}` has an unknown unit `{}`", unit.trim())))?;
    Ok(n * mult)
}

/// Multiplier for a size unit (`K`, `KiB`, `KB`, ... case-insensitive); `""`
/// and `B` are bytes.
pub fn unit_multiplier(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    let base = match u.as_str() {
        "" | "b" | "bytes" => return Some(1.0),
        _ => u.trim_end_matches('b').trim_end_matches('i'),
    };
    let exp = match base {
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        "e" => 6,
        _ => return None,
    };
    Some(KIB.powi(exp))
}

/// A [`Value`] with its variant named, for data that must read back as the
/// same value (the frozen built-in policies); reports use `Value`'s own
/// untagged form. `#[serde(with = "crate::value::tagged")]`.
pub(crate) mod tagged {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Value;

    /// `Value`, variant for variant.
    #[derive(Serialize, Deserialize)]
    pub(crate) enum Tagged {
        Number(f64),
        Size(f64),
        Bool(bool),
        Str(String),
        List(Vec<Tagged>),
        Record(BTreeMap<String, Tagged>),
    }

    impl From<&Value> for Tagged {
        fn from(v: &Value) -> Tagged {
            match v {
                Value::Number(n) => Tagged::Number(*n),
                Value::Size(n) => Tagged::Size(*n),
                Value::Bool(b) => Tagged::Bool(*b),
                Value::Str(s) => Tagged::Str(s.clone()),
                Value::List(l) => Tagged::List(l.iter().map(Tagged::from).collect()),
                Value::Record(m) => {
                    Tagged::Record(m.iter().map(|(k, v)| (k.clone(), v.into())).collect())
                }
            }
        }
    }

    impl From<Tagged> for Value {
        fn from(t: Tagged) -> Value {
            match t {
                Tagged::Number(n) => Value::Number(n),
                Tagged::Size(n) => Value::Size(n),
                Tagged::Bool(b) => Value::Bool(b),
                Tagged::Str(s) => Value::Str(s),
                Tagged::List(l) => Value::List(l.into_iter().map(Value::from).collect()),
                Tagged::Record(m) => {
                    Value::Record(m.into_iter().map(|(k, v)| (k, v.into())).collect())
                }
            }
        }
    }

    pub(crate) fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        Tagged::from(v).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        Tagged::deserialize(d).map(Value::from)
    }

    /// A map of values, each with its variant named (a policy's
    /// parameters). `#[serde(with = "crate::value::tagged::map")]`.
    pub(crate) mod map {
        use std::collections::BTreeMap;

        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        use crate::value::tagged::Tagged;
        use crate::value::Value;

        pub(crate) fn serialize<S: Serializer>(
            map: &BTreeMap<String, Value>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            let tagged: BTreeMap<&str, Tagged> =
                map.iter().map(|(k, v)| (k.as_str(), v.into())).collect();
            tagged.serialize(s)
        }

        pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<BTreeMap<String, Value>, D::Error> {
            let tagged = BTreeMap::<String, Tagged>::deserialize(d)?;
            Ok(tagged.into_iter().map(|(k, v)| (k, v.into())).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("1G").unwrap(), 1073741824.0);
        assert_eq!(parse_size("1GiB").unwrap(), 1073741824.0);
        assert_eq!(parse_size("2048M").unwrap(), 2147483648.0);
        assert_eq!(parse_size("10 GB").unwrap(), 10.0 * 1073741824.0);
        assert_eq!(parse_size("1.5k").unwrap(), 1536.0);
        assert_eq!(parse_size("42").unwrap(), 42.0);
        assert!(parse_size("12 apples").is_err());
        assert!(parse_size("G").is_err());
    }

    #[test]
    fn a_size_equals_a_size_spelled_text_by_meaning() {
        let ten_g = Value::Size(10.0 * 1073741824.0);
        for same in ["10G", "10240M", "10 GiB", "10737418240"] {
            assert!(ten_g.loosely_equals(&Value::Str(same.into())), "{same}");
            assert!(Value::Str(same.into()).loosely_equals(&ten_g), "{same}");
        }
        for other in ["11G", "10", "10 apples", ""] {
            assert!(!ten_g.loosely_equals(&Value::Str(other.into())), "{other}");
        }
    }

    #[test]
    fn sizes_format_for_people() {
        assert_eq!(format_size(2147483648.0), "2 GiB");
        assert_eq!(format_size(2458.0 * 1048576.0), "2.4 GiB");
        assert_eq!(format_size(500.0), "500 bytes");
        assert_eq!(format_size(6442450944.0), "6 GiB");
    }

    #[test]
    fn loose_equality_normalises_spelling() {
        assert!(Value::Str("32768\t60999".into()).loosely_equals(&Value::Str("32768 60999".into())));
        assert!(Value::Bool(true).loosely_equals(&Value::Str("ON".into())));
        assert!(Value::Str("ON".into()).loosely_equals(&Value::Number(1.0)));
        assert!(Value::Number(0.0).loosely_equals(&Value::Str("off".into())));
        assert!(!Value::Str("ON".into()).loosely_equals(&Value::Number(2.0)));
        assert!(Value::Size(2147483648.0).loosely_equals(&Value::Number(2147483648.0)));
        assert!(!Value::Str("1".into()).loosely_equals(&Value::Str("2".into())));
        assert!(Value::List(vec![Value::Number(1.0), Value::Number(2.0)])
            .loosely_equals(&Value::Str("1  2".into())));
    }
}
