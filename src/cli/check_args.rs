//! What `driftaudit check` takes: its arguments ([`CheckArgs`], shared by
//! the one-host path in `check.rs` and the fleet path in `fleet.rs`), the
//! upgrade targets they name, and the root SARIF and JUnit paths are
//! relative to. Parses and resolves; never audits.

use clap::Args;

use driftaudit::Format;

use super::common::{FailOnArg, PolicyArgs, ReportFormat, TargetArg};
use super::select::SelectArgs;
use super::server_args::MysqlArgs;

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// Snapshot directory to audit (repeatable); without it the live host is audited.
    #[arg(long = "snapshot", value_name = "DIR")]
    pub(crate) snapshot: Vec<std::path::PathBuf>,
    /// Audit every snapshot folder under DIR in parallel, streaming each host
    /// and ending with a fleet summary.
    #[arg(long, value_name = "DIR", conflicts_with = "snapshot")]
    pub(crate) fleet: Option<std::path::PathBuf>,
    /// With --fleet: how many levels below DIR to look for snapshot folders.
    #[arg(long, value_name = "N", default_value_t = driftaudit::unstable::fleet::DEFAULT_MAX_DEPTH)]
    pub(crate) max_depth: usize,
    /// With --fleet: audit only shard K of N (a CI matrix job), a stable
    /// partition by each folder's path below DIR; `driftaudit merge` joins
    /// the shards' JSON reports (docs/git-workflow.md).
    #[arg(
        long,
        value_name = "K/N",
        requires = "fleet",
        conflicts_with = "snapshot"
    )]
    pub(crate) shard: Option<driftaudit::unstable::fleet::select::Shard>,
    /// With --fleet: audit only the snapshot folders with changes since this
    /// git commit (`git diff` in DIR's repository, plus untracked files).
    #[arg(
        long,
        value_name = "GITREV",
        requires = "fleet",
        conflicts_with = "snapshot"
    )]
    pub(crate) changed_since: Option<String>,
    #[command(flatten)]
    pub(crate) policies: PolicyArgs,
    /// The live host's running server (never read from a snapshot, which
    /// holds its own capture).
    #[command(flatten)]
    pub(crate) server: MysqlArgs,
    /// The rules this run judges: profiles, --only, --skip.
    #[command(flatten)]
    pub(crate) select: SelectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat(Format::Text))]
    pub(crate) format: ReportFormat,
    /// Exit 1 when a finding at or above this severity fails; `unknown`: also
    /// when any finding is unknown or an error (what could not be verified
    /// fails CI too), and failures of every severity.
    #[arg(long, value_enum, default_value_t = FailOnArg::Low)]
    pub(crate) fail_on: FailOnArg,
    /// Also list passing and skipped rules (text format).
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Text: one line per host, its failing rule ids and counts (with
    /// --fleet, then the fleet's totals line).
    #[arg(long, short, conflicts_with_all = ["verbose", "summary"])]
    pub(crate) quiet: bool,
    /// Text: the fleet summary table alone (one row per rule over every
    /// host audited, --snapshot or --fleet), without each host's findings.
    #[arg(long, conflicts_with = "verbose")]
    pub(crate) summary: bool,
    /// Waiver file (YAML): matching fail/unknown/error findings become waived.
    #[arg(long, value_name = "FILE")]
    pub(crate) waivers: Option<std::path::PathBuf>,
    /// Also check readiness for an upgrade to PRODUCT=VERSION (repeatable):
    /// mariadb=10.3|10.4|10.5|10.6|10.11|11.4, mysql=5.7|8.0|8.4 or
    /// kernel=X.Y; adds upgrade.* findings (docs/upgrade.md).
    #[arg(long = "target", value_name = "PRODUCT=VERSION", value_parser = TargetArg, hide_possible_values = true)]
    pub(crate) target: Vec<String>,
    /// Repository root that SARIF locations and JUnit `file` paths are
    /// relative to (default: the working directory), so code scanning and
    /// GitLab find `snapshots/db1/etc/sysctl.conf`; with --fleet --format
    /// json, what each host's `root` is relative to (for `merge`).
    #[arg(long, value_name = "DIR", visible_alias = "repo-root")]
    pub(crate) sarif_root: Option<std::path::PathBuf>,
}

/// The `--target` values, or the usage error naming the accepted forms.
pub(crate) fn targets(a: &CheckArgs) -> Result<Vec<driftaudit::unstable::upgrade::Target>, String> {
    a.target
        .iter()
        .map(|t| {
            driftaudit::unstable::upgrade::Target::parse(t).map_err(|e| format!("--target: {e}"))
        })
        .collect()
}

/// The repository root SARIF and JUnit paths are relative to: `--sarif-root`
/// or the working directory, canonical (snapshot roots are canonical too).
pub(crate) fn repo_root(dir: Option<&std::path::Path>) -> Result<std::path::PathBuf, String> {
    match dir {
        Some(d) => {
            std::fs::canonicalize(d).map_err(|e| format!("--sarif-root `{}`: {e}", d.display()))
        }
        None => std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .map_err(|e| format!("cannot read the working directory: {e}")),
    }
}
