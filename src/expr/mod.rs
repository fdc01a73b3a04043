//! The expression language of `assert:`, `when:`, `let:` and templates, as
//! syntax. Which names are namespaces (and their shape), facts and functions
//! (and their arity) comes from [`crate::catalogue`]. The layer the policy
//! loader imports. Evaluation ([`eval`]) resolves names in one scope and
//! asks a [`eval::Host`] for host data, which the engine answers over
//! gathered facts (the loader folds constants with the same evaluator over
//! the parameters alone); must not read facts or do I/O.
//!
//! The files, in the order text becomes a tree and back:
//! - `syntax_error.rs`: a [`SyntaxError`] and the "did you mean" of a
//!   misspelt name ([`suggest`]);
//! - `ast.rs`: the tree ([`Expr`], [`UnOp`], [`BinOp`]) and [`walk`];
//! - `parse.rs`: the lexer and parser ([`parse()`]);
//! - `canonical.rs`: the canonical text (`Display` for [`Expr`]), which the
//!   parser reads back to the same tree;
//! - `ops.rs`: what each operator and function does to values ([`ops`]);
//! - `missing.rs`: why an expression has no value ([`eval::Missing`]);
//! - `bounds.rs`: what they do to a number known only to lie in a range
//!   (`within`), so a verdict every value of the range gives is given;
//! - `eval.rs`: the one evaluator ([`eval::eval`]) and the one name
//!   resolution ([`eval::Scope`]: the finding's specials, the `for_each`
//!   item, `let`s, host facts), with constants' scope
//!   ([`eval::Scope::constant`]);
//! - this file: the names the catalogue gives the language, and [`show`].

use crate::catalogue;
use crate::value::{format_size, Value};

mod ast;
mod bounds;
mod canonical;
pub mod eval;
mod missing;
pub mod ops;
mod parse;
mod syntax_error;

pub use ast::{walk, BinOp, Expr, UnOp};
#[cfg(test)]
pub(crate) use parse::PARSED;
pub use parse::{parse, MAX_TOKENS, MAX_TREE_DEPTH};
pub use syntax_error::{levenshtein, suggest, SyntaxError};

/// Namespaces whose keys are written dotted after the namespace name
/// (`sysctl.net.ipv4.tcp_tw_reuse`, `mycnf.innodb_buffer_pool_size`): the
/// flat rows of [`catalogue::NAMESPACES`].
pub const FLAT_NAMESPACES: &[&str] = catalogue::FLAT_NAMESPACES;

/// Namespaces keyed by mount point whose values are records
/// (`mount["/data"].atime`): the record rows of [`catalogue::NAMESPACES`].
pub const RECORD_NAMESPACES: &[&str] = catalogue::RECORD_NAMESPACES;

/// Host facts usable by name ([`catalogue::FACTS`]).
pub const FACTS: &[&str] = catalogue::FACT_NAMES;

/// Functions and their arity (name, min, max), from [`catalogue::FUNCTIONS`].
pub const FUNCTIONS: &[(&str, usize, usize)] = &FUNCTION_ARITIES;

const FUNCTION_ARITIES: [(&str, usize, usize); catalogue::FUNCTIONS.len()] = {
    let mut out = [("", 0, 0); catalogue::FUNCTIONS.len()];
    let mut i = 0;
    while i < out.len() {
        let f = &catalogue::FUNCTIONS[i];
        out[i] = (f.name, f.min_args, f.max_args);
        i += 1;
    }
    out
};

/// Human rendering of a value for explanations: sizes as `2 GiB`.
pub fn show(v: &Value) -> String {
    match v {
        Value::Size(n) => format_size(*n),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_arity_list_follows_the_catalogue() {
        assert_eq!(FUNCTIONS.len(), crate::catalogue::FUNCTIONS.len());
        assert!(FUNCTIONS.contains(&("join", 1, 2)));
        assert!(FUNCTIONS.contains(&("min", 1, usize::MAX)));
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        let e = parse("mem_total >").unwrap_err();
        assert_eq!(e.offset, 11);
        let e = parse("mx(1, 2)").unwrap_err();
        assert!(e.message.contains("did you mean `max`"), "{}", e.message);
        assert!(parse("1 +").is_err());
        assert!(parse("12 apples").is_err());
        assert!(parse(&"(".repeat(500)).is_err());
        assert!(parse("mount.x").is_err());
    }

    /// Every expression a rule holds, in the built-in set and compiled
    /// again from the YAML.
    fn shipped_expressions() -> Vec<(String, Expr)> {
        let mut sets = vec![crate::policy::PolicySet::builtin().unwrap()];
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/policies");
        let mut from_yaml = crate::policy::PolicySet::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let test = path.to_string_lossy().ends_with(".test.yaml");
            if path.extension().is_some_and(|x| x == "yaml") && !test {
                let text = std::fs::read_to_string(&path).unwrap();
                from_yaml
                    .add_str(&path.display().to_string(), &text)
                    .unwrap();
            }
        }
        sets.push(from_yaml);
        let mut out = Vec::new();
        for set in &sets {
            for r in set.rules() {
                out.extend(
                    r.expressions()
                        .into_iter()
                        .map(|e| (r.id.clone(), e.clone())),
                );
            }
        }
        out
    }

    #[test]
    fn display_of_every_shipped_expression_parses_back_to_the_same_tree() {
        let all = shipped_expressions();
        assert!(all.len() > 400, "only {} expressions", all.len());
        for (rule, e) in all {
            let text = e.to_string();
            assert_eq!(parse(&text).as_ref(), Ok(&e), "{rule}: `{text}`");
        }
    }

    #[test]
    fn display_is_canonical_where_precedence_or_spelling_could_mislead() {
        let shown = |s: &str| parse(s).unwrap().to_string();
        assert_eq!(shown("dump == true"), "dump == true"); // not `ON`, a name
        assert_eq!(shown("a + b * c"), "a + (b * c)");
        assert_eq!(shown("(a - b) - c"), "(a - b) - c");
        assert_eq!(shown("a - (b - c)"), "a - (b - c)");
        assert_eq!(shown("not (a and b)"), "not (a and b)");
        assert_eq!(shown("(not a) == b"), "(not a) == b");
        assert_eq!(shown("not a == b"), "not a == b");
        assert_eq!(shown("-(a + b)"), "-(a + b)");
        assert_eq!(shown("1G + 512M"), "1 GiB + 512 MiB");
        assert_eq!(shown("1.3G"), "1.3 GiB");
        // `1.3 GiB` would not read back as 1.33G: every digit instead
        assert_eq!(shown("1.33G"), format!("{} bytes", 1.33 * 1073741824.0));
        assert_eq!(shown("15%"), "0.15");
        assert_eq!(shown("0.123456"), "0.123456");
        assert_eq!(shown("'say \"hi\" \\\\ there'"), r#""say \"hi\" \\ there""#);
        assert_eq!(
            shown("sysctl.net.ipv4.tcp_syncookies"),
            "sysctl.net.ipv4.tcp_syncookies"
        );
        assert_eq!(
            shown("sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]"),
            "sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]"
        );
        assert_eq!(
            shown("mycnf[\"innodb-log-file-size\"]"),
            "mycnf[\"innodb-log-file-size\"]"
        );
        assert_eq!(shown("mount[\"/\"].atime"), "mount[\"/\"].atime");
        assert_eq!(shown("mycnf[\"x\"].y"), "mycnf[\"x\"].y");
        assert_eq!(shown("(1 + 2).f"), "(1 + 2).f");
        assert_eq!(
            shown("params.share * mem_total"),
            "params.share * mem_total"
        );
        assert_eq!(shown("min([1, 2], 3)"), "min([1, 2], 3)");
    }

    #[test]
    fn keywords_are_never_read_as_names() {
        // found by the round-trip proptest: `not` after `==` was a name minus 0
        for src in ["0 == not -0", "a == not b", "1 + and", "or"] {
            assert!(parse(src).is_err(), "`{src}` parsed as {:?}", parse(src));
        }
        assert!(parse("0 == (not -0)").is_ok());
        assert!(
            parse("mycnf.not").is_ok(),
            "a key after `.` may be any word"
        );
    }

    /// Source text of a random well-formed expression.
    fn source() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            (0u32..100_000).prop_map(|n| n.to_string()),
            (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
            (
                1u32..2000,
                prop::sample::select(vec!["K", "M", "G", "GiB", "T", "%", " MiB"])
            )
                .prop_map(|(n, u)| format!("{n}{u}")),
            "[a-z \"'\\\\/.]{0,8}"
                .prop_map(|s| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))),
            prop::sample::select(vec![
                "mem_total",
                "true",
                "false",
                "params.share",
                "zimbra_installed",
                "sysctl.net.ipv4.tcp_syncookies",
                "mycnf.innodb_buffer_pool_size",
                "sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"]",
                "mount[\"/data\"].atime",
                "mycnf[\"a-b\"]",
                "fstab[params.dir]",
                "x.y.z",
            ])
            .prop_map(str::to_string),
        ];
        leaf.prop_recursive(5, 40, 3, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    prop::sample::select(vec![
                        "+", "-", "*", "/", "==", "!=", "<", "<=", ">", ">=", "and", "or", "&&",
                    ]),
                    inner.clone()
                )
                    .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
                inner.clone().prop_map(|a| format!("({a})")),
                inner.clone().prop_map(|a| format!("not {a}")),
                inner.clone().prop_map(|a| format!("-{a}")),
                inner.clone().prop_map(|a| format!("({a}).f")),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(", "))),
                (inner.clone(), inner).prop_map(|(a, b)| format!("max({a}, {b})")),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn display_of_any_parsed_expression_parses_back_to_the_same_tree(src in source()) {
            // operator chains can be ill-formed (`a < b < c`): only trees
            // the parser accepts are compared
            if let Ok(e) = parse(&src) {
                let text = e.to_string();
                proptest::prop_assert_eq!(parse(&text), Ok(e.clone()), "{} -> {}", src, text);
                proptest::prop_assert_eq!(parse(&text).unwrap().to_string(), text);
            }
        }
    }
}
