//! Issue 30, the `fix` item: one edit per file and key, with every finding
//! it fixes listed against it (the plan's JSON `edits`, the stderr summary,
//! the patch's comment), one runtime step per command.

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{copy_tree as copy, run, testdata};
use crate::common::patch::gnu_patch;

use std::path::{Path, PathBuf};

/// The interfaces host with four interfaces whose reverse-path filter is
/// off (all = 0; default, eth0, eth1 and eth1/100 at 0), so that
/// linux.rp-filter fails four times and each finding's remedy is the same
/// `net.ipv4.conf.all.rp_filter = 2`.
fn four_interfaces_off() -> tempfile::TempDir {
    let t = copy(&testdata("foreach/ifaces"));
    let f = t.path().join("captures/sysctl-a.txt");
    let s: String = std::fs::read_to_string(&f)
        .unwrap()
        .lines()
        .map(|l| match l.split_once(" = ") {
            Some((k, _)) if k.ends_with(".rp_filter") => format!("{k} = 0\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(&f, s).unwrap();
    t
}

const IFACES: [&str; 4] = ["default", "eth0", "eth1", "eth1/100"];

#[test]
fn a_key_fixed_for_four_interfaces_is_written_once() {
    let t = four_interfaces_off();
    let dir = t.path().to_str().unwrap();
    let (code, patch, err) = run(&["fix", "--snapshot", dir, "--only", "linux.rp-filter"]);
    assert_eq!(code, 0, "{err}\n{patch}");
    let written = patch
        .lines()
        .filter(|l| l.starts_with('+') && l.contains("net.ipv4.conf.all.rp_filter ="))
        .count();
    assert_eq!(
        written, 1,
        "one edit for the key, not one per finding:\n{patch}"
    );
    // the edit's comment names every finding it fixes
    for i in IFACES {
        assert!(
            patch.contains(&format!("linux.rp-filter {i},")),
            "the comment does not name {i}:\n{patch}"
        );
    }
    // GNU patch applies it and the drop-in holds the key once
    let target = copy(t.path());
    if let Some((ok, out)) = gnu_patch(target.path(), &patch) {
        assert!(ok, "{out}\n{patch}");
        let drop_in =
            std::fs::read_to_string(target.path().join("etc/sysctl.d/99-driftaudit.conf")).unwrap();
        assert_eq!(
            drop_in.matches("net.ipv4.conf.all.rp_filter = 2").count(),
            1,
            "{drop_in}"
        );
    }

    // the JSON plan: one edit of that file and key, the four findings on it
    let v = json_plan(&[
        "fix",
        "--snapshot",
        dir,
        "--only",
        "linux.rp-filter",
        "--format",
        "json",
    ]);
    let edits = v["edits"]
        .as_array()
        .unwrap_or_else(|| panic!("no `edits` in {v:#}"));
    assert_eq!(edits.len(), 1, "{edits:#?}");
    assert_eq!(edits[0]["file"], "/etc/sysctl.d/99-driftaudit.conf");
    assert_eq!(edits[0]["key"], "net.ipv4.conf.all.rp_filter");
    let fixes = common::cli::texts(&edits[0]["fixes"]);
    assert_eq!(fixes.len(), 4, "{fixes:?}");
    for i in IFACES {
        assert!(
            fixes
                .iter()
                .any(|f| f.starts_with(&format!("linux.rp-filter {i},"))),
            "{i} not listed against the edit: {fixes:?}"
        );
    }
    // one runtime step for the one command, the same four findings on it
    let steps = v["runtime"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:#?}");
    assert_eq!(
        steps[0]["command"],
        "sysctl -w net.ipv4.conf.all.rp_filter=2"
    );
    assert_eq!(steps[0]["fixes"].as_array().unwrap().len(), 4);

    // the summary a user reads lists the edit once, with its four findings
    let edit_lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("edit /etc/sysctl.d/99-driftaudit.conf"))
        .collect();
    assert_eq!(edit_lines.len(), 1, "{err}");
    assert!(
        edit_lines[0].contains("net.ipv4.conf.all.rp_filter"),
        "{err}"
    );
    assert!(edit_lines[0].contains("for 4 findings"), "{err}");
    for i in IFACES {
        assert!(
            edit_lines[0].contains(&format!("linux.rp-filter {i},")),
            "{i}: {err}"
        );
    }
    let step_lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("step sysctl -w net.ipv4.conf.all.rp_filter=2"))
        .collect();
    assert_eq!(step_lines.len(), 1, "{err}");
    assert!(step_lines[0].contains("for 4 findings"), "{err}");
}

fn json_plan(args: &[&str]) -> serde_json::Value {
    let (_, stdout, stderr) = run(args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

/// The `edits` of a JSON plan as (file, key, number of findings).
fn edits(v: &serde_json::Value) -> Vec<(String, String, usize)> {
    v["edits"]
        .as_array()
        .unwrap_or_else(|| panic!("no `edits` in {v:#}"))
        .iter()
        .map(|e| {
            (
                e["file"].as_str().unwrap().to_string(),
                e["key"].as_str().unwrap().to_string(),
                e["fixes"].as_array().unwrap().len(),
            )
        })
        .collect()
}

/// `dir/mine.yaml`: policy `mine` with two rules, mine.a and mine.b, that
/// both check `setting` with `expect`.
fn two_rules(dir: &Path, setting: &str, expect: &str) -> PathBuf {
    let rule = |id: &str| {
        format!(
            "  - id: {id}\n    title: t\n    severity: low\n    setting: {setting}\n    \
             expect: {expect}\n    why: w\n    fix: f\n    references: []\n"
        )
    };
    let pol = dir.join("mine.yaml");
    std::fs::write(
        &pol,
        format!(
            "policy: mine\ntitle: Mine\nrules:\n{}{}",
            rule("mine.a"),
            rule("mine.b")
        ),
    )
    .unwrap();
    pol
}

#[test]
fn two_rules_adding_one_missing_option_add_it_once() {
    // mysql-healthy sets no max_allowed_packet; two rules want 64M
    let d = tempfile::tempdir().unwrap();
    let pol = two_rules(
        d.path(),
        "mycnf.max_allowed_packet",
        "{ equals: 64M, present: true }",
    );
    let h = testdata("hosts/mysql-healthy");
    let args = [
        "fix",
        "--snapshot",
        h.to_str().unwrap(),
        "--policy",
        pol.to_str().unwrap(),
        "--only",
        "mine.*",
    ];
    let (_, patch, err) = run(&args);
    let added = patch
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+#") && l.contains("max_allowed_packet"))
        .count();
    assert_eq!(added, 1, "the option is added once:\n{patch}\n{err}");
    says(&patch, "mine.a");
    says(&patch, "mine.b");
    let mut args_json = args.to_vec();
    args_json.extend(["--format", "json"]);
    let e = edits(&json_plan(&args_json));
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(
        (e[0].1.as_str(), e[0].2),
        ("max_allowed_packet", 2),
        "{e:?}"
    );
}

#[test]
fn two_rules_fixing_one_fstab_entry_are_one_edit_and_one_remount() {
    // storage.noatime and storage.noatime-fstab both add noatime to the
    // index volume's entry
    let h = testdata("hosts/zimbra-storage-nodirs");
    let h = h.to_str().unwrap();
    let mut args = vec!["fix", "--snapshot", h];
    args.extend(["--only", "storage.noatime*", "--format", "json"]);
    let v = json_plan(&args);
    let e = edits(&v);
    assert_eq!(
        e,
        vec![("/etc/fstab".to_string(), "/opt/zimbra/index".to_string(), 2)],
        "{v:#}"
    );
    let steps = v["runtime"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{steps:#?}");
    assert_eq!(steps[0]["fixes"].as_array().unwrap().len(), 2);
    // each finding shows the change that fixes it, not "the other changes"
    for f in v["fixes"].as_array().unwrap() {
        let after = f["after"].as_str().unwrap();
        assert!(!after.contains("other changes"), "{v:#}");
        assert!(after.contains("noatime"), "{v:#}");
    }
}

#[test]
fn two_rules_setting_one_localconfig_key_are_one_zmlocalconfig_step() {
    let d = tempfile::tempdir().unwrap();
    let pol = two_rules(
        d.path(),
        "localconfig.mailboxd_java_heap_size",
        "{ equals: 4096 }",
    );
    let h = testdata("hosts/zimbra-khimki-12g");
    let v = json_plan(&[
        "fix",
        "--snapshot",
        h.to_str().unwrap(),
        "--policy",
        pol.to_str().unwrap(),
        "--only",
        "mine.*",
        "--format",
        "json",
    ]);
    assert_eq!(v["patch"], "", "localconfig is never patched: {v:#}");
    assert_eq!(edits(&v), vec![], "{v:#}");
    let steps: Vec<&serde_json::Value> = v["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["command"].as_str().unwrap().contains("zmlocalconfig -e"))
        .collect();
    assert_eq!(steps.len(), 1, "{v:#}");
    assert_eq!(steps[0]["fixes"].as_array().unwrap().len(), 2, "{v:#}");
}
