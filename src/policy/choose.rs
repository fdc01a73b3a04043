//! Choosing a run's rules by profile ([`PolicySet::choose_profiles`]):
//! the default run's rules, plus the benchmark rules tagged for the
//! profiles named (`all`: every rule), with what each profile not chosen
//! would add. Must not read files or judge.

use super::profiles::{profile, NotRun, Profile, ALL_PROFILE, PROFILES};
use super::set::PolicySet;
use super::FilterError;

impl PolicySet {
    /// Whether `rule` belongs to a benchmark policy (`benchmark: true`):
    /// it runs only when a profile it is tagged for, or `all`, is chosen.
    pub fn is_benchmark_rule(&self, rule: &super::Rule) -> bool {
        self.policy_of(rule).is_some_and(|p| p.benchmark)
    }

    /// Every rule a profile runs in this set: the default run's rules
    /// (not benchmark ones) are not counted, they run anyway.
    pub fn profile_rules(&self, p: &Profile) -> Vec<&str> {
        self.rules()
            .iter()
            .filter(|r| {
                self.is_benchmark_rule(r) && r.tags.iter().any(|t| p.tags.contains(&t.as_str()))
            })
            .map(|r| r.id.as_str())
            .collect()
    }

    /// Keep the default run's rules and those of the profiles named
    /// (`all`: every rule); the names are checked first (an unknown one
    /// is an error with the closest name). Records what ran and what each
    /// profile not named would add ([`PolicySet::profiles_not_run`]).
    pub fn choose_profiles(&mut self, names: &[String]) -> Result<(), FilterError> {
        let mut chosen: Vec<String> = Vec::new();
        for n in names {
            let n = n.trim();
            if n != ALL_PROFILE && profile(n).is_none() {
                let mut known: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
                known.push(ALL_PROFILE);
                return Err(FilterError::UnknownProfile {
                    name: n.to_string(),
                    known: known.join(", "),
                    suggestion: crate::expr::suggest(n, &known),
                });
            }
            if !chosen.iter().any(|c| c == n) {
                chosen.push(n.to_string());
            }
        }
        chosen.sort();
        let all = chosen.iter().any(|c| c == ALL_PROFILE);
        let tags: Vec<&str> = chosen
            .iter()
            .filter_map(|c| profile(c))
            .flat_map(|p| p.tags.iter().copied())
            .collect();
        let keep: Vec<bool> = self
            .rules()
            .iter()
            .map(|r| {
                all || !self.is_benchmark_rule(r)
                    || r.tags.iter().any(|t| tags.contains(&t.as_str()))
            })
            .collect();
        let not_run: Vec<NotRun> = if all {
            Vec::new()
        } else {
            PROFILES
                .iter()
                .filter(|p| !chosen.iter().any(|c| c == p.name))
                .map(|p| NotRun {
                    profile: p.name.to_string(),
                    rules: self
                        .rules()
                        .iter()
                        .zip(&keep)
                        .filter(|(r, k)| {
                            !**k && r.tags.iter().any(|t| p.tags.contains(&t.as_str()))
                        })
                        .count(),
                })
                .filter(|n| n.rules > 0)
                .collect()
        };
        let left_out = keep.iter().filter(|k| !**k).count();
        self.retain_rules(&keep);
        self.set_profiles(chosen, not_run, left_out);
        Ok(())
    }
}
