//! Drift first (issue 49): the default run is the drift and domain
//! policies; a benchmark runs when its profile is named (`--profile`, or a
//! site's `profiles:`); `--only policy:NAME` and comma lists select; every
//! command that judges rules (check, fleet, shards and merge, diff, fix,
//! list, the waivers' stale check, every format) selects the same way.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::cli::{host, json, run, says};

/// The policies a default run loads, pinned: the drift and domain ones.
const DEFAULT_POLICIES: &[&str] = &[
    "linux-network",
    "linux-sysctl",
    "mysql-innodb",
    "mysql-sizing",
    "storage",
    "zimbra-memory",
];

/// The benchmark policies, which only a profile runs.
const BENCHMARK_POLICIES: &[&str] = &["linux-hardening", "linux-mounts", "mysql-hardening"];

/// `list --format json ARGS`: each rule's id, policy and tags.
fn listed(args: &[&str]) -> Vec<(String, String, Vec<String>)> {
    let mut all = vec!["list", "--format", "json"];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{err}");
    json(&out)["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let tags = r["tags"]
                .as_array()
                .map(|t| t.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            (
                r["id"].as_str().unwrap().to_string(),
                r["policy"].as_str().unwrap().to_string(),
                tags,
            )
        })
        .collect()
}

fn ids(rules: &[(String, String, Vec<String>)]) -> BTreeSet<String> {
    rules.iter().map(|r| r.0.clone()).collect()
}

/// Every rule id with a finding in a JSON report.
fn report_rules(report: &Value) -> BTreeSet<String> {
    report["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["findings"].as_array().unwrap().iter())
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .filter(|r| !r.starts_with("driftaudit."))
        .collect()
}

#[test]
fn the_default_run_loads_the_drift_and_domain_policies_only() {
    let rules = listed(&[]);
    let policies: BTreeSet<&str> = rules.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(policies, DEFAULT_POLICIES.iter().copied().collect());
    let all = listed(&["--profile", "all"]);
    let every: BTreeSet<&str> = all.iter().map(|r| r.1.as_str()).collect();
    for b in BENCHMARK_POLICIES {
        assert!(every.contains(b), "--profile all lacks {b}");
    }
}

#[test]
fn the_nat_story_shows_its_drift_and_names_the_benchmarks_not_run() {
    let (code, out, _) = run(&["check", "--snapshot", &host("nat-story")]);
    assert_eq!(code, 1);
    says(&out, "linux.tcp-tw-recycle");
    says(&out, "benchmarks not run: --profile cis-l1-server +");
    for p in ["hardening.", "mounts.", "mysqlsec."] {
        assert!(
            !out.contains(p),
            "a benchmark rule ran by default ({p}):\n{out}"
        );
    }
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--format",
        "json",
    ]);
    let r = json(&out);
    assert_eq!(r["profiles"], serde_json::json!([]));
    assert!(r["profiles_not_run"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
}

#[test]
fn a_profile_adds_exactly_the_benchmark_rules_tagged_for_it() {
    let default = ids(&listed(&[]));
    let all = listed(&["--profile", "all"]);
    for (profile, tags) in [
        ("cis-l1-server", &["cis-l1-server"][..]),
        ("cis-l2-server", &["cis-l1-server", "cis-l2-server"][..]),
        ("stig", &["stig"][..]),
    ] {
        let with = ids(&listed(&["--profile", profile]));
        let added: BTreeSet<String> = with.difference(&default).cloned().collect();
        let tagged: BTreeSet<String> = all
            .iter()
            .filter(|r| BENCHMARK_POLICIES.contains(&r.1.as_str()))
            .filter(|r| r.2.iter().any(|t| tags.contains(&t.as_str())))
            .map(|r| r.0.clone())
            .collect();
        assert_eq!(added, tagged, "--profile {profile}");
        assert!(!added.is_empty());
        // the rules tagged for it in the default policies run anyway
        assert!(default.contains("linux.tcp-syncookies"));
    }
    // repeated and comma-separated are one choice
    assert_eq!(
        ids(&listed(&["--profile", "stig,cis-l1-server"])),
        ids(&listed(&[
            "--profile",
            "stig",
            "--profile",
            "cis-l1-server"
        ]))
    );
    let (code, _, err) = run(&["list", "--profile", "cis-l1-sever"]);
    assert_eq!(code, 2);
    says(&err, "did you mean `cis-l1-server`?");
}

#[test]
fn only_policy_and_comma_lists_select_in_check_list_fleet_diff_and_fix() {
    let sel = "policy:linux-network,policy:linux-sysctl";
    // list
    let l = listed(&["--only", sel]);
    let pols: BTreeSet<&str> = l.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        pols,
        ["linux-network", "linux-sysctl"].into_iter().collect()
    );
    // check (every rule id with a finding is one of those)
    let allowed = ids(&l);
    let (_, out, err) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--format",
        "json",
        "--only",
        sel,
    ]);
    let got = report_rules(&json(&out));
    assert!(!got.is_empty() && got.is_subset(&allowed), "{got:?}\n{err}");
    // --only policy: picks from every rule, a benchmark policy included
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--format",
        "json",
        "--only",
        "policy:linux-hardening",
    ]);
    let got = report_rules(&json(&out));
    assert!(
        !got.is_empty() && got.iter().all(|r| r.starts_with("hardening.")),
        "{got:?}"
    );
    // fleet: two hosts as one fleet
    let fleet = tempfile::tempdir().unwrap();
    for h in ["nat-story", "clean"] {
        crate::common::tree::copy_into(
            &crate::common::cli::testdata(&format!("hosts/{h}")),
            &fleet.path().join(h),
        );
    }
    let dir = fleet.path().to_str().unwrap();
    let (_, out, err) = run(&["check", "--fleet", dir, "--format", "json", "--only", sel]);
    let got = report_rules(&json(&out));
    assert!(!got.is_empty() && got.is_subset(&allowed), "{got:?}\n{err}");
    let (_, out, _) = run(&[
        "check",
        "--fleet",
        dir,
        "--format",
        "json",
        "--profile",
        "stig",
    ]);
    let r = json(&out);
    assert!(report_rules(&r).iter().any(|x| x.starts_with("hardening.")));
    assert_eq!(
        r["run"]["profiles"],
        serde_json::json!(["stig"]),
        "{}",
        r["run"]
    );
    // diff: verdicts of the selected rules only
    let (_, out, _) = run(&[
        "diff",
        &host("nat-story"),
        &host("clean"),
        "--format",
        "json",
    ]);
    let d = json(&out);
    let verdicts = |d: &Value| -> BTreeSet<String> {
        ["regressions", "fixes", "new", "vanished", "other"]
            .iter()
            .flat_map(|k| d[*k].as_array().unwrap().iter())
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !verdicts(&d).iter().any(|r| r.starts_with("hardening.")),
        "{:?}",
        verdicts(&d)
    );
    let (_, out, _) = run(&[
        "diff",
        &host("nat-story"),
        &host("clean"),
        "--format",
        "json",
        "--profile",
        "all",
    ]);
    assert!(verdicts(&json(&out))
        .iter()
        .any(|r| r.starts_with("hardening.")));
    let (_, out, _) = run(&[
        "diff",
        &host("nat-story"),
        &host("clean"),
        "--format",
        "json",
        "--only",
        "policy:linux-sysctl",
    ]);
    let v = verdicts(&json(&out));
    let sysctl_rules = ids(&listed(&["--only", "policy:linux-sysctl"]));
    assert!(!v.is_empty() && v.is_subset(&sysctl_rules), "{v:?}");
    // fix: plans only what the selection judges
    let fixes = |args: &[&str]| -> BTreeSet<String> {
        let h = host("nat-story");
        let mut all = vec![
            "fix",
            "--snapshot",
            h.as_str(),
            "--format",
            "json",
            "--no-verify",
        ];
        all.extend(args);
        let (_, out, err) = run(&all);
        let v = json(&out);
        assert!(v["edits"].is_array(), "{out}{err}");
        v["edits"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| e["fixes"].as_array().unwrap().iter())
            .map(|f| f.as_str().unwrap().split(' ').next().unwrap().to_string())
            .collect()
    };
    let default_fixes = fixes(&[]);
    assert!(
        !default_fixes.iter().any(|r| r.starts_with("hardening.")),
        "{default_fixes:?}"
    );
    let with_all = fixes(&["--profile", "all"]);
    assert!(
        with_all.iter().any(|r| r.starts_with("hardening.")),
        "{with_all:?}"
    );
    let only = fixes(&["--only", "policy:linux-network"]);
    assert!(
        !only.is_empty() && only.iter().all(|r| r.starts_with("linux.")),
        "{only:?}"
    );
}

#[test]
fn every_format_of_a_default_run_leaves_the_benchmarks_out() {
    for f in [
        "text", "json", "jsonl", "sarif", "junit", "markdown", "html",
    ] {
        let (code, out, err) = run(&["check", "--snapshot", &host("nat-story"), "--format", f]);
        assert!(code < 2, "{f}: {err}");
        assert!(!out.contains("hardening."), "{f} shows a benchmark rule");
        let (_, out, _) = run(&[
            "check",
            "--snapshot",
            &host("nat-story"),
            "--format",
            f,
            "--profile",
            "all",
        ]);
        assert!(
            out.contains("hardening."),
            "{f} --profile all lacks the benchmarks"
        );
    }
}

#[test]
fn a_site_chooses_its_profiles_once_in_a_policy_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("site.yaml"),
        "policy: site\ntitle: Our choice\nprofiles: [stig]\noverrides:\n  - rule: hardening.sysrq\n    severity: low\n",
    )
    .unwrap();
    let p = dir.path().to_str().unwrap();
    let with_site = ids(&listed(&["--policy", p]));
    let with_flag = ids(&listed(&["--profile", "stig"]));
    assert_eq!(with_site, with_flag);
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--policy",
        p,
        "--format",
        "json",
    ]);
    assert_eq!(json(&out)["profiles"], serde_json::json!(["stig"]));
    std::fs::write(dir.path().join("site.yaml"), "policy: site\ntitle: T\nprofiles: [stgi]\noverrides:\n  - rule: hardening.sysrq\n    severity: low\n").unwrap();
    let (code, _, err) = run(&["list", "--policy", p]);
    assert_eq!(code, 2);
    says(&err, "unknown profile `stgi`, did you mean `stig`?");
}

#[test]
fn a_waiver_of_a_rule_this_run_did_not_select_is_not_stale() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("waivers.yaml");
    std::fs::write(
        &w,
        "- rule: hardening.sysrq\n  reason: console access is needed on this lab host\n  expires: 2099-01-01\n",
    )
    .unwrap();
    let w = w.to_str().unwrap();
    // the default run does not judge hardening.sysrq: its waiver is not stale
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        &host("clean"),
        "--waivers",
        w,
        "--format",
        "json",
    ]);
    assert!(
        crate::common::cli::findings(&json(&out), "driftaudit.waiver").is_empty(),
        "{out}"
    );
    // where it runs and passes, the waiver matched nothing: stale
    let (_, out, _) = run(&[
        "check",
        "--snapshot",
        &host("clean"),
        "--waivers",
        w,
        "--format",
        "json",
        "--profile",
        "all",
    ]);
    let r = json(&out);
    let sysrq = crate::common::cli::findings(&r, "hardening.sysrq");
    if sysrq.iter().all(|f| f["status"] == "pass") {
        assert!(
            !crate::common::cli::findings(&r, "driftaudit.waiver").is_empty(),
            "{out}"
        );
    }
}

#[test]
fn merge_refuses_shards_run_with_other_profiles() {
    let fleet = tempfile::tempdir().unwrap();
    for h in ["nat-story", "clean"] {
        crate::common::tree::copy_into(
            &crate::common::cli::testdata(&format!("hosts/{h}")),
            &fleet.path().join(h),
        );
    }
    let dir = fleet.path().to_str().unwrap();
    let one = fleet.path().join("s1.json");
    let two = fleet.path().join("s2.json");
    let (_, out, _) = run(&[
        "check", "--fleet", dir, "--format", "json", "--shard", "1/2",
    ]);
    std::fs::write(&one, out).unwrap();
    let (_, out, _) = run(&[
        "check",
        "--fleet",
        dir,
        "--format",
        "json",
        "--shard",
        "2/2",
        "--profile",
        "stig",
    ]);
    std::fs::write(&two, out).unwrap();
    let (code, _, err) = run(&["merge", one.to_str().unwrap(), two.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    says(&err, "profiles");
    says(&err, "--profile stig");
}

/// On the machine it runs on, the default `check` prints at most 40 % of
/// the lines `--profile all` (every rule, what a run printed before
/// profiles) prints there, both measured in this one run.
#[test]
fn the_default_live_check_prints_at_most_40_percent_of_the_full_run() {
    let (_, default, _) = run(&["check"]);
    let (_, all, _) = run(&["check", "--profile", "all"]);
    let (d, a) = (default.lines().count(), all.lines().count());
    assert!(
        a > 0 && d * 10 <= a * 4,
        "default {d} lines, --profile all {a}"
    );
}
