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
#![warn(missing_docs)]

pub mod catalogue;
pub mod diff;
pub mod engine;
pub mod eval;
pub mod explain;
pub mod expr;
pub mod facts;
pub mod fleet;
pub mod host;
pub mod parse;
pub mod policy;
pub mod reader;
pub mod render;
pub mod report;
pub mod resolve;
pub mod secret;
pub mod snapshot;
pub mod upgrade;
pub mod value;
pub mod waiver;

// Convenience re-exports: the names an embedder needs, at the crate root.
pub use engine::audit;
pub use facts::Evidence;
pub use host::Host;
pub use policy::{PolicyError, PolicySet, Severity};
pub use render::{render, Format, RenderOptions};
pub use report::{Finding, HostReport, Report, Status};
pub use resolve::{
    Assignment, FstabLine, Lookup, MountResolution, MountedFs, OptionLine, OptionResolution,
    Resolver, SysctlResolution,
};
