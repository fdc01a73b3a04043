//! The diff printers: a [`Diff`] as plain text (header, settings changes,
//! verdict changes, file diffs) or as JSON (`driftaudit.diff/1`). Sees only
//! the diff it is handed; computes nothing. In text, every host or policy
//! value is made [`printable`] where it is written, one-line fields with
//! their newlines escaped, so no value can print a line of its own.

use std::borrow::Cow;

use crate::facts::Evidence;
use crate::report::diff::{Change, ChangeKind, Diff, VerdictChange};
use crate::report::Status;

use super::{printable, quoted_name, Format};

/// One-line host or policy text, newlines and control characters escaped
/// (as the text report's one-line fields are).
fn one(s: &str) -> Cow<'_, str> {
    printable(s, false)
}

/// Render a diff in `format`; `None` for a format that has no diff form
/// (only [`Format::Text`] and [`Format::Json`] have one, see
/// [`Format::renders_diff`]).
pub fn render(d: &Diff, format: Format) -> Option<String> {
    match format {
        Format::Text => Some(render_text(d)),
        Format::Json => Some(render_json(d)),
        _ => None,
    }
}

/// JSON form (`driftaudit.diff/1`), pretty-printed with a final newline.
pub fn render_json(d: &Diff) -> String {
    let mut s =
        serde_json::to_string_pretty(d).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

fn evidence_list(e: &[Evidence]) -> String {
    // each file name on one line (a newline in it cannot forge a line)
    e.iter()
        .map(|x| quoted_name(&x.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn verdict_line(out: &mut String, c: &VerdictChange) {
    let st = |s: Option<Status>| s.map(|s| s.as_str()).unwrap_or("absent");
    let f = &c.finding;
    let subject = if f.subject.is_empty() {
        String::new()
    } else {
        format!(" {}", one(&f.subject.join(", ")))
    };
    out.push_str(&format!(
        "  [{}] {}{}: {} -> {}\n",
        f.severity.as_str(),
        one(&f.rule),
        subject,
        st(c.before_status),
        st(c.after_status)
    ));
    if let Some(a) = &f.actual {
        out.push_str(&format!("      actual: {}", one(a)));
        if let Some(e) = &f.expected {
            out.push_str(&format!("; expected: {}", one(e)));
        }
        out.push('\n');
    }
    if !f.explanation.is_empty() && c.after_status != Some(Status::Pass) {
        explanation_lines(out, &f.explanation);
    }
}

/// A finding's explanation under its verdict line, made printable: each
/// paragraph (a policy's blank-line break) on one indented line, a line
/// break inside a paragraph read as a space (as the text report's word wrap
/// reads it), so a newline a host value brought cannot start a line.
fn explanation_lines(out: &mut String, text: &str) {
    let text = printable(text, true);
    for (i, para) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("      ");
        out.push_str(&para.replace('\n', " "));
        out.push('\n');
    }
}

/// The groups of the text form, by namespace: running values apart from
/// what the configuration applies at the next start.
const GROUPS: [(&str, &[&str]); 3] = [
    ("Running now", &["sysctl", "mysql", "mount"]),
    (
        "Configuration (applied at the next boot, restart or mount)",
        &[
            "sysctl_boot",
            "sysctl_procps",
            "mycnf",
            "mycnf_effective",
            "mysql_next",
            "fstab",
            "localconfig",
            "zimbra_mycnf",
        ],
    ),
    ("Host", &["facts", "du", "paths", "ext4"]),
];

/// What people call a namespace (JSON keeps the namespace ids).
fn label(ns: &str) -> &str {
    match ns {
        "sysctl" => "sysctl (running)",
        "sysctl_boot" => "sysctl (next boot)",
        "sysctl_procps" => "sysctl (procps --system)",
        "mycnf" => "MySQL option files",
        "mycnf_effective" => "MySQL option files, as the server runs them",
        "mysql_next" => "MySQL at the next start (option files, else compiled default)",
        "mysql" => "MySQL (running)",
        "fstab" => "fstab",
        "mount" => "mounts (running)",
        "ext4" => "ext4 layout",
        "localconfig" => "Zimbra localconfig",
        "zimbra_mycnf" => "Zimbra my.cnf",
        "facts" => "host",
        "du" => "directory size",
        "paths" => "path",
        other => other,
    }
}

/// A derived namespace's change that says again what its source's does
/// (`sysctl_procps` after `sysctl_boot`, `mycnf_effective` after `mycnf`):
/// shown once, in text; JSON has both.
fn repeats(c: &Change, all: &[Change]) -> bool {
    let source = match c.namespace.as_str() {
        "sysctl_procps" => "sysctl_boot",
        "mycnf_effective" => "mycnf",
        "mysql_next" => "mycnf_effective",
        _ => return false,
    };
    all.iter().any(|o| {
        o.namespace == source
            && o.subject == c.subject
            && o.before == c.before
            && o.after == c.after
    })
}

fn change_lines(out: &mut String, c: &Change) {
    let subject = if c.subject == "*" {
        one(label(&c.namespace)).into_owned()
    } else {
        format!("{}: {}", one(label(&c.namespace)), one(&c.subject))
    };
    let before = one(c.before.as_deref().unwrap_or(""));
    let after = one(c.after.as_deref().unwrap_or(""));
    match c.kind {
        ChangeKind::Changed => {
            out.push_str(&format!("  changed  {subject}: {before} -> {after}\n"))
        }
        ChangeKind::Added => out.push_str(&format!("  added    {subject} = {after}\n")),
        ChangeKind::Removed => out.push_str(&format!("  removed  {subject} (was {before})\n")),
    }
    if !c.evidence_before.is_empty() {
        out.push_str(&format!(
            "           before: {}\n",
            evidence_list(&c.evidence_before)
        ));
    }
    if !c.evidence_after.is_empty() {
        out.push_str(&format!(
            "           after:  {}\n",
            evidence_list(&c.evidence_after)
        ));
    }
}

/// Plain-text form: header, settings changes, verdict changes, file diffs.
pub fn render_text(d: &Diff) -> String {
    let mut out = String::new();
    let (host_b, host_a) = (one(&d.before.host), one(&d.after.host));
    let (source_b, source_a) = (quoted_name(&d.before.source), quoted_name(&d.after.source));
    if d.same_host {
        out.push_str(&format!(
            "driftaudit diff: same host {host_b} ({source_b} -> {source_a})\n"
        ));
    } else {
        out.push_str(&format!(
            "driftaudit diff: two different hosts: {host_b} ({source_b}) -> {host_a} ({source_a})\n"
        ));
    }
    // an upgrade first: what changed version, then what changed with it
    for v in &d.versions {
        let what = match v.fact.as_str() {
            "mysql_version" => "server version".into(),
            "kernel_release" => "kernel".into(),
            other => one(other),
        };
        out.push_str(&format!(
            "upgrade: {what} {} -> {}\n",
            one(v.before.as_deref().unwrap_or("unknown")),
            one(v.after.as_deref().unwrap_or("unknown"))
        ));
    }
    if !d.default_driven.is_empty() {
        out.push_str(&format!(
            "\nChanged only because a default changed: {}\n",
            d.default_driven.len()
        ));
        for c in &d.default_driven {
            let from = if c.from == "runtime" {
                "runtime values; set in no option file"
            } else {
                "defaults from the upgrade data, no runtime capture; set in no option file"
            };
            out.push_str(&format!(
                "  {}: {} -> {} (default changed in {}; {from})\n",
                one(&c.subject),
                one(&c.before),
                one(&c.after),
                one(&c.changed_in)
            ));
        }
    }
    let shown: Vec<&Change> = d
        .changes
        .iter()
        .filter(|c| !repeats(c, &d.changes))
        .collect();
    // the counts are of the lines the text shows (a derived namespace's
    // repeat of its source's change is one change to a reader)
    let count = |k: ChangeKind| shown.iter().filter(|c| c.kind == k).count();
    if !d.changes.is_empty() {
        out.push_str(&format!(
            "\nSettings: {} changed, {} added, {} removed\n",
            count(ChangeKind::Changed),
            count(ChangeKind::Added),
            count(ChangeKind::Removed)
        ));
    }
    // what runs now apart from what the files say the next start applies
    for (group, members) in GROUPS {
        let list: Vec<&&Change> = shown
            .iter()
            .filter(|c| members.contains(&c.namespace.as_str()))
            .collect();
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("{group}:\n"));
        for c in list {
            change_lines(&mut out, c);
        }
    }
    let grouped: Vec<&str> = GROUPS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let other: Vec<&&Change> = shown
        .iter()
        .filter(|c| !grouped.contains(&c.namespace.as_str()))
        .collect();
    if !other.is_empty() {
        out.push_str("Other:\n");
        for c in other {
            change_lines(&mut out, c);
        }
    }
    let verdicts = [
        ("Regressions", &d.regressions),
        ("Fixes", &d.fixes),
        ("New findings", &d.new),
        ("Vanished findings", &d.vanished),
        ("Other verdict changes", &d.other),
    ];
    for (title, list) in verdicts {
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{title}: {}\n", list.len()));
        for c in list {
            verdict_line(&mut out, c);
        }
    }
    if d.changes.is_empty() && verdicts.iter().all(|(_, l)| l.is_empty()) {
        out.push_str("\nNo setting and no verdict changed.\n");
    }
    if let Some(files) = &d.files {
        let missed = d.files_not_compared.as_deref().unwrap_or_default();
        if missed.is_empty() {
            out.push_str(&format!("\nFiles: {} differ\n", files.len()));
        } else {
            out.push_str(&format!(
                "\nFiles: {} differ, {} not compared (the comparison is incomplete)\n",
                files.len(),
                missed.len()
            ));
        }
        for f in files {
            match f.kind {
                // its own lines (the name in its header is escaped)
                ChangeKind::Changed => out.push_str(&printable(&f.unified, true)),
                ChangeKind::Added => {
                    out.push_str(&format!("only after: {}\n", quoted_name(&f.path)))
                }
                ChangeKind::Removed => {
                    out.push_str(&format!("only before: {}\n", quoted_name(&f.path)))
                }
            }
        }
        for n in missed {
            let side = match n.side {
                "both" => "either side".to_string(),
                s => format!("the {s} side"),
            };
            out.push_str(&format!(
                "not compared: {} (cannot read {side}: {})\n",
                quoted_name(&n.path),
                one(&n.reason)
            ));
        }
    }
    out
}
