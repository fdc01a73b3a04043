//! The `driftaudit` binary: hands the command line to `cli` (one file per
//! subcommand in src/cli/), picks the process's allocator, and exits with
//! the code it returns.

use std::process::ExitCode;

mod cli;

// mimalloc for the binary only: embedders keep their own allocator (see the
// reason and the figures beside the dependency in Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run()
}
