//! Issue 29, the `fix` items (1, 3, 4, 12, 13, 14): what `fix` writes from
//! host data. A value that would span lines or carry a control character is
//! unfixable with the reason, never an option-file line; file names reach
//! the patch headers quoted as git quotes them, and GNU patch edits exactly
//! that file; a failed proof prints no patch; CR and CRLF files are edited
//! in place; a change refused for an adjacent secret is listed unfixable;
//! a live `fix` says which captures it runs. Each test applies what `fix`
//! printed with the real tool where one exists.

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{self, copy_tree as copy};
use crate::common::patch::gnu_patch;
use crate::fix::{only, with_policy};

use std::path::{Path, PathBuf};
use std::process::Command;

use driftaudit::unstable::fix::{self, FixOptions, Plan, Prefer};
use driftaudit::unstable::policy::PolicySet;

fn host(name: &str) -> PathBuf {
    cli::testdata("hosts").join(name)
}

/// `driftaudit fix ARGS`. NO_COLOR is unset again: the tests here look for
/// any control character in what `fix` prints, colour escapes included.
fn fix_cli(args: &[&str]) -> (i32, String, String) {
    cli::parts(
        cli::cmd()
            .env_remove("NO_COLOR")
            .arg("fix")
            .args(args)
            .output()
            .expect("run driftaudit fix"),
    )
}

/// Every file under `dir`, relative, sorted (names as bytes, lossily shown).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect();
    v.sort();
    v
}

/// A C0 or C1 control character other than newline and tab, or DEL.
fn control(s: &str) -> Option<char> {
    s.chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
}

fn mysql_healthy_with_running(value_tsv: &str) -> tempfile::TempDir {
    let t = copy(&host("mysql-healthy"));
    let tsv = t.path().join("captures/mysql-variables.tsv");
    let text = std::fs::read_to_string(&tsv).unwrap();
    let text = text.replace(
        "\nmax_connections\t300\n",
        &format!("\nmax_connections\t{value_tsv}\n"),
    );
    assert!(text.contains(value_tsv));
    std::fs::write(&tsv, text).unwrap();
    t
}

// item 1

/// The unfixable entry of `rule` in plan `p`; without one the test fails,
/// quoting the plan's summary.
#[track_caller]
fn unfixable<'a>(p: &'a Plan, rule: &str) -> &'a fix::Unfixable {
    p.unfixable
        .iter()
        .find(|u| u.rule == rule)
        .unwrap_or_else(|| panic!("`{rule}` is not unfixable: {}", p.summary()))
}

#[test]
fn a_running_value_with_a_newline_is_unfixable_not_an_include() {
    let t = mysql_healthy_with_running(
        "300\\n!include /tmp/evil.cnf\\n[mysqld]\\nplugin_load_add = evil.so",
    );
    let s = t.path().to_str().unwrap();
    for extra in [&[][..], &["--no-verify"][..]] {
        for format in ["text", "json"] {
            let mut args = vec![
                "--snapshot",
                s,
                "--only",
                "mysql.config-runtime-drift",
                "--prefer",
                "running",
                "--format",
                format,
            ];
            args.extend_from_slice(extra);
            let (code, out, err) = fix_cli(&args);
            assert_eq!(code, 1, "{args:?}\n{out}{err}");
            assert!(
                !out.contains("!include") && !out.contains("plugin_load_add"),
                "{args:?}: the running value became option-file lines:\n{out}"
            );
            assert!(
                err.contains("cannot fix mysql.config-runtime-drift max_connections:")
                    && err.contains("newline"),
                "{args:?}: not listed unfixable with the reason:\n{err}"
            );
            // one summary line per finding: the value cannot split it
            assert!(!err.lines().any(|l| l.starts_with("!include")), "{err}");
        }
    }
}

#[test]
fn a_pinned_value_with_a_newline_is_unfixable_not_a_new_group() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.init-connect\n    title: t\n    severity: low\n    setting: mycnf.init_connect\n    expect: { equals: \"SET NAMES utf8\\n[mysqld]\\ninit_file = /tmp/evil.sql\", present: true }\n    why: w\n    fix: f\n    references: []\n",
    );
    for no_verify in [false, true] {
        let opts = FixOptions {
            no_verify,
            ..only("mine.*")
        };
        let p = fix::plan(&set, Some(&host("mysql-healthy")), &opts).unwrap();
        assert!(
            !p.patch.contains("init_file") && !p.patch.contains("+[mysqld]"),
            "{}",
            p.patch
        );
        let u = unfixable(&p, "mine.init-connect");
        assert!(u.reason.contains("newline"), "{}", u.reason);
    }
}

#[test]
fn a_value_with_quotes_hash_or_backslash_reads_back_exactly_in_my_print_defaults() {
    let Some(mpd) = common::tool("my_print_defaults", "mariadb-client") else {
        return;
    };
    for v in [
        "SET NAMES utf8 # not a comment",
        "it's \"quoted\"",
        "C:\\new\\table",
        "  padded  ",
    ] {
        option_value_reads_back(&mpd, v);
    }
}

/// Plan `init_connect = v` on mysql-healthy: either the finding is
/// unfixable with a reason and nothing is printed, or GNU patch applies
/// the patch and `my_print_defaults` reads back exactly `v`.
/// The value a one-rule pinning policy's `equals:` holds, as text: the
/// policy language reads the YAML string as an expression where it is one
/// (a number, `"1 "` included) and as text otherwise.
fn pinned_value(set: &PolicySet, rule: &str) -> String {
    use driftaudit::unstable::expr::Expr;
    use driftaudit::unstable::policy::Check;
    let r = set
        .rules()
        .iter()
        .find(|r| r.id == rule)
        .expect("the pinning rule");
    let Check::Setting { expect, .. } = &r.check else {
        panic!("not a setting rule");
    };
    match &expect[0].values[0] {
        Expr::Lit(v) => v.to_plain(),
        e => panic!("equals: is not a literal: {e}"),
    }
}

fn option_value_reads_back(mpd: &Path, v: &str) {
    // a YAML double-quoted scalar (JSON's escapes, and DEL/C1 escaped too)
    let yaml_v = common::yaml_quoted(v);
    let set = with_policy(&format!(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.init-connect\n    title: t\n    severity: low\n    setting: mycnf.init_connect\n    expect: {{ equals: {yaml_v}, present: true }}\n    why: w\n    fix: f\n    references: []\n",
    ));
    let p = fix::plan(&set, Some(&host("mysql-healthy")), &only("mine.*")).unwrap();
    if p.unfixable.iter().any(|u| u.rule == "mine.init-connect") {
        // refused with a reason is allowed; a patch that misreads is not
        assert!(p.patch.is_empty(), "{v:?}: {}", p.patch);
        assert!(
            p.unfixable
                .iter()
                .all(|u| u.rule != "mine.init-connect" || !u.reason.is_empty()),
            "{v:?}: refused without a reason"
        );
        return;
    }
    let t = copy(&host("mysql-healthy"));
    let Some((ok, out)) = gnu_patch(t.path(), &p.patch) else {
        return;
    };
    assert!(ok, "{out}\n{}", p.patch);
    let file = p
        .patch
        .lines()
        .find_map(|l| l.strip_prefix("+++ b/"))
        .unwrap();
    let text = std::fs::read_to_string(t.path().join(file)).unwrap();
    let alone: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('!'))
        .map(|l| format!("{l}\n"))
        .collect();
    let f = t.path().join("alone.cnf");
    std::fs::write(&f, alone).unwrap();
    let o = Command::new(mpd)
        .arg(format!("--defaults-file={}", f.display()))
        .arg("mysqld")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&o.stdout);
    let got = printed
        .lines()
        .filter_map(|l| {
            l.strip_prefix("--init_connect=")
                .or(l.strip_prefix("--init-connect="))
        })
        .next_back();
    // what the policy pinned: `equals:` takes an expression, so `"1 "` is
    // the number 1 and the file must read back as `1`; text that is no
    // expression is pinned as written
    let want = pinned_value(&set, "mine.init-connect");
    assert_eq!(
        got,
        Some(want.as_str()),
        "{v:?} (pinned as {want:?}):\n{printed}\n{}",
        p.patch
    );
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
}

/// Text a pinned option's value spells otherwise than the number it
/// parses as is written as that text, and my_print_defaults reads it back
/// so: `fix` wrote `init_connect = 1` for `"1 "` (the property test above
/// found it, one run in three).
#[test]
fn option_values_that_parse_as_numbers_read_back_as_written() {
    let Some(mpd) = common::tool("my_print_defaults", "mariadb-client") else {
        return;
    };
    for v in ["1 ", " 1", "1.", "01", "-1 ", "1"] {
        option_value_reads_back(&mpd, v);
    }
}

#[test]
fn a_plan_whose_proof_failed_prints_no_patch() {
    fn tamper(p: &str) -> String {
        p.replace(
            "-net.ipv4.tcp_tw_recycle = 1",
            "-net.ipv4.tcp_tw_recycle = 7",
        )
    }
    let opts = FixOptions {
        tamper: Some(tamper),
        ..FixOptions::default()
    };
    let p: Plan = fix::plan(&audit::builtin(), Some(&host("nat-story")), &opts).unwrap();
    assert!(!p.proof.as_ref().unwrap().passed());
    assert_eq!(p.exit_code(), 1);
    assert!(
        p.patch.is_empty(),
        "an unproven patch printed:\n{}",
        p.patch
    );
    let json: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    assert_eq!(json["patch"], "", "{json}");
    assert!(
        p.summary().contains("--no-verify"),
        "the summary does not say how to see the unproven patch:\n{}",
        p.summary()
    );
}

// item 3

#[test]
fn a_tab_space_or_newline_in_a_file_name_reaches_gnu_patch_as_that_file() {
    for name in [
        "70-a\tb.conf",
        "70-a b.conf",
        "70-x\n+++ b\n@@ -0,0 +1 @@\n+evil.conf",
        "70-q\"uo\\te.conf",
    ] {
        let t = copy(&host("nat-story"));
        let d = t.path().join("etc/sysctl.d");
        std::fs::rename(d.join("60-perf.conf"), d.join(name)).unwrap();
        // the name GNU patch would misread it as, present to be misedited
        let short: String = name.chars().take_while(|c| !c.is_whitespace()).collect();
        if short != name {
            std::fs::write(d.join(&short), "net.ipv4.tcp_tw_recycle = 1\n").unwrap();
        }
        let p = fix::plan(
            &audit::builtin(),
            Some(t.path()),
            &only("linux.tcp-tw-recycle"),
        )
        .unwrap();
        let target = copy(t.path());
        let before = files(target.path());
        if p.unfixable.iter().any(|u| u.rule == "linux.tcp-tw-recycle") {
            assert!(!p.patch.contains(&short[3..]), "{name:?}: {}", p.patch);
            continue;
        }
        assert!(
            p.proof.as_ref().unwrap().passed(),
            "{name:?}: {}",
            p.summary()
        );
        let Some((ok, out)) = gnu_patch(target.path(), &p.patch) else {
            return;
        };
        assert!(ok, "{name:?}: GNU patch: {out}\n{}", p.patch);
        assert_eq!(files(target.path()), before, "{name:?}: {out}\n{}", p.patch);
        let edited =
            std::fs::read_to_string(target.path().join("etc/sysctl.d").join(name)).unwrap();
        assert!(
            edited.contains("net.ipv4.tcp_tw_recycle = 0\n"),
            "{name:?}: the named file was not edited:\n{edited}\n{out}\n{}",
            p.patch
        );
        if short != name {
            let other =
                std::fs::read_to_string(target.path().join("etc/sysctl.d").join(&short)).unwrap();
            assert_eq!(
                other, "net.ipv4.tcp_tw_recycle = 1\n",
                "{name:?}: {}",
                p.patch
            );
        }
        assert!(!target.path().join("etc/passwd").exists());
    }
}

#[test]
fn the_proof_reads_patch_header_names_as_gnu_patch_reads_them() {
    let body = "@@ -1 +1 @@\n-a = 1\n+a = 2\n";
    // unquoted: GNU patch takes the name up to the tab
    let p = format!("--- a/etc/70-a\tb.conf\n+++ b/etc/70-a\tb.conf\n{body}");
    // (or refuses it: never the name with its tab, which patch would not edit)
    if let Ok(f) = fix::diff::parse(&p) {
        assert_eq!(f[0].path, "/etc/70-a", "{p}");
    }
    // quoted as git quotes it: the name with its tab
    let p = format!("--- \"a/etc/70-a\\tb.conf\"\n+++ \"b/etc/70-a\\tb.conf\"\n{body}");
    let f = fix::diff::parse(&p).unwrap();
    assert_eq!(f[0].path, "/etc/70-a\tb.conf");
}

// item 4

#[test]
fn control_characters_from_host_values_never_reach_fix_output() {
    let t = copy(&host("nat-story"));
    let conf = t.path().join("etc/sysctl.d/60-perf.conf");
    crate::common::tree::replace_in(
        &conf,
        "net.core.somaxconn = 4096",
        "net.core.somaxconn = 4096\x1b]0;pwned\x07\x1b[2J",
    );
    crate::common::tree::file(
        t.path(),
        "proc/sys/net/core/somaxconn",
        "128\x1b[1A\r\x07\n",
    );
    let s = t.path().to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (i, prefer) in ["configured", "running"].iter().enumerate() {
        let script = dir.path().join(format!("steps{i}.sh"));
        let (_, out, err) = fix_cli(&[
            "--snapshot",
            s,
            "--prefer",
            prefer,
            "--runtime",
            script.to_str().unwrap(),
        ]);
        let sh = std::fs::read_to_string(&script).unwrap();
        for (what, text) in [("patch", &*out), ("stderr", &*err), ("script", &*sh)] {
            assert_eq!(
                control(text),
                None,
                "--prefer {prefer}: a control character in the {what}:\n{text:?}"
            );
        }
    }
}

#[test]
fn a_file_name_with_newlines_cannot_forge_a_diff_text_line() {
    let name = "70-x\nRegressions: 0\n.conf";
    let a = copy(&host("nat-story"));
    let b = copy(&host("nat-story"));
    std::fs::write(
        a.path().join("etc/sysctl.d").join(name),
        "vm.swappiness = 10\n",
    )
    .unwrap();
    std::fs::write(
        b.path().join("etc/sysctl.d").join(name),
        "vm.swappiness = 60\n",
    )
    .unwrap();
    let (_, out, _) = cli::run(&[
        "diff",
        "--files",
        "--color",
        "never",
        a.path().to_str().unwrap(),
        b.path().to_str().unwrap(),
    ]);
    assert!(out.contains("swappiness"), "{out}");
    // each part of the name after a newline would start a line of its own
    assert!(
        !out.lines()
            .any(|l| l.starts_with("Regressions: 0") || l.starts_with(".conf")),
        "a file name forged a report line:\n{out}"
    );
    assert!(out.contains("70-x\\nRegressions: 0\\n.conf"), "{out}");
}

// item 12

fn nat_with_perf(text: impl Fn(&str) -> String) -> (tempfile::TempDir, String) {
    let t = copy(&host("nat-story"));
    let conf = t.path().join("etc/sysctl.d/60-perf.conf");
    let new = text(&std::fs::read_to_string(&conf).unwrap());
    std::fs::write(&conf, &new).unwrap();
    (t, new)
}

/// Plan `linux.tcp-tw-recycle`, apply the patch with GNU patch to a copy, and
/// return 60-perf.conf as patched.
fn patched_perf(t: &Path) -> Option<(Plan, String)> {
    let p = fix::plan(&audit::builtin(), Some(t), &only("linux.tcp-tw-recycle")).unwrap();
    let target = copy(t);
    let (ok, out) = gnu_patch(target.path(), &p.patch)?;
    assert!(ok, "{out}\n{}", p.patch);
    let text = std::fs::read_to_string(target.path().join("etc/sysctl.d/60-perf.conf")).unwrap();
    Some((p, text))
}

#[test]
fn a_line_ending_cr_cr_lf_is_edited_in_place_and_no_other_line_changes() {
    let (t, old) = nat_with_perf(|s| {
        s.replace(
            "net.ipv4.tcp_tw_recycle = 1\n",
            "net.ipv4.tcp_tw_recycle = 1\r\r\n",
        )
    });
    let Some((p, new)) = patched_perf(t.path()) else {
        return;
    };
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
    let (o, n): (Vec<&str>, Vec<&str>) = (old.split('\n').collect(), new.split('\n').collect());
    assert_eq!(o.len(), n.len(), "lines added or lost:\n{}", p.patch);
    for (i, (a, b)) in o.iter().zip(&n).enumerate() {
        if a.starts_with("net.ipv4.tcp_tw_recycle") {
            assert!(b.starts_with("net.ipv4.tcp_tw_recycle = 0"), "{b:?}");
        } else {
            assert_eq!(a, b, "line {} changed:\n{}", i + 1, p.patch);
        }
    }
}

#[test]
fn a_crlf_file_keeps_its_line_endings_and_only_the_edited_line_changes() {
    let (t, old) = nat_with_perf(|s| s.replace('\n', "\r\n"));
    let Some((p, new)) = patched_perf(t.path()) else {
        return;
    };
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
    assert_eq!(
        p.patch.matches("\n-").count(),
        1,
        "more than one line rewritten:\n{}",
        p.patch
    );
    assert_eq!(
        new,
        old.replace(
            "net.ipv4.tcp_tw_recycle = 1\r\n",
            "net.ipv4.tcp_tw_recycle = 0\r\n"
        )
    );
}

#[test]
fn a_lone_cr_in_a_running_value_is_unfixable_not_a_panic() {
    // somaxconn is set in no file (a line is added), tcp_tw_recycle is set
    // at 60-perf.conf:3 (that line is rewritten with the running value)
    let cases = ["128\r9\n", "128\r\r\n", "1\r"]
        .into_iter()
        .map(|v| ("net/core/somaxconn", v))
        .chain(
            ["0\r\r\n", "0\r", "0\r5\n"]
                .into_iter()
                .map(|v| ("net/ipv4/tcp_tw_recycle", v)),
        );
    for (key, v) in cases {
        let t = copy(&host("nat-story"));
        std::fs::write(t.path().join("proc/sys").join(key), v).unwrap();
        let opts = FixOptions {
            prefer: Prefer::Running,
            ..only("sysctl.persisted-drift")
        };
        let s = t.path().to_path_buf();
        let p = std::thread::spawn(move || fix::plan(&audit::builtin(), Some(&s), &opts).unwrap())
            .join()
            .unwrap_or_else(|_| panic!("{v:?}: fix panicked"));
        assert!(!p.patch.contains('\r'), "{v:?}: {:?}", p.patch);
        // unfixable with the reason, or (a reader that trims the CR as a
        // blank) the value without it written and proven
        let refused = p
            .unfixable
            .iter()
            .any(|u| u.rule == "sysctl.persisted-drift" && u.reason.contains("carriage return"));
        assert!(
            refused || p.proof.as_ref().unwrap().passed(),
            "{v:?}: {}",
            p.summary()
        );
    }
}

#[test]
fn a_non_utf8_file_name_is_refused_by_name_not_as_a_missing_line() {
    use std::os::unix::ffi::OsStrExt;
    let t = copy(&host("nat-story"));
    let d = t.path().join("etc/sysctl.d");
    std::fs::rename(
        d.join("60-perf.conf"),
        d.join(std::ffi::OsStr::from_bytes(b"60-\xffperf.conf")),
    )
    .unwrap();
    let p = fix::plan(
        &audit::builtin(),
        Some(t.path()),
        &only("linux.tcp-tw-recycle"),
    )
    .unwrap();
    let u = unfixable(&p, "linux.tcp-tw-recycle");
    assert!(
        !u.reason.contains("has no line") && u.reason.contains("UTF-8"),
        "{}",
        u.reason
    );
}

// item 13

#[test]
fn a_change_refused_for_an_adjacent_secret_is_listed_unfixable_not_fixed() {
    let t = copy(&host("nat-story"));
    let conf = t.path().join("etc/sysctl.d/60-perf.conf");
    crate::common::tree::replace_in(&conf, "net.ipv4.tcp_tw_recycle = 1\n", "net.ipv4.tcp_tw_recycle = 1\nnet.ipv4.tcp_fastopen_key = 00000000-11111111-22222222-33333333\n");
    let p = fix::plan(
        &audit::builtin(),
        Some(t.path()),
        &only("linux.tcp-tw-recycle"),
    )
    .unwrap();
    assert!(
        !p.fixes.iter().any(|f| f.rule == "linux.tcp-tw-recycle"),
        "reported fixed: {}",
        p.summary()
    );
    let u = unfixable(&p, "linux.tcp-tw-recycle");
    assert!(u.reason.contains("secret"), "{}", u.reason);
    assert!(!p.patch.contains("tcp_tw_recycle"), "{}", p.patch);
    assert!(
        p.runtime
            .iter()
            .all(|s| !s.command.contains("tcp_tw_recycle")),
        "{:?}",
        p.runtime
    );
}

// item 14

#[test]
fn fix_says_which_live_captures_it_runs_and_how_to_turn_them_on() {
    let (_, help, _) = cli::run(&["fix", "--help"]);
    for w in ["my_print_defaults", "mysql", "--mysql"] {
        assert!(help.contains(w), "`fix --help` does not name {w}:\n{help}");
    }
    let doc = std::fs::read_to_string(cli::repo_root().join("docs/fix.md")).unwrap();
    for w in ["my_print_defaults", "--mysql"] {
        assert!(doc.contains(w), "docs/fix.md does not name {w}");
    }
    // the live run's summary names what it ran: a server is read only
    // with --mysql, as in every command (--no-mysql, the old opt-out, is
    // still accepted and changes nothing)
    for args in [&["--no-verify"][..], &["--no-mysql", "--no-verify"]] {
        let (code, _, err) = fix_cli(args);
        assert!((0..=1).contains(&code), "{err}");
        says(&err, "captured the live host");
        says(&err, "--mysql reads the running server");
        assert!(err.contains("not run: my_print_defaults"), "{err}");
    }
}

// the writers' property tests: any host value or file name either reaches
// the real consumer as exactly itself or is refused with a reason

/// Text from the host-data alphabet: blanks, quotes, backslashes, comment
/// and group characters, control characters, non-ASCII.
fn hostile_text(max: usize) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop::sample::select(vec![
            "a", "b", "1", ".", "-", " ", "\t", "\n", "\r", "\"", "'", "\\", "#", "=", "[", "]",
            "!", ";", "$", "\u{1b}", "\u{7f}", "\u{202e}", "é", "*",
        ]),
        1..max,
    )
    .prop_map(|v| v.concat())
}

/// A property test's configuration: `n` cases, no failure file written.
fn cases(n: u32) -> proptest::prelude::ProptestConfig {
    proptest::prelude::ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    }
}

proptest::proptest! {
    #![proptest_config(cases(48))]

    /// Patch headers: a name quoted by `header_name` is the file GNU patch
    /// edits, and the proof's reader reads the same name.
    #[test]
    fn any_file_name_in_a_patch_header_is_the_file_gnu_patch_edits(name in hostile_text(12)) {
        proptest::prop_assume!(name != "." && name != "..");
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("etc")).unwrap();
        std::fs::write(t.path().join("etc").join(&name), "a = 1\n").unwrap();
        let patch = format!(
            "--- {}\n+++ {}\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
            fix::diff::header_name(&format!("a/etc/{name}")),
            fix::diff::header_name(&format!("b/etc/{name}")),
        );
        let parsed = fix::diff::parse(&patch).unwrap();
        proptest::prop_assert_eq!(&parsed[0].path, &format!("/etc/{name}"));
        let Some((ok, out)) = gnu_patch(t.path(), &patch) else {
            return Ok(());
        };
        proptest::prop_assert!(ok, "{:?}: {}\n{}", name, out, patch);
        proptest::prop_assert_eq!(
            std::fs::read_to_string(t.path().join("etc").join(&name)).unwrap(),
            "a = 2\n"
        );
        proptest::prop_assert_eq!(files(t.path()).len(), 1, "{:?}", files(t.path()));
    }
}

proptest::proptest! {
    #![proptest_config(cases(24))]

    /// Option files: any pinned value is read back exactly by
    /// `my_print_defaults` from the patched file, or refused with a reason.
    #[test]
    fn any_option_value_reads_back_exactly_or_is_refused(v in hostile_text(10)) {
        if let Some(mpd) = common::tool("my_print_defaults", "mariadb-client") {
            option_value_reads_back(&mpd, &v);
        }
    }
}

// the writers' property tests, round two: sysctl.d, the runtime script,
// fstab and localconfig. Each feeds the writer any value from the
// host-data alphabet and checks what it wrote with the consumer that
// reads it on a real host: systemd-sysctl and procps for sysctl.d and
// `sysctl -w`, libmount (`findmnt`) for fstab, and `sh` running the
// script against stubs that record each command's words exactly.

use crate::common::audit;
use crate::common::yaml_quoted as yaml_str;

/// A one-rule policy pinning `setting` to `v`.
fn pinning(setting: &str, v: &str) -> PolicySet {
    with_policy(&format!(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.pin\n    title: t\n    severity: low\n    setting: {setting}\n    expect: {{ equals: {}, present: true }}\n    why: w\n    fix: f\n    references: []\n",
        yaml_str(v)
    ))
}

/// The plan for `host_name` under [`pinning`] `setting` to `v`: `None`
/// when it refused (see [`refused`]), else its proof must have passed.
fn pinned_plan(setting: &str, v: &str, host_name: &str) -> Option<Plan> {
    let p = fix::plan(
        &pinning(setting, v),
        Some(&host(host_name)),
        &only("mine.*"),
    )
    .unwrap();
    if refused(&p, "mine.pin", v) {
        return None;
    }
    assert!(p.proof.as_ref().unwrap().passed(), "{v:?}: {}", p.summary());
    Some(p)
}

/// Whether `p` refused rule `rule` (or had nothing to do): then nothing may
/// be printed for it and the reason must say something.
fn refused(p: &Plan, rule: &str, v: &str) -> bool {
    if p.fixes.is_empty() && p.unfixable.is_empty() {
        // the pinned value is what the host has (`1` for a key set to 1):
        // nothing to write, and nothing written
        assert!(
            p.patch.is_empty() && p.runtime.is_empty(),
            "{v:?}: {}",
            p.patch
        );
        return true;
    }
    let Some(u) = p.unfixable.iter().find(|u| u.rule == rule) else {
        return false;
    };
    assert!(
        !u.reason.trim().is_empty(),
        "{v:?}: refused without a reason"
    );
    assert!(
        p.patch.is_empty(),
        "{v:?}: refused but patched:\n{}",
        p.patch
    );
    assert!(
        p.runtime.is_empty(),
        "{v:?}: refused but a step:\n{}",
        p.script()
    );
    true
}

/// `w` is `v`, or both are the same number (the rule compares numbers, so
/// `0.` pinned is `0` written).
fn same_value(v: &str, w: &str) -> bool {
    w == v
        || matches!(
            (v.trim().parse::<f64>(), w.parse::<f64>()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// Text a sysctl value can be made of on a host: the host-data alphabet
/// plus the separators procps and systemd-sysctl treat specially.
fn hostile_sysctl_value() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop::sample::select(vec![
            "0", "1", "4096", " ", "\t", "\n", "\r", "\"", "'", "\\", "#", ";", "=", "$", "*", "-",
            ".", "/", "\u{1b}", "\u{7f}", "\u{202e}", "é",
        ]),
        1..8,
    )
    .prop_map(|v| v.concat())
}

/// The patched copy's sysctl.d applied by systemd-sysctl, by procps
/// `sysctl --system`, and the runtime script run with procps `sysctl -w`,
/// each in a private mount namespace on a fake /proc/sys: what each wrote
/// to `key`'s file (one trailing newline removed).
fn sysctl_consumers(root: &Path, key: &str, script: &Path) -> Vec<(&'static str, String)> {
    let r = root.display();
    let proc_file = format!("/proc/sys/{}", key.replace('.', "/"));
    let dir = Path::new(&proc_file)
        .parent()
        .unwrap()
        .display()
        .to_string();
    let mut sh = String::from("mount -t tmpfs tmpfs /proc/sys\n");
    sh += &format!("mkdir -p '{dir}'\n");
    sh += "mount -t tmpfs tmpfs /run\nmkdir -p /run/sysctl.d\n";
    sh += "mount -t tmpfs tmpfs /etc/sysctl.d\nmount -t tmpfs tmpfs /usr/lib/sysctl.d\n";
    sh += "if [ -d /usr/local/lib/sysctl.d ]; then mount -t tmpfs tmpfs /usr/local/lib/sysctl.d; fi\n";
    sh += "if [ ! -L /lib ] && [ -d /lib/sysctl.d ]; then mount -t tmpfs tmpfs /lib/sysctl.d; fi\n";
    sh += &format!(
        "if [ -d '{r}/etc/sysctl.d' ]; then cp -a '{r}/etc/sysctl.d/.' /etc/sysctl.d/; fi\n"
    );
    sh += &format!(
        "if [ -e '{r}/etc/sysctl.conf' ]; then mount --bind '{r}/etc/sysctl.conf' /etc/sysctl.conf; \
         else mount --bind /dev/null /etc/sysctl.conf; fi\n"
    );
    let out = |tag: &str| format!("printf '%s\\0' {tag}; cat '{proc_file}'; printf '\\0'\n");
    sh += &format!(": > '{proc_file}'\n/lib/systemd/systemd-sysctl >/dev/null 2>&1 || true\n");
    sh += &out("systemd-sysctl");
    sh += &format!(": > '{proc_file}'\nsysctl --system -q >/dev/null 2>&1 || true\n");
    sh += &out("sysctl--system");
    sh += &format!(
        ": > '{proc_file}'\nsh '{}' >/dev/null 2>&1 || true\n",
        script.display()
    );
    sh += &out("sysctl-w");
    let o = common::cli::ok(
        Command::new("unshare").args(["-m", "--propagation", "private", "sh", "-ec", &sh]),
        &format!("the namespace script\n{sh}\n"),
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let parts: Vec<&str> = text.split('\0').collect();
    parts
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| {
            let tag = match c[0] {
                "systemd-sysctl" => "systemd-sysctl",
                "sysctl--system" => "sysctl --system",
                _ => "sysctl -w (the runtime script)",
            };
            (tag, c[1].strip_suffix('\n').unwrap_or(c[1]).to_string())
        })
        .collect()
}

/// Pin `net.ipv4.tcp_tw_recycle` (set at nat-story's 60-perf.conf:3, its
/// running value 1) to `v`: refused with a reason, or the patched
/// sysctl.d and the runtime script set exactly `v` in every consumer.
fn sysctl_value_reaches_the_kernel(v: &str) {
    let key = "net.ipv4.tcp_tw_recycle";
    let Some(p) = pinned_plan(&format!("sysctl.{key}"), v, "nat-story") else {
        return;
    };
    let t = copy(&host("nat-story"));
    let Some((ok, out)) = gnu_patch(t.path(), &p.patch) else {
        return;
    };
    assert!(ok, "{v:?}: {out}\n{}", p.patch);
    // the stub run: `sysctl` receives exactly `-w KEY=W`, W the pinned
    // value (or, where the rule compares numbers, the same number)
    let s = tempfile::tempdir().unwrap();
    let words = common::run_with_stubs(s.path(), &p.script(), &["sysctl"]);
    let w = match &words[..] {
        [(_, w)] if w.len() == 2 && w[0] == "-w" => w[1]
            .strip_prefix(&format!("{key}="))
            .unwrap_or_else(|| panic!("{v:?}: {w:?}"))
            .to_string(),
        _ => panic!("{v:?}: not one `sysctl -w`: {words:?}\n{}", p.script()),
    };
    assert!(
        same_value(v, &w),
        "{v:?}: `sysctl -w` sets {w:?}\n{}",
        p.script()
    );
    // the real readers, in a private mount namespace
    if common::tool("sysctl", "procps").is_none()
        || !Path::new("/lib/systemd/systemd-sysctl").exists() && {
            common::skip("needs systemd-sysctl", "apt-get install systemd");
            true
        }
        || !common::can_unshare("systemd-sysctl on a fake /proc/sys")
    {
        return;
    }
    let script = s.path().join("real.sh");
    std::fs::write(&script, p.script()).unwrap();
    let read = sysctl_consumers(t.path(), key, &script);
    assert_eq!(read.len(), 3, "{v:?}: not every reader ran: {read:?}");
    for (reader, got) in read {
        assert_eq!(
            got,
            w,
            "{v:?}: {reader} read {got:?}\n{}{}",
            p.patch,
            p.script()
        );
    }
}

proptest::proptest! {
    #![proptest_config(cases(32))]

    /// sysctl.d and `sysctl -w`: any pinned value is what systemd-sysctl,
    /// procps and the runtime script write to the kernel, or refused.
    #[test]
    fn any_sysctl_value_is_what_systemd_sysctl_procps_and_the_script_set_or_is_refused(
        v in hostile_sysctl_value()
    ) {
        sysctl_value_reaches_the_kernel(&v);
    }
}

#[test]
fn sysctl_values_with_blanks_quotes_and_globs_reach_the_kernel_exactly() {
    // the values a property run might not draw: a tab-separated range (as
    // ip_local_port_range is written), quotes, a glob, a comment character
    for v in [
        "0.",
        "1024\t65000",
        "1024 65000",
        "\"1\"",
        "'1'",
        "*",
        "1 # 2",
        "a;b",
        "$(id)",
    ] {
        sysctl_value_reaches_the_kernel(v);
    }
}

/// A mount point as /proc/self/mountinfo and /etc/fstab write it: blank,
/// tab, newline and backslash as octal escapes.
fn mount_escaped(p: &str) -> String {
    p.chars()
        .map(|c| match c {
            ' ' | '\t' | '\n' | '\\' => format!("\\{:03o}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// An fstab options field as libmount splits it: at commas outside double
/// quotes.
fn libmount_split(opts: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in opts.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.retain(|o| !o.is_empty());
    out
}

/// `findmnt --tab-file FILE`: (target, options) of each entry, as libmount
/// reads them.
fn libmount_entries(findmnt: &Path, file: &Path) -> Vec<(String, String)> {
    let o = Command::new(findmnt)
        .args(["-J", "-o", "TARGET,OPTIONS", "--tab-file"])
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["filesystems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["target"].as_str().unwrap_or("").to_string(),
                f["options"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The index volume of zimbra-storage-nodirs mounted at `point` with fstab
/// options `opts`; `fix --only 'storage.noatime*'`: refused with a reason,
/// or libmount reads the patched fstab as the same entry with noatime
/// (and no other atime option) and every other option as it was, in order,
/// and the remount step hands `mount` exactly `-o remount,noatime POINT`.
fn fstab_edit_reads_back(point: &str, opts: &str) {
    let t = copy(&host("zimbra-storage-nodirs"));
    let fstab = t.path().join("etc/fstab");
    let text = std::fs::read_to_string(&fstab).unwrap().replace(
        "/dev/md2                                  /opt/zimbra/index       ext4    defaults ",
        &format!("/dev/md2 {} ext4 {opts} ", mount_escaped(point)),
    );
    assert!(text.contains(opts));
    std::fs::write(&fstab, text).unwrap();
    let mi = t.path().join("proc/self/mountinfo");
    crate::common::tree::replace_in(
        &mi,
        " /opt/zimbra/index ",
        &format!(" {} ", mount_escaped(point)),
    );
    let mut set = audit::builtin();
    set.set_param(&format!("storage.zimbra_index_dir={point}"))
        .unwrap();
    let p = fix::plan(&set, Some(t.path()), &only("storage.noatime*")).unwrap();
    let label = format!("{point:?} {opts:?}");
    // both rules fail on this volume (relatime live and in fstab): the plan
    // fixes them or says why not
    assert!(
        p.fixes.len() + p.unfixable.len() >= 2,
        "{label}: the noatime findings were not failures: {}",
        p.summary()
    );
    if p.unfixable
        .iter()
        .any(|u| u.rule.starts_with("storage.noatime"))
    {
        for u in &p.unfixable {
            assert!(
                !u.reason.trim().is_empty(),
                "{label}: refused without a reason"
            );
        }
        assert!(
            !p.patch.contains("+++ b/etc/fstab"),
            "{label}: refused but patched:\n{}",
            p.patch
        );
        return;
    }
    assert!(
        p.proof.as_ref().unwrap().passed(),
        "{label}: {}",
        p.summary()
    );
    let Some(findmnt) = common::tool("findmnt", "util-linux") else {
        return;
    };
    let before = libmount_entries(&findmnt, &fstab);
    let Some((ok, out)) = gnu_patch(t.path(), &p.patch) else {
        return;
    };
    assert!(ok, "{label}: {out}\n{}", p.patch);
    let after = libmount_entries(&findmnt, &fstab);
    assert_eq!(before.len(), after.len(), "{label}: entries added or lost");
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b.0, a.0, "{label}: a mount point changed:\n{}", p.patch);
        if b.0 != point {
            assert_eq!(b.1, a.1, "{label}: another entry changed:\n{}", p.patch);
            continue;
        }
        let mut want: Vec<String> = libmount_split(&b.1)
            .into_iter()
            .filter(|o| !["relatime", "strictatime", "atime", "noatime"].contains(&o.as_str()))
            .collect();
        want.push("noatime".into());
        assert_eq!(
            libmount_split(&a.1),
            want,
            "{label}: libmount reads {:?} after the patch:\n{}",
            a.1,
            p.patch
        );
    }
    assert!(
        after.iter().any(|(t, _)| t == point),
        "{label}: libmount lost the entry: {after:?}"
    );
    let s = tempfile::tempdir().unwrap();
    let words = common::run_with_stubs(s.path(), &p.script(), &["mount"]);
    assert_eq!(
        words,
        vec![(
            "mount".to_string(),
            vec![
                "-o".to_string(),
                "remount,noatime".to_string(),
                point.to_string()
            ]
        )],
        "{label}:\n{}",
        p.script()
    );
}

/// An fstab options field a host may hold: quoted values with commas and
/// atime names inside them, escapes, and the atime options themselves.
fn hostile_fstab_options() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop::sample::select(vec![
            "defaults",
            "relatime",
            "strictatime",
            "nodev",
            "ro",
            "user_xattr",
            "data=ordered",
            "x-a=\"b",
            "c\"",
            "x-b=\"relatime,c\"",
            "context=\"a:b,c\"",
            "x-mount.mkdir",
            "x-c=\\040",
        ]),
        1..6,
    )
    .prop_map(|v| v.join(","))
}

proptest::proptest! {
    #![proptest_config(cases(32))]

    /// fstab and `mount -o remount`: any mount point and options field
    /// reads back in libmount as exactly the intended change, or refused.
    #[test]
    fn any_mount_point_and_fstab_options_read_back_in_libmount_or_are_refused(
        name in hostile_text(8),
        opts in hostile_fstab_options(),
    ) {
        fstab_edit_reads_back(&format!("/opt/zimbra/index{name}x"), &opts);
    }
}

#[test]
fn fstab_quoted_option_values_and_blank_mount_points_read_back_exactly() {
    for (point, opts) in [
        ("/opt/zimbra/index", "defaults,x-a=\"b,relatime,c\""),
        ("/opt/zimbra/my index", "defaults"),
        (
            "/opt/zimbra/index\\old",
            "relatime,context=\"system_u:object_r:x:s0:c1,c2\"",
        ),
        ("/opt/zimbra/in'dex", "strictatime,nodev"),
    ] {
        fstab_edit_reads_back(point, opts);
    }
}

/// Pin `mailboxd_java_heap_size` on zimbra-khimki-asfound to `v`: refused
/// with a reason, or the script, run by sh with stubs for `su` and
/// `zmlocalconfig`, hands `zmlocalconfig` exactly `-e KEY=V` (V, or the
/// same number where the rule compares numbers), and the proof
/// (localconfig.xml as the step leaves it) reads back `v`.
fn localconfig_value_reaches_zmlocalconfig(v: &str) {
    let key = "mailboxd_java_heap_size";
    let Some(p) = pinned_plan(&format!("localconfig.{key}"), v, "zimbra-khimki-asfound") else {
        return;
    };
    assert!(
        p.patch.is_empty(),
        "{v:?}: localconfig.xml is never patched:\n{}",
        p.patch
    );
    let s = tempfile::tempdir().unwrap();
    let words = common::run_with_stubs(s.path(), &p.script(), &["su", "zmlocalconfig"]);
    let w = match &words[..] {
        [(_, w)] if w.len() == 2 && w[0] == "-e" => w[1]
            .strip_prefix(&format!("{key}="))
            .unwrap_or_else(|| panic!("{v:?}: {w:?}"))
            .to_string(),
        _ => panic!(
            "{v:?}: not one `zmlocalconfig -e`: {words:?}\n{}",
            p.script()
        ),
    };
    assert!(
        same_value(v, &w),
        "{v:?}: zmlocalconfig sets {w:?}\n{}",
        p.script()
    );
}

proptest::proptest! {
    #![proptest_config(cases(32))]

    /// localconfig: any pinned value is one `zmlocalconfig -e KEY=VALUE`
    /// word through `su - zimbra -c`, or refused.
    #[test]
    fn any_localconfig_value_is_one_zmlocalconfig_word_through_su_or_is_refused(
        v in hostile_text(10)
    ) {
        localconfig_value_reaches_zmlocalconfig(&v);
    }
}

#[test]
fn localconfig_values_with_quotes_and_markup_reach_zmlocalconfig_exactly() {
    for v in [
        "it's",
        "a\"b",
        "$(id)",
        "`id`",
        "<x>&amp;</x>",
        "-Xmx2g -XX:+UseG1GC",
        "a\\b",
    ] {
        localconfig_value_reaches_zmlocalconfig(v);
    }
}

/// Interface names Linux accepts that hold a character systemd-sysctl and
/// `sysctl --system` read as a glob in a sysctl.d key (`*`, `?`, `[`).
const GLOB_IFACES: [&str; 3] = ["v*", "w?", "x[1]"];

#[test]
fn an_interface_named_with_a_glob_character_is_left_out_of_the_plan_with_the_reason() {
    // Issue 51, item 11: `fix` wrote `net.ipv4.conf.v*.secure_redirects = 0`
    // for an interface named `v*`; systemd-sysctl read the key as a
    // pattern, set `vx` and `veth0` to 0 and left `v*` at 1.
    let t = copy(&cli::testdata("foreach/ifaces"));
    let capture = t.path().join("captures/sysctl-a.txt");
    let mut text = std::fs::read_to_string(&capture).unwrap();
    for i in [
        "all", "default", "eth0", "eth1", "eth1/100", "lo", "vx", "veth0",
    ] {
        text.push_str(&format!("net.ipv4.conf.{i}.secure_redirects = 0\n"));
    }
    for i in GLOB_IFACES {
        text.push_str(&format!("net.ipv4.conf.{i}.secure_redirects = 1\n"));
    }
    std::fs::write(&capture, text).unwrap();
    let p = fix::plan(
        &PolicySet::builtin().unwrap(),
        Some(t.path()),
        &only("hardening.secure-redirects"),
    )
    .unwrap();
    for i in GLOB_IFACES {
        let key = format!("net.ipv4.conf.{i}.secure_redirects");
        assert!(
            !p.patch.contains(&key),
            "{i}: a sysctl.d line would be a pattern:\n{}",
            p.patch
        );
        assert!(
            !p.runtime.iter().any(|s| s.command.contains(&key)),
            "{i}: {:#?}",
            p.runtime
        );
        assert!(!p.fixes.iter().any(|f| f.subject.starts_with(i)), "{i}");
        let u = p
            .unfixable
            .iter()
            .find(|u| u.subject.starts_with(i))
            .unwrap_or_else(|| panic!("{i} is not listed unfixable: {}", p.summary()));
        says(&u.reason, "glob");
        says(&u.reason, &format!("`{key}`"));
    }
    // what people read says so too
    says(&p.summary(), "v*");

    // the reason's advice, on a fake /proc/sys in a private mount
    // namespace: `sysctl -w` with the key quoted sets `v*` alone
    if common::tool("sysctl", "procps").is_none()
        || !common::can_unshare("sysctl -w on a fake /proc/sys")
    {
        return;
    }
    let set = fix::shell::command(&["sysctl", "-q", "-w", "net.ipv4.conf.v*.secure_redirects=0"]);
    let sh = format!(
        "mount -t tmpfs tmpfs /proc/sys\n\
         for i in 'v*' vx veth0; do mkdir -p \"/proc/sys/net/ipv4/conf/$i\"; \
         echo 1 > \"/proc/sys/net/ipv4/conf/$i/secure_redirects\"; done\n\
         {set}\n\
         for i in 'v*' vx veth0; do printf '%s=' \"$i\"; \
         cat \"/proc/sys/net/ipv4/conf/$i/secure_redirects\"; done\n"
    );
    let o = cli::ok(
        Command::new("unshare").args(["-m", "--propagation", "private", "sh", "-ec", &sh]),
        &format!("the namespace script\n{sh}"),
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "v*=0\nvx=1\nveth0=1\n");
}
