//! The writes tuned makes after systemd-sysctl, in its order: the profiles
//! a [`TunedState`] names, loaded and merged (`profile`), each enabled
//! `type=sysctl` unit in `priority` order with its options made [`Write`]s,
//! and after each unit, with `reapply_sysctl`, the re-application of
//! /run/sysctl.d, /etc/sysctl.d and /etc/sysctl.conf. Reads only through
//! [`Host`]; must not resolve a `>`/`<` value against the boot model (that
//! is [`super::resolve`], at boot-model time).

use crate::facts::{Entry, Evidence, Facts, FileIssue, IssueLevel, Setting};
use crate::host::{EntryKind, Host, ReadError};
use crate::parse::sysctl::{typed, MAX_VALUE_BYTES};
use crate::parse::truncate;
use crate::parse::tuned::{
    expand_bounded, parse_bool, parse_main_conf, parse_reapply, unquote, ExpandError, Expanded,
};

use super::paths::{ACTIVE_PROFILE, MAIN_CONF};
use super::profile::{
    load, merge, profile_dir, profile_dirs, variables, Budget, Opt, Unit, Vars, MAX_EXPANSION_BYTES,
};
use super::state::{version, TunedState};
use super::write::{tuned_key, KeyFate, Write, QUOTE};

/// Directories tuned re-applies, first one wins per name (plugin_sysctl.py
/// `SYSCTL_CONFIG_DIRS`); /usr/lib/sysctl.d is not among them.
const REAPPLY_DIRS: [&str; 2] = ["/run/sysctl.d", "/etc/sysctl.d"];

/// The writes for one [`TunedState`]; `with_reapply: false` leaves out the
/// re-application of /etc files (for the candidates of an undecided
/// recommendation, whose keys alone matter). In tuned's order: the profiles
/// the state names ([`profile_names`]), loaded ([`not_loaded`] when they
/// cannot be) and merged, the enabled units by `priority`
/// ([`ordered_units`]), and for each `type=sysctl` unit its options
/// ([`option_writes`]) then the re-application ([`reapply_system`]).
pub(super) fn writes_for(
    host: &Host,
    main: &[(String, String)],
    st: TunedState,
    facts: &mut Facts,
    with_reapply: bool,
) -> Vec<Write> {
    let reapply = conf_get(main, "reapply_sysctl")
        .and_then(|v| parse_bool(&v))
        .unwrap_or(true);
    let reapply = reapply && with_reapply;
    let Some((names, how)) = profile_names(st, facts) else {
        return Vec::new();
    };
    if names.is_empty() {
        return Vec::new(); // manual mode, no profile: tuned applies nothing
    }
    let default_priority: i64 = conf_get(main, "default_instance_priority")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let dirs = profile_dirs(conf_get(main, "profile_dirs"));
    let version = version(host);
    let mut loaded = Vec::new();
    if let Err(e) = load(host, &dirs, &names, &mut loaded, &mut Vec::new(), facts) {
        not_loaded(host, &dirs, &names, &e, facts);
        return Vec::new();
    }
    let active = truncate(&names.join(" "), 4 * QUOTE);
    let merged = merge(&loaded);
    let Some(units) = ordered_units(&merged, default_priority, facts) else {
        return Vec::new();
    };
    let mut budget = Budget::new(MAX_EXPANSION_BYTES);
    let vars = variables(host, &merged, &mut budget);
    let scope = Scope {
        vars: &vars,
        version,
        how,
        active: &active,
    };
    let mut out: Vec<Write> = Vec::new();
    for unit in units {
        if unit.kind.trim() != "sysctl" {
            continue;
        }
        for o in unit.opts.iter().filter(|o| o.key != "priority") {
            option_writes(unit, o, &scope, &mut budget, facts, &mut out);
        }
        if reapply {
            reapply_system(host, version, &mut out);
        }
    }
    facts.issues.extend(budget.issue());
    out
}

/// tuned-main.conf's `NAME = VALUE` lines (none when it cannot be read),
/// read once for everything one [`super::sysctl_writes`] decides.
pub(super) fn read_main_conf(host: &Host) -> Vec<(String, String)> {
    match host.read_to_string(MAIN_CONF) {
        Ok(t) => parse_main_conf(&t),
        Err(_) => Vec::new(),
    }
}

/// The last value tuned-main.conf gives `k`.
fn conf_get(main: &[(String, String)], k: &str) -> Option<String> {
    main.iter()
        .rev()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.clone())
}

/// The profile names a [`TunedState`] loads and how the notes call them
/// (`active profile`, `recommended in auto mode`), or `None` when tuned
/// applies nothing (its input finding recorded in `facts`).
fn profile_names(st: TunedState, facts: &mut Facts) -> Option<(Vec<String>, &'static str)> {
    match st {
        TunedState::NotEnabled => None,
        // tuned does not start: it applies nothing
        TunedState::Unknown(reason) => {
            facts.issues.push(
                FileIssue::problem("tuned", ACTIVE_PROFILE, None, reason)
                    .with_level(IssueLevel::Unknown),
            );
            None
        }
        TunedState::Undecided { .. } => None,
        TunedState::Enabled(n) => Some((n, "active profile")),
        TunedState::Recommended { names, note } => {
            facts.issues.push(
                FileIssue::problem("tuned", ACTIVE_PROFILE, None, note)
                    .with_level(IssueLevel::Note),
            );
            Some((names, "recommended in auto mode"))
        }
    }
}

/// The finding for profiles tuned cannot load (`e`): in a snapshot that
/// holds none of the profile directories, the values are unknown; else
/// tuned applies no sysctl values.
fn not_loaded(host: &Host, dirs: &[String], names: &[String], e: &str, facts: &mut Facts) {
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
                    truncate(&names.join(" "), 4 * QUOTE),
                    truncate(&dirs.join(", "), 4 * QUOTE)
                ),
            )
            .with_level(IssueLevel::Unknown),
        );
        return;
    }
    // a snapshot that holds tuned's directories but not this profile did
    // not copy it: not known, which is not "nothing"
    if let Some(why) = uncaptured_profile(host) {
        facts.issues.push(
            FileIssue::problem("tuned", ACTIVE_PROFILE, None, why).with_level(IssueLevel::Unknown),
        );
        return;
    }
    facts.issues.push(FileIssue::problem(
        "tuned",
        ACTIVE_PROFILE,
        None,
        format!(
            "tuned cannot load the active profile `{}`: {e}; it applies no sysctl values",
            truncate(&names.join(" "), 4 * QUOTE)
        ),
    ));
}

/// `units.manager`: the enabled units, stable-sorted by `priority`
/// (`default` when a unit sets none); `None` when a `priority` is not a
/// number (tuned then applies none of the profile, recorded in `facts`).
fn ordered_units<'m>(merged: &'m [Unit], default: i64, facts: &mut Facts) -> Option<Vec<&'m Unit>> {
    let mut units: Vec<(i64, &Unit)> = Vec::new();
    for u in merged.iter().filter(|u| u.name != "variables" && u.enabled) {
        let p = match u.opts.iter().find(|o| o.key == "priority") {
            None => default,
            Some(o) => match o.value.trim().parse() {
                Ok(p) => p,
                Err(_) => {
                    facts.issues.push(FileIssue::problem(
                        "tuned",
                        &o.path,
                        Some(o.line),
                        format!(
                            "`priority={}` is not a number; tuned fails to create its units and applies none of the profile",
                            truncate(&o.value, QUOTE)
                        ),
                    ));
                    return None;
                }
            },
        };
        units.push((p, u));
    }
    units.sort_by_key(|(p, _)| *p);
    Some(units.into_iter().map(|(_, u)| u).collect())
}

/// What every option of the merged profile is written with.
struct Scope<'a> {
    /// The `[variables]`.
    vars: &'a Vars,
    /// The installed tuned's version, when known.
    version: Option<(u32, u32)>,
    /// How the notes call the profile (`active profile`, ...).
    how: &'static str,
    /// The profile names, space-separated.
    active: &'a str,
}

/// The write(s) one option `o` of a `sysctl` unit makes, appended to `out`
/// (none for a key tuned does not write; the notes recorded in `facts`).
fn option_writes(
    unit: &Unit,
    o: &Opt,
    scope: &Scope,
    budget: &mut Budget,
    facts: &mut Facts,
    out: &mut Vec<Write>,
) {
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
            truncate(&unit.name, QUOTE),
            o.profile
        ));
        w.key = o.key.clone();
        out.push(w);
        return;
    }
    let key = match tuned_key(&o.key, scope.version) {
        KeyFate::Key(k) => k,
        KeyFate::Skip(why) => {
            facts.issues.push(
                FileIssue::problem(
                    "tuned",
                    &o.path,
                    Some(o.line),
                    format!("`{}`: {why}", truncate(&o.key, QUOTE)),
                )
                .with_level(IssueLevel::Note),
            );
            return;
        }
        KeyFate::Unknown(why, keys) => {
            for k in keys {
                let mut w = unknown(why.clone());
                w.key = k;
                out.push(w);
            }
            return;
        }
    };
    let value = match expanded_value(o, scope, budget) {
        Ok(v) => v,
        Err(reason) => {
            let mut w = unknown(reason);
            w.key = key;
            out.push(w);
            return;
        }
    };
    let value = kernel_value(o, value, facts);
    let modifier = value
        .chars()
        .next()
        .filter(|c| matches!(c, '>' | '<') && value.chars().count() > 1);
    let mut s = Setting::new(typed(&value), value.clone(), ev);
    s.note = Some(format!(
        "set by tuned profile `{}` ({} `{}`) after systemd-sysctl",
        o.profile, scope.how, scope.active
    ));
    out.push(Write {
        key,
        entry: Entry::Set(s),
        modifier,
        keep_if: None,
    });
}

/// `o`'s value with the profile's variables expanded (its first
/// [`MAX_VALUE_BYTES`] and its whole length), or why it is not known (it is
/// computed by a run-time function on the running host, or left out past
/// the expansion `budget`, which what it adds is charged to).
fn expanded_value(o: &Opt, scope: &Scope, budget: &mut Budget) -> Result<Expanded, String> {
    if scope.vars.uses_left_out(&o.value) {
        budget.leave_out(o);
        return Err(Budget::reason(o));
    }
    // a variable whose value comes from a run-time function
    let uses_fn = scope.vars.uses_computed(&o.value);
    let raw = unquote(&o.value);
    let expanded = expand_bounded(
        raw,
        |n| scope.vars.lookup(Some(profile_dir(&o.path)), n),
        MAX_VALUE_BYTES,
    );
    match (uses_fn, expanded) {
        (false, Ok(v)) if budget.take(raw, &v, o) => Ok(v),
        (false, Ok(_)) => Err(Budget::reason(o)),
        (_, Err(ExpandError::Function(f))) | (true, Ok(Expanded { text: f, .. })) => {
            let f = if uses_fn {
                "a variable computed at run time".to_string()
            } else {
                format!("`${{f:{f}}}`")
            };
            Err(format!(
                "tuned profile `{}` computes it with {f} on the running host",
                o.profile
            ))
        }
    }
}

/// What the kernel keeps of the expanded `value`: its first
/// [`MAX_VALUE_BYTES`] (the most one write takes, as for sysctl.d), up to
/// its first newline; a value cut either way or a `${` left in it is noted
/// in `facts`.
fn kernel_value(o: &Opt, value: Expanded, facts: &mut Facts) -> String {
    if !value.is_whole() {
        facts.issues.push(FileIssue::problem(
            "tuned",
            &o.path,
            Some(o.line),
            format!(
                "value of `{}` is {} bytes once tuned expands its variables; the kernel takes at most {MAX_VALUE_BYTES} bytes in one write, and only the first {MAX_VALUE_BYTES} are kept",
                truncate(&o.key, QUOTE),
                value.len
            ),
        ));
    }
    let value = value.text;
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
                    truncate(&o.key, QUOTE)
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
                    truncate(&o.key, QUOTE)
                ),
            ),
        );
    }
    value
}

/// `_apply_system_sysctl`: /run/sysctl.d then /etc/sysctl.d, `*.conf`, the
/// first directory wins per name, sorted by name, then /etc/sysctl.conf.
/// Files that cannot be opened (dangling links, directories) write nothing.
pub(super) fn reapply_system(host: &Host, version: Option<(u32, u32)>, out: &mut Vec<Write>) {
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

/// Why the profile an enabled tuned applies is not known from this
/// snapshot: a profile it loads is in none of tuned's profile directories
/// the snapshot holds (copied only where a reader read it), and the snapshot
/// does not list it as absent. `None` on a live host, where a missing
/// profile is tuned's own failure to load it.
pub fn uncaptured_profile(host: &Host) -> Option<String> {
    // a tree without snapshot.json (hand-made, a mounted image) is read as
    // the host itself, where a missing profile is missing, as for tuned
    // on that root (tests/sysctl/tuned_reference.rs)
    if host.kind() != crate::host::SourceKind::Snapshot
        || host.layout() == Some(crate::host::Layout::Tree)
    {
        return None;
    }
    let main = read_main_conf(host);
    let names = match super::state::state_with(host, &main) {
        TunedState::Enabled(n) => n,
        TunedState::Recommended { names, .. } => names,
        _ => return None,
    };
    let dirs = profile_dirs(
        main.iter()
            .rev()
            .find(|(k, _)| k == "profile_dirs")
            .map(|(_, v)| v.clone()),
    );
    let absent = crate::facts::system::declared_absent(host);
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            dirs.iter().all(|d| {
                let conf = format!("{d}/{n}/tuned.conf");
                !host.exists(&conf) && !absent.contains(&conf)
            })
        })
        .collect();
    let first = missing.first()?;
    Some(format!(
        "tuned.service is enabled and applies profile `{first}`, which this snapshot does not hold ({}): a value that profile sets after the sysctl files is not known; tuned applied it at the last boot, so a running value that differs from the files may be the profile's; capture {}/{first}/tuned.conf (`driftaudit snapshot` copies the profile it reads)",
        dirs.iter().map(|d| format!("{d}/{first}")).collect::<Vec<_>>().join(", "),
        dirs.first().map(String::as_str).unwrap_or("/usr/lib/tuned")
    ))
}
