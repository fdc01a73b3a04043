//! Coverage held to OpenSCAP: every rule of the SCAP Security Guide's
//! Debian 11 content (`ssg-debian11-ds.xml`, package ssg-debian) that judges
//! what a shipped driftaudit rule judges (kernel parameters, mount options,
//! separate partitions) is evaluated by `oscap xccdf eval` and by
//! `driftaudit check` (live, `--format json`) on the same prepared host, in
//! three states: one meant to pass everything, one meant to fail everything,
//! and an edge state where the two tools are known to judge differently.
//! docs/coverage.md's "OpenSCAP mapping" table lists each pair and, per
//! state, `agree` or `differs`; the test fails when a pair marked `agree`
//! disagrees, when one marked `differs` agrees (the explanation would be
//! false), and when an overlapping SSG rule is missing from the table.
//!
//! The same run holds the running side of the mount-option rules to
//! libmount: CIS's own audit of each item is `findmnt -kn POINT` and a look
//! for the option, so every `mounts.nodev`/`nosuid`/`noexec`/`dev-shm` finding on a
//! mount point findmnt lists must pass exactly when findmnt shows the option
//! (the planted fstab agrees with the mounts wherever both exist), and one
//! on a point findmnt does not list and no fstab line names must be `skip`.
//!
//! The host is prepared in a private mount namespace (`unshare -m`, every
//! mount private) and entered with `chroot`: a tmpfs root with the real
//! top-level directories bind-mounted, except /tmp, /var, /home, /srv and
//! /run, which are empty or get the state's tmpfs mounts; /etc/fstab,
//! /etc/sysctl.conf, /etc/sysctl.d, /usr/lib/sysctl.d and the /proc/sys
//! entries are regular files bind-mounted over the real ones. The real host
//! is never changed. SSG's rules apply only to a Debian 11 machine: its
//! platform checks /etc/debian_version (`^11.[0-9]+$`, planted as 11.7) and
//! the absence of /.dockerenv and /run/.containerenv (the chroot's root has
//! neither), so the build container is judged like a machine, one booted by
//! systemd for driftaudit too (/proc/1/comm reads `systemd`, and
//! /run/systemd/system exists).

use crate::common;
use crate::common::mountns::{self, Sh};

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

const DS: &str = "/usr/share/xml/scap/ssg/content/ssg-debian11-ds.xml";
const PREFIX: &str = "xccdf_org.ssgproject.content_rule_";

/// The SSG Debian 11 rules that judge what a shipped rule judges (found by
/// listing the data stream's rule ids: `grep -o 'content_rule_[a-z0-9_]*'`,
/// the mount_option_*, partition_for_* and sysctl_* ones, each compared
/// with the shipped rules). Those without a driftaudit rule are listed in
/// docs/coverage.md with the reason.
const OVERLAP: &[&str] = &[
    "sysctl_kernel_kptr_restrict",
    "sysctl_fs_protected_hardlinks",
    "sysctl_fs_protected_symlinks",
    "sysctl_fs_suid_dumpable",
    "sysctl_kernel_randomize_va_space",
    "mount_option_dev_shm_nodev",
    "mount_option_dev_shm_nosuid",
    "partition_for_tmp",
    "partition_for_home",
    "partition_for_var",
    "partition_for_var_log",
    "partition_for_var_log_audit",
];

const STATES: &[&str] = &["passing", "failing", "edge"];

/// Runs in the private mount namespace: builds the chroot for `$STATE` from
/// `$W/plant-$STATE` and runs both tools in it.
const STATE_SCRIPT: &str = r#"
mount --make-rprivate /
R="$W/root-$STATE"
P="$W/plant-$STATE"
mkdir -p "$R"
mount -t tmpfs -o mode=755 root "$R"
for d in /*; do
  n=${d#/}
  case "$n" in tmp|var|home|run|srv) continue ;; esac
  if [ -L "$d" ]; then cp -P "$d" "$R/$n"
  elif [ -d "$d" ]; then mkdir "$R/$n"; mount --rbind "$d" "$R/$n"
  fi
done
for n in tmp var home run srv; do mkdir -p "$R/$n"; done
chmod 1777 "$R/tmp"
mount -t tmpfs -o mode=755 run "$R/run"
# judged like a machine booted by systemd (what SSG's Debian 11 assumes):
# PID 1 named systemd and /run/systemd/system, sd_booted(3)'s test
mkdir -p "$R/run/systemd/system"
echo systemd > "$W/comm-$STATE"
mount --bind "$W/comm-$STATE" "$R/proc/1/comm"
mount --bind "$P/fstab" "$R/etc/fstab"
mount --bind "$P/sysctl.conf" "$R/etc/sysctl.conf"
mount --bind "$P/sysctl.d" "$R/etc/sysctl.d"
mount --bind "$P/empty" "$R/usr/lib/sysctl.d"
mount --bind "$P/debian_version" "$R/etc/debian_version"
for f in "$P"/proc-sys/*; do
  k=$(basename "$f")
  mount --bind "$f" "$R/proc/sys/$(echo "$k" | tr . /)"
done
# /dev/shm may be several stacked mounts: take them all away
for i in 1 2 3 4 5 6 7 8; do umount -l "$R/dev/shm" 2>/dev/null || break; done
while read -r point opts; do
  [ -n "$point" ] || continue
  mkdir -p "$R$point"
  mount -t tmpfs -o "$opts" tmpfs "$R$point"
done < "$P/mounts"
# the work directory at its own path inside, after the mounts that may hide it
[ -d "$R$W" ] || { mkdir -p "$R$W"; mount --bind "$W" "$R$W"; }
# the binary where the chroot sees it, wherever CARGO_TARGET_DIR put it:
# /tmp, /var, /home, /run and /srv inside are not the host's (issue 49)
cp "$DRIFTAUDIT" "$W/driftaudit-$STATE"
set +e
chroot "$R" oscap xccdf eval $RULES --results "$W/$STATE-oscap.xml" "$DS" > "$W/$STATE-oscap.txt" 2>&1
echo "oscap exit $?" >> "$W/$STATE-oscap.txt"
chroot "$R" "$W/driftaudit-$STATE" check --profile all --format json > "$W/$STATE-driftaudit.json" 2> "$W/$STATE-driftaudit.err"
chroot "$R" cat /proc/self/mountinfo > "$W/$STATE-mountinfo.txt"
chroot "$R" findmnt -kn -r -o TARGET,OPTIONS > "$W/$STATE-findmnt.txt" 2>&1
exit 0
"#;

/// One state's planted host: kernel values, sysctl.d lines, fstab, mounts.
struct Plant {
    /// running kernel values (key, value)
    running: &'static [(&'static str, &'static str)],
    /// /etc/sysctl.d/60-hardening.conf
    sysctl_d: &'static str,
    fstab: &'static str,
    /// "POINT OPTIONS" per tmpfs mount
    mounts: &'static str,
}

fn plant(state: &str) -> Plant {
    match state {
        "passing" => Plant {
            running: &[
                ("kernel.kptr_restrict", "1"),
                ("fs.protected_hardlinks", "1"),
                ("fs.protected_symlinks", "1"),
                ("fs.suid_dumpable", "0"),
                ("kernel.randomize_va_space", "2"),
            ],
            sysctl_d: "kernel.kptr_restrict = 1\nfs.protected_hardlinks = 1\nfs.protected_symlinks = 1\nfs.suid_dumpable = 0\nkernel.randomize_va_space = 2\n",
            fstab: "tmpfs /tmp tmpfs nodev,nosuid,noexec 0 0\n\
                    tmpfs /dev/shm tmpfs nodev,nosuid,noexec 0 0\n\
                    tmpfs /home tmpfs nodev,nosuid 0 0\n\
                    tmpfs /var tmpfs nodev,nosuid 0 0\n\
                    tmpfs /var/tmp tmpfs nodev,nosuid,noexec 0 0\n\
                    tmpfs /var/log tmpfs nodev,nosuid,noexec 0 0\n\
                    tmpfs /var/log/audit tmpfs nodev,nosuid,noexec 0 0\n",
            mounts: "/tmp nodev,nosuid,noexec\n/dev/shm nodev,nosuid,noexec\n/home nodev,nosuid\n\
                     /var nodev,nosuid\n/var/tmp nodev,nosuid,noexec\n/var/log nodev,nosuid,noexec\n\
                     /var/log/audit nodev,nosuid,noexec\n",
        },
        "failing" => Plant {
            running: &[
                ("kernel.kptr_restrict", "0"),
                ("fs.protected_hardlinks", "0"),
                ("fs.protected_symlinks", "0"),
                ("fs.suid_dumpable", "1"),
                ("kernel.randomize_va_space", "0"),
            ],
            sysctl_d: "kernel.kptr_restrict = 0\nfs.protected_hardlinks = 0\nfs.protected_symlinks = 0\nfs.suid_dumpable = 1\nkernel.randomize_va_space = 0\n",
            fstab: "# nothing but the root file system\n",
            mounts: "/dev/shm mode=1777\n",
        },
        // where the tools legitimately differ (docs/coverage.md says why)
        _ => Plant {
            running: &[
                ("kernel.kptr_restrict", "2"),
                ("fs.protected_hardlinks", "1"),
                ("fs.protected_symlinks", "1"),
                ("fs.suid_dumpable", "1"),
                ("kernel.randomize_va_space", "2"),
            ],
            // hardlinks and randomize_va_space: running only, no line
            sysctl_d: "kernel.kptr_restrict = 2\nfs.protected_symlinks = 0\nfs.suid_dumpable = 0\n",
            // /var configured but not mounted, /tmp mounted but not configured,
            // no /dev/shm mount at all
            fstab: "tmpfs /var tmpfs nodev,nosuid 0 0\ntmpfs /home tmpfs nodev,nosuid 0 0\n",
            mounts: "/tmp nodev,nosuid,noexec\n/home nodev,nosuid\n",
        },
    }
}

fn write_plant(w: &Path, state: &str) {
    let p = w.join(format!("plant-{state}"));
    let plant = plant(state);
    for d in ["sysctl.d", "empty", "proc-sys"] {
        std::fs::create_dir_all(p.join(d)).expect("plant directory");
    }
    let fstab: String = plant
        .fstab
        .lines()
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    let mounts: String = plant
        .mounts
        .lines()
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    let files = [
        ("fstab", fstab.as_str()),
        ("mounts", mounts.as_str()),
        ("sysctl.conf", ""),
        ("debian_version", "11.7\n"),
        ("sysctl.d/60-hardening.conf", plant.sysctl_d),
    ];
    for (name, text) in files {
        std::fs::write(p.join(name), text).expect("plant file");
    }
    for (k, v) in plant.running {
        std::fs::write(p.join("proc-sys").join(k), format!("{v}\n")).expect("plant value");
    }
}

/// One row of docs/coverage.md's "OpenSCAP mapping": the SSG rule, the
/// driftaudit rule or alias, and `agree`/`differs` per state.
struct Pair {
    ssg: String,
    ours: String,
    expect: BTreeMap<String, bool>,
}

fn mapping(doc: &str) -> Vec<Pair> {
    let start = doc
        .find("## OpenSCAP mapping")
        .expect("docs/coverage.md has an \"OpenSCAP mapping\" section");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut out = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 2 + STATES.len() {
            continue;
        }
        let id = |c: &str| c.trim_matches('`').to_string();
        let mut expect = BTreeMap::new();
        for (i, state) in STATES.iter().enumerate() {
            let cell = cells[2 + i];
            let agree = match cell {
                "agree" => true,
                "differs" => false,
                other => panic!("docs/coverage.md OpenSCAP mapping: `{other}` in the {state} column of {line}: expected agree or differs"),
            };
            expect.insert(state.to_string(), agree);
        }
        out.push(Pair {
            ssg: id(cells[0]),
            ours: id(cells[1]),
            expect,
        });
    }
    out
}

/// oscap's result per rule id (without the prefix).
fn oscap_results(xml: &str) -> BTreeMap<String, String> {
    let doc = roxmltree::Document::parse(xml).expect("oscap's results are XML");
    let mut out = BTreeMap::new();
    for n in doc
        .descendants()
        .filter(|n| n.tag_name().name() == "rule-result")
    {
        let Some(id) = n.attribute("idref") else {
            continue;
        };
        let result = n
            .children()
            .find(|c| c.tag_name().name() == "result")
            .and_then(|c| c.text())
            .unwrap_or("")
            .to_string();
        out.insert(id.trim_start_matches(PREFIX).to_string(), result);
    }
    out
}

/// driftaudit's verdict on a rule id or alias: `fail` when a finding of it
/// fails, `pass` when every one passes, else the first other status.
fn our_verdict(report: &serde_json::Value, id: &str) -> String {
    let mut statuses = Vec::new();
    for host in report["hosts"].as_array().expect("hosts") {
        for f in host["findings"].as_array().expect("findings") {
            if f["rule"].as_str() == Some(id) || f["alias"].as_str() == Some(id) {
                statuses.push(f["status"].as_str().unwrap_or("").to_string());
            }
        }
    }
    if statuses.iter().any(|s| s == "fail") {
        "fail".into()
    } else if !statuses.is_empty() && statuses.iter().all(|s| s == "pass") {
        "pass".into()
    } else {
        statuses
            .into_iter()
            .find(|s| s != "pass")
            .unwrap_or_else(|| "no finding".into())
    }
}

/// Each `mounts.nodev`/`nosuid`/`noexec`/`dev-shm` finding against `findmnt -kn -r -o
/// TARGET,OPTIONS` of the same chroot (the last line for a target is the
/// visible mount, as findmnt lists stacked mounts in mount order).
fn findmnt_problems(state: &str, findmnt: &str, report: &serde_json::Value) -> Vec<String> {
    let mut shown: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in findmnt.lines() {
        if let Some((target, opts)) = line.split_once(' ') {
            // findmnt -r escapes blanks as \x20; the planted points have none
            shown.insert(
                target.to_string(),
                opts.split(',').map(str::to_string).collect(),
            );
        }
    }
    assert!(
        shown.contains_key("/"),
        "{state}: findmnt listed no root mount:\n{findmnt}"
    );
    let fstab = plant(state).fstab;
    let mut problems = Vec::new();
    let mut judged = 0;
    for host in report["hosts"].as_array().expect("hosts") {
        for f in host["findings"].as_array().expect("findings") {
            let rule = f["rule"].as_str().unwrap_or("");
            let status = f["status"].as_str().unwrap_or("");
            let subject: Vec<&str> = f["subject"]
                .as_array()
                .map(|s| s.iter().filter_map(|v| v.as_str()).collect())
                .unwrap_or_default();
            let item = subject.first().copied().unwrap_or("");
            // mounts.dev-shm's items are the options; the others' items are
            // mount points (`var-log` is /var/log) and the rule the option
            let (option, point) = match rule {
                "mounts.dev-shm" => (item, "/dev/shm".to_string()),
                "mounts.nodev" | "mounts.nosuid" | "mounts.noexec" => (
                    &rule["mounts.".len()..],
                    format!("/{item}").replace('-', "/"),
                ),
                _ => continue,
            };
            judged += 1;
            match shown.get(&point) {
                Some(opts) => {
                    let cis_pass = opts.iter().any(|o| o == option);
                    if (status == "pass") != cis_pass || !(status == "pass" || status == "fail") {
                        problems.push(format!(
                            "{state}: {rule} on {point} is {status}, but findmnt shows {} ({})",
                            opts.join(","),
                            if cis_pass { "has it" } else { "lacks it" }
                        ));
                    }
                }
                None => {
                    let configured = fstab
                        .lines()
                        .any(|l| l.split_whitespace().nth(1) == Some(point.as_str()));
                    if !configured && status != "skip" {
                        problems.push(format!(
                            "{state}: {rule} on {point} is {status}, but {point} is neither mounted (findmnt) nor in /etc/fstab: expected skip"
                        ));
                    }
                }
            }
        }
    }
    assert!(judged >= 19, "{state}: only {judged} mount-option findings");
    problems
}

#[test]
fn the_shipped_rules_agree_with_openscap_ssg_debian11_except_where_docs_coverage_says_why() {
    let Some([_oscap, _findmnt]) =
        common::tools([("oscap", "openscap-scanner"), ("findmnt", "util-linux")])
    else {
        return;
    };
    if !Path::new(DS).is_file() {
        common::skip(
            "needs SSG's Debian 11 data stream",
            &format!("{DS} not found; apt-get install ssg-debian"),
        );
        return;
    }
    if !common::can_unshare("OpenSCAP on a planted host") {
        return;
    }
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/coverage.md"))
        .expect("docs/coverage.md");
    let pairs = mapping(&doc);
    let ds = std::fs::read_to_string(DS).expect("read the data stream");
    for id in OVERLAP {
        assert!(
            pairs.iter().any(|p| p.ssg == *id),
            "docs/coverage.md's OpenSCAP mapping has no row for the overlapping SSG rule `{id}`"
        );
    }
    for p in &pairs {
        assert!(
            ds.contains(&format!("{PREFIX}{}\"", p.ssg)),
            "docs/coverage.md maps `{}`, which {DS} does not have",
            p.ssg
        );
    }

    let tmp = tempfile::tempdir().expect("a temporary directory");
    let w = tmp.path();
    let rules: Vec<String> = pairs
        .iter()
        .map(|p| format!("--rule {PREFIX}{}", p.ssg))
        .collect();
    let mut problems = Vec::new();
    let mut compared = 0;
    for state in STATES {
        write_plant(w, state);
        let rule_args = rules.join(" ");
        let env: [(&str, &OsStr); 5] = [
            ("W", w.as_os_str()),
            ("STATE", state.as_ref()),
            ("DS", DS.as_ref()),
            ("RULES", rule_args.as_ref()),
            ("DRIFTAUDIT", common::cli::BIN.as_ref()),
        ];
        let (code, _, stderr) = mountns::run(STATE_SCRIPT, Sh::Errexit, &env);
        assert!(code == 0, "{state}: preparing the host failed: {stderr}");
        let read = |suffix: &str| {
            std::fs::read_to_string(w.join(format!("{state}-{suffix}"))).unwrap_or_default()
        };
        let oscap = oscap_results(&read("oscap.xml"));
        assert!(
            !oscap.is_empty(),
            "{state}: oscap wrote no results:\n{}",
            read("oscap.txt")
        );
        let report: serde_json::Value = serde_json::from_str(&read("driftaudit.json"))
            .unwrap_or_else(|e| {
                panic!(
                    "{state}: driftaudit check --format json: {e}\n{}",
                    read("driftaudit.err")
                )
            });
        for p in &pairs {
            let theirs = oscap.get(&p.ssg).cloned().unwrap_or_default();
            let ours = our_verdict(&report, &p.ours);
            assert!(
                theirs == "pass" || theirs == "fail",
                "{state}: oscap says `{theirs}` for {}: the platform did not apply or the check \
                 errored; the test would compare nothing\n{}",
                p.ssg,
                read("oscap.txt")
            );
            compared += 1;
            let agree = theirs == ours;
            if agree != p.expect[*state] {
                problems.push(format!(
                    "{state}: {} says {theirs}, {} says {ours}, but docs/coverage.md says they {}",
                    p.ssg,
                    p.ours,
                    if p.expect[*state] { "agree" } else { "differ" }
                ));
            }
        }
        problems.extend(findmnt_problems(state, &read("findmnt.txt"), &report));
        if !problems.is_empty() {
            problems.push(format!(
                "{state}: the chroot's mounts:\n{}",
                read("mountinfo.txt")
            ));
        }
    }
    assert!(
        compared >= OVERLAP.len() * STATES.len(),
        "compared only {compared} verdicts"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
