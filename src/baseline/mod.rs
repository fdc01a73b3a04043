//! `driftaudit baseline`: a policy that pins a known-good ("golden") host's
//! effective values, one `for_each` rule per namespace over a list
//! parameter of `{key, value}` items (docs/policy-language.md, "Baselines"),
//! and per closed configuration namespace one `for_each` over its keys
//! whose `where:` leaves out the pins and the `NS_open` globs, so a setting
//! the golden host lacks fails as "not on the golden host".
//! Reads the host through the facts readers, leaves out volatile keys (a
//! documented default list) and secrets (never written, not even in a
//! note), writes every value through `serde_json` (valid YAML flow, so `yes`,
//! `0x10` or `: x` stay strings) and proves the result: the generated policy
//! is loaded and audited against the golden host itself, and a pin that
//! does not pass there is left out with the reason. Must not print or write
//! files (the CLI does) and never puts a secret value in a pin or an error.
//!
//! The folder, in the order a baseline is made: `model` (the options and
//! defaults, the pins and what is left out, the ids), this file (the choice
//! of keys and values, and the steps in order), `open` (each closed
//! namespace's `NS_open` globs), `yaml` (the policy text) and `prove` (the
//! proof).

mod model;
mod open;
mod prove;
mod yaml;

use std::collections::BTreeSet;

use crate::facts::{self, Entry, Facts, Needs};
use crate::host::{Host, SourceKind};
use crate::secret::{self, Format, REDACTED};
use crate::value::{format_number, Value};

pub use model::{
    added_rule_id, policy_id, rule_id, Baseline, BaselineError, BaselineOptions, LeftOut, Pin,
    CLOSED_NAMESPACES, DEFAULT_IGNORE, DEFAULT_NAMESPACES,
};

use model::{globs, matches, PINNABLE};
use open::open_globs;
use prove::{prove, verify};
use yaml::render;

/// The text a value is pinned as when the golden host's own spelling does
/// not read back ([`golden_spelling`]): what the engine's comparison
/// (`Value::loosely_equals`) finds equal to the value read, sizes in bytes,
/// booleans as ON/OFF, numbers in full precision, lists space-separated.
fn pin_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) | Value::Size(n) => {
            if n.fract() == 0.0 && n.abs() < 1e18 {
                Some(format_number(*n))
            } else if n.is_finite() {
                Some(format!("{n}"))
            } else {
                None
            }
        }
        Value::Bool(_) | Value::Str(_) => Some(v.to_plain()),
        Value::List(items) => items
            .iter()
            .map(pin_text)
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(" ")),
        Value::Record(_) => None,
    }
}

/// The golden host's own text for a value (`10G`, not `10737418240`), when
/// it reads back equal under the engine's comparison; `None` when it does
/// not (quoted text, a boolean written as a bare option name), and the
/// value is pinned as [`pin_text`] writes it.
fn golden_spelling(v: &Value, raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() || matches!(v, Value::Record(_)) {
        return None;
    }
    v.loosely_equals(&Value::Str(raw.to_string()))
        .then(|| raw.to_string())
}

/// `captured TIME` as `snapshot.json` records it, `read live TIME` for the
/// live host, else that the time is unknown.
fn captured_at(host: &Host) -> String {
    if host.kind() == SourceKind::Live {
        return format!("read live {}", crate::snapshot::rfc3339_now());
    }
    host.read_to_string("/snapshot.json")
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("captured_at")?.as_str().map(str::to_string))
        .filter(|s| !s.is_empty())
        .map(|t| format!("captured {t}"))
        .unwrap_or_else(|| "capture time unknown, no snapshot.json".into())
}

/// A mount point's options are pinned only when none carries a secret.
fn options_secret(opts: &Value) -> bool {
    let Value::List(items) = opts else {
        return false;
    };
    items.iter().any(|o| {
        let t = o.to_plain();
        let (n, v) = t
            .split_once('=')
            .map_or((t.as_str(), None), |(n, v)| (n, Some(v)));
        t.contains(REDACTED) || secret::mount_option_is_secret(n, v)
    })
}

/// Read `host` and pin what `opts` select. The policy is audited against
/// `host` before it is returned; a pin that does not pass there is left out
/// with the reason.
pub fn generate(host: &Host, opts: &BaselineOptions) -> Result<Baseline, BaselineError> {
    let wanted: Vec<String> = if opts.namespaces.is_empty() {
        DEFAULT_NAMESPACES.iter().map(|s| s.to_string()).collect()
    } else {
        let mut seen = BTreeSet::new();
        let mut v = Vec::new();
        for n in &opts.namespaces {
            if !PINNABLE.iter().any(|(p, _)| p == n) {
                return Err(BaselineError::UnknownNamespace {
                    name: n.clone(),
                    known: PINNABLE
                        .iter()
                        .map(|(p, _)| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            if seen.insert(n.clone()) {
                v.push(n.clone());
            }
        }
        v
    };
    for n in &opts.open {
        if !PINNABLE.iter().any(|(p, _)| p == n) {
            return Err(BaselineError::UnknownNamespace {
                name: n.clone(),
                known: PINNABLE
                    .iter()
                    .map(|(p, _)| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    let keys = globs("--keys", &opts.keys)?;
    let ignore = globs("--ignore", &opts.ignore)?;
    let volatile: Vec<glob::Pattern> = if opts.no_default_ignore {
        Vec::new()
    } else {
        DEFAULT_IGNORE
            .iter()
            .map(|(g, _)| glob::Pattern::new(g).expect("default ignore globs parse"))
            .collect()
    };
    let needs = Needs {
        namespaces: wanted.iter().cloned().collect(),
        ..Needs::default()
    };
    let facts = facts::gather(host, &needs);
    let name = host.name().to_string();
    let captured = captured_at(host);
    let policy = policy_id(&name);

    let mut pins = Vec::new();
    let mut empty = Vec::new();
    let mut left_out = Vec::new();
    let mut volatile_count = 0;
    for ns in &wanted {
        let format = PINNABLE.iter().find(|(p, _)| p == ns).and_then(|(_, f)| *f);
        let got = pick(
            &facts,
            ns,
            format,
            (&keys, &ignore, &volatile),
            &mut left_out,
            &mut volatile_count,
        );
        match got {
            Ok(p) if p.is_empty() => empty.push((
                ns.clone(),
                if opts.keys.is_empty() && opts.ignore.is_empty() {
                    "no value set here".into()
                } else {
                    "no value left after --keys and --ignore".into()
                },
            )),
            Ok(p) => pins.push((ns.clone(), p)),
            Err(why) => empty.push((ns.clone(), why)),
        }
    }
    let closed = wanted
        .iter()
        .filter(|ns| CLOSED_NAMESPACES.contains(&ns.as_str()) && !opts.open.contains(ns))
        .filter_map(|ns| {
            let p = pins.iter().find(|(n, _)| n == ns)?;
            Some((ns.clone(), open_globs(ns, &p.1, opts)))
        })
        .collect();
    let mut b = Baseline {
        host: name,
        captured,
        policy_id: policy,
        pins,
        empty,
        left_out,
        volatile: volatile_count,
        closed,
        yaml: String::new(),
    };
    b.yaml = render(&b);
    prove(&mut b, host)?;
    b.left_out.sort();
    b.yaml = render(&b);
    verify(&b)?;
    Ok(b)
}

/// A baseline of `pins` (per namespace) for a golden host named `host`,
/// without reading a host: the same filtering of keys and values a pin
/// cannot hold ([`unpinnable`], glob keys), the same writer, the same
/// closed world (default options) and the same read-back check as
/// [`generate`], but no audit of the golden host. For tests of the writer.
pub fn from_pins(
    host: &str,
    captured: &str,
    pins: Vec<(String, Vec<Pin>)>,
) -> Result<Baseline, BaselineError> {
    let mut left_out = Vec::new();
    let mut kept = Vec::new();
    for (ns, list) in pins {
        let mut out: Vec<Pin> = Vec::new();
        for p in list {
            let why = unpinnable(&p.key)
                .or_else(|| unpinnable(&p.value))
                .or_else(|| {
                    p.key
                        .contains(['*', '?', '['])
                        .then_some("a glob key: it names no one setting")
                })
                .or_else(|| {
                    out.iter()
                        .any(|o| o.key == p.key)
                        .then_some("a second value of one key")
                });
            match why {
                Some(reason) => left_out.push(LeftOut {
                    namespace: ns.clone(),
                    key: p.key,
                    reason: reason.into(),
                }),
                None => out.push(p),
            }
        }
        if !out.is_empty() {
            kept.push((ns, out));
        }
    }
    let opts = BaselineOptions::default();
    let closed = kept
        .iter()
        .filter(|(ns, _)| CLOSED_NAMESPACES.contains(&ns.as_str()))
        .map(|(ns, p)| (ns.clone(), open_globs(ns, p, &opts)))
        .collect();
    left_out.sort();
    let mut b = Baseline {
        host: host.to_string(),
        captured: captured.to_string(),
        policy_id: policy_id(host),
        pins: kept,
        empty: Vec::new(),
        left_out,
        volatile: 0,
        closed,
        yaml: String::new(),
    };
    b.yaml = render(&b);
    verify(&b)?;
    Ok(b)
}

type Filters<'a> = (
    &'a [glob::Pattern],
    &'a [glob::Pattern],
    &'a [glob::Pattern],
);

fn pick(
    facts: &Facts,
    ns: &str,
    format: Option<Format>,
    (keys, ignore, volatile): Filters,
    left_out: &mut Vec<LeftOut>,
    volatile_count: &mut usize,
) -> Result<Vec<Pin>, String> {
    let Some(space) = facts.namespaces.get(ns) else {
        return Err("not gathered on this host".into());
    };
    if let Some(reason) = &space.unavailable {
        return Err(reason.clone());
    }
    let record = format.is_none();
    let mut out = Vec::new();
    let mut leave = |key: &str, reason: &str| {
        left_out.push(LeftOut {
            namespace: ns.to_string(),
            key: key.to_string(),
            reason: reason.to_string(),
        })
    };
    for (key, entry) in &space.entries {
        if !keys.is_empty() && !matches(keys, ns, key) {
            continue;
        }
        if matches(ignore, ns, key) {
            continue;
        }
        if matches(volatile, ns, key) {
            *volatile_count += 1;
            continue;
        }
        if let Some(f) = format {
            if secret::is_secret(f, key) {
                leave(key, "secret: its value is never written");
                continue;
            }
        }
        if key.contains(['*', '?', '[']) {
            leave(key, "a glob key: it names no one setting");
            continue;
        }
        if record && !key.starts_with('/') {
            leave(key, "not a mount point (swap or a pseudo entry)");
            continue;
        }
        let setting = match entry {
            Entry::Set(s) => s,
            Entry::Unreadable { .. } => {
                leave(
                    key,
                    "unknown on the golden host (unreadable, or not in its snapshot)",
                );
                continue;
            }
        };
        let value = if record {
            let Value::Record(r) = &setting.value else {
                leave(key, "not a record");
                continue;
            };
            let Some(opts) = r.get("options") else {
                leave(key, "no options field");
                continue;
            };
            if options_secret(opts) {
                leave(key, "an option carries a secret: never written");
                continue;
            }
            match opts {
                Value::List(items) => Some(
                    items
                        .iter()
                        .map(Value::to_plain)
                        .collect::<Vec<_>>()
                        .join(","),
                ),
                other => pin_text(other),
            }
        } else {
            if setting.raw.contains(REDACTED) || setting.value.to_plain().contains(REDACTED) {
                leave(key, "secret: its value is never written");
                continue;
            }
            golden_spelling(&setting.value, &setting.raw).or_else(|| pin_text(&setting.value))
        };
        if let Some(why) = unpinnable(key).or_else(|| value.as_deref().and_then(unpinnable)) {
            leave(key, why);
            continue;
        }
        match value {
            Some(value) => out.push(Pin {
                key: key.clone(),
                value,
            }),
            None => leave(key, "a value a pin cannot hold"),
        }
    }
    Ok(out)
}

/// Why a key or value is not pinned though it could be written: `${`,
/// which a policy reads as a reference, and control characters (C0 but
/// TAB, DEL, C1), which no reviewer reads in a policy and no check output
/// shows as they are. `None`: it is pinned.
pub fn unpinnable(s: &str) -> Option<&'static str> {
    if s.contains("${") {
        return Some("holds `$` then `{`, which a policy reads as a reference: not pinned");
    }
    if s.chars().any(|c| c != '\t' && c.is_control()) {
        return Some("holds a control character (a newline, ESC, DEL, ...): not pinned");
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::yaml::q;
    use super::*;

    #[test]
    fn policy_ids_are_sanitised_host_names() {
        assert_eq!(policy_id("db1"), "baseline-db1");
        assert_eq!(policy_id("Mail.Example.COM"), "baseline-mail-example-com");
        assert_eq!(policy_id("--web_01--"), "baseline-web-01");
        assert_eq!(policy_id("ü"), "baseline-host");
        assert_eq!(
            rule_id("baseline-db1", "sysctl_boot"),
            "baseline-db1.sysctl-boot"
        );
    }

    #[test]
    fn pinned_text_reads_back_equal_under_the_engines_comparison() {
        let cases = [
            Value::Size(2147483648.0),
            Value::Number(0.123456789),
            Value::Number(10.0),
            Value::Bool(true),
            Value::Str("yes".into()),
            Value::Str("32768\t60999".into()),
            Value::List(vec![Value::Number(32768.0), Value::Number(60999.0)]),
        ];
        for v in cases {
            let t = pin_text(&v).unwrap();
            assert!(v.loosely_equals(&Value::Str(t.clone())), "{v:?} as {t:?}");
        }
        assert_eq!(
            pin_text(&Value::Number(0.123456789)).unwrap(),
            "0.123456789"
        );
    }

    #[test]
    fn a_key_name_with_a_newline_adds_no_yaml_and_every_character_reads_back() {
        let hostile = "x\noverrides:\n  - {rule: \"*\", severity: info}";
        let odd = "a\u{7f}b\u{85}c\u{2028}d\u{feff}e\u{ffff}f\u{1b}[31m\r\\\"";
        let b = Baseline {
            host: "h\nrules: []".into(),
            captured: "now".into(),
            policy_id: "baseline-h".into(),
            pins: vec![(
                "localconfig".into(),
                vec![Pin {
                    key: odd.into(),
                    value: odd.into(),
                }],
            )],
            empty: vec![],
            left_out: vec![LeftOut {
                namespace: "localconfig".into(),
                key: hostile.into(),
                reason: "r".into(),
            }],
            volatile: 0,
            closed: BTreeMap::new(),
            yaml: String::new(),
        };
        let y = render(&b);
        let v: serde_json::Value =
            serde_saphyr::from_str(&y).unwrap_or_else(|e| panic!("{e}\n{y}"));
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert!(v.get("overrides").is_none(), "{keys:?}\n{y}");
        let pin = &v["params"]["localconfig"][0];
        assert_eq!(pin["key"], odd, "{y}");
        assert_eq!(pin["value"], odd, "{y}");
    }

    #[test]
    fn quoting_keeps_yaml_specials_strings() {
        for s in [
            "yes", "0x10", "1e3", ": x", "# c", "a\tb", "\"q\"", "null", "~",
        ] {
            let yaml = format!("v: {}\n", q(s));
            let back: BTreeMap<String, String> = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(back["v"], s, "{yaml}");
        }
    }
}
