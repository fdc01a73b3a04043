//! `driftaudit list`: one line per loaded rule (id, severity, title).

use super::common::{load_policies, write_out, Exit, PolicyArgs};

pub(crate) fn run(p: &PolicyArgs) -> Exit {
    let set = match load_policies(p) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let width = set.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in &set.rules {
        out.push_str(&format!(
            "{:<width$}  {:<8}  {}\n",
            r.id,
            r.severity.as_str(),
            r.title
        ));
    }
    match write_out(&out) {
        Ok(()) => Exit::Clean,
        Err(e) => e.into(),
    }
}
