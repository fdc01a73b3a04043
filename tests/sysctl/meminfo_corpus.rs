//! Every file under ../shared/corpus/sysctl and ../shared/corpus/meminfo goes
//! through its parser (sysctl.d-style files through `parse_conf`, `sysctl -a`
//! captures through `parse_capture`, meminfo through `meminfo::parse`) and the
//! result — entries with line numbers, then issues — is pinned by one insta
//! snapshot per file, so a parser change that breaks a real file shows up.
//! Secret values (stable_secret, fastopen_key) are redacted before pinning.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use driftaudit::unstable::parse::{meminfo, sysctl, Issue};
use driftaudit::unstable::secret::{sysctl_key_is_secret, REDACTED};

use crate::common;

/// The files of one corpus directory with their text, or `None` (skipped)
/// without the corpus.
fn files(sub: &str, at_least: usize) -> Option<Vec<(PathBuf, String)>> {
    let dir = common::corpus_dir(sub)?;
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    assert!(
        v.len() >= at_least,
        "corpus {sub} has only {} files",
        v.len()
    );
    Some(v.into_iter().map(|p| (p.clone(), read(&p))).collect())
}

fn snap_name(prefix: &str, p: &Path) -> String {
    let n = p.file_name().unwrap().to_string_lossy();
    let n = n.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
    format!("{prefix}__{n}")
}

fn read(p: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned()
}

/// `sysctl -a` output (captures) as opposed to sysctl.d-style files.
fn is_capture(name: &str) -> bool {
    name.contains("sysctl-a")
        || name.contains("sysctl_-a")
        || name.contains("sysctl_all")
        || name.contains("pt-summary_samples")
}

fn value(key: &str, v: &str) -> String {
    if sysctl_key_is_secret(key) {
        REDACTED.to_string()
    } else {
        v.replace('\t', "\\t").replace('\n', "\\n")
    }
}

fn issues(out: &mut String, issues: &[Issue]) {
    let _ = writeln!(out, "-- {} issue(s)", issues.len());
    for i in issues {
        match i.column {
            Some(c) => {
                let _ = writeln!(out, "{}:{c}: {}", i.line, i.message);
            }
            None => {
                let _ = writeln!(out, "{}: {}", i.line, i.message);
            }
        }
    }
}

fn pin(name: String, text: String) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn sysctl_corpus_parses_and_is_pinned() {
    let Some(files) = files("sysctl", 30) else {
        return;
    };
    let mut captures = 0;
    for (p, text) in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let mut out = String::new();
        if is_capture(&name) {
            captures += 1;
            let (vals, iss) = sysctl::parse_capture(&text);
            let _ = writeln!(out, "capture: {} value(s)", vals.len());
            for v in &vals {
                let _ = writeln!(out, "{}: {} = {}", v.line, v.key, value(&v.key, &v.value));
            }
            issues(&mut out, &iss);
        } else {
            let (lines, iss) = sysctl::parse_conf(&text);
            let _ = writeln!(out, "conf: {} line(s)", lines.len());
            for l in &lines {
                match l {
                    sysctl::ConfLine::Assign {
                        key,
                        value: v,
                        ignore_failure,
                        line,
                        ..
                    } => {
                        let dash = if *ignore_failure { "-" } else { "" };
                        let _ = writeln!(out, "{line}: {dash}{key} = {}", value(key, v));
                    }
                    sysctl::ConfLine::Exclude { key, line } => {
                        let _ = writeln!(out, "{line}: exclude {key}");
                    }
                }
            }
            issues(&mut out, &iss);
        }
        pin(snap_name("sysctl", &p), out);
    }
    assert!(
        captures >= 8,
        "expected the sysctl -a captures to be recognised, got {captures}"
    );
}

#[test]
fn meminfo_corpus_parses_and_is_pinned() {
    let Some(files) = files("meminfo", 10) else {
        return;
    };
    let with_total = files
        .iter()
        .filter(|(_, text)| {
            meminfo::parse(text)
                .0
                .iter()
                .any(|f| f.name == "MemTotal" && f.bytes)
        })
        .count();
    for (p, text) in files {
        let (fields, iss) = meminfo::parse(&text);
        let mut out = format!("{} field(s)\n", fields.len());
        for f in &fields {
            let unit = if f.bytes { " bytes" } else { "" };
            let _ = writeln!(out, "{}: {} = {}{unit}", f.line, f.name, f.value);
        }
        issues(&mut out, &iss);
        pin(snap_name("meminfo", &p), out);
    }
    assert!(
        with_total >= 10,
        "MemTotal found in only {with_total} corpus files"
    );
}
