//! The difference between two hosts as data (`driftaudit.diff/1`): setting
//! changes with provenance on both sides, verdict changes, file changes and
//! the files that could not be compared. Built by `diff`, printed by
//! `render/diff.rs`; computes nothing and reads no host.

use serde::Serialize;

use crate::facts::Evidence;
use crate::policy::Severity;
use crate::report::{Finding, Status};

/// Schema id of the JSON diff.
pub const DIFF_SCHEMA: &str = "driftaudit.diff/1";

/// Header data of one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SideMeta {
    /// Host name.
    pub host: String,
    /// `live` or the snapshot directory as given.
    pub source: String,
}

/// Kind of a setting change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Present on both sides with different values.
    Changed,
    /// Only on the after side.
    Added,
    /// Only on the before side.
    Removed,
}

impl ChangeKind {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Changed => "changed",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
        }
    }
}

/// One setting or fact that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Canonical key (sysctl key, option name, mount point, fact name, path).
    pub subject: String,
    /// Namespace (`sysctl`, `sysctl_boot`, `mycnf`, ..., `facts`, `du`, `paths`).
    pub namespace: String,
    /// Changed, added or removed.
    pub kind: ChangeKind,
    /// Value before (absent when added).
    pub before: Option<String>,
    /// Value after (absent when removed).
    pub after: Option<String>,
    /// Where the before value was set.
    pub evidence_before: Vec<Evidence>,
    /// Where the after value was set.
    pub evidence_after: Vec<Evidence>,
}

/// A finding whose verdict changed, with the status on both sides
/// (`null` when the finding does not exist on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictChange {
    /// Status before.
    pub before_status: Option<Status>,
    /// Status after.
    pub after_status: Option<Status>,
    /// The finding (after side, or before side when it vanished).
    #[serde(flatten)]
    pub finding: Finding,
}

/// A captured file that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Host path.
    pub path: String,
    /// Changed, added or removed.
    pub kind: ChangeKind,
    /// Unified diff (changed files only).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub unified: String,
}

/// A captured file `diff --files` could not compare, and why: the
/// comparison is incomplete, which the output and the exit status say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileNotCompared {
    /// Host path (`*` for files left unlisted beyond the listing cap).
    pub path: String,
    /// The side that could not be read: `before`, `after` or `both`.
    pub side: &'static str,
    /// Why (the read error, such as the spent read budget of the host).
    pub reason: String,
}

/// What `diff --files` found: the files that differ and the files it could
/// not compare.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilesDiff {
    /// Files that differ.
    pub changes: Vec<FileChange>,
    /// Files that could not be compared.
    pub not_compared: Vec<FileNotCompared>,
}

/// A server or kernel version that differs between the sides: an upgrade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionChange {
    /// What changed: `mysql_version` or `kernel_release`.
    pub fact: String,
    /// Version before (absent when unknown on that side).
    pub before: Option<String>,
    /// Version after.
    pub after: Option<String>,
}

/// An effective value that changed only because the release changed its
/// default: no option file sets it on either side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefaultDrivenChange {
    /// The variable.
    pub subject: String,
    /// Value before: the runtime value, else the default the data gives.
    pub before: String,
    /// Value after.
    pub after: String,
    /// `runtime` when both values come from the runtime captures, `data`
    /// when they are the defaults of policies/upgrade (no capture).
    pub from: &'static str,
    /// The release that changed the default.
    pub changed_in: String,
    /// The vendor page the change is cited from.
    pub reference: String,
}

/// The whole difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Always [`DIFF_SCHEMA`].
    pub schema: &'static str,
    /// Whether both sides are the same host (by name).
    pub same_host: bool,
    /// Server and kernel versions that differ (an upgrade), first in the text form.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionChange>,
    /// Effective values that changed only because a default changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub default_driven: Vec<DefaultDrivenChange>,
    /// Before side.
    pub before: SideMeta,
    /// After side.
    pub after: SideMeta,
    /// Settings and facts that differ.
    pub changes: Vec<Change>,
    /// Findings that fail after but did not before.
    pub regressions: Vec<VerdictChange>,
    /// Findings that failed before and pass, are skipped or are gone after.
    pub fixes: Vec<VerdictChange>,
    /// Findings only on the after side (not failing).
    pub new: Vec<VerdictChange>,
    /// Findings only on the before side (not failing).
    pub vanished: Vec<VerdictChange>,
    /// Other verdict changes (e.g. pass -> unknown, fail -> waived).
    pub other: Vec<VerdictChange>,
    /// File differences (only with `--files`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<FileChange>>,
    /// Files `--files` could not compare, with the reason (only with
    /// `--files`; empty when every file was compared).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_not_compared: Option<Vec<FileNotCompared>>,
}

impl Diff {
    /// Whether a regression at or above `sev` appeared.
    pub fn regresses_at(&self, sev: Severity) -> bool {
        self.regressions.iter().any(|r| r.finding.severity >= sev)
    }

    /// Whether `--files` left files uncompared (the CLI exits 1: the
    /// comparison asked for is incomplete).
    pub fn files_incomplete(&self) -> bool {
        self.files_not_compared
            .as_ref()
            .is_some_and(|n| !n.is_empty())
    }
}
