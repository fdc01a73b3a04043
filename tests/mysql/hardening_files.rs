//! mysqlsec.option-file-permissions on real files: option files with a
//! password at modes 0644, 0640 and 0600 planted at their real paths in a
//! private mount namespace (`unshare -m`, tmpfs over /etc/mysql and /root),
//! judged live from `stat`, and the same tree as a snapshot whose
//! `captures/file-modes.txt` is the real `stat -c '%a %n'` output: the same
//! verdicts, and never the copied files' own modes; `driftaudit snapshot`
//! of that host writes the capture itself.

use std::collections::BTreeMap;
use std::path::Path;

use driftaudit::unstable::engine;
use driftaudit::unstable::report::Status;

use crate::common;
use crate::common::audit;
use crate::common::cli::says;
use crate::common::tree;

const RULE: &str = "mysqlsec.option-file-permissions";
const MY_CNF: &str =
    "[mysqld]\ndatadir = /var/lib/mysql\n[client]\nuser = root\npassword = s3cret\n";
const DEBIAN_CNF: &str = "[client]\nhost = localhost\nuser = debian-sys-maint\npassword = s3cret\n";
const ROOT_CNF: &str = "[client]\npassword = s3cret\n";

fn status(s: &str) -> Status {
    match s {
        "pass" => Status::Pass,
        "fail" => Status::Fail,
        "unknown" => Status::Unknown,
        "skip" => Status::Skip,
        other => panic!("status {other}"),
    }
}

/// The rule's verdict per file, from a snapshot tree.
fn snapshot_verdicts(root: &Path) -> BTreeMap<String, Status> {
    let host = audit::host(root);
    let p = audit::only(&[RULE]);
    engine::audit_host(&p, &host)
        .findings
        .iter()
        .filter(|f| f.rule == RULE)
        .map(|f| (f.subject[0].clone(), f.status))
        .collect()
}

/// Empty /etc/mysql and /root and no /etc/my.cnf, in the namespace.
const PRIVATE_MYSQL: &str = "mount -t tmpfs tmpfs /etc/mysql
mount -t tmpfs tmpfs /root
[ ! -e /etc/my.cnf ] || mount --bind /dev/null /etc/my.cnf
";

/// Run `script` in a private mount namespace (`$DRIFTAUDIT` is the binary
/// under test), failing the test with its stderr when it fails.
fn in_namespace(script: &str) {
    let o = common::in_private_mounts(Path::new(common::cli::BIN), script);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn password_files_modes_judged_live_from_stat_and_in_a_snapshot_from_the_stat_capture() {
    let unshared = common::can_unshare("option file modes at their real paths");
    let Some(stat) = unshared
        .then(|| common::tool("stat", "coreutils"))
        .flatten()
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    let script = format!(
        r#"{PRIVATE_MYSQL}printf '{my}' > /etc/mysql/my.cnf; chmod 644 /etc/mysql/my.cnf
printf '{deb}' > /etc/mysql/debian.cnf; chmod 640 /etc/mysql/debian.cnf
printf '{root}' > /root/.my.cnf; chmod 600 /root/.my.cnf
{stat} -c '%a %n' /etc/mysql/my.cnf /etc/mysql/debian.cnf /root/.my.cnf > {out}/file-modes.txt
"$DRIFTAUDIT" check --only {RULE} --format json > {out}/live.json || true
"$DRIFTAUDIT" snapshot --out {out}/taken > /dev/null
"#,
        my = MY_CNF.replace('\n', "\\n"),
        deb = DEBIAN_CNF.replace('\n', "\\n"),
        root = ROOT_CNF.replace('\n', "\\n"),
        stat = stat.display(),
        out = out.display(),
    );
    in_namespace(&script);
    let modes = std::fs::read_to_string(out.join("file-modes.txt")).unwrap();
    assert_eq!(
        modes,
        "644 /etc/mysql/my.cnf\n640 /etc/mysql/debian.cnf\n600 /root/.my.cnf\n"
    );

    // live: the verdicts from the files' own stat
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("live.json")).unwrap()).unwrap();
    let live: BTreeMap<String, Status> = live["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == RULE)
        .map(|f| {
            (
                f["subject"][0].as_str().unwrap().to_string(),
                status(f["status"].as_str().unwrap()),
            )
        })
        .collect();
    let expected: BTreeMap<String, Status> = [
        ("/etc/mysql/debian.cnf", Status::Pass),
        ("/etc/mysql/my.cnf", Status::Fail),
        ("/root/.my.cnf", Status::Pass),
    ]
    .into_iter()
    .map(|(p, s)| (p.to_string(), s))
    .collect();
    assert_eq!(live, expected, "live host");

    // snapshot: the copies are all 0600 (as a umask-077 copy would make
    // them), the capture is the real stat output: the capture decides
    let snap = out.join("snap");
    tree::put_mode(&snap, "/etc/mysql/my.cnf", MY_CNF, 0o600);
    tree::put_mode(&snap, "/etc/mysql/debian.cnf", DEBIAN_CNF, 0o600);
    tree::put_mode(&snap, "/root/.my.cnf", ROOT_CNF, 0o600);
    tree::put_mode(&snap, "/captures/file-modes.txt", &modes, 0o600);
    assert_eq!(
        snapshot_verdicts(&snap),
        expected,
        "snapshot with the stat capture"
    );

    // `driftaudit snapshot` of the live host records the bits it read
    let taken = std::fs::read_to_string(out.join("taken/captures/file-modes.txt")).unwrap();
    says(&taken, "644 /etc/mysql/my.cnf\n");
    says(&taken, "600 /root/.my.cnf\n");
    assert_eq!(
        snapshot_verdicts(&out.join("taken")),
        expected,
        "driftaudit's own snapshot"
    );

    // without the capture a snapshot cannot tell, whatever its copies' modes
    std::fs::remove_file(snap.join("captures/file-modes.txt")).unwrap();
    tree::put_mode(&snap, "/etc/mysql/my.cnf", MY_CNF, 0o644);
    let unknown: BTreeMap<String, Status> = expected
        .keys()
        .map(|k| (k.clone(), Status::Unknown))
        .collect();
    assert_eq!(
        snapshot_verdicts(&snap),
        unknown,
        "snapshot without the capture"
    );
}

/// The rule's single verdict in a `check --format json` output file.
fn json_verdict(path: &Path, rule: &str) -> Status {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let found: Vec<Status> = v["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| status(f["status"].as_str().unwrap()))
        .collect();
    assert_eq!(found.len(), 1, "{path:?}: {found:?}");
    found[0]
}

fn snapshot_verdict(root: &Path, rule: &str) -> Status {
    let host = audit::host(root);
    let p = audit::only(&[rule]);
    let found: Vec<Status> = engine::audit_host(&p, &host)
        .findings
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.status)
        .collect();
    assert_eq!(found.len(), 1, "{root:?}: {found:?}");
    found[0]
}

#[test]
fn root_history_linked_to_dev_null_or_absent_passes_live_and_in_driftaudits_snapshot() {
    if !common::can_unshare("root's ~/.mysql_history at its real path") {
        return;
    }
    const HIST: &str = "mysqlsec.root-command-history";
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    let script = format!(
        r#"{PRIVATE_MYSQL}printf '[mysqld]\ndatadir = /var/lib/mysql\n' > /etc/mysql/my.cnf
for state in link file absent; do
  rm -f /root/.mysql_history
  case $state in
    link) ln -s /dev/null /root/.mysql_history ;;
    file) printf 'SELECT 1;\n' > /root/.mysql_history ;;
  esac
  "$DRIFTAUDIT" check --only {HIST} --format json > {out}/$state.json || true
  "$DRIFTAUDIT" snapshot --out {out}/$state > /dev/null
done
"#,
        out = out.display(),
    );
    in_namespace(&script);
    for (state, expected) in [
        ("link", Status::Pass),
        ("file", Status::Fail),
        ("absent", Status::Pass),
    ] {
        assert_eq!(
            json_verdict(&out.join(format!("{state}.json")), HIST),
            expected,
            "live, {state}"
        );
        assert_eq!(
            snapshot_verdict(&out.join(state), HIST),
            expected,
            "driftaudit's snapshot, {state}"
        );
    }
    // the history is probed, never copied: the snapshot's file is empty
    assert_eq!(
        std::fs::read_to_string(out.join("file/root/.mysql_history")).unwrap(),
        ""
    );
}
