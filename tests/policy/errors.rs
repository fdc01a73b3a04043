//! Policy loading errors are for people: file, line, column, the rule, a caret
//! under the offending text, and a suggestion for typos. Snapshotted.

use crate::common::audit;
use crate::common::cli::says;
use driftaudit::unstable::policy::{Code, ParamError, PolicyProblem, PolicySet};

fn load_err(text: &str) -> String {
    let mut set = audit::builtin();
    match set.add_str("my-policy.yaml", text) {
        Ok(()) => panic!("policy should not load:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn load_problems(text: &str) -> Vec<PolicyProblem> {
    let mut set = audit::builtin();
    match set.add_str("my-policy.yaml", text) {
        Ok(()) => panic!("policy should not load:\n{text}"),
        Err(e) => e.problems().to_vec(),
    }
}

fn codes(problems: &[PolicyProblem]) -> Vec<Code> {
    problems.iter().map(|p| p.code).collect()
}

fn snap(name: &str, text: String) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

/// Every problem, one a line, as the snapshot `name`.
fn snap_all(name: &str, problems: &[impl std::fmt::Display]) {
    snap(
        name,
        problems
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    );
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
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("policy-error-unknown-field", e);
    });
}

#[test]
fn expression_error_points_at_the_character() {
    let e = load_err(&rule(
        "    assert: \"mycnf.innodb_buffer_pool_size <= 0.8 * mem_totl\"\n",
    ));
    says(&e, "unknown name `mem_totl`, did you mean `mem_total`?");
    assert!(e.contains("rule `my.rule`"), "{e}");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
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
    for (body, says) in [
        ("", "exactly one check"),
        (
            "    assert: \"mem_total > params.nope\"\n",
            "unknown parameter `params.nope`",
        ),
        (
            "    setting: sysctl.vm.swappiness\n    expect: {equal: 1}\n",
            "did you mean `equals`",
        ),
    ] {
        let e = load_err(&rule(body));
        assert!(e.contains(says), "{e}");
    }
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
    assert_eq!(set.policies()[0].params["share"].as_f64(), Some(0.8));
    set.set_param("share=0.5").unwrap();
    assert_eq!(set.policies()[0].params["share"].as_f64(), Some(0.5));
    set.set_param("p.share=10G").unwrap();
    assert_eq!(
        set.policies()[0].params["share"].as_f64(),
        Some(10.0 * 1073741824.0)
    );
    let e = set.set_param("shar=1").unwrap_err();
    assert!(
        matches!(e, ParamError::UnknownParam { ref name, ref suggestion, .. }
            if name == "shar" && suggestion.contains("did you mean `share`")),
        "{e}"
    );
}

#[test]
fn builtin_policies_load_and_every_rule_is_complete() {
    let set = audit::builtin();
    assert!(!set.rules().is_empty());
    for r in set.rules() {
        assert!(
            !r.title.is_empty()
                && !r.why.source.trim().is_empty()
                && !r.fix.source.trim().is_empty(),
            "{}",
            r.id
        );
        let builtin_drift = matches!(r.check, driftaudit::unstable::policy::Check::Drift { .. });
        assert!(
            builtin_drift || !r.references.is_empty(),
            "{} has no references",
            r.id
        );
        for u in &r.references {
            assert!(u.starts_with("https://"), "{}: {u}", r.id);
        }
    }
    let ids: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("builtin-rule-ids", ids.join("\n"));
    });
}

#[test]
fn every_problem_code_is_listed_with_its_meaning() {
    let list: Vec<String> = Code::ALL
        .iter()
        .map(|c| format!("{:<26} {}", c.as_str(), c.meaning()))
        .collect();
    let unique: std::collections::BTreeSet<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(unique.len(), Code::ALL.len(), "codes are unique");
    for c in Code::ALL {
        let m = c.meaning();
        assert!(
            !m.ends_with('.') && m.chars().next().is_some_and(|ch| !ch.is_uppercase()),
            "{c}: {m}"
        );
    }
    snap("policy-error-codes", list.join("\n"));
    // docs/policy-language.md lists every code with the same meaning
    let doc = include_str!("../../docs/policy-language.md");
    for c in Code::ALL {
        let row = format!("| `{}` | {} |", c.as_str(), c.meaning());
        assert!(doc.contains(&row), "docs/policy-language.md lacks `{row}`");
    }
}

#[test]
fn a_bad_kernel_condition_underlines_the_condition_not_the_rule_id() {
    let p = load_problems(&rule(
        "    applies:\n      - kernel: \">= 4.10, ~ 4.12\"\n    assert: \"true\"\n",
    ));
    assert_eq!(codes(&p), [Code::InvalidKernelCondition]);
    // line 8 `      - kernel: ">= 4.10, ~ 4.12"`: the caret under the `~`
    assert_eq!((p[0].line, p[0].column), (8, 27), "{}", p[0]);
    snap("policy-error-kernel-condition", p[0].to_string());
}

#[test]
fn a_kernel_condition_without_an_operator_says_so() {
    let p = load_problems(&rule(
        "    applies:\n      - kernel: \"4.12\"\n    assert: \"true\"\n",
    ));
    assert_eq!(codes(&p), [Code::InvalidKernelCondition]);
    // was "unknown operator ``"
    assert_eq!(
        p[0].message,
        "applies.kernel `4.12`: no operator before `4.12`: expected <, <=, >, >=, == or != (`>= 4.12`)"
    );
}

#[test]
fn an_applies_path_using_host_data_underlines_the_name() {
    let p = load_problems(&rule(
        "    applies:\n      - missing: ${params.dir}\n      - exists: \"${mysql_datadir}\"\n    assert: \"true\"\n",
    ));
    assert_eq!(
        codes(&p),
        [Code::UnknownParam, Code::AppliesPathNotConstant]
    );
    // `      - missing: ${params.dir}`: under `params.dir`
    assert_eq!((p[0].line, p[0].column), (8, 20), "{}", p[0]);
    // `      - exists: "${mysql_datadir}"`: under `mysql_datadir`, after the quote
    assert_eq!((p[1].line, p[1].column), (9, 20), "{}", p[1]);
    snap_all("policy-error-applies-path", &p);
}

#[test]
fn drift_errors_underline_the_namespace_and_the_pattern() {
    let p = load_problems(&rule(
        "    drift:\n      configured: sysctl_bot\n      running: sysctl\n      keys: [\"net.*\", \"vm.[oops\"]\n",
    ));
    assert_eq!(codes(&p), [Code::UnknownNamespace, Code::InvalidGlob]);
    assert_eq!((p[0].line, p[0].column), (8, 19), "{}", p[0]);
    // `      keys: ["net.*", "vm.[oops"]`: under the `[` glob complains about
    assert_eq!((p[1].line, p[1].column), (10, 27), "{}", p[1]);
    assert_eq!(
        p[1].message,
        "drift key pattern `vm.[oops`: invalid range pattern"
    );
    assert!(
        p[0].message.contains("did you mean `sysctl_boot`"),
        "{}",
        p[0]
    );
    snap_all("policy-error-drift", &p);
}

#[test]
fn expect_and_template_errors_underline_their_own_text() {
    let p = load_problems(&format!(
        "{HEAD}  - id: my.rule\n    title: A rule\n    severity: low\n    setting: sysctl.vm.swappiness\n    expect:\n      max: \"${{params.nope}}\"\n      min: \"${{mem_totl}}\"\n    why: swappiness is {{actual}} of {{nonsense}}\n    fix: set it to {{params.gone}}\n"
    ));
    assert_eq!(
        codes(&p),
        [
            Code::UnknownName,
            Code::UnknownParam,
            Code::UnknownName,
            Code::UnknownParam
        ],
        "{p:#?}"
    );
    // `      min: "${mem_totl}"`: the caret under `mem_totl`, not the setting
    assert_eq!((p[0].line, p[0].column), (10, 15), "{}", p[0]);
    // `max: "${params.nope}"`: at its own line (it was not checked at all)
    assert_eq!(p[1].line, 9, "{}", p[1]);
    // `    why: swappiness is {actual} of {nonsense}`: under `nonsense`
    assert_eq!((p[2].line, p[2].column), (11, 37), "{}", p[2]);
    // the unknown parameter in `fix` points at `fix`, not at `why`
    assert_eq!(p[3].line, 12, "{}", p[3]);
    snap_all("policy-error-expect-and-templates", &p);
}

#[test]
fn empty_title_and_text_point_at_themselves() {
    let p = load_problems(&format!(
        "{HEAD}  - id: my.rule\n    title: \" \"\n    severity: low\n    assert: \"true\"\n    why: \"\"\n    fix: f\n"
    ));
    assert_eq!(codes(&p), [Code::EmptyTitle, Code::EmptyText], "{p:#?}");
    assert_eq!(p[0].line, 5, "{}", p[0]);
    assert_eq!(p[1].line, 8, "{}", p[1]);
}

#[test]
fn a_policy_dir_with_three_broken_files_reports_all_three() {
    let dir = tempfile::tempdir().unwrap();
    let good = format!("{HEAD}  - id: good.rule\n    title: t\n    severity: low\n    assert: \"true\"\n    why: w\n    fix: f\n");
    crate::common::tree::file(
        dir.path(),
        "a-broken.yaml",
        "policy: a\ntitle: A\nrulez: []\n",
    );
    std::fs::write(dir.path().join("b-good.yaml"), good).unwrap();
    crate::common::tree::file(dir.path(), "c-broken.yaml", "policy: c\ntitle: C\nrules:\n  - id: c.rule\n    title: t\n    severity: low\n    assert: \"mem_totl > 1\"\n    why: w\n    fix: f\n");
    crate::common::tree::file(dir.path(), "d-broken.yml", "policy: d\ntitle: D\nrules:\n  - id: d.rule\n    title: t\n    severity: low\n    applies:\n      - kernel: \"4.12\"\n    assert: \"true\"\n    why: w\n    fix: f\n");
    let mut set = PolicySet::new();
    let err = set.add_path(dir.path()).unwrap_err();
    let p = err.problems();
    let files: Vec<String> = p
        .iter()
        .map(|x| {
            std::path::Path::new(&x.path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        files,
        ["a-broken.yaml", "c-broken.yaml", "d-broken.yml"],
        "{err}"
    );
    assert_eq!(
        codes(p),
        [
            Code::UnknownField,
            Code::UnknownName,
            Code::InvalidKernelCondition
        ],
        "{err}"
    );
    // the good file was loaded
    assert!(set.rule("good.rule").is_some());

    // the same across several --policy paths
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("e.yaml"), "policy: e\n  title: [\n").unwrap();
    let mut set = PolicySet::new();
    let err = set.add_paths([dir.path(), other.path()]).unwrap_err();
    assert_eq!(err.problems().len(), 4, "{err}");
    assert_eq!(err.problems()[3].code, Code::YamlSyntax, "{err}");
}

#[test]
fn duplicates_across_files_underline_the_id() {
    let mut set = audit::builtin();
    let p = match set.add_str(
        "my-policy.yaml",
        "policy: linux-network\ntitle: t\nrules:\n  - id: linux.tcp-tw-recycle\n    title: t\n    severity: low\n    assert: \"true\"\n    why: w\n    fix: f\n",
    ) {
        Err(e) => e.problems().to_vec(),
        Ok(()) => panic!("duplicates load"),
    };
    assert_eq!(codes(&p), [Code::DuplicatePolicyId, Code::DuplicateRuleId]);
    assert_eq!((p[0].line, p[0].column), (1, 9), "{}", p[0]);
    assert_eq!((p[1].line, p[1].column), (4, 9), "{}", p[1]);
}

#[test]
fn a_duplicate_key_names_the_key_not_a_library_option() {
    let p = load_problems("policy: mine\ntitle: Mine\ntitle: Again\nrules: []\n");
    assert_eq!(codes(&p), [Code::DuplicateKey], "{p:?}");
    assert_eq!(p[0].message, "duplicate key `title`");
}

/// Issue 30's walk: an overlay written without `policy:` failed with
/// serde's "missing field `policy`" alone; the error says what a policy
/// file starts with.
#[test]
fn an_overlay_without_policy_says_what_a_policy_file_starts_with() {
    let e = load_err("overrides:\n  - rule: linux.aslr\n    severity: info\n");
    says(&e, "my-policy.yaml:1:1: missing field `policy`");
    says(
        &e,
        "every policy file, a site overlay too, starts with `policy: ID`",
    );
    let e = load_err("policy: site\noverrides: []\n");
    assert!(e.contains("missing field `title`"), "{e}");
    assert!(e.contains("starts with `policy: ID`"), "{e}");
}

#[test]
fn a_tag_that_is_not_a_lowercase_word_or_is_given_twice_is_pointed_at() {
    let p = load_problems(&rule(
        "    tags: [cis-l1-server, \"CIS L2\", stig, stig]\n    assert: \"true\"\n",
    ));
    assert_eq!(codes(&p), [Code::InvalidTag, Code::InvalidTag], "{p:?}");
    let text: Vec<String> = p.iter().map(|x| x.to_string()).collect();
    // line 7 `    tags: [...]`: each problem names its tag and why
    assert!(
        text[0].contains("tag `CIS L2`") && text[0].contains("lowercase word"),
        "{text:?}"
    );
    assert!(
        text[1].contains("tag `stig`") && text[1].contains("already has"),
        "{text:?}"
    );
    // a well-formed list loads, in the order written
    let mut set = audit::builtin();
    set.add_str(
        "ok.yaml",
        &rule("    tags: [stig, cis-l1-server]\n    assert: \"true\"\n"),
    )
    .expect("well-formed tags load");
    assert_eq!(set.rule("my.rule").unwrap().tags, ["stig", "cis-l1-server"]);
}
