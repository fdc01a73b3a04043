//! Renderers: one file per output format, and [`render`], the one call that
//! picks the printer for a [`Format`]. Each printer sees only what it is
//! handed (a [`Report`], a host report and the fleet summary for the stream
//! printer, a diff for the diff printer, a compiled rule for `explain`) and
//! returns text; none evaluates rules or reads host data.
//!
//! The files, from the choice to the text:
//! - `format.rs`: the [`Format`] enum every command's `--format` choices come
//!   from, and [`RenderOptions`] (with [`Brief`]: `check --quiet`/`--summary`);
//! - `labels.rs`: one unique, printable label per host ([`unique_labels`]);
//! - one printer per format: `text.rs`, `json.rs` (also JSON Lines),
//!   `sarif.rs`, `junit.rs`, `markdown.rs`, `prometheus.rs`, `html.rs`;
//! - `stream.rs`: a fleet written host by host, and a merged report;
//! - `fleet.rs`, `diff.rs`, `explain.rs`, `policytest.rs`: the fleet summary,
//!   a diff between reports, one compiled rule, a policy test run;
//! - `wrap.rs`: the word wrap of the text report and `explain`.

use std::path::Path;

use crate::report::Report;

pub mod diff;
pub mod explain;
mod fleet;
mod format;
pub mod html;
pub mod json;
pub mod junit;
mod labels;
pub mod markdown;
pub mod policytest;
pub mod prometheus;
pub mod sarif;
pub mod stream;
pub mod text;
mod wrap;

pub use format::{Brief, Format, RenderOptions, WHOLE_DOCUMENT_HOSTS};
pub use labels::unique_labels;

/// Render a report in a format: the one call that picks the printer, for
/// the library and every command. Every format comes from the same
/// [`Report`]; [`RenderOptions`] carries the rest (colour, the repository
/// root of SARIF and JUnit locations, a brief text report).
///
/// ```
/// use driftaudit::{render, Format, RenderOptions, Report};
///
/// let empty = Report::new(vec![], &driftaudit::PolicySet::new());
/// let sarif = render(&empty, Format::Sarif, RenderOptions::default());
/// assert!(sarif.contains("\"version\": \"2.1.0\""));
/// let md = render(&empty, Format::Markdown, RenderOptions::default());
/// assert!(md.contains("| host | fail |"));
/// ```
pub fn render(report: &Report, format: Format, opts: RenderOptions) -> String {
    match format {
        Format::Text => match opts.brief {
            None => text::render(report, opts),
            Some(Brief::Quiet) => report.hosts.iter().map(text::quiet_line).collect(),
            Some(Brief::Summary {
                policies,
                fail_on,
                folders,
            }) => fleet::summary_text(report, policies, fail_on, folders),
        },
        Format::Json => json::render(report),
        Format::Sarif => sarif::render_with(
            report,
            &sarif::SarifOptions {
                root: opts.repo_root.map(Path::to_path_buf),
            },
        ),
        Format::Junit => junit::render_with(report, opts.repo_root),
        Format::Markdown => markdown::render(report),
        Format::Jsonl => json::jsonl(report),
        Format::Prometheus => prometheus::render_at(report, prometheus::now()),
        Format::Html => html::render(report),
    }
}

pub use crate::printable::{printable, quoted_name};
