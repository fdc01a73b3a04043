//! JSON renderer: the stable `driftaudit.report/1` document (docs/report-format.md).

use crate::report::Report;

/// Render the report as pretty JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
