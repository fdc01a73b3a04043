//! `explain`: a rule's full description in words (rationale, fix, references,
//! parameters with defaults, what site overlays changed and where, and the
//! facts and settings it reads). Pure text
//! from the compiled policy; no host data.

use std::fmt::Write;

use crate::policy::{Applies, Check, PolicySet, Rule};
use crate::render::text::wrap;

/// Describe a rule for people.
pub fn explain(set: &PolicySet, rule: &Rule) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}  ({})", rule.id, rule.severity);
    let _ = writeln!(o, "{}", rule.title);
    let _ = writeln!(
        o,
        "policy: {}  defined at {}:{}",
        rule.policy, rule.source.path, rule.source.line
    );
    if !rule.overridden.is_empty() {
        let _ = writeln!(o, "\noverridden (site overlays, --set):");
        for x in &rule.overridden {
            for l in wrap(&x.to_string(), 76) {
                let _ = writeln!(o, "  {l}");
            }
        }
    }
    if !rule.applies.is_empty() {
        let _ = writeln!(o, "\napplies when:");
        for a in &rule.applies {
            let _ = match a {
                Applies::Kernel(_, t) => writeln!(o, "  kernel {t}"),
                Applies::Exists(p) => writeln!(o, "  {p} exists"),
                Applies::Missing(p) => writeln!(o, "  {p} does not exist"),
                Applies::When(_, t) => writeln!(o, "  {}", t.trim()),
            };
        }
    }
    let _ = writeln!(o, "\ncheck:");
    let _ = match &rule.check {
        Check::Setting {
            ns,
            key,
            presence: Some(p),
            ..
        } => {
            writeln!(
                o,
                "  {ns}.{key} must be {}",
                if *p { "present" } else { "absent" }
            )
        }
        Check::Setting {
            ns, key, expect, ..
        } => writeln!(
            o,
            "  {ns}.{key} {}",
            expect
                .iter()
                .map(|(op, es)| format!(
                    "{} {}",
                    op.words(),
                    es.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Check::Assert(e) => writeln!(o, "  {e}"),
        Check::External => writeln!(
            o,
            "  the option files and persisted sysctl files as the target release reads them, against the shipped upgrade data ({}); runs with `--target`",
            rule.source.path
        ),
        Check::Drift(d) => {
            let (configured, running) = (&d.configured, &d.running);
            writeln!(
                o,
                "  every key of {configured} equals the same key of {running}"
            )
        }
    };
    let _ = writeln!(o, "\nwhy:");
    for l in wrap(&rule.why.source, 76) {
        let _ = writeln!(o, "  {l}");
    }
    let _ = writeln!(o, "\nfix:");
    for l in wrap(&rule.fix.source, 76) {
        let _ = writeln!(o, "  {l}");
    }
    let _ = writeln!(o, "\nremedy (driftaudit fix):");
    let remedy = match &rule.remedy {
        Some(r) => r.describe(),
        None => "not declared: `driftaudit fix` reports a failure of this rule as unfixable".into(),
    };
    for l in wrap(&remedy, 76) {
        let _ = writeln!(o, "  {l}");
    }
    if let Some(p) = set.policy_of(rule) {
        let used: Vec<(&String, &String)> = p
            .param_defaults
            .iter()
            .filter(|(k, _)| uses_param(rule, k))
            .collect();
        if !used.is_empty() {
            let _ = writeln!(o, "\nparameters (override with --set {}.NAME=VALUE):", p.id);
            for (k, v) in used {
                let cur = p.params.get(k).map(crate::expr::show).unwrap_or_default();
                let field = format!("params.{k}");
                match rule.overridden.iter().find(|x| x.field == field) {
                    Some(x) => writeln!(o, "  {k} = {cur}  (default {v})  set by {}", x.set_by),
                    None => writeln!(o, "  {k} = {cur}  (default {v})"),
                }
                .ok();
            }
        }
    }
    let reads = rule.settings_read();
    let facts = rule.facts_read();
    if !reads.is_empty() || !facts.is_empty() {
        let _ = writeln!(o, "\nreads:");
        for (ns, k) in reads {
            let _ = writeln!(o, "  setting {ns}.{k}");
        }
        for f in facts {
            let _ = writeln!(o, "  fact {f}");
        }
    }
    if !rule.references.is_empty() {
        let _ = writeln!(o, "\nreferences:");
        for r in &rule.references {
            let _ = writeln!(o, "  {r}");
        }
    }
    o
}

fn uses_param(rule: &Rule, name: &str) -> bool {
    let mut hit = false;
    for e in rule.expressions() {
        crate::expr::walk(e, &mut |x| {
            if matches!(x, crate::expr::Expr::Param(p) if p == name) {
                hit = true;
            }
        });
    }
    hit
}
