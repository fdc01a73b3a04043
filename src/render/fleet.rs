//! The fleet summary as text ([`FleetSummary::render_text`]): one line per
//! rule that any host failed, errored or could not check, with its worst
//! examples, then the host totals; and [`summary_text`], that summary over
//! a report's hosts (`check --summary`). Sees only the summary or the
//! report.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::policy::{PolicySet, Severity};
use crate::report::fleet::FleetSummary;
use crate::report::Report;

/// The fleet summary of a report's hosts as text (`check --summary`): a
/// row for every rule of `policies`, hosts failing at `fail_on`, each host
/// cited by the folder it was read from (`folders`, in report order) or
/// else by its name.
pub(super) fn summary_text(
    report: &Report,
    policies: &PolicySet,
    fail_on: Severity,
    folders: &[PathBuf],
) -> String {
    let mut summary = FleetSummary::new(policies);
    for (i, h) in report.hosts.iter().enumerate() {
        let path = folders
            .get(i)
            .map_or_else(|| h.host.clone(), |d| d.display().to_string());
        summary.add(h, &path, fail_on);
    }
    summary.render_text()
}

impl FleetSummary {
    /// The summary as text: one line per rule that any host failed, errored or
    /// could not check, with its worst examples; then the host totals.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "==> fleet summary ({} hosts)", self.hosts);
        let width = self.rules.keys().map(String::len).max().unwrap_or(0);
        let mut quiet = 0usize;
        // one row per rule: an item alias (a rule's old id) is named under
        // its rule's row, not given a row that repeats part of its counts
        let mut aliases: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for (id, st) in &self.rules {
            if let Some(of) = &st.alias_of {
                aliases.entry(of.as_str()).or_default().push(id.as_str());
            }
        }
        for (id, st) in &self.rules {
            if st.alias_of.is_some() {
                continue;
            }
            if st.hosts_failing + st.hosts_error + st.hosts_unknown + st.hosts_waived == 0 {
                quiet += 1;
                continue;
            }
            let sev = st.severity.map(Severity::as_str).unwrap_or("");
            let _ = write!(
                out,
                "  {id:<width$}  {sev:<8}  {} failing, {} passing",
                st.hosts_failing, st.hosts_passing
            );
            for (n, what) in [
                (st.hosts_unknown, "unknown"),
                (st.hosts_error, "error"),
                (st.hosts_waived, "waived"),
                (st.hosts_skipped, "skipped"),
            ] {
                if n > 0 {
                    let _ = write!(out, ", {n} {what}");
                }
                if what == "unknown" {
                    // a parameter would decide them: say which, and how many
                    for (p, k) in &st.hosts_unknown_decided_by {
                        let _ = write!(out, " ({k} decided by setting {p})");
                    }
                }
            }
            out.push('\n');
            if let Some(a) = aliases.get(id.as_str()) {
                let _ = writeln!(out, "  {:<width$}  aliases: {}", "", a.join(", "));
            }
            // one example a line: the host (its folder when the name differs),
            // how many of its subjects fail, and the fields the rule read on
            // the first of them (what `actual:` shows, never a record)
            for (i, e) in st.worst.iter().enumerate() {
                let label = if i == 0 { "worst:" } else { "" };
                let host = crate::render::quoted_name(&e.host);
                let folder = if e.path == e.host || e.path.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", crate::render::quoted_name(&e.path))
                };
                let failing = if e.failing == 1 {
                    String::new()
                } else {
                    format!(" {} failing, first", e.failing)
                };
                let actual = e
                    .actual
                    .as_deref()
                    .map(|a| truncate(&crate::render::printable(a, false), 72))
                    .unwrap_or_default();
                // `[subject]` as `check` prints it, unless the value names its
                // keys itself (`pool = 25 GiB, dump = OFF`)
                let subject = if e.subject.is_empty() || actual.contains(" = ") {
                    String::new()
                } else {
                    format!(" [{}]", crate::render::quoted_name(&e.subject.join(", ")))
                };
                let actual = if actual.is_empty() {
                    actual
                } else {
                    format!(" {actual}")
                };
                let _ = writeln!(
                    out,
                    "  {:<width$}  {label:<6} {host}{folder}:{failing}{subject}{actual}",
                    ""
                );
            }
        }
        if quiet > 0 {
            let _ = writeln!(
                out,
                "  ({quiet} rules passed or did not apply on every host)"
            );
        }
        for f in &self.run_findings {
            let _ = writeln!(out, "  {}: {}", f.rule, f.explanation);
        }
        let _ = writeln!(
            out,
            "fleet: {} hosts, {} with failures, {} at or above the --fail-on severity",
            self.hosts, self.hosts_failing, self.hosts_failing_at_threshold
        );
        // host names come from directory names: never terminal control
        crate::render::printable(&out, true).into_owned()
    }
}

fn truncate(s: &str, max: usize) -> String {
    let one_line = s.replace(['\n', '\t'], " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let t: String = one_line.chars().take(max).collect();
        format!("{t}…")
    }
}
