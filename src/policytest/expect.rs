//! One expectation compared with the report: the findings of its rule (or
//! alias), on its subject when it names one, folded into the actual
//! verdict, with the detail a mismatch shows (the finding's values and
//! explanation, or the subjects the rule did report). Must not run
//! anything nor print.

use crate::report::Finding;

use super::results::{fold, Checked, Verdict};

pub(super) struct LoadedExpect {
    pub(super) rule: String,
    pub(super) subject: Option<String>,
    pub(super) verdict: Verdict,
    pub(super) line: usize,
    pub(super) column: usize,
}

/// Whether a finding is about `subject`: one of its subjects, or all of
/// them as the report lists them (`a, b`).
fn about(f: &Finding, subject: &str) -> bool {
    f.subject.iter().any(|s| s == subject) || f.subject.join(", ") == subject
}

pub(super) fn check(findings: &[Finding], e: &LoadedExpect) -> Checked {
    let of_rule: Vec<&Finding> = findings
        .iter()
        .filter(|f| f.rule == e.rule || f.alias.as_deref() == Some(e.rule.as_str()))
        .collect();
    let chosen: Vec<&Finding> = match &e.subject {
        Some(s) => of_rule.iter().copied().filter(|f| about(f, s)).collect(),
        None => of_rule.clone(),
    };
    let actual = fold(chosen.iter().copied());
    let detail = match actual {
        Verdict::Status(status) => chosen
            .iter()
            .find(|f| f.status == status)
            .map(|f| describe(f))
            .unwrap_or_default(),
        Verdict::None if of_rule.is_empty() => "the rule reported no finding".to_string(),
        Verdict::None => {
            let mut subjects: Vec<String> = of_rule
                .iter()
                .filter(|f| !f.subject.is_empty())
                .map(|f| f.subject.join(", "))
                .collect();
            subjects.dedup();
            let n = subjects.len();
            subjects.truncate(8);
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            if subjects.is_empty() {
                format!(
                    "the rule reported no finding on this subject (it reported {} without a subject: {})",
                    of_rule.len(),
                    describe(of_rule[0])
                )
            } else {
                format!(
                    "the rule reported no finding on this subject; its subjects: {}{more}",
                    subjects.join("; ")
                )
            }
        }
    };
    Checked {
        rule: e.rule.clone(),
        subject: e.subject.clone(),
        expected: e.verdict,
        actual,
        line: e.line,
        column: e.column,
        detail,
    }
}

/// A finding in one line: its subject, its value and what the rule wants,
/// and the first line of its explanation (cut at 240 characters).
fn describe(f: &Finding) -> String {
    let mut head = Vec::new();
    if !f.subject.is_empty() {
        head.push(f.subject.join(", "));
    }
    if let Some(a) = &f.actual {
        head.push(format!("value {a}"));
    }
    if let Some(x) = &f.expected {
        head.push(format!("rule expects {x}"));
    }
    let why = f.explanation.trim().lines().next().unwrap_or("").trim();
    let why: String = if why.chars().count() > 240 {
        format!("{}…", why.chars().take(240).collect::<String>())
    } else {
        why.to_string()
    };
    let head = head.join(", ");
    match (head.is_empty(), why.is_empty()) {
        (true, _) => why,
        (false, true) => head,
        (false, false) => format!("{head}; {why}"),
    }
}
