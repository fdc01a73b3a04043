//! TuneD's profile recommender (`tuned/utils/profile_recommender.py`, 2.20
//! and later): the profile tuned applies at start in `auto` mode, decided from
//! the host's files where they decide it. Three-valued: a condition whose fact
//! no file holds (`virt=`: the output of `virt-what`; `process=`: running
//! processes; `syspurpose_role=`) leaves its section undecided, and with it
//! every choice after it; never a guessed profile. Reads only through
//! [`Host`].

use crate::host::{EntryKind, Host, ReadError};
use std::collections::{HashMap, HashSet};

use crate::parse::tuned::{parse_bool, parse_profile, probes, TunedOption, TunedProfile};

/// Read first; a match here wins over recommend.d (`RECOMMEND_CONF_FILE`).
pub const RECOMMEND_CONF: &str = "/etc/tuned/recommend.conf";
/// Every file in these (no `.conf` filter), a later directory's file
/// replacing an earlier one of the same name, read in name order
/// (`RECOMMEND_DIRECTORIES`).
pub const RECOMMEND_DIRS: [&str; 2] = ["/usr/lib/tuned/recommend.d", "/etc/tuned/recommend.d"];
/// What `system=` matches (`SYSTEM_RELEASE_FILE`; missing reads as empty).
pub const SYSTEM_RELEASE: &str = "/etc/system-release-cpe";
/// What `chassis_type=` matches first (an SMBIOS number).
pub const CHASSIS_TYPE: &str = "/sys/devices/virtual/dmi/id/chassis_type";
/// The recommender's answer when nothing matches, and with
/// `recommend_command = 0` (`DEFAULT_PROFILE`).
pub const DEFAULT_PROFILE: &str = "balanced";

/// SMBIOS 3.3.0 chassis types, as `_get_chassis_type` lists them.
const DMI_CHASSIS_TYPES: [&str; 37] = [
    "",
    "Other",
    "Unknown",
    "Desktop",
    "Low Profile Desktop",
    "Pizza Box",
    "Mini Tower",
    "Tower",
    "Portable",
    "Laptop",
    "Notebook",
    "Hand Held",
    "Docking Station",
    "All In One",
    "Sub Notebook",
    "Space-saving",
    "Lunch Box",
    "Main Server Chassis",
    "Expansion Chassis",
    "Sub Chassis",
    "Bus Expansion Chassis",
    "Peripheral Chassis",
    "RAID Chassis",
    "Rack Mount Chassis",
    "Sealed-case PC",
    "Multi-system",
    "CompactPCI",
    "AdvancedTCA",
    "Blade",
    "Blade Enclosing",
    "Tablet",
    "Convertible",
    "Detachable",
    "IoT Gateway",
    "Embedded PC",
    "Mini PC",
    "Stick PC",
];

/// At most this many recommend.d files are read (a hostile snapshot).
const MAX_FILES: usize = 256;
/// At most this many conditions are evaluated in all; past it the
/// recommendation is undecided (each may compile a pattern and read a file).
const MAX_CONDITIONS: usize = 512;

/// What the recommender picks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recommendation {
    /// This profile, and why (the file and section that matched, or why the
    /// default).
    Profile {
        /// The profile name (the section name without its `,suffix`).
        name: String,
        /// For people: where the choice comes from.
        why: String,
    },
    /// It cannot be known from the files: what would decide it, and every
    /// profile the recommender may still answer (the undecided sections'
    /// and the first one that surely matches after them, else the default).
    Undecided(String, Vec<String>),
}

/// Three-valued result of one condition or section.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Undecided(String),
}

/// What tuned's recommender returns on this host. `recommend_command` is
/// the value in tuned-main.conf, if any (`0` makes it return `balanced`).
pub fn recommend(host: &Host, recommend_command: Option<&str>) -> Recommendation {
    if recommend_command.and_then(parse_bool) == Some(false) {
        return Recommendation::Profile {
            name: DEFAULT_PROFILE.into(),
            why: format!(
                "`recommend_command = {}` in /etc/tuned/tuned-main.conf: the recommender always answers `{DEFAULT_PROFILE}`",
                recommend_command.unwrap_or_default().trim()
            ),
        };
    }
    let mut files = vec![RECOMMEND_CONF.to_string()];
    let mut by_name: std::collections::BTreeMap<String, String> = Default::default();
    for d in RECOMMEND_DIRS {
        if let Ok(entries) = host.read_dir(d) {
            for e in entries.into_iter().take(MAX_FILES) {
                by_name.insert(e.name.clone(), format!("{d}/{}", e.name));
            }
        }
    }
    files.extend(by_name.into_values().take(MAX_FILES));
    let budget = std::cell::Cell::new(MAX_CONDITIONS);
    for f in &files {
        match process_config(host, f, &budget) {
            Ok(None) => {}
            Ok(Some((name, line))) => {
                return Recommendation::Profile {
                    name,
                    why: format!(
                        "the first section of the recommender's rules that matches this host is {f}:{line}"
                    ),
                }
            }
            Err(why) => {
                let at = files.iter().position(|g| g == f).unwrap_or(0);
                return Recommendation::Undecided(why, candidates(host, &files[at..], &budget));
            }
        }
    }
    Recommendation::Profile {
        name: DEFAULT_PROFILE.into(),
        why: format!(
            "no section of {RECOMMEND_CONF} or {} matches this host: the recommender's default",
            RECOMMEND_DIRS.join(", ")
        ),
    }
}

/// One rules file as tuned reads it: its sections (`[DEFAULT]` among them)
/// and each section's first header line.
struct Rules {
    profile: TunedProfile,
    headers: HashMap<String, usize>,
}

impl Rules {
    /// The sections in order, each with its own options then the
    /// `[DEFAULT]` ones it does not set itself, built as they are asked for:
    /// a section costs its own options and the defaults, and the condition
    /// cap stops the asking (each section counts at least the defaults), so
    /// many sections and many defaults are not N² copies.
    fn sections(&self) -> impl Iterator<Item = (&str, usize, Vec<&TunedOption>)> {
        let defaults: &[TunedOption] = self
            .profile
            .section("DEFAULT")
            .map(|s| s.options.as_slice())
            .unwrap_or(&[]);
        self.profile
            .sections
            .iter()
            .filter(|s| s.name != "DEFAULT")
            .map(move |s| {
                probes::add(s.options.len() + defaults.len());
                let own: HashSet<&str> = s.options.iter().map(|o| o.key.as_str()).collect();
                let opts = s
                    .options
                    .iter()
                    .chain(defaults.iter().filter(|d| !own.contains(d.key.as_str())))
                    .collect();
                let line = self.headers.get(&s.name).copied().unwrap_or(1);
                (s.name.as_str(), line, opts)
            })
    }
}

/// One rules file, parsed; `None` when tuned cannot read it (it logs an
/// error and goes on with the next).
fn sections(host: &Host, path: &str) -> Option<Rules> {
    // os.path.isfile: a regular file, links followed
    if !matches!(host.kind_of(path), Ok(EntryKind::File)) {
        return None;
    }
    let text = host.read_to_string(path).ok()?;
    let (profile, issues) = parse_profile(&text);
    if !issues.is_empty() {
        return None;
    }
    // each section's first header line, in one pass
    let mut headers: HashMap<String, usize> = HashMap::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(n) = l.trim().strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            headers.entry(n.trim().to_string()).or_insert(i + 1);
        }
    }
    Some(Rules { profile, headers })
}

/// The first section of one rules file that matches: its profile name
/// (`re.sub(r",[^,]*$", "", section)`) and line; `Ok(None)` when none
/// matches; `Err` when a section before the match is undecided.
fn process_config(
    host: &Host,
    path: &str,
    budget: &std::cell::Cell<usize>,
) -> Result<Option<(String, usize)>, String> {
    let Some(rules) = sections(host, path) else {
        return Ok(None);
    };
    for (name, line, opts) in rules.sections() {
        if budget.get() < opts.len() {
            return Err(format!(
                "the rules hold more than {MAX_CONDITIONS} conditions by {path}:{line}, more than driftaudit evaluates"
            ));
        }
        budget.set(budget.get() - opts.len());
        match section_matches(host, &opts) {
            Tri::True => {
                let name = match name.rfind(',') {
                    Some(i) => &name[..i],
                    None => name,
                };
                let name = name.to_string();
                return Ok(Some((name, line)));
            }
            Tri::False => continue,
            Tri::Undecided(why) => {
                return Err(format!(
                    "whether section `[{name}]` of {path}:{line} matches depends on {why}"
                ))
            }
        }
    }
    Ok(None)
}

/// The profiles the recommender may answer, from these files on: each
/// section that is not surely false, up to the first one that surely
/// matches; the default when none surely does. Bounded by `budget`.
fn candidates(host: &Host, files: &[String], budget: &std::cell::Cell<usize>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        let n = match n.rfind(',') {
            Some(i) => &n[..i],
            None => n,
        };
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for f in files {
        let Some(rules) = sections(host, f) else {
            continue;
        };
        for (name, _, opts) in rules.sections() {
            if budget.get() < opts.len() {
                return out; // past the cap: what is known so far
            }
            budget.set(budget.get() - opts.len());
            match section_matches(host, &opts) {
                Tri::True => {
                    push(name);
                    return out;
                }
                Tri::Undecided(_) => push(name),
                Tri::False => {}
            }
        }
    }
    push(DEFAULT_PROFILE);
    out
}

/// Every condition of a section (AND); options the recommender does not
/// know are no condition.
fn section_matches(host: &Host, opts: &[&TunedOption]) -> Tri {
    let mut undecided: Option<String> = None;
    for o in opts {
        let value = if o.value.is_empty() {
            "^$"
        } else {
            o.value.as_str()
        };
        let r = condition(host, &o.key, value);
        match r {
            Tri::False => return Tri::False,
            Tri::Undecided(why) => {
                undecided.get_or_insert(format!("`{}={}` ({why})", o.key, o.value));
            }
            Tri::True => {}
        }
    }
    match undecided {
        Some(why) => Tri::Undecided(why),
        None => Tri::True,
    }
}

fn condition(host: &Host, key: &str, value: &str) -> Tri {
    if key == "virt" {
        return Tri::Undecided(
            "it matches the output of `virt-what` on the running machine, which no file holds"
                .into(),
        );
    }
    if key == "system" {
        return match host.read_to_string(SYSTEM_RELEASE) {
            Ok(t) => re_match(value, &t, false),
            // `read_file(..., no_error=True)`: a missing file is ""
            Err(ReadError::NotFound) => re_match(value, "", false),
            Err(e) => Tri::Undecided(format!("{SYSTEM_RELEASE} cannot be read: {e}")),
        };
    }
    if key.starts_with('/') {
        if may_hold_secrets(key) {
            return Tri::Undecided(format!(
                "{key}, which driftaudit does not read (it may hold secrets, and `snapshot` copies what it reads)"
            ));
        }
        if !host.exists(key) {
            return Tri::False;
        }
        return match host.read_to_string(key) {
            Ok(t) => re_match(value, &t, false),
            Err(ReadError::NotFound) => Tri::False,
            Err(e) => Tri::Undecided(format!("{key} cannot be read: {e}")),
        };
    }
    if key.starts_with("process") {
        return Tri::Undecided(
            "it matches the processes running when tuned starts, which no file holds".into(),
        );
    }
    if key == "chassis_type" {
        return match chassis(host) {
            Some(c) => re_match(value, c, true),
            None => Tri::Undecided(format!(
                "the chassis type: {CHASSIS_TYPE} does not name one, and tuned then asks `dmidecode`"
            )),
        };
    }
    if key == "syspurpose_role" {
        return Tri::Undecided(
            "the system purpose role (the python syspurpose module and /etc/rhsm/syspurpose/syspurpose.json)"
                .into(),
        );
    }
    Tri::True
}

/// A `/FILE=` condition names any path; these are not read (a snapshot
/// would copy them).
fn may_hold_secrets(path: &str) -> bool {
    let p = path.to_ascii_lowercase();
    ["/root", "/home/", "/proc/", "/etc/ssh/", "/etc/ssl/private"]
        .iter()
        .any(|d| p.starts_with(d) && !p.starts_with("/proc/sys/") && p != "/proc/cpuinfo")
        || [
            "shadow",
            "passw",
            "secret",
            "token",
            "private",
            "key",
            "credential",
        ]
        .iter()
        .any(|w| p.contains(w))
}

/// `_get_chassis_type` from sysfs: `DMI_CHASSIS_TYPES[int(text)]` (a
/// negative index counts from the end, as Python's does); `None` where tuned
/// would go on to `dmidecode`.
fn chassis(host: &Host) -> Option<&'static str> {
    let t = host.read_to_string(CHASSIS_TYPE).ok()?;
    let n: i64 = t.trim().parse().ok()?;
    let len = DMI_CHASSIS_TYPES.len() as i64;
    let i = if n < 0 { n + len } else { n };
    let name = *DMI_CHASSIS_TYPES.get(usize::try_from(i).ok()?)?;
    (!name.is_empty()).then_some(name)
}

/// Syntax Rust's `regex` reads differently from Python's `re`, or accepts
/// where Python fails: such a pattern is undecided.
const NOT_PYTHON: [&str; 11] = [
    "\\p", "\\P", "\\z", "\\<", "\\>", "\\b{", "\\B{", "[:", "&&", "~~", "--",
];

/// Python's `re.match(pattern, text, re.S)` (and `re.IGNORECASE` for the
/// chassis): anchored at the start only, `$` also before a final newline.
fn re_match(pattern: &str, text: &str, ignore_case: bool) -> Tri {
    if let Some(s) = NOT_PYTHON.iter().find(|s| pattern.contains(**s)) {
        return Tri::Undecided(format!(
            "the pattern `{pattern}` uses `{s}`, which Python's re reads differently"
        ));
    }
    if let Some(m) = plain_match(pattern, text, ignore_case) {
        return if m { Tri::True } else { Tri::False };
    }
    let flags = if ignore_case { "(?si)" } else { "(?s)" };
    let re = format!("{flags}\\A(?:{})", python_dollar(pattern));
    match regex::RegexBuilder::new(&re).size_limit(1 << 20).build() {
        Ok(r) => {
            if r.is_match(text) {
                Tri::True
            } else {
                Tri::False
            }
        }
        Err(_) => Tri::Undecided(format!(
            "the pattern `{pattern}`, which driftaudit cannot read as Python's re does"
        )),
    }
}

/// The shapes tuned's own recommend.conf uses, decided without compiling
/// a regex (a compile is most of what the recommender costs): `^$`, `.+`,
/// and `.*WORD.*` or `.*(WORD|WORD).*` of plain words, as `re.match` with
/// `re.S` reads them. `None`: another shape, for the regex.
fn plain_match(pattern: &str, text: &str, ignore_case: bool) -> Option<bool> {
    const META: &[char] = &[
        '\\', '.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|',
    ];
    match pattern {
        // Python's `$`: the end, or before a newline at the end
        "^$" => return Some(text.is_empty() || text == "\n"),
        ".+" => return Some(!text.is_empty()),
        _ => {}
    }
    let inner = pattern.strip_prefix(".*")?.strip_suffix(".*")?;
    let words: Vec<&str> = match inner.strip_prefix('(').and_then(|i| i.strip_suffix(')')) {
        Some(alts) => alts.split('|').collect(),
        None => vec![inner],
    };
    if words.iter().any(|w| w.is_empty() || w.contains(META)) {
        return None;
    }
    if !ignore_case {
        return Some(words.iter().any(|w| text.contains(w)));
    }
    // case folding beyond ASCII is the regex's (and Python's) business
    if !text.is_ascii() || !words.iter().all(|w| w.is_ascii()) {
        return None;
    }
    let text = text.to_ascii_lowercase();
    Some(words.iter().any(|w| text.contains(&w.to_ascii_lowercase())))
}

/// Python's `$` (no MULTILINE): the end, or before a newline at the end;
/// `\Z` is Rust's `\z`. Escapes and character classes are copied as written.
fn python_dollar(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut chars = p.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('Z') if !in_class => out.push_str("\\z"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // `[]...]` and `[^]...]`: a leading `]` is literal
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                    out.push_str("\\]");
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '$' if !in_class => out.push_str("(?:\n?\\z)"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_shapes_match_as_the_regex_does() {
        let patterns = [
            "^$",
            ".+",
            ".*atomic.*",
            ".*(computenode|server).*",
            ".*(Rack|Blade).*",
            ".*release 8.*",
            ".*a.b.*",
            ".*(x|).*",
            ".*Ünï.*",
        ];
        let texts = [
            "",
            "\n",
            "\n\n",
            "kvm\n",
            "Red Hat Enterprise Linux Server release 8.4 (Ootpa)\n",
            "Fedora release 39 (Thirty Nine)",
            "CentOS Atomic Host\nrelease 7",
            "x\natomic\n",
            "rack mount chassis",
            "ünï",
            "a-b axb",
        ];
        for p in patterns {
            for t in texts {
                for ci in [false, true] {
                    let flags = if ci { "(?si)" } else { "(?s)" };
                    let re =
                        regex::Regex::new(&format!("{flags}\\A(?:{})", python_dollar(p))).unwrap();
                    if let Some(m) = plain_match(p, t, ci) {
                        assert_eq!(m, re.is_match(t), "{p:?} on {t:?}, ignore case {ci}");
                    }
                }
            }
        }
        // the shapes of tuned's recommend.conf are all decided without a regex
        for p in ["^$", ".+", ".*atomic.*", ".*(computenode|server).*"] {
            assert!(plain_match(p, "x", false).is_some(), "{p}");
        }
        assert_eq!(plain_match(".*a.b.*", "axb", false), None);
        assert_eq!(plain_match(".*Ünï.*", "ünï", true), None);
    }

    #[test]
    fn re_match_is_pythons_anchored_match() {
        assert_eq!(re_match("^$", "", false), Tri::True);
        assert_eq!(re_match("^$", "\n", false), Tri::True); // Python's `$`
        assert_eq!(re_match("^$", "kvm\n", false), Tri::False);
        assert_eq!(re_match(".+", "kvm\n", false), Tri::True);
        assert_eq!(re_match("kvm", "xen\nkvm\n", false), Tri::False); // start only
        assert_eq!(re_match(".*server.*", "a\nserver", false), Tri::True); // re.S
        assert_eq!(re_match("rack", "Rack Mount Chassis", true), Tri::True);
        assert_eq!(re_match("x\\Z", "x", false), Tri::True);
        assert_eq!(re_match("[$]", "$", false), Tri::True);
        assert!(matches!(
            re_match("(?<=a)b", "ab", false),
            Tri::Undecided(_)
        ));
        assert!(matches!(
            re_match("[[:alpha:]]", "a", false),
            Tri::Undecided(_)
        ));
        assert!(matches!(re_match("\\p{L}", "a", false), Tri::Undecided(_)));
    }

    fn host_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Host) {
        let d = tempfile::tempdir().unwrap();
        for (p, t) in files {
            let p = d.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        let h = Host::snapshot(d.path()).unwrap();
        (d, h)
    }

    #[test]
    fn an_undecided_section_before_a_match_leaves_the_choice_undecided() {
        let (_d, h) = host_with(&[(
            "/usr/lib/tuned/recommend.d/50-tuned.conf",
            "[virtual-guest]\nvirt=.+\n\n[balanced]\n",
        )]);
        let r = recommend(&h, None);
        assert!(
            matches!(&r, Recommendation::Undecided(w, c) if w.contains("virt-what") && w.contains("50-tuned.conf:1") && c == &["virtual-guest", "balanced"]),
            "{r:?}"
        );
        // a failing condition in the same section decides it
        let (_d, h) = host_with(&[(
            "/usr/lib/tuned/recommend.d/50-tuned.conf",
            "[atomic-guest]\nvirt=.+\nsystem=.*atomic.*\n\n[balanced]\n",
        )]);
        assert!(
            matches!(recommend(&h, None), Recommendation::Profile { name, .. } if name == "balanced")
        );
    }

    #[test]
    fn default_section_chassis_and_unparsable_files() {
        let (_d, h) = host_with(&[
            // configparser refuses this file: tuned logs it and goes on
            ("/etc/tuned/recommend.conf", "no section header\n"),
            ("/etc/tuned/recommend.d/10-a.conf", "[DEFAULT]\n/etc/tuned/flag=on\n\n[laptop-ish]\nchassis_type=notebook\n\n[rack]\nchassis_type=rack\n"),
            ("/etc/tuned/flag", "on\n"),
            (CHASSIS_TYPE, "23\n"),
        ]);
        assert!(
            matches!(recommend(&h, None), Recommendation::Profile { name, .. } if name == "rack")
        );
        // the [DEFAULT] condition applies to every section
        let (_d, h) = host_with(&[
            (
                "/etc/tuned/recommend.d/10-a.conf",
                "[DEFAULT]\n/etc/tuned/flag=on\n\n[rack]\nchassis_type=rack\n",
            ),
            (CHASSIS_TYPE, "23\n"),
        ]);
        assert!(
            matches!(recommend(&h, None), Recommendation::Profile { name, .. } if name == "balanced")
        );
        // no chassis file: tuned asks dmidecode, which no file answers
        let (_d, h) = host_with(&[(
            "/etc/tuned/recommend.d/10-a.conf",
            "[rack]\nchassis_type=rack\n",
        )]);
        assert!(
            matches!(recommend(&h, None), Recommendation::Undecided(w, _) if w.contains("dmidecode"))
        );
    }

    #[test]
    fn hostile_rules_stop_at_the_condition_cap_and_stay_fast() {
        // a pattern that backtracks exponentially in Python's re, many sections
        let mut rules = String::new();
        for i in 0..10_000 {
            rules += &format!("[p{i}]\n/etc/tuned/x=(a+)+$\n");
        }
        let (_d, h) = host_with(&[
            ("/etc/tuned/recommend.conf", &rules),
            ("/etc/tuned/x", &format!("{}b", "a".repeat(5000))),
        ]);
        let t = std::time::Instant::now();
        let r = recommend(&h, None);
        assert!(
            matches!(&r, Recommendation::Undecided(w, _) if w.contains(&MAX_CONDITIONS.to_string())),
            "{r:?}"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
    }

    /// Every `[DEFAULT]` option was copied into every section, each after a
    /// scan of the section's own options, before the condition cap applied:
    /// rules of N sections and N defaults cost N² steps and copies (800 of
    /// each: 640,000 copies, of which three sections are evaluated). Counted
    /// by the lookups' counter (`probes`).
    #[test]
    fn default_options_cost_the_sections_evaluated_not_every_section() {
        let work = |n: usize| {
            let mut rules = String::from("[DEFAULT]\n");
            for i in 0..n {
                rules += &format!("o{i}=x\n");
            }
            for i in 0..n {
                rules += &format!("[p{i}]\nchassis_type=x\n");
            }
            let (_d, h) = host_with(&[("/etc/tuned/recommend.conf", &rules)]);
            crate::parse::tuned::probes::take();
            let r = recommend(&h, None);
            (crate::parse::tuned::probes::take(), r)
        };
        let (small, r) = work(200);
        // `[p0]` (201 conditions) is undecided (no chassis file); looking
        // for candidates, the cap of 512 conditions stops before `[p1]`
        assert!(
            matches!(&r, Recommendation::Undecided(w, c) if w.contains("dmidecode") && c == &["p0"]),
            "{r:?}"
        );
        let (big, _) = work(800);
        assert!(big < 6 * small.max(1), "{small} steps at 200, {big} at 800");
    }

    #[test]
    fn file_conditions_never_read_places_that_hold_secrets() {
        for p in [
            "/etc/shadow",
            "/root/.bashrc",
            "/etc/ssh/sshd_config",
            "/proc/1/environ",
            "/etc/pki/private.pem",
        ] {
            assert!(may_hold_secrets(p), "{p}");
        }
        for p in [
            "/etc/tuned/marker",
            "/proc/cpuinfo",
            "/proc/sys/kernel/osrelease",
            "/etc/redhat-release",
        ] {
            assert!(!may_hold_secrets(p), "{p}");
        }
    }
}
