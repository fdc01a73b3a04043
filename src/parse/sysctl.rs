//! sysctl formats: configuration files (`sysctl.conf`, `sysctl.d/*.conf`) as
//! systemd-sysctl and procps read them, and `sysctl -a` captures. Also the
//! dotted/slashed key normalisation both tools share, and a value's type
//! (number, list of numbers, text). Pure.

use std::borrow::Cow;

use super::{numbered_lines, truncate, Issue, Issues};
use crate::secret;
use crate::value::Value;

/// Type a sysctl value: one integer -> number, several integers -> list, else string.
pub fn typed(value: &str) -> Value {
    let text = || Value::Str(value.to_string());
    let num = |t: &str| t.parse::<i64>().ok().map(|n| Value::Number(n as f64));
    let mut toks = value.split_whitespace();
    // one pass, and a list allocated only for a second number
    let Some(first) = toks.next().map(num) else {
        return text();
    };
    let Some(first) = first else {
        return text();
    };
    let Some(second) = toks.next() else {
        return first;
    };
    let mut list = vec![first];
    for t in std::iter::once(second).chain(toks) {
        match num(t) {
            Some(n) => list.push(n),
            None => return text(),
        }
    }
    Value::List(list)
}

/// One line of a sysctl configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfLine {
    /// `key = value` (or `-key = value`, which ignores failures).
    Assign {
        /// Canonical dotted key (may contain glob characters).
        key: String,
        /// Value, trimmed (inner whitespace kept, no inline comments).
        value: String,
        /// Line started with `-`: failures to apply are ignored.
        ignore_failure: bool,
        /// The key ends with a separator (`kernel.pid_max.`): systemd-sysctl
        /// drops it, procps opens `/proc/sys/kernel/pid_max/`, fails and
        /// sets nothing.
        procps_fails: bool,
        /// Written `- key = value`, with blanks between the dash and the key:
        /// systemd-sysctl strips them and sets `key`; procps keeps them as part
        /// of the key (`/proc/sys/ key` does not exist) and sets nothing.
        dash_blank: bool,
        /// 1-based line.
        line: usize,
    },
    /// `-key` without `=`: excludes the key from glob expansion.
    Exclude {
        /// Canonical dotted key.
        key: String,
        /// 1-based line.
        line: usize,
    },
}

impl ConfLine {
    /// The canonical key of the line.
    pub fn key(&self) -> &str {
        match self {
            ConfLine::Assign { key, .. } | ConfLine::Exclude { key, .. } => key,
        }
    }
    /// The line number.
    pub fn line(&self) -> usize {
        match self {
            ConfLine::Assign { line, .. } | ConfLine::Exclude { line, .. } => *line,
        }
    }
}

/// Whether a key contains glob characters (`*`, `?`, `[`).
pub fn is_glob(key: &str) -> bool {
    key.contains(['*', '?', '['])
}

/// Normalise a key to the dotted display form `sysctl -a` prints, with the
/// first-separator rule of procps `slashdot` and systemd `sysctl_normalize`:
/// if the first separator is `/` the key is a path (`net/ipv4/conf/eth0.100/rp_filter`
/// becomes `net.ipv4.conf.eth0/100.rp_filter`); if it is `.` it is already dotted.
pub fn normalize_key(key: &str) -> String {
    normalize_key_cow(key).into_owned()
}

/// [`normalize_key`] without allocating when the key is already dotted.
fn normalize_key_cow(key: &str) -> Cow<'_, str> {
    let b = key.as_bytes();
    // the usual key (`net.ipv4.ip_forward`) starts with a letter and ends
    // with an ASCII non-blank: nothing to trim, no `/proc/sys/` to strip
    let key = match (b.first(), b.last()) {
        (Some(f), Some(l)) if f.is_ascii_alphanumeric() && l.is_ascii_graphic() => key,
        _ => {
            let key = key.trim();
            key.strip_prefix("/proc/sys/").unwrap_or(key)
        }
    };
    // the first separator is a few bytes in (`net.`, `kernel.`): a plain
    // loop finds it sooner than memchr's setup
    match key.bytes().position(|b| b == b'.' || b == b'/') {
        Some(i) if key.as_bytes()[i] == b'/' => {
            Cow::Owned(swap_dot_slash(key.trim_start_matches('/')))
        }
        _ => Cow::Borrowed(key),
    }
}

/// The dotted key of the file a path below /proc/sys names, as the kernel
/// resolves the path: empty and `.` components dropped (`net//ipv4/./x` is
/// `net.ipv4.x`), a `.` inside a component written `/`. `None` when it names
/// no sysctl file: a trailing `/` (opening `x/` fails, `Not a directory`), a
/// `..` component, nothing at all, or `proc/sys/` again
/// (`/proc/sys/proc/sys/...` exists on no kernel).
pub fn resolve_proc_path(path: &str) -> Option<String> {
    if path.ends_with('/') {
        return None;
    }
    let comps: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if comps.is_empty() || comps.contains(&"..") || comps.starts_with(&["proc", "sys"]) {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    for (i, c) in comps.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_swapped(&mut out, c);
    }
    Some(out)
}

/// A configuration file's key as a path below /proc/sys, the way systemd's
/// `sysctl_normalize` and procps' `slashdot` both read it: when the first
/// separator is `.`, every `.` and `/` swap; otherwise it is a path as
/// written.
fn key_as_path(key: &str) -> Cow<'_, str> {
    match key.bytes().find(|b| *b == b'.' || *b == b'/') {
        Some(b'.') => Cow::Owned(swap_dot_slash(key)),
        _ => Cow::Borrowed(key),
    }
}

/// What each tool sets for a key of a configuration line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfKey {
    /// systemd-sysctl (`sysctl_normalize` then `path_simplify`: repeated,
    /// leading and trailing separators dropped; measured with systemd 252).
    pub systemd: Option<String>,
    /// procps `sysctl` 4.0: `/proc/sys/` + the path, as the kernel resolves
    /// it (repeated and leading separators work, with a warning about
    /// repeated ones; a trailing one fails).
    pub procps: Option<String>,
}

/// [`ConfKey`] for the key part of a line. Neither tool strips a
/// `/proc/sys/` prefix: both look for `/proc/sys/proc/sys/...` and set
/// nothing (systemd's src/sysctl/sysctl.c `parse_file` passes the key to
/// `sysctl_normalize` as written; only `--prefix=` arguments have
/// `/proc/sys/` removed; measured with systemd 252 and procps 4.0.2 in
/// tests/sysctl_reference.rs).
pub fn conf_key(raw: &str) -> ConfKey {
    let path = key_as_path(raw.trim());
    ConfKey {
        systemd: resolve_proc_path(path.trim_end_matches('/')),
        procps: resolve_proc_path(&path),
    }
}

/// Swap `.` and `/` (dotted key <-> path below /proc/sys).
pub fn swap_dot_slash(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_swapped(&mut out, s);
    out
}

/// Append `s` with `.` and `/` swapped: one allocation for the caller's
/// string, none per character.
fn push_swapped(out: &mut String, s: &str) {
    out.extend(s.chars().map(|c| match c {
        '.' => '/',
        '/' => '.',
        c => c,
    }));
}

/// Path below `/proc/sys` for a canonical dotted key.
pub fn key_to_proc_path(key: &str) -> String {
    let mut path = String::with_capacity("/proc/sys/".len() + key.len());
    path.push_str("/proc/sys/");
    push_swapped(&mut path, key);
    path
}

/// The longest line systemd-sysctl reads (`LONG_LINE_MAX`, 1 MiB): on a longer
/// line `read_line()` fails with `ENOBUFS` and systemd-sysctl stops reading the
/// file there ("Failed to read file ..., ignoring").
pub const MAX_LINE_BYTES: usize = 1024 * 1024;

/// The most a sysctl value can be: the kernel takes one page per write
/// (sysctl.conf(5), BUGS). Longer values are kept to this many bytes, with an
/// issue, so one hostile line cannot cost more than this downstream.
pub const MAX_VALUE_BYTES: usize = 4096;

/// The most of one live value kept from a `sysctl -a` capture (multi-line
/// values joined), as the live `/proc/sys` reader caps a read.
pub const MAX_CAPTURE_VALUE_BYTES: usize = 64 * 1024;

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A parsed sysctl configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfFile {
    /// Assignments and exclusions, in file order.
    pub lines: Vec<ConfLine>,
    /// Malformed or notable lines.
    pub issues: Vec<Issue>,
    /// The first line longer than [`MAX_LINE_BYTES`]: systemd-sysctl stops
    /// reading the file there (lines from it on are not applied at boot);
    /// procps reads on.
    pub systemd_stops_at: Option<usize>,
}

/// Why a key names no sysctl file, for the line's issue.
fn names_no_file(raw: &str) -> String {
    let q = secret::quotable(secret::Format::Sysctl, raw);
    let path = key_as_path(raw);
    let under = path.trim_start_matches('/');
    if let Some(rest) = under.strip_prefix("proc/sys/") {
        let fix = resolve_proc_path(rest.trim_end_matches('/'));
        return format!(
            "`{q}`: keys are relative to /proc/sys, so systemd-sysctl and procps `sysctl --system` both look for /proc/sys/{under}, which does not exist, and neither sets anything{}",
            fix.map(|f| format!("; write `{f}`")).unwrap_or_default()
        );
    }
    format!("`{q}` names no file below /proc/sys (an empty or `..` component); systemd-sysctl and procps set nothing")
}

/// Parse a sysctl configuration file (see [`parse_conf_file`]).
pub fn parse_conf(text: &str) -> (Vec<ConfLine>, Vec<Issue>) {
    let f = parse_conf_file(text);
    (f.lines, f.issues)
}

/// Parse a sysctl configuration file.
///
/// Bounded: a line longer than [`MAX_LINE_BYTES`] is skipped with an issue
/// (and recorded as where systemd-sysctl stops), and a value longer than
/// [`MAX_VALUE_BYTES`] is kept to that many bytes with an issue.
pub fn parse_conf_file(text: &str) -> ConfFile {
    let mut lines = Vec::new();
    let mut issues = Issues::new();
    let mut systemd_stops_at = None;
    for (n, raw) in numbered_lines(text) {
        if raw.len() > MAX_LINE_BYTES {
            if systemd_stops_at.is_none() {
                systemd_stops_at = Some(n);
            }
            issues.push(Issue::at(
                n,
                format!(
                    "line is {} bytes, longer than the 1 MiB systemd-sysctl reads: at boot it stops reading the file here, so this line and every later one are not applied (procps `sysctl --system` reads on); driftaudit skips this line",
                    raw.len()
                ),
            ));
            continue;
        }
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        match l.split_once('=') {
            Some((k, v)) => {
                let (ignore_failure, k) = match k.trim().strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (false, k),
                };
                let dash_blank = ignore_failure && k.starts_with(char::is_whitespace);
                if k.trim().is_empty() {
                    issues.push(Issue::at_col(n, 1, "line has `=` but no key before it"));
                    continue;
                }
                let ck = conf_key(k);
                let Some(key) = ck.systemd.clone() else {
                    issues.push(Issue::at(n, names_no_file(k.trim())));
                    continue;
                };
                let procps_fails = ck.procps.is_none();
                if procps_fails {
                    let q = secret::quotable(secret::Format::Sysctl, k.trim());
                    issues.push(Issue::at(
                        n,
                        format!(
                            "`{q}` ends with a separator: systemd-sysctl drops it and sets `{key}`, procps `sysctl --system` opens {}/ and fails (Not a directory), so the two disagree; remove the trailing separator",
                            key_to_proc_path(&key)
                        ),
                    ));
                }
                if key.contains(char::is_whitespace) {
                    issues.push(Issue::at(
                        n,
                        format!(
                            "key `{}` contains whitespace; expected `key = value`",
                            secret::quotable(secret::Format::Sysctl, &key)
                        ),
                    ));
                    continue;
                }
                let v = v.trim();
                if v.len() > MAX_VALUE_BYTES {
                    issues.push(Issue::at(
                        n,
                        format!(
                            "value of `{key}` is {} bytes; the kernel takes at most {MAX_VALUE_BYTES} bytes in one write, and only the first {MAX_VALUE_BYTES} are kept",
                            v.len()
                        ),
                    ));
                }
                if dash_blank {
                    issues.push(Issue::at_col(
                        n,
                        raw.len() - raw.trim_start().len() + 2,
                        format!(
                            "blank between `-` and `{key}`: systemd-sysctl sets `{key}`, procps `sysctl --system` takes the blank as part of the key and sets nothing; write `-{key}`"
                        ),
                    ));
                }
                lines.push(ConfLine::Assign {
                    key,
                    value: cut(v, MAX_VALUE_BYTES).to_string(),
                    ignore_failure,
                    dash_blank,
                    procps_fails,
                    line: n,
                });
            }
            None => match l.strip_prefix('-') {
                Some(k) if !k.trim().is_empty() => match conf_key(k).systemd {
                    Some(key) => lines.push(ConfLine::Exclude { key, line: n }),
                    None => issues.push(Issue::at(n, names_no_file(k.trim()))),
                },
                _ => issues.push(Issue::at_col(
                    n,
                    raw.len() - raw.trim_start().len() + 1,
                    format!(
                        "`{}` is not `key = value` (a line without `=` is only valid as a `-key` exclusion); systemd-sysctl skips it",
                        truncate(&secret::quotable(secret::Format::Sysctl, l), 60)
                    ),
                )),
            },
        }
    }
    ConfFile {
        lines,
        issues: issues.into_vec(),
        systemd_stops_at,
    }
}

/// One value from a `sysctl -a` capture, borrowed from the capture's text
/// where it can be: a dotted key and a one-line value are slices of it; a
/// slashed key (procps 4.0.0) and a multi-line value (joined) are owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureValue<'a> {
    /// Canonical dotted key.
    pub key: Cow<'a, str>,
    /// Value; multi-line values (repeated keys) joined with `\n`.
    pub value: Cow<'a, str>,
    /// Line of the first occurrence.
    pub line: usize,
}

/// Where `line` splits into key and value as `str::split_once(" = ")` would:
/// the first `=` with a blank on each side (a `memchr` scan; this runs once
/// per line of every capture in a fleet).
fn split_assignment(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    memchr::memchr_iter(b'=', b)
        .find(|&i| i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' '))
        .map(|i| (&line[..i - 1], &line[i + 2..]))
}

/// `s.contains(char::is_whitespace)`, byte by byte for ASCII text.
fn has_whitespace(s: &str) -> bool {
    // char::is_whitespace's members are all below `!` or not ASCII: a key
    // with neither (every real one) is told in one pass with no early
    // exit, which the compiler does a vector at a time
    if !s
        .bytes()
        .fold(false, |a, b| a | (b.wrapping_sub(b'!') >= 0x5e))
    {
        return false;
    }
    if !s.is_ascii() {
        return s.contains(char::is_whitespace);
    }
    // char::is_whitespace's ASCII members: \t \n \x0b \x0c \r and space
    s.bytes().any(|b| b == b' ' || (b'\t'..=b'\r').contains(&b))
}

/// The first line of each key of a capture, as an index into the values
/// parsed so far, found without hashing while the capture is sorted (as
/// `sysctl -a` prints it): `out[..sorted]` has strictly increasing keys, so
/// a key above the last is new and one below it is binary searched. Keys
/// added out of order (a tail appended to a sorted listing) go in a SipHash
/// map (the std default: a hostile capture cannot make it quadratic with
/// colliding keys). The binary searches together compare at most about as
/// many bytes as the text has; past that the sorted run is hashed too, once,
/// and every later key is one hash: linear in the text either way.
struct FirstLines<'a> {
    /// `out[..sorted]` is the sorted run.
    sorted: usize,
    /// Keys of `out[sorted..]`, and of the whole of `out` once `all_hashed`.
    index: std::collections::HashMap<Cow<'a, str>, usize>,
    /// The sorted run is in `index` too.
    all_hashed: bool,
    /// Bytes the binary searches may still compare.
    budget: usize,
}

impl<'a> FirstLines<'a> {
    fn new(text_len: usize) -> FirstLines<'a> {
        FirstLines {
            sorted: 0,
            index: std::collections::HashMap::new(),
            all_hashed: false,
            budget: text_len,
        }
    }

    /// Whether all of `out_len` values are in the sorted run.
    fn is_sorted(&self, out_len: usize) -> bool {
        self.sorted == out_len && !self.all_hashed
    }

    /// Where in `out` `key` first was, or `None` when it is new: it is
    /// then recorded as `out.len()`, which the caller pushes.
    // `&Cow`, not `&str`: a new key goes into the index as the Cow it is,
    // a borrowed one without a copy
    #[allow(clippy::ptr_arg)]
    fn find_or_add(&mut self, out: &[CaptureValue<'a>], key: &Cow<'a, str>) -> Option<usize> {
        use std::cmp::Ordering;
        use std::collections::hash_map::Entry;
        let n = out.len();
        if self.all_hashed {
            return match self.index.entry(key.clone()) {
                Entry::Occupied(e) => Some(*e.get()),
                Entry::Vacant(e) => {
                    e.insert(n);
                    None
                }
            };
        }
        if self.sorted == n {
            // no key out of order yet: compare with the greatest
            match out.last().map(|l| key.as_ref().cmp(l.key.as_ref())) {
                None | Some(Ordering::Greater) => {
                    self.sorted = n + 1;
                    return None;
                }
                Some(Ordering::Equal) => return Some(n - 1),
                Some(Ordering::Less) => {}
            }
        } else if let Some(&i) = self.index.get(key.as_ref()) {
            return Some(i);
        }
        let run = &out[..self.sorted];
        if run.last().is_some_and(|l| key.as_ref() <= l.key.as_ref()) {
            // at most `bits(len)` comparisons of at most `len + 1` bytes each
            let cost = (key.len() + 1) * (usize::BITS - run.len().leading_zeros()) as usize;
            if cost <= self.budget {
                self.budget -= cost;
                if let Ok(i) = run.binary_search_by(|c| c.key.as_ref().cmp(key.as_ref())) {
                    return Some(i);
                }
            } else {
                self.all_hashed = true;
                self.index.reserve(run.len());
                for (i, c) in run.iter().enumerate() {
                    self.index.insert(c.key.clone(), i);
                }
                if let Some(&i) = self.index.get(key.as_ref()) {
                    return Some(i);
                }
            }
        }
        self.index.insert(key.clone(), n);
        None
    }
}

/// Parse `sysctl -a` output (procps: `key = value`; also accepts `key: value`
/// from busybox/BSD-like output with an issue, and slash keys of procps 4.0.0).
/// Repeated keys are multi-line values and are joined with `\n`. Lines that are
/// stderr noise (`sysctl: permission denied on key ...`) are reported as issues
/// but do not stop parsing. Keys and values borrow from `text`: the only
/// allocations per line are for slashed keys and joined values.
pub fn parse_capture(text: &str) -> (Vec<CaptureValue<'_>>, Vec<Issue>) {
    // ~37 bytes a line in real captures: one allocation, not a regrowth
    let mut out: Vec<CaptureValue<'_>> = Vec::with_capacity(text.len() / 32);
    // first line of each key, by key, hashed only where the capture is not
    // sorted (see `FirstLines`)
    let mut index = FirstLines::new(text.len());
    let mut issues = Issues::new();
    // entries whose value reached MAX_CAPTURE_VALUE_BYTES: later lines are dropped
    let mut capped: std::collections::HashSet<usize> = std::collections::HashSet::new();
    // index in `out` of the key on the previous line
    let mut last: Option<usize> = None;
    // `numbered_lines`, with the newline search done by memchr
    let mut start = 0;
    let mut n = 0;
    while start <= text.len() {
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[start..]).map_or(text.len(), |i| start + i);
        let line = &text[start..end];
        let raw = line.strip_suffix('\r').unwrap_or(line);
        start = end + 1;
        n += 1;
        // a line starting with a letter or digit is not blank: no trim
        if !raw
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
            && raw.trim().is_empty()
        {
            continue;
        }
        let (k, v) = if let Some((k, v)) = split_assignment(raw) {
            (k, v)
        } else if let Some(k) = raw.strip_suffix(" =") {
            (k, "")
        } else {
            if raw.starts_with("sysctl:") {
                issues.push(Issue::at(
                    n,
                    format!(
                        "stderr line in capture: {}",
                        truncate(&secret::quotable(secret::Format::Sysctl, raw.trim()), 120)
                    ),
                ));
            } else {
                issues.push(Issue::at(
                    n,
                    format!(
                        "expected `key = value` as `sysctl -a` prints it, found `{}`",
                        truncate(&secret::quotable(secret::Format::Sysctl, raw.trim()), 60)
                    ),
                ));
            }
            last = None;
            continue;
        };
        let key = normalize_key_cow(k);
        if key.is_empty() || has_whitespace(&key) {
            issues.push(Issue::at(
                n,
                format!(
                    "`{}` is not a sysctl key",
                    truncate(&secret::quotable(secret::Format::Sysctl, k), 60)
                ),
            ));
            continue;
        }
        // Multi-line value: each line repeats the key, usually on the next line.
        let prev = match last {
            // (while the capture is sorted `find_or_add` compares with the
            // previous key itself)
            Some(i) if !index.is_sorted(out.len()) && out.get(i).is_some_and(|c| c.key == key) => {
                Some(i)
            }
            // a new key is recorded as `out.len()`, pushed below
            _ => index.find_or_add(&out, &key),
        };
        match prev {
            Some(i) => {
                let Some(entry) = out.get_mut(i) else {
                    continue;
                };
                if !capped.is_empty() && capped.contains(&i) {
                    last = Some(i);
                    continue;
                }
                if entry.value.len() + 1 + v.len() > MAX_CAPTURE_VALUE_BYTES {
                    issues.push(Issue::at(
                        n,
                        format!("value of `{key}` is longer than {MAX_CAPTURE_VALUE_BYTES} bytes; only the first {MAX_CAPTURE_VALUE_BYTES} are kept"),
                    ));
                    let room = MAX_CAPTURE_VALUE_BYTES.saturating_sub(entry.value.len() + 1);
                    let value = entry.value.to_mut();
                    value.push('\n');
                    value.push_str(cut(v, room));
                    capped.insert(i);
                    last = Some(i);
                    continue;
                }
                let value = entry.value.to_mut();
                value.push('\n');
                value.push_str(v);
                if last != Some(i) {
                    issues.push(Issue::at(
                        n,
                        format!("key `{key}` appears again, not adjacent to its first line"),
                    ));
                }
                last = Some(i);
            }
            None => {
                let i = out.len();
                if v.len() > MAX_CAPTURE_VALUE_BYTES {
                    capped.insert(out.len());
                    issues.push(Issue::at(
                        n,
                        format!("value of `{key}` is {} bytes; only the first {MAX_CAPTURE_VALUE_BYTES} are kept", v.len()),
                    ));
                }
                out.push(CaptureValue {
                    key,
                    value: Cow::Borrowed(cut(v, MAX_CAPTURE_VALUE_BYTES)),
                    line: n,
                });
                last = Some(i);
            }
        }
    }
    (out, issues.into_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_whitespace_is_char_is_whitespace() {
        for c in (0u32..0x3100).filter_map(char::from_u32) {
            let s = format!("net.{c}x");
            assert_eq!(has_whitespace(&s), s.contains(char::is_whitespace), "{c:?}");
        }
    }

    #[test]
    fn first_separator_rule() {
        assert_eq!(
            normalize_key("net.ipv4.conf.eth0/100.rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter"
        );
        assert_eq!(
            normalize_key("net/ipv4/conf/eth0.100/rp_filter"),
            "net.ipv4.conf.eth0/100.rp_filter"
        );
        assert_eq!(
            key_to_proc_path("net.ipv4.conf.eth0/100.rp_filter"),
            "/proc/sys/net/ipv4/conf/eth0.100/rp_filter"
        );
        assert_eq!(normalize_key("kernel/hostname"), "kernel.hostname");
    }

    #[test]
    fn separators_as_systemd_sysctl_252_and_procps_4_0_2_resolve_them() {
        // what each tool set in a namespace with these lines (tests/sysctl_reference.rs)
        let both = |k: &str, want: &str| {
            let c = conf_key(k);
            assert_eq!(c.systemd.as_deref(), Some(want), "systemd {k}");
            assert_eq!(c.procps.as_deref(), Some(want), "procps {k}");
        };
        both("net..ipv4.tcp_syncookies", "net.ipv4.tcp_syncookies");
        both("net/ipv4//tcp_fin_timeout", "net.ipv4.tcp_fin_timeout");
        both("/net/core/somaxconn", "net.core.somaxconn");
        both(".kernel.threads-max", "kernel.threads-max");
        both("kernel//msgmax", "kernel.msgmax");
        both(
            "net.ipv4.conf.eth0/100.rp_filter",
            "net.ipv4.conf.eth0/100.rp_filter",
        );
        both(
            "net/ipv4/conf/eth0.100/rp_filter",
            "net.ipv4.conf.eth0/100.rp_filter",
        );
        // a trailing separator: systemd drops it, procps fails
        let c = conf_key("kernel.pid_max.");
        assert_eq!(
            (c.systemd.as_deref(), c.procps),
            (Some("kernel.pid_max"), None)
        );
        // neither strips /proc/sys/
        for k in [
            "/proc/sys/net/ipv4/ip_forward",
            "/proc/sys/vm.swappiness",
            "proc/sys/kernel/msgmnb",
            "/proc/sys//kernel/shmmni",
        ] {
            assert_eq!(
                conf_key(k),
                ConfKey {
                    systemd: None,
                    procps: None
                },
                "{k}"
            );
        }
        let (lines, issues) = parse_conf(
            "/proc/sys/net/ipv4/ip_forward = 1\nkernel.pid_max. = 3\nnet..ipv4.tcp_syncookies = 2\n",
        );
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            matches!(&lines[0], ConfLine::Assign { key, procps_fails: true, .. } if key == "kernel.pid_max")
        );
        assert!(
            matches!(&lines[1], ConfLine::Assign { key, procps_fails: false, .. } if key == "net.ipv4.tcp_syncookies")
        );
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert!(
            issues[0].message.contains("write `net.ipv4.ip_forward`"),
            "{}",
            issues[0].message
        );
        assert!(
            issues[1].message.contains("procps"),
            "{}",
            issues[1].message
        );
    }

    #[test]
    fn conf_lines() {
        let (lines, issues) = parse_conf(
            "# c\n; c\nvm.swappiness = 10 # low\n-net.ipv4.conf.all.rp_filter\n -kernel.x = 1\r\nbogus line\nnet.ipv4.ip_local_port_range = 1024\t65000\n",
        );
        assert_eq!(lines.len(), 4);
        assert_eq!(
            lines[0],
            ConfLine::Assign {
                key: "vm.swappiness".into(),
                value: "10 # low".into(),
                ignore_failure: false,
                dash_blank: false,
                procps_fails: false,
                line: 3
            }
        );
        assert!(
            matches!(&lines[1], ConfLine::Exclude { key, line: 4 } if key == "net.ipv4.conf.all.rp_filter")
        );
        assert!(
            matches!(&lines[2], ConfLine::Assign { ignore_failure: true, value, .. } if value == "1")
        );
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 6);
    }

    /// The simple reference the borrowed parser must equal (values, first
    /// lines and issues, text and line): everything owned, each key's first
    /// line found in one map.
    fn reference_parse_capture(text: &str) -> (Vec<(String, String, usize)>, Vec<Issue>) {
        let mut out: Vec<(String, String, usize)> = Vec::new();
        let mut index: std::collections::HashMap<Cow<'_, str>, usize> =
            std::collections::HashMap::new();
        let mut issues = crate::parse::Issues::new();
        let mut capped: std::collections::HashSet<usize> = std::collections::HashSet::new();
        let mut last: Option<usize> = None;
        for (n, raw) in numbered_lines(text) {
            if raw.trim().is_empty() {
                continue;
            }
            let (k, v) = if let Some((k, v)) = raw.split_once(" = ") {
                (k, v)
            } else if let Some(k) = raw.strip_suffix(" =") {
                (k, "")
            } else {
                let q = secret::quotable(secret::Format::Sysctl, raw.trim());
                issues.push(Issue::at(
                    n,
                    if raw.starts_with("sysctl:") {
                        format!("stderr line in capture: {}", truncate(&q, 120))
                    } else {
                        format!(
                            "expected `key = value` as `sysctl -a` prints it, found `{}`",
                            truncate(&q, 60)
                        )
                    },
                ));
                last = None;
                continue;
            };
            let key = reference_normalize_key(k);
            if key.is_empty() || key.contains(char::is_whitespace) {
                let q = secret::quotable(secret::Format::Sysctl, k);
                issues.push(Issue::at(
                    n,
                    format!("`{}` is not a sysctl key", truncate(&q, 60)),
                ));
                continue;
            }
            let prev = match last {
                Some(i) if out.get(i).is_some_and(|c| c.0 == *key) => Some(i),
                _ => index.get(&key).copied(),
            };
            match prev {
                Some(i) => {
                    let entry = &mut out[i];
                    if capped.contains(&i) {
                        last = Some(i);
                        continue;
                    }
                    if entry.1.len() + 1 + v.len() > MAX_CAPTURE_VALUE_BYTES {
                        issues.push(Issue::at(n, format!("value of `{key}` is longer than {MAX_CAPTURE_VALUE_BYTES} bytes; only the first {MAX_CAPTURE_VALUE_BYTES} are kept")));
                        let room = MAX_CAPTURE_VALUE_BYTES.saturating_sub(entry.1.len() + 1);
                        entry.1.push('\n');
                        entry.1.push_str(cut(v, room));
                        capped.insert(i);
                        last = Some(i);
                        continue;
                    }
                    entry.1.push('\n');
                    entry.1.push_str(v);
                    if last != Some(i) {
                        issues.push(Issue::at(
                            n,
                            format!("key `{key}` appears again, not adjacent to its first line"),
                        ));
                    }
                    last = Some(i);
                }
                None => {
                    let i = out.len();
                    if v.len() > MAX_CAPTURE_VALUE_BYTES {
                        capped.insert(out.len());
                        issues.push(Issue::at(n, format!("value of `{key}` is {} bytes; only the first {MAX_CAPTURE_VALUE_BYTES} are kept", v.len())));
                    }
                    out.push((
                        key.clone().into_owned(),
                        cut(v, MAX_CAPTURE_VALUE_BYTES).to_string(),
                        n,
                    ));
                    index.insert(key, i);
                    last = Some(i);
                }
            }
        }
        (out, issues.into_vec())
    }

    /// `normalize_key_cow` without its fast path: the reference.
    fn reference_normalize_key(key: &str) -> Cow<'_, str> {
        let key = key.trim();
        let key = key.strip_prefix("/proc/sys/").unwrap_or(key);
        let first_sep = key.bytes().position(|b| b == b'.' || b == b'/');
        match first_sep {
            Some(i) if key.as_bytes().get(i) == Some(&b'/') => {
                Cow::Owned(swap_dot_slash(key.trim_start_matches('/')))
            }
            _ => Cow::Borrowed(key),
        }
    }

    /// `typed` with token vectors: the reference.
    fn reference_typed(value: &str) -> Value {
        let toks: Vec<&str> = value.split_whitespace().collect();
        let nums: Option<Vec<f64>> = toks
            .iter()
            .map(|t| t.parse::<i64>().ok().map(|n| n as f64))
            .collect();
        match nums {
            Some(n) if n.len() == 1 => Value::Number(n[0]),
            Some(n) if n.len() > 1 => Value::List(n.into_iter().map(Value::Number).collect()),
            _ => Value::Str(value.to_string()),
        }
    }

    fn assert_same_as_reference(text: &str) {
        let (vals, issues) = parse_capture(text);
        let (want, want_issues) = reference_parse_capture(text);
        let got: Vec<(String, String, usize)> = vals
            .iter()
            .map(|c| (c.key.to_string(), c.value.to_string(), c.line))
            .collect();
        assert_eq!(got, want, "values of {:?}", truncate(text, 200));
        assert_eq!(issues, want_issues, "issues of {:?}", truncate(text, 200));
        for c in &vals {
            assert_eq!(typed(&c.value), reference_typed(&c.value), "{:?}", c.value);
        }
    }

    /// The sorted-run lookup (`FirstLines`) must find every repeat the
    /// hashed one found, wherever it is: sorted captures, sorted ones with
    /// a tail appended (as a later `sysctl -a` of new interfaces), shuffled,
    /// reversed, repeats far from their first line, and captures long and
    /// disordered enough to use up the binary-search budget.
    #[test]
    fn sorted_run_lookup_finds_the_repeats_the_hashed_index_found() {
        let corpus = include_str!("../../scripts/gen-fleet-sysctl.txt");
        let lines: Vec<&str> = corpus.lines().collect();
        let mut sorted = lines.clone();
        sorted.sort_unstable();
        // out of order: sorted by the key read backwards
        let mut shuffled = sorted.clone();
        shuffled.sort_by_key(|l| {
            l.split(" = ")
                .next()
                .unwrap_or("")
                .bytes()
                .rev()
                .collect::<Vec<u8>>()
        });
        let mut texts = vec![
            corpus.to_string(),
            sorted.join("\n"),
            sorted.join("\r\n"),
            shuffled.join("\n"),
            sorted.iter().rev().copied().collect::<Vec<_>>().join("\n"),
        ];
        // a sorted capture with lines of its own repeated at the end, new
        // keys appended, and those repeated again
        let mut tail = sorted.clone();
        for i in (0..sorted.len()).step_by(97) {
            tail.push(sorted[i]);
        }
        tail.push("net.ipv4.conf.eth9.rp_filter = 1");
        tail.push("aaa.first = 1");
        tail.push("zzz.last = 1");
        tail.push("net.ipv4.conf.eth9.rp_filter = 2");
        tail.push(sorted[3]);
        tail.push("aaa.first = 2");
        texts.push(tail.join("\n"));
        // the same key at every distance, blanks, stderr lines and bad keys between
        let mut far = Vec::new();
        for i in 0..300 {
            far.push(format!("k.{:03} = {i}", (i * 7) % 50));
            match (i * 3) % 5 {
                0 => far.push(" \t".into()),
                1 => far.push("sysctl: permission denied on key 'k.001'".into()),
                2 => far.push("bad key = 1".into()),
                _ => {}
            }
        }
        texts.push(far.join("\n"));
        // many distinct short keys, all out of order (a sorted run of one,
        // the rest hashed), then repeats
        let mut many: Vec<String> = (0..20_000u32)
            .map(|i| format!("{} = 1", 19_999 - i))
            .collect();
        many.push("0 = 2".into());
        many.push("19999 = 2".into());
        many.push("new = 1".into());
        many.push("new = 2".into());
        texts.push(many.join("\n"));
        // sorted, then one short key per line below the run: also over budget
        let mut below: Vec<String> = (0..5_000u32).map(|i| format!("m.{i:05} = 1")).collect();
        below.extend((0..5_000u32).map(|i| format!("a{i} = 1")));
        below.extend((0..5_000u32).step_by(7).map(|i| format!("m.{i:05} = 2")));
        below.extend((0..5_000u32).step_by(11).map(|i| format!("a{i} = 2")));
        texts.push(below.join("\n"));
        for t in &texts {
            assert_same_as_reference(t);
        }
        // the budget did run out in the last: replay its lines' lookups
        let t = texts.last().unwrap();
        let mut index = FirstLines::new(t.len());
        let mut out: Vec<CaptureValue<'_>> = Vec::new();
        for (n, l) in numbered_lines(t) {
            let (k, v) = split_assignment(l).unwrap();
            let key = normalize_key_cow(k);
            if index.find_or_add(&out, &key).is_none() {
                out.push(CaptureValue {
                    key,
                    value: Cow::Borrowed(v),
                    line: n,
                });
            }
        }
        assert!(index.all_hashed);
        assert_eq!(out.len(), 10_000);
    }

    #[test]
    fn borrowed_capture_parser_equals_the_owned_reference() {
        // Hostile shapes: separators in keys and values, CRLF, blanks,
        // slashed keys, stderr lines, repeats adjacent and not, over-long
        // values (single and joined), non-ASCII and whitespace in keys.
        let long = "x".repeat(MAX_CAPTURE_VALUE_BYTES + 3);
        let half = "y".repeat(MAX_CAPTURE_VALUE_BYTES / 2 + 1);
        let cases = [
            String::new(),
            "\n\n \t\n".into(),
            "a = b\r\nc = d = e\na=b = c\n a = b\n=\n = \n =\nx =\nx = \n".into(),
            "net/ipv4/conf/eth0.100/rp_filter = 1\nnet.ipv4.conf.eth0/100.rp_filter = 2\n".into(),
            "/proc/sys/kernel/x = 1\n//kernel/y = 2\nkernel.z\u{a0}w = 3\nkernel.\u{e9} = 4\n".into(),
            "k = 1\nj = 2\nk = 3\nbad line\nk = 4\nsysctl: reading key \"k\"\nk = 5\n".into(),
            format!("big = {long}\nbig = more\nnext = 1\n"),
            format!("j = {half}\nj = {half}\nj = {half}\nj = z\n"),
            "kernel.core_modes = file\nkernel.core_modes = pipe\nnet.ipv4.ip_local_port_range = 32768\t60999\nsysctl: permission denied on key 'kernel.cad_pid'\n".into(),
            "fs.x: 1\n\u{2028} = 1\nkernel.a\tb = 1\nno_newline_at_end = 1".into(),
        ];
        for c in &cases {
            assert_same_as_reference(c);
        }
        // Real captures: the testdata hosts' and, when present, the corpus.
        let root = env!("CARGO_MANIFEST_DIR");
        let mut dirs = vec![format!("{root}/testdata")];
        if let Ok(c) = std::env::var("DRIFTAUDIT_CORPUS") {
            dirs.push(format!("{c}/sysctl"));
        }
        let mut n = 0;
        for d in dirs {
            for e in walkdir::WalkDir::new(d).into_iter().flatten() {
                let name = e.file_name().to_string_lossy();
                if e.file_type().is_file() && name.contains("sysctl") {
                    let bytes = std::fs::read(e.path()).unwrap();
                    assert_same_as_reference(&String::from_utf8_lossy(&bytes));
                    n += 1;
                }
            }
        }
        assert!(n >= 10, "{n} files");
    }

    /// What a capture is made of: separators in keys and values, CRLF,
    /// blanks, slashed keys, stderr lines, non-ASCII, a value half the
    /// length limit (two of them on one key go over it).
    fn atoms() -> Vec<String> {
        let mut a: Vec<String> = [
            "a", "b.c", "net/ipv4", ".", "/", " = ", "=", " =", " ", "\t", "\r", "\n", "\r\n",
            "sysctl:", "'k'", "\u{e9}", "\u{a0}", "", "k", "1",
        ]
        .map(str::to_string)
        .to_vec();
        a.push("y".repeat(MAX_CAPTURE_VALUE_BYTES / 2 + 1));
        a
    }

    proptest::proptest! {
        /// Any text of those atoms parses as the simple reference reads it.
        #[test]
        fn any_capture_parses_as_the_simple_reference_reads_it(
            parts in proptest::collection::vec(proptest::sample::select(atoms()), 0..40),
        ) {
            assert_same_as_reference(&parts.concat());
        }
    }

    #[test]
    fn capture_borrows_what_it_can() {
        let text = "kernel.a = 1\nkernel/b = 2\nkernel.c = x\nkernel.c = y\n";
        let (vals, _) = parse_capture(text);
        assert!(matches!(vals[0].key, Cow::Borrowed("kernel.a")));
        assert!(matches!(vals[0].value, Cow::Borrowed("1")));
        assert!(matches!(&vals[1].key, Cow::Owned(k) if k == "kernel.b"));
        assert!(matches!(vals[1].value, Cow::Borrowed("2")));
        assert!(matches!(&vals[2].value, Cow::Owned(v) if v == "x\ny"));
        assert_eq!(swap_dot_slash("a.b/c.d"), "a/b.c/d");
        assert_eq!(key_to_proc_path("a.b/c"), "/proc/sys/a/b.c");
    }

    #[test]
    fn capture_multiline_and_empty() {
        let (vals, issues) = parse_capture(
            "kernel.core_modes = file\nkernel.core_modes = pipe\nnet.ipv4.ip_local_reserved_ports = \nnet.ipv4.ip_local_port_range = 32768\t60999\nsysctl: permission denied on key 'kernel.cad_pid'\na = b = c\n",
        );
        assert_eq!(vals[0].value, "file\npipe");
        assert_eq!(vals[1].value, "");
        assert_eq!(vals[2].value, "32768\t60999");
        assert_eq!(vals[3].value, "b = c");
        assert_eq!(issues.len(), 1);
    }
}
