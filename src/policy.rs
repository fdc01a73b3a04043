//! Policy model and loader: YAML policy files (raw, spanned) are parsed with
//! serde-saphyr, then validated into compiled [`Rule`]s in one pass that
//! collects every problem with file, line and column. Owns the built-in
//! policies. Must not read host data or evaluate rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::expr::{self, Expr, FLAT_NAMESPACES, RECORD_NAMESPACES};
use crate::value::{parse_size, Value};

/// The built-in policies, compiled into the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "policies/linux-network.yaml",
        include_str!("../policies/linux-network.yaml"),
    ),
    (
        "policies/linux-sysctl.yaml",
        include_str!("../policies/linux-sysctl.yaml"),
    ),
    (
        "policies/zimbra-memory.yaml",
        include_str!("../policies/zimbra-memory.yaml"),
    ),
    (
        "policies/mysql-innodb.yaml",
        include_str!("../policies/mysql-innodb.yaml"),
    ),
    (
        "policies/storage.yaml",
        include_str!("../policies/storage.yaml"),
    ),
];

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

// ---------------------------------------------------------------- raw model

/// A policy file as written (the JSON Schema is generated from these types).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "driftaudit policy",
    description = "A driftaudit policy file (policy language v1)"
)]
pub struct PolicyFile {
    /// Policy id, e.g. `linux-network`.
    #[schemars(with = "String")]
    pub policy: Spanned<String>,
    /// One-line title.
    pub title: String,
    /// What the policy is about.
    #[serde(default)]
    pub description: String,
    /// Named defaults for thresholds, overridable with `--set NAME=VALUE`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ParamValue>")]
    pub params: BTreeMap<String, Spanned<ParamValue>>,
    /// The rules.
    pub rules: Vec<RuleSpec>,
}

/// A parameter value: a number, a boolean, or a string holding a size (`10G`),
/// a percentage (`15%`), a path or any expression of constants.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// Boolean.
    Bool(bool),
    /// Number.
    Number(f64),
    /// Text: a size, a percentage, a path...
    Text(String),
}

/// One rule as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Stable id, unique across all loaded policies (`linux.tcp-tw-recycle`).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// One-line title.
    pub title: String,
    /// Severity of a failure.
    pub severity: Severity,
    /// Conditions under which the rule applies; otherwise it is skipped with the reason.
    #[serde(default)]
    pub applies: Vec<Condition>,
    /// Named expressions usable in the check and the templates.
    #[serde(default, rename = "let")]
    #[schemars(with = "BTreeMap<String, String>")]
    pub lets: BTreeMap<String, Spanned<String>>,
    /// The setting checked by `expect` (`sysctl.net.ipv4.tcp_tw_recycle`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub setting: Option<Spanned<String>>,
    /// Expectations on `setting`.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// A boolean expression that must hold.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub assert: Option<Spanned<String>>,
    /// Compare every key of one namespace with another.
    #[serde(default)]
    pub drift: Option<DriftSpec>,
    /// Rationale; a template rendered into the finding's explanation.
    #[schemars(with = "String")]
    pub why: Spanned<String>,
    /// What to change; a template.
    #[schemars(with = "String")]
    pub fix: Spanned<String>,
    /// Reference URLs.
    #[serde(default)]
    pub references: Vec<String>,
    /// How a whole divides into parts (e.g. RAM into heap, pool and the rest),
    /// drawn as a one-line bar in the text report.
    #[serde(default)]
    pub breakdown: Option<BreakdownSpec>,
}

/// `breakdown:` — a total and the parts taken out of it, as expressions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakdownSpec {
    /// What the whole is called (`RAM`).
    pub label: String,
    /// The whole (`mem_total`).
    #[schemars(with = "String")]
    pub total: Spanned<String>,
    /// Parts, in order; what they leave is shown as `rest`.
    pub parts: Vec<BreakdownPartSpec>,
    /// Name of what is left (`page cache and other services`).
    #[serde(default = "default_rest")]
    pub rest: String,
}

fn default_rest() -> String {
    "rest".into()
}

/// One part of a breakdown.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BreakdownPartSpec {
    /// Label (`Java heap`).
    pub label: String,
    /// Size expression.
    #[schemars(with = "String")]
    pub value: Spanned<String>,
}

/// A compiled breakdown.
#[derive(Debug, Clone)]
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

/// A condition in `applies`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Condition {
    /// Kernel release comparison, e.g. `< 4.12` or `>= 4.10, < 4.12`.
    Kernel(String),
    /// A host path exists.
    Exists(String),
    /// A host path does not exist.
    Missing(String),
    /// An expression that must be true.
    When(#[schemars(with = "String")] Spanned<String>),
}

/// Expectations on one setting. Several may be given; all must hold.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Equal to.
    pub equals: Option<ParamValue>,
    /// Equal to one of.
    pub one_of: Option<Vec<ParamValue>>,
    /// Different from.
    pub not: Option<ParamValue>,
    /// At least.
    pub min: Option<ParamValue>,
    /// At most.
    pub max: Option<ParamValue>,
    /// Greater than.
    pub gt: Option<ParamValue>,
    /// Less than.
    pub lt: Option<ParamValue>,
    /// The setting must exist.
    pub present: Option<bool>,
    /// The setting must not exist.
    pub absent: Option<bool>,
}

/// `drift:` — compare each key of `configured` with `running`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriftSpec {
    /// Namespace holding configured values (`sysctl_boot`).
    pub configured: String,
    /// Namespace holding running values (`sysctl`).
    pub running: String,
    /// Only keys matching these globs.
    #[serde(default)]
    pub keys: Vec<String>,
    /// Keys never compared (volatile ones).
    #[serde(default)]
    pub ignore: Vec<String>,
    /// For record namespaces (`fstab`, `mount`): the field compared (`kernel_options`).
    #[serde(default)]
    pub field: Option<String>,
    /// Field on the running side when it has another name (`options`); defaults to `field`.
    #[serde(default)]
    pub running_field: Option<String>,
    /// `equal` (default) or `subset`: every configured item appears in the running list.
    #[serde(default)]
    pub compare: Option<CompareMode>,
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

// ----------------------------------------------------------- compiled model

/// Where a rule lives in its policy file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleSource {
    /// Policy file path as given (`policies/linux-network.yaml` for built-ins).
    pub path: String,
    /// 1-based line of the rule's `id`.
    pub line: usize,
}

/// A compiled template: literal text and expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    /// Parts in order.
    pub parts: Vec<TemplatePart>,
    /// The text as written.
    pub source: String,
}

/// Part of a [`Template`].
#[derive(Debug, Clone, PartialEq)]
pub enum TemplatePart {
    /// Literal text.
    Text(String),
    /// `{expr}`.
    Expr(Expr),
}

/// Comparison of an `expect` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum ExpectOp {
    Equals,
    OneOf,
    Not,
    Min,
    Max,
    Gt,
    Lt,
}

impl ExpectOp {
    /// Words for explanations.
    pub fn words(self) -> &'static str {
        match self {
            ExpectOp::Equals => "=",
            ExpectOp::OneOf => "one of",
            ExpectOp::Not => "not",
            ExpectOp::Min => ">=",
            ExpectOp::Max => "<=",
            ExpectOp::Gt => ">",
            ExpectOp::Lt => "<",
        }
    }
}

/// What a rule checks.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Check {
    /// One setting against expectations.
    Setting {
        /// Namespace.
        ns: String,
        /// Canonical key as written (namespace canonicalises at lookup).
        key: String,
        /// Value expectations (each expression is evaluated).
        expect: Vec<(ExpectOp, Vec<Expr>)>,
        /// `Some(true)`: must be present; `Some(false)`: must be absent.
        presence: Option<bool>,
    },
    /// A boolean expression.
    Assert(Expr),
    /// Namespace-vs-namespace drift.
    Drift(DriftCheck),
}

/// A compiled `drift:` check.
#[derive(Debug, Clone)]
pub struct DriftCheck {
    /// Configured namespace.
    pub configured: String,
    /// Running namespace.
    pub running: String,
    /// Only these keys.
    pub keys: Vec<glob::Pattern>,
    /// Never these keys.
    pub ignore: Vec<glob::Pattern>,
    /// Record field compared on the configured side.
    pub field: Option<String>,
    /// Record field compared on the running side.
    pub running_field: Option<String>,
    /// Comparison.
    pub compare: CompareMode,
}

/// A compiled `applies` condition.
#[derive(Debug, Clone)]
pub enum Applies {
    /// Kernel comparisons (all must hold).
    Kernel(Vec<(String, Vec<u64>)>, String),
    /// Path exists.
    Exists(String),
    /// Path missing.
    Missing(String),
    /// Expression.
    When(Expr, String),
}

/// A compiled rule.
#[derive(Debug, Clone)]
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
    /// Where the rule is defined.
    pub source: RuleSource,
    /// Optional picture of how a whole divides (text report bar).
    pub breakdown: Option<Breakdown>,
}

impl Rule {
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
            Check::Setting { expect, .. } => out.extend(expect.iter().flat_map(|(_, v)| v.iter())),
            Check::Drift(_) => {}
        }
        if let Some(b) = &self.breakdown {
            out.push(&b.total);
            out.extend(b.parts.iter().map(|(_, e)| e));
        }
        for t in [&self.why, &self.fix] {
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
        if let Check::Setting { ns, key, .. } = &self.check {
            out.insert((ns.clone(), key.clone()));
        }
        if let Check::Drift(d) = &self.check {
            out.insert((d.configured.clone(), "*".into()));
            out.insert((d.running.clone(), "*".into()));
        }
        for e in self.expressions() {
            expr::walk(e, &mut |x| {
                if let Expr::Setting(ns, k) = x {
                    let key = match k.as_ref() {
                        Expr::Lit(v) => v.to_plain(),
                        _ => "*".into(),
                    };
                    out.insert((ns.clone(), key));
                }
            });
        }
        out
    }

    /// Facts (`mem_total`, ...) the rule reads.
    pub fn facts_read(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for e in self.expressions() {
            expr::walk(e, &mut |x| {
                if let Expr::Name(n) = x {
                    if expr::FACTS.contains(&n.as_str()) {
                        out.insert(n.clone());
                    }
                }
            });
        }
        out
    }
}

/// A loaded policy (metadata and parameters).
#[derive(Debug, Clone)]
pub struct Policy {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// Parameters with their current values (defaults, then `--set` overrides).
    pub params: BTreeMap<String, Value>,
    /// Parameter defaults as written.
    pub param_defaults: BTreeMap<String, String>,
    /// File it came from.
    pub path: String,
}

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

/// A set of loaded policies and their rules, validated together (rule ids unique).
#[derive(Debug, Clone, Default)]
pub struct PolicySet {
    /// Policies in load order.
    pub policies: Vec<Policy>,
    /// Rules in load order.
    pub rules: Vec<Rule>,
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

impl PolicySet {
    /// An empty set.
    pub fn new() -> PolicySet {
        PolicySet::default()
    }

    /// The built-in policies.
    pub fn builtin() -> Result<PolicySet, PolicyError> {
        let mut set = PolicySet::new();
        for (path, text) in BUILTIN {
            set.add_str(path, text)?;
        }
        Ok(set)
    }

    /// Add a policy from YAML text; `path` names it in messages.
    ///
    /// ```
    /// let mut set = driftaudit::PolicySet::new();
    /// set.add_str("mine.yaml", "policy: mine\ntitle: Mine\nrules:\n  - id: my.syncookies\n    title: SYN cookies on\n    severity: medium\n    setting: sysctl.net.ipv4.tcp_syncookies\n    expect: { min: 1 }\n    why: tcp_syncookies is {actual}\n    fix: set it to 1\n")?;
    /// assert!(set.rule("my.syncookies").is_some());
    ///
    /// // Problems carry file, line and a caret under the offending text.
    /// let err = set.add_str("bad.yaml", "policy: bad\ntitle: Bad\nrulez: []\n").unwrap_err();
    /// assert!(err.to_string().starts_with("bad.yaml:3:1:"), "{err}");
    /// # Ok::<(), driftaudit::PolicyError>(())
    /// ```
    pub fn add_str(&mut self, path: &str, text: &str) -> Result<(), PolicyError> {
        let (policy, rules) = compile(path, text)?;
        let mut problems = Vec::new();
        if self.policies.iter().any(|p| p.id == policy.id) {
            problems.push(problem_at(
                path,
                text,
                1,
                1,
                None,
                format!("policy id `{}` is already loaded", policy.id),
            ));
        }
        for r in &rules {
            if let Some(prev) = self.rules.iter().find(|x| x.id == r.id) {
                problems.push(problem_at(
                    path,
                    text,
                    r.source.line,
                    1,
                    Some(r.id.clone()),
                    format!(
                        "duplicate rule id `{}`: already defined at {}:{}",
                        r.id, prev.source.path, prev.source.line
                    ),
                ));
            }
        }
        if !problems.is_empty() {
            return Err(PolicyError::Invalid(problems));
        }
        self.policies.push(policy);
        self.rules.extend(rules);
        Ok(())
    }

    /// Add a policy file, or every `*.yaml`/`*.yml` file of a directory (sorted).
    ///
    /// Files are read with the host reader's rules: a FIFO, socket or device
    /// is refused without a blocking open, and a file is read up to
    /// [`MAX_POLICY_BYTES`], never further. A directory is not descended into
    /// (a `*.yaml` entry that is a directory is an error, not a recursion).
    pub fn add_path(&mut self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        let path = path.as_ref();
        let io = |e: std::io::Error| PolicyError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        if std::fs::metadata(path).map_err(io)?.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(io)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(PolicyError::Io {
                    path: path.display().to_string(),
                    reason: "the directory holds no .yaml or .yml policy files".into(),
                });
            }
            for f in files {
                let text = read_policy_file(&f)?;
                self.add_str(&f.display().to_string(), &text)?;
            }
            return Ok(());
        }
        let text = read_policy_file(path)?;
        self.add_str(&path.display().to_string(), &text)
    }

    /// Override a parameter: `NAME=VALUE` or `POLICY.NAME=VALUE`.
    pub fn set_param(&mut self, assignment: &str) -> Result<(), PolicyError> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| {
            PolicyError::Param(format!("`--set {assignment}`: expected NAME=VALUE"))
        })?;
        let (pol, name) = match name.split_once('.') {
            Some((p, n)) => (Some(p.trim()), n.trim()),
            None => (None, name.trim()),
        };
        let v = param_value(&ParamValue::Text(value.trim().to_string()))
            .map_err(|e| PolicyError::Param(format!("`--set {assignment}`: {e}")))?;
        let mut hit = 0;
        for p in &mut self.policies {
            if pol.is_some_and(|x| x != p.id) {
                continue;
            }
            if let Some(slot) = p.params.get_mut(name) {
                *slot = v.clone();
                hit += 1;
            }
        }
        if hit == 0 {
            let all: Vec<String> = self
                .policies
                .iter()
                .flat_map(|p| p.params.keys().cloned())
                .collect();
            let refs: Vec<&str> = all.iter().map(String::as_str).collect();
            return Err(PolicyError::Param(format!(
                "`--set {assignment}`: no loaded policy has a parameter `{name}`{}",
                expr::suggest(name, &refs)
            )));
        }
        Ok(())
    }

    /// Keep only rules whose id matches one of `only` (if any) and none of `skip`.
    pub fn filter(&mut self, only: &[String], skip: &[String]) -> Result<(), PolicyError> {
        let compile = |g: &String| {
            glob::Pattern::new(g)
                .map_err(|e| PolicyError::Param(format!("rule pattern `{g}`: {e}")))
        };
        let only: Vec<glob::Pattern> = only.iter().map(compile).collect::<Result<_, _>>()?;
        let skip: Vec<glob::Pattern> = skip.iter().map(compile).collect::<Result<_, _>>()?;
        self.rules.retain(|r| {
            (only.is_empty() || only.iter().any(|p| p.matches(&r.id)))
                && !skip.iter().any(|p| p.matches(&r.id))
        });
        Ok(())
    }

    /// The policy a rule belongs to.
    pub fn policy_of(&self, rule: &Rule) -> Option<&Policy> {
        self.policies.iter().find(|p| p.id == rule.policy)
    }

    /// Find a rule by id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }
}

/// Parse a parameter value (number, bool, or text holding a constant expression).
pub fn param_value(v: &ParamValue) -> Result<Value, String> {
    match v {
        ParamValue::Bool(b) => Ok(Value::Bool(*b)),
        ParamValue::Number(n) => Ok(Value::Number(*n)),
        ParamValue::Text(t) => {
            if t.starts_with('/') || t.is_empty() {
                return Ok(Value::Str(t.clone()));
            }
            match expr::parse(t) {
                Ok(e @ Expr::Lit(_)) | Ok(e @ Expr::Binary(..)) | Ok(e @ Expr::Unary(..)) => {
                    expr::eval(&e, &NoContext).map_err(|m| m.to_string())
                }
                _ => Ok(Value::Str(t.clone())),
            }
        }
    }
}

struct NoContext;
impl expr::Context for NoContext {
    fn name(&self, n: &str) -> Result<Value, expr::Missing> {
        Err(expr::Missing::Error(format!(
            "`{n}` cannot be used in a constant"
        )))
    }
    fn param(&self, n: &str) -> Result<Value, expr::Missing> {
        self.name(n)
    }
    fn setting(&self, ns: &str, _k: &str) -> Result<Value, expr::Missing> {
        self.name(ns)
    }
    fn dir_size(&self, _p: &str) -> Result<Value, expr::Missing> {
        self.name("du")
    }
    fn mount_of(&self, _p: &str) -> Result<Value, expr::Missing> {
        self.name("mount_of")
    }
}

/// Largest policy file read (a policy is a few kilobytes; the built-in ones
/// are under 40 KiB).
pub const MAX_POLICY_BYTES: u64 = 4 * 1024 * 1024;

/// Read one policy file the way host files are read (the live host's
/// reader): type checked before and after a non-blocking open, size capped
/// while reading, so a FIFO, `/dev/zero` or a growing file cannot block the
/// load or fill memory.
fn read_policy_file(path: &Path) -> Result<String, PolicyError> {
    let err = |reason: String| PolicyError::Io {
        path: path.display().to_string(),
        reason,
    };
    let abs = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
    let abs = abs
        .to_str()
        .ok_or_else(|| err("the path is not valid UTF-8".into()))?;
    let bytes = crate::host::Host::live()
        .read_bytes_capped(abs, MAX_POLICY_BYTES)
        .map_err(|e| match e {
            crate::host::ReadError::TooLarge(_) => err(format!(
                "larger than the {MAX_POLICY_BYTES}-byte policy cap"
            )),
            e => err(e.to_string()),
        })?;
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

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

fn problem_at(
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
fn yaml_problem(path: &str, text: &str, e: &serde_saphyr::Error) -> PolicyProblem {
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

struct Compiler<'a> {
    path: &'a str,
    text: &'a str,
    problems: Vec<PolicyProblem>,
}

impl Compiler<'_> {
    fn problem(&mut self, at: &serde_saphyr::Location, rule: &str, offset: usize, message: String) {
        let line = at.line() as usize;
        let column = at.column() as usize + offset;
        self.problems.push(problem_at(
            self.path,
            self.text,
            line.max(1),
            column.max(1),
            Some(rule.to_string()),
            message,
        ));
    }

    fn expr(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match expr::parse(&s.value) {
            Ok(e) => {
                self.check_names(&e, s, rule, what, names);
                Some(e)
            }
            Err(err) => {
                // a quoted scalar starts one column before its text
                let quoted = self.quote_offset(&s.referenced);
                self.problem(
                    &s.referenced,
                    rule,
                    err.offset + quoted,
                    format!("{what}: {}", err.message),
                );
                None
            }
        }
    }

    fn quote_offset(&self, at: &serde_saphyr::Location) -> usize {
        let line = self
            .text
            .lines()
            .nth((at.line() as usize).saturating_sub(1))
            .unwrap_or("");
        match line.chars().nth((at.column() as usize).saturating_sub(1)) {
            Some('"') | Some('\'') => 1,
            _ => 0,
        }
    }

    fn check_names(
        &mut self,
        e: &Expr,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) {
        let mut bad = Vec::new();
        expr::walk(e, &mut |x| {
            if let Expr::Name(n) = x {
                if !names.contains(n) && !expr::FACTS.contains(&n.as_str()) {
                    bad.push(n.clone());
                }
            }
        });
        for n in bad {
            let mut cands: Vec<&str> = expr::FACTS.to_vec();
            cands.extend(names.iter().map(String::as_str));
            cands.extend(FLAT_NAMESPACES.iter().copied());
            cands.extend(RECORD_NAMESPACES.iter().copied());
            let offset = s.value.find(n.as_str()).unwrap_or(0) + self.quote_offset(&s.referenced);
            self.problem(
                &s.referenced,
                rule,
                offset,
                format!("{what}: unknown name `{n}`{}", expr::suggest(&n, &cands)),
            );
        }
    }

    fn template(
        &mut self,
        s: &Spanned<String>,
        rule: &str,
        what: &str,
        names: &BTreeSet<String>,
    ) -> Template {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let chars: Vec<char> = s.value.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '{' if chars.get(i + 1) == Some(&'{') => {
                    lit.push('{');
                    i += 2;
                }
                '}' if chars.get(i + 1) == Some(&'}') => {
                    lit.push('}');
                    i += 2;
                }
                '{' => {
                    let Some(end) = chars[i + 1..].iter().position(|c| *c == '}') else {
                        self.problem(&s.referenced, rule, 0, format!("{what}: `{{` without a closing `}}` (write `{{{{` for a literal brace)"));
                        break;
                    };
                    let inner: String = chars[i + 1..i + 1 + end].iter().collect();
                    if !lit.is_empty() {
                        parts.push(TemplatePart::Text(std::mem::take(&mut lit)));
                    }
                    let sp = Spanned {
                        value: inner,
                        referenced: s.referenced,
                        defined: s.defined,
                    };
                    if let Some(e) = self.expr(
                        &sp,
                        rule,
                        &format!("{what} placeholder `{{{}}}`", sp.value),
                        names,
                    ) {
                        parts.push(TemplatePart::Expr(e));
                    }
                    i += end + 2;
                }
                c => {
                    lit.push(c);
                    i += 1;
                }
            }
        }
        if !lit.is_empty() {
            parts.push(TemplatePart::Text(lit));
        }
        Template {
            parts,
            source: s.value.clone(),
        }
    }

    fn expect_value(
        &mut self,
        v: &ParamValue,
        at: &serde_saphyr::Location,
        rule: &str,
        names: &BTreeSet<String>,
    ) -> Option<Expr> {
        match v {
            ParamValue::Bool(b) => Some(Expr::Lit(Value::Bool(*b))),
            ParamValue::Number(n) => Some(Expr::Lit(Value::Number(*n))),
            ParamValue::Text(t) => {
                if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                    let sp = Spanned {
                        value: inner.to_string(),
                        referenced: *at,
                        defined: *at,
                    };
                    self.expr(&sp, rule, "expect", names)
                } else if t.chars().next().is_some_and(|c| c.is_ascii_digit())
                    && parse_size(t).is_ok()
                {
                    Some(Expr::Lit(Value::Size(parse_size(t).unwrap_or(0.0))))
                } else {
                    Some(Expr::Lit(Value::Str(t.clone())))
                }
            }
        }
    }
}

/// Compile one policy file.
fn compile(path: &str, text: &str) -> Result<(Policy, Vec<Rule>), PolicyError> {
    let raw: PolicyFile = serde_saphyr::from_str(text).map_err(|e| {
        // serde-saphyr deserializes while it parses, so a rule that a
        // mis-indented line cuts short fails as "missing field" at the rule's
        // first line before the parser reaches the bad line. When the text is
        // not valid YAML at all, the syntax error is the one to show: it
        // points at the offending line (as PyYAML and libyaml do).
        let e = match serde_saphyr::from_str::<serde::de::IgnoredAny>(text) {
            Err(syntax) => syntax,
            Ok(_) => e,
        };
        PolicyError::Invalid(vec![yaml_problem(path, text, &e)])
    })?;
    let mut c = Compiler {
        path,
        text,
        problems: Vec::new(),
    };
    let pid = raw.policy.value.clone();
    let mut params = BTreeMap::new();
    let mut param_defaults = BTreeMap::new();
    for (k, v) in &raw.params {
        match param_value(&v.value) {
            Ok(val) => {
                params.insert(k.clone(), val);
            }
            Err(e) => c.problem(&v.referenced, &pid, 0, format!("parameter `{k}`: {e}")),
        }
        param_defaults.insert(
            k.clone(),
            match &v.value {
                ParamValue::Bool(b) => b.to_string(),
                ParamValue::Number(n) => crate::value::format_number(*n),
                ParamValue::Text(t) => t.clone(),
            },
        );
    }
    let mut rules = Vec::new();
    let mut seen = BTreeMap::new();
    for spec in &raw.rules {
        let id = spec.id.value.clone();
        let at = spec.id.referenced;
        if let Some(prev) = seen.insert(id.clone(), at.line()) {
            c.problem(
                &at,
                &id,
                0,
                format!("duplicate rule id `{id}`: already defined at line {prev}"),
            );
        }
        if id.is_empty() || id.contains(char::is_whitespace) {
            c.problem(
                &at,
                &id,
                0,
                "rule id must be a non-empty word such as `linux.tcp-tw-recycle`".into(),
            );
        }
        let names: BTreeSet<String> = spec
            .lets
            .keys()
            .cloned()
            .chain(
                [
                    "actual", "expected", "setting", "source", "missing", "extra",
                ]
                .map(String::from),
            )
            .collect();
        // params referenced must exist
        let check_params = |e: &Expr, c: &mut Compiler, s: &Spanned<String>| {
            let mut bad = Vec::new();
            expr::walk(e, &mut |x| {
                if let Expr::Param(p) = x {
                    if !params.contains_key(p) {
                        bad.push(p.clone());
                    }
                }
            });
            for p in bad {
                let keys: Vec<&str> = params.keys().map(String::as_str).collect();
                c.problem(
                    &s.referenced,
                    &id,
                    0,
                    format!("unknown parameter `params.{p}`{}", expr::suggest(&p, &keys)),
                );
            }
        };
        let mut lets = BTreeMap::new();
        for (k, v) in &spec.lets {
            if let Some(e) = c.expr(v, &id, &format!("let `{k}`"), &names) {
                check_params(&e, &mut c, v);
                lets.insert(k.clone(), e);
            }
        }
        let mut applies = Vec::new();
        for cond in &spec.applies {
            match cond {
                Condition::Kernel(s) => match parse_kernel_cond(s) {
                    Ok(v) => applies.push(Applies::Kernel(v, s.clone())),
                    Err(e) => c.problem(&at, &id, 0, format!("applies.kernel `{s}`: {e}")),
                },
                Condition::Exists(p) | Condition::Missing(p) => {
                    if let Some(inner) = p.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
                        match expr::parse(inner) {
                            Ok(e) => {
                                let mut bad = Vec::new();
                                expr::walk(&e, &mut |x| match x {
                                    Expr::Param(n) if !params.contains_key(n) => {
                                        bad.push(format!("params.{n}"))
                                    }
                                    Expr::Name(n) | Expr::Setting(n, _) => bad.push(n.clone()),
                                    _ => {}
                                });
                                for b in bad {
                                    c.problem(&at, &id, 0, format!("applies path `{p}`: `{b}` cannot be used here; only parameters and constants"));
                                }
                            }
                            Err(e) => {
                                c.problem(&at, &id, 0, format!("applies path `{p}`: {}", e.message))
                            }
                        }
                    }
                    applies.push(if matches!(cond, Condition::Exists(_)) {
                        Applies::Exists(p.clone())
                    } else {
                        Applies::Missing(p.clone())
                    });
                }
                Condition::When(s) => {
                    if let Some(e) = c.expr(s, &id, "applies.when", &names) {
                        check_params(&e, &mut c, s);
                        applies.push(Applies::When(e, s.value.clone()));
                    }
                }
            }
        }
        let n_checks = [
            spec.setting.is_some() || spec.expect.is_some(),
            spec.assert.is_some(),
            spec.drift.is_some(),
        ]
        .iter()
        .filter(|x| **x)
        .count();
        if n_checks != 1 {
            c.problem(
                &at,
                &id,
                0,
                "a rule needs exactly one check: `setting` with `expect`, `assert`, or `drift`"
                    .into(),
            );
        }
        let check = if let Some(a) = &spec.assert {
            c.expr(a, &id, "assert", &names)
                .inspect(|e| check_params(e, &mut c, a))
                .map(Check::Assert)
        } else if let Some(d) = &spec.drift {
            for ns in [&d.configured, &d.running] {
                if !FLAT_NAMESPACES.contains(&ns.as_str())
                    && !RECORD_NAMESPACES.contains(&ns.as_str())
                {
                    let mut all: Vec<&str> = FLAT_NAMESPACES.to_vec();
                    all.extend(RECORD_NAMESPACES);
                    c.problem(
                        &at,
                        &id,
                        0,
                        format!("drift: unknown namespace `{ns}`{}", expr::suggest(ns, &all)),
                    );
                }
            }
            let pats = |c: &mut Compiler, list: &[String]| -> Vec<glob::Pattern> {
                list.iter()
                    .filter_map(|g| match glob::Pattern::new(g) {
                        Ok(p) => Some(p),
                        Err(e) => {
                            c.problem(&at, &id, 0, format!("drift key pattern `{g}`: {e}"));
                            None
                        }
                    })
                    .collect()
            };
            let keys = pats(&mut c, &d.keys);
            let ignore = pats(&mut c, &d.ignore);
            Some(Check::Drift(DriftCheck {
                configured: d.configured.clone(),
                running: d.running.clone(),
                keys,
                ignore,
                field: d.field.clone(),
                running_field: d.running_field.clone().or_else(|| d.field.clone()),
                compare: d.compare.unwrap_or_default(),
            }))
        } else if let (Some(s), Some(ex)) = (&spec.setting, &spec.expect) {
            // `NS.key` takes the rest of the text literally (keys may contain `-` or `/`);
            // `NS["key"]` is parsed as an expression.
            let literal = s.value.split_once('.').filter(|(ns, k)| {
                FLAT_NAMESPACES.contains(ns) && !k.is_empty() && !k.contains(char::is_whitespace)
            });
            let parsed = match literal {
                Some((ns, k)) => Ok(Expr::Setting(
                    ns.to_string(),
                    Box::new(Expr::Lit(Value::Str(k.to_string()))),
                )),
                None => expr::parse(&s.value),
            };
            match parsed {
                Ok(Expr::Setting(ns, k)) => match *k {
                    Expr::Lit(key) => {
                        let mut expect = Vec::new();
                        let single = [
                            (ExpectOp::Equals, &ex.equals),
                            (ExpectOp::Not, &ex.not),
                            (ExpectOp::Min, &ex.min),
                            (ExpectOp::Max, &ex.max),
                            (ExpectOp::Gt, &ex.gt),
                            (ExpectOp::Lt, &ex.lt),
                        ];
                        for (op, v) in single {
                            if let Some(v) = v {
                                if let Some(e) = c.expect_value(v, &s.referenced, &id, &names) {
                                    expect.push((op, vec![e]));
                                }
                            }
                        }
                        if let Some(list) = &ex.one_of {
                            let es: Vec<Expr> = list
                                .iter()
                                .filter_map(|v| c.expect_value(v, &s.referenced, &id, &names))
                                .collect();
                            expect.push((ExpectOp::OneOf, es));
                        }
                        let presence = match (ex.present, ex.absent) {
                            (Some(true), _) => Some(true),
                            (_, Some(true)) => Some(false),
                            _ => None,
                        };
                        if expect.is_empty() && presence.is_none() {
                            c.problem(&s.referenced, &id, 0, "`expect` needs at least one of equals, one_of, not, min, max, gt, lt, present, absent".into());
                        }
                        Some(Check::Setting {
                            ns,
                            key: key.to_plain(),
                            expect,
                            presence,
                        })
                    }
                    _ => {
                        c.problem(
                            &s.referenced,
                            &id,
                            0,
                            "`setting` must name one key literally".into(),
                        );
                        None
                    }
                },
                _ => {
                    c.problem(
                        &s.referenced,
                        &id,
                        0,
                        format!(
                            "`setting` must be NAMESPACE.KEY (namespaces: {}), found `{}`",
                            FLAT_NAMESPACES.join(", "),
                            s.value
                        ),
                    );
                    None
                }
            }
        } else {
            if spec.setting.is_some() != spec.expect.is_some() {
                c.problem(&at, &id, 0, "`setting` and `expect` go together".into());
            }
            None
        };
        let why = c.template(&spec.why, &id, "why", &names);
        let fix = c.template(&spec.fix, &id, "fix", &names);
        for t in [&why, &fix] {
            for p in &t.parts {
                if let TemplatePart::Expr(e) = p {
                    check_params(e, &mut c, &spec.why);
                }
            }
        }
        if spec.title.trim().is_empty() {
            c.problem(&at, &id, 0, "`title` is empty".into());
        }
        if spec.why.value.trim().is_empty() || spec.fix.value.trim().is_empty() {
            c.problem(&at, &id, 0, "`why` and `fix` must say something".into());
        }
        let breakdown = spec.breakdown.as_ref().and_then(|b| {
            let total = c.expr(&b.total, &id, "breakdown.total", &names)?;
            let parts: Vec<(String, Expr)> = b
                .parts
                .iter()
                .filter_map(|p| {
                    Some((
                        p.label.clone(),
                        c.expr(&p.value, &id, "breakdown part", &names)?,
                    ))
                })
                .collect();
            Some(Breakdown {
                label: b.label.clone(),
                total,
                parts,
                rest: b.rest.clone(),
            })
        });
        if let Some(check) = check {
            rules.push(Rule {
                id: id.clone(),
                policy: pid.clone(),
                title: spec.title.trim().to_string(),
                severity: spec.severity,
                applies,
                lets,
                check,
                why,
                fix,
                references: spec.references.clone(),
                source: RuleSource {
                    path: path.to_string(),
                    line: at.line() as usize,
                },
                breakdown,
            });
        }
    }
    if !c.problems.is_empty() {
        return Err(PolicyError::Invalid(c.problems));
    }
    Ok((
        Policy {
            id: pid,
            title: raw.title,
            description: raw.description.trim().to_string(),
            params,
            param_defaults,
            path: path.to_string(),
        },
        rules,
    ))
}

/// The host path of an `applies: exists:`/`missing:` condition: literal, or
/// `${expr}` over the policy's parameters (`${params.zimbra_db_dir}`).
pub fn resolve_path(text: &str, policy: Option<&Policy>) -> Result<String, String> {
    let Some(inner) = text.strip_prefix("${").and_then(|x| x.strip_suffix('}')) else {
        return Ok(text.to_string());
    };
    let e = expr::parse(inner).map_err(|e| e.message)?;
    struct Params<'a>(Option<&'a Policy>);
    impl expr::Context for Params<'_> {
        fn name(&self, n: &str) -> Result<Value, expr::Missing> {
            Err(expr::Missing::Error(format!(
                "`{n}` cannot be used in a path"
            )))
        }
        fn param(&self, n: &str) -> Result<Value, expr::Missing> {
            self.0
                .and_then(|p| p.params.get(n))
                .cloned()
                .ok_or_else(|| expr::Missing::Error(format!("unknown parameter `{n}`")))
        }
        fn setting(&self, ns: &str, _k: &str) -> Result<Value, expr::Missing> {
            self.name(ns)
        }
        fn dir_size(&self, _p: &str) -> Result<Value, expr::Missing> {
            self.name("du")
        }
        fn mount_of(&self, _p: &str) -> Result<Value, expr::Missing> {
            self.name("mount_of")
        }
    }
    expr::eval(&e, &Params(policy))
        .map(|v| v.to_plain())
        .map_err(|m| m.to_string())
}

/// Parse `< 4.12`, `>= 4.10, < 4.12`.
pub fn parse_kernel_cond(s: &str) -> Result<Vec<(String, Vec<u64>)>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let p = part.trim();
        let op_len = p
            .find(|c: char| c.is_ascii_digit())
            .ok_or("expected an operator and a version such as `< 4.12`")?;
        let op = p[..op_len].trim();
        if !matches!(op, "<" | "<=" | ">" | ">=" | "==" | "!=" | "=") {
            return Err(format!(
                "unknown operator `{op}`: expected <, <=, >, >=, == or !="
            ));
        }
        let v: Result<Vec<u64>, _> = p[op_len..].trim().split('.').map(str::parse).collect();
        let v = v.map_err(|_| format!("`{}` is not a version such as 4.12", p[op_len..].trim()))?;
        out.push((
            if op == "=" {
                "==".into()
            } else {
                op.to_string()
            },
            v,
        ));
    }
    Ok(out)
}

/// The JSON Schema of a policy file, generated from the loader's own types.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(PolicyFile)).unwrap_or(serde_json::Value::Null)
}
