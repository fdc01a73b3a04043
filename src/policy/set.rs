//! The policy set: the built-in policies, files and directories of policy
//! files (read through the host reader's confined, capped, FIFO-safe path),
//! ids unique across all of them, `--set` overrides and rule filters. Must
//! not evaluate rules.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::builtin::{BUILTIN, POLICY_PREFIX, TAG_PREFIX};
use super::compile::{compile, Compiled};
use super::diagnostics::problem_at;
use super::diagnostics::PolicyProblem;
use super::frozen;
use super::overlay::{self, Layer, ParamOverrides};
use super::values::param_value;
use super::{FilterError, ParamError, ParamValue, Policy, PolicyError, Problem, Rule};
use crate::expr;
use crate::value::Value;

/// A set of loaded policies and their rules, validated together (rule ids unique).
#[derive(Debug, Clone, Default)]
pub struct PolicySet {
    /// Policies in load order.
    policies: Vec<Policy>,
    /// Rules in load order, with the overlays' `overrides:` applied.
    rules: Vec<Rule>,
    /// Parameter values the overlays set, with where.
    overlay_params: ParamOverrides,
    /// The effective policy of each rule whose parameters an overlay set
    /// for that rule alone ([`PolicySet::policy_of`] returns it).
    rule_policies: BTreeMap<String, Policy>,
    /// Ids of rules that exist but are not loaded in this run (the upgrade
    /// rules of products no `--target` names): an overlay naming only
    /// these is not a problem ([`PolicySet::add_shipped`]).
    dormant: Vec<String>,
    /// What loaded but is written in a retired spelling, with the fix
    /// ([`PolicySet::warnings`]).
    warnings: Vec<PolicyProblem>,
    /// The run's choice of `for_each` items (`--only`/`--skip` patterns
    /// that matched items' aliases), by rule id ([`PolicySet::filter`]):
    /// a run's, not part of the compiled rules.
    selections: BTreeMap<String, ItemSelection>,
    /// The profiles this run chose ([`PolicySet::choose_profiles`]),
    /// sorted; empty: the default run.
    profiles: Vec<String>,
    /// The profiles not chosen, with the rules each would add.
    not_run: Vec<super::profiles::NotRun>,
    /// Benchmark rules the choice left out (`--profile all` adds them).
    left_out: usize,
    /// The profiles site policy files choose (`profiles:`), in load order.
    site_profiles: Vec<String>,
}

/// `--only`/`--skip` patterns that matched a `for_each` rule's items'
/// aliases rather than its id: which of its items this run judges.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ItemSelection {
    /// Only the items these match are judged (empty: every item).
    pub(crate) only: Vec<String>,
    /// The items these match are left out.
    pub(crate) skip: Vec<String>,
}

/// What a rule no pattern chose items of selects: every item.
static EVERY_ITEM: ItemSelection = ItemSelection {
    only: Vec::new(),
    skip: Vec::new(),
};

impl ItemSelection {
    /// Every item: what a rule no pattern chose items of selects.
    pub(crate) fn every() -> &'static ItemSelection {
        &EVERY_ITEM
    }

    /// Whether an item with this alias is judged.
    pub(crate) fn selects(&self, alias: Option<&str>) -> bool {
        let hit = |pats: &[String]| {
            alias.is_some_and(|a| {
                pats.iter()
                    .any(|p| glob::Pattern::new(p).is_ok_and(|g| g.matches(a)))
            })
        };
        (self.only.is_empty() || hit(&self.only)) && !hit(&self.skip)
    }
}

impl PolicySet {
    /// An empty set.
    pub fn new() -> PolicySet {
        PolicySet::default()
    }

    /// What loaded but is written in a spelling the policy language
    /// retired, each with its code and the fix (a `where:` that names a
    /// record's field bare: `where-bare-field`), in load order. The rules
    /// mean what they meant.
    pub fn warnings(&self) -> &[PolicyProblem] {
        &self.warnings
    }

    /// The policies, in load order.
    pub fn policies(&self) -> &[Policy] {
        &self.policies
    }

    /// The rules, in load order, with the overlays' `overrides:` applied.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The built-in policies (`policies/*.yaml`), from their pre-compiled
    /// form when it is current (no YAML parsed; see `frozen.rs`), otherwise
    /// compiled from the YAML.
    pub fn builtin() -> Result<PolicySet, PolicyError> {
        if let Some((policies, rules)) = frozen::builtin() {
            return Ok(PolicySet {
                policies,
                rules,
                ..PolicySet::default()
            });
        }
        PolicySet::builtin_from_yaml()
    }

    /// The built-in policies compiled from their YAML.
    pub(crate) fn builtin_from_yaml() -> Result<PolicySet, PolicyError> {
        let mut set = PolicySet::new();
        for (path, text) in BUILTIN {
            set.add_str(path, text)?;
        }
        Ok(set)
    }

    /// Add a policy from YAML text; `path` names it in messages.
    ///
    /// ```
    /// let mut set = driftaudit::PolicySet::new();
    /// set.add_str("mine.yaml", "policy: mine\ntitle: Mine\nrules:\n  - id: my.syncookies\n    title: SYN cookies on\n    severity: medium\n    setting: sysctl.net.ipv4.tcp_syncookies\n    expect: { min: 1 }\n    why: tcp_syncookies is {actual}\n    fix: set it to 1\n")?;
    /// assert!(set.rule("my.syncookies").is_some());
    ///
    /// // Problems carry file, line and a caret under the offending text.
    /// let err = set.add_str("bad.yaml", "policy: bad\ntitle: Bad\nrulez: []\n").unwrap_err();
    /// assert!(err.to_string().starts_with("bad.yaml:3:1:"), "{err}");
    /// # Ok::<(), driftaudit::PolicyError>(())
    /// ```
    pub fn add_str(&mut self, path: &str, text: &str) -> Result<(), PolicyError> {
        let layer = self.add_compiled(path, text)?;
        self.apply_overrides(&[layer.into_iter().collect()], false)
    }

    /// Compile one file and add its policy and rules; its `overrides:`
    /// come back, to be applied with the rest of its precedence level.
    fn add_compiled(&mut self, path: &str, text: &str) -> Result<Option<Layer>, PolicyError> {
        let Compiled {
            policy,
            rules,
            policy_at,
            rule_at,
            overrides,
            warnings,
            profiles,
        } = compile(path, text)?;
        self.warnings.extend(warnings);
        for p in profiles {
            if !self.site_profiles.contains(&p) {
                self.site_profiles.push(p);
            }
        }
        let mut problems = Vec::new();
        if self.policies.iter().any(|p| p.id == policy.id) {
            problems.push(problem_at(
                path,
                text,
                policy_at.0,
                policy_at.1,
                None,
                Problem::DuplicatePolicyId {
                    id: policy.id.clone(),
                },
            ));
        }
        for (r, at) in rules.iter().zip(&rule_at) {
            if let Some(prev) = self.rules.iter().find(|x| x.id == r.id) {
                problems.push(problem_at(
                    path,
                    text,
                    at.0,
                    at.1,
                    Some(r.id.clone()),
                    Problem::DuplicateRuleId {
                        id: r.id.clone(),
                        previous: format!("{}:{}", prev.source.path, prev.source.line),
                    },
                ));
            }
        }
        if !problems.is_empty() {
            return Err(PolicyError::Invalid(problems));
        }
        self.policies.push(policy);
        self.rules.extend(rules);
        Ok((!overrides.is_empty()).then(|| Layer {
            path: path.to_string(),
            text: text.to_string(),
            entries: overrides,
        }))
    }

    /// Apply the `overrides:` of `levels` (lowest precedence first; the
    /// files of one level are equals) to every rule loaded so far, all or
    /// nothing: on a problem the set is left as it was.
    fn apply_overrides(
        &mut self,
        levels: &[Vec<Layer>],
        quiet_unmatched: bool,
    ) -> Result<(), PolicyError> {
        if levels.iter().all(Vec::is_empty) {
            self.compile_items();
            return Ok(());
        }
        let mut rules = self.rules.clone();
        let mut policies = self.policies.clone();
        let mut params = self.overlay_params.clone();
        let problems = overlay::apply(
            levels,
            &mut rules,
            &mut policies,
            &mut params,
            quiet_unmatched,
            &self.dormant,
        );
        if !problems.is_empty() {
            return Err(PolicyError::Invalid(problems));
        }
        self.rule_policies = overlay::rule_policies(&policies, &rules, &params);
        self.rules = rules;
        self.policies = policies;
        self.overlay_params = params;
        self.compile_items();
        Ok(())
    }

    /// Each `for_each` list's items compiled, from the list the rule reads
    /// (its policy's, or the one an overlay set for it): the engine
    /// evaluates them and parses nothing.
    fn compile_items(&mut self) {
        let mut rules = std::mem::take(&mut self.rules);
        for r in &mut rules {
            let policy = self.policy_of(r);
            if let Some(fe) = &mut r.for_each {
                if let super::ForEachSource::Param(name) = &fe.source {
                    fe.items =
                        super::compile::compile_items(policy.and_then(|p| p.params.get(name)));
                }
            }
        }
        self.rules = rules;
    }

    /// Add rules made from shipped data rather than a policy file (the
    /// upgrade rules of the `--target` products, [`Check::Upgrade`](super::Check::Upgrade))
    /// with their policy, so listing, `explain`, filters, overlays loaded
    /// after this and waivers reach them like any other rule. `dormant`
    /// names the ids of such rules not loaded in this run (other
    /// products'): an overlay naming only those is not a problem. An id
    /// already loaded is a problem naming both.
    pub(crate) fn add_shipped(
        &mut self,
        policy: Policy,
        rules: Vec<Rule>,
        dormant: Vec<String>,
    ) -> Result<(), PolicyError> {
        let problems: Vec<_> = rules
            .iter()
            .filter_map(|r| {
                let prev = self.rules.iter().find(|x| x.id == r.id)?;
                let problem = Problem::DuplicateRuleId {
                    id: r.id.clone(),
                    previous: format!("{}:{}", prev.source.path, prev.source.line),
                };
                let at = &r.source;
                Some(problem_at(
                    &at.path,
                    "",
                    at.line,
                    1,
                    Some(r.id.clone()),
                    problem,
                ))
            })
            .collect();
        if !problems.is_empty() {
            return Err(PolicyError::Invalid(problems));
        }
        if !self.policies.iter().any(|p| p.id == policy.id) {
            self.policies.push(policy);
        }
        self.rules.extend(rules);
        self.dormant.extend(dormant);
        Ok(())
    }

    /// Add a policy file, or every `*.yaml`/`*.yml` file of a directory
    /// (sorted) except policy tests (`*.test.yaml`, `*.test.yml`).
    ///
    /// Files are read with the host reader's rules: a FIFO, socket or device
    /// is refused without a blocking open, and a file is read up to
    /// [`MAX_POLICY_BYTES`], never further. A directory is not descended into
    /// (a `*.yaml` entry that is a directory is an error, not a recursion).
    ///
    /// Every file of a directory is compiled, so the error lists the problems
    /// of all broken files at once (in file order); the files without
    /// problems are added. A file that cannot be read stops the load.
    pub fn add_path(&mut self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        self.add_paths([path])
    }

    /// Add several policy files or directories ([`PolicySet::add_path`] for
    /// each), reporting the problems of every file in one error.
    ///
    /// The files' `overrides:` are applied once every file is loaded, to
    /// the rules of all of them and of the set before: each path is one
    /// precedence level (a later path's override wins over an earlier
    /// one's), and the files of one directory are equals (two of them
    /// setting one rule's value differently is a problem naming both).
    pub fn add_paths<P: AsRef<Path>>(
        &mut self,
        paths: impl IntoIterator<Item = P>,
    ) -> Result<(), PolicyError> {
        let mut problems = Vec::new();
        let mut levels = Vec::new();
        for path in paths {
            let mut level = Vec::new();
            for f in policy_files(path.as_ref())? {
                let text = read_policy_file(&f)?;
                match self.add_compiled(&f.display().to_string(), &text) {
                    Ok(layer) => level.extend(layer),
                    Err(PolicyError::Invalid(p)) => problems.extend(p),
                    Err(e) => return Err(e),
                }
            }
            levels.push(level);
        }
        // with files missing, a pattern matching nothing may be their rules
        let quiet = !problems.is_empty();
        if let Err(PolicyError::Invalid(p)) = self.apply_overrides(&levels, quiet) {
            problems.extend(p);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(PolicyError::Invalid(problems))
        }
    }

    /// Override a parameter: `NAME=VALUE` or `POLICY.NAME=VALUE`.
    pub fn set_param(&mut self, assignment: &str) -> Result<(), ParamError> {
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| ParamError::NoValue {
                assignment: assignment.to_string(),
            })?;
        let (pol, name) = match name.split_once('.') {
            Some((p, n)) => (Some(p.trim()), n.trim()),
            None => (None, name.trim()),
        };
        // a path, text or enum parameter takes the words as written
        // (`relative/dir` is not a division); the others are constants
        let declared = self
            .policies
            .iter()
            .filter(|p| pol.is_none_or(|x| x == p.id))
            .find_map(|p| p.param_types.get(name));
        let v = match declared {
            Some(t) if t.literal() => t.literal_value(value.trim()),
            _ => param_value(&ParamValue::Text(value.trim().to_string())).map_err(|reason| {
                ParamError::BadValue {
                    assignment: assignment.to_string(),
                    reason,
                }
            })?,
        };
        let mut hit = 0;
        for p in self
            .policies
            .iter_mut()
            .chain(self.rule_policies.values_mut())
        {
            if pol.is_some_and(|x| x != p.id) {
                continue;
            }
            if let Some(slot) = p.params.get_mut(name) {
                if matches!(slot, Value::List(_)) {
                    return Err(ParamError::ListParam {
                        assignment: assignment.to_string(),
                        name: name.to_string(),
                    });
                }
                if let Some(Err(allowed)) = p.param_types.get(name).map(|t| t.check(&v)) {
                    return Err(ParamError::WrongType {
                        assignment: assignment.to_string(),
                        name: name.to_string(),
                        allowed,
                    });
                }
                *slot = v.clone();
                hit += 1;
            }
        }
        if hit > 0 {
            overlay::note_set(&mut self.rules, pol, name, value.trim());
        }
        if hit == 0 {
            let all: Vec<String> = self
                .policies
                .iter()
                .flat_map(|p| p.params.keys().cloned())
                .collect();
            let refs: Vec<&str> = all.iter().map(String::as_str).collect();
            return Err(ParamError::UnknownParam {
                assignment: assignment.to_string(),
                name: name.to_string(),
                suggestion: expr::suggest(name, &refs),
            });
        }
        Ok(())
    }

    /// Keep the rules whose entry in `keep` is true (in load order).
    pub(super) fn retain_rules(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        self.rules.retain(|_| *it.next().unwrap_or(&true));
    }

    /// Record the profiles a run chose and what the others would add.
    pub(super) fn set_profiles(
        &mut self,
        chosen: Vec<String>,
        not_run: Vec<super::profiles::NotRun>,
        left_out: usize,
    ) {
        self.profiles = chosen;
        self.not_run = not_run;
        self.left_out = left_out;
    }

    /// The profiles this run chose, sorted (empty: the default run).
    pub fn profiles(&self) -> &[String] {
        &self.profiles
    }

    /// The profiles this run did not choose, with the rules each would add.
    pub fn profiles_not_run(&self) -> &[super::profiles::NotRun] {
        &self.not_run
    }

    /// Benchmark rules the choice of profiles left out (`--profile all`
    /// adds them all).
    pub fn benchmark_rules_left_out(&self) -> usize {
        self.left_out
    }

    /// The profiles the loaded policy files choose for every run
    /// (`profiles: [cis-l1-server]` in a site file), deduplicated.
    pub fn site_profiles(&self) -> &[String] {
        &self.site_profiles
    }

    /// Every tag the loaded rules carry, sorted, with the ids of its rules
    /// in load order (`list --tags`).
    pub fn tags(&self) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for r in &self.rules {
            for t in &r.tags {
                out.entry(t.as_str()).or_default().push(r.id.as_str());
            }
        }
        out
    }

    /// Rule selectors (`--only`, `--skip`) as rule-id globs: `tag:GLOB`
    /// stands for the rules carrying a tag that `GLOB` matches (each id
    /// escaped, so it matches that rule alone); any other selector is a
    /// rule-id glob and stays as it is. A tag selector that matches no tag
    /// of a loaded rule is an error naming the tags there are: a typo must
    /// not audit nothing and exit 0.
    pub fn expand_tags(&self, selectors: &[String]) -> Result<Vec<String>, FilterError> {
        let mut out = Vec::with_capacity(selectors.len());
        for sel in selectors {
            if let Some(glob) = sel.strip_prefix(POLICY_PREFIX) {
                out.extend(self.policy_rules(sel, glob)?);
                continue;
            }
            let Some(glob) = sel.strip_prefix(TAG_PREFIX) else {
                out.push(sel.clone());
                continue;
            };
            let pattern = glob::Pattern::new(glob).map_err(|e| FilterError::BadPattern {
                pattern: sel.clone(),
                reason: e.msg.to_string(),
                position: e.pos + TAG_PREFIX.len(),
            })?;
            let before = out.len();
            for r in &self.rules {
                if r.tags.iter().any(|t| pattern.matches(t)) {
                    out.push(glob::Pattern::escape(&r.id));
                }
            }
            if out.len() == before {
                let known: Vec<&str> = self.tags().into_keys().collect();
                return Err(FilterError::UnknownTag {
                    selector: sel.clone(),
                    known: if known.is_empty() {
                        "no loaded rule has a tag".to_string()
                    } else {
                        format!("tags of the loaded rules: {}", known.join(", "))
                    },
                });
            }
        }
        Ok(out)
    }

    /// `policy:GLOB`: the ids (escaped) of the rules of the policies `GLOB`
    /// matches; one that matches no loaded policy is an error naming them.
    fn policy_rules(&self, sel: &str, glob: &str) -> Result<Vec<String>, FilterError> {
        let pattern = glob::Pattern::new(glob).map_err(|e| FilterError::BadPattern {
            pattern: sel.to_string(),
            reason: e.msg.to_string(),
            position: e.pos + POLICY_PREFIX.len(),
        })?;
        let ids: Vec<String> = self
            .rules
            .iter()
            .filter(|r| pattern.matches(&r.policy))
            .map(|r| glob::Pattern::escape(&r.id))
            .collect();
        if ids.is_empty() {
            let known: Vec<&str> = self.policies.iter().map(|p| p.id.as_str()).collect();
            return Err(FilterError::UnknownPolicy {
                selector: sel.to_string(),
                known: known.join(", "),
            });
        }
        Ok(ids)
    }

    /// Keep only rules whose id matches one of `only` (if any) and none of
    /// `skip` (rule-id globs; `tag:` selectors go through
    /// [`PolicySet::expand_tags`] first).
    pub fn filter(&mut self, only: &[String], skip: &[String]) -> Result<(), FilterError> {
        let compile = |g: &String| {
            glob::Pattern::new(g).map_err(|e| FilterError::BadPattern {
                pattern: g.clone(),
                reason: e.msg.to_string(),
                position: e.pos,
            })
        };
        let only: Vec<glob::Pattern> = only.iter().map(compile).collect::<Result<_, _>>()?;
        let skip: Vec<glob::Pattern> = skip.iter().map(compile).collect::<Result<_, _>>()?;
        let policies = &self.policies;
        let rule_policies = &self.rule_policies;
        let selections = &mut self.selections;
        self.rules.retain(|r| {
            if skip.iter().any(|p| p.matches(&r.id)) {
                return false;
            }
            let by_id = only.is_empty() || only.iter().any(|p| p.matches(&r.id));
            let Some(fe) = &r.for_each else {
                return by_id;
            };
            // a `for_each` rule's items answer to their aliases too
            let policy = rule_policies
                .get(&r.id)
                .or_else(|| policies.iter().find(|p| p.id == r.policy));
            let aliases: Vec<String> = fe.static_aliases(policy).into_iter().flatten().collect();
            let hits = |p: &glob::Pattern| aliases.iter().any(|a| p.matches(a));
            let item_skip: Vec<String> = skip
                .iter()
                .filter(|p| hits(p))
                .map(|p| p.as_str().to_string())
                .collect();
            if !item_skip.is_empty() {
                selections
                    .entry(r.id.clone())
                    .or_default()
                    .skip
                    .extend(item_skip);
            }
            if by_id {
                return true;
            }
            let item_only: Vec<String> = only
                .iter()
                .filter(|p| hits(p))
                .map(|p| p.as_str().to_string())
                .collect();
            if item_only.is_empty() {
                return false;
            }
            selections
                .entry(r.id.clone())
                .or_default()
                .only
                .extend(item_only);
            true
        });
        Ok(())
    }

    /// Which of `rule`'s `for_each` items this run judges ([`PolicySet::filter`]).
    pub(crate) fn item_selection(&self, rule: &Rule) -> &ItemSelection {
        self.selections
            .get(&rule.id)
            .unwrap_or(ItemSelection::every())
    }

    /// The policy a rule belongs to, with the parameter values the rule
    /// sees (an overlay may set some for this rule alone).
    pub fn policy_of(&self, rule: &Rule) -> Option<&Policy> {
        self.rule_policies
            .get(&rule.id)
            .or_else(|| self.policies.iter().find(|p| p.id == rule.policy))
    }

    /// Find a rule by id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Find a rule by its id or by an item's alias (a `for_each` rule's
    /// `alias:`, the id a rule had before it became one rule per item).
    pub fn rule_or_alias(&self, id: &str) -> Option<&Rule> {
        self.rule(id).or_else(|| {
            self.rules.iter().find(|r| {
                r.for_each.as_ref().is_some_and(|fe| {
                    fe.static_aliases(self.policy_of(r))
                        .iter()
                        .any(|a| a.as_deref() == Some(id))
                })
            })
        })
    }
}

/// The policy files `path` names: itself, or a directory's `*.yaml` and
/// `*.yml` entries except policy tests (`*.test.yaml`), sorted.
fn policy_files(path: &Path) -> Result<Vec<PathBuf>, PolicyError> {
    let io = |e: std::io::Error| PolicyError::Io {
        path: path.display().to_string(),
        reason: crate::reader::io_message(&e),
    };
    if !std::fs::metadata(path).map_err(io)?.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        // policy tests live beside the policies (`driftaudit test`)
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".test.yaml") || n.ends_with(".test.yml"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(PolicyError::Io {
            path: path.display().to_string(),
            reason: "the directory holds no .yaml or .yml policy files".into(),
        });
    }
    Ok(files)
}

/// Largest policy file read (a policy is a few kilobytes; the built-in ones
/// are under 40 KiB).
pub const MAX_POLICY_BYTES: u64 = 4 * 1024 * 1024;

/// Read one policy file the way host files are read (the live host's
/// reader): type checked before and after a non-blocking open, size capped
/// while reading, so a FIFO, `/dev/zero` or a growing file cannot block the
/// load or fill memory.
fn read_policy_file(path: &Path) -> Result<String, PolicyError> {
    let err = |reason: String| PolicyError::Io {
        path: path.display().to_string(),
        reason,
    };
    let abs = std::path::absolute(path).map_err(|e| err(e.to_string()))?;
    let abs = abs
        .to_str()
        .ok_or_else(|| err("the path is not valid UTF-8".into()))?;
    let bytes =
        crate::reader::read_file(Path::new(abs), MAX_POLICY_BYTES).map_err(|e| match e {
            crate::reader::Failure::TooLarge(_) => err(format!(
                "larger than the {MAX_POLICY_BYTES}-byte policy cap"
            )),
            e => err(e.to_string()),
        })?;
    String::from_utf8(bytes).map_err(|e| {
        err(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The frozen form of the built-in policies as this build compiles their
/// YAML: the bytes `src/policy/builtin_frozen.bin` should hold (for `cargo
/// run --example freeze`).
pub fn freeze_builtins() -> Result<Vec<u8>, PolicyError> {
    let set = PolicySet::builtin_from_yaml()?;
    Ok(frozen::freeze(set.policies(), set.rules()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frozen form is what compiling the YAML gives, and it is current:
    /// a changed policy, compiler or model type needs `cargo run --example
    /// freeze` (then rebuild), or live checks compile the YAML.
    #[test]
    fn frozen_builtins_are_the_compiled_yaml_and_current() {
        let want = freeze_builtins().expect("the built-in policies compile");
        assert!(
            want == frozen::FROZEN,
            "src/policy/builtin_frozen.bin is stale (policies/*.yaml, the compiler or the \
             model's types changed): run `cargo run --example freeze` and commit the file \
             (after a rebase conflict in it, take either side and run the same command)"
        );
        let yaml = PolicySet::builtin_from_yaml().unwrap();
        let (policies, rules) = frozen::builtin().expect("the frozen form reads back");
        assert_eq!(format!("{policies:?}"), format!("{:?}", yaml.policies()));
        assert_eq!(format!("{rules:?}"), format!("{:?}", yaml.rules()));
        assert!(!rules.is_empty());
    }

    /// `--only`/`--skip` naming a `for_each` rule's items by alias choose
    /// items for the run: the compiled rule stays as loaded, and the choice
    /// is the set's.
    #[test]
    fn items_chosen_by_alias_leave_the_compiled_rule_as_loaded() {
        let loaded = PolicySet::builtin().unwrap();
        let mut set = loaded.clone();
        let only = ["storage.noatime-zimbra-db".to_string()];
        let skip = ["storage.noatime-mysql".to_string()];
        set.filter(&only, &skip).unwrap();
        let rule = set.rule("storage.noatime").expect("kept for its item");
        let as_loaded = loaded.rule("storage.noatime").unwrap();
        assert_eq!(format!("{rule:?}"), format!("{as_loaded:?}"));
        assert!(rule.for_each == as_loaded.for_each);
        let chosen = set.item_selection(rule);
        assert_eq!(chosen.only, only);
        assert!(chosen.selects(Some("storage.noatime-zimbra-db")));
        assert!(!chosen.selects(Some("storage.noatime-mysql")));
        assert!(!chosen.selects(None));
        assert_eq!(
            loaded.item_selection(rule),
            ItemSelection::every(),
            "a set no pattern filtered judges every item"
        );
    }
}
