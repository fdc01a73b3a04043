//! `driftaudit test`: policy test files (`*.test.yaml`) run against
//! snapshot directories and inline snapshots, one line per case and a
//! summary, exit 1 on a mismatch (with rule, subject, expected and actual
//! verdict at the expectation's file:line:column), exit 2 on a malformed
//! test file (every problem at file:line:column with a caret), JUnit for
//! CI. The shipped policies' own tests (`policies/*.test.yaml`) must pass,
//! and between them cover every shipped rule's pass and fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use driftaudit::unstable::policytest::{self, Verdict};
use driftaudit::Status;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::cli::{repo_root as root, run_in};

/// A small policy of one setting rule and one drift rule.
const POLICY: &str = r#"policy: site
title: Site rules
rules:
  - id: site.syncookies
    title: SYN cookies on
    severity: medium
    setting: sysctl.net.ipv4.tcp_syncookies
    expect: { equals: 1 }
    why: tcp_syncookies is {actual}
    fix: set it to 1
  - id: site.drift
    title: Live values equal the configuration
    severity: low
    drift: { configured: sysctl_boot, running: sysctl }
    why: "{setting} is {actual}, configured {expected}"
    fix: apply it
"#;

fn workspace(test: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("site.yaml"), POLICY).unwrap();
    std::fs::write(d.path().join("site.test.yaml"), test).unwrap();
    d
}

const INLINE_OFF: &str = r#"cases:
  - name: syncookies off and drifting
    files:
      /etc/sysctl.d/60-net.conf: |
        net.ipv4.tcp_syncookies = 1
      /proc/sys/net/ipv4/tcp_syncookies: "0\n"
    expect:
      - { rule: site.syncookies, status: fail }
      - { rule: site.drift, subject: net.ipv4.tcp_syncookies, status: fail }
  - name: syncookies on as configured
    files:
      /etc/sysctl.d/60-net.conf: "net.ipv4.tcp_syncookies = 1\n"
      /proc/sys/net/ipv4/tcp_syncookies: "1\n"
    expect:
      - { rule: site.syncookies, status: pass }
      - { rule: site.drift, subject: net.ipv4.tcp_syncookies, status: none }
      - { rule: site.drift, status: pass }
"#;

#[test]
fn passing_cases_print_one_line_each_and_a_summary_and_exit_0() {
    let ws = workspace(INLINE_OFF);
    let (code, out, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(
            "PASS ./site.test.yaml:2: syncookies off and drifting (2 expectations, host inline)"
        ),
        "{out}"
    );
    assert!(
        lines[1]
            .starts_with("PASS ./site.test.yaml:10: syncookies on as configured (3 expectations"),
        "{out}"
    );
    assert_eq!(
        lines.last().unwrap(),
        &"1 test file, 2 cases: 2 passed, 0 failed (5 expectations, 0 mismatched)"
    );
}

#[test]
fn a_mismatch_prints_rule_subject_expected_actual_and_the_expectation_line_and_exits_1() {
    // the second case expects the opposite of what the host shows
    let ws = workspace(
        &INLINE_OFF
            .replace(
                "      - { rule: site.syncookies, status: pass }",
                "      - { rule: site.syncookies, status: fail }",
            )
            .replace(
                "subject: net.ipv4.tcp_syncookies, status: none }",
                "subject: net.ipv4.tcp_syncookies, status: fail }",
            ),
    );
    let (code, out, _) = run_in(ws.path(), &["test", "site.test.yaml"]);
    assert_eq!(code, 1, "{out}");
    says(&out, "PASS site.test.yaml:2: syncookies off and drifting");
    says(&out, "FAIL site.test.yaml:10: syncookies on as configured");
    says(&out, "\n  site.test.yaml:15:17: site.syncookies: expected fail, got pass: net.ipv4.tcp_syncookies, value 1, rule expects = 1; ");
    says(&out, "\n  site.test.yaml:16:17: site.drift [net.ipv4.tcp_syncookies]: expected fail, got none: the rule reported no finding on this subject");
    assert!(
        out.ends_with("1 test file, 2 cases: 1 passed, 1 failed (5 expectations, 2 mismatched)\n"),
        "{out}"
    );
}

#[test]
fn junit_has_a_suite_per_file_a_case_per_case_and_the_mismatch_as_failure() {
    let ws = workspace(&INLINE_OFF.replace(
        "      - { rule: site.syncookies, status: pass }",
        "      - { rule: site.syncookies, status: skip }",
    ));
    let (code, out, _) = run_in(ws.path(), &["test", "--format", "junit", "."]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("<?xml"), "{out}");
    assert!(
        out.contains(
            r#"<testsuite name="./site.test.yaml" tests="2" skipped="0" errors="0" failures="1">"#
        ),
        "{out}"
    );
    assert!(out.contains(r#"<testcase name="syncookies off and drifting" classname="./site.test.yaml" assertions="2" file="./site.test.yaml" line="2">"#), "{out}");
    assert!(out.contains(r#"<failure message="./site.test.yaml:15:17: site.syncookies: expected skip, got pass: "#), "{out}");
    assert!(!out.contains("time="), "no durations or timestamps: {out}");
}

#[test]
fn a_malformed_test_file_exits_2_with_every_problem_at_file_line_column() {
    let ws = workspace(
        r#"cases:
  - name: two problems
    files:
      /etc/sysctl.conf: "net.ipv4.tcp_syncookies = 1\n"
    expect:
      - { rule: site.syncokies, status: fail }
      - { rule: site.drift, status: not-applicable }
  - name: no snapshot
    expect:
      - { rule: site.drift, status: pass }
"#,
    );
    let (code, out, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing runs: {out}");
    assert!(err.contains("./site.test.yaml:6:17: unknown rule `site.syncokies`: no policy under test defines it, did you mean `site.syncookies`?\n6 |       - { rule: site.syncokies, status: fail }\n  |                 ^"), "{err}");
    assert!(err.contains("./site.test.yaml:7:37: unknown status `not-applicable`: expected pass, fail, skip, unknown, error, waived, none (a rule that does not apply is `skip`, as in the report)"), "{err}");
    assert!(
        err.contains(
            "./site.test.yaml:8:11: a case needs `snapshot: DIR` or `files:` (an inline snapshot)"
        ),
        "{err}"
    );

    let ws = workspace("cases:\n  - name: x\n    snapshott: ../x\n");
    let (code, _, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 2);
    crate::common::cli::starts(
        &err,
        "driftaudit: ./site.test.yaml:3:5: unknown field `snapshott`",
    );

    let ws = workspace("cases: [\n");
    let (code, _, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("driftaudit: ./site.test.yaml:"), "{err}");

    // a broken policy under test: its own problems, at its own file and line
    let ws = workspace(INLINE_OFF);
    std::fs::write(
        ws.path().join("site.yaml"),
        POLICY.replace("equals: 1", "equal: 1"),
    )
    .unwrap();
    let (code, _, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 2);
    says(
        &err,
        "./site.yaml:8:15: unknown field `equal`, did you mean `equals`?",
    );
}

#[test]
fn inline_files_stay_inside_their_private_snapshot() {
    let ws = workspace(
        r#"cases:
  - name: escapes
    files:
      ../../escaped: "x\n"
      /etc/./sysctl.conf: "x\n"
      etc//sysctl.conf: "x\n"
    expect:
      - { rule: site.drift, status: pass }
"#,
    );
    let (code, _, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 2, "{err}");
    for (line, name) in [
        (4, "../../escaped"),
        (5, "/etc/./sysctl.conf"),
        (6, "etc//sysctl.conf"),
    ] {
        assert!(
            err.contains(&format!(
                "./site.test.yaml:{line}:7: inline file `{name}`: a host path of plain names"
            )),
            "{err}"
        );
    }
    assert!(!ws.path().join("escaped").exists());
    assert!(!std::env::temp_dir().join("escaped").exists());
    assert!(!Path::new("/escaped").exists());
}

#[test]
fn a_case_with_waivers_sees_the_waived_status_on_the_given_day() {
    // the same host and rule before and after the waiver's expiry
    let case = |name: &str, today: &str, status: &str| {
        format!(
            "  - name: {name}\n    today: \"{today}\"\n    waivers: waivers.yaml\n    files:\n      /proc/sys/net/ipv4/tcp_syncookies: \"0\\n\"\n    expect:\n      - {{ rule: site.syncookies, status: {status} }}\n"
        )
    };
    let ws = workspace(&format!(
        "cases:\n{}{}",
        case("waived until 2030", "2029-06-01", "waived"),
        case("the waiver has expired", "2031-01-01", "fail")
    ));
    crate::common::tree::file(
        ws.path(),
        "waivers.yaml",
        "- rule: site.syncookies\n  reason: lab host (OPS-1)\n  expires: 2030-01-01\n",
    );
    let (code, out, err) = run_in(ws.path(), &["test"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_policy_directory_does_not_load_its_test_files_as_policies() {
    let ws = workspace(INLINE_OFF);
    let (code, out, err) = run_in(ws.path(), &["list", "--no-builtin", "--policy", "."]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("site.syncookies"), "{out}");
    let (code, _, err) = run_in(ws.path(), &["test", "no-such-dir"]);
    assert_eq!(code, 2);
    says(&err, "cannot read `no-such-dir`: no such file or directory");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(empty.path(), &["test"]);
    assert_eq!(code, 2);
    says(&err, "no policy test files (`*.test.yaml`) in `.`");
}

/// The shipped tests pass (this is how CI runs them), and between them
/// every shipped rule is expected to fail somewhere and to pass somewhere,
/// except where no shipped host or inline snapshot can show it (each with
/// the reason).
#[test]
fn shipped_policy_tests_pass_and_cover_every_rule_both_ways() {
    let (code, out, err) = run_in(root(), &["test", "policies/"]);
    assert_eq!(code, 0, "{out}{err}");

    let run = policytest::run(&[root().join("policies")]).expect("shipped tests load");
    assert!(run.passed());
    let mut seen: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for k in run
        .files
        .iter()
        .flat_map(|f| &f.cases)
        .flat_map(|c| &c.checks)
    {
        let v = match k.expected {
            Verdict::Status(Status::Fail) => "fail",
            Verdict::Status(Status::Pass) => "pass",
            _ => continue,
        };
        seen.entry(k.rule.clone()).or_default().insert(v);
    }
    // rules whose pass or fail no snapshot can show, and why
    let exempt: &[(&str, &str, &str)] = &[];
    let mut missing = Vec::new();
    let tested = |policy_path: &str| {
        let stem = policy_path.strip_suffix(".yaml").unwrap_or(policy_path);
        root().join(format!("{stem}.test.yaml")).is_file()
    };
    let set = audit::builtin();
    for r in set.rules() {
        if !tested(&r.source.path) {
            continue;
        }
        // a `for_each` rule with aliases: each item, by the id users know
        let aliases: Vec<String> = r
            .for_each
            .as_ref()
            .map(|fe| {
                fe.static_aliases(set.policy_of(r))
                    .into_iter()
                    .flatten()
                    .collect()
            })
            .unwrap_or_default();
        let ids = if aliases.is_empty() {
            vec![r.id.clone()]
        } else {
            aliases
        };
        for id in &ids {
            for want in ["pass", "fail"] {
                let covered = seen.get(id).is_some_and(|s| s.contains(want));
                let excused = exempt.iter().any(|(x, w, _)| x == id && *w == want);
                if !covered && !excused {
                    missing.push(format!("{id} {want}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "shipped rules without a {{pass, fail}} expectation in policies/*.test.yaml: {missing:#?}"
    );
}

/// Issue 29, item 8: `driftaudit test` quoted the first line of any file
/// named in `policies:` or `waivers:` (a test file naming `/etc/shadow`
/// printed it; CI runs `driftaudit test` on pull requests). A test names
/// files in its own directory tree only, and a named file that is not a
/// policy is reported without its content.
#[test]
fn a_test_file_cannot_make_driftaudit_test_print_files_outside_its_tree() {
    let (ws, outside) =
        crate::common::tree::temp_file("shadow", "root:SHADOW-CANARY-1:19000:0:99999:7:::\n");
    let t = ws.path().join("t");
    std::fs::create_dir_all(&t).unwrap();
    std::os::unix::fs::symlink(&outside, t.join("linked")).unwrap();
    std::fs::write(t.join("keyfile.txt"), "INTREE-CANARY-2: not a policy\n").unwrap();
    let case = |name: &str, field: &str, file: &str| {
        let (policies, waivers) = if field == "policies" {
            (format!("policies: [{file}]\n"), String::new())
        } else {
            (
                "builtin: true\n".to_string(),
                format!("    waivers: {file}\n"),
            )
        };
        std::fs::write(
            t.join(format!("{name}.test.yaml")),
            format!(
                "{policies}cases:\n  - name: c\n    files:\n      /etc/hostname: h\n{waivers}    expect:\n      - {{ rule: sysctl.persisted-drift, status: none }}\n"
            ),
        )
        .unwrap();
    };
    case("abs", "policies", outside.to_str().unwrap());
    case("up", "policies", "../shadow");
    case("link", "policies", "linked");
    case("intree", "policies", "keyfile.txt");
    case("waiver-abs", "waivers", outside.to_str().unwrap());
    case("waiver-up", "waivers", "../shadow");
    for name in ["abs", "up", "link", "intree", "waiver-abs", "waiver-up"] {
        for format in ["text", "junit"] {
            let file = format!("t/{name}.test.yaml");
            let (code, out, err) = run_in(ws.path(), &["test", "--format", format, &file]);
            let all = format!("{out}{err}");
            assert_eq!(code, 2, "{name} {format}: {all}");
            assert!(
                !all.contains("SHADOW-CANARY-1") && !all.contains("INTREE-CANARY-2"),
                "{name} {format} quoted the file:\n{all}"
            );
            let said = if name == "intree" {
                "is not a policy file"
            } else {
                "outside the test file's directory"
            };
            assert!(all.contains(said), "{name} {format}: {all}");
        }
    }
}
