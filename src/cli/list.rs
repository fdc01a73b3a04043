//! `driftaudit list`: the effective rule set, one line per loaded rule (id,
//! severity, title); under a `for_each` rule whose items have aliases, one
//! `aliases:` line; under a tagged rule one `tags:` line; under a rule that a site overlay changed, one line per
//! changed value naming the file, line and column that set it
//! (`--format json`: the same as data); `--tags`: the tags with their rules.
//! Formats only; loading and the
//! overlays are the policy layer's.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::common::{load_policies_with, write_out, Exit, PolicyArgs, TargetArg};

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) policies: PolicyArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub(crate) format: ListFormat,
    /// List the tags instead: one line per tag with its rule count and
    /// rule ids (`--format json`: a map of tag to rule ids). A tag selects
    /// its rules with `check --only tag:NAME`.
    #[arg(long)]
    pub(crate) tags: bool,
    /// Also list the upgrade rules `check --target PRODUCT=VERSION` adds
    /// (repeatable; the forms `check --target` takes).
    #[arg(long = "target", value_name = "PRODUCT=VERSION", value_parser = TargetArg, hide_possible_values = true)]
    pub(crate) target: Vec<String>,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListFormat {
    /// One line per rule, overridden values indented under it.
    Text,
    /// A JSON array of rules (driftaudit.rules/1).
    Json,
}

pub(crate) fn run(a: &ListArgs) -> Exit {
    let mut targets = Vec::new();
    for t in &a.target {
        match driftaudit::unstable::upgrade::Target::parse(t) {
            Ok(t) => targets.push(t),
            Err(e) => return Exit::Error(format!("--target: {e}")),
        }
    }
    let set = match load_policies_with(&a.policies, |s| s.add_upgrade_targets(&targets)) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let out = match (a.tags, a.format) {
        (false, ListFormat::Text) => text(&set),
        (false, ListFormat::Json) => json(&set),
        (true, ListFormat::Text) => tags_text(&set),
        (true, ListFormat::Json) => tags_json(&set),
    };
    match write_out(&out) {
        Ok(()) => Exit::Clean,
        Err(e) => e.into(),
    }
}

fn text(set: &driftaudit::PolicySet) -> String {
    let width = set.rules().iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in set.rules() {
        out.push_str(&format!(
            "{:<width$}  {:<8}  {}\n",
            r.id,
            if r.disabled().is_some() {
                "disabled"
            } else {
                r.severity.as_str()
            },
            r.title
        ));
        let aliases = aliases(set, r);
        if !aliases.is_empty() {
            out.push_str(&format!("  aliases: {}\n", one_line(&aliases.join(", "))));
        }
        if !r.tags.is_empty() {
            out.push_str(&format!("  tags: {}\n", r.tags.join(", ")));
        }
        for o in &r.overridden {
            out.push_str(&format!("  {}\n", one_line(&o.to_string())));
        }
    }
    out
}

/// Control characters of a policy's text never reach the terminal.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A `for_each` rule's items' second ids (`alias:`), which `--only`,
/// `--skip` and waivers match too; those known before a host is read.
fn aliases(set: &driftaudit::PolicySet, r: &driftaudit::unstable::policy::Rule) -> Vec<String> {
    r.for_each
        .as_ref()
        .map(|fe| {
            fe.static_aliases(set.policy_of(r))
                .into_iter()
                .flatten()
                .collect()
        })
        .unwrap_or_default()
}

fn json(set: &driftaudit::PolicySet) -> String {
    let rules: Vec<serde_json::Value> = set
        .rules()
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "policy": r.policy,
                "title": r.title,
                "severity": r.severity,
                "disabled": r.disabled().map(|d| d.value.clone()),
                "source": r.source,
                "overridden": r.overridden,
                // a `for_each` rule's items' second ids (`alias:`), which
                // `--only`, `--skip` and waivers match too
                "aliases": aliases(set, r),
                "tags": r.tags,
                "controls": r.controls,
            })
        })
        .collect();
    let doc = json!({ "schema": "driftaudit.rules/1", "rules": rules });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// `list --tags`: one line per tag (sorted): the tag, how many rules carry
/// it, and their ids in load order.
fn tags_text(set: &driftaudit::PolicySet) -> String {
    let tags = set.tags();
    if tags.is_empty() {
        return "no loaded rule has a tag\n".to_string();
    }
    let width = tags.keys().map(|t| t.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (tag, ids) in tags {
        let n = ids.len();
        out.push_str(&format!(
            "{tag:<width$}  {n:>3} rule{}  {}\n",
            if n == 1 { " " } else { "s" },
            ids.join(", ")
        ));
    }
    out
}

/// `list --tags --format json`: `{"schema": "driftaudit.tags/1", "tags": {TAG: [ids]}}`.
fn tags_json(set: &driftaudit::PolicySet) -> String {
    let doc = json!({ "schema": "driftaudit.tags/1", "tags": set.tags() });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
