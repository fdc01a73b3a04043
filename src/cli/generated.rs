//! `driftaudit schema`, `completions SHELL` and `man`: output generated from
//! definitions (the policy loader's types, the clap definition in `mod.rs`)
//! rather than from an audit.

use super::common::{write_out, Exit};
use super::Cli;

/// Output generated from definitions rather than from an audit.
pub(crate) enum Generated {
    Schema,
    Completions(clap_complete::Shell),
    Man,
}

pub(crate) fn run(what: Generated) -> Exit {
    use clap::CommandFactory;
    let text = match what {
        Generated::Schema => {
            let mut s = serde_json::to_string_pretty(&driftaudit::unstable::policy::json_schema())
                .unwrap_or_default();
            s.push('\n');
            s.into_bytes()
        }
        Generated::Completions(shell) => {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "driftaudit", &mut buf);
            buf
        }
        Generated::Man => {
            let mut buf = Vec::new();
            if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut buf) {
                return Exit::Error(format!("cannot render the man page: {e}"));
            }
            buf
        }
    };
    match write_out(&String::from_utf8_lossy(&text)) {
        Ok(()) => Exit::Clean,
        Err(e) => e.into(),
    }
}
