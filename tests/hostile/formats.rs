//! Issue 29, item 10: what the XML and HTML writers make of host data.
//! JUnit (the report's and `driftaudit test`'s) is parsed by a real XML 1.0
//! parser (python3's xml.etree, expat), the HTML page by python3's
//! html.parser, for hostile values and for a property test over the
//! host-data alphabet. Item 11 (the page's Content-Security-Policy, proven
//! in headless Chromium) is in tests/formats/html.rs beside the other
//! browser tests. Without python3 a test skips with one line (fails under
//! CI=true).

use crate::common;
use crate::common::browser::{feed_ok, python3 as python, report_of};

use std::path::Path;
use std::process::Command;

use driftaudit::unstable::policytest::{CaseResult, Checked, FileResult, TestRun, Verdict};
use driftaudit::unstable::render::{html, junit, policytest};
use driftaudit::{Report, Status};
use proptest::strategy::{Strategy, ValueTree};
use serde_json::Value as Json;

/// Run a python3 script on a JSON input, returning its JSON output.
fn py(python: &Path, script: &str, input: &Json) -> Json {
    let o = feed_ok(
        Command::new(python).args(["-c", script]),
        input.to_string().as_bytes(),
        "python3",
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Parses each document with expat (xml.etree): per document either
/// `{"error": ...}` or the attributes of every `testsuite` and `testcase`
/// and the text of every element, in document order.
const XML: &str = r#"
import json, sys
import xml.etree.ElementTree as ET
out = []
for doc in json.load(sys.stdin):
    try:
        root = ET.fromstring(doc.encode("utf-8"))
    except ET.ParseError as e:
        out.append({"error": str(e)})
        continue
    out.append({
        "suites": [dict(s.attrib) for s in root.iter("testsuite")],
        "cases": [dict(c.attrib) for c in root.iter("testcase")],
        "texts": [e.text for e in root.iter() if e.text],
        "messages": [e.attrib.get("message", "") for e in root.iter() if e.tag in ("failure", "error", "skipped")],
    })
print(json.dumps(out))
"#;

/// Parses each page with html.parser: the start tags with their attribute
/// names (the page's structure), and the `data-host` of each host section.
const HTML: &str = r#"
import json, sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.hosts = [], []
    def handle_starttag(self, tag, attrs):
        self.tags.append(tag + " " + " ".join(sorted(k for k, _ in attrs)))
        a = dict(attrs)
        if tag == "section" and "data-host" in a:
            self.hosts.append(a["data-host"])
out = []
for doc in json.load(sys.stdin):
    p = P()
    p.feed(doc)
    p.close()
    out.append({"tags": p.tags, "hosts": p.hosts})
print(json.dumps(out))
"#;

/// What the writers promise to show of a host value, written here without
/// the renderers' code: every character XML 1.0 forbids, every control
/// character (C0 but tab and newline, DEL, C1), the line and paragraph
/// separators, the bidirectional controls and every Unicode noncharacter
/// as a visible escape (`\r`, `\x00`, `\u{fffe}`), the rest as it is.
fn shown(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let u = c as u32;
        let escape = match c {
            '\t' | '\n' => false,
            c if c.is_control() => true,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
            '\u{2028}' | '\u{2029}' => true,
            '\u{fdd0}'..='\u{fdef}' => true,
            _ => u & 0xfffe == 0xfffe,
        };
        if !escape {
            out.push(c);
        } else if c == '\r' {
            out.push_str("\\r");
        } else if u < 0x100 {
            out.push_str(&format!("\\x{u:02x}"));
        } else {
            out.push_str(&format!("\\u{{{u:x}}}"));
        }
    }
    out
}

/// An attribute value as an XML parser reads it back: newline normalised
/// to a space (XML 1.0, 3.3.3); a tab quick-junit drops (its ANSI strip).
fn attr(s: &str) -> String {
    shown(s).replace('\t', "").replace('\n', " ")
}

/// A name that keys the JUnit (suite name, test case name) as a parser
/// reads it back: newline and tab shown as `\n` and `\t` too, so names
/// that differ read back different (issue 51, item 10).
fn key_attr(s: &str) -> String {
    shown(s).replace('\t', "\\t").replace('\n', "\\n")
}

/// A report with a host value in every field JUnit and HTML print.
fn hostile(base: &Report, values: &[String]) -> Report {
    let mut r = base.clone();
    for (i, h) in r.hosts.iter_mut().enumerate() {
        let v = &values[i % values.len()];
        h.host = v.clone();
        for f in h.findings.iter_mut() {
            f.subject = vec![format!("s{v}")];
            f.explanation = format!("e{v}");
            if f.expected.is_some() {
                f.expected = Some(format!("x{v}"));
            }
            if f.expected_words.is_some() {
                f.expected_words = Some(format!("w{v}"));
            }
            if f.actual.is_some() {
                f.actual = Some(format!("y{v}"));
            }
            for e in f.evidence.iter_mut() {
                e.path = format!("/etc/p{v}");
            }
        }
    }
    r
}

fn failing_explanations(r: &Report) -> Vec<String> {
    r.hosts
        .iter()
        .flat_map(|h| h.findings.iter())
        .filter(|f| f.status == Status::Fail)
        .map(|f| f.explanation.clone())
        .collect()
}

/// The JUnit checks for one hostile report, given expat's reading of it.
fn check_junit(r: &Report, parsed: &Json, what: &str) {
    assert!(
        parsed.get("error").is_none(),
        "{what}: JUnit is not well-formed XML: {}",
        parsed["error"]
    );
    let suites = common::cli::strs(&parsed["suites"], "name");
    // (a suite name's trailing whitespace is not kept)
    let suites: Vec<&str> = suites.iter().map(|s| s.trim_end()).collect();
    let want: Vec<String> = r
        .hosts
        .iter()
        .map(|h| key_attr(&h.host).trim_end().to_string())
        .collect();
    assert_eq!(suites, want, "{what}: suite names");
    let messages = common::cli::texts(&parsed["messages"]);
    for e in failing_explanations(r) {
        assert!(
            messages.contains(&attr(e.trim()).as_str()),
            "{what}: the explanation {e:?} comes back as {:?}; messages {messages:?}",
            attr(e.trim())
        );
    }
}

#[test]
fn junit_stays_well_formed_when_host_data_holds_characters_xml_forbids() {
    // Issue 29, item 10: U+FFFE/U+FFFF from host data made the XML not
    // well-formed (expat: "not well-formed (invalid token)").
    let Some(python) = python() else { return };
    let base = report_of(&["nat-story", "clean"]);
    let values = [
        "web\u{fffe}1\u{ffff}".to_string(),
        "db\u{1}\r\u{1b}[2J\u{fdd0}\u{10fffe}".to_string(),
    ];
    let r = hostile(&base, &values);
    let xml = junit::render(&r);
    let parsed = py(&python, XML, &serde_json::json!([xml]));
    check_junit(&r, &parsed[0], "hostile values");
}

/// A `driftaudit test` run whose file, case and host names and detail are
/// a host value.
fn test_run(v: &str) -> TestRun {
    TestRun {
        files: vec![FileResult {
            path: format!("tests/t{v}.yaml"),
            cases: vec![CaseResult {
                name: format!("case{v}"),
                line: 3,
                host: format!("host{v}"),
                checks: vec![Checked {
                    rule: "linux.x".into(),
                    subject: Some(format!("k{v}")),
                    expected: Verdict::Status(Status::Pass),
                    actual: Verdict::Status(Status::Fail),
                    line: 4,
                    column: 7,
                    detail: format!("d{v}"),
                }],
            }],
        }],
    }
}

#[test]
fn policy_test_junit_stays_well_formed_when_names_hold_characters_xml_forbids() {
    // Issue 29, item 10: the second XML writer, `driftaudit test --format junit`.
    let Some(python) = python() else { return };
    let v = "\u{fffe}\u{ffff}\u{1}\r";
    let xml = policytest::junit(&test_run(v));
    let parsed = &py(&python, XML, &serde_json::json!([xml]))[0];
    assert!(parsed.get("error").is_none(), "{}", parsed["error"]);
    assert_eq!(
        parsed["suites"][0]["name"],
        attr(&format!("tests/t{v}.yaml"))
    );
    assert_eq!(parsed["cases"][0]["name"], attr(&format!("case{v}")));
}

/// Characters host data may hold besides [`common::HOSTILE_CHARS`] (the
/// sampler takes both, hostile ones over-represented).
const HOST_ALPHABET: &[char] = &[
    'a',
    'Z',
    '0',
    '#',
    ' ',
    '<',
    '>',
    '&',
    '"',
    '\'',
    ';',
    ']',
    '-',
    '\\',
    '\u{1}',
    '\x0b',
    '\u{fdd0}',
    '\u{1fffe}',
    '\u{d7ff}',
    '\u{e000}',
];

fn alphabet_string(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        proptest::sample::select([HOST_ALPHABET, common::HOSTILE_CHARS].concat()),
        1..max,
    )
    .prop_map(|v| v.into_iter().collect::<String>())
}

/// No character a conforming HTML or XML reader reports as a parse error
/// (controls but tab, newline and CR; noncharacters) is in the document.
fn assert_only_allowed_characters(doc: &str, what: &str) {
    if let Some((i, c)) = doc.char_indices().find(|&(_, c)| {
        let u = c as u32;
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
            || ('\u{fdd0}'..='\u{fdef}').contains(&c)
            || u & 0xfffe == 0xfffe
    }) {
        panic!("{what}: {c:?} raw at byte {i}");
    }
}

#[test]
fn every_xml_and_html_writer_reads_back_for_any_host_data() {
    // A property test over the host-data alphabet: 40 reports (two hosts,
    // a value in every printed field) through the report's JUnit, 40 runs
    // through `driftaudit test`'s JUnit, and 40 pages, each parsed by a
    // real parser in one run per format.
    let Some(python) = python() else { return };
    let base = report_of(&["nat-story", "clean"]);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = proptest::collection::vec(alphabet_string(8), 2);
    let cases: Vec<Vec<String>> = (0..40)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let reports: Vec<Report> = cases.iter().map(|v| hostile(&base, v)).collect();

    let docs: Vec<String> = reports.iter().map(junit::render).collect();
    for (d, v) in docs.iter().zip(&cases) {
        assert_only_allowed_characters(d, &format!("JUnit of {v:?}"));
    }
    let parsed = py(&python, XML, &serde_json::json!(docs));
    for ((r, p), v) in reports.iter().zip(parsed.as_array().unwrap()).zip(&cases) {
        check_junit(r, p, &format!("JUnit of {v:?}"));
    }

    let docs: Vec<String> = cases
        .iter()
        .map(|v| policytest::junit(&test_run(&v[0])))
        .collect();
    let parsed = py(&python, XML, &serde_json::json!(docs));
    for ((d, p), v) in docs.iter().zip(parsed.as_array().unwrap()).zip(&cases) {
        assert_only_allowed_characters(d, &format!("test JUnit of {v:?}"));
        assert!(
            p.get("error").is_none(),
            "test JUnit of {v:?}: {}",
            p["error"]
        );
        assert_eq!(
            p["cases"][0]["name"],
            attr(&format!("case{}", v[0])),
            "{v:?}"
        );
    }

    // HTML: the page of any values has the structure of a plain page, and
    // each host section names its host as promised.
    let plain = html::render(&hostile(&base, &["x".to_string()]));
    let mut docs: Vec<String> = vec![plain];
    docs.extend(reports.iter().map(html::render));
    for (d, v) in docs[1..].iter().zip(&cases) {
        assert_only_allowed_characters(d, &format!("HTML of {v:?}"));
    }
    let parsed = py(&python, HTML, &serde_json::json!(docs));
    let parsed = parsed.as_array().unwrap();
    for ((p, r), v) in parsed[1..].iter().zip(&reports).zip(&cases) {
        assert_eq!(p["tags"], parsed[0]["tags"], "HTML of {v:?}: structure");
        let want: Vec<String> = r.hosts.iter().map(|h| shown(&h.host)).collect();
        assert_eq!(p["hosts"], serde_json::json!(want), "HTML of {v:?}");
    }
}

#[test]
fn junit_suite_names_and_case_keys_stay_unique_when_names_differ_by_a_tab_or_a_newline() {
    // Issue 51, item 10: a tab was dropped and a newline read back as a
    // space (XML attribute normalisation), so hosts `db<TAB>1`/`db1` and
    // `db<LF>1`/`db 1` shared suite names and (classname, name) pairs, and
    // so did two subjects of one rule differing the same way. GitLab keeps
    // only the first of equal keys.
    let Some(python) = python() else { return };
    let mut r = report_of(&[
        "nat-story",
        "nat-story",
        "nat-story",
        "nat-story",
        "nat-story",
    ]);
    for (h, name) in r
        .hosts
        .iter_mut()
        .zip(["db\t1", "db1", "db\n1", "db 1", "db1 "])
    {
        h.host = name.to_string();
    }
    // on the first host, one rule's finding under subjects that read back alike
    let f = r.hosts[0]
        .findings
        .iter()
        .find(|f| !f.subject.is_empty())
        .expect("a finding with a subject")
        .clone();
    for s in ["k\tx", "kx", "k\nx", "k x"] {
        let mut g = f.clone();
        g.subject = vec![s.to_string()];
        r.hosts[0].findings.push(g);
    }
    let xml = junit::render(&r);
    let parsed = &py(&python, XML, &serde_json::json!([xml]))[0];
    assert!(parsed.get("error").is_none(), "{}", parsed["error"]);
    let suites = common::cli::strs(&parsed["suites"], "name");
    let distinct: std::collections::BTreeSet<&&str> = suites.iter().collect();
    assert_eq!(distinct.len(), 5, "suite names as read back: {suites:?}");
    let classnames = common::cli::strs(&parsed["cases"], "classname");
    let names = common::cli::strs(&parsed["cases"], "name");
    let mut seen = std::collections::BTreeSet::new();
    for key in classnames.iter().zip(&names) {
        assert!(
            seen.insert(key),
            "the test case {key:?} twice, as read back"
        );
    }
    // each of the four subjects is its own case
    let mut ours: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with(&format!("{}[k", f.rule)) && n.ends_with("x]"))
        .map(|n| n.to_string())
        .collect();
    ours.sort();
    let want: Vec<String> = ["k x", "k\\nx", "k\\tx", "kx"]
        .iter()
        .map(|s| format!("{}[{s}]", f.rule))
        .collect();
    assert_eq!(ours, want, "{names:?}");
}
