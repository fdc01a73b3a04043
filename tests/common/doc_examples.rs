//! The runner behind tests/policy/for_each_docs.rs and
//! tests/policy/overlay_docs.rs:
//! docs/policy-language.md's example blocks written into a directory per
//! case, their `$ COMMAND` blocks run there and compared with what the docs
//! show. Decides nothing else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};

const POLICY_DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policy-language.md");

/// docs/policy-language.md is read, compared and (under
/// `DRIFTAUDIT_UPDATE_DOCS=1`) rewritten by several tests of one binary
/// (tests/policy/: for_each_docs, overlay_docs, policytest_docs), which run
/// on parallel threads: each holds this while it reads and writes the file,
/// so no rewrite is lost to another's.
static POLICY_DOC_LOCK: Mutex<()> = Mutex::new(());

/// Holds docs/policy-language.md for the calling test (see [`POLICY_DOC_LOCK`]).
pub fn lock_policy_doc() -> MutexGuard<'static, ()> {
    POLICY_DOC_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The body of the fenced block between `open` (at `at`) and `close`.
fn fenced(doc: &str, at: usize, close: &str) -> (usize, usize) {
    let end = at + doc[at..].find(close).expect("closing marker");
    let body = &doc[at..end];
    let start = at + body.find('\n').expect("fence") + 1;
    let stop = at + body.trim_end().rfind("\n```").expect("closing fence") + 1;
    (start, stop)
}

/// Runs the `<!-- MARKER-example CASE PATH -->` / `<!-- MARKER-output CASE -->`
/// blocks of docs/policy-language.md (see the calling test's header): at
/// least `min` of each, every output as printed, or rewritten under
/// `DRIFTAUDIT_UPDATE_DOCS=1`. `section` and `test` name the docs section
/// and the calling test in messages.
pub fn run_policy_doc_examples(marker: &str, min: usize, section: &str, test: &str) {
    let _doc = lock_policy_doc();
    let end_example = format!("<!-- end {marker}-example -->");
    let end_output = format!("<!-- end {marker}-output -->");
    let doc = std::fs::read_to_string(POLICY_DOC).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut cases: BTreeMap<String, PathBuf> = BTreeMap::new();
    let case_dir = |cases: &mut BTreeMap<String, PathBuf>, name: &str| -> PathBuf {
        cases
            .entry(name.to_string())
            .or_insert_with(|| {
                let d = tmp.path().join(name);
                std::fs::create_dir_all(&d).unwrap();
                std::os::unix::fs::symlink(
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
                    d.join("testdata"),
                )
                .unwrap();
                d
            })
            .clone()
    };
    let open = format!("<!-- {marker}-example ");
    let mut examples = 0;
    for (at, _) in doc.match_indices(open.as_str()) {
        let line_end = at + doc[at..].find('\n').unwrap();
        let head = doc[at + open.len()..line_end].trim_end_matches(" -->");
        let (case, path) = head.split_once(' ').expect("CASE PATH");
        let (start, stop) = fenced(&doc, line_end + 1, &end_example);
        let file = case_dir(&mut cases, case).join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &doc[start..stop]).unwrap();
        examples += 1;
    }
    assert!(examples >= min, "the {section} section has its examples");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_driftaudit"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let open = format!("<!-- {marker}-output ");
    let mut want = doc.clone();
    // replace from the end so earlier offsets stay valid
    let outputs: Vec<usize> = doc.match_indices(open.as_str()).map(|(i, _)| i).collect();
    assert!(
        outputs.len() >= min,
        "the {section} section shows its outputs"
    );
    for at in outputs.into_iter().rev() {
        let line_end = at + doc[at..].find('\n').unwrap();
        let case = doc[at + open.len()..line_end].trim_end_matches(" -->");
        let (start, stop) = fenced(&doc, line_end + 1, &end_output);
        let body = &doc[start..stop];
        let first = body.lines().next().unwrap();
        let command = first.strip_prefix("$ ").expect("a `$ COMMAND` line");
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("{command} 2>&1"))
            .current_dir(case_dir(&mut cases, case))
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(!printed.trim().is_empty(), "`{command}` printed nothing");
        want.replace_range(start..stop, &format!("{first}\n{printed}"));
    }
    if want != doc {
        if std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some() {
            std::fs::write(POLICY_DOC, &want).unwrap();
            return;
        }
        let diff: Vec<String> = doc
            .lines()
            .zip(want.lines())
            .filter(|(a, b)| a != b)
            .take(5)
            .map(|(a, b)| format!("docs: {a}\n  now: {b}"))
            .collect();
        panic!(
            "docs/policy-language.md's {section} outputs are stale: run `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test {test}`\n{}",
            diff.join("\n")
        );
    }
}

/// Where the text between the markers `open` and `close` (the first
/// `close` after `open`) lies in `doc`; a missing marker fails the test,
/// naming `file`.
#[track_caller]
pub fn marked(doc: &str, open: &str, close: &str, file: &str) -> std::ops::Range<usize> {
    let start = doc
        .find(open)
        .unwrap_or_else(|| panic!("{file} has no `{open}` marker"))
        + open.len();
    let end = start
        + doc[start..]
            .find(close)
            .unwrap_or_else(|| panic!("{file} has no `{close}` marker after `{open}`"));
    start..end
}
