//! MySQL/MariaDB option files (`my.cnf`) line syntax exactly as mysys
//! `search_default_file_with_ext` reads it, plus option-name and value
//! helpers from my_getopt (dash/underscore, `loose-`, `skip-`/`disable-`/
//! `enable-`, booleans, K..E size suffixes). Pure: never touches the
//! filesystem and never follows `!include` (the resolver in
//! `facts::mysql` does that).

use std::borrow::Cow;

use super::{truncate, Issue};
use crate::secret;

/// Longest piece of a name, path or line quoted in a message.
const QUOTE: usize = 120;

/// Longest piece of a line MariaDB's `fgets(buff, 4095)` reads at once; the
/// rest of a longer line is read as a new line.
pub const MARIADB_LINE_CHUNK: usize = 4094;

/// Why mysys stops reading a file at a line. In a top-level option file this
/// aborts the server ("Fatal error in defaults handling"); in an included file
/// the rest of that file is dropped and the including file continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// `[group` without `]`.
    UnclosedGroup,
    /// An option line before any `[group]` header.
    OptionBeforeGroup,
    /// `!include` or `!includedir` with nothing after it.
    EmptyDirective,
}

/// One meaningful line of an option file, in file order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Directive {
    /// `[name]`: leading spaces inside the brackets kept, trailing trimmed.
    Group {
        /// Group name as written (compare case-insensitively).
        name: String,
        /// 1-based line.
        line: usize,
    },
    /// `name = value`, `name =` (empty value) or bare `name` (`value` is `None`).
    Option {
        /// Name as written (not normalised).
        name: String,
        /// Value after comment removal, trimming, quote stripping and escapes.
        value: Option<String>,
        /// 1-based line.
        line: usize,
    },
    /// `!include PATH`.
    Include {
        /// Path as written (relative paths are relative to the server's cwd).
        path: String,
        /// 1-based line.
        line: usize,
    },
    /// `!includedir DIR`.
    IncludeDir {
        /// Directory as written.
        path: String,
        /// 1-based line.
        line: usize,
    },
    /// mysys stops reading this file here (see [`StopKind`]). `!include`
    /// lines at the maximum depth are skipped before this is looked at, so
    /// an [`StopKind::EmptyDirective`] is not an error there.
    Stop {
        /// What is wrong.
        reason: StopKind,
        /// 1-based line.
        line: usize,
    },
}

impl Directive {
    /// The 1-based line of the directive.
    pub fn line(&self) -> usize {
        match self {
            Directive::Group { line, .. }
            | Directive::Option { line, .. }
            | Directive::Include { line, .. }
            | Directive::IncludeDir { line, .. }
            | Directive::Stop { line, .. } => *line,
        }
    }

    /// For an option, the argument as `my_print_defaults` prints it
    /// (`--name=value` or `--name`).
    pub fn argv(&self) -> Option<String> {
        match self {
            Directive::Option {
                name,
                value: Some(v),
                ..
            } => Some(format!("--{name}={v}")),
            Directive::Option {
                name, value: None, ..
            } => Some(format!("--{name}")),
            _ => None,
        }
    }
}

/// Result of [`parse`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Parsed {
    /// Directives in file order. Lines after a [`Directive::Stop`] are still
    /// parsed (so every problem is reported) but mysys never reads them.
    pub directives: Vec<Directive>,
    /// Problems, with lines.
    pub issues: Vec<Issue>,
}

fn is_sp(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn trim_end(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && is_sp(b[end - 1]) {
        end -= 1;
    }
    &b[..end]
}

fn trim_start(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|c| !is_sp(*c)).unwrap_or(b.len());
    &b[start..]
}

/// Parse one option file. Every line is looked at; each problem is an
/// [`Issue`] and, where mysys would stop reading, a [`Directive::Stop`].
pub fn parse(input: &str) -> Parsed {
    let mut out = Building::default();
    let mut found_group = false;
    let mut before_group_reported = false;
    // Not `numbered_lines`: a CR is whitespace to mysys, and it matters on
    // the last line of a file that has no newline.
    let lines: Vec<(usize, &str)> = input
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    let count = lines.len();
    for (idx, (n, raw)) in lines.into_iter().enumerate() {
        // Rebuild the buffer fgets sees: the line with its newline (the last
        // line of a file may have none). A NUL ends the C string.
        let last = idx + 1 == count;
        if last && raw.is_empty() {
            break;
        }
        let mut buf: Vec<u8> = raw.as_bytes().to_vec();
        if !last {
            buf.push(b'\n');
        }
        if let Some(nul) = buf.iter().position(|c| *c == 0) {
            out.issues.push(Issue::at_col(
                n,
                nul + 1,
                "NUL byte in line: mysys ignores the rest of the line",
            ));
            buf.truncate(nul);
        }
        if buf.len() > MARIADB_LINE_CHUNK {
            out.issues.push(Issue::at(
                n,
                format!(
                    "line is {} bytes long: MariaDB reads lines in pieces of {MARIADB_LINE_CHUNK} bytes and treats the rest as a new line (MySQL 8 reads it whole)",
                    buf.len()
                ),
            ));
        }
        for chunk in buf.chunks(MARIADB_LINE_CHUNK) {
            parse_line(
                chunk,
                n,
                &mut found_group,
                &mut before_group_reported,
                &mut out,
            );
        }
    }
    Parsed {
        directives: out.directives,
        issues: out.issues.into_vec(),
    }
}

/// A [`Parsed`] being built: its issues merged by kind as they come.
#[derive(Default)]
struct Building {
    directives: Vec<Directive>,
    issues: super::Issues,
}

fn parse_line(
    buf: &[u8],
    n: usize,
    found_group: &mut bool,
    before_reported: &mut bool,
    out: &mut Building,
) {
    let lead = buf.iter().position(|c| !is_sp(*c)).unwrap_or(buf.len());
    let ptr = &buf[lead..];
    let Some(&first) = ptr.first() else { return };
    if first == b'#' || first == b';' {
        return;
    }
    if first == b'!' {
        let rest = trim_start(&ptr[1..]);
        for (kw, is_dir) in [(&b"includedir"[..], true), (&b"include"[..], false)] {
            if rest.starts_with(kw) && rest.get(kw.len()).is_some_and(|c| is_sp(*c)) {
                let word = if is_dir { "includedir" } else { "include" };
                let arg = trim_start(&rest[kw.len()..]);
                // get_argument() assumes the line ends with a newline and always
                // drops the last character before trimming.
                let arg = match arg.split_last() {
                    Some((_, init)) => trim_end(init),
                    None => arg,
                };
                if arg.is_empty() {
                    out.issues.push(Issue::at(
                        n,
                        format!("`!{word}` without a path: mysys stops reading this file here"),
                    ));
                    out.directives.push(Directive::Stop {
                        reason: StopKind::EmptyDirective,
                        line: n,
                    });
                    return;
                }
                if !buf.ends_with(b"\n") {
                    out.issues.push(Issue::at(
                        n,
                        format!("`!{word}` on the last line without a newline: mysys drops the last character of the path"),
                    ));
                }
                let path = text(arg);
                if path.contains(" #") {
                    out.issues.push(Issue::at(
                        n,
                        format!(
                            "`#` is not a comment in a `!{word}` line: the path is `{}`",
                            truncate(&path, QUOTE)
                        ),
                    ));
                }
                out.directives.push(if is_dir {
                    Directive::IncludeDir { path, line: n }
                } else {
                    Directive::Include { path, line: n }
                });
                return;
            }
        }
        // Not quoted: `!password hunter2` is as likely as a typo of
        // `!include`, and the line number finds it.
        out.issues.push(Issue::at(
            n,
            "a `!` directive other than `!include` and `!includedir`: mysys ignores the line (its text is not shown: it may hold a secret)",
        ));
        return;
    }
    if first == b'[' {
        *found_group = true;
        let inner = &ptr[1..];
        let Some(close) = inner.iter().position(|c| *c == b']') else {
            out.issues.push(Issue::at_col(
                n,
                lead + 1,
                "group header `[` without `]`: mysys stops reading this file here",
            ));
            out.directives.push(Directive::Stop {
                reason: StopKind::UnclosedGroup,
                line: n,
            });
            return;
        };
        let name = text(trim_end(&inner[..close]));
        out.directives.push(Directive::Group { name, line: n });
        return;
    }
    if !*found_group {
        if !*before_reported {
            *before_reported = true;
            out.issues.push(Issue::at_col(
                n,
                lead + 1,
                "option before any [group] header: fatal for mysqld in a top-level file; in an !include'd file the rest of that file is ignored",
            ));
            out.directives.push(Directive::Stop {
                reason: StopKind::OptionBeforeGroup,
                line: n,
            });
        }
        return;
    }
    let line = &ptr[..remove_end_comment(ptr)];
    let (mut name, value) = match line.iter().position(|c| *c == b'=') {
        None => (text(trim_end(line)), None),
        Some(eq) => {
            let name_part = trim_end(&line[..eq]);
            let name = if name_part.is_empty() && lead > 0 {
                // mysys trims the empty name backwards into the indentation and
                // then copies the whole rest of the line as the name.
                text(line)
            } else {
                text(name_part)
            };
            if name_part.is_empty() {
                out.issues.push(Issue::at_col(
                    n,
                    lead + 1,
                    "option line with `=` but no name",
                ));
            }
            (
                name,
                Some(unquote_unescape(trim_end(trim_start(&line[eq + 1..])))),
            )
        }
    };
    if name.contains(char::is_whitespace) && !name.is_empty() && !name.ends_with('\n') {
        // `password hunter2`: the name holds the secret; keep only its first word.
        let name = &mut name;
        if let Cow::Owned(q) = secret::quotable(secret::Format::OptionFile, name) {
            *name = q;
        }
        out.issues.push(Issue::at_col(
            n,
            lead + 1,
            format!(
                "option name `{}` contains spaces: the server rejects it as unknown",
                truncate(name, QUOTE)
            ),
        ));
    }
    out.directives.push(Directive::Option {
        name,
        value,
        line: n,
    });
}

/// Position of the first `#` outside quotes (the end of the line if none),
/// as mysys `remove_end_comment`: quotes are tracked over the whole line,
/// and a backslash escapes a quote only inside quotes.
fn remove_end_comment(b: &[u8]) -> usize {
    let mut quote: u8 = 0;
    let mut escape = false;
    for (i, &c) in b.iter().enumerate() {
        if (c == b'\'' || c == b'"') && !escape {
            if quote == 0 {
                quote = c;
            } else if quote == c {
                quote = 0;
            }
        }
        if quote == 0 && c == b'#' {
            return i;
        }
        escape = quote != 0 && c == b'\\' && !escape;
    }
    b.len()
}

/// Strip one pair of identical surrounding quotes (value longer than one
/// byte) and decode `\n \t \r \b \s \" \' \\`; other escapes keep the backslash.
pub fn unquote_unescape(v: &[u8]) -> String {
    let mut v = v;
    if v.len() > 1 && (v[0] == b'"' || v[0] == b'\'') && v[0] == v[v.len() - 1] {
        v = &v[1..v.len() - 1];
    }
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        let c = v[i];
        if c == b'\\' && i + 1 < v.len() {
            i += 1;
            match v[i] {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'b' => out.push(0x08),
                b's' => out.push(b' '),
                b'"' => out.push(b'"'),
                b'\'' => out.push(b'\''),
                b'\\' => out.push(b'\\'),
                other => {
                    out.push(b'\\');
                    out.push(other);
                }
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    text(&out)
}

/// Lowercase and `-` -> `_`: the spelling SHOW VARIABLES uses.
pub fn normalize_name(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

/// Real option names that begin with `skip_` (they are not `skip-` + boolean).
pub const REAL_SKIP_NAMES: [&str; 9] = [
    "skip_name_resolve",
    "skip_networking",
    "skip_show_database",
    "skip_external_locking",
    "skip_slave_start",
    "skip_replica_start",
    "skip_grant_tables",
    "skip_host_cache",
    "skip_new",
];

/// An option name after my_getopt's prefix handling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionName {
    /// Normalised name without prefixes (`innodb_buffer_pool_dump_at_shutdown`).
    pub name: String,
    /// Had `loose-`: an unknown option is a warning, not fatal.
    pub loose: bool,
    /// `skip-`/`disable-` (false) or `enable-` (true): the value is this
    /// boolean whatever follows `=`.
    pub forced: Option<bool>,
}

/// Apply `loose-`, `skip-`, `disable-` and `enable-` to a raw option name
/// (names in [`REAL_SKIP_NAMES`] keep their `skip_`).
pub fn canonical_option(raw: &str) -> OptionName {
    let mut name = normalize_name(raw);
    let mut loose = false;
    if let Some(rest) = name.strip_prefix("loose_") {
        loose = true;
        name = rest.to_string();
    }
    let mut forced = None;
    if !REAL_SKIP_NAMES.contains(&name.as_str()) {
        for (prefix, v) in [("skip_", false), ("disable_", false), ("enable_", true)] {
            if let Some(rest) = name.strip_prefix(prefix) {
                if !rest.is_empty() {
                    forced = Some(v);
                    name = rest.to_string();
                }
                break;
            }
        }
    }
    OptionName {
        name,
        loose,
        forced,
    }
}

/// my_getopt booleans: `1`/`0`, `ON`/`OFF`, `TRUE`/`FALSE` (any case).
/// Any other word is OFF with a warning in the server; here `Err(false)`.
pub fn parse_bool(v: &str) -> Result<bool, bool> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "on" | "true" => Ok(true),
        "0" | "off" | "false" => Ok(false),
        _ => Err(false),
    }
}

/// An integer option value as MariaDB's `eval_num_suffix` reads it: a decimal
/// integer, an optional suffix K/M/G/T/P/E (powers of 1024, any case;
/// characters after the suffix letter are ignored). Returns the number and
/// whether a suffix was used.
pub fn parse_int(v: &str) -> Result<(i128, bool), String> {
    let t = trim_start(v.as_bytes());
    let (neg, digits_start) = match t.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let digits: Vec<u8> = t[digits_start..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .copied()
        .collect();
    if digits.is_empty() {
        return Err(format!("`{v}` is not an integer"));
    }
    if digits.len() > 20 {
        return Err(format!("`{v}` is out of range"));
    }
    let mut n: i128 = 0;
    for d in &digits {
        n = n * 10 + i128::from(d - b'0');
    }
    if n > i128::from(i64::MAX) {
        return Err(format!("`{v}` is out of range"));
    }
    let after = &t[digits_start + digits.len()..];
    let (mult, suffixed) = match after.first() {
        None => (1i128, false),
        Some(c) => match c.to_ascii_lowercase() {
            b'k' => (1 << 10, true),
            b'm' => (1 << 20, true),
            b'g' => (1 << 30, true),
            b't' => (1 << 40, true),
            b'p' => (1 << 50, true),
            b'e' => (1 << 60, true),
            other => return Err(format!("unknown suffix `{}` in `{v}`", other as char)),
        },
    };
    let n = n * mult;
    Ok((if neg { -n } else { n }, suffixed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(text: &str) -> Vec<String> {
        parse(text)
            .directives
            .iter()
            .filter_map(Directive::argv)
            .collect()
    }

    #[test]
    fn names_values_and_bare_options() {
        assert_eq!(
            opts("[mysqld]\nkey_buffer_size = 16M\nskip-external-locking\nempty =\n  x\t=  y z  \r\nkey with spaces = v\n"),
            ["--key_buffer_size=16M", "--skip-external-locking", "--empty=", "--x=y z", "--key with spaces=v"]
        );
        let p = parse("[mysqld]\nkey with spaces = v\n");
        assert_eq!(p.issues.len(), 1);
    }

    #[test]
    fn comments_hash_inline_semicolon_is_data() {
        assert_eq!(
            opts("# c\n; c\n[mysqld]\n  # indented\na = abc#def\nx = 4 ; note\nq = \"a#b\" # c\nk\"#x\"=1 # c\n"),
            ["--a=abc", "--x=4 ; note", "--q=a#b", "--k\"#x\"=1"]
        );
    }

    #[test]
    fn quotes_only_when_both_ends_match() {
        assert_eq!(
            opts("[m]\na=\"x\"\nb='y'\nc=x\"y\"z\nd=\"x\" y\ne=\"abc\nf=\"\ng=\"'\nh=''\n"),
            [
                "--a=x",
                "--b=y",
                "--c=x\"y\"z",
                "--d=\"x\" y",
                "--e=\"abc",
                "--f=\"",
                "--g=\"'",
                "--h="
            ]
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(
            opts("[m]\na=x\\ny\\tz\\s\\\\\\\"\\'\\q\nb=\\\\\nc=\"\\\\\"\nd=a\\\nr=\\r\\b\n"),
            [
                "--a=x\ny\tz \\\"'\\q",
                "--b=\\",
                "--c=\\",
                "--d=a\\",
                "--r=\r\u{8}"
            ]
        );
    }

    #[test]
    fn groups_keep_leading_trim_trailing_spaces() {
        let p = parse("[mysqld]\n[MYSQLD ]\n[ mysqld ]\n[client] junk\n[unclosed\n");
        let names: Vec<_> = p
            .directives
            .iter()
            .filter_map(|d| match d {
                Directive::Group { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["mysqld", "MYSQLD", " mysqld", "client"]);
        assert_eq!(
            p.directives.last(),
            Some(&Directive::Stop {
                reason: StopKind::UnclosedGroup,
                line: 5
            })
        );
        assert_eq!(p.issues.len(), 1);
    }

    #[test]
    fn option_before_group_stops() {
        let p = parse("a=1\nb=2\n[mysqld]\nc=3\n");
        assert_eq!(
            p.directives[0],
            Directive::Stop {
                reason: StopKind::OptionBeforeGroup,
                line: 1
            }
        );
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].line, 1);
        assert!(parse("[mysqld]\na=1\n").issues.is_empty());
    }

    #[test]
    fn include_directives() {
        let p = parse("!include /a.cnf\n  !  includedir\t/etc/conf.d/  \n!INCLUDE /x\n!includex y\n!include\n!include /last");
        assert_eq!(
            p.directives[0],
            Directive::Include {
                path: "/a.cnf".into(),
                line: 1
            }
        );
        assert_eq!(
            p.directives[1],
            Directive::IncludeDir {
                path: "/etc/conf.d/".into(),
                line: 2
            }
        );
        assert_eq!(
            p.directives[2],
            Directive::Stop {
                reason: StopKind::EmptyDirective,
                line: 5
            }
        );
        // No newline at the end: mysys drops the last character.
        assert_eq!(
            p.directives[3],
            Directive::Include {
                path: "/las".into(),
                line: 6
            }
        );
        // the two unknown directives (lines 3 and 4) are one issue of that
        // kind, with its lines (issue 29)
        assert_eq!(p.issues.len(), 3, "{:?}", p.issues);
        assert!(
            p.issues[0]
                .message
                .contains("2 lines like it in this file, the first line 3, the last line 4"),
            "{:?}",
            p.issues
        );
    }

    #[test]
    fn long_lines_split_like_mariadb() {
        let long = format!("[m]\na={}\n", "x".repeat(5000));
        let o = opts(&long);
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].len(), 2 + MARIADB_LINE_CHUNK);
        assert_eq!(parse(&long).issues.len(), 1);
    }

    #[test]
    fn empty_name_quirk() {
        assert_eq!(opts("[m]\n=value\n"), ["--=value"]);
        assert_eq!(opts("[m]\n  = v2\n"), ["--= v2\n=v2"]);
    }

    #[test]
    fn prefixes() {
        let c = canonical_option("loose-skip-innodb-buffer-pool-dump-at-shutdown");
        assert_eq!(
            c,
            OptionName {
                name: "innodb_buffer_pool_dump_at_shutdown".into(),
                loose: true,
                forced: Some(false)
            }
        );
        assert_eq!(
            canonical_option("Skip-Name-Resolve").name,
            "skip_name_resolve"
        );
        assert_eq!(canonical_option("skip_name_resolve").forced, None);
        assert_eq!(canonical_option("disable-log-bin").forced, Some(false));
        assert_eq!(canonical_option("enable-named-pipe").forced, Some(true));
        assert_eq!(canonical_option("skip-").name, "skip_");
        assert_eq!(canonical_option("max-connections").forced, None);
    }

    #[test]
    fn booleans() {
        for t in ["1", "ON", "on", "TRUE", "true"] {
            assert_eq!(parse_bool(t), Ok(true));
        }
        for f in ["0", "OFF", "False"] {
            assert_eq!(parse_bool(f), Ok(false));
        }
        for bad in ["yes", "no", "2", "enable", ""] {
            assert_eq!(parse_bool(bad), Err(false));
        }
    }

    #[test]
    fn integer_suffixes() {
        assert_eq!(parse_int("1000M"), Ok((1048576000, true)));
        assert_eq!(parse_int("1KB"), Ok((1024, true)));
        assert_eq!(parse_int("1Kfoo"), Ok((1024, true)));
        assert_eq!(parse_int("2e"), Ok((1 << 61, true)));
        assert_eq!(parse_int("1e3"), Ok((1 << 60, true)));
        assert_eq!(parse_int("3p"), Ok((3 << 50, true)));
        assert_eq!(parse_int("5T"), Ok((5 << 40, true)));
        assert_eq!(parse_int("300000000"), Ok((300000000, false)));
        assert_eq!(parse_int("-1"), Ok((-1, false)));
        assert!(parse_int("1.5G").is_err());
        assert!(parse_int("0x10").is_err());
        assert!(parse_int("").is_err());
        assert!(parse_int("abc").is_err());
        assert!(parse_int("99999999999999999999999").is_err());
    }
}
