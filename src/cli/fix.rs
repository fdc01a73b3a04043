//! `driftaudit fix`: plan the fix of every failing finding with a remedy
//! (the library's `fix::plan`), print the patch on stdout (or the JSON
//! plan), write the runtime script where `--runtime` says, and the summary
//! on stderr. Writes nothing else; never changes the audited host.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use clap::{Args, ValueEnum};

use driftaudit::unstable::fix::{self, FixOptions, Prefer};

use super::common::{load_policies, write_out, Exit, PolicyArgs};
use super::select::SelectArgs;
use super::server_args::MysqlArgs;

#[derive(Args, Debug)]
pub(crate) struct FixArgs {
    /// Snapshot directory to fix; without it the live host is captured
    /// into a private temporary snapshot first (nothing on the host
    /// changes): files read-only, `tune2fs -l` on ext4 devices, `rpm -qa`,
    /// and with --mysql `my_print_defaults` plus the `mysql` client (`SHOW
    /// GLOBAL VARIABLES`), all as the user running `fix` (often root); the
    /// stderr summary says what ran.
    #[arg(long, value_name = "DIR")]
    pub(crate) snapshot: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) server: MysqlArgs,
    /// Do not read the running server: the default since every live read
    /// of a server is asked for with --mysql (kept for older scripts).
    #[arg(long, hide = true, conflicts_with_all = ["mysql", "mysql_defaults_file", "mysql_socket"])]
    pub(crate) no_mysql: bool,
    #[command(flatten)]
    pub(crate) policies: PolicyArgs,
    /// The rules whose findings are fixed: profiles, --only, --skip (as
    /// `check` selects them).
    #[command(flatten)]
    pub(crate) select: SelectArgs,
    /// Waiver file (YAML): waived findings are not fixed.
    #[arg(long, value_name = "FILE")]
    pub(crate) waivers: Option<std::path::PathBuf>,
    /// Drift rules: apply the configured value to the running system
    /// (`configured`), or write the running value into the file that wins.
    #[arg(long, value_enum, default_value_t = PreferArg::Configured)]
    pub(crate) prefer: PreferArg,
    /// Write the runtime steps (a POSIX sh script) to FILE (created new; it
    /// must not exist).
    #[arg(long, value_name = "FILE")]
    pub(crate) runtime: Option<std::path::PathBuf>,
    /// Output format: the patch (`text`), or the whole plan as JSON.
    #[arg(long, value_enum, default_value_t = FixFormat::Text)]
    pub(crate) format: FixFormat,
    /// Do not prove the plan by re-auditing a patched copy.
    #[arg(long)]
    pub(crate) no_verify: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum PreferArg {
    Configured,
    Running,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum FixFormat {
    Text,
    Json,
}

fn globs(list: &[String]) -> Result<Vec<glob::Pattern>, String> {
    list.iter()
        .map(|g| glob::Pattern::new(g).map_err(|e| format!("rule glob `{g}`: {}", e.msg)))
        .collect()
}

pub(crate) fn run(a: FixArgs) -> Exit {
    let mut set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e.to_string()),
    };
    let chosen = match a.select.apply(&mut set) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let (only, skip) = match (globs(&chosen.only), globs(&chosen.skip)) {
        (Ok(o), Ok(s)) => (o, s),
        (Err(e), _) | (_, Err(e)) => return Exit::Error(e),
    };
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return Exit::Error(e.to_string()),
        },
        None => None,
    };
    if let Some(dir) = &a.snapshot {
        if let Err(e) = driftaudit::Host::snapshot(dir) {
            return Exit::Error(format!("snapshot `{}`: {e}", dir.display()));
        }
    }
    let opts = FixOptions {
        prefer: match a.prefer {
            PreferArg::Configured => Prefer::Configured,
            PreferArg::Running => Prefer::Running,
        },
        no_verify: a.no_verify,
        only,
        skip,
        waivers,
        mysql: a.server.connection(),
        tamper: None,
    };
    let plan = match fix::plan(&set, a.snapshot.as_deref(), &opts) {
        Ok(p) => p,
        Err(e) => return Exit::Error(e.to_string()),
    };
    if let Some(path) = &a.runtime {
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .and_then(|mut f| f.write_all(plan.script().as_bytes()));
        if let Err(e) = written {
            return Exit::Error(format!("cannot write `{}`: {e}", path.display()));
        }
    }
    let out = match a.format {
        FixFormat::Text => plan.patch.clone(),
        FixFormat::Json => plan.to_json(),
    };
    if let Err(e) = write_out(&out) {
        return Exit::Error(e.to_string());
    }
    eprint!("{}", plan.summary());
    if plan.exit_code() == 0 {
        Exit::Clean
    } else {
        Exit::Findings
    }
}
