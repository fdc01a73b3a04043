//! docs/policy-language.md's overrides examples are run: each
//! `<!-- overlay-example CASE PATH -->` YAML block is written to PATH in a
//! directory per CASE (with `testdata` linked in), and each `<!--
//! overlay-output CASE -->` block's `$ COMMAND` runs there under `sh`
//! with this build's driftaudit first on PATH; what it prints (stdout and
//! stderr) must be the rest of the block. `DRIFTAUDIT_UPDATE_DOCS=1 cargo
//! test --test policy overlay_docs::` rewrites the outputs; the commands and YAML
//! are never rewritten.

use crate::common;

#[test]
fn docs_overrides_examples_print_what_the_docs_show() {
    common::doc_examples::run_policy_doc_examples(
        "overlay",
        3,
        "overrides",
        "policy overlay_docs::",
    );
}
