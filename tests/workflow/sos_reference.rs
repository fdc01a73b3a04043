//! Issue 31, snapshots written by sos: a real `sos report` of this machine
//! (with MariaDB installed, as CI's is) audited beside the live check and a
//! driftaudit snapshot of the same machine. Before, a Debian sosreport of a
//! host with MariaDB reported MySQL as "not detected" and its rules as "did
//! not apply": sos's mysql plugin copies only /etc/mysql/conf.d/mysql* there.
//! Now the report's verdict for every rule is the live one, or `unknown`
//! naming what the report lacks; never a skip where the live host applies.

use crate::common;
use crate::common::cli::says;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::audit;
use driftaudit::unstable::host::Host;
use driftaudit::unstable::report::{Finding, Status};

/// rule -> the statuses of its findings (subjects differ between a host
/// where a setting is known and one where it is not).
fn verdicts(f: &[Finding]) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for x in f.iter().filter(|x| x.rule != "driftaudit.input") {
        out.entry(x.rule.clone())
            .or_default()
            .insert(format!("{:?}", x.status));
    }
    out
}

/// sos's plugins for what driftaudit reads (kernel: sysctl -a, uname;
/// mysql; filesys: dumpe2fs, mounts; block; host; dpkg; memory; process;
/// systemd: the unit files and their enablement).
fn sos_report(sos: &Path, out: &Path) -> PathBuf {
    common::cli::ok(
        Command::new(sos)
            .args(["report", "--batch", "--build", "--quiet", "-o"])
            .arg("kernel,mysql,filesys,block,host,dpkg,memory,process,systemd")
            .arg("--tmp-dir")
            .arg(out),
        "sos report",
    );
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.is_dir()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("sosreport-"))
        })
        .expect("the sosreport build tree")
}

#[test]
fn a_real_sosreport_gives_the_live_verdicts_or_unknown_naming_what_it_lacks() {
    if !rustix::process::geteuid().is_root() {
        common::skip("a real sos report", "sos report needs root");
        return;
    }
    let Some(sos) = common::tool("sos", "sosreport") else {
        return;
    };
    if !Path::new("/etc/mysql/my.cnf").exists() && !Path::new("/etc/my.cnf").exists() {
        common::skip(
            "a sosreport of a MySQL host",
            "needs mariadb-server installed",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let report = sos_report(&sos, tmp.path());
    let snap = tmp.path().join("snap");
    let o = Command::new(env!("CARGO_BIN_EXE_driftaudit"))
        .args(["snapshot", "--out"])
        .arg(&snap)
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "driftaudit snapshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );

    let live_f = audit::report_of(&audit::builtin(), &Host::live()).findings;
    let sos_f = audit::report_of(&audit::builtin(), &audit::host(&report)).findings;
    let snap_f = audit::report_of(&audit::builtin(), &audit::host(&snap)).findings;
    let (live, sos_v, snap_v) = (verdicts(&live_f), verdicts(&sos_f), verdicts(&snap_f));
    let unknown: BTreeSet<String> = [format!("{:?}", Status::Unknown)].into();
    // what the report lacks, said as an unknown input finding
    let gap = |f: &[Finding], what: &str| {
        f.iter().any(|x| {
            x.rule == "driftaudit.input"
                && x.status == Status::Unknown
                && x.explanation.contains(what)
        })
    };
    let mut wrong = Vec::new();
    for (rule, want) in &live {
        for (name, got, f) in [
            ("sosreport", &sos_v, &sos_f),
            ("snapshot", &snap_v, &snap_f),
        ] {
            match got.get(rule) {
                Some(g) if g == want || *g == unknown => {}
                // the live host's unknowns from tuned's profiles: a report
                // without those profiles says so once, for every key
                Some(g)
                    if rule.starts_with("sysctl.")
                        && g.iter().all(|s| want.contains(s))
                        && gap(f, "none of tuned's profile directories") => {}
                other => wrong.push(format!("{name}: {rule}: live {want:?}, {other:?}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");

    // MySQL is present in the report (its package, du, process list) and
    // its rules say what the report lacks instead of "did not apply".
    let mysql: Vec<&Finding> = sos_f
        .iter()
        .filter(|f| f.rule.starts_with("mysql."))
        .collect();
    assert!(!mysql.is_empty());
    for f in &mysql {
        assert_ne!(f.status, Status::Skip, "{f:#?}");
        if f.status == Status::Unknown {
            says(&f.explanation, "holds none of its option files");
            says(&f.explanation, "driftaudit snapshot");
        }
    }
    // the live host and its snapshot detect MySQL from the option files;
    // the report from what it has
    let h = audit::host(&report);
    let facts =
        driftaudit::unstable::facts::gather(&h, &driftaudit::unstable::facts::Needs::default());
    let d = facts
        .detections
        .iter()
        .find(|d| format!("{:?}", d.domain) == "Mysql")
        .unwrap();
    assert!(d.detected, "{d:?}");
    assert!(
        d.sources
            .iter()
            .any(|s| s.contains("installed-debs") || s.contains("dpkg")),
        "{d:?}"
    );
}
