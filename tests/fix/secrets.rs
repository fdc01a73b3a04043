//! `driftaudit fix` never prints a secret: a secret line next to a changed
//! line is cut out of the patch's context (and the patch still applies with
//! `git apply --check` and `patch -p1 --dry-run`, without fuzz), a change
//! that cannot be shown without quoting one is listed as unfixable with the
//! lines to change by hand, and no secret reaches the runtime script, the
//! stderr summary, the JSON plan or an error.

use crate::common;
use crate::common::cli::says;
use crate::common::cli::{self, copy_tree as copy};
use crate::common::patch::{self, run_with_stdin};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn host(name: &str) -> PathBuf {
    cli::testdata("hosts").join(name)
}

/// Replace line `n` (1-based) of `path`, or insert before it.
fn edit_line(path: &Path, n: usize, text: &str, insert: bool) {
    let old = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = old.lines().map(String::from).collect();
    if insert {
        lines.insert(n - 1, text.to_string());
    } else {
        lines[n - 1] = text.to_string();
    }
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// `driftaudit fix ARGS`, in the environment the test inherits (NO_COLOR
/// unset again, as these tests always ran it): every byte `fix` prints is
/// searched for secrets.
fn fix(args: &[&str]) -> Output {
    cli::cmd()
        .env_remove("NO_COLOR")
        .arg("fix")
        .args(args)
        .output()
        .expect("run driftaudit fix")
}

/// Every output of `fix` on `snap`: the patch and the summary, the JSON plan,
/// the runtime script, each with and without the proof. Returns (patch, all).
fn every_output(snap: &Path) -> (String, String) {
    let s = snap.to_str().unwrap();
    let t = tempfile::tempdir().unwrap();
    let mut all = String::new();
    let mut patch = String::new();
    for (i, extra) in [&[][..], &["--no-verify"][..]].iter().enumerate() {
        let script = t.path().join(format!("steps{i}.sh"));
        // The hunks pinned below are the mysql-innodb and sysctl rules'
        // edits; mysql-hardening's own new option lines would move them.
        let mut args = vec![
            "--snapshot",
            s,
            "--skip",
            "mysqlsec.*",
            "--runtime",
            script.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = fix(&args);
        assert!(o.status.code().unwrap_or(9) <= 1, "{o:?}");
        if i == 0 {
            patch = String::from_utf8_lossy(&o.stdout).into_owned();
        }
        all.push_str(&String::from_utf8_lossy(&o.stdout));
        all.push_str(&String::from_utf8_lossy(&o.stderr));
        all.push_str(&std::fs::read_to_string(&script).unwrap());
        let mut args = vec!["--snapshot", s, "--skip", "mysqlsec.*", "--format", "json"];
        args.extend_from_slice(extra);
        let o = fix(&args);
        all.push_str(&String::from_utf8_lossy(&o.stdout));
        all.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    (patch, all)
}

/// A copy of mysql-warmup-story with line `n` of its sysbench.cnf
/// replaced by `text` (or `text` inserted there), and what `fix` prints for
/// it: the copy, the patch, and every output together.
fn sysbench_with(n: usize, text: &str, insert: bool) -> (tempfile::TempDir, String, String) {
    let t = copy(&host("mysql-warmup-story"));
    edit_line(
        &t.path().join("etc/mysql/conf.d/sysbench.cnf"),
        n,
        text,
        insert,
    );
    let (patch, all) = every_output(t.path());
    (t, patch, all)
}

fn assert_absent(out: &str, marker: &str) {
    assert!(
        !out.contains(marker),
        "secret `{marker}` printed:\n{}",
        out.lines()
            .filter(|l| l.contains(marker))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `git apply --check` and `patch -p1 --dry-run` (no fuzz, no offset)
/// accept the patch on a copy of `snap`; `patch -p1` applies it. Returns the
/// patched copy (`None` when the tools are missing off CI).
fn applies(snap: &Path, patch: &str) -> Option<tempfile::TempDir> {
    patch::applies(snap, patch, &["-v"], true)
}

#[test]
fn a_password_next_to_a_changed_option_line_is_never_printed_and_the_patch_applies() {
    // the repro: line 9 of sysbench.cnf, two lines above the
    // innodb_buffer_pool_dump_at_shutdown line the plan changes
    let (t, patch, all) = sysbench_with(9, "password = Hunter2SecretXYZ", false);
    assert_absent(&all, "Hunter2SecretXYZ");
    says(&patch, "+innodb_buffer_pool_dump_at_shutdown = ON\n");
    // context stops at the secret line: line 10 before, the end of the file after
    assert!(
        patch.contains(
            "@@ -10,3 +10,3 @@\n # cold start on purpose: measure the warm-up after a restart\n"
        ),
        "{patch}"
    );
    if let Some(done) = applies(t.path(), &patch) {
        let after =
            std::fs::read_to_string(done.path().join("etc/mysql/conf.d/sysbench.cnf")).unwrap();
        assert!(after.contains("\npassword = Hunter2SecretXYZ\n"), "{after}");
        assert!(after.ends_with("innodb_buffer_pool_load_at_startup = ON\n"));
    }
}

#[test]
fn a_secret_right_after_a_changed_line_makes_that_change_unfixable_with_the_lines_to_edit() {
    // between the dump line (11) and the load line (12)
    let (t, patch, all) = sysbench_with(12, "password = Hunter2SecretXYZ", true);
    assert_absent(&all, "Hunter2SecretXYZ");
    // the load line ends the file: it is still fixed, with no context before it
    assert!(
        patch.contains(
            "@@ -13 +13 @@\n-innodb_buffer_pool_load_at_startup = OFF\n+innodb_buffer_pool_load_at_startup = ON\n"
        ),
        "{patch}"
    );
    assert!(
        !patch.contains("innodb_buffer_pool_dump_at_shutdown"),
        "{patch}"
    );
    let o = fix(&["--snapshot", t.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("cannot fix mysql.warm-restart-dump "))
        .unwrap_or_else(|| panic!("{stderr}"));
    says(
        line,
        "line 12 of `/etc/mysql/conf.d/sysbench.cnf` holds a secret",
    );
    says(
        line,
        "replace line 11 `innodb_buffer_pool_dump_at_shutdown = OFF` with `innodb_buffer_pool_dump_at_shutdown = ON`",
    );
    // the JSON lists it as unfixable, and the proof passes what it targets
    let o = fix(&["--snapshot", t.path().to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let u = v["unfixable"].as_array().unwrap();
    assert!(
        u.iter().any(|u| u["rule"] == "mysql.warm-restart-dump"),
        "{v}"
    );
    assert!(
        v["proof"]["still_failing"].as_array().unwrap().is_empty(),
        "{v}"
    );
    applies(t.path(), &patch);
}

#[test]
fn a_secret_in_an_included_option_file_stays_out_of_the_patch() {
    let t = copy(&host("mysql-warmup-story"));
    let my = t.path().join("etc/mysql/my.cnf");
    let mut text = std::fs::read_to_string(&my).unwrap();
    text.push_str("!include /etc/mysql/backup.cnf\n");
    std::fs::write(&my, text).unwrap();
    crate::common::tree::file(t.path(), "etc/mysql/backup.cnf", "[mysqld]\ninnodb_buffer_pool_dump_at_shutdown = OFF\n[mysqldump]\npasswd = IncludedSecret42\nuser = backup\n");
    let (patch, all) = every_output(t.path());
    assert_absent(&all, "IncludedSecret42");
    assert!(
        patch.contains(
            "--- a/etc/mysql/backup.cnf\n+++ b/etc/mysql/backup.cnf\n@@ -1,3 +1,3 @@\n [mysqld]\n-innodb_buffer_pool_dump_at_shutdown = OFF\n+innodb_buffer_pool_dump_at_shutdown = ON\n [mysqldump]\n"
        ),
        "{patch}"
    );
    applies(t.path(), &patch);
}

#[test]
fn a_redacted_snapshot_line_is_never_context_so_the_patch_applies_to_the_real_host() {
    // a snapshot driftaudit took holds `<redacted>` where the host has the
    // password: context quoting it would not apply to the host's own file
    let (t, patch, _) = sysbench_with(10, "password = <redacted>", false);
    assert!(!patch.contains("redacted"), "{patch}");
    let real = copy(t.path());
    edit_line(
        &real.path().join("etc/mysql/conf.d/sysbench.cnf"),
        10,
        "password = TheRealOne",
        false,
    );
    applies(real.path(), &patch);
}

#[test]
fn zimbra_localconfig_secrets_beside_changed_keys_and_a_my_cnf_password_are_never_printed() {
    // localconfig.xml of this host has mailboxd_keystore_password right after
    // mailboxd_java_heap_size and mysql_root_password right after
    // mysql_memory_percent, both of which the plan changes
    let t = copy(&host("zimbra-khimki-12g"));
    let cnf = t.path().join("opt/zimbra/conf/my.cnf");
    // a [client] password two lines above the pool line the plan changes
    edit_line(
        &cnf,
        34,
        "[client]\npassword = ZimbraCnfSecret7\n[mysqld]",
        true,
    );
    let (patch, all) = every_output(t.path());
    for n in 1..=5 {
        assert_absent(&all, &format!("FAKE-SECRET-DO-NOT-PRINT-{n}"));
    }
    assert_absent(&all, "ZimbraCnfSecret7");
    assert!(all.contains("mailboxd_java_heap_size=4821"), "{all}");
    assert!(all.contains("mysql_memory_percent=25"), "{all}");
    assert!(patch.contains("+innodb_buffer_pool_size"), "{patch}");
    applies(t.path(), &patch);
}

#[test]
fn a_secret_setting_is_never_written_by_a_remedy() {
    let (_t, policy) = crate::common::tree::temp_file("p.yaml", "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.sst\n    title: t\n    severity: low\n    setting: mycnf_effective.wsrep_sst_auth\n    expect: { equals: \"sst:NewSecretValue9\" }\n    why: w\n    fix: f\n    references: []\n");
    let snap = copy(&host("mysql-warmup-story"));
    edit_line(
        &snap.path().join("etc/mysql/conf.d/sysbench.cnf"),
        3,
        "wsrep_sst_auth = sst:OldSecretValue8",
        true,
    );
    let o = fix(&[
        "--snapshot",
        snap.path().to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
        "--only",
        "mine.*",
        "--format",
        "json",
    ]);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert_absent(&out, "NewSecretValue9");
    assert_absent(&out, "OldSecretValue8");
    says(
        &out,
        "`wsrep_sst_auth` holds a secret: `fix` never writes a secret value",
    );
}

#[test]
fn every_placement_of_a_secret_around_a_change_gives_a_patch_both_tools_apply_without_fuzz_or_a_refusal(
) {
    use driftaudit::unstable::fix::diff;
    let (Some(git), Some(patch_bin)) = (
        common::program("git", "git"),
        common::program("patch", "patch"),
    ) else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let path = "/etc/mysql/conf.d/x.cnf";
    let (mut applied, mut refused) = (0, 0);
    for n in [1usize, 2, 5, 9] {
        for changes in [
            vec![0usize],
            vec![n / 2],
            vec![n - 1],
            vec![0, n - 1],
            vec![1, 3],
        ] {
            if changes.iter().any(|c| *c >= n) {
                continue;
            }
            for secret in 0..n {
                if changes.contains(&secret) {
                    continue;
                }
                let line = |i: usize, v: &str| {
                    if i == secret {
                        "password = Sekr1t\n".to_string()
                    } else {
                        format!("k{i} = {v}\n")
                    }
                };
                let old: String = (0..n).map(|i| line(i, "1")).collect();
                let new: String = (0..n)
                    .map(|i| line(i, if changes.contains(&i) { "2" } else { "1" }))
                    .collect();
                let case = format!("{n} lines, changes {changes:?}, secret {secret}");
                match diff::unified(path, &old, &new, "a/x.cnf", "b/x.cnf") {
                    Ok(p) => {
                        assert!(!p.contains("Sekr1t"), "{case}: {p}");
                        std::fs::write(t.path().join("x.cnf"), &old).unwrap();
                        let (ok, out) = run_with_stdin(
                            Command::new(&git)
                                .args(["apply", "--check", "-p1"])
                                .current_dir(t.path()),
                            &p,
                        );
                        assert!(ok, "{case}: git apply: {out}\n{p}");
                        let (ok, out) = run_with_stdin(
                            Command::new(&patch_bin).args(["-p1", "-d"]).arg(t.path()),
                            &p,
                        );
                        assert!(ok && !out.contains("fuzz"), "{case}: patch: {out}\n{p}");
                        let got = std::fs::read_to_string(t.path().join("x.cnf")).unwrap();
                        assert_eq!(got, new, "{case}: {p}");
                        applied += 1;
                    }
                    Err(e) => {
                        // refused only when the secret is right after a change
                        // that does not end the file
                        assert!(!e.changed && changes.contains(&(secret - 1)), "{case}: {e}");
                        assert!(!e.to_string().contains("Sekr1t"));
                        refused += 1;
                    }
                }
            }
        }
    }
    assert!(
        applied > 40 && refused > 5,
        "{applied} applied, {refused} refused"
    );
}
