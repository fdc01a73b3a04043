//! Hostile Zimbra localconfig input (issue 13, resource limits): tens of
//! thousands of distinct keys, and one key repeated 40,000 times, in
//! localconfig.xml and in a `zmlocalconfig` capture. Bounds are on work,
//! never on time: bytes allocated while parsing (a counting global
//! allocator with per-thread counters, tests/common/alloc.rs), the issues and findings produced
//! and the bytes printed. Growth is compared between N and 100N keys (or 40N
//! repeats): linear work grows about 100x (40x), allowed 1.5x that for
//! allocator rounding; quadratic work would grow 10,000x (1,600x). A pure
//! scan that allocates nothing (main's `position` over earlier keys) does
//! not show in allocation: benches/parsers.rs measures that as lines per
//! second. The lines-per-second figures
//! are in benches/parsers.rs (`localconfig_lines`) and docs/performance.md.

use std::fs;
use std::path::Path;

use crate::alloc::measure;
use crate::common::audit;
use driftaudit::unstable::engine;
use driftaudit::unstable::parse::localconfig::{
    parse_xml, parse_zmlocalconfig, MAX_REPEAT_ISSUES, MAX_XML_NODES,
};
use driftaudit::unstable::render::{self, Format, RenderOptions};
use driftaudit::unstable::report::{Report, Status};

/// Bytes allocated while running `f` (on this thread: tests/common/alloc.rs),
/// and its result.
fn allocated<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let (cost, out) = measure(f);
    (cost.allocated, out)
}

/// `zmlocalconfig -s` output with `n` keys (`same`: one key `n` times).
fn zm_text(n: usize, same: bool) -> String {
    (0..n)
        .map(|i| {
            if same {
                format!("mailboxd_java_heap_size = {}\n", 2000 + i % 7)
            } else {
                format!("zimbra_test_key_{i:06} = value {i}\n")
            }
        })
        .collect()
}

/// localconfig.xml as ZCS writes it (one key per three lines); `compact`
/// leaves out the whitespace text nodes, as some generators do.
fn xml_text(n: usize, same: bool, compact: bool) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<localconfig>\n");
    for i in 0..n {
        let (k, v) = if same {
            (
                "mailboxd_java_heap_size".to_string(),
                (2000 + i % 7).to_string(),
            )
        } else {
            (format!("zimbra_test_key_{i:06}"), format!("value {i}"))
        };
        if compact {
            s.push_str(&format!("<key name=\"{k}\"><value>{v}</value></key>"));
        } else {
            s.push_str(&format!(
                "  <key name=\"{k}\">\n    <value>{v}</value>\n  </key>\n"
            ));
        }
    }
    s.push_str("</localconfig>\n");
    s
}

fn ratio(small: usize, big: usize) -> f64 {
    big as f64 / small.max(1) as f64
}

/// 100x the distinct keys costs at most ~100x the allocation (the parsers
/// index keys by name; main scanned every earlier key for each new one), and
/// what is kept is the keys, no issue.
#[test]
fn distinct_localconfig_keys_cost_linear_work() {
    let (t1, t100) = (zm_text(1_000, false), zm_text(100_000, false));
    let (a1, (k1, i1)) = allocated(|| parse_zmlocalconfig(&t1));
    let (a100, (k100, i100)) = allocated(|| parse_zmlocalconfig(&t100));
    assert_eq!((k1.len(), k100.len()), (1_000, 100_000));
    assert!(i1.is_empty() && i100.is_empty(), "{i100:?}");
    assert!(
        ratio(a1, a100) < 150.0,
        "zmlocalconfig: 100x the keys allocated {:.1}x ({a1} -> {a100} bytes)",
        ratio(a1, a100)
    );
    // a few times the input at most
    assert!(
        a100 < 12 * t100.len(),
        "{a100} bytes for {} of input",
        t100.len()
    );

    // localconfig.xml: 1k and 50k keys (compact: 3 XML nodes a key, within
    // the node cap), 100k keys as ZCS writes them are over the cap.
    let (x1, x50) = (xml_text(1_000, false, true), xml_text(50_000, false, true));
    let (b1, (k1, _)) = allocated(|| parse_xml(&x1));
    let (b50, (k50, i50)) = allocated(|| parse_xml(&x50));
    assert_eq!(k1.map(|k| k.len()), Some(1_000));
    assert_eq!(k50.map(|k| k.len()), Some(50_000));
    assert!(i50.is_empty(), "{i50:?}");
    assert!(
        ratio(b1, b50) < 75.0,
        "localconfig.xml: 50x the keys allocated {:.1}x ({b1} -> {b50} bytes)",
        ratio(b1, b50)
    );
    let x100 = xml_text(100_000, false, false);
    let (b100, (k100, i100)) = allocated(|| parse_xml(&x100));
    assert!(
        k100.is_none(),
        "more than {MAX_XML_NODES} nodes must be refused"
    );
    assert_eq!(i100.len(), 1, "{i100:?}");
    assert!(
        i100[0].message.contains("more than 200000 XML nodes"),
        "{i100:?}"
    );
    assert!(
        b100 < 40 * x100.len(),
        "{b100} bytes for {} of input",
        x100.len()
    );
}

/// One key 40,000 times: one issue naming the count, the first and the last
/// line, not one issue per line (main printed 40,000 findings, 16 MB of text,
/// each saying "first at" the line before), and linear allocation.
#[test]
fn one_localconfig_key_repeated_40000_times_is_one_issue_and_linear_work() {
    let (t1, t40) = (zm_text(1_000, true), zm_text(40_000, true));
    let (a1, _) = allocated(|| parse_zmlocalconfig(&t1));
    let (a40, (keys, issues)) = allocated(|| parse_zmlocalconfig(&t40));
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].line, 40_000);
    assert_eq!(keys[0].value, (2000 + 39_999 % 7).to_string());
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].line, 40_000);
    assert!(
        issues[0]
            .message
            .contains("appears 40000 times (first at line 1)"),
        "{}",
        issues[0].message
    );
    assert!(ratio(a1, a40) < 60.0, "{a1} -> {a40} bytes");

    // one key a line (4 XML nodes a key: 40,000 fit under the node cap)
    let per_line = |n: usize| {
        xml_text(n, true, true)
            .replace("</key>", "</key>\n")
            .replace("<localconfig>\n", "<localconfig>\n\n")
    };
    let (x1, x40) = (per_line(1_000), per_line(40_000));
    let (b1, _) = allocated(|| parse_xml(&x1));
    let (b40, (keys, issues)) = allocated(|| parse_xml(&x40));
    let keys = keys.expect("40,000 keys a line are within the node cap");
    assert_eq!(keys.len(), 1);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(
        issues[0]
            .message
            .contains("is set 40000 times (first at line 4)"),
        "{}",
        issues[0].message
    );
    assert_eq!(issues[0].line, keys[0].line);
    assert!(ratio(b1, b40) < 45.0, "{b1} -> {b40} bytes");

    // End to end: one input finding, a report of kilobytes.
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::create_dir_all(root.join("etc")).unwrap();
    fs::create_dir_all(root.join("captures")).unwrap();
    fs::write(root.join("etc/hostname"), "zm-repeat\n").unwrap();
    fs::write(root.join("captures/zmlocalconfig.txt"), &t40).unwrap();
    let text = audit_text(root);
    assert!(text.len() < 64 * 1024, "{} bytes of report", text.len());
    assert_eq!(
        text.matches("40000 times (first at line 1)").count(),
        1,
        "{text}"
    );
}

/// Many keys each set twice: at most [`MAX_REPEAT_ISSUES`] named, then one
/// issue counting the rest.
#[test]
fn many_repeated_localconfig_keys_are_summarised() {
    let once = zm_text(10_000, false);
    let twice = format!("{once}{once}");
    let (keys, issues) = parse_zmlocalconfig(&twice);
    assert_eq!(keys.len(), 10_000);
    assert_eq!(issues.len(), MAX_REPEAT_ISSUES + 1, "{issues:?}");
    assert!(issues[..MAX_REPEAT_ISSUES]
        .iter()
        .all(|i| i.message.contains("appears 2 times")));
    assert!(
        issues[MAX_REPEAT_ISSUES].message.starts_with(&format!(
            "{} more keys are set more than once",
            10_000 - MAX_REPEAT_ISSUES
        )),
        "{:?}",
        issues[MAX_REPEAT_ISSUES]
    );
    // in line order: the first keys repeated are named first
    assert_eq!(issues[0].line, 10_001);
}

fn audit_text(root: &Path) -> String {
    let set = audit::builtin();
    let host = audit::host(root);
    let report = engine::audit_host(&set, &host);
    let input: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "driftaudit.input" && f.status == Status::Fail)
        .collect();
    assert_eq!(input.len(), 1, "{input:#?}");
    let full = Report::new(vec![report], &set);
    render::render(
        &full,
        Format::Text,
        RenderOptions {
            color: false,
            verbose: true,
            ..Default::default()
        },
    )
}
