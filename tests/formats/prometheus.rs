//! `--format prometheus` read back by Prometheus's own text parser
//! (`prometheus_client.parser.text_string_to_metric_families`, the Python
//! client's parser of the 0.0.4 text format, from PyPI in the virtualenv
//! .ci/run makes, `$DRIFTAUDIT_CI_VENV`). Every count is checked
//! against the report, computed here without the renderer's code; a hostile
//! host name must come back exactly. Without the parser the tests skip with
//! one line (fail under CI=true).

use crate::common;
use crate::common::browser::{feed_ok, report_of};
use crate::common::cli;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use driftaudit::unstable::render::prometheus;
use driftaudit::Report;
use driftaudit::Status;
use serde_json::Value as Json;

/// The Python interpreter with prometheus_client, or `None` after a skip.
fn parser() -> Option<PathBuf> {
    let venv = std::env::var_os("DRIFTAUDIT_CI_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .filter(|p| p.is_file());
    let python = venv.or_else(|| common::find_tool("python3"))?;
    let ok = !common::tools_hidden()
        && Command::new(&python)
            .args(["-c", "import prometheus_client.parser"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        common::skip(
            "needs Prometheus's text parser (Python prometheus_client)",
            "not importable; `bash .ci/run` puts it in its virtualenv (DRIFTAUDIT_CI_VENV), or `pip install prometheus-client`",
        );
        return None;
    }
    Some(python)
}

const PARSE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    out.append({
        "name": fam.name, "type": fam.type, "help": fam.documentation,
        "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in fam.samples],
    })
print(json.dumps(out))
"#;

/// Parse the text with the real parser: family name -> (type, help, samples).
fn parse(python: &Path, text: &str) -> BTreeMap<String, Json> {
    let o = feed_ok(
        Command::new(python).args(["-c", PARSE]),
        text.as_bytes(),
        &format!("the Prometheus parser, on\n{text}\n"),
    );
    let fams: Vec<Json> = serde_json::from_slice(&o.stdout).unwrap();
    fams.into_iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f))
        .collect()
}

fn samples<'a>(fams: &'a BTreeMap<String, Json>, name: &str) -> &'a Vec<Json> {
    fams.get(name).unwrap_or_else(|| panic!("no family {name}"))["samples"]
        .as_array()
        .unwrap()
}

/// Checks every family against the report.
fn check(fams: &BTreeMap<String, Json>, r: &Report, fleet: bool, now: f64) {
    for (name, f) in fams {
        assert_eq!(f["type"], "gauge", "{name}");
        assert!(
            !f["help"].as_str().unwrap_or("").is_empty(),
            "{name} has HELP"
        );
    }
    // findings by host, status, severity: every combination, counts exact
    let got = samples(fams, "driftaudit_findings");
    assert_eq!(got.len(), r.hosts.len() * 6 * 5, "every combination");
    for h in &r.hosts {
        for st in [
            Status::Fail,
            Status::Unknown,
            Status::Error,
            Status::Waived,
            Status::Skip,
            Status::Pass,
        ] {
            for sev in driftaudit::Severity::ALL {
                let want = h
                    .findings
                    .iter()
                    .filter(|f| f.status == st && f.severity == sev)
                    .count() as f64;
                let s = got
                    .iter()
                    .find(|s| {
                        s["labels"]["host"] == h.host.as_str()
                            && s["labels"]["status"] == st.as_str()
                            && s["labels"]["severity"] == sev.as_str()
                    })
                    .unwrap_or_else(|| panic!("{} {st:?} {sev:?} missing", h.host));
                assert_eq!(s["value"].as_f64(), Some(want));
                // no per-value labels: only these three
                assert_eq!(s["labels"].as_object().unwrap().len(), 3);
            }
        }
        let unevaluated = samples(fams, "driftaudit_unevaluated_domains")
            .iter()
            .find(|s| s["labels"]["host"] == h.host.as_str())
            .expect("unevaluated domains of the host");
        assert_eq!(
            unevaluated["value"].as_f64(),
            Some(h.unevaluated_domains().len() as f64)
        );
    }
    match fams.get("driftaudit_rule_failing_hosts") {
        Some(_) => {
            assert!(fleet, "per-rule series only for a fleet");
            for s in samples(fams, "driftaudit_rule_failing_hosts") {
                let rule = s["labels"]["rule"].as_str().unwrap();
                let want = r
                    .hosts
                    .iter()
                    .filter(|h| {
                        h.findings
                            .iter()
                            .any(|f| f.rule == rule && f.status == Status::Fail)
                    })
                    .count() as f64;
                assert_eq!(s["value"].as_f64(), Some(want), "{rule}");
            }
            let failing_somewhere = r
                .hosts
                .iter()
                .flat_map(|h| h.findings.iter())
                .filter(|f| f.status == Status::Fail)
                .count();
            assert!(failing_somewhere > 0);
        }
        None => assert!(!fleet, "a fleet report has per-rule failing hosts"),
    }
    assert_eq!(
        samples(fams, "driftaudit_hosts")[0]["value"].as_f64(),
        Some(r.hosts.len() as f64)
    );
    let ts = samples(fams, "driftaudit_last_run_timestamp_seconds")[0]["value"]
        .as_f64()
        .unwrap();
    assert!((ts - now).abs() < 0.01, "{ts} vs {now}");
    let build = &samples(fams, "driftaudit_build_info")[0];
    assert_eq!(build["value"].as_f64(), Some(1.0));
    assert_eq!(build["labels"]["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn prometheus_output_parses_with_the_real_parser_and_counts_match() {
    let Some(python) = parser() else { return };
    let now = 1_764_590_400.25;
    let one = report_of(&["nat-story"]);
    let text = prometheus::render_at(&one, now);
    assert!(!text.contains("# EOF"), "0.0.4 text, not OpenMetrics");
    check(&parse(&python, &text), &one, false, now);
    let fleet = report_of(&["nat-story", "clean", "mysql-warmup-story"]);
    check(
        &parse(&python, &prometheus::render_at(&fleet, now)),
        &fleet,
        true,
        now,
    );
}

#[test]
fn prometheus_label_values_survive_a_hostile_host_name() {
    let Some(python) = parser() else { return };
    let mut r = report_of(&["nat-story", "clean"]);
    let evil = "web\"1\\n\nx} 1\n# TYPE evil counter\ndriftaudit_hosts 999";
    r.hosts[0].host = evil.into();
    let fams = parse(&python, &prometheus::render_at(&r, 0.0));
    assert!(!fams.contains_key("evil"), "no family injected");
    let hosts: Vec<&str> = samples(&fams, "driftaudit_findings")
        .iter()
        .map(|s| s["labels"]["host"].as_str().unwrap())
        .collect();
    // the host name comes back exactly, its newlines shown as `\n`
    let shown = evil.replace('\n', "\\n");
    assert!(hosts.contains(&shown.as_str()), "{hosts:?}");
    assert_eq!(samples(&fams, "driftaudit_hosts").len(), 1);
    assert_eq!(
        samples(&fams, "driftaudit_hosts")[0]["value"].as_f64(),
        Some(2.0)
    );
}

#[test]
fn prometheus_from_the_cli_for_a_host_and_for_a_fleet() {
    let Some(python) = parser() else { return };
    let run = |args: &[&str]| cli::exits(cli::cmd().args(args), 1);
    let before = prometheus::now();
    // every rule, as the library's built-in set the counts are held to
    let text = run(&[
        "check",
        "--snapshot",
        "testdata/hosts/nat-story",
        "--profile",
        "all",
        "--format",
        "prometheus",
    ]);
    let fams = parse(&python, &text);
    let r = report_of(&["nat-story"]);
    let ts = samples(&fams, "driftaudit_last_run_timestamp_seconds")[0]["value"]
        .as_f64()
        .unwrap();
    assert!(ts >= before.floor() && ts <= prometheus::now() + 1.0);
    check(&fams, &r, false, ts);

    // --fleet: every host under testdata/hosts, per-rule failing hosts from
    // the fleet summary, the same counts as the library's whole report.
    let text = run(&[
        "check",
        "--fleet",
        "testdata/hosts",
        "--profile",
        "all",
        "--format",
        "prometheus",
    ]);
    let fams = parse(&python, &text);
    let fleet = crate::common::browser::fleet_report();
    let ts = samples(&fams, "driftaudit_last_run_timestamp_seconds")[0]["value"]
        .as_f64()
        .unwrap();
    // Host names repeat in testdata (before/after snapshots); compare sums.
    let sum = |fams: &BTreeMap<String, Json>| -> f64 {
        samples(fams, "driftaudit_findings")
            .iter()
            .map(|s| s["value"].as_f64().unwrap())
            .sum()
    };
    let lib = parse(&python, &prometheus::render_at(&fleet, ts));
    assert_eq!(sum(&fams), sum(&lib));
    // No series twice, though host names repeat (HOST#2).
    let mut seen = std::collections::BTreeSet::new();
    for s in samples(&fams, "driftaudit_findings") {
        assert!(
            seen.insert(s["labels"].to_string()),
            "series twice: {}",
            s["labels"]
        );
    }
    assert_eq!(seen.len(), fleet.hosts.len() * 30);
    assert_eq!(
        samples(&fams, "driftaudit_rule_failing_hosts"),
        samples(&lib, "driftaudit_rule_failing_hosts")
    );
}

/// The shell block after `<!-- consumer: prometheus-recipe -->` in
/// docs/formats.md.
fn recipe() -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/formats.md"))
            .unwrap();
    let rest = &doc[doc
        .find("<!-- consumer: prometheus-recipe -->")
        .expect("recipe marker")..];
    let start = rest.find("```sh\n").expect("sh block") + 6;
    let end = start + rest[start..].find("```").unwrap();
    rest[start..end].to_string()
}

#[test]
fn the_documented_textfile_recipe_writes_a_parsable_file_atomically() {
    let Some(python) = parser() else { return };
    let script = recipe();
    assert!(script.contains("mv "), "{script}");
    let tmp = tempfile::tempdir().unwrap();
    let textfile = tmp.path().join("textfile");
    std::fs::create_dir(&textfile).unwrap();
    // `driftaudit` on PATH is the binary under test, auditing a snapshot
    // (the recipe's `check` reads the live host; the wrapper points it at
    // nat-story so the test does not depend on this machine).
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let wrapper = |body: &str| {
        let p = bin.join("driftaudit");
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    wrapper(&format!(
        "exec {} \"$@\" --snapshot {} --profile all",
        env!("CARGO_BIN_EXE_driftaudit"),
        cli::testdata("hosts").join("nat-story").display()
    ));
    let run = || {
        Command::new("sh")
            .args(["-c", &script])
            .env("TEXTFILE_DIR", &textfile)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .status()
            .unwrap()
    };
    assert!(run().success());
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&textfile), ["driftaudit.prom"], "no temporary left");
    let text = std::fs::read_to_string(textfile.join("driftaudit.prom")).unwrap();
    let fams = parse(&python, &text);
    let r = report_of(&["nat-story"]);
    let ts = samples(&fams, "driftaudit_last_run_timestamp_seconds")[0]["value"]
        .as_f64()
        .unwrap();
    check(&fams, &r, false, ts);
    // An audit that cannot run (exit 2) keeps the previous file, leaves no
    // temporary, and the script fails.
    wrapper("echo partial; exit 2");
    assert!(!run().success());
    assert_eq!(names(&textfile), ["driftaudit.prom"]);
    assert_eq!(
        std::fs::read_to_string(textfile.join("driftaudit.prom")).unwrap(),
        text
    );
}

/// Every `driftaudit_findings` and `driftaudit_unevaluated_domains` series
/// key (name and labels) of parsed families, each exactly once.
fn assert_no_series_twice(fams: &BTreeMap<String, Json>, hosts: usize) {
    for (name, per_host) in [
        ("driftaudit_findings", 30),
        ("driftaudit_unevaluated_domains", 1),
    ] {
        let mut seen = std::collections::BTreeSet::new();
        for s in samples(fams, name) {
            assert!(
                seen.insert(s["labels"].to_string()),
                "{name}: series twice: {}",
                s["labels"]
            );
        }
        assert_eq!(seen.len(), hosts * per_host, "{name}");
    }
}

#[test]
fn prometheus_host_labels_are_unique_when_a_host_is_named_like_a_suffix() {
    // Issue 29, item 9: `a`, `a` and `a#2` gave 31 repeated series (the
    // second `a` became `a#2`, the name of the third host), which
    // node_exporter rejects for the whole textfile.
    let Some(python) = parser() else { return };
    let mut r = report_of(&["nat-story", "clean", "mysql-warmup-story", "clean"]);
    for (h, name) in r.hosts.iter_mut().zip(["a", "a", "a#2", "a#2#2"]) {
        h.host = name.into();
    }
    let text = prometheus::render_at(&r, 0.0);
    let fams = parse(&python, &text);
    assert_no_series_twice(&fams, 4);
    // the first host of a name keeps it exactly; every label names one host
    let hosts: std::collections::BTreeSet<&str> = samples(&fams, "driftaudit_findings")
        .iter()
        .map(|s| s["labels"]["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts.len(), 4, "{hosts:?}");
    assert!(hosts.contains("a") && hosts.contains("a#2") && hosts.contains("a#2#2"));
}

#[test]
fn prometheus_never_writes_a_control_character_into_a_label() {
    // Issue 29, item 9: CR and NUL reached label values raw.
    let Some(python) = parser() else { return };
    let mut r = report_of(&["nat-story", "clean"]);
    r.hosts[0].host = "web\r1\0\x1b[31m\x7f\u{85}\u{2028}\u{202e}".into();
    r.hosts[1].host = "web\\r1".into();
    let text = prometheus::render_at(&r, 0.0);
    for (i, line) in text.split('\n').enumerate() {
        assert!(
            !line.chars().any(|c| c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}')),
            "line {}: a raw control or line-breaking character: {line:?}",
            i + 1
        );
    }
    let fams = parse(&python, &text);
    assert_no_series_twice(&fams, 2);
    let label = samples(&fams, "driftaudit_findings")[0]["labels"]["host"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        label, "web\\r1\\x00\\x1b[31m\\x7f\\x85\\u{2028}\\u{202e}",
        "every control character shown as its escape"
    );
}

/// Characters host data may hold besides [`common::HOSTILE_CHARS`] (the
/// sampler takes both, hostile ones over-represented).
const HOST_ALPHABET: &[char] = &[
    'a', 'Z', '0', '#', '2', ' ', '\\', '"', '\'', '{', '}', '=', ',',
];

#[test]
fn prometheus_for_any_host_names_parses_with_unique_series() {
    // A property test over the host-data alphabet: 48 fleets of 3 hosts
    // whose names are drawn from it (with repeats), parsed by the real
    // parser in one run.
    use proptest::strategy::{Strategy, ValueTree};
    let Some(python) = parser() else { return };
    let base = report_of(&["nat-story", "clean", "clean"]);
    let name = proptest::collection::vec(
        proptest::sample::select([HOST_ALPHABET, common::HOSTILE_CHARS].concat()),
        0..6,
    )
    .prop_map(|v| v.into_iter().collect::<String>());
    let names = proptest::collection::vec(
        proptest::prop_oneof![name.clone(), proptest::strategy::Just("a".to_string())],
        3,
    );
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..48 {
        let names = names.new_tree(&mut runner).unwrap().current();
        let mut r = base.clone();
        for (h, n) in r.hosts.iter_mut().zip(&names) {
            h.host = n.clone();
        }
        let text = prometheus::render_at(&r, 0.0);
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && (c.is_control() || c == '\u{2028}' || c == '\u{2029}')),
            "{names:?}: a raw control character in {text:?}"
        );
        assert_no_series_twice(&parse(&python, &text), 3);
    }
}
