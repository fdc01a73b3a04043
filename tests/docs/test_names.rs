//! The tests docs/hostile-input.md cites exist: each table row names its
//! test by module path (`hostile::merge::NAME`), and a renamed or deleted
//! test must take its row with it, or the row would vouch for nothing.

use crate::common::cli::repo_root;
use crate::common::tree::rust_files;

/// The function names of every `#[test]`-able `fn` in `src/` and `tests/`.
fn functions() -> std::collections::BTreeSet<String> {
    let root = repo_root();
    let mut names = std::collections::BTreeSet::new();
    for dir in ["src", "tests"] {
        for f in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&f).unwrap();
            for line in text.lines() {
                let l = line.trim_start();
                let l = l.strip_prefix("pub ").unwrap_or(l);
                if let Some(rest) = l.strip_prefix("fn ") {
                    names.insert(crate::common::tree::leading_name(rest).to_string());
                }
            }
        }
    }
    names
}

#[test]
fn every_test_the_hostile_input_tables_cite_exists() {
    let doc = std::fs::read_to_string(repo_root().join("docs/hostile-input.md")).unwrap();
    let fns = functions();
    let mut cited = 0;
    let mut missing = Vec::new();
    for row in doc.lines().filter(|l| l.starts_with("| ")) {
        // the test column: every `a::b` in it names a test by its last
        // part, except inside parentheses (what a test was run with)
        let Some(cell) = row.split(" | ").nth(1) else {
            continue;
        };
        let mut depth = 0i32;
        for (i, part) in cell.split('`').enumerate() {
            if i % 2 == 0 {
                depth += part.matches('(').count() as i32 - part.matches(')').count() as i32;
                continue;
            }
            if depth == 0 && part.contains("::") && !part.contains(' ') {
                let name = part.rsplit("::").next().unwrap();
                cited += 1;
                if !fns.contains(name) {
                    missing.push(part.to_string());
                }
            }
        }
    }
    assert!(
        cited > 60,
        "only {cited} tests cited: is the table's layout still read?"
    );
    assert!(
        missing.is_empty(),
        "docs/hostile-input.md cites tests that do not exist: {missing:#?}"
    );
}
