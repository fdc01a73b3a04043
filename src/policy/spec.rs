//! The raw policy spec: serde types for a policy file as written, every
//! user value that a problem can point at wrapped in `Spanned` (line and
//! column). The JSON Schema (policies/schema.json) is generated from these
//! types. Must not validate or compile anything: that is `compile`'s job.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::{CompareMode, Severity};

// ---------------------------------------------------------------- raw model

/// A policy file as written (the JSON Schema is generated from these types).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "driftaudit policy",
    description = "A driftaudit policy file (policy language v1)",
    extend("anyOf" = [{"required": ["rules"]}, {"required": ["overrides"]}])
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
    /// A benchmark (CIS, STIG, ANSSI items): its rules run only with a
    /// profile they are tagged for (`--profile cis-l1-server`) or
    /// `--profile all`, not in the default run.
    #[serde(default)]
    pub benchmark: bool,
    /// The profiles every run that loads this file adds, as `--profile`
    /// does (a site chooses once: `profiles: [cis-l1-server]`).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub profiles: Vec<Spanned<String>>,
    /// Named defaults for thresholds, overridable with `--set NAME=VALUE`.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ParamValue>")]
    pub params: BTreeMap<String, Spanned<ParamValue>>,
    /// The rules (a file of only `overrides` needs none).
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
    /// Adjustments to rules of other policies (site overlays): severity,
    /// `disabled` with a reason, parameters, extra `applies` conditions.
    #[serde(default)]
    #[schemars(with = "Vec<OverrideSpec>")]
    pub overrides: Vec<Spanned<OverrideSpec>>,
}

/// A parameter value: a number, a boolean, or a string holding a size (`10G`),
/// a percentage (`15%`), a path or any expression of constants; as a
/// `params:` value (of a policy or an overlay) also a list of maps of
/// scalars, the items a rule's `for_each: { param: NAME }` iterates over.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamValue {
    /// Boolean.
    Bool(bool),
    /// Number.
    Number(f64),
    /// Text: a size, a percentage, a path...
    Text(String),
    /// Only as a `params:` value: a list of items, each a map of scalars
    /// (`[{id: zimbra-db, path: /opt/zimbra/db}, ...]`); a field written
    /// `${EXPR}` is evaluated per host, a `when` field is the item's condition.
    List(Vec<BTreeMap<String, ParamValue>>),
    /// Only in a policy's own `params:`: a declared type with its default
    /// (`{type: ratio, default: 0.7}`, `{type: enum, values: [ssd, hdd],
    /// default: ssd}`), checked on every value `--set` or an overlay gives.
    Typed(Box<TypedParam>),
}

/// A parameter declared with its type (`params: { share: {type: ratio,
/// default: 0.7} }`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypedParam {
    /// `number`, `size`, `ratio`, `bool`, `enum`, `path`, `text` or `list`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The value when nothing overrides it.
    pub default: ParamValue,
    /// The words an `enum` allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ParamValue>,
    /// The smallest value a `number` allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The largest value a `number` allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// A rule tag as the schema describes it (the loader checks the same form).
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)] // schema only
struct TagName(#[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,63}$"))] String);

/// A benchmark item as the schema describes it (the loader checks the same form).
#[derive(JsonSchema)]
#[schemars(transparent)]
#[allow(dead_code)] // schema only
struct ControlName(#[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]*:[^\s:]+$"))] String);

/// One rule as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Stable id, unique across all loaded policies (`linux.tcp-tw-recycle`).
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// One-line title.
    #[schemars(with = "String")]
    pub title: Spanned<String>,
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
    /// Judge the rule once per item of a set: a list parameter, the keys of
    /// a flat namespace matching a glob, or the records of a record
    /// namespace; each item is its own finding.
    #[serde(default)]
    #[schemars(with = "Option<ForEachSpec>")]
    pub for_each: Option<Spanned<ForEachSpec>>,
    /// With `for_each`: a template naming the item in the finding's subject
    /// (default: the item's `id`, `name` or `key` field, the text a key
    /// glob's `*` matched, or the record's key).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub subject: Option<Spanned<String>>,
    /// With `for_each: { param: ... }`: a template over the item's fields
    /// giving each item a second id (`storage.noatime-{dir.id}`, the id a
    /// rule had before it was one rule per item); `--only`, `--skip`,
    /// waivers, policy tests and fleet summaries match it as well.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub alias: Option<Spanned<String>>,
    /// Rationale; a template rendered into the finding's explanation.
    #[schemars(with = "String")]
    pub why: Spanned<String>,
    /// What to change; a template.
    #[schemars(with = "String")]
    pub fix: Spanned<String>,
    /// Reference URLs.
    #[serde(default)]
    pub references: Vec<String>,
    /// Profiles the rule belongs to (`cis-l1-server`, `stig`,
    /// `performance`): lowercase words of letters, digits and `-`;
    /// `--only tag:NAME` selects the rules carrying one.
    #[serde(default)]
    #[schemars(with = "Vec<TagName>")]
    pub tags: Vec<Spanned<String>>,
    /// The benchmark items the rule answers, each `FRAMEWORK:ITEM`
    /// (`cis-debian12:3.3.9`, `stig-rhel9:RHEL-09-253025`,
    /// `anssi-bp28:R12`); docs/coverage.md is generated from them.
    #[serde(default)]
    #[schemars(with = "Vec<ControlName>")]
    pub controls: Vec<Spanned<String>>,
    /// How a whole divides into parts (e.g. RAM into heap, pool and the rest),
    /// drawn as a one-line bar in the text report.
    #[serde(default)]
    pub breakdown: Option<BreakdownSpec>,
    /// What `driftaudit fix` changes when the rule fails: exactly one of
    /// `set` (with `to`), `remove`, `options` or `none` (with the reason).
    /// Without it, a `setting:` check with one `equals`, `min` or `max`
    /// (or `absent: true`) and a `drift:` check get a derived remedy.
    #[serde(default)]
    #[schemars(with = "Option<RemedySpec>")]
    pub remedy: Option<Spanned<RemedySpec>>,
}

/// `for_each:` as written: exactly one of `param`, `keys` or `records`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForEachSpec {
    /// A list parameter of the policy (`data_dirs`); each item is a map.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub param: Option<Spanned<String>>,
    /// `NAMESPACE.GLOB` over a flat namespace (`sysctl.net.ipv4.conf.*.rp_filter`);
    /// the bound name is the text the `*` matched.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub keys: Option<Spanned<String>>,
    /// A record namespace (`mount`, `fstab`, `ext4`); the bound name is one record.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub records: Option<Spanned<String>>,
    /// With `records`: only records for which this expression (over the
    /// record's fields by name) is true.
    #[serde(default, rename = "where")]
    #[schemars(rename = "where", with = "Option<String>")]
    pub filter: Option<Spanned<String>>,
    /// The name the item is bound to (default `item`).
    #[serde(default, rename = "as")]
    #[schemars(rename = "as", with = "Option<String>")]
    pub bind: Option<Spanned<String>>,
    /// Items left out, each with the reason in plain words, which every
    /// report shows as the item's `skip` (`{lo: "loopback traffic is
    /// locally generated; the kernel never filters it"}`). Keyed by the
    /// item as its default subject names it: the text the `*` matched, the
    /// record's key, or a list item's `id` (else `name`, `key`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub except: BTreeMap<String, Spanned<String>>,
}

/// `remedy:` as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemedySpec {
    /// The setting to write, `NAMESPACE.KEY` (`sysctl.net.ipv4.tcp_tw_recycle`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub set: Option<Spanned<String>>,
    /// The value for `set`: a constant or `${EXPR}` over the rule's `let` names.
    #[serde(default)]
    #[schemars(with = "Option<ParamValue>")]
    pub to: Option<Spanned<ParamValue>>,
    /// The setting whose lines are deleted, `NAMESPACE.KEY`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub remove: Option<Spanned<String>>,
    /// Mount options to add and remove on the finding's mount point.
    #[serde(default)]
    pub options: Option<RemedyOptionsSpec>,
    /// No automatic change: the reason (shown by `explain` and `fix`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub none: Option<Spanned<String>>,
    /// The condition under which the change cannot cut service; where it
    /// does not hold on the host, or cannot be told, `fix` holds the change
    /// as a decision for the admin.
    #[serde(default)]
    pub requires: Option<RequiresSpec>,
}

/// `remedy: { requires: { when: EXPR, why: TEXT } }`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequiresSpec {
    /// An expression of the rule's scope that is true where the change is safe.
    #[schemars(with = "String")]
    pub when: Spanned<String>,
    /// What the change would break where it does not hold.
    #[schemars(with = "String")]
    pub why: Spanned<String>,
}

/// `remedy: { options: { add: [...], remove: [...] } }`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemedyOptionsSpec {
    /// Options added to the fstab entry and the live mount (`noatime`).
    #[serde(default)]
    pub add: Vec<String>,
    /// Options removed (`relatime`, `strictatime`).
    #[serde(default)]
    pub remove: Vec<String>,
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

/// A condition in `applies`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Condition {
    /// Kernel release comparison, e.g. `< 4.12` or `>= 4.10, < 4.12`.
    Kernel(#[schemars(with = "String")] Spanned<String>),
    /// A host path exists.
    Exists(#[schemars(with = "String")] Spanned<String>),
    /// A host path does not exist.
    Missing(#[schemars(with = "String")] Spanned<String>),
    /// An expression that must be true.
    When(#[schemars(with = "String")] Spanned<String>),
}

/// Expectations on one setting. Several may be given; all must hold.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Equal to.
    #[schemars(with = "Option<ParamValue>")]
    pub equals: Option<Spanned<ParamValue>>,
    /// Equal to one of.
    #[schemars(with = "Option<Vec<ParamValue>>")]
    pub one_of: Option<Vec<Spanned<ParamValue>>>,
    /// Different from.
    #[schemars(with = "Option<ParamValue>")]
    pub not: Option<Spanned<ParamValue>>,
    /// At least.
    #[schemars(with = "Option<ParamValue>")]
    pub min: Option<Spanned<ParamValue>>,
    /// At most.
    #[schemars(with = "Option<ParamValue>")]
    pub max: Option<Spanned<ParamValue>>,
    /// Greater than.
    #[schemars(with = "Option<ParamValue>")]
    pub gt: Option<Spanned<ParamValue>>,
    /// Less than.
    #[schemars(with = "Option<ParamValue>")]
    pub lt: Option<Spanned<ParamValue>>,
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
    #[schemars(with = "String")]
    pub configured: Spanned<String>,
    /// Namespace holding running values (`sysctl`).
    #[schemars(with = "String")]
    pub running: Spanned<String>,
    /// Only keys matching these globs.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub keys: Vec<Spanned<String>>,
    /// Keys never compared (volatile ones).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub ignore: Vec<Spanned<String>>,
    /// For record namespaces (`fstab`, `mount`): the field compared (`kernel_options`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub field: Option<Spanned<String>>,
    /// Field on the running side when it has another name (`options`); defaults to `field`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub running_field: Option<Spanned<String>>,
    /// `equal` (default) or `subset`: every configured item appears in the running list.
    #[serde(default)]
    pub compare: Option<CompareMode>,
}

/// One entry of `overrides:` as written: a target (`rule:` glob over rule
/// ids, or `policy:` glob over policy ids for parameters) and what changes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverrideSpec {
    /// Rules to adjust: a rule id or a glob over rule ids (`storage.*`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub rule: Option<Spanned<String>>,
    /// Policies whose parameters to set: a policy id or a glob (`mysql-*`);
    /// only with `params`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub policy: Option<Spanned<String>>,
    /// New severity of the matched rules.
    #[serde(default)]
    #[schemars(with = "Option<Severity>")]
    pub severity: Option<Spanned<Severity>>,
    /// Turn the matched rules off; the value is the reason, shown in every report.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub disabled: Option<Spanned<String>>,
    /// Parameter values: for the matched rules only (`rule:`), or for the
    /// whole policy (`policy:`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ParamValue>")]
    pub params: BTreeMap<String, Spanned<ParamValue>>,
    /// Conditions added to the matched rules' own (all must hold).
    #[serde(default)]
    pub applies: Vec<Condition>,
}

/// The JSON Schema of a policy file, generated from the loader's own types.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(PolicyFile)).unwrap_or(serde_json::Value::Null)
}
