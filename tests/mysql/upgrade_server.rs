//! Ground truth for policies/upgrade/mariadb.yaml: the installed MariaDB
//! server is the truth for its own version. Every option the data says that
//! version refuses must make `mariadbd --no-defaults --OPTION=1 --help
//! --verbose` fail with "unknown variable"; every one it says is accepted and
//! ignored must not, and must log "was removed"; every option the data has
//! removed only in a later release must still be accepted; every value the
//! data says it refuses must be refused ("Error while setting value"); and
//! every default the data gives that version must be what the server runs
//! with. Under CI=true a missing server is a
//! failure (tests/common); elsewhere the test skips with one line.

use std::path::Path;
use std::process::Command;

use driftaudit::unstable::policy::Severity;
use driftaudit::unstable::report::Status;
use driftaudit::unstable::upgrade::data::{builtin_for, default_at, Effect, Product, Version};
use driftaudit::unstable::upgrade::{self, Target};

use crate::common;
use crate::common::{audit, mariadb, tree};

/// What mariadbd says about one option on its command line.
fn verdict(mariadbd: &Path, arg: &str) -> (bool, String) {
    let out = Command::new(mariadbd)
        .args(["--no-defaults", arg, "--help", "--verbose"])
        .output()
        .expect("run mariadbd");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), err)
}

fn server_version(mariadbd: &Path) -> Version {
    let (text, v) = mariadb::version(mariadbd);
    let head: String = v
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    Version::parse(&head).unwrap_or_else(|| panic!("no version in `{text}`"))
}

#[test]
fn the_installed_mariadb_refuses_and_ignores_exactly_what_the_data_says() {
    let Some(mariadbd) = common::tool("mariadbd", "mariadb-server") else {
        return;
    };
    let version = server_version(&mariadbd);
    let k = builtin_for(Product::Mariadb).unwrap();
    // (argument, expectation, entry) for every claim the server can decide
    let mut cases: Vec<(String, &'static str, String)> = Vec::new();
    for e in &k.entries {
        let arg = format!("--{}=1", e.name);
        if let Some(r) = &e.removed {
            let gone = r.version.cmp_to(&version.0) != std::cmp::Ordering::Greater;
            match (gone, r.effect, r.at_latest) {
                (true, Effect::Refused, _) => cases.push((arg, "refused", e.name.clone())),
                (true, Effect::Ignored, _) => cases.push((arg, "ignored", e.name.clone())),
                // removed only later: this older server still has it
                (false, _, false) => cases.push((arg, "accepted", e.name.clone())),
                _ => {}
            }
        }
        for v in &e.removed_values {
            if v.version.cmp_to(&version.0) != std::cmp::Ordering::Greater {
                cases.push((
                    format!("--{}={}", e.name, v.value),
                    "value-refused",
                    e.name.clone(),
                ));
            }
        }
    }
    assert!(
        cases.iter().filter(|c| c.1 == "refused").count() >= 10,
        "too few refused options to check against {version}: {cases:?}"
    );
    let results: Vec<(String, &str, String, bool, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| {
                let mariadbd = &mariadbd;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(arg, want, name)| {
                            let (ok, err) = verdict(mariadbd, arg);
                            (arg.clone(), *want, name.clone(), ok, err)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut wrong = Vec::new();
    for (arg, want, name, ok, err) in &results {
        let unknown = err.contains("unknown variable") || err.contains("unknown option");
        let removed_note = err.contains("was removed");
        let fine = match *want {
            "refused" => unknown && !ok,
            "ignored" => !unknown && *ok && removed_note,
            "accepted" => !unknown && *ok,
            // InnoDB options: "Error while setting value", then "Parsing
            // options for plugin 'InnoDB' failed. Disabling plugin" (the
            // server then aborts: no InnoDB); --help itself still exits 0.
            "value-refused" => !unknown && err.contains("Error while setting value"),
            _ => false,
        };
        if !fine {
            let first = err
                .lines()
                .find(|l| l.contains("ERROR") || l.contains("removed"))
                .unwrap_or("(nothing on stderr)");
            wrong.push(format!(
                "{name}: data says {want} on {version}, `mariadbd {arg}` exited {} with: {first}",
                if *ok { "0" } else { "non-zero" }
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "policies/upgrade/mariadb.yaml disagrees with mariadbd {version}:\n{}",
        wrong.join("\n")
    );
    eprintln!(
        "upgrade data checked against mariadbd {version}: {} refused, {} ignored, {} still accepted, {} refused values",
        results.iter().filter(|r| r.1 == "refused").count(),
        results.iter().filter(|r| r.1 == "ignored").count(),
        results.iter().filter(|r| r.1 == "accepted").count(),
        results.iter().filter(|r| r.1 == "value-refused").count(),
    );
}

/// The data's default of every option at the installed release equals what
/// the real server runs when nothing sets it: `innodb_purge_batch_size` was
/// 300 in the data while MariaDB 10.11.19 runs 127 (MDEV-32050, 10.11.6).
/// Checked for 11.4, the host's running value is what it runs with now
/// (127 -> 1000), a capture that disagrees with the data is a data note,
/// and 11.0's innodb_undo_tablespaces = 3, which reaches only a new data
/// directory, is information, not a failure.
#[test]
fn upgrade_defaults_are_the_installed_servers_running_values() {
    let Some((t, tmp, server)) = mariadb::running() else {
        return;
    };
    let version = server_version(&t.mariadbd);
    let variables = server.sql("SHOW GLOBAL VARIABLES");
    drop(server);
    let running: std::collections::BTreeMap<&str, &str> = variables
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .collect();
    let k = builtin_for(Product::Mariadb).unwrap();
    let mut wrong = Vec::new();
    for e in k.entries.iter().filter(|e| !e.defaults.is_empty()) {
        let (Some(want), Some(have)) = (
            default_at(&e.defaults, &version.0),
            running.get(e.name.as_str()),
        ) else {
            continue;
        };
        let same = match (want.parse::<f64>(), have.parse::<f64>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => want.eq_ignore_ascii_case(have),
        };
        if !same {
            wrong.push(format!("{}: data {want}, server {have}", e.name));
        }
    }
    assert!(wrong.is_empty(), "data vs mariadbd {version:?}: {wrong:?}");
    assert_eq!(running.get("innodb_purge_batch_size"), Some(&"127"));

    let snap = tmp.path().join("snap");
    tree::put(
        &snap.join("etc/mysql/my.cnf"),
        "[mysqld]\nmax_connections = 50\n",
    );
    tree::put(&snap.join("captures/mysql-variables.tsv"), &variables);
    let targets = [Target::parse("mariadb=11.4").unwrap()];
    let f = upgrade::check(&audit::host(&snap), &targets);
    let on = |name: &str| {
        f.iter()
            .find(|x| x.rule == "upgrade.mariadb.default-changed" && x.subject == [name])
            .unwrap_or_else(|| panic!("{name}: {f:#?}"))
    };
    let purge = on("innodb_purge_batch_size");
    assert_eq!(purge.status, Status::Fail);
    assert!(
        purge
            .expected
            .as_deref()
            .unwrap_or("")
            .starts_with("innodb_purge_batch_size = 127 (the running server's value"),
        "{purge:#?}"
    );
    assert!(
        !purge.explanation.contains("Data note"),
        "{}",
        purge.explanation
    );
    let undo = on("innodb_undo_tablespaces");
    assert_eq!((undo.status, undo.severity), (Status::Pass, Severity::Info));
    // a capture the data disagrees with: said, and the capture is used
    let edited = variables.replace(
        "innodb_purge_batch_size\t127\n",
        "innodb_purge_batch_size\t300\n",
    );
    tree::put(&snap.join("captures/mysql-variables.tsv"), &edited);
    let f = upgrade::check(&audit::host(&snap), &targets);
    let purge = f
        .iter()
        .find(|x| {
            x.rule == "upgrade.mariadb.default-changed" && x.subject == ["innodb_purge_batch_size"]
        })
        .unwrap();
    assert!(
        purge.explanation.contains("Data note")
            && purge.explanation.contains("the default 127")
            && purge.expected.as_deref().unwrap_or("").contains("= 300"),
        "{purge:#?}"
    );
}
