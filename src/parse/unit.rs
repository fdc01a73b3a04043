//! systemd unit files read as systemd reads them (systemd.syntax(7)): `[Section]`
//! headers, `#` and `;` comment lines, backslash continuations, `KEY=VALUE`
//! assignments in file order with their lines. Which assignment wins (the
//! last, an empty one resetting a list) is the caller's, per setting; the
//! unit and its drop-ins are applied in order by calling [`assignments`] on
//! each. Pure: text in, assignments and issues out; never touches the
//! filesystem.

use super::Issue;

/// One assignment: section, key, value (outer blanks removed) and the
/// 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The section it is in (`Service`).
    pub section: String,
    /// The key (`ExecStart`).
    pub key: String,
    /// The value (continuations joined with a blank, as systemd joins them).
    pub value: String,
    /// The line the assignment starts on.
    pub line: usize,
}

/// Most bytes one logical line (with its continuations) may hold; a longer
/// one is ignored with an issue (systemd's own limit is LONG_LINE_MAX, 1 MiB).
const MAX_LINE: usize = 64 * 1024;

/// Most issues one file reports.
const MAX_ISSUES: usize = 20;

/// Every assignment of `text` in order, and what could not be read.
pub fn assignments(text: &str) -> (Vec<Assignment>, Vec<Issue>) {
    let mut out = Vec::new();
    let mut issues = Vec::new();
    let mut section = String::new();
    let mut pending: Option<(usize, String)> = None;
    let finish = |start: usize,
                  acc: &str,
                  section: &str,
                  out: &mut Vec<Assignment>,
                  issues: &mut Vec<Issue>| {
        if acc.len() > MAX_LINE {
            if issues.len() < MAX_ISSUES {
                issues.push(Issue::at(
                    start,
                    format!("a line longer than {} KiB: ignored", MAX_LINE / 1024),
                ));
            }
            return;
        }
        match acc.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => out.push(Assignment {
                section: section.to_string(),
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                line: start,
            }),
            _ => {
                if issues.len() < MAX_ISSUES {
                    issues.push(Issue::at(
                        start,
                        "not `KEY=VALUE`, a `[Section]` header or a comment: ignored, as systemd ignores it".to_string(),
                    ));
                }
            }
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        if let Some((start, mut acc)) = pending.take() {
            // comment lines inside a continuation are skipped (systemd 252)
            let t = line.trim_start();
            if t.starts_with('#') || t.starts_with(';') {
                pending = Some((start, acc));
                continue;
            }
            if let Some(rest) = line.strip_suffix('\\') {
                if acc.len() <= MAX_LINE {
                    acc.push(' ');
                    acc.push_str(rest.trim());
                }
                pending = Some((start, acc));
            } else {
                if acc.len() <= MAX_LINE {
                    acc.push(' ');
                    acc.push_str(line.trim());
                }
                finish(start, &acc, &section, &mut out, &mut issues);
            }
            continue;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            section = t[1..t.len() - 1].to_string();
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => pending = Some((n, head.trim_end().to_string())),
            None => finish(n, t, &section, &mut out, &mut issues),
        }
    }
    if let Some((start, acc)) = pending {
        finish(start, &acc, &section, &mut out, &mut issues);
    }
    (out, issues)
}

/// Split a command line (`ExecStart=`) into words as systemd does for the
/// simple cases: blanks separate, `"..."` and `'...'` quote, a leading
/// `-`, `@`, `+`, `!` or `:` prefix on the program is dropped.
pub fn command_words(value: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in value.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    if let Some(first) = words.first_mut() {
        let trimmed = first
            .trim_start_matches(['-', '@', '+', '!', ':'])
            .to_string();
        *first = trimmed;
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_comments_continuations_and_lines() {
        let text = "# the unit\n[Unit]\nDescription=MariaDB\n\n[Service]\nUser=mysql\n; comment\nExecStart=/usr/sbin/mariadbd \\\n  --defaults-extra-file=/etc/extra.cnf \\\n# a comment inside\n  $MYSQLD_OPTS\nProtectHome=true\njunk line\n";
        let (a, issues) = assignments(text);
        let got: Vec<(&str, &str, &str, usize)> = a
            .iter()
            .map(|x| (x.section.as_str(), x.key.as_str(), x.value.as_str(), x.line))
            .collect();
        assert_eq!(
            got,
            [
                ("Unit", "Description", "MariaDB", 3),
                ("Service", "User", "mysql", 6),
                (
                    "Service",
                    "ExecStart",
                    "/usr/sbin/mariadbd --defaults-extra-file=/etc/extra.cnf $MYSQLD_OPTS",
                    8
                ),
                ("Service", "ProtectHome", "true", 12),
            ]
        );
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].line, 13);
    }

    #[test]
    fn command_words_quote_and_drop_prefixes() {
        assert_eq!(
            command_words("-/usr/sbin/mysqld --defaults-file=\"/etc/my cnf/x.cnf\" 'a b' c"),
            [
                "/usr/sbin/mysqld",
                "--defaults-file=/etc/my cnf/x.cnf",
                "a b",
                "c"
            ]
        );
    }
}
