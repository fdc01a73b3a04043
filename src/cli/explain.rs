//! `driftaudit explain RULE`: what one rule checks and why (the text comes
//! from the library's `explain`), or the closest ids when there is no such
//! rule. The upgrade rules of every product are explained without `--target`.

use super::common::{load_policies_with, write_out, Exit, PolicyArgs};

/// The rule asked for is not loaded.
#[derive(Debug, thiserror::Error)]
#[error("no rule `{id}`{suggestion}")]
struct NoSuchRule {
    id: String,
    /// Empty or `, did you mean `x`?`.
    suggestion: String,
}

pub(crate) fn run(id: &str, p: &PolicyArgs) -> Exit {
    // every product's upgrade rules: explain evaluates nothing, so it needs no --target
    let set = match load_policies_with(p, driftaudit::unstable::upgrade::register_all) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let Some(rule) = set.rule_or_alias(id) else {
        let ids: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
        return NoSuchRule {
            id: id.to_string(),
            suggestion: driftaudit::unstable::expr::suggest(id, &ids),
        }
        .into();
    };
    let text = driftaudit::unstable::explain::explain(&set, rule);
    match write_out(&text) {
        Ok(()) => Exit::Clean,
        Err(e) => e.into(),
    }
}
