//! `for_each:` through the binary over small tempdir snapshots: a list
//! parameter (with `${...}` fields, a per-item `when`, a `setting:` key and
//! `expect:` built from the item, a `subject:` template), sysctl key globs
//! (the text `*` matched, `.key`, `.value`), records with a `where:`
//! filter, empty expansions (never a silent pass), the item cap, compile
//! errors, `--set` on a list parameter, an overlay replacing the list, and
//! two items of one rule on one host kept apart in JSON and JUnit.

use std::path::Path;

use serde_json::Value as Json;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::cli::{json, run};

fn policy_file(dir: &Path, yaml: &str) -> String {
    let p = dir.join("p.yaml");
    std::fs::write(&p, yaml).unwrap();
    p.to_string_lossy().into_owned()
}

fn check(snap: &Path, policy: &str, extra: &[&str]) -> Json {
    let mut args = vec![
        "check",
        "--no-builtin",
        "--policy",
        policy,
        "--snapshot",
        snap.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend(extra);
    let (code, out, err) = run(&args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    json(&out)
}

/// A snapshot of `files` checked against the policy `yaml` alone: the
/// snapshot, the policy file's path and the JSON report.
fn checked(files: &[(&str, &str)], yaml: &str) -> (tempfile::TempDir, String, Json) {
    let snap = audit::stamped("t1", files);
    let pol = policy_file(snap.path(), yaml);
    let r = check(snap.path(), &pol, &[]);
    (snap, pol, r)
}

/// (rule, first subject, status) of every finding of rule `id`.
fn verdicts(r: &Json, id: &str) -> Vec<(String, String, String)> {
    r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == id)
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["subject"][0].as_str().unwrap_or("").to_string(),
                f["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn finding<'a>(r: &'a Json, id: &str, subject: &str) -> &'a Json {
    r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == id && f["subject"][0] == subject)
        .unwrap_or_else(|| panic!("no finding {id}[{subject}] in {r:#}"))
}

fn v(rule: &str, subject: &str, status: &str) -> (String, String, String) {
    (rule.into(), subject.into(), status.into())
}

const SYSCTL: &str = "net.ipv4.conf.all.rp_filter = 0
net.ipv4.conf.default.rp_filter = 1
net.ipv4.conf.eth0.rp_filter = 0
net.ipv4.conf.eth0/100.rp_filter = 2
net.ipv4.conf.br-lan.rp_filter = 1
net.ipv4.conf.lo.rp_filter = 0
net.ipv4.ip_forward = 0
";

const KEYS_POLICY: &str = r#"policy: t
title: t
rules:
  - id: t.rp-filter
    title: rp_filter on each interface
    severity: low
    for_each: { keys: "sysctl.net.ipv4.conf.*.rp_filter", as: iface }
    applies:
      - when: iface != "all" and iface != "default" and iface != "lo"
    let:
      effective: max(sysctl.net.ipv4.conf.all.rp_filter, iface.value)
    assert: effective >= 1
    why: "{iface} ({iface.key}) filters with {effective}"
    fix: "sysctl -w {iface.key}=1"
"#;

#[test]
fn a_key_glob_binds_the_text_the_star_matched_and_each_key_is_a_finding() {
    let (_snap, _pol, r) = checked(&[("captures/sysctl-a.txt", SYSCTL)], KEYS_POLICY);
    let mut got = verdicts(&r, "t.rp-filter");
    got.sort();
    assert_eq!(
        got,
        [
            v("t.rp-filter", "all", "skip"),
            v("t.rp-filter", "br-lan", "pass"),
            v("t.rp-filter", "default", "skip"),
            v("t.rp-filter", "eth0", "fail"),
            v("t.rp-filter", "eth0/100", "pass"),
            v("t.rp-filter", "lo", "skip"),
        ]
    );
    let eth0 = finding(&r, "t.rp-filter", "eth0");
    assert_eq!(
        eth0["explanation"],
        "eth0 (net.ipv4.conf.eth0.rp_filter) filters with 0"
    );
    assert_eq!(eth0["fix"], "sysctl -w net.ipv4.conf.eth0.rp_filter=1");
    // the values read are evidence, with the capture's line
    let ev = eth0["evidence"].to_string();
    assert!(ev.contains("sysctl-a.txt"), "{ev}");
}

#[test]
fn a_key_glob_over_a_namespace_not_captured_is_unknown_and_an_empty_one_is_one_skip() {
    // no sysctl source at all: unknown, naming the capture that decides it
    let (_snap, _pol, r) = checked(&[("etc/hostname", "t1\n")], KEYS_POLICY);
    let f = verdicts(&r, "t.rp-filter");
    assert_eq!(f, [v("t.rp-filter", "", "unknown")], "{r:#}");
    let text = r["hosts"][0]["findings"][0]["explanation"]
        .as_str()
        .unwrap();
    assert!(text.contains("sysctl-a.txt"), "{text}");
    // captured, but no key matches: one skip that says so
    let (_snap, _pol, r) = checked(
        &[("captures/sysctl-a.txt", "net.ipv4.ip_forward = 0\n")],
        KEYS_POLICY,
    );
    let f = &r["hosts"][0]["findings"][0];
    assert_eq!(f["status"], "skip", "{r:#}");
    says(
        f["explanation"].as_str().unwrap(),
        "no key of sysctl matches",
    );
}

const LIST_POLICY: &str = r#"policy: t
title: t
params:
  base: /srv
  dirs:
    - { id: data, name: Data volume, path: "${params.base}/data", when: "true" }
    - { id: logs, name: Log volume, path: /var/log, min: 2 }
    - { id: never, name: Skipped, path: /nowhere, when: "false" }
rules:
  - id: t.dir
    title: directory items
    severity: low
    for_each: { param: dirs, as: dir }
    subject: "{dir.id}:{dir.path}"
    setting: "sysctl.net.ipv4.conf.${dir.id}.rp_filter"
    expect: { min: "${default(dir.min, 1)}" }
    why: "{dir.name} at {dir.path}: {actual} from {source}"
    fix: "set {setting} to at least {expected}"
"#;

#[test]
fn a_list_parameter_gives_each_item_its_finding_with_setting_provenance() {
    let (_snap, _pol, r) = checked(
        &[(
            "captures/sysctl-a.txt",
            "net.ipv4.conf.data.rp_filter = 0\nnet.ipv4.conf.logs.rp_filter = 2\n",
        )],
        LIST_POLICY,
    );
    assert_eq!(
        verdicts(&r, "t.dir"),
        [
            v("t.dir", "data:/srv/data", "fail"),
            v("t.dir", "logs:/var/log", "pass"),
            v("t.dir", "never:/nowhere", "skip"),
        ]
    );
    let data = finding(&r, "t.dir", "data:/srv/data");
    assert_eq!(data["actual"], "0");
    assert_eq!(data["expected"], ">= 1");
    assert_eq!(
        data["explanation"],
        "Data volume at /srv/data: 0 from /captures/sysctl-a.txt:1"
    );
    assert_eq!(
        data["fix"],
        "set net.ipv4.conf.data.rp_filter to at least >= 1"
    );
    assert!(data["subject"]
        .as_array()
        .unwrap()
        .contains(&Json::from("net.ipv4.conf.data.rp_filter")));
    let never = finding(&r, "t.dir", "never:/nowhere");
    assert!(
        never["explanation"].as_str().unwrap().contains("false"),
        "{never}"
    );
}

#[test]
fn two_items_of_one_rule_on_one_host_stay_apart_in_json_and_junit() {
    let (snap, pol, r) = checked(
        &[(
            "captures/sysctl-a.txt",
            "net.ipv4.conf.data.rp_filter = 0\nnet.ipv4.conf.logs.rp_filter = 0\n",
        )],
        LIST_POLICY,
    );
    let fails: Vec<_> = verdicts(&r, "t.dir")
        .into_iter()
        .filter(|x| x.2 == "fail")
        .collect();
    assert_eq!(fails.len(), 2, "{r:#}");
    let (code, junit, err) = run(&[
        "check",
        "--no-builtin",
        "--policy",
        &pol,
        "--snapshot",
        snap.path().to_str().unwrap(),
        "--format",
        "junit",
    ]);
    assert_eq!(code, 1, "{err}");
    for name in ["t.dir[data:/srv/data,", "t.dir[logs:/var/log,"] {
        assert_eq!(junit.matches(name).count(), 1, "{name} in {junit}");
    }
    // SARIF: one result per item, distinct fingerprints
    let (_, sarif, _) = run(&[
        "check",
        "--no-builtin",
        "--policy",
        &pol,
        "--snapshot",
        snap.path().to_str().unwrap(),
        "--format",
        "sarif",
    ]);
    let sarif: Json = serde_json::from_str(&sarif).unwrap();
    let prints: std::collections::BTreeSet<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["partialFingerprints"].to_string())
        .collect();
    assert_eq!(prints.len(), 2, "{sarif:#}");
}

#[test]
fn an_overlay_replaces_a_list_and_set_on_a_list_is_a_usage_error() {
    let snap = audit::stamped(
        "t1",
        &[(
            "captures/sysctl-a.txt",
            "net.ipv4.conf.data.rp_filter = 0\nnet.ipv4.conf.logs.rp_filter = 2\n",
        )],
    );
    let pol = policy_file(snap.path(), LIST_POLICY);
    let (code, _, err) = run(&[
        "check",
        "--no-builtin",
        "--policy",
        &pol,
        "--snapshot",
        snap.path().to_str().unwrap(),
        "--set",
        "dirs=/x",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("`dirs` is a list parameter"), "{err}");
    let site = snap.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::copy(&pol, site.join("p.yaml")).unwrap();
    std::fs::write(
        site.join("z-site.yaml"),
        "policy: site\ntitle: site\noverrides:\n  - policy: t\n    params:\n      dirs: [{id: logs, path: /var/log}]\n",
    )
    .unwrap();
    let r = check(snap.path(), site.to_str().unwrap(), &[]);
    assert_eq!(verdicts(&r, "t.dir"), [v("t.dir", "logs:/var/log", "pass")]);
}

#[test]
fn records_with_a_where_filter_bind_each_record() {
    let mountinfo = "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                     2 1 8:2 / /data rw,noatime - ext4 /dev/sda2 rw\n\
                     3 1 0:5 / /tmp rw - tmpfs tmpfs rw\n";
    let snap = audit::stamped("t1", &[("proc/self/mountinfo", mountinfo)]);
    let pol = policy_file(
        snap.path(),
        r#"policy: t
title: t
rules:
  - id: t.noatime
    title: ext4 mounts noatime
    severity: low
    for_each: { records: mount, where: "fstype == \"ext4\"", as: m }
    assert: m.atime == "noatime"
    why: "{m.key} on {m.source} is mounted {m.atime}"
    fix: "remount {m.key} noatime"
"#,
    );
    let r = check(snap.path(), &pol, &[]);
    assert_eq!(
        verdicts(&r, "t.noatime"),
        [v("t.noatime", "/", "fail"), v("t.noatime", "/data", "pass")]
    );
    assert_eq!(
        finding(&r, "t.noatime", "/")["explanation"],
        "/ on /dev/sda1 is mounted relatime"
    );
    // a filter nothing passes: one skip
    let pol = policy_file(
        snap.path(),
        &std::fs::read_to_string(&pol)
            .unwrap()
            .replace("\\\"ext4\\\"", "\\\"xfs\\\""),
    );
    let r = check(snap.path(), &pol, &[]);
    let f = verdicts(&r, "t.noatime");
    assert_eq!(f, [v("t.noatime", "", "skip")], "{r:#}");
}

#[test]
fn a_list_longer_than_the_cap_is_an_error_not_ten_thousand_findings() {
    let items: Vec<String> = (0..10_001).map(|i| format!("    - {{id: i{i}}}")).collect();
    let yaml = format!(
        "policy: t\ntitle: t\nparams:\n  many:\n{}\nrules:\n  - id: t.many\n    title: t\n    severity: low\n    for_each: {{ param: many }}\n    assert: \"true\"\n    why: w\n    fix: f\n",
        items.join("\n")
    );
    let (_snap, _pol, r) = checked(&[("etc/hostname", "t1\n")], &yaml);
    let f = verdicts(&r, "t.many");
    assert_eq!(f, [v("t.many", "", "error")]);
    let text = r["hosts"][0]["findings"][0]["explanation"].to_string();
    assert!(text.contains("10000"), "{text}");
}

#[test]
fn for_each_problems_are_load_errors_with_their_place() {
    let bad = |rule: &str| {
        let snap = audit::stamped("t1", &[("etc/hostname", "t1\n")]);
        let yaml = format!(
            "policy: t\ntitle: t\nparams:\n  one: 3\n  dirs: [{{id: a}}]\nrules:\n  - id: t.x\n    title: t\n    severity: low\n{rule}    why: w\n    fix: f\n"
        );
        let pol = policy_file(snap.path(), &yaml);
        let (code, _, err) = run(&["list", "--no-builtin", "--policy", &pol]);
        assert_eq!(code, 2, "{err}");
        err
    };
    let e = bad("    for_each: { param: one }\n    assert: \"true\"\n");
    assert!(e.contains("`param: one` is a number, not a list"), "{e}");
    let e = bad("    for_each: { param: dirs, keys: \"sysctl.a.*\" }\n    assert: \"true\"\n");
    says(&e, "exactly one of `param`, `keys` or `records`");
    let e = bad("    for_each: { keys: \"sysctl.a.?\" }\n    assert: \"true\"\n");
    assert!(e.contains("the only wildcard is `*`"), "{e}");
    let e = bad("    for_each: { records: sysctl }\n    assert: \"true\"\n");
    assert!(e.contains("not a record namespace"), "{e}");
    let e = bad("    for_each: { param: dirs, as: mem_total }\n    assert: \"true\"\n");
    assert!(e.contains("would hide"), "{e}");
    let e = bad("    subject: \"{x}\"\n    assert: \"true\"\n");
    assert!(e.contains("`subject` names the item"), "{e}");
    let e = bad("    for_each: { param: dirs }\n    assert: \"itme.id == 'a'\"\n");
    assert!(e.contains("unknown name `itme`"), "{e}");
}

const STORAGE_BEFORE: &str = "testdata/hosts/zimbra-storage-before";

/// Findings of the built-in policies on a shipped host, as JSON.
fn builtin(args: &[&str]) -> Json {
    let mut all = vec!["check", "--snapshot", STORAGE_BEFORE, "--format", "json"];
    all.extend(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn all_findings(r: &Json) -> Vec<&Json> {
    r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != "driftaudit.input")
        .collect()
}

#[test]
fn an_old_storage_id_in_only_selects_exactly_that_item() {
    let r = builtin(&["--only", "storage.noatime-zimbra-db"]);
    let f = all_findings(&r);
    assert_eq!(f.len(), 1, "{r:#}");
    assert_eq!(f[0]["rule"], "storage.noatime");
    assert_eq!(f[0]["alias"], "storage.noatime-zimbra-db");
    assert_eq!(f[0]["subject"][0], "zimbra-db");
    assert_eq!(f[0]["status"], "fail");
    // the new id selects every item; an old-id glob the items it matches
    let r = builtin(&["--only", "storage.noatime"]);
    let mut subjects: Vec<&str> = all_findings(&r)
        .iter()
        .map(|f| f["subject"][0].as_str().unwrap())
        .collect();
    subjects.sort();
    assert_eq!(subjects, ["mysql", "zimbra-db", "zimbra-index"]);
    let r = builtin(&["--only", "storage.*-on-rotational"]);
    assert_eq!(all_findings(&r).len(), 3);
    // --skip with an old id leaves that item out and keeps the others
    let r = builtin(&[
        "--only",
        "storage.noatime",
        "--skip",
        "storage.noatime-mysql",
    ]);
    let mut aliases: Vec<&str> = all_findings(&r)
        .iter()
        .map(|f| f["alias"].as_str().unwrap())
        .collect();
    aliases.sort();
    assert_eq!(
        aliases,
        ["storage.noatime-zimbra-db", "storage.noatime-zimbra-index"]
    );
}

#[test]
fn an_existing_waiver_file_with_old_storage_ids_still_waives() {
    let (_dir, waivers) = crate::common::tree::temp_file("waivers.yaml", "- rule: storage.noatime-zimbra-db\n  reason: database volume remounted in the next window (OPS-1)\n  expires: 2099-12-31\n\
         - rule: storage.db-*\n  reason: SSD migration planned (OPS-2)\n  expires: 2099-12-31\n");
    let r = builtin(&[
        "--only",
        "storage.*",
        "--waivers",
        waivers.to_str().unwrap(),
    ]);
    let mut waived: Vec<String> = all_findings(&r)
        .iter()
        .filter(|f| !f["waiver"].is_null())
        .map(|f| f["alias"].as_str().unwrap_or("").to_string())
        .collect();
    waived.sort();
    assert_eq!(
        waived,
        [
            "storage.db-on-rotational",
            "storage.db-shares-volume",
            "storage.noatime-zimbra-db"
        ],
        "{r:#}"
    );
    // the index's items of the same rules are not waived
    let idx = all_findings(&r)
        .into_iter()
        .find(|f| f["alias"] == "storage.noatime-zimbra-index")
        .unwrap();
    assert!(idx["waiver"].is_null());
    assert_eq!(idx["status"], "fail");
}

fn rp_filter(sysctl: &str) -> Vec<(String, String, String)> {
    let snap = audit::stamped("t1", &[("captures/sysctl-a.txt", sysctl)]);
    let (code, out, err) = run(&[
        "check",
        "--snapshot",
        snap.path().to_str().unwrap(),
        "--only",
        "linux.rp-filter",
        "--format",
        "json",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let r: Json = serde_json::from_str(&out).unwrap();
    let mut v = verdicts(&r, "linux.rp-filter");
    v.sort();
    v
}

#[test]
fn rp_filter_is_judged_per_interface_as_max_of_all_and_the_interface() {
    let r = "linux.rp-filter";
    // (case, the sysctl capture, the (interface, status) verdicts)
    type Case = (
        &'static str,
        &'static str,
        &'static [(&'static str, &'static str)],
    );
    let cases: [Case; 3] = [
        (
            // the issue's example: a live interface with 0 under all = 0 passed before
            "eth0 = 0 under all = 0",
            "net.ipv4.conf.all.rp_filter = 0\nnet.ipv4.conf.default.rp_filter = 1\nnet.ipv4.conf.eth0.rp_filter = 0\nnet.ipv4.conf.lo.rp_filter = 0\n",
            &[("all", "skip"), ("default", "pass"), ("eth0", "fail"), ("lo", "skip")],
        ),
        (
            "all = 1 covers eth0 = 0 (the effective value is the max)",
            "net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.default.rp_filter = 0\nnet.ipv4.conf.eth0.rp_filter = 0\n",
            &[("all", "skip"), ("default", "pass"), ("eth0", "pass")],
        ),
        (
            "`default` is judged for interfaces created later",
            "net.ipv4.conf.all.rp_filter = 0\nnet.ipv4.conf.default.rp_filter = 0\nnet.ipv4.conf.eth0.rp_filter = 2\n",
            &[("all", "skip"), ("default", "fail"), ("eth0", "pass")],
        ),
    ];
    for (case, sysctl, want) in cases {
        let want: Vec<_> = want.iter().map(|(i, st)| v(r, i, st)).collect();
        assert_eq!(rp_filter(sysctl), want, "{case}");
    }
}

#[test]
fn the_old_storage_parameters_still_move_the_items() {
    let subject_of = |r: &Json, alias: &str| -> (String, String) {
        let f = all_findings(r)
            .into_iter()
            .find(|f| f["alias"] == alias)
            .unwrap_or_else(|| panic!("{alias}: {r:#}"))
            .clone();
        (
            f["status"].as_str().unwrap().to_string(),
            f["explanation"].as_str().unwrap().to_string(),
        )
    };
    // --set, as before the rewrite
    let r = builtin(&[
        "--only",
        "storage.noatime",
        "--set",
        "zimbra_db_dir=/srv/zdb",
    ]);
    // the snapshot cannot tell whether /srv/zdb exists: unknown, naming it
    let (status, why) = subject_of(&r, "storage.noatime-zimbra-db");
    assert_eq!(status, "unknown", "{why}");
    assert!(why.contains("applies only where /srv/zdb exists"), "{why}");
    assert_eq!(subject_of(&r, "storage.noatime-zimbra-index").0, "fail");
    // an overlay's rule-level params reach the rule through its items
    let dir = tempfile::tempdir().unwrap();
    crate::common::tree::file(dir.path(), "site.yaml", "policy: site\ntitle: site\noverrides:\n  - rule: storage.noatime\n    params: { zimbra_db_dir: /srv/zdb }\n");
    let r = builtin(&[
        "--only",
        "storage.noatime*",
        "--policy",
        dir.path().to_str().unwrap(),
    ]);
    let (status, why) = subject_of(&r, "storage.noatime-zimbra-db");
    assert_eq!(status, "unknown", "{why}");
    assert!(why.contains("/srv/zdb"), "{why}");
    // the fstab rule was not overridden: it still judges /opt/zimbra/db
    assert_eq!(subject_of(&r, "storage.noatime-zimbra-db-fstab").0, "fail");
}

#[test]
fn an_excepted_item_is_skipped_with_its_reason_in_plain_words_in_every_report() {
    // linux.rp-filter's `except:` leaves out `lo` and `all`, each with why
    let snap = audit::stamped("t1", &[(
        "captures/sysctl-a.txt",
        "net.ipv4.conf.all.rp_filter = 1\nnet.ipv4.conf.eth0.rp_filter = 0\nnet.ipv4.conf.lo.rp_filter = 0\n",
    )]);
    let lo = "loopback traffic is locally generated, so the kernel never reverse-path filters it: rp_filter on lo has no effect";
    let all = "`all` is not an interface: its value is folded into every interface's effective value, max(all, interface), which each interface's finding judges";
    let args = |format: &'static str| {
        vec![
            "check".to_string(),
            "--snapshot".into(),
            snap.path().to_str().unwrap().into(),
            "--only".into(),
            "linux.rp-filter".into(),
            "--format".into(),
            format.into(),
        ]
    };
    let out = |format: &'static str| {
        let a = args(format);
        let (code, out, err) = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{err}");
        out
    };
    let r: Json = serde_json::from_str(&out("json")).unwrap();
    for (item, why) in [("lo", lo), ("all", all)] {
        let f = finding(&r, "linux.rp-filter", item);
        assert_eq!(f["status"], "skip", "{f}");
        assert_eq!(f["explanation"], why, "{f}");
    }
    // text lists skips with --verbose
    let mut a = args("text");
    a.push("--verbose".into());
    let (code, text, err) = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    for (item, why) in [("lo", lo), ("all", all)] {
        let line = format!("skip linux.rp-filter [{item}]  {why}");
        assert!(text.contains(&line), "{line}:\n{text}");
    }
    assert!(!text.contains("iface !="), "no expression quoted: {text}");
    let junit = out("junit");
    for why in [lo, all] {
        let why = why.replace('\'', "&apos;");
        assert!(junit.contains(&why), "{why}:\n{junit}");
    }
}

#[test]
fn an_except_without_a_reason_is_a_load_error() {
    let snap = audit::stamped("t1", &[("captures/sysctl-a.txt", SYSCTL)]);
    let pol = policy_file(
        snap.path(),
        &KEYS_POLICY.replace("as: iface }", "as: iface, except: { lo: \"  \" } }"),
    );
    let (code, _, err) = run(&[
        "check",
        "--no-builtin",
        "--policy",
        &pol,
        "--snapshot",
        snap.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("p.yaml:7:85:"), "{err}");
    says(&err, "`except: {lo: ...}` needs the reason in plain words");
}

/// Issue 30, volume under control: a rule's findings over many subjects
/// (rp_filter off on four interfaces of testdata/foreach/ifaces-open) are
/// one heading in text output, rule id, title and severity once, then a
/// line per interface with its actual value and its own file:line, read
/// back against the JSON report of the same check.
#[test]
fn check_text_shows_one_rules_findings_over_many_interfaces_under_one_heading() {
    let snap = "testdata/foreach/ifaces-open";
    let (code, json, err) = run(&["check", "--snapshot", snap, "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let r: Json = serde_json::from_str(&json).unwrap();
    let fails: Vec<&Json> = r["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "linux.rp-filter" && f["status"] == "fail")
        .collect();
    assert!(fails.len() >= 3, "{json}");
    let at = |f: &Json| -> Vec<String> {
        f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{}:{}", e["path"].as_str().unwrap(), e["line"]))
            .collect()
    };
    let shared: Vec<String> = at(fails[0])
        .into_iter()
        .filter(|e| fails.iter().all(|f| at(f).contains(e)))
        .collect();

    // only the rule: other policies' low findings on this host (linux-mounts)
    // would join the LOW count
    let (code, text, err) = run(&["check", "--snapshot", snap, "--only", "linux.rp-filter"]);
    assert_eq!(code, 1, "{err}");
    let title = fails[0]["title"].as_str().unwrap();
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("linux.rp-filter"))
        .collect();
    assert_eq!(heads.len(), 1, "one heading for the rule: {text}");
    assert!(
        heads[0].starts_with("  FAIL linux.rp-filter ")
            && heads[0].ends_with(&format!("{title}  ({} subjects)", fails.len())),
        "{}",
        heads[0]
    );
    assert_eq!(text.matches(title).count(), 1, "{text}");
    says(&text, &format!("\nLOW ({})\n", fails.len()));
    for e in &shared {
        assert_eq!(
            text.matches(&format!("      at {e}\n")).count(),
            1,
            "{text}"
        );
    }
    for f in &fails {
        let iface = f["subject"][0].as_str().unwrap();
        let own: Vec<String> = at(f).into_iter().filter(|e| !shared.contains(e)).collect();
        let line = format!(
            "      [{iface}] actual: {}    at {}\n",
            f["actual"].as_str().unwrap(),
            own.join(", ")
        );
        assert!(!own.is_empty() && text.contains(&line), "{line}{text}");
    }
    // a rule with one finding keeps the finding's own heading
    let (_, one, _) = run(&["check", "--snapshot", "testdata/foreach/ifaces"]);
    let heads: Vec<&str> = one
        .lines()
        .filter(|l| l.contains("linux.rp-filter"))
        .collect();
    assert_eq!(heads.len(), 1, "{one}");
    assert!(
        heads[0].starts_with("  FAIL linux.rp-filter [eth0, ") && !heads[0].contains("subjects"),
        "{one}"
    );
}

/// Issue 30, text for people: an assertion's expected in words names the
/// setting read on either side (a constant first is turned round), gives
/// the other side's value computed on this host, and says `not a == b` as
/// `a is not b`; a for_each item's field is named by its field; the JSON
/// `expected` keeps the expression.
#[test]
fn expected_in_words_names_the_setting_read_and_computes_the_other_side() {
    let snap = audit::stamped(
        "t1",
        &[(
            "captures/sysctl-a.txt",
            "net.core.somaxconn = 128\nvm.swappiness = 60\nnet.ipv4.ip_forward = 1\n\
         net.ipv4.conf.all.rp_filter = 0\nnet.ipv4.conf.eth0.rp_filter = 0\n",
        )],
    );
    let pol = policy_file(
        snap.path(),
        r#"policy: t
title: t
params:
  backlog: 512
rules:
  - id: t.flip
    title: t
    severity: low
    assert: params.backlog * 2 <= sysctl.net.core.somaxconn
    why: w
    fix: f
  - id: t.mix
    title: t
    severity: low
    assert: sysctl.vm.swappiness < 2 * 5 and not sysctl.net.ipv4.ip_forward == 1
    why: w
    fix: f
  - id: t.item
    title: t
    severity: low
    for_each: { keys: "sysctl.net.ipv4.conf.*.rp_filter", as: iface }
    applies:
      - when: iface == "eth0"
    assert: iface.value >= 1
    why: w
    fix: f
"#,
    );
    let r = check(snap.path(), &pol, &[]);
    let words = |id: &str| {
        let f = r["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == id && f["status"] == "fail")
            .unwrap_or_else(|| panic!("{id} fails: {r:#}"));
        (
            f["expected"].as_str().unwrap().to_string(),
            f["expected_words"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        words("t.flip"),
        (
            "(params.backlog * 2) <= sysctl.net.core.somaxconn".into(),
            "net.core.somaxconn at least 1024".into()
        )
    );
    assert_eq!(
        words("t.mix").1,
        "vm.swappiness less than 10 and net.ipv4.ip_forward is not 1"
    );
    assert_eq!(words("t.item").1, "value at least 1");
}

#[test]
fn a_where_naming_a_field_bare_still_judges_and_check_says_how_to_write_it() {
    let mountinfo = "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                     2 1 0:5 / /tmp rw - tmpfs tmpfs rw\n";
    let snap = audit::stamped("t1", &[("proc/self/mountinfo", mountinfo)]);
    let yaml = |filter: &str| {
        format!(
            "policy: t\ntitle: t\nrules:\n  - id: t.noatime\n    title: ext4 mounts noatime\n    severity: low\n    for_each: {{ records: mount, where: '{filter}', as: m }}\n    assert: m.atime == \"noatime\"\n    why: w\n    fix: f\n"
        )
    };
    let run_with = |filter: &str| {
        let pol = policy_file(snap.path(), &yaml(filter));
        let (code, out, err) = run(&[
            "check",
            "--no-builtin",
            "--policy",
            &pol,
            "--snapshot",
            snap.path().to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code, 1, "{err}");
        (verdicts(&json(&out), "t.noatime"), err)
    };
    let (old, warned) = run_with("fstype == \"ext4\"");
    let (new, quiet) = run_with("m.fstype == \"ext4\"");
    assert_eq!(old, [v("t.noatime", "/", "fail")]);
    assert_eq!(old, new, "the retired spelling means what it meant");
    says(&warned, "warning[where-bare-field]: ");
    says(&warned, "p.yaml:7:41: rule `t.noatime`");
    says(&warned, "write `m.fstype`");
    assert!(!quiet.contains("warning"), "{quiet}");
}
