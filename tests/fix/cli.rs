//! `driftaudit fix` through the binary: --only, --skip, --waivers, --set,
//! --prefer running, --format json (driftaudit.fix/1), --runtime FILE, the
//! exit codes 0/1/2, and the live host (read, never changed).

use crate::common::cli;

use std::path::PathBuf;
use std::process::{Command, Output};

fn host(name: &str) -> PathBuf {
    cli::testdata("hosts").join(name)
}

fn fix(args: &[&str]) -> Output {
    cli::cmd()
        .arg("fix")
        .args(args)
        .output()
        .expect("run driftaudit fix")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(o)))
}

fn fixed_rules(v: &serde_json::Value) -> Vec<String> {
    v["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn only_and_skip_choose_the_findings_the_plan_fixes() {
    let nat = host("nat-story");
    let s = nat.to_str().unwrap();
    let all = fixed_rules(&json(&fix(&["--snapshot", s, "--format", "json"])));
    assert!(all.iter().any(|r| r == "linux.tcp-tw-recycle"), "{all:?}");
    assert!(all.iter().any(|r| r != "linux.tcp-tw-recycle"), "{all:?}");
    let o = fix(&[
        "--snapshot",
        s,
        "--only",
        "linux.tcp-tw-*",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let only = fixed_rules(&json(&o));
    assert!(
        !only.is_empty() && only.iter().all(|r| r.starts_with("linux.tcp-tw-")),
        "{only:?}"
    );
    let o = fix(&[
        "--snapshot",
        s,
        "--skip",
        "linux.tcp-tw-*",
        "--format",
        "json",
    ]);
    let skipped = fixed_rules(&json(&o));
    assert!(
        !skipped.iter().any(|r| r.starts_with("linux.tcp-tw-")),
        "{skipped:?}"
    );
    assert_eq!(skipped.len() + only.len(), all.len());
    // a glob that matches no rule is a usage error
    let o = fix(&["--snapshot", s, "--only", "nosuch.*"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn waived_findings_are_not_fixed() {
    let nat = host("nat-story");
    let (_t, w) = crate::common::tree::temp_file("w.yaml", "- rule: linux.unprivileged-bpf\n  reason: accepted for the lab (OPS-1)\n  expires: 2099-12-31\n");
    let s = nat.to_str().unwrap();
    let before = json(&fix(&["--snapshot", s, "--format", "json"]));
    assert!(fixed_rules(&before)
        .iter()
        .any(|r| r == "linux.unprivileged-bpf"));
    let w = w.to_str().unwrap();
    let o = fix(&["--snapshot", s, "--waivers", w, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert!(
        !fixed_rules(&v)
            .iter()
            .any(|r| r == "linux.unprivileged-bpf"),
        "{v}"
    );
    assert!(
        !v["patch"].as_str().unwrap().contains("unprivileged_bpf"),
        "{v}"
    );
}

#[test]
fn set_changes_the_computed_remedy() {
    let z = host("zimbra-khimki-12g");
    let s = z.to_str().unwrap();
    let cmds = |v: &serde_json::Value| -> String {
        v["runtime"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["command"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let v = json(&fix(&[
        "--snapshot",
        s,
        "--only",
        "zimbra.*",
        "--format",
        "json",
    ]));
    assert!(cmds(&v).contains("mysql_memory_percent=25"), "{}", cmds(&v));
    let o = fix(&[
        "--snapshot",
        s,
        "--only",
        "zimbra.*",
        "--set",
        "zimbra-memory.pool_ram_share=0.2",
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert!(cmds(&v).contains("mysql_memory_percent=20"), "{}", cmds(&v));
    // a parameter that does not exist is a usage error
    let o = fix(&["--snapshot", s, "--set", "zimbra-memory.nosuch=1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn prefer_running_writes_the_running_value_instead_of_applying_the_configured_one() {
    let nat = host("nat-story");
    let s = nat.to_str().unwrap();
    let conf = json(&fix(&[
        "--snapshot",
        s,
        "--only",
        "sysctl.persisted-drift",
        "--format",
        "json",
    ]));
    let run = json(&fix(&[
        "--snapshot",
        s,
        "--only",
        "sysctl.persisted-drift",
        "--prefer",
        "running",
        "--format",
        "json",
    ]));
    let steps = |v: &serde_json::Value| v["runtime"].as_array().unwrap().len();
    // configured: a runtime step and no patch; running: a patch and no step
    assert!(steps(&conf) > 0 && conf["patch"] == "", "{conf}");
    assert!(steps(&run) == 0 && run["patch"] != "", "{run}");
    assert!(
        run["patch"].as_str().unwrap().contains("somaxconn"),
        "{run}"
    );
}

#[test]
fn the_json_plan_carries_every_field_of_driftaudit_fix_1() {
    let o = fix(&[
        "--snapshot",
        host("zimbra-storage-before").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "unfixable findings: {}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(v["schema"], "driftaudit.fix/1");
    assert!(v["patch"].is_string());
    for r in v["runtime"].as_array().unwrap() {
        assert!(
            r["command"].is_string() && r["fixes"].is_array() && r["needs_restart"].is_boolean(),
            "{r}"
        );
    }
    for f in v["fixes"].as_array().unwrap() {
        for k in ["rule", "subject", "before", "after"] {
            assert!(f[k].is_string(), "{k}: {f}");
        }
    }
    let u = v["unfixable"].as_array().unwrap();
    assert!(!u.is_empty());
    for x in u {
        for k in ["rule", "subject", "reason"] {
            assert!(x[k].is_string(), "{k}: {x}");
        }
    }
    assert!(v["proof"]["new_failures"].is_array());
}

#[test]
fn runtime_writes_the_script_new_and_exit_codes_follow_the_plan() {
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("steps.sh");
    let nat = host("nat-story");
    let o = fix(&[
        "--snapshot",
        nat.to_str().unwrap(),
        "--runtime",
        script.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&script).unwrap();
    crate::common::cli::starts(&text, "#!/bin/sh\n");
    crate::common::cli::says(&text, "\nsysctl -w ");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    assert!(Command::new("sh")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap()
        .success());
    // the JSON runtime steps are the script's commands
    let v = json(&fix(&[
        "--snapshot",
        nat.to_str().unwrap(),
        "--format",
        "json",
    ]));
    for r in v["runtime"].as_array().unwrap() {
        assert!(text.contains(r["command"].as_str().unwrap()), "{r}");
    }
    // 2: a missing snapshot, a bad glob, an existing --runtime file
    assert_eq!(
        fix(&["--snapshot", "/nonexistent/snap"]).status.code(),
        Some(2)
    );
    assert_eq!(
        fix(&["--snapshot", nat.to_str().unwrap(), "--only", "["])
            .status
            .code(),
        Some(2)
    );
    let o = fix(&[
        "--snapshot",
        nat.to_str().unwrap(),
        "--runtime",
        script.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), text);
    // 0 with nothing to fix
    let clean = fix(&["--snapshot", host("clean").to_str().unwrap()]);
    assert!(
        clean.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&clean.stdout)
    );
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
}

/// Path, length, mtime and a hash of every regular file under `dir`.
fn fingerprint(dirs: &[&str]) -> Vec<(PathBuf, u64, std::time::SystemTime, u64)> {
    use std::hash::{Hash, Hasher};
    let mut v = Vec::new();
    for d in dirs {
        for e in walkdir::WalkDir::new(d)
            .follow_links(false)
            .into_iter()
            .flatten()
        {
            if !e.file_type().is_file() {
                continue;
            }
            let Ok(m) = e.metadata() else { continue };
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(e.path()).unwrap_or_default().hash(&mut h);
            v.push((
                e.path().to_path_buf(),
                m.len(),
                m.modified().unwrap(),
                h.finish(),
            ));
        }
    }
    v
}

#[test]
fn fixing_the_live_host_reads_it_and_changes_nothing_on_it() {
    let watched = [
        "/etc/sysctl.conf",
        "/etc/sysctl.d",
        "/etc/fstab",
        "/etc/mysql",
        "/etc/my.cnf",
        "/etc/my.cnf.d",
    ];
    let before = fingerprint(&watched);
    let cwd = tempfile::tempdir().unwrap();
    let script = cwd.path().join("steps.sh");
    let o = cli::cmd()
        .args(["fix", "--runtime"])
        .arg(&script)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    assert!(err.contains("proof: "), "{err}");
    let patch = String::from_utf8_lossy(&o.stdout);
    for l in patch.lines().filter(|l| l.starts_with("+++ ")) {
        assert!(l.starts_with("+++ b/"), "paths relative to the root: {l}");
    }
    assert!(script.exists());
    // only the script was written where it ran, and the host is as it was
    let here: Vec<_> = std::fs::read_dir(cwd.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(here, [std::ffi::OsString::from("steps.sh")]);
    assert_eq!(fingerprint(&watched), before);
}

/// Issue 30: `check` reported `storage.on-rotational`, `fix` on the same
/// host said "cannot fix storage.mysql-on-rotational" (the alias). Every
/// command prints the canonical id; the alias stands beside it.
#[test]
fn fix_names_findings_by_the_canonical_id_with_the_alias_beside_it() {
    let h = host("zimbra-storage-before");
    let o = fix(&["--snapshot", h.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "cannot fix storage.on-rotational (alias storage.db-on-rotational) zimbra-db, /:"
        ),
        "{err}"
    );
    assert!(
        !err.contains("cannot fix storage.db-on-rotational"),
        "{err}"
    );
    let o = fix(&["--snapshot", h.to_str().unwrap(), "--format", "json"]);
    let v = json(&o);
    let u = v["unfixable"].as_array().unwrap();
    let rot: Vec<_> = u
        .iter()
        .filter(|x| x["alias"] == "storage.db-on-rotational")
        .collect();
    assert_eq!(rot.len(), 1, "{u:?}");
    assert_eq!(rot[0]["rule"], "storage.on-rotational");
    // a fix names the rule, never an item's alias (storage.noatime-fstab is
    // a rule of its own; storage.noatime-zimbra-db an alias)
    assert!(
        fixed_rules(&v)
            .iter()
            .all(|r| !r.starts_with("storage.noatime-zimbra")),
        "{v}"
    );
    for f in v["fixes"].as_array().unwrap() {
        assert_ne!(f["rule"], f["alias"], "{f}");
    }
}
