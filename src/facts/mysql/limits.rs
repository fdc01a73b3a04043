//! What one server version does with an option it reads, as data: which
//! options exist, how mysqld resolves a name (exact, unique prefix, `skip-`/
//! `disable-`/`enable-`/`loose-`/`maximum-`/`autoset-`, one pass of option
//! parsing after another), whether an option needs a value, and the numeric
//! limits (minimum, maximum, block size) my_getopt clamps and rounds a value
//! to. Tables are generated from an installed server by `scripts/mysql-limits`
//! and turned into a sorted static table by build.rs at compile time
//! (`table_gen.rs`). Pure: no I/O, no policy logic.

use super::server::ServerVersion;

/// The generator build.rs runs, compiled into the tests to check it.
#[cfg(test)]
#[path = "table_gen.rs"]
mod table_gen;

/// The value type of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// ON/OFF.
    Bool,
    /// Signed integer.
    Int,
    /// Unsigned integer.
    Uint,
    /// Floating point.
    Double,
    /// One of a list of words.
    Enum,
    /// A set of words.
    Set,
    /// `flag=on,flag=off` lists (optimizer_switch).
    Flagset,
    /// Free text.
    Str,
    /// A command-line option that is not a system variable.
    Opt,
}

/// Whether an option takes `=value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// `--name` alone is an error ("option '--name' requires an argument").
    Required,
    /// `--name` alone is allowed (ON for a boolean).
    Optional,
    /// A flag; booleans still accept `=0`/`=1` (my_getopt's "historical reasons").
    None,
}

/// One option of a server version.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionSpec {
    /// Name with underscores.
    pub name: &'static str,
    /// Value type.
    pub kind: Kind,
    /// Minimum (integers and doubles).
    pub min: Option<f64>,
    /// Maximum (integers and doubles).
    pub max: Option<f64>,
    /// Block size: values are rounded down to a multiple of it.
    pub block: Option<u64>,
    /// Whether a value is needed.
    pub arg: Arg,
    /// Option-parsing pass: `early`, `main` or `plugin:NAME`.
    pub pass: &'static str,
}

/// The value the server keeps for a number it read, and how it got there.
#[derive(Debug, Clone, PartialEq)]
pub struct Limited {
    /// Value after clamping and rounding.
    pub value: f64,
    /// What the server did, when it changed the value.
    pub how: Option<String>,
    /// The server logs "adjusted to" (min/max clamps; block rounding is silent).
    pub warns: bool,
}

impl OptionSpec {
    /// Apply my_getopt's `getopt_ull_limit_value`/`getopt_ll_limit_value`
    /// (clamp to the maximum, round down to the block size, raise to the
    /// minimum) or `getopt_double_limit_value` (clamp) to `n`.
    pub fn limit(&self, n: f64) -> Limited {
        let mut v = n;
        let mut how = Vec::new();
        let mut warns = false;
        if let Some(max) = self.max {
            if v > max {
                v = max;
                warns = true;
                how.push(format!("above the maximum {}, lowered to it", fmt_num(max)));
            }
        }
        if self.kind != Kind::Double {
            if let Some(b) = self.block.filter(|b| *b > 1) {
                let b = b as f64;
                let r = (v / b).trunc() * b;
                if r != v {
                    how.push(format!(
                        "rounded down to a multiple of the block size {}",
                        fmt_num(b)
                    ));
                    v = r;
                }
            }
        }
        if let Some(min) = self.min {
            if v < min {
                if n < min {
                    warns = true;
                }
                how.push(format!("below the minimum {}, raised to it", fmt_num(min)));
                v = min;
            }
        }
        Limited {
            value: v,
            how: (!how.is_empty()).then(|| how.join(", then ")),
            warns,
        }
    }
}

fn fmt_num(n: f64) -> String {
    crate::value::format_number(n)
}

/// How the server resolves an option name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// A known option.
    Found(Resolved),
    /// The name matches more than one option in the pass that looks at it.
    Ambiguous {
        /// The name as the server compares it (special prefixes removed).
        written: String,
        /// Two of the options it matches.
        candidates: [String; 2],
        /// The pass (`early`, `main`, `plugin:innodb`).
        pass: String,
    },
    /// No pass knows the name (maybe a plugin that is not in the table).
    Unknown,
}

/// A special prefix my_getopt strips when the whole name is not an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `skip-`: a boolean OFF (`=0`: ON).
    Skip,
    /// `disable-`: as `skip-`.
    Disable,
    /// `enable-`: a boolean ON (`=0`: OFF).
    Enable,
    /// `maximum-`: sets the upper bound of a session variable.
    Maximum,
    /// `autoset-`: let the server size it.
    Autoset,
}

/// A resolved option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The option's full name (underscores).
    pub name: String,
    /// The unique prefix that was written, when it was not the full name.
    pub prefix: Option<String>,
    /// Had `loose-`.
    pub loose: bool,
    /// The special prefix that decided the value (the last one stripped).
    pub special: Option<Special>,
    /// Pass that resolved it.
    pub pass: String,
}

/// One server version's options.
#[derive(Debug)]
pub struct ServerTable {
    /// `MariaDB 10.11`.
    pub label: &'static str,
    /// The binary the table was generated from (first line of the data file).
    pub source: &'static str,
    /// Options, sorted by name (byte order), each name once.
    pub options: &'static [OptionSpec],
    /// Passes in the order mysqld runs them.
    passes: &'static [&'static str],
}

const SPECIALS: [(&str, Option<Special>); 6] = [
    ("skip_", Some(Special::Skip)),
    ("disable_", Some(Special::Disable)),
    ("enable_", Some(Special::Enable)),
    ("maximum_", Some(Special::Maximum)),
    ("loose_", None),
    ("autoset_", Some(Special::Autoset)),
];

enum Found {
    None,
    One(String, bool),
    Many(String, String),
}

/// MariaDB 10.11 (generated from 10.11.19 by `scripts/mysql-limits`): the
/// data file is checked and turned into this sorted table by build.rs
/// (`table_gen`), so no audit parses it at run time.
static MARIADB_10_11: ServerTable = include!(concat!(env!("OUT_DIR"), "/mariadb_10_11.rs"));

impl ServerTable {
    /// An option by full name (underscores).
    pub fn get(&self, name: &str) -> Option<&OptionSpec> {
        self.options
            .binary_search_by(|s| s.name.cmp(name))
            .ok()
            .map(|i| &self.options[i])
    }

    /// Every option the pattern is a prefix of (an exact name sorts first):
    /// in a sorted table they are one run, starting where `pat` would go.
    fn matches(&self, pat: &str) -> &[OptionSpec] {
        let from = self.options.partition_point(|s| s.name < pat);
        let rest = &self.options[from..];
        &rest[..rest.partition_point(|s| s.name.starts_with(pat))]
    }

    /// my_getopt `findopt` within one pass, over [`ServerTable::matches`]:
    /// an exact name, or every option of the pass the pattern is a prefix of.
    fn findopt(pass: &str, pat: &str, matches: &[OptionSpec]) -> Found {
        let mut first: Option<&str> = None;
        for spec in matches.iter().filter(|s| s.pass == pass) {
            if spec.name == pat {
                return Found::One(spec.name.to_string(), false);
            }
            match first {
                None => first = Some(spec.name),
                Some(f) => return Found::Many(f.to_string(), spec.name.to_string()),
            }
        }
        match first {
            Some(f) => Found::One(f.to_string(), true),
            None => Found::None,
        }
    }

    /// Resolve a name (lowercase, underscores) the way mysqld's passes do:
    /// in each pass the whole name first, then with special prefixes
    /// stripped one after another (my_getopt restarts its prefix loop after
    /// each strip); a pass that does not know the name leaves it to the next.
    /// Linear in the name's length: the candidates of each form of the name
    /// are looked up once, not once per pass.
    pub fn resolve(&self, name: &str) -> Lookup {
        // The forms my_getopt tries: the name, then each strip of a special prefix.
        let mut forms: Vec<(&str, Option<Special>, bool)> = vec![(name, None, false)];
        let mut cur = name;
        let mut loose = false;
        'strip: loop {
            for (p, special) in SPECIALS {
                if let Some(rest) = cur.strip_prefix(p) {
                    cur = rest;
                    loose |= p == "loose_";
                    forms.push((cur, special, loose));
                    continue 'strip;
                }
            }
            break;
        }
        let candidates: Vec<&[OptionSpec]> =
            forms.iter().map(|(f, _, _)| self.matches(f)).collect();
        if candidates.iter().all(|c| c.is_empty()) {
            return Lookup::Unknown;
        }
        for pass in self.passes {
            for ((form, special, loose), cands) in forms.iter().zip(&candidates) {
                match Self::findopt(pass, form, cands) {
                    Found::One(full, is_prefix) => {
                        return Lookup::Found(Resolved {
                            prefix: is_prefix.then(|| form.to_string()),
                            name: full,
                            loose: *loose,
                            special: *special,
                            pass: pass.to_string(),
                        })
                    }
                    Found::Many(a, b) => {
                        return Lookup::Ambiguous {
                            written: form.to_string(),
                            candidates: [a, b],
                            pass: pass.to_string(),
                        }
                    }
                    Found::None => {}
                }
            }
        }
        Lookup::Unknown
    }
}

/// The value a `skip-`/`disable-` (`enable = false`) or `enable-`
/// (`enable = true`) option gives: my_getopt inverts it for a value of
/// exactly `0` (`--skip-x=0` is ON, `--enable-x=0` is OFF) and ignores any
/// other value.
pub fn forced_value(enable: bool, value: Option<&str>) -> bool {
    if value == Some("0") {
        !enable
    } else {
        enable
    }
}

/// The table for a server version, when one is compiled in: MariaDB 10.11
/// (generated from 10.11.19). Other versions have other options and limits;
/// the caller says it cannot tell.
pub fn table_for(version: &ServerVersion) -> Option<&'static ServerTable> {
    (version.mariadb && version.parts[0] == 10 && version.parts[1] == 11).then_some(&MARIADB_10_11)
}

/// my_getopt's integer reading (`eval_num_suffix_ll`/`_ull`, MariaDB 10.11):
/// leading blanks, an optional sign, decimal digits (none is 0), then an
/// optional K/M/G/T/P/E suffix (powers of 1024); what follows a suffix
/// letter is ignored, any other character is "Unknown suffix" and the
/// server refuses the value. Unsigned options refuse a minus sign.
pub fn getopt_int(value: &str, unsigned: bool) -> Result<f64, String> {
    let t = value.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    if unsigned && t.starts_with('-') {
        return Err(format!(
            "`{value}` is negative: \"Incorrect unsigned value\""
        ));
    }
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let mut n: u128 = 0;
    for d in body[..digits].bytes() {
        n = n.saturating_mul(10).saturating_add(u128::from(d - b'0'));
    }
    let limit = if unsigned {
        u128::from(u64::MAX)
    } else {
        i64::MAX as u128
    };
    if n > limit {
        return Err(format!(
            "`{value}` is out of range: \"Incorrect integer value\""
        ));
    }
    let mult: u128 = match body[digits..].bytes().next() {
        None => 1,
        Some(c) => match c.to_ascii_lowercase() {
            b'k' => 1 << 10,
            b'm' => 1 << 20,
            b'g' => 1 << 30,
            b't' => 1 << 40,
            b'p' => 1 << 50,
            b'e' => 1 << 60,
            other => {
                return Err(format!(
                    "unknown suffix `{}` in `{value}` (\"Unknown suffix '{}' used for variable\"; legal are K, M, G, T, P, E)",
                    (other as char).escape_default(),
                    (other as char).escape_default()
                ))
            }
        },
    };
    let v = (n.saturating_mul(mult)).min(limit) as f64;
    Ok(if neg { -v } else { v })
}

/// my_getopt's `getopt_double`: the whole value must be a number.
pub fn getopt_double(value: &str) -> Result<f64, String> {
    let t = value.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    match t.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(n),
        _ => Err(format!(
            "`{value}` is not a number (\"Invalid decimal value for option\")"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> &'static ServerTable {
        table_for(&ServerVersion::parse("10.11.19-MariaDB").unwrap()).unwrap()
    }

    fn found(name: &str) -> Resolved {
        match t().resolve(name) {
            Lookup::Found(r) => r,
            other => panic!("{name}: {other:?}"),
        }
    }

    const TSV: &str = include_str!("mariadb-10.11.tsv");

    #[test]
    fn the_generated_table_names_its_server_and_holds_every_option() {
        let t = t();
        assert_eq!(t.label, "MariaDB 10.11");
        assert!(
            t.source.starts_with("mariadbd  Ver 10.11.19-MariaDB"),
            "{}",
            t.source
        );
        assert_eq!(t.passes[..2], ["early", "main"]);
        assert!(t.options.len() > 700, "{}", t.options.len());
    }

    #[test]
    fn generator_output_is_the_compiled_table() {
        let parsed = table_gen::parse("mariadb-10.11.tsv", TSV).unwrap();
        let rendered = table_gen::render(
            "MariaDB 10.11",
            "src/facts/mysql/mariadb-10.11.tsv",
            &parsed,
        );
        assert_eq!(
            rendered,
            include_str!(concat!(env!("OUT_DIR"), "/mariadb_10_11.rs"))
        );
        assert_eq!(parsed.rows.len(), t().options.len());
    }

    #[test]
    fn generator_refuses_malformed_lines_with_their_place() {
        let head = "# mariadbd  Ver 10.11.19\n";
        let ok = "aria_block_size\tUINT\t4096\t32768\t1024\tREQUIRED\tplugin:aria\n";
        assert!(table_gen::parse("t.tsv", &format!("{head}{ok}\n")).is_ok());
        let err = |body: &str| table_gen::parse("t.tsv", &format!("{head}{ok}{body}")).unwrap_err();
        let e = err("max_connections\tUINT\t10\t100000\n");
        assert!(
            e.starts_with("t.tsv:3:1: expected 7 tab-separated columns"),
            "{e}"
        );
        assert!(
            e.contains("found 4") && e.contains("scripts/mysql-limits"),
            "{e}"
        );
        let e = err("x\tUINT\t10\tmany\t1\tREQUIRED\tmain\n");
        assert_eq!(
            e,
            "t.tsv:3:11: max `many` is neither NULL nor a finite number"
        );
        let e = err("x\tWORD\t1\t2\t1\tMAYBE\tlate\n");
        assert_eq!(e.lines().count(), 3, "{e}");
        assert!(
            e.starts_with("t.tsv:3:3: unknown type `WORD`; expected one of BOOL, "),
            "{e}"
        );
        assert!(
            e.contains("t.tsv:3:14: unknown argument kind `MAYBE`"),
            "{e}"
        );
        assert!(e.contains("t.tsv:3:20: unknown pass `late`"), "{e}");
        let e = err("Max-Conn\tUINT\t1\t2\t-1\tREQUIRED\tmain\n");
        assert!(e.contains("t.tsv:3:1: option name `Max-Conn`"), "{e}");
        assert!(e.contains("t.tsv:3:19: block size `-1`"), "{e}");
        let e = err(ok);
        assert_eq!(e, "t.tsv:3:1: option `aria_block_size` is listed again (first at line 2); each option has one row");
        let many: String = (0..30).map(|i| format!("o{i}\tUINT\n")).collect();
        let e = err(&many);
        assert_eq!(e.lines().count(), 21, "{e}");
        assert!(e.ends_with("... and 10 more problems"), "{e}");
    }

    #[test]
    fn limits_round_and_clamp_like_the_server() {
        let l = |n: &str, v: f64| t().get(n).unwrap().limit(v).value;
        assert_eq!(l("max_allowed_packet", 1000000.0), 999424.0);
        assert_eq!(l("sort_buffer_size", 100.0), 1024.0);
        assert_eq!(l("max_binlog_size", 2147483648.0), 1073741824.0);
        assert_eq!(l("key_buffer_size", 3072.0), 0.0);
        assert_eq!(l("read_buffer_size", 1e10), 2147479552.0);
        assert_eq!(l("max_connections", 5.0), 10.0);
        assert_eq!(l("long_query_time", 1e9), 31536000.0);
        assert!(t().get("max_connections").unwrap().limit(5.0).warns);
        assert!(
            !t().get("max_allowed_packet")
                .unwrap()
                .limit(1000000.0)
                .warns
        );
    }

    #[test]
    fn prefixes_resolve_per_pass() {
        assert_eq!(found("key_buffer").name, "key_buffer_size");
        assert_eq!(found("key_buffer").prefix.as_deref(), Some("key_buffer"));
        assert_eq!(found("thread_cache").name, "thread_cache_size");
        assert_eq!(found("myisam_recover").name, "myisam_recover_options");
        // max_connections is parsed early, alone among few options.
        assert_eq!(found("max_conn").name, "max_connections");
        assert_eq!(found("max_connect_e").name, "max_connect_errors");
        assert_eq!(found("key_buffer_size").prefix, None);
        assert!(matches!(t().resolve("read"), Lookup::Ambiguous { .. }));
        assert!(matches!(
            t().resolve("innodb_buffer_pool"),
            Lookup::Ambiguous { .. }
        ));
        assert_eq!(t().resolve("no_such_thing_at_all"), Lookup::Unknown);
        let r = found("loose_skip_innodb_buffer_pool_dump_at_shut");
        assert_eq!(r.name, "innodb_buffer_pool_dump_at_shutdown");
        assert!(r.loose);
        assert_eq!(r.special, Some(Special::Skip));
        assert_eq!(found("skip_name_resolve").special, None);
        assert_eq!(found("skip_grant_tables").special, None);
        assert_eq!(found("disable_log_bin").special, Some(Special::Disable));
    }

    #[test]
    fn skip_and_enable_invert_on_zero_only() {
        assert!(forced_value(false, Some("0")));
        assert!(!forced_value(false, Some("1")));
        assert!(!forced_value(false, Some("OFF")));
        assert!(!forced_value(false, None));
        assert!(!forced_value(true, Some("0")));
        assert!(forced_value(true, Some("OFF")));
        assert!(forced_value(true, None));
    }

    #[test]
    fn integers_as_my_getopt_reads_them() {
        assert_eq!(getopt_int("16M", true), Ok(16777216.0));
        assert_eq!(getopt_int("1KB", true), Ok(1024.0));
        assert_eq!(getopt_int("", true), Ok(0.0));
        assert_eq!(getopt_int("  12", true), Ok(12.0));
        assert!(getopt_int("77 ;comment", true).is_err());
        assert!(getopt_int("-5", true).is_err());
        assert_eq!(getopt_int("-5", false), Ok(-5.0));
        assert!(getopt_int("1.5G", true).is_err());
        assert!(getopt_int("0x10", true).is_err());
        assert!(getopt_double("1e9").is_ok());
        assert!(getopt_double("1 s").is_err());
    }
}
