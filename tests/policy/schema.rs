//! The policy JSON Schema: policies/schema.json is the committed output of
//! `driftaudit schema` (fails when stale), it accepts every shipped policy and
//! rejects unknown fields, and every shipped policy names it in its
//! yaml-language-server comment so editors validate and complete.

use std::path::PathBuf;

use serde_json::Value as Json;

use crate::common::cli::repo_root as root;

fn committed() -> Json {
    let text = std::fs::read_to_string(root().join("policies/schema.json"))
        .expect("policies/schema.json is committed");
    serde_json::from_str(&text).expect("policies/schema.json is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&committed()).expect("policies/schema.json compiles")
}

fn shipped_policies() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("policies"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        // policy tests (`driftaudit test`) are not policies
        .filter(|p| !p.to_string_lossy().contains(".test.y"))
        .collect();
    v.sort();
    assert!(v.len() >= 2, "shipped policies: {v:?}");
    v
}

fn yaml_to_json(text: &str) -> Json {
    serde_saphyr::from_str::<Json>(text).expect("policy YAML converts to JSON")
}

fn errors(v: &jsonschema::Validator, doc: &Json) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn committed_schema_is_not_stale() {
    assert!(
        committed() == driftaudit::unstable::policy::json_schema(),
        "policies/schema.json is stale: regenerate it with\n  cargo run -- schema > policies/schema.json"
    );
}

#[test]
fn schema_subcommand_prints_the_committed_file() {
    let out = crate::common::cli::cmd()
        .arg("schema")
        .output()
        .expect("run driftaudit schema");
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    let file = std::fs::read_to_string(root().join("policies/schema.json")).unwrap();
    assert_eq!(
        printed, file,
        "the file is byte-for-byte the command's output"
    );
}

#[test]
fn schema_accepts_every_shipped_policy() {
    let v = validator();
    for p in shipped_policies() {
        let text = std::fs::read_to_string(&p).unwrap();
        let errs = errors(&v, &yaml_to_json(&text));
        assert!(errs.is_empty(), "{}:\n{}", p.display(), errs.join("\n"));
    }
}

#[test]
fn shipped_policies_point_editors_at_the_schema() {
    for p in shipped_policies() {
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text.lines().next(),
            Some("# yaml-language-server: $schema=./schema.json"),
            "{}",
            p.display()
        );
    }
}

const GOOD: &str = "\
policy: mine
title: Mine
params:
  limit: 10G
rules:
  - id: my.rule
    title: A rule
    severity: low
    setting: sysctl.vm.swappiness
    expect: { max: 10 }
    why: because
    fix: change it
";

#[test]
fn schema_rejects_unknown_fields_and_bad_values() {
    let v = validator();
    assert_eq!(errors(&v, &yaml_to_json(GOOD)), Vec::<String>::new());
    for (what, bad) in [
        (
            "unknown rule field",
            GOOD.replace("severity: low", "sevrity: low"),
        ),
        ("unknown top-level field", format!("{GOOD}extra: 1\n")),
        (
            "unknown expect operator",
            GOOD.replace("max: 10", "maximum: 10"),
        ),
        (
            "severity outside the enum",
            GOOD.replace("severity: low", "severity: urgent"),
        ),
        (
            "missing rules",
            GOOD.split("rules:").next().unwrap().to_string(),
        ),
    ] {
        assert!(
            !errors(&v, &yaml_to_json(&bad)).is_empty(),
            "{what} must be rejected:\n{bad}"
        );
    }
    // The loader agrees with the schema on the unknown field.
    let mut set = driftaudit::PolicySet::new();
    assert!(set
        .add_str("mine.yaml", &GOOD.replace("severity: low", "sevrity: low"))
        .is_err());
    set.add_str("mine.yaml", GOOD)
        .expect("the good policy loads");
}
