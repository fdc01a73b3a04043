//! `SHOW GLOBAL VARIABLES` captures: the `mysql -NB` tab-separated form
//! (escaped values), the same with a `Variable_name<TAB>Value` header, and,
//! with an issue, the ASCII-table (`mysql -t`, `mysqladmin variables`) and
//! vertical (`\G`) forms. Pure: text in, variables with lines out.

use super::Issue;

/// Which shape the capture has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// `mysql -NB`: `name<TAB>value`, values escaped.
    Tsv,
    /// `mysql -B`: as [`Format::Tsv`] with a header row.
    TsvWithHeader,
    /// `+----+` bordered table; values not escaped.
    Table,
    /// `*** 1. row ***` blocks.
    Vertical,
}

/// One variable.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Var {
    /// Name as printed (lowercase with underscores).
    pub name: String,
    /// Value, unescaped.
    pub value: String,
    /// 1-based line where the row starts.
    pub line: usize,
}

/// Result of [`parse`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Parsed {
    /// Detected shape (`None` for an empty capture).
    pub format: Option<Format>,
    /// Variables in capture order (a repeated name keeps its last value).
    pub vars: Vec<Var>,
    /// Problems, with lines.
    pub issues: Vec<Issue>,
}

/// Undo `mysql --batch` escaping: `\n`, `\t`, `\\`, `\0`; any other
/// backslash pair is kept as written.
pub fn unescape_batch(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut it = v.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.peek() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('0') => out.push('\0'),
            _ => {
                out.push('\\');
                continue;
            }
        }
        it.next();
    }
    out
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Text of a line for a message: cut to 60 characters, and never a value of
/// a secret variable (`report_password X` written with a space).
fn short(s: &str) -> String {
    let s = crate::secret::quotable(crate::secret::Format::ServerVariable, s);
    let t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// Parse a capture in any of the four shapes.
pub fn parse(text: &str) -> Parsed {
    let lines: Vec<(usize, &str)> = super::numbered_lines(text).collect();
    let first = lines
        .iter()
        .find(|(_, l)| !l.trim().is_empty())
        .map(|(_, l)| l.trim_start());
    let format = match first {
        None => None,
        Some(l) if l.starts_with("+-") || l.starts_with("| ") => Some(Format::Table),
        Some(l) if l.starts_with("***") => Some(Format::Vertical),
        Some(l) if l.starts_with("Variable_name\t") => Some(Format::TsvWithHeader),
        Some(_) => Some(Format::Tsv),
    };
    let mut p = Building {
        format,
        vars: Vec::new(),
        issues: super::Issues::new(),
    };
    match format {
        None => p
            .issues
            .push(Issue::at(1, "capture is empty: no variables")),
        Some(Format::Tsv) | Some(Format::TsvWithHeader) => parse_tsv(&lines, &mut p),
        Some(Format::Table) => {
            p.issues.push(Issue::at(
                1,
                "ASCII-table form (`mysql -t` / `mysqladmin variables`): values are not escaped, multi-line values are guessed; capture with `mysql -NB -e 'SHOW GLOBAL VARIABLES'`",
            ));
            parse_table(&lines, &mut p)
        }
        Some(Format::Vertical) => {
            p.issues.push(Issue::at(
                1,
                "vertical (`\\G`) form: values are not escaped, multi-line values are guessed; capture with `mysql -NB -e 'SHOW GLOBAL VARIABLES'`",
            ));
            parse_vertical(&lines, &mut p)
        }
    }
    dedup(&mut p);
    Parsed {
        format: p.format,
        vars: p.vars,
        issues: p.issues.into_vec(),
    }
}

/// A [`Parsed`] being built: its issues merged by kind as they come.
struct Building {
    format: Option<Format>,
    vars: Vec<Var>,
    issues: super::Issues,
}

fn dedup(p: &mut Building) {
    let mut seen = std::collections::HashMap::new();
    let mut out: Vec<Var> = Vec::with_capacity(p.vars.len());
    for v in std::mem::take(&mut p.vars) {
        match seen.get(&v.name) {
            Some(&i) => {
                p.issues.push(Issue::at(
                    v.line,
                    format!(
                        "variable `{}` appears again; the last value is used",
                        v.name
                    ),
                ));
                out[i] = v;
            }
            None => {
                seen.insert(v.name.clone(), out.len());
                out.push(v);
            }
        }
    }
    p.vars = out;
}

fn parse_tsv(lines: &[(usize, &str)], p: &mut Building) {
    let mut header_seen = false;
    for &(n, l) in lines {
        if l.is_empty() {
            continue;
        }
        if !header_seen
            && p.format == Some(Format::TsvWithHeader)
            && l.starts_with("Variable_name\t")
        {
            header_seen = true;
            continue;
        }
        match l.split_once('\t') {
            Some((name, value)) if valid_name(name) => p.vars.push(Var {
                name: name.to_ascii_lowercase(),
                value: unescape_batch(value),
                line: n,
            }),
            Some((name, _)) => p.issues.push(Issue::at(
                n,
                format!("`{}` is not a variable name", short(name)),
            )),
            None => p.issues.push(Issue::at(
                n,
                format!(
                    "expected `name<TAB>value` as `mysql -NB` prints it, found `{}`",
                    short(l)
                ),
            )),
        }
    }
}

fn parse_table(lines: &[(usize, &str)], p: &mut Building) {
    for &(n, raw) in lines {
        let l = raw.trim_end();
        if l.is_empty() || l.starts_with("+-") {
            continue;
        }
        let row = l
            .strip_prefix("| ")
            .and_then(|r| r.strip_suffix('|'))
            .and_then(|r| r.split_once(" | "));
        match row {
            Some((name, value)) if valid_name(name.trim()) => {
                let name = name.trim();
                if name == "Variable_name" && value.trim() == "Value" {
                    continue;
                }
                p.vars.push(Var {
                    name: name.to_ascii_lowercase(),
                    value: value.trim_end().to_string(),
                    line: n,
                });
            }
            _ => match p.vars.last_mut() {
                Some(last) => {
                    // mysqladmin prints a multi-line value unframed on the next lines.
                    last.value.push('\n');
                    last.value.push_str(raw);
                    p.issues.push(Issue::at(
                        n,
                        format!("line taken as a continuation of `{}`", last.name),
                    ));
                }
                None => p
                    .issues
                    .push(Issue::at(n, format!("not a table row: `{}`", short(l)))),
            },
        }
    }
}

fn parse_vertical(lines: &[(usize, &str)], p: &mut Building) {
    let mut name: Option<(String, usize)> = None;
    let mut in_value = false;
    for &(n, raw) in lines {
        let l = raw.trim_start();
        if l.starts_with("***") && l.trim_end().ends_with("***") {
            in_value = false;
            continue;
        }
        if let Some(v) = l.strip_prefix("Variable_name:") {
            name = Some((v.trim().to_string(), n));
            in_value = false;
            continue;
        }
        if let Some(v) = l.strip_prefix("Value:") {
            match name.take() {
                Some((nm, line)) if valid_name(&nm) => {
                    p.vars.push(Var {
                        name: nm.to_ascii_lowercase(),
                        value: v.strip_prefix(' ').unwrap_or(v).to_string(),
                        line,
                    });
                    in_value = true;
                }
                Some((nm, line)) => p.issues.push(Issue::at(
                    line,
                    format!("`{}` is not a variable name", short(&nm)),
                )),
                None => p.issues.push(Issue::at(
                    n,
                    "`Value:` without a `Variable_name:` line before it",
                )),
            }
            continue;
        }
        if raw.trim().is_empty() {
            continue;
        }
        match (in_value, p.vars.last_mut()) {
            (true, Some(last)) => {
                last.value.push('\n');
                last.value.push_str(raw);
                p.issues.push(Issue::at(
                    n,
                    format!("line taken as a continuation of `{}`", last.name),
                ));
            }
            _ => p
                .issues
                .push(Issue::at(n, format!("unexpected line `{}`", short(raw)))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_headerless_with_escapes_and_empty_values() {
        let p = parse("init_connect\tSELECT 1;\\nSELECT\\t2 \\\\x\ninit_file\t\nmax_connections\t151\nbogus\n");
        assert_eq!(p.format, Some(Format::Tsv));
        assert_eq!(p.vars[0].value, "SELECT 1;\nSELECT\t2 \\x");
        assert_eq!(p.vars[1].value, "");
        assert_eq!(
            p.vars[2],
            Var {
                name: "max_connections".into(),
                value: "151".into(),
                line: 3
            }
        );
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, 4);
    }

    #[test]
    fn tsv_with_header() {
        let p = parse("Variable_name\tValue\nautocommit\tON\n");
        assert_eq!(p.format, Some(Format::TsvWithHeader));
        assert_eq!(p.vars.len(), 1);
        assert!(p.issues.is_empty());
    }

    #[test]
    fn table_and_continuations() {
        let p = parse("+------+-----+\n| Variable_name | Value |\n+---+\n| init_connect | SELECT 1; |\nSELECT 2 |\n| port          | 3306  | \n+---+\n");
        assert_eq!(p.format, Some(Format::Table));
        assert_eq!(p.vars.len(), 2);
        assert_eq!(p.vars[0].value, "SELECT 1;\nSELECT 2 |");
        assert_eq!(p.vars[1].value, "3306");
        assert_eq!(p.issues.len(), 2);
    }

    #[test]
    fn vertical() {
        let p = parse("*************************** 1. row ***************************\nVariable_name: a\n        Value: 1\n*** 2. row ***\nVariable_name: b\n        Value: \n");
        assert_eq!(p.format, Some(Format::Vertical));
        assert_eq!(
            p.vars,
            [
                Var {
                    name: "a".into(),
                    value: "1".into(),
                    line: 2
                },
                Var {
                    name: "b".into(),
                    value: "".into(),
                    line: 5
                }
            ]
        );
    }

    #[test]
    fn duplicates_keep_last() {
        let p = parse("a\t1\na\t2\n");
        assert_eq!(p.vars.len(), 1);
        assert_eq!(p.vars[0].value, "2");
        assert_eq!(p.issues.len(), 1);
    }
}
