//! Pure parsers, one per file format: `&str` in, entries with line numbers and
//! a list of [`Issue`]s out. Lenient: a bad line is an issue, never a panic.
//! Must not touch the filesystem or know about policies.

use serde::Serialize;

pub mod ext4;
pub mod fstab;
pub mod localconfig;
pub mod meminfo;
pub mod mountinfo;
pub mod mountopts;
pub mod mycnf;
pub mod mysqlvars;
pub mod sysctl;
pub mod tuned;

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
    fn crlf_lines_are_numbered() {
        let v: Vec<_> = numbered_lines("a\r\nb\n").collect();
        assert_eq!(v, [(1, "a"), (2, "b"), (3, "")]);
    }
}
