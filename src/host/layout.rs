//! Snapshot layouts: decides whether a directory is a snapshot at all, which
//! kind (driftaudit's own, a hand-made tree laid out like `/`, an extracted
//! sosreport), and where each kind keeps the command output driftaudit reads
//! (`sysctl -a`, `uname -a`, `hostname`, `dumpe2fs -h`, `du`). Pure path
//! mapping and detection by directory entries; must not read or parse file
//! contents and never writes.
//!
//! The sosreport mapping follows sos's own plugin sources (sosreport/sos,
//! `sos/report/plugins/`): `kernel.py` runs `sysctl -a` and `uname -a`,
//! `host.py` runs `hostname` (older sos 3.x: the `general` plugin),
//! `filesys.py` runs `dumpe2fs -h DEV` for every ext2/3/4 device in
//! /proc/mounts, `mysql.py` runs `du -s /var/lib/mysql/*`, `block.py` copies
//! `/sys/block/*/queue/`, `rpm.py` lists installed packages (`installed-rpms`),
//! `dpkg.py` runs `dpkg -l` (`installed-debs`). Each command's output is
//! `sos_commands/PLUGIN/NAME` with NAME from sos's `_mangle_command` (see
//! [`sos_mangle`]). Files are copied at their own paths (`etc/my.cnf`,
//! `etc/fstab`, `proc/mounts`, `proc/meminfo`, `etc/sysctl.d/`), like ours.

use std::path::Path;

use crate::catalogue;

/// What kind of snapshot directory a host root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// driftaudit's own format: `snapshot.json`, files at their host paths,
    /// command output in `captures/`.
    Driftaudit,
    /// A tree laid out like `/` without `snapshot.json` (hand-made, a config
    /// management fetch): read like [`Layout::Driftaudit`].
    Tree,
    /// An extracted sosreport (`sos_commands/` with `sos_reports/`,
    /// `sos_logs/` or `version.txt`).
    Sosreport,
}

/// Top-level directories that make a tree "laid out like `/`" (a snapshot
/// holds files of the host there) or hold driftaudit's `captures/`.
pub const TREE_DIRS: [&str; 9] = [
    "etc", "proc", "sys", "usr", "var", "opt", "run", "lib", "captures",
];

/// What a directory must hold to be a snapshot, for error messages.
pub const SNAPSHOT_MARKERS: &str =
    "snapshot.json, a host directory (etc/, proc/, sys/, usr/, var/, opt/, run/, lib/), captures/ or an extracted sosreport's sos_commands/";

/// The layout of `dir`, or `None` when it is not a snapshot at all (then
/// auditing it would only produce `unknown` findings: an input error).
/// Entries are tested with `lstat`: a symlinked `etc` does not count.
///
/// This is the one decision `check --snapshot`, `diff` and `--fleet`
/// discovery share.
pub fn detect(dir: &Path) -> Option<Layout> {
    let is = |name: &str, want_dir: bool| {
        std::fs::symlink_metadata(dir.join(name))
            .map(|m| if want_dir { m.is_dir() } else { m.is_file() })
            .unwrap_or(false)
    };
    if is("snapshot.json", false) {
        return Some(Layout::Driftaudit);
    }
    if is("sos_commands", true)
        && (is("sos_reports", true) || is("sos_logs", true) || is("version.txt", false))
    {
        return Some(Layout::Sosreport);
    }
    if TREE_DIRS.iter().any(|d| is(d, true)) {
        return Some(Layout::Tree);
    }
    None
}

/// sos's file name for a command's output (`_mangle_command` in
/// `sos/report/plugins/__init__.py`): a leading `/bin/`, `/sbin/`,
/// `/usr/bin/` or `/usr/sbin/` dropped, every run of characters other than
/// word characters, `-`, `.` and `/` replaced by one `_`, `/` turned into
/// `.`, leading and trailing ` ._-` stripped, cut at 255 characters.
///
/// ```
/// use driftaudit::unstable::host::layout::sos_mangle;
/// assert_eq!(sos_mangle("dumpe2fs -h /dev/mapper/centos-root"), "dumpe2fs_-h_.dev.mapper.centos-root");
/// assert_eq!(sos_mangle("du -s /var/lib/mysql/*"), "du_-s_.var.lib.mysql");
/// ```
pub fn sos_mangle(command: &str) -> String {
    let mut cmd = command;
    for prefix in ["/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/"] {
        if let Some(rest) = cmd.strip_prefix(prefix) {
            cmd = rest;
            break;
        }
    }
    let mut out = String::with_capacity(cmd.len());
    let mut in_run = false;
    for c in cmd.chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '/' {
            out.push(if c == '/' { '.' } else { c });
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    let trimmed = out.trim_matches(|c| matches!(c, ' ' | '.' | '_' | '-'));
    trimmed.chars().take(255).collect()
}

impl Layout {
    /// Host paths of a complete `sysctl -a` listing, first found wins.
    pub fn sysctl_listing(self) -> &'static [&'static str] {
        match self {
            Layout::Sosreport => &["/sos_commands/kernel/sysctl_-a"],
            Layout::Driftaudit | Layout::Tree => &[catalogue::SYSCTL_A.path],
        }
    }

    /// Host paths of `uname -a` output (the kernel release is its third field).
    pub fn uname(self) -> &'static [&'static str] {
        match self {
            Layout::Sosreport => &["/sos_commands/kernel/uname_-a", "/uname"],
            Layout::Driftaudit | Layout::Tree => &[catalogue::UNAME_A.path],
        }
    }

    /// Host paths of `hostname` output, before `/etc/hostname`.
    pub fn hostname(self) -> &'static [&'static str] {
        match self {
            // sos >= 3.6: host plugin; older: general plugin; `hostname` is
            // sos's root symlink to it.
            Layout::Sosreport => &[
                "/sos_commands/host/hostname",
                "/sos_commands/general/hostname",
                "/hostname",
            ],
            Layout::Driftaudit | Layout::Tree => &[],
        }
    }

    /// Host paths that may hold the superblock listing of `device` (a device
    /// path as the mount table names it, `/dev/mapper/vg-db`), in order.
    /// Ours: `captures/tune2fs/NAME.txt`, `captures/dumpe2fs/NAME.txt`
    /// (NAME: the path without `/dev/`, `/` as `_`); sos:
    /// `sos_commands/filesys/dumpe2fs_-h_.dev.NAME` (or without `-h` when sos
    /// ran with `-k filesys.dumpe2fs`).
    pub fn ext4_listings(self, device: &str) -> Vec<String> {
        match self {
            Layout::Sosreport => vec![
                format!(
                    "/sos_commands/filesys/{}",
                    sos_mangle(&format!("dumpe2fs -h {device}"))
                ),
                format!(
                    "/sos_commands/filesys/{}",
                    sos_mangle(&format!("dumpe2fs {device}"))
                ),
            ],
            Layout::Driftaudit | Layout::Tree => {
                let name = device
                    .strip_prefix("/dev/")
                    .unwrap_or(device)
                    .trim_start_matches('/')
                    .replace('/', "_");
                vec![
                    format!("{}{name}.txt", catalogue::TUNE2FS.path),
                    format!("{}{name}.txt", catalogue::DUMPE2FS.path),
                ]
            }
        }
    }

    /// Host paths of installed-package listings, in order: sos's
    /// `installed-rpms` (`rpm.py`: `rpm --nodigest -qa --qf='%-59{NVRA}
    /// %{INSTALLTIME:date}'`, sorted; a root symlink into `sos_commands/rpm/`),
    /// its tab-separated `sos_commands/rpm/package-data`, and `installed-debs`
    /// (`dpkg.py`: `dpkg -l`); ours: `captures/installed-rpms` (the server
    /// packages of `rpm -qa`, one `NAME-VERSION-RELEASE.ARCH` a line). Older
    /// sos versions name the rpm output differently: see [`SOS_RPM_DIR`] and
    /// [`is_sos_rpm_query`].
    pub fn package_listings(self) -> &'static [&'static str] {
        match self {
            Layout::Sosreport => &[
                "/installed-rpms",
                "/sos_commands/rpm/package-data",
                "/installed-debs",
                "/sos_commands/dpkg/dpkg_-l",
            ],
            Layout::Driftaudit | Layout::Tree => &[catalogue::INSTALLED_RPMS.path],
        }
    }

    /// Directory whose plugin subdirectories hold `du` captures (sos), or the
    /// one `du -sb` capture file (ours).
    pub fn du_source(self) -> DuSource {
        match self {
            Layout::Sosreport => DuSource::SosCommands("/sos_commands"),
            Layout::Driftaudit | Layout::Tree => DuSource::File(catalogue::DU.path),
        }
    }
}

/// sos's rpm plugin output directory (sosreport root).
pub const SOS_RPM_DIR: &str = "/sos_commands/rpm";

/// Whether a file in [`SOS_RPM_DIR`] is an `rpm -qa` listing by its mangled
/// command name: `sh_-c_rpm_--nodigest_-qa_--qf_-59_NVRA_INSTALLTIME_date_sort_-V`
/// (sos 4), `sh_-c_rpm_--nodigest_-qa_--qf_NAME_-_VERSION_..._awk_...` and
/// `rpm_-qa_--qf_NAME_...` (sos 3); not `rpm_-Va` or `rpm_--showrc`.
pub fn is_sos_rpm_query(file_name: &str) -> bool {
    let cmd = file_name.strip_prefix("sh_-c_").unwrap_or(file_name);
    cmd.starts_with("rpm_") && cmd.split('_').any(|w| w == "-qa")
}

/// Where directory sizes are captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuSource {
    /// One file of `du -sb PATH` lines (bytes).
    File(&'static str),
    /// sos: every `PLUGIN/du_*` file below this directory (see [`du_unit`]).
    SosCommands(&'static str),
}

/// The unit of a sos `du` capture from its mangled file name
/// (`du_-s_.var.lib.mysql`): `Some(1024)` for plain `du -s` (KiB of disk
/// usage), `Some(1)` with `-b`/`--bytes`, `None` for anything else (`-h`
/// sizes, unknown flags): such a file is not read.
pub fn du_unit(file_name: &str) -> Option<u64> {
    let rest = file_name.strip_prefix("du_")?;
    let mut unit = Some(1024);
    for word in rest.split('_') {
        let Some(flags) = word.strip_prefix('-') else {
            continue;
        };
        if let Some(long) = flags.strip_prefix('-') {
            match long {
                "bytes" => unit = Some(1),
                "summarize" => {}
                _ => return None,
            }
            continue;
        }
        for f in flags.chars() {
            match f {
                's' | 'x' | 'c' => {}
                'b' => unit = Some(1),
                'k' => unit = Some(1024),
                _ => return None,
            }
        }
    }
    unit
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn mangling_matches_sos_file_names() {
        // names from real sosreports (sos 3.x and 4.x)
        assert_eq!(sos_mangle("sysctl -a"), "sysctl_-a");
        assert_eq!(sos_mangle("uname -a"), "uname_-a");
        assert_eq!(sos_mangle("dumpe2fs -h /dev/sda2"), "dumpe2fs_-h_.dev.sda2");
        assert_eq!(sos_mangle("ls -lanR /sys/block"), "ls_-lanR_.sys.block");
        assert_eq!(sos_mangle("/usr/bin/hostname -f"), "hostname_-f");
        assert_eq!(sos_mangle("du -s /var/lib/mysql/*"), "du_-s_.var.lib.mysql");
        assert_eq!(
            sos_mangle("df -al -x autofs"),
            "df_-al_-x_autofs",
            "spaces become one underscore"
        );
        assert_eq!(sos_mangle(&"x".repeat(400)).len(), 255);
    }

    #[test]
    fn rpm_listings_are_found_by_sos_names() {
        // sos 4.x rpm.py: `sh -c 'rpm --nodigest -qa --qf="%-59{NVRA} %{INSTALLTIME:date}\n" | sort -V'`
        let sos4 = sos_mangle(
            "sh -c 'rpm --nodigest -qa --qf=\"%-59{NVRA} %{INSTALLTIME:date}\n\" | sort -V'",
        );
        assert_eq!(
            sos4,
            "sh_-c_rpm_--nodigest_-qa_--qf_-59_NVRA_INSTALLTIME_date_sort_-V"
        );
        assert!(is_sos_rpm_query(&sos4));
        // sos 3.x (`sh -c 'rpm --nodigest -qa --qf=...|awk ...|sort -f'`) and 2.x
        // (`rpm -qa --qf=... --nosignature --nodigest | awk ... | sort`)
        assert!(is_sos_rpm_query("sh_-c_rpm_--nodigest_-qa_--qf_NAME_-_VERSION_-_RELEASE_._ARCH_INSTALLTIME_date_awk_-F_printf_-59s_s_n_1_2_sort_-f"));
        assert!(is_sos_rpm_query("rpm_-qa_--qf_NAME_-_VERSION_-_RELEASE_._ARCH_INSTALLTIME_date_INSTALLTIME_VENDOR_--nosignature_--nodigest_awk_-F_printf_-59s_s_n_1_2_sort"));
        assert!(!is_sos_rpm_query("rpm_-Va"));
        assert!(!is_sos_rpm_query("rpm_--showrc"));
        assert!(!is_sos_rpm_query("lsof_D_var_lib_rpm"));
    }

    #[test]
    fn du_units_follow_the_flags() {
        assert_eq!(du_unit("du_-s_.var.lib.mysql"), Some(1024));
        assert_eq!(du_unit("du_-sb_.var.lib.mysql"), Some(1));
        assert_eq!(du_unit("du_-sh_.var.lib.candlepin"), None);
        assert_eq!(du_unit("dumpe2fs_-h_.dev.sda1"), None);
    }

    #[test]
    fn layouts_are_detected_by_their_entries() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(detect(d.path()), None, "an empty directory is no snapshot");
        fs::write(d.path().join("notes.txt"), "x").unwrap();
        assert_eq!(detect(d.path()), None);
        fs::create_dir(d.path().join("etc")).unwrap();
        assert_eq!(detect(d.path()), Some(Layout::Tree));
        fs::create_dir(d.path().join("sos_commands")).unwrap();
        assert_eq!(detect(d.path()), Some(Layout::Tree), "sos_commands alone");
        fs::create_dir(d.path().join("sos_logs")).unwrap();
        assert_eq!(detect(d.path()), Some(Layout::Sosreport));
        fs::write(d.path().join("snapshot.json"), "{}").unwrap();
        assert_eq!(detect(d.path()), Some(Layout::Driftaudit));

        let s = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", s.path().join("etc")).unwrap();
        assert_eq!(detect(s.path()), None, "a symlinked etc does not count");
    }
}
