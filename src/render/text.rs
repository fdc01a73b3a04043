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

use super::wrap::wrap_into;
use super::{printable, quoted_name};
use crate::printable::{is_printable, push_printable, push_quoted_name};

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

    /// `s` made printable, in `style`, onto `out`: what `self.c(style,
    /// &one(s))` gives, without its strings.
    fn put(&self, out: &mut String, style: Style, s: &str) {
        if self.on {
            let _ = write!(out, "{style}");
        }
        push_printable(out, s, false);
        if self.on {
            let _ = write!(out, "{style:#}");
        }
    }
}

const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
/// Waived and unknown findings.
const ASIDE: Style = AnsiColor::Magenta.on_default();
const ERROR: Style = AnsiColor::Magenta.on_default().bold();

/// Render a report as text.
pub fn render(report: &Report, opts: super::format::RenderOptions) -> String {
    let p = Paint { on: opts.color };
    // about what a host's report takes, so the text is seldom copied to grow
    let size: usize = report
        .hosts
        .iter()
        .map(|h| 2048 + 320 * h.findings.len())
        .sum();
    let mut out = String::with_capacity(size);
    for (i, h) in report.hosts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        host(&mut out, h, &p, opts.verbose, &report.selection);
    }
    out
}

/// The benchmarks this run left out and how to add them, the last line
/// of the coverage ("benchmarks not run: --profile cis-l1-server +17
/// rules, ..."), or `None` when every rule ran: never a silent all-clear on
/// what was not judged.
pub fn not_run_line(s: &crate::report::Selection) -> Option<String> {
    if s.benchmark_rules_left_out == 0 {
        return None;
    }
    let mut adds: Vec<String> = s
        .profiles_not_run
        .iter()
        .map(|n| format!("{} +{}", n.profile, n.rules))
        .collect();
    adds.push(format!("all +{}", s.benchmark_rules_left_out));
    Some(format!(
        "benchmarks not run: --profile {} rules (driftaudit list --profiles)",
        adds.join(", ")
    ))
}

fn sev_color(s: Severity) -> Style {
    match s {
        Severity::Critical | Severity::High => AnsiColor::Red.on_default().bold(),
        Severity::Medium => AnsiColor::Yellow.on_default(),
        Severity::Low => AnsiColor::Cyan.on_default(),
        Severity::Info => DIM,
    }
}

fn host(
    out: &mut String,
    h: &HostReport,
    p: &Paint,
    verbose: bool,
    selection: &crate::report::Selection,
) {
    let src = match h.source {
        crate::host::SourceKind::Live => "live host",
        crate::host::SourceKind::Snapshot => "snapshot",
    };
    p.put(out, BOLD, "==>");
    out.push(' ');
    p.put(out, BOLD, &h.host);
    let _ = writeln!(out, " ({src})");
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
        findings(out, &fails, p, "FAIL", sev_color(*sev));
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
        findings(out, &list, p, label, color);
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
    if let Some(line) = not_run_line(selection) {
        wrap_into(out, &line, 74, "  ", "    ");
    }
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
        wrap_into(out, &line, 74, "  ", "    ");
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
            wrap_into(out, &text, 74, "    ", "      ");
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

/// A list of findings, a rule's findings over several subjects (one per
/// interface of `linux.rp-filter`) under one heading where [`groupable`],
/// at the place of the rule's first finding; the others one by one.
fn findings(out: &mut String, list: &[&Finding], p: &Paint, label: &str, color: Style) {
    let mut rules: Vec<(&str, Vec<&Finding>)> = Vec::new();
    for f in list {
        match rules.iter_mut().find(|(r, _)| *r == f.rule) {
            Some((_, fs)) => fs.push(f),
            None => rules.push((&f.rule, vec![f])),
        }
    }
    for (_, fs) in rules {
        if groupable(&fs) {
            group(out, &fs, p, label, color);
        } else {
            for f in fs {
                finding(out, f, p, label, color);
            }
        }
    }
}

/// Findings of one rule over many subjects: three or more (two stay whole),
/// each with an actual value and a subject name of its own that tells it
/// from the others (`eth0`), none with a waiver or a breakdown to show, and
/// one fix for all but for each one's own names and values (so the first's
/// stands for the rest: `upgrade.*.default-changed`, whose fix differs per
/// option, stays one by one).
fn groupable(fs: &[&Finding]) -> bool {
    if !(fs.len() >= 3
        && fs
            .iter()
            .all(|f| f.actual.is_some() && f.waiver.is_none() && f.breakdown.is_none())
        && own_names(fs).is_some())
    {
        return false;
    }
    // the first's shape once; it is alike itself
    let first = fix_shape(fs, fs[0]);
    let first: Vec<&str> = first.split_whitespace().collect();
    fs[1..].iter().all(|f| alike(&fix_shape(fs, f), &first))
}

/// Whether two fixes say nearly the same words: at least nine in ten of the
/// longer one's words are in the other (`b`, split at whitespace: one name
/// a template wrote twice, `conf.default` in the `default` interface's fix,
/// is not a different fix; an option's own advice is).
fn alike(a: &str, b: &[&str]) -> bool {
    let mut rest: Vec<&str> = b.to_vec();
    let mut words = 0;
    let mut common = 0;
    for w in a.split_whitespace() {
        words += 1;
        if let Some(i) = rest.iter().position(|r| *r == w) {
            rest.swap_remove(i);
            common += 1;
        }
    }
    let longer = words.max(b.len());
    common * 10 >= longer * 9
}

/// A finding's fix with its own subject names, expected and actual values
/// taken out (longest first, so `eth1/100` goes before `eth1`).
fn fix_shape(fs: &[&Finding], f: &Finding) -> String {
    let mut own: Vec<&str> = f
        .subject
        .iter()
        .filter(|s| !fs.iter().all(|g| g.subject.contains(s)))
        .map(String::as_str)
        .chain(f.expected_for_people())
        .chain(f.actual.as_deref())
        .filter(|s| !s.is_empty())
        .collect();
    own.sort_by_key(|s| std::cmp::Reverse(s.len()));
    own.iter()
        .fold(f.fix.clone(), |fix, s| fix.replace(s, "\u{0}"))
}

/// Each finding's first subject not all of them share, if every one has one
/// and no two are the same.
fn own_names<'a>(fs: &[&'a Finding]) -> Option<Vec<&'a str>> {
    let mut names: Vec<&str> = Vec::new();
    for f in fs {
        let name = f
            .subject
            .iter()
            .find(|s| !fs.iter().all(|g| g.subject.contains(s)))?;
        if names.contains(&name.as_str()) {
            return None;
        }
        names.push(name);
    }
    Some(names)
}

/// `names` made printable and joined by `, `, in brackets after a space
/// (as one string made printable: escaping is character by character).
fn push_names<S: AsRef<str>>(out: &mut String, names: &[S]) {
    out.push_str(" [");
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_printable(out, n.as_ref(), false);
    }
    out.push(']');
}

/// A piece of evidence (`file:line`) as [`quoted_name`] shows it.
fn push_evidence(out: &mut String, e: &crate::facts::Evidence) {
    let start = out.len();
    let _ = write!(out, "{e}");
    if !is_printable(&out[start..], false) {
        let shown = out.split_off(start);
        push_quoted_name(out, &shown);
    }
}

/// A finding's explanation and fix, wrapped under it.
fn explanation_and_fix(out: &mut String, f: &Finding) {
    wrap_into(
        out,
        &printable(&f.explanation, true),
        76,
        "      ",
        "      ",
    );
    if !f.fix.is_empty() {
        wrap_into(
            out,
            &printable(&f.fix, true),
            71,
            "      fix: ",
            "           ",
        );
    }
}

/// One rule over several subjects: the rule id, title and the subjects all
/// share once; the expectation once when it is the same for all; a line per
/// subject with what differs (its subjects, actual, file:line); then the
/// first one's explanation and fix (each one's own: `--format json`).
fn group(out: &mut String, fs: &[&Finding], p: &Paint, label: &str, color: Style) {
    let first = fs[0];
    let shared: Vec<&String> = first
        .subject
        .iter()
        .filter(|s| fs.iter().all(|f| f.subject.contains(s)))
        .collect();
    out.push_str("  ");
    p.put(out, color, label);
    out.push(' ');
    p.put(out, BOLD, &first.rule);
    if !shared.is_empty() {
        push_names(out, &shared);
    }
    out.push_str("  ");
    push_printable(out, &first.title, false);
    let _ = writeln!(out, "  ({} subjects)", fs.len());
    let expected = first.expected_for_people();
    let same_expected = fs.iter().all(|f| f.expected_for_people() == expected);
    if let (Some(e), true) = (expected, same_expected) {
        out.push_str("      expected: ");
        push_printable(out, e, false);
        out.push('\n');
    }
    for e in first
        .evidence
        .iter()
        .filter(|e| fs.iter().all(|f| f.evidence.contains(e)))
    {
        out.push_str("      at ");
        push_evidence(out, e);
        out.push('\n');
    }
    // a subject by the first name of its own (`eth0`), which groupable
    // made sure tells it from the others
    let names = own_names(fs).unwrap_or_default();
    let tag = |out: &mut String, i: usize| {
        if let Some(n) = names.get(i) {
            out.push('[');
            push_printable(out, n, false);
            out.push_str("] ");
        }
    };
    for (i, f) in fs.iter().enumerate() {
        let start = out.len();
        out.push_str("      ");
        tag(out, i);
        if let Some(a) = &f.actual {
            out.push_str("actual: ");
            push_printable(out, a, false);
            read(out, f);
        }
        if !same_expected {
            if let Some(e) = f.expected_for_people() {
                out.push_str("    expected: ");
                push_printable(out, e, false);
            }
        }
        let mut at = f
            .evidence
            .iter()
            .filter(|e| !fs.iter().all(|g| g.evidence.contains(e)));
        if let Some(e) = at.next() {
            out.push_str("    at ");
            push_evidence(out, e);
            for e in at {
                out.push_str(", ");
                push_evidence(out, e);
            }
        }
        // the line without trailing whitespace
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
        out.push('\n');
    }
    let alike = fs
        .iter()
        .all(|f| f.explanation == first.explanation && f.fix == first.fix);
    if !alike {
        out.push_str("      for ");
        tag(out, 0);
        out.push_str("(each subject's own in --format json):\n");
    }
    explanation_and_fix(out, first);
}

/// The text read and each conversion, only where one was applied.
fn read(out: &mut String, f: &Finding) {
    if let (Some(raw), [_, ..]) = (&f.actual_raw, f.conversions.as_slice()) {
        out.push_str(" (`");
        push_printable(out, raw, false);
        out.push_str("` -> ");
        for (i, c) in f.conversions.iter().enumerate() {
            if i > 0 {
                out.push_str(" -> ");
            }
            push_printable(out, &c.value, false);
            let _ = write!(out, " after {}", c.step);
        }
        out.push(')');
    }
}

fn finding(out: &mut String, f: &Finding, p: &Paint, label: &str, color: Style) {
    out.push_str("  ");
    p.put(out, color, label);
    out.push(' ');
    p.put(out, BOLD, &f.rule);
    if !f.subject.is_empty() {
        push_names(out, &f.subject);
    }
    out.push_str("  ");
    push_printable(out, &f.title, false);
    out.push('\n');
    if let (Some(a), Some(e)) = (&f.actual, f.expected_for_people()) {
        out.push_str("      actual: ");
        push_printable(out, a, false);
        read(out, f);
        out.push_str("    expected: ");
        push_printable(out, e, false);
        out.push('\n');
    }
    for e in &f.evidence {
        out.push_str("      at ");
        push_evidence(out, e);
        out.push('\n');
    }
    explanation_and_fix(out, f);
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
