//! The output formats every command's `--format` is drawn from ([`Format`])
//! and the options a printer takes ([`RenderOptions`]); names and choices
//! only: must not render anything.

use std::path::{Path, PathBuf};

use crate::policy::{PolicySet, Severity};

/// Output formats: the one list every command's `--format` is drawn from
/// (`check` takes all of them, `check --fleet` those that
/// [stream](Format::streams), `diff` those that
/// [render a diff](Format::renders_diff)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Human text.
    Text,
    /// JSON (`driftaudit.report/1`).
    Json,
    /// SARIF 2.1.0 for code scanning (docs/formats.md).
    Sarif,
    /// JUnit XML for CI test reports (docs/formats.md).
    Junit,
    /// Markdown for merge-request comments (docs/formats.md).
    Markdown,
    /// JSON Lines: one compact host report per line.
    Jsonl,
    /// Prometheus text format 0.0.4 for node_exporter's textfile collector
    /// (docs/formats.md).
    Prometheus,
    /// One self-contained HTML page (docs/formats.md).
    Html,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: &'static [Format] = &[
        Format::Text,
        Format::Json,
        Format::Sarif,
        Format::Junit,
        Format::Markdown,
        Format::Jsonl,
        Format::Prometheus,
        Format::Html,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Markdown => "markdown",
            Format::Jsonl => "jsonl",
            Format::Prometheus => "prometheus",
            Format::Html => "html",
        }
    }

    /// Other names `--format` accepts for it.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Format::Markdown => &["md"],
            _ => &[],
        }
    }

    /// A line of help for `--format`, where the name does not say enough.
    pub fn help(self) -> Option<&'static str> {
        match self {
            Format::Jsonl => {
                Some("One host report per line (with --fleet, then one fleet summary line)")
            }
            Format::Prometheus => Some(
                "Prometheus text format for node_exporter's textfile collector (with --fleet, also per-rule failing hosts)",
            ),
            Format::Sarif | Format::Junit | Format::Markdown | Format::Html => Some(
                "One document over every host, held in memory: a fleet or merge of more than 2000 hosts is refused (use --shard)",
            ),
            _ => None,
        }
    }

    /// The most hosts a fleet audit or a merge writes in this format, for a
    /// format that is one document over every host (SARIF, JUnit, Markdown,
    /// HTML): those keep every host report until the end, 0.26 MB a host,
    /// and up to 0.74 MB a host while SARIF, JUnit or HTML is written
    /// (docs/performance.md: 3.7 GB for SARIF of 5,000 hosts), so a larger
    /// run is refused before it is audited instead of exhausting memory. `None`: the format streams, or
    /// keeps only counts (Prometheus).
    pub fn fleet_host_limit(self) -> Option<usize> {
        match self {
            Format::Sarif | Format::Junit | Format::Markdown | Format::Html => {
                Some(WHOLE_DOCUMENT_HOSTS)
            }
            _ => None,
        }
    }

    /// Whether a fleet audit can stream it host by host
    /// ([`FleetWriter`](super::stream::FleetWriter)).
    pub fn streams(self) -> bool {
        matches!(self, Format::Text | Format::Json | Format::Jsonl)
    }

    /// Whether [`diff::render`](super::diff::render) has a form for it.
    pub fn renders_diff(self) -> bool {
        matches!(self, Format::Text | Format::Json)
    }
}

/// [`Format::fleet_host_limit`] of the formats that are one document over
/// every host.
pub const WHOLE_DOCUMENT_HOSTS: usize = 2_000;

/// Options for rendering: what [`render`](super::render) needs besides the
/// report to print it as `check` does, borrowed (the type is `Copy`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions<'a> {
    /// Use ANSI colours (only on a terminal, never with NO_COLOR).
    pub color: bool,
    /// Also list passing and skipped findings in text output.
    pub verbose: bool,
    /// SARIF and JUnit: the repository root (absolute and canonical, as the
    /// CLI resolves the working directory or `--sarif-root`) a snapshot's
    /// files are written relative to; `None`, or a file outside it, gives
    /// an absolute location.
    pub repo_root: Option<&'a Path>,
    /// Text: the report in brief (`check --quiet`, `check --summary`)
    /// instead of every finding; other formats ignore it.
    pub brief: Option<Brief<'a>>,
}

/// A text report in brief ([`RenderOptions::brief`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Brief<'a> {
    /// One line per host: what failed, by rule id, and the counts
    /// (`check --quiet`).
    Quiet,
    /// The fleet summary over the report's hosts (`check --summary`).
    Summary {
        /// The rules audited: each has a row, failed or not.
        policies: &'a PolicySet,
        /// The severity at or above which a host counts as failing.
        fail_on: Severity,
        /// The folder each host was read from, in report order, as the
        /// summary's examples cite them; a host beyond them is cited by
        /// its name.
        folders: &'a [PathBuf],
    },
}
