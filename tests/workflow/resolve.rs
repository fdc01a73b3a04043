//! The resolver ([`driftaudit::Resolver`]) on the shipped hosts: it agrees
//! with the evidence of the findings an audit reports for the same host, and
//! with the real tools where they can read a snapshot:
//!
//! * `systemd-analyze --root=HOST cat-config sysctl.d` gives the files
//!   systemd-sysctl reads, in order; the last assignment of each key among
//!   them (a repeat of the same value keeps the earlier line, as
//!   systemd-sysctl's ordered map does) is the resolver's boot value and line;
//! * `my_print_defaults` run chrooted into a copy of the host's `/etc` (so
//!   `!include`, `!includedir` and the `/etc/alternatives` links mean the
//!   host's files) prints the options of the server's groups in order: the
//!   resolver's lines for each option are those, in that order;
//! * `findmnt --fstab --tab-file HOST/etc/fstab` and `findmnt --kernel
//!   --tab-file HOST/proc/self/mountinfo` give each mount point's options as
//!   written and as mounted.
//!
//! Off CI a missing tool skips with one line on stderr; under `CI=true` it fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use driftaudit::unstable::host::Reads;
use driftaudit::{Evidence, Lookup, Resolver, Status};

use crate::common;
use crate::common::audit;
use crate::common::tree;

fn hosts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hosts")
}

fn hosts() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(hosts_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert!(v.len() >= 10, "shipped hosts: {v:?}");
    v
}

fn name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Where a [`Lookup`] points: the deciding line, or where it was looked for.
fn first_evidence<T>(l: &Lookup<T>, at: impl Fn(&T) -> &Evidence) -> Option<Evidence> {
    match l {
        Lookup::Set(t) => Some(at(t).clone()),
        Lookup::Unknown { evidence, .. } => evidence.first().cloned(),
        Lookup::Absent { .. } => None,
    }
}

/// The drift rules cite the persisted line first and the running source
/// second; the resolver names the same two places for the same subject.
#[test]
fn resolver_agrees_with_the_drift_findings_evidence_on_every_shipped_host() {
    let set = audit::builtin();
    let mut compared = BTreeMap::<&str, usize>::new();
    for dir in hosts() {
        let host = audit::host(&dir);
        let report = driftaudit::audit(&set, &[audit::host(&dir)]);
        let r = Resolver::new(&host);
        for f in &report.hosts[0].findings {
            if f.status == Status::Skip || f.subject.len() != 1 || f.evidence.len() < 2 {
                continue;
            }
            let subject = &f.subject[0];
            let ctx = format!("{}: {} on `{subject}`", name(&dir), f.rule);
            let (persisted, running) = match f.rule.as_str() {
                "sysctl.persisted-drift" => {
                    let s = r.sysctl(subject);
                    (
                        first_evidence(&s.boot, |a| &a.at),
                        first_evidence(&s.running, |a| &a.at),
                    )
                }
                "mysql.config-runtime-drift" => {
                    let o = r.option(subject);
                    assert!(!o.lines.is_empty(), "{ctx}: no option line");
                    assert_eq!(
                        o.lines.last().map(|l| &l.at),
                        o.effective.set().map(|a| &a.at),
                        "{ctx}: the last line the server reads is the effective one"
                    );
                    (
                        first_evidence(&o.effective, |a| &a.at),
                        first_evidence(&o.running, |a| &a.at),
                    )
                }
                "storage.fstab-live-drift" => {
                    let m = r.mount(subject);
                    (
                        first_evidence(&m.fstab, |l| &l.at),
                        first_evidence(&m.mounted, |m| &m.at),
                    )
                }
                _ => continue,
            };
            assert_eq!(persisted.as_ref(), Some(&f.evidence[0]), "{ctx}: persisted");
            assert_eq!(running.as_ref(), Some(&f.evidence[1]), "{ctx}: running");
            *compared
                .entry(f.rule.as_str().to_owned().leak())
                .or_default() += 1;
        }
    }
    for rule in [
        "sysctl.persisted-drift",
        "mysql.config-runtime-drift",
        "storage.fstab-live-drift",
    ] {
        assert!(
            compared.get(rule).copied().unwrap_or(0) >= 1,
            "no finding of {rule} compared: {compared:?}"
        );
    }
}

/// Every configuration line a sysctl finding cites is the winning boot line
/// (or procps' line) of one of the keys it is about.
#[test]
fn sysctl_findings_cite_the_lines_the_resolver_says_win() {
    let set = audit::builtin();
    let mut compared = 0;
    for dir in hosts() {
        let host = audit::host(&dir);
        let report = driftaudit::audit(&set, &[audit::host(&dir)]);
        let r = Resolver::new(&host);
        for f in &report.hosts[0].findings {
            if !(f.rule.starts_with("linux.") || f.rule.starts_with("sysctl.")) {
                continue;
            }
            let keys: Vec<_> = f.subject.iter().map(|k| r.sysctl(k)).collect();
            for e in f.evidence.iter().filter(|e| e.line.is_some()) {
                if e.path.starts_with("/proc/") || e.path.contains("sysctl_-a") {
                    continue;
                }
                if e.path.contains("/captures/") {
                    continue;
                }
                let hit = keys.iter().any(|k| {
                    k.boot.set().is_some_and(|a| &a.at == e)
                        || k.procps.set().is_some_and(|a| &a.at == e)
                        || k.running.set().is_some_and(|a| &a.at == e)
                });
                assert!(
                    hit,
                    "{}: {} {:?} cites {e}, which no resolved key names: {keys:#?}",
                    name(&dir),
                    f.rule,
                    f.subject
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 5, "only {compared} cited lines compared");
}

/// `key = value` lines of a sysctl.d file as systemd-sysctl reads them
/// (comments `#`/`;`, a leading `-`, slashes as separators); globs and
/// exclusions are left out (the keys compared are the explicit ones).
fn assignments(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_start_matches('-');
        if k.contains(['*', '?', '[']) {
            continue;
        }
        let k = match (k.find('/'), k.find('.')) {
            (Some(s), Some(d)) if s < d => k.replace(['/', '.'], "\u{0}").replace('\u{0}', "."),
            (Some(_), None) => k.replace('/', "."),
            _ => k.to_string(),
        };
        out.push((i + 1, k, v.trim().to_string()));
    }
    out
}

#[test]
fn sysctl_boot_lines_match_systemd_analyze_cat_config_on_the_shipped_hosts() {
    let Some(tool) = common::tool("systemd-analyze", "systemd") else {
        return;
    };
    let mut compared = 0;
    for dir in hosts() {
        let root = std::fs::canonicalize(&dir).unwrap();
        let out = common::cat_config_sysctl_d(&tool, &root);
        let prefix = format!("# {}", root.display());
        let files: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
            .collect();
        if files.is_empty() {
            continue;
        }
        // key -> (value, the line systemd-sysctl keeps for it)
        let mut want: BTreeMap<String, (String, String, usize)> = BTreeMap::new();
        for f in &files {
            let Ok(text) = std::fs::read_to_string(root.join(f.trim_start_matches('/'))) else {
                continue;
            };
            for (line, k, v) in assignments(&text) {
                match want.get(&k) {
                    Some((old, _, _)) if *old == v => {}
                    _ => {
                        want.insert(k, (v, f.clone(), line));
                    }
                }
            }
        }
        let host = audit::host(&dir);
        let r = Resolver::new(&host);
        for (k, (v, file, line)) in &want {
            let s = r.sysctl(k);
            let ctx = format!("{}: `{k}`", name(&dir));
            let Lookup::Set(a) = &s.boot else {
                panic!(
                    "{ctx}: cat-config sets {v} at {file}:{line}, resolver {:?}",
                    s.boot
                );
            };
            if a.note.as_deref().is_some_and(|n| n.starts_with("set by")) {
                continue; // written after systemd-sysctl (ufw, TuneD)
            }
            assert_eq!(&a.raw, v, "{ctx}: value");
            let read_as = a.at.via.as_deref().unwrap_or(&a.at.path);
            assert_eq!(
                (read_as, a.at.line),
                (file.as_str(), Some(*line)),
                "{ctx}: line"
            );
            compared += 1;
        }
    }
    assert!(compared >= 30, "only {compared} keys compared");
}

/// `my_print_defaults GROUPS` chrooted into a directory holding a copy of the
/// host's `/etc` and the real `/usr` (bound read-only, in a private mount
/// namespace); `None` after a skip when that cannot run here.
fn print_defaults_in(dir: &Path, groups: &[String]) -> Option<Vec<String>> {
    let tool = common::tool("my_print_defaults", "mariadb-client")?;
    let unshare = common::tool("unshare", "util-linux")?;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let cp = Command::new("cp")
        .arg("-a")
        .arg(dir.join("etc"))
        .arg(root.join("etc"))
        .status()
        .unwrap();
    assert!(cp.success());
    std::fs::create_dir(root.join("usr")).unwrap();
    for l in ["bin", "lib", "lib64", "sbin"] {
        if Path::new("/usr").join(l).exists() {
            std::os::unix::fs::symlink(format!("usr/{l}"), root.join(l)).unwrap();
        }
    }
    let r = root.display();
    let script = format!(
        "set -e; mount --bind /usr '{r}/usr'; mount -o remount,bind,ro '{r}/usr'; exec chroot '{r}' {} \"$@\"",
        tool.display()
    );
    let out = Command::new(unshare)
        .args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .args(groups)
        .env("HOME", "/nonexistent")
        .env_remove("MYSQL_HOME")
        .output()
        .expect("run unshare");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("Operation not permitted") || err.contains("cannot") {
            common::skip("my_print_defaults in a private mount namespace", &err);
            return None;
        }
        panic!("my_print_defaults in {}: {err}", dir.display());
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// `--name=value` with the value redacted when the resolver would.
fn redacted(arg: &str) -> String {
    match arg.strip_prefix("--").and_then(|r| r.split_once('=')) {
        Some((name, _)) if driftaudit::unstable::secret::option_is_secret(name) => {
            format!("--{name}={}", driftaudit::unstable::secret::REDACTED)
        }
        _ => arg.to_string(),
    }
}

/// Hold `my_print_defaults`' output (`--name=value` lines, redacted as the
/// resolver redacts) to the resolver's: per option as `ask` names it, the
/// lines in server order. The resolutions compared, one an option.
fn same_lines(
    host: &str,
    theirs: &[String],
    ask: impl Fn(&str) -> driftaudit::OptionResolution,
) -> Vec<driftaudit::OptionResolution> {
    let mut by_option: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for arg in theirs {
        let written = arg.trim_start_matches("--");
        let opt = written.split_once('=').map_or(written, |(n, _)| n);
        by_option
            .entry(ask(opt).name)
            .or_default()
            .push(redacted(arg));
    }
    let mut compared = Vec::new();
    for (opt, args) in &by_option {
        let o = ask(opt);
        let ours: Vec<String> = o
            .lines
            .iter()
            .map(|l| match &l.value {
                Some(v) => format!("--{}={v}", l.name),
                None => format!("--{}", l.name),
            })
            .collect();
        assert_eq!(&ours, args, "{host}: `{opt}`");
        compared.push(o);
    }
    compared
}

#[test]
fn option_lines_match_my_print_defaults_on_the_shipped_mysql_hosts() {
    let mut compared = 0;
    for dir in hosts() {
        if !dir.join("etc/mysql").exists() && !dir.join("etc/my.cnf").exists() {
            continue;
        }
        let host = audit::host(&dir);
        let r = Resolver::new(&host);
        let groups = r.option("datadir").groups;
        assert!(groups.iter().any(|g| g == "mysqld"), "{groups:?}");
        let Some(theirs) = print_defaults_in(&dir, &groups) else {
            return;
        };
        assert!(
            !theirs.is_empty(),
            "{}: my_print_defaults printed nothing",
            name(&dir)
        );
        compared += same_lines(&name(&dir), &theirs, |opt| r.option(opt)).len();
        // The file read last is one the server really reads.
        let last = r.option("datadir").last_file.expect("a file read");
        assert!(
            host.exists(&last.path),
            "{}: last file {last} does not exist",
            name(&dir)
        );
    }
    assert!(compared >= 20, "only {compared} options compared");
}

/// findmnt's rows for a table file, keyed by target: (source, fstype, options).
fn findmnt_rows(
    tool: &Path,
    mode: &str,
    file: &Path,
) -> BTreeMap<String, (String, String, Option<String>)> {
    let out = Command::new(tool)
        .args([mode, "--tab-file"])
        .arg(file)
        .args([
            "-J",
            "-l",
            "--nofsroot",
            "-o",
            "TARGET,SOURCE,FSTYPE,OPTIONS",
        ])
        .output()
        .expect("run findmnt");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("findmnt JSON");
    let mut rows = BTreeMap::new();
    for r in v["filesystems"].as_array().unwrap() {
        let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
        // mount(8) uses the first fstab line; the last mount on a point is visible
        if mode == "--fstab" && rows.contains_key(&s("target")) {
            continue;
        }
        rows.insert(
            s("target"),
            (
                s("source"),
                s("fstype"),
                r["options"].as_str().map(str::to_string),
            ),
        );
    }
    rows
}

#[test]
fn mount_points_match_findmnt_on_the_shipped_hosts() {
    let Some(tool) = common::tool("findmnt", "util-linux") else {
        return;
    };
    let mut compared = 0;
    for dir in hosts() {
        let host = audit::host(&dir);
        let r = Resolver::new(&host);
        let fstab = dir.join("etc/fstab");
        if fstab.exists() {
            for (target, (source, fstype, options)) in findmnt_rows(&tool, "--fstab", &fstab) {
                if !target.starts_with('/') {
                    continue;
                }
                let m = r.mount(&target);
                let ctx = format!("{}: {target}", name(&dir));
                let Lookup::Set(l) = &m.fstab else {
                    panic!("{ctx}: {:?}", m.fstab);
                };
                assert_eq!(l.at.path, "/etc/fstab", "{ctx}");
                assert_eq!((&l.spec, &l.fstype), (&source, &fstype), "{ctx}");
                assert_eq!(
                    l.options,
                    options.unwrap_or_default(),
                    "{ctx}: options as written"
                );
                assert!(!l.effective_options.is_empty(), "{ctx}: canonical options");
                compared += 1;
            }
        }
        let mountinfo = dir.join("proc/self/mountinfo");
        if mountinfo.exists() {
            for (target, (source, fstype, options)) in findmnt_rows(&tool, "--kernel", &mountinfo) {
                let m = r.mount(&target);
                let ctx = format!("{}: mounted {target}", name(&dir));
                let Lookup::Set(f) = &m.mounted else {
                    panic!("{ctx}: {:?}", m.mounted);
                };
                assert_eq!(f.at.path, "/proc/self/mountinfo", "{ctx}");
                assert_eq!((&f.source, &f.fstype), (&source, &fstype), "{ctx}");
                let words = |s: &str| {
                    let mut v: Vec<String> = s.split(',').map(str::to_string).collect();
                    v.sort();
                    v.dedup();
                    v
                };
                assert_eq!(
                    words(&f.raw),
                    words(&options.unwrap_or_default()),
                    "{ctx}: mounted options"
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 10, "only {compared} mount points compared");
}

/// The provenance `fix` edits by: the winning line (through the link it was
/// read by), every line it overrode in the order read, and for option files
/// the spelling and group of each line and the file read last.
#[test]
fn provenance_names_the_winner_the_link_and_every_overridden_line_in_order() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    tree::write_files(
        root,
        &[("/usr/lib/sysctl.d/50-vendor.conf", "vm.swappiness = 60\n")],
    );
    tree::write_files(
        root,
        &[("/etc/sysctl.d/60-tune.conf", "# tuned\nvm.swappiness=10\n")],
    );
    tree::write_files(root, &[("/etc/sysctl.conf", "\nvm/swappiness = 1\n")]);
    std::os::unix::fs::symlink("../sysctl.conf", root.join("etc/sysctl.d/99-sysctl.conf")).unwrap();
    tree::write_files(
        root,
        &[(
            "/etc/mysql/my.cnf",
            "[mysqld]\nmax-connections = 100\n!includedir /etc/mysql/conf.d/\n",
        )],
    );
    tree::write_files(
        root,
        &[(
            "/etc/mysql/conf.d/50-a.cnf",
            "[client]\nmax_connections = 7\n[server]\nloose-max_connections=200\n",
        )],
    );
    tree::write_files(
        root,
        &[("/etc/mysql/conf.d/60-b.cnf", "[mysqld]\nuser = mysql\n")],
    );
    tree::write_files(
        root, &[("/etc/fstab",
        "/dev/sda1 / ext4 defaults 0 1\n/dev/sdb1 /srv/data xfs noatime,nofail 0 2\n/dev/sdc1 /srv/data ext4 rw 0 2\n",)]);
    let host = audit::host(root);
    let r = Resolver::new(&host);

    let s = r.sysctl("vm/swappiness");
    assert_eq!(s.key, "vm.swappiness");
    let boot = s.boot.set().expect("set at boot");
    assert_eq!(boot.raw, "1");
    assert_eq!(boot.at.location(), "/etc/sysctl.conf:2");
    assert_eq!(boot.at.via.as_deref(), Some("/etc/sysctl.d/99-sysctl.conf"));
    let over: Vec<String> = boot.overridden.iter().map(|e| e.location()).collect();
    assert_eq!(
        over,
        [
            "/usr/lib/sysctl.d/50-vendor.conf:1",
            "/etc/sysctl.d/60-tune.conf:2"
        ]
    );
    // procps reads /etc/sysctl.conf last as well: the same value
    assert_eq!(s.procps.set().map(|a| a.raw.as_str()), Some("1"));
    // no proc/sys and no listing in this snapshot: the running value is unknown, not absent
    assert!(
        matches!(s.running, Lookup::Unknown { .. }),
        "{:?}",
        s.running
    );

    let o = r.option("Max_Connections");
    assert_eq!(o.name, "max_connections");
    let lines: Vec<(String, &str, &str, Option<&str>)> = o
        .lines
        .iter()
        .map(|l| {
            (
                l.at.location(),
                l.group.as_str(),
                l.name.as_str(),
                l.value.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "/etc/mysql/my.cnf:2".to_string(),
                "mysqld",
                "max-connections",
                Some("100")
            ),
            (
                "/etc/mysql/conf.d/50-a.cnf:4".to_string(),
                "server",
                "loose-max_connections",
                Some("200")
            ),
        ]
    );
    let eff = o.effective.set().expect("effective");
    assert_eq!(eff.at.location(), "/etc/mysql/conf.d/50-a.cnf:4");
    assert_eq!(
        eff.overridden
            .iter()
            .map(|e| e.location())
            .collect::<Vec<_>>(),
        ["/etc/mysql/my.cnf:2"]
    );
    assert_eq!(eff.value.as_f64(), Some(200.0));
    assert_eq!(
        o.last_file.as_ref().map(|e| e.path.as_str()),
        Some("/etc/mysql/conf.d/60-b.cnf")
    );
    assert!(o
        .groups
        .starts_with(&["mysqld".to_string(), "server".to_string()]));
    assert!(!o.groups.contains(&"client".to_string()));
    assert!(matches!(
        r.option("innodb_buffer_pool_size").effective,
        Lookup::Absent { .. }
    ));

    let m = r.mount("/srv//data/");
    assert_eq!(m.point, "/srv/data");
    let l = m.fstab.set().expect("fstab entry");
    assert_eq!(l.at.location(), "/etc/fstab:2");
    assert_eq!(
        l.ignored.iter().map(|e| e.location()).collect::<Vec<_>>(),
        ["/etc/fstab:3"]
    );
    assert_eq!(
        (l.fstype.as_str(), l.options.as_str()),
        ("xfs", "noatime,nofail")
    );
    assert!(l.effective_options.iter().any(|o| o == "noatime"), "{l:?}");
    assert!(!l.effective_options.iter().any(|o| o == "nofail"), "{l:?}");
    // no mount table in this snapshot
    assert!(
        matches!(m.mounted, Lookup::Unknown { .. }),
        "{:?}",
        m.mounted
    );
    assert!(matches!(r.mount("/nowhere").fstab, Lookup::Absent { .. }));
}

/// Zimbra's own MariaDB reads `/opt/zimbra/conf/my.cnf` (or the file
/// localconfig.xml's `mysql_mycnf` names), not the system's option files:
/// `Resolver::zimbra_option` answers for it, and its lines are the ones
/// `my_print_defaults --defaults-file=THAT-FILE mysqld` prints, on every
/// shipped Zimbra host.
#[test]
fn zimbra_option_lines_match_my_print_defaults_of_zimbras_own_my_cnf() {
    let Some(tool) = common::tool("my_print_defaults", "mariadb-client") else {
        return;
    };
    let mut compared = 0;
    for dir in hosts() {
        let file = dir.join("opt/zimbra/conf/my.cnf");
        if !file.exists() {
            continue;
        }
        let host = audit::host(&dir);
        let r = Resolver::new(&host);
        let out = common::cli::ok(
            Command::new(&tool)
                .arg(format!("--defaults-file={}", file.display()))
                .arg("mysqld")
                .env("HOME", "/nonexistent"),
            "my_print_defaults",
        );
        let theirs: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert!(!theirs.is_empty(), "{}: nothing printed", name(&dir));
        for o in same_lines(&name(&dir), &theirs, |opt| r.zimbra_option(opt)) {
            let opt = &o.name;
            assert_eq!(o.groups, ["mysqld"]);
            assert_eq!(o.files_read, ["/opt/zimbra/conf/my.cnf"], "{}", name(&dir));
            // the value the Zimbra rules read is the last line's
            let Lookup::Set(configured) = &o.configured else {
                panic!("{}: `{opt}` configured {:?}", name(&dir), o.configured);
            };
            let last = o.lines.last().unwrap();
            assert_eq!(configured.at, last.at, "{}: `{opt}`", name(&dir));
            assert!(matches!(o.effective, Lookup::Unknown { .. }));
            compared += 1;
        }
        // the system's server is another question: on these hosts none
        assert!(
            r.option("max_connections").lines.is_empty(),
            "{}",
            name(&dir)
        );
    }
    assert!(compared >= 40, "only {compared} options compared");
}
