//! Policy loading errors are for people: file, line, column, the rule, a caret
//! under the offending text, and a suggestion for typos. Snapshotted.

use driftaudit::policy::{PolicyError, PolicySet};

fn load_err(text: &str) -> String {
    let mut set = PolicySet::builtin().unwrap();
    match set.add_str("my-policy.yaml", text) {
        Ok(()) => panic!("policy should not load:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = "policy: mine\ntitle: Mine\nrules:\n";

fn rule(body: &str) -> String {
    format!("{HEAD}  - id: my.rule\n    title: A rule\n    severity: low\n{body}    why: because\n    fix: change it\n")
}

#[test]
fn unknown_field_suggests_the_closest() {
    let e = load_err(&format!(
        "{HEAD}  - id: my.rule\n    title: A rule\n    sevrity: low\n"
    ));
    assert!(e.contains("did you mean `severity`"), "{e}");
    assert!(e.starts_with("my-policy.yaml:6:5:"), "{e}");
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("policy-error-unknown-field", e);
    });
}

#[test]
fn expression_error_points_at_the_character() {
    let e = load_err(&rule(
        "    assert: \"mycnf.innodb_buffer_pool_size <= 0.8 * mem_totl\"\n",
    ));
    assert!(
        e.contains("unknown name `mem_totl`, did you mean `mem_total`?"),
        "{e}"
    );
    assert!(e.contains("rule `my.rule`"), "{e}");
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("policy-error-unknown-name", e);
    });
    let e = load_err(&rule("    assert: \"mem_total > \"\n"));
    assert!(e.contains("expected a value, found the end"), "{e}");
}

#[test]
fn duplicate_rule_ids_are_errors_across_policies() {
    let e = load_err(&format!(
        "{HEAD}  - id: linux.tcp-tw-recycle\n    title: t\n    severity: low\n    assert: \"1 == 1\"\n    why: w\n    fix: f\n"
    ));
    assert!(e.contains("duplicate rule id `linux.tcp-tw-recycle`: already defined at policies/linux-network.yaml:"), "{e}");
}

#[test]
fn a_rule_needs_exactly_one_check_and_known_params() {
    let e = load_err(&rule(""));
    assert!(e.contains("exactly one check"), "{e}");
    let e = load_err(&rule("    assert: \"mem_total > params.nope\"\n"));
    assert!(e.contains("unknown parameter `params.nope`"), "{e}");
    let e = load_err(&rule(
        "    setting: sysctl.vm.swappiness\n    expect: {equal: 1}\n",
    ));
    assert!(e.contains("did you mean `equals`"), "{e}");
}

#[test]
fn bad_severity_and_kernel_condition() {
    let e = load_err(&format!("{HEAD}  - id: my.rule\n    title: t\n    severity: severe\n    assert: \"true\"\n    why: w\n    fix: f\n"));
    assert!(e.contains("my-policy.yaml:6"), "{e}");
    let e = load_err(&rule(
        "    applies:\n      - kernel: \"~ 4.12\"\n    assert: \"true\"\n",
    ));
    assert!(e.contains("unknown operator `~`"), "{e}");
}

#[test]
fn params_can_be_overridden_and_typos_are_caught() {
    let mut set = PolicySet::new();
    set.add_str("p.yaml", "policy: p\ntitle: t\nparams:\n  share: 80%\nrules:\n  - id: p.r\n    title: t\n    severity: low\n    assert: \"params.share < 1\"\n    why: w\n    fix: f\n").unwrap();
    assert_eq!(set.policies[0].params["share"].as_f64(), Some(0.8));
    set.set_param("share=0.5").unwrap();
    assert_eq!(set.policies[0].params["share"].as_f64(), Some(0.5));
    set.set_param("p.share=10G").unwrap();
    assert_eq!(
        set.policies[0].params["share"].as_f64(),
        Some(10.0 * 1073741824.0)
    );
    let e = set.set_param("shar=1").unwrap_err();
    assert!(
        matches!(e, PolicyError::Param(ref m) if m.contains("did you mean `share`")),
        "{e}"
    );
}

#[test]
fn builtin_policies_load_and_every_rule_is_complete() {
    let set = PolicySet::builtin().unwrap();
    assert!(!set.rules.is_empty());
    for r in &set.rules {
        assert!(
            !r.title.is_empty()
                && !r.why.source.trim().is_empty()
                && !r.fix.source.trim().is_empty(),
            "{}",
            r.id
        );
        let builtin_drift = matches!(r.check, driftaudit::policy::Check::Drift { .. });
        assert!(
            builtin_drift || !r.references.is_empty(),
            "{} has no references",
            r.id
        );
        for u in &r.references {
            assert!(u.starts_with("https://"), "{}: {u}", r.id);
        }
    }
    let ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("builtin-rule-ids", ids.join("\n"));
    });
}
