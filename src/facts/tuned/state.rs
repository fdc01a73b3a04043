//! Whether tuned runs at boot on a host and which profiles it loads
//! ([`TunedState`], as the daemon's `_get_startup_profile` decides it from
//! the unit link, profile_mode, active_profile, post_loaded_profile and the
//! recommender), and which tuned is installed ([`version`]). Reads only
//! tuned's own files through [`Host`]; must not load a profile or decide a
//! write (that is `profile` and `apply`).

use crate::host::Host;
use crate::parse::tuned::parse_main_conf;

use super::paths::{ACTIVE_PROFILE, ENABLED_LINK, MAIN_CONF, POST_LOADED_PROFILE, PROFILE_MODE};
use super::recommend::{self, Recommendation};

/// Where the installed tuned says its version (the python package), Debian's
/// layout first, then RHEL's per python version.
const VERSION_FILES: [&str; 10] = [
    "/usr/lib/python3/dist-packages/tuned/version.py",
    "/usr/lib/python3.6/site-packages/tuned/version.py",
    "/usr/lib/python3.8/site-packages/tuned/version.py",
    "/usr/lib/python3.9/site-packages/tuned/version.py",
    "/usr/lib/python3.10/site-packages/tuned/version.py",
    "/usr/lib/python3.11/site-packages/tuned/version.py",
    "/usr/lib/python3.12/site-packages/tuned/version.py",
    "/usr/lib/python3.13/site-packages/tuned/version.py",
    "/usr/lib/python3.14/site-packages/tuned/version.py",
    "/usr/lib/python2.7/site-packages/tuned/version.py",
];

/// Whether tuned runs at boot on this host, and why we think so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TunedState {
    /// tuned.service is not enabled: tuned changes nothing at boot.
    NotEnabled,
    /// Enabled, with these profile names (active_profile, then post_loaded_profile).
    Enabled(Vec<String>),
    /// Enabled in `auto` mode (or with no mode and no active profile): the
    /// profiles tuned applies at start (the recommended one, or the one it
    /// last applied when the files do not decide the recommendation), then
    /// post_loaded_profile; `note` says which and why, for people.
    Recommended {
        /// Profile names, as for `Enabled`.
        names: Vec<String>,
        /// Where the choice comes from.
        note: String,
    },
    /// Enabled, but tuned refuses to start (an invalid profile_mode).
    Unknown(String),
    /// Enabled, but the profile cannot be known (auto mode, the files do not
    /// decide the recommendation and active_profile is missing or empty):
    /// why, and the profiles the recommender may answer.
    Undecided {
        /// For people: what would decide it.
        reason: String,
        /// One of these is applied (see [`recommend::Recommendation`]).
        candidates: Vec<String>,
    },
}

/// Decide whether tuned is enabled (the `multi-user.target.wants/tuned.service`
/// link; a snapshot keeps it even when its target is not copied) and which
/// profiles it loads, as the daemon's `_get_startup_profile` does:
/// `profile_mode` `auto`, or no mode and no active profile, means the
/// recommender picks one at start ([`recommend`]); where the files do not
/// decide it, active_profile (tuned writes the profile it applied there in
/// both modes) stands in for it, with a note. `manual` with no active
/// profile loads only the post-loaded profile, if any.
pub fn state(host: &Host) -> TunedState {
    let main = match host.read_to_string(MAIN_CONF) {
        Ok(t) => parse_main_conf(&t),
        Err(_) => Vec::new(),
    };
    state_with(host, &main)
}

/// [`state`] with tuned-main.conf's lines already read (`main`).
pub(super) fn state_with(host: &Host, main: &[(String, String)]) -> TunedState {
    let enabled = host.read_link(ENABLED_LINK).is_some() || host.exists(ENABLED_LINK);
    if !enabled {
        return TunedState::NotEnabled;
    }
    let words = |p: &str| -> Vec<String> {
        match host.read_to_string(p) {
            Ok(t) => t.split_whitespace().map(str::to_string).collect(),
            Err(_) => Vec::new(),
        }
    };
    let mut names = words(ACTIVE_PROFILE);
    let mode = host
        .read_to_string(PROFILE_MODE)
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    let manual = match mode.as_str() {
        "manual" => true,
        "auto" => false,
        "" => !names.is_empty(),
        other => {
            return TunedState::Unknown(format!(
                "{PROFILE_MODE} says `{other}` (tuned accepts `manual` or `auto` and refuses to start otherwise)"
            ))
        }
    };
    let post: Vec<String> = words(POST_LOADED_PROFILE).into_iter().take(1).collect();
    if manual {
        names.extend(post);
        return TunedState::Enabled(names);
    }
    let why_auto = if mode == "auto" {
        format!("{PROFILE_MODE} is `auto`")
    } else {
        format!("{PROFILE_MODE} is missing and {ACTIVE_PROFILE} is missing or empty")
    };
    let recommend_command = main
        .iter()
        .rev()
        .find(|(k, _)| k == "recommend_command")
        .map(|(_, v)| v.as_str());
    let active = names.join(" ");
    match recommend::recommend(host, recommend_command) {
        Recommendation::Profile { name, why } => {
            let stale = if !active.is_empty() && active != name {
                format!(
                    "; {ACTIVE_PROFILE} still names `{active}`, the profile tuned applied last, but at its next start tuned applies `{name}`"
                )
            } else {
                String::new()
            };
            let note = format!(
                "{why_auto}: tuned runs its profile recommender at start and applies `{name}` ({why}){stale}"
            );
            let mut names = vec![name];
            names.extend(post);
            TunedState::Recommended { names, note }
        }
        Recommendation::Undecided(why, _) if !names.is_empty() => {
            let note = format!(
                "{why_auto}: tuned runs its profile recommender again at start, and {why}; driftaudit takes `{active}` from {ACTIVE_PROFILE}, the profile tuned applied last (it writes it in auto mode too), so the values are those of `{active}` as long as the recommender still picks it"
            );
            names.extend(post);
            TunedState::Recommended { names, note }
        }
        Recommendation::Undecided(why, candidates) => TunedState::Undecided {
            reason: format!(
                "tuned.service is enabled and {why_auto}: tuned applies the profile its recommender picks at start, and {why}; it is one of `{}`, which no file decides, so every value one of them sets is unknown unless tuned re-applies it from /run/sysctl.d, /etc/sysctl.d or /etc/sysctl.conf",
                candidates.join("`, `")
            ),
            candidates,
        },
    }
}

/// The installed tuned's (major, minor), from its python package.
pub fn version(host: &Host) -> Option<(u32, u32)> {
    let text = VERSION_FILES
        .iter()
        .find_map(|p| host.read_to_string(p).ok())?;
    let num = |name: &str| -> Option<u32> {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(name)?
                .trim()
                .strip_prefix('=')?
                .trim()
                .parse()
                .ok()
        })
    };
    Some((num("TUNED_VERSION_MAJOR")?, num("TUNED_VERSION_MINOR")?))
}
