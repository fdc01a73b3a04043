//! The `driftaudit` binary: hands the command line to `cli` (one file per
//! subcommand in src/cli/) and exits with the code it returns.

use std::process::ExitCode;

mod cli;

fn main() -> ExitCode {
    cli::run()
}
