//! `check --fleet --shard K/N`, `driftaudit merge` and `--changed-since`
//! through the binary, on a fleet from scripts/gen-fleet: the shards merged
//! equal the unsharded report byte for byte apart from the documented `run`
//! line, in every format `merge` writes; an empty shard is a valid empty
//! report; `--changed-since` audits exactly the folders git says changed
//! and refuses a directory outside git or a revision that names no commit.
//! These are the command sequences docs/git-workflow.md shows for a GitHub
//! Actions matrix and GitLab `parallel:`.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common;
use crate::common::cli::says;
use crate::common::fleet::{generate, run, without_run};
use crate::common::git;
use crate::common::tree::copy_into;

/// A temporary directory holding `snapshots` from scripts/gen-fleet (hosts
/// under dc1..dc4/), or `None` after a skip line.
fn fleet(hosts: usize) -> Option<tempfile::TempDir> {
    let t = tempfile::tempdir().unwrap();
    generate(
        &t.path().join("snapshots"),
        hosts,
        &["--seed", "11", "--builtin-keys"],
        &[],
    )?;
    fs::remove_file(t.path().join("snapshots/planted.tsv")).unwrap();
    Some(t)
}

/// `check --fleet snapshots --format json ARGS` in `d`.
fn fleet_json(d: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["check", "--fleet", "snapshots", "--format", "json"];
    all.extend(args);
    run(&all, d)
}

#[test]
fn shards_of_a_generated_fleet_merged_equal_the_unsharded_report_in_every_format() {
    let Some(t) = fleet(60) else {
        return;
    };
    let d = t.path();
    // the unsharded run, as one job would
    let (code, whole, err) = fleet_json(d, &[]);
    assert_eq!(code, 1, "planted findings: {err}");
    let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!(v["hosts"].as_array().unwrap().len(), 60);
    assert_eq!(v["run"]["fleet"], "snapshots");
    assert_eq!(v["run"]["fail_on"], "low");
    assert!(v["run"]["policies"]
        .as_str()
        .unwrap()
        .starts_with("fnv1a64:"));
    assert!(v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["id"] == "linux.tcp-tw-recycle"));
    let first = v["hosts"][0]["path"]
        .as_str()
        .expect("hosts carry their folder");
    assert!(first.starts_with("dc1/"), "{first}");

    // a matrix of 4 jobs, then the merge job
    let mut names = Vec::new();
    let mut total = 0;
    for k in 1..=4 {
        let shard = format!("{k}/4");
        let (code, json, err) = fleet_json(d, &["--shard", &shard]);
        assert!(code <= 1, "shard {shard}: {err}");
        assert!(
            err.contains(&format!("shard {shard}: "))
                && err.contains(" of 60 snapshot folders audited"),
            "{err}"
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let n = v["hosts"].as_array().unwrap().len();
        assert!((5..=25).contains(&n), "shard {shard} has {n} of 60 hosts");
        assert_eq!(v["run"]["shard"], shard.as_str());
        total += n;
        let name = format!("shard-{k}.json");
        fs::write(d.join(&name), json).unwrap();
        names.push(name);
    }
    assert_eq!(total, 60, "every host in exactly one shard");
    let mut merge_args = vec!["merge"];
    merge_args.extend(names.iter().rev().map(String::as_str));
    let (code, merged, err) = run(&merge_args, d);
    assert_eq!(code, 1, "merge exits as the whole fleet's check: {err}");
    assert_eq!(without_run(&merged), without_run(&whole));
    let m: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(
        m["run"]["merged"],
        serde_json::json!(["1/4", "2/4", "3/4", "4/4"])
    );

    // each format from the shards equals the same format from the whole report
    fs::write(d.join("whole.json"), &whole).unwrap();
    // and what one unsharded `check --fleet` writes in that format (not only
    // merge against merge: a rendering only merge did would pass that)
    for f in ["sarif", "junit", "markdown", "html", "text", "jsonl"] {
        let mut a = merge_args.clone();
        a.extend(["--format", f]);
        let (c1, from_shards, e1) = run(&a, d);
        let (c2, from_whole, e2) = run(&["merge", "whole.json", "--format", f], d);
        let (c3, from_check, e3) = run(&["check", "--fleet", "snapshots", "--format", f], d);
        assert_eq!((c1, c2, c3), (1, 1, 1), "{f}: {e1} {e2} {e3}");
        assert_eq!(from_shards, from_whole, "{f}");
        assert_eq!(
            from_shards, from_check,
            "{f}: merged shards = check --fleet"
        );
        assert!(!from_shards.is_empty());
    }
    // the same shards in another layout (compact, members in another
    // order): each host is read and rendered instead of copied, with the
    // same bytes; and a mix of layouts
    for (k, name) in names.iter().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(d.join(name)).unwrap()).unwrap();
        let other = if k % 2 == 0 {
            serde_json::to_string(&v).unwrap()
        } else {
            serde_json::to_string_pretty(&v).unwrap()
        };
        assert!(!other.starts_with("{\n  \"schema\""), "keys sorted");
        fs::write(d.join(format!("other-{name}")), other).unwrap();
    }
    let others: Vec<String> = names.iter().map(|n| format!("other-{n}")).collect();
    let mixed = [&others[0], &names[1], &others[2], &names[3]];
    for f in ["json", "jsonl", "text"] {
        let (_, from_check, _) = run(&["check", "--fleet", "snapshots", "--format", f], d);
        for inputs in [others.iter().collect::<Vec<_>>(), mixed.to_vec()] {
            let mut a = vec!["merge", "--format", f];
            a.extend(inputs.iter().map(|s| s.as_str()));
            let (code, out, err) = run(&a, d);
            assert_eq!(code, 1, "{f}: {err}");
            let (out, want) = if f == "json" {
                (without_run(&out), without_run(&from_check))
            } else {
                (out, from_check.clone())
            };
            assert_eq!(out, want, "{f} from {inputs:?}");
        }
    }

    // text equals what check --fleet prints itself
    let (_, text, _) = run(&["check", "--fleet", "snapshots"], d);
    let (_, merged_text, _) = run(&["merge", "whole.json", "--format", "text"], d);
    assert_eq!(merged_text, text);
    // SARIF from a merge places findings in the repository, like check does
    let (_, sarif, _) = run(&["merge", "whole.json", "--format", "sarif"], d);
    assert!(
        sarif.contains(&format!("\"snapshots/{first}/")),
        "repository-relative URIs"
    );

    // refusals are usage errors, naming the files
    let (code, _, err) = run(&["merge", "shard-1.json", "shard-2.json"], d);
    assert_eq!(code, 2);
    assert!(err.contains("shards 3/4, 4/4 missing"), "{err}");
    let (code, _, err) = run(&["merge", "shard-1.json", "nope.json"], d);
    assert_eq!(code, 2);
    assert!(err.contains("cannot read `nope.json`"), "{err}");
}

#[test]
fn an_empty_shard_is_a_valid_empty_report_and_bad_shards_are_usage_errors() {
    let Some(t) = fleet(2) else {
        return;
    };
    let d = t.path();
    // 2 hosts over 9 shards: most shards are empty
    let mut empty = 0;
    let mut docs = Vec::new();
    for k in 1..=9 {
        let shard = format!("{k}/9");
        let (code, json, err) = fleet_json(d, &["--shard", &shard]);
        assert!(code <= 1, "{err}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("a valid document");
        if v["hosts"].as_array().unwrap().is_empty() {
            empty += 1;
            assert_eq!(code, 0);
            assert!(err.contains("0 of 2 snapshot folders audited"), "{err}");
            assert_eq!(v["fleet"]["hosts"], 0);
        }
        let name = format!("s{k}.json");
        fs::write(d.join(&name), json).unwrap();
        docs.push(name);
    }
    assert!(empty >= 7, "{empty}");
    let mut a = vec!["merge"];
    a.extend(docs.iter().map(String::as_str));
    let (_, merged, _) = run(&a, d);
    let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(v["fleet"]["hosts"], 2);

    for bad in ["0/4", "5/4", "x"] {
        let (code, _, err) = run(&["check", "--fleet", "snapshots", "--shard", bad], d);
        assert_eq!(code, 2, "{bad}");
        assert!(err.contains(&format!("`{bad}` is not a shard")), "{err}");
    }
    let (code, _, err) = run(&["check", "--snapshot", "snapshots", "--shard", "1/2"], d);
    assert_eq!(code, 2);
    says(&err, "--shard");
    says(&err, "--snapshot");
}

#[test]
fn changed_since_audits_exactly_the_folders_git_says_changed() {
    let Some(git_bin) = common::program("git", "git") else {
        return;
    };
    let Some(t) = fleet(8) else {
        return;
    };
    let d = t.path();
    let git = |args: &[&str]| {
        git::git(&git_bin, d, args);
    };
    // not a repository yet
    let (code, _, err) = run(
        &["check", "--fleet", "snapshots", "--changed-since", "HEAD"],
        d,
    );
    assert_eq!(code, 2);
    assert!(err.contains("is not in a git repository"), "{err}");

    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "fleet"]);
    let hosts = |json: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    let changed = |rev: &str| {
        let (code, json, err) = fleet_json(d, &["--changed-since", rev]);
        assert!(code <= 1, "{err}");
        (hosts(&json), err)
    };
    let (none, err) = changed("HEAD");
    assert!(none.is_empty(), "{none:?}");
    says(
        &err,
        "changed since `HEAD`: 0 of 8 snapshot folders audited",
    );

    // an edit (unstaged), a staged deletion, a new untracked host, a file
    // outside every snapshot
    let list = |p: &str| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d.join("snapshots").join(p))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let dc1 = list("dc1");
    let dc2 = list("dc2");
    fs::write(
        d.join(format!("snapshots/dc1/{}/etc/sysctl.conf", dc1[0])),
        "kernel.pid_max = 9\n",
    )
    .unwrap();
    git(&[
        "rm",
        "-q",
        &format!("snapshots/dc2/{}/etc/hostname", dc2[0]),
    ]);
    let src = d.join(format!("snapshots/dc1/{}", dc1[1]));
    copy_into(&src, &d.join("snapshots/dc3/new-host"));
    fs::write(d.join("README.md"), "fleet\n").unwrap();
    let (got, err) = changed("HEAD");
    assert_eq!(
        got,
        [
            format!("dc1/{}", dc1[0]),
            format!("dc2/{}", dc2[0]),
            "dc3/new-host".to_string()
        ],
        "{err}"
    );
    assert!(err.contains("3 of 9 snapshot folders audited"), "{err}");

    // the same from a subdirectory of the repository, and after a commit
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "changes"]);
    let (got, _) = changed("HEAD~1");
    assert_eq!(got.len(), 3);
    let (got, _) = changed("HEAD");
    assert!(got.is_empty());

    for bad in ["no-such-branch", "--output=/tmp/x"] {
        let (code, _, err) = run(
            &[
                "check",
                "--fleet",
                "snapshots",
                &format!("--changed-since={bad}"),
            ],
            d,
        );
        assert_eq!(code, 2, "{bad}");
        assert!(err.contains(&format!("`{bad}` is not a commit")), "{err}");
    }
}

/// Issue 29, item 6: `merge` reads its inputs as the policy loader does. A
/// FIFO is refused at once (before, merge blocked on it), and `/dev/zero`
/// is refused as a device (before, it was read until memory ran out); both
/// exit 2 naming the input.
#[test]
fn merge_refuses_a_fifo_and_a_device_instead_of_blocking_or_filling_memory() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("shard.json");
    let ok = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo");
    for input in [fifo.to_str().unwrap(), "/dev/zero"] {
        let (code, out, err) = run(&["merge", input], d.path());
        assert_eq!(code, 2, "merge {input}: {out}{err}");
        assert!(err.contains(input), "merge {input}: {err}");
        assert!(out.is_empty(), "merge {input}: {out}");
    }
}

/// A fleet report as `check --fleet --format json` writes it, cut into the
/// text before its first host, each host's lines, and the text after the
/// last host.
fn host_blocks(json: &str) -> (String, Vec<String>, String) {
    let start = json.find("\n    {\n").expect("a host") + 1;
    let end = json.find("\n  ],\n  \"fleet\"").expect("the end of hosts");
    let blocks = json[start..end]
        .split(",\n    {\n")
        .enumerate()
        .map(|(i, b)| {
            if i == 0 {
                b.to_string()
            } else {
                format!("    {{\n{b}")
            }
        })
        .collect();
    (json[..start].to_string(), blocks, json[end..].to_string())
}

/// Issue 35: `merge` reads each report's hosts as a stream and merges the
/// streams, which holds only if each report is in path order (as `check`
/// writes it). A report whose hosts are out of order is refused before
/// anything is written, naming the file, the host and both folders, in the
/// layout `check` writes and in any other.
#[test]
fn merge_refuses_a_report_whose_hosts_are_out_of_path_order() {
    let Some(t) = fleet(12) else {
        return;
    };
    let d = t.path();
    let (_, json, _) = fleet_json(d, &["--shard", "1/2"]);
    let (_, other, _) = fleet_json(d, &["--shard", "2/2"]);
    fs::write(d.join("shard-2.json"), other).unwrap();
    let (head, mut hosts, tail) = host_blocks(&json);
    assert!(hosts.len() >= 3, "{} hosts", hosts.len());
    assert_eq!(
        head + &hosts.join(",\n") + &tail,
        json,
        "cut and joined again"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (first, second) = (&v["hosts"][0], &v["hosts"][1]);
    hosts.swap(0, 1);
    let (head, _, tail) = host_blocks(&json);
    fs::write(d.join("swapped.json"), head + &hosts.join(",\n") + &tail).unwrap();
    let mut compact = v.clone();
    compact["hosts"].as_array_mut().unwrap().swap(0, 1);
    fs::write(d.join("compact.json"), compact.to_string()).unwrap();
    for name in ["swapped.json", "compact.json"] {
        let (code, out, err) = run(&["merge", name, "shard-2.json"], d);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(out.is_empty(), "nothing written: {out}");
        says(
            &err,
            &format!(
                "`{name}`: host `{}` (folder `{}`) comes after folder `{}`, out of path order",
                first["host"].as_str().unwrap(),
                first["path"].as_str().unwrap(),
                second["path"].as_str().unwrap()
            ),
        );
    }
}

/// Issue 35: `merge` no longer reads a report whole (a shard of a
/// 100,000-host fleet in 10 is 1.4 GB), so no cap on a report's size; what
/// it holds of a report at once is one host (or one other member), and a
/// host's JSON over 64 MiB is refused naming the file and the host, after
/// reading no more than that of it and writing nothing.
#[test]
fn merge_refuses_a_host_larger_than_it_reads_at_once() {
    let d = tempfile::tempdir().unwrap();
    let pad = "x".repeat(64 << 20);
    let report = format!(
        "{{\n  \"schema\": \"driftaudit.report/1\",\n  \"hosts\": [\n    {{\n      \"host\": \"big\",\n      \"path\": \"dc1/big\",\n      \"pad\": \"{pad}\"\n    }}\n  ]\n}}\n"
    );
    fs::write(d.path().join("big.json"), report).unwrap();
    let (code, out, err) = run(&["merge", "big.json"], d.path());
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    says(
        &err,
        "`big.json`: host `big` at line 4 is over 67108864 bytes of JSON, the most merge reads of one host or member",
    );
}
