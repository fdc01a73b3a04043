//! Markdown renderer for merge-request comments (GitHub/GitLab flavoured):
//! one summary table (a row per host, a column per status), then per host the
//! failures with explanation, evidence and fix, and compact lists of unknown,
//! error and waived findings. Sees only the [`Report`]; never evaluates rules
//! or reads host data.
//!
//! Host data is hostile: every piece of text is escaped so it cannot inject
//! HTML, links, mentions or table cells (`|` is escaped in cells) nor
//! control characters (shown as `\x1b`); code spans written by rule authors
//! are kept.

use std::fmt::Write;

use crate::report::{Finding, HostReport, Report, Status};

/// Escape text for Markdown prose and table cells: newlines become spaces,
/// punctuation that could start markup (`\ * _ [ ] < > | @ ~ & # !`) is
/// backslash-escaped; balanced `` `code` `` spans are kept as written (with
/// only `|` escaped, which GFM tables need even inside code).
pub fn escape(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    // control characters (ESC, BEL, ...) shown as `\x1b`, never passed on
    let flat = super::printable(&flat, false).into_owned();
    let ticks = flat.matches('`').count();
    let mut out = String::with_capacity(flat.len() + 8);
    let mut in_code = false;
    for c in flat.chars() {
        match c {
            '`' if ticks.is_multiple_of(2) => {
                in_code = !in_code;
                out.push(c);
            }
            '`' => out.push_str("\\`"),
            '|' => out.push_str("\\|"),
            _ if in_code => out.push(c),
            '\\' | '*' | '_' | '[' | ']' | '<' | '>' | '@' | '~' | '&' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// A code span holding `s` literally (fence longer than any backtick run in
/// `s`; newlines flattened; `|` escaped so it is safe in a table cell too).
pub fn code(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect::<String>();
    let flat = super::printable(&flat, false).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest + 1);
    if longest > 0 || flat.starts_with(' ') || flat.ends_with(' ') {
        format!("{fence} {flat} {fence}")
    } else {
        format!("{fence}{flat}{fence}")
    }
}

fn evidence(f: &Finding) -> String {
    f.evidence
        .iter()
        .map(|e| code(&e.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Render the report as Markdown.
/// GitHub's limit on the body of an issue or pull-request comment, in
/// characters: a longer body is refused (`gh pr comment` fails), so a report
/// is trimmed to it ([`render`]).
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// The report as a merge-request comment, at most [`GITHUB_COMMENT_LIMIT`]
/// characters: the hosts' table rows and sections that do not fit are left
/// out, whole, and a last line says how many findings on how many hosts
/// are not shown and where they are (the full report in another format).
pub fn render(report: &Report) -> String {
    let mut out = String::from("## driftaudit report\n\n");
    let failing = report.hosts.iter().filter(|h| h.summary.fail > 0).count();
    let fails: usize = report.hosts.iter().map(|h| h.summary.fail).sum();
    let n = report.hosts.len();
    let hosts = if n == 1 { "host" } else { "hosts" };
    let idle = report
        .hosts
        .iter()
        .filter(|h| !h.unevaluated_domains().is_empty())
        .count();
    let _ = match fails {
        0 if idle > 0 => writeln!(
            out,
            "**No failures** in what was evaluated on {n} {hosts}, but on {idle} of them a detected domain had no rule evaluated (see coverage).\n"
        ),
        0 => writeln!(out, "**No failures** on {n} {hosts}.\n"),
        1 => writeln!(out, "**1 failure** on {failing} of {n} {hosts}.\n"),
        f => writeln!(out, "**{f} failures** on {failing} of {n} {hosts}.\n"),
    };
    out.push_str("| host | fail | unknown | error | waived | pass | skip |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    let mut budget = Budget::new(&out);
    let mut rows = Vec::with_capacity(report.hosts.len());
    for h in &report.hosts {
        let s = &h.summary;
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            escape(&h.host),
            s.fail,
            s.unknown,
            s.error,
            s.waived,
            s.pass,
            s.skip
        ));
    }
    let rows_shown = rows.iter().take_while(|r| budget.take(r)).count();
    for r in &rows[..rows_shown] {
        out.push_str(r);
    }
    let mut sections = 0;
    if rows_shown == rows.len() {
        for h in &report.hosts {
            let mut section = String::new();
            host(&mut section, h);
            if !budget.take(&section) {
                break;
            }
            out.push_str(&section);
            sections += 1;
        }
    }
    if sections < report.hosts.len() {
        let left = &report.hosts[sections..];
        let findings: usize = left
            .iter()
            .map(|h| h.summary.fail + h.summary.unknown + h.summary.error + h.summary.waived)
            .sum();
        let rows_left = rows.len() - rows_shown;
        let _ = writeln!(
            out,
            "\n---\n**{findings} more findings** on {} more {}{}: not shown (a GitHub comment holds {GITHUB_COMMENT_LIMIT} characters); see the attached report (`--format json`, `html` or `sarif`).",
            left.len(),
            if left.len() == 1 { "host" } else { "hosts" },
            if rows_left > 0 {
                format!(" ({rows_left} of them left out of the table too)")
            } else {
                String::new()
            }
        );
    }
    out
}

/// Characters left under [`GITHUB_COMMENT_LIMIT`], less room for the
/// closing "more findings" line.
struct Budget {
    left: usize,
}

impl Budget {
    /// Room for the trailer line a trimmed report ends with.
    const TAIL: usize = 300;

    fn new(start: &str) -> Budget {
        Budget {
            left: GITHUB_COMMENT_LIMIT.saturating_sub(start.chars().count() + Budget::TAIL),
        }
    }

    /// Whether `text` fits; if so it is counted.
    fn take(&mut self, text: &str) -> bool {
        let n = text.chars().count();
        if n > self.left {
            return false;
        }
        self.left -= n;
        true
    }
}

fn host(out: &mut String, h: &HostReport) {
    let mut fails: Vec<&Finding> = h
        .findings
        .iter()
        .filter(|f| f.status == Status::Fail)
        .collect();
    let others: Vec<&Finding> = h
        .findings
        .iter()
        .filter(|f| {
            matches!(f.status, Status::Unknown | Status::Error | Status::Waived)
                || f.disabled().is_some()
        })
        .collect();
    // Worst first, then by rule id (findings are already sorted by rule id).
    fails.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let _ = writeln!(out, "\n### {}\n", escape(&h.host));
    coverage(out, h);
    if fails.is_empty() && others.is_empty() {
        return;
    }
    for f in &fails {
        let _ = writeln!(
            out,
            "- **{}** {} {}",
            f.severity.as_str().to_uppercase(),
            code(&f.rule),
            escape(&f.title)
        );
        let mut facts = Vec::new();
        if !f.subject.is_empty() {
            facts.push(
                f.subject
                    .iter()
                    .map(|s| code(s))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        if let Some(e) = f.expected_for_people() {
            facts.push(format!("expected {}", escape(e)));
        }
        if let Some(a) = &f.actual {
            facts.push(format!("actual {}", escape(a)));
        }
        if !f.evidence.is_empty() {
            facts.push(format!("at {}", evidence(f)));
        }
        if !facts.is_empty() {
            let _ = writeln!(out, "  {}", facts.join(" · "));
        }
        let _ = writeln!(out, "\n  {}", escape(f.explanation.trim()));
        if !f.fix.is_empty() {
            let _ = writeln!(out, "\n  **Fix:** {}", escape(f.fix.trim()));
        }
        out.push('\n');
    }
    if fails.is_empty() {
        out.push_str("No failures.\n\n");
    }
    for (status, label) in [
        (Status::Unknown, "Unknown (could not verify)"),
        (Status::Error, "Errors (rule could not be evaluated)"),
        (Status::Waived, "Waived"),
        (Status::Skip, "Disabled by site overlays"),
    ] {
        let list: Vec<&Finding> = others
            .iter()
            .copied()
            .filter(|f| f.status == status)
            // of the skipped, only the disabled: never a silent pass
            .filter(|f| f.status != Status::Skip || f.disabled().is_some())
            .collect();
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "**{label}**\n");
        for f in list {
            let subject = if f.subject.is_empty() {
                String::new()
            } else {
                format!(
                    " ({})",
                    f.subject
                        .iter()
                        .map(|s| code(s))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let detail = match &f.waiver {
                Some(w) => format!(
                    "waived until {}, was {}: {}",
                    escape(&w.expires),
                    w.original_status.as_str(),
                    escape(w.reason.trim())
                ),
                None => escape(f.explanation.trim()),
            };
            let _ = writeln!(out, "- {}{subject}: {detail}", code(&f.rule));
        }
        out.push('\n');
    }
}

/// The coverage table of one host: a row per domain.
fn coverage(out: &mut String, h: &HostReport) {
    out.push_str(
        "| domain | detected from | rules | evaluated | fail | unknown | did not apply |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for c in &h.coverage {
        let from = if c.detected {
            c.sources
                .iter()
                .map(|s| code(s))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            format!("not detected ({})", escape(&c.looked_for))
        };
        let _ = writeln!(
            out,
            "| {} | {from} | {} | {} | {} | {} | {} |",
            c.domain.label(),
            c.rules,
            c.evaluated,
            c.fail,
            c.unknown + c.error,
            c.skip
        );
    }
    if let Some(line) = super::text::hard_links_line(h, code) {
        let line = line.strip_prefix("hard links: ").unwrap_or(&line);
        let _ = writeln!(out, "\n**Hard links:** {line}");
    }
    let idle = h.unevaluated_domains();
    if !idle.is_empty() {
        let names: Vec<&str> = idle.iter().map(|c| c.domain.label()).collect();
        let _ = writeln!(
            out,
            "\n**Not evaluated:** {} detected, but none of its rules reached a verdict.",
            names.join(", ")
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_markup_but_keeps_code_spans() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("<img src=x>"), "\\<img src=x\\>");
        assert_eq!(escape("ping @admin"), "ping \\@admin");
        assert_eq!(escape("[x](http://e)"), "\\[x\\](http://e)");
        assert_eq!(
            escape("set `tcp_tw_recycle = 0`"),
            "set `tcp_tw_recycle = 0`"
        );
        assert_eq!(escape("odd ` tick_x"), "odd \\` tick\\_x");
        assert_eq!(escape("two\nlines"), "two lines");
        assert_eq!(escape("`a|b`"), "`a\\|b`");
        assert_eq!(escape("web\x1b[2J\x07"), "web\\\\x1b\\[2J\\\\x07");
        assert_eq!(code("a\x1bb"), "`a\\x1bb`");
    }

    #[test]
    fn code_span_survives_backticks_and_pipes() {
        assert_eq!(code("/etc/x.conf:4"), "`/etc/x.conf:4`");
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }
}
