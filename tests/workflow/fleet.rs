//! `check --fleet`: snapshot discovery (bounded depth, no descent into a
//! snapshot, hidden folders skipped), streamed JSON that stays one valid
//! document, JSON Lines, the fleet summary against the generator's planted
//! ground truth, deterministic output whatever the thread timing, and no
//! secret in any output.

use std::fs;
use std::path::Path;

use driftaudit::unstable::fleet;

fn mk(p: &Path) {
    fs::create_dir_all(p).unwrap();
}

#[test]
fn discovery_finds_snapshots_and_stops_at_them() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    mk(&r.join("a"));
    fs::write(r.join("a/snapshot.json"), "{}").unwrap();
    mk(&r.join("a/inner/etc")); // inside a snapshot: not a separate host
    mk(&r.join("b/etc"));
    mk(&r.join("dc1/c/proc"));
    mk(&r.join(".git/objects/etc")); // hidden: skipped
    mk(&r.join("empty/dir"));
    mk(&r.join("deep/1/2/3/4/5/6/etc")); // the snapshot is at depth 7
    fs::write(r.join("notes.txt"), "x").unwrap();
    let found: Vec<String> = fleet::discover(r, fleet::DEFAULT_MAX_DEPTH)
        .map(|p| fleet::relative_path(r, &p.unwrap()))
        .collect();
    assert_eq!(found, ["a", "b", "dc1/c"]);
    let deeper: Vec<String> = fleet::discover(r, 8)
        .map(|p| fleet::relative_path(r, &p.unwrap()))
        .collect();
    assert_eq!(deeper, ["a", "b", "dc1/c", "deep/1/2/3/4/5/6"]);
    // the fleet dir itself being a snapshot: exactly one host
    let one: Vec<_> = fleet::discover(&r.join("b"), 6).collect();
    assert_eq!(one.len(), 1);
}

use driftaudit::{Format, RenderOptions};

use crate::common::cli;
use crate::common::cli::says;
use crate::common::fleet::generate;
use crate::common::tree::copy_into;

/// The kit's fleet runner, over the fleet `dir` given last.
fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.push(dir.to_str().unwrap());
    crate::common::fleet::run(&all, cli::repo_root())
}

/// The shipped test hosts (testdata/hosts) as one fleet.
fn shipped() -> std::path::PathBuf {
    cli::testdata("hosts")
}

#[test]
fn generated_fleet_summary_matches_planted_problems() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("fleet");
    if generate(&dir, 40, &["--seed", "7"], &[]).is_none() {
        return;
    }
    let planted = fs::read_to_string(dir.join("planted.tsv")).unwrap();
    let count = |p: &str| {
        planted
            .lines()
            .filter(|l| l.ends_with(&format!("\t{p}")))
            .count()
    };

    let (code, json, err) = run(&["check", "--format", "json", "--fleet"], &dir);
    assert_eq!(code, 1, "planted high findings must exit 1; stderr: {err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("one valid JSON document");
    assert_eq!(v["schema"], "driftaudit.report/1");
    assert_eq!(v["hosts"].as_array().unwrap().len(), 40);
    let f = &v["fleet"];
    assert_eq!(f["schema"], "driftaudit.fleet/1");
    assert_eq!(f["hosts"], 40);
    let recycle = &f["rules"]["linux.tcp-tw-recycle"];
    assert_eq!(
        recycle["hosts_failing"].as_u64().unwrap() as usize,
        count("tcp_tw_recycle"),
        "{recycle}"
    );
    assert!(
        count("tcp_tw_recycle") > 0,
        "seed 7 plants tcp_tw_recycle somewhere"
    );
    let worst = recycle["worst"].as_array().unwrap();
    assert!(!worst.is_empty() && worst.len() <= fleet::WORST_EXAMPLES);
    for w in worst {
        let host = w["host"].as_str().unwrap();
        assert!(planted.contains(&format!("{host}\ttcp_tw_recycle")), "{w}");
        assert_eq!(w["actual"], "1");
    }
    // every host counted once per rule
    for (id, r) in f["rules"].as_object().unwrap() {
        let total: u64 = [
            "hosts_failing",
            "hosts_passing",
            "hosts_skipped",
            "hosts_unknown",
            "hosts_error",
        ]
        .iter()
        .map(|k| r[k].as_u64().unwrap())
        .sum::<u64>()
            + r["hosts_waived"].as_u64().unwrap_or(0);
        assert!(total <= 40, "{id}: {total}");
    }

    // JSON Lines: one host per line, then the summary line
    let (_, jsonl, _) = run(&["check", "--format", "jsonl", "--fleet"], &dir);
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 41);
    assert!(lines[..40]
        .iter()
        .all(|h| h["host"].is_string() && h["findings"].is_array()));
    assert_eq!(lines[40], *f);

    // text: hosts then the summary; deterministic across runs
    let (_, text1, _) = run(&["check", "--fleet"], &dir);
    let (_, text2, _) = run(&["check", "--fleet"], &dir);
    assert_eq!(
        text1, text2,
        "fleet output must not depend on thread timing"
    );
    assert!(text1.contains("==> fleet summary (40 hosts)"));
    assert!(text1
        .trim_end()
        .lines()
        .last()
        .unwrap()
        .starts_with("fleet: 40 hosts"));
    let (_, json2, _) = run(&["check", "--format", "json", "--fleet"], &dir);
    assert_eq!(json, json2);

    // secrets planted by the generator never appear
    for out in [&json, &jsonl, &text1] {
        assert!(!out.contains("never-print-me") && !out.contains("s3cr3t"));
    }
}

/// A fresh clone has no shared corpus: gen-fleet falls back to its shipped
/// key base and the fleet still audits with the planted problems found.
#[test]
fn gen_fleet_works_without_the_corpus() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("fleet");
    let no_corpus = t.path().join("no-corpus-here");
    let Some(err) = generate(
        &dir,
        12,
        &["--seed", "3"],
        &[("DRIFTAUDIT_CORPUS", &no_corpus)],
    ) else {
        return;
    };
    says(&err, "from the built-in gen-fleet-sysctl.txt");
    let hosts = fleet::discover(&dir, fleet::DEFAULT_MAX_DEPTH)
        .map(|h| h.unwrap())
        .collect::<Vec<_>>();
    assert_eq!(hosts.len(), 12);
    for h in &hosts {
        let cap = fs::read_to_string(h.join("captures/sysctl-a.txt")).unwrap();
        assert!(
            cap.lines().count() > 1000,
            "{}: a real capture has ~1,000 keys",
            h.display()
        );
    }
    let planted = fs::read_to_string(dir.join("planted.tsv")).unwrap();
    let (code, json, err) = run(&["check", "--format", "json", "--fleet"], &dir);
    assert!(code == 0 || code == 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["fleet"]["hosts"], 12);
    let mut found = 0;
    for (rule, problem) in [
        ("linux.tcp-tw-recycle", "tcp_tw_recycle"),
        (
            "linux.tcp-tw-recycle-stale-line",
            "stale-tcp_tw_recycle-line",
        ),
        ("linux.aslr", "aslr-off"),
        ("linux.tcp-syncookies", "syncookies-off"),
        ("linux.accept-redirects", "accept_redirects"),
    ] {
        let planted_n = planted
            .lines()
            .filter(|l| l.ends_with(&format!("\t{problem}")))
            .count() as u64;
        let r = &v["fleet"]["rules"][rule];
        assert_eq!(
            r["hosts_failing"].as_u64().unwrap_or(0),
            planted_n,
            "{rule}: {r}"
        );
        found += planted_n;
    }
    assert!(
        found > 0,
        "seed 3 plants these problems somewhere: {planted}"
    );
}

#[test]
fn empty_fleet_is_an_error() {
    let t = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["check", "--fleet"], t.path());
    assert_eq!(code, 2);
    assert!(err.contains("no snapshot folders found"), "{err}");
}

/// A `for_each` rule's fleet row counts a host when any of its items fails
/// there; each item's alias (the rule's old id) keeps a row of its own for
/// that item alone, marked `alias_of`, and both agree with the host reports.
#[test]
fn fleet_summary_counts_a_for_each_rule_and_each_alias() {
    let (_, out, err) = run(&["check", "--format", "json", "--fleet"], &shipped());
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    let rules = &doc["fleet"]["rules"];
    // expected counts from the per-host findings themselves
    let hosts = doc["hosts"].as_array().unwrap();
    let failing = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        hosts
            .iter()
            .filter(|h| {
                h["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["status"] == "fail" && pred(f))
            })
            .count() as u64
    };
    let rule = failing(&|f| f["rule"] == "storage.noatime");
    let alias = failing(&|f| f["alias"] == "storage.noatime-zimbra-db");
    assert!(
        alias > 0 && rule > alias,
        "testdata has both: {rule} {alias}"
    );
    assert_eq!(rules["storage.noatime"]["hosts_failing"], rule);
    assert!(rules["storage.noatime"].get("alias_of").is_none());
    let a = &rules["storage.noatime-zimbra-db"];
    assert_eq!(a["hosts_failing"], alias);
    assert_eq!(a["alias_of"], "storage.noatime");
}

/// `driftaudit ARGS` on a fixed day, so the waivers' expiry dates judge
/// the same whenever the test runs.
fn bin(args: &[&str]) -> (i32, String, String) {
    cli::parts(
        cli::cmd()
            .args(args)
            .env("DRIFTAUDIT_TODAY", "2026-12-01")
            .output()
            .expect("run driftaudit"),
    )
}

/// The `driftaudit.waiver` findings of a JSON report: from the hosts and
/// from the fleet summary's `run_findings`.
fn waiver_verdicts(json: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut docs: Vec<serde_json::Value> = Vec::new();
    for l in json.lines().filter(|l| l.starts_with('{')) {
        if let Ok(v) = serde_json::from_str(l) {
            docs.push(v);
        }
    }
    if docs.is_empty() {
        docs.push(serde_json::from_str(json).unwrap());
    }
    for d in &docs {
        let mut fs: Vec<&serde_json::Value> = Vec::new();
        for h in d["hosts"].as_array().into_iter().flatten() {
            fs.extend(h["findings"].as_array().into_iter().flatten());
        }
        fs.extend(d["findings"].as_array().into_iter().flatten());
        fs.extend(d["fleet"]["run_findings"].as_array().into_iter().flatten());
        fs.extend(d["run_findings"].as_array().into_iter().flatten());
        for f in fs.into_iter().filter(|f| f["rule"] == "driftaudit.waiver") {
            out.push(f["subject"][0].as_str().unwrap_or("").to_string());
        }
    }
    out.sort();
    out
}

/// Issue 30: `check --fleet --waivers` exited 2 ("not supported with
/// --fleet yet"), and a waiver scoped to `host: "db*"` was a failing
/// `driftaudit.waiver` finding on a host it did not scope, so one waiver
/// file could not serve a fleet. Now waivers reach --snapshot (one or
/// many), --fleet, --shard and merge, and a waiver is stale only when it
/// scopes a host of the run and matches nothing on any of them.
#[test]
fn one_shared_waiver_file_serves_a_host_a_fleet_and_its_shards() {
    let root = cli::repo_root();
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    copy_into(&root.join("testdata/hosts/nat-story"), &fleet.join("web"));
    copy_into(&root.join("testdata/hosts/clean"), &fleet.join("db"));
    let w = dir.path().join("waivers.yaml");
    fs::write(
        &w,
        "- rule: linux.tcp-tw-recycle\n  host: \"web-*\"\n  reason: kernel upgrade scheduled (OPS-1)\n  expires: 2099-01-01\n\
         - rule: linux.unprivileged-bpf\n  host: \"db*\"\n  reason: fixed long ago\n  expires: 2099-01-01\n\
         - rule: linux.aslr\n  host: \"mail*\"\n  reason: mail hosts only\n  expires: 2099-01-01\n",
    )
    .unwrap();
    let (w_s, fleet_s) = (w.to_str().unwrap(), fleet.to_str().unwrap());
    let stale = vec![format!("{w_s}:5")];
    // `check ARGS --waivers FILE --format FORMAT`
    let waived = |args: &[&str], format: &str| {
        let mut all = vec!["check"];
        all.extend(args);
        all.extend(["--waivers", w_s, "--format", format]);
        bin(&all)
    };
    // one host the db* and mail* waivers do not scope: neither is judged
    let web = fleet.join("web");
    let (code, out, err) = waived(&["--snapshot", web.to_str().unwrap()], "json");
    assert_eq!(code, 1, "{err}");
    assert_eq!(waiver_verdicts(&out), Vec::<String>::new(), "{out}");
    assert!(
        out.contains("\"status\": \"waived\""),
        "the web waiver covers its finding"
    );
    // both hosts as snapshots: the db* waiver scopes db and matches nothing
    let db = fleet.join("db");
    let (_, out, _) = waived(
        &[
            "--snapshot",
            web.to_str().unwrap(),
            "--snapshot",
            db.to_str().unwrap(),
        ],
        "json",
    );
    assert_eq!(waiver_verdicts(&out), stale);
    // the fleet, in a streamed and a whole-document format: the same verdict
    for format in ["json", "jsonl"] {
        let (code, out, err) = waived(&["--fleet", fleet_s], format);
        assert_eq!(code, 1, "{format}: {err}");
        assert_eq!(waiver_verdicts(&out), stale, "{format}: {out}");
    }
    let (_, text, _) = bin(&["check", "--fleet", fleet_s, "--waivers", w_s]);
    says(&text, "driftaudit.waiver: stale waiver at");
    says(&text, ":5 (rule `linux.unprivileged-bpf`, host `db*`)");
    let (_, sarif, _) = waived(&["--fleet", fleet_s], "sarif");
    assert_eq!(
        sarif.matches("\"ruleId\": \"driftaudit.waiver\"").count(),
        1,
        "{sarif}"
    );
    // shards leave the verdict to merge, which needs the file
    let mut shards = Vec::new();
    for k in ["1/2", "2/2"] {
        let (_, out, err) = waived(&["--fleet", fleet_s, "--shard", k], "json");
        assert_eq!(waiver_verdicts(&out), Vec::<String>::new(), "{k}: {err}");
        let p = dir.path().join(format!("shard-{}.json", &k[..1]));
        fs::write(&p, out).unwrap();
        shards.push(p.to_str().unwrap().to_string());
    }
    let (code, _, err) = bin(&["merge", &shards[0], &shards[1]]);
    assert_eq!(code, 2);
    assert!(err.contains("give `merge --waivers FILE`"), "{err}");
    let (code, out, err) = bin(&["merge", &shards[0], &shards[1], "--waivers", w_s]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(waiver_verdicts(&out), stale, "{out}");

    // every format as the whole documents merge them (`report::merge`, what
    // `merge` did before it streamed): the verdicts in the summary of text,
    // JSON and JSON Lines, on the first host of the name each was found on
    // in the others (Prometheus counts them with that host); and when no
    // host has that name, on the first host
    let (db_name, web_name) = {
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let hosts = v["hosts"].as_array().unwrap();
        assert_eq!(hosts[0]["path"], "db", "the first host");
        let name = |h: &serde_json::Value| h["host"].as_str().unwrap().to_string();
        (name(&hosts[0]), name(&hosts[1]))
    };
    for first_host in [None, Some("gone"), Some(web_name.as_str())] {
        let inputs: Vec<String> = match first_host {
            None => shards.clone(),
            Some(name) => shards
                .iter()
                .map(|p| {
                    let text = fs::read_to_string(p).unwrap();
                    let edited: String = text
                        .lines()
                        .map(|l| match l.starts_with("  \"run\": ") {
                            true => l.replace(&format!("\"{db_name}\""), &format!("\"{name}\"")),
                            false => l.to_string(),
                        })
                        .map(|l| l + "\n")
                        .collect();
                    let q = format!("{p}.{}", name.len());
                    fs::write(&q, edited).unwrap();
                    q
                })
                .collect(),
        };
        let runs: String = inputs
            .iter()
            .map(|p| fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(
            runs.contains(&format!(
                "\"first_host\":[\"{web_name}\",\"{db_name}\",null]"
            )),
            first_host.is_none(),
            "{runs}"
        );
        for format in [
            Format::Text,
            Format::Json,
            Format::Jsonl,
            Format::Prometheus,
            Format::Markdown,
            Format::Html,
        ] {
            let (code, got, err) = bin(&[
                "merge",
                &inputs[0],
                &inputs[1],
                "--waivers",
                w_s,
                "--format",
                format.name(),
            ]);
            assert_eq!(code, 1, "{format:?}: {err}");
            let want = merged_whole(&inputs, &w, format);
            assert_eq!(series(&got), series(&want), "{format:?}, {first_host:?}");
        }
    }
}

/// `merge --waivers FILE` of `shards` as the whole documents merge them
/// (the library's `report::merge`, what `merge` ran before it streamed).
fn merged_whole(shards: &[String], waivers: &Path, format: Format) -> String {
    use driftaudit::unstable::report::merge;
    let docs = shards
        .iter()
        .map(|p| {
            (
                p.clone(),
                merge::parse(p, &fs::read_to_string(p).unwrap()).unwrap(),
            )
        })
        .collect();
    let mut m = merge::merge(docs).unwrap();
    let usage = m.run.waivers.clone().unwrap().usage;
    let verdicts = driftaudit::WaiverSet::load(waivers)
        .unwrap()
        .verdicts(&usage, "2026-12-01");
    assert!(!verdicts.is_empty());
    if format.streams() {
        m.summary.add_run_findings(verdicts);
    } else {
        driftaudit::unstable::waiver::attach(&mut m.report, verdicts);
    }
    let out = driftaudit::unstable::render::stream::write_merged(
        Vec::new(),
        &m,
        format,
        RenderOptions::default(),
    );
    String::from_utf8(out.unwrap()).unwrap()
}

/// Metrics without the run's timestamp (the one line two runs differ in).
fn series(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("driftaudit_last_run_timestamp_seconds "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Issue 30: `check --fleet` of the 16 shipped hosts printed 1,878 lines
/// with no quiet or summary mode, its Markdown was 104,715 characters (over
/// GitHub's 65,536-character comment limit), and the text summary gave
/// canonical and alias ids separate rows.
#[test]
fn a_fleet_report_fits_where_people_read_it() {
    let hosts = shipped();
    let n = fleet::discover(&hosts, fleet::DEFAULT_MAX_DEPTH).count();
    assert!(n >= 16, "{n}");
    // --quiet: one line per host, then the totals
    let (code, out, err) = run(&["check", "--quiet", "--fleet"], &hosts);
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), n + 1, "{out}");
    assert!(
        lines[..n]
            .iter()
            .all(|l| l.contains(": clean (") || l.contains(" failed (")),
        "{out}"
    );
    assert!(
        lines[n].starts_with(&format!("fleet: {n} hosts, ")),
        "{out}"
    );
    says(
        &out,
        "web-backend-02: 3 failed (linux.tcp-tw-recycle, linux.unprivileged-bpf, ",
    );
    // --summary: the table alone, one row per rule, aliases under it
    let (_, table, _) = run(&["check", "--summary", "--fleet"], &hosts);
    crate::common::cli::starts(&table, &format!("==> fleet summary ({n} hosts)"));
    assert!(!table.contains("  FAIL "), "no host findings: {table}");
    let row = |id: &str| {
        table
            .lines()
            .any(|l| l.trim_start().starts_with(&format!("{id} ")))
    };
    assert!(row("storage.noatime"));
    assert!(
        !row("storage.noatime-zimbra-db"),
        "an alias has no row: {table}"
    );
    says(
        &table,
        "aliases: storage.noatime-mysql, storage.noatime-zimbra-db, storage.noatime-zimbra-index",
    );
    // the JSON summary keeps the alias rows (alias_of) for machines
    let (_, json, _) = run(&["check", "--format", "json", "--fleet"], &hosts);
    assert!(json.contains("\"alias_of\": \"storage.noatime\""));
    // Markdown fits one GitHub comment and says what it left out
    let (_, md, _) = run(&["check", "--format", "markdown", "--fleet"], &hosts);
    assert!(md.chars().count() <= 65_536, "{}", md.chars().count());
    let last = md.trim_end().lines().last().unwrap();
    says(last, "more findings");
    says(last, "see the attached report");
    let one = shipped().join("nat-story");
    let (_, md1, _) = run(&["check", "--format", "markdown", "--snapshot"], &one);
    assert!(!md1.contains("more findings"), "{md1}");
    // they shape the text report only
    let (code, _, err) = run(
        &["check", "--quiet", "--format", "json", "--snapshot"],
        &one,
    );
    assert_eq!(code, 2);
    assert!(err.contains("--quiet shapes the text report"), "{err}");
}

/// Issue 30 ("text for people"): the fleet summary's `worst` column held
/// record dumps cut at 40 characters, several hosts joined with `; ` on one
/// line, and `1 failing = 1` gave a value without the key it belongs to.
/// Each example is now a line of its own: the host (its folder when the
/// name differs), how many of its subjects fail, and `[subject] value` as
/// `check` prints them; JSON keeps the subject beside the value.
#[test]
fn the_fleet_summarys_worst_hosts_say_which_key_has_which_value() {
    let (_, out, err) = run(&["check", "--summary", "--fleet"], &shipped());
    assert!(out.starts_with("==> fleet summary ("), "{out}{err}");
    let worst: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("worst: "))
        .collect();
    assert!(worst.len() >= 10, "{out}");
    says(
        &out,
        "worst: web-backend-02 (nat-story): [net.ipv4.tcp_tw_recycle] 1\n",
    );
    says(
        &out,
        "worst: mysql-includedir-override: [max_connections] 400\n",
    );
    // a host with two failing subjects of a rule says so, then the first
    says(&out, "worst: zimbra-storage-before: 2 failing, first [zimbra-db, /] media_hidden: OFF, rotational: ON, mount: /\n");
    for l in out.lines() {
        assert!(
            !l.contains(" failing = "),
            "the old `N failing = value`: {l}"
        );
        assert!(!l.contains("; "), "one example a line: {l}");
        assert!(!l.contains('{'), "a record dump: {l}");
    }
    // the second and third examples of a rule are lines of their own
    let recycle = out
        .split("linux.tcp-tw-recycle ")
        .nth(1)
        .expect("tcp-tw-recycle row");
    let rows: Vec<&str> = recycle.lines().skip(1).take(3).collect();
    assert!(
        rows[1]
            .trim_start()
            .starts_with("db01.example.com (sos-centos7-mariadb): ["),
        "{rows:?}"
    );
    let (_, json, _) = run(&["check", "--format", "json", "--fleet"], &shipped());
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ex = &v["fleet"]["rules"]["linux.tcp-tw-recycle"]["worst"][0];
    assert_eq!(ex["subject"][0], "net.ipv4.tcp_tw_recycle", "{ex}");
    assert_eq!(ex["actual"], "1", "{ex}");
}

/// SARIF, JUnit, Markdown and HTML are one document over every host, kept in
/// memory until it is written (about 0.25-0.7 MB a host, docs/performance.md):
/// a fleet larger than the documented limit is refused before any host is
/// audited, with the way out (shards, or a format that streams), instead of
/// growing until the machine runs out of memory.
#[test]
fn a_fleet_too_large_for_one_document_is_refused_before_it_is_audited() {
    let limit = driftaudit::unstable::render::WHOLE_DOCUMENT_HOSTS;
    let t = tempfile::tempdir().unwrap();
    for i in 0..=limit {
        let h = t.path().join(format!("h{i:05}"));
        mk(&h);
        fs::write(h.join("snapshot.json"), "{}").unwrap();
    }
    let dir = t.path().to_str().unwrap();
    for format in ["sarif", "junit", "markdown", "html"] {
        let (code, out, err) = bin(&["check", "--fleet", dir, "--format", format]);
        assert_eq!(code, 2, "--format {format}: {err}");
        assert!(
            out.is_empty(),
            "--format {format} wrote a report: {out:.200}"
        );
        assert!(
            err.contains(&format!(
                "--format {format} is one document over every host"
            )) && err.contains(&format!("at most {limit} hosts"))
                && err.contains("--shard 1/N")
                && err.contains("jsonl"),
            "--format {format}: {err}"
        );
        // one line, nothing audited: no per-host message before it
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // `--help` says so where the format is chosen
    let (_, help, _) = bin(&["check", "--help"]);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains(&format!("more than {limit} hosts is refused")),
        "{help}"
    );
}

/// The scale benchmark (scripts/bench-scale, issue 35) runs end to end on a
/// tiny generated fleet with this build's binary: every section, every
/// format and a met/missed verdict for each goal it judges. A benchmark,
/// not a timed test: nothing here depends on how fast the machine is.
#[test]
fn the_scale_benchmark_runs_every_section_on_a_tiny_fleet() {
    if crate::common::program("python3", "python3").is_none()
        || crate::common::program("time", "time").is_none()
    {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let out = cli::ok(
        std::process::Command::new("bash")
            .arg(cli::repo_root().join("scripts/bench-scale"))
            .args(["9", "5"])
            .env("BIN", cli::BIN)
            .env("SMALL_HOSTS", "4")
            .env("SHARDS", "2")
            .env("MERGE_HOSTS", "6")
            .env("BENCH_DIR", t.path()),
        "scripts/bench-scale 9 5",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for part in [
        "== flat memory: 9 hosts in one run against 4",
        "peak RSS 9 / 4 hosts: ",
        "shard 2/2: ",
        "cat of the shard files (reading them): ",
        "cat | cat of the shard files (reading them and moving the bytes): ",
        "merge --format json / cat | cat: ",
        "merge --format json / cat: ",
        "== every fleet format on 5 hosts",
    ] {
        says(&text, part);
    }
    for format in [
        "jsonl",
        "json",
        "text",
        "prometheus",
        "sarif",
        "junit",
        "markdown",
        "html",
    ] {
        says(&text, &format!("\n{format}: "));
    }
    let verdicts = text
        .lines()
        .filter(|l| l.contains("; goal <= "))
        .map(|l| l.ends_with(": met") || l.ends_with(": MISSED"))
        .collect::<Vec<bool>>();
    assert_eq!(verdicts, [true, true], "{text}");
    // the generated fleets are its own, in BENCH_DIR, and gone after it
    assert_eq!(fs::read_dir(t.path()).unwrap().count(), 0, "{text}");
}

/// scripts/same-output (issue 47: a refactor changes no report) finds no
/// difference between a binary and itself, and finds one between it and a
/// wrapper that changes one byte of one report: the proof it gives is one
/// that could fail.
#[test]
fn same_output_passes_a_binary_against_itself_and_catches_a_changed_report() {
    if crate::common::program("python3", "python3").is_none() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let script = cli::repo_root().join("scripts/same-output");
    let out = cli::ok(
        std::process::Command::new("bash")
            .arg(&script)
            .args([cli::BIN, cli::BIN, "3"])
            .env("TMPDIR", t.path()),
        "scripts/same-output BIN BIN 3",
    );
    let text = String::from_utf8(out.stdout).unwrap();
    says(&text, "runs compared, 0 differences");
    // a "new" binary whose JSON of nat-story says another host
    let wrapper = crate::common::tree::file(
        t.path(),
        "changed",
        &format!(
            "#!/bin/sh\ncase \"$*\" in *nat-story*json*) exec {} \"$@\" | sed 's/web1/web9/';; esac\nexec {} \"$@\"\n",
            cli::BIN,
            cli::BIN
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::process::Command::new("bash")
        .arg(&script)
        .args([cli::BIN, wrapper.to_str().unwrap(), "3"])
        .env("TMPDIR", t.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    says(&text, "DIFF testdata/hosts/nat-story json");
    says(&text, "1 differences");
}
