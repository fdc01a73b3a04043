//! Every corpus option file and `SHOW VARIABLES` capture parses without a
//! panic, and its parse result (entries or issues) is pinned by one insta
//! snapshot per file. Secret values are redacted before snapshotting.

use driftaudit::unstable::parse::{mycnf, mysqlvars};
use driftaudit::unstable::secret::{option_is_secret, server_variable_is_secret, REDACTED};

use crate::common;

/// The files of one corpus directory, or `None` (skipped) without the corpus.
fn files(sub: &str) -> Option<Vec<std::path::PathBuf>> {
    let dir = common::corpus_dir(sub)?;
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    assert!(v.len() >= 20, "corpus {sub} has only {} files", v.len());
    Some(v)
}

fn snap_name(prefix: &str, p: &std::path::Path) -> String {
    let n = p.file_name().unwrap().to_string_lossy();
    let n = n.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
    format!("{prefix}__{n}")
}

#[test]
fn mycnf_corpus_parses_and_is_pinned() {
    let Some(files) = files("mycnf") else { return };
    for p in files {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        let mut parsed = mycnf::parse(&text);
        for d in &mut parsed.directives {
            if let mycnf::Directive::Option {
                name,
                value: Some(v),
                ..
            } = d
            {
                if option_is_secret(name) {
                    *v = REDACTED.into();
                }
            }
        }
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(snap_name("mycnf", &p), parsed);
        });
    }
}

#[test]
fn mysql_variables_corpus_parses_and_is_pinned() {
    let Some(files) = files("mysql-variables") else {
        return;
    };
    for p in files {
        let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
        let parsed = mysqlvars::parse(&text);
        assert!(
            parsed.vars.len() > 100,
            "{}: only {} variables",
            p.display(),
            parsed.vars.len()
        );
        let vars: Vec<String> = parsed
            .vars
            .iter()
            .map(|v| {
                let value = if server_variable_is_secret(&v.name) {
                    REDACTED
                } else {
                    v.value.as_str()
                };
                format!("{}:{} = {value}", v.line, v.name)
            })
            .collect();
        let summary = serde_json::json!({
            "format": parsed.format,
            "count": parsed.vars.len(),
            "issues": parsed.issues,
            "vars": vars,
        });
        insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
            insta::assert_json_snapshot!(snap_name("mysqlvars", &p), summary);
        });
    }
}
