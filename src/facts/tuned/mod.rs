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

    /// [`sysctl_writes`] as it was before tuned-main.conf was read once:
    /// the state, each profile and the re-application each read and parse
    /// it. The reference.
    fn sysctl_writes_parsing_main_each_time(host: &Host, facts: &mut Facts) -> Vec<Write> {
        let (reason, candidates) = match state(host) {
            TunedState::Undecided { reason, candidates } => (reason, candidates),
            other => return writes_for(host, &read_main_conf(host), other, facts, true),
        };
        facts.issues.push(
            FileIssue::problem("tuned", ACTIVE_PROFILE, None, reason)
                .with_level(IssueLevel::Unknown),
        );
        let mut keys: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for c in &candidates {
            let mut scratch = Facts::new(host);
            let st = TunedState::Enabled(vec![c.clone()]);
            for w in writes_for(host, &read_main_conf(host), st, &mut scratch, false) {
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
        let main = read_main_conf(host);
        if reapply_enabled(&main) {
            reapply_system(host, version(host), &mut out);
        }
        out
    }

    fn write(root: &Path, p: &str, text: &str) {
        let f = root.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    /// Snapshots with tuned in each state the main file steers: manual,
    /// auto with a decided and an undecided recommendation, no re-apply,
    /// its own profile directories and priority.
    fn layouts() -> Vec<tempfile::TempDir> {
        let mains = [
            None,
            Some("reapply_sysctl = 0\n"),
            Some("recommend_command = 0\ndefault_instance_priority = 5\n"),
            Some("profile_dirs = /usr/lib/tuned,/etc/tuned/mine\nreapply_sysctl = 1\n"),
        ];
        let modes = [("manual", "a"), ("auto", "a"), ("", ""), ("auto", "")];
        let mut out = Vec::new();
        for main in mains {
            for (mode, active) in modes {
                let d = tempfile::tempdir().unwrap();
                let h = d.path();
                let wants = h.join("etc/systemd/system/multi-user.target.wants");
                std::fs::create_dir_all(&wants).unwrap();
                std::os::unix::fs::symlink(
                    "/usr/lib/systemd/system/tuned.service",
                    wants.join("tuned.service"),
                )
                .unwrap();
                write(h, ACTIVE_PROFILE, &format!("{active}\n"));
                if !mode.is_empty() {
                    write(h, PROFILE_MODE, &format!("{mode}\n"));
                }
                if let Some(m) = main {
                    write(h, MAIN_CONF, m);
                }
                write(
                    h,
                    "/usr/lib/tuned/a/tuned.conf",
                    "[main]\ninclude=b\n[sysctl]\nvm.swappiness=10\nkernel.x = ${v}\n[variables]\nv=3\n",
                );
                write(
                    h,
                    "/usr/lib/tuned/b/tuned.conf",
                    "[sysctl]\nvm.dirty_ratio = 40\npriority=3\n",
                );
                write(
                    h,
                    "/etc/tuned/mine/a/tuned.conf",
                    "[sysctl]\nvm.swappiness=20\n",
                );
                write(
                    h,
                    "/usr/lib/tuned/recommend.d/50-tuned.conf",
                    "[virtual-guest]\nvirt=.+\n\n[b]\n",
                );
                write(h, "/etc/sysctl.d/10-x.conf", "vm.swappiness = 30\n");
                out.push(d);
            }
        }
        out
    }

    #[test]
    fn main_conf_parsed_once_gives_the_writes_and_issues_of_parsing_it_each_time() {
        let dirs = layouts();
        let mut hosts: Vec<Host> = dirs
            .iter()
            .map(|d| Host::snapshot(d.path()).unwrap())
            .collect();
        hosts.push(Host::live());
        for h in std::fs::read_dir("testdata/hosts").unwrap() {
            hosts.push(Host::snapshot(h.unwrap().path()).unwrap());
        }
        let mut with_writes = 0;
        for host in &hosts {
            let (mut new, mut old) = (Facts::new(host), Facts::new(host));
            let w_new = sysctl_writes(host, &mut new);
            let w_old = sysctl_writes_parsing_main_each_time(host, &mut old);
            assert_eq!(format!("{w_new:?}"), format!("{w_old:?}"));
            assert_eq!(new.issues, old.issues);
            with_writes += usize::from(!w_new.is_empty());
        }
        // the layouts reach tuned's writes, not only its early returns
        assert!(with_writes >= 8, "{with_writes}");
    }
}
