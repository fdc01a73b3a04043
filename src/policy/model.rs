//! The compiled policy model: rules, checks, conditions, templates and the
//! policy's parameters, as the engine evaluates them. Plain data; must not
//! parse YAML or read files.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::overridden::{Overridden, OverrideSource};
use super::params::ParamType;
use super::release::Target;
pub use super::remedy::{Bound, Remedy, Requires};
use crate::expr::{self, BinOp, Expr};
use crate::value::Value;

/// Rule severity, ordered from `info` to `critical`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Informational.
    Info,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical.
    Critical,
}

impl Severity {
    /// All severities, lowest first.
    pub const ALL: [Severity; 5] = [
        Severity::Info,
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Parse a severity name.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL
            .into_iter()
            .find(|x| x.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A compiled breakdown.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Breakdown {
    /// Name of the whole.
    pub label: String,
    /// The whole.
    pub total: Expr,
    /// Labelled parts.
    pub parts: Vec<(String, Expr)>,
    /// Name of what is left.
    pub rest: String,
}

// ----------------------------------------------------------- compiled model

/// Where a rule lives in its policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSource {
    /// Policy file path as given (`policies/linux-network.yaml` for built-ins).
    pub path: String,
    /// 1-based line of the rule's `id`.
    pub line: usize,
}

/// A compiled template: literal text and expressions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    /// Parts in order.
    pub parts: Vec<TemplatePart>,
    /// The text as written.
    pub source: String,
}

/// Part of a [`Template`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TemplatePart {
    /// Literal text.
    Text(String),
    /// `{expr}`.
    Expr(Expr),
}

/// One `expect:` entry, lowered at load to a comparison of the expression
/// language, which the engine applies with `crate::expr::ops::binary` as
/// `SETTING OP VALUE`: `equals` is `==`, `not` `!=`, `min` `>=`, `max`
/// `<=`, `gt` `>`, `lt` `<`; `one_of` is `==` against any of its values.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    /// The comparison (`==`, `!=`, `<`, `<=`, `>` or `>=`).
    pub op: BinOp,
    /// `one_of`: holds when the comparison holds for any value.
    pub one_of: bool,
    /// The values compared with (one, except for `one_of`).
    pub values: Vec<Expr>,
}

impl Expectation {
    /// The comparison as the expected text writes it (`=`, `one of`, `>=`).
    pub fn words(&self) -> &'static str {
        match self.op {
            _ if self.one_of => "one of",
            BinOp::Eq => "=",
            BinOp::Ne => "not",
            other => other.symbol(),
        }
    }

    /// The entry's name before it was lowered (`Min`, `OneOf`).
    fn former_name(&self) -> &'static str {
        match self.op {
            _ if self.one_of => "OneOf",
            BinOp::Eq => "Equals",
            BinOp::Ne => "Not",
            BinOp::Ge => "Min",
            BinOp::Le => "Max",
            BinOp::Gt => "Gt",
            BinOp::Lt => "Lt",
            other => other.symbol(),
        }
    }

    /// Whether it compares numbers (`>=`, `<=`, `>`, `<`: a value that is
    /// no number cannot be compared).
    pub fn orders(&self) -> bool {
        matches!(self.op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
}

/// The Debug text is the former `(ExpectOp, values)` pair
/// (`(Min, [Lit(Number(1.0))])`): the policy digest of a fleet report
/// (`report::merge::policy_digest`) hashes the compiled rules' Debug text,
/// and lowering changed no policy.
impl fmt::Debug for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Name(&'static str);
        impl fmt::Debug for Name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.0)
            }
        }
        f.debug_tuple("")
            .field(&Name(self.former_name()))
            .field(&self.values)
            .finish()
    }
}

/// What a rule checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Check {
    /// One setting against expectations.
    Setting {
        /// Namespace.
        ns: String,
        /// Canonical key as written (namespace canonicalises at lookup).
        key: String,
        /// Value expectations (each expression is evaluated).
        expect: Vec<Expectation>,
        /// `Some(true)`: must be present; `Some(false)`: must be absent.
        presence: Option<bool>,
    },
    /// A boolean expression.
    Assert(Expr),
    /// Namespace-vs-namespace drift.
    Drift(DriftCheck),
    /// What the host's persisted configuration does on target releases,
    /// against the shipped upgrade data (`policies/upgrade/*.yaml`): the
    /// upgrade readiness rules (`upgrade.*`), one per product and kind of
    /// change, which `--target` adds to the set. Never frozen: the
    /// built-ins hold none (`--target` adds them at run time).
    #[serde(skip)]
    Upgrade(UpgradeCheck),
}

/// A compiled upgrade check: the target releases of the rule's product, in
/// the order given. The rule's id names the kind of change it reports
/// (`upgrade.mariadb.removed-option`); the engine judges each target and
/// keeps the findings of that kind. With no targets (`explain`, the
/// completions) the rule is listed and explained, and judges nothing.
#[derive(Debug, Clone, Default)]
pub struct UpgradeCheck {
    /// The releases judged, each as `--target` named it.
    pub targets: Vec<Target>,
}

/// A compiled `drift:` check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DriftCheck {
    /// Configured namespace.
    pub configured: String,
    /// Running namespace.
    pub running: String,
    /// Only these keys.
    #[serde(with = "globs")]
    pub keys: Vec<glob::Pattern>,
    /// Never these keys.
    #[serde(with = "globs")]
    pub ignore: Vec<glob::Pattern>,
    /// Record field compared on the configured side.
    pub field: Option<String>,
    /// Record field compared on the running side.
    pub running_field: Option<String>,
    /// Comparison.
    #[serde(with = "subset")]
    pub compare: CompareMode,
}

/// What a rule's `for_each:` iterates over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ForEachSource {
    /// The items of a list parameter of the rule's policy.
    Param(String),
    /// The keys of a flat namespace matching a glob whose only wildcard is `*`.
    Keys {
        /// Namespace (`sysctl`).
        ns: String,
        /// The key glob as written after the namespace (`net.ipv4.conf.*.rp_filter`).
        pattern: String,
        /// `where:`: only the keys it holds for.
        filter: Option<Filter>,
    },
    /// The records of a record namespace, optionally filtered.
    Records {
        /// Namespace (`mount`).
        ns: String,
        /// `where:`: only the records it holds for.
        filter: Option<Filter>,
    },
}

/// One list item, compiled: its `${...}` fields (`when` aside), in the
/// item's field order, and its `when`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompiledItem {
    /// Each field whose text holds `${`, by name.
    pub fields: Vec<(String, super::items::ItemText)>,
    /// The item's `when` as written, and the condition it is (or the
    /// parser's message).
    pub when: Option<(String, Result<Applies, String>)>,
}

impl PartialEq for CompiledItem {
    /// The same fields, and a `when` of the same text (its condition is
    /// that text parsed).
    fn eq(&self, other: &CompiledItem) -> bool {
        let when = |c: &CompiledItem| c.when.as_ref().map(|(w, _)| w.clone());
        self.fields == other.fields && when(self) == when(other)
    }
}

/// A `where:` filter of a `for_each`, compiled in the rule's scope.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Filter {
    /// What is evaluated: a record's field written bare (the spelling
    /// before the one scope) is `BIND.FIELD` here.
    pub expr: Expr,
    /// The text as written (a `skip` for no item quotes it).
    pub text: String,
    /// The tree as written, where it differs from `expr`.
    pub written: Option<Expr>,
}

impl std::fmt::Debug for Filter {
    /// `(TREE AS WRITTEN, TEXT)`, as the filter printed before it was
    /// compiled in the rule's scope: the policy digest of reports keys on it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("")
            .field(self.written.as_ref().unwrap_or(&self.expr))
            .field(&self.text)
            .finish()
    }
}

/// A compiled `for_each:`: the set, the bound name, and the templates
/// evaluated per item.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct ForEach {
    /// The set iterated over.
    pub source: ForEachSource,
    /// The name the item is bound to (`as:`, default `item`).
    pub bind: String,
    /// The finding's subject per item (`subject:`); `None`: the default.
    pub subject: Option<Template>,
    /// A `setting:` key built from the item (`sysctl_boot.${pin.key}`):
    /// the key's template, rendered per item.
    pub setting_key: Option<Template>,
    /// Each item's second id (`alias:`), over the item's fields as written.
    pub alias: Option<Template>,
    /// Parameters the list's items name in their `${...}` fields
    /// (`${params.zimbra_db_dir}`): the rule reads them, so an overlay's
    /// rule-level `params:` and `--set` reach it.
    pub item_params: Vec<String>,
    /// Items left out (`except:`), by their default subject, each with the
    /// reason every report shows for its `skip`.
    pub except: Vec<(String, String)>,
    /// A list parameter's items compiled (their `${...}` fields and
    /// `when`), by their place in the list; made when the set is loaded,
    /// after overlays set the list.
    pub items: Vec<CompiledItem>,
}

/// What [`ForEach`]'s debug text shows for `--only`/`--skip`: nothing.
const NO_PATTERNS: [String; 0] = [];

impl std::fmt::Debug for ForEach {
    /// The fields as written, not the items compiled from the parameter:
    /// the policy digest of reports keys on this text.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForEach")
            .field("source", &self.source)
            .field("bind", &self.bind)
            .field("subject", &self.subject)
            .field("setting_key", &self.setting_key)
            .field("alias", &self.alias)
            // the run's `--only`/`--skip` items are not the rule's
            // ([`crate::policy::PolicySet::item_selection`]); the digest
            // writes them in here, where they were
            .field("only", &NO_PATTERNS)
            .field("skip", &NO_PATTERNS)
            .field("item_params", &self.item_params)
            .field("except", &self.except)
            .finish()
    }
}

impl ForEach {
    /// Each list item's alias, rendered from its fields as written (a
    /// placeholder must be `NAME.FIELD` of a field without `${...}`);
    /// `None` for an item whose alias cannot be told before a host is read.
    pub fn static_aliases(&self, policy: Option<&Policy>) -> Vec<Option<String>> {
        let (Some(t), ForEachSource::Param(p)) = (&self.alias, &self.source) else {
            return Vec::new();
        };
        let Some(Value::List(items)) = policy.and_then(|pol| pol.params.get(p)) else {
            return Vec::new();
        };
        items
            .iter()
            .map(|item| {
                let mut out = String::new();
                for part in &t.parts {
                    match part {
                        TemplatePart::Text(s) => out.push_str(s),
                        TemplatePart::Expr(Expr::Field(base, f))
                            if matches!(base.as_ref(), Expr::Name(n) if *n == self.bind) =>
                        {
                            let Value::Record(m) = item else { return None };
                            let v = m.get(f)?.to_plain();
                            if v.contains("${") {
                                return None;
                            }
                            out.push_str(&v);
                        }
                        _ => return None,
                    }
                }
                Some(out)
            })
            .collect()
    }
}

/// Most items one `for_each:` rule expands to on one host; beyond it the
/// rule is one `error` finding (a hostile snapshot or list cannot make a
/// report of millions of findings).
pub const MAX_FOR_EACH_ITEMS: usize = 10_000;

/// A compiled `applies` condition.
#[derive(Clone, Serialize, Deserialize)]
pub enum Applies {
    /// Kernel comparisons (all must hold), lowered at load: the running
    /// kernel's release `OP` the version, and the condition as written.
    Kernel(Vec<(BinOp, Vec<u64>)>, String),
    /// Path exists.
    Exists(super::items::PathText),
    /// Path missing.
    Missing(super::items::PathText),
    /// Expression.
    When(Expr, String),
}

/// The Debug text of a kernel condition names each operator as written
/// (`Kernel([("<", [4, 12])], "< 4.12")`), as before it was lowered: the
/// policy digest of a fleet report (`report::merge::policy_digest`) hashes
/// the compiled rules' Debug text, and lowering changed no policy.
impl fmt::Debug for Applies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Applies::Kernel(conds, text) => {
                let conds: Vec<(&str, &Vec<u64>)> =
                    conds.iter().map(|(op, v)| (op.symbol(), v)).collect();
                f.debug_tuple("Kernel").field(&conds).field(text).finish()
            }
            Applies::Exists(p) => f.debug_tuple("Exists").field(p).finish(),
            Applies::Missing(p) => f.debug_tuple("Missing").field(p).finish(),
            Applies::When(e, text) => f.debug_tuple("When").field(e).field(text).finish(),
        }
    }
}

/// A compiled rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rule {
    /// Stable id.
    pub id: String,
    /// Policy id.
    pub policy: String,
    /// Title.
    pub title: String,
    /// Severity.
    pub severity: Severity,
    /// Conditions.
    pub applies: Vec<Applies>,
    /// `let` bindings.
    pub lets: BTreeMap<String, Expr>,
    /// The check.
    pub check: Check,
    /// Rationale template.
    pub why: Template,
    /// Fix template.
    pub fix: Template,
    /// References.
    pub references: Vec<String>,
    /// Profiles the rule belongs to (`cis-l1-server`), in the order written.
    pub tags: Vec<String>,
    /// Benchmark items the rule answers (`cis-debian12:3.3.9`), as written.
    pub controls: Vec<String>,
    /// Where the rule is defined.
    pub source: RuleSource,
    /// Optional picture of how a whole divides (text report bar).
    pub breakdown: Option<Breakdown>,
    /// What `driftaudit fix` changes when the rule fails: declared with
    /// `remedy:` or derived from the check; `None` when neither.
    pub remedy: Option<Remedy>,
    /// Values site overlays (`overrides:`) or `--set` changed, each with the
    /// file, line and column that set it; empty for a rule as written.
    pub overridden: Vec<Overridden>,
    /// `for_each:`: the rule is judged once per item (boxed: most rules have none).
    pub for_each: Option<Box<ForEach>>,
    /// `remedy: { requires: ... }`: where the remedy is safe to apply.
    pub requires: Option<Requires>,
}

impl Rule {
    /// A rule that checks `check` and says nothing more: no conditions,
    /// `let`s, tags, remedy or items (the upgrade checks are made so; a
    /// new field of [`Rule`] gets its empty value here, not at each maker).
    pub fn bare(
        id: String,
        policy: String,
        title: String,
        severity: Severity,
        check: Check,
        source: RuleSource,
    ) -> Rule {
        let empty = Template {
            parts: Vec::new(),
            source: String::new(),
        };
        Rule {
            id,
            policy,
            title,
            severity,
            applies: Vec::new(),
            lets: BTreeMap::new(),
            check,
            why: empty.clone(),
            fix: empty,
            references: Vec::new(),
            tags: Vec::new(),
            controls: Vec::new(),
            source,
            breakdown: None,
            remedy: None,
            overridden: Vec::new(),
            for_each: None,
            requires: None,
        }
    }

    /// This rule with other `applies` and without its `for_each` (which is
    /// not cloned only to be dropped): what one `for_each` item judges.
    pub fn copy_with(&self, applies: Vec<Applies>) -> Rule {
        Rule {
            id: self.id.clone(),
            policy: self.policy.clone(),
            title: self.title.clone(),
            severity: self.severity,
            applies,
            lets: self.lets.clone(),
            check: self.check.clone(),
            why: self.why.clone(),
            fix: self.fix.clone(),
            references: self.references.clone(),
            tags: self.tags.clone(),
            controls: self.controls.clone(),
            source: self.source.clone(),
            breakdown: self.breakdown.clone(),
            remedy: self.remedy.clone(),
            overridden: self.overridden.clone(),
            for_each: None,
            requires: self.requires.clone(),
        }
    }

    /// What `driftaudit fix` does when the rule fails, in words (`explain`).
    pub fn describe_remedy(&self) -> String {
        let what = match &self.remedy {
            Some(r) => r.describe(),
            None => {
                "not declared: `driftaudit fix` reports a failure of this rule as unfixable".into()
            }
        };
        match &self.requires {
            Some(q) => format!("{what}; only where `{}`: {}", q.text, q.why),
            None => what,
        }
    }

    /// Every expression of the rule (for static analysis).
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.lets.values().collect();
        for a in &self.applies {
            if let Applies::When(e, _) = a {
                out.push(e);
            }
        }
        match &self.check {
            Check::Assert(e) => out.push(e),
            Check::Setting { expect, .. } => {
                out.extend(expect.iter().flat_map(|x| x.values.iter()))
            }
            Check::Drift(_) | Check::Upgrade(_) => {}
        }
        if let Some(Remedy::Set { to, .. }) = &self.remedy {
            out.push(to);
        }
        if let Some(q) = &self.requires {
            out.push(&q.when);
        }
        if let Some(b) = &self.breakdown {
            out.push(&b.total);
            out.extend(b.parts.iter().map(|(_, e)| e));
        }
        let mut templates = vec![&self.why, &self.fix];
        if let Some(fe) = &self.for_each {
            if let ForEachSource::Records {
                filter: Some(w), ..
            }
            | ForEachSource::Keys {
                filter: Some(w), ..
            } = &fe.source
            {
                out.push(&w.expr);
            }
            templates.extend(fe.subject.iter());
            templates.extend(fe.setting_key.iter());
            templates.extend(fe.alias.iter());
        }
        for t in templates {
            for p in &t.parts {
                if let TemplatePart::Expr(e) = p {
                    out.push(e);
                }
            }
        }
        out
    }

    /// Settings (`namespace`, key) the rule reads statically.
    pub fn settings_read(&self) -> BTreeSet<(String, String)> {
        let mut out = BTreeSet::new();
        self.each_setting_read(&mut |ns, key| {
            out.insert((ns.to_string(), key.to_string()));
        });
        out
    }

    /// [`Rule::settings_read`] one `(namespace, key)` at a time, without
    /// collecting or copying them (a pair may come more than once).
    pub fn each_setting_read(&self, f: &mut dyn FnMut(&str, &str)) {
        self.each_read(f, &mut |_| {});
    }

    /// [`Rule::each_setting_read`], with `node` given every node of the
    /// rule's expressions ([`Rule::expressions`]) in the same one walk.
    pub fn each_read(&self, f: &mut dyn FnMut(&str, &str), node: &mut dyn FnMut(&Expr)) {
        if let Check::Setting { ns, key, .. } = &self.check {
            // a key built per item is not known here: the whole namespace
            let templated = self
                .for_each
                .as_ref()
                .is_some_and(|f| f.setting_key.is_some());
            f(ns, if templated { "*" } else { key });
        }
        if let Check::Drift(d) = &self.check {
            f(&d.configured, "*");
            f(&d.running, "*");
        }
        if let Some(fe) = &self.for_each {
            match &fe.source {
                ForEachSource::Keys { ns, .. } | ForEachSource::Records { ns, .. } => f(ns, "*"),
                ForEachSource::Param(_) => {}
            }
        }
        for e in self.expressions() {
            expr::walk(e, &mut |x| {
                node(x);
                if let Expr::Setting(ns, k) = x {
                    match k.as_ref() {
                        Expr::Lit(v) => f(ns, &v.to_plain()),
                        _ => f(ns, "*"),
                    }
                }
            });
        }
    }

    /// Facts (`mem_total`, ...) the rule reads.
    pub fn facts_read(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for e in self.expressions() {
            expr::walk(e, &mut |x| {
                if let Expr::Name(n) = x {
                    if crate::catalogue::fact(n).is_some() {
                        out.insert(n.clone());
                    }
                }
            });
        }
        out
    }
}

/// A loaded policy (metadata and parameters).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Policy {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// Parameters with their current values (defaults, then `--set` overrides).
    #[serde(with = "crate::value::tagged::map")]
    pub params: BTreeMap<String, Value>,
    /// Parameter defaults as written.
    pub param_defaults: BTreeMap<String, String>,
    /// A benchmark policy (`benchmark: true`): its rules run only with a
    /// profile they are tagged for, or `--profile all`.
    #[serde(default)]
    pub benchmark: bool,
    /// The type each parameter declares (`{type: ratio, default: 0.7}`);
    /// one declared without a type has none here and takes any constant.
    #[serde(default)]
    pub param_types: BTreeMap<String, ParamType>,
    /// File it came from.
    pub path: String,
}

impl Rule {
    /// The `disabled` override that turned the rule off, if any.
    pub fn disabled(&self) -> Option<&Overridden> {
        self.overridden.iter().find(|o| o.field == "disabled")
    }
}

/// How drift compares two values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompareMode {
    /// Equal after normalisation (units, booleans, whitespace).
    #[default]
    Equal,
    /// Every item of the configured list is in the running list (the running
    /// side may show more, such as filesystem defaults the kernel adds).
    Subset,
}

/// `Vec<glob::Pattern>` as the patterns' text (`#[serde(with = ...)]` of
/// the drift checks, for the frozen built-ins).
mod globs {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        list: &[glob::Pattern],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(glob::Pattern::as_str))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<glob::Pattern>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|g| glob::Pattern::new(g).map_err(D::Error::custom))
            .collect()
    }
}

/// [`CompareMode`] as whether it is `subset` (for the frozen built-ins; a
/// `Serialize` derive on it would change the policy schema's defaults).
mod subset {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::CompareMode;

    pub(crate) fn serialize<S: Serializer>(m: &CompareMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*m == CompareMode::Subset)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CompareMode, D::Error> {
        Ok(if bool::deserialize(d)? {
            CompareMode::Subset
        } else {
            CompareMode::Equal
        })
    }
}
