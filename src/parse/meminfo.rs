//! `/proc/meminfo`: `Name: value [kB]` lines. Pure.

use super::{numbered_lines, Issue};

/// One meminfo field: name, value in bytes (kB fields) or a plain count, and line.
#[derive(Debug, Clone, PartialEq)]
pub struct MemField {
    /// Field name (`MemTotal`).
    pub name: String,
    /// Value: bytes when the line had a `kB` unit, otherwise the raw count.
    pub value: u64,
    /// Whether the value was in kB (now converted to bytes).
    pub bytes: bool,
    /// 1-based line.
    pub line: usize,
}

/// Parse /proc/meminfo. Lines that are not `Name: number [kB]` (a `free` header
/// in a pt-summary capture, the 2.4-era byte table) are skipped with an issue.
pub fn parse(text: &str) -> (Vec<MemField>, Vec<Issue>) {
    let mut out = Vec::new();
    let mut issues = super::Issues::new();
    for (n, raw) in numbered_lines(text) {
        if raw.trim().is_empty() {
            continue;
        }
        let parsed = raw.split_once(':').and_then(|(name, rest)| {
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return None;
            }
            let mut parts = rest.split_whitespace();
            let num: u64 = parts.next()?.parse().ok()?;
            match parts.next() {
                None => Some((name, num, false)),
                Some(u) if u.eq_ignore_ascii_case("kb") && parts.next().is_none() => {
                    Some((name, num.checked_mul(1024)?, true))
                }
                _ => None,
            }
        });
        match parsed {
            Some((name, value, bytes)) => out.push(MemField {
                name: name.to_string(),
                value,
                bytes,
                line: n,
            }),
            None => issues.push(Issue::at(n, "not a `Name: value kB` meminfo line; skipped")),
        }
    }
    (out, issues.into_vec())
}

#[cfg(test)]
mod tests {
    #[test]
    fn memtotal_in_bytes() {
        let (f, i) =
            super::parse("MemTotal:       24683652 kB\nHugePages_Total:       0\nMem: 1 2 3\n");
        assert_eq!(f[0].value, 24683652 * 1024);
        assert!(!f[1].bytes);
        assert_eq!(i.len(), 1);
    }
}
