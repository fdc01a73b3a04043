//! A tuned profile as tuned loads it: the profile directories, the files
//! found there with their `include=` chain (`Loader`), merged into units
//! (`Merger`), and the merged profile's `[variables]`. Reads only through
//! [`Host`]; must not decide what a unit writes (that is `apply`).

use std::collections::{HashMap, HashSet};

use crate::facts::{Facts, FileIssue};
use crate::host::{EntryKind, Host};
use crate::parse::sysctl::MAX_VALUE_BYTES;
use crate::parse::truncate;
use crate::parse::tuned::probes;

use super::write::QUOTE;
use crate::parse::tuned::{
    expand, expand_bounded, parse_main_conf, parse_profile, unit_bool, with_profile_dir,
    ExpandError, Expanded, TunedProfile, PROFILE_DIR,
};

/// Profile directories, lowest priority first, when `profile_dirs` is not set:
/// tuned's `[/usr/lib/tuned, /etc/tuned]` and the `profiles/` subdirectories
/// newer releases (2.23+) use.
const DEFAULT_PROFILE_DIRS: [&str; 4] = [
    "/usr/lib/tuned",
    "/usr/lib/tuned/profiles",
    "/etc/tuned",
    "/etc/tuned/profiles",
];

/// At most this many profiles in one include chain (each file is loaded once,
/// as tuned does; the cap bounds a hostile snapshot).
const MAX_PROFILES: usize = 64;

/// The profile directories: tuned-main.conf's `profile_dirs` (comma
/// separated) when it is set, else [`DEFAULT_PROFILE_DIRS`].
pub(super) fn profile_dirs(setting: Option<String>) -> Vec<String> {
    match setting {
        Some(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => DEFAULT_PROFILE_DIRS.iter().map(|s| s.to_string()).collect(),
    }
}

/// `Loader.safe_name`: `^[a-zA-Z0-9_.-]+$`.
fn safe_name(n: &str) -> bool {
    !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// The most of a value read whole after `${i:PROFILE_DIR}` is expanded
/// (`include=`, `drop=`, a variables file's path): as much as driftaudit
/// reads of a file.
const MAX_FILE_BYTES: usize = crate::host::MAX_FILE_BYTES as usize;

/// What `${i:PROFILE_DIR}` is in the profile file at `path`: its directory.
pub(super) fn profile_dir(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("/")
}

/// One loaded profile file.
pub(super) struct Loaded {
    name: String,
    path: String,
    profile: TunedProfile,
}

/// An option of the merged profile with where it came from.
#[derive(Clone)]
pub(super) struct Opt {
    pub(super) key: String,
    pub(super) value: String,
    pub(super) path: String,
    pub(super) line: usize,
    pub(super) profile: String,
}

/// Load `names` and their includes depth-first, includes before the profile
/// that names them (`Loader._load_profile`); a file already loaded is skipped.
pub(super) fn load(
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
            let dirs: Vec<&str> = dirs.iter().rev().map(String::as_str).collect();
            return Err(format!(
                "profile `{}` not found in {}",
                truncate(name, QUOTE),
                truncate(&dirs.join(", "), 4 * QUOTE)
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
        // `${i:PROFILE_DIR}` is left in the values: it is expanded where a
        // value is used, within that use's bound (`profile_dir`), since
        // replacing it here in every option multiplied a profile's size
        let include = profile
            .sections
            .iter_mut()
            .find(|s| s.name == "main")
            .and_then(|s| {
                let i = s.options.iter().position(|o| o.key == "include")?;
                Some(s.options.remove(i).value)
            });
        if let Some(inc) = include {
            let inc = with_profile_dir(&inc, profile_dir(&path), MAX_FILE_BYTES);
            if !inc.is_whole() {
                return Err(format!(
                    "{path}: `include` is {} bytes once `${{i:PROFILE_DIR}}` is expanded, more than the {MAX_FILE_BYTES} bytes driftaudit reads of a file",
                    inc.len
                ));
            }
            let inc = expand(&inc.text, &[]).map_err(|ExpandError::Function(f)| {
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
pub(super) struct Unit {
    pub(super) name: String,
    /// `type=` (default: the unit's name); the later profile's wins.
    pub(super) kind: String,
    /// `enabled=` as tuned's `Unit` reads it; the later profile's wins.
    pub(super) enabled: bool,
    /// `cpuinfo_regex=`/`uname_regex=`: whether the unit applies depends on
    /// the running machine.
    pub(super) host_regex: bool,
    /// Options in order (`priority` among them, as tuned keeps it there).
    pub(super) opts: Vec<Opt>,
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
pub(super) fn merge(loaded: &[Loaded]) -> Vec<Unit> {
    let mut merged: Vec<Unit> = Vec::new();
    // the units by name and each unit's options by key (one lookup per
    // option, so a profile of many options or units merges in linear work)
    let mut by_name: HashMap<String, usize> = HashMap::new();
    let mut keys: Vec<HashMap<String, usize>> = Vec::new();
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
            probes::add(1);
            let Some(&at) = by_name.get(&s.name) else {
                by_name.insert(s.name.clone(), merged.len());
                keys.push(key_index(&unit.opts));
                merged.push(unit);
                continue;
            };
            let (existing, existing_keys) = (&mut merged[at], &mut keys[at]);
            if replace {
                *existing_keys = key_index(&unit.opts);
                *existing = unit;
                continue;
            }
            existing.kind = unit.kind;
            existing.enabled = unit.enabled;
            existing.host_regex |= unit.host_regex;
            if let Some(drop) = get("drop") {
                let drop = with_profile_dir(drop, profile_dir(&l.path), MAX_FILE_BYTES).text;
                let names: HashSet<&str> = drop.split([',', ';']).map(str::trim).collect();
                existing.opts.retain(|o| {
                    probes::add(1);
                    !names.contains(o.key.as_str())
                });
                *existing_keys = key_index(&existing.opts);
            }
            for o in unit.opts {
                probes::add(1);
                match existing_keys.get(&o.key) {
                    Some(&i) => existing.opts[i] = o,
                    None => {
                        existing_keys.insert(o.key.clone(), existing.opts.len());
                        existing.opts.push(o);
                    }
                }
            }
        }
    }
    merged
}

/// Where each option of `opts` is, by key (a unit's keys are distinct).
fn key_index(opts: &[Opt]) -> HashMap<String, usize> {
    probes::add(opts.len());
    opts.iter()
        .enumerate()
        .map(|(i, o)| (o.key.clone(), i))
        .collect()
}

/// The most of a variable's expansion kept (its whole length is counted):
/// driftaudit expands variables only into `[sysctl]` values, which the
/// kernel takes [`MAX_VALUE_BYTES`] of, so no more of a variable can show.
pub(super) const MAX_VARIABLE_BYTES: usize = MAX_VALUE_BYTES;

/// The most bytes variables add to the values of one set of profiles, in
/// all (`[variables]` and `[sysctl]` alike, past what the values are as
/// written): a thousand values of the most the kernel takes in one write.
/// Each value is kept to [`MAX_VARIABLE_BYTES`], but every `${b}` of a
/// 4 KB `b` kept its 4 KB: a 16 MiB profile of such lines took gigabytes.
/// With this budget the expanded values of a set of profiles hold at most
/// its size plus 4 MiB; tuned's own profiles add a few kilobytes.
pub(super) const MAX_EXPANSION_BYTES: usize = 1024 * MAX_VALUE_BYTES;

/// The bytes the expansions of one set of profiles have added, against
/// [`MAX_EXPANSION_BYTES`], and the values left out past it: from the first
/// value that does not fit, every later value that variables add to is left
/// out (unknown), so what is expanded is a prefix in tuned's order.
pub(super) struct Budget {
    left: usize,
    /// The first value left out: its file and line.
    first: Option<(String, usize)>,
    /// The values left out.
    out: usize,
}

impl Budget {
    /// A budget of `bytes`.
    pub(super) fn new(bytes: usize) -> Self {
        Budget {
            left: bytes,
            first: None,
            out: 0,
        }
    }

    /// Whether `e`, the expansion of `raw` (option `o`'s value), is kept:
    /// what it adds to `raw` is charged; one that does not fit, or adds
    /// anything after a value was left out, is counted as left out.
    pub(super) fn take(&mut self, raw: &str, e: &Expanded, o: &Opt) -> bool {
        let adds = e.text.len().saturating_sub(raw.len());
        if adds == 0 || (self.first.is_none() && adds <= self.left) {
            self.left -= adds;
            return true;
        }
        self.leave_out(o);
        false
    }

    /// Count option `o`'s value as left out (it uses a variable left out).
    pub(super) fn leave_out(&mut self, o: &Opt) {
        self.out += 1;
        self.first.get_or_insert_with(|| (o.path.clone(), o.line));
    }

    /// Why a value left out is not known.
    pub(super) fn reason(o: &Opt) -> String {
        format!(
            "tuned profile `{}` sets it to a value driftaudit does not expand: the variables of the profiles add more than {MAX_EXPANSION_BYTES} bytes to the values before it, the most driftaudit expands for one set of profiles",
            o.profile
        )
    }

    /// The one input finding for the values left out, if any: at the first.
    pub(super) fn issue(&self) -> Option<FileIssue> {
        let (path, line) = self.first.as_ref()?;
        Some(FileIssue::problem(
            "tuned",
            path,
            Some(*line),
            format!(
                "{} values of the tuned profiles, from this one on, are not expanded: their variables add more than {MAX_EXPANSION_BYTES} bytes in all, the most driftaudit expands for one set of profiles; what they set is unknown",
                self.out
            ),
        ))
    }
}

/// The `[variables]` of a merged profile, by name: the last value of each
/// variable that has one, the names a run-time function gives a value (a
/// value using one of them is not known from files), and the names left
/// unexpanded past the [`Budget`].
#[derive(Default)]
pub(super) struct Vars {
    values: HashMap<String, Expanded>,
    computed: HashSet<String>,
    left_out: HashSet<String>,
}

impl Vars {
    /// The last variable called `name` with a value (one computed at run
    /// time is skipped), as [`expand_bounded`] looks it up; `${i:PROFILE_DIR}`
    /// is `dir`, the directory of the profile the value was read from (none
    /// for a value from elsewhere). tuned's loader replaces it before any
    /// variable is expanded, so a `profile_dirs` holding `${...}` would
    /// have that expanded too; here it stays as written.
    pub(super) fn lookup<'v>(
        &'v self,
        dir: Option<&'v str>,
        name: &str,
    ) -> Option<(&'v str, usize)> {
        if name == PROFILE_DIR {
            return dir.map(|d| (d, d.len()));
        }
        probes::add(1);
        self.values.get(name).map(|e| (e.text.as_str(), e.len))
    }

    /// Whether `value` names (`${NAME}`, escaped or not) a variable a
    /// run-time function gives a value to; one pass over the value.
    pub(super) fn uses_computed(&self, value: &str) -> bool {
        uses_any(value, &self.computed)
    }

    /// Whether `value` names (`${NAME}`, escaped or not) a variable left
    /// unexpanded past the [`Budget`]; one pass over the value.
    pub(super) fn uses_left_out(&self, value: &str) -> bool {
        uses_any(value, &self.left_out)
    }

    /// A variable's value (`Err` when a run-time function computes it).
    pub(super) fn add(&mut self, name: String, value: Result<Expanded, String>) {
        match value {
            Ok(e) => {
                self.left_out.remove(&name);
                self.values.insert(name, e);
            }
            Err(_) => {
                self.computed.insert(name);
            }
        }
    }

    /// A variable left unexpanded past the [`Budget`].
    pub(super) fn leave_out(&mut self, name: String) {
        self.values.remove(&name);
        self.left_out.insert(name);
    }
}

/// Whether `value` names (`${NAME}`, escaped or not) one of `names`; one
/// pass over the value.
fn uses_any(value: &str, names: &HashSet<String>) -> bool {
    if names.is_empty() {
        return false;
    }
    value.match_indices("${").any(|(i, _)| {
        let rest = &value[i + 2..];
        // a variable's name is a word
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        probes::add(1);
        rest[end..].starts_with('}') && names.contains(&rest[..end])
    })
}

/// The `[variables]` of the merged profile, in order; `include=` reads a
/// file of `NAME=VALUE` lines relative to the profile that names it. A value
/// using a run-time function is noted as computed; a value is expanded with
/// the earlier ones and kept to [`MAX_VARIABLE_BYTES`] with its whole
/// length (a variable doubling the one before, line after line, would
/// otherwise grow without bound), and what it adds is charged to `budget`
/// (past it, a value is left out, and so is one using a variable left out).
pub(super) fn variables(host: &Host, merged: &[Unit], budget: &mut Budget) -> Vars {
    let mut vars = Vars::default();
    let Some(unit) = merged.iter().find(|u| u.name == "variables") else {
        return vars;
    };
    for o in &unit.opts {
        let mut pairs: Vec<(String, String)> = Vec::new();
        if o.key == "include" {
            // `os.path.normpath(value)`: a relative path is relative to the
            // daemon's working directory, `/` (profiles write
            // `${i:PROFILE_DIR}/file`)
            let p = with_profile_dir(&o.value, profile_dir(&o.path), MAX_FILE_BYTES);
            let p = crate::host::lexical(&crate::host::join_host("/", p.text.trim()));
            if let Ok(t) = host.read_to_string(&p) {
                pairs = parse_main_conf(&t);
            }
        } else {
            pairs.push((o.key.clone(), o.value.clone()));
        }
        // `${i:PROFILE_DIR}` is the profile's directory in its own
        // `[variables]`; a variables file is no profile (tuned does not
        // expand it there)
        let dir = (o.key != "include").then(|| profile_dir(&o.path));
        for (k, v) in pairs {
            if !k.chars().all(|c| c.is_alphanumeric() || c == '_') {
                continue; // tuned: "variable definition contains unallowed characters"
            }
            if vars.uses_left_out(&v) {
                budget.leave_out(o);
                vars.leave_out(k);
                continue;
            }
            let e = expand_bounded(&v, |n| vars.lookup(dir, n), MAX_VARIABLE_BYTES)
                .map_err(|ExpandError::Function(f)| f);
            match e {
                Ok(e) if !budget.take(&v, &e, o) => vars.leave_out(k),
                e => vars.add(k, e),
            }
        }
    }
    vars
}
