//! The Khimki story as three snapshots: as found (8 GB-era heap and pool on a
//! 24 GB machine, 9.4 GiB database), the failed 12 GB attempt, and the working
//! state (pool 6 GiB, heap 7168 MB, mysql_memory_percent 25). Each must get
//! the story's verdicts from policies/zimbra-memory.yaml (tests/workflow/hosts.rs pins
//! every test host's full report with insta), and no localconfig password appears in any output.

use std::collections::BTreeMap;

use crate::common::audit;
use crate::common::cli::says;
use driftaudit::unstable::engine;
use driftaudit::unstable::policy::PolicySet;
use driftaudit::unstable::render::{self, Format, RenderOptions};
use driftaudit::unstable::report::Status;

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");

fn zimbra_policies() -> PolicySet {
    audit::only(&["zimbra.*"])
}

fn statuses(host: &str) -> BTreeMap<String, Status> {
    let h = audit::host(format!("{HOSTS}/{host}"));
    let r = engine::audit_host(&zimbra_policies(), &h);
    r.findings
        .iter()
        .map(|f| (f.rule.clone(), f.status))
        .collect()
}

fn expect(host: &str, want: &[(&str, Status)]) {
    let got = statuses(host);
    let want: BTreeMap<String, Status> = want.iter().map(|(r, s)| (r.to_string(), *s)).collect();
    assert_eq!(got, want, "{host}");
}

/// The Zimbra story's five rules, in the order [`expect_story`] takes
/// their statuses.
const STORY: [&str; 5] = [
    "zimbra.buffer-pool-cap",
    "zimbra.buffer-pool-fits-db",
    "zimbra.heap-sized-for-ram",
    "zimbra.memory-budget",
    "zimbra.mycnf-generated-drift",
];

/// [`expect`] with the statuses of the [`STORY`] rules, in that order.
#[track_caller]
fn expect_story(host: &str, statuses: [Status; 5]) {
    let want: Vec<(&str, Status)> = STORY.into_iter().zip(statuses).collect();
    expect(host, &want);
}

#[test]
fn as_found_fails_heap_pool_and_drift() {
    use Status::{Fail, Pass};
    expect_story("zimbra-khimki-asfound", [Pass, Fail, Fail, Pass, Fail]);
}

#[test]
fn twelve_gig_attempt_fails_cap_budget_and_heap() {
    use Status::{Fail, Pass};
    expect_story("zimbra-khimki-12g", [Fail, Pass, Fail, Fail, Fail]);
}

#[test]
fn fixed_state_passes_every_rule() {
    use Status::Pass;
    expect_story("zimbra-khimki-fixed", [Pass, Pass, Pass, Pass, Pass]);
}

#[test]
fn explanations_carry_the_story_numbers() {
    let h = audit::host(format!("{HOSTS}/zimbra-khimki-asfound"));
    let r = engine::audit_host(&zimbra_policies(), &h);
    let text = |id: &str| {
        crate::common::of_rule(&r.findings, id)[0]
            .explanation
            .clone()
    };
    let heap = text("zimbra.heap-sized-for-ram");
    says(&heap, "2458 MB");
    says(&heap, "of 8 GiB");
    let fits = text("zimbra.buffer-pool-fits-db");
    assert!(fits.contains("9.4 GiB") && fits.contains("2 GiB"), "{fits}");
    let drift = text("zimbra.mycnf-generated-drift");
    // zmmycnf: 24683652 kB * 1024 * 30 / 100
    says(&drift, "7582817894");
}

#[test]
fn no_secret_in_any_output() {
    // All built-in policies, every format, plus the gathered facts themselves.
    let policies = audit::builtin();
    for host in [
        "zimbra-khimki-asfound",
        "zimbra-khimki-12g",
        "zimbra-khimki-fixed",
    ] {
        let dir = format!("{HOSTS}/{host}");
        let lc = std::fs::read_to_string(format!("{dir}/opt/zimbra/conf/localconfig.xml")).unwrap();
        assert!(
            lc.contains("FAKE-SECRET-DO-NOT-PRINT"),
            "fixture must hold fake secrets"
        );
        let h = audit::host(&dir);
        let facts = engine::gather(&policies, &h);
        let report = engine::audit(&policies, &[h]);
        let outputs = [
            render::render(
                &report,
                Format::Text,
                RenderOptions {
                    color: false,
                    verbose: true,
                    ..Default::default()
                },
            ),
            render::render(
                &report,
                Format::Text,
                RenderOptions {
                    color: true,
                    verbose: true,
                    ..Default::default()
                },
            ),
            render::render(&report, Format::Json, RenderOptions::default()),
            serde_json::to_string(&facts).unwrap(),
            format!("{facts:?}"),
        ];
        for out in outputs {
            assert!(
                !out.contains("FAKE-SECRET"),
                "{host}: a localconfig secret leaked"
            );
        }
    }
}

#[test]
fn hosts_without_zimbra_skip_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("etc")).unwrap(); // a host tree without Zimbra
    let h = audit::host(dir.path());
    let r = engine::audit_host(&zimbra_policies(), &h);
    assert_eq!(r.findings.len(), 5);
    crate::common::all_are(&r.findings, Status::Skip);
}

#[test]
fn no_secret_in_any_cli_output_format_or_diff() {
    let asfound = format!("{HOSTS}/zimbra-khimki-asfound");
    let fixed = format!("{HOSTS}/zimbra-khimki-fixed");
    let mut runs: Vec<Vec<String>> = Vec::new();
    for fmt in ["text", "json", "jsonl", "sarif", "junit", "markdown"] {
        runs.push(vec![
            "check".into(),
            "--snapshot".into(),
            asfound.clone(),
            "--format".into(),
            fmt.into(),
            "-v".into(),
        ]);
    }
    for fmt in ["text", "json"] {
        runs.push(vec![
            "diff".into(),
            asfound.clone(),
            fixed.clone(),
            "--files".into(),
            "--format".into(),
            fmt.into(),
        ]);
    }
    for args in runs {
        let out = crate::common::cli::cmd().args(&args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {text}"
        );
        assert!(text.len() > 100, "{args:?} printed almost nothing");
        assert!(
            !text.contains("FAKE-SECRET"),
            "{args:?}: a localconfig secret leaked"
        );
    }
}
