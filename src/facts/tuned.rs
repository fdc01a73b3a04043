//! TuneD as a persisted sysctl source: on a host where tuned is enabled, the
//! `[sysctl]` section of the active profile (with its `include=` chain,
//! `[variables]` and `${...}`) and tuned's re-application of /run/sysctl.d,
//! /etc/sysctl.d and /etc/sysctl.conf, in the order tuned's plugin_sysctl.py
//! writes them after systemd-sysctl. Reads only through [`Host`]; produces
//! entries for the `sysctl_boot` namespace, never a namespace of its own.

use crate::host::{EntryKind, Host, ReadError};
use crate::parse::sysctl::{is_glob, normalize_key};
use crate::parse::tuned::{
    expand, parse_bool, parse_main_conf, parse_profile, parse_reapply, unquote, ExpandError,
    TunedProfile,
};

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel, Setting};

/// The unit symlink `systemctl enable tuned` creates (`WantedBy=multi-user.target`).
pub const ENABLED_LINK: &str = "/etc/systemd/system/multi-user.target.wants/tuned.service";
/// The profile(s) tuned loads at start (`tuned-adm profile NAME` writes it).
pub const ACTIVE_PROFILE: &str = "/etc/tuned/active_profile";
/// A profile tuned loads after the active ones (tuned >= 2.22).
pub const POST_LOADED_PROFILE: &str = "/etc/tuned/post_loaded_profile";
/// tuned's daemon configuration (`reapply_sysctl`, `profile_dirs`).
pub const MAIN_CONF: &str = "/etc/tuned/tuned-main.conf";

/// Profile directories, lowest priority first, when `profile_dirs` is not set:
/// tuned's `[/usr/lib/tuned, /etc/tuned]` and the `profiles/` subdirectories
/// newer releases (2.23+) use.
const DEFAULT_PROFILE_DIRS: [&str; 4] = [
    "/usr/lib/tuned",
    "/usr/lib/tuned/profiles",
    "/etc/tuned",
    "/etc/tuned/profiles",
];

/// Directories tuned re-applies, first one wins per name (plugin_sysctl.py
/// `SYSCTL_CONFIG_DIRS`); /usr/lib/sysctl.d is not among them.
const REAPPLY_DIRS: [&str; 2] = ["/run/sysctl.d", "/etc/sysctl.d"];

/// Keys tuned refuses to write (`DEPRECATED_SYSCTL_OPTIONS`, by basename).
const DEPRECATED: [&str; 2] = ["base_reachable_time", "retrans_time"];

/// Unit options that configure the plugin instance, not sysctl keys.
const UNIT_OPTIONS: [&str; 11] = [
    "type",
    "devices",
    "enabled",
    "replace",
    "priority",
    "drop",
    "devices_udev_regex",
    "script_pre",
    "script_post",
    "uname_regex",
    "cpuinfo_regex",
];

/// At most this many profiles in one include chain (each file is loaded once,
/// as tuned does; the cap bounds a hostile snapshot).
const MAX_PROFILES: usize = 64;

/// Whether tuned runs at boot on this host, and why we think so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TunedState {
    /// tuned.service is not enabled: tuned changes nothing at boot.
    NotEnabled,
    /// Enabled, with these profile names (active_profile, then post_loaded_profile).
    Enabled(Vec<String>),
    /// Enabled, but the profile cannot be known (active_profile missing or empty:
    /// tuned picks its recommended profile at run time).
    Unknown(String),
}

/// Decide whether tuned is enabled: the `multi-user.target.wants/tuned.service`
/// link (a snapshot keeps it even when its target is not copied) and a
/// non-empty `/etc/tuned/active_profile`.
pub fn state(host: &Host) -> TunedState {
    let enabled = host.read_link(ENABLED_LINK).is_some() || host.exists(ENABLED_LINK);
    if !enabled {
        return TunedState::NotEnabled;
    }
    let mut names: Vec<String> = match host.read_to_string(ACTIVE_PROFILE) {
        Ok(t) => t.split_whitespace().map(str::to_string).collect(),
        Err(_) => Vec::new(),
    };
    if names.is_empty() {
        return TunedState::Unknown(format!(
            "tuned.service is enabled but {ACTIVE_PROFILE} is missing or empty: tuned applies the profile it recommends at run time, which the files do not say"
        ));
    }
    if let Ok(t) = host.read_to_string(POST_LOADED_PROFILE) {
        names.extend(t.split_whitespace().map(str::to_string));
    }
    TunedState::Enabled(names)
}

/// `Loader.safe_name`: `^[a-zA-Z0-9_.-]+$`.
fn safe_name(n: &str) -> bool {
    !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// One loaded profile file.
struct Loaded {
    name: String,
    path: String,
    profile: TunedProfile,
}

/// An option of the merged profile with where it came from.
#[derive(Clone)]
struct Opt {
    key: String,
    value: String,
    path: String,
    line: usize,
    profile: String,
}

/// Load `names` and their includes depth-first, includes before the profile
/// that names them (`Loader._load_profile`); a file already loaded is skipped.
fn load(
    host: &Host,
    dirs: &[String],
    names: &[String],
    out: &mut Vec<Loaded>,
    processed: &mut Vec<String>,
    facts: &mut Facts,
) -> Result<(), String> {
    for name in names.iter().filter(|n| safe_name(n)) {
        if out.len() >= MAX_PROFILES {
            return Err(format!(
                "more than {MAX_PROFILES} profiles in one include chain"
            ));
        }
        // `-NAME`: conditional include, a missing profile is not an error
        let (conditional, name) = match name.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, name.as_str()),
        };
        let base = name.rsplit('/').next().unwrap_or(name);
        let mut found: Option<String> = None;
        let mut skipped = false;
        for d in dirs.iter().rev() {
            let p = format!("{}/{base}/tuned.conf", d.trim_end_matches('/'));
            if processed.contains(&p) {
                skipped = true;
                continue;
            }
            if matches!(host.kind_of(&p), Ok(EntryKind::File)) {
                found = Some(p);
                break;
            }
        }
        let Some(path) = found else {
            if skipped || conditional {
                continue; // already loaded (an include cycle), or optional
            }
            return Err(format!(
                "profile `{name}` not found in {}",
                dirs.iter()
                    .rev()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        processed.push(path.clone());
        let text = host
            .read_to_string(&path)
            .map_err(|e| format!("{path}: {e}"))?;
        let (mut profile, issues) = parse_profile(&text);
        for i in &issues {
            facts.issues.push(FileIssue::from_parse("tuned", &path, i));
        }
        if !issues.is_empty() && profile.sections.is_empty() {
            return Err(format!("{path} cannot be parsed"));
        }
        // ${i:PROFILE_DIR} is the directory of the file being loaded
        let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or("/");
        for s in &mut profile.sections {
            for o in &mut s.options {
                if o.value.contains("${i:PROFILE_DIR}") {
                    o.value = o.value.replace("${i:PROFILE_DIR}", dir);
                }
            }
        }
        let include = profile
            .sections
            .iter_mut()
            .find(|s| s.name == "main")
            .and_then(|s| {
                let i = s.options.iter().position(|o| o.key == "include")?;
                Some(s.options.remove(i).value)
            });
        if let Some(inc) = include {
            let inc = expand(&inc, &[]).map_err(|ExpandError::Function(f)| {
                format!("{path}: `include` uses the run-time function `{f}`")
            })?;
            let names: Vec<String> = inc
                .split([',', ';'])
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            load(host, dirs, &names, out, processed, facts)?;
        }
        out.push(Loaded {
            name: name.to_string(),
            path,
            profile,
        });
    }
    Ok(())
}

/// Merge loaded profiles in order (`Merger._merge_two`): a later section
/// updates the earlier one of the same name (a repeated option keeps its
/// place, takes the new value) unless it says `replace=true`.
fn merge(loaded: &[Loaded]) -> Vec<(String, Vec<Opt>)> {
    let mut merged: Vec<(String, Vec<Opt>)> = Vec::new();
    for l in loaded {
        for s in &l.profile.sections {
            let opts: Vec<Opt> = s
                .options
                .iter()
                .map(|o| Opt {
                    key: o.key.clone(),
                    value: o.value.clone(),
                    path: l.path.clone(),
                    line: o.line,
                    profile: l.name.clone(),
                })
                .collect();
            let replace = s.get("replace").and_then(parse_bool) == Some(true);
            match merged.iter_mut().find(|(n, _)| *n == s.name) {
                Some((_, existing)) if !replace => {
                    for o in opts {
                        match existing.iter_mut().find(|e| e.key == o.key) {
                            Some(e) => *e = o,
                            None => existing.push(o),
                        }
                    }
                }
                Some((_, existing)) => *existing = opts,
                None => merged.push((s.name.clone(), opts)),
            }
        }
    }
    merged
}

/// The `[variables]` of the merged profile, in order; `include=` reads a
/// file of `NAME=VALUE` lines relative to the profile that names it. A value
/// using a run-time function is kept as `Err(function)`.
fn variables(host: &Host, merged: &[(String, Vec<Opt>)]) -> Vec<(String, Result<String, String>)> {
    let mut vars: Vec<(String, Result<String, String>)> = Vec::new();
    let Some((_, opts)) = merged.iter().find(|(n, _)| n == "variables") else {
        return vars;
    };
    for o in opts {
        let mut pairs: Vec<(String, String)> = Vec::new();
        if o.key == "include" {
            let dir = o.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("/");
            let p = crate::host::lexical(&crate::host::join_host(dir, o.value.trim()));
            if let Ok(t) = host.read_to_string(&p) {
                pairs = parse_main_conf(&t);
            }
        } else {
            pairs.push((o.key.clone(), o.value.clone()));
        }
        for (k, v) in pairs {
            if !k.chars().all(|c| c.is_alphanumeric() || c == '_') {
                continue; // tuned: "variable definition contains unallowed characters"
            }
            let known: Vec<(String, String)> = vars
                .iter()
                .filter_map(|(k, v)| v.as_ref().ok().map(|v| (k.clone(), v.clone())))
                .collect();
            let e = expand(&v, &known).map_err(|ExpandError::Function(f)| f);
            vars.push((k, e));
        }
    }
    vars
}

/// tuned's `_get_sysctl_path`: every `.` and `/` swapped, so only a key
/// written dotted reaches the file `sysctl -a` names that way. Returns the
/// canonical key, or why tuned writes nothing for it.
fn tuned_key(key: &str) -> Result<String, &'static str> {
    if key.starts_with('-') {
        return Err("tuned has no `-` prefix: it writes to a path that does not exist");
    }
    if is_glob(key) {
        return Err("tuned expands no globs: it writes to a path that does not exist");
    }
    if normalize_key(key) != key {
        return Err("tuned takes the key as dotted (every `.` and `/` swapped): the slash form names a path that does not exist");
    }
    if DEPRECATED.iter().any(|d| key.rsplit('.').next() == Some(d)) {
        return Err("tuned refuses to set deprecated sysctl options");
    }
    Ok(key.to_string())
}

/// The sysctl writes tuned makes after boot, in order, as `sysctl_boot`
/// entries: each `[sysctl]` instance of the merged profile, and after each,
/// with `reapply_sysctl` (the default), the re-application of /run/sysctl.d
/// and /etc/sysctl.d (`*.conf`, first directory wins per name, sorted) and
/// /etc/sysctl.conf with tuned's own line parser.
pub fn sysctl_writes(host: &Host, facts: &mut Facts) -> Vec<(String, Entry)> {
    let names = match state(host) {
        TunedState::NotEnabled => return Vec::new(),
        TunedState::Unknown(reason) => {
            facts.issues.push(
                FileIssue::problem("tuned", ACTIVE_PROFILE, None, reason)
                    .with_level(IssueLevel::Unknown),
            );
            return Vec::new();
        }
        TunedState::Enabled(n) => n,
    };
    let main = match host.read_to_string(MAIN_CONF) {
        Ok(t) => parse_main_conf(&t),
        Err(_) => Vec::new(),
    };
    let get = |k: &str| {
        main.iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let reapply = get("reapply_sysctl")
        .and_then(|v| parse_bool(&v))
        .unwrap_or(true);
    let dirs: Vec<String> = match get("profile_dirs") {
        Some(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => DEFAULT_PROFILE_DIRS.iter().map(|s| s.to_string()).collect(),
    };
    let mut loaded = Vec::new();
    if let Err(e) = load(host, &dirs, &names, &mut loaded, &mut Vec::new(), facts) {
        facts.issues.push(FileIssue::problem(
            "tuned",
            ACTIVE_PROFILE,
            None,
            format!(
                "tuned cannot load the active profile `{}`: {e}; it applies no sysctl values",
                names.join(" ")
            ),
        ));
        return Vec::new();
    }
    let active = names.join(" ");
    let merged = merge(&loaded);
    let vars = variables(host, &merged);
    let known: Vec<(String, String)> = vars
        .iter()
        .filter_map(|(k, v)| v.as_ref().ok().map(|v| (k.clone(), v.clone())))
        .collect();
    let mut out: Vec<(String, Entry)> = Vec::new();
    for (unit, opts) in &merged {
        let get = |k: &str| opts.iter().find(|o| o.key == k).map(|o| o.value.as_str());
        let is_sysctl = get("type").map(str::trim).unwrap_or(unit.as_str()) == "sysctl";
        if !is_sysctl || get("enabled").and_then(parse_bool) == Some(false) {
            continue;
        }
        let dropped: Vec<&str> = get("drop")
            .map(|d| d.split(',').map(str::trim).collect())
            .unwrap_or_default();
        for o in opts {
            if UNIT_OPTIONS.contains(&o.key.as_str()) || dropped.contains(&o.key.as_str()) {
                continue;
            }
            let ev = Evidence::line(o.path.clone(), o.line);
            let key = match tuned_key(&o.key) {
                Ok(k) => k,
                Err(why) => {
                    facts.issues.push(
                        FileIssue::problem(
                            "tuned",
                            &o.path,
                            Some(o.line),
                            format!("`{}`: {why}", o.key),
                        )
                        .with_level(IssueLevel::Note),
                    );
                    continue;
                }
            };
            // a variable whose value comes from a run-time function
            let uses_fn = vars
                .iter()
                .any(|(k, v)| v.is_err() && o.value.contains(&format!("${{{k}}}")));
            let value = match (uses_fn, expand(unquote(&o.value), &known)) {
                (false, Ok(v)) => v,
                (_, Err(ExpandError::Function(f))) | (true, Ok(f)) => {
                    let f = if uses_fn {
                        "a variable computed at run time".to_string()
                    } else {
                        format!("`${{f:{f}}}`")
                    };
                    out.push((
                        key,
                        Entry::Unreadable {
                            reason: format!(
                                "tuned profile `{}` computes it with {f} on the running host",
                                o.profile
                            ),
                            evidence: vec![ev],
                        },
                    ));
                    continue;
                }
            };
            let mut s = Setting::new(super::sysctl::typed(&value), value.clone(), ev);
            let modifier = if value.starts_with(['>', '<']) {
                " (a `>`/`<` prefix: tuned writes it only if that is larger/smaller than the value at that time)"
            } else {
                ""
            };
            s.note = Some(format!(
                "set by tuned profile `{}` (active profile `{active}`) after systemd-sysctl{modifier}",
                o.profile
            ));
            out.push((key, Entry::Set(s)));
        }
        if reapply {
            reapply_system(host, &mut out);
        }
    }
    out
}

/// `_apply_system_sysctl`: /run/sysctl.d then /etc/sysctl.d, `*.conf`, the
/// first directory wins per name, sorted by name, then /etc/sysctl.conf.
/// Files that cannot be opened (dangling links, directories) write nothing.
fn reapply_system(host: &Host, out: &mut Vec<(String, Entry)>) {
    let mut files: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for d in REAPPLY_DIRS {
        let Ok(entries) = host.read_dir(d) else {
            continue;
        };
        for e in entries {
            if e.name.ends_with(".conf") && !files.contains_key(&e.name) {
                files.insert(e.name.clone(), format!("{d}/{}", e.name));
            }
        }
    }
    let mut paths: Vec<String> = files.into_values().collect();
    paths.push("/etc/sysctl.conf".to_string());
    for p in paths {
        if !matches!(host.kind_of(&p), Ok(EntryKind::File)) {
            continue;
        }
        let text = match host.read_to_string(&p) {
            Ok(t) => t,
            Err(ReadError::NotFound) | Err(_) => continue,
        };
        for l in parse_reapply(&text) {
            let Ok(key) = tuned_key(&l.key) else {
                continue;
            };
            let mut s = Setting::new(
                super::sysctl::typed(&l.value),
                l.value.clone(),
                Evidence::line(p.clone(), l.line),
            );
            s.note = Some(
                "re-applied by tuned after its profile (`reapply_sysctl`, the default): tuned reads /run/sysctl.d, /etc/sysctl.d and /etc/sysctl.conf again, not /usr/lib/sysctl.d"
                    .to_string(),
            );
            out.push((key, Entry::Set(s)));
        }
    }
}
