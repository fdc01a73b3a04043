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
use crate::parse::tuned::parse_bool;

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel};

mod apply;
mod paths;
mod profile;
pub mod recommend;
mod state;
mod write;

pub use apply::uncaptured_profile;
use apply::{read_main_conf, reapply_system, writes_for};
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
    // tuned-main.conf, parsed once for the state, each profile and the
    // re-application
    let main = read_main_conf(host);
    let (reason, candidates) = match state::state_with(host, &main) {
        TunedState::Undecided { reason, candidates } => (reason, candidates),
        other => return writes_for(host, &main, other, facts, true),
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
            &main,
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
    if reapply_enabled(&main) {
        reapply_system(host, version(host), &mut out);
    }
    out
}

/// tuned-main.conf's `reapply_sysctl` (default on).
fn reapply_enabled(main: &[(String, String)]) -> bool {
    main.iter()
        .rev()
        .find(|(n, _)| n == "reapply_sysctl")
        .and_then(|(_, v)| parse_bool(v))
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn write(root: &Path, p: &str, text: &str) {
        let f = root.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    /// A snapshot whose active profile `child` includes `base`, each with
    /// `n` options in one `[sysctl]` unit, `n` units of their own and `n`
    /// variables (`n` of them computed at run time), `child` dropping `n`
    /// of `base`'s options and using a variable in each of its own.
    fn many_options(n: usize) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let h = d.path();
        let wants = h.join("etc/systemd/system/multi-user.target.wants");
        std::fs::create_dir_all(&wants).unwrap();
        std::os::unix::fs::symlink(
            "/usr/lib/systemd/system/tuned.service",
            wants.join("tuned.service"),
        )
        .unwrap();
        write(h, ACTIVE_PROFILE, "child\n");
        let mut base = String::from("[variables]\nv0=1\n");
        for i in 0..n {
            base += &format!("v{}=${{v0}}\nf{i}=${{f:cpulist_online:{i}}}\n", i + 1);
        }
        base += "[sysctl]\n";
        for i in 0..n {
            base += &format!("kernel.k{i}=0\nkernel.d{i}=0\n");
        }
        for i in 0..n {
            base += &format!("[u{i}]\nx=1\n");
        }
        let mut child = String::from("[main]\ninclude=base\n[sysctl]\ndrop=");
        child += &(0..n)
            .map(|i| format!("kernel.d{i}"))
            .collect::<Vec<_>>()
            .join(",");
        child += "\nkernel.fn=${f7}\n";
        for i in 0..n {
            child += &format!("kernel.k{i}=${{v{i}}}\n");
        }
        for i in 0..n {
            child += &format!("[u{i}]\nx=2\n");
        }
        write(h, "/usr/lib/tuned/base/tuned.conf", &base);
        write(h, "/usr/lib/tuned/child/tuned.conf", &child);
        d
    }

    /// Each option, unit and variable was looked up by scanning the ones
    /// before it (as the profile was parsed, as `child` was merged over
    /// `base`, as a variable was expanded, and for each option whether it
    /// uses a variable computed at run time): a profile of N options cost
    /// N² steps. Counted by the lookups' own counter (`probes`), since a
    /// scan allocates nothing.
    #[test]
    fn options_units_and_variables_are_looked_up_by_name_in_linear_work() {
        let work = |n: usize| {
            let d = many_options(n);
            let host = Host::snapshot(d.path()).unwrap();
            let mut facts = Facts::new(&host);
            crate::parse::tuned::probes::take();
            let writes = sysctl_writes(&host, &mut facts);
            (crate::parse::tuned::probes::take(), writes)
        };
        let (small, _) = work(10_000);
        let (big, writes) = work(40_000);
        assert!(
            big <= 5 * small,
            "lookups looked at {big} entries for 40,000 options, {small} for 10,000 ({:.1}x)",
            big as f64 / small as f64
        );
        assert!(big <= 40 * 40_000, "{big} entries looked at");
        // and the profile is what tuned makes of it: the later profile's
        // value, the dropped options gone, a run-time variable unknown
        let get = |k: &str| writes.iter().find(|w| w.key == k).map(|w| &w.entry);
        assert!(
            matches!(get("kernel.k39999"), Some(Entry::Set(s)) if s.raw == "1"),
            "{:?}",
            get("kernel.k39999")
        );
        assert!(get("kernel.d5").is_none());
        assert!(matches!(get("kernel.fn"), Some(Entry::Unreadable { .. })));
        assert_eq!(writes.len(), 40_001);
    }

    proptest::proptest! {
        /// One pass over a value finds what testing it for `${NAME}` of
        /// each run-time variable found (the scan it replaces).
        #[test]
        fn a_value_uses_a_run_time_variable_as_a_search_for_each_finds(
            value in "(\\$|\\{|\\}|a|b|_|é|\\\\| )*",
            names in proptest::collection::vec("(a|b|_|é){0,3}", 0..4),
        ) {
            let mut vars = profile::Vars::default();
            for n in &names {
                vars.add(n.clone(), Err("f".into()));
            }
            let scan = names.iter().any(|k| value.contains(&format!("${{{k}}}")));
            proptest::prop_assert_eq!(vars.uses_computed(&value), scan);
        }
    }
}
