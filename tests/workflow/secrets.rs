//! Secrets never leave: one module decides what is secret in each format
//! (by meaning, not by substring), and no report format, diff, snapshot or
//! error message carries a secret value. Each test plants unique marker
//! values in a host and greps everything driftaudit prints or writes.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::audit;
use driftaudit::unstable::facts::Entry;
use driftaudit::unstable::secret::{self, REDACTED};
use driftaudit::unstable::value::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn bin(args: &[&str]) -> Output {
    crate::common::cli::cmd()
        .args(args)
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

/// Everything a user can get out of a snapshot: every report format, the
/// semantic diff against `other` (both ways, text and JSON) and
/// `diff --files`, and `fix` (patch, summary, JSON plan and runtime
/// script), with `policy` added to the built-ins.
fn every_output(snap: &Path, other: &Path, policy: &Path) -> String {
    let (s, o, p) = (
        snap.to_str().unwrap(),
        other.to_str().unwrap(),
        policy.to_str().unwrap(),
    );
    let mut out = String::new();
    for &format in crate::common::cli::FORMATS {
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
    // `fix`: the patch, the summary, the JSON plan and the runtime script
    for (i, snap_dir) in [s, o].iter().enumerate() {
        let script = snap.with_extension(format!("fix-steps-{i}.sh"));
        let fixed = all_output(&bin(&[
            "fix",
            "--snapshot",
            snap_dir,
            "--policy",
            p,
            "--runtime",
            script.to_str().unwrap(),
        ]));
        assert!(fixed.contains("\nproof: "), "fix did not plan: {fixed}");
        out.push_str(&fixed);
        out.push_str(&std::fs::read_to_string(&script).unwrap_or_default());
        let _ = std::fs::remove_file(&script);
        out.push_str(&all_output(&bin(&[
            "fix",
            "--snapshot",
            snap_dir,
            "--policy",
            p,
            "--format",
            "json",
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

fn facts_of(dir: &Path) -> driftaudit::unstable::facts::Facts {
    let host = audit::host(dir);
    driftaudit::unstable::engine::gather(&audit::builtin(), &host)
}

fn value_of(facts: &driftaudit::unstable::facts::Facts, ns: &str, key: &str) -> Value {
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
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
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
    audit::stamp(
        tmp.path(),
        "secret-host",
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
    audit::stamp(
        &a,
        "secret-host",
        &[
            ("/etc/sysctl.d/60-secret.conf", conf),
            ("/captures/sysctl-a.txt", live),
        ],
    );
    audit::stamp(
        &b,
        "secret-host",
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

#[test]
fn cifs_passwords_never_leave_fstab() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write_policy(tmp.path());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let fstab = "/dev/sda1 / ext4 defaults 0 1\n\
                 //nas/share /mnt/share cifs username=bob,password=CIFSPW1,,tail2,vers=3.0 0 0\n\
                 //nas/other /mnt/other cifs user=dom/bob%CIFSPW3,credentials=/root/.smbcred 0 0\n\
                 #//nas/old /mnt/old cifs pass=CIFSPW4 0 0\n";
    let mountinfo = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n\
                     30 22 0:50 / /mnt/share rw,relatime - cifs //nas/share rw,vers=3.0,username=bob,password=CIFSPW5\n";
    audit::stamp(
        &a,
        "secret-host",
        &[
            ("/etc/fstab", fstab),
            ("/proc/self/mountinfo", mountinfo),
            ("/root/.smbcred", "username=bob\npassword=CREDFILEPW\n"),
        ],
    );
    audit::stamp(
        &b,
        "secret-host",
        &[
            (
                "/etc/fstab",
                "//nas/share /mnt/share cifs password=CIFSPW6 0 0\n",
            ),
            (
                "/proc/self/mountinfo",
                "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n",
            ),
        ],
    );
    let out = every_output(&a, &b, &policy);
    assert!(out.contains("/mnt/share"), "the mounts were read");
    assert_no_marker(
        &out,
        &[
            "CIFSPW1", "tail2", "CIFSPW3", "CIFSPW4", "CIFSPW5", "CIFSPW6",
        ],
    );
    // The credentials file is named, never read into a finding or a diff
    // of settings; its path stays visible.
    assert!(!out.contains("CREDFILEPW") || out.contains("/root/.smbcred"));
    let copied = String::from_utf8(driftaudit::unstable::snapshot::redact_file(
        "/etc/fstab",
        fstab.as_bytes(),
    ))
    .unwrap();
    assert_no_marker(&copied, &["CIFSPW1", "tail2", "CIFSPW3", "CIFSPW4"]);
    assert!(copied.contains("credentials=/root/.smbcred"));
    // The redacted fstab parses to the same entries.
    let (before, _) = driftaudit::unstable::parse::fstab::parse(fstab);
    let (after, _) = driftaudit::unstable::parse::fstab::parse(&copied);
    assert_eq!(before.len(), after.len());
    for (x, y) in before.iter().zip(&after) {
        assert_eq!(
            (x.line, &x.spec, &x.file, &x.vfstype),
            (y.line, &y.spec, &y.file, &y.vfstype)
        );
    }
}

#[test]
fn option_file_secrets_not_named_password_are_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write_policy(tmp.path());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let cnf = "[client]\nuser = backup\npasswo = PREFIXPW1\n\
               [mysqld]\nwsrep_sst_auth = sst:GALERAPW2\n\
               file_key_management_filekey = FILEKEYPW3\n\
               loose-ssl-passphrase = pass:SSLPW4\n\
               innodb_force_primary_key = ON\n";
    let tsv = "wsrep_sst_auth\tsst:GALERAPW5\nreport_password\tREPORTPW6\nmax_connections\t151\n";
    audit::stamp(
        &a,
        "secret-host",
        &[
            ("/etc/mysql/my.cnf", cnf),
            ("/captures/mysql-variables.tsv", tsv),
        ],
    );
    audit::stamp(
        &b,
        "secret-host",
        &[
            (
                "/etc/mysql/my.cnf",
                "[mysqld]\nwsrep_sst_auth = sst:OTHERPW7\n",
            ),
            (
                "/captures/mysql-variables.tsv",
                "report_password\tOTHERPW8\n",
            ),
        ],
    );
    let out = every_output(&a, &b, &policy);
    assert!(out.contains("wsrep_sst_auth"), "the option files were read");
    assert_no_marker(
        &out,
        &[
            "PREFIXPW1",
            "GALERAPW2",
            "FILEKEYPW3",
            "SSLPW4",
            "GALERAPW5",
            "REPORTPW6",
            "OTHERPW7",
            "OTHERPW8",
        ],
    );
}

#[test]
fn error_messages_name_file_line_and_key_never_the_value() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = write_policy(tmp.path());
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let xml = "<localconfig>\n\
               <key name=\"ldap_url\"><value>ldap://${zimbra_ldap_password}@h</value></key>\n\
               <key name=\"zimbra_ldap_password\"><value>ab${EXPANDPW5}cd</value></key>\n\
               <key name=\"mailboxd_java_heap_size\"><value>2048</value></key>\n\
               </localconfig>\n";
    audit::stamp(
        &a,
        "secret-host",
        &[
            ("/etc/mysql/my.cnf", "[client]\npassword NOEQPW1\n"),
            (
                "/captures/mysql-variables.tsv",
                "max_connections\t151\nreport_password TSVPW3\n",
            ),
            (
                "/etc/sysctl.d/70-x.conf",
                "net.ipv6.conf.all.stable_secret STABLEPW4\n",
            ),
            ("/opt/zimbra/conf/localconfig.xml", xml),
        ],
    );
    audit::stamp(&b, "secret-host", &[("/etc/hostname", "b\n")]);
    let out = every_output(&a, &b, &policy);
    assert_no_marker(&out, &["NOEQPW1", "TSVPW3", "STABLEPW4", "EXPANDPW5"]);
    for at in ["my.cnf:2", "mysql-variables.tsv:2", "70-x.conf:1"] {
        assert!(out.contains(at), "no issue at {at}:\n{out}");
    }
    assert!(out.contains("zimbra_ldap_password"), "{out}");

    // zmlocalconfig output with a secret in another shape.
    let zm = "zimbra_mysql_password=ZMPW1\nldap_root_password: ZMPW2\nmysql_port = 7306\n";
    let (keys, issues) = driftaudit::unstable::parse::localconfig::parse_zmlocalconfig(zm);
    assert_eq!(keys.len(), 1);
    let msgs: String = issues.iter().map(|i| i.message.clone()).collect();
    assert_no_marker(&msgs, &["ZMPW1", "ZMPW2"]);
    // two lines of one kind of problem are one issue (issue 29, item 5):
    // it names the first key and both lines
    assert!(msgs.contains("zimbra_mysql_password"), "{msgs}");
    assert!(msgs.contains("the first line 1, the last line 2"), "{msgs}");
}

/// Every format's redaction is read back by the same reader: the file
/// still parses, every key keeps its line, secrets read as the placeholder.
#[test]
fn redacted_files_parse_back_with_the_same_reader() {
    use driftaudit::unstable::parse::{localconfig, mycnf, mysqlvars, sysctl};
    let red = |path: &str, text: &str| {
        String::from_utf8(secret::redact_file(path, text.as_bytes())).unwrap()
    };
    // localconfig.xml in real shapes: spaces around `=`, xml:space, CDATA,
    // a commented-out old password, a `<` in the secret.
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<localconfig>\n\
        <key name = \"zimbra_ldap_password\">\n  <value xml:space=\"preserve\">a&lt;XMLPW1\nline2</value>\n</key>\n\
        <key name='mysql_root_password'><value><![CDATA[XMLPW2]]></value></key>\n\
        <!-- <key name=\"ldap_root_password\"><value>XMLPW3</value></key> -->\n\
        <key name=\"mailboxd_java_heap_size\"><value>2048</value></key>\n\
        <key name=\"empty_password\"><value></value></key>\n</localconfig>\n";
    let r = red("/opt/zimbra/conf/localconfig.xml", xml);
    assert_no_marker(&r, &["XMLPW1", "line2", "XMLPW2", "XMLPW3"]);
    let (k0, _) = localconfig::parse_xml(xml);
    let (k1, i1) = localconfig::parse_xml(&r);
    let (k0, k1) = (
        k0.unwrap(),
        k1.expect("redacted localconfig.xml is well-formed"),
    );
    assert!(i1.is_empty(), "{i1:?}");
    assert_eq!(k0.len(), k1.len());
    for (x, y) in k0.iter().zip(&k1) {
        assert_eq!((&x.name, x.line), (&y.name, y.line));
        let want = if secret::localconfig_key_is_secret(&x.name) && !x.value.is_empty() {
            REDACTED
        } else {
            x.value.as_str()
        };
        assert_eq!(y.value, want, "{}", x.name);
    }
    assert_eq!(r.lines().count(), xml.lines().count());
    // A document that does not parse is still redacted.
    let broken = "<localconfig>\n<key name=\"zimbra_ldap_password\"><value>BROKENPW</value>\n";
    assert_no_marker(
        &red("/opt/zimbra/conf/localconfig.xml", broken),
        &["BROKENPW"],
    );

    // zmlocalconfig capture with a multi-line secret.
    let zm = "mailboxd_java_heap_size = 2048\nldap_root_password = ZMPW1\nZMPW2 continued\nmysql_port = 7306\n";
    let r = red("/captures/zmlocalconfig.txt", zm);
    assert_no_marker(&r, &["ZMPW1", "ZMPW2"]);
    let (k0, _) = localconfig::parse_zmlocalconfig(zm);
    let (k1, i1) = localconfig::parse_zmlocalconfig(&r);
    assert!(i1.is_empty(), "{i1:?}");
    assert_eq!(
        k0.iter().map(|k| (&k.name, k.line)).collect::<Vec<_>>(),
        k1.iter().map(|k| (&k.name, k.line)).collect::<Vec<_>>()
    );

    // Option files.
    let cnf = "[client]\npassword = \"CNFPW1 x\"\n# password = CNFPW2\npasswo=CNFPW3\n[mysqld]\nwsrep-sst-auth = u:CNFPW4\nmax_connections = 10\n";
    let r = red("/etc/mysql/my.cnf", cnf);
    assert_no_marker(&r, &["CNFPW1", "CNFPW2", "CNFPW3", "CNFPW4"]);
    let opts = |t: &str| {
        mycnf::parse(t)
            .directives
            .iter()
            .filter_map(|d| match d {
                mycnf::Directive::Option { name, value, line } => {
                    Some((name.clone(), value.clone(), *line))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    for ((n0, v0, l0), (n1, v1, l1)) in opts(cnf).into_iter().zip(opts(&r)) {
        assert_eq!((&n0, l0), (&n1, l1));
        if secret::option_is_secret(&n0) {
            assert_eq!(v1.as_deref(), Some(REDACTED));
        } else {
            assert_eq!(v0, v1);
        }
    }

    // sysctl.d and `sysctl -a`.
    let conf = "net.ipv4.tcp_fastopen_key = SYSPW1\n-net.ipv6.conf.*.stable_secret=SYSPW2\nvm.swappiness = 10\n";
    let r = red("/etc/sysctl.d/99.conf", conf);
    assert_no_marker(&r, &["SYSPW1", "SYSPW2"]);
    let (l0, _) = sysctl::parse_conf(conf);
    let (l1, i1) = sysctl::parse_conf(&r);
    assert!(i1.is_empty());
    assert_eq!(l0.len(), l1.len());
    let cap = "net.ipv4.tcp_fastopen_key = SYSPW3\nvm.swappiness = 10\n";
    let r = red("/captures/sysctl-a.txt", cap);
    assert_no_marker(&r, &["SYSPW3"]);
    let (v1, i1) = sysctl::parse_capture(&r);
    assert!(i1.is_empty());
    assert_eq!(v1[0].value, REDACTED);
    assert_eq!(v1[1].value, "10");

    // SHOW GLOBAL VARIABLES in TSV, table and vertical shapes.
    for (shape, text) in [
        ("tsv", "report_password\tVARPW1\nmax_connections\t151\n"),
        (
            "table",
            "+-----------------+--------+\n| Variable_name   | Value  |\n+-----------------+--------+\n| report_password | VARPW1 |\n| max_connections | 151    |\n+-----------------+--------+\n",
        ),
        (
            "vertical",
            "*************************** 1. row ***************************\nVariable_name: report_password\n        Value: VARPW1\n*************************** 2. row ***************************\nVariable_name: max_connections\n        Value: 151\n",
        ),
    ] {
        let r = red("/captures/mysql-variables.tsv", text);
        assert_no_marker(&r, &["VARPW1"]);
        let p = mysqlvars::parse(&r);
        assert_eq!(p.issues, mysqlvars::parse(text).issues, "{shape}");
        let got: Vec<(&str, &str)> = p
            .vars
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [("report_password", REDACTED), ("max_connections", "151")],
            "{shape}"
        );
    }
}

/// `diff --files` reads one file of each side at a time and bounds what one
/// file prints: 12 sparse 16 MiB files per side (over 400 MiB held at once
/// before; the per-host read budget stops at 256 MiB) run under a 320 MiB
/// address-space limit, and a one-byte change in a 16 MiB text file prints
/// a bounded summary, not 32 MB.
#[test]
fn diff_files_holds_one_file_at_a_time_and_bounds_its_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for d in [&a, &b] {
        audit::stamp(d, "secret-host", &[("/etc/hostname", "h\n")]);
        std::fs::create_dir_all(d.join("var/big")).unwrap();
        for i in 0..12 {
            let f = std::fs::File::create(d.join(format!("var/big/f{i}"))).unwrap();
            f.set_len(16 * 1024 * 1024 - 1).unwrap();
        }
    }
    std::fs::write(b.join("var/big/f7"), vec![1u8; 4096]).unwrap();
    let line = "x".repeat(16 * 1024 * 1024 - 2);
    std::fs::write(a.join("etc/long.conf"), format!("{line}\n")).unwrap();
    std::fs::write(b.join("etc/long.conf"), format!("{line}y")).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v {}; exec \"$0\" diff \"$1\" \"$2\" --files",
            320 * 1024
        ))
        .arg(env!("CARGO_BIN_EXE_driftaudit"))
        .arg(&a)
        .arg(&b)
        .current_dir(ROOT)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("/var/big/f7") && text.contains("/etc/long.conf"),
        "{}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.len() < 64 * 1024,
        "diff --files printed {} bytes",
        out.stdout.len()
    );
    assert!(text.contains("too large to show"), "{text}");

    // A small text change is still shown line by line, lines cut.
    let x = format!("a\n{}\nc\n", "b".repeat(5000));
    let y = format!("a\n{}\nC\n", "b".repeat(5000));
    let (ha, hb) = (tmp.path().join("s1"), tmp.path().join("s2"));
    audit::stamp(&ha, "secret-host", &[("/etc/my.conf", &x)]);
    audit::stamp(&hb, "secret-host", &[("/etc/my.conf", &y)]);
    let d =
        driftaudit::unstable::diff::diff_hosts_files(&audit::host(&ha), &audit::host(&hb)).changes;
    assert_eq!(d.len(), 1);
    assert!(d[0].unified.contains("-c\n+C\n"), "{}", d[0].unified);
    assert!(d[0].unified.len() < 2000, "{}", d[0].unified.len());
}

fn localconfig_xml(api_key: &str, trust: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<localconfig>
  <key name="zimbra_server_hostname">
    <value>mail.example.org</value>
  </key>
  <key name="zimbra_api_key">
    <value>{api_key}</value>
  </key>
  <key name="mailboxd_java_options">
    <value>-server -Xmx2g -Djavax.net.ssl.trustStorePassword={trust} -Dhttps.protocols=TLSv1.2</value>
  </key>
</localconfig>
"#
    )
}

/// Issue 29, item 7: `diff --files` and `baseline` printed `zimbra_api_key`
/// and a `-Djavax.net.ssl.trustStorePassword=` inside
/// `mailboxd_java_options`. Secrets are found by meaning in every key (a
/// `*_key`) and inside option strings, and the rest of such a string stays
/// checkable.
#[test]
fn localconfig_api_keys_and_java_option_passwords_never_leave() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    let a_xml = localconfig_xml("APIKEY-CANARY-A", "TRUST-CANARY-A");
    let b_xml = localconfig_xml("APIKEY-CANARY-B", "TRUST-CANARY-B")
        .replace("mail.example.org", "mail2.example.org");
    audit::stamp(
        &a,
        "secret-host",
        &[("/opt/zimbra/conf/localconfig.xml", &a_xml)],
    );
    audit::stamp(
        &b,
        "secret-host",
        &[("/opt/zimbra/conf/localconfig.xml", &b_xml)],
    );
    let markers = [
        "APIKEY-CANARY-A",
        "APIKEY-CANARY-B",
        "TRUST-CANARY-A",
        "TRUST-CANARY-B",
    ];
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let mut out = String::new();
    for (x, y) in [(sa, sb), (sb, sa)] {
        for format in ["text", "json"] {
            out.push_str(&all_output(&bin(&[
                "diff", x, y, "--files", "--format", format,
            ])));
            out.push_str(&all_output(&bin(&["diff", x, y, "--format", format])));
        }
    }
    let baseline = bin(&["baseline", "--snapshot", sa, "--namespace", "localconfig"]);
    out.push_str(&all_output(&baseline));
    assert_no_marker(&out, &markers);
    // the files did differ, and diff said so
    assert!(out.contains("localconfig.xml"), "{out}");
    // the rest of the option string is kept and checkable
    let facts = facts_of(&a);
    match value_of(&facts, "localconfig", "mailboxd_java_options") {
        Value::Str(s) => {
            assert!(s.contains("-Xmx2g"), "{s}");
            assert!(s.contains("-Dhttps.protocols=TLSv1.2"), "{s}");
            assert!(s.contains(&format!("trustStorePassword={REDACTED}")), "{s}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        value_of(&facts, "localconfig", "zimbra_api_key"),
        Value::Str(REDACTED.into())
    );
    assert!(secret::localconfig_key_is_secret("zimbra_api_key"));
    assert!(!secret::localconfig_key_is_secret("mailboxd_keystore"));
}
