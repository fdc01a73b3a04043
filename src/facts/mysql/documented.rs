//! The limits each server line documents for its numeric and enumerated
//! variables (minimum, maximum, block size, compiled default, dynamic or not),
//! as data: one table per line, written from the vendor's own tables (the
//! MySQL 5.7/8.0/8.4 Reference Manual, MariaDB's knowledge base), every row
//! with the URL of the table it came from (`documented/*.tsv`). Used where no
//! table was generated from an installed binary ([`super::limits`]), to tell a
//! difference a documented limit can produce from drift, and by `fix` to
//! choose `SET GLOBAL` or a restart ([`is_dynamic`]). Not a list of every
//! option (names are not resolved with it). Pure: no I/O, no policy logic.

use std::sync::OnceLock;

use super::limits::{Arg, Kind, Limited, OptionSpec};
use super::server::ServerVersion;

/// One documented variable.
#[derive(Debug, Clone, PartialEq)]
pub struct DocSpec {
    /// Name with underscores.
    pub name: String,
    /// Value type.
    pub kind: Kind,
    /// Minimum (integers).
    pub min: Option<f64>,
    /// Maximum (integers).
    pub max: Option<f64>,
    /// Block size: values are rounded down to a multiple of it.
    pub block: Option<u64>,
    /// The compiled default: a number, a word, or `None` when the table gives
    /// none or the server sizes it at start-up (`AUTO`).
    pub default: Option<String>,
    /// Whether `SET GLOBAL` can change it.
    pub dynamic: bool,
    /// The vendor's table this row was written from.
    pub reference: String,
}

impl DocSpec {
    /// my_getopt's clamping and rounding with the documented limits.
    pub fn limit(&self, n: f64) -> Limited {
        OptionSpec {
            name: "",
            kind: self.kind,
            min: self.min,
            max: self.max,
            block: self.block,
            arg: Arg::Required,
            pass: "main",
        }
        .limit(n)
    }

    /// The compiled default as a number, when it is one.
    pub fn default_number(&self) -> Option<f64> {
        self.default.as_deref().and_then(|d| d.parse().ok())
    }
}

/// One server line's documented variables.
#[derive(Debug)]
pub struct DocTable {
    /// `MySQL 8.0`.
    pub label: &'static str,
    /// The table file, as named in the sources.
    pub file: &'static str,
    /// The document the rows come from (the file's first comment).
    pub source: String,
    /// Rows sorted by name, each name once.
    pub rows: Vec<DocSpec>,
}

impl DocTable {
    /// A variable by full name (underscores).
    pub fn get(&self, name: &str) -> Option<&DocSpec> {
        self.rows
            .binary_search_by(|r| r.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.rows[i])
    }
}

/// The columns, in order.
pub const COLUMNS: [&str; 8] = [
    "name",
    "type",
    "min",
    "max",
    "block",
    "default",
    "dynamic",
    "reference",
];

const KINDS: [(&str, Kind); 7] = [
    ("BOOL", Kind::Bool),
    ("INT", Kind::Int),
    ("UINT", Kind::Uint),
    ("DOUBLE", Kind::Double),
    ("ENUM", Kind::Enum),
    ("SET", Kind::Set),
    ("STR", Kind::Str),
];

/// Read a table strictly: `# ` comments (the first names the document),
/// blank lines, and rows of eight tab-separated columns: a lowercase name,
/// a known type, `NULL` or a whole number for min, max and block (a DOUBLE's
/// min and max may have decimals), a default,
/// `yes`/`no`, and an `https://` reference. Rows sorted by name, each once.
/// Every problem is reported, as `FILE:LINE:COLUMN: what; the fix`.
pub fn parse(file: &str, label: &'static str, text: &str) -> Result<DocTable, String> {
    let mut source = None;
    let mut rows: Vec<DocSpec> = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if source.is_none() {
                source = Some(c.trim().to_string());
            }
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() != COLUMNS.len() {
            problems.push(format!(
                "{file}:{n}:1: {} tab-separated columns, expected {} ({}); separate columns with one tab",
                cols.len(),
                COLUMNS.len(),
                COLUMNS.join(" ")
            ));
            continue;
        }
        let col = |k: usize| 1 + cols[..k].iter().map(|c| c.len() + 1).sum::<usize>();
        let name = cols[0];
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            problems.push(format!(
                "{file}:{n}:1: `{name}` is not a variable name; write it lowercase with underscores"
            ));
            continue;
        }
        let Some(kind) = KINDS.iter().find(|(k, _)| *k == cols[1]).map(|(_, k)| *k) else {
            problems.push(format!(
                "{file}:{n}:{}: unknown type `{}`; expected one of {}",
                col(1),
                cols[1],
                KINDS.map(|(k, _)| k).join(" ")
            ));
            continue;
        };
        let mut num = |k: usize| -> Option<Option<f64>> {
            if cols[k] == "NULL" {
                return Some(None);
            }
            let parsed = match cols[k].parse::<i128>() {
                Ok(v) => Some(v as f64),
                // a DOUBLE variable's limits may have decimals (99.999)
                Err(_) if kind == Kind::Double && k != 4 => {
                    cols[k].parse::<f64>().ok().filter(|v| v.is_finite())
                }
                Err(_) => None,
            };
            match parsed {
                Some(v) => Some(Some(v)),
                None => {
                    problems.push(format!(
                        "{file}:{n}:{}: {} `{}` is not a whole number (decimals only for a DOUBLE's min and max); write the number or NULL",
                        col(k),
                        COLUMNS[k],
                        cols[k]
                    ));
                    None
                }
            }
        };
        let (Some(min), Some(max), Some(block)) = (num(2), num(3), num(4)) else {
            continue;
        };
        let dynamic = match cols[6] {
            "yes" => true,
            "no" => false,
            other => {
                problems.push(format!(
                    "{file}:{n}:{}: dynamic `{other}`; expected yes or no",
                    col(6)
                ));
                continue;
            }
        };
        let reference = cols[7].trim();
        if !reference.starts_with("https://") || reference.contains(' ') {
            problems.push(format!(
                "{file}:{n}:{}: `{name}` has no reference (`{reference}`); every row names the vendor table it was written from, as an https:// URL",
                col(7)
            ));
            continue;
        }
        if let Some(prev) = rows.last() {
            if prev.name.as_str() >= name {
                problems.push(format!(
                    "{file}:{n}:1: `{name}` after `{}`; rows are sorted by name, each name once",
                    prev.name
                ));
                continue;
            }
        }
        let default = match cols[5] {
            "NULL" | "AUTO" | "" => None,
            d => Some(d.to_string()),
        };
        rows.push(DocSpec {
            name: name.to_string(),
            kind,
            min,
            max,
            block: block.map(|b| b as u64),
            default,
            dynamic,
            reference: reference.to_string(),
        });
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let Some(source) = source else {
        return Err(format!(
            "{file}:1:1: no `# ` first line naming the document the rows come from"
        ));
    };
    Ok(DocTable {
        label,
        file: "",
        source,
        rows,
    })
}

/// The compiled-in tables: (label, major, minor, MariaDB, file, text).
const FILES: &[(&str, u64, u64, bool, &str, &str)] = &[
    (
        "MySQL 5.7",
        5,
        7,
        false,
        "src/facts/mysql/documented/mysql-5.7.tsv",
        include_str!("documented/mysql-5.7.tsv"),
    ),
    (
        "MySQL 8.0",
        8,
        0,
        false,
        "src/facts/mysql/documented/mysql-8.0.tsv",
        include_str!("documented/mysql-8.0.tsv"),
    ),
    (
        "MySQL 8.4",
        8,
        4,
        false,
        "src/facts/mysql/documented/mysql-8.4.tsv",
        include_str!("documented/mysql-8.4.tsv"),
    ),
    (
        "MariaDB 10.5",
        10,
        5,
        true,
        "src/facts/mysql/documented/mariadb-10.5.tsv",
        include_str!("documented/mariadb-10.5.tsv"),
    ),
    (
        "MariaDB 10.11",
        10,
        11,
        true,
        "src/facts/mysql/documented/mariadb-10.11.tsv",
        include_str!("documented/mariadb-10.11.tsv"),
    ),
];

/// Each compiled-in table, parsed on first use: a check needs its own
/// server's table (and another only for a name its own lacks), and reading
/// all four cost a live check about 1 M instructions.
static TABLES: [OnceLock<Option<DocTable>>; FILES.len()] = [const { OnceLock::new() }; FILES.len()];

/// The table of `FILES[i]`, parsed once.
fn table(i: usize) -> Option<&'static DocTable> {
    TABLES[i]
        .get_or_init(|| {
            let (label, _, _, _, file, text) = FILES[i];
            // A malformed table is a build defect the tests catch
            // (`every_documented_table_parses_and_every_row_has_a_reference`);
            // at run time it is left out rather than half read.
            let mut t = parse(file, label, text).ok()?;
            t.file = file;
            Some(t)
        })
        .as_ref()
}

/// The documented table for a server's line (major.minor, MySQL or
/// MariaDB), when one is compiled in; MySQL 8.4 and later by the 8.4 one.
pub fn for_version(v: &ServerVersion) -> Option<&'static DocTable> {
    // MySQL 8.4 and later releases go by the 8.4 table (the newest MySQL line
    // documented here).
    let (major, minor) = if !v.mariadb && (v.parts[0], v.parts[1]) > (8, 4) {
        (8, 4)
    } else {
        (v.parts[0], v.parts[1])
    };
    let i = FILES.iter().position(|(_, ma, mi, mariadb, _, _)| {
        *ma == major && *mi == minor && *mariadb == v.mariadb
    })?;
    table(i)
}

/// Whether `SET GLOBAL` can change `name` on `server`: what the documented
/// table of its line says, else the nearest table that has the name (same
/// vendor first, then the nearest major.minor, as a MariaDB 10.3 goes by
/// 10.5 and a MySQL 5.6 by 5.7). With no version, only a name every table
/// that has it calls dynamic is. A name in no table needs a restart.
pub fn is_dynamic(server: Option<&ServerVersion>, name: &str) -> bool {
    let Some(v) = server else {
        let mut rows = (0..FILES.len())
            .filter_map(|i| table(i)?.get(name))
            .peekable();
        return rows.peek().is_some() && rows.all(|r| r.dynamic);
    };
    let line = |major: u64, minor: u64| major * 1000 + minor;
    let at = line(v.parts[0], v.parts[1]);
    let mut order: Vec<usize> = (0..FILES.len()).collect();
    order.sort_by_key(|&i| {
        let (_, major, minor, mariadb, _, _) = FILES[i];
        (mariadb != v.mariadb, line(major, minor).abs_diff(at))
    });
    order
        .into_iter()
        .find_map(|i| table(i)?.get(name))
        .is_some_and(|r| r.dynamic)
}

/// The documented lines, for a message: `MySQL 5.7, MySQL 8.0, ...`.
pub(super) fn lines() -> String {
    FILES.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
}

/// Every compiled-in table that parses, in file order.
pub(super) fn tables() -> impl Iterator<Item = &'static DocTable> {
    (0..FILES.len()).filter_map(table)
}

/// The type any documented table gives `name` (the first that has it):
/// for reading a value whose own server's table does not say.
pub fn kind_anywhere(name: &str) -> Option<Kind> {
    (0..FILES.len()).find_map(|i| table(i)?.get(name).map(|r| r.kind))
}

/// Every compiled-in table, parsed or with its problems.
pub fn all() -> Vec<(&'static str, Result<DocTable, String>)> {
    FILES
        .iter()
        .map(|(label, _, _, _, file, text)| (*label, parse(file, label, text)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "# MySQL 8.0 Reference Manual, https://dev.mysql.com/doc/refman/8.0/en/\n# columns: name type min max block default dynamic reference\ninnodb_buffer_pool_size\tUINT\t5242880\t18446744073709551615\t1048576\t134217728\tyes\thttps://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html#sysvar_innodb_buffer_pool_size\nmax_connections\tUINT\t1\t100000\tNULL\t151\tyes\thttps://dev.mysql.com/doc/refman/8.0/en/server-system-variables.html#sysvar_max_connections\n";

    #[test]
    fn a_table_reads_with_limits_defaults_and_references() {
        let t = parse("t.tsv", "MySQL 8.0", GOOD).unwrap();
        assert_eq!(
            t.source,
            "MySQL 8.0 Reference Manual, https://dev.mysql.com/doc/refman/8.0/en/"
        );
        let mc = t.get("max_connections").unwrap();
        assert_eq!(mc.default_number(), Some(151.0));
        assert_eq!(mc.limit(200000.0).value, 100000.0);
        assert!(t.get("max_connection").is_none());
    }

    /// A row without a reference, out of order, or with a bad number is
    /// refused with its line and column: the table cannot hold an entry
    /// nobody can check.
    #[test]
    fn a_row_without_a_reference_or_out_of_order_is_refused_with_its_place() {
        let bad = GOOD.replace(
            "\thttps://dev.mysql.com/doc/refman/8.0/en/server-system-variables.html#sysvar_max_connections",
            "\t-",
        );
        let e = parse("t.tsv", "MySQL 8.0", &bad).unwrap_err();
        assert!(
            e.starts_with("t.tsv:4:") && e.contains("has no reference"),
            "{e}"
        );
        let swapped = {
            let mut l: Vec<&str> = GOOD.lines().collect();
            l.swap(2, 3);
            l.join("\n")
        };
        let e = parse("t.tsv", "MySQL 8.0", &swapped).unwrap_err();
        assert!(e.contains("t.tsv:4:1:") && e.contains("sorted"), "{e}");
        let e = parse("t.tsv", "MySQL 8.0", &GOOD.replace("\t151\t", "\t151\t\t")).unwrap_err();
        assert!(e.contains("t.tsv:4:1: 9 tab-separated columns"), "{e}");
        let e = parse("t.tsv", "MySQL 8.0", &GOOD.replace("\t100000\t", "\t1e5\t")).unwrap_err();
        assert!(
            e.contains("t.tsv:4:") && e.contains("`1e5` is not a whole number"),
            "{e}"
        );
    }

    /// The installed MariaDB 10.11 is the ground truth where it exists: the
    /// documented 10.11 table agrees with the table generated from its
    /// binary on every minimum, maximum and block size both have.
    #[test]
    fn the_documented_mariadb_10_11_table_agrees_with_the_generated_one() {
        let v = ServerVersion {
            parts: [10, 11, 19],
            mariadb: true,
        };
        let doc = for_version(&v).expect("a documented MariaDB 10.11 table");
        let gen = super::super::limits::table_for(&v).expect("the generated table");
        let mut compared = 0;
        for r in &doc.rows {
            let Some(g) = gen.get(&r.name) else { continue };
            if !matches!(r.kind, Kind::Int | Kind::Uint) {
                continue;
            }
            compared += 1;
            assert_eq!((r.min, r.max), (g.min, g.max), "{}", r.name);
            assert_eq!(
                r.block.unwrap_or(1).max(1),
                g.block.unwrap_or(1).max(1),
                "{}",
                r.name
            );
        }
        assert!(compared >= 30, "only {compared} rows compared");
    }

    /// The compiled-in tables: each parses, and every row names its source.
    #[test]
    fn every_documented_table_parses_and_every_row_has_a_reference() {
        let labels: Vec<&str> = all().iter().map(|(l, _)| *l).collect();
        for want in [
            "MySQL 5.7",
            "MySQL 8.0",
            "MySQL 8.4",
            "MariaDB 10.5",
            "MariaDB 10.11",
        ] {
            assert!(labels.contains(&want), "{want}: {labels:?}");
        }
        for (label, t) in all() {
            let t = t.unwrap_or_else(|e| panic!("{label}:\n{e}"));
            assert!(!t.rows.is_empty(), "{label}");
            for r in &t.rows {
                assert!(r.reference.starts_with("https://"), "{label} {}", r.name);
            }
        }
    }

    /// The MySQL 8.4 table holds every 8.0 variable 8.4 still has, cites the
    /// 8.4 manual, and gives the 8.4.0 defaults the manual's Table 1.1
    /// ("InnoDB system variable default values in MySQL 8.4 differing from
    /// MySQL 8.0", mysql-nutshell.html) lists; MySQL 8.4 and later releases
    /// read by it (issue 48: a PERSIST_ONLY value on 8.4 was `unknown`).
    #[test]
    fn the_mysql_8_4_table_follows_the_8_4_manual() {
        let v = |s: &str| ServerVersion::parse(s).unwrap();
        let t = for_version(&v("8.4.3")).expect("a table for 8.4");
        assert_eq!(t.label, "MySQL 8.4");
        assert_eq!(for_version(&v("9.1.0")).map(|t| t.label), Some("MySQL 8.4"));
        assert_eq!(
            for_version(&v("8.0.36")).map(|t| t.label),
            Some("MySQL 8.0")
        );
        let old = for_version(&v("8.0.36")).unwrap();
        // removed in 8.2.0 (optvar-changes-8-2)
        let removed = ["expire_logs_days"];
        for r in &old.rows {
            if removed.contains(&r.name.as_str()) {
                assert!(t.get(&r.name).is_none(), "{} was removed", r.name);
                continue;
            }
            let n = t
                .get(&r.name)
                .unwrap_or_else(|| panic!("{} is in 8.0 and 8.4", r.name));
            assert_eq!((n.kind, n.dynamic), (r.kind, r.dynamic), "{}", r.name);
        }
        for r in &t.rows {
            assert!(
                r.reference
                    .starts_with("https://dev.mysql.com/doc/refman/8.4/en/"),
                "{}: {}",
                r.name,
                r.reference
            );
        }
        // Table 1.1 of the 8.4 manual: new default, (8.0 default)
        let table_1_1 = [
            ("innodb_adaptive_hash_index", "OFF", Some("ON")),
            ("innodb_change_buffering", "none", None),
            ("innodb_flush_method", "O_DIRECT", Some("fsync")),
            ("innodb_io_capacity", "10000", Some("200")),
            ("innodb_io_capacity_max", "AUTO", Some("AUTO")),
            ("innodb_log_buffer_size", "67108864", Some("16777216")),
            ("innodb_page_cleaners", "AUTO", Some("4")),
            ("innodb_purge_threads", "AUTO", Some("4")),
            ("innodb_read_io_threads", "AUTO", Some("4")),
            ("innodb_use_fdatasync", "ON", None),
        ];
        for (name, new, was) in table_1_1 {
            assert_eq!(
                t.get(name)
                    .and_then(|r| r.default.as_deref())
                    .unwrap_or("AUTO"),
                new,
                "{name}"
            );
            if let Some(was) = was {
                assert_eq!(
                    old.get(name)
                        .and_then(|r| r.default.as_deref())
                        .unwrap_or("AUTO"),
                    was,
                    "{name} in 8.0"
                );
            }
        }
        // read-only in 8.4 as in 8.0: what PERSIST_ONLY writes for a restart
        for name in [
            "innodb_buffer_pool_instances",
            "innodb_read_io_threads",
            "thread_stack",
        ] {
            assert!(!is_dynamic(Some(&v("8.4.3")), name), "{name}");
        }
    }
}
