//! The upgrade knowledge as data: `policies/upgrade/{mariadb,mysql,kernel}.yaml`,
//! compiled into the binary, parsed with spans and validated in one pass
//! (every problem with its file, line and column). Owns the model of what a
//! release did to an option or key (deprecated, removed and how, default
//! changed, values refused, meaning changed); no host reading, no findings.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::policy::Severity;

pub use crate::policy::{Product, Version};

/// The shipped files: (path as cited in findings, text).
pub const BUILTIN: [(&str, &str); 3] = [
    (
        "policies/upgrade/mariadb.yaml",
        include_str!("../../policies/upgrade/mariadb.yaml"),
    ),
    (
        "policies/upgrade/mysql.yaml",
        include_str!("../../policies/upgrade/mysql.yaml"),
    ),
    (
        "policies/upgrade/kernel.yaml",
        include_str!("../../policies/upgrade/kernel.yaml"),
    ),
];

/// What a release from the removal on does with a line that sets the option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// `unknown variable`: the server does not start.
    Refused,
    /// Accepted with a warning and does nothing.
    Ignored,
    /// (kernel) the key's file is gone; the line is reported and skipped.
    Absent,
}

impl Effect {
    fn parse(s: &str) -> Option<Effect> {
        match s {
            "refused" => Some(Effect::Refused),
            "ignored" => Some(Effect::Ignored),
            "absent" => Some(Effect::Absent),
            _ => None,
        }
    }
}

/// When and how an option went away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The version (or, with `at_latest`, the version by which it is gone).
    pub version: Version,
    /// Only "gone by `version`" is documented, not the first release without it.
    pub at_latest: bool,
    /// What the server does with a line that sets it.
    pub effect: Effect,
}

/// A compiled-in default that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultChange {
    /// First version with the new default.
    pub version: Version,
    /// Default before.
    pub old: String,
    /// Default from `version` on.
    pub new: String,
    /// The same change made in later release lines, each by its first
    /// release there (MDEV-32050: 10.6.16 and 10.11.6): a release of a
    /// listed line has it from that release on, a release of a line
    /// between `version` and the first listed one (or after the last) from
    /// `version` on.
    pub lines: Vec<Version>,
}

impl DefaultChange {
    /// Whether a server of `v` runs with this change.
    pub fn in_effect(&self, v: &[u64]) -> bool {
        let line = |x: &[u64]| (x.first().copied(), x.get(1).copied());
        match self.lines.iter().find(|l| line(&l.0) == line(v)) {
            Some(l) => l.cmp_to(v) != std::cmp::Ordering::Greater,
            None => self.version.cmp_to(v) != std::cmp::Ordering::Greater,
        }
    }
}

/// The compiled-in default a server of `v` runs with, from an entry's
/// changes (oldest first): the `new` of the last change in effect, else the
/// `old` of the first; `None` without changes.
pub fn default_at<'a>(changes: &'a [DefaultChange], v: &[u64]) -> Option<&'a str> {
    let first = changes.first()?;
    Some(
        changes
            .iter()
            .rev()
            .find(|d| d.in_effect(v))
            .map_or(first.old.as_str(), |d| d.new.as_str()),
    )
}

/// A value of a list option (`sql_mode`) the server stopped accepting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueRemoval {
    /// The value, as the server spells it.
    pub value: String,
    /// First version that refuses it.
    pub version: Version,
}

/// A change in what the same setting does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeaningChange {
    /// First version with the new meaning.
    pub version: Version,
    /// What changed, in words.
    pub text: String,
}

/// What the releases did to one option or key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Canonical name (`innodb_file_format`, `net.ipv4.tcp_tw_recycle`).
    pub name: String,
    /// Line of the entry in its data file.
    pub line: usize,
    /// First version that deprecated it.
    pub deprecated: Option<Version>,
    /// When it went away, and how.
    pub removed: Option<Removal>,
    /// The option or key to use instead.
    pub replacement: Option<String>,
    /// What to do, in words.
    pub action: String,
    /// The vendor page or commit this entry comes from.
    pub reference: String,
    /// Compiled-in default changes, oldest first.
    pub defaults: Vec<DefaultChange>,
    /// Values refused from a version on.
    pub removed_values: Vec<ValueRemoval>,
    /// Changes of meaning, oldest first.
    pub meaning: Vec<MeaningChange>,
    /// Severity override for this entry's findings.
    pub severity: Option<Severity>,
    /// A default change reaches only a data directory created by the new
    /// release (`scope: new-datadir`): an upgraded host keeps its own.
    pub new_datadir_only: bool,
}

/// One product's knowledge.
#[derive(Debug, Clone)]
pub struct Knowledge {
    /// The product.
    pub product: Product,
    /// Title of the data file.
    pub title: String,
    /// Release series accepted as `--target` (empty: any `X.Y`).
    pub targets: Vec<Version>,
    /// Entries in file order.
    pub entries: Vec<Entry>,
    /// Path of the data file (`policies/upgrade/mariadb.yaml`).
    pub path: String,
}

impl Knowledge {
    /// The entry for a canonical name.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// One problem in a data file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}:{column}: {message}")]
pub struct DataProblem {
    /// File path as given.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Why upgrade data could not be loaded: every problem found, in file order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
pub struct DataError(pub Vec<DataProblem>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    product: Spanned<String>,
    title: String,
    #[serde(default)]
    targets: Vec<Spanned<String>>,
    options: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    name: Spanned<String>,
    #[serde(default)]
    deprecated: Option<Spanned<String>>,
    #[serde(default)]
    removed: Option<Spanned<String>>,
    #[serde(default)]
    effect: Option<Spanned<String>>,
    #[serde(default)]
    replacement: Option<String>,
    #[serde(default)]
    action: Option<Spanned<String>>,
    #[serde(default)]
    reference: Option<Spanned<String>>,
    #[serde(default)]
    defaults: Vec<RawDefault>,
    #[serde(default)]
    removed_values: Vec<RawValue>,
    #[serde(default)]
    meaning: Vec<RawMeaning>,
    #[serde(default)]
    severity: Option<Spanned<String>>,
    #[serde(default)]
    scope: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefault {
    version: Spanned<String>,
    old: String,
    new: String,
    #[serde(default)]
    lines: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValue {
    value: String,
    version: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeaning {
    version: Spanned<String>,
    text: String,
}

struct Checker<'a> {
    path: &'a str,
    problems: Vec<DataProblem>,
}

impl Checker<'_> {
    fn at<T>(&mut self, s: &Spanned<T>, message: String) {
        self.problems.push(DataProblem {
            path: self.path.to_string(),
            line: (s.referenced.line() as usize).max(1),
            column: (s.referenced.column() as usize).max(1),
            message,
        });
    }

    fn version(&mut self, s: &Spanned<String>, what: &str) -> Option<Version> {
        let v = Version::parse(&s.value);
        if v.is_none() {
            self.at(
                s,
                format!(
                    "{what} `{}` is not a version: expected numbers like `10.11.0` or `4.12`",
                    s.value
                ),
            );
        }
        v
    }
}

fn line_of<T>(s: &Spanned<T>) -> usize {
    (s.referenced.line() as usize).max(1)
}

/// Parse and validate one data file; `path` names it in problems.
pub fn load(path: &str, text: &str) -> Result<Knowledge, DataError> {
    let raw: RawFile = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize))
            .unwrap_or((1, 1));
        let msg = e.without_snippet().to_string();
        let msg = msg.lines().next().unwrap_or("invalid YAML").to_string();
        DataError(vec![DataProblem {
            path: path.to_string(),
            line: line.max(1),
            column: column.max(1),
            message: msg,
        }])
    })?;
    let mut c = Checker {
        path,
        problems: Vec::new(),
    };
    let product = Product::parse(&raw.product.value);
    if product.is_none() {
        c.at(
            &raw.product,
            format!(
                "unknown product `{}`: expected `mariadb`, `mysql` or `kernel`",
                raw.product.value
            ),
        );
    }
    let targets: Vec<Version> = raw
        .targets
        .iter()
        .filter_map(|t| c.version(t, "target"))
        .collect();
    let mut seen = BTreeSet::new();
    let mut entries = Vec::new();
    for e in &raw.options {
        let name = e.name.value.trim().to_string();
        if name.is_empty() {
            c.at(&e.name, "empty option name".into());
        }
        if !seen.insert(name.clone()) {
            c.at(
                &e.name,
                format!("`{name}` is listed twice: merge the entries"),
            );
        }
        let deprecated = e
            .deprecated
            .as_ref()
            .and_then(|d| c.version(d, "deprecated"));
        let effect = match &e.effect {
            Some(s) => match Effect::parse(&s.value) {
                Some(Effect::Absent) if product != Some(Product::Kernel) => {
                    c.at(s, format!("effect `absent` is for kernel keys; `{name}` is a server option: use `refused` or `ignored`"));
                    None
                }
                Some(Effect::Refused) if product == Some(Product::Kernel) => {
                    c.at(s, "effect `refused` is for server options; a kernel key is `absent` or `ignored`".into());
                    None
                }
                Some(x) => Some(x),
                None => {
                    c.at(
                        s,
                        format!(
                            "unknown effect `{}`: expected `refused`, `ignored` or `absent`",
                            s.value
                        ),
                    );
                    None
                }
            },
            None => None,
        };
        let removed = match &e.removed {
            Some(r) => {
                let (text, at_latest) = match r.value.strip_prefix("<=") {
                    Some(rest) => (rest.to_string(), true),
                    None => (r.value.clone(), false),
                };
                let v = Version::parse(&text);
                if v.is_none() {
                    c.at(r, format!("removed `{}` is not a version: expected `10.3.0`, or `<=10.11.0` when only the release by which it is gone is known", r.value));
                }
                if e.effect.is_none() {
                    c.at(r, format!("`{name}` has `removed` but no `effect`: say whether that release refuses the line (`refused`), accepts and ignores it (`ignored`) or, for a kernel key, lacks it (`absent`)"));
                }
                match (v, effect) {
                    (Some(version), Some(effect)) => Some(Removal {
                        version,
                        at_latest,
                        effect,
                    }),
                    _ => None,
                }
            }
            None => {
                if let Some(s) = &e.effect {
                    c.at(
                        s,
                        format!("`{name}` has an `effect` but no `removed` version"),
                    );
                }
                None
            }
        };
        let action = match &e.action {
            Some(a) if !a.value.trim().is_empty() => a.value.trim().to_string(),
            Some(a) => {
                c.at(a, format!("`{name}` has an empty `action`"));
                String::new()
            }
            None => {
                c.at(&e.name, format!("`{name}` has no `action`: say what to do"));
                String::new()
            }
        };
        let reference = match &e.reference {
            Some(r) if r.value.starts_with("https://") => r.value.clone(),
            Some(r) => {
                c.at(r, format!("reference `{}` of `{name}` is not an https URL of the vendor's page or commit", r.value));
                String::new()
            }
            None => {
                c.at(&e.name, format!("`{name}` has no `reference`: cite the vendor documentation, release notes or commit"));
                String::new()
            }
        };
        let defaults: Vec<DefaultChange> = e
            .defaults
            .iter()
            .filter_map(|d| {
                Some(DefaultChange {
                    version: c.version(&d.version, "default change version")?,
                    old: d.old.clone(),
                    new: d.new.clone(),
                    lines: d
                        .lines
                        .iter()
                        .filter_map(|l| c.version(l, "default change line"))
                        .collect(),
                })
            })
            .collect();
        let removed_values: Vec<ValueRemoval> = e
            .removed_values
            .iter()
            .filter_map(|v| {
                Some(ValueRemoval {
                    value: v.value.clone(),
                    version: c.version(&v.version, "removed value version")?,
                })
            })
            .collect();
        let meaning: Vec<MeaningChange> = e
            .meaning
            .iter()
            .filter_map(|m| {
                Some(MeaningChange {
                    version: c.version(&m.version, "meaning change version")?,
                    text: m.text.clone(),
                })
            })
            .collect();
        let severity = match &e.severity {
            Some(s) => {
                let sev = Severity::ALL
                    .into_iter()
                    .find(|x| x.as_str() == s.value.as_str());
                if sev.is_none() {
                    c.at(
                        s,
                        format!(
                            "unknown severity `{}`: expected info, low, medium, high or critical",
                            s.value
                        ),
                    );
                }
                sev
            }
            None => None,
        };
        let new_datadir_only = match &e.scope {
            Some(sc) if sc.value == "new-datadir" => true,
            Some(sc) => {
                c.at(
                    sc,
                    format!("unknown scope `{}`: expected new-datadir", sc.value),
                );
                false
            }
            None => false,
        };
        if e.deprecated.is_none()
            && e.removed.is_none()
            && e.defaults.is_empty()
            && e.removed_values.is_empty()
            && e.meaning.is_empty()
        {
            c.at(&e.name, format!("`{name}` says nothing changed: give `deprecated`, `removed`, `defaults`, `removed_values` or `meaning`"));
        }
        entries.push(Entry {
            name,
            line: line_of(&e.name),
            deprecated,
            removed,
            replacement: e.replacement.clone().filter(|r| !r.trim().is_empty()),
            action,
            reference,
            defaults,
            removed_values,
            meaning,
            severity,
            new_datadir_only,
        });
    }
    if !c.problems.is_empty() {
        c.problems.sort_by_key(|p| (p.line, p.column));
        return Err(DataError(c.problems));
    }
    Ok(Knowledge {
        product: product.unwrap_or(Product::Kernel),
        title: raw.title,
        targets,
        entries,
        path: path.to_string(),
    })
}

/// The path of a product's shipped data file, as findings cite it (the
/// data is not parsed for it).
pub fn builtin_path(product: Product) -> &'static str {
    match product {
        Product::Mariadb => BUILTIN[0].0,
        Product::Mysql => BUILTIN[1].0,
        Product::Kernel => BUILTIN[2].0,
    }
}

/// The shipped knowledge, parsed once. The data files are validated by
/// tests (`builtin_upgrade_data_loads_and_every_entry_cites_a_reference`),
/// so a failure here is a build defect: it is reported, never a panic.
pub fn builtin() -> Result<&'static [Knowledge], &'static DataError> {
    static CELL: std::sync::OnceLock<Result<Vec<Knowledge>, DataError>> =
        std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut all = Vec::new();
        let mut problems = Vec::new();
        for (path, text) in BUILTIN {
            match load(path, text) {
                Ok(k) => all.push(k),
                Err(e) => problems.extend(e.0),
            }
        }
        if problems.is_empty() {
            Ok(all)
        } else {
            Err(DataError(problems))
        }
    })
    .as_ref()
    .map(Vec::as_slice)
}

/// The shipped knowledge of one product.
pub fn builtin_for(product: Product) -> Result<&'static Knowledge, &'static DataError> {
    let all = builtin()?;
    // every product has a shipped file (BUILTIN lists all three)
    Ok(all.iter().find(|k| k.product == product).unwrap_or(&all[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_upgrade_data_loads_and_every_entry_cites_a_reference() {
        let all = builtin().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(all.len(), 3);
        for k in all {
            assert!(!k.entries.is_empty(), "{}", k.path);
            for e in &k.entries {
                assert!(
                    e.reference.starts_with("https://") && e.reference.len() > 12,
                    "{}:{} `{}` has no reference",
                    k.path,
                    e.line,
                    e.name
                );
                assert!(!e.action.is_empty(), "{}:{} `{}`", k.path, e.line, e.name);
            }
        }
        for p in Product::ALL {
            assert_eq!(builtin_for(p).unwrap().product, p);
            assert_eq!(builtin_for(p).unwrap().path, builtin_path(p));
        }
    }

    #[test]
    fn a_broken_data_file_reports_every_problem_with_its_line_and_column() {
        let text = "product: mariadb\ntitle: t\noptions:\n  - name: a\n    removed: \"10.x\"\n    effect: refused\n    action: x\n    reference: https://example.org/a\n  - name: b\n    removed: \"10.6.0\"\n    action: x\n    reference: http://insecure\n  - name: b\n    deprecated: \"10.5\"\n    action: \"\"\n";
        let e = load("bad.yaml", text).unwrap_err();
        let lines: Vec<String> = e.0.iter().map(ToString::to_string).collect();
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn an_unknown_field_is_refused_at_its_line() {
        let text = "product: kernel\ntitle: t\noptions:\n  - name: a\n    removd: \"4.12\"\n";
        let e = load("bad.yaml", text).unwrap_err();
        assert_eq!(e.0.len(), 1);
        assert_eq!(e.0[0].line, 5, "{e}");
        assert!(e.0[0].message.contains("removd"), "{e}");
    }

    #[test]
    fn versions_compare_with_missing_parts_as_zero() {
        let v = Version::parse("10.11").unwrap();
        assert_eq!(v.cmp_to(&[10, 11, 0]), std::cmp::Ordering::Equal);
        assert_eq!(v.cmp_to(&[10, 6]), std::cmp::Ordering::Greater);
        assert!(Version::parse("10").is_none());
        assert!(Version::parse("10.x").is_none());
        assert_eq!(Version::parse("4.12").unwrap().to_string(), "4.12");
    }
}
