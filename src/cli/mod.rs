//! The `driftaudit` command line: one file per subcommand, plus `common` for
//! what they share (policy flags, exit codes, output writing) and
//! `server_args` for the one way a live server is read (`--mysql`). Parses flags,
//! calls the library and writes what its renderers return; audit logic and
//! printers live in the library. Help, man page and completions all come
//! from the one clap definition below.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod baseline;
mod check;
mod check_args;
mod common;
mod diff;
mod explain;
mod fix;
mod fleet;
mod generated;
mod list;
mod manual;
mod merge;
mod select;
mod server_args;
mod snapshot;
mod test;

use check_args::CheckArgs;
use common::PolicyArgs;
use diff::DiffArgs;
use generated::Generated;
use snapshot::SnapshotArgs;

/// Audit Linux hosts for configuration drift.
#[derive(Parser, Debug)]
#[command(name = "driftaudit", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// When to colour the text report: auto (a terminal that can, unless
    /// NO_COLOR or CLICOLOR=0; CLICOLOR_FORCE forces it), always, never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    color: clap::ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Audit the live host or snapshots against the policies.
    Check(CheckArgs),
    /// List the effective rule set: id, severity, title, and what site
    /// overlays changed (which file and line).
    List(list::ListArgs),
    /// Capture the live host into a snapshot directory (what the policies read).
    Snapshot(SnapshotArgs),
    /// Compare two snapshots (or a snapshot and `live`): settings and verdicts.
    Diff(DiffArgs),
    /// Combine fleet JSON reports (the shards of `check --fleet --shard K/N`)
    /// into one report in any format, the fleet summary recomputed.
    Merge(merge::MergeArgs),
    /// Explain one rule: rationale, fix, references, parameters, what it reads.
    Explain {
        /// Rule id, e.g. linux.tcp-tw-recycle.
        #[arg(value_parser = common::RuleIdArg, hide_possible_values = true)]
        rule: String,
        #[command(flatten)]
        policies: PolicyArgs,
    },
    /// Plan the fix of every failing finding with a remedy: a patch on
    /// stdout, runtime steps with --runtime, proven by re-auditing a copy.
    Fix(fix::FixArgs),
    /// Write a policy that pins a golden host's effective values (sysctl.d,
    /// my.cnf, localconfig, fstab): `check` then reports every setting that
    /// differs on another host, and every setting it has that the golden host
    /// lacks (a closed world; --open NS leaves a namespace out). Values keep
    /// the golden host's spelling (10G) and compare by meaning.
    Baseline(baseline::BaselineArgs),
    /// Run policy tests (`*.test.yaml`): expected verdicts of rules on
    /// snapshots; exit 1 on any mismatch.
    Test(test::TestArgs),
    /// Print the JSON Schema of a policy file (policies/schema.json).
    Schema,
    /// Print a shell completion script, e.g. `driftaudit completions bash > /etc/bash_completion.d/driftaudit`.
    Completions {
        /// Shell to generate for.
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff): driftaudit(1), or driftaudit-COMMAND(1)
    /// with a command, e.g. `driftaudit man fix > driftaudit-fix.1`; `--out
    /// DIR` writes them all.
    Man {
        /// The command whose page to print (check, snapshot, diff, fix, ...).
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(manual::commands().collect::<Vec<_>>()))]
        command: Option<String>,
        /// Write every page into DIR (driftaudit.1, driftaudit-check.1, ...),
        /// created if missing, and print their names.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        out: Option<std::path::PathBuf>,
    },
}

/// Parse the command line, run the subcommand, and map its [`Exit`] to the
/// process exit code via [`common::Exit`] (0 clean, 1 findings, 2 usage, policy or input error).
pub(crate) fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    common::set_color(cli.color);
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::List(a) => list::run(&a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Explain { rule, policies } => explain::run(&rule, &policies),
        Command::Fix(a) => fix::run(a),
        Command::Test(a) => test::run(a),
        Command::Baseline(a) => baseline::run(a),
        Command::Schema => generated::run(Generated::Schema),
        Command::Completions { shell } => generated::run(Generated::Completions(shell)),
        Command::Man { command, out } => generated::run(Generated::Man { command, out }),
    };
    result.into()
}
