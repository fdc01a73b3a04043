//! Profiles: what a run judges. The default run is the drift and domain
//! policies (every policy not marked `benchmark: true`, and the upgrade
//! rules of `--target`); a benchmark's rules run when its profile is named
//! (`--profile cis-l1-server`, or a site's `profiles:` in a policy file),
//! and `all` runs every loaded rule. A profile runs the rules tagged for its
//! level and for the levels it includes, as the benchmarks define them.
//! Owns the profile table (the choice itself is `choose.rs`); must not
//! read files or judge.

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
