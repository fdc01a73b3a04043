//! driftaudit: audit Linux hosts for configuration drift. Declarative YAML
//! policies describe safe sysctl, MySQL/MariaDB, Zimbra and storage settings;
//! the engine reads a live host or a snapshot, compares, and explains every
//! finding with the host's own numbers and the file and line that set them.
//!
//! The library is the whole tool; the `driftaudit` binary only parses flags.
//! Build it without the command-line crates with `default-features = false`.
//!
//! The flow reads like the domain: load a [`PolicySet`] (built-ins, files,
//! directories or strings), open a [`Host`] (the live machine or a snapshot
//! directory), [`audit`] it into a [`Report`] of [`Finding`]s, and [`render()`]
//! the report in any [`Format`] (text, JSON, SARIF, JUnit, Markdown).
//!
//! ```
//! use driftaudit::{audit, render, Format, Host, PolicySet, RenderOptions, Status};
//!
//! let policies = PolicySet::builtin()?;
//! let host = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/nat-story"))?;
//! let report = audit(&policies, &[host]);
//!
//! for h in &report.hosts {
//!     for f in h.findings.iter().filter(|f| f.status == Status::Fail) {
//!         let at = f.evidence.first().map(|e| e.path.as_str()).unwrap_or("-");
//!         println!("{} {} [{}] at {at}: {}", h.host, f.rule, f.severity, f.explanation);
//!     }
//! }
//! assert!(report.hosts[0]
//!     .findings
//!     .iter()
//!     .any(|f| f.rule == "linux.tcp-tw-recycle" && f.status == Status::Fail));
//!
//! let json = render(&report, Format::Json, RenderOptions::default());
//! assert!(json.starts_with('{'));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/embed.rs` shows a tool with its own policy given as a string.
//!
//! A [`Resolver`] answers "what is the effective value of X on this host, and
//! every place that set it" for sysctl keys, MySQL/MariaDB options and mount
//! points, as data a tool can edit by (docs/library.md).
//!
//! The crate-root items are the whole stable API (listed in
//! `tests/public-api.txt`); every module is internal. driftaudit's own CLI,
//! tests, benches and fuzz targets reach the internals through a hidden
//! `unstable` module that carries no semver promise.
#![warn(missing_docs)]

// Every module is internal: the stable surface is the re-exports below, and
// `unstable` reaches the rest for the CLI, tests, benches and fuzz targets.
pub(crate) mod baseline;
pub(crate) mod catalogue;
pub(crate) mod diff;
pub(crate) mod engine;
pub(crate) mod expr;
pub(crate) mod facts;
pub(crate) mod fix;
pub(crate) mod fleet;
pub(crate) mod host;
pub(crate) mod parse;
pub(crate) mod policy;
pub(crate) mod policytest;
pub(crate) mod printable;
pub(crate) mod reader;
pub(crate) mod render;
pub(crate) mod report;
pub(crate) mod resolve;
pub(crate) mod secret;
pub(crate) mod shell;
pub(crate) mod snapshot;
pub(crate) mod upgrade;
pub(crate) mod value;
pub(crate) mod waiver;

// The stable public API: entry points and the types their signatures and
// fields need. tests/library_api.rs pins this list (tests/public-api.txt).
pub use diff::{
    diff, Change, ChangeKind, Diff, DiffOptions, FileChange, FileNotCompared, Side, SideMeta,
    VerdictChange,
};
pub use engine::{audit, audit_upgrade};
pub use facts::{Detection, Domain, Evidence};
pub use fleet::{audit_fleet, DiscoverError};
pub use host::{Host, ReadError, SourceKind};
pub use policy::{
    Code as PolicyCode, Overridden, OverrideSource, PolicyError, PolicyProblem, PolicySet,
    RuleSource, Severity,
};
pub use render::diff::render as render_diff;
pub use render::explain::explain_rule;
pub use render::{render, Brief, Format, RenderOptions};
pub use report::{
    BreakdownData, CoverageReason, DomainCoverage, DriftData, Finding, HostReport, Report,
    RuleMeta, Status, Summary, WaiverNote,
};
pub use resolve::{
    Assignment, FstabLine, Lookup, MountResolution, MountedFs, OptionLine, OptionResolution,
    Resolver, SysctlResolution,
};
pub use snapshot::{
    read_running_mysql, take as snapshot, MysqlConnection, SnapshotMeta, SnapshotOptions,
    Unreadable,
};
pub use upgrade::{Target as UpgradeTarget, TargetError as UpgradeTargetError};
pub use value::Value;
pub use waiver::{Waiver, WaiverError, WaiverSet};

/// driftaudit's internals, for its own command-line tool, tests, benches and
/// fuzz targets. **No semver promise**: anything here may change or vanish
/// in any release. Embedders use the crate-root items.
#[doc(hidden)]
pub mod unstable {
    /// Internal: no semver promise.
    pub mod baseline {
        pub use crate::baseline::*;
    }
    /// Internal: no semver promise.
    pub mod catalogue {
        pub use crate::catalogue::*;
    }
    /// Internal: no semver promise.
    pub mod diff {
        pub use crate::diff::*;
    }
    /// Internal: no semver promise.
    pub mod engine {
        pub use crate::engine::*;
    }
    /// Internal: no semver promise.
    pub mod eval {
        pub use crate::expr::eval::*;
    }
    /// Internal: no semver promise.
    pub mod explain {
        pub use crate::render::explain::*;
    }
    /// Internal: no semver promise.
    pub mod expr {
        pub use crate::expr::*;
    }
    /// Internal: no semver promise.
    pub mod facts {
        pub use crate::facts::*;
    }
    /// Internal: no semver promise.
    pub mod fix {
        pub use crate::fix::*;
    }
    /// Internal: no semver promise.
    pub mod fleet {
        pub use crate::fleet::*;
    }
    /// Internal: no semver promise.
    pub mod host {
        pub use crate::host::*;
    }
    /// Internal: no semver promise.
    pub mod parse {
        pub use crate::parse::*;
    }
    /// Internal: no semver promise.
    pub mod policy {
        pub use crate::policy::*;
    }
    /// Internal: no semver promise.
    pub mod policytest {
        pub use crate::policytest::*;
    }
    /// Internal: no semver promise.
    pub mod reader {
        pub use crate::reader::*;
    }
    /// Internal: no semver promise.
    pub mod render {
        pub use crate::render::*;
    }
    /// Internal: no semver promise.
    pub mod report {
        pub use crate::report::*;
    }
    /// Internal: no semver promise.
    pub mod secret {
        pub use crate::secret::*;
    }
    /// Internal: no semver promise.
    pub mod snapshot {
        pub use crate::snapshot::*;
    }
    /// Internal: no semver promise.
    pub mod upgrade {
        pub use crate::upgrade::*;
    }
    /// Internal: no semver promise.
    pub mod value {
        pub use crate::value::*;
    }
    /// Internal: no semver promise.
    pub mod waiver {
        pub use crate::waiver::*;
    }
}
