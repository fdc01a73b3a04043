//! Typed parameters (issue 49): every shipped parameter declares its type,
//! and a value of another type stops the run with exit 2, naming what is
//! allowed, whether it comes from `--set`, an overlay or a policy test. No
//! rule evaluates with it, so `--set storage.assume_media=sdd` can no
//! longer pass `storage.on-rotational` with exit 0.

use crate::common::audit;
use crate::common::cli::{host, run, says};
use driftaudit::unstable::policy::ParamType;

/// A value of the wrong type for `t`, and a word the refusal must hold.
fn wrong(t: &ParamType) -> Vec<(String, &'static str)> {
    match t {
        ParamType::Number { min, max } => {
            let mut v = vec![("abc".to_string(), "a number")];
            if let Some(hi) = max {
                v.push(((hi + 1.0).to_string(), "a number from"));
            }
            if let Some(lo) = min {
                v.push(((lo - 1.0).to_string(), "a number"));
            }
            v
        }
        ParamType::Size => vec![("-1".into(), "a size"), ("lots".into(), "a size")],
        ParamType::Ratio => vec![("1.5".into(), "a ratio"), ("abc".into(), "a ratio")],
        ParamType::Bool => vec![("maybe".into(), "true or false")],
        ParamType::Enum(_) => vec![("banana".into(), "one of")],
        ParamType::Path => vec![("relative/dir".into(), "an absolute path")],
        ParamType::List => vec![("x".into(), "list parameter")],
        other => panic!("no wrong value written for {other:?}: add one"),
    }
}

#[test]
fn every_shipped_parameter_declares_a_type_and_refuses_a_wrong_value() {
    let set = audit::builtin();
    let snap = host("nat-story");
    let mut tried = 0;
    for p in set.policies() {
        for name in p.params.keys() {
            let t = p
                .param_types
                .get(name)
                .unwrap_or_else(|| panic!("{}.{name} declares no type", p.id));
            for (value, word) in wrong(t) {
                let assignment = format!("{}.{name}={value}", p.id);
                let (code, out, err) = run(&["check", "--snapshot", &snap, "--set", &assignment]);
                assert_eq!(code, 2, "--set {assignment}: {out}{err}");
                says(&err, &format!("--set {assignment}"));
                says(&err, word);
                assert!(out.is_empty(), "--set {assignment} audited: {out}");
                tried += 1;
            }
        }
    }
    assert!(tried >= 25, "only {tried} wrong values tried");
}

#[test]
fn a_typo_in_an_enum_parameter_names_the_word_meant_and_audits_nothing() {
    let snap = host("nat-story");
    for v in ["sdd", "banana"] {
        let (code, out, err) = run(&[
            "check",
            "--snapshot",
            &snap,
            "--set",
            &format!("storage.assume_media={v}"),
        ]);
        assert_eq!(code, 2, "{out}{err}");
        says(&err, "`assume_media` takes one of `` (empty), `ssd`, `hdd`");
    }
    let (_, _, err) = run(&[
        "check",
        "--snapshot",
        &snap,
        "--set",
        "storage.assume_media=sdd",
    ]);
    says(&err, "did you mean `ssd`?");
    // the right values still run
    for v in ["ssd", "hdd", ""] {
        let (code, _, err) = run(&[
            "check",
            "--snapshot",
            &snap,
            "--set",
            &format!("storage.assume_media={v}"),
        ]);
        assert!(code < 2, "assume_media={v}: {err}");
    }
    for v in ["auto", "true", "false"] {
        let (code, _, err) = run(&[
            "check",
            "--snapshot",
            &snap,
            "--set",
            &format!("routes={v}"),
        ]);
        assert!(code < 2, "routes={v}: {err}");
    }
}

#[test]
fn an_overlay_value_of_the_wrong_type_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("site.yaml"),
        "policy: site\ntitle: Site\noverrides:\n  - policy: mysql-sizing\n    params: { max_peak_share: lots }\n",
    )
    .unwrap();
    let (code, out, err) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--policy",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    says(&err, "site.yaml:5:");
    says(
        &err,
        "parameter `max_peak_share`: `lots` is not a ratio from 0 to 1",
    );
}

#[test]
fn a_policy_test_case_with_a_wrong_parameter_is_a_problem_of_the_test_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pools.test.yaml"),
        "builtin: true\ncases:\n  - name: a share above one\n    params: { max_ram_share: 1.5 }\n    files: {}\n    expect:\n      - { rule: mysql.pool-too-large-for-ram, status: skip }\n",
    )
    .unwrap();
    let (code, out, err) = run(&["test", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    says(
        &format!("{out}{err}"),
        "`max_ram_share` takes a ratio from 0 to 1",
    );
}

#[test]
fn a_site_parameter_without_a_type_loads_with_a_warning_that_suggests_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mine.yaml"),
        "policy: mine\ntitle: Mine\nparams:\n  min_backlog: 1024\n  share: 0.5\n  cap: 2G\nrules:\n  - id: my.backlog\n    title: Backlog\n    severity: low\n    setting: sysctl.net.core.somaxconn\n    expect: { min: \"${params.min_backlog}\" }\n    why: \"{actual}\"\n    fix: raise it\n",
    )
    .unwrap();
    let (code, out, err) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--policy",
        dir.path().to_str().unwrap(),
        "--only",
        "my.*",
    ]);
    assert!(code < 2, "{out}{err}");
    says(&err, "parameter `min_backlog` declares no type");
    says(&err, "{type: number, default: 1024}");
    says(&err, "{type: ratio, default: 0.5}");
    says(&err, "{type: size, default: 2G}");
    // and it still takes any constant, as before
    let (code, _, err) = run(&[
        "check",
        "--snapshot",
        &host("nat-story"),
        "--policy",
        dir.path().to_str().unwrap(),
        "--only",
        "my.*",
        "--set",
        "mine.min_backlog=2048",
    ]);
    assert!(code < 2, "{err}");
}
