//! Remedies are data: every shipped rule says what `driftaudit fix` changes
//! (or `none` with the reason), `explain` shows it, and a wrong `remedy:`
//! is a policy problem with its code and its place.

use crate::common::audit;
use crate::common::cli::says;
use driftaudit::unstable::policy::{Code, PolicyProblem, PolicySet, Remedy};

const HEAD: &str = "policy: mine\ntitle: Mine\nrules:\n";

fn rule(body: &str) -> String {
    format!("{HEAD}  - id: my.rule\n    title: A rule\n    severity: low\n{body}    why: because\n    fix: change it\n")
}

fn problems(text: &str) -> Vec<PolicyProblem> {
    let mut set = audit::builtin();
    match set.add_str("my-policy.yaml", text) {
        Ok(()) => panic!("policy should not load:\n{text}"),
        Err(e) => e.problems().to_vec(),
    }
}

fn loaded(text: &str) -> PolicySet {
    let mut set = audit::builtin();
    set.add_str("my-policy.yaml", text).unwrap();
    set
}

#[test]
fn every_shipped_rule_has_a_remedy_or_none_with_a_reason() {
    let set = audit::builtin();
    // storage.yaml's 20 rules became 8 rules over `data_dirs` (issue 16)
    assert!(set.rules().len() > 20);
    for r in set.rules() {
        match &r.remedy {
            None => panic!("{}: no remedy (add `remedy:` to its policy)", r.id),
            Some(Remedy::None { reason }) => {
                assert!(reason.len() > 20, "{}: say why there is no remedy", r.id)
            }
            Some(_) => {}
        }
    }
}

#[test]
fn explain_shows_the_remedy() {
    let set = audit::builtin();
    let r = set
        .rules()
        .iter()
        .find(|r| r.id == "linux.tcp-tw-recycle")
        .unwrap();
    let text = driftaudit::unstable::explain::explain(&set, r);
    assert!(
        text.contains(
            "remedy (driftaudit fix):\n  set sysctl.net.ipv4.tcp_tw_recycle to 0 (derived"
        ),
        "{text}"
    );
    // an item's alias (the rule's id before storage.yaml was one rule per concern)
    let r = set.rule_or_alias("storage.db-on-rotational").unwrap();
    let text = driftaudit::unstable::explain::explain(&set, r);
    says(&text, "remedy (driftaudit fix):\n  none: moving data");
}

#[test]
fn a_setting_check_with_one_bound_derives_its_remedy_and_others_do_not() {
    let set = loaded(&format!(
        "{HEAD}  - id: a.min\n    title: t\n    severity: low\n    setting: sysctl.net.core.somaxconn\n    expect: {{ min: 1024 }}\n    why: w\n    fix: f\n\
         \x20 - id: a.two\n    title: t\n    severity: low\n    setting: sysctl.net.core.somaxconn\n    expect: {{ min: 1024, max: 4096 }}\n    why: w\n    fix: f\n\
         \x20 - id: a.assert\n    title: t\n    severity: low\n    assert: \"sysctl.net.core.somaxconn > 1\"\n    why: w\n    fix: f\n"
    ));
    let get = |id: &str| {
        set.rules()
            .iter()
            .find(|r| r.id == id)
            .unwrap()
            .remedy
            .clone()
    };
    assert!(matches!(
        get("a.min"),
        Some(Remedy::Set { ref key, bound: driftaudit::unstable::policy::Bound::AtLeast, derived: true, .. }) if key == "net.core.somaxconn"
    ));
    assert_eq!(get("a.two"), None, "two bounds: no single value to write");
    assert_eq!(get("a.assert"), None);
}

#[test]
fn remedy_with_two_kinds_is_invalid_remedy_at_the_remedy() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { remove: sysctl.net.core.somaxconn, none: \"x\" }\n",
    ));
    assert_eq!(
        p.iter().map(|p| p.code).collect::<Vec<_>>(),
        [Code::InvalidRemedy]
    );
    assert_eq!(p[0].line, 8, "{p:?}");
    assert!(p[0].message.contains("found several"), "{}", p[0].message);
}

#[test]
fn set_without_to_is_invalid_remedy() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { set: sysctl.net.core.somaxconn }\n",
    ));
    assert_eq!(p[0].code, Code::InvalidRemedy);
    says(&p[0].message, "`set` needs `to`");
}

#[test]
fn remedy_none_needs_a_reason() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { none: \"  \" }\n",
    ));
    assert_eq!(p[0].code, Code::RemedyWithoutReason);
}

#[test]
fn remedy_options_must_change_something() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { options: { add: [] } }\n",
    ));
    assert_eq!(p[0].code, Code::EmptyRemedyOptions);
}

#[test]
fn remedy_on_a_namespace_fix_cannot_write_points_at_the_setting() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { set: mysql.max_connections, to: 200 }\n",
    ));
    assert_eq!(p[0].code, Code::RemedyNotWritable);
    assert_eq!((p[0].line, p[0].column), (8, 20), "{}", p[0]);
}

#[test]
fn remedy_value_expression_names_are_checked() {
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { set: sysctl.net.core.somaxconn, to: \"${mem_totl}\" }\n",
    ));
    assert_eq!(p[0].code, Code::UnknownName, "{}", p[0]);
    assert!(
        p[0].message.contains("did you mean `mem_total`"),
        "{}",
        p[0]
    );
}

/// A `fix` plan for `rule` alone on a copy of the test host `name`, its
/// running `have_ssl` set to `have_ssl`.
fn plan_with_have_ssl(name: &str, rule: &str, have_ssl: &str) -> driftaudit::unstable::fix::Plan {
    use driftaudit::unstable::fix::{self, FixOptions};
    let copy = crate::common::cli::copy_tree(&crate::common::cli::testdata("hosts").join(name));
    let tsv = copy.path().join("captures/mysql-variables.tsv");
    let text = std::fs::read_to_string(&tsv).unwrap();
    assert!(
        text.contains("\nhave_ssl\tDISABLED\n"),
        "the host's capture changed"
    );
    std::fs::write(
        &tsv,
        text.replace(
            "\nhave_ssl\tDISABLED\n",
            &format!("\nhave_ssl\t{have_ssl}\n"),
        ),
    )
    .unwrap();
    let opts = FixOptions {
        only: vec![glob::Pattern::new(rule).unwrap()],
        ..FixOptions::default()
    };
    fix::plan(&crate::common::audit::builtin(), Some(copy.path()), &opts).unwrap()
}

#[test]
fn require_secure_transport_on_a_server_without_tls_is_held_as_a_decision_with_the_hosts_value() {
    let rule = "mysqlsec.require-secure-transport";
    let held = plan_with_have_ssl("mysql-includedir-override", rule, "DISABLED");
    assert!(held.fixes.is_empty(), "{:?}", held.fixes);
    assert!(
        !held.patch.contains("require_secure_transport"),
        "{}",
        held.patch
    );
    let u = held
        .unfixable
        .iter()
        .find(|u| u.rule == rule)
        .expect("held, not dropped");
    for part in [
        "needs a decision",
        "mysql.have_ssl = DISABLED",
        "refuses every TCP client",
    ] {
        assert!(u.reason.contains(part), "{part}: {}", u.reason);
    }
    // with TLS configured the same finding is repaired
    let applied = plan_with_have_ssl("mysql-includedir-override", rule, "YES");
    assert!(
        applied.fixes.iter().any(|f| f.rule == rule),
        "{:?}",
        applied.unfixable
    );
    assert!(
        applied.patch.contains("require_secure_transport = ON"),
        "{}",
        applied.patch
    );
    assert!(applied.proof.as_ref().is_some_and(|p| p.passed()));
}

#[test]
fn a_remedy_precondition_is_an_expression_of_the_rules_scope_and_needs_its_reason() {
    let with = |requires: &str| {
        rule(&format!(
            "    assert: \"true\"\n    remedy: {{ set: sysctl.vm.swappiness, to: 10, requires: {requires} }}\n"
        ))
    };
    let set = loaded(&with("{ when: \"mem_total > 1G\", why: small hosts swap }"));
    let r = set.rules().iter().find(|r| r.id == "my.rule").unwrap();
    assert_eq!(
        r.requires.as_ref().map(|q| q.text.as_str()),
        Some("mem_total > 1G")
    );
    says(
        &r.describe_remedy(),
        "only where `mem_total > 1G`: small hosts swap",
    );
    // the names are the rule's: a typo is found at load, with the fix
    let p = problems(&with("{ when: \"mem_totl > 1G\", why: x }"));
    assert_eq!(p[0].code, Code::UnknownName, "{}", p[0]);
    says(&p[0].message, "did you mean `mem_total`");
    let p = problems(&with("{ when: \"true\", why: \" \" }"));
    assert_eq!(p[0].code, Code::RemedyWithoutReason, "{}", p[0]);
    let p = problems(&rule(
        "    assert: \"true\"\n    remedy: { none: by hand, requires: { when: \"true\", why: x } }\n",
    ));
    assert_eq!(p[0].code, Code::InvalidRemedy, "{}", p[0]);
    says(
        &p[0].message,
        "`requires` goes with `set`, `remove` or `options`",
    );
}
