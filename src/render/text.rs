//! Text renderer for people: failures first grouped by severity, each with its
//! explanation, evidence and fix; then unknown and error findings; a one-line
//! summary per host, and last the coverage: per domain, detected from what and
//! how many rules were evaluated, unknown or did not apply, with the leading
//! reasons. "no failures" is never printed bare while a detected domain had
//! no rule evaluated. Colour only when asked ([`super::RenderOptions::color`];
//! the CLI decides with anstream: `--color`, NO_COLOR, CLICOLOR,
//! CLICOLOR_FORCE, a terminal), as anstyle styles, never hand-written
//! escapes.
//! Every piece of host or policy text goes through [`super::printable`], so
//! it cannot emit control sequences or split a line; file names with
//! unusual characters are quoted ([`super::quoted_name`]).

use std::fmt::Write;

use anstyle::{AnsiColor, Style};

use crate::policy::Severity;
use crate::report::{DomainCoverage, Finding, HostReport, Report, Status};

use super::{printable, quoted_name};

/// One-line host or policy text, control characters escaped (see [`printable`]).
fn one(s: &str) -> std::borrow::Cow<'_, str> {
    printable(s, false)
}

struct Paint {
    on: bool,
}

impl Paint {
    /// `s` in `style` (an SGR sequence, the text, a reset), or as it is.
    fn c(&self, style: Style, s: &str) -> String {
        if self.on {
            format!("{style}{s}{style:#}")
        } else {
            s.to_string()
        }
    }
}

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
/// Waived and unknown findings.
const ASIDE: Style = AnsiColor::Magenta.on_default();
const ERROR: Style = AnsiColor::Magenta.on_default().bold();

/// Render a report as text.
pub fn render(report: &Report, opts: super::RenderOptions) -> String {
    let p = Paint { on: opts.color };
    let mut out = String::new();
    for (i, h) in report.hosts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        host(&mut out, h, &p, opts.verbose);
    }
    out
}

fn sev_color(s: Severity) -> Style {
    match s {
        Severity::Critical | Severity::High => AnsiColor::Red.on_default().bold(),
        Severity::Medium => AnsiColor::Yellow.on_default(),
        Severity::Low => AnsiColor::Cyan.on_default(),
        Severity::Info => DIM,
    }
}

fn host(out: &mut String, h: &HostReport, p: &Paint, verbose: bool) {
    let src = match h.source {
        crate::host::SourceKind::Live => "live host",
        crate::host::SourceKind::Snapshot => "snapshot",
    };
    let _ = writeln!(
        out,
        "{} {} ({src})",
        p.c(BOLD, "==>"),
        p.c(BOLD, &one(&h.host))
    );
    let mut any = false;
    for sev in Severity::ALL.iter().rev() {
        let fails: Vec<&Finding> = h
            .findings
            .iter()
            .filter(|f| f.status == Status::Fail && f.severity == *sev)
            .collect();
        if fails.is_empty() {
            continue;
        }
        any = true;
        let _ = writeln!(
            out,
            "\n{}",
            p.c(
                sev_color(*sev),
                &format!("{} ({})", sev.as_str().to_uppercase(), fails.len())
            )
        );
        for f in fails {
            finding(out, f, p, "FAIL", sev_color(*sev));
        }
    }
    for (status, label, color) in [
        (Status::Waived, "WAIVED", ASIDE),
        (Status::Unknown, "UNKNOWN", ASIDE),
        (Status::Error, "ERROR", ERROR),
    ] {
        let list: Vec<&Finding> = h.findings.iter().filter(|f| f.status == status).collect();
        if list.is_empty() {
            continue;
        }
        any = true;
        let _ = writeln!(
            out,
            "\n{}",
            p.c(color, &format!("{label} ({})", list.len()))
        );
        for f in list {
            finding(out, f, p, label, color);
        }
    }
    // rules a site overlay turned off: never hidden, even without -v
    let disabled: Vec<&Finding> = h
        .findings
        .iter()
        .filter(|f| f.disabled().is_some())
        .collect();
    if !disabled.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.c(DIM, &format!("DISABLED ({})", disabled.len()))
        );
        for (f, d) in disabled.iter().filter_map(|f| Some((f, f.disabled()?))) {
            let _ = writeln!(
                out,
                "  disabled {}  by {}: {}",
                one(&f.rule),
                one(&d.set_by.to_string()),
                one(&printable(&d.value, true))
            );
        }
    }
    if !any {
        let _ = writeln!(out, "\n{}", all_clear(h));
    }
    if verbose {
        for (status, label) in [(Status::Pass, "PASS"), (Status::Skip, "SKIP")] {
            let list: Vec<&Finding> = h.findings.iter().filter(|f| f.status == status).collect();
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n{}", p.c(DIM, &format!("{label} ({})", list.len())));
            for f in list {
                let explanation = printable(&f.explanation, true);
                let flat: Vec<&str> = explanation.split_whitespace().collect();
                // a rule with several findings (a `for_each` rule's items):
                // each line names its item
                let several = h
                    .findings
                    .iter()
                    .any(|x| x.rule == f.rule && x.subject.first() != f.subject.first());
                let item = match f.subject.first() {
                    Some(s) if several => format!(" [{}]", one(s)),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  {} {}{item}  {}",
                    label.to_lowercase(),
                    one(&f.rule),
                    flat.join(" ")
                );
            }
        }
    }
    let s = &h.summary;
    let mut by_sev = Vec::new();
    for sev in Severity::ALL.iter().rev() {
        let n = h
            .findings
            .iter()
            .filter(|f| f.status == Status::Fail && f.severity == *sev)
            .count();
        if n > 0 {
            by_sev.push(format!("{n} {}", sev.as_str()));
        }
    }
    let fail_detail = if by_sev.is_empty() {
        String::new()
    } else {
        format!(" ({})", by_sev.join(", "))
    };
    let mut waived = if s.waived > 0 {
        format!(", {} waived", s.waived)
    } else {
        String::new()
    };
    if !disabled.is_empty() {
        waived.push_str(&format!(", {} disabled by overlays", disabled.len()));
    }
    let _ = writeln!(
        out,
        "\n{}: {} failed{fail_detail}, {} passed, {} skipped, {} unknown, {} error{}{waived}",
        one(&h.host),
        s.fail,
        s.pass,
        s.skip,
        s.unknown,
        s.error,
        if s.error == 1 { "" } else { "s" }
    );
    coverage(out, h);
}

/// What to say when nothing failed and nothing is unknown: "no failures"
/// only when every detected domain had at least one rule evaluated.
fn all_clear(h: &HostReport) -> String {
    let idle = h.unevaluated_domains();
    if idle.is_empty() {
        if h.coverage.iter().all(|c| c.evaluated == 0) && h.coverage.iter().any(|c| c.rules > 0) {
            return "nothing was evaluated: no rule reached a verdict on this host (see coverage)"
                .into();
        }
        return "no failures".into();
    }
    let names: Vec<&str> = idle.iter().map(|c| c.domain.label()).collect();
    format!(
        "no failures in what was evaluated, but {} {} detected and none of {} rules was evaluated (see coverage)",
        names.join(", "),
        if names.len() == 1 { "was" } else { "were" },
        if names.len() == 1 { "its" } else { "their" }
    )
}

/// The coverage lines: one per domain, then its leading reasons.
fn coverage(out: &mut String, h: &HostReport) {
    if h.coverage.iter().all(|c| c.rules == 0 && !c.detected) && h.hard_links.is_empty() {
        return;
    }
    let _ = writeln!(out, "coverage:");
    if let Some(line) = hard_links_line(h, quoted_name) {
        for (i, l) in wrap(&line, 74).iter().enumerate() {
            let _ = writeln!(out, "  {}{l}", if i == 0 { "" } else { "  " });
        }
    }
    for c in &h.coverage {
        let _ = writeln!(out, "  {}", one(&coverage_line(c)));
        for r in c
            .reasons
            .iter()
            .filter(|r| c.detected || r.status != Status::Skip)
            .take(2)
        {
            let what = match r.status {
                Status::Skip => "did not apply",
                other => other.as_str(),
            };
            let text = format!(
                "{what} ({} rule{}): {}",
                r.rules,
                if r.rules == 1 { "" } else { "s" },
                cut(&one(&r.reason), 400)
            );
            for (i, line) in wrap(&text, 74).iter().enumerate() {
                let _ = writeln!(out, "    {}{line}", if i == 0 { "" } else { "  " });
            }
        }
    }
}

/// Most hard-linked paths named in one coverage line.
const MAX_HARD_LINKS_SHOWN: usize = 10;

/// The coverage note on hard-linked snapshot files, once per host (not on
/// each finding: hard-linked backup trees are common and harmless), or
/// `None` when there are none. Paths are host data: `show` writes each one
/// for the format (quoted, escaped).
pub fn hard_links_line(h: &HostReport, show: impl Fn(&str) -> String) -> Option<String> {
    let n = h.hard_links.len();
    if n == 0 {
        return None;
    }
    let list = h
        .hard_links
        .iter()
        .take(MAX_HARD_LINKS_SHOWN)
        .map(|p| show(p))
        .collect::<Vec<_>>()
        .join(", ");
    let more = n.saturating_sub(MAX_HARD_LINKS_SHOWN);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "hard links: {n} file{} read from the snapshot {} more than one link (st_nlink > 1), and a hard link cannot be told from a file outside the snapshot by its path (bounded by fs.protected_hardlinks; git does not store hard links; docs/snapshot-format.md): {list}{more}",
        if n == 1 { "" } else { "s" },
        if n == 1 { "has" } else { "have" },
    ))
}

/// One domain in words: "Zimbra: detected from captures/zmlocalconfig.txt;
/// 5 rules evaluated (3 failed, 2 passed), 0 unknown".
pub fn coverage_line(c: &DomainCoverage) -> String {
    let head = if c.detected {
        format!(
            "{}: detected from {}",
            c.domain.label(),
            sources(&c.sources)
        )
    } else {
        format!("{}: not detected ({})", c.domain.label(), c.looked_for)
    };
    if c.rules == 0 {
        return format!("{head}; no rules loaded");
    }
    if !c.detected && c.evaluated == 0 && c.unknown == 0 && c.error == 0 {
        return format!(
            "{head}; {} rule{} did not apply",
            c.skip,
            if c.skip == 1 { "" } else { "s" }
        );
    }
    let mut verdicts = Vec::new();
    for (n, word) in [(c.fail, "failed"), (c.pass, "passed"), (c.waived, "waived")] {
        if n > 0 {
            verdicts.push(format!("{n} {word}"));
        }
    }
    let mut text = format!(
        "{head}; {} rule{} evaluated",
        c.evaluated,
        if c.evaluated == 1 { "" } else { "s" }
    );
    if !verdicts.is_empty() {
        text.push_str(&format!(" ({})", verdicts.join(", ")));
    }
    text.push_str(&format!(", {} unknown", c.unknown));
    if c.error > 0 {
        text.push_str(&format!(
            ", {} error{}",
            c.error,
            if c.error == 1 { "" } else { "s" }
        ));
    }
    if c.skip > 0 {
        text.push_str(&format!(", {} did not apply", c.skip));
    }
    text
}

fn sources(s: &[String]) -> String {
    const SHOWN: usize = 4;
    if s.len() <= SHOWN {
        return s.join(", ");
    }
    format!("{} and {} more", s[..SHOWN].join(", "), s.len() - SHOWN)
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max - 1).collect::<String>())
    }
}

/// One line for a host (`check --quiet`): its name, what failed by rule
/// id (each id once, in report order), and the unknown, error and waived
/// counts; `clean` with the passing count when nothing failed.
pub fn quiet_line(h: &crate::report::HostReport) -> String {
    let mut failing: Vec<&str> = Vec::new();
    for f in h.findings.iter().filter(|f| f.status == Status::Fail) {
        if !failing.contains(&f.rule.as_str()) {
            failing.push(&f.rule);
        }
    }
    let s = &h.summary;
    let mut parts = Vec::new();
    if s.fail > 0 {
        parts.push(format!("{} failed ({})", s.fail, failing.join(", ")));
    }
    for (n, what) in [
        (s.unknown, "unknown"),
        (s.error, "errors"),
        (s.waived, "waived"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    if s.fail == 0 {
        parts.insert(0, format!("clean ({} passed)", s.pass));
    }
    format!(
        "{}: {}\n",
        crate::render::quoted_name(&h.host),
        parts.join(", ")
    )
}

fn finding(out: &mut String, f: &Finding, p: &Paint, label: &str, color: Style) {
    let subject = if f.subject.is_empty() {
        String::new()
    } else {
        format!(" [{}]", one(&f.subject.join(", ")))
    };
    let _ = writeln!(
        out,
        "  {} {}{}  {}",
        p.c(color, label),
        p.c(BOLD, &one(&f.rule)),
        subject,
        one(&f.title)
    );
    if let (Some(a), Some(e)) = (&f.actual, f.expected_for_people()) {
        // the text read and each conversion, only where one was applied
        let read = match (&f.actual_raw, f.conversions.as_slice()) {
            (Some(raw), [_, ..]) => {
                let steps: Vec<String> = f
                    .conversions
                    .iter()
                    .map(|c| format!("{} after {}", one(&c.value), c.step))
                    .collect();
                format!(" (`{}` -> {})", one(raw), steps.join(" -> "))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "      actual: {}{read}    expected: {}",
            one(a),
            one(e)
        );
    }
    for e in &f.evidence {
        let _ = writeln!(out, "      at {}", quoted_name(&e.to_string()));
    }
    for line in wrap(&printable(&f.explanation, true), 76) {
        let _ = writeln!(out, "      {line}");
    }
    if !f.fix.is_empty() {
        let mut first = true;
        for line in wrap(&printable(&f.fix, true), 71) {
            let _ = writeln!(out, "      {}{line}", if first { "fix: " } else { "     " });
            first = false;
        }
    }
    if let Some(b) = &f.breakdown {
        for line in bar(b, p.on) {
            let _ = writeln!(out, "      {line}");
        }
    }
    if let Some(w) = &f.waiver {
        let _ = writeln!(
            out,
            "      waived until {}: {} (was {})",
            one(&w.expires),
            one(&w.reason),
            w.original_status.as_str()
        );
    }
}

/// Greedy word wrap; paragraphs (blank-line separated) are kept.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        let mut cur = String::new();
        for w in para.split_whitespace() {
            if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
                lines.push(std::mem::take(&mut cur));
            }
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(w);
        }
        if !cur.is_empty() {
            lines.push(cur);
        }
    }
    lines
}

/// A one-line bar of how a whole divides: `[HHHHPPPPPPPP........]` with a
/// legend; Unicode blocks and colours on a terminal, plain characters otherwise.
pub fn bar(b: &crate::report::BreakdownData, fancy: bool) -> Vec<String> {
    use crate::value::format_size;
    const WIDTH: usize = 50;
    let used: f64 = b.parts.iter().map(|(_, v)| v.max(0.0)).sum();
    let scale = b.total.max(used).max(1.0);
    let rest = b.total - used;
    let glyphs_plain = ['#', '=', '+', '*'];
    let glyphs_fancy = [
        (AnsiColor::Red, '█'),
        (AnsiColor::Yellow, '▓'),
        (AnsiColor::Magenta, '▒'),
        (AnsiColor::Blue, '▚'),
    ]
    .map(|(colour, glyph)| {
        let style = colour.on_default();
        format!("{style}{glyph}{style:#}")
    });
    let mut cells = Vec::new();
    let mut legend = Vec::new();
    let mut filled = 0usize;
    for (i, (label, v)) in b.parts.iter().enumerate() {
        let n = ((v.max(0.0) / scale) * WIDTH as f64).round() as usize;
        let n = n.min(WIDTH - filled);
        filled += n;
        let g = if fancy {
            glyphs_fancy[i % 4].to_string()
        } else {
            glyphs_plain[i % 4].to_string()
        };
        cells.extend(std::iter::repeat_n(g.clone(), n));
        let key = if fancy {
            g
        } else {
            glyphs_plain[i % 4].to_string()
        };
        legend.push(format!(
            "{key} {} {}",
            printable(label, false),
            format_size(*v)
        ));
    }
    let free = if fancy { "░" } else { "." };
    cells.extend(std::iter::repeat_n(free.to_string(), WIDTH - filled));
    let rest_label = printable(&b.rest, false);
    if rest >= 0.0 {
        legend.push(format!("{free} {rest_label} {}", format_size(rest)));
    } else {
        legend.push(format!("{rest_label} over by {}", format_size(-rest)));
    }
    vec![
        format!(
            "{} {}: [{}]",
            printable(&b.label, false),
            format_size(b.total),
            cells.concat()
        ),
        legend.join("  "),
    ]
}
