//! Every built-in rule's benchmark items (`controls:`) and profile tags
//! against the benchmarks' own mapping: ComplianceAsCode's control files for
//! CIS Debian 12, CIS RHEL 9, the RHEL 9 DISA STIG and ANSSI BP-028, as
//! extracted into testdata/benchmarks/complianceascode-controls.tsv by
//! scripts/benchmark-controls. An item id that the benchmark does not have,
//! or a tag its level does not give, fails. docs/coverage.md's rule and
//! item tables are generated from the policies (rewrite them with
//! `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test coverage controls::`).

use std::collections::{BTreeMap, BTreeSet};

use driftaudit::unstable::policy::{PolicySet, Rule};

const TABLE: &str = include_str!("../../testdata/benchmarks/complianceascode-controls.tsv");
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/coverage.md");

/// Frameworks whose items are checked against the table, with the name
/// docs/coverage.md gives them.
const TABLED: &[(&str, &str)] = &[
    ("cis-debian12", "CIS Debian Linux 12 Benchmark"),
    ("cis-rhel9", "CIS Red Hat Enterprise Linux 9 Benchmark"),
    ("stig-rhel9", "RHEL 9 DISA STIG"),
    ("anssi-bp28", "ANSSI BP-028 v2"),
];

/// Frameworks no machine-readable mapping exists for here: their items are
/// written from the published benchmark, and docs/coverage.md says so.
const UNTABLED: &[(&str, &str)] = &[
    ("cis-mysql8", "CIS Oracle MySQL 8.0 Benchmark"),
    ("cis-mariadb", "CIS MariaDB 10.6 Benchmark"),
];

/// One row of the table: levels and title of a framework's item.
struct Item {
    levels: Vec<String>,
    title: String,
}

fn table() -> BTreeMap<(String, String), Item> {
    let mut out = BTreeMap::new();
    for l in TABLE.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(f.len(), 5, "table row {l:?}");
        out.insert(
            (f[0].to_string(), f[1].to_string()),
            Item {
                levels: f[2].split(',').map(str::to_string).collect(),
                title: f[3].to_string(),
            },
        );
    }
    out
}

fn rules() -> Vec<Rule> {
    PolicySet::builtin()
        .expect("built-in policies load")
        .rules()
        .to_vec()
}

/// The profile tags an item's framework and levels give.
fn tags_of(framework: &str, item: &Item) -> Vec<String> {
    let has = |l: &str| item.levels.iter().any(|x| x == l);
    match framework {
        f if f.starts_with("cis-") => {
            if has("l1_server") {
                vec!["cis-l1-server".into()]
            } else if has("l2_server") {
                vec!["cis-l2-server".into()]
            } else {
                vec![]
            }
        }
        f if f.starts_with("stig-") => vec!["stig".into()],
        "anssi-bp28" => item.levels.iter().map(|l| format!("anssi-{l}")).collect(),
        _ => vec![],
    }
}

/// Tags that say which benchmark profile a rule is in (the others, such as
/// `performance`, are not benchmark levels).
fn is_profile_tag(t: &str) -> bool {
    t.starts_with("cis-") || t == "stig" || t.starts_with("anssi-")
}

#[test]
fn every_benchmark_item_a_rule_names_is_in_the_benchmark_and_its_tags_follow_the_levels() {
    let table = table();
    let mut problems = Vec::new();
    let mut checked = 0;
    for r in rules() {
        let mut want: BTreeSet<String> = BTreeSet::new();
        let mut tabled = false;
        for c in &r.controls {
            let (fw, id) = c.split_once(':').expect("the loader checks the form");
            if UNTABLED.iter().any(|(f, _)| *f == fw) {
                continue;
            }
            if !TABLED.iter().any(|(f, _)| *f == fw) {
                problems.push(format!(
                    "{}: `{c}`: framework `{fw}` is neither in the ComplianceAsCode table nor listed as untabled",
                    r.id
                ));
                continue;
            }
            tabled = true;
            match table.get(&(fw.to_string(), id.to_string())) {
                Some(item) => {
                    checked += 1;
                    want.extend(tags_of(fw, item));
                }
                None => problems.push(format!(
                    "{}: `{c}` is not an item of {fw} (testdata/benchmarks/complianceascode-controls.tsv)",
                    r.id
                )),
            }
        }
        if !tabled {
            continue;
        }
        let have: BTreeSet<String> = r
            .tags
            .iter()
            .filter(|t| is_profile_tag(t))
            .cloned()
            .collect();
        // cis-l1 and cis-l2 are one ladder: an item at Level 1 on one
        // benchmark and Level 2 on another is tagged Level 1
        if want.contains("cis-l1-server") {
            want.remove("cis-l2-server");
        }
        if have != want {
            problems.push(format!(
                "{}: tags {:?}, but its benchmark items give {:?}",
                r.id, have, want
            ));
        }
    }
    assert!(checked >= 50, "only {checked} items checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_rule_with_a_profile_tag_names_the_benchmark_items_behind_it() {
    let problems: Vec<String> = rules()
        .iter()
        .filter(|r| r.tags.iter().any(|t| is_profile_tag(t)) && r.controls.is_empty())
        .map(|r| {
            format!(
                "{} carries {:?} but names no benchmark item (`controls:`)",
                r.id, r.tags
            )
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `<!-- coverage:rules -->`: one row per built-in rule with tags or items.
fn rules_markdown() -> String {
    let mut o = String::from(
        "| rule | policy | severity | tags | benchmark items |\n|---|---|---|---|---|\n",
    );
    for r in rules() {
        if r.tags.is_empty() && r.controls.is_empty() {
            continue;
        }
        let items: Vec<String> = r.controls.iter().map(|c| format!("`{c}`")).collect();
        o.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id,
            r.policy,
            r.severity.as_str(),
            if r.tags.is_empty() {
                "-".to_string()
            } else {
                r.tags.join(", ")
            },
            if items.is_empty() {
                "-".to_string()
            } else {
                items.join(", ")
            },
        ));
    }
    o
}

/// `<!-- coverage:items -->`: every item a rule names, with the
/// benchmark's title and levels (from the table; untabled ones as such).
fn items_markdown() -> String {
    let table = table();
    let mut cited: BTreeMap<(usize, String), Vec<String>> = BTreeMap::new();
    let order = |fw: &str| {
        TABLED
            .iter()
            .chain(UNTABLED)
            .position(|(f, _)| *f == fw)
            .unwrap_or(usize::MAX)
    };
    for r in rules() {
        for c in &r.controls {
            let fw = c.split_once(':').map(|(f, _)| f).unwrap_or("");
            cited
                .entry((order(fw), c.clone()))
                .or_default()
                .push(format!("`{}`", r.id));
        }
    }
    let mut o =
        String::from("| item | benchmark | levels | title | rules |\n|---|---|---|---|---|\n");
    for ((_, c), ids) in cited {
        let (fw, id) = c.split_once(':').unwrap_or(("", ""));
        let name = TABLED
            .iter()
            .chain(UNTABLED)
            .find(|(f, _)| *f == fw)
            .map(|(_, n)| *n)
            .unwrap_or(fw);
        let (levels, title) = match table.get(&(fw.to_string(), id.to_string())) {
            Some(i) => (i.levels.join(", "), i.title.replace('|', "\\|")),
            None => (
                "-".into(),
                "(from the published benchmark; no machine-readable mapping)".into(),
            ),
        };
        o.push_str(&format!(
            "| `{c}` | {name} | {levels} | {title} | {} |\n",
            ids.join(", ")
        ));
    }
    o
}

#[test]
fn coverage_tables_are_generated_from_the_policies() {
    let mut doc = std::fs::read_to_string(DOC).expect("docs/coverage.md");
    let update = std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (name, want) in [("rules", rules_markdown()), ("items", items_markdown())] {
        let open = format!("<!-- coverage:{name} -->\n");
        let close = format!("<!-- /coverage:{name} -->");
        let std::ops::Range { start, end } =
            crate::common::doc_examples::marked(&doc, &open, &close, "docs/coverage.md");
        if doc[start..end] != want {
            if update {
                doc.replace_range(start..end, &want);
            } else {
                stale.push(name);
            }
        }
    }
    if update {
        std::fs::write(DOC, &doc).unwrap();
    }
    assert!(
        stale.is_empty(),
        "docs/coverage.md's {stale:?} tables are stale: run `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test coverage controls::`"
    );
}
