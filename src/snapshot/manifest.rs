//! `snapshot.json`, the manifest: its schema, what was copied, what could
//! not be captured (and why), what the readers found absent, hard links,
//! what was captured completely, and the capture time (kept from the
//! previous snapshot when a re-capture with `--force` changed nothing, so
//! git sees no change). Must not decide what is captured nor write it
//! (that is `write`); it reads the previous snapshot only through the
//! capped FIFO-safe reader.

use std::fs;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::facts::FileIssue;
use crate::host::{Host, ReadLog};
use crate::policy::PolicySet;

use super::plan::{excluded, Writer};

/// Schema id written to `snapshot.json`.
pub const SNAPSHOT_SCHEMA: &str = "driftaudit.snapshot/1";

/// A path that could not be captured, with the reason (listed in `snapshot.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unreadable {
    /// Host path, `captures/NAME` or a command.
    pub path: String,
    /// Why.
    pub reason: String,
    /// The kernel refuses it by design and the refusal says what the state
    /// is (`stable_secret`: EIO until a secret is set): recorded, not a
    /// warning ([`crate::host::expected_refusal`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expected: bool,
}

/// `snapshot.json`.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotMeta {
    /// Always [`SNAPSHOT_SCHEMA`].
    pub schema: &'static str,
    /// Host name.
    pub host: String,
    /// driftaudit version that took the snapshot.
    pub driftaudit: String,
    /// Capture time, UTC, RFC 3339.
    pub captured_at: String,
    /// Ids of the policies whose readers decided what was copied.
    pub policies: Vec<String>,
    /// Host paths copied (sorted).
    pub files: Vec<String>,
    /// What could not be captured.
    pub unreadable: Vec<Unreadable>,
    /// Host paths copied from files with more than one hard link (a hard
    /// link cannot be told from the file it names; docs/snapshot-format.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hard_links: Vec<String>,
    /// Host paths the readers looked for (`applies: exists:`, presence
    /// probes) that did not exist, so that the snapshot proves their absence
    /// as the live host does (a path missing from a snapshot alone is
    /// unknown: it may just not have been copied).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<String>,
    /// What the snapshot captured completely, so that a key missing from it
    /// is absent on the host rather than unknown: `sysctl` (every readable
    /// `/proc/sys` key is in `captures/sysctl-a.txt`, except the volatile
    /// ones left out by design and those listed in `unreadable`).
    pub complete: Vec<&'static str>,
}

/// The files the readers could not read, with the reason: the issues that
/// carry a [`FileIssue::read_error`] (not the ones whose message happens to
/// start like one).
pub(super) fn unreadable_files(issues: &[FileIssue]) -> Vec<Unreadable> {
    issues
        .iter()
        .filter_map(|i| {
            Some(Unreadable {
                path: i.path.clone(),
                reason: i.read_error.clone()?,
                ..Default::default()
            })
        })
        .collect()
}

/// `snapshot.json` for a capture: the policies, the planned files, what
/// could not be captured (sorted), the host's hard links and the paths the
/// readers found absent that the snapshot does not hold; captured now.
pub(super) fn manifest(
    policies: &PolicySet,
    host: &Host,
    log: &ReadLog,
    w: &Writer,
    unreadable: Vec<Unreadable>,
) -> SnapshotMeta {
    SnapshotMeta {
        schema: SNAPSHOT_SCHEMA,
        host: host.name().to_string(),
        driftaudit: env!("CARGO_PKG_VERSION").to_string(),
        captured_at: rfc3339_now(),
        policies: policies.policies().iter().map(|p| p.id.clone()).collect(),
        files: w.files.keys().cloned().collect(),
        unreadable,
        hard_links: host.hard_linked(),
        absent: log
            .absent
            .iter()
            .filter(|p| {
                !excluded(p)
                    && !w.files.contains_key(*p)
                    && !w.links.contains_key(*p)
                    && !w.dirs.contains(*p)
            })
            .cloned()
            .collect(),
        complete: vec!["sysctl"],
    }
}

/// The `captured_at` of the snapshot `--force` replaces when the new
/// capture is the same in every byte but that (same files, contents,
/// links and metadata): re-capturing an unchanged host into its folder in
/// git then changes nothing. Read through the capped FIFO-safe reader;
/// anything unreadable or different is a change.
pub(super) fn unchanged_since(out: &Path, w: &Writer, meta: &SnapshotMeta) -> Option<String> {
    let read =
        |rel: &str| crate::reader::read_file(&out.join(rel), crate::host::MAX_FILE_BYTES).ok();
    let old: serde_json::Value = serde_json::from_slice(&read("snapshot.json")?).ok()?;
    let at = old.get("captured_at")?.as_str()?.to_string();
    let mut new = serde_json::to_value(meta).ok()?;
    new["captured_at"] = serde_json::Value::String(at.clone());
    if new != old {
        return None;
    }
    for (path, bytes) in &w.files {
        if read(path.trim_start_matches('/'))? != *bytes {
            return None;
        }
    }
    for (path, target) in &w.links {
        let old = fs::read_link(out.join(path.trim_start_matches('/'))).ok()?;
        if old.as_os_str() != std::ffi::OsStr::new(target) {
            return None;
        }
    }
    Some(at)
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86400) as i64);
    let s = secs % 86400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) (H. Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_files_are_picked_by_their_read_error_not_their_wording() {
        let host =
            Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean")).unwrap();
        let err = host.read_bytes("/etc/no-such-file").unwrap_err();
        let issues = vec![
            FileIssue::unreadable("sysctl", "/etc/sysctl.d/a.conf", &err),
            // a content problem worded like a read error is not an unreadable file
            FileIssue::problem("mycnf", "/etc/my.cnf", Some(3), "cannot read the directory"),
            FileIssue::problem("mycnf", "/etc/my.cnf", Some(4), "cannot read: x"),
        ];
        assert_eq!(
            unreadable_files(&issues),
            [Unreadable {
                path: "/etc/sysctl.d/a.conf".into(),
                reason: err.to_string(),
                ..Default::default()
            }]
        );
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
