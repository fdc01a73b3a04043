//! The option-table text `scripts/mysql-limits` writes, read strictly and
//! written out as the Rust source of a sorted static table: compiled into
//! build.rs (which generates the MariaDB 10.11 table at compile time) and into
//! the limits tests. Not a module of the library; std only, no I/O.

use std::fmt::Write as _;

/// The names of the columns, in order.
const COLUMNS: [&str; 7] = ["name", "type", "min", "max", "block", "arg", "pass"];

/// Value types as written in the table, with the `Kind` variant each becomes.
const KINDS: [(&str, &str); 9] = [
    ("BOOL", "Bool"),
    ("INT", "Int"),
    ("UINT", "Uint"),
    ("DOUBLE", "Double"),
    ("ENUM", "Enum"),
    ("SET", "Set"),
    ("FLAGSET", "Flagset"),
    ("STR", "Str"),
    ("OPT", "Opt"),
];

/// Argument kinds as written in the table, with the `Arg` variant each becomes.
const ARGS: [(&str, &str); 3] = [
    ("REQUIRED", "Required"),
    ("OPTIONAL", "Optional"),
    ("NONE", "None"),
];

/// One option row, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a> {
    /// Name with underscores.
    pub name: &'a str,
    /// `Kind` variant name.
    pub kind: &'static str,
    /// Minimum (`NULL`: none).
    pub min: Option<f64>,
    /// Maximum (`NULL`: none).
    pub max: Option<f64>,
    /// Block size (`NULL`: none).
    pub block: Option<u64>,
    /// `Arg` variant name.
    pub arg: &'static str,
    /// `early`, `main` or `plugin:NAME`.
    pub pass: &'a str,
    /// 1-based line in the table file.
    pub line: usize,
}

/// A whole table file, checked: rows sorted by name (byte order), passes in
/// the order mysqld runs them.
#[derive(Debug, Clone, PartialEq)]
pub struct Table<'a> {
    /// The first `# ` comment: the binary the table was generated from.
    pub source: &'a str,
    /// Options, sorted by name, each name once.
    pub rows: Vec<Row<'a>>,
    /// `early`, `main`, `plugin:innodb`, then the other plugins in the order
    /// they first appear in the file.
    pub passes: Vec<&'a str>,
}

/// At most this many problems are listed; the rest are counted.
const MAX_PROBLEMS: usize = 20;

/// Read a table file strictly: every line is a `# ` comment, blank, or seven
/// tab-separated columns with a known type and argument kind, `NULL` or a
/// number in the numeric columns and a known pass. Every problem is reported
/// at once, as `FILE:LINE:COLUMN: what; the fix`.
pub fn parse<'a>(file: &str, text: &'a str) -> Result<Table<'a>, String> {
    let mut source = "";
    let mut rows: Vec<Row<'a>> = Vec::new();
    let mut passes: Vec<&'a str> = vec!["early", "main"];
    let mut problems: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some(c) = c.strip_prefix(' ') {
                if source.is_empty() {
                    source = c.trim();
                }
            }
            continue;
        }
        let before = problems.len();
        let fields: Vec<&str> = line.split('\t').collect();
        // 1-based byte column where field `k` starts
        let col = |k: usize| 1 + fields[..k].iter().map(|f| f.len() + 1).sum::<usize>();
        let mut bad = |k: usize, what: String| {
            problems.push(format!("{file}:{n}:{}: {what}", col(k)));
        };
        if fields.len() != COLUMNS.len() {
            bad(
                0,
                format!(
                    "expected {} tab-separated columns ({}), found {}; regenerate the table with scripts/mysql-limits",
                    COLUMNS.len(),
                    COLUMNS.join(" "),
                    fields.len()
                ),
            );
            continue;
        }
        let name = fields[0];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            bad(
                0,
                format!("option name `{}` is not lowercase letters, digits and underscores (`-` is written `_`)", name.escape_debug()),
            );
        }
        let word = |k: usize, table: &[(&str, &'static str)]| {
            table
                .iter()
                .find(|(w, _)| *w == fields[k])
                .map(|(_, variant)| *variant)
        };
        let one_of =
            |table: &[(&str, &str)]| table.iter().map(|(w, _)| *w).collect::<Vec<_>>().join(", ");
        let kind = word(1, &KINDS).unwrap_or_else(|| {
            bad(
                1,
                format!(
                    "unknown type `{}`; expected one of {}",
                    fields[1].escape_debug(),
                    one_of(&KINDS)
                ),
            );
            ""
        });
        let arg = word(5, &ARGS).unwrap_or_else(|| {
            bad(
                5,
                format!(
                    "unknown argument kind `{}`; expected one of {}",
                    fields[5].escape_debug(),
                    one_of(&ARGS)
                ),
            );
            ""
        });
        let mut number = |k: usize| -> Option<f64> {
            if fields[k] == "NULL" {
                return None;
            }
            match fields[k].parse::<f64>() {
                Ok(x) if x.is_finite() => Some(x),
                _ => {
                    bad(
                        k,
                        format!(
                            "{} `{}` is neither NULL nor a finite number",
                            COLUMNS[k],
                            fields[k].escape_debug()
                        ),
                    );
                    None
                }
            }
        };
        let min = number(2);
        let max = number(3);
        let block = match fields[4] {
            "NULL" => None,
            b => b.parse::<u64>().ok().or_else(|| {
                bad(
                    4,
                    format!(
                        "block size `{}` is neither NULL nor an unsigned integer",
                        b.escape_debug()
                    ),
                );
                None
            }),
        };
        let pass = fields[6];
        let plugin = pass.strip_prefix("plugin:");
        if !(pass == "early" || pass == "main" || plugin.is_some_and(|p| !p.is_empty())) {
            bad(
                6,
                format!(
                    "unknown pass `{}`; expected early, main or plugin:NAME",
                    pass.escape_debug()
                ),
            );
        }
        if problems.len() > before {
            continue;
        }
        if !passes.contains(&pass) {
            passes.push(pass);
        }
        rows.push(Row {
            name,
            kind,
            min,
            max,
            block,
            arg,
            pass,
            line: n,
        });
    }
    // Stable: equal names keep file order, so the check below names the first line.
    rows.sort_by(|a, b| a.name.cmp(b.name));
    for w in rows.windows(2) {
        if w[0].name == w[1].name {
            problems.push(format!(
                "{file}:{}:1: option `{}` is listed again (first at line {}); each option has one row",
                w[1].line, w[1].name, w[0].line
            ));
        }
    }
    if !problems.is_empty() {
        let more = problems.len().saturating_sub(MAX_PROBLEMS);
        problems.truncate(MAX_PROBLEMS);
        if more > 0 {
            problems.push(format!("... and {more} more problems"));
        }
        return Err(problems.join("\n"));
    }
    // InnoDB loads first among the plugins; the order of the others only
    // matters for a name two plugins share, which none does.
    passes.sort_by_key(|p| match *p {
        "early" => 0,
        "main" => 1,
        "plugin:innodb" => 2,
        _ => 3,
    });
    Ok(Table {
        source,
        rows,
        passes,
    })
}

/// The Rust expression of a `ServerTable` (as `limits` declares it) for a
/// checked table.
pub fn render(label: &str, file: &str, t: &Table<'_>) -> String {
    // `{:?}` of a str is a valid Rust string literal; of a finite f64, the
    // shortest literal that reads back as the same f64.
    let opt_f = |x: Option<f64>| x.map_or("None".to_string(), |x| format!("Some({x:?})"));
    let mut s = format!(
        "// Generated by build.rs from {file}: do not edit.\nServerTable {{\n    label: {label:?},\n    source: {:?},\n    options: &[\n",
        t.source
    );
    for r in &t.rows {
        let _ = writeln!(
            s,
            "        OptionSpec {{ name: {:?}, kind: Kind::{}, min: {}, max: {}, block: {}, arg: Arg::{}, pass: {:?} }},",
            r.name,
            r.kind,
            opt_f(r.min),
            opt_f(r.max),
            r.block.map_or("None".to_string(), |b| format!("Some({b})")),
            r.arg,
            r.pass
        );
    }
    let _ = writeln!(s, "    ],\n    passes: &{:?},\n}}", t.passes);
    s
}
