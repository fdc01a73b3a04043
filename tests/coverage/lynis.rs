//! Coverage held to Lynis: every Linux `config-data=sysctl` expectation of
//! Lynis's default profile (/etc/lynis/default.prf, the checklist of its
//! KRNL-6000 test) is judged by a shipped rule, or is in docs/coverage.md's
//! explained exclusion list; and where a shipped rule fails at the value
//! Lynis expects, docs/coverage.md says so ("Where Lynis expects another
//! value", which also lists, by hand, rules that accept more than Lynis).
//!
//! "Judged by a shipped rule" is decided by running the built-in policies,
//! not by reading their text: a host whose kernel has exactly Lynis's keys
//! at Lynis's values (plus one interface, eth0, carrying the `conf.all`
//! values, so the per-interface rules have an interface to judge) is
//! audited, and a key is covered when it is a subject of a `pass` or `fail`
//! finding of some rule.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const PROFILE: &str = "/etc/lynis/default.prf";

/// Top-level sysctl trees of Linux; the profile also holds FreeBSD/macOS
/// keys (`security.bsd.*`, `net.inet.*`, `kern.*`, `hw.*`), which are not.
const LINUX_PREFIXES: &str = "fs. kernel. net.core. net.ipv4. net.ipv6. dev. vm.";

/// One Lynis expectation: key, the values it accepts (`1|2|3`), the line.
struct Expectation {
    key: String,
    values: Vec<String>,
    line: usize,
}

/// The Linux `config-data=sysctl;KEY;VALUE;WEIGHT;DESCRIPTION;...` lines
/// of the profile; commented lines (`#config-data=...`) are not in force.
fn linux_expectations(profile: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    for (i, line) in profile.lines().enumerate() {
        let Some(rest) = line.trim().strip_prefix("config-data=sysctl;") else {
            continue;
        };
        let mut fields = rest.split(';');
        let key = fields.next().unwrap_or("").trim();
        let value = fields.next().unwrap_or("").trim();
        if key.is_empty() || value.is_empty() {
            continue;
        }
        if LINUX_PREFIXES.split(' ').any(|p| key.starts_with(p)) {
            out.push(Expectation {
                key: key.to_string(),
                values: value.split('|').map(str::to_string).collect(),
                line: i + 1,
            });
        }
    }
    out
}

/// The backticked first cells of the table rows in section `title` of
/// docs/coverage.md.
fn doc_keys(doc: &str, title: &str) -> BTreeSet<String> {
    let start = doc
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("docs/coverage.md has no section `## {title}`"));
    let body = &doc[start + title.len() + 5..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    body.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

/// Findings of the built-in policies on a snapshot: (rule, status, subject).
fn findings(snapshot: &Path) -> Vec<(String, String, Vec<String>)> {
    let out = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args([
            "check",
            "--profile",
            "all",
            "--format",
            "json",
            "--snapshot",
        ])
        .arg(snapshot)
        .output()
        .expect("run driftaudit");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "driftaudit check --format json: {e}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut all = Vec::new();
    for host in report["hosts"].as_array().expect("hosts") {
        for f in host["findings"].as_array().expect("findings") {
            let subject = f["subject"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            all.push((
                f["rule"].as_str().unwrap_or("").to_string(),
                f["status"].as_str().unwrap_or("").to_string(),
                subject,
            ));
        }
    }
    all
}

#[test]
fn every_linux_sysctl_key_lynis_checks_is_judged_by_a_shipped_rule_or_explained() {
    if common::tool("lynis", "lynis").is_none() {
        return;
    }
    let profile = std::fs::read_to_string(PROFILE)
        .unwrap_or_else(|e| panic!("lynis is installed but {PROFILE} is not readable: {e}"));
    let lynis = linux_expectations(&profile);
    assert!(
        lynis.len() >= 30,
        "only {} Linux sysctl expectations in {PROFILE}: has the profile format changed?",
        lynis.len()
    );

    // A kernel with exactly Lynis's keys at its (first accepted) values.
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    files.insert(
        "/proc/sys/kernel/osrelease".into(),
        "6.1.0-28-amd64\n".into(),
    );
    for e in &lynis {
        let v = format!("{}\n", e.values[0]);
        files.insert(format!("/proc/sys/{}", e.key.replace('.', "/")), v.clone());
        for family in ["net.ipv4.conf.all.", "net.ipv6.conf.all."] {
            if let Some(leaf) = e.key.strip_prefix(family) {
                let iface = family.replace("all.", "eth0.") + leaf;
                files.insert(format!("/proc/sys/{}", iface.replace('.', "/")), v.clone());
            }
        }
    }
    // net.ipv4.ip_forward is the same switch as conf.all.forwarding (writing
    // one sets the other) and every kernel has it; Lynis's line for it is
    // commented out, so the host gets the value Lynis expects of the other.
    if let Some(f) = lynis
        .iter()
        .find(|e| e.key == "net.ipv4.conf.all.forwarding")
    {
        files.insert(
            "/proc/sys/net/ipv4/ip_forward".into(),
            format!("{}\n", f.values[0]),
        );
    }
    let tree: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let host = common::snapshot_tree(&tree);
    let found = findings(host.path());

    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/coverage.md"))
        .expect("docs/coverage.md");
    let excluded = doc_keys(&doc, "Lynis keys not covered, and why");
    let differs = doc_keys(&doc, "Where Lynis expects another value");

    let mut problems = Vec::new();
    for e in &lynis {
        let judged: Vec<&(String, String, Vec<String>)> = found
            .iter()
            .filter(|(_, status, subject)| {
                (status == "pass" || status == "fail") && subject.contains(&e.key)
            })
            .collect();
        let covered = !judged.is_empty();
        if !covered && !excluded.contains(&e.key) {
            problems.push(format!(
                "{PROFILE}:{}: Lynis checks {} = {} but no shipped rule judges it: add a rule, or add the key with the reason to \"Lynis keys not covered, and why\" in docs/coverage.md",
                e.line,
                e.key,
                e.values.join("|")
            ));
        }
        if covered && excluded.contains(&e.key) {
            let rules: BTreeSet<&str> = judged.iter().map(|(r, _, _)| r.as_str()).collect();
            problems.push(format!(
                "docs/coverage.md lists {} as not covered, but {} judges it: remove it from the exclusion list",
                e.key,
                rules.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        let failing: BTreeSet<&str> = judged
            .iter()
            .filter(|(_, status, _)| status == "fail")
            .map(|(r, _, _)| r.as_str())
            .collect();
        if !failing.is_empty() && !differs.contains(&e.key) {
            problems.push(format!(
                "{PROFILE}:{}: at Lynis's value {} = {}, {} fails: say so under \"Where Lynis expects another value\" in docs/coverage.md",
                e.line,
                e.key,
                e.values[0],
                failing.iter().copied().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let known: BTreeSet<&str> = lynis.iter().map(|e| e.key.as_str()).collect();
    for k in excluded.iter().chain(differs.iter()) {
        if !known.contains(k.as_str()) {
            problems.push(format!(
                "docs/coverage.md names {k}, which {PROFILE} does not check (a Linux key in force): remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_profile_parser_reads_lynis_lines_as_lynis_does() {
    // The real format (lynis 3.0.8): fields separated by `;`, alternatives
    // by `|`, `#` comments a line out, BSD keys share the file.
    let profile = "config-data=sysctl;kernel.yama.ptrace_scope;1|2|3;1;Disable process tracing for everyone;-;category:security;\n\
                   #config-data=sysctl;net.ipv4.ip_forward;0;1;Do not forward traffic;-;category:security;\n\
                   config-data=sysctl;security.bsd.see_other_uids;0;1;Users only see their own processes;sysctl -a;-;category:security;\n\
                   config-data=sysctl;fs.suid_dumpable;0;1;Restrict core dumps;sysctl -a;url:https;//www.kernel.org/doc/Documentation/sysctl/fs.txt;category:security;\n";
    let got = linux_expectations(profile);
    let keys: Vec<(&str, Vec<&str>, usize)> = got
        .iter()
        .map(|e| {
            (
                e.key.as_str(),
                e.values.iter().map(String::as_str).collect(),
                e.line,
            )
        })
        .collect();
    assert_eq!(
        keys,
        vec![
            ("kernel.yama.ptrace_scope", vec!["1", "2", "3"], 1),
            ("fs.suid_dumpable", vec!["0"], 4),
        ]
    );
}

/// Lynis's KRNL-6000 verdicts from its log: key -> (equal, what it found).
/// Lines: `Result: sysctl key KEY contains equal expected and current value (V)`
/// and `Result: sysctl key KEY has a different value than expected in scan
/// profile. Expected=E, Real=R`.
fn lynis_verdicts(log: &str) -> BTreeMap<String, (bool, String)> {
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.split("Result: sysctl key ").nth(1) else {
            continue;
        };
        let mut words = rest.splitn(2, ' ');
        let key = words.next().unwrap_or("").to_string();
        let tail = words.next().unwrap_or("");
        if tail.starts_with("contains equal") {
            out.insert(key, (true, tail.to_string()));
        } else if tail.starts_with("has a different value") {
            out.insert(key, (false, tail.to_string()));
        }
    }
    out
}

#[test]
fn on_this_host_the_shipped_rules_agree_with_lynis_krnl_6000_on_every_key_both_judge() {
    let Some(lynis) = common::tool("lynis", "lynis") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let log = tmp.path().join("lynis.log");
    let mut lynis = Command::new(&lynis);
    lynis
        .args([
            "audit",
            "system",
            "--tests",
            "KRNL-6000",
            "--quick",
            "--no-colors",
            "--logfile",
        ])
        .arg(&log)
        .arg("--report-file")
        .arg(tmp.path().join("lynis-report.dat"));
    common::cli::ok(&mut lynis, "lynis audit system --tests KRNL-6000");
    let verdicts = lynis_verdicts(&std::fs::read_to_string(&log).expect("lynis wrote its log"));
    assert!(
        verdicts.len() >= 20,
        "only {} sysctl verdicts in Lynis's log: has its log format changed?",
        verdicts.len()
    );

    // driftaudit on the same live host.
    let out = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["check", "--profile", "all", "--format", "json"])
        .output()
        .expect("run driftaudit");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/coverage.md"))
        .expect("docs/coverage.md");
    let differs = doc_keys(&doc, "Where Lynis expects another value");

    let mut compared = 0;
    let mut problems = Vec::new();
    for (key, (lynis_pass, said)) in &verdicts {
        let mut judged = Vec::new();
        for host in report["hosts"].as_array().expect("hosts") {
            for f in host["findings"].as_array().expect("findings") {
                let status = f["status"].as_str().unwrap_or("");
                let mentions = f["subject"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|v| v.as_str() == Some(key.as_str())));
                if mentions && (status == "pass" || status == "fail") {
                    judged.push((
                        f["rule"].as_str().unwrap_or("").to_string(),
                        status == "pass",
                    ));
                }
            }
        }
        if judged.is_empty() {
            continue;
        }
        compared += 1;
        let ours = judged.iter().all(|(_, pass)| *pass);
        if ours != *lynis_pass && !differs.contains(key) {
            problems.push(format!(
                "{key}: Lynis {} ({said}), driftaudit {} ({})",
                if *lynis_pass { "passes" } else { "flags it" },
                if ours { "passes" } else { "fails" },
                judged
                    .iter()
                    .map(|(r, p)| format!("{r} {}", if *p { "pass" } else { "fail" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    assert!(
        compared >= 15,
        "only {compared} keys judged by both: {verdicts:?}"
    );
    assert!(
        problems.is_empty(),
        "verdicts differ where docs/coverage.md does not say why:\n{}",
        problems.join("\n")
    );
}
