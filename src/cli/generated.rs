//! `driftaudit schema`, `completions SHELL` and `man`: output generated from
//! definitions (the policy loader's types, the clap definition in `mod.rs`,
//! the man pages' table in `manual.rs`) rather than from an audit.

use super::common::{write_out, Exit};
use super::{manual, Cli};

/// Output generated from definitions rather than from an audit.
pub(crate) enum Generated {
    Schema,
    Completions(clap_complete::Shell),
    /// One page to stdout, or with `out` every page into that directory.
    Man {
        command: Option<String>,
        out: Option<std::path::PathBuf>,
    },
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
        Generated::Man { command, out: None } => {
            match manual::page(Cli::command(), command.as_deref()) {
                Ok(p) => p.into_bytes(),
                Err(e) => return Exit::Error(e),
            }
        }
        Generated::Man { out: Some(dir), .. } => match manual::write_all(Cli::command(), &dir) {
            Ok(files) => {
                let mut s = files.join("\n");
                s.push('\n');
                s.into_bytes()
            }
            Err(e) => return Exit::Error(e),
        },
    };
    match write_out(&String::from_utf8_lossy(&text)) {
        Ok(()) => Exit::Clean,
        Err(e) => e.into(),
    }
}
