//! `driftaudit snapshot`: capture the live host into a directory (the
//! library writes it, race-safely) and say what was written.

use clap::Args;

use super::common::{load_policies, Exit, PolicyArgs};

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
    /// Also capture `SHOW GLOBAL VARIABLES` with the mysql client (your own option files).
    #[arg(long)]
    pub(crate) mysql: bool,
}

pub(crate) fn run(a: SnapshotArgs) -> Exit {
    let set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    let opts = driftaudit::SnapshotOptions {
        force: a.force,
        mysql: a.mysql,
    };
    match driftaudit::snapshot(&set, &a.out, &opts) {
        Ok(meta) => {
            eprintln!(
                "driftaudit: snapshot of {} written to {} ({} files, {} unreadable listed in snapshot.json)",
                meta.host,
                a.out.display(),
                meta.files.len(),
                meta.unreadable.len()
            );
            Exit::Clean
        }
        Err(e) => Exit::Error(format!("snapshot: {e}")),
    }
}
