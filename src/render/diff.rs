//! The diff printers: a [`Diff`] as plain text (header, settings changes,
//! verdict changes, file diffs) or as JSON (`driftaudit.diff/1`). Sees only
//! the diff it is handed; computes nothing.

use crate::facts::Evidence;
use crate::report::diff::{Change, ChangeKind, Diff, VerdictChange};
use crate::report::Status;

use super::Format;

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
        .map(|x| super::quoted_name(&x.to_string()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn verdict_line(out: &mut String, c: &VerdictChange) {
    let st = |s: Option<Status>| s.map(|s| s.as_str()).unwrap_or("absent");
    let f = &c.finding;
    let subject = if f.subject.is_empty() {
        String::new()
    } else {
        format!(" {}", f.subject.join(", "))
    };
    out.push_str(&format!(
        "  [{}] {}{}: {} -> {}\n",
        f.severity.as_str(),
        f.rule,
        subject,
        st(c.before_status),
        st(c.after_status)
    ));
    if let Some(a) = &f.actual {
        out.push_str(&format!("      actual: {a}"));
        if let Some(e) = &f.expected {
            out.push_str(&format!("; expected: {e}"));
        }
        out.push('\n');
    }
    if !f.explanation.is_empty() && c.after_status != Some(Status::Pass) {
        out.push_str(&format!("      {}\n", f.explanation));
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
        label(&c.namespace).to_string()
    } else {
        format!("{}: {}", label(&c.namespace), c.subject)
    };
    match c.kind {
        ChangeKind::Changed => out.push_str(&format!(
            "  changed  {subject}: {} -> {}\n",
            c.before.as_deref().unwrap_or(""),
            c.after.as_deref().unwrap_or("")
        )),
        ChangeKind::Added => out.push_str(&format!(
            "  added    {subject} = {}\n",
            c.after.as_deref().unwrap_or("")
        )),
        ChangeKind::Removed => out.push_str(&format!(
            "  removed  {subject} (was {})\n",
            c.before.as_deref().unwrap_or("")
        )),
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
    if d.same_host {
        out.push_str(&format!(
            "driftaudit diff: same host {} ({} -> {})\n",
            d.before.host, d.before.source, d.after.source
        ));
    } else {
        out.push_str(&format!(
            "driftaudit diff: two different hosts: {} ({}) -> {} ({})\n",
            d.before.host, d.before.source, d.after.host, d.after.source
        ));
    }
    // an upgrade first: what changed version, then what changed with it
    for v in &d.versions {
        let what = match v.fact.as_str() {
            "mysql_version" => "server version",
            "kernel_release" => "kernel",
            other => other,
        };
        out.push_str(&format!(
            "upgrade: {what} {} -> {}\n",
            v.before.as_deref().unwrap_or("unknown"),
            v.after.as_deref().unwrap_or("unknown")
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
                c.subject, c.before, c.after, c.changed_in
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
                ChangeKind::Changed => out.push_str(&f.unified),
                ChangeKind::Added => {
                    out.push_str(&format!("only after: {}\n", super::quoted_name(&f.path)))
                }
                ChangeKind::Removed => {
                    out.push_str(&format!("only before: {}\n", super::quoted_name(&f.path)))
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
                super::quoted_name(&n.path),
                n.reason
            ));
        }
    }
    // host data (names, values, file contents) never drives the terminal
    super::printable(&out, true).into_owned()
}
