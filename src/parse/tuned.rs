//! TuneD formats: profile files (`tuned.conf`, INI as Python configparser reads
//! it, parsed with the `ini` crate), `tuned-main.conf`, `${...}` variable
//! expansion, and tuned's own sysctl line parser (the one it uses to re-apply
//! /etc/sysctl.d). Pure: never touches the filesystem.

use super::{numbered_lines, Issue};

/// The entries the lookups of an option, a unit or a variable by name look
/// at, counted on this thread in tests: a scan allocates nothing, so the
/// tests that bound this work (a profile of N options must not cost N²)
/// count it here. Nothing outside tests.
#[cfg(test)]
pub(crate) mod probes {
    use std::cell::Cell;

    thread_local! {
        static SEEN: Cell<usize> = const { Cell::new(0) };
    }

    /// `n` more entries looked at.
    pub(crate) fn add(n: usize) {
        SEEN.with(|c| c.set(c.get().saturating_add(n)));
    }

    /// The entries looked at since the last call.
    pub(crate) fn take() -> usize {
        SEEN.with(|c| c.replace(0))
    }
}

/// Nothing outside tests (see the test build's `probes`).
#[cfg(not(test))]
pub(crate) mod probes {
    /// Does nothing.
    #[inline(always)]
    pub(crate) fn add(_: usize) {}
}

/// One option of a profile section, with the line it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunedOption {
    /// Option name, case kept (tuned sets `optionxform = str`).
    pub key: String,
    /// Raw value (continuation lines joined with `\n`), not expanded.
    pub value: String,
    /// 1-based line of the last assignment (the one configparser keeps).
    pub line: usize,
}

/// One section (`[main]`, `[sysctl]`, `[variables]`, ...) of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunedSection {
    /// Section name.
    pub name: String,
    /// Options in first-appearance order; a repeated key keeps its place and
    /// takes the later value (configparser with `strict=False`).
    pub options: Vec<TunedOption>,
}

impl TunedSection {
    /// The value of an option.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|o| o.key == key)
            .map(|o| o.value.as_str())
    }
}

/// A parsed `tuned.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TunedProfile {
    /// Sections in order; sections repeated in the file are merged.
    pub sections: Vec<TunedSection>,
}

impl TunedProfile {
    /// A section by name.
    pub fn section(&self, name: &str) -> Option<&TunedSection> {
        self.sections.iter().find(|s| s.name == name)
    }
}

fn ini_options() -> ini::ParseOption {
    ini::ParseOption {
        // configparser keeps quotes and backslashes as written
        enabled_quote: false,
        enabled_escape: false,
        // indented lines continue the previous value
        enabled_indented_mutiline_value: true,
        enabled_preserve_key_leading_whitespace: false,
    }
}

/// Where each `key =` line of each section is, for provenance (the `ini`
/// crate gives values, not positions): (section, key) -> last line.
fn locate_lines(text: &str) -> std::collections::HashMap<(String, String), usize> {
    let mut out = std::collections::HashMap::new();
    let mut section = String::new();
    for (n, raw) in numbered_lines(text) {
        if raw.starts_with([' ', '\t']) {
            continue; // continuation line
        }
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            if let Some(name) = rest.split(']').next() {
                section = name.trim().to_string();
            }
            continue;
        }
        // tuned's configparser has `delimiters=('=')`: `:` is part of the key
        let cut = l.find('=').unwrap_or(l.len());
        let key = l[..cut].trim();
        if !key.is_empty() {
            out.insert((section.clone(), key.to_string()), n);
        }
    }
    out
}

/// The text with comments blanked the way tuned's configparser sees them
/// (`comment_prefixes` `#`/`;` on a line of their own, `inline_comment_prefixes`
/// `#` after whitespace), line numbers kept. The `ini` crate then reads the
/// sections, keys, values and continuation lines.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let t = line.trim_start();
        if t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        let b = line.as_bytes();
        let cut = (1..b.len())
            .find(|&j| b[j] == b'#' && (b[j - 1] == b' ' || b[j - 1] == b'\t'))
            .unwrap_or(b.len());
        out.push_str(line[..cut].trim_end());
    }
    out
}

/// Stands in for `:` in keys while the `ini` crate reads the text (it splits
/// at `:` as well as `=`; tuned's configparser only at `=`).
const COLON: char = '\u{1f}';

/// The first line configparser (with `delimiters=('=')`, no
/// `allow_no_value`) refuses: an option line without `=`. Continuation lines
/// (indented, after an option) and section headers are fine.
fn first_line_without_delimiter(text: &str) -> Option<(usize, &str)> {
    let mut in_option = false;
    for (n, raw) in numbered_lines(text) {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if raw.starts_with([' ', '\t']) && in_option {
            continue;
        }
        if l.starts_with('[') && l.ends_with(']') {
            in_option = false;
            continue;
        }
        if !l.contains('=') {
            return Some((n, l));
        }
        in_option = true;
    }
    None
}

/// `:` in the key part of each option line replaced by [`COLON`].
fn protect_colons(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line.find('=') {
            Some(eq) if !line.starts_with([' ', '\t']) && line[..eq].contains(':') => {
                out.push_str(&line[..eq].replace(':', &COLON.to_string()));
                out.push_str(&line[eq..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Parse a TuneD profile (`tuned.conf`). A file configparser would refuse is
/// an issue (tuned then fails to load the profile) and gives no sections.
pub fn parse_profile(text: &str) -> (TunedProfile, Vec<Issue>) {
    let mut issues = super::Issues::new();
    let text = &without_comments(text);
    if let Some((n, l)) = first_line_without_delimiter(text) {
        let l: String = l.chars().take(80).collect();
        issues.push(Issue::at(
            n,
            format!(
                "`{l}` has no `=`; tuned (configparser, `=` only) refuses the file and cannot load the profile"
            ),
        ));
        return (TunedProfile::default(), issues.into_vec());
    }
    let protected = protect_colons(text);
    let ini = match ini::Ini::load_from_str_opt(&protected, ini_options()) {
        Ok(i) => i,
        Err(e) => {
            issues.push(Issue::at(
                e.line.max(1),
                format!(
                    "not a valid tuned profile ({}); tuned cannot load it",
                    e.msg
                ),
            ));
            return (TunedProfile::default(), issues.into_vec());
        }
    };
    let lines = locate_lines(text);
    let mut profile = TunedProfile::default();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    // each section's options by key, so a section of many options stays
    // linear too
    let mut keys: Vec<std::collections::HashMap<String, usize>> = Vec::new();
    for (name, props) in ini.iter() {
        let Some(name) = name else {
            if props.iter().next().is_some() {
                issues.push(Issue::at(
                    1,
                    "options before the first `[section]`; tuned (configparser) refuses the file",
                ));
            }
            continue;
        };
        // one lookup per section, so a file of many sections stays linear
        let idx = *index.entry(name.to_string()).or_insert_with(|| {
            profile.sections.push(TunedSection {
                name: name.to_string(),
                options: Vec::new(),
            });
            keys.push(Default::default());
            profile.sections.len() - 1
        });
        let sec = &mut profile.sections[idx];
        let sec_keys = &mut keys[idx];
        for (pk, _) in props.iter() {
            // a repeated key: configparser (strict=False) keeps the last value
            let Some(v) = props.get_all(pk).next_back() else {
                continue;
            };
            let k = &pk.replace(COLON, ":");
            let k = k.as_str();
            let line = lines
                .get(&(name.to_string(), k.to_string()))
                .copied()
                .unwrap_or(1);
            probes::add(1);
            match sec_keys.get(k) {
                Some(&i) => {
                    let o = &mut sec.options[i];
                    o.value = v.to_string();
                    o.line = line;
                }
                None => {
                    sec_keys.insert(k.to_string(), sec.options.len());
                    sec.options.push(TunedOption {
                        key: k.to_string(),
                        value: v.to_string(),
                        line,
                    });
                }
            }
        }
    }
    (profile, issues.into_vec())
}

/// `/etc/tuned/tuned-main.conf` (ConfigObj, no sections): `key = value` pairs.
pub fn parse_main_conf(text: &str) -> Vec<(String, String)> {
    match ini::Ini::load_from_str_opt(&without_comments(text), ini_options()) {
        Ok(i) => i
            .general_section()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// configparser's `getboolean` (tuned-main.conf's `reapply_sysctl`);
/// `None` when it is neither (tuned refuses the file).
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// A unit's `enabled=`/`replace=` as tuned's `Unit` reads it: true only for
/// `True`, `true` or `1` (so `enabled=yes` disables the unit).
pub fn unit_bool(v: &str) -> bool {
    matches!(v, "True" | "true" | "1")
}

/// Why a value could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpandError {
    /// `${f:NAME:...}`: a built-in function tuned evaluates on the running host.
    Function(String),
}

/// Expand `${NAME}` from `vars` as tuned's `Variables.expand_static` does:
/// `\${NAME}` is not expanded and loses its backslash (where NAME is a word
/// or a function: `\${i:PROFILE_DIR}` keeps it); an unknown name stays as
/// written. `${f:...}` (built-in functions, computed on the running host)
/// is an error: the value cannot be known from files.
pub fn expand(value: &str, vars: &[(String, String)]) -> Result<String, ExpandError> {
    let lookup = |name: &str| {
        vars.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| (v.as_str(), v.len()))
    };
    expand_bounded(value, lookup, usize::MAX).map(|e| e.text)
}

/// A value with its `${...}` expanded, kept to a bound: its first bytes and
/// the length of the whole expansion (which a variable doubling the one
/// before makes astronomical in a few lines).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The expansion, or its first bytes (cut on a character boundary) when
    /// it is longer than the bound.
    pub text: String,
    /// Bytes of the whole expansion (saturating).
    pub len: usize,
}

impl Expanded {
    /// Whether [`Expanded::text`] is the whole expansion.
    pub fn is_whole(&self) -> bool {
        self.text.len() == self.len
    }

    /// Add a piece of `len` bytes whose first bytes are `text`, keeping at
    /// most `max` bytes; after a piece that is not kept whole, nothing more
    /// is kept (only counted).
    fn push(&mut self, text: &str, len: usize, max: usize) {
        let was_whole = self.is_whole();
        self.len = self.len.saturating_add(len);
        if !was_whole {
            return;
        }
        let room = max.saturating_sub(self.text.len());
        if text.len() <= room {
            self.text.push_str(text);
            return;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&text[..end]);
    }
}

/// The name tuned's loader gives the directory of the profile file it
/// reads: `${i:PROFILE_DIR}`. Not a variable (a variable's name is a word),
/// so a lookup for [`expand_bounded`] answers it for an option read from a
/// profile file.
pub const PROFILE_DIR: &str = "i:PROFILE_DIR";

/// `value` with each `${i:PROFILE_DIR}` not after a `\` made `dir`, as
/// tuned's loader does to every option it reads (`_expand_profile_dir`),
/// for a value used as it is, with no variable expanded (`include=`,
/// `drop=`, a `[variables]` `include=` path); kept to `max` bytes with its
/// whole length, as [`expand_bounded`] keeps an expansion. A value that
/// variables are expanded into gets the directory from the lookup instead.
pub fn with_profile_dir(value: &str, dir: &str, max: usize) -> Expanded {
    let token = format!("${{{PROFILE_DIR}}}");
    let mut out = Expanded {
        text: String::with_capacity(value.len().min(max)),
        len: 0,
    };
    let mut rest = value;
    while let Some(i) = rest.find(&token) {
        let end = i + token.len();
        if rest[..i].ends_with('\\') {
            out.push(&rest[..end], end, max);
        } else {
            out.push(&rest[..i], i, max);
            out.push(dir, dir.len(), max);
        }
        rest = &rest[end..];
    }
    out.push(rest, rest.len(), max);
    out
}

/// Whether tuned takes the `\` off `\${NAME}`: for a word (`expand_static`,
/// `\\(\${\w+})`) or a function (`\\(\${f:.*})`); `\${i:PROFILE_DIR}`
/// and other names keep it.
fn unescaped(name: &str) -> bool {
    name.starts_with("f:")
        || (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// [`expand`] with the variables given by `lookup` (a variable's first
/// bytes and its whole length), the result kept to `max` bytes with its
/// whole length: the work and memory are bounded by the value and `max`,
/// never by what the variables expand to.
pub fn expand_bounded<'v>(
    value: &str,
    lookup: impl Fn(&str) -> Option<(&'v str, usize)>,
    max: usize,
) -> Result<Expanded, ExpandError> {
    let mut out = Expanded {
        text: String::with_capacity(value.len().min(max)),
        len: 0,
    };
    let mut rest = value;
    while let Some(i) = rest.find("${") {
        let escaped = rest[..i].ends_with('\\');
        let Some(end) = rest[i..].find('}') else {
            break;
        };
        let name = &rest[i + 2..i + end];
        if escaped && unescaped(name) {
            out.push(&rest[..i - 1], i - 1, max);
            out.push(&rest[i..i + end + 1], end + 1, max);
        } else if escaped {
            out.push(&rest[..i + end + 1], i + end + 1, max);
        } else if let Some(f) = name.strip_prefix("f:") {
            return Err(ExpandError::Function(
                f.split(':').next().unwrap_or(f).to_string(),
            ));
        } else {
            out.push(&rest[..i], i, max);
            match lookup(name) {
                Some((v, len)) => out.push(v, len, max),
                None => out.push(&rest[i..i + end + 1], end + 1, max),
            }
        }
        rest = &rest[i + end + 1..];
    }
    out.push(rest, rest.len(), max);
    Ok(out)
}

/// tuned's `unquote`: one pair of surrounding double quotes removed.
pub fn unquote(v: &str) -> &str {
    match v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) if !v.contains('\n') => inner,
        _ => v,
    }
}

/// One line of a sysctl file as tuned's `_apply_sysctl_config_line` reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReapplyLine {
    /// The key exactly as written (tuned maps it to a path by swapping every
    /// `.` and `/`: no first-separator rule, no globs, no `-` prefix).
    pub key: String,
    /// Value, trimmed.
    pub value: String,
    /// 1-based line.
    pub line: usize,
}

/// tuned's own sysctl line parser: strip; skip blank, `#` and `;` lines; split
/// at the first `=`; an empty key or no `=` is a syntax error tuned logs.
pub fn parse_reapply(text: &str) -> Vec<ReapplyLine> {
    let mut out = Vec::new();
    for (n, raw) in numbered_lines(text) {
        if raw.len() > super::sysctl::MAX_LINE_BYTES {
            continue;
        }
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim();
        if k.is_empty() {
            continue;
        }
        let v = v.trim();
        let cut = (0..=v.len().min(super::sysctl::MAX_VALUE_BYTES))
            .rev()
            .find(|&i| v.is_char_boundary(i))
            .unwrap_or(0);
        out.push(ReapplyLine {
            key: k.to_string(),
            value: v[..cut].to_string(),
            line: n,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_sections_lines_continuations_and_repeats() {
        let (p, issues) = parse_profile(
            "# c\n[main]\nsummary=x\ninclude=throughput-performance\n  # indented comment\n[sysctl]\nvm.swappiness=10\nkernel.sched_min_granularity_ns = 10000000 # inline\nvm.swappiness = 30\n[variables]\nisolated_cores=1-3\n  ,5\n[sysctl]\nvm.dirty_ratio=${ratio}\n",
        );
        assert!(issues.is_empty(), "{issues:?}");
        let s = p.section("sysctl").unwrap();
        assert_eq!(s.get("vm.swappiness"), Some("30"));
        assert_eq!(s.options[0].line, 9);
        assert_eq!(s.get("kernel.sched_min_granularity_ns"), Some("10000000"));
        assert_eq!(s.get("vm.dirty_ratio"), Some("${ratio}"));
        assert_eq!(
            p.section("main").unwrap().get("include"),
            Some("throughput-performance")
        );
        assert_eq!(
            p.section("variables").unwrap().get("isolated_cores"),
            Some("1-3\n,5")
        );
    }

    #[test]
    fn configparser_splits_only_at_equals_and_refuses_lines_without_it() {
        let (p, issues) = parse_profile("[sysctl]\nkernel.pid_max: 1 = 2\nvm.x=a:b\n");
        assert!(issues.is_empty(), "{issues:?}");
        let s = p.section("sysctl").unwrap();
        assert_eq!(s.get("kernel.pid_max: 1"), Some("2"));
        assert_eq!(s.get("vm.x"), Some("a:b"));
        assert_eq!(s.options[0].line, 2);
        let (p, issues) = parse_profile("[sysctl]\nvm.swappiness = 1\nvm.dirty_ratio: 20\n");
        assert!(p.sections.is_empty());
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 3);
        assert!(issues[0].message.contains("has no `=`"), "{issues:?}");
    }

    #[test]
    fn unit_booleans_are_tuneds_not_configparsers() {
        assert!(unit_bool("true") && unit_bool("True") && unit_bool("1"));
        assert!(!unit_bool("yes") && !unit_bool("on") && !unit_bool("TRUE"));
        assert_eq!(parse_bool("Yes"), Some(true));
        assert_eq!(parse_bool("y"), None);
    }

    #[test]
    fn expansion_escapes_and_functions() {
        let vars = vec![("a".to_string(), "1".to_string())];
        assert_eq!(expand("x${a}y", &vars).unwrap(), "x1y");
        assert_eq!(expand("\\${a}", &vars).unwrap(), "${a}");
        assert_eq!(expand("${b}", &vars).unwrap(), "${b}");
        assert!(matches!(
            expand("${f:cpulist_invert:1}", &vars),
            Err(ExpandError::Function(f)) if f == "cpulist_invert"
        ));
        assert_eq!(unquote("\"a b\""), "a b");
    }

    #[test]
    fn profile_dir_is_expanded_as_tuneds_loader_does_within_a_bound() {
        let v = "${i:PROFILE_DIR}/a,\\${i:PROFILE_DIR},${i:PROFILE_DIR}";
        let e = with_profile_dir(v, "/etc/tuned/p", 100);
        assert_eq!(e.text, "/etc/tuned/p/a,\\${i:PROFILE_DIR},/etc/tuned/p");
        assert!(e.is_whole());
        // kept to the bound, the whole length counted
        let e = with_profile_dir(&"${i:PROFILE_DIR}".repeat(1000), &"d".repeat(300), 10);
        assert_eq!((e.text.as_str(), e.len), ("dddddddddd", 300_000));
        // through a lookup, and `\${i:PROFILE_DIR}` keeps its backslash in
        // the expansion as in tuned (only a word's or a function's loses it)
        let lookup = |n: &str| (n == PROFILE_DIR).then_some(("/d", 2));
        let e = expand_bounded(
            "${i:PROFILE_DIR}|\\${i:PROFILE_DIR}|\\${a}|\\${a-b}",
            lookup,
            100,
        );
        assert_eq!(e.unwrap().text, "/d|\\${i:PROFILE_DIR}|${a}|\\${a-b}");
    }

    #[test]
    fn bounded_expansion_keeps_the_first_bytes_and_counts_the_rest() {
        // a variable kept to its first 4 bytes of a million
        let lookup = |n: &str| (n == "v").then_some(("éé", 1_000_000));
        let e = expand_bounded("ab${v}cd", lookup, 5).unwrap();
        // the second `é` does not fit in the last byte: cut before it
        assert_eq!(e.text, "abé");
        assert_eq!(e.len, 1_000_004);
        assert!(!e.is_whole());
        // a piece kept partly ends what is kept, even with room left
        let e = expand_bounded("${v}x", lookup, 100).unwrap();
        assert_eq!((e.text.as_str(), e.len), ("éé", 1_000_001));
        let e = expand_bounded("x\\${v}", lookup, 100).unwrap();
        assert_eq!((e.text.as_str(), e.len), ("x${v}", 5));
        assert!(e.is_whole());
    }

    #[test]
    fn reapply_parser_takes_keys_literally() {
        let l = parse_reapply(
            "# c\n-vm.x = 1\nnet.ipv4.conf.*.rp_filter=2\nbad\n = 3\n vm.swappiness = 10 \n",
        );
        let keys: Vec<&str> = l.iter().map(|l| l.key.as_str()).collect();
        assert_eq!(
            keys,
            ["-vm.x", "net.ipv4.conf.*.rp_filter", "vm.swappiness"]
        );
        assert_eq!(l[2].line, 6);
        assert_eq!(l[2].value, "10");
    }

    proptest::proptest! {
        #[test]
        fn hostile_text_never_panics(s in "(\\PC|\n|\\[|\\]|=|#|;| |\\$\\{|\\})*") {
            let (p, _) = parse_profile(&s);
            for sec in &p.sections {
                for o in &sec.options {
                    proptest::prop_assert!(o.line >= 1);
                }
            }
            let _ = parse_reapply(&s);
            let vars = [("a".to_string(), "bé".to_string())];
            if let Ok(full) = expand(&s, &vars) {
                // bounded: a prefix of the whole, within the bound, whole length
                let lookup = |n: &str| (n == "a").then_some(("bé", 3));
                for max in [0, 1, 2, 3, 7, 40] {
                    let e = expand_bounded(&s, lookup, max).unwrap();
                    proptest::prop_assert!(full.starts_with(&e.text));
                    proptest::prop_assert!(e.text.len() <= max);
                    proptest::prop_assert_eq!(e.len, full.len());
                    proptest::prop_assert_eq!(e.is_whole(), full.len() <= max);
                }
            }
            let _ = parse_main_conf(&s);
        }
    }
}
