//! Secrets never leave: one module decides what is secret in each format
//! (by meaning, not by substring), and no report format, diff, snapshot or
//! error message carries a secret value. Each test plants unique marker
//! values in a host and greps everything driftaudit prints or writes.

use std::path::Path;
use std::process::{Command, Output};

use driftaudit::facts::Entry;
use driftaudit::secret::{self, REDACTED};
use driftaudit::value::Value;
use driftaudit::{Host, PolicySet};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run driftaudit")
}

/// stdout and stderr together.
fn all_output(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Write `files` (host path, content) under a new snapshot directory.
fn snapshot(dir: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("snapshot.json"),
        r#"{"schema": "driftaudit.snapshot/1", "host": "secret-host", "driftaudit": "0.1.0", "captured_at": "2026-11-30T09:00:00Z", "unreadable": []}"#,
    )
    .unwrap();
    for (p, text) in files {
        let path = dir.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Everything a user can get out of a snapshot: every report format, the
/// semantic diff against `other` (both ways, text and JSON) and
/// `diff --files`, with `policy` added to the built-ins.
fn every_output(snap: &Path, other: &Path, policy: &Path) -> String {
    let (s, o, p) = (
        snap.to_str().unwrap(),
        other.to_str().unwrap(),
        policy.to_str().unwrap(),
    );
    let mut out = String::new();
    for format in ["text", "json", "sarif", "junit", "markdown", "jsonl"] {
        out.push_str(&all_output(&bin(&[
            "check",
            "--snapshot",
            s,
            "--policy",
            p,
            "--format",
            format,
        ])));
    }
    for (a, b) in [(s, o), (o, s)] {
        for format in ["text", "json"] {
            out.push_str(&all_output(&bin(&[
                "diff", a, b, "--policy", p, "--format", format,
            ])));
            out.push_str(&all_output(&bin(&[
                "diff", a, b, "--policy", p, "--files", "--format", format,
            ])));
        }
    }
    out
}

fn assert_no_marker(out: &str, markers: &[&str]) {
    for m in markers {
        assert!(
            !out.contains(m),
            "secret `{m}` leaked:\n{}",
            out.lines()
                .filter(|l| l.contains(m))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn facts_of(dir: &Path) -> driftaudit::facts::Facts {
    let host = Host::snapshot(dir).unwrap();
    driftaudit::engine::gather(&PolicySet::builtin().unwrap(), &host)
}

fn value_of(facts: &driftaudit::facts::Facts, ns: &str, key: &str) -> Value {
    match facts.namespaces.get(ns).and_then(|n| n.get(key)) {
        Some(Entry::Set(s)) => s.value.clone(),
        other => panic!("{ns}.{key}: {other:?}"),
    }
}

#[test]
fn secret_catalogue_lists_every_option_treated_as_secret() {
    let list: Vec<String> = secret::catalogue()
        .iter()
        .map(|e| format!("{:<16} {:<55} {}", e.format, e.name, e.what))
        .collect();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("secret-catalogue", list.join("\n"));
    });
    // Every named entry is classified as secret by its own format.
    for e in secret::catalogue() {
        let f = secret::Format::ALL
            .into_iter()
            .find(|f| f.as_str() == e.format)
            .unwrap();
        if e.name.contains(['*', '(', ' ']) {
            continue;
        }
        assert!(secret::is_secret(f, e.name), "{} {}", e.format, e.name);
    }
}

/// Settings whose names only mention a password or a key are settings:
/// they stay visible in the option files and on the running server, so
/// `equals: ON` and runtime drift on them work.
#[test]
fn settings_that_only_mention_password_or_key_stay_visible() {
    const VISIBLE: [(&str, &str); 8] = [
        ("innodb_force_primary_key", "ON"),
        ("disconnect_on_expired_password", "ON"),
        ("strict_password_validation", "ON"),
        ("password_require_current", "ON"),
        ("validate_password_check_user_name", "ON"),
        ("caching_sha2_password_digest_rounds", "5000"),
        ("caching_sha2_password_auto_generate_rsa_keys", "ON"),
        ("sha256_password_auto_generate_rsa_keys", "ON"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let mut cnf = String::from("[mysqld]\n");
    let mut tsv = String::new();
    for (k, v) in VISIBLE {
        cnf.push_str(&format!("{k} = {v}\n"));
        tsv.push_str(&format!("{k}\t{v}\n"));
    }
    cnf.push_str("wsrep_sst_auth = sst:GALERA-PW-1\n");
    tsv.push_str("wsrep_sst_auth\tGALERA-PW-1\n");
    snapshot(
        tmp.path(),
        &[
            ("/etc/mysql/my.cnf", &cnf),
            ("/captures/mysql-variables.tsv", &tsv),
        ],
    );
    let facts = facts_of(tmp.path());
    for (k, v) in VISIBLE {
        for ns in ["mycnf", "mysql"] {
            let got = value_of(&facts, ns, k);
            assert_ne!(got, Value::Str(REDACTED.into()), "{ns}.{k} hidden");
            assert!(
                got.to_string().eq_ignore_ascii_case(v) || got == Value::Bool(true),
                "{ns}.{k}: {got:?}"
            );
        }
    }
    for ns in ["mycnf", "mysql"] {
        assert_eq!(
            value_of(&facts, ns, "wsrep_sst_auth"),
            Value::Str(REDACTED.into())
        );
    }
}

/// A policy whose rules read every secret setting, so findings carry them
/// as actual values (`why` interpolates `{actual}`).
const PROBE_POLICY: &str = r#"policy: secret-probe
title: Rules that read secret settings
description: Every rule here reads a secret; its value must never be shown.
rules:
  - id: probe.tfo-key
    title: probe
    severity: low
    setting: sysctl.net.ipv4.tcp_fastopen_key
    expect: { equals: "nope" }
    why: "tfo is {actual}"
    fix: "set it"
    references: [https://example.org/tfo]
  - id: probe.tfo-key-boot
    title: probe
    severity: low
    setting: sysctl_boot.net.ipv4.tcp_fastopen_key
    expect: { equals: "nope" }
    why: "tfo is {actual}"
    fix: "set it"
    references: [https://example.org/tfo]
  - id: probe.stable-secret
    title: probe
    severity: low
    setting: sysctl.net.ipv6.conf.all.stable_secret
    expect: { equals: "nope" }
    why: "stable is {actual}"
    fix: "set it"
    references: [https://example.org/s]
  - id: probe.stable-secret-boot
    title: probe
    severity: low
    setting: sysctl_boot.net.ipv6.conf.eth0.stable_secret
    expect: { equals: "nope" }
    why: "stable is {actual}"
    fix: "set it"
    references: [https://example.org/s]
"#;

fn write_policy(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("probe.yaml");
    std::fs::write(&p, PROBE_POLICY).unwrap();
    p
}

#[test]
fn sysctl_secrets_are_never_printed_configured_or_running() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write_policy(tmp.path());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let conf = "net.ipv4.tcp_fastopen_key = 11111111-CONFTFO1-11111111-11111111\n\
                net.ipv6.conf.*.stable_secret = fe80::c0f:5ec1\n\
                net.ipv6.conf.eth0.stable_secret = fe80::c0f:5ec2\n\
                net.ipv6.conf.all.stable_secret fe80::bad:5ec3\n";
    let live = "net.ipv4.tcp_fastopen_key = 22222222-LIVETFO2-22222222-22222222\n\
                net.ipv6.conf.all.stable_secret = fe80::11fe:5ec4\n\
                net.ipv6.conf.eth0.stable_secret = fe80::11fe:5ec5\n\
                net.ipv6.conf.lo.stable_secret fe80::11fe:5ec6\n\
                kernel.osrelease = 6.1.0\n";
    snapshot(
        &a,
        &[
            ("/etc/sysctl.d/60-secret.conf", conf),
            ("/captures/sysctl-a.txt", live),
        ],
    );
    snapshot(
        &b,
        &[
            (
                "/etc/sysctl.d/60-secret.conf",
                "net.ipv4.tcp_fastopen_key = 33333333-OTHERTFO-3\n",
            ),
            (
                "/captures/sysctl-a.txt",
                "net.ipv4.tcp_fastopen_key = 44444444-OTHERLIVE-4\n",
            ),
        ],
    );
    let out = every_output(&a, &b, &policy);
    assert!(out.contains("probe.tfo-key"), "the probe rules ran");
    assert!(
        out.contains(REDACTED),
        "secret values show as the placeholder"
    );
    assert_no_marker(
        &out,
        &[
            "CONFTFO1",
            "LIVETFO2",
            "OTHERTFO",
            "OTHERLIVE",
            "c0f:5ec",
            "11fe:5ec",
            "bad:5ec3",
        ],
    );
    // The malformed line is reported by file and line, without its value.
    assert!(out.contains("60-secret.conf:4"), "{out}");

    // The live kernel's own TFO key (root-only) never appears either.
    let real = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_fastopen_key");
    match real {
        Ok(key) if !key.trim().is_empty() => {
            let key = key.trim().to_string();
            let live_out = all_output(&bin(&[
                "check", "--policy", policy.to_str().unwrap(), "--format", "json",
            ]));
            assert!(live_out.contains("probe.tfo-key"));
            let snap = tmp.path().join("live");
            let o = bin(&["snapshot", "--out", snap.to_str().unwrap()]);
            assert!(o.status.success(), "{}", all_output(&o));
            let capture = std::fs::read_to_string(snap.join("captures/sysctl-a.txt")).unwrap();
            let diff_out = all_output(&bin(&[
                "diff", snap.to_str().unwrap(), "live", "--files", "--policy",
                policy.to_str().unwrap(),
            ]));
            for part in key.split(',').flat_map(|k| k.split('-')) {
                assert!(!live_out.contains(part), "live TFO key printed");
                assert!(!capture.contains(part), "live TFO key in the snapshot");
                assert!(!diff_out.contains(part), "live TFO key in diff");
            }
        }
        _ => eprintln!(
            "skipped the live-kernel part: /proc/sys/net/ipv4/tcp_fastopen_key is not readable here (run as root)"
        ),
    }
}
