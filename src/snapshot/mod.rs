//! `driftaudit snapshot`: capture the live host into the documented snapshot
//! layout (docs/snapshot-format.md). Owns what is copied (exactly the files the
//! loaded policies' readers read, found with a recording [`Host`], plus the
//! fixed captures), redaction of secrets in copied files, determinism and the
//! atomic write. Reads the host only through [`Host`] (and runs `tune2fs -l`,
//! `rpm -qa` and, on request, the `mysql` client, read-only; capture paths
//! from [`crate::catalogue`]); never changes the host.
//!
//! This file holds the options and [`take`], the steps of one capture in
//! order; the folder's rooms, in the order data flows:
//!
//! - `captures`: what a snapshot captures besides the files the readers
//!   read: the fixed files and `/sys/block` flags read through the
//!   recording host, then the `captures/` files (`sysctl -a`, directory
//!   sizes, file modes, `tune2fs -l`, MySQL variables, server RPMs), each
//!   kept stable (volatile values left out) and redacted.
//! - `commands`: the external commands a capture runs (`tune2fs`, `rpm`,
//!   the `mysql` client with the user's connection options only), with a
//!   timeout and an output cap.
//! - `plan`: which host paths the snapshot holds and as what (copies,
//!   links, directories, placeholders), from the recording host's log;
//!   each copied file redacted and kept stable.
//! - `manifest`: `snapshot.json` (what was copied, what could not be,
//!   what is absent), its capture time, and the time kept when a
//!   re-capture changed nothing.
//! - `write`: the checks on `--out` and the confined, atomic write of the
//!   plan and the manifest (directory descriptors only, a private
//!   temporary directory renamed into place), and why it can fail.

mod captures;
mod commands;
mod manifest;
mod plan;
mod write;

pub(crate) use captures::volatile_sysctl;
pub use captures::{ext4_devices, mysql_tsv, stable_tune2fs, sysctl_capture};
pub use commands::{
    client_defaults_file, mysql_capture, mysql_capture_from, mysql_client_defaults, CommandError,
    MysqlConnection, MYSQL_CAPTURE_ARGS, MYSQL_CLIENT_GROUPS, RPM_CAPTURE_ARGS,
};
pub use manifest::{civil_from_days, rfc3339_now, SnapshotMeta, Unreadable, SNAPSHOT_SCHEMA};
pub use plan::{redact_file, stable_proc};
pub use write::{Race, SnapshotError};

use std::path::Path;

use crate::engine;
use crate::host::Host;
use crate::policy::PolicySet;

use captures::{
    capture_block_devices, capture_dir_sizes, capture_file_modes, capture_mysql_variables,
    capture_server_rpms, capture_sysctl, capture_tune2fs, read_fixed_files,
};
use manifest::{manifest, unchanged_since, unreadable_files};
use plan::{plan_from_log, Writer};
use write::{check_out_dir, OutState};

/// Options of [`take`].
#[derive(Debug, Clone, Default)]
pub struct SnapshotOptions {
    /// Replace an existing non-empty `--out` (only if it is a snapshot).
    pub force: bool,
    /// Also capture `SHOW GLOBAL VARIABLES` with the `mysql` client.
    pub mysql: bool,
    /// Which server `mysql` reads (the client's defaults unless set).
    pub mysql_connection: MysqlConnection,
}

/// Read the live host's running MySQL/MariaDB server read-only
/// (`SHOW GLOBAL VARIABLES` through the `mysql` client, as
/// `snapshot --mysql` does) into `host`, so its runtime rules judge what
/// the server runs with. What went wrong is kept on the host too (its
/// runtime rules are `unknown` with the reason) and returned for the
/// caller to say. Nothing on a snapshot, which holds its own capture.
pub fn read_running_mysql(host: &mut Host, conn: &MysqlConnection) -> Result<(), CommandError> {
    if host.kind() != crate::host::SourceKind::Live {
        return Ok(());
    }
    let name = crate::catalogue::MYSQL_VARIABLES.name;
    match mysql_capture_from(conn) {
        Ok(text) => {
            host.set_live_capture(name, Ok(text));
            Ok(())
        }
        Err(e) => {
            host.set_live_capture(
                name,
                Err(format!(
                    "{}: {e}",
                    crate::catalogue::MYSQL_VARIABLES.command
                )),
            );
            Err(e)
        }
    }
}

/// Capture the live host into `out`, copying what `policies` read.
pub fn take(
    policies: &PolicySet,
    out: &Path,
    opts: &SnapshotOptions,
) -> Result<SnapshotMeta, SnapshotError> {
    let checked = check_out_dir(out, opts.force)?;
    let host = Host::recording();
    let facts = engine::gather(policies, &host);
    let mut unreadable = unreadable_files(&facts.issues);

    // Fixed files every snapshot has, read through the same recording host.
    read_fixed_files(&host, &mut unreadable);
    capture_block_devices(&host);
    let log = host.read_log().unwrap_or_default();

    let mut w = Writer::default();
    plan_from_log(&host, &log, &mut w);

    // captures/
    capture_sysctl(&host, &mut w, &mut unreadable);
    capture_dir_sizes(&facts, &mut w, &mut unreadable);
    capture_file_modes(&facts, &mut w);
    capture_tune2fs(&log, &mut w, &mut unreadable);
    if opts.mysql {
        capture_mysql_variables(&mut w, &mut unreadable, &opts.mysql_connection);
    }
    capture_server_rpms(&mut w, &mut unreadable);

    unreadable.sort();
    unreadable.dedup();
    let mut meta = manifest(policies, &host, &log, &w, unreadable);
    if let OutState::Snapshot(..) = checked {
        if let Some(at) = unchanged_since(out, &w, &meta) {
            meta.captured_at = at;
        }
    }
    w.write_atomically(out, &meta, checked)?;
    Ok(meta)
}
