//! `driftaudit explain RULE`: what one rule checks and why (the text comes
//! from the library's `explain`), or the closest ids when there is no such
//! rule.

use super::common::{load_policies, write_out, Exit, PolicyArgs};

pub(crate) fn run(id: &str, p: &PolicyArgs) -> Exit {
    let set = match load_policies(p) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    let Some(rule) = set.rule(id) else {
        let ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
        return Exit::Error(format!(
            "no rule `{id}`{}",
            driftaudit::unstable::expr::suggest(id, &ids)
        ));
    };
    let text = driftaudit::unstable::explain::explain(&set, rule);
    match write_out(&text) {
        Ok(()) => Exit::Clean,
        Err(e) => Exit::Error(e),
    }
}
