//! What the subcommands share: the policy flags and loading, severity
//! flags, the exit-code enum, and writing output to stdout (a closed pipe
//! is not an error). Nothing here audits or formats a report.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use driftaudit::{PolicySet, Severity};

#[derive(Args, Debug, Clone)]
pub(crate) struct PolicyArgs {
    /// Extra policy file or directory (adds to the built-in policies). Repeatable.
    #[arg(long = "policy", value_name = "PATH")]
    pub(crate) policy: Vec<std::path::PathBuf>,
    /// Do not load the built-in policies.
    #[arg(long)]
    pub(crate) no_builtin: bool,
    /// Override a policy parameter: NAME=VALUE or POLICY.NAME=VALUE. Repeatable.
    #[arg(long = "set", value_name = "PARAM=VALUE")]
    pub(crate) set: Vec<String>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum SeverityArg {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

/// `check --fail-on`: a severity, or `unknown` (every failure, and unknown
/// or error findings).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailOnArg {
    Info,
    Low,
    Medium,
    High,
    Critical,
    Unknown,
}

impl FailOnArg {
    /// Whether unknown and error findings fail too.
    pub(crate) fn unknown(self) -> bool {
        self == FailOnArg::Unknown
    }
}

impl From<FailOnArg> for Severity {
    fn from(s: FailOnArg) -> Severity {
        match s {
            FailOnArg::Info | FailOnArg::Unknown => Severity::Info,
            FailOnArg::Low => Severity::Low,
            FailOnArg::Medium => Severity::Medium,
            FailOnArg::High => Severity::High,
            FailOnArg::Critical => Severity::Critical,
        }
    }
}

impl From<SeverityArg> for Severity {
    fn from(s: SeverityArg) -> Severity {
        match s {
            SeverityArg::Info => Severity::Info,
            SeverityArg::Low => Severity::Low,
            SeverityArg::Medium => Severity::Medium,
            SeverityArg::High => Severity::High,
            SeverityArg::Critical => Severity::Critical,
        }
    }
}

/// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 usage/policy/input error.
pub(crate) enum Exit {
    Clean,
    Findings,
    Error(String),
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        match e {
            Exit::Clean => ExitCode::SUCCESS,
            Exit::Findings => ExitCode::from(1),
            Exit::Error(msg) => {
                eprintln!("driftaudit: {msg}");
                ExitCode::from(2)
            }
        }
    }
}

pub(crate) fn load_policies(p: &PolicyArgs) -> Result<PolicySet, String> {
    let mut set = if p.no_builtin {
        PolicySet::new()
    } else {
        PolicySet::builtin().map_err(|e| e.to_string())?
    };
    // every file's problems in one error, not just the first file's
    set.add_paths(&p.policy).map_err(|e| e.to_string())?;
    for s in &p.set {
        set.set_param(s).map_err(|e| e.to_string())?;
    }
    if set.rules.is_empty() {
        return Err("no rules loaded: give --policy PATH or drop --no-builtin".into());
    }
    Ok(set)
}

pub(crate) fn write_out(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

/// ANSI colour only on a terminal, and never with a non-empty `NO_COLOR`.
pub(crate) fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}
