//! `driftaudit baseline`: a policy pinning a golden host's effective values.
//! The issue's Done-when: baseline a shipped host, edit three settings of
//! three namespaces in a copy (a sysctl.d value, a my.cnf option, an fstab
//! option), and `check` of the copy reports exactly those three, with both
//! values and the file:line that set the new one, while the golden host
//! checks clean and `check --fleet` lists them per host. Also: no secret
//! value in the output, values that YAML or the engine could misread
//! (`yes`, `0x10`, `1e3`, `: x`, a TAB in a port range) read back equal,
//! `present: true` beside `equals` fails a missing setting, `-o` replaces
//! its file atomically, and docs/policy-language.md's baseline example runs
//! as shown (`DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test workflow
//! baseline::` rewrites its output).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{json, run, run_in};
use crate::common::tree::copy_host;

const HOSTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts");
const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policy-language.md");

/// `baseline --snapshot GOLDEN ARGS`.
fn baseline(golden: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["baseline", "--snapshot", golden.to_str().unwrap()];
    all.extend(args);
    run(&all)
}

/// `check --snapshot HOST --no-builtin --policy POLICY --format json`: the
/// host judged by the baseline alone.
fn check_json(host: &Path, policy: &str) -> (i32, String, String) {
    run(&[
        "check",
        "--snapshot",
        host.to_str().unwrap(),
        "--no-builtin",
        "--policy",
        policy,
        "--format",
        "json",
    ])
}

/// A workspace holding two copies of the shipped host `name`: the golden
/// one at `golden` and the one to modify at `copy` (paths in the workspace).
fn golden_and_copy(name: &str, golden: &str, copy: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let ws = tempfile::tempdir().unwrap();
    let (g, c) = (ws.path().join(golden), ws.path().join(copy));
    copy_host(name, &g);
    copy_host(name, &c);
    (ws, g, c)
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from} in {}",
        path.display()
    );
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// (rule, subject, finding) of every failure or error, and of every finding
/// of a baseline rule that is not a pass (the host's own input problems,
/// such as the sosreport's unknown `[mariadb-5.5]` group, are unknown on the
/// golden host and its copy alike).
fn not_passing(report: &serde_json::Value) -> Vec<(String, String, serde_json::Value)> {
    report["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["findings"].as_array().unwrap().iter())
        .filter(|f| {
            let status = f["status"].as_str().unwrap();
            // a closed world with nothing added is one `skip` ("nothing to judge")
            matches!(status, "fail" | "error")
                || (f["rule"].as_str().unwrap().starts_with("baseline-")
                    && !matches!(status, "pass" | "skip"))
        })
        .map(|f| {
            let subject: Vec<&str> = f["subject"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|s| s.as_str())
                .collect();
            (
                f["rule"].as_str().unwrap().to_string(),
                subject.join(", "),
                f.clone(),
            )
        })
        .collect()
}

#[test]
fn baseline_then_check_of_a_modified_copy_reports_exactly_the_modified_settings() {
    let (ws, golden, edited) = golden_and_copy("sos-centos7-mariadb", "fleet/db01", "fleet/db02");
    let policy = ws.path().join("golden.yaml");
    let (code, out, err) = baseline(&golden, &["-o", policy.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "-o writes the file, not stdout: {out}");
    assert!(err.contains("value(s) pinned in 3 namespace(s)"), "{err}");
    let yaml = std::fs::read_to_string(&policy).unwrap();
    for want in [
        "policy: \"baseline-db01-example-com\"",
        "db01.example.com",
        "{key: \"net.core.somaxconn\", value: \"1024\"}",
        "{key: \"max_connections\", value: \"300\"}",
        "{key: \"innodb_buffer_pool_size\", value: \"1G\"}",
        "{key: \"/var/lib/mysql\", value: \"rw,suid,dev,exec,auto,nouser,async\"}",
    ] {
        assert!(yaml.contains(want), "{want}:\n{yaml}");
    }

    // three settings of three namespaces, each in the file an admin edits
    edit(
        &edited.join("etc/sysctl.conf"),
        "net.core.somaxconn = 1024",
        "net.core.somaxconn = 4096",
    );
    edit(
        &edited.join("etc/my.cnf"),
        "max_connections=300",
        "max_connections=500",
    );
    edit(
        &edited.join("etc/fstab"),
        "/var/lib/mysql     ext4    defaults        1 2",
        "/var/lib/mysql     ext4    defaults,noatime 1 2",
    );
    let p = policy.to_str().unwrap();

    // the golden host checks clean against its own baseline
    let (code, out, err) = check_json(&golden, p);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(not_passing(&json(&out)).len(), 0, "{out}");

    let (code, out, err) = check_json(&edited, p);
    assert_eq!(code, 1, "{err}");
    let report = json(&out);
    let bad = not_passing(&report);
    let keys: Vec<(&str, &str, &str)> = bad
        .iter()
        .map(|(r, s, f)| (r.as_str(), s.as_str(), f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("baseline-db01-example-com.fstab", "/var/lib/mysql", "fail"),
            (
                "baseline-db01-example-com.mycnf-effective",
                "max_connections",
                "fail"
            ),
            (
                "baseline-db01-example-com.sysctl-boot",
                "net.core.somaxconn",
                "fail"
            ),
        ],
        "exactly the three edits fail, nothing else: {out}"
    );
    let (_, _, sysctl) = &bad[2];
    assert_eq!(sysctl["expected"], "= 1024");
    assert_eq!(sysctl["actual"], "4096");
    // the sosreport's sysctl.d/99-sysctl.conf links to the file edited
    assert_eq!(
        common::cli::evidence(sysctl)[0],
        "/etc/sysctl.conf:14",
        "{sysctl}"
    );
    let why = sysctl["explanation"].as_str().unwrap();
    assert!(
        why.contains("net.core.somaxconn is 4096 here (/etc/sysctl.conf:14")
            && why.contains("the golden host db01.example.com")
            && why.contains("has 1024"),
        "{why}"
    );
    let (_, _, mycnf) = &bad[1];
    assert_eq!(mycnf["expected"], "= 300");
    assert_eq!(mycnf["actual"], "500");
    assert_eq!(common::cli::evidence(mycnf)[0], "/etc/my.cnf:12");
    let (_, _, fstab) = &bad[0];
    assert_eq!(common::cli::evidence(fstab)[0], "/etc/fstab:12");
    let why = fstab["explanation"].as_str().unwrap();
    assert!(
        why.contains(
            "/var/lib/mysql has the options rw,suid,dev,exec,auto,nouser,async,noatime here"
        ) && why.contains("has rw,suid,dev,exec,auto,nouser,async."),
        "{why}"
    );

    // `list --policy` loads it: one rule per namespace
    let (code, out, err) = run(&["list", "--no-builtin", "--policy", p]);
    assert_eq!(code, 0, "{err}");
    for id in ["sysctl-boot", "mycnf-effective", "fstab"] {
        says(&out, &format!("baseline-db01-example-com.{id}"));
    }

    // the fleet: per host, every setting that differs
    let (code, out, err) = run(&[
        "check",
        "--fleet",
        ws.path().join("fleet").to_str().unwrap(),
        "--no-builtin",
        "--policy",
        p,
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}");
    let report = json(&out);
    let hosts = report["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2, "{out}");
    for h in hosts {
        let single = serde_json::json!({ "hosts": [h] });
        let n = not_passing(&single).len();
        match h["path"].as_str() {
            Some("db01") => assert_eq!(n, 0, "{h}"),
            Some("db02") => assert_eq!(n, 3, "{h}"),
            other => panic!("unexpected host path {other:?}"),
        }
    }
}

#[test]
fn no_secret_value_appears_in_a_baseline() {
    // The Khimki localconfig holds FAKE-SECRET-DO-NOT-PRINT-N passwords; an
    // inline host adds a my.cnf password and a CIFS password in fstab.
    let ws = tempfile::tempdir().unwrap();
    let host = ws.path().join("h");
    copy_host("zimbra-khimki-asfound", &host);
    std::fs::write(
        host.join("etc/my.cnf"),
        "[mysqld]\nmax_connections = 100\npassword = FAKE-SECRET-MYCNF\nwsrep_sst_auth = sst:FAKE-SECRET-SST\n",
    )
    .unwrap();
    let mut fstab = std::fs::read_to_string(host.join("etc/fstab")).unwrap();
    fstab.push_str("//fs/share /mnt/share cifs username=svc,password=FAKE-SECRET-CIFS,ro 0 0\n");
    std::fs::write(host.join("etc/fstab"), fstab).unwrap();
    for extra in [&[][..], &["--no-default-ignore"][..]] {
        let mut args = vec!["baseline", "--snapshot", host.to_str().unwrap()];
        for ns in [
            "localconfig",
            "mycnf_effective",
            "mycnf",
            "fstab",
            "sysctl_boot",
        ] {
            args.extend(["--namespace", ns]);
        }
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        crate::common::cli::lacks(&out, "FAKE-SECRET");
        crate::common::cli::lacks(&err, "FAKE-SECRET");
        assert!(
            !out.contains("<redacted>"),
            "a redacted value is not pinned: {out}"
        );
        // the keys are named as left out, their values never
        says(&out, "# Left out: localconfig.ldap_root_password: secret");
        says(&out, "# Left out: mycnf_effective.password: secret");
        says(
            &out,
            "# Left out: fstab./mnt/share: an option carries a secret",
        );
        says(&out, "{key: \"max_connections\", value: \"100\"}");
    }
}

#[test]
fn values_yaml_or_the_engine_could_misread_round_trip() {
    let ws = tempfile::tempdir().unwrap();
    let host = ws.path().join("h");
    let files: &[(&str, &str)] = &[
        (
            "etc/sysctl.d/60-net.conf",
            "net.ipv4.ip_local_port_range = 32768\t60999\nvm.swappiness = 10\n",
        ),
        (
            "opt/zimbra/conf/localconfig.xml",
            "<?xml version=\"1.0\"?>\n<localconfig>\n\
             <key name=\"site_yes\"><value>yes</value></key>\n\
             <key name=\"site_hex\"><value>0x10</value></key>\n\
             <key name=\"site_exp\"><value>1e3</value></key>\n\
             <key name=\"site_colon\"><value>: x</value></key>\n\
             <key name=\"site_hash\"><value># not a comment</value></key>\n\
             <key name=\"site_quote\"><value>say \"hi\"</value></key>\n\
             <key name=\"site_range\"><value>1-2</value></key>\n\
             <key name=\"site_percent\"><value>15%</value></key>\n\
             </localconfig>\n",
        ),
    ];
    for (p, t) in files {
        let p = host.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    }
    let (code, yaml, err) = baseline(
        &host,
        &[
            "--namespace",
            "sysctl_boot",
            "--namespace",
            "localconfig",
            "--keys",
            "site_*",
            "--keys",
            "sysctl_boot.*",
        ],
    );
    assert_eq!(code, 0, "{err}");
    for want in [
        "{key: \"net.ipv4.ip_local_port_range\", value: \"32768\\t60999\"}",
        "{key: \"site_yes\", value: \"yes\"}",
        "{key: \"site_hex\", value: \"0x10\"}",
        "{key: \"site_exp\", value: \"1e3\"}",
        "{key: \"site_colon\", value: \": x\"}",
        "{key: \"site_hash\", value: \"# not a comment\"}",
        "{key: \"site_quote\", value: \"say \\\"hi\\\"\"}",
        "{key: \"site_range\", value: \"1-2\"}",
        "{key: \"site_percent\", value: \"15%\"}",
    ] {
        assert!(yaml.contains(want), "{want}:\n{yaml}");
    }
    assert!(!yaml.contains("does not read back equal"), "{yaml}");
    let policy = ws.path().join("golden.yaml");
    std::fs::write(&policy, &yaml).unwrap();
    let (code, out, err) = check_json(&host, policy.to_str().unwrap());
    assert_eq!(code, 0, "{out}{err}");
    let report = json(&out);
    let passes = report["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "pass")
        .count();
    assert_eq!(passes, 10, "every pin passes on its own host: {out}");
    // and a different value is a difference, not an equal spelling
    edit(&host.join("opt/zimbra/conf/localconfig.xml"), "0x10", "16");
    let (code, out, _) = check_json(&host, policy.to_str().unwrap());
    assert_eq!(code, 1, "{out}");
    let bad = not_passing(&json(&out));
    assert_eq!(bad.len(), 1, "{out}");
    assert_eq!(bad[0].1, "site_hex");
}

#[test]
fn present_beside_equals_fails_a_missing_setting_instead_of_skipping() {
    let ws = tempfile::tempdir().unwrap();
    crate::common::tree::file(ws.path(), "p.yaml", "policy: site\ntitle: Site\nrules:\n  - id: site.swappiness\n    title: Swappiness pinned\n    severity: low\n    setting: sysctl_boot.vm.swappiness\n    expect: { equals: 10, present: true }\n    why: \"{setting} is {actual}, wanted {expected}\"\n    fix: set it\n    references: []\n");
    let status = |conf: Option<&str>| {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("etc/sysctl.d")).unwrap();
        if let Some(c) = conf {
            std::fs::write(host.path().join("etc/sysctl.d/60-vm.conf"), c).unwrap();
        }
        let (_, out, err) = run_in(
            ws.path(),
            &[
                "check",
                "--snapshot",
                host.path().to_str().unwrap(),
                "--no-builtin",
                "--policy",
                "p.yaml",
                "--format",
                "json",
            ],
        );
        let r = json(&out);
        let f = r["hosts"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == "site.swappiness")
            .unwrap_or_else(|| panic!("{out}{err}"))
            .clone();
        (
            f["status"].as_str().unwrap().to_string(),
            f["actual"].as_str().unwrap_or_default().to_string(),
            f["explanation"].as_str().unwrap_or_default().to_string(),
        )
    };
    assert_eq!(status(Some("vm.swappiness = 10\n")).0, "pass");
    assert_eq!(status(Some("vm.swappiness = 60\n")).0, "fail");
    let (s, actual, why) = status(None);
    assert_eq!((s.as_str(), actual.as_str()), ("fail", "absent"));
    assert_eq!(why, "vm.swappiness is not set, wanted = 10");
}

#[test]
fn output_file_is_replaced_atomically_and_a_link_there_is_not_followed() {
    let (ws, victim) = crate::common::tree::temp_file("victim.txt", "keep me\n");
    let out = ws.path().join("golden.yaml");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let snap = format!("{HOSTS}/nat-story");
    let (code, _, err) = run(&["baseline", "--snapshot", &snap, "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert!(!std::fs::symlink_metadata(&out)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("policy: \"baseline-web-backend-02\""));
    let leftovers: Vec<PathBuf> = std::fs::read_dir(ws.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".driftaudit")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let (code, _, err) = run(&["baseline", "--snapshot", &snap, "--namespace", "ext4"]);
    assert_eq!(code, 2);
    crate::common::cli::starts(
        &err,
        "driftaudit: `--namespace ext4`: a baseline pins `sysctl_boot`",
    );
    let (code, _, err) = run(&["baseline", "--snapshot", &snap, "--keys", "[net"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("driftaudit: `--keys [net`: "), "{err}");
}

/// The fenced block after `<!-- NAME -->` up to `<!-- end NAME -->`, without
/// its fence line.
fn block(doc: &str, name: &str) -> (usize, usize, String) {
    let open = format!("<!-- {name} -->\n");
    let start = doc
        .find(&open)
        .unwrap_or_else(|| panic!("docs lack `{open}`"))
        + open.len();
    let end = start + doc[start..].find(&format!("<!-- end {name} -->")).unwrap();
    let body = &doc[start..end];
    let code = body
        .split_once('\n')
        .map(|(_, rest)| rest.trim_end().strip_suffix("```").unwrap().to_string())
        .unwrap();
    (start, end, code)
}

#[test]
fn the_baseline_example_in_the_docs_runs_as_shown() {
    let doc = std::fs::read_to_string(DOC).unwrap();
    let (_, _, cmds) = block(&doc, "baseline-example");
    let cmds: Vec<&str> = cmds
        .lines()
        .filter(|l| l.starts_with("driftaudit "))
        .collect();
    assert_eq!(cmds.len(), 2, "{cmds:?}");
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        crate::common::cli::repo_root().join("testdata"),
        ws.path().join("testdata"),
    )
    .unwrap();
    let argv = |c: &str| -> Vec<String> {
        // the example's only quoting is '...' around globs
        c.split_whitespace()
            .skip(1)
            .map(|w| w.trim_matches('\'').to_string())
            .collect()
    };
    let a1 = argv(cmds[0]);
    let (pos, file) = a1
        .iter()
        .enumerate()
        .find(|(_, w)| w.ends_with(".yaml"))
        .map(|(i, w)| (i, w.clone()))
        .unwrap();
    assert_eq!(a1[pos - 1], "-o");
    let (code, _, err) = run_in(
        ws.path(),
        &a1.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(code, 0, "{err}");
    let yaml = std::fs::read_to_string(ws.path().join(&file)).unwrap();
    let a2 = argv(cmds[1]);
    let (code, report, err) = run_in(
        ws.path(),
        &a2.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(
        code, 1,
        "the example host differs from the golden one: {report}{err}"
    );

    let mut want = doc.clone();
    for (name, text, lang) in [
        ("baseline-policy", &yaml, "yaml"),
        ("baseline-check", &report, "text"),
    ] {
        let (start, end, _) = block(&want, name);
        want.replace_range(start..end, &format!("```{lang}\n{text}```\n"));
    }
    if want != doc {
        if std::env::var_os("DRIFTAUDIT_UPDATE_DOCS").is_some() {
            std::fs::write(DOC, &want).unwrap();
            return;
        }
        panic!("docs/policy-language.md's baseline example is stale: run `DRIFTAUDIT_UPDATE_DOCS=1 cargo test --test workflow baseline::`");
    }
}

fn tool_accepts(dir: &Path, args: &[&str], patch: &Path) -> (bool, String) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .current_dir(dir)
        .stdin(std::fs::File::open(patch).unwrap())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn fix_makes_a_modified_copy_like_the_golden_host_per_item() {
    // `setting: "sysctl_boot.${pin.key}"` with `equals: "${pin.value}"`:
    // the remedy is derived per item, with the item's key and value
    let (ws, golden, copy) = golden_and_copy("sos-centos7-mariadb", "golden", "copy");
    let policy = ws.path().join("golden.yaml");
    let p = policy.to_str().unwrap();
    let (code, _, err) = baseline(&golden, &["-o", p]);
    assert_eq!(code, 0, "{err}");
    edit(
        &copy.join("etc/sysctl.conf"),
        "net.core.somaxconn = 1024",
        "net.core.somaxconn = 4096",
    );
    edit(
        &copy.join("etc/my.cnf"),
        "max_connections=300",
        "max_connections=500",
    );
    let c = copy.to_str().unwrap();
    let (code, _, _) = run(&["check", "--snapshot", c, "--no-builtin", "--policy", p]);
    assert_eq!(code, 1, "the copy differs from the golden host");

    let (code, patch, err) = run(&["fix", "--snapshot", c, "--no-builtin", "--policy", p]);
    assert_eq!(code, 0, "{err}\n{patch}");
    for want in [
        "fixes baseline-db01-example-com.sysctl-boot net.core.somaxconn: net.core.somaxconn = 4096",
        "-> net.core.somaxconn = 1024",
        "fixes baseline-db01-example-com.mycnf-effective max_connections: max_connections = 500",
        "-> max_connections = 300",
        "proof: re-audit of the patched copy passes every targeted finding, no new failure",
    ] {
        assert!(err.contains(want), "{want}:\n{err}");
    }
    assert!(!err.contains("cannot fix"), "{err}");
    for want in [
        "--- a/etc/sysctl.conf",
        "-net.core.somaxconn = 4096\n+net.core.somaxconn = 1024\n",
        "--- a/etc/my.cnf",
        "-max_connections=500\n+max_connections=300\n",
    ] {
        assert!(patch.contains(want), "{want}:\n{patch}");
    }
    let file = ws.path().join("fix.patch");
    std::fs::write(&file, &patch).unwrap();
    if common::tool("git", "git").is_some() {
        let (ok, out) = tool_accepts(&copy, &["git", "apply", "--check", "-p1"], &file);
        assert!(ok, "git apply --check: {out}\n{patch}");
    }
    if common::tool("patch", "patch").is_some() {
        let (ok, out) = tool_accepts(&copy, &["patch", "-p1", "--dry-run"], &file);
        assert!(ok, "patch --dry-run: {out}\n{patch}");
        let (ok, out) = tool_accepts(&copy, &["patch", "-p1"], &file);
        assert!(ok, "patch: {out}");
        let (code, out, err) = run(&["check", "--snapshot", c, "--no-builtin", "--policy", p]);
        assert_eq!(
            code, 0,
            "the patched copy is like the golden host:\n{out}{err}"
        );
    }
}

#[test]
fn fix_never_writes_a_secret_a_baseline_pins_per_item() {
    // `baseline` never pins a secret; a hand-edited one is refused by `fix`
    // (src/fix/diff.rs, src/secret/), its value printed nowhere
    let ws = tempfile::tempdir().unwrap();
    let host = ws.path().join("h");
    copy_host("sos-centos7-mariadb", &host);
    let mut cnf = std::fs::read_to_string(host.join("etc/my.cnf")).unwrap();
    cnf = cnf.replacen(
        "[mysqld]\n",
        "[mysqld]\nwsrep_sst_auth = sst:FAKE-SECRET-COPY\n",
        1,
    );
    std::fs::write(host.join("etc/my.cnf"), cnf).unwrap();
    let policy = ws.path().join("golden.yaml");
    std::fs::write(
        &policy,
        r#"policy: golden
title: a hand-written pin of a secret
params:
  mycnf_effective:
    - {key: "max_connections", value: "999"}
    - {key: "wsrep_sst_auth", value: "sst:FAKE-SECRET-GOLDEN"}
rules:
  - id: golden.mycnf
    title: options match the golden host
    severity: medium
    for_each: { param: mycnf_effective, as: pin }
    setting: "mycnf_effective.${pin.key}"
    expect: { equals: "${pin.value}", present: true }
    why: "{setting} differs from the golden host."
    fix: "Set {setting} to the golden host's value."
    references: []
"#,
    )
    .unwrap();
    let (code, patch, err) = run(&[
        "fix",
        "--snapshot",
        host.to_str().unwrap(),
        "--no-builtin",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        !patch.contains("FAKE-SECRET") && !err.contains("FAKE-SECRET"),
        "{patch}{err}"
    );
    says(
        &err,
        "cannot fix golden.mycnf wsrep_sst_auth: `wsrep_sst_auth` holds a secret",
    );
    assert!(patch.contains("+max_connections=999"), "{patch}");
    assert!(err.contains("fixes golden.mycnf max_connections"), "{err}");
}

#[test]
fn fix_sets_a_zimbra_localconfig_key_back_to_the_golden_value_with_zmlocalconfig() {
    let (ws, golden, copy) = golden_and_copy("zimbra-khimki-fixed", "golden", "copy");
    let policy = ws.path().join("golden.yaml");
    let p = policy.to_str().unwrap();
    let (code, _, err) = baseline(&golden, &["--namespace", "localconfig", "-o", p]);
    assert_eq!(code, 0, "{err}");
    edit(
        &copy.join("opt/zimbra/conf/localconfig.xml"),
        "<value>7168</value>",
        "<value>6144</value>",
    );
    let script = ws.path().join("steps.sh");
    let (code, patch, err) = run(&[
        "fix",
        "--snapshot",
        copy.to_str().unwrap(),
        "--no-builtin",
        "--policy",
        p,
        "--runtime",
        script.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(patch.is_empty(), "localconfig is never patched: {patch}");
    let steps = std::fs::read_to_string(&script).unwrap();
    says(
        &steps,
        "su - zimbra -c 'zmlocalconfig -e mailboxd_java_heap_size=7168'",
    );
    says(
        &err,
        "mailboxd_java_heap_size = 6144 -> mailboxd_java_heap_size = 7168",
    );
}

/// Issue 30: a pinned size was written in bytes (`10737418240`) where the
/// golden file said `10G`; it keeps the golden spelling and is compared by
/// meaning, so `10240M` passes and `11G` fails.
#[test]
fn a_pinned_size_keeps_the_golden_spelling_and_compares_by_meaning() {
    let ws = tempfile::tempdir().unwrap();
    let golden = ws.path().join("golden");
    copy_host("mysql-includedir-override", &golden);
    let policy = ws.path().join("golden.yaml");
    let (code, _, err) = baseline(
        &golden,
        &[
            "--namespace",
            "mycnf_effective",
            "--keys",
            "innodb_buffer_pool_size",
            "-o",
            policy.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let yaml = std::fs::read_to_string(&policy).unwrap();
    assert!(
        yaml.contains("{key: \"innodb_buffer_pool_size\", value: \"10G\"}"),
        "the golden host's spelling: {yaml}"
    );
    let file = "etc/mysql/mariadb.conf.d/99-override.cnf";
    for (spelling, want) in [("10G", 0), ("10240M", 0), ("10485760K", 0), ("11G", 1)] {
        let host = ws.path().join(format!("h-{spelling}"));
        copy_host("mysql-includedir-override", &host);
        if spelling != "10G" {
            edit(
                &host.join(file),
                "innodb_buffer_pool_size = 10G",
                &format!("innodb_buffer_pool_size = {spelling}"),
            );
        }
        let (code, out, err) = check_json(&host, policy.to_str().unwrap());
        let bad = not_passing(&json(&out));
        let failing: Vec<&str> = bad
            .iter()
            .filter(|(r, _, _)| r.starts_with("baseline-"))
            .map(|(_, s, _)| s.as_str())
            .collect();
        if want == 0 {
            assert!(failing.is_empty(), "{spelling} means 10G: {out}{err}");
        } else {
            assert_eq!(code, 1, "{out}{err}");
            assert_eq!(failing, ["innodb_buffer_pool_size"], "{spelling}: {out}");
        }
    }
}

/// Issue 30: a copy of the golden host with `max_connections = 500`, a
/// buffer pool and `net.ipv4.tcp_keepalive_time = 600` ADDED (none of them
/// set on the golden host) checked "0 failed": a baseline pinned what the
/// golden host sets and ignored what the checked host adds. Each added
/// setting is one failure naming the key, its value and its file:line.
#[test]
fn a_host_with_an_added_setting_fails_the_closed_baseline() {
    let (ws, golden, added) = golden_and_copy("sos-centos7-mariadb", "golden", "added");
    // the golden host sets none of them
    edit(&golden.join("etc/my.cnf"), "max_connections=300\n", "");
    edit(
        &golden.join("etc/my.cnf"),
        "innodb_buffer_pool_size=1G\n",
        "",
    );
    edit(
        &added.join("etc/my.cnf"),
        "innodb_buffer_pool_size=1G\n",
        "",
    );
    edit(
        &added.join("etc/my.cnf"),
        "max_connections=300\n",
        "max_connections=500\ninnodb_buffer_pool_size=2G\n",
    );
    let sysctl = std::fs::read_to_string(added.join("etc/sysctl.conf")).unwrap();
    assert!(!sysctl.contains("tcp_keepalive_time"), "{sysctl}");
    let n = sysctl.lines().count();
    std::fs::write(
        added.join("etc/sysctl.conf"),
        format!("{sysctl}net.ipv4.tcp_keepalive_time = 600\n"),
    )
    .unwrap();
    let fstab = std::fs::read_to_string(added.join("etc/fstab")).unwrap();
    std::fs::write(
        added.join("etc/fstab"),
        format!("{fstab}/dev/sdb1 /data ext4 defaults,noatime 0 2\n"),
    )
    .unwrap();
    let policy = ws.path().join("golden.yaml");
    let (code, _, err) = baseline(&golden, &["-o", policy.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let p = policy.to_str().unwrap();
    let check = |host: &Path| check_json(host, p);
    let (code, out, err) = check(&golden);
    assert_eq!(code, 0, "the golden host checks clean: {out}{err}");
    let (code, out, err) = check(&added);
    assert_eq!(code, 1, "added settings fail: {out}{err}");
    let bad = not_passing(&json(&out));
    let got: Vec<(&str, &str)> = bad
        .iter()
        .map(|(r, s, _)| (r.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("baseline-db01-example-com.fstab-added", "/data"),
            (
                "baseline-db01-example-com.mycnf-effective-added",
                "innodb_buffer_pool_size"
            ),
            (
                "baseline-db01-example-com.mycnf-effective-added",
                "max_connections"
            ),
            (
                "baseline-db01-example-com.sysctl-boot-added",
                "net.ipv4.tcp_keepalive_time"
            ),
        ],
        "{out}"
    );
    let (_, _, data) = &bad[0];
    let why = data["explanation"].as_str().unwrap();
    assert!(
        why.contains("/data is mounted here with the options")
            && why.contains("noatime")
            && why.contains("not on the golden host"),
        "{why}"
    );
    assert_eq!(
        common::cli::evidence(data)[0],
        format!("/etc/fstab:{}", fstab.lines().count() + 1),
        "{data}"
    );
    let (_, _, tw) = &bad[3];
    assert_eq!(tw["actual"], "600", "{tw}");
    assert_eq!(
        common::cli::evidence(tw)[0],
        format!("/etc/sysctl.conf:{}", n + 1),
        "{tw}"
    );
    let why = tw["explanation"].as_str().unwrap();
    says(why, "net.ipv4.tcp_keepalive_time is 600 here");
    says(why, "not on the golden host");
    let (_, _, mc) = &bad[2];
    assert_eq!(mc["actual"], "500", "{mc}");
    let line = std::fs::read_to_string(added.join("etc/my.cnf"))
        .unwrap()
        .lines()
        .position(|l| l == "max_connections=500")
        .unwrap();
    assert_eq!(
        common::cli::evidence(mc)[0],
        format!("/etc/my.cnf:{}", line + 1),
        "{mc}"
    );

    // `--open NS` leaves a namespace out of the closed world
    let (code, _, err) = baseline(
        &golden,
        &["--open", "mycnf_effective", "--open", "fstab", "-o", p],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = check(&added);
    assert_eq!(code, 1, "{out}");
    let bad = not_passing(&json(&out));
    let got: Vec<&str> = bad.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(got, ["net.ipv4.tcp_keepalive_time"], "{out}");
}

/// What a checked host legitimately has that the golden host lacks is not
/// "added": keys the baseline left out on purpose (`--ignore`, the default
/// volatile list, secrets) and per-interface keys of interfaces the golden
/// host has no key of; `all`/`default` and the golden host's own
/// interfaces stay judged.
#[test]
fn keys_a_baseline_leaves_out_on_purpose_are_not_added_settings() {
    let ws = tempfile::tempdir().unwrap();
    let golden = ws.path().join("golden");
    let checked = ws.path().join("checked");
    let write = |host: &Path, text: &str| {
        let p = host.join("etc/sysctl.d/60-site.conf");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        &golden,
        "vm.swappiness = 10\nnet.ipv4.conf.eth0.rp_filter = 1\nnet.core.rmem_max = 1\n",
    );
    write(
        &checked,
        "vm.swappiness = 10\nnet.ipv4.conf.eth0.rp_filter = 1\nnet.core.rmem_max = 1\n\
         kernel.hostname = other\nnet.ipv4.conf.ens3.rp_filter = 1\nnet.core.wmem_max = 5\n\
         net.ipv4.conf.all.rp_filter = 2\nnet.ipv4.conf.eth0.log_martians = 1\n",
    );
    let policy = ws.path().join("golden.yaml");
    let (code, yaml, err) = baseline(
        &golden,
        &["--namespace", "sysctl_boot", "--ignore", "net.core.wmem_*"],
    );
    assert_eq!(code, 0, "{err}");
    std::fs::write(&policy, &yaml).unwrap();
    let (code, out, err) = check_json(&checked, policy.to_str().unwrap());
    assert_eq!(code, 1, "{out}{err}");
    let bad = not_passing(&json(&out));
    let got: Vec<&str> = bad.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(
        got,
        [
            "net.ipv4.conf.all.rp_filter",
            "net.ipv4.conf.eth0.log_martians"
        ],
        "{yaml}\n{out}"
    );
}

/// Issue 29 item 2: one hostile golden value (`${`, DEL, ESC, BEL) leaves
/// THAT pin out with the reason under `# Left out:` and does not fail the
/// whole baseline; the other pins are written.
#[test]
fn a_hostile_golden_value_leaves_that_pin_out_and_the_baseline_is_written() {
    let ws = tempfile::tempdir().unwrap();
    let host = ws.path().join("h");
    std::fs::create_dir_all(host.join("captures")).unwrap();
    std::fs::write(
        host.join("captures/zmlocalconfig.txt"),
        "site_ok = fine\nsite_del = a\x7fb\nsite_esc = x\x1b[31my\nsite_ref = a${b\nsite_bell = ding\x07\n",
    )
    .unwrap();
    let (code, yaml, err) = baseline(&host, &["--namespace", "localconfig", "--keys", "site_*"]);
    assert_eq!(code, 0, "{err}");
    says(&yaml, "{key: \"site_ok\", value: \"fine\"}");
    for key in ["site_del", "site_esc", "site_bell"] {
        assert!(
            yaml.contains(&format!(
                "# Left out: localconfig.{key}: holds a control character"
            )),
            "{key}: {yaml}"
        );
        assert!(!yaml.contains(&format!("key: \"{key}\"")), "{key}: {yaml}");
    }
    says(
        &yaml,
        "# Left out: localconfig.site_ref: holds `$` then `{`",
    );
    assert!(
        !yaml.contains('\u{7f}') && !yaml.contains('\u{1b}'),
        "{yaml}"
    );
    let policy = ws.path().join("golden.yaml");
    std::fs::write(&policy, &yaml).unwrap();
    let (code, out, err) = run(&[
        "check",
        "--snapshot",
        host.to_str().unwrap(),
        "--no-builtin",
        "--policy",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "the golden host checks clean: {out}{err}");
}

mod writer_properties {
    use driftaudit::unstable::baseline::{self, Pin};
    use driftaudit::PolicySet;
    use proptest::prelude::*;

    /// Keys and values from the alphabet that breaks YAML writers: full
    /// Unicode with controls, newlines, `#`, `&`, `*`, `: `, `- `, quotes,
    /// `${`, braces.
    fn hostile() -> impl Strategy<Value = String> {
        let breakers = vec![
            "\n", "#", "&a", "*", ": ", "- ", "\"", "'", "${", "{", "}", "\\", "\r", "\u{7f}",
            "\u{85}", "\u{2028}", "\u{feff}", "\u{fffe}",
        ];
        let piece = prop_oneof![
            18 => prop::sample::select(breakers).prop_map(String::from),
            1 => Just("overrides:\n  - {rule: \"*\", severity: info}".to_string()),
            1 => "[a-z_.]{1,8}",
            1 => any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 1..6).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn the_written_baseline_loads_as_exactly_the_intended_pins_or_the_pin_is_left_out(
            host in hostile(),
            pins in prop::collection::vec((hostile(), hostile()), 1..5),
        ) {
            let intended: Vec<Pin> = pins
                .iter()
                .map(|(k, v)| Pin { key: k.clone(), value: v.clone() })
                .collect();
            let b = baseline::from_pins(&host, "now", vec![("localconfig".into(), intended.clone())])
                .unwrap_or_else(|e| panic!("{e}"));
            let kept: Vec<&Pin> = b.pins.iter().flat_map(|(_, p)| p.iter()).collect();
            let mut set = PolicySet::new();
            if !kept.is_empty() {
                set.add_str("b.yaml", &b.yaml).unwrap_or_else(|e| panic!("{e}\n{}", b.yaml));
                prop_assert_eq!(set.policies().len(), 1);
            }
            // every intended pin is kept or left out with a reason
            for p in &intended {
                let is_kept = kept.contains(&p);
                let left = b.left_out.iter().any(|l| l.key == p.key && !l.reason.is_empty());
                prop_assert!(is_kept || left, "{:?} neither pinned nor left out", p);
            }
            // the loaded pins are exactly the kept ones, key and value
            let loaded: Vec<(String, String)> = match set.policies().first().and_then(|p| p.params.get("localconfig")) {
                None => Vec::new(),
                Some(driftaudit::Value::List(items)) => items
                    .iter()
                    .map(|i| match i {
                        driftaudit::Value::Record(m) => (
                            m.get("key").map(|v| v.to_plain()).unwrap_or_default(),
                            m.get("value").map(|v| v.to_plain()).unwrap_or_default(),
                        ),
                        other => panic!("{other:?}"),
                    })
                    .collect(),
                Some(other) => panic!("{other:?}"),
            };
            let want: Vec<(String, String)> =
                kept.iter().map(|p| (p.key.clone(), p.value.clone())).collect();
            prop_assert_eq!(loaded, want);
            // exactly the intended rules, and no structure from data
            let ids: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
            let want_ids: Vec<String> = if kept.is_empty() {
                Vec::new()
            } else {
                vec![
                    baseline::rule_id(&b.policy_id, "localconfig"),
                    baseline::added_rule_id(&b.policy_id, "localconfig"),
                ]
            };
            prop_assert_eq!(ids, want_ids.iter().map(String::as_str).collect::<Vec<_>>());
            let top: serde_json::Value = serde_saphyr::from_str(&b.yaml).unwrap();
            let mut keys: Vec<&str> = top.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort();
            let mut expect = vec!["description", "policy", "rules", "title"];
            if !kept.is_empty() {
                expect.push("params");
                expect.sort();
            }
            prop_assert_eq!(keys, expect);
        }
    }
}

/// A golden host with nothing in the namespaces asked for wrote `rules: []`
/// and exited 0; `check` then refused that file ("a policy needs `rules`").
/// Now it is an input error saying why each namespace was empty, and no file
/// is written.
#[test]
fn a_baseline_with_nothing_to_pin_is_an_error_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("b.yaml");
    let (code, stdout, err) = run(&[
        "baseline",
        "--snapshot",
        "testdata/hosts/upgrade-mariadb-10.3",
        "--namespace",
        "fstab",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{err}");
    says(&err, "baseline of upgrade-mariadb-10.3: nothing to pin (fstab: /etc/fstab does not exist); nothing was written");
    assert!(!out.exists());
    assert!(stdout.is_empty(), "{stdout}");
}
