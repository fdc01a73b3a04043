//! Site overlays through the binary: a policy file's `overrides:` change a
//! built-in rule's severity, disable one with a reason (shown in every
//! format, never a silent pass), change a parameter for one rule or a whole
//! policy, add `applies` conditions; `list` shows the effective rule set
//! with the file, line and column of each change; conflicts and patterns
//! that match nothing are load errors naming the places. Fixtures are in
//! testdata/overlays/.

use std::path::Path;

use serde_json::Value as Json;

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{findings, json, run};

fn snap(name: &str, text: &str) {
    insta::with_settings!({prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

const SITE: &str = "testdata/overlays/site";
const ZIMBRA: &str = "testdata/hosts/zimbra-khimki-12g";

fn report(args: &[&str]) -> Json {
    let mut all = vec!["check", "--format", "json"];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    json(&out)
}

#[test]
fn list_shows_the_effective_rule_set_with_where_each_change_was_made() {
    let (code, out, err) = run(&["list", "--policy", SITE]);
    assert_eq!(code, 0, "{err}");
    // only the rules an overlay touched carry indented lines (besides a
    // `for_each` rule's `aliases:` line and a tagged rule's `tags:` line)
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("  aliases: ") && !l.starts_with("  tags: "))
        .collect();
    let touched: Vec<&str> = lines
        .iter()
        .enumerate()
        .filter(|(i, l)| {
            l.starts_with("  ") || lines.get(i + 1).is_some_and(|n| n.starts_with("  "))
        })
        .map(|(_, l)| *l)
        .collect();
    snap("overlay-list-text", &touched.join("\n"));
    let bpf: Vec<&str> = out
        .lines()
        .find(|l| l.starts_with("linux.unprivileged-bpf "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(bpf[1], "disabled", "{out}");
    // untouched rules are listed as before
    let (_, plain, _) = run(&["list"]);
    assert_eq!(
        out.lines().filter(|l| !l.starts_with("  ")).count(),
        plain.lines().filter(|l| !l.starts_with("  ")).count()
    );
}

#[test]
fn list_json_carries_severity_disabled_and_provenance() {
    let (code, out, err) = run(&["list", "--policy", SITE, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Json = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], "driftaudit.rules/1");
    let rules = doc["rules"].as_array().unwrap();
    let get = |id: &str| rules.iter().find(|r| r["id"] == id).unwrap().clone();
    let touched: Vec<Json> = rules
        .iter()
        .filter(|r| !r["overridden"].as_array().unwrap().is_empty())
        .cloned()
        .map(|mut r| {
            // where the rule is written moves with its policy file: not pinned here
            assert!(r["source"]["line"].as_u64().unwrap() > 0);
            r.as_object_mut().unwrap().remove("source");
            r
        })
        .collect();
    snap(
        "overlay-list-json",
        &serde_json::to_string_pretty(&touched).unwrap(),
    );
    assert_eq!(get("linux.send-redirects")["severity"], "high");
    assert_eq!(get("linux.accept-redirects")["severity"], "high");
    assert_eq!(
        get("linux.unprivileged-bpf")["disabled"],
        "containers share the host kernel; the host image sets it"
    );
    assert_eq!(get("linux.aslr")["disabled"], Json::Null);
    assert_eq!(get("linux.aslr")["overridden"].as_array().unwrap().len(), 0);
}

#[test]
fn an_overlay_changes_severity_disables_a_rule_and_changes_a_parameter_in_check() {
    let before = report(&["--snapshot", ZIMBRA]);
    let after = report(&["--snapshot", ZIMBRA, "--policy", SITE]);

    // severity: the failing send-redirects finding is now high, and says who set it
    let f = findings(&before, "linux.send-redirects")[0];
    assert_eq!(
        (f["status"].as_str(), f["severity"].as_str()),
        (Some("fail"), Some("low"))
    );
    let f = findings(&after, "linux.send-redirects")[0];
    assert_eq!(
        (f["status"].as_str(), f["severity"].as_str()),
        (Some("fail"), Some("high"))
    );
    let o = &f["overridden"][0];
    assert_eq!(o["field"], "severity");
    assert_eq!(o["was"], "low");
    assert_eq!(o["set_by"]["path"], "testdata/overlays/site/prod.yaml");
    assert_eq!(o["set_by"]["line"], 7);

    // disabled: a failure before, a skip with the reason after (not a pass)
    let f = findings(&before, "linux.unprivileged-bpf")[0];
    assert_eq!(f["status"], "fail");
    let f = findings(&after, "linux.unprivileged-bpf");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["status"], "skip");
    assert_eq!(
        f[0]["explanation"],
        "disabled by testdata/overlays/site/prod.yaml:9:15: containers share the host kernel; the host image sets it"
    );

    // parameter for one rule: the 12 GiB pool passes a 16 GiB cap...
    let f = findings(&before, "zimbra.buffer-pool-cap")[0];
    assert_eq!(f["status"], "fail");
    let f = findings(&after, "zimbra.buffer-pool-cap")[0];
    assert_eq!(f["status"], "pass", "{f}");
    assert_eq!(f["expected"], "<= 16 GiB");
    let o = &f["overridden"][0];
    assert_eq!(
        (o["field"].as_str(), o["value"].as_str(), o["was"].as_str()),
        (Some("params.pool_cap"), Some("16G"), Some("10 GiB"))
    );
    assert_eq!(o["set_by"]["line"], 12);
    // ...while the other rule reading pool_cap keeps the policy's value
    let other = findings(&after, "zimbra.buffer-pool-fits-db")[0];
    assert!(other["overridden"].is_null(), "{other}");
    assert_eq!(
        findings(&before, "zimbra.buffer-pool-fits-db")[0]["status"],
        other["status"]
    );

    // the exit status follows the new severities
    let (code, _, _) = run(&["check", "--snapshot", ZIMBRA, "--fail-on", "high"]);
    assert_eq!(code, 1);
    let (code, _, _) = run(&[
        "check",
        "--snapshot",
        ZIMBRA,
        "--fail-on",
        "critical",
        "--policy",
        SITE,
    ]);
    assert_eq!(code, 0, "no critical failure with the overlay");
}

#[test]
fn a_disabled_rule_is_shown_with_its_reason_in_every_format() {
    let base = [
        "check",
        "--snapshot",
        ZIMBRA,
        "--policy",
        SITE,
        "--only",
        "linux.*",
    ];
    let reason = "containers share the host kernel; the host image sets it";
    let (_, text, _) = run(&base);
    let at = text.find("DISABLED (1)").expect(&text);
    snap(
        "overlay-disabled-text",
        text[at..]
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
            .as_str(),
    );
    assert!(text.contains("1 disabled by overlays"), "{text}");
    for format in ["markdown", "junit", "json", "sarif"] {
        let mut args = base.to_vec();
        args.extend(["--format", format]);
        let (_, out, err) = run(&args);
        assert!(out.contains(reason), "{format}: {out}{err}");
        assert!(
            out.contains("testdata/overlays/site/prod.yaml:9:15"),
            "{format}: {out}"
        );
    }
    let mut args = base.to_vec();
    args.extend(["--format", "junit"]);
    let (_, junit, _) = run(&args);
    let mut args = base.to_vec();
    args.extend(["--format", "sarif"]);
    let (_, sarif, _) = run(&args);
    let sarif: Json = serde_json::from_str(&sarif).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "linux.unprivileged-bpf")
        .expect("the disabled rule is on record");
    assert_eq!(
        (r["kind"].as_str(), r["level"].as_str()),
        (Some("notApplicable"), Some("none"))
    );
    assert_eq!(
        r["suppressions"][0]["justification"],
        format!("disabled by testdata/overlays/site/prod.yaml:9:15: {reason}")
    );
    let case = junit
        .split("<testcase ")
        .find(|c| c.starts_with("name=\"linux.unprivileged-bpf"))
        .expect(&junit);
    assert!(
        case.contains(&format!(
            "<skipped message=\"disabled by testdata/overlays/site/prod.yaml:9:15: {reason}\""
        )),
        "{case}"
    );
}

#[test]
fn only_and_waivers_see_the_overridden_rules() {
    // --only keeps a disabled rule's skip, with the reason
    let r = report(&[
        "--snapshot",
        ZIMBRA,
        "--policy",
        SITE,
        "--only",
        "linux.unprivileged-bpf",
    ]);
    let all = r["hosts"][0]["findings"].as_array().unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["status"], "skip");
    // a waiver still waives a finding whose severity an overlay raised
    let (_dir, waivers) = crate::common::tree::temp_file("w.yaml", "- rule: linux.send-redirects\n  reason: router role until the move (OPS-1)\n  expires: 2099-01-01\n");
    let r = report(&[
        "--snapshot",
        ZIMBRA,
        "--policy",
        SITE,
        "--waivers",
        waivers.to_str().unwrap(),
    ]);
    let f = findings(&r, "linux.send-redirects")[0];
    assert_eq!(
        (f["status"].as_str(), f["severity"].as_str()),
        (Some("waived"), Some("high"))
    );
    assert_eq!(f["overridden"][0]["field"], "severity");
}

#[test]
fn fleet_check_applies_the_overlay_to_every_host() {
    let dir = tempfile::tempdir().unwrap();
    for h in ["zimbra-khimki-12g", "nat-story"] {
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("testdata/hosts")
                .join(h),
            &dir.path().join(h),
        );
    }
    let (code, out, err) = run(&[
        "check",
        "--fleet",
        dir.path().to_str().unwrap(),
        "--policy",
        SITE,
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}");
    let r: Json = serde_json::from_str(&out).unwrap();
    let hosts = r["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2);
    for h in hosts {
        let bpf: Vec<&Json> = h["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "linux.unprivileged-bpf")
            .collect();
        assert_eq!(bpf.len(), 1);
        assert_eq!(bpf[0]["status"], "skip", "{}", h["host"]);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else if t.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn fix_plans_nothing_for_a_disabled_rule_and_uses_the_overridden_parameter() {
    let (_, before, err) = run(&["fix", "--snapshot", ZIMBRA, "--format", "json"]);
    let before: Json = serde_json::from_str(&before).unwrap_or_else(|e| panic!("{e}: {err}"));
    let (_, after, err) = run(&[
        "fix",
        "--snapshot",
        ZIMBRA,
        "--policy",
        SITE,
        "--format",
        "json",
    ]);
    let after: Json = serde_json::from_str(&after).unwrap_or_else(|e| panic!("{e}: {err}"));
    let mentions = |j: &Json, rule: &str| j.to_string().contains(&format!("\"{rule}\""));
    assert!(mentions(&before, "linux.unprivileged-bpf"), "{before}");
    assert!(!mentions(&after, "linux.unprivileged-bpf"), "{after}");
    // the 12 GiB pool is within the site's 16 GiB cap: nothing to fix for the cap
    assert!(mentions(&before, "zimbra.buffer-pool-cap"), "{before}");
    assert!(!mentions(&after, "zimbra.buffer-pool-cap"), "{after}");
}

#[test]
fn explain_says_which_file_set_each_value() {
    let (code, out, err) = run(&["explain", "zimbra.buffer-pool-cap", "--policy", SITE]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "params.pool_cap 16G (was 10 GiB) from testdata/overlays/site/prod.yaml:12:25"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "pool_cap = 16 GiB  (default 10G)  set by testdata/overlays/site/prod.yaml:12:25"
        ),
        "{out}"
    );
    let (_, out, _) = run(&["explain", "linux.send-redirects", "--policy", SITE]);
    assert!(out.starts_with("linux.send-redirects  (high)"), "{out}");
    says(
        &out,
        "severity high (was low) from testdata/overlays/site/prod.yaml:7:15",
    );
}

#[test]
fn two_files_of_one_directory_setting_different_severities_is_a_load_error_naming_both() {
    let (code, out, err) = run(&["list", "--policy", "testdata/overlays/conflict"]);
    assert_eq!(code, 2, "{out}");
    snap("overlay-conflict-error", &err);
    says(&err, "testdata/overlays/conflict/b.yaml:5:15:");
    says(&err, "testdata/overlays/conflict/a.yaml:5:15");
    // the same files as two --policy arguments: the later one wins
    let (code, out, err) = run(&[
        "list",
        "--policy",
        "testdata/overlays/conflict/a.yaml",
        "--policy",
        "testdata/overlays/conflict/b.yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .skip_while(|l| !l.starts_with("linux.tcp-tw-recycle "))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(line.contains(" low "), "{line}");
    says(
        &line,
        "severity low (was critical) from testdata/overlays/conflict/b.yaml:5:15",
    );
}

#[test]
fn later_policy_arguments_win_and_later_entries_of_one_file_win() {
    let (code, out, err) = run(&[
        "list",
        "--format",
        "json",
        "--policy",
        "testdata/overlays/base",
        "--policy",
        "testdata/overlays/prod",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: Json = serde_json::from_str(&out).unwrap();
    let get = |id: &str| {
        doc["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    // base: `linux.*` low, then tcp-tw-recycle medium (same file: in order)
    assert_eq!(get("linux.aslr")["severity"], "low");
    // prod, a later --policy: critical wins over base's medium
    let r = get("linux.tcp-tw-recycle");
    assert_eq!(r["severity"], "critical");
    assert_eq!(r["overridden"][0]["was"], "medium");
    assert_eq!(
        r["overridden"][0]["set_by"]["path"],
        "testdata/overlays/prod/site.yaml"
    );
    // a policy-wide parameter: noted on the rules that read it
    let r = get("zimbra.memory-budget");
    let o = &r["overridden"][0];
    assert_eq!(
        (o["field"].as_str(), o["value"].as_str()),
        (Some("params.budget_share"), Some("0.8"))
    );
    // --set is applied last, over every overlay
    let (_, out, _) = run(&[
        "explain",
        "zimbra.memory-budget",
        "--policy",
        "testdata/overlays/prod",
        "--set",
        "zimbra-memory.budget_share=0.7",
    ]);
    says(&out, "budget_share = 0.7  (default 0.6)  set by --set");
}

#[test]
fn a_pattern_or_parameter_that_matches_nothing_is_an_error_with_a_suggestion() {
    let (code, _, err) = run(&["list", "--policy", "testdata/overlays/typo"]);
    assert_eq!(code, 2);
    snap("overlay-typo-error", &err);
    says(&err, "did you mean `linux.tcp-tw-recycle`?");
    assert!(err.contains("did you mean `pool_cap`?"), "{err}");
}

#[test]
fn disabling_without_a_reason_and_entries_without_a_target_are_errors() {
    let (code, _, err) = run(&["list", "--policy", "testdata/overlays/noreason"]);
    assert_eq!(code, 2);
    snap("overlay-noreason-error", &err);
    assert_eq!(
        err.matches("disabled-without-reason").count(),
        0,
        "codes are not in messages"
    );
    assert_eq!(
        err.matches("`disabled` needs the reason").count(),
        2,
        "{err}"
    );
    assert!(err.contains("override changes nothing"), "{err}");
    assert!(err.contains("override names no target"), "{err}");
}

#[test]
fn an_added_applies_condition_skips_the_rule_where_it_does_not_hold() {
    let (_dir, p) = crate::common::tree::temp_file("site.yaml", "policy: site\ntitle: Site\noverrides:\n  - rule: linux.unprivileged-bpf\n    applies:\n      - kernel: \">= 99\"\n");
    let r = report(&["--snapshot", ZIMBRA, "--policy", p.to_str().unwrap()]);
    let f = findings(&r, "linux.unprivileged-bpf")[0];
    assert_eq!(f["status"], "skip", "{f}");
    crate::common::cli::starts(
        f["explanation"].as_str().unwrap(),
        "applies only to kernels >= 99; this host runs ",
    );
    assert_eq!(f["overridden"][0]["field"], "applies");
    assert_eq!(f["overridden"][0]["value"], "kernel: >= 99");
    // a bad condition is an error in the overlay file, with its place
    std::fs::write(
        &p,
        "policy: site\ntitle: Site\noverrides:\n  - rule: linux.unprivileged-bpf\n    applies:\n      - when: \"nosuchfact > 1\"\n",
    )
    .unwrap();
    let (code, _, err) = run(&["list", "--policy", p.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("site.yaml:6:16: rule `linux.unprivileged-bpf`: applies.when: unknown name `nosuchfact`"), "{err}");
}

#[test]
fn a_glob_conflicting_on_many_rules_is_one_error_per_pair_of_places() {
    let dir = tempfile::tempdir().unwrap();
    for (name, sev) in [("a.yaml", "high"), ("b.yaml", "low")] {
        std::fs::write(
            dir.path().join(name),
            format!("policy: site-{name}\ntitle: T\noverrides:\n  - rule: \"linux.tcp-*\"\n    severity: {sev}\n"),
        )
        .unwrap();
    }
    let (code, _, err) = run(&["list", "--policy", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(err.matches("conflicts with").count(), 1, "{err}");
    // the same value from both files is no conflict
    crate::common::tree::file(
        dir.path(),
        "b.yaml",
        "policy: site-b\ntitle: T\noverrides:\n  - rule: \"linux.tcp-*\"\n    severity: high\n",
    );
    let (code, out, err) = run(&["list", "--policy", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("a.yaml:5:15"),
        "the first file's place stands: {out}"
    );
}

#[test]
fn list_text_shows_each_for_each_rules_aliases_under_it() {
    // the ids users wrote before storage.yaml became one rule per concern
    // (`--only`, `--skip` and waivers match them) are listed under the rule
    let (code, out, err) = run(&["list"]);
    assert_eq!(code, 0, "{err}");
    let storage: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("storage.") || l.starts_with("  aliases: "))
        .collect();
    snap("list-aliases-text", &storage.join("\n"));
    // each alias line follows a rule line, and JSON lists the same aliases
    let (_, json, _) = run(&["list", "--format", "json"]);
    let doc: Json = serde_json::from_str(&json).unwrap();
    for r in doc["rules"].as_array().unwrap() {
        let aliases = common::cli::texts(&r["aliases"]);
        let id = r["id"].as_str().unwrap();
        let at = out
            .lines()
            .position(|l| l.split_whitespace().next() == Some(id))
            .unwrap();
        let next = out.lines().nth(at + 1).unwrap_or("");
        if aliases.is_empty() {
            assert!(!next.starts_with("  aliases: "), "{id}: {next}");
        } else {
            assert_eq!(next, format!("  aliases: {}", aliases.join(", ")), "{id}");
        }
    }
}
