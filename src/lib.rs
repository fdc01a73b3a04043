//! driftaudit: audit Linux hosts for configuration drift. Declarative YAML
//! policies describe safe sysctl, MySQL/MariaDB, Zimbra and storage settings;
//! the engine reads a live host or a snapshot, compares, and explains every
//! finding with the host's own numbers and the file and line that set them.
#![warn(missing_docs)]

pub mod diff;
pub mod engine;
pub mod explain;
pub mod expr;
pub mod facts;
pub mod host;
pub mod parse;
pub mod policy;
pub mod render;
pub mod report;
pub mod snapshot;
pub mod value;
pub mod waiver;
