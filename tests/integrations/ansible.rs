//! The Ansible role (integrations/ansible) against localhost with
//! `connection: local` and ansible-core from PyPI (the `.ci/run`
//! virtualenv, `$DRIFTAUDIT_CI_VENV`): it installs the binary, snapshots the
//! host as root, commits the snapshot into a git repository on the
//! controller (one directory per inventory host), audits the fleet there and
//! fails the play on findings at or above the threshold. A second run
//! reports no change and makes no commit; a run whose snapshot differs
//! commits it. Everything it writes is under a temporary directory, except
//! the package test's: `driftaudit_deb_src` installs the .deb on localhost
//! (root only) and the test removes it again with `dpkg -r`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;
use crate::common::cli::says;

/// `ansible-playbook` from the CI virtualenv, else from `PATH`; `None`
/// after a skip line (a failure under CI=true).
fn ansible_playbook() -> Option<PathBuf> {
    common::venv_program(
        "ansible-playbook",
        "`bash .ci/run` puts ansible-core in its virtualenv (DRIFTAUDIT_CI_VENV), or `pip install ansible-core`",
    )
}

struct Run {
    code: i32,
    out: String,
    changed: usize,
    failed: usize,
}

/// A second run of the playbook succeeded and changed nothing.
#[track_caller]
fn assert_changed_nothing(second: &Run) {
    assert_eq!(second.code, 0, "{}", second.out);
    assert_eq!(
        second.changed, 0,
        "second run must change nothing:\n{}",
        second.out
    );
}

fn play(ansible: &Path, t: &Path, extra: &[&str]) -> Run {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/ansible");
    let out = Command::new(ansible)
        .arg("-i")
        .arg(t.join("inventory.yml"))
        .arg(root.join("playbook.yml"))
        .args(extra)
        .env("ANSIBLE_ROLES_PATH", root.join("roles"))
        .env("ANSIBLE_HOME", t.join("ansible-home"))
        .env("ANSIBLE_LOCAL_TEMP", t.join("ansible-tmp"))
        .env("ANSIBLE_NOCOLOR", "1")
        .env("ANSIBLE_FORCE_COLOR", "0")
        .env("ANSIBLE_RETRY_FILES_ENABLED", "0")
        .env("ANSIBLE_CONFIG", t.join("no-ansible.cfg"))
        .env_remove("ANSIBLE_STDOUT_CALLBACK")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let recap = text
        .lines()
        .find(|l| l.starts_with("localhost") && l.contains(" changed="))
        .unwrap_or_else(|| panic!("no PLAY RECAP line for localhost in:\n{text}"))
        .to_string();
    let count = |key: &str| -> usize {
        recap
            .split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in `{recap}`"))
    };
    Run {
        code: out.status.code().unwrap_or(-1),
        changed: count("changed="),
        failed: count("failed="),
        out: text,
    }
}

fn commits(repo: &Path) -> Vec<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["log", "--format=%s", "--name-only"])
        .output()
        .unwrap();
    assert!(out.status.success(), "git log in {}", repo.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("driftaudit snapshot of "))
        .map(str::to_string)
        .collect()
}

#[test]
fn ansible_role_snapshots_localhost_into_git_audits_it_and_a_second_run_changes_nothing() {
    let Some(ansible) = ansible_playbook() else {
        return;
    };
    if common::program("git", "git").is_none() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    // a rule that fails on every Linux host, at `high`
    fs::write(
        t.join("always-fails.yaml"),
        "policy: ansible-test\ntitle: Ansible role test\nrules:\n  - id: test.pid-max-tiny\n    title: kernel.pid_max is below 2\n    severity: high\n    setting: sysctl.kernel.pid_max\n    expect: { max: 1 }\n    why: kernel.pid_max is {actual} ({source}).\n    fix: Nothing; this rule exists to fail.\n",
    )
    .unwrap();
    // become root through su when root already (no sudo needed, nothing asked);
    // a user's run without root snapshots without become
    let root = rustix::process::geteuid().is_root();
    let python = std::env::var_os("DRIFTAUDIT_CI_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .filter(|p| p.is_file())
        .map(|p| format!("      ansible_python_interpreter: {}\n", p.display()))
        .unwrap_or_default();
    let d = t.display();
    fs::write(
        t.join("inventory.yml"),
        format!(
            "all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_become_method: su\n{python}  vars:\n    driftaudit_binary_src: {bin}\n    driftaudit_bin: {d}/host/bin/driftaudit\n    driftaudit_remote_dir: {d}/host/scratch\n    driftaudit_fetch_dir: {d}/fetch\n    driftaudit_repo: {d}/repo\n    driftaudit_become: {root}\n    driftaudit_mysql: false\n    driftaudit_builtin_policies: false\n    driftaudit_policies: [{d}/always-fails.yaml]\n    driftaudit_fail_on: critical\n",
            bin = env!("CARGO_BIN_EXE_driftaudit"),
        ),
    )
    .unwrap();
    fs::create_dir_all(t.join("host/bin")).unwrap();
    let repo = t.join("repo");

    // 1: installs, snapshots, commits; the high failure is below `critical`
    let first = play(&ansible, t, &[]);
    assert_eq!(first.code, 0, "{}", first.out);
    assert!(first.changed >= 2, "install and commit: {}", first.out);
    assert!(t.join("host/bin/driftaudit").is_file());
    assert_eq!(commits(&repo), ["driftaudit snapshot of localhost"]);
    let snap = repo.join("localhost");
    assert!(snap.join("snapshot.json").is_file() && snap.join("captures/sysctl-a.txt").is_file());
    let meta = fs::read_to_string(snap.join("snapshot.json")).unwrap();
    // what was committed is a snapshot `check` reads like any other
    let check = common::cli::cmd()
        .args(["check", "--no-builtin", "--policy"])
        .arg(t.join("always-fails.yaml"))
        .arg("--snapshot")
        .arg(&snap)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&check.stdout).contains("FAIL test.pid-max-tiny"));

    // 2: the same host again: nothing changed, no commit, and the capture
    // time of the committed snapshot.json is kept
    assert_changed_nothing(&play(&ansible, t, &[]));
    assert_eq!(commits(&repo).len(), 1);
    assert_eq!(
        fs::read_to_string(snap.join("snapshot.json")).unwrap(),
        meta
    );
    let status = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    common::cli::silent(&status.stdout);

    // 3: the built-in policies read more files, so the snapshot changes and
    // is committed; the audit then fails the play at `high`
    let third = play(
        &ansible,
        t,
        &[
            "-e",
            r#"{"driftaudit_builtin_policies": true, "driftaudit_fail_on": "high"}"#,
        ],
    );
    assert_ne!(third.code, 0, "{}", third.out);
    assert_eq!(third.failed, 1, "{}", third.out);
    assert!(third.changed >= 1, "{}", third.out);
    says(&third.out, "findings at or above `high`");
    says(&third.out, "test.pid-max-tiny");
    assert_eq!(commits(&repo).len(), 2);
    let meta = fs::read_to_string(snap.join("snapshot.json")).unwrap();
    assert!(meta.contains("\"linux-network\""), "{meta}");
}

/// Write `t/inventory.yml`: localhost over `connection: local` (become
/// through su, the CI virtualenv's python when there is one) with `vars`
/// (YAML lines, indented four spaces).
fn write_inventory(t: &Path, vars: &str) {
    let python = std::env::var_os("DRIFTAUDIT_CI_VENV")
        .map(|v| PathBuf::from(v).join("bin/python"))
        .filter(|p| p.is_file())
        .map(|p| format!("      ansible_python_interpreter: {}\n", p.display()))
        .unwrap_or_default();
    fs::write(
        t.join("inventory.yml"),
        format!("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_become_method: su\n{python}  vars:\n{vars}"),
    )
    .unwrap();
}

/// `dpkg -r driftaudit` when dropped: the package test leaves the machine's
/// packages as it found them, also when an assertion fails half-way.
struct RemovePackageOnDrop;

impl Drop for RemovePackageOnDrop {
    fn drop(&mut self) {
        let out = Command::new("dpkg").args(["-r", "driftaudit"]).output();
        if !out.as_ref().is_ok_and(|o| o.status.success()) {
            eprintln!("dpkg -r driftaudit failed: {out:?}");
        }
    }
}

/// `dpkg-query`'s status of the driftaudit package ("install ok installed"
/// once installed), empty when dpkg knows no such package.
fn package_status() -> String {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", "driftaudit"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

#[test]
fn ansible_role_given_a_deb_installs_the_package_on_the_host_and_audits_with_it_unpacked_on_the_controller(
) {
    let _package = crate::host_package();
    let Some(ansible) = ansible_playbook() else {
        return;
    };
    if common::program("git", "git").is_none() || common::program("dpkg", "dpkg").is_none() {
        return;
    }
    if !rustix::process::geteuid().is_root() {
        common::skip(
            "needs root",
            "installs a package on localhost with apt; run the test as root",
        );
        return;
    }
    if package_status() == "install ok installed" {
        common::skip(
            "needs a machine without the driftaudit package",
            "one is installed here already and the test would remove it afterwards; dpkg -r driftaudit first",
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    let Some(deb) = common::driftaudit_deb(t) else {
        return;
    };
    fs::write(
        t.join("always-fails.yaml"),
        "policy: ansible-test\ntitle: Ansible role test\nrules:\n  - id: test.pid-max-tiny\n    title: kernel.pid_max is below 2\n    severity: high\n    setting: sysctl.kernel.pid_max\n    expect: { max: 1 }\n    why: kernel.pid_max is {actual} ({source}).\n    fix: Nothing; this rule exists to fail.\n",
    )
    .unwrap();
    let d = t.display();
    // neither driftaudit_bin nor driftaudit_controller_bin: their defaults
    // follow the package
    write_inventory(
        t,
        &format!(
            "    driftaudit_deb_src: {deb}\n    driftaudit_remote_dir: {d}/host/scratch\n    driftaudit_fetch_dir: {d}/fetch\n    driftaudit_repo: {d}/repo\n    driftaudit_become: true\n    driftaudit_mysql: false\n    driftaudit_builtin_policies: false\n    driftaudit_policies: [{d}/always-fails.yaml]\n    driftaudit_fail_on: critical\n    driftaudit_report_json: {d}/report.json\n",
            deb = deb.display(),
        ),
    );
    let _remove = RemovePackageOnDrop;

    let first = play(&ansible, t, &[]);
    assert_eq!(first.code, 0, "{}", first.out);
    assert_eq!(
        package_status(),
        "install ok installed",
        "dpkg -s driftaudit after the play:\n{}",
        first.out
    );
    assert!(Path::new("/usr/bin/driftaudit").is_file());
    let name = deb.file_name().unwrap();
    assert!(
        t.join("host/scratch").join(name).is_file(),
        "the .deb copied to the host"
    );
    // the host's snapshot, taken by /usr/bin/driftaudit, committed
    assert_eq!(
        commits(&t.join("repo")),
        ["driftaudit snapshot of localhost"]
    );
    assert!(t.join("repo/localhost/captures/sysctl-a.txt").is_file());
    // the controller's check ran with the package unpacked into the fetch dir
    assert!(t.join("fetch/package/usr/bin/driftaudit").is_file());
    let report: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(t.join("report.json")).unwrap()).unwrap();
    assert_eq!(
        report["hosts"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert!(report.to_string().contains("test.pid-max-tiny"), "{report}");

    // the same package again: nothing installed, unpacked or committed
    assert_changed_nothing(&play(&ansible, t, &[]));
    assert_eq!(commits(&t.join("repo")).len(), 1);
}

#[test]
fn ansible_role_refuses_both_a_deb_and_a_binary_before_installing_anything() {
    let Some(ansible) = ansible_playbook() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let t = t.path();
    let d = t.display();
    write_inventory(
        t,
        &format!(
            "    driftaudit_deb_src: {d}/driftaudit.deb\n    driftaudit_binary_src: {bin}\n    driftaudit_bin: {d}/host/bin/driftaudit\n    driftaudit_remote_dir: {d}/host/scratch\n    driftaudit_fetch_dir: {d}/fetch\n    driftaudit_repo: {d}/repo\n    driftaudit_become: false\n",
            bin = env!("CARGO_BIN_EXE_driftaudit"),
        ),
    );
    let run = play(&ansible, t, &[]);
    assert_ne!(run.code, 0, "{}", run.out);
    assert_eq!(run.failed, 1, "{}", run.out);
    says(&run.out, "driftaudit_deb_src");
    says(&run.out, "are both set");
    assert!(
        !t.join("host").exists() && !t.join("repo").exists(),
        "nothing done"
    );
}
