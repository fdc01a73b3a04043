//! The library stands alone: without default features it pulls none of the
//! command-line crates (checked with `cargo tree`, fast; CI also runs
//! `cargo check --no-default-features --lib`), and the crate-root names an
//! embedder uses work together.

use std::process::Command;

const CLI_ONLY: &[&str] = &["clap", "clap_complete", "clap_mangen", "rayon", "indicatif"];

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Crate names in `cargo tree --prefix none` output (`name vX.Y.Z ...`).
fn tree(args: &[&str]) -> Vec<String> {
    let out = cargo()
        .args(["tree", "-e", "normal", "--prefix", "none"])
        .args(args)
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn library_alone_pulls_no_cli_crates() {
    let lib = tree(&["--no-default-features"]);
    assert!(
        lib.iter().any(|c| c == "serde"),
        "cargo tree output parsed: {lib:?}"
    );
    for c in CLI_ONLY {
        assert!(
            !lib.iter().any(|x| x == c),
            "`{c}` is in the library's dependency tree without default features"
        );
    }
    // And the check can fail: with the default features they are there.
    let cli = tree(&[]);
    for c in CLI_ONLY {
        assert!(
            cli.iter().any(|x| x == c),
            "`{c}` missing from the CLI tree"
        );
    }
}

#[test]
fn crate_root_names_read_like_the_domain() {
    use driftaudit::{audit, render, Format, Host, PolicySet, RenderOptions, Severity, Status};
    let mut set = PolicySet::new();
    set.add_str(
        "inline.yaml",
        "policy: inline\ntitle: Inline\nrules:\n  - id: inline.recycle\n    title: t\n    severity: critical\n    setting: sysctl.net.ipv4.tcp_tw_recycle\n    expect: { equals: 0 }\n    why: it is {actual}\n    fix: set it to 0\n",
    )
    .unwrap();
    let host = Host::snapshot(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/hosts/nat-story"
    ))
    .unwrap();
    let report = audit(&set, &[host]);
    let f: Vec<&driftaudit::Finding> = report.hosts[0]
        .findings
        .iter()
        .filter(|f| f.rule == "inline.recycle")
        .collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].status, Status::Fail);
    assert_eq!(f[0].severity, Severity::Critical);
    assert_eq!(f[0].explanation, "it is 1");
    assert!(report.fails_at(Severity::Critical));
    for format in [
        Format::Text,
        Format::Json,
        Format::Sarif,
        Format::Junit,
        Format::Markdown,
    ] {
        let out = render(&report, format, RenderOptions::default());
        assert!(out.contains("inline.recycle"), "{format:?}");
    }
}
