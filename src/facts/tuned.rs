//! TuneD as a persisted sysctl source: on a host where tuned is enabled, the
//! `[sysctl]` section of the active profile (with its `include=` chain,
//! `[variables]` and `${...}`) and tuned's re-application of /run/sysctl.d,
//! /etc/sysctl.d and /etc/sysctl.conf, in the order tuned's plugin_sysctl.py
//! writes them after systemd-sysctl; in `auto` mode the profile its
//! recommender picks ([`recommend`]), or active_profile where the files do not
//! decide it. Reads only through [`Host`]; produces
//! entries for the `sysctl_boot` namespace, never a namespace of its own.

use crate::host::{EntryKind, Host, ReadError};
use crate::parse::sysctl::{is_glob, resolve_proc_path, swap_dot_slash, typed};
use crate::parse::tuned::{
    expand, parse_bool, parse_main_conf, parse_profile, parse_reapply, unit_bool, unquote,
    ExpandError, TunedProfile,
};

use super::{Entry, Evidence, Facts, FileIssue, IssueLevel, Setting};

pub mod recommend;
use recommend::Recommendation;

/// One write tuned makes after boot, in order.
#[derive(Debug, Clone)]
pub struct Write {
    /// The dotted sysctl key.
    pub key: String,
    /// The value written (or why it cannot be known).
    pub entry: Entry,
    /// A profile value's `>`/`<` prefix: tuned writes it only if it is
    /// larger/smaller than the value at that time (see [`resolve`]).
    pub modifier: Option<char>,
    /// Nothing changes when the value at that time is already this (a line
    /// tuned re-applies whose key depends on its version: where systemd's
    /// value from the same line still stands, either way it stays).
    pub keep_if: Option<String>,
}

/// The unit symlink `systemctl enable tuned` creates (`WantedBy=multi-user.target`).
pub const ENABLED_LINK: &str = "/etc/systemd/system/multi-user.target.wants/tuned.service";
/// The profile(s) tuned loads at start (`tuned-adm profile NAME` writes it).
pub const ACTIVE_PROFILE: &str = "/etc/tuned/active_profile";
/// A profile tuned loads after the active ones.
pub const POST_LOADED_PROFILE: &str = "/etc/tuned/post_loaded_profile";
/// `manual` or `auto` (tuned-adm writes it): in `auto` tuned applies the
/// profile its recommender picks, whatever active_profile says.
pub const PROFILE_MODE: &str = "/etc/tuned/profile_mode";
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
    let main = match host.read_to_string(MAIN_CONF) {
        Ok(t) => parse_main_conf(&t),
        Err(_) => Vec::new(),
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

/// One unit (section) of the merged profile, as tuned's `Unit` holds it.
struct Unit {
    name: String,
    /// `type=` (default: the unit's name); the later profile's wins.
    kind: String,
    /// `enabled=` as tuned's `Unit` reads it; the later profile's wins.
    enabled: bool,
    /// `cpuinfo_regex=`/`uname_regex=`: whether the unit applies depends on
    /// the running machine.
    host_regex: bool,
    /// Options in order (`priority` among them, as tuned keeps it there).
    opts: Vec<Opt>,
}

/// Options tuned's `Unit` takes out of a section (they configure the unit).
const POPPED: [&str; 10] = [
    "type",
    "enabled",
    "replace",
    "drop",
    "devices",
    "devices_udev_regex",
    "cpuinfo_regex",
    "uname_regex",
    "script_pre",
    "script_post",
];

/// Merge loaded profiles in order (`Merger._merge_two`): a later unit of the
/// same name takes over `type` and `enabled`, removes the options its `drop=`
/// names from the earlier one, then updates it (a repeated option keeps its
/// place, takes the new value); with `replace=true` it replaces the earlier
/// unit in place.
fn merge(loaded: &[Loaded]) -> Vec<Unit> {
    let mut merged: Vec<Unit> = Vec::new();
    for l in loaded {
        for s in &l.profile.sections {
            if s.name == "main" {
                continue;
            }
            let get = |k: &str| s.get(k);
            let unit = Unit {
                name: s.name.clone(),
                kind: get("type").unwrap_or(&s.name).to_string(),
                enabled: get("enabled").is_none_or(unit_bool),
                host_regex: get("cpuinfo_regex").is_some() || get("uname_regex").is_some(),
                opts: s
                    .options
                    .iter()
                    .filter(|o| !POPPED.contains(&o.key.as_str()))
                    .map(|o| Opt {
                        key: o.key.clone(),
                        value: o.value.clone(),
                        path: l.path.clone(),
                        line: o.line,
                        profile: l.name.clone(),
                    })
                    .collect(),
            };
            let replace = get("replace").is_some_and(unit_bool);
            let Some(existing) = merged.iter_mut().find(|u| u.name == s.name) else {
                merged.push(unit);
                continue;
            };
            if replace {
                *existing = unit;
                continue;
            }
            existing.kind = unit.kind;
            existing.enabled = unit.enabled;
            existing.host_regex |= unit.host_regex;
            if let Some(drop) = get("drop") {
                let names: Vec<&str> = drop.split([',', ';']).map(str::trim).collect();
                existing.opts.retain(|o| !names.contains(&o.key.as_str()));
            }
            for o in unit.opts {
                match existing.opts.iter_mut().find(|e| e.key == o.key) {
                    Some(e) => *e = o,
                    None => existing.opts.push(o),
                }
            }
        }
    }
    merged
}

/// The `[variables]` of the merged profile, in order; `include=` reads a
/// file of `NAME=VALUE` lines relative to the profile that names it. A value
/// using a run-time function is kept as `Err(function)`.
fn variables(host: &Host, merged: &[Unit]) -> Vec<(String, Result<String, String>)> {
    let mut vars: Vec<(String, Result<String, String>)> = Vec::new();
    let Some(unit) = merged.iter().find(|u| u.name == "variables") else {
        return vars;
    };
    for o in &unit.opts {
        let mut pairs: Vec<(String, String)> = Vec::new();
        if o.key == "include" {
            // `os.path.normpath(value)`: a relative path is relative to the
            // daemon's working directory, `/` (profiles write
            // `${i:PROFILE_DIR}/file`)
            let p = crate::host::lexical(&crate::host::join_host("/", o.value.trim()));
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

/// What tuned's `_write_sysctl` does with a key as written.
enum KeyFate {
    /// It writes the file `sysctl -a` names by this dotted key.
    Key(String),
    /// It writes nothing (a path that does not exist, or refused).
    Skip(&'static str),
    /// It depends on the installed tuned's version, which is not known: the
    /// reason, and the keys it may write (up to 2.20, later).
    Unknown(String, Vec<String>),
}

/// tuned's `_get_sysctl_path`. Up to 2.20 it turns every `.` into `/`, so a
/// key in slash form (`net/core/somaxconn`) reaches its file and an
/// interface name with a dot written `eth0/100` does not; later releases
/// swap `.` and `/` (as sysctl does), so the slash form names no file.
fn tuned_key(key: &str, version: Option<(u32, u32)>) -> KeyFate {
    if key.starts_with('-') {
        return KeyFate::Skip("tuned has no `-` prefix: it writes to a path that does not exist");
    }
    if is_glob(key) {
        return KeyFate::Skip("tuned expands no globs: it writes to a path that does not exist");
    }
    // up to 2.20: the path is `/proc/sys/` + the key with every `.` made
    // `/`, resolved by the kernel (repeated and leading separators work, a
    // trailing one fails, `/proc/sys/` is not stripped)
    let old = resolve_proc_path(&key.replace('.', "/"));
    // later: `.` and `/` swap; a key whose first separator is `/` then
    // names a file with dots in its first component, which no kernel has
    let new = key
        .bytes()
        .find(|b| *b == b'.' || *b == b'/')
        .is_none_or(|b| b == b'.')
        .then(|| resolve_proc_path(&swap_dot_slash(key)))
        .flatten();
    let fate = match version {
        Some(v) if v <= (2, 20) => old,
        Some(_) => new,
        None if old == new => new,
        None => {
            return KeyFate::Unknown(
                format!(
                    "tuned up to 2.20 writes `{key}` to /proc/sys/{}, later releases to /proc/sys/{} (they swap `.` and `/`); the installed version is not known (its tuned/version.py is not in the snapshot)",
                    key.replace('.', "/"),
                    swap_dot_slash(key)
                ),
                old.into_iter().chain(new).collect(),
            )
        }
    };
    let Some(k) = fate else {
        return KeyFate::Skip(
            "the path tuned derives from this spelling does not exist (up to 2.20 every `.` becomes `/`; later releases swap `.` and `/`)",
        );
    };
    if DEPRECATED.iter().any(|d| k.rsplit('.').next() == Some(d)) {
        return KeyFate::Skip("tuned refuses to set deprecated sysctl options");
    }
    KeyFate::Key(k)
}

/// tuned's `_process_assignment_modifiers` for a `>`/`<` value, against the
/// value at that time (`current`: the boot model so far). `None`: tuned
/// writes nothing (the current value stays). With no current value (no file
/// sets one before tuned, so it is the kernel's default) the result is
/// `unknown`.
pub fn resolve(w: Write, current: Option<&Setting>) -> Option<Entry> {
    let Some(op) = w.modifier else {
        return Some(w.entry);
    };
    let Entry::Set(mut s) = w.entry else {
        return Some(w.entry);
    };
    let val = s.raw[op.len_utf8()..].to_string();
    let word = if op == '>' { "larger" } else { "smaller" };
    let Some(cur) = current else {
        return Some(Entry::Unreadable {
            reason: format!(
                "tuned writes {val} only if it is {word} than the value at that time; no file sets one before tuned, so that is the kernel's default, which the files do not say"
            ),
            evidence: s.evidence,
        });
    };
    match (py_int(&val), py_int(&cur.raw)) {
        (Some(a), Some(b)) => {
            let wins = if op == '>' { a > b } else { a < b };
            if !wins {
                return None;
            }
            s.value = typed(&val);
            s.raw = val;
            s.note = Some(format!(
                "{} (`{op}`: {word} than {} from {})",
                s.note.as_deref().unwrap_or("set by tuned"),
                cur.raw,
                cur.evidence
                    .first()
                    .map(|e| e.to_string())
                    .unwrap_or_default()
            ));
            Some(Entry::Set(s))
        }
        // tuned: "cannot compare ...", it writes the value with its prefix
        _ => Some(Entry::Set(s)),
    }
}

/// Python's `int()` of a string: surrounding whitespace, a sign, digits
/// (single `_` between them).
fn py_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

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

/// The writes for one [`TunedState`]; `with_reapply: false` leaves out the
/// re-application of /etc files (for the candidates of an undecided
/// recommendation, whose keys alone matter).
fn writes_for(host: &Host, st: TunedState, facts: &mut Facts, with_reapply: bool) -> Vec<Write> {
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
    let reapply = reapply && with_reapply;
    let (names, how) = match st {
        TunedState::NotEnabled => return Vec::new(),
        // tuned does not start: it applies nothing
        TunedState::Unknown(reason) => {
            facts.issues.push(
                FileIssue::problem("tuned", ACTIVE_PROFILE, None, reason)
                    .with_level(IssueLevel::Unknown),
            );
            return Vec::new();
        }
        TunedState::Undecided { .. } => return Vec::new(),
        TunedState::Enabled(n) => (n, "active profile"),
        TunedState::Recommended { names, note } => {
            facts.issues.push(
                FileIssue::problem("tuned", ACTIVE_PROFILE, None, note)
                    .with_level(IssueLevel::Note),
            );
            (names, "recommended in auto mode")
        }
    };
    if names.is_empty() {
        return Vec::new(); // manual mode, no profile: tuned applies nothing
    }
    let default_priority: i64 = get("default_instance_priority")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let dirs: Vec<String> = match get("profile_dirs") {
        Some(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => DEFAULT_PROFILE_DIRS.iter().map(|s| s.to_string()).collect(),
    };
    let version = version(host);
    let mut loaded = Vec::new();
    if let Err(e) = load(host, &dirs, &names, &mut loaded, &mut Vec::new(), facts) {
        // A snapshot without any of tuned's profile directories did not
        // capture them (an sosreport of a Debian host runs no tuned plugin):
        // what the profile writes is not known, which is not "nothing".
        if host.kind() == crate::host::SourceKind::Snapshot
            && dirs
                .iter()
                .all(|d| matches!(host.kind_of(d), Err(crate::host::ReadError::NotFound)))
        {
            facts.issues.push(
                FileIssue::problem(
                    "tuned",
                    ACTIVE_PROFILE,
                    None,
                    format!(
                        "tuned.service is enabled and applies `{}`, but the snapshot holds none of tuned's profile directories ({}): the kernel parameters that profile writes after systemd-sysctl are not known, so a running value no file explains may be tuned's; capture /usr/lib/tuned and /etc/tuned (a driftaudit snapshot copies the profile it reads)",
                        names.join(" "),
                        dirs.join(", ")
                    ),
                )
                .with_level(IssueLevel::Unknown),
            );
            return Vec::new();
        }
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
    // units.manager: enabled units, stable-sorted by `priority`
    let mut units: Vec<(i64, &Unit)> = Vec::new();
    for u in merged.iter().filter(|u| u.name != "variables" && u.enabled) {
        let p = match u.opts.iter().find(|o| o.key == "priority") {
            None => default_priority,
            Some(o) => match o.value.trim().parse() {
                Ok(p) => p,
                Err(_) => {
                    facts.issues.push(FileIssue::problem(
                        "tuned",
                        &o.path,
                        Some(o.line),
                        format!(
                            "`priority={}` is not a number; tuned fails to create its units and applies none of the profile",
                            o.value
                        ),
                    ));
                    return Vec::new();
                }
            },
        };
        units.push((p, u));
    }
    units.sort_by_key(|(p, _)| *p);
    let mut out: Vec<Write> = Vec::new();
    for (_, unit) in units {
        if unit.kind.trim() != "sysctl" {
            continue;
        }
        for o in unit.opts.iter().filter(|o| o.key != "priority") {
            let ev = Evidence::line(o.path.clone(), o.line);
            let unknown = |reason: String| Write {
                key: String::new(),
                entry: Entry::Unreadable {
                    reason,
                    evidence: vec![ev.clone()],
                },
                modifier: None,
                keep_if: None,
            };
            if unit.host_regex {
                let mut w = unknown(format!(
                    "the `[{}]` unit of tuned profile `{}` applies only where its `cpuinfo_regex`/`uname_regex` matches the running machine",
                    unit.name, o.profile
                ));
                w.key = o.key.clone();
                out.push(w);
                continue;
            }
            let key = match tuned_key(&o.key, version) {
                KeyFate::Key(k) => k,
                KeyFate::Skip(why) => {
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
                KeyFate::Unknown(why, keys) => {
                    for k in keys {
                        let mut w = unknown(why.clone());
                        w.key = k;
                        out.push(w);
                    }
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
                    let mut w = unknown(format!(
                        "tuned profile `{}` computes it with {f} on the running host",
                        o.profile
                    ));
                    w.key = key;
                    out.push(w);
                    continue;
                }
            };
            // the kernel keeps a written text up to its first newline
            let (value, multi) = match value.split_once('\n') {
                Some((first, _)) => (first.trim_end().to_string(), true),
                None => (value, false),
            };
            if multi {
                facts.issues.push(
                    FileIssue::problem(
                        "tuned",
                        &o.path,
                        Some(o.line),
                        format!(
                            "`{}` continues on the next line; tuned writes every line and the kernel keeps only the first, `{value}`",
                            o.key
                        ),
                    )
                    .with_level(IssueLevel::Note),
                );
            }
            if value.contains("${") {
                facts.issues.push(
                    FileIssue::problem(
                        "tuned",
                        &o.path,
                        Some(o.line),
                        format!(
                            "`{}` uses a variable the profile does not define; tuned writes `{value}` as it is (the kernel refuses it for a number)",
                            o.key
                        ),
                    ),
                );
            }
            let modifier = value
                .chars()
                .next()
                .filter(|c| matches!(c, '>' | '<') && value.chars().count() > 1);
            let mut s = Setting::new(typed(&value), value.clone(), ev);
            s.note = Some(format!(
                "set by tuned profile `{}` ({how} `{active}`) after systemd-sysctl",
                o.profile
            ));
            out.push(Write {
                key,
                entry: Entry::Set(s),
                modifier,
                keep_if: None,
            });
        }
        if reapply {
            reapply_system(host, version, &mut out);
        }
    }
    out
}

/// `_apply_system_sysctl`: /run/sysctl.d then /etc/sysctl.d, `*.conf`, the
/// first directory wins per name, sorted by name, then /etc/sysctl.conf.
/// Files that cannot be opened (dangling links, directories) write nothing.
fn reapply_system(host: &Host, version: Option<(u32, u32)>, out: &mut Vec<Write>) {
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
            // a spelling whose fate depends on tuned's version: systemd-sysctl
            // set the same line at boot, so the value stays as it was
            let key = match tuned_key(&l.key, version) {
                KeyFate::Key(k) => k,
                KeyFate::Skip(_) => continue,
                // what the line sets depends on tuned's version: each key it
                // may write is unknown after the profile
                KeyFate::Unknown(why, keys) => {
                    for k in keys {
                        out.push(Write {
                            key: k,
                            entry: Entry::Unreadable {
                                reason: format!("re-applied by tuned from {p}:{}: {why}", l.line),
                                evidence: vec![Evidence::line(p.clone(), l.line)],
                            },
                            modifier: None,
                            keep_if: Some(l.value.clone()),
                        });
                    }
                    continue;
                }
            };
            let mut s = Setting::new(
                typed(&l.value),
                l.value.clone(),
                Evidence::line(p.clone(), l.line),
            );
            s.note = Some(
                "re-applied by tuned after its profile (`reapply_sysctl`, the default): tuned reads /run/sysctl.d, /etc/sysctl.d and /etc/sysctl.conf again, not /usr/lib/sysctl.d"
                    .to_string(),
            );
            out.push(Write {
                key,
                entry: Entry::Set(s),
                modifier: None,
                keep_if: None,
            });
        }
    }
}
