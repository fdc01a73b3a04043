//! JSON renderer: the stable `driftaudit.report/1` document (docs/report-format.md)
//! and its JSON Lines form (one compact host report per line).

use crate::report::Report;

/// Render the report as pretty JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// A whole report as JSON Lines: one compact host report per line.
pub(crate) fn jsonl(report: &Report) -> String {
    let mut out = String::new();
    for h in &report.hosts {
        out.push_str(&serde_json::to_string(h).unwrap_or_default());
        out.push('\n');
    }
    out
}
