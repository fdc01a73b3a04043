//! `render()` is the one call that picks the printer (issue 47): with
//! [`RenderOptions`] a library caller gets what `check` prints, SARIF and
//! JUnit with the repository root, `--quiet` and `--summary` included,
//! byte for byte.

use std::path::PathBuf;

use driftaudit::{audit, render, Brief, Format, Host, RenderOptions, Severity};

use crate::common::{audit as kit, cli};

/// A shipped host with failures (a quiet line and summary rows to show).
const HOST: &str = "zimbra-khimki-asfound";

/// `driftaudit check --snapshot HOST --profile all ARGS`'s stdout, from
/// the repository root: every rule, as the library's built-in set judges.
fn check_prints(args: &[&str]) -> String {
    let host = cli::host(HOST);
    let mut all = vec!["check", "--snapshot", host.as_str(), "--profile", "all"];
    all.extend(args);
    let (code, out, err) = cli::run(&all);
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
    out
}

#[test]
fn render_with_options_prints_what_check_prints_for_sarif_junit_quiet_and_summary() {
    let set = kit::builtin();
    let folders = [PathBuf::from(cli::host(HOST))];
    let report = audit(&set, &[Host::snapshot(&folders[0]).expect("the test host")]);
    // `check` resolves the working directory (the repository root) as the root
    let root = std::fs::canonicalize(cli::repo_root()).unwrap();
    let with = |brief| RenderOptions {
        repo_root: Some(&root),
        brief,
        ..RenderOptions::default()
    };
    let summary = Brief::Summary {
        policies: &set,
        fail_on: Severity::Low,
        folders: &folders,
    };
    for (args, format, opts) in [
        (&["--format", "sarif"][..], Format::Sarif, with(None)),
        (&["--format", "junit"][..], Format::Junit, with(None)),
        (&["--quiet"][..], Format::Text, with(Some(Brief::Quiet))),
        (&["--summary"][..], Format::Text, with(Some(summary))),
    ] {
        let printed = check_prints(args);
        assert!(!printed.is_empty(), "{args:?}");
        assert_eq!(render(&report, format, opts), printed, "{args:?}");
    }
    // the root is used: without it SARIF's locations are absolute
    let absolute = render(&report, Format::Sarif, RenderOptions::default());
    assert_ne!(absolute, check_prints(&["--format", "sarif"]));
}
