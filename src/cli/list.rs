//! `driftaudit list`: the effective rule set, one line per loaded rule (id,
//! severity, title); under a `for_each` rule whose items have aliases, one
//! `aliases:` line; under a tagged rule one `tags:` line; under a rule that a site overlay changed, one line per
//! changed value naming the file, line and column that set it
//! (`--format json`: the same as data); `--tags`: the tags with their rules;
//! `--profiles`: the default run and each profile with what it runs. The
//! rule list is the run `--profile`/`--only`/`--skip` choose; tags and
//! profiles describe every loaded rule.
//! Formats only; loading and the
//! overlays are the policy layer's.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::common::{load_policies_with, write_out, Exit, PolicyArgs, TargetArg};
use super::select::SelectArgs;

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
    #[arg(long, conflicts_with = "profiles")]
    pub(crate) tags: bool,
    /// List the profiles instead: the default run and each benchmark
    /// profile (`check --profile NAME`) with the rules it adds.
    #[arg(long)]
    pub(crate) profiles: bool,
    /// The rules listed: profiles, --only, --skip (as `check` selects them).
    #[command(flatten)]
    pub(crate) select: SelectArgs,
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
    let mut set = match load_policies_with(&a.policies, |s| s.add_upgrade_targets(&targets)) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let out = if a.profiles {
        profiles(&set, a.format)
    } else if a.tags {
        match a.format {
            ListFormat::Text => tags_text(&set),
            ListFormat::Json => tags_json(&set),
        }
    } else {
        if let Err(e) = a.select.apply(&mut set) {
            return e;
        }
        match a.format {
            ListFormat::Text => text(&set),
            ListFormat::Json => json(&set),
        }
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

/// `--profiles`: what the default run judges and what each profile adds
/// (`all`: every loaded rule).
fn profiles(set: &driftaudit::PolicySet, format: ListFormat) -> String {
    use driftaudit::unstable::policy::{ALL_PROFILE, PROFILES};
    let default: Vec<&str> = set
        .rules()
        .iter()
        .filter(|r| !set.is_benchmark_rule(r))
        .map(|r| r.id.as_str())
        .collect();
    let mut rows: Vec<(String, String, Vec<&str>)> = vec![(
        "default".into(),
        "the run without --profile: the drift and domain policies, and upgrade rules with --target"
            .into(),
        default,
    )];
    for p in PROFILES {
        rows.push((p.name.into(), p.title.into(), set.profile_rules(p)));
    }
    rows.push((
        ALL_PROFILE.into(),
        "every loaded rule, benchmarks included".into(),
        set.rules().iter().map(|r| r.id.as_str()).collect(),
    ));
    match format {
        ListFormat::Text => {
            let mut out = String::new();
            for (name, title, ids) in &rows {
                let added = if name == "default" || name == ALL_PROFILE {
                    format!("{} rules", ids.len())
                } else {
                    format!("+{} rules", ids.len())
                };
                out.push_str(&format!("{name:<20} {added:<10} {}\n", one_line(title)));
            }
            out.push_str("A profile adds its rules to the default run: `check --profile NAME` (repeatable or comma-separated), or `profiles: [NAME]` in a site policy file.\n");
            out
        }
        ListFormat::Json => {
            let v: Vec<serde_json::Value> = rows
                .iter()
                .map(|(name, title, ids)| json!({"profile": name, "title": title, "rules": ids}))
                .collect();
            let mut s = serde_json::to_string_pretty(
                &json!({"schema": "driftaudit.profiles/1", "profiles": v}),
            )
            .unwrap_or_default();
            s.push('\n');
            s
        }
    }
}
