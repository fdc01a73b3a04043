//! docs/fix.md's worked examples are what `driftaudit fix` prints: the patch,
//! the runtime script and the summary with the proof, for the NAT story and
//! the Zimbra memory story. `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test
//! fix docs::` rewrites them; otherwise a difference fails.

use std::path::Path;

use crate::common::audit;
use driftaudit::unstable::fix::{self, FixOptions};

fn block(host: &str, only: &[&str]) -> [(String, String); 3] {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/hosts")
        .join(host);
    let opts = FixOptions {
        only: only
            .iter()
            .map(|g| glob::Pattern::new(g).unwrap())
            .collect(),
        ..FixOptions::default()
    };
    let p = fix::plan(&audit::builtin(), Some(&dir), &opts).unwrap();
    [
        (
            format!("{host} patch"),
            format!("```diff\n{}```\n", p.patch),
        ),
        (
            format!("{host} script"),
            format!("```sh\n{}```\n", p.script()),
        ),
        (
            format!("{host} summary"),
            format!("```\n{}```\n", p.summary()),
        ),
    ]
}

#[test]
fn docs_fix_md_shows_what_fix_prints() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fix.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut want = doc.clone();
    let mut blocks = Vec::new();
    blocks.extend(block("nat-story", &[]));
    blocks.extend(block("zimbra-khimki-12g", &["zimbra.*"]));
    for (name, text) in blocks {
        let open = format!("<!-- fix-example {name} -->\n");
        let close = "<!-- end fix-example -->";
        let at = crate::common::doc_examples::marked(&want, &open, close, "docs/fix.md");
        want.replace_range(at, &text);
    }
    if want != doc {
        if std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some() {
            std::fs::write(path, &want).unwrap();
            return;
        }
        panic!("docs/fix.md's examples are stale: run `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test fix docs::`");
    }
}
