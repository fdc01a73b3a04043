//! A rule's words and labels compiled: the `why` and `fix` templates, the
//! title, `tags`, `controls` and the `breakdown` bar. Must not render them.

use serde_saphyr::Spanned;

use super::compiler::{Compiler, Place, RuleScope};
use crate::expr::Expr;
use crate::policy::{Breakdown, BreakdownSpec, Problem, RuleSpec, Template, TemplatePart};

/// `title`, `why` and `fix`: the templates, and that they say something.
pub(super) fn compile_texts(
    c: &mut Compiler,
    scope: &RuleScope,
    spec: &RuleSpec,
) -> (Template, Template) {
    let id = &scope.id;
    let why = c.template(&spec.why, id, "why", &scope.names);
    let fix = c.template(&spec.fix, id, "fix", &scope.names);
    for (t, s) in [(&why, &spec.why), (&fix, &spec.fix)] {
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                scope.check_params(c, e, Place::of(s));
            }
        }
    }
    if spec.title.value.trim().is_empty() {
        c.problem(Place::at(&spec.title.referenced), id, Problem::EmptyTitle);
    }
    for s in [&spec.why, &spec.fix] {
        if s.value.trim().is_empty() {
            c.problem(Place::at(&s.referenced), id, Problem::EmptyText);
            break;
        }
    }
    (why, fix)
}

/// `tags:`: each a lowercase word (`cis-l1-server`), none twice.
pub(super) fn compile_tags(c: &mut Compiler, tags: &[Spanned<String>], id: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for t in tags {
        let tag = t.value.as_str();
        if !is_tag(tag) {
            c.problem(
                Place::at(&t.referenced),
                id,
                Problem::InvalidTag {
                    tag: tag.to_string(),
                    reason: "a tag is a lowercase word of letters, digits and `-` that starts with a letter or digit (`cis-l1-server`)",
                },
            );
        } else if out.iter().any(|o| o == tag) {
            c.problem(
                Place::at(&t.referenced),
                id,
                Problem::InvalidTag {
                    tag: tag.to_string(),
                    reason: "the rule already has this tag",
                },
            );
        } else {
            out.push(tag.to_string());
        }
    }
    out
}

/// `controls:`: each `FRAMEWORK:ITEM`, the framework a tag-like word, the
/// item without spaces or `:`, none twice.
pub(super) fn compile_controls(
    c: &mut Compiler,
    controls: &[Spanned<String>],
    id: &str,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(controls.len());
    for t in controls {
        let v = t.value.as_str();
        let well_formed = v.split_once(':').is_some_and(|(fw, item)| {
            is_tag(fw)
                && !item.is_empty()
                && !item.contains(|ch: char| ch.is_whitespace() || ch == ':')
        });
        let reason = if !well_formed {
            "a benchmark item is `FRAMEWORK:ITEM`, the framework a lowercase word (`cis-debian12:3.3.9`, `stig-rhel9:RHEL-09-253025`)"
        } else if out.iter().any(|o| o == v) {
            "the rule already names this item"
        } else {
            out.push(v.to_string());
            continue;
        };
        c.problem(
            Place::at(&t.referenced),
            id,
            Problem::InvalidControl {
                control: v.to_string(),
                reason,
            },
        );
    }
    out
}

/// Whether `t` is a tag: `[a-z0-9][a-z0-9-]*`, at most 64 characters.
pub(crate) fn is_tag(t: &str) -> bool {
    let mut chars = t.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && t.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `breakdown:`: the whole and its parts, as expressions.
pub(super) fn compile_breakdown(
    c: &mut Compiler,
    scope: &RuleScope,
    b: &BreakdownSpec,
) -> Option<Breakdown> {
    let total = c.expr(&b.total, &scope.id, "breakdown.total", &scope.names)?;
    let parts: Vec<(String, Expr)> = b
        .parts
        .iter()
        .filter_map(|p| {
            Some((
                p.label.clone(),
                c.expr(&p.value, &scope.id, "breakdown part", &scope.names)?,
            ))
        })
        .collect();
    Some(Breakdown {
        label: b.label.clone(),
        total,
        parts,
        rest: b.rest.clone(),
    })
}
