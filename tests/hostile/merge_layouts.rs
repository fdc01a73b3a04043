//! `driftaudit merge` over shards written in other layouts than `check`'s
//! (issue 51): CR LF, tabs, other spacing, keys sorted or reordered, extra
//! members, deep nesting, over a whole shard, over one host, or on some
//! lines of `check`'s own layout. The merged output either equals what one
//! unsharded `check --fleet` writes (JSON apart from its `run` line) or is
//! refused with exit 2 before anything is written; a change of layout alone
//! is never refused. A property test over the testdata fleet in two shards,
//! through the binary; its cases are few (each runs `merge`).

use std::fs;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

use crate::common::cli::repo_root;
use crate::common::fleet::{run, testdata_fleet, without_run};

/// How a shard is written out again.
#[derive(Debug, Clone)]
struct Layout {
    /// Line end: `\n` or `\r\n`.
    newline: &'static str,
    /// One level of indentation.
    indent: &'static str,
    /// After a member name's colon.
    colon: &'static str,
    /// Key order: 0 sorted, 1 reversed, else rotated by that much.
    order: usize,
}

/// Where a case changes a shard.
#[derive(Debug, Clone)]
enum Change {
    /// The whole shard in `Layout`.
    Whole(Layout),
    /// One host (by index, wrapped) in `Layout`, the rest as `check` wrote it.
    OneHost(usize, Layout),
    /// `check`'s layout with these lines (bit i: line i mod 64) edited: a
    /// CR before the newline, tabs for spaces, or spaces after the line.
    Lines(u64, u8),
}

/// What a case adds to a shard, if anything.
#[derive(Debug, Clone)]
enum Extra {
    None,
    /// A member no host report has, `depth` arrays deep, in host `at`.
    HostMember(usize, usize),
    /// The same in the top-level object, `run`, or a rule of the catalogue.
    Elsewhere(&'static str, usize),
    /// Host `at`'s `coverage` (a list of objects) as arrays `depth` deep.
    Coverage(usize, usize),
}

impl Extra {
    /// Whether a merge may refuse it (it is not a host report's shape).
    fn refusable(&self) -> bool {
        matches!(self, Extra::Coverage(..))
    }
}

fn layout() -> impl Strategy<Value = Layout> {
    (
        prop_oneof![Just("\n"), Just("\r\n")],
        prop_oneof![Just(""), Just(" "), Just("  "), Just("\t"), Just("    ")],
        prop_oneof![Just(":"), Just(": "), Just(" :\t")],
        0usize..5,
    )
        .prop_map(|(newline, indent, colon, order)| Layout {
            newline,
            indent,
            colon,
            order,
        })
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        layout().prop_map(Change::Whole),
        (any::<usize>(), layout()).prop_map(|(i, l)| Change::OneHost(i, l)),
        (any::<u64>(), 0u8..3).prop_map(|(lines, how)| Change::Lines(lines, how)),
    ]
}

fn depth() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..4, 120usize..140, Just(200_000)]
}

fn extra() -> impl Strategy<Value = Extra> {
    prop_oneof![
        Just(Extra::None),
        (any::<usize>(), depth()).prop_map(|(i, d)| Extra::HostMember(i, d)),
        (prop_oneof![Just("top"), Just("run"), Just("rule")], depth())
            .prop_map(|(w, d)| Extra::Elsewhere(w, d)),
        // `[]` is a coverage list (an empty one): two levels at least
        (any::<usize>(), depth().prop_map(|d| d.max(2))).prop_map(|(i, d)| Extra::Coverage(i, d)),
    ]
}

/// A stand-in string for a deep value, replaced by its text once written.
const DEEP: &str = "\u{1}deep\u{1}";

/// `v` as JSON in `l`, `level` levels deep.
fn write_json(v: &Value, l: &Layout, level: usize, out: &mut String) {
    let line = |out: &mut String, level: usize| {
        out.push_str(l.newline);
        for _ in 0..level {
            out.push_str(l.indent);
        }
    };
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                line(out, level + 1);
                write_json(item, l, level + 1, out);
            }
            line(out, level);
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            let mut keys: Vec<&String> = members.keys().collect();
            keys.sort();
            match l.order {
                0 => {}
                1 => keys.reverse(),
                r => {
                    let r = r % keys.len();
                    keys.rotate_left(r);
                }
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                line(out, level + 1);
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(l.colon);
                write_json(&members[*k], l, level + 1, out);
            }
            line(out, level);
            out.push('}');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap()),
    }
}

/// A host block of `check`'s layout: from the line `    {` through its
/// closing line `    }` (without the comma after it).
fn host_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = text.find("\n  \"hosts\": [").unwrap();
    let last = text.find("\n  ],\n").unwrap();
    while let Some(i) = text[from..last].find("\n    {\n") {
        let start = from + i + 1;
        let end = start + text[start..].find("\n    }").unwrap() + "\n    }".len();
        spans.push((start, end));
        from = end;
    }
    spans
}

/// Lines of `text` edited where `lines` has their bit: how 0 puts a CR
/// before the newline, 1 tabs for the indentation, 2 spaces after the line.
fn edit_lines(text: &str, lines: u64, how: u8) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches('\n');
        let end = &line[bare.len()..];
        if lines >> (i % 64) & 1 == 0 || end.is_empty() {
            out.push_str(line);
            continue;
        }
        match how {
            0 => {
                out.push_str(bare);
                out.push('\r');
            }
            1 => {
                let body = bare.trim_start_matches(' ');
                let n = bare.len() - body.len();
                out.push_str(&"\t".repeat(n / 2));
                out.push_str(body);
            }
            _ => {
                out.push_str(bare);
                out.push_str("  ");
            }
        }
        out.push_str(end);
    }
    out
}

/// `shard` (as `check` wrote it) with the case's extra member (its value
/// `deep`), in `check`'s layout.
fn with_extra(shard: &str, extra: &Extra, deep: &str) -> String {
    let mut text = shard.to_string();
    let spans = host_spans(shard);
    let member = format!("\"zz_extra\": {deep}");
    // the offset just after `key` (at or past `from`)
    let after = |text: &str, from: usize, key: &str| {
        from + text[from..]
            .find(key)
            .unwrap_or_else(|| panic!("no `{key}`"))
            + key.len()
    };
    match extra {
        Extra::None => {}
        // after the `path` line: the host still starts as `check` writes one
        Extra::HostMember(i, _) => {
            let p = after(&text, spans[i % spans.len()].0, "\n      \"path\": ");
            let end = after(&text, p, "\n");
            text.insert_str(end, &format!("      {member},\n"));
        }
        Extra::Elsewhere("top", _) => {
            text.insert_str(after(&text, 0, "{\n"), &format!("  {member},\n"))
        }
        Extra::Elsewhere("run", _) => {
            text.insert_str(after(&text, 0, "\n  \"run\": {"), &format!("{member},"))
        }
        Extra::Elsewhere(..) => text.insert_str(
            after(&text, 0, "\n  \"rules\": [\n    {\n"),
            &format!("      {member},\n"),
        ),
        Extra::Coverage(i, _) => {
            let (start, end) = spans[i % spans.len()];
            let from = start + text[start..end].find("\n      \"coverage\": ").unwrap() + 1;
            let to = if text[from..].starts_with("      \"coverage\": [\n") {
                after(&text, from, "\n      ]")
            } else {
                from + text[from..].find([',', '\n']).unwrap()
            };
            text.replace_range(from..to, &format!("      \"coverage\": {deep}"));
        }
    }
    text
}

/// `shard` (as `check` wrote it) changed as the case says.
fn rewrite(shard: &str, change: &Change, extra: &Extra) -> String {
    let depth = match extra {
        Extra::None => 0,
        Extra::HostMember(_, d) | Extra::Elsewhere(_, d) | Extra::Coverage(_, d) => *d,
    };
    let marker = serde_json::to_string(DEEP).unwrap();
    let text = with_extra(shard, extra, &marker);
    let text = match change {
        Change::Whole(l) => {
            let v: Value = serde_json::from_str(&text).unwrap();
            let mut out = String::new();
            write_json(&v, l, 0, &mut out);
            out.push_str(l.newline);
            out
        }
        Change::OneHost(i, l) => {
            let v: Value = serde_json::from_str(&text).unwrap();
            let spans = host_spans(&text);
            let k = i % spans.len();
            let (start, end) = spans[k];
            let mut block = String::from("    ");
            write_json(&v["hosts"][k], l, 2, &mut block);
            format!("{}{block}{}", &text[..start], &text[end..])
        }
        Change::Lines(lines, how) => edit_lines(&text, *lines, *how),
    };
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    text.replace(&marker, &deep)
}

/// Issue 51: whatever layout a shard is in, `merge` writes what one
/// unsharded `check --fleet` writes, or refuses it (exit 2, nothing
/// written); a layout alone, or a member a report does not have (not in
/// its summary), is never refused.
#[test]
fn shards_in_any_layout_merge_to_what_check_writes_or_are_refused_before_any_output() {
    let shards = ["1/2", "2/2"].map(|k| testdata_fleet("json", &["--shard", k]).1);
    let formats = ["json", "jsonl", "text"];
    let whole = formats.map(|f| testdata_fleet(f, &[]));
    // a host block of `check`'s layout is the host
    let v: Value = serde_json::from_str(&shards[0]).unwrap();
    let spans = host_spans(&shards[0]);
    assert!(spans.len() >= 3, "{} hosts", spans.len());
    let (s, e) = spans[0];
    assert_eq!(
        serde_json::from_str::<Value>(&shards[0][s..e]).unwrap(),
        v["hosts"][0]
    );
    let d = tempfile::tempdir().unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let case = (0usize..2, change(), extra(), 0usize..formats.len());
    runner
        .run(&case, |(which, change, extra, f)| {
            let mut texts = shards.clone();
            texts[which] = rewrite(&shards[which], &change, &extra);
            let paths: Vec<String> = texts
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let p = d.path().join(format!("shard-{}.json", k + 1));
                    fs::write(&p, t).unwrap();
                    p.display().to_string()
                })
                .collect();
            let (code, out, err) = run(
                &["merge", "--format", formats[f], &paths[1], &paths[0]],
                repo_root(),
            );
            let (want_code, want) = &whole[f];
            if code == 2 {
                prop_assert!(
                    out.is_empty(),
                    "refused after writing {} bytes: {err}",
                    out.len()
                );
                prop_assert!(extra.refusable(), "refused a layout: {err}");
                return Ok(());
            }
            prop_assert_eq!(code, *want_code, "{}", err);
            prop_assert!(!extra.refusable(), "accepted {:?}", extra);
            if formats[f] == "json" {
                prop_assert_eq!(without_run(&out), without_run(want));
            } else {
                prop_assert_eq!(&out, want);
            }
            Ok(())
        })
        .unwrap();
}
