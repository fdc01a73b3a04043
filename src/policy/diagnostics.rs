//! Policy diagnostics, the way cargo-deny keeps them: every problem a policy
//! can have is one [`Problem`] variant with a stable [`Code`] and a
//! one-line message in Cedar's style (lowercase, no trailing period, user
//! input in backticks); a [`PolicyProblem`] places it at file, line and
//! column with the offending source line and a caret. [`PolicyError`] is the
//! error of loading. Must not compile or read anything.

use serde::Serialize;

use super::values::{ConstError, KernelCondError};
use crate::expr;

/// The stable code of each kind of policy problem (`unknown-name`,
/// `duplicate-rule-id`, ...). Codes are part of the interface: scripts and
/// editors may key on them, so a rename is a breaking change (a snapshot of
/// [`Code::ALL`] makes every rename visible in review).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Code {
    /// The text is not valid YAML.
    YamlSyntax,
    /// Valid YAML of the wrong shape: a missing field, a wrong type, an unknown severity.
    YamlShape,
    /// A mapping holds the same key twice.
    DuplicateKey,
    /// A key the policy language does not have.
    UnknownField,
    /// A policy id already loaded from another file.
    DuplicatePolicyId,
    /// A rule id already defined in this or another policy.
    DuplicateRuleId,
    /// A rule id that is empty or holds whitespace.
    InvalidRuleId,
    /// A parameter default that is not a constant, or a declaration
    /// (`{type: ..., default: ...}`) that is not a type.
    InvalidParam,
    /// A parameter value not of the type the parameter declares.
    ParamType,
    /// A parameter declared without a type (a warning that suggests one).
    UntypedParam,
    /// A `profiles:` entry that names no profile.
    UnknownProfile,
    /// `params.X` names no parameter of the policy.
    UnknownParam,
    /// A name that is no fact, `let` binding or namespace.
    UnknownName,
    /// An expression that does not parse.
    InvalidExpression,
    /// An `applies: kernel:` condition that is not `OP VERSION[, OP VERSION]`.
    InvalidKernelCondition,
    /// An `applies: exists:`/`missing:` path whose `${}` does not parse.
    InvalidAppliesPath,
    /// An `applies` path whose `${}` uses host data instead of parameters and constants.
    AppliesPathNotConstant,
    /// A rule without exactly one check.
    CheckCount,
    /// `setting` without `expect`, or `expect` without `setting`.
    SettingWithoutExpect,
    /// A `setting` that is not `NAMESPACE.KEY`.
    InvalidSetting,
    /// A `setting` whose key is computed rather than written.
    SettingNotLiteral,
    /// An `expect` with no expectation in it.
    EmptyExpect,
    /// A `drift` namespace that does not exist.
    UnknownNamespace,
    /// A `drift` key pattern that is not a valid glob.
    InvalidGlob,
    /// A `{` in a template without its `}`.
    UnclosedPlaceholder,
    /// A rule whose `title` is empty.
    EmptyTitle,
    /// A `tags` entry that is not a lowercase word, or given twice.
    InvalidTag,
    /// A `controls` entry that is not `FRAMEWORK:ITEM`, or given twice.
    InvalidControl,
    /// A rule whose `why` or `fix` is empty.
    EmptyText,
    /// A `remedy` that is not exactly one of `set` (with `to`), `remove`, `options`, `none`.
    InvalidRemedy,
    /// A `remedy: { none: ... }` without a reason.
    RemedyWithoutReason,
    /// A `remedy: { options: ... }` that adds and removes nothing.
    EmptyRemedyOptions,
    /// A `remedy` setting in a namespace `fix` cannot write.
    RemedyNotWritable,
    /// An `overrides` entry without one target (`rule` or `policy`) or without a change.
    InvalidOverride,
    /// A `disabled` override without the reason.
    DisabledWithoutReason,
    /// An `overrides` pattern that matches no loaded rule or policy.
    OverrideMatchesNothing,
    /// An override parameter that no rule or policy it matches has.
    OverrideParamUnused,
    /// Two files of equal precedence set one value differently.
    ConflictingOverride,
    /// A `for_each` that is not exactly one of `param`, `keys`, `records`
    /// over a set that exists, or a `subject`/`${...}` setting without one.
    InvalidForEach,
    /// A `where:` that names a record's field bare (`holds_secret`): read as
    /// `BIND.FIELD`, a warning ([`crate::PolicySet::warnings`]).
    WhereBareField,
}

impl Code {
    /// Every code, in declaration order.
    pub const ALL: &'static [Code] = &[
        Code::YamlSyntax,
        Code::YamlShape,
        Code::DuplicateKey,
        Code::UnknownField,
        Code::DuplicatePolicyId,
        Code::DuplicateRuleId,
        Code::InvalidRuleId,
        Code::InvalidParam,
        Code::ParamType,
        Code::UntypedParam,
        Code::UnknownProfile,
        Code::UnknownParam,
        Code::UnknownName,
        Code::InvalidExpression,
        Code::InvalidKernelCondition,
        Code::InvalidAppliesPath,
        Code::AppliesPathNotConstant,
        Code::CheckCount,
        Code::SettingWithoutExpect,
        Code::InvalidSetting,
        Code::SettingNotLiteral,
        Code::EmptyExpect,
        Code::UnknownNamespace,
        Code::InvalidGlob,
        Code::UnclosedPlaceholder,
        Code::EmptyTitle,
        Code::InvalidTag,
        Code::InvalidControl,
        Code::EmptyText,
        Code::InvalidRemedy,
        Code::RemedyWithoutReason,
        Code::EmptyRemedyOptions,
        Code::RemedyNotWritable,
        Code::InvalidOverride,
        Code::DisabledWithoutReason,
        Code::OverrideMatchesNothing,
        Code::OverrideParamUnused,
        Code::ConflictingOverride,
        Code::InvalidForEach,
        Code::WhereBareField,
    ];

    /// The stable code (`unknown-name`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::YamlSyntax => "yaml-syntax",
            Code::YamlShape => "yaml-shape",
            Code::DuplicateKey => "duplicate-key",
            Code::UnknownField => "unknown-field",
            Code::DuplicatePolicyId => "duplicate-policy-id",
            Code::DuplicateRuleId => "duplicate-rule-id",
            Code::InvalidRuleId => "invalid-rule-id",
            Code::InvalidParam => "invalid-param",
            Code::ParamType => "param-type",
            Code::UntypedParam => "untyped-param",
            Code::UnknownProfile => "unknown-profile",
            Code::UnknownParam => "unknown-param",
            Code::UnknownName => "unknown-name",
            Code::InvalidExpression => "invalid-expression",
            Code::InvalidKernelCondition => "invalid-kernel-condition",
            Code::InvalidAppliesPath => "invalid-applies-path",
            Code::AppliesPathNotConstant => "applies-path-not-constant",
            Code::CheckCount => "check-count",
            Code::SettingWithoutExpect => "setting-without-expect",
            Code::InvalidSetting => "invalid-setting",
            Code::SettingNotLiteral => "setting-not-literal",
            Code::EmptyExpect => "empty-expect",
            Code::UnknownNamespace => "unknown-namespace",
            Code::InvalidGlob => "invalid-glob",
            Code::UnclosedPlaceholder => "unclosed-placeholder",
            Code::EmptyTitle => "empty-title",
            Code::InvalidTag => "invalid-tag",
            Code::InvalidControl => "invalid-control",
            Code::EmptyText => "empty-text",
            Code::InvalidRemedy => "invalid-remedy",
            Code::RemedyWithoutReason => "remedy-without-reason",
            Code::EmptyRemedyOptions => "empty-remedy-options",
            Code::RemedyNotWritable => "remedy-not-writable",
            Code::InvalidOverride => "invalid-override",
            Code::DisabledWithoutReason => "disabled-without-reason",
            Code::OverrideMatchesNothing => "override-matches-nothing",
            Code::OverrideParamUnused => "override-param-unused",
            Code::ConflictingOverride => "conflicting-override",
            Code::InvalidForEach => "invalid-for-each",
            Code::WhereBareField => "where-bare-field",
        }
    }

    /// What the code means, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            Code::YamlSyntax => "the text is not valid YAML",
            Code::YamlShape => {
                "valid YAML of the wrong shape: a missing field, a wrong type, an unknown severity"
            }
            Code::DuplicateKey => "a mapping holds the same key twice",
            Code::UnknownField => "a key the policy language does not have",
            Code::DuplicatePolicyId => "a policy id already loaded from another file",
            Code::DuplicateRuleId => "a rule id already defined in this or another policy",
            Code::InvalidRuleId => "a rule id that is empty or holds whitespace",
            Code::InvalidParam => "a parameter default that is not a constant, or a declaration that is not a type",
            Code::ParamType => "a parameter value not of the type the parameter declares",
            Code::UntypedParam => "a parameter declared without a type (a warning)",
            Code::UnknownProfile => "a `profiles:` entry that names no profile",
            Code::UnknownParam => "`params.X` names no parameter of the policy",
            Code::UnknownName => "a name that is no fact, `let` binding or namespace",
            Code::InvalidExpression => "an expression that does not parse",
            Code::InvalidKernelCondition => {
                "an `applies: kernel:` condition that is not `OP VERSION[, OP VERSION]`"
            }
            Code::InvalidAppliesPath => "an `applies` path whose `${}` does not parse",
            Code::AppliesPathNotConstant => {
                "an `applies` path whose `${}` uses host data instead of parameters and constants"
            }
            Code::CheckCount => "a rule without exactly one check",
            Code::SettingWithoutExpect => {
                "`setting` without `expect`, or `expect` without `setting`"
            }
            Code::InvalidSetting => "a `setting` that is not `NAMESPACE.KEY`",
            Code::SettingNotLiteral => "a `setting` whose key is computed rather than written",
            Code::EmptyExpect => "an `expect` with no expectation in it",
            Code::UnknownNamespace => "a `drift` namespace that does not exist",
            Code::InvalidGlob => "a `drift` key pattern that is not a valid glob",
            Code::UnclosedPlaceholder => "a `{` in a template without its `}`",
            Code::EmptyTitle => "a rule whose `title` is empty",
            Code::InvalidTag => "a `tags` entry that is not a lowercase word, or given twice",
            Code::InvalidControl => "a `controls` entry that is not `FRAMEWORK:ITEM`, or given twice",
            Code::EmptyText => "a rule whose `why` or `fix` is empty",
            Code::InvalidRemedy => {
                "a `remedy` that is not exactly one of `set` (with `to`), `remove`, `options`, `none`"
            }
            Code::RemedyWithoutReason => "a `remedy: { none: ... }` without a reason",
            Code::EmptyRemedyOptions => "a `remedy: { options: ... }` that adds and removes nothing",
            Code::RemedyNotWritable => "a `remedy` setting in a namespace `fix` cannot write",
            Code::InvalidOverride => {
                "an `overrides` entry without one target (`rule` or `policy`) or without a change"
            }
            Code::DisabledWithoutReason => "a `disabled` override without the reason",
            Code::OverrideMatchesNothing => {
                "an `overrides` pattern that matches no loaded rule or policy"
            }
            Code::OverrideParamUnused => {
                "an override parameter that no rule or policy it matches has"
            }
            Code::ConflictingOverride => {
                "two files of equal precedence set one value differently"
            }
            Code::InvalidForEach => {
                "a `for_each` that is not one of `param`, `keys`, `records` over a set that exists"
            }
            Code::WhereBareField => {
                "a `where:` naming a record's field bare, read as the bound name's field (a warning)"
            }
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem a policy can have, with what the message needs. `context`
/// names the place in the rule (`assert`, ``let `x` ``, `why placeholder
/// `{x}``); `suggestion` is empty or `, did you mean `x`?`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Problem {
    #[error("{message}")]
    YamlSyntax { message: String },
    #[error("{message}")]
    YamlShape { message: String },
    #[error("duplicate key `{key}`")]
    DuplicateKey { key: String },
    #[error("unknown field `{field}`{hint}")]
    UnknownField { field: String, hint: String },
    #[error("policy id `{id}` is already loaded")]
    DuplicatePolicyId { id: String },
    #[error("duplicate rule id `{id}`: already defined at {previous}")]
    DuplicateRuleId { id: String, previous: String },
    #[error("rule id must be a non-empty word such as `linux.tcp-tw-recycle`")]
    InvalidRuleId,
    #[error("parameter `{name}`: {reason}")]
    InvalidParam { name: String, reason: ConstError },
    #[error("parameter `{name}`: `{value}` is not {allowed}")]
    ParamType {
        name: String,
        value: String,
        allowed: String,
    },
    #[error("unknown profile `{name}`{suggestion}; the profiles are {known}")]
    UnknownProfile {
        name: String,
        known: String,
        suggestion: String,
    },
    #[error(
        "parameter `{name}` declares no type, so any value is taken: declare it as `{suggestion}`"
    )]
    UntypedParam { name: String, suggestion: String },
    #[error("unknown parameter `params.{name}`{suggestion}")]
    UnknownParam { name: String, suggestion: String },
    #[error("{context}: unknown name `{name}`{suggestion}")]
    UnknownName {
        context: String,
        name: String,
        suggestion: String,
    },
    #[error("{context}: {reason}")]
    InvalidExpression { context: String, reason: String },
    #[error("applies.kernel `{text}`: {reason}")]
    InvalidKernelCondition {
        text: String,
        reason: KernelCondError,
    },
    #[error("applies path `{path}`: {reason}")]
    InvalidAppliesPath { path: String, reason: String },
    #[error("applies path `{path}`: `{name}` cannot be used here; only parameters and constants")]
    AppliesPathNotConstant { path: String, name: String },
    #[error("a rule needs exactly one check: `setting` with `expect`, `assert`, or `drift`")]
    CheckCount,
    #[error("`setting` and `expect` go together")]
    SettingWithoutExpect,
    #[error("`setting` must be NAMESPACE.KEY (namespaces: {namespaces}), found `{found}`")]
    InvalidSetting { namespaces: String, found: String },
    #[error("`setting` must name one key literally")]
    SettingNotLiteral,
    #[error(
        "`expect` needs at least one of equals, one_of, not, min, max, gt, lt, present, absent"
    )]
    EmptyExpect,
    #[error("drift: unknown namespace `{name}`{suggestion}")]
    UnknownNamespace { name: String, suggestion: String },
    #[error("drift key pattern `{pattern}`: {reason}")]
    InvalidGlob { pattern: String, reason: String },
    #[error("{context}: `{{` without a closing `}}` (write `{{{{` for a literal brace)")]
    UnclosedPlaceholder { context: String },
    #[error("`title` is empty")]
    EmptyTitle,
    #[error("tag `{tag}`: {reason}")]
    InvalidTag { tag: String, reason: &'static str },
    #[error("benchmark item `{control}`: {reason}")]
    InvalidControl {
        control: String,
        reason: &'static str,
    },
    #[error("`why` and `fix` must say something")]
    EmptyText,
    #[error(
        "`remedy` needs exactly one of `set` (with `to`), `remove`, `options` or `none`{detail}"
    )]
    InvalidRemedy { detail: String },
    #[error("`remedy: none` needs the reason nothing is changed: `remedy: {{ none: REASON }}`")]
    RemedyWithoutReason,
    #[error("`remedy: options` must add or remove at least one mount option")]
    EmptyRemedyOptions,
    #[error("remedy setting `{found}`: `fix` writes only {namespaces}; use `options` for mounts or `none` with a reason")]
    RemedyNotWritable { found: String, namespaces: String },
    #[error("override {detail}")]
    InvalidOverride { detail: String },
    #[error("`for_each` {detail}")]
    InvalidForEach { detail: String },
    #[error("`where:` reads the item by its bound name: `{name}` is read as the record's field; write `{bind}.{name}`")]
    WhereBareField { name: String, bind: String },
    #[error("`disabled` needs the reason the rule is off, as text: `disabled: \"containers share the host kernel\"`")]
    DisabledWithoutReason,
    #[error("override `{what}: {pattern}` matches no loaded {what}{suggestion}")]
    OverrideMatchesNothing {
        what: String,
        pattern: String,
        suggestion: String,
    },
    #[error("override `{pattern}`: {what} `params.{name}`{suggestion}")]
    OverrideParamUnused {
        name: String,
        pattern: String,
        what: String,
        suggestion: String,
    },
    #[error("{target}: {field} `{value}` conflicts with `{other_value}` set at {other}; files of one --policy directory have equal precedence: set it in one file (later entries win) or pass the files as separate --policy arguments (the later one wins)")]
    ConflictingOverride {
        target: String,
        field: String,
        value: String,
        other_value: String,
        other: String,
    },
}

impl Problem {
    /// The stable code of this problem.
    pub fn code(&self) -> Code {
        match self {
            Problem::YamlSyntax { .. } => Code::YamlSyntax,
            Problem::InvalidForEach { .. } => Code::InvalidForEach,
            Problem::WhereBareField { .. } => Code::WhereBareField,
            Problem::YamlShape { .. } => Code::YamlShape,
            Problem::DuplicateKey { .. } => Code::DuplicateKey,
            Problem::UnknownField { .. } => Code::UnknownField,
            Problem::DuplicatePolicyId { .. } => Code::DuplicatePolicyId,
            Problem::DuplicateRuleId { .. } => Code::DuplicateRuleId,
            Problem::InvalidRuleId => Code::InvalidRuleId,
            Problem::InvalidParam { .. } => Code::InvalidParam,
            Problem::ParamType { .. } => Code::ParamType,
            Problem::UntypedParam { .. } => Code::UntypedParam,
            Problem::UnknownProfile { .. } => Code::UnknownProfile,
            Problem::UnknownParam { .. } => Code::UnknownParam,
            Problem::UnknownName { .. } => Code::UnknownName,
            Problem::InvalidExpression { .. } => Code::InvalidExpression,
            Problem::InvalidKernelCondition { .. } => Code::InvalidKernelCondition,
            Problem::InvalidAppliesPath { .. } => Code::InvalidAppliesPath,
            Problem::AppliesPathNotConstant { .. } => Code::AppliesPathNotConstant,
            Problem::CheckCount => Code::CheckCount,
            Problem::SettingWithoutExpect => Code::SettingWithoutExpect,
            Problem::InvalidSetting { .. } => Code::InvalidSetting,
            Problem::SettingNotLiteral => Code::SettingNotLiteral,
            Problem::EmptyExpect => Code::EmptyExpect,
            Problem::UnknownNamespace { .. } => Code::UnknownNamespace,
            Problem::InvalidGlob { .. } => Code::InvalidGlob,
            Problem::UnclosedPlaceholder { .. } => Code::UnclosedPlaceholder,
            Problem::EmptyTitle => Code::EmptyTitle,
            Problem::InvalidTag { .. } => Code::InvalidTag,
            Problem::InvalidControl { .. } => Code::InvalidControl,
            Problem::EmptyText => Code::EmptyText,
            Problem::InvalidRemedy { .. } => Code::InvalidRemedy,
            Problem::RemedyWithoutReason => Code::RemedyWithoutReason,
            Problem::EmptyRemedyOptions => Code::EmptyRemedyOptions,
            Problem::RemedyNotWritable { .. } => Code::RemedyNotWritable,
            Problem::InvalidOverride { .. } => Code::InvalidOverride,
            Problem::DisabledWithoutReason => Code::DisabledWithoutReason,
            Problem::OverrideMatchesNothing { .. } => Code::OverrideMatchesNothing,
            Problem::OverrideParamUnused { .. } => Code::OverrideParamUnused,
            Problem::ConflictingOverride { .. } => Code::ConflictingOverride,
        }
    }
}

/// One problem found while loading policies, placed in its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}:{column}: {}{message}{}",
    .rule.as_ref().map(|r| format!("rule `{r}`: ")).unwrap_or_default(),
    if .snippet.is_empty() { String::new() } else { format!("\n{}", .snippet) })]
pub struct PolicyProblem {
    /// Policy file.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// Rule id, when the problem is inside a rule.
    pub rule: Option<String>,
    /// The stable code of the problem.
    pub code: Code,
    /// Message (lowercase start, user input in backticks, one line).
    pub message: String,
    /// The offending source line(s) with a caret, ready to print.
    pub snippet: String,
}

/// Error from loading policies: every problem found, in file order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy text is invalid: every problem of every file given.
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
}

/// Why a parameter override (`--set NAME=VALUE`,
/// [`PolicySet::set_param`](super::PolicySet::set_param)) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// No `=` in the assignment.
    #[error("`--set {assignment}`: expected NAME=VALUE")]
    NoValue {
        /// The assignment as given.
        assignment: String,
    },
    /// The value is not a constant.
    #[error("`--set {assignment}`: {reason}")]
    BadValue {
        /// The assignment as given.
        assignment: String,
        /// Why the value has none.
        reason: ConstError,
    },
    /// No loaded policy (or not the one named) has the parameter.
    #[error("`--set {assignment}`: no loaded policy has a parameter `{name}`{suggestion}")]
    UnknownParam {
        /// The assignment as given.
        assignment: String,
        /// The parameter name.
        name: String,
        /// Empty or `, did you mean `x`?`.
        suggestion: String,
    },
    /// The value is not of the type the parameter declares.
    #[error("`--set {assignment}`: `{name}` takes {allowed}")]
    WrongType {
        /// The assignment as given.
        assignment: String,
        /// The parameter name.
        name: String,
        /// What the parameter's type allows, with a did-you-mean.
        allowed: String,
    },
    /// The parameter is a list of items (`for_each: { param: ... }`): `--set`
    /// cannot write one; an overlay's `params:` replaces the whole list.
    #[error("`--set {assignment}`: `{name}` is a list parameter (items for `for_each`); `--set` takes one value, so replace the list in a site overlay instead: `overrides: [{{policy: POLICY, params: {{{name}: [...]}}}}]`")]
    ListParam {
        /// The assignment as given.
        assignment: String,
        /// The parameter name.
        name: String,
    },
}

/// Why a rule filter ([`PolicySet::filter`](super::PolicySet::filter),
/// `--only`/`--skip`) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A glob that does not parse.
    #[error("rule pattern `{pattern}`: {reason} near position {position}")]
    BadPattern {
        /// The glob as given.
        pattern: String,
        /// The glob parser's reason.
        reason: String,
        /// 0-based character position of the problem in the glob.
        position: usize,
    },
    /// A `--profile` that names no profile.
    #[error("unknown profile `{name}`{suggestion}; the profiles are {known} (`driftaudit list --profiles`)")]
    UnknownProfile {
        /// The name as given.
        name: String,
        /// The profiles there are, comma-separated.
        known: String,
        /// Empty or `, did you mean `x`?`.
        suggestion: String,
    },
    /// A `policy:GLOB` selector that matches no loaded policy.
    #[error("`{selector}` matches no policy; the loaded policies are {known}")]
    UnknownPolicy {
        /// The selector as given.
        selector: String,
        /// The loaded policies, comma-separated.
        known: String,
    },
    /// A `tag:GLOB` selector that matches no tag of a loaded rule.
    #[error("`{selector}` matches no tag; {known} (`driftaudit list --tags`)")]
    UnknownTag {
        /// The selector as given.
        selector: String,
        /// The tags there are, as a phrase.
        known: String,
    },
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

/// Fields of a rule, for a did-you-mean when the parser names none.
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
    "tags",
    "controls",
    "remedy",
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

/// 1-based line and column of a YAML location (0 is read as 1).
pub(super) fn line_col(at: &serde_saphyr::Location) -> (usize, usize) {
    ((at.line() as usize).max(1), (at.column() as usize).max(1))
}

pub(super) fn problem_at(
    path: &str,
    text: &str,
    line: usize,
    column: usize,
    rule: Option<String>,
    problem: Problem,
) -> PolicyProblem {
    PolicyProblem {
        path: path.to_string(),
        line,
        column,
        rule,
        snippet: snippet(text, line, column),
        code: problem.code(),
        message: problem.to_string(),
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

/// Turn a serde-saphyr error into a problem: its code from the error's
/// kind (never from its text), a did-you-mean for unknown fields.
pub(super) fn yaml_problem(
    path: &str,
    text: &str,
    e: &serde_saphyr::Error,
    syntax: bool,
) -> PolicyProblem {
    let (line, column, message) = yaml_error_parts(e);
    let mut inner = e;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = inner
    {
        inner = error;
    }
    let problem = match inner {
        serde_saphyr::Error::SerdeUnknownField {
            field, expected, ..
        } => {
            let valid: Vec<&str> = if expected.is_empty() {
                RULE_FIELDS.to_vec()
            } else {
                expected.to_vec()
            };
            let s = expr::suggest(field, &valid);
            Problem::UnknownField {
                field: clip(field.clone()),
                hint: if s.is_empty() {
                    clip(format!(", expected one of {}", valid.join(", ")))
                } else {
                    s
                },
            }
        }
        serde_saphyr::Error::DuplicateMappingKey { key: Some(k), .. } => Problem::DuplicateKey {
            key: clip(k.clone()),
        },
        _ if syntax => Problem::YamlSyntax { message },
        // a file's own head: say what every policy file (an overlay too)
        // starts with, not serde's words alone
        _ if ["policy", "title"]
            .iter()
            .any(|f| message.starts_with(&format!("missing field `{f}`")) && column <= 1) =>
        {
            Problem::YamlShape {
                message: format!(
                    "{message}: every policy file, a site overlay too, starts with `policy: ID` \
                     (its name, used in `--set ID.PARAM=VALUE`) and `title: TEXT`"
                ),
            }
        }
        _ => Problem::YamlShape { message },
    };
    problem_at(path, text, line, column, None, problem)
}
