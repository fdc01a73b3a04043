//! docs/policy-language.md's policy-test example runs as written: the
//! policy and test file between `<!-- policytest-example PATH -->` markers
//! are written into a temporary directory beside a link to `testdata/`,
//! `driftaudit test site/` runs there, and its output must be the text
//! between the `<!-- policytest-output NAME -->` markers (the `failing`
//! one with the second case's `pass` turned into `fail`).
//! `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test policy policytest_docs::`
//! rewrites the outputs; otherwise a difference fails.

use crate::common;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policy-language.md");

/// The fenced block after `<!-- policytest-example PATH -->`, for each PATH.
fn examples(doc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let open = "<!-- policytest-example ";
    let mut rest = doc;
    while let Some(at) = rest.find(open) {
        let after = &rest[at + open.len()..];
        let (path, body) = after.split_once(" -->\n").expect("marker closes");
        let end = body
            .find("<!-- end policytest-example -->")
            .expect("end marker");
        let block = &body[..end];
        let code = block
            .strip_prefix("```yaml\n")
            .and_then(|b| b.trim_end().strip_suffix("```"))
            .expect("a ```yaml block between the markers");
        out.push((path.to_string(), code.to_string()));
        rest = &body[end..];
    }
    out
}

fn run(files: &[(String, String)]) -> (i32, String) {
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        common::cli::repo_root().join("testdata"),
        ws.path().join("testdata"),
    )
    .unwrap();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    common::tree::write_files(ws.path(), &files);
    let out = common::cli::cmd()
        .current_dir(ws.path())
        .args(["test", "site/"])
        .output()
        .unwrap();
    common::cli::silent(&out.stderr);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn splice(doc: &mut String, name: &str, text: &str) {
    let open = format!("<!-- policytest-output {name} -->\n");
    let close = "<!-- end policytest-output -->";
    let at = crate::common::doc_examples::marked(doc, &open, close, "docs/policy-language.md");
    doc.replace_range(at, &format!("```text\n{text}```\n"));
}

#[test]
fn the_policy_test_example_in_the_docs_runs_as_shown() {
    let _doc = common::doc_examples::lock_policy_doc();
    let doc = std::fs::read_to_string(DOC).unwrap();
    let files = examples(&doc);
    assert_eq!(
        files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["site/web.yaml", "site/web.test.yaml"]
    );
    let (code, passing) = run(&files);
    assert_eq!(code, 0, "the documented tests pass: {passing}");

    let mut broken = files.clone();
    let marker = "      - { rule: web.somaxconn, status: pass }\n  - name: a site";
    assert!(
        broken[1].1.contains(marker),
        "the second case's expectation"
    );
    broken[1].1 = broken[1].1.replacen(
        marker,
        "      - { rule: web.somaxconn, status: fail }\n  - name: a site",
        1,
    );
    let (code, failing) = run(&broken);
    assert_eq!(code, 1, "{failing}");

    let mut want = doc.clone();
    splice(&mut want, "passing", &passing);
    splice(&mut want, "failing", &failing);
    if want != doc {
        if std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some() {
            std::fs::write(DOC, &want).unwrap();
            return;
        }
        panic!("docs/policy-language.md's policy-test output is stale: run `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test policy policytest_docs::`");
    }
}
