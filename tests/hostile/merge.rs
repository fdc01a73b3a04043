//! `driftaudit merge` over hostile shards. It holds one host of each
//! report at a time, not the fleet (issue 35: it held every shard's hosts,
//! 2.28 GB for 10,000 hosts, and refused a report over 256 MiB): the first
//! pass and the second over a report ten times as large peak at the same
//! bytes, and four reports with a large rule catalogue at about what one
//! does (issue 51: each report's catalogue was kept parsed, plus a copy),
//! measured by the counting allocator on the thread that runs them (the
//! library's passes start no thread). Bounded by bytes, not time. What the
//! second pass copies is what the first checked (a shard rewritten in place
//! between them is refused), every host is a host report before anything
//! is written, and what is not in the layout `check` writes (CR LF lines)
//! is rendered again, not copied (issue 51).
//! tests/hostile/merge_layouts.rs feeds shards in other layouts at random.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

use driftaudit::unstable::fleet::merge as streamed;
use driftaudit::unstable::fleet::{self, FleetSummary};
use driftaudit::unstable::policy::RuleSource;
use driftaudit::unstable::policy::{PolicySet, Severity};
use driftaudit::unstable::render::stream::FleetWriter;
use driftaudit::unstable::render::{Format, RenderOptions};
use driftaudit::unstable::report::merge::{summarize, RunMeta};
use driftaudit::unstable::report::{HostReport, Report, RuleMeta};

use crate::alloc::measure;
use crate::common::cli::{repo_root, says};
use crate::common::fleet::{run, testdata_fleet, without_run};
use crate::common::tree::file;

/// A fleet report of `copies` copies of `hosts`, each copy under a folder
/// of its own, in path order, as `check --fleet --format json` writes it.
fn report(set: &PolicySet, hosts: &[HostReport], copies: usize) -> Vec<u8> {
    let rules = Report::new(vec![], set).rules;
    let mut w = FleetWriter::new(Vec::new(), Format::Json, RenderOptions::default())
        .unwrap()
        .with_run(&rules, &RunMeta::new(set, "low"))
        .unwrap();
    let mut summary = FleetSummary::new(set);
    for c in 0..copies {
        for h in hosts {
            let mut h = h.clone();
            let path = format!("c{c:04}/{}", h.host);
            h.path = Some(path.clone());
            summary.add(&h, &path, Severity::Low);
            w.host(h).unwrap();
        }
    }
    w.finish(&summary).unwrap()
}

/// The hosts of testdata/hosts, audited, one of each name, by name.
fn testdata_hosts(set: &PolicySet) -> Vec<HostReport> {
    let testdata = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts"));
    let mut dirs: Vec<_> = fs::read_dir(testdata)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut hosts: Vec<HostReport> = dirs.iter().map(|d| fleet::audit_dir(set, d)).collect();
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    hosts.dedup_by(|a, b| a.host == b.host);
    assert!(hosts.len() >= 10, "{} hosts", hosts.len());
    hosts
}

/// Both passes over one report: every host's bytes, counted.
fn merge_all(path: &Path) -> (usize, usize) {
    let input = streamed::scan("report.json", path).unwrap();
    let plan = streamed::plan(vec![input]).unwrap();
    let mut hosts = plan.stream().unwrap();
    let (mut n, mut bytes) = (0, 0);
    while let Some(h) = hosts.next_host().unwrap() {
        assert!(h.pretty);
        n += 1;
        bytes += h.text.len();
    }
    (n, bytes)
}

#[test]
fn merging_a_report_ten_times_as_large_holds_no_more() {
    let set = PolicySet::builtin().unwrap();
    let hosts = testdata_hosts(&set);
    let d = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for copies in [2, 20] {
        let p = d.path().join(format!("{copies}.json"));
        let text = report(&set, &hosts, copies);
        fs::write(&p, &text).unwrap();
        let (cost, (n, bytes)) = measure(|| merge_all(&p));
        assert_eq!(n, hosts.len() * copies);
        assert!(
            bytes * 10 > text.len() * 9,
            "the hosts are most of the report"
        );
        peaks.push((text.len(), cost.peak));
    }
    let ((small, small_peak), (large, large_peak)) = (peaks[0], peaks[1]);
    assert!(large >= 9 * small, "{large} against {small} bytes");
    // a window of the report (a 1 MiB read, the host being read) and the
    // summary: the same whatever the report's size
    assert!(
        large_peak <= small_peak + small_peak / 4,
        "{large_peak} bytes held for a report of {large} bytes, {small_peak} for one of {small}"
    );
    assert!(large_peak < 8 << 20, "{large_peak} bytes held");
}

/// A rule catalogue of `n` rules whose `why` and `fix` are a few KB each,
/// as a large policy set's are.
fn large_catalogue(n: usize) -> Vec<RuleMeta> {
    (0..n)
        .map(|i| RuleMeta {
            id: format!("big.rule-{i:05}"),
            policy: "big".into(),
            title: format!("Rule {i} of a large policy set"),
            severity: Severity::ALL[i % Severity::ALL.len()],
            why: format!("why {i}: ").repeat(300),
            fix: format!("fix {i}: ").repeat(300),
            references: vec![format!("https://example.com/rules/{i}")],
            tags: vec!["big".into()],
            source: RuleSource {
                path: "big.yaml".into(),
                line: i + 1,
            },
        })
        .collect()
}

/// A whole fleet report (no shard) over the catalogue `rules`, of `hosts`
/// each under the folder `prefix/`, as `check --fleet --format json`
/// writes it.
fn report_over(set: &PolicySet, rules: &[RuleMeta], hosts: &[HostReport], prefix: &str) -> Vec<u8> {
    let mut w = FleetWriter::new(Vec::new(), Format::Json, RenderOptions::default())
        .unwrap()
        .with_run(rules, &RunMeta::new(set, "low"))
        .unwrap();
    let mut placed = Vec::new();
    for h in hosts {
        let mut h = h.clone();
        h.path = Some(format!("{prefix}/{}", h.host));
        placed.push(h);
    }
    let summary = summarize(rules, &placed, Severity::Low);
    for h in placed {
        w.host(h).unwrap();
    }
    w.finish(&summary).unwrap()
}

/// Issue 51, item 6: `merge` kept each report's rule catalogue parsed
/// (compared as values), plus a copy for the merged report, so a 60 MB
/// report needed 1.5 GB and four needed 3 GB. Four reports that share a
/// large catalogue merge at about the bytes one does, near one parsed
/// catalogue and its text, not five (51 and 90 MB for one and four
/// reports of a 12 MB catalogue before; 25 and 28 MB now).
#[test]
fn merging_four_reports_with_a_large_catalogue_holds_about_one_catalogue() {
    let set = PolicySet::builtin().unwrap();
    let hosts = testdata_hosts(&set);
    let rules = large_catalogue(2_000);
    let d = tempfile::tempdir().unwrap();
    let paths: Vec<_> = hosts
        .chunks(hosts.len().div_ceil(4))
        .enumerate()
        .map(|(k, part)| {
            let p = d.path().join(format!("r{k}.json"));
            fs::write(&p, report_over(&set, &rules, part, &format!("r{k}"))).unwrap();
            p
        })
        .collect();
    assert_eq!(paths.len(), 4);
    // one catalogue parsed, from its text
    let text = serde_json::to_vec(&rules).unwrap();
    assert!(text.len() > 8 << 20, "{} bytes of catalogue", text.len());
    let (one, parsed) = measure(|| serde_json::from_slice::<Vec<RuleMeta>>(&text).unwrap());
    assert_eq!(parsed, rules);
    drop(parsed);
    let merge = |paths: &[std::path::PathBuf]| {
        let inputs = paths
            .iter()
            .map(|p| streamed::scan(&p.display().to_string(), p).unwrap())
            .collect();
        let plan = streamed::plan(inputs).unwrap();
        assert_eq!(plan.rules.len(), rules.len());
        let mut hosts = plan.stream().unwrap();
        let mut n = 0;
        while hosts.next_host().unwrap().is_some() {
            n += 1;
        }
        n
    };
    let (alone, n) = measure(|| merge(&paths[..1]));
    assert!(n > 0);
    let (four, n) = measure(|| merge(&paths));
    assert_eq!(n, hosts.len());
    assert!(
        four.peak <= alone.peak + alone.peak / 4,
        "{} bytes held for four reports, {} for one",
        four.peak,
        alone.peak
    );
    // the catalogue's text (as long as its parse, here) while it is
    // parsed, and that one parse
    assert!(
        four.peak < 2 * one.peak + one.peak / 2,
        "{} bytes held for four reports; one parsed catalogue is {}",
        four.peak,
        one.peak
    );
}

/// The two shards of the testdata fleet as `check --fleet testdata/hosts
/// --shard K/2 --format json` writes them.
fn testdata_shards() -> [String; 2] {
    ["1/2", "2/2"].map(|k| testdata_fleet("json", &["--shard", k]).1)
}

/// Issue 51, item 1: between the passes `merge` checked only a report's
/// device, inode, length and mtime, and the second pass copied a host's
/// JSON as it read it: the owner of a shard who rewrote it in place at the
/// same length and put the mtime back had forged bytes copied. The second
/// pass now refuses the report (its ctime changed; and each host's bytes
/// are checked against the first pass's) before a forged byte is handed
/// out.
#[test]
fn a_shard_rewritten_in_place_between_the_passes_is_refused_before_a_forged_byte_is_read() {
    let d = tempfile::tempdir().unwrap();
    let texts = testdata_shards();
    let paths: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(k, t)| file(d.path(), &format!("shard-{}.json", k + 1), t))
        .collect();
    let inputs = paths
        .iter()
        .map(|p| streamed::scan(&p.display().to_string(), p).unwrap())
        .collect();
    let plan = streamed::plan(inputs).unwrap();
    // a failing finding of shard 2 made to pass: the same length
    let forged = texts[1].replacen("\"status\": \"fail\"", "\"status\": \"pass\"", 1);
    assert_ne!(forged, texts[1], "shard 2 has a failing finding");
    assert_eq!(forged.len(), texts[1].len());
    let f = fs::OpenOptions::new().write(true).open(&paths[1]).unwrap();
    let mtime = f.metadata().unwrap().modified().unwrap();
    f.write_all_at(forged.as_bytes(), 0).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    assert_eq!(fs::metadata(&paths[1]).unwrap().modified().unwrap(), mtime);
    assert_eq!(fs::read_to_string(&paths[1]).unwrap(), forged);
    let refused = match plan.stream() {
        Err(e) => e,
        Ok(mut hosts) => loop {
            match hosts.next_host() {
                Ok(Some(h)) => {
                    let at = h.at as usize;
                    let checked = &texts[h.input].as_bytes()[at..at + h.text.len()];
                    assert!(
                        h.text == checked,
                        "host `{}` handed out with bytes the first pass did not read",
                        h.path
                    );
                }
                Ok(None) => panic!("the rewritten shard was read to its end"),
                Err(e) => break e,
            }
        },
    };
    says(
        &refused.to_string(),
        &format!("`{}` changed while it was being merged", paths[1].display()),
    );
}

/// `text` (a report in the layout `check` writes) with `\r` before the
/// `\n` of each line inside a host, but the lines `merge` finds a host's
/// start, folder and end by: an editor that saved the lines it touched
/// with CR LF.
fn cr_inside_hosts(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        let kept = !inside
            || bare == "    {"
            || bare.starts_with("    }")
            || bare.starts_with("      \"path\": ")
            || !line.ends_with('\n');
        if bare == "  \"hosts\": [" {
            inside = true;
        } else if bare.starts_with("  ]") {
            inside = false;
        }
        out.push_str(bare);
        out.push_str(if kept { "" } else { "\r" });
        out.push_str(&line[bare.len()..]);
    }
    out
}

/// `driftaudit merge --format FORMAT one two`: exit code, stdout, stderr.
fn merge_two(one: &Path, two: &Path, format: &str) -> (i32, String, String) {
    run(
        &[
            "merge",
            "--format",
            format,
            &one.display().to_string(),
            &two.display().to_string(),
        ],
        repo_root(),
    )
}

/// Issue 51, item 7: a hand-written shard with CR LF line endings gave
/// JSON Lines with raw CR characters (which Python's text mode splits
/// lines at): `merge` compacted a host found in the layout `check` writes
/// by its indentation and kept the CRs. A host in any layout but `check`'s
/// own is rendered again, so every format equals `check`'s.
#[test]
fn a_shard_with_cr_lf_line_endings_merges_to_json_lines_without_a_raw_cr() {
    let d = tempfile::tempdir().unwrap();
    let [one, two] = testdata_shards();
    let two = file(d.path(), "shard-2.json", &two);
    let edited = cr_inside_hosts(&one);
    assert!(edited.contains("\r\n"), "lines with CR LF");
    for (name, text) in [
        ("crlf.json", one.replace('\n', "\r\n")),
        ("edited.json", edited),
    ] {
        let p = file(d.path(), name, &text);
        for format in ["jsonl", "json", "text"] {
            let (want_code, want) = testdata_fleet(format, &[]);
            let (code, out, err) = merge_two(&p, &two, format);
            assert_eq!(code, want_code, "{name}, {format}: {err}");
            assert!(!out.contains('\r'), "{name}, {format}: a raw CR written");
            if format == "json" {
                assert_eq!(without_run(&out), without_run(&want), "{name}, {format}");
            } else {
                assert_eq!(out, want, "{name}, {format}");
            }
        }
    }
}

/// `text` (a report in the layout `check` writes) with its first host's
/// `coverage` member's value replaced by `value`, and that member's line.
fn with_coverage(text: &str, value: &str) -> (String, usize) {
    let start = text
        .find("\n      \"coverage\": [\n")
        .expect("a coverage list")
        + 1;
    let close = "\n      ]";
    let end = start + text[start..].find(close).unwrap() + close.len();
    let line = text[..start].matches('\n').count() + 1;
    let edited = format!(
        "{}      \"coverage\": {value}{}",
        &text[..start],
        &text[end..]
    );
    (edited, line)
}

/// Issue 51, item 8: the first pass read of each host only what the fleet
/// summary counts, so a host whose `coverage` was `5` was copied into the
/// merged JSON (exit 1) and failed only when text rendered it (after 47 KB
/// of output, exit 2), and a 200,000-deep array there was copied as it
/// was (Python's JSON reader crashes on the merged file). Each host must
/// be a host report (at most serde_json's 128 levels deep) in the first
/// pass: refused before anything is written, naming the file, the host and
/// the line. A member a host report does not have is dropped, the host
/// rendered again, however deep it is.
#[test]
fn a_host_that_is_not_a_host_report_is_refused_with_its_file_host_and_line_before_any_output() {
    let d = tempfile::tempdir().unwrap();
    let [one, two] = testdata_shards();
    let two = file(d.path(), "shard-2.json", &two);
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    let host = v["hosts"][0]["host"].as_str().unwrap().to_string();
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let merge = |p: &Path, format: &str| merge_two(p, &two, format);
    for (name, value) in [("five.json", "5"), ("deep.json", deep.as_str())] {
        let (text, line) = with_coverage(&one, value);
        let p = file(d.path(), name, &text);
        for format in ["json", "jsonl", "text"] {
            let (code, out, err) = merge(&p, format);
            assert_eq!(code, 2, "{name}, {format}: {err}");
            assert!(
                out.is_empty(),
                "{name}, {format}: nothing written: {} bytes",
                out.len()
            );
            says(
                &err,
                &format!(
                    "`{}`: not a driftaudit JSON report: host `{host}`: ",
                    p.display()
                ),
            );
            says(&err, &format!(" at line {line} column "));
        }
    }
    // the same depth in a member no host report has, after `path`
    let path = one.find("\n      \"path\": ").unwrap() + 1;
    let first = path + one[path..].find('\n').unwrap() + 1;
    let extra = format!(
        "{}      \"extra\": {deep},\n{}",
        &one[..first],
        &one[first..]
    );
    let p = file(d.path(), "extra.json", &extra);
    for format in ["json", "jsonl"] {
        let (want_code, want) = testdata_fleet(format, &[]);
        let (code, out, err) = merge(&p, format);
        assert_eq!(code, want_code, "{format}: {err}");
        if format == "json" {
            assert_eq!(without_run(&out), without_run(&want), "{format}");
        } else {
            assert_eq!(out, want, "{format}");
        }
    }
}
