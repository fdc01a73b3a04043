//! Policy model and loader, split the way cargo-deny splits a config: the
//! raw spanned spec ([`spec`]; `overrides` for the problems an
//! `overrides:` entry has on its own), compilation into [`Rule`]s one section at a
//! time (`compile/`: the file and its rules in `mod.rs`, `checks`, `for_each`,
//! `remedy`, `texts`), the problems a policy can have (`diagnostics`), site
//! overlays applied to compiled rules (`overlay`), the frozen built-ins
//! (`frozen`; the list of built-ins is `builtin`), the profiles a run
//! adds (`profiles`, the table; `choose`, the choice), a list parameter's
//! items compiled at load (`items`), what an upgrade rule
//! judges against (`release`: products, versions, targets), and the policy
//! set (files, directories, the built-ins, duplicate ids, filters; `set`).
//! Owns the built-in policies. Must not read host data or evaluate rules.

mod builtin;
mod choose;
mod compile;
mod diagnostics;
mod frozen;
mod items;
mod model;
mod overlay;
mod overridden;
mod overrides;
mod params;
mod profiles;
mod release;
mod remedy;
mod set;
pub mod spec;
mod values;

pub use builtin::{BUILTIN, POLICY_PREFIX, TAG_PREFIX};
pub(crate) use diagnostics::{snippet, yaml_error_parts};
pub use diagnostics::{Code, Problem};
pub use diagnostics::{FilterError, ParamError, PolicyError, PolicyProblem};
pub use items::{ItemPiece, ItemText, PathText, Unparsed};
pub use model::{
    Applies, Bound, Breakdown, Check, CompareMode, CompiledItem, DriftCheck, Expectation, Filter,
    ForEach, ForEachSource, Overridden, OverrideSource, Policy, Remedy, Rule, RuleSource, Severity,
    Template, TemplatePart, UpgradeCheck, MAX_FOR_EACH_ITEMS,
};
pub use params::{ParamType, TYPE_NAMES};
pub use profiles::{profile, NotRun, Profile, ALL_PROFILE, PROFILES};
pub use release::{Product, Target, Version};
pub(crate) use set::ItemSelection;
pub use set::{freeze_builtins, PolicySet, MAX_POLICY_BYTES};
pub use spec::{
    json_schema, BreakdownPartSpec, BreakdownSpec, Condition, DriftSpec, Expect, ForEachSpec,
    OverrideSpec, ParamValue, PolicyFile, RemedyOptionsSpec, RemedySpec, RuleSpec, TypedParam,
};
pub use values::{
    param_text, param_value, parse_kernel_cond, resolve_path, ConstError, KernelCondError,
};
