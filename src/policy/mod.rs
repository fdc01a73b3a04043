//! Policy model and loader, split the way cargo-deny splits a config: the
//! raw spanned spec ([`spec`]), compilation into [`Rule`]s one section at a
//! time (`compile`), the problems a policy can have (`diagnostics`), and the
//! policy set (files, directories, the built-ins, duplicate ids; `set`).
//! Owns the built-in policies. Must not read host data or evaluate rules.

mod compile;
mod diagnostics;
mod frozen;
mod model;
mod overlay;
mod set;
pub mod spec;
mod values;

pub(crate) use diagnostics::{snippet, yaml_error_parts};
pub use diagnostics::{Code, Problem};
pub use diagnostics::{FilterError, ParamError, PolicyError, PolicyProblem};
pub use model::{
    Applies, Bound, Breakdown, Check, DriftCheck, ExpectOp, ForEach, ForEachSource, Policy, Remedy,
    Rule, RuleSource, Severity, Template, TemplatePart, MAX_FOR_EACH_ITEMS,
};
pub use overlay::{Overridden, OverrideSource, OverrideSpec};
pub use set::{PolicySet, BUILTIN, MAX_POLICY_BYTES, TAG_PREFIX};
pub use spec::{
    json_schema, BreakdownPartSpec, BreakdownSpec, CompareMode, Condition, DriftSpec, Expect,
    ForEachSpec, ParamValue, PolicyFile, RemedyOptionsSpec, RemedySpec, RuleSpec,
};
pub use values::{
    param_text, param_value, parse_kernel_cond, resolve_path, ConstError, KernelCondError,
};
