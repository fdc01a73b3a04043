//! `driftaudit snapshot`: capture the live host into a directory (the
//! library writes it, race-safely) and say what was written and what could
//! not be captured; a failed `--mysql` capture exits 1.

use clap::Args;

use super::common::{load_policies, Exit, PolicyArgs};
use super::server_args::MysqlArgs;

#[derive(Args, Debug)]
pub(crate) struct SnapshotArgs {
    /// Directory to write (created; a non-empty one only with --force).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: std::path::PathBuf,
    #[command(flatten)]
    pub(crate) policies: PolicyArgs,
    /// Replace a previous snapshot in --out.
    #[arg(long)]
    pub(crate) force: bool,
    #[command(flatten)]
    pub(crate) server: MysqlArgs,
}

/// Unreadable entries named on stderr (all are in snapshot.json).
const MAX_SHOWN: usize = 10;

pub(crate) fn run(a: SnapshotArgs) -> Exit {
    let set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let opts = driftaudit::SnapshotOptions {
        force: a.force,
        mysql: a.server.connection().is_some(),
        mysql_connection: a.server.connection().unwrap_or_default(),
    };
    match driftaudit::snapshot(&set, &a.out, &opts) {
        Ok(meta) => {
            // what the kernel refuses by design (an unset stable_secret)
            // is recorded, never a warning
            let expected = meta.unreadable.iter().filter(|u| u.expected).count();
            let refusals = match expected {
                0 => String::new(),
                n => format!(" and {n} value(s) the kernel keeps unreadable by design"),
            };
            eprintln!(
                "driftaudit: snapshot of {} written to {} ({} files, {} unreadable{refusals} listed in snapshot.json)",
                driftaudit::unstable::render::quoted_name(&meta.host),
                a.out.display(),
                meta.files.len(),
                meta.unreadable.len() - expected
            );
            let unexpected: Vec<_> = meta.unreadable.iter().filter(|u| !u.expected).collect();
            for u in unexpected.iter().take(MAX_SHOWN) {
                eprintln!(
                    "driftaudit: not captured: {}: {}",
                    driftaudit::unstable::render::quoted_name(&u.path),
                    driftaudit::unstable::render::printable(&u.reason, false)
                );
            }
            if unexpected.len() > MAX_SHOWN {
                eprintln!(
                    "driftaudit: ... and {} more in snapshot.json",
                    unexpected.len() - MAX_SHOWN
                );
            }
            // a capture asked for that failed is the user's business: the
            // snapshot is written, but the run says it is not what was asked
            let wanted = format!(
                "captures/{}",
                driftaudit::unstable::catalogue::MYSQL_VARIABLES.name
            );
            if let Some(u) = meta
                .unreadable
                .iter()
                .find(|u| a.server.connection().is_some() && u.path == wanted)
            {
                eprintln!(
                    "driftaudit: --mysql: the server's variables were not captured ({}); the snapshot has no {} and its MySQL runtime rules will be unknown",
                    driftaudit::unstable::render::printable(&u.reason, false),
                    wanted
                );
                return Exit::Findings;
            }
            Exit::Clean
        }
        Err(e) => Exit::Error(format!("snapshot: {e}")),
    }
}
