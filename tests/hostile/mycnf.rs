//! Hostile option files (issue 13): the resolver's work is bounded by the
//! input, never by how often includes reach a file. Each test asserts a bound
//! on work (bytes read and processed, files visited, options, evidence,
//! issues), not on time; benches/parsers.rs measures lines per second.

use std::path::Path;

use crate::common::can_unshare;

use crate::common::audit;
use driftaudit::unstable::facts::mysql::{
    effective_options, server_groups, OptionSet, MAX_BYTES_PROCESSED, MAX_FILES_READ,
};
use driftaudit::unstable::facts::{Entry, FileIssue};
use driftaudit::unstable::host::Host;

fn resolve(main: &Path) -> (OptionSet, Vec<FileIssue>) {
    let mut issues = Vec::new();
    let set = effective_options(
        &Host::live(),
        &[main.to_str().unwrap()],
        &server_groups(Some("10.11.19-MariaDB")),
        &mut issues,
    );
    (set, issues)
}

#[test]
fn one_option_repeated_40000_times_is_linear_work() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::from("[mysqld]\n");
    for i in 0..40_000 {
        text.push_str(&format!("max_connections = {}\n", 100 + i));
    }
    let main = tmp.path().join("my.cnf");
    std::fs::write(&main, &text).unwrap();
    let (set, issues) = resolve(&main);
    assert_eq!(set.argv.len(), 40_000);
    assert_eq!(set.bytes_read, text.len() as u64);
    let Some(Entry::Set(s)) = set.namespace.get("max_connections") else {
        panic!("max_connections not set");
    };
    assert_eq!(s.raw, "40099");
    assert_eq!(s.evidence[0].line, Some(40_001));
    // The winner and the most recent overridden lines, not 40,000 of them.
    assert!(
        s.evidence.len() <= 17,
        "{} pieces of evidence",
        s.evidence.len()
    );
    assert_eq!(s.evidence[1].line, Some(40_000));
    // "set again" once for the file, not once per line.
    let again = issues
        .iter()
        .filter(|i| i.message.contains("set again"))
        .count();
    assert_eq!(again, 1, "{issues:#?}");
}

/// `dir/sub/a.cnf` and `b.cnf` (each `text(its name, the directory)`, which
/// includes the directory again) and `dir/my.cnf` including `dir/sub`;
/// `my.cnf` resolved: (options, issues, the bytes of the three files).
fn self_including(
    dir: &Path,
    sub: &str,
    text: impl Fn(&str, &str) -> String,
) -> (OptionSet, Vec<FileIssue>, u64) {
    let d = dir.join(sub);
    std::fs::create_dir_all(&d).unwrap();
    for name in ["a.cnf", "b.cnf"] {
        std::fs::write(d.join(name), text(name, &d.display().to_string())).unwrap();
    }
    let main = dir.join("my.cnf");
    std::fs::write(&main, format!("[mysqld]\n!includedir {}\n", d.display())).unwrap();
    let (set, issues) = resolve(&main);
    let file_bytes: u64 = ["a.cnf", "b.cnf"]
        .iter()
        .map(|n| std::fs::metadata(d.join(n)).unwrap().len())
        .sum::<u64>()
        + std::fs::metadata(&main).unwrap().len();
    (set, issues, file_bytes)
}

#[test]
fn self_including_directories_read_each_file_once_within_a_byte_budget() {
    let tmp = tempfile::tempdir().unwrap();
    // Two 1 MiB files that each include their own directory: mysys follows
    // this to depth 10 (2^11 visits, 2 GiB); the issue measured 1.7 GB read.
    let pad = "#\n".repeat(1 << 19);
    let (set, issues, file_bytes) = self_including(tmp.path(), "conf.d", |name, d| {
        format!("[mysqld]\nx_{name} = 1\n!includedir {d}\n{pad}")
    });
    // Each file read from the host once.
    assert_eq!(set.bytes_read, file_bytes);
    assert!(set.bytes_processed <= MAX_BYTES_PROCESSED);
    assert!(set.files_read.len() <= MAX_FILES_READ);
    assert!(
        issues
            .iter()
            .any(|i| i.message.contains("MiB of option files processed")),
        "{issues:#?}"
    );
    // The options of both files are there, in mysys order, as far as the budget goes.
    assert!(set.argv.iter().any(|o| o.name == "x_b.cnf"));

    // Small files: the visit budget stops the 2^11 visits, still one read each.
    let (set, issues, file_bytes) = self_including(tmp.path(), "small.d", |_, d| {
        format!("[mysqld]\nx = 1\n!includedir {d}\n")
    });
    assert_eq!(set.bytes_read, file_bytes);
    assert_eq!(set.files_read.len(), MAX_FILES_READ);
    assert!(
        issues
            .iter()
            .any(|i| i.message.contains("option files read (include loop?)")),
        "{issues:#?}"
    );
}

#[test]
fn a_15_mib_line_is_cut_where_mariadb_cuts_it() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("my.cnf");
    let text = format!("[mysqld]\nv = {}\nafter = 1\n", "x y".repeat(5 << 20));
    std::fs::write(&main, &text).unwrap();
    let (set, issues) = resolve(&main);
    assert_eq!(set.bytes_read, text.len() as u64);
    // MariaDB reads lines in 4094-byte pieces: no value or name is longer.
    for o in &set.argv {
        assert!(o.arg.len() <= 4096 + 2, "{} bytes", o.arg.len());
    }
    assert!(set.argv.iter().any(|o| o.name == "after"));
    // Messages stay small: bounded count, bounded size.
    assert!(issues.len() <= 110, "{} issues", issues.len());
    let bytes: usize = issues.iter().map(|i| i.message.len()).sum();
    assert!(bytes < 128 * 1024, "{bytes} bytes of messages");
}

/// A temporary directory with the paths of a root-only directory
/// (`root-only`, not made yet) and of a snapshot (`snap`) in it; `None`
/// after a skip line where mount namespaces are not available (`what`).
pub(crate) fn root_only_workspace(
    what: &str,
) -> Option<(tempfile::TempDir, std::path::PathBuf, std::path::PathBuf)> {
    if !can_unshare(what) {
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let secret_dir = tmp.path().join("root-only");
    let out = tmp.path().join("snap");
    Some((tmp, secret_dir, out))
}

/// A `check` run as root on files a service user (uid 65534) controls:
/// it succeeded, never quoted the root-only file (holding `canary`) that
/// `who` pointed it at, and said why the file was not read. Its stdout.
#[track_caller]
pub(crate) fn root_only_file_refused(o: &std::process::Output, canary: &str, who: &str) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        !stdout.contains(canary),
        "check quoted a root-only file {who}: {stdout}"
    );
    assert!(
        stdout.contains("which uid 65534 controls") && stdout.contains("not followed"),
        "the finding must say why the file was not read: {stdout}"
    );
    stdout
}

const CANARY: &str = "CANARY-5d1c0e42-root-only";

/// Every file below `dir` whose text holds `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(needle)))
        .map(|e| e.into_path())
        .collect()
}

/// On a Zimbra host /opt/zimbra/conf belongs to the `zimbra` user (here uid
/// 65534), so `mysql_mycnf` in its localconfig.xml is that user's choice:
/// pointed at a root-only file, root's `check` read and quoted it and
/// `snapshot` copied it. It is read on the owner's behalf, like an
/// `!include` from a my.cnf root does not own: not followed where that user
/// could not read it, the finding says why, and the rules on Zimbra's
/// my.cnf are unknown rather than judging an empty file. A my.cnf the user
/// can read (its own) is still read.
#[test]
fn mysql_mycnf_named_in_a_zimbra_localconfig_is_read_for_its_owner() {
    let Some((_tmp, secret_dir, out)) =
        root_only_workspace("mysql_mycnf of a zimbra-owned localconfig")
    else {
        return;
    };
    let localconfig = |mycnf: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<localconfig>\n  <key name=\"mysql_mycnf\">\n    <value>{mycnf}</value>\n  </key>\n</localconfig>\n"
        )
    };
    let run = |mycnf: &str, snap: bool| {
        let script = format!(
            "mkdir -m 700 '{secret}'
             printf '[mysqld]\\ninnodb_buffer_pool_size = {CANARY}\\n' > '{secret}/secret.cnf'
             chmod 600 '{secret}/secret.cnf'
             mount -t tmpfs none /opt
             mkdir -p /opt/zimbra/conf
             cat > /opt/zimbra/conf/localconfig.xml <<'EOF'
{xml}EOF
             printf '[mysqld]\\ninnodb_buffer_pool_size = 2G\\n' > /opt/zimbra/conf/my.cnf
             chmod 640 /opt/zimbra/conf/localconfig.xml /opt/zimbra/conf/my.cnf
             chown 65534:65534 /opt/zimbra/conf /opt/zimbra/conf/localconfig.xml /opt/zimbra/conf/my.cnf
             \"$DRIFTAUDIT\" check --only 'zimbra.*' --format json || true
             {snapshot}",
            secret = secret_dir.display(),
            xml = localconfig(mycnf),
            snapshot = if snap {
                format!("\"$DRIFTAUDIT\" snapshot --out '{}' >&2", out.display())
            } else {
                String::new()
            }
        );
        let _ = std::fs::remove_dir_all(&secret_dir);
        std::process::Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-ec", &script])
            .env("DRIFTAUDIT", env!("CARGO_BIN_EXE_driftaudit"))
            .output()
            .unwrap()
    };
    let secret_cnf = format!("{}/secret.cnf", secret_dir.display());
    let o = run(&secret_cnf, true);
    let stdout = root_only_file_refused(&o, CANARY, "a zimbra-owned localconfig named");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json report");
    let cap = buffer_pool_cap(&report);
    assert_eq!(cap["status"], "unknown", "{cap:#}");
    assert!(cap.to_string().contains("mysql_mycnf"), "{cap:#}");
    assert!(
        files_containing(&out, CANARY).is_empty(),
        "snapshot copied the root-only file"
    );

    // Its own my.cnf (the default path) is read as before.
    let o = run("/opt/zimbra/conf/my.cnf", false);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&o.stderr)));
    let cap = buffer_pool_cap(&report);
    assert_ne!(cap["status"], "unknown", "{cap:#}");
    assert_eq!(cap["actual"], "2 GiB", "{cap:#}");
}

/// The zimbra.buffer-pool-cap finding of the first host of a JSON report.
fn buffer_pool_cap(report: &serde_json::Value) -> &serde_json::Value {
    report["hosts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "zimbra.buffer-pool-cap")
        .expect("zimbra.buffer-pool-cap finding")
}

/// A MySQL 8 snapshot whose `mysqld-auto.cnf` (version 2) persists `n`
/// distinct variables with SET PERSIST (no version capture: the file is
/// applied as MySQL does, every name kept).
fn persisted_variables_host(n: usize) -> tempfile::TempDir {
    let vars: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""test_variable_{i:06}": {{"Value": "{i}", "Metadata": {{"Host": "localhost", "User": "root", "Timestamp": 1733300000000000}}}}"#
            )
        })
        .collect();
    let auto = format!(
        "{{\"Version\": 2, \"mysql_dynamic_variables\": {{{}}}}}",
        vars.join(", ")
    );
    crate::common::snapshot_tree(&[
        ("/etc/my.cnf", "[mysqld]\ndatadir = /var/lib/mysql\n"),
        ("/var/lib/mysql/mysqld-auto.cnf", &auto),
    ])
}

/// 40,000 persisted variables (a 1 MB mysqld-auto.cnf) cost about 4x the
/// work of 10,000. Main looked each namespace key up by scanning every
/// persisted variable again, naming each one anew (`canonical_name`
/// allocates): 16x the bytes for 4x the variables, 19 s for the 1 MB file
/// in a release build. Bytes allocated by the whole gather, not time.
#[test]
fn forty_thousand_persisted_variables_cost_linear_work() {
    use driftaudit::unstable::engine;

    let set = audit::builtin();
    let small = persisted_variables_host(10_000);
    let big = persisted_variables_host(40_000);
    let (c_small, _) = crate::alloc::measure(|| engine::gather(&set, &audit::host(small.path())));
    let (c_big, facts) = crate::alloc::measure(|| engine::gather(&set, &audit::host(big.path())));
    let (a_small, a_big) = (c_small.allocated, c_big.allocated);
    assert!(
        a_big <= 5 * a_small,
        "allocation grew {:.1}x for 4x the persisted variables ({a_small} -> {a_big} bytes)",
        a_big as f64 / a_small as f64
    );
    // every variable is applied, with where it was persisted
    let effective = &facts.namespaces["mycnf_effective"];
    for i in [0, 39_999] {
        let key = format!("test_variable_{i:06}");
        let Some(Entry::Set(s)) = effective.get(&key) else {
            panic!("{key} not applied: {:?}", effective.get(&key));
        };
        assert_eq!(s.raw, i.to_string());
        assert!(
            s.note.as_deref().is_some_and(|n| n.contains(&format!(
                "persisted with SET PERSIST (mysqld-auto.cnf, mysql_dynamic_variables.{key})"
            ))),
            "{:?}",
            s.note
        );
    }
}
