//! docs/policy-language.md's namespace, fact and function tables against
//! `src/catalogue/`: the generated tables between `<!-- catalogue:NAME -->`
//! markers must be what the catalogue generates (rewrite them with
//! `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test docs catalogue::`), and the
//! detailed namespace table must list the catalogue's namespaces in order.

use driftaudit::unstable::catalogue;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policy-language.md");

/// The text between `<!-- catalogue:NAME -->` and `<!-- /catalogue:NAME -->`.
fn section<'a>(doc: &'a str, name: &str) -> (usize, usize, &'a str) {
    let open = format!("<!-- catalogue:{name} -->\n");
    let close = format!("<!-- /catalogue:{name} -->");
    let std::ops::Range { start, end } =
        crate::common::doc_examples::marked(doc, &open, &close, "docs/policy-language.md");
    (start, end, &doc[start..end])
}

fn generated() -> [(&'static str, String); 3] {
    [
        ("namespaces", catalogue::namespaces_markdown()),
        ("facts", catalogue::facts_markdown()),
        ("functions", catalogue::functions_markdown()),
    ]
}

#[test]
fn policy_language_tables_are_generated_from_the_catalogue() {
    let mut doc = std::fs::read_to_string(DOC).unwrap();
    let update = std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for (name, want) in generated() {
        let (start, end, have) = section(&doc, name);
        if have != want {
            if update {
                doc.replace_range(start..end, &want);
            } else {
                stale.push(format!(
                    "--- {name} in the docs:\n{have}--- from the catalogue:\n{want}"
                ));
            }
        }
    }
    if update {
        std::fs::write(DOC, &doc).unwrap();
    }
    assert!(
        stale.is_empty(),
        "docs/policy-language.md is out of date with src/catalogue/; run \
         `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test docs catalogue::`\n{}",
        stale.join("\n")
    );
}

#[test]
fn detailed_namespace_table_follows_the_catalogue() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let head = "| namespace | keys | values |\n";
    let at = doc.find(head).expect("the detailed namespace table") + head.len();
    let names: Vec<&str> = doc[at..]
        .lines()
        .skip(1) // |---|
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap().trim().trim_matches('`'))
        .collect();
    let want: Vec<&str> = catalogue::NAMESPACES.iter().map(|n| n.name).collect();
    assert_eq!(names, want, "docs/policy-language.md's namespace table");
}

/// Every name a policy can use is in the docs, as the issue found they were
/// not (`size`, `number`, `abs`, `join`, `len`, `os_name`, `os_like`).
#[test]
fn every_function_and_fact_name_appears_in_the_docs() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    for f in catalogue::FUNCTIONS {
        assert!(
            doc.contains(&format!("`{}(", f.name)),
            "function `{}`",
            f.name
        );
    }
    for f in catalogue::FACTS {
        assert!(
            doc.contains(&format!("| `{}` |", f.name)),
            "fact `{}`",
            f.name
        );
    }
}

/// The check itself: a table edited by hand (a missing row) is caught.
#[test]
fn a_stale_table_is_detected() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let (_, _, have) = section(&doc, "functions");
    let broken = have.replace("| `len(x)` |", "| `length(x)` |");
    assert_ne!(broken, catalogue::functions_markdown());
}
