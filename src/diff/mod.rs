//! `driftaudit diff`: the semantic difference between two hosts (snapshots or
//! live) gathered with the same policies: every setting of every namespace in
//! [`Facts`], host facts, directory sizes and tested paths, with provenance on
//! both sides; the rule verdicts that changed; and, on request, unified diffs
//! of the captured files. Applies waivers to both sides' verdicts. The
//! result is report data (`report/diff.rs`, re-exported here) and its text
//! and JSON forms are in `render/diff.rs`. Reads hosts only through
//! [`Host`]; no rule logic here (verdicts come from the engine), prints
//! nothing.
//!
//! The folder's rooms, in the order data flows (this file opens the sides
//! and makes the [`Diff`] from the others' answers):
//!
//! - `versions`: the server and kernel versions that changed, and the
//!   MySQL/MariaDB values that changed only with the release's defaults.
//! - `settings`: every setting, host fact, directory size and tested path
//!   that differs, values compared loosely and option names as the server
//!   reads them.
//! - `verdicts`: the findings of both sides paired and sorted into
//!   regressions, fixes, new, vanished and other.
//! - `files`: `--files`, the captured files of each side listed, read one
//!   at a time and shown as bounded unified diffs.

use crate::engine;
use crate::facts::Facts;
use crate::host::{Host, ReadError};
use crate::policy::PolicySet;
use crate::report::{HostReport, Report};
use crate::waiver::WaiverSet;

mod files;
mod settings;
mod verdicts;
mod versions;

pub use crate::render::diff::{render_json, render_text};
pub use crate::report::diff::{
    Change, ChangeKind, DefaultDrivenChange, Diff, FileChange, FileNotCompared, FilesDiff,
    SideMeta, VerdictChange, VersionChange, DIFF_SCHEMA,
};
pub use files::{
    diff_files, diff_hosts_files, side_files, side_paths, MAX_DIFF_FILE_BYTES, MAX_DIFF_LINE,
    MAX_UNIFIED_BYTES,
};
pub use settings::{diff_facts, same_value};
pub use verdicts::{diff_verdicts, Verdicts};
pub use versions::{default_driven, version_changes};

use files::{diff_hosts_files_with, unreadable_files};

/// One side of a diff: a snapshot directory or the live host.
#[derive(Debug, Clone)]
pub struct Side {
    /// As given on the command line (`live` or the directory).
    pub label: String,
    /// The host (a recording live host, so `--files` knows what was read).
    pub host: Host,
}

/// Why a diff could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiffError {
    /// A side is neither `live` nor a snapshot that can be opened.
    #[error("`{side}`: {source}")]
    Open {
        /// The side as given.
        side: String,
        /// Why it cannot be opened.
        source: ReadError,
    },
}

impl Side {
    /// `live` or a snapshot directory.
    pub fn open(spec: &str) -> Result<Side, DiffError> {
        let host = if spec == "live" {
            Host::recording()
        } else {
            Host::snapshot(spec).map_err(|source| DiffError::Open {
                side: spec.to_string(),
                source,
            })?
        };
        Ok(Side {
            label: spec.to_string(),
            host,
        })
    }
}

/// Options of [`diff`].
#[derive(Debug, Clone, Copy, Default)]
pub struct DiffOptions<'a> {
    /// Add unified diffs of changed files.
    pub files: bool,
    /// Waivers applied to both sides' reports before verdicts are compared.
    pub waivers: Option<&'a WaiverSet>,
    /// Today's date for waiver expiry (`YYYY-MM-DD`).
    pub today: &'a str,
}

/// Gather both sides with the same policies, evaluate, and compare.
pub fn diff(policies: &PolicySet, before: &Side, after: &Side, opts: &DiffOptions) -> Diff {
    // every namespace, and every live kernel key: a runtime change is a
    // change whether or not a rule reads that key
    let mut needs = engine::needs(policies);
    for depth in 1..=8 {
        needs.sysctl_globs.insert(vec!["*"; depth].join("."));
    }
    needs.namespaces.extend(
        crate::catalogue::NAMESPACES
            .iter()
            .map(|n| n.name.to_string()),
    );
    let fb = crate::facts::gather(&before.host, &needs);
    let fa = crate::facts::gather(&after.host, &needs);
    let mut rb = Report::new(vec![engine::evaluate(policies, &fb)], policies);
    let mut ra = Report::new(vec![engine::evaluate(policies, &fa)], policies);
    if let Some(w) = opts.waivers {
        w.apply(&mut rb, opts.today);
        w.apply(&mut ra, opts.today);
    }
    let empty = |f: &Facts| HostReport::new(f.host.clone(), f.source, Vec::new());
    // Waiver housekeeping (expired/stale waivers) is not a host change.
    let hosts_only = |mut h: HostReport| {
        h.findings.retain(|f| f.rule != crate::waiver::WAIVER_RULE);
        h
    };
    let hb = hosts_only(rb.hosts.pop().unwrap_or_else(|| empty(&fb)));
    let ha = hosts_only(ra.hosts.pop().unwrap_or_else(|| empty(&fa)));
    let v = diff_verdicts(&hb, &ha);
    let files = opts.files.then(|| {
        diff_hosts_files_with(
            &before.host,
            &after.host,
            &unreadable_files(&fb),
            &unreadable_files(&fa),
        )
    });
    let (files, files_not_compared) = match files {
        Some(f) => (Some(f.changes), Some(f.not_compared)),
        None => (None, None),
    };
    Diff {
        schema: DIFF_SCHEMA,
        same_host: fb.host == fa.host,
        before: SideMeta {
            host: fb.host.clone(),
            source: before.label.clone(),
        },
        after: SideMeta {
            host: fa.host.clone(),
            source: after.label.clone(),
        },
        versions: version_changes(&fb, &fa),
        default_driven: default_driven(&fb, &fa),
        changes: diff_facts(&fb, &fa),
        regressions: v.regressions,
        fixes: v.fixes,
        new: v.new,
        vanished: v.vanished,
        other: v.other,
        files,
        files_not_compared,
    }
}
