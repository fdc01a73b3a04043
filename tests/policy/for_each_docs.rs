//! docs/policy-language.md's for_each examples are run: each
//! `<!-- for-each-example CASE PATH -->` YAML block is written to PATH in a
//! directory per CASE (with `testdata` linked in), and each `<!--
//! for-each-output CASE -->` block's `$ COMMAND` runs there under `sh`
//! with this build's driftaudit first on PATH; what it prints (stdout and
//! stderr) must be the rest of the block. `DRIFTAUDIT_UPDATE_DOCS=1 cargo
//! test --test policy for_each_docs::` rewrites the outputs; the commands and YAML
//! are never rewritten.

use crate::common;

#[test]
fn docs_for_each_examples_print_what_the_docs_show() {
    common::doc_examples::run_policy_doc_examples(
        "for-each",
        3,
        "for_each",
        "policy for_each_docs::",
    );
}
