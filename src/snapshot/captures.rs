//! What a snapshot captures besides the files the readers read: the fixed
//! files and the `/sys/block` flags read through the recording host (so
//! the plan copies them), then each `captures/` file (`sysctl-a.txt`,
//! `du.txt`, `file-modes.txt`, `tune2fs-*.txt`, `mysql-variables.tsv`,
//! `installed-rpms`) added to the plan, kept stable (volatile values and
//! fields left out, rows sorted) and redacted, or listed as unreadable
//! with the reason. Must not write anything itself (the plan is written by
//! `write`) nor change the host; external commands run through `commands`.

use std::collections::BTreeMap;
use std::process::Command;

use crate::catalogue::{DU, INSTALLED_RPMS, MYSQL_VARIABLES, SYSCTL_A, TUNE2FS};
use crate::facts::Facts;
use crate::host::{EntryKind, Host, ReadLog};
use crate::parse::sysctl::swap_dot_slash;
use crate::secret::{self, REDACTED};

use super::commands::{
    find_program, mysql_capture_from, run_capped, MysqlConnection, RPM_CAPTURE_ARGS,
};
use super::manifest::Unreadable;
use super::plan::Writer;

/// Largest value read from one `/proc/sys` file for `captures/sysctl-a.txt`.
const SYSCTL_VALUE_CAP: u64 = 64 * 1024;

/// Deepest directory level walked below `/proc/sys`.
const SYSCTL_MAX_DEPTH: usize = 12;

/// Most `/sys/block` devices captured.
const MAX_BLOCK_DEVICES: usize = 4096;

/// `tune2fs -l` fields that change on every mount or write; dropped so a
/// snapshot committed to git changes only when the layout does.
const VOLATILE_TUNE2FS: [&str; 13] = [
    "Last mount time",
    "Last write time",
    "Last checked",
    "Next check after",
    "Mount count",
    "Free blocks",
    "Free inodes",
    "Lifetime writes",
    "Checksum",
    "Last orphan inode",
    "Last error time",
    "First error time",
    "Last mounted on",
];

/// Live kernel values that change on their own (counters, random values);
/// left out of `captures/sysctl-a.txt` so a committed snapshot changes only
/// when the configuration does. Prefixes end with `.`.
const VOLATILE_SYSCTL: [&str; 14] = [
    "fs.aio-nr",
    "fs.dentry-state",
    "fs.file-nr",
    "fs.inode-nr",
    "fs.inode-state",
    "fs.quota.",
    "kernel.ns_last_pid",
    "kernel.pty.nr",
    "kernel.random.boot_id",
    "kernel.random.entropy_avail",
    "kernel.random.uuid",
    "net.netfilter.nf_conntrack_count",
    "kernel.sched_domain.",
    "net.ipv4.tcp_mem_usage",
];

pub(crate) fn volatile_sysctl(key: &str) -> bool {
    VOLATILE_SYSCTL
        .iter()
        .any(|v| key == *v || (v.ends_with('.') && key.starts_with(v)))
}

/// Read the fixed files every snapshot has through the recording host (the
/// plan copies them from its log); an unreadable one is listed.
pub(super) fn read_fixed_files(host: &Host, unreadable: &mut Vec<Unreadable>) {
    for p in [
        "/proc/meminfo",
        "/proc/cpuinfo",
        "/etc/os-release",
        "/etc/hostname",
        "/proc/self/mountinfo",
        "/proc/mounts",
    ] {
        if let Err(e) = host.read_bytes(p) {
            unreadable.push(Unreadable {
                path: p.into(),
                reason: e.to_string(),
                ..Default::default()
            });
        }
    }
}

/// Read the storage facts the storage reader uses (rotational flags, device
/// mapper names, slaves), so they are in the log whatever the policies read.
pub(super) fn capture_block_devices(host: &Host) {
    // the hypervisor or cloud, named in findings about virtual disks
    for f in ["sys_vendor", "product_name"] {
        let _ = host.read_bytes_capped(&format!("/sys/class/dmi/id/{f}"), 4096);
    }
    let Ok(devs) = host.read_dir("/sys/block") else {
        return;
    };
    // loop, ram and zram devices come and go with package and image
    // activity (snaps, installers, swap) and hold no data directory: left
    // out unless a mount uses one, which the storage reader then read
    let transient = |n: &str| {
        ["loop", "ram", "zram"].iter().any(|p| {
            n.strip_prefix(p)
                .is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    for d in devs
        .iter()
        .filter(|d| !transient(&d.name))
        .take(MAX_BLOCK_DEVICES)
    {
        let base = format!("/sys/block/{}", d.name);
        let _ = host.read_bytes_capped(&format!("{base}/queue/rotational"), 4096);
        // what the disk is: a virtual or cloud disk's flag is not its medium
        for f in ["device/vendor", "device/model", "device/modalias"] {
            let _ = host.read_bytes_capped(&format!("{base}/{f}"), 4096);
        }
        let _ = host.read_bytes_capped(&format!("{base}/dm/name"), 4096);
        if let Ok(slaves) = host.read_dir(&format!("{base}/slaves")) {
            for s in slaves {
                let _ = host.read_link(&format!("{base}/slaves/{}", s.name));
            }
        }
    }
}

/// `captures/sysctl-a.txt` (see [`sysctl_capture`]), root-only when a
/// value it holds is.
pub(super) fn capture_sysctl(host: &Host, w: &mut Writer, unreadable: &mut Vec<Unreadable>) {
    let (sysctl, mut bad) = sysctl_capture(host);
    unreadable.append(&mut bad);
    w.files.insert(SYSCTL_A.path.into(), sysctl.into_bytes());
    // Values of root-only keys (tcp_fastopen_key, ...) keep the capture root-only.
    let root_only = host.read_log().is_some_and(|l| {
        l.modes
            .iter()
            .any(|(p, m)| p.starts_with("/proc/sys/") && m & 0o004 == 0 && m & 0o444 != 0)
    });
    if root_only {
        w.modes.insert(SYSCTL_A.path.into(), 0o600);
    }
}

/// `captures/du.txt`: the directory sizes the policies need, one
/// `BYTES<TAB>PATH` a line; none measured: no file.
pub(super) fn capture_dir_sizes(facts: &Facts, w: &mut Writer, unreadable: &mut Vec<Unreadable>) {
    let mut du = String::new();
    for (path, size) in &facts.dir_sizes {
        match size {
            Ok(b) => du.push_str(&format!("{b}\t{path}\n")),
            Err(e) => unreadable.push(Unreadable {
                path: path.clone(),
                reason: format!("directory size: {e}"),
                ..Default::default()
            }),
        }
    }
    if !du.is_empty() {
        w.files.insert(DU.path.into(), du.into_bytes());
    }
}

/// `captures/file-modes.txt`: the option and credential files' permission
/// bits (a copy's own mode is not the host's).
pub(super) fn capture_file_modes(facts: &Facts, w: &mut Writer) {
    if let Some(text) = crate::facts::mysql::files::modes_capture(facts) {
        w.files
            .insert(crate::catalogue::FILE_MODES.path.into(), text.into_bytes());
    }
}

/// `captures/tune2fs-NAME.txt`: `tune2fs -l` of each mounted ext4 volume
/// (from the mountinfo in `log`), its volatile fields left out.
pub(super) fn capture_tune2fs(log: &ReadLog, w: &mut Writer, unreadable: &mut Vec<Unreadable>) {
    let mountinfo = log
        .files
        .get("/proc/self/mountinfo")
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    for (name, dev) in ext4_devices(&mountinfo) {
        match run_capped(Command::new("tune2fs").arg("-l").arg(&dev)) {
            Ok(text) => {
                w.files.insert(
                    format!("{}{name}.txt", TUNE2FS.path),
                    stable_tune2fs(&text).into_bytes(),
                );
            }
            Err(e) => unreadable.push(Unreadable {
                path: format!("captures/{}{name}.txt", TUNE2FS.name),
                reason: format!("tune2fs -l {dev}: {e}"),
                ..Default::default()
            }),
        }
    }
}

/// `captures/mysql-variables.tsv` (`--mysql`): `SHOW GLOBAL VARIABLES`,
/// root-only, sorted and redacted.
pub(super) fn capture_mysql_variables(
    w: &mut Writer,
    unreadable: &mut Vec<Unreadable>,
    conn: &MysqlConnection,
) {
    // The user's [mysql] group may set `table`, `vertical`, `html`, `xml`,
    // `raw`, `tee`, `pager`, `init-command`, `verbose`: only the user's
    // connection options reach the client, so the capture is always
    // the batch TSV the readers expect and the user's credentials apply.
    match mysql_capture_from(conn) {
        Ok(text) => {
            w.modes.insert(MYSQL_VARIABLES.path.into(), 0o600);
            w.files
                .insert(MYSQL_VARIABLES.path.into(), mysql_tsv(&text).into_bytes());
        }
        Err(e) => unreadable.push(Unreadable {
            path: format!("captures/{}", MYSQL_VARIABLES.name),
            reason: format!("{}: {e}", MYSQL_VARIABLES.command),
            ..Default::default()
        }),
    }
}

/// `captures/installed-rpms`: the installed server package on an RPM host.
pub(super) fn capture_server_rpms(w: &mut Writer, unreadable: &mut Vec<Unreadable>) {
    // The installed server package on an RPM host: the version decides which
    // versioned option groups ([mariadb-10.11], [mysqld-8.0]) the server
    // reads, and `check` reads no RPM database. Only server packages are kept
    // (a full list changes on every update); no rpm on the host: nothing.
    if let Some(rpm) = find_program("rpm") {
        match run_capped(Command::new(rpm).args(RPM_CAPTURE_ARGS)) {
            Ok(text) => {
                let servers: String = text
                    .lines()
                    .filter(|l| crate::facts::mysql::server_package(l).is_some())
                    .map(|l| format!("{}\n", l.trim()))
                    .collect();
                if !servers.is_empty() {
                    w.files
                        .insert(INSTALLED_RPMS.path.into(), servers.into_bytes());
                }
            }
            Err(e) => unreadable.push(Unreadable {
                path: format!("captures/{}", INSTALLED_RPMS.name),
                reason: format!("{}: {e}", INSTALLED_RPMS.command),
                ..Default::default()
            }),
        }
    }
}

/// Walk `/proc/sys` and print every readable key as procps `sysctl -a` does
/// (`key = value`, one line per value line), sorted by key. Write-only keys
/// and `vm.stat_refresh` are skipped; unreadable ones are returned.
pub fn sysctl_capture(host: &Host) -> (String, Vec<Unreadable>) {
    let mut values: BTreeMap<String, String> = BTreeMap::new();
    let mut bad = Vec::new();
    let mut stack: Vec<(String, usize)> = vec![("/proc/sys".into(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let entries = match host.read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                bad.push(Unreadable {
                    path: dir,
                    reason: e.to_string(),
                    ..Default::default()
                });
                continue;
            }
        };
        for e in entries {
            if e.is_symlink {
                continue;
            }
            let path = format!("{dir}/{}", e.name);
            match e.kind {
                Some(EntryKind::Dir) if depth < SYSCTL_MAX_DEPTH => stack.push((path, depth + 1)),
                Some(EntryKind::File) => {
                    let key = swap_dot_slash(path.trim_start_matches("/proc/sys/"));
                    if key == "vm.stat_refresh" || volatile_sysctl(&key) {
                        continue;
                    }
                    match host.mode(&path) {
                        Ok(m) if m & 0o444 == 0 => continue,
                        Ok(_) => {}
                        Err(err) => {
                            bad.push(Unreadable {
                                path,
                                reason: err.to_string(),
                                expected: false,
                            });
                            continue;
                        }
                    }
                    match host.read_bytes_capped(&path, SYSCTL_VALUE_CAP) {
                        Ok(b) => {
                            let v = String::from_utf8_lossy(&b);
                            let v = v.strip_suffix('\n').unwrap_or(&v).to_string();
                            values.insert(key, v);
                        }
                        Err(err) => bad.push(match crate::host::expected_refusal(&path, &err) {
                            Some(state) => Unreadable {
                                path,
                                reason: state.to_string(),
                                expected: true,
                            },
                            None => Unreadable {
                                path,
                                reason: err.to_string(),
                                expected: false,
                            },
                        }),
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = String::new();
    for (k, v) in &values {
        let v = if secret::sysctl_key_is_secret(k) {
            REDACTED
        } else {
            v.as_str()
        };
        for line in v.split('\n') {
            out.push_str(&format!("{k} = {line}\n"));
        }
    }
    (out, bad)
}

/// Mounted ext4 filesystems from mountinfo: (capture name, device).
/// The name is the device path without `/dev/`, `/` replaced by `_`.
pub fn ext4_devices(mountinfo: &str) -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for line in mountinfo.lines() {
        let Some((_, post)) = line.split_once(" - ") else {
            continue;
        };
        let mut f = post.split_whitespace();
        let (Some(fstype), Some(src)) = (f.next(), f.next()) else {
            continue;
        };
        if fstype != "ext4" || !src.starts_with("/dev/") {
            continue;
        }
        let src = crate::parse::unescape_octal(src);
        let name: String = src
            .trim_start_matches("/dev/")
            .chars()
            .map(|c| {
                if c == '/' || c.is_whitespace() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        out.entry(name).or_insert(src);
    }
    out.into_iter().collect()
}

/// Drop the `tune2fs -l` lines that change on every mount or write.
pub fn stable_tune2fs(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let field = line.split(':').next().unwrap_or("").trim();
        if VOLATILE_TUNE2FS.contains(&field) {
            continue;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `SHOW GLOBAL VARIABLES` output with secrets redacted; TSV rows (what
/// `mysql -NB` prints) sorted so a snapshot changes only when a value does.
/// Any other shape (a table or `\G` output) is kept in its order, redacted.
pub fn mysql_tsv(text: &str) -> String {
    let redacted = secret::redact_text(secret::FileKind::ServerVariables, text);
    let rows: Vec<&str> = redacted.lines().filter(|l| !l.trim().is_empty()).collect();
    let tsv = rows.iter().all(|l| l.contains('\t'));
    let mut rows: Vec<String> = rows.into_iter().map(str::to_string).collect();
    if tsv {
        rows.sort();
    }
    let mut out = rows.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::stable_proc;

    #[test]
    fn ext4_mounts_are_found_in_mountinfo() {
        let mi = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n23 22 253:0 / /opt/zimbra rw - ext4 /dev/mapper/vg-zimbra rw\n24 1 0:5 / /proc rw - proc proc rw\n25 1 0:30 / /x rw - overlay overlay rw\n";
        assert_eq!(
            ext4_devices(mi),
            [
                (
                    "mapper_vg-zimbra".to_string(),
                    "/dev/mapper/vg-zimbra".to_string()
                ),
                ("sda1".to_string(), "/dev/sda1".to_string())
            ]
        );
    }

    #[test]
    fn tune2fs_volatile_fields_are_dropped() {
        let t = "tune2fs 1.47.0 (5-Feb-2023)\nInode size:\t          256\nMount count:              12\nLast write time:          Mon Jan  1 00:00:00 2024\nBlock size:               4096\n";
        assert_eq!(
            stable_tune2fs(t),
            "tune2fs 1.47.0 (5-Feb-2023)\nInode size:\t          256\nBlock size:               4096\n"
        );
    }

    #[test]
    fn mysql_rows_are_sorted_and_secrets_redacted() {
        assert_eq!(
            mysql_tsv("max_connections\t151\nwsrep_sst_auth\tx\nautocommit\tON\n"),
            "autocommit\tON\nmax_connections\t151\nwsrep_sst_auth\t<redacted>\n"
        );
    }

    #[test]
    fn volatile_values_are_left_out() {
        assert!(volatile_sysctl("kernel.random.uuid"));
        assert!(volatile_sysctl("fs.quota.lookups"));
        assert!(!volatile_sysctl("kernel.randomize_va_space"));
        assert_eq!(
            stable_proc(
                "/proc/meminfo",
                "MemTotal: 10 kB\nMemFree: 3 kB\nSwapTotal: 0 kB\nHugepagesize: 2048 kB\n"
            ),
            "MemTotal: 10 kB\nSwapTotal: 0 kB\nHugepagesize: 2048 kB\n"
        );
    }
}
