//! Shards of a fleet merged back equal the whole fleet: the partition puts
//! every snapshot folder in exactly one shard, `merge` restores the host
//! order of an unsharded run and recomputes the summary, and the merged
//! JSON is the unsharded JSON byte for byte apart from its `run` line.
//! Reports that cannot be merged (another schema, policy set, version,
//! threshold, a shard missing or twice, an edited summary) are refused
//! with a message naming both files. Library level, through the whole
//! documents (`report::merge`) and through the streamed reading of files
//! that `driftaudit merge` runs (`fleet::merge`), which must agree;
//! tests/workflow/shard_cli.rs runs the same through the binary on a
//! generated fleet.

use std::fs;
use std::path::Path;

use driftaudit::unstable::fleet::merge as streamed;
use driftaudit::unstable::fleet::select::{Selection, Shard};
use driftaudit::unstable::fleet::{self, FleetSummary};
use driftaudit::unstable::policy::{ParamType, PolicySet, Severity};
use driftaudit::unstable::render::stream::{write_merged, FleetWriter};
use driftaudit::unstable::render::{Format, RenderOptions};
use driftaudit::unstable::report::merge::{self, MergeError, RunMeta};
use driftaudit::unstable::report::Report;

use crate::common::audit;
use crate::common::cli::says;
use crate::common::fleet::without_run;

fn testdata() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata"))
}

/// What `check --fleet DIR --format json` writes, over the selected folders.
fn fleet_json(set: &PolicySet, root: &Path, sel: &Selection, run: &RunMeta) -> String {
    let rules = Report::new(vec![], set).rules;
    let mut w = FleetWriter::new(Vec::new(), Format::Json, RenderOptions::default())
        .unwrap()
        .with_run(&rules, run)
        .unwrap();
    let mut summary = FleetSummary::new(set);
    for d in fleet::discover(root, fleet::DEFAULT_MAX_DEPTH) {
        let d = d.unwrap();
        let rel = fleet::relative_path(root, &d);
        if !sel.selects(Path::new(&rel)) {
            continue;
        }
        let mut r = fleet::audit_dir(set, &d);
        r.path = Some(rel.clone());
        summary.add(&r, &rel, Severity::Low);
        w.host(r).unwrap();
    }
    String::from_utf8(w.finish(&summary).unwrap()).unwrap()
}

fn shard_run(set: &PolicySet, shard: Option<Shard>) -> RunMeta {
    RunMeta {
        shard: shard.map(|s| s.to_string()),
        ..RunMeta::new(set, "low")
    }
}

fn merged(docs: &[(String, String)]) -> Result<merge::Merged, MergeError> {
    let parsed = docs
        .iter()
        .map(|(n, t)| merge::parse(n, t).map(|d| (n.clone(), d)))
        .collect::<Result<Vec<_>, _>>()?;
    merge::merge(parsed)
}

/// The streamed merge of the same texts, written to files: the first pass
/// over each, then the checks of the whole; with the folder of the files,
/// which the second pass needs as they are (a file removed has another
/// ctime, and is refused as changed).
fn streamed_plan(
    docs: &[(String, String)],
) -> (tempfile::TempDir, Result<streamed::Plan, MergeError>) {
    let d = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for (name, text) in docs {
        let p = d.path().join(name);
        fs::write(&p, text).unwrap();
        match streamed::scan(name, &p) {
            Ok(i) => inputs.push(i),
            Err(e) => return (d, Err(e)),
        }
    }
    let plan = streamed::plan(inputs);
    (d, plan)
}

/// The folders of the streamed merge's hosts, in the order it writes them.
fn streamed_paths(plan: &streamed::Plan) -> Vec<String> {
    let mut hosts = plan.stream().unwrap();
    let mut paths = Vec::new();
    while let Some(h) = hosts.next_host().unwrap() {
        assert!(h.pretty, "{}: in the layout `check` writes", h.path);
        paths.push(h.path.to_string());
    }
    paths
}

fn rendered(m: &merge::Merged, f: Format) -> String {
    String::from_utf8(write_merged(Vec::new(), m, f, RenderOptions::default()).unwrap()).unwrap()
}

#[test]
fn shards_of_the_testdata_fleet_merged_equal_the_unsharded_report() {
    let set = audit::builtin();
    // testdata/: hosts/* and pairs/*/{before,after}, two and three levels deep
    let root = testdata();
    let whole = fleet_json(&set, root, &Selection::default(), &shard_run(&set, None));
    let whole_doc: serde_json::Value = serde_json::from_str(&whole).unwrap();
    let hosts = whole_doc["hosts"].as_array().unwrap().len();
    assert!(hosts >= 15, "{hosts} hosts");
    for n in [1u32, 3, 8] {
        let docs: Vec<(String, String)> = (1..=n)
            .map(|k| {
                let shard = Shard::new(k, n).unwrap();
                let sel = Selection {
                    shard: Some(shard),
                    changed: None,
                };
                (
                    format!("shard-{k}.json"),
                    fleet_json(&set, root, &sel, &shard_run(&set, Some(shard))),
                )
            })
            .collect();
        // each host in exactly one shard
        let per_shard: usize = docs
            .iter()
            .map(|(_, t)| {
                let v: serde_json::Value = serde_json::from_str(t).unwrap();
                v["hosts"].as_array().unwrap().len()
            })
            .sum();
        assert_eq!(per_shard, hosts, "N={n}");
        // given in any order
        let mut shuffled = docs.clone();
        shuffled.reverse();
        let m = merged(&shuffled).unwrap();
        // the streamed merge: the same summary and run, the hosts in the same order
        let (_files, plan) = streamed_plan(&shuffled);
        let plan = plan.unwrap();
        assert_eq!(plan.summary, m.summary, "N={n}");
        assert_eq!(plan.run, m.run, "N={n}");
        assert_eq!(plan.fails(), m.fails(), "N={n}");
        let order: Vec<String> = m
            .report
            .hosts
            .iter()
            .map(|h| h.path.clone().unwrap())
            .collect();
        assert_eq!(streamed_paths(&plan), order, "N={n}");
        let json = rendered(&m, Format::Json);
        assert_eq!(without_run(&json), without_run(&whole), "N={n}");
        let run: serde_json::Value =
            serde_json::from_str::<serde_json::Value>(&json).unwrap()["run"].clone();
        let want: Vec<String> = (1..=n).map(|k| format!("{k}/{n}")).collect();
        assert_eq!(run["merged"], serde_json::json!(want));
        assert!(run.get("shard").is_none(), "{run}");
        assert_eq!(run["policies"], whole_doc["run"]["policies"]);
        // and every other format is what the renderers make of the whole fleet
        let mut report = Report::new(vec![], &set);
        report.hosts = merged(&[("whole.json".into(), whole.clone())])
            .unwrap()
            .report
            .hosts;
        for f in [Format::Sarif, Format::Junit, Format::Markdown, Format::Html] {
            assert_eq!(
                rendered(&m, f),
                driftaudit::render(&report, f, RenderOptions::default()),
                "{f:?}, N={n}"
            );
        }
        // Prometheus: the same series; only the run's timestamp differs
        let series = |t: String| -> String {
            t.lines()
                .filter(|l| !l.starts_with("driftaudit_last_run_timestamp_seconds "))
                .map(|l| format!("{l}\n"))
                .collect()
        };
        let prom = series(rendered(&m, Format::Prometheus));
        assert!(prom.contains("driftaudit_rule_failing_hosts{"), "N={n}");
        assert_eq!(
            prom,
            series(driftaudit::render(
                &report,
                Format::Prometheus,
                RenderOptions::default()
            )),
            "N={n}"
        );
    }
}

#[test]
fn a_merged_report_merges_again_and_converts_to_every_format() {
    let set = audit::builtin();
    let whole = fleet_json(
        &set,
        testdata(),
        &Selection::default(),
        &shard_run(&set, None),
    );
    let once = merged(&[("whole.json".into(), whole.clone())]).unwrap();
    let again = rendered(&once, Format::Json);
    assert_eq!(without_run(&again), without_run(&whole));
    let twice = merged(&[("merged.json".into(), again)]).unwrap();
    assert_eq!(twice.summary, once.summary);
    assert!(twice.fails(), "the testdata fleet has failures at low");
    let text = rendered(&twice, Format::Text);
    assert!(
        text.contains("fleet summary") || text.contains("hosts"),
        "{text}"
    );
}

fn two_shards(set: &PolicySet) -> Vec<(String, String)> {
    (1..=2)
        .map(|k| {
            let shard = Shard::new(k, 2).unwrap();
            let sel = Selection {
                shard: Some(shard),
                changed: None,
            };
            (
                format!("shard-{k}.json"),
                fleet_json(set, testdata(), &sel, &shard_run(set, Some(shard))),
            )
        })
        .collect()
}

#[test]
fn reports_that_do_not_belong_together_are_refused_naming_both_files() {
    let set = audit::builtin();
    let docs = two_shards(&set);
    // the same refusal, in the same words, from the whole documents and
    // from the streamed reading
    let err = |docs: &[(String, String)]| {
        let whole = merged(docs).unwrap_err().to_string();
        let streamed = streamed_plan(docs).1.unwrap_err().to_string();
        assert_eq!(streamed, whole);
        whole
    };

    // a shard missing, or given twice
    let e = err(&docs[..1]);
    assert!(e.contains("shard 2/2 missing"), "{e}");
    let e = err(&[docs[0].clone(), docs[0].clone()]);
    assert!(e.contains("shard 1/2 given twice"), "{e}");

    // another policy set: the same files with one parameter changed
    let mut other = audit::builtin();
    // a ratio parameter, set to another value of its type
    let param = other
        .policies()
        .iter()
        .find_map(|p| {
            p.param_types
                .iter()
                .find(|(_, t)| matches!(t, ParamType::Ratio))
                .map(|(k, _)| format!("{}.{k}", p.id))
        })
        .expect("a built-in policy with a ratio parameter");
    other.set_param(&format!("{param}=0.5")).unwrap();
    let mixed = vec![docs[0].clone(), two_shards(&other)[1].clone()];
    let e = err(&mixed);
    says(&e, "`shard-1.json` and `shard-2.json` differ in policy set");

    // another threshold, another version
    for (key, value, what) in [
        ("\"fail_on\":\"low\"", "\"fail_on\":\"high\"", "--fail-on"),
        (
            &format!("\"driftaudit\":\"{}\"", env!("CARGO_PKG_VERSION")) as &str,
            "\"driftaudit\":\"0.0.1\"",
            "driftaudit version",
        ),
    ] {
        let mut d = docs.clone();
        assert!(d[1].1.contains(key), "{key}");
        d[1].1 = d[1].1.replace(key, value);
        let e = err(&d);
        assert!(e.contains(&format!("differ in {what}")), "{e}");
    }

    // an edited summary
    let mut d = docs.clone();
    d[1].1 = d[1]
        .1
        .replacen("\"hosts_failing\": ", "\"hosts_failing\": 1", 1);
    let e = err(&d);
    says(
        &e,
        "`shard-2.json`: its `fleet` summary does not match its hosts",
    );

    // an edited host: a failing finding made to pass, the summary left
    let mut d = docs.clone();
    let at = d[1]
        .1
        .find("\"status\": \"fail\"")
        .expect("a failing finding");
    d[1].1.replace_range(at..at + 16, "\"status\": \"pass\"");
    says(
        &err(&d),
        "`shard-2.json`: its `fleet` summary does not match its hosts",
    );
    // a report cut short at a host, still valid JSON
    let mut d = docs.clone();
    let v: serde_json::Value = serde_json::from_str(&d[1].1).unwrap();
    let last = v["hosts"].as_array().unwrap().len() - 1;
    let mut cut = v.clone();
    cut["hosts"].as_array_mut().unwrap().truncate(last);
    d[1].1 = serde_json::to_string_pretty(&cut).unwrap();
    says(
        &err(&d),
        "`shard-2.json`: its `fleet` summary does not match its hosts",
    );

    // whole reports mixed with shards; the same host twice
    let whole = fleet_json(
        &set,
        testdata(),
        &Selection::default(),
        &shard_run(&set, None),
    );
    let e = err(&[docs[0].clone(), ("whole.json".into(), whole.clone())]);
    says(&e, "whole-fleet report(s) given with shard reports");
    let e = err(&[("a.json".into(), whole.clone()), ("b.json".into(), whole)]);
    assert!(e.contains("is in both `a.json` and `b.json`"), "{e}");
}

#[test]
fn what_is_not_a_fleet_report_gets_a_plain_error() {
    let set = audit::builtin();
    let host = driftaudit::unstable::fleet::audit_dir(&set, &testdata().join("hosts/clean"));
    let single = driftaudit::render(
        &Report::new(vec![host], &set),
        Format::Json,
        RenderOptions::default(),
    );
    let cases = [
        (
            single.as_str(),
            "has no `fleet` member: merge reads reports of `check --fleet DIR --format json`",
        ),
        (
            "{\"schema\": \"driftaudit.diff/1\"}",
            "is a `driftaudit.diff/1` document",
        ),
        ("[1, 2]", "not a driftaudit JSON report"),
        (
            "{\"schema\": \"driftaudit.report/1\", \"hosts\": [",
            "not a driftaudit JSON report",
        ),
    ];
    for (text, want) in cases {
        let e = merge::parse("in.json", text).unwrap_err().to_string();
        assert!(e.starts_with("`in.json`"), "{e}");
        assert!(e.contains(want), "{e}");
        let e = streamed_plan(&[("in.json".into(), text.into())])
            .1
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`in.json`"), "{e}");
        assert!(e.contains(want), "{e}");
    }
}
