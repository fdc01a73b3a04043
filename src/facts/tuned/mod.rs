//! TuneD as a persisted sysctl source: on a host where tuned is enabled, the
//! `[sysctl]` section of the active profile (with its `include=` chain,
//! `[variables]` and `${...}`) and tuned's re-application of /run/sysctl.d,
//! /etc/sysctl.d and /etc/sysctl.conf, in the order tuned's plugin_sysctl.py
//! writes them after systemd-sysctl; in `auto` mode the profile its
//! recommender picks ([`recommend`]), or active_profile where the files do not
//! decide it. Reads only through [`Host`]; produces
//! entries for the `sysctl_boot` namespace, never a namespace of its own.
//! This file holds the entry point ([`sysctl_writes`]) and whether tuned
//! re-applies the /etc files; the folder's rooms, in the order data flows:
//!
//! - `paths`: where tuned keeps its own files (active_profile,
//!   tuned-main.conf, ...).
//! - `state`: whether tuned runs at boot and which profiles it loads
//!   ([`TunedState`]), and the installed tuned's [`version`].
//! - [`recommend`]: the profile tuned's recommender picks in `auto` mode.
//! - `profile`: the profile files found, loaded with their `include=`
//!   chain, merged into units, and their `[variables]`.
//! - `write`: one [`Write`]: which file tuned's spelling of a key names
//!   (by version) and what a `>`/`<` value does at boot ([`resolve`]).
//! - `apply`: the writes in tuned's order: each enabled `sysctl` unit's
//!   options by `priority`, then the re-application of the /etc files.
//!
//! Must not read outside [`Host`], judge a value or make a namespace.

use crate::host::Host;
use crate::parse::tuned::{parse_bool, parse_main_conf};

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel};

mod apply;
mod paths;
mod profile;
pub mod recommend;
mod state;
mod write;

use apply::{reapply_system, writes_for};
pub use state::{state, version, TunedState};
pub use write::{resolve, Write};

pub use paths::{ACTIVE_PROFILE, ENABLED_LINK, MAIN_CONF, POST_LOADED_PROFILE, PROFILE_MODE};

/// The sysctl writes tuned makes after boot, in order, as `sysctl_boot`
/// entries: each enabled `type=sysctl` unit of the merged profile in
/// `priority` order, and after each, with `reapply_sysctl` (the default),
/// the re-application of /run/sysctl.d and /etc/sysctl.d (`*.conf`, first
/// directory wins per name, sorted) and /etc/sysctl.conf with tuned's own
/// line parser.
pub fn sysctl_writes(host: &Host, facts: &mut Facts) -> Vec<Write> {
    let (reason, candidates) = match state(host) {
        TunedState::Undecided { reason, candidates } => (reason, candidates),
        other => return writes_for(host, other, facts, true),
    };
    facts.issues.push(
        FileIssue::problem("tuned", ACTIVE_PROFILE, None, reason).with_level(IssueLevel::Unknown),
    );
    // every key one of the candidate profiles writes is unknown after it
    let mut keys: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for c in &candidates {
        let mut scratch = Facts::new(host);
        for w in writes_for(
            host,
            TunedState::Enabled(vec![c.clone()]),
            &mut scratch,
            false,
        ) {
            let by = keys.entry(w.key).or_default();
            if !by.contains(c) {
                by.push(c.clone());
            }
        }
    }
    let mut out: Vec<Write> = keys
        .into_iter()
        .filter(|(k, _)| !k.is_empty())
        .map(|(key, by)| Write {
            key,
            entry: Entry::Unreadable {
                reason: format!(
                    "tuned's recommender picks its profile at start, which no file decides (see the tuned input finding at {ACTIVE_PROFILE}); `{}` of its candidates sets this key after systemd-sysctl",
                    by.join("`, `")
                ),
                evidence: vec![Evidence::file(ACTIVE_PROFILE)],
            },
            modifier: None,
            keep_if: None,
        })
        .collect();
    if reapply_enabled(host) {
        reapply_system(host, version(host), &mut out);
    }
    out
}

/// tuned-main.conf's `reapply_sysctl` (default on).
fn reapply_enabled(host: &Host) -> bool {
    let main = match host.read_to_string(MAIN_CONF) {
        Ok(t) => parse_main_conf(&t),
        Err(_) => Vec::new(),
    };
    main.iter()
        .rev()
        .find(|(n, _)| n == "reapply_sysctl")
        .and_then(|(_, v)| parse_bool(v))
        .unwrap_or(true)
}
