//! One integration test per shipped test host: run the built binary on each
//! snapshot under testdata/hosts and snapshot the text and JSON reports.

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{findings, run};

fn report(host: &str) -> serde_json::Value {
    let dir = format!("testdata/hosts/{host}");
    let (_, out, err) = run(&["check", "--snapshot", &dir, "--format", "json"]);
    serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("{host}: invalid JSON ({e}); stderr: {err}"))
}

#[test]
fn every_test_host_report_is_snapshotted() {
    let names = common::browser::host_names();
    assert!(
        names.len() >= 2,
        "expected at least the nat-story and clean hosts"
    );
    for name in names {
        let dir = format!("testdata/hosts/{name}");
        let (code, text, err) = run(&["check", "--snapshot", &dir, "--verbose"]);
        assert!(code == 0 || code == 1, "{name}: exit {code}, stderr: {err}");
        let (_, json, _) = run(&["check", "--snapshot", &dir, "--format", "json"]);
        let _: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("host-{name}-text"), text);
            insta::assert_snapshot!(format!("host-{name}-json"), json);
        });
    }
}

#[test]
fn nat_story_fails_on_tcp_tw_recycle_with_the_file_and_line() {
    let r = report("nat-story");
    let f = findings(&r, "linux.tcp-tw-recycle");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["status"], "fail");
    assert_eq!(f[0]["severity"], "high");
    assert_eq!(f[0]["subject"][0], "net.ipv4.tcp_tw_recycle");
    assert_eq!(f[0]["actual"], "1");
    assert_eq!(f[0]["evidence"][0]["path"], "/etc/sysctl.d/60-perf.conf");
    assert_eq!(f[0]["evidence"][0]["line"], 3);
    assert!(f[0]["explanation"].as_str().unwrap().contains("NAT"));
    // drift: somaxconn configured 4096, running 128
    let d = findings(&r, "sysctl.persisted-drift");
    let s = d
        .iter()
        .find(|f| f["subject"][0] == "net.core.somaxconn")
        .expect("somaxconn drift");
    assert_eq!(s["status"], "fail");
    assert_eq!(s["expected"], "4096");
    assert_eq!(s["actual"], "128");
    // the TAB-separated port range equals its config line: no drift
    assert!(!d
        .iter()
        .any(|f| f["subject"][0] == "net.ipv4.ip_local_port_range"));
}

#[test]
fn exit_codes_follow_fail_on() {
    let (code, _, _) = run(&["check", "--snapshot", "testdata/hosts/nat-story"]);
    assert_eq!(code, 1);
    let (code, _, _) = run(&[
        "check",
        "--snapshot",
        "testdata/hosts/nat-story",
        "--fail-on",
        "critical",
    ]);
    assert_eq!(code, 0);
    let (code, _, err) = run(&["check", "--snapshot", "testdata/no-such-dir"]);
    assert_eq!(code, 2);
    assert!(err.contains("no-such-dir"), "{err}");
    let (code, _, _) = run(&["check", "--bogus"]);
    assert_eq!(code, 2);
}

#[test]
fn clean_host_has_no_failures_and_no_false_positives() {
    let r = report("clean");
    let all = r["hosts"][0]["findings"].as_array().unwrap();
    let fails: Vec<_> = all.iter().filter(|f| f["status"] == "fail").collect();
    assert!(fails.is_empty(), "{fails:#?}");
    // tcp_tw_recycle does not exist on 6.1: the value rule is skipped, not failed
    let f = findings(&r, "linux.tcp-tw-recycle");
    assert_eq!(f[0]["status"], "skip");
    assert!(f[0]["explanation"]
        .as_str()
        .unwrap()
        .contains("6.1.0-18-amd64"));
}

#[test]
fn only_and_skip_select_rules() {
    let nat_story_json = |flag: &str, rules: &str| {
        let args = ["check", "--snapshot", "testdata/hosts/nat-story"];
        run(&[&args[..], &["--format", "json", flag, rules]].concat()).1
    };
    let out = nat_story_json("--only", "linux.tcp-*");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ids = common::cli::strs(&r["hosts"][0]["findings"], "rule");
    assert!(
        ids.iter()
            .all(|i| i.starts_with("linux.tcp-") || *i == "driftaudit.input"),
        "{ids:?}"
    );
    let out = nat_story_json("--skip", "linux.tcp-tw-recycle");
    assert!(!out.contains("\"linux.tcp-tw-recycle\""));
}

#[test]
fn list_and_explain() {
    let (code, out, _) = run(&["list"]);
    assert_eq!(code, 0);
    assert!(out.contains("linux.tcp-tw-recycle"));
    let (code, out, _) = run(&["explain", "linux.tcp-tw-recycle"]);
    assert_eq!(code, 0);
    says(&out, "references:");
    says(&out, "kernel < 4.12");
    let (code, _, err) = run(&["explain", "linux.tcp-tw-recycel"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `linux.tcp-tw-recycle`"), "{err}");
}
