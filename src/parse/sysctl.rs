//! sysctl formats: configuration files (`sysctl.conf`, `sysctl.d/*.conf`) as
//! systemd-sysctl and procps read them, and `sysctl -a` captures. Also the
//! dotted/slashed key normalisation both tools share. Pure.

use super::{numbered_lines, truncate, Issue};
use crate::secret;

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
fn normalize_key_cow(key: &str) -> std::borrow::Cow<'_, str> {
    let key = key.trim();
    let key = key.strip_prefix("/proc/sys/").unwrap_or(key);
    let first_sep = key.bytes().position(|b| b == b'.' || b == b'/');
    match first_sep {
        Some(i) if key.as_bytes().get(i) == Some(&b'/') => {
            std::borrow::Cow::Owned(swap_dot_slash(key.trim_start_matches('/')))
        }
        _ => std::borrow::Cow::Borrowed(key),
    }
}

/// Swap `.` and `/` (dotted key <-> path below /proc/sys).
pub fn swap_dot_slash(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '.' => '/',
            '/' => '.',
            c => c,
        })
        .collect()
}

/// Path below `/proc/sys` for a canonical dotted key.
pub fn key_to_proc_path(key: &str) -> String {
    format!("/proc/sys/{}", swap_dot_slash(key))
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
    let mut issues = Vec::new();
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
                let key = normalize_key(k);
                if key.is_empty() {
                    issues.push(Issue::at_col(n, 1, "line has `=` but no key before it"));
                    continue;
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
                    line: n,
                });
            }
            None => match l.strip_prefix('-') {
                Some(k) if !k.trim().is_empty() => {
                    lines.push(ConfLine::Exclude { key: normalize_key(k), line: n })
                }
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
        issues,
        systemd_stops_at,
    }
}

/// One value from a `sysctl -a` capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureValue {
    /// Canonical dotted key.
    pub key: String,
    /// Value; multi-line values (repeated keys) joined with `\n`.
    pub value: String,
    /// Line of the first occurrence.
    pub line: usize,
}

/// Parse `sysctl -a` output (procps: `key = value`; also accepts `key: value`
/// from busybox/BSD-like output with an issue, and slash keys of procps 4.0.0).
/// Repeated keys are multi-line values and are joined with `\n`. Lines that are
/// stderr noise (`sysctl: permission denied on key ...`) are reported as issues
/// but do not stop parsing.
pub fn parse_capture(text: &str) -> (Vec<CaptureValue>, Vec<Issue>) {
    use std::borrow::Cow;
    let mut out: Vec<CaptureValue> = Vec::with_capacity(text.len() / 40);
    // keys borrow from `text` when already dotted: no allocation per line
    let mut index: std::collections::HashMap<Cow<'_, str>, usize> =
        std::collections::HashMap::with_capacity(text.len() / 40);
    let mut issues = Vec::new();
    // entries whose value reached MAX_CAPTURE_VALUE_BYTES: later lines are dropped
    let mut capped: std::collections::HashSet<usize> = std::collections::HashSet::new();
    // index in `out` of the key on the previous line
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
        if key.is_empty() || key.contains(char::is_whitespace) {
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
            Some(i) if out.get(i).is_some_and(|c| c.key == *key) => Some(i),
            _ => index.get(&key).copied(),
        };
        match prev {
            Some(i) => {
                let Some(entry) = out.get_mut(i) else {
                    continue;
                };
                if capped.contains(&i) {
                    last = Some(i);
                    continue;
                }
                if entry.value.len() + 1 + v.len() > MAX_CAPTURE_VALUE_BYTES {
                    issues.push(Issue::at(
                        n,
                        format!("value of `{key}` is longer than {MAX_CAPTURE_VALUE_BYTES} bytes; only the first {MAX_CAPTURE_VALUE_BYTES} are kept"),
                    ));
                    let room = MAX_CAPTURE_VALUE_BYTES.saturating_sub(entry.value.len() + 1);
                    entry.value.push('\n');
                    entry.value.push_str(cut(v, room));
                    capped.insert(i);
                    last = Some(i);
                    continue;
                }
                entry.value.push('\n');
                entry.value.push_str(v);
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
                    key: key.clone().into_owned(),
                    value: cut(v, MAX_CAPTURE_VALUE_BYTES).to_string(),
                    line: n,
                });
                index.insert(key, i);
                last = Some(i);
            }
        }
    }
    (out, issues)
}

#[cfg(test)]
mod tests {
    use super::*;

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
