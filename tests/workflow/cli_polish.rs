//! CLI polish, run through the built binary: a mistyped flag suggests the
//! right one, a broken policy shows the offending line with a caret,
//! `explain` describes a rule in full, and completions and the man page are
//! generated from the CLI definition (checked with bash and groff when
//! installed; in CI a missing tool fails the test).

use std::process::Command;

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{self, parts};

/// The kit's runner, with no forced colour inherited from the caller.
fn bin() -> Command {
    let mut c = cli::cmd();
    c.env_remove("CLICOLOR_FORCE");
    c
}

fn run(c: &mut Command) -> (i32, String, String) {
    parts(c.output().expect("run driftaudit"))
}

/// `explain RULE --set PARAM=VALUE`, which must exit 0; what it printed.
fn explain_set(rule: &str, set: &str) -> String {
    let (code, out, err) = run(bin().args(["explain", rule, "--set", set]));
    assert_eq!(code, 0, "{err}");
    out
}

fn have(tool: &str) -> bool {
    let package = if tool == "groff" { "groff-base" } else { tool };
    common::tool(tool, package).is_some()
}

fn snap(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn a_mistyped_flag_suggests_the_right_one() {
    let (code, out, err) = run(bin().args(["check", "--formt", "json"]));
    assert_eq!(code, 2);
    assert!(out.is_empty());
    says(&err, "tip: a similar argument exists: '--format'");
    snap("cli-bad-flag", &err);
}

#[test]
fn a_broken_policy_shows_the_line_with_a_caret() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::tree::file(dir.path(), "broken.yaml", "policy: mine\ntitle: Mine\nrules:\n  - id: my.rule\n    title: A rule\n    severity: low\n    setting: sysctl.vm.swappiness\n    expect: { maxx: 10 }\n    why: because\n    fix: change it\n");
    let snapshot = cli::testdata("hosts/clean");
    let (code, out, err) = run(bin().current_dir(dir.path()).args([
        "check",
        "--no-builtin",
        "--policy",
        "broken.yaml",
        "--snapshot",
        snapshot.to_str().unwrap(),
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.starts_with("driftaudit: broken.yaml:8:"), "{err}");
    assert!(err.contains("maxx"), "{err}");
    // The caret sits under the offending key.
    let lines: Vec<&str> = err.lines().collect();
    let src = lines
        .iter()
        .position(|l| l.contains("expect: { maxx: 10 }"))
        .unwrap_or_else(|| panic!("no source line in\n{err}"));
    let caret_line = lines
        .get(src + 1)
        .unwrap_or_else(|| panic!("no caret line in\n{err}"));
    let caret = caret_line.find('^').expect("caret");
    assert_eq!(
        caret,
        lines[src].find("maxx").unwrap(),
        "caret under `maxx`:\n{err}"
    );
    snap("cli-broken-policy", &err);
}

#[test]
fn explain_describes_the_rule_in_full() {
    let (code, out, err) = run(bin().args(["explain", "linux.tcp-tw-recycle"]));
    assert_eq!(code, 0, "{err}");
    for needle in [
        "linux.tcp-tw-recycle",
        "kernel < 4.12",
        "sysctl.net.ipv4.tcp_tw_recycle",
        "https://vincent.bernat.ch/en/blog/2014-tcp-time-wait-state-linux",
    ] {
        assert!(out.contains(needle), "`{needle}` missing:\n{out}");
    }
    snap("cli-explain-tcp-tw-recycle", &out);
    // Parameters with their defaults and current values, and what the rule reads.
    let out = explain_set(
        "zimbra.heap-sized-for-ram",
        "zimbra-memory.heap_min_share=0.2",
    );
    says(&out, "heap_min_share = 0.2  (default 0.15)");
    says(&out, "setting localconfig.mailboxd_java_heap_size");
    assert!(out.contains("fact mem_total"), "{out}");
    snap("cli-explain-zimbra-heap-with-set", &out);
    let (code, _, err) = run(bin().args(["explain", "linux.tcp-tw-recycel"]));
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `linux.tcp-tw-recycle`"), "{err}");
}

/// Issue 30: `explain storage.noatime` printed the raw `{dir.lead}`
/// templates. The why and fix read in words: parameters and each item's
/// fields filled in (per item, under its alias), what only a host can tell
/// as `‹expression›`.
#[test]
fn explain_renders_templates_in_words_per_item() {
    let out = explain_set("storage.noatime", "storage.zimbra_db_dir=/srv/zimbra/db");
    assert!(!out.contains("{dir."), "raw template: {out}");
    assert!(out.contains("why (storage.noatime-zimbra-db):"), "{out}");
    assert!(out.contains("fix (storage.noatime-mysql):"), "{out}");
    assert!(
        out.contains("/srv/zimbra/db lives on the volume mounted at ‹point›"),
        "the item's ${{params.zimbra_db_dir}} is filled in with --set: {out}"
    );
    says(&out, "Every search opens Lucene segment files");
    let (_, out, _) = run(bin().args(["explain", "linux.tcp-tw-recycle"]));
    assert!(out.contains("net.ipv4.tcp_tw_recycle is ‹actual›"), "{out}");
}

#[test]
fn completions_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(bin().args(["completions", shell]));
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("driftaudit"), "{shell}");
        assert!(out.contains("format"), "{shell}: --format missing");
        assert!(out.contains("completions"), "{shell}: subcommands missing");
    }
    let (code, _, err) = run(bin().args(["completions", "tcsh"]));
    assert_eq!(code, 2);
    assert!(err.contains("possible values"), "{err}");
    if have("bash") {
        let (_, script, _) = run(bin().args(["completions", "bash"]));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("driftaudit.bash");
        std::fs::write(&f, &script).unwrap();
        // Syntax check, then load it and ask for the completions of `check --fo`.
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "bash -n {p} && source {p} && COMP_WORDS=(driftaudit check --fo) COMP_CWORD=2 COMP_LINE='driftaudit check --fo' COMP_POINT=21 && _driftaudit driftaudit --fo check && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                p = f.display()
            ))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && stdout.lines().any(|l| l == "--format"),
            "bash completion of `check --fo`: {stdout}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// What bash completes for `words` (the last one being completed), with
/// the generated script loaded; `None` without bash.
fn bash_completes(words: &[&str]) -> Option<Vec<String>> {
    if !have("bash") {
        return None;
    }
    let (_, script, _) = run(bin().args(["completions", "bash"]));
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("driftaudit.bash");
    std::fs::write(&f, &script).unwrap();
    let line = words.join(" ");
    let cur = words[words.len() - 1];
    let prev = words[words.len() - 2];
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {p} && COMP_WORDS=({line}) COMP_CWORD={n} COMP_LINE='{line}' COMP_POINT={len} && _driftaudit driftaudit '{cur}' '{prev}' && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            p = f.display(),
            n = words.len() - 1,
            len = line.len(),
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn completions_offer_rule_ids_aliases_and_targets_where_they_are_asked_for() {
    // rule ids and items' aliases after --only, --skip (check and fix) and
    // explain; upgrade rules too, whatever --target says
    let Some(got) = bash_completes(&["driftaudit", "check", "--only", "storage.on"]) else {
        return;
    };
    assert!(got.iter().any(|c| c == "storage.on-rotational"), "{got:?}");
    let got = bash_completes(&["driftaudit", "fix", "--skip", "storage.db-on"]).unwrap();
    assert!(
        got.iter().any(|c| c == "storage.db-on-rotational"),
        "alias: {got:?}"
    );
    let got = bash_completes(&["driftaudit", "explain", "upgrade.mariadb.rem"]).unwrap();
    assert!(
        got.iter().any(|c| c == "upgrade.mariadb.removed-option"),
        "{got:?}"
    );
    let got = bash_completes(&["driftaudit", "check", "--target", "mariadb="]).unwrap();
    assert!(got.iter().any(|c| c == "mariadb=10.11"), "{got:?}");
    let got = bash_completes(&["driftaudit", "list", "--target", "mysql="]).unwrap();
    assert!(got.iter().any(|c| c == "mysql=8.0"), "{got:?}");
    // a glob is still accepted as it is, and help does not list the ids
    let (code, _, err) = run(bin().args([
        "check",
        "--snapshot",
        "testdata/hosts/nat-story",
        "--only",
        "linux.*",
        "-q",
    ]));
    assert_eq!(code, 1, "{err}");
    let (_, help, _) = run(bin().args(["check", "--help"]));
    assert!(!help.contains("storage.on-rotational"), "{help}");
}

#[test]
fn the_man_page_is_valid_roff() {
    let (code, man, err) = run(bin().arg("man"));
    assert_eq!(code, 0, "{err}");
    assert!(man.contains(".TH driftaudit 1"), "{man}");
    for sub in ["check", "explain", "schema", "completions", "man"] {
        assert!(
            man.contains(sub),
            "subcommand {sub} missing from the man page"
        );
    }
    if have("groff") {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("driftaudit.1");
        std::fs::write(&f, &man).unwrap();
        let o = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&f)
            .output()
            .unwrap();
        let warnings = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && warnings.trim().is_empty(),
            "groff: {warnings}"
        );
    }
}
