//! SARIF, JUnit and Markdown output: insta snapshots on every test host under
//! testdata/hosts, and validity checks — SARIF against the official SARIF
//! 2.1.0 JSON Schema (tests/schemas/sarif-2.1.0.json, copied from the
//! serde-sarif 0.8.0 crate, see tests/schemas/README.md), JUnit parsed back
//! with roxmltree and counted against the report, Markdown tables checked for
//! a header separator and the same number of cells in every row.

use crate::common::browser::{fleet_report, host_names, report_of};
use crate::common::cli;
use crate::common::cli::says;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use driftaudit::unstable::render::{sarif, unique_labels};
use driftaudit::unstable::report::{Finding, Report, WaiverNote};
use driftaudit::{audit, render, Format, Host, PolicySet, RenderOptions, Status};
use serde_json::Value as Json;

fn out(report: &Report, format: Format) -> String {
    render(report, format, RenderOptions::default())
}

/// For every shipped test host alone: `checked` renders its report (and
/// checks it, naming the host directory), and the result is the insta snapshot `format-HOST-KIND`.
fn each_host_checked_and_snapshotted(kind: &str, checked: impl Fn(&str, &Report) -> String) {
    for name in host_names() {
        let shown = checked(&name, &report_of(&[&name]));
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(format!("format-{name}-{kind}"), shown);
        });
    }
}

/// The version changes at every release; keep snapshots stable.
fn redact_version(s: &str) -> String {
    let v = env!("CARGO_PKG_VERSION");
    s.replace(
        &format!("\"version\": \"{v}\""),
        "\"version\": \"[version]\"",
    )
    .replace(
        &format!("\"semanticVersion\": \"{v}\""),
        "\"semanticVersion\": \"[version]\"",
    )
}

/// The nat-story report with its first failing finding waived (waivers are
/// applied by the workflow code; the renderers only see `Status::Waived`).
fn waived_report() -> (Report, Finding) {
    let mut r = report_of(&["nat-story"]);
    let f = r.hosts[0]
        .findings
        .iter_mut()
        .find(|f| f.status == Status::Fail)
        .expect("nat-story has a failure");
    f.waiver = Some(WaiverNote {
        reason: "kernel upgrade | scheduled <CHG-42> by @ops".into(),
        expires: "2099-01-31".into(),
        original_status: Status::Fail,
    });
    f.status = Status::Waived;
    let waived = f.clone();
    let findings = std::mem::take(&mut r.hosts[0].findings);
    let root = r.hosts[0].root.clone();
    r.hosts[0] = driftaudit::HostReport::new(r.hosts[0].host.clone(), r.hosts[0].source, findings)
        .with_root(root);
    (r, waived)
}

/// A report full of hostile text: pipes, HTML, mentions, newlines, control
/// characters, odd paths.
fn hostile_report() -> Report {
    let mut r = report_of(&["nat-story"]);
    r.hosts[0].host = "evil|host<b>".into();
    for f in r.hosts[0].findings.iter_mut() {
        if f.status == Status::Fail {
            f.explanation = format!(
                "{} | <script>alert(1)</script> @admin [x](http://e)\nsecond line \x1b[31m\x07 `a|b`",
                f.explanation
            );
            f.title.push_str(" | ` tick");
            for e in f.evidence.iter_mut() {
                e.path = format!("{} dir/a#b?c%.conf", e.path);
            }
        }
    }
    r
}

// ------------------------------------------------------------------ SARIF

/// The pattern of the official schema (run.language, toolComponent.language)
/// that is not a valid ECMA-262
/// regex (a stray `]`, so the schema fails its own meta-validation under a
/// strict regex check), and its evident intent. driftaudit never writes
/// `run.language`; the fix only lets the schema compile. Everything else is
/// used exactly as shipped.
const BROKEN_LANGUAGE_PATTERN: &str = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
const FIXED_LANGUAGE_PATTERN: &str = r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#;

fn sarif_validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0.json"),
    )
    .expect("tests/schemas/sarif-2.1.0.json");
    assert_eq!(text.matches(BROKEN_LANGUAGE_PATTERN).count(), 2);
    let text = text.replace(BROKEN_LANGUAGE_PATTERN, FIXED_LANGUAGE_PATTERN);
    let schema: Json = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid_sarif(v: &jsonschema::Validator, doc: &Json, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: SARIF schema violations:\n{}",
        errors.join("\n")
    );
}

fn reported(r: &Report) -> Vec<(&driftaudit::HostReport, &Finding)> {
    r.hosts
        .iter()
        .flat_map(|h| {
            h.findings
                .iter()
                .filter(|f| {
                    matches!(
                        f.status,
                        Status::Fail | Status::Unknown | Status::Error | Status::Waived
                    )
                })
                .map(move |f| (h, f))
        })
        .collect()
}

/// The repository root the tests anchor SARIF at: this checkout.
fn repo_root() -> PathBuf {
    std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).expect("checkout")
}

/// SARIF as the CLI writes it from the checkout's root.
fn sarif_out(r: &Report) -> String {
    sarif::render_with(r, &sarif::SarifOptions::with_root(repo_root()))
}

/// The repository-relative path a host path must be placed at, computed from
/// the snapshot directory without the renderer's code.
fn expected_uri(h: &driftaudit::HostReport, host_path: &str) -> String {
    let root = h.root.as_ref().expect("a snapshot host has its directory");
    let rel = root
        .strip_prefix(repo_root())
        .expect("test hosts are in the checkout");
    format!(
        "{}/{}",
        rel.to_str().unwrap(),
        host_path.trim_start_matches('/')
    )
}

/// GitHub code scanning's documented requirements ("SARIF support for code
/// scanning": the properties marked required, no empty string for them, and
/// the upload limits of "SARIF results exceed one or more limits"), checked
/// on the document as parsed JSON, independent of the renderer's types.
fn check_github_requirements(doc: &Json) {
    let nonempty = |v: &Json, what: &str| {
        let s = v.as_str().unwrap_or_else(|| panic!("{what} missing: {v}"));
        assert!(!s.is_empty(), "{what} is empty");
        s.to_string()
    };
    nonempty(&doc["$schema"], "$schema");
    assert_eq!(doc["version"], "2.1.0");
    let runs = doc["runs"].as_array().expect("runs[]");
    assert!(
        !runs.is_empty() && runs.len() <= 20,
        "1 to 20 runs per file"
    );
    let mut categories = BTreeSet::new();
    for run in runs {
        let driver = &run["tool"]["driver"];
        nonempty(&driver["name"], "tool.driver.name");
        // one run per (tool, category) in a file (github/codeql-action#3051)
        let cat = run["automationDetails"]["id"].as_str().unwrap_or("");
        assert!(
            categories.insert(cat.to_string()),
            "two runs share category `{cat}`"
        );
        let rules = driver["rules"].as_array().expect("tool.driver.rules[]");
        assert!(rules.len() <= 25_000, "rules per run");
        let mut ids = BTreeSet::new();
        for d in rules {
            let id = nonempty(&d["id"], "rule id");
            assert!(ids.insert(id.clone()), "rule id {id} twice");
            if let Some(n) = d["name"].as_str() {
                assert!(n.chars().count() <= 255, "{id}: name over 255");
            }
            for key in ["shortDescription", "fullDescription"] {
                let t = nonempty(&d[key]["text"], key);
                assert!(t.chars().count() <= 1024, "{id}: {key} over 1024");
            }
            nonempty(&d["help"]["text"], "help.text");
            nonempty(&d["help"]["markdown"], "help.markdown");
            if let Some(l) = d["defaultConfiguration"]["level"].as_str() {
                assert!(["note", "warning", "error"].contains(&l), "{id}: level {l}");
            }
            if let Some(tags) = d["properties"]["tags"].as_array() {
                assert!(tags.len() <= 20, "{id}: tags per rule");
            }
            if let Some(ss) = d["properties"]["security-severity"].as_str() {
                let score: f64 = ss.parse().expect("security-severity is a number");
                assert!(score > 0.0 && score <= 10.0, "{id}: security-severity {ss}");
            }
        }
        let results = run["results"].as_array().expect("results[]");
        assert!(results.len() <= 25_000, "results per run");
        let mut fingerprints = BTreeSet::new();
        for res in results {
            let rule = nonempty(&res["ruleId"], "ruleId");
            assert!(ids.contains(&rule), "result of unknown rule {rule}");
            nonempty(&res["message"]["text"], "message.text");
            let locs = res["locations"].as_array().expect("locations[]");
            assert!(
                !locs.is_empty() && locs.len() <= 10,
                "{rule}: 1 to 10 locations"
            );
            for l in locs {
                let p = &l["physicalLocation"];
                let uri = nonempty(&p["artifactLocation"]["uri"], "artifactLocation.uri");
                if uri.ends_with('/') {
                    continue; // a host directory: nothing to put a line on
                }
                assert!(
                    p["region"]["startLine"].as_u64().unwrap_or(0) >= 1,
                    "{rule}: startLine"
                );
            }
            let fp = nonempty(
                &res["partialFingerprints"]["primaryLocationLineHash"],
                "partialFingerprints.primaryLocationLineHash",
            );
            assert!(
                fingerprints.insert(fp.clone()),
                "{rule}: fingerprint {fp} twice in a run"
            );
        }
    }
}

/// Results match the report one to one: rule, level, location, host.
fn check_sarif_semantics(r: &Report, doc: &Json) {
    check_github_requirements(doc);
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "one run");
    let run = &runs[0];
    assert!(
        run.get("originalUriBaseIds").is_none(),
        "code scanning ignores originalUriBaseIds (github/codeql-action#2215)"
    );
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), r.rules.len());
    for (d, m) in rules.iter().zip(&r.rules) {
        assert_eq!(d["id"], m.id.as_str());
        assert_eq!(d["shortDescription"]["text"], m.title.as_str());
        let full = d["fullDescription"]["text"].as_str().unwrap();
        assert!(
            full == m.why || (full.ends_with('…') && m.why.starts_with(full.trim_end_matches('…')))
        );
        let help = d["help"]["text"].as_str().unwrap();
        assert!(help.starts_with(&m.why) && help.contains(&m.fix), "{help}");
        let md = d["help"]["markdown"].as_str().unwrap();
        for u in &m.references {
            assert!(
                help.contains(u.as_str()) && md.contains(u.as_str()),
                "{}: {u}",
                m.id
            );
        }
        match m.references.first() {
            Some(u) => assert_eq!(d["helpUri"], u.as_str()),
            None => assert!(d.get("helpUri").is_none()),
        }
        let score = d["properties"]["security-severity"]
            .as_str()
            .map(|s| s.parse::<f64>().unwrap());
        // GitHub's bands: >= 9.0 critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low
        match m.severity {
            driftaudit::Severity::Critical => assert!(score.unwrap() >= 9.0),
            driftaudit::Severity::High => assert!((7.0..9.0).contains(&score.unwrap())),
            driftaudit::Severity::Medium => assert!((4.0..7.0).contains(&score.unwrap())),
            driftaudit::Severity::Low => assert!((0.1..4.0).contains(&score.unwrap())),
            _ => assert!(score.is_none(), "{}: info has no security severity", m.id),
        }
    }
    let results = run["results"].as_array().expect("results");
    let expected = reported(r);
    assert_eq!(
        results.len(),
        expected.len(),
        "one result per reported finding"
    );
    for (res, (h, f)) in results.iter().zip(expected) {
        assert_eq!(res["ruleId"], f.rule.as_str());
        let idx = res["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[idx]["id"], f.rule.as_str());
        let level = match f.severity {
            driftaudit::Severity::Critical | driftaudit::Severity::High => "error",
            driftaudit::Severity::Medium => "warning",
            _ => "note",
        };
        assert_eq!(res["level"], level, "{}", f.rule);
        assert_eq!(res["properties"]["host"], h.host.as_str());
        assert_eq!(res["properties"]["status"], f.status.as_str());
        assert!(res["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with(f.explanation.trim()));
        let loc = &res["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert!(!uri.starts_with('/'), "{uri}");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%", "{uri}");
        match f.evidence.first() {
            Some(e) => {
                if !e.path.contains(['%', ' ', '#', '?']) {
                    assert_eq!(uri, expected_uri(h, &e.path));
                }
                assert_eq!(loc["region"]["startLine"], e.line.unwrap_or(1) as u64);
            }
            None => assert_eq!(uri, expected_uri(h, "/")),
        }
        if f.status == Status::Waived {
            let s = &res["suppressions"][0];
            assert_eq!(s["kind"], "external");
            assert_eq!(s["status"], "accepted");
            assert_eq!(
                s["justification"],
                f.waiver.as_ref().unwrap().reason.as_str()
            );
        } else {
            assert!(res.get("suppressions").is_none());
        }
    }
}

/// The artifact URI of the linux.tcp-tw-recycle result in a SARIF log.
fn sarif_uri(sarif: &str) -> String {
    let doc: Json = serde_json::from_str(sarif).unwrap();
    doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["ruleId"] == "linux.tcp-tw-recycle")
        .unwrap()["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn sarif_is_valid_and_matches_the_report_on_every_test_host() {
    let v = sarif_validator();
    each_host_checked_and_snapshotted("sarif", |name, r| {
        let text = sarif_out(r);
        let doc: Json = serde_json::from_str(&text).expect("SARIF is JSON");
        assert_valid_sarif(&v, &doc, name);
        check_sarif_semantics(r, &doc);
        redact_version(&text)
    });
}

#[test]
fn sarif_locates_the_nat_story_failure_at_the_sysctl_line_in_the_repository() {
    let r = report_of(&["nat-story"]);
    let doc: Json = serde_json::from_str(&sarif_out(&r)).unwrap();
    let res = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["ruleId"] == "linux.tcp-tw-recycle")
        .expect("tcp_tw_recycle result");
    assert_eq!(res["level"], "error");
    let loc = &res["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "testdata/hosts/nat-story/etc/sysctl.d/60-perf.conf"
    );
    assert_eq!(loc["region"]["startLine"], 3);
    // Without a repository root (the library's plain `render`) the location
    // is an absolute file URI, never a path relative to nothing.
    let uri = sarif_uri(&out(&r, Format::Sarif));
    let abs = format!(
        "file://{}/testdata/hosts/nat-story/etc/sysctl.d/60-perf.conf",
        repo_root().display()
    );
    assert_eq!(uri, abs);
}

/// A repository holding snapshots the way users keep them, `snapshots/HOST`,
/// with two hosts copied from testdata (their host names differ).
fn snapshot_repo(hosts: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for (from, to) in hosts {
        let dst = tmp.path().join("snapshots").join(to);
        copy_tree(&cli::testdata("hosts").join(from), &dst);
    }
    tmp
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let ty = e.file_type().unwrap();
        let dst = to.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &dst);
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

fn results_by_fingerprint(doc: &Json) -> BTreeMap<String, (String, String, u64)> {
    doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            let l = &x["locations"][0]["physicalLocation"];
            (
                x["partialFingerprints"]["primaryLocationLineHash"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                (
                    x["ruleId"].as_str().unwrap().to_string(),
                    l["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                    l["region"]["startLine"].as_u64().unwrap_or(0),
                ),
            )
        })
        .collect()
}

#[test]
fn sarif_fingerprints_survive_a_moved_and_rewritten_line() {
    let set = PolicySet::builtin().unwrap();
    let repo = snapshot_repo(&[("nat-story", "web1")]);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let render_now = || {
        let host = Host::snapshot(root.join("snapshots/web1")).unwrap();
        let r = audit(&set, &[host]);
        let doc: Json = serde_json::from_str(&sarif::render_with(
            &r,
            &sarif::SarifOptions::with_root(&root),
        ))
        .unwrap();
        results_by_fingerprint(&doc)
    };
    let before = render_now();
    let (rule, uri, line) = before
        .values()
        .find(|(r, _, _)| r == "linux.tcp-tw-recycle")
        .cloned()
        .expect("tcp_tw_recycle fails");
    assert_eq!(uri, "snapshots/web1/etc/sysctl.d/60-perf.conf");
    assert_eq!(line, 3);
    // Two comment lines above it, and the line itself rewritten (GitHub's own
    // line hash, used when a result has none, would change with it).
    let conf = root.join("snapshots/web1/etc/sysctl.d/60-perf.conf");
    let text = std::fs::read_to_string(&conf).unwrap();
    assert!(text.contains("tcp_tw_recycle"), "{text}");
    let edited: String = text
        .lines()
        .map(|l| {
            if l.contains("tcp_tw_recycle") && l.contains('=') {
                "net.ipv4.tcp_tw_recycle=1".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&conf, format!("# moved\n# down\n{edited}\n")).unwrap();
    let after = render_now();
    let fp = before.iter().find(|(_, v)| v.0 == rule).unwrap().0;
    let moved = after.get(fp).expect("the same alert after the edit");
    assert_eq!((moved.0.as_str(), moved.2), (rule.as_str(), line + 2));
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "every alert keeps its identity"
    );
}

#[test]
fn sarif_places_each_host_under_its_own_snapshot_directory() {
    // Two hosts whose findings sit at the same host paths (etc/sysctl.d/...):
    // one run, repository-relative, host-qualified paths that never collide,
    // and fingerprints that differ by host.
    let set = PolicySet::builtin().unwrap();
    let repo = snapshot_repo(&[("nat-story", "web1"), ("clean", "web2")]);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    // Same snapshot, second copy: same host paths, and a different host name.
    copy_tree(&root.join("snapshots/web1"), &root.join("snapshots/web3"));
    let meta = root.join("snapshots/web3/snapshot.json");
    let mut m: Json = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    m["host"] = Json::from("web3.example.com");
    std::fs::write(&meta, m.to_string()).unwrap();
    let hosts: Vec<Host> = ["web1", "web2", "web3"]
        .iter()
        .map(|h| Host::snapshot(root.join("snapshots").join(h)).unwrap())
        .collect();
    let r = audit(&set, &hosts);
    assert_ne!(r.hosts[0].host, r.hosts[2].host, "{}", r.hosts[0].host);
    let doc: Json = serde_json::from_str(&sarif::render_with(
        &r,
        &sarif::SarifOptions::with_root(&root),
    ))
    .unwrap();
    assert_valid_sarif(&sarif_validator(), &doc, "three hosts");
    check_github_requirements(&doc);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    let by_fp = results_by_fingerprint(&doc);
    assert_eq!(
        by_fp.len(),
        reported(&r).len(),
        "no two results share a fingerprint"
    );
    let tw: Vec<&String> = by_fp
        .values()
        .filter(|(rule, _, _)| rule == "linux.tcp-tw-recycle")
        .map(|(_, uri, _)| uri)
        .collect();
    assert_eq!(
        tw,
        [
            "snapshots/web1/etc/sysctl.d/60-perf.conf",
            "snapshots/web3/etc/sysctl.d/60-perf.conf"
        ]
    );
    for (_, uri, _) in by_fp.values() {
        assert!(uri.starts_with("snapshots/web"), "{uri}");
    }
}

#[test]
fn sarif_fleet_waived_and_hostile_reports_are_valid() {
    let v = sarif_validator();
    let fleet = fleet_report();
    let (waived, wf) = waived_report();
    let hostile = hostile_report();
    for (what, r) in [
        ("fleet", &fleet),
        ("waived", &waived),
        ("hostile", &hostile),
    ] {
        let doc: Json = serde_json::from_str(&sarif_out(r)).unwrap();
        assert_valid_sarif(&v, &doc, what);
        check_sarif_semantics(r, &doc);
    }
    // The waived finding is still there, suppressed, with its reason.
    let doc: Json = serde_json::from_str(&sarif_out(&waived)).unwrap();
    let res: Vec<&Json> = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["ruleId"] == wf.rule.as_str() && x.get("suppressions").is_some())
        .collect();
    assert_eq!(res.len(), 1, "the waived finding is reported, not dropped");
    assert_eq!(
        res[0]["suppressions"][0]["properties"]["expires"],
        "2099-01-31"
    );
    // Odd paths are percent-encoded, never raw.
    let doc: Json = serde_json::from_str(&sarif_out(&hostile)).unwrap();
    let text = doc.to_string();
    assert!(text.contains("dir/a%23b%3Fc%25.conf"), "{text}");
}

#[test]
fn the_validator_rejects_broken_sarif() {
    // The schema check must be able to fail: drop a required property and
    // use a level SARIF does not know.
    let v = sarif_validator();
    let r = report_of(&["nat-story"]);
    let mut doc: Json = serde_json::from_str(&out(&r, Format::Sarif)).unwrap();
    let res = &mut doc["runs"][0]["results"][0];
    res.as_object_mut().unwrap().remove("message");
    res["level"] = Json::from("fatal");
    assert!(v.iter_errors(&doc).count() >= 2);
}

// ------------------------------------------------------------------ JUnit

/// JUnit as the CLI writes it from the checkout's root.
fn junit_out(r: &Report) -> String {
    driftaudit::unstable::render::junit::render_with(r, Some(&repo_root()))
}

#[derive(Debug, Default, PartialEq)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

/// Expected counts for one host, from the report, without the renderer's
/// code: one test case per rule and subject (`rule[subject]`), one named by
/// the rule alone for a rule without findings on the host.
fn expected_counts(r: &Report, host: usize) -> (Counts, BTreeMap<String, &'static str>) {
    let h = &r.hosts[host];
    let mut rules: BTreeSet<&str> = r.rules.iter().map(|m| m.id.as_str()).collect();
    rules.extend(h.findings.iter().map(|f| f.rule.as_str()));
    let mut c = Counts::default();
    let mut verdicts = BTreeMap::new();
    for rule in rules {
        let mut groups: BTreeMap<String, BTreeSet<Status>> = BTreeMap::new();
        for f in h.findings.iter().filter(|f| f.rule == rule) {
            let name = if f.subject.is_empty() {
                rule.to_string()
            } else {
                format!("{rule}[{}]", f.subject.join(", "))
            };
            groups.entry(name).or_default().insert(f.status);
        }
        if groups.is_empty() {
            groups.insert(rule.to_string(), BTreeSet::new());
        }
        for (name, st) in groups {
            c.tests += 1;
            let v = if st.contains(&Status::Fail) {
                c.failures += 1;
                "failure"
            } else if st.contains(&Status::Error) {
                c.errors += 1;
                "error"
            } else if st.contains(&Status::Unknown)
                || (!st.is_empty() && st.iter().all(|s| *s == Status::Skip))
            {
                c.skipped += 1;
                "skipped"
            } else {
                "passed"
            };
            verdicts.insert(name, v);
        }
    }
    (c, verdicts)
}

fn attr_usize(n: roxmltree::Node, name: &str) -> usize {
    n.attribute(name)
        .unwrap_or_else(|| panic!("<{}> has no {name}", n.tag_name().name()))
        .parse()
        .unwrap()
}

fn check_junit(r: &Report, xml: &str) {
    let doc = roxmltree::Document::parse(xml).expect("JUnit is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suites: Vec<roxmltree::Node> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), r.hosts.len(), "one suite per host");
    // GitLab keys a test case by (classname, name) over the whole report and
    // keeps only the first of equal keys: every pair must be unique.
    let mut keys = BTreeSet::new();
    for c in root.descendants().filter(|n| n.has_tag_name("testcase")) {
        let key = (
            c.attribute("classname").unwrap(),
            c.attribute("name").unwrap(),
        );
        assert!(
            keys.insert(key),
            "test case {key:?} twice: GitLab keeps only the first"
        );
    }
    let mut total = Counts::default();
    // a suite is named by its host's unique label, as classnames and the
    // Prometheus `host` label are (a host name's second snapshot is `NAME#2`)
    let labels = unique_labels(r.hosts.iter().map(|h| h.host.as_str()));
    for (i, s) in suites.iter().enumerate() {
        assert_eq!(s.attribute("name"), Some(labels[i].as_str()));
        let (want, verdicts) = expected_counts(r, i);
        let cases: Vec<roxmltree::Node> = s
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        let mut got = Counts {
            tests: cases.len(),
            ..Counts::default()
        };
        let host = &r.hosts[i];
        for c in &cases {
            let name = c.attribute("name").unwrap();
            let classname = c.attribute("classname").unwrap();
            // classname = HOST.policy (GitLab shows it as the suite)
            let policy = classname
                .strip_prefix(host.host.as_str())
                .map(|rest| rest.trim_start_matches(|ch: char| ch == '#' || ch.is_ascii_digit()))
                .and_then(|rest| rest.strip_prefix('.'))
                .unwrap_or_else(|| {
                    panic!(
                        "classname `{classname}` does not start with the host `{}`",
                        host.host
                    )
                });
            let rule = name.split('[').next().unwrap();
            let want_policy = r
                .rules
                .iter()
                .find(|m| m.id == rule)
                .map(|m| m.policy.as_str())
                .or_else(|| {
                    host.findings
                        .iter()
                        .find(|f| f.rule == rule)
                        .map(|f| f.policy.as_str())
                });
            assert_eq!(Some(policy), want_policy, "{classname} {name}");
            // file = the evidence path of a finding of this case
            let of_case: Vec<&Finding> = host
                .findings
                .iter()
                .filter(|f| {
                    f.rule == rule
                        && (f.subject.is_empty() && name == rule
                            || format!("{rule}[{}]", f.subject.join(", ")) == name)
                })
                .collect();
            match c.attribute("file") {
                Some(file) => assert!(
                    of_case.iter().any(|f| f.evidence.iter().any(|e| host
                        .root
                        .as_ref()
                        .map(|root| root.join(e.path.trim_start_matches('/')))
                        .is_some_and(|p| p.ends_with(file) || p == Path::new(file)))),
                    "{name}: file `{file}` is not the evidence of its findings"
                ),
                None => assert!(
                    of_case.iter().all(|f| f.evidence.is_empty()),
                    "{name}: evidence but no file attribute"
                ),
            }
            let kind = c
                .children()
                .find(|n| {
                    n.has_tag_name("failure")
                        || n.has_tag_name("error")
                        || n.has_tag_name("skipped")
                })
                .map(|n| n.tag_name().name())
                .unwrap_or("passed");
            match kind {
                "failure" => got.failures += 1,
                "error" => got.errors += 1,
                "skipped" => got.skipped += 1,
                _ => {}
            }
            assert_eq!(Some(&kind), verdicts.get(name), "verdict of {name}");
            if kind == "failure" {
                // The failure carries the explanation of every failing finding.
                let body = c
                    .children()
                    .find(|n| n.has_tag_name("failure"))
                    .and_then(|n| n.text())
                    .unwrap_or("");
                for f in of_case.iter().filter(|f| f.status == Status::Fail) {
                    let first_line = f.explanation.trim().lines().next().unwrap_or("");
                    let clean: String = first_line.chars().filter(|c| !c.is_control()).collect();
                    let probe: String = clean.chars().take(30).collect();
                    assert!(body.contains(&probe), "{name}: `{probe}` not in\n{body}");
                }
            }
        }
        assert_eq!(got, want, "host {}", r.hosts[i].host);
        // The suite's own counters agree with its children.
        assert_eq!(attr_usize(*s, "tests"), got.tests);
        assert_eq!(attr_usize(*s, "failures"), got.failures);
        assert_eq!(attr_usize(*s, "errors"), got.errors);
        assert_eq!(attr_usize(*s, "skipped"), got.skipped);
        total.tests += got.tests;
        total.failures += got.failures;
        total.errors += got.errors;
    }
    assert_eq!(attr_usize(root, "tests"), total.tests);
    assert_eq!(attr_usize(root, "failures"), total.failures);
    assert_eq!(attr_usize(root, "errors"), total.errors);
}

#[test]
fn junit_parses_back_with_counts_matching_the_report() {
    each_host_checked_and_snapshotted("junit", |_, r| {
        let xml = junit_out(r);
        check_junit(r, &xml);
        xml
    });
}

#[test]
fn junit_fleet_waived_and_hostile_reports_parse_back() {
    let fleet = fleet_report();
    check_junit(&fleet, &junit_out(&fleet));
    let (waived, wf) = waived_report();
    let xml = junit_out(&waived);
    check_junit(&waived, &xml);
    // A waived finding passes its test case but is named in system-out.
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let case = doc
        .descendants()
        .find(|n| {
            n.has_tag_name("testcase")
                && n.attribute("name")
                    .is_some_and(|x| x.split('[').next() == Some(wf.rule.as_str()))
        })
        .unwrap();
    let sysout = case
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap_or("");
    says(sysout, "waived until 2099-01-31");
    says(sysout, "kernel upgrade");
    let hostile = hostile_report();
    let xml = junit_out(&hostile);
    check_junit(&hostile, &xml);
    assert!(!xml.contains('\x1b') && !xml.contains('\x07'));
    assert!(!xml.contains("<script>"));
}

#[test]
fn junit_keeps_every_host_of_a_two_host_report_for_gitlab() {
    // The same snapshot under two host names in one repository: every rule
    // fails the same way on both, at the same host paths. GitLab keys a test
    // case by (classname, name) and keeps the first, so each host's cases
    // must carry the host, and `file` must point into that host's directory.
    let set = PolicySet::builtin().unwrap();
    let repo = snapshot_repo(&[("nat-story", "web1"), ("nat-story", "web2")]);
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let meta = root.join("snapshots/web2/snapshot.json");
    let mut m: Json = serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    m["host"] = Json::from("web2.example.com");
    std::fs::write(&meta, m.to_string()).unwrap();
    let hosts: Vec<Host> = ["web1", "web2"]
        .iter()
        .map(|h| Host::snapshot(root.join("snapshots").join(h)).unwrap())
        .collect();
    let r = audit(&set, &hosts);
    let xml = driftaudit::unstable::render::junit::render_with(&r, Some(&root));
    check_junit(&r, &xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let failing: Vec<(&str, &str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase") && n.children().any(|c| c.has_tag_name("failure")))
        .map(|n| {
            (
                n.attribute("classname").unwrap(),
                n.attribute("name").unwrap(),
                n.attribute("file").unwrap_or(""),
            )
        })
        .collect();
    let tw: Vec<_> = failing
        .iter()
        .filter(|(_, name, _)| name.starts_with("linux.tcp-tw-recycle["))
        .collect();
    assert_eq!(
        tw,
        [
            &(
                "web-backend-02.linux-network",
                "linux.tcp-tw-recycle[net.ipv4.tcp_tw_recycle]",
                "snapshots/web1/etc/sysctl.d/60-perf.conf"
            ),
            &(
                "web2.example.com.linux-network",
                "linux.tcp-tw-recycle[net.ipv4.tcp_tw_recycle]",
                "snapshots/web2/etc/sysctl.d/60-perf.conf"
            ),
        ]
    );
    // Every failure of one host has its twin on the other: nothing folded.
    let per_host = |prefix: &str| -> BTreeSet<&str> {
        failing
            .iter()
            .filter(|(c, _, _)| c.starts_with(prefix))
            .map(|(_, n, _)| *n)
            .collect()
    };
    assert!(!per_host("web-backend-02.").is_empty());
    assert_eq!(per_host("web-backend-02."), per_host("web2.example.com."));

    // Two snapshots of one host name (before/after) stay two suites too,
    // each with a name of its own.
    let same = audit(
        &set,
        &[
            Host::snapshot(root.join("snapshots/web1")).unwrap(),
            Host::snapshot(root.join("snapshots/web1")).unwrap(),
        ],
    );
    let xml = driftaudit::unstable::render::junit::render_with(&same, Some(&root));
    check_junit(&same, &xml);
    assert!(xml.contains("classname=\"web-backend-02#2.linux-network\""));
    says(&xml, "<testsuite name=\"web-backend-02#2\"");
}

// --------------------------------------------------------------- Markdown

/// Split a table row into cells on `|` not escaped by a backslash.
fn cells(row: &str) -> Vec<String> {
    let inner = row
        .trim()
        .strip_prefix('|')
        .and_then(|r| r.strip_suffix('|'))
        .unwrap_or_else(|| panic!("row must start and end with a pipe: {row}"));
    let mut out = vec![String::new()];
    let mut esc = false;
    for c in inner.chars() {
        if c == '|' && !esc {
            out.push(String::new());
        } else {
            out.last_mut().unwrap().push(c);
        }
        esc = c == '\\' && !esc;
    }
    out
}

/// Every table: header, separator row of `---`/`---:` cells, and the same
/// number of cells in every row. Returns the tables' data rows.
/// Every table well formed; the rows of each, the summary table first.
fn check_markdown_tables(md: &str) -> Vec<Vec<Vec<String>>> {
    let lines: Vec<&str> = md.lines().collect();
    let mut all = Vec::new();
    let mut i = 0;
    let mut tables = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            i += 1;
            continue;
        }
        tables += 1;
        let header = cells(lines[i]);
        let sep = cells(lines.get(i + 1).expect("separator row"));
        assert_eq!(sep.len(), header.len(), "separator width");
        for s in &sep {
            let s = s.trim();
            assert!(
                s.len() >= 3 && s.trim_matches(':').chars().all(|c| c == '-'),
                "bad separator cell `{s}`"
            );
        }
        i += 2;
        let mut rows = Vec::new();
        while i < lines.len() && lines[i].starts_with('|') {
            let c = cells(lines[i]);
            assert_eq!(c.len(), header.len(), "row `{}`", lines[i]);
            rows.push(c);
            i += 1;
        }
        all.push(rows);
    }
    assert!(tables >= 1, "a summary table");
    all
}

fn check_markdown(r: &Report, md: &str) {
    let tables = check_markdown_tables(md);
    // the summary, then one coverage table per host with a row per domain;
    // a report over one GitHub comment's 65,536 characters keeps the host
    // sections that fit and ends saying what it left out
    assert!(md.chars().count() <= 65_536, "{}", md.chars().count());
    let trimmed = md
        .trim_end()
        .lines()
        .last()
        .is_some_and(|l| l.contains("more findings") && l.contains("see the attached report"));
    let shown = if trimmed {
        assert!(
            tables.len() - 1 < r.hosts.len(),
            "trimmed, yet every host is there"
        );
        tables.len() - 1
    } else {
        assert_eq!(
            tables.len(),
            1 + r.hosts.len(),
            "summary + coverage per host"
        );
        r.hosts.len()
    };
    for t in &tables[1..] {
        assert_eq!(t.len(), 4, "sysctl, MySQL, Zimbra, storage");
    }
    let rows = &tables[0];
    assert_eq!(rows.len(), r.hosts.len(), "a row per host");
    for (row, h) in rows.iter().zip(&r.hosts) {
        let s = &h.summary;
        let nums: Vec<usize> = row[1..].iter().map(|c| c.trim().parse().unwrap()).collect();
        assert_eq!(nums, [s.fail, s.unknown, s.error, s.waived, s.pass, s.skip]);
    }
    // Every failure of the hosts shown is there with its rule id and fix.
    for h in &r.hosts[..shown] {
        for f in h.findings.iter().filter(|f| f.status == Status::Fail) {
            assert!(md.contains(&format!("`{}`", f.rule)), "{} missing", f.rule);
        }
    }
    assert!(!md.contains("<script>"), "raw HTML leaked");
}

#[test]
fn markdown_has_a_well_formed_table_and_every_failure() {
    each_host_checked_and_snapshotted("markdown", |_, r| {
        let md = out(r, Format::Markdown);
        check_markdown(r, &md);
        md
    });
}

#[test]
fn markdown_fleet_waived_and_hostile_reports_stay_well_formed() {
    let fleet = fleet_report();
    check_markdown(&fleet, &out(&fleet, Format::Markdown));
    let (waived, wf) = waived_report();
    let md = out(&waived, Format::Markdown);
    check_markdown(&waived, &md);
    assert!(md.contains("**Waived**"), "{md}");
    says(&md, &format!("`{}`", wf.rule));
    says(&md, "2099-01-31");
    assert!(md.contains("\\<CHG-42\\> by \\@ops"), "{md}");
    let hostile = hostile_report();
    let md = out(&hostile, Format::Markdown);
    check_markdown(&hostile, &md);
    assert!(md.contains("| evil\\|host\\<b\\> |"), "{md}");
    assert!(md.contains("\\@admin") && !md.contains(" @admin"), "{md}");
}

// -------------------------------------------------------------------- CLI

#[test]
fn the_cli_prints_each_format_from_the_same_report() {
    let r = report_of(&["nat-story"]);
    for (flag, want) in [
        ("sarif", sarif_out(&r)),
        ("junit", junit_out(&r)),
        ("markdown", out(&r, Format::Markdown)),
        ("md", out(&r, Format::Markdown)),
    ] {
        let o = cli::cmd()
            .env("NO_COLOR", "1")
            .args([
                "check",
                "--snapshot",
                "testdata/hosts/nat-story",
                "--profile",
                "all",
                "--format",
                flag,
            ])
            .output()
            .expect("run driftaudit");
        assert_eq!(o.status.code(), Some(1), "nat-story fails: {flag}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), want, "{flag}");
    }
}

#[test]
fn the_cli_writes_paths_relative_to_the_working_directory_or_sarif_root() {
    let repo = snapshot_repo(&[("nat-story", "db1")]);
    let run = |cwd: &Path, extra: &[&str], snapshot: &str, format: &str| {
        let mut args = vec!["check", "--snapshot", snapshot, "--format", format];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = run_utf8(cwd, &args);
        assert_eq!(code, 1, "{stderr}");
        stdout
    };
    let uri_of = sarif_uri;
    let want = "snapshots/db1/etc/sysctl.d/60-perf.conf";
    // From the repository root, as CI runs it.
    assert_eq!(
        uri_of(&run(repo.path(), &[], "snapshots/db1", "sarif")),
        want
    );
    let xml = run(repo.path(), &[], "snapshots/db1", "junit");
    assert!(xml.contains(&format!("file=\"{want}\"")), "{xml}");
    // From elsewhere, with --sarif-root naming the repository.
    let elsewhere = repo.path().join("snapshots");
    let root = repo.path().to_str().unwrap();
    assert_eq!(
        uri_of(&run(&elsewhere, &["--sarif-root", root], "db1", "sarif")),
        want
    );
    // A root that does not exist is a usage error, not a silent fallback.
    let (code, _, stderr) = cli::run_in(
        repo.path(),
        &[
            "check",
            "--snapshot",
            "snapshots/db1",
            "--format",
            "sarif",
            "--sarif-root",
            "no/such/dir",
        ],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("--sarif-root `no/such/dir`"));
}

/// `driftaudit ARGS` run in `cwd`: exit code, stdout (which must be
/// UTF-8), stderr.
fn run_utf8(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let o = cli::cmd()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run driftaudit");
    let stdout = String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8");
    let (code, _, stderr) = cli::parts(o);
    (code, stdout, stderr)
}

/// `(host, ruleId, uri, fingerprint)` of every result, and every uri of the
/// document (locations and related locations).
type Identities = BTreeSet<(String, String, String, String)>;

fn sarif_identities(doc: &Json) -> (Identities, Vec<String>) {
    let mut ids = BTreeSet::new();
    let mut uris = Vec::new();
    for run in doc["runs"].as_array().unwrap() {
        for x in run["results"].as_array().unwrap() {
            let loc = &x["locations"][0]["physicalLocation"]["artifactLocation"];
            ids.insert((
                x["properties"]["host"].as_str().unwrap().to_string(),
                x["ruleId"].as_str().unwrap().to_string(),
                loc["uri"].as_str().unwrap().to_string(),
                x["partialFingerprints"]["driftaudit/v1"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ));
            for l in x["locations"]
                .as_array()
                .into_iter()
                .chain(x["relatedLocations"].as_array())
                .flatten()
            {
                let a = &l["physicalLocation"]["artifactLocation"];
                uris.push(a["uri"].as_str().unwrap().to_string());
                if a["uri"].as_str().unwrap().starts_with("file://") {
                    assert!(a.get("uriBaseId").is_none(), "{a}");
                } else {
                    assert_eq!(a["uriBaseId"], sarif::URI_BASE_ID, "{a}");
                }
            }
        }
    }
    (ids, uris)
}

#[test]
fn shards_of_a_user_repository_merged_give_the_sarif_and_junit_of_one_check() {
    // A user's repository: snapshots/HOST/..., the audit run from its root
    // (never the crate root), as the GitHub action and GitLab template run.
    let hosts = [
        ("nat-story", "db1"),
        ("fstab-edited-not-remounted", "web1"),
        ("mysql-warmup-story", "db2"),
        ("zimbra-khimki-12g", "mail1"),
    ];
    let repo = snapshot_repo(&hosts);
    let d = repo.path();
    let mut shards = Vec::new();
    for k in ["1/2", "2/2"] {
        let (code, json, err) = run_utf8(
            d,
            &[
                "check",
                "--fleet",
                "snapshots/",
                "--shard",
                k,
                "--format",
                "json",
            ],
        );
        assert!(code <= 1, "{k}: {err}");
        let v: Json = serde_json::from_str(&json).unwrap();
        for h in v["hosts"].as_array().unwrap() {
            // the snapshot folder relative to the repository, never this
            // machine's absolute path
            assert_eq!(
                h["root"],
                format!("snapshots/{}", h["path"].as_str().unwrap()),
                "{h}"
            );
        }
        let name = format!("shard-{}.json", &k[..1]);
        std::fs::write(d.join(&name), json).unwrap();
        shards.push(name);
    }
    let v = sarif_validator();
    for (format, ext) in [("sarif", "sarif"), ("junit", "xml")] {
        let (c1, whole, e1) = run_utf8(d, &["check", "--fleet", "snapshots/", "--format", format]);
        let (c2, merged, e2) = run_utf8(d, &["merge", &shards[1], &shards[0], "--format", format]);
        assert_eq!((c1, c2), (1, 1), "{format}: {e1} {e2}");
        assert_eq!(merged, whole, "{format}: merged shards = one check");
        // A merge job elsewhere (only the reports, no snapshots), naming
        // the repository with --sarif-root: the same file.
        let job = tempfile::tempdir().unwrap();
        let reports: Vec<String> = shards
            .iter()
            .map(|s| d.join(s).to_str().unwrap().to_string())
            .collect();
        let root = d.to_str().unwrap();
        let (c3, elsewhere, e3) = run_utf8(
            job.path(),
            &[
                "merge",
                &reports[0],
                &reports[1],
                "--format",
                format,
                "--sarif-root",
                root,
            ],
        );
        assert_eq!(c3, 1, "{e3}");
        assert_eq!(elsewhere, whole, "{format}: merged in another directory");
        std::fs::write(d.join(format!("fleet.{ext}")), &whole).unwrap();
    }

    // SARIF: valid, GitHub's requirements, every URI repository-relative
    // and each host's identities exactly those of `check --snapshot`.
    let doc: Json =
        serde_json::from_str(&std::fs::read_to_string(d.join("fleet.sarif")).unwrap()).unwrap();
    assert_valid_sarif(&v, &doc, "fleet");
    check_github_requirements(&doc);
    assert_eq!(
        doc["runs"].as_array().unwrap().len(),
        1,
        "one run (docs/formats.md)"
    );
    let (fleet_ids, uris) = sarif_identities(&doc);
    assert!(!fleet_ids.is_empty());
    for u in &uris {
        assert!(
            hosts
                .iter()
                .any(|(_, h)| u.starts_with(&format!("snapshots/{h}/"))),
            "not repository-relative: {u}"
        );
    }
    let mut per_host = BTreeSet::new();
    for (_, h) in hosts {
        let dir = format!("snapshots/{h}");
        let (code, one, err) = run_utf8(d, &["check", "--snapshot", &dir, "--format", "sarif"]);
        assert!(code <= 1, "{err}");
        let (ids, _) = sarif_identities(&serde_json::from_str(&one).unwrap());
        per_host.extend(ids);
    }
    assert_eq!(
        fleet_ids, per_host,
        "(host, rule, uri, fingerprint) as check --snapshot"
    );
    assert!(fleet_ids
        .iter()
        .any(|(_, r, u, _)| r == "linux.tcp-tw-recycle"
            && u == "snapshots/db1/etc/sysctl.d/60-perf.conf"));

    // JUnit: every `file` repository-relative, as `check --snapshot` writes it.
    let xml = std::fs::read_to_string(d.join("fleet.xml")).unwrap();
    let files = crate::common::cli::xml_attrs(&xml, "file");
    assert!(!files.is_empty());
    for f in &files {
        assert!(f.starts_with("snapshots/"), "JUnit file not relative: {f}");
    }
    let (_, one, _) = run_utf8(
        d,
        &["check", "--snapshot", "snapshots/db1", "--format", "junit"],
    );
    assert!(one.contains("file=\"snapshots/db1/etc/sysctl.d/60-perf.conf\""));
    assert!(xml.contains("file=\"snapshots/db1/etc/sysctl.d/60-perf.conf\""));
}

#[test]
fn a_live_hosts_files_are_absolute_uris_from_any_working_directory() {
    // `/` is an ancestor of /etc: still absolute, never `etc/sysctl.conf`
    // relative to a repository it is not in.
    for cwd in ["/", "/etc"] {
        let (code, out, err) = run_utf8(Path::new(cwd), &["check", "--format", "sarif"]);
        assert!(code <= 1, "{err}");
        let doc: Json = serde_json::from_str(&out).unwrap();
        let (_, uris) = sarif_identities(&doc);
        for u in &uris {
            assert!(u.starts_with("file:///"), "{cwd}: {u}");
        }
        let (code, xml, err) = run_utf8(Path::new(cwd), &["check", "--format", "junit"]);
        assert!(code <= 1, "{err}");
        let parsed = roxmltree::Document::parse(&xml).unwrap();
        for f in parsed.descendants().filter_map(|n| n.attribute("file")) {
            assert!(f.starts_with('/'), "{cwd}: {f}");
        }
    }
}
