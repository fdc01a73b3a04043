//! `expect: {equals: V, present: true}`: a missing setting fails instead of
//! skipping (what `driftaudit baseline` pins need: a line deleted from
//! sysctl.d is drift).

use std::path::Path;
use std::process::Command;

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run driftaudit");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn present_beside_equals_fails_a_missing_setting_instead_of_skipping() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("p.yaml"),
        "policy: site\ntitle: Site\nrules:\n  - id: site.swappiness\n    title: Swappiness pinned\n    severity: low\n    setting: sysctl_boot.vm.swappiness\n    expect: { equals: 10, present: true }\n    why: \"{setting} is {actual}, wanted {expected}\"\n    fix: set it\n    references: []\n",
    )
    .unwrap();
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
