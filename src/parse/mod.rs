//! Pure parsers, one per file format: `&str` in, entries with line numbers and
//! a list of [`Issue`]s out. Lenient: a bad line is an issue, never a panic.
//! Must not touch the filesystem or know about policies.

use serde::Serialize;

pub mod ext4;
pub mod fstab;
pub mod ifupdown;
pub mod localconfig;
pub mod meminfo;
pub mod mountinfo;
pub mod mountopts;
pub mod mountunit;
pub mod mycnf;
pub mod mysqld_auto;
pub mod mysqlvars;
pub mod netplan;
pub mod networkd;
pub mod nmkeyfile;
pub mod sysctl;
pub mod tuned;
pub mod unit;

/// A problem found while parsing one file: where it is and what is wrong.
/// Issues are data (they become findings), not errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, where known.
    pub column: Option<usize>,
    /// What is wrong and, where possible, what was expected.
    pub message: String,
}

impl Issue {
    /// An issue at a line.
    pub fn at(line: usize, message: impl Into<String>) -> Issue {
        Issue {
            line,
            column: None,
            message: message.into(),
        }
    }

    /// An issue at a line and column.
    pub fn at_col(line: usize, column: usize, message: impl Into<String>) -> Issue {
        Issue {
            line,
            column: Some(column),
            message: message.into(),
        }
    }
}

/// Distinct kinds of issue kept for one file; problems of further kinds are
/// one issue more that counts them.
pub const MAX_ISSUE_KINDS: usize = 16;

/// What kind of problem `message` describes: the message with every
/// `` `quoted` `` span (host data, by the house style) and every number
/// taken out, so the same problem on a million lines is one kind.
pub fn issue_kind(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(256));
    let (mut quoted, mut digits) = (false, false);
    for c in message.chars() {
        if c == '`' {
            quoted = !quoted;
            if quoted {
                out.push_str("`…`");
            }
            continue;
        }
        if quoted {
            continue;
        }
        if c.is_ascii_digit() {
            if !digits {
                out.push('#');
            }
            digits = true;
            continue;
        }
        digits = false;
        out.push(c);
    }
    out
}

/// The words a merged issue adds to its sample (the first issue of its
/// kind): how many lines, the first and the last.
pub fn tally_note(count: usize, first: usize, last: usize) -> String {
    format!(" [{count} lines like it in this file, the first line {first}, the last line {last}; the message is the first's]")
}

/// The message of the one issue that stands for problems of kinds past
/// [`MAX_ISSUE_KINDS`]: how many, the first and last lines, and a sample.
pub fn overflow_message(count: usize, first: usize, last: usize, sample: &str) -> String {
    format!("{count} more problem(s) of other kinds in this file, the first line {first}, the last line {last}; the first: {sample}")
}

#[derive(Debug, Clone)]
struct Tally {
    kind: String,
    count: usize,
    first: usize,
    last: usize,
}

/// The issues of one file as a parser collects them: problems of one kind
/// (by [`issue_kind`]) are one issue with the count, the first and last
/// lines and the first's message as the sample, and past
/// [`MAX_ISSUE_KINDS`] kinds the rest are one issue more, so a file of a
/// million junk lines costs a few issues, not a million.
#[derive(Debug, Clone, Default)]
pub struct Issues {
    list: Vec<Issue>,
    tally: Vec<Tally>,
}

/// The kind [`Issues`] files problems past [`MAX_ISSUE_KINDS`] under.
const OVERFLOW: &str = "\0other kinds";

impl Issues {
    /// No issues.
    pub fn new() -> Issues {
        Issues::default()
    }

    /// Add `issue`, merged into the one of its kind when there is one.
    pub fn push(&mut self, issue: Issue) {
        let kind = issue_kind(&issue.message);
        let at = self
            .tally
            .iter()
            .position(|t| t.kind == kind)
            .or_else(|| (self.tally.len() > MAX_ISSUE_KINDS).then_some(MAX_ISSUE_KINDS));
        if let Some(at) = at {
            let t = &mut self.tally[at];
            t.count += 1;
            t.first = t.first.min(issue.line);
            t.last = t.last.max(issue.line);
            return;
        }
        let line = issue.line;
        let kind = if self.tally.len() == MAX_ISSUE_KINDS {
            OVERFLOW.to_string()
        } else {
            kind
        };
        self.tally.push(Tally {
            kind,
            count: 1,
            first: line,
            last: line,
        });
        self.list.push(issue);
    }

    /// How many issues there are (merged ones count once).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The issues, each merged one with its count, first and last lines.
    pub fn into_vec(self) -> Vec<Issue> {
        self.list
            .into_iter()
            .zip(self.tally)
            .map(|(mut i, t)| {
                if t.kind == OVERFLOW {
                    i.message = overflow_message(t.count, t.first, t.last, &i.message);
                    i.line = t.first;
                } else if t.count > 1 {
                    i.message.push_str(&tally_note(t.count, t.first, t.last));
                }
                i
            })
            .collect()
    }
}

impl Extend<Issue> for Issues {
    fn extend<T: IntoIterator<Item = Issue>>(&mut self, iter: T) {
        for i in iter {
            self.push(i);
        }
    }
}

/// Iterate over lines with 1-based numbers, stripping a trailing CR (CRLF files).
pub fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// Decode `\ooo` octal escapes as fstab, /proc/mounts and mountinfo use them
/// (`\040` space, `\011` tab, `\012` newline, `\134` backslash), exactly as
/// libmount's `unmangle`: three octal digits, value taken modulo 256 as C does.
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if let Some(d) = b.get(i + 1..i + 4) {
                if d.iter().all(|c| (b'0'..=b'7').contains(c)) {
                    let v = (u32::from(d[0] - b'0') * 64
                        + u32::from(d[1] - b'0') * 8
                        + u32::from(d[2] - b'0'))
                        & 0xff;
                    out.push(v as u8);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Cut text to `max` characters for a message, marking the cut with `…`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let t: String = s.chars().take(max).collect();
        format!("{t}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octal_escapes_decode() {
        assert_eq!(unescape_octal(r"/srv/my\040data"), "/srv/my data");
        // libmount keeps the low byte of an out-of-range escape (0o777 & 0xff = 0xff, not UTF-8)
        assert_eq!(unescape_octal(r"\777"), "\u{fffd}");
        assert_eq!(unescape_octal(r"trailing\04"), r"trailing\04");
        assert_eq!(unescape_octal(r"\999"), r"\999");
        assert_eq!(unescape_octal(r"a\134b"), r"a\b");
    }

    #[test]
    fn a_million_junk_lines_are_one_issue_with_the_count_and_the_first_and_last_lines() {
        let mut is = Issues::new();
        for n in 1..=1_000_000 {
            is.push(Issue::at(n, format!("`a{n}` is not `key = value`")));
        }
        for k in 0..40 {
            is.push(Issue::at(
                2_000_000 + k,
                format!("problem {k} of kind {}", "x".repeat(k)),
            ));
        }
        let v = is.into_vec();
        assert_eq!(v.len(), MAX_ISSUE_KINDS + 1, "{v:#?}");
        assert_eq!(v[0].line, 1);
        assert!(v[0].message.starts_with("`a1` is not"), "{}", v[0].message);
        assert!(
            v[0].message.contains("1000000 lines like it"),
            "{}",
            v[0].message
        );
        assert!(
            v[0].message.contains("the last line 1000000"),
            "{}",
            v[0].message
        );
        let over = &v[MAX_ISSUE_KINDS];
        assert!(
            over.message
                .starts_with("25 more problem(s) of other kinds"),
            "{}",
            over.message
        );
        assert!(
            over.message.contains("the last line 2000039"),
            "{}",
            over.message
        );
    }

    #[test]
    fn crlf_lines_are_numbered() {
        let v: Vec<_> = numbered_lines("a\r\nb\n").collect();
        assert_eq!(v, [(1, "a"), (2, "b"), (3, "")]);
    }
}
