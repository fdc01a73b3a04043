//! Renderers: one file per output format. Each sees only the [`Report`] it is
//! handed and returns text; none evaluates rules or reads host data.

use crate::report::Report;

pub mod json;
pub mod junit;
pub mod markdown;
pub mod sarif;
pub mod stream;
pub mod text;

/// Output formats.
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
}

/// Options for rendering.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderOptions {
    /// Use ANSI colours (only on a terminal, never with NO_COLOR).
    pub color: bool,
    /// Also list passing and skipped findings in text output.
    pub verbose: bool,
}

/// Render a report in a format. Every format comes from the same [`Report`].
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
        Format::Text => text::render(report, opts),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report),
        Format::Junit => junit::render(report),
        Format::Markdown => markdown::render(report),
    }
}
