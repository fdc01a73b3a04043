//! `--format html`: one self-contained page, checked as text (nothing loaded
//! from the network, host text escaped) and rendered in headless Chromium
//! (Debian's `chromium`, installed by .ci/run): the filters' script runs
//! without a console error (a planted error proves the check can fail), the
//! findings are in the DOM after it ran, a `drift:` finding is a
//! before/after table in the DOM (read back by a probe script in the
//! browser), and screenshots are written to target/artifacts/ for the
//! reviewer. The Content-Security-Policy allows no inline code but the
//! page's own script and style blocks, by their SHA-256 (recomputed with
//! python3's hashlib): probes are added with their own hash, and an
//! injected script or `onerror=` attribute (an escaping bug simulated) is
//! proven not to run. Without chromium the browser test
//! skips with one line (fails under CI=true).

use crate::common;
use crate::common::browser::{feed_ok, python3 as python, report_of};
use crate::common::cli;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::audit;
use driftaudit::unstable::render::html;
use driftaudit::Status;

const FLEET: &[&str] = &[
    "nat-story",
    "zimbra-khimki-asfound",
    "mysql-warmup-story",
    "clean",
];

#[test]
fn html_is_self_contained_and_escapes_host_text() {
    let mut r = report_of(FLEET);
    r.hosts[0].host = "evil<script>alert(1)</script>".into();
    for f in r.hosts[0]
        .findings
        .iter_mut()
        .filter(|f| f.status == Status::Fail)
    {
        f.explanation
            .push_str(" <img src=x onerror=alert(2)> \x1b[31m");
    }
    let page = html::render(&r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    // nothing fetched: no external script, style, image, font or frame
    for bad in [
        "<script src",
        "<link",
        "<img",
        "<iframe",
        "url(",
        "@import",
        "http://",
        "https://",
    ] {
        assert!(!page.contains(bad), "`{bad}` in the page");
    }
    assert!(page.contains("default-src 'none'"), "a CSP forbids loads");
    assert!(!page.contains("<script>alert(1)") && !page.contains("<img src=x"));
    assert!(page.contains("evil&#60;script&#62;") || page.contains("evil&lt;script&gt;"));
    assert!(
        !page.contains('\x1b'),
        "control characters shown as escapes"
    );
    // the fleet page: host table and per-rule summary with failing counts
    assert!(page.contains("id=\"fleet-hosts\"") && page.contains("id=\"fleet-rules\""));
    // memory breakdowns as SVG bars (Zimbra's heap, pool and the rest)
    let zimbra = &r.hosts[1];
    let with_bar = zimbra
        .findings
        .iter()
        .filter(|f| f.breakdown.is_some())
        .count();
    assert!(with_bar > 0, "zimbra-khimki-asfound draws a memory budget");
    assert_eq!(
        page.matches("<figure class=\"bar\"").count(),
        r.hosts
            .iter()
            .flat_map(|h| &h.findings)
            .filter(|f| f.breakdown.is_some())
            .count()
    );
    assert!(page.contains("<svg"));
}

/// The base64 SHA-256 of `text` as CSP writes it, computed by python3's
/// hashlib (the reference, not the library's own hash).
fn reference_sha256(python: &Path, text: &str) -> String {
    let o = feed_ok(
        Command::new(python).args([
            "-c",
            "import sys, hashlib, base64; print(base64.b64encode(hashlib.sha256(sys.stdin.buffer.read()).digest()).decode())",
        ]),
        text.as_bytes(),
        "python3",
    );
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// The page's Content-Security-Policy (the `<meta http-equiv>` content).
fn csp(page: &str) -> &str {
    let at = page
        .find("http-equiv=\"Content-Security-Policy\" content=\"")
        .expect("a CSP meta tag")
        + 46;
    &page[at..at + page[at..].find('"').unwrap()]
}

/// One directive's sources (`script-src` -> `['sha256-...']`).
fn directive<'a>(csp: &'a str, name: &str) -> Vec<&'a str> {
    csp.split(';')
        .map(str::trim)
        .find_map(|d| d.strip_prefix(name).filter(|r| r.starts_with(' ')))
        .map(|r| r.split_whitespace().collect())
        .unwrap_or_default()
}

/// The text of every `<TAG>...</TAG>` block of the page.
fn blocks<'a>(page: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let j = body.find(&close).expect("a closed block");
        out.push(&body[..j]);
        rest = &body[j..];
    }
    out
}

/// The page with a probe script before `</body>`, allowed by the CSP by its
/// own hash (python3's), as the page's script is: a probe that respects the
/// policy instead of switching it off.
fn with_probe(python: &Path, page: &str, script: &str) -> String {
    let hash = reference_sha256(python, script);
    let policy = csp(page);
    let allowed = policy.replacen("script-src ", &format!("script-src 'sha256-{hash}' "), 1);
    assert_ne!(allowed, policy, "the CSP has a script-src");
    page.replacen(policy, &allowed, 1)
        .replace("</body>", &format!("<script>{script}</script></body>"))
}

#[test]
fn html_csp_allows_no_inline_code_but_its_own_hashed_blocks() {
    let single = html::render(&report_of(&["nat-story"]));
    let fleet = html::render(&report_of(FLEET));
    let cli = cli::cmd()
        .args([
            "check",
            "--snapshot",
            "testdata/hosts/mysql-warmup-story",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    let cli = String::from_utf8(cli.stdout).unwrap();
    let python = python();
    for (name, page) in [("single host", &single), ("fleet", &fleet), ("cli", &cli)] {
        let policy = csp(page);
        assert!(
            !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"),
            "{name}: the CSP allows inline code: {policy}"
        );
        // no inline event handler or style attribute anywhere: no ` on...=`
        // and no ` style=` inside a tag
        let tags: Vec<&str> = page
            .split('<')
            .skip(1)
            .map(|t| t.split('>').next().unwrap())
            .collect();
        for t in &tags {
            let lower = t.to_ascii_lowercase();
            let attrs: Vec<&str> = lower.split_whitespace().skip(1).collect();
            assert!(
                !attrs
                    .iter()
                    .any(|a| (a.starts_with("on") && a.contains('=')) || a.starts_with("style=")),
                "{name}: an inline handler or style attribute: <{t}>"
            );
        }
        for (tag, dir) in [("script", "script-src"), ("style", "style-src")] {
            let bodies = blocks(page, tag);
            let sources = directive(policy, dir);
            assert_eq!(bodies.len(), 1, "{name}: one {tag} block");
            assert_eq!(sources.len(), 1, "{name}: {dir} is one hash: {policy}");
            if let Some(py) = &python {
                assert_eq!(
                    sources[0],
                    format!("'sha256-{}'", reference_sha256(py, bodies[0])),
                    "{name}: {dir} is the hash of the {tag} block"
                );
            }
        }
    }
}

fn chromium() -> Option<PathBuf> {
    common::tool("chromium", "chromium")
}

/// Assert that the page's filter script ran in `dom` (it writes "SHOWN of
/// ALL findings shown", SHOWN being those neither passing nor skipped),
/// saying `what` if not; returns (ALL, SHOWN) for `r`.
fn filters_ran(r: &driftaudit::Report, dom: &str, what: &str) -> (usize, usize) {
    let all: usize = r.hosts.iter().map(|h| h.findings.len()).sum();
    let shown = r
        .hosts
        .iter()
        .flat_map(|h| &h.findings)
        .filter(|f| !matches!(f.status, Status::Pass | Status::Skip))
        .count();
    assert!(
        dom.contains(&format!("{shown} of {all} findings shown")),
        "{what}"
    );
    (all, shown)
}

/// Run headless Chromium on a page: (DOM after scripts, console lines).
fn browse(chrome: &Path, page: &Path, extra: &[&str]) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), console)
}

#[test]
fn html_renders_in_headless_chromium_without_console_errors() {
    let Some(chrome) = chromium() else { return };
    let r = report_of(FLEET);
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("report.html");
    let text = html::render(&r);
    std::fs::write(&page, &text).unwrap();

    // The console check can fail: a planted error is seen.
    let planted = tmp.path().join("planted.html");
    let Some(python) = python() else { return };
    std::fs::write(
        &planted,
        with_probe(&python, &text, "console.error('driftaudit-probe')"),
    )
    .unwrap();
    let (_, console) = browse(&chrome, &planted, &["--dump-dom"]);
    assert!(
        console.iter().any(|l| l.contains("driftaudit-probe")),
        "{console:?}"
    );

    let (dom, console) = browse(&chrome, &page, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
    // The filter script ran: it wrote how many findings it shows.
    let (all, _) = filters_ran(&r, &dom, "the filters did not run");
    // Every finding is in the DOM, with its rule and status.
    assert_eq!(dom.matches("<article class=\"finding\"").count(), all);
    for h in &r.hosts {
        for f in h.findings.iter().filter(|f| f.status == Status::Fail) {
            let tag = format!("data-status=\"fail\" data-rule=\"{}\"", f.rule);
            assert!(dom.contains(&tag), "{} {}", h.host, f.rule);
        }
    }

    // A screenshot for the reviewer (CI keeps target/artifacts/).
    screenshot(&chrome, &page, "report", 3000);
}

/// Screenshot `page` (1280 wide, `height` high) into target/artifacts/NAME.png
/// with no console line, and copy the page beside it as NAME.html: what
/// the reviewer looks at (CI keeps target/artifacts/).
fn screenshot(chrome: &Path, page: &Path, name: &str, height: u32) {
    let artifacts = cli::repo_root().join("target/artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let png = artifacts.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let (_, console) = browse(
        chrome,
        page,
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size=1280,{height}"),
            "--hide-scrollbars",
        ],
    );
    assert!(console.is_empty(), "{name}: {console:#?}");
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 20_000,
        "{name}: {} bytes",
        bytes.len()
    );
    std::fs::copy(page, artifacts.join(format!("{name}.html"))).unwrap();
}

#[test]
fn html_from_the_cli_is_the_library_page() {
    let o = cli::cmd()
        .args([
            "check",
            "--snapshot",
            "testdata/hosts/nat-story",
            "--profile",
            "all",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        html::render(&report_of(&["nat-story"]))
    );
}

/// Reads every drift table back from the DOM Chromium built, into a
/// `<pre id="probe">` that `--dump-dom` prints: rule, subject, the cells of
/// each side, the removed and added options, and whether it is displayed.
const DRIFT_PROBE: &str = r#"
(function () {
  var out = [];
  document.querySelectorAll("article.finding").forEach(function (f) {
    var t = f.querySelector("table.beforeafter");
    if (!t) { return; }
    var cell = function (sel) { var c = t.querySelector(sel); return c ? c.textContent.trim() : null; };
    var items = function (sel) { return Array.prototype.map.call(t.querySelectorAll(sel), function (e) { return e.textContent; }); };
    out.push({
      rule: f.dataset.rule,
      subject: (f.querySelector(".head .mono") || {}).textContent || "",
      status: f.dataset.status,
      before: cell("td.before.value"),
      after: cell("td.after.value"),
      before_at: cell("td.before.at"),
      after_at: cell("td.after.at"),
      removed: items("td.removed del"),
      added: items("td.added ins"),
      shown: t.getClientRects().length > 0
    });
  });
  var p = document.createElement("pre");
  p.id = "probe";
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
})();
"#;

#[test]
fn html_shows_drift_as_before_and_after_in_headless_chromium() {
    let Some(chrome) = chromium() else { return };
    // fstab options edited but not remounted; sysctl.d values not applied
    let r = report_of(&["fstab-edited-not-remounted", "nat-story"]);
    let drift: Vec<(&str, &driftaudit::Finding)> = r
        .hosts
        .iter()
        .flat_map(|h| h.findings.iter().map(move |f| (h.host.as_str(), f)))
        .filter(|(_, f)| f.drift.is_some())
        .collect();
    assert!(
        drift
            .iter()
            .any(|(_, f)| f.rule == "storage.fstab-live-drift")
            && drift
                .iter()
                .any(|(_, f)| f.rule == "sysctl.persisted-drift"),
        "both hosts have drift"
    );
    let tmp = tempfile::tempdir().unwrap();
    let text = html::render(&r);
    let page = tmp.path().join("drift.html");
    std::fs::write(&page, &text).unwrap();
    let probed = tmp.path().join("probed.html");
    let Some(python) = python() else { return };
    std::fs::write(&probed, with_probe(&python, &text, DRIFT_PROBE)).unwrap();
    let (dom, console) = browse(&chrome, &probed, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    let unescape = |s: &str| {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    };
    let tables: Vec<serde_json::Value> =
        serde_json::from_str(&unescape(&dom[start..end])).expect("probe JSON");
    assert_eq!(
        tables.len(),
        drift.len(),
        "one before/after table per drift finding"
    );
    let mut with_options = 0;
    for (host, f) in &drift {
        let d = f.drift.as_ref().unwrap();
        let t = tables
            .iter()
            .find(|t| t["rule"] == f.rule.as_str() && t["subject"] == f.subject.join(", "))
            .unwrap_or_else(|| panic!("{host} {}: no before/after table", f.rule));
        assert_eq!(t["before"], f.expected.as_deref().unwrap(), "{t}");
        assert_eq!(t["after"], f.actual.as_deref().unwrap(), "{t}");
        let at = d.configured_at.as_ref().expect("the configured line");
        assert_eq!(t["before_at"], at.location(), "configured file:line");
        let running_at: Vec<String> = f.evidence[1..].iter().map(|e| e.location()).collect();
        assert_eq!(t["after_at"], running_at.join(""), "{t}");
        assert_eq!(t["removed"], serde_json::json!(d.removed), "{t}");
        assert_eq!(t["added"], serde_json::json!(d.added), "{t}");
        assert_eq!(
            t["shown"],
            f.status == Status::Fail,
            "fails shown at first: {t}"
        );
        with_options += usize::from(!d.added.is_empty() || !d.removed.is_empty());
    }
    let fstab = drift
        .iter()
        .find(|(_, f)| f.rule == "storage.fstab-live-drift")
        .unwrap()
        .1;
    let d = fstab.drift.as_ref().unwrap();
    assert_eq!(
        (d.configured.as_str(), d.running.as_str()),
        ("fstab", "mount")
    );
    assert_eq!(d.configured_at.as_ref().unwrap().path, "/etc/fstab");
    assert!(with_options > 0 && !d.removed.is_empty() && !d.added.is_empty());

    // for the reviewer, beside report.png: one host, its drift on screen
    let page = tmp.path().join("drift-one.html");
    std::fs::write(
        &page,
        html::render(&report_of(&["fstab-edited-not-remounted"])),
    )
    .unwrap();
    screenshot(&chrome, &page, "drift", 2400);
}

/// Unchecks `fail` in the status filter, as a reader would, and records what
/// the page's own script then shows, into `<pre id="probe">`.
const FILTER_PROBE: &str = r##"
(function () {
  var box = document.querySelector("#filters input[name=status][value=fail]");
  box.checked = false;
  box.dispatchEvent(new Event("change", { bubbles: true }));
  var visible = document.querySelectorAll("article.finding:not([hidden])").length;
  var fails = document.querySelectorAll("article.finding[data-status=fail]:not([hidden])").length;
  var submitted = document.getElementById("filters").dispatchEvent(new Event("submit", { cancelable: true }));
  var p = document.createElement("pre");
  p.id = "probe";
  p.textContent = JSON.stringify({ visible: visible, fails: fails, shown: document.getElementById("shown").textContent, submit_default: submitted });
  document.body.appendChild(p);
})();
"##;

#[test]
fn html_csp_runs_the_pages_script_and_no_injected_inline_code_in_headless_chromium() {
    let Some(chrome) = chromium() else { return };
    let Some(python) = python() else { return };
    let r = report_of(FLEET);
    let text = html::render(&r);
    let tmp = tempfile::tempdir().unwrap();

    // An escaping bug simulated: markup in host text reaching the page raw,
    // as an inline script, an event-handler attribute and a javascript: URL.
    let injected = text.replacen(
        "<footer",
        "<img src=x onerror=\"document.body.setAttribute('data-pwned','onerror')\">\
         <svg onload=\"document.body.setAttribute('data-pwned','onload')\"></svg>\
         <script>document.body.setAttribute('data-pwned','script')</script>\
         <footer",
        1,
    );
    assert_ne!(injected, text);
    let page = tmp.path().join("injected.html");
    std::fs::write(&page, &injected).unwrap();
    let (dom, console) = browse(&chrome, &page, &["--dump-dom"]);
    assert!(
        dom.contains("<img src=\"x\"") && dom.contains("data-pwned','script'"),
        "the injected markup is in the page: {}",
        &dom[..dom.len().min(400)]
    );
    assert!(!dom.contains("data-pwned=\""), "injected inline code ran");
    assert!(
        console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "the browser refused the injected code: {console:#?}"
    );
    // ... while the page's own script still ran
    let (all, shown) = filters_ran(&r, &dom, "the page's script did not run under its CSP");

    // The filters work: unchecking `fail` hides every failing finding, and
    // submitting the form is cancelled by the script (no navigation).
    let probed = tmp.path().join("probed.html");
    std::fs::write(&probed, with_probe(&python, &text, FILTER_PROBE)).unwrap();
    let (dom, console) = browse(&chrome, &probed, &["--dump-dom"]);
    assert!(console.is_empty(), "console messages: {console:#?}");
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    let probe: serde_json::Value =
        serde_json::from_str(&dom[start..end].replace("&quot;", "\"")).expect("probe JSON");
    let fails = r
        .hosts
        .iter()
        .flat_map(|h| &h.findings)
        .filter(|f| f.status == Status::Fail)
        .count();
    assert!(fails > 0);
    assert_eq!(probe["fails"], 0, "{probe}");
    assert_eq!(probe["visible"], shown - fails, "{probe}");
    assert_eq!(
        probe["shown"],
        format!("{} of {all} findings shown", shown - fails),
        "{probe}"
    );
    assert_eq!(
        probe["submit_default"], false,
        "submit is cancelled: {probe}"
    );
}

/// Each finding's `expected` cell as python3's html.parser reads the page:
/// `[rule, expected text]` in page order.
const EXPECTED_CELLS: &str = r#"
import sys, json
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(); self.rule = None; self.div = 0; self.before = None; self.code = False; self.out = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article": self.rule = a.get("data-rule")
        if tag == "div" and a.get("class") == "before" and self.rule: self.before = True; self.out.append([self.rule, ""])
        if tag == "code" and self.before: self.code = True
    def handle_endtag(self, tag):
        if tag == "code" and self.code: self.code = False; self.before = None
    def handle_data(self, d):
        if self.code: self.out[-1][1] += d
p = P(); p.feed(sys.stdin.read()); print(json.dumps(p.out))
"#;

#[test]
fn html_and_markdown_show_an_assert_rules_expected_in_words() {
    use driftaudit::unstable::render::markdown;
    let r = report_of(&["zimbra-khimki-asfound"]);
    let f = r.hosts[0]
        .findings
        .iter()
        .find(|f| f.rule == "zimbra.buffer-pool-fits-db")
        .expect("the buffer pool rule");
    assert_eq!(f.status, Status::Fail);
    // the report keeps the expression; people get it in words, with the
    // setting `pool` reads and the value `target` has on this host, which
    // the explanation's template computes on its own path ("needs is X:")
    assert_eq!(f.expected.as_deref(), Some("pool >= target"));
    let words = f.expected_for_people().unwrap();
    let needs = f
        .explanation
        .split("The pool this host needs is ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .expect("the explanation names the pool this host needs");
    assert_eq!(words, format!("innodb_buffer_pool_size at least {needs}"));

    // HTML, read by a real HTML parser: every assert finding's cell holds
    // words, this one those words
    let page = html::render(&r);
    if let Some(python) = python() {
        let o = feed_ok(
            Command::new(&python).args(["-c", EXPECTED_CELLS]),
            page.as_bytes(),
            "python3",
        );
        let cells: Vec<(String, String)> = serde_json::from_slice(&o.stdout).unwrap();
        assert!(
            cells.contains(&(f.rule.clone(), words.to_string())),
            "{cells:#?}"
        );
        for (rule, cell) in &cells {
            assert!(
                !cell.contains(">=") && !cell.contains("<=") && !cell.contains("=="),
                "{rule}: expected shows an expression: {cell}"
            );
        }
    }

    // Markdown: the finding's facts line says `expected WORDS`
    let md = markdown::render(&r);
    let line = md
        .lines()
        .skip_while(|l| !l.contains("`zimbra.buffer-pool-fits-db`"))
        .nth(1)
        .expect("the finding's facts line");
    let unescaped = line.replace('\\', "");
    assert!(
        unescaped.contains(&format!(" · expected {words} · ")),
        "{line}"
    );
    assert!(!md.contains("pool >= target"));

    // the text report says the same words
    let o = cli::cmd()
        .args([
            "check",
            "--snapshot",
            "testdata/hosts/zimbra-khimki-asfound",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(&format!("expected: {words}\n")), "{text}");
    assert!(!text.contains("pool >= target"));
}

#[test]
fn each_finding_shows_its_rules_tags_and_an_untagged_rule_shows_none() {
    let report = report_of(&["nat-story"]);
    let page = html::render(&report);
    let set = audit::builtin();
    for f in &report.hosts[0].findings {
        let Some(rule) = set.rule(&f.rule) else {
            continue;
        };
        let head = format!("<code>{}</code>", f.rule);
        let at = page
            .find(&head)
            .unwrap_or_else(|| panic!("{} not on the page", f.rule));
        let line_end = at + page[at..].find("</div>").unwrap();
        let head_line = &page[at..line_end];
        if rule.tags.is_empty() {
            assert!(!head_line.contains("class=\"muted tags\""), "{head_line}");
        } else {
            let want = format!("<span class=\"muted tags\">{}</span>", rule.tags.join(", "));
            assert!(head_line.contains(&want), "{}: {head_line}", f.rule);
        }
    }
    assert!(
        page.contains("cis-l1-server"),
        "nat-story has a CIS finding"
    );
}
