//! `driftaudit fix` on every shipped test host: the patch applies with the
//! real tools (`git apply --check`, `patch -p1 --dry-run`), the proof shows
//! every targeted finding passing and no new failure, only rules whose
//! remedy is `none` stay unfixable, fixing the patched copy prints an empty
//! patch, and the patched files keep their comments, order and spelling.

use crate::common::cli::says;
use crate::common::cli::{self, copy_tree as copy};
use crate::common::patch;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::audit;
use driftaudit::unstable::fix::{self, FixOptions, Plan, Prefer};
use driftaudit::unstable::policy::{PolicySet, Remedy};

fn hosts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cli::testdata("hosts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn host(name: &str) -> PathBuf {
    cli::testdata("hosts").join(name)
}

fn plan(dir: &Path, opts: &FixOptions) -> Plan {
    fix::plan(&audit::builtin(), Some(dir), opts).unwrap()
}

/// `git apply --check` and `patch -p1 --dry-run` accept the patch in a copy
/// of the snapshot; then `patch -p1` applies it there. `None` after a skip
/// for a missing tool.
fn apply(dir: &Path, patch: &str) -> Option<tempfile::TempDir> {
    patch::applies(dir, patch, &["--unsafe-paths"], false)
}

#[test]
fn every_test_host_with_failures_gets_a_patch_the_tools_accept_and_a_passing_proof() {
    let set = audit::builtin();
    let mut fixed_rules = std::collections::BTreeSet::new();
    for dir in hosts() {
        let p = plan(&dir, &FixOptions::default());
        let proof = p.proof.as_ref().expect("verified by default");
        assert!(
            proof.new_failures.is_empty(),
            "{}: the plan breaks {:?}",
            dir.display(),
            proof.new_failures
        );
        assert!(
            proof.still_failing.is_empty(),
            "{}: planned but still failing {:?}",
            dir.display(),
            proof.still_failing
        );
        // only rules whose remedy is `none` are left, and changes held as
        // a decision because their precondition fails on this host
        for u in &p.unfixable {
            let rule = set.rule_or_alias(&u.rule).unwrap();
            let held = rule.requires.is_some() && u.reason.starts_with("needs a decision: ");
            // a key this kernel lacks (no Yama on most test hosts) is never planned
            let no_key = u.reason.starts_with("the running kernel has no `");
            assert!(
                held || no_key || matches!(rule.remedy, Some(Remedy::None { .. })),
                "{}: {} {} not fixed: {}",
                dir.display(),
                u.rule,
                u.subject,
                u.reason
            );
        }
        fixed_rules.extend(
            p.fixes
                .iter()
                .flat_map(|f| std::iter::once(f.rule.clone()).chain(f.alias.clone())),
        );
        if !p.patch.is_empty() {
            apply(&dir, &p.patch);
        }
    }
    // the hosts exercise every kind of edit
    for r in [
        "linux.tcp-tw-recycle",
        "sysctl.persisted-drift",
        "mysql.config-runtime-drift",
        "mysql.warm-restart-dump",
        "mysql.pool-too-small-for-data",
        "zimbra.buffer-pool-fits-db",
        "zimbra.buffer-pool-cap",
        "zimbra.heap-sized-for-ram",
        "storage.noatime-mysql-fstab",
        "storage.fstab-live-drift",
    ] {
        assert!(fixed_rules.contains(r), "no host shows a fix of {r}");
    }
}

/// Each test host with a patch, its plan and a patched copy (none when a
/// patch tool is missing).
fn patched_hosts() -> Vec<(PathBuf, Plan, tempfile::TempDir)> {
    let mut out = Vec::new();
    for dir in hosts() {
        let p = plan(&dir, &FixOptions::default());
        if p.patch.is_empty() {
            continue;
        }
        let Some(patched) = apply(&dir, &p.patch) else {
            return Vec::new();
        };
        out.push((dir, p, patched));
    }
    out
}

#[test]
fn fixing_the_patched_snapshot_prints_an_empty_patch() {
    for (dir, _, patched) in patched_hosts() {
        let again = plan(patched.path(), &FixOptions::default());
        assert_eq!(again.patch, "", "{}: second patch", dir.display());
    }
}

#[test]
fn patched_files_keep_their_comments_and_order() {
    for (dir, p, patched) in patched_hosts() {
        for line in p.patch.lines().filter(|l| l.starts_with("--- a/")) {
            let rel = &line["--- a/".len()..];
            let before = std::fs::read_to_string(dir.join(rel)).unwrap();
            let after = std::fs::read_to_string(patched.path().join(rel)).unwrap();
            // every comment line survives, in order
            let mut rest = after.lines();
            for c in before.lines().filter(|l| l.trim_start().starts_with('#')) {
                assert!(
                    rest.any(|l| l == c),
                    "{}: {rel} lost or moved comment `{c}`",
                    dir.display()
                );
            }
            // at most as many lines removed as the patch says, none reordered
            let removed = p
                .patch
                .lines()
                .filter(|l| l.starts_with('-') && !l.starts_with("---"))
                .count();
            assert!(before.lines().count() <= after.lines().count() + removed);
        }
    }
}

#[test]
fn nat_story_edits_the_winning_line_and_adds_a_drop_in_for_the_rest() {
    let p = plan(&host("nat-story"), &FixOptions::default());
    says(
        &p.patch,
        "--- a/etc/sysctl.d/60-perf.conf\n+++ b/etc/sysctl.d/60-perf.conf\n",
    );
    assert!(p
        .patch
        .contains("-net.ipv4.tcp_tw_recycle = 1\n+net.ipv4.tcp_tw_recycle = 0\n"));
    // a key no file sets goes to a drop-in of our own, never to /usr
    assert!(p.patch.contains("+++ b/etc/sysctl.d/99-driftaudit.conf\n"));
    assert!(p.patch.contains("+kernel.unprivileged_bpf_disabled = 1\n"));
    // (a comment may name the vendor file the drop-in sorts after)
    assert!(
        !p.patch.contains("--- a/usr/lib") && !p.patch.contains("+++ b/usr/lib"),
        "{}",
        p.patch
    );
    let script = p.script();
    says(&script, "\nsysctl -w net.ipv4.tcp_tw_recycle=0\n");
    // the drift rule, --prefer configured: apply the file's value now
    says(&script, "\nsysctl -w net.core.somaxconn=4096\n");
    assert_eq!(p.exit_code(), 0);
}

#[test]
fn prefer_running_writes_the_running_value_into_the_file_that_wins() {
    let opts = FixOptions {
        prefer: Prefer::Running,
        only: vec![glob::Pattern::new("sysctl.persisted-drift").unwrap()],
        ..FixOptions::default()
    };
    let p = plan(&host("nat-story"), &opts);
    says(
        &p.patch,
        "-net.core.somaxconn = 4096\n+net.core.somaxconn = 128\n",
    );
    assert!(p.runtime.is_empty(), "{:?}", p.runtime);
    assert!(p.proof.as_ref().unwrap().passed());
}

#[test]
fn sysctl_conf_is_edited_not_its_99_sysctl_conf_link() {
    let p = plan(&host("sos-centos7-mariadb"), &FixOptions::default());
    assert!(p.patch.contains("--- a/etc/sysctl.conf\n"), "{}", p.patch);
    assert!(!p.patch.contains("99-sysctl.conf"), "{}", p.patch);
}

#[test]
fn option_files_keep_their_spelling_and_zimbra_my_cnf_its_alignment() {
    let p = plan(&host("sos-centos7-mariadb"), &FixOptions::default());
    // `innodb_buffer_pool_size=1G` (no blanks, G suffix) stays that style
    says(
        &p.patch,
        "-innodb_buffer_pool_size=1G\n+innodb_buffer_pool_size=10G\n",
    );
    let p = plan(&host("zimbra-khimki-asfound"), &FixOptions::default());
    assert!(
        p.patch.contains(
            "-innodb_buffer_pool_size        = 2147483648\n+innodb_buffer_pool_size        = 6319014912\n"
        ),
        "{}",
        p.patch
    );
}

#[test]
fn zimbra_localconfig_is_never_patched_but_changed_by_zmlocalconfig_as_zimbra() {
    for name in [
        "zimbra-khimki-asfound",
        "zimbra-khimki-12g",
        "zimbra-zmlocalconfig-only",
    ] {
        let p = plan(&host(name), &FixOptions::default());
        assert!(!p.patch.contains("localconfig"), "{name}: {}", p.patch);
        let script = p.script();
        assert!(
            script.contains("\nsu - zimbra -c 'zmlocalconfig -e mysql_memory_percent=25'\n"),
            "{name}: {script}"
        );
        assert!(
            script.contains("\nsu - zimbra -c 'zmlocalconfig -e mailboxd_java_heap_size="),
            "{name}: {script}"
        );
        // restarts are listed, commented out
        says(&script, "\n# su - zimbra -c 'mysql.server restart'\n");
        assert!(
            p.notes.iter().any(|n| n.contains("generated by zmmycnf")),
            "{:?}",
            p.notes
        );
        assert_eq!(
            p.exit_code(),
            1,
            "{name}: the rotational disk rules stay unfixable"
        );
    }
}

#[test]
fn fstab_options_change_and_a_remount_follows() {
    let p = plan(&host("zimbra-storage-nodirs"), &FixOptions::default());
    assert!(p.patch.contains("+++ b/etc/fstab\n"), "{}", p.patch);
    assert!(p.patch.contains("noatime"), "{}", p.patch);
    assert!(p
        .script()
        .contains("\nmount -o remount,noatime /opt/zimbra/index\n"));
}

#[test]
fn no_verify_skips_the_proof() {
    let opts = FixOptions {
        no_verify: true,
        ..FixOptions::default()
    };
    let p = plan(&host("nat-story"), &opts);
    assert!(p.proof.is_none());
    assert!(p.summary().contains("proof: skipped (--no-verify)"));
    assert!(p.patch.contains("+net.ipv4.tcp_tw_recycle = 0\n"));
}

#[test]
fn two_rules_wanting_different_values_give_one_choice_with_both_reasons() {
    let mut set = audit::builtin();
    set.add_str(
        "mine.yaml",
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.low\n    title: t\n    severity: low\n    setting: sysctl.net.core.somaxconn\n    expect: { equals: 512 }\n    why: w\n    fix: f\n    references: []\n\
         \x20 - id: mine.high\n    title: t\n    severity: high\n    setting: sysctl.net.core.somaxconn\n    expect: { equals: 8192 }\n    why: w\n    fix: f\n    references: []\n",
    )
    .unwrap();
    let opts = FixOptions {
        only: vec![glob::Pattern::new("mine.*").unwrap()],
        ..FixOptions::default()
    };
    let p = fix::plan(&set, Some(&host("nat-story")), &opts).unwrap();
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("conflict") && n.contains("mine.low") && n.contains("mine.high")),
        "{:?}",
        p.notes
    );
    assert!(
        p.patch.contains("+net.core.somaxconn = 8192\n"),
        "{}\n{}",
        p.patch,
        p.summary()
    );
    assert!(p.fixes.iter().any(|f| f.rule == "mine.high"));
    assert!(
        p.unfixable.iter().any(|u| u.rule == "mine.low"),
        "{:?}",
        p.unfixable
    );
    assert_eq!(p.exit_code(), 1);
}

#[test]
fn the_json_plan_has_its_schema_and_fields() {
    let p = plan(&host("nat-story"), &FixOptions::default());
    let v: serde_json::Value = serde_json::from_str(&p.to_json()).unwrap();
    assert_eq!(v["schema"], "driftaudit.fix/1");
    assert_eq!(v["patch"].as_str().unwrap(), p.patch);
    let step = &v["runtime"][0];
    assert!(
        step["command"].is_string()
            && step["fixes"].is_array()
            && step["needs_restart"].is_boolean()
    );
    let f = &v["fixes"][0];
    for k in ["rule", "subject", "before", "after"] {
        assert!(f[k].is_string(), "{k}: {f}");
    }
    assert!(v["unfixable"].is_array());
}

#[test]
fn the_cli_prints_the_patch_writes_the_script_and_exits_by_the_plan() {
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("steps.sh");
    let nat = cli::host("nat-story");
    let fix_nat = [
        "fix",
        "--snapshot",
        &nat,
        "--runtime",
        script.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = cli::run(&fix_nat);
    assert_eq!(code, 0, "{stderr}");
    crate::common::cli::starts(&stdout, "--- a/etc/sysctl.d/60-perf.conf\n");
    says(
        &stderr,
        "fixes linux.tcp-tw-recycle net.ipv4.tcp_tw_recycle: ",
    );
    // the script is valid sh
    let ok = Command::new("sh")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    // an existing --runtime file is never overwritten
    assert_eq!(cli::run(&fix_nat).0, 2);
    // unfixable findings: exit 1
    let (code, _, stderr) = cli::run(&["fix", "--snapshot", &cli::host("zimbra-storage-before")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("cannot fix storage.on-rotational (alias storage.db-on-rotational)"));
    // usage error: exit 2
    assert_eq!(cli::run(&["fix", "--prefer", "sideways"]).0, 2);
}

/// The built-in policies and the policy `yaml` as `mine.yaml`.
pub(crate) fn with_policy(yaml: &str) -> PolicySet {
    let mut set = audit::builtin();
    set.add_str("mine.yaml", yaml).unwrap();
    set
}

/// Fix only the rules matching `g`.
pub(crate) fn only(g: &str) -> FixOptions {
    FixOptions {
        only: vec![glob::Pattern::new(g).unwrap()],
        ..FixOptions::default()
    }
}

#[test]
fn a_value_from_a_vendor_file_gets_a_drop_in_that_sorts_after_it_and_usr_is_never_edited() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.sysrq\n    title: t\n    severity: low\n    setting: sysctl.kernel.sysrq\n    expect: { equals: 0 }\n    why: w\n    fix: f\n    references: []\n",
    );
    let p = fix::plan(&set, Some(&host("nat-story")), &only("mine.*")).unwrap();
    assert!(
        !p.patch.contains("+++ b/usr/") && !p.patch.contains("+++ b/lib/"),
        "{}",
        p.patch
    );
    says(&p.patch, "+++ b/etc/sysctl.d/99-driftaudit.conf\n");
    says(&p.patch, "/usr/lib/sysctl.d/50-default.conf:");
    assert!(p.patch.contains("+kernel.sysrq = 0\n"));
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
}

#[test]
fn a_stale_line_is_deleted_on_a_kernel_that_removed_the_key() {
    let t = copy(&host("nat-story"));
    crate::common::tree::file(t.path(), "proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
    let _ = std::fs::remove_file(t.path().join("proc/sys/net/ipv4/tcp_tw_recycle"));
    let p = plan(t.path(), &only("linux.tcp-tw-recycle-stale-line"));
    says(&p.patch, "-net.ipv4.tcp_tw_recycle = 1\n");
    assert!(!p.patch.contains("+net.ipv4.tcp_tw_recycle"), "{}", p.patch);
    assert!(p.runtime.is_empty());
    assert_eq!(p.exit_code(), 0, "{}", p.summary());
}

#[test]
fn a_missing_option_is_added_to_the_server_group_of_the_file_read_last() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.packet\n    title: t\n    severity: low\n    assert: \"default(mycnf_effective.max_allowed_packet, 0) >= 67108864\"\n    remedy: { set: mycnf_effective.max_allowed_packet, to: 64M }\n    why: w\n    fix: f\n    references: []\n",
    );
    let dir = host("mysql-includedir-override");
    let p = fix::plan(&set, Some(&dir), &only("mine.*")).unwrap();
    says(&p.patch, "+max_allowed_packet = 64M\n");
    let h = driftaudit::Host::snapshot(&dir).unwrap();
    let r = driftaudit::Resolver::new(&h);
    let last = r.option("max_allowed_packet").last_file.unwrap();
    assert!(
        p.patch.contains(&format!("+++ b{}\n", last.path)),
        "{} not in {}",
        last.path,
        p.patch
    );
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
}

#[test]
fn remove_deletes_every_line_the_server_reads_for_the_option_whatever_its_spelling() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.no-query-cache\n    title: t\n    severity: low\n    setting: mycnf.query_cache_size\n    expect: { absent: true }\n    remedy: { remove: mycnf.query_cache_size }\n    why: w\n    fix: f\n    references: []\n",
    );
    let t = copy(&host("mysql-warmup-story"));
    let cnf = t.path().join("etc/mysql/conf.d/sysbench.cnf");
    let mut text = std::fs::read_to_string(&cnf).unwrap();
    text.push_str("loose-query-cache-size = 32M\n");
    std::fs::write(&cnf, text).unwrap();
    let p = fix::plan(&set, Some(t.path()), &only("mine.*")).unwrap();
    // the winner (loose- spelling, read last) and the line that would then win
    says(&p.patch, "-loose-query-cache-size = 32M\n");
    says(&p.patch, "-query_cache_size        = 16M\n");
    assert!(!p.patch.contains("\n+query_cache"), "{}", p.patch);
    assert!(
        p.runtime.iter().any(
            |s| s.command == "mysql -e 'SET GLOBAL query_cache_size = DEFAULT'" && !s.needs_restart
        ),
        "{:?}",
        p.runtime
    );
    assert_eq!(p.exit_code(), 0, "{}", p.summary());
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
    if let Some(done) = apply(t.path(), &p.patch) {
        let again = fix::plan(&set, Some(done.path()), &only("mine.*")).unwrap();
        assert!(again.patch.is_empty(), "{}", again.patch);
    }
}

#[test]
fn remove_on_zimbra_localconfig_is_zmlocalconfig_u_as_zimbra_never_a_patch() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.no-probe\n    title: t\n    severity: low\n    setting: localconfig.site_probe_flag\n    expect: { absent: true }\n    remedy: { remove: localconfig.site_probe_flag }\n    why: w\n    fix: f\n    references: []\n",
    );
    // a key the site added: without it Zimbra has no value at all (a key
    // Zimbra knows falls back to its built-in default instead)
    let t = copy(&host("zimbra-khimki-12g"));
    crate::common::tree::replace_in(
        &t.path().join("opt/zimbra/conf/localconfig.xml"),
        "</localconfig>",
        "  <key name=\"site_probe_flag\">\n    <value>1</value>\n  </key>\n</localconfig>",
    );
    let p = fix::plan(&set, Some(t.path()), &only("mine.*")).unwrap();
    assert!(p.patch.is_empty(), "{}", p.patch);
    assert_eq!(
        p.runtime
            .iter()
            .map(|s| s.command.as_str())
            .collect::<Vec<_>>(),
        ["su - zimbra -c 'zmlocalconfig -u site_probe_flag'"]
    );
    assert_eq!(p.exit_code(), 0, "{}", p.summary());
    assert!(p.proof.as_ref().unwrap().passed(), "{}", p.summary());
    assert!(
        p.script()
            .contains("# fixes mine.no-probe site_probe_flag\nsu - zimbra -c 'zmlocalconfig -u site_probe_flag'\n"),
        "{}",
        p.script()
    );
}

#[test]
fn the_proof_applies_the_printed_patch_so_a_corrupted_patch_text_fails_it() {
    // an added line with the wrong value: the patch applies, the finding
    // stays failing
    fn wrong_value(p: &str) -> String {
        p.replace(
            "+kernel.unprivileged_bpf_disabled = 1\n",
            "+kernel.unprivileged_bpf_disabled = 0\n",
        )
    }
    // a context line that is not in the file: the patch does not apply
    fn bad_context(p: &str) -> String {
        let i = p.find("\n ").expect("a context line") + 2;
        format!("{}X{}", &p[..i], &p[i..])
    }
    let dir = host("nat-story");
    let tampered = |tamper: fn(&str) -> String| {
        let opts = FixOptions {
            tamper: Some(tamper),
            ..FixOptions::default()
        };
        plan(&dir, &opts)
    };
    let good = plan(&dir, &FixOptions::default());
    assert!(good.proof.as_ref().unwrap().passed(), "{}", good.summary());
    assert!(good
        .patch
        .contains("+kernel.unprivileged_bpf_disabled = 1\n"));

    let p = tampered(wrong_value);
    let proof = p.proof.as_ref().unwrap();
    assert!(!proof.passed());
    // the file now says 0 where the simulated `sysctl -w` made it 1
    assert!(
        proof
            .new_failures
            .iter()
            .chain(&proof.still_failing)
            .any(|u| u.subject.contains("kernel.unprivileged_bpf_disabled")),
        "{}",
        p.summary()
    );
    assert_eq!(p.exit_code(), 1);

    let p = tampered(bad_context);
    let proof = p.proof.as_ref().unwrap();
    let e = proof
        .patch_error
        .as_deref()
        .unwrap_or_else(|| panic!("{}", p.summary()));
    assert!(e.contains("does not apply"), "{e}");
    assert!(
        p.summary()
            .contains("proof: the printed patch does not apply: "),
        "{}",
        p.summary()
    );
    assert_eq!(p.exit_code(), 1);
}

/// Whether a change runs now or waits for a restart is the host's server
/// version's: innodb_log_buffer_size is dynamic in MySQL 8.0 (its
/// documented table) and read only at start in 5.7, so the same fix is
/// `SET GLOBAL` on the one and a commented restart on the other.
#[test]
fn set_global_or_restart_follows_the_documented_table_of_the_hosts_server_version() {
    let set = with_policy(
        "policy: mine\ntitle: Mine\nrules:\n\
         \x20 - id: mine.log-buffer\n    title: t\n    severity: low\n    assert: \"default(mycnf_effective.innodb_log_buffer_size, 0) >= 33554432\"\n    remedy: { set: mycnf_effective.innodb_log_buffer_size, to: 32M }\n    why: w\n    fix: f\n    references: []\n",
    );
    let t = copy(&host("mysql-healthy"));
    let capture = t.path().join("captures/mysql-variables.tsv");
    let text = std::fs::read_to_string(&capture).unwrap();
    assert!(
        text.contains("\nversion\t8.0.36-"),
        "the host runs MySQL 8.0"
    );
    let now = fix::plan(&set, Some(t.path()), &only("mine.*")).unwrap();
    says(&now.patch, "+innodb_log_buffer_size = 32M\n");
    let set_global = |p: &Plan| {
        p.runtime.iter().any(|s| {
            s.command == "mysql -e 'SET GLOBAL innodb_log_buffer_size = 33554432'"
                && !s.needs_restart
        })
    };
    let restart = |p: &Plan| {
        p.runtime
            .iter()
            .any(|s| s.needs_restart && s.command.contains("systemctl restart"))
    };
    assert!(set_global(&now) && !restart(&now), "{:?}", now.runtime);
    std::fs::write(
        &capture,
        text.replace("\nversion\t8.0.36-", "\nversion\t5.7.44-"),
    )
    .unwrap();
    let later = fix::plan(&set, Some(t.path()), &only("mine.*")).unwrap();
    says(&later.patch, "+innodb_log_buffer_size = 32M\n");
    assert!(
        restart(&later) && !set_global(&later),
        "{:?}",
        later.runtime
    );
}
