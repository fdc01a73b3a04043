//! Profiles: what a run judges. The default run is the drift and domain
//! policies (every policy not marked `benchmark: true`, and the upgrade
//! rules of `--target`); a benchmark's rules run when its profile is named
//! (`--profile cis-l1-server`, or a site's `profiles:` in a policy file),
//! and `all` runs every loaded rule. A profile runs the rules tagged for its
//! level and for the levels it includes, as the benchmarks define them.
//! Owns the profile table and the choice; must not read files or judge.

use super::set::PolicySet;
use super::FilterError;

/// A benchmark level a run can add by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// Its name (`--profile NAME`), also the tag its own level's rules carry.
    pub name: &'static str,
    /// What it is.
    pub title: &'static str,
    /// The tags whose rules it runs: its own level and those it includes.
    pub tags: &'static [&'static str],
}

/// `--profile all`: every loaded rule, benchmarks included.
pub const ALL_PROFILE: &str = "all";

/// The profiles, one per benchmark level the shipped tags carry. CIS
/// Level 2 includes Level 1 ("Level 2 ... extends Level 1", every CIS
/// benchmark's profile definitions; SSG's `cis_level2_server` extends
/// `cis_level1_server`); ANSSI BP-028's levels are cumulative (minimal,
/// intermediary, enhanced, high: "each level includes the previous ones",
/// BP-028 v2 section 1.4).
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "cis-l1-server",
        title: "CIS Benchmark, Level 1 - Server",
        tags: &["cis-l1-server"],
    },
    Profile {
        name: "cis-l2-server",
        title: "CIS Benchmark, Level 2 - Server (Level 1 included)",
        tags: &["cis-l1-server", "cis-l2-server"],
    },
    Profile {
        name: "stig",
        title: "DISA STIG (RHEL 9 items, as the rules cite them)",
        tags: &["stig"],
    },
    Profile {
        name: "anssi-intermediary",
        title: "ANSSI BP-028, intermediary level (minimal included)",
        tags: &["anssi-minimal", "anssi-intermediary"],
    },
    Profile {
        name: "anssi-enhanced",
        title: "ANSSI BP-028, enhanced level (minimal and intermediary included)",
        tags: &["anssi-minimal", "anssi-intermediary", "anssi-enhanced"],
    },
];

/// The profile called `name` (not `all`).
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// What the choice of profiles left out: each profile not run with the
/// number of rules it would add (`list --profiles`, the coverage footer).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotRun {
    /// The profile.
    pub profile: String,
    /// Rules it would add to this run.
    pub rules: usize,
}

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
            .filter(|r| self.is_benchmark_rule(r) && r.tags.iter().any(|t| p.tags.contains(&t.as_str())))
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
