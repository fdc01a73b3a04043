//! A snapshot of a Zimbra host audits exactly like the live host (issue 13):
//! a Zimbra-shaped live tree (localconfig.xml full of secrets, Zimbra's own
//! my.cnf, files owned by an unprivileged `zimbra` uid, sysctl.d, fstab) is
//! built on tmpfs and bind mounts inside a private mount namespace (`unshare
//! -m`, never the real host's /opt or /etc), audited live, captured with
//! `snapshot`, and the snapshot audited: same findings (modulo provenance:
//! /proc/sys files become captures/sysctl-a.txt lines, a walked directory a
//! captures/du.txt line), no Zimbra rule unknown, no secret anywhere.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The shipped Khimki host as found: the source of the live tree.
const SOURCE: &str = "testdata/hosts/zimbra-khimki-asfound";
/// The uid that owns /opt/zimbra, as the `zimbra` user does on a real host.
const ZIMBRA_UID: u32 = 998;

/// Secret values planted in the live tree; none may appear in any output or
/// in the snapshot.
const SECRETS: &[(&str, &str)] = &[
    ("zimbra_mysql_password", "ZLIVE-mysql-pw-3f9a"),
    ("mysql_root_password", "ZLIVE-mysql-root-77c1"),
    ("ldap_root_password", "ZLIVE-ldap-root-b2d4"),
    ("zimbra_ldap_password", "ZLIVE-ldap-zimbra-09e5"),
    ("ldap_replication_password", "ZLIVE-ldap-repl-5a61"),
    ("ldap_postfix_password", "ZLIVE-ldap-postfix-c8e2"),
    ("ldap_amavis_password", "ZLIVE-ldap-amavis-1d7f"),
    ("ldap_nginx_password", "ZLIVE-ldap-nginx-e4a0"),
    ("mailboxd_keystore_password", "ZLIVE-keystore-6b3c"),
    ("mailboxd_truststore_password", "ZLIVE-truststore-92fd"),
    ("zimbra_ldap_userdn_password", "ZLIVE-userdn-4e18"),
];
/// Planted outside localconfig: my.cnf `[client] password` and a CIFS line in fstab.
const MYCNF_SECRET: &str = "ZLIVE-mycnf-client-a5c0";
const CIFS_SECRET: &str = "ZLIVE-cifs-0b7e";

fn can_unshare() -> bool {
    if !common::can_unshare("a Zimbra-shaped live host") {
        return false;
    }
    // /opt/zimbra is built on a tmpfs mounted over /opt inside the private
    // namespace; creating /opt itself would change the real host.
    if !Path::new("/opt").is_dir() {
        common::skip(
            "a Zimbra-shaped live host",
            "this machine has no /opt to mount a tmpfs on",
        );
        return false;
    }
    true
}

/// localconfig.xml as ZCS writes it (the shipped host's keys), with every
/// secret key set, two of them in shapes other writers produce
/// (`name = "..."`, `xml:space`).
fn localconfig_xml() -> String {
    let src = fs::read_to_string(
        Path::new(ROOT)
            .join(SOURCE)
            .join("opt/zimbra/conf/localconfig.xml"),
    )
    .unwrap();
    let mut kept = String::new();
    let mut skip = false;
    for line in src.lines() {
        let t = line.trim();
        if t.starts_with("<key name=") {
            skip = SECRETS.iter().any(|(k, _)| t.contains(&format!("\"{k}\"")));
        }
        if t == "</localconfig>" {
            break;
        }
        if !skip {
            kept.push_str(line);
            kept.push('\n');
        }
        if t == "</key>" {
            skip = false;
        }
    }
    for (i, (k, v)) in SECRETS.iter().enumerate() {
        match i {
            0 => kept.push_str(&format!(
                "  <key name = \"{k}\">\n    <value>{v}</value>\n  </key>\n"
            )),
            1 => kept.push_str(&format!(
                "  <key name=\"{k}\">\n    <value xml:space=\"preserve\">{v}</value>\n  </key>\n"
            )),
            _ => kept.push_str(&format!(
                "  <key name=\"{k}\">\n    <value>{v}</value>\n  </key>\n"
            )),
        }
    }
    kept.push_str("</localconfig>\n");
    kept
}

/// Everything the namespace needs, staged in `dir`.
fn stage(dir: &Path, with_index: bool) {
    let src = Path::new(ROOT).join(SOURCE);
    let stage = dir.join("stage");
    fs::create_dir_all(stage.join("conf")).unwrap();
    fs::write(stage.join("conf/localconfig.xml"), localconfig_xml()).unwrap();
    let mut mycnf = fs::read_to_string(src.join("opt/zimbra/conf/my.cnf")).unwrap();
    mycnf.push_str(&format!(
        "\n[client]\nuser = zimbra\npassword = {MYCNF_SECRET}\n"
    ));
    fs::write(stage.join("conf/my.cnf"), mycnf).unwrap();
    let mut fstab = fs::read_to_string(src.join("etc/fstab")).unwrap();
    fstab.push_str(&format!(
        "//nas.khimki.lan/backup /mnt/backup cifs noauto,username=zimbra,password={CIFS_SECRET} 0 0\n"
    ));
    fs::write(stage.join("fstab"), fstab).unwrap();
    fs::copy(
        src.join("etc/sysctl.d/60-zimbra.conf"),
        stage.join("60-zimbra.conf"),
    )
    .unwrap();
    fs::write(dir.join("with_index"), if with_index { "1" } else { "0" }).unwrap();
}

/// The live Zimbra host, then: check (every format), snapshot, check
/// --snapshot (json, text), diff snapshot/live --files. Each output and exit
/// status lands in `$W/out`.
const SCRIPT: &str = r#"
W="$WORK"; S="$W/stage"; O="$W/out"; mkdir -p "$O"
mount --make-rprivate /
mount -t tmpfs -o mode=755 none /opt
mkdir -p /opt/zimbra/conf /opt/zimbra/db/data/zimbra /opt/zimbra/db/data/mboxgroup1 \
         /opt/zimbra/log /opt/zimbra/data/tmp
cp "$S/conf/localconfig.xml" "$S/conf/my.cnf" /opt/zimbra/conf/
head -c 300000 /dev/urandom > /opt/zimbra/db/data/ibdata1
head -c 4096 /dev/urandom > /opt/zimbra/db/data/zimbra/mailbox.ibd
head -c 8192 /dev/urandom > /opt/zimbra/db/data/mboxgroup1/mail_item.ibd
if [ "$(cat "$W/with_index")" = 1 ]; then
  mkdir -p /opt/zimbra/index/0/index
  head -c 5000 /dev/urandom > /opt/zimbra/index/0/index/_0.cfs
fi
chown -R "$ZUID:$ZUID" /opt/zimbra
chmod 640 /opt/zimbra/conf/localconfig.xml
mount -t tmpfs none /etc/sysctl.d
cp "$S/60-zimbra.conf" /etc/sysctl.d/
[ -d /etc/mysql ] && mount -t tmpfs none /etc/mysql
[ -e /etc/my.cnf ] && mount --bind /dev/null /etc/my.cnf
mount --bind "$S/fstab" /etc/fstab
run() { name=$1; shift; set +e; "$@" > "$O/$name" 2> "$O/$name.err"; echo $? > "$O/$name.rc"; set -e; }
for f in json text markdown sarif junit; do run "live.$f" "$DRIFTAUDIT" check --format $f; done
run snapshot "$DRIFTAUDIT" snapshot --out "$W/snap"
for f in json text; do run "snap.$f" "$DRIFTAUDIT" check --snapshot "$W/snap" --format $f; done
run diff.text "$DRIFTAUDIT" diff "$W/snap" live --files
run diff.json "$DRIFTAUDIT" diff "$W/snap" live --files --format json
"#;

fn run_live(dir: &Path) {
    common::cli::ok(
        std::process::Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-ec", SCRIPT])
            .env("WORK", dir)
            .env("ZUID", ZIMBRA_UID.to_string())
            .env("DRIFTAUDIT", env!("CARGO_BIN_EXE_driftaudit")),
        "the namespace script",
    );
}

fn out(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join("out").join(name)).unwrap()
}

fn rc(dir: &Path, name: &str) -> i32 {
    out(dir, &format!("{name}.rc")).trim().parse().unwrap()
}

/// How an evidence entry is shown in explanations (`path` or `path:line`).
fn shown(e: &Value) -> String {
    match e["line"].as_u64() {
        Some(l) => format!("{}:{l}", e["path"].as_str().unwrap()),
        None => e["path"].as_str().unwrap().to_string(),
    }
}

/// A finding from the live host and its twin from the snapshot are the same
/// finding: every field equal, except that where the live host read a value
/// from /proc/sys or walked a directory the snapshot names its capture line
/// (also inside the explanation and the fix).
fn same_finding(live: &Value, snap: &Value) -> Result<(), String> {
    let (le, se) = (
        live["evidence"].as_array().cloned().unwrap_or_default(),
        snap["evidence"].as_array().cloned().unwrap_or_default(),
    );
    if le.len() != se.len() {
        return Err(format!("evidence differs: {le:?} vs {se:?}"));
    }
    let mut swaps: Vec<(String, String)> = Vec::new();
    for (l, s) in le.iter().zip(&se) {
        if l == s {
            continue;
        }
        let lp = l["path"].as_str().unwrap_or("");
        let sp = s["path"].as_str().unwrap_or("");
        let by_design = (lp.starts_with("/proc/sys/") && sp == "/captures/sysctl-a.txt")
            || (sp == "/captures/du.txt" && l["line"].is_null());
        if !by_design {
            return Err(format!(
                "evidence {l} on the live host is {s} in the snapshot"
            ));
        }
        swaps.push((shown(l), shown(s)));
    }
    swaps.sort_by_key(|(l, _)| std::cmp::Reverse(l.len()));
    let mut l = live.clone();
    let mut s = snap.clone();
    for v in [&mut l, &mut s] {
        v.as_object_mut().unwrap().remove("evidence");
    }
    for key in ["explanation", "fix"] {
        if let Some(text) = l[key].as_str() {
            let mut t = text.to_string();
            for (from, to) in &swaps {
                t = t.replace(&format!("({from})"), &format!("({to})"));
                t = t.replace(&format!("{from}:"), &format!("{to}:"));
            }
            l[key] = Value::String(t);
        }
    }
    // The running server's variables are read only by `snapshot --mysql`:
    // the live host says so and the snapshot names its missing capture, and
    // each fix says how that host gets them (by design, not a difference).
    if l["fix"].as_str() == Some(LIVE_RUNTIME_FIX) {
        let snap_fix = s["fix"].as_str().unwrap_or("");
        if !(snap_fix.is_empty() || snap_fix.starts_with("Capture the data into the snapshot")) {
            return Err(format!(
                "live fix {LIVE_RUNTIME_FIX:?} is {snap_fix:?} in the snapshot"
            ));
        }
        for v in [&mut l, &mut s] {
            v.as_object_mut().unwrap().remove("fix");
        }
    }
    if let Some(text) = l["explanation"].as_str() {
        l["explanation"] =
            Value::String(text.replace(LIVE_RUNTIME_REASON, SNAPSHOT_RUNTIME_REASON));
    }
    if l != s {
        return Err(format!("live {l:#}\nsnapshot {s:#}"));
    }
    Ok(())
}

/// Why a live host has no running-server values, and the fix it gives.
const LIVE_RUNTIME_REASON: &str = "runtime MySQL/MariaDB variables are read from a live host only with --mysql (or audit a snapshot taken with `driftaudit snapshot --mysql`)";
const LIVE_RUNTIME_FIX: &str = "Run it again with `--mysql` (`check --mysql`, `diff SNAPSHOT live --mysql`): driftaudit then reads the running server read-only with `SHOW GLOBAL VARIABLES` through the mysql client, on your client option files, `--mysql-defaults-file FILE` or `--mysql-socket PATH`; or audit a snapshot taken with `driftaudit snapshot --mysql`.";
/// The same in a snapshot taken without `--mysql`.
const SNAPSHOT_RUNTIME_REASON: &str = "the snapshot has no captures/mysql-variables.tsv (no such file or directory): capture `mysql -NB -e 'SHOW GLOBAL VARIABLES'` to compare with the running server";

fn key(f: &Value) -> String {
    format!(
        "{} {} {} {}",
        f["rule"], f["subject"], f["status"], f["actual"]
    )
}

fn check_equivalence(with_index: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    stage(dir, with_index);
    run_live(dir);
    assert_eq!(rc(dir, "snapshot"), 0, "{}", out(dir, "snapshot.err"));

    // The same exit status and the same findings, live and from the snapshot.
    assert_eq!(
        rc(dir, "live.json"),
        rc(dir, "snap.json"),
        "{}",
        out(dir, "snap.json.err")
    );
    let live: Value = serde_json::from_str(&out(dir, "live.json")).unwrap();
    let snap: Value = serde_json::from_str(&out(dir, "snap.json")).unwrap();
    let (lh, sh) = (&live["hosts"][0], &snap["hosts"][0]);
    assert_eq!(lh["source"], "live");
    assert_eq!(sh["source"], "snapshot");
    assert_eq!(lh["host"], sh["host"], "host names differ");
    assert_eq!(lh["summary"], sh["summary"], "summaries differ");
    let mut lf = lh["findings"].as_array().unwrap().clone();
    let mut sf = sh["findings"].as_array().unwrap().clone();
    lf.sort_by_key(key);
    sf.sort_by_key(key);
    let lk: Vec<String> = lf.iter().map(key).collect();
    let sk: Vec<String> = sf.iter().map(key).collect();
    assert_eq!(lk, sk, "different findings live and from the snapshot");
    let diffs: Vec<String> = lf
        .iter()
        .zip(&sf)
        .filter_map(|(l, s)| same_finding(l, s).err())
        .collect();
    assert!(diffs.is_empty(), "findings differ:\n{}", diffs.join("\n\n"));
    // Coverage agrees on everything but where each domain was seen (the
    // live host's /proc/sys is the snapshot's captures/sysctl-a.txt).
    let strip = |h: &Value| -> Vec<Value> {
        h["coverage"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.as_object_mut().unwrap().remove("sources");
                c
            })
            .collect()
    };
    // (its unknowns' reasons name how each host gets the running server's
    // values, as the findings do)
    let live_coverage: Vec<Value> = serde_json::from_str(
        &serde_json::to_string(&strip(lh))
            .unwrap()
            .replace(LIVE_RUNTIME_REASON, SNAPSHOT_RUNTIME_REASON),
    )
    .unwrap();
    assert_eq!(live_coverage, strip(sh), "coverage differs");

    // The Zimbra domain is detected and every Zimbra rule reached a verdict,
    // live and from the snapshot; no storage rule on Zimbra's paths is unknown.
    for (what, h) in [("live", lh), ("snapshot", sh)] {
        let z = crate::common::cli::find(&h["coverage"], "domain", "zimbra");
        assert_eq!(z["detected"], true, "{what}: {z}");
        assert!(z["rules"].as_u64().unwrap() >= 5, "{what}: {z}");
        assert_eq!(
            z["rules"], z["evaluated"],
            "{what}: a Zimbra rule was not evaluated: {z}"
        );
        for f in h["findings"].as_array().unwrap() {
            let r = f["alias"].as_str().or(f["rule"].as_str()).unwrap();
            if r.starts_with("zimbra.") || r.contains("zimbra") {
                assert!(
                    !matches!(f["status"].as_str(), Some("unknown" | "error")),
                    "{what}: {r} is {}: {}",
                    f["status"],
                    f["explanation"]
                );
            }
        }
    }
    // The index rules: decided by whether /opt/zimbra/index exists, which
    // the snapshot shows although it copies no file from there.
    let index_rules: Vec<&Value> = sf
        .iter()
        .filter(|f| {
            let r = f["alias"].as_str().or(f["rule"].as_str()).unwrap();
            r.starts_with("storage.index-") || r.contains("zimbra-index")
        })
        .collect();
    assert!(index_rules.len() >= 5, "{index_rules:?}");
    for f in &index_rules {
        let why = f["explanation"].as_str().unwrap();
        if with_index {
            assert!(!why.contains("/opt/zimbra/index exists"), "{f}");
        } else {
            assert_eq!(f["status"], "skip", "{f}");
            assert!(
                why.ends_with("/opt/zimbra/index exists; it does not on this host"),
                "{f}"
            );
        }
    }

    // The snapshot's localconfig.xml is still localconfig (redacted with
    // XML's own escaping) and no more readable than the zimbra user's file.
    let lc = dir.join("snap/opt/zimbra/conf/localconfig.xml");
    let text = fs::read_to_string(&lc).unwrap();
    assert!(text.contains("&lt;redacted&gt;"), "{text}");
    assert_eq!(
        fs::metadata(&lc).unwrap().permissions().mode() & 0o777 & !0o640,
        0
    );
    let meta: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("snap/snapshot.json")).unwrap()).unwrap();
    if !with_index {
        assert!(
            meta["absent"]
                .as_array()
                .is_some_and(|a| a.iter().any(|p| p == "/opt/zimbra/index")),
            "snapshot.json does not record that /opt/zimbra/index is absent: {meta}"
        );
    }

    // No secret in any output, any error stream or any snapshot file.
    let mut secrets: Vec<&str> = SECRETS.iter().map(|(_, v)| *v).collect();
    secrets.extend([MYCNF_SECRET, CIFS_SECRET]);
    let mut files = Vec::new();
    collect(&dir.join("out"), &mut files);
    collect(&dir.join("snap"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    for f in &files {
        let bytes = fs::read(f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for s in &secrets {
            assert!(!text.contains(s), "{} holds the secret {s}", f.display());
        }
    }
    // Every output really ran (a crash would hide a leak).
    for name in [
        "live.text",
        "live.markdown",
        "live.sarif",
        "live.junit",
        "snap.text",
    ] {
        assert_eq!(
            rc(dir, name),
            rc(dir, "live.json"),
            "{name}: {}",
            out(dir, &format!("{name}.err"))
        );
        assert!(out(dir, name).contains("zimbra"), "{name}");
    }
    let d: Value = serde_json::from_str(&out(dir, "diff.json")).unwrap();
    assert_eq!(d["same_host"], true, "{d}");
    assert_eq!(d["regressions"].as_array().map(Vec::len), Some(0), "{d}");
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let t = e.file_type().unwrap();
        if t.is_dir() {
            collect(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}

/// A mailstore (database and index on the host): every Zimbra and storage
/// rule reaches the same verdict from the snapshot as on the live host (the
/// index directory is probed, not read: the snapshot keeps it as a directory).
#[test]
fn zimbra_mailstore_snapshot_audits_like_the_live_host() {
    if !can_unshare() {
        return;
    }
    check_equivalence(true);
}

/// A Zimbra host without /opt/zimbra/index: the live host skips the index
/// rules; the snapshot proves the absence in snapshot.json `absent` and
/// skips them too (on main they turned unknown).
#[test]
fn zimbra_host_without_index_snapshot_audits_like_the_live_host() {
    if !can_unshare() {
        return;
    }
    check_equivalence(false);
}
