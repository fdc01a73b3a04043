//! `driftaudit diff`: compare two snapshots (or one and `live`), settings
//! and verdicts, and write the comparison.

use clap::Args;

use driftaudit::Format;

use super::common::{load_policies, write_out, DiffFormat, Exit, PolicyArgs, SeverityArg};
use super::select::SelectArgs;
use super::server_args::{read_server, MysqlArgs};

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// Snapshot directory, or `live`.
    pub(crate) before: String,
    /// Snapshot directory, or `live`.
    pub(crate) after: String,
    #[command(flatten)]
    pub(crate) policies: PolicyArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat(Format::Text))]
    pub(crate) format: DiffFormat,
    /// Also show a unified diff of each captured file that changed.
    #[arg(long)]
    pub(crate) files: bool,
    /// Exit 1 when a regression at or above this severity appears.
    #[arg(long, value_enum, default_value_t = SeverityArg::Low)]
    pub(crate) fail_on: SeverityArg,
    /// Waiver file applied to both sides before comparing verdicts.
    #[arg(long, value_name = "FILE")]
    pub(crate) waivers: Option<std::path::PathBuf>,
    /// The `live` side's running server (see `check --mysql`).
    #[command(flatten)]
    pub(crate) server: MysqlArgs,
    /// The rules whose verdicts are compared: profiles, --only, --skip (as
    /// `check` selects them).
    #[command(flatten)]
    pub(crate) select: SelectArgs,
}

pub(crate) fn run(a: DiffArgs) -> Exit {
    let mut set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    if let Err(e) = a.select.apply(&mut set) {
        return e;
    }
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return e.into(),
        },
        None => None,
    };
    let side = driftaudit::Side::open;
    let (mut before, mut after) = match (side(&a.before), side(&a.after)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return e.into(),
    };
    if a.server.connection().is_some() {
        if a.before != "live" && a.after != "live" {
            return Exit::Error(
                "--mysql reads the live host's running server: name `live` as one side (each snapshot holds its own capture)".into(),
            );
        }
        // one read serves both sides when both are `live`
        for s in [&mut before, &mut after] {
            if s.label == "live" {
                read_server(&mut s.host, &a.server);
            }
        }
    }
    let today = driftaudit::unstable::waiver::today();
    let d = driftaudit::diff(
        &set,
        &before,
        &after,
        &driftaudit::DiffOptions {
            files: a.files,
            waivers: waivers.as_ref(),
            today: &today,
        },
    );
    // DiffFormat offers only the formats a diff renders in
    let Some(text) = driftaudit::render_diff(&d, a.format.0) else {
        return Exit::Error(format!("a diff has no `{}` form", a.format.0.name()));
    };
    if let Err(e) = write_out(&text) {
        return e.into();
    }
    // An incomplete `--files` comparison never reads as a clean one.
    if d.regresses_at(a.fail_on.into()) || d.files_incomplete() {
        Exit::Findings
    } else {
        Exit::Clean
    }
}
