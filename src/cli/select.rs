//! The one rule selection every command that judges rules takes: the
//! profiles a run adds (`--profile`, and a site's `profiles:`), `--only`
//! and `--skip` (rule-id globs, `tag:GLOB`, `policy:GLOB`; repeated or
//! comma-separated), checked against the loaded rules before anything is
//! judged. Must not judge or render.

use driftaudit::PolicySet;

use super::common::{Exit, RuleSelectorArg};

/// `--profile`, `--only`, `--skip`: flattened into check, diff, fix and
/// list, so each selects the same way.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct SelectArgs {
    /// Add a benchmark profile's rules to the default run (drift and domain
    /// policies): cis-l1-server, cis-l2-server, stig, anssi-intermediary,
    /// anssi-enhanced, or `all` for every rule. Repeatable or comma-separated;
    /// a site's policy file can choose them once (`profiles:`).
    /// `driftaudit list --profiles` shows what each adds.
    #[arg(long = "profile", value_name = "NAME", value_delimiter = ',')]
    pub(crate) profile: Vec<String>,
    /// Only rules whose id matches this glob, of a policy (`policy:GLOB`), or
    /// that carry a tag (`tag:GLOB`, e.g. `tag:cis-l1-server`). Picks from
    /// every rule, benchmarks included; with --profile, from that run.
    /// Repeatable or comma-separated.
    #[arg(long = "only", value_name = "GLOB", value_parser = RuleSelectorArg, value_delimiter = ',', hide_possible_values = true)]
    pub(crate) only: Vec<String>,
    /// Skip rules whose id matches this glob, of a policy (`policy:GLOB`),
    /// or that carry a tag (`tag:GLOB`). Repeatable or comma-separated.
    #[arg(long = "skip", value_name = "GLOB", value_parser = RuleSelectorArg, value_delimiter = ',', hide_possible_values = true)]
    pub(crate) skip: Vec<String>,
}

/// The rule-id globs a selection came to (`tag:` and `policy:` expanded),
/// for a command that also filters findings by them (`fix`).
pub(crate) struct Chosen {
    pub(crate) only: Vec<String>,
    pub(crate) skip: Vec<String>,
}

impl SelectArgs {
    /// Narrow `set` to the run this selection asks for: every selector is
    /// checked against every loaded rule first (a typo is an error, and a
    /// benchmark rule that is not run this time is still a rule), then the
    /// profiles choose the run, then `--only`/`--skip` narrow it. `--only`
    /// alone picks from every rule.
    pub(crate) fn apply(&self, set: &mut PolicySet) -> Result<Chosen, Exit> {
        let (only, skip) = match (set.expand_tags(&self.only), set.expand_tags(&self.skip)) {
            (Ok(o), Ok(s)) => (o, s),
            (Err(e), _) | (_, Err(e)) => return Err(e.into()),
        };
        rule_globs_match(set, &only, &skip)?;
        let mut profiles: Vec<String> = set.site_profiles().to_vec();
        profiles.extend(self.profile.iter().map(|p| p.trim().to_string()));
        if self.only.is_empty() || !profiles.is_empty() {
            set.choose_profiles(&profiles)?;
        }
        set.filter(&only, &skip)?;
        Ok(Chosen { only, skip })
    }
}

/// `--only`/`--skip` globs that match no loaded rule, one message line each
/// (the first after `driftaudit: `, the others with it).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\ndriftaudit: "))]
pub(crate) struct UnmatchedGlobs(Vec<UnmatchedGlob>);

/// One glob that matches no rule, with the ids closest to it.
#[derive(Debug, thiserror::Error)]
#[error("`{flag} {glob}` matches no rule{close}")]
struct UnmatchedGlob {
    flag: &'static str,
    glob: String,
    /// `; close ids: ...` or the pointer to `driftaudit list`.
    close: String,
}

/// Every `--only`/`--skip` glob must match a loaded rule id: a typo would
/// otherwise audit nothing (or skip nothing) and still exit 0. The message
/// lists the ids closest to the glob.
pub(crate) fn rule_globs_match(
    set: &PolicySet,
    only: &[String],
    skip: &[String],
) -> Result<(), UnmatchedGlobs> {
    // a `for_each` rule's items answer to their aliases too
    let aliases: Vec<String> = set
        .rules()
        .iter()
        .filter_map(|r| Some(r.for_each.as_ref()?.static_aliases(set.policy_of(r))))
        .flatten()
        .flatten()
        .collect();
    let ids: Vec<&str> = set
        .rules()
        .iter()
        .map(|r| r.id.as_str())
        .chain(aliases.iter().map(String::as_str))
        .collect();
    let mut errors = Vec::new();
    for (flag, globs) in [("--only", only), ("--skip", skip)] {
        for g in globs {
            // a malformed glob is reported by PolicySet::filter
            let Ok(pattern) = glob::Pattern::new(g) else {
                continue;
            };
            if !ids.iter().any(|id| pattern.matches(id)) {
                errors.push(UnmatchedGlob {
                    flag,
                    glob: g.clone(),
                    close: close_ids(g, &ids),
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(UnmatchedGlobs(errors))
    }
}

/// `; close ids: `a`, `b`` for the (at most 5) rule ids nearest a glob, by
/// edit distance to the glob's literal text (to the id's prefix of the same
/// length when the glob has a wildcard), else a pointer to `driftaudit list`.
fn close_ids(glob: &str, ids: &[&str]) -> String {
    let literal: String = glob.chars().filter(|c| !"*?[]!".contains(*c)).collect();
    let wild = literal.len() != glob.len();
    let budget = 3.max(literal.chars().count() / 4);
    let mut near: Vec<(usize, &str)> = ids
        .iter()
        .map(|id| {
            let whole = driftaudit::unstable::expr::levenshtein(&literal, id);
            let prefix: String = id.chars().take(literal.chars().count()).collect();
            let d = if wild {
                whole.min(driftaudit::unstable::expr::levenshtein(&literal, &prefix))
            } else {
                whole
            };
            (d, *id)
        })
        .filter(|(d, _)| *d <= budget)
        .collect();
    near.sort();
    near.truncate(5);
    if near.is_empty() {
        return "; `driftaudit list` shows every rule id".into();
    }
    let list: Vec<String> = near.iter().map(|(_, id)| format!("`{id}`")).collect();
    format!("; close ids: {}", list.join(", "))
}
