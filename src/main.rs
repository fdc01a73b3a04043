//! The `driftaudit` command line: argument parsing, exit codes and output
//! plumbing; audit logic lives in the library. Still here until issue 14
//! item 5 moves them: the JSON Lines writer and the `--only`/`--skip` glob
//! check with its suggestions.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use driftaudit::engine;
use driftaudit::host::Host;
use driftaudit::policy::{PolicySet, Severity};
use driftaudit::render::{self, Format, RenderOptions};

#[path = "cli/fleet.rs"]
mod fleet;

/// Audit Linux hosts for configuration drift.
#[derive(Parser, Debug)]
#[command(name = "driftaudit", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Audit the live host or snapshots against the policies.
    Check(CheckArgs),
    /// List the loaded rules (id, severity, title).
    List(PolicyArgs),
    /// Capture the live host into a snapshot directory (what the policies read).
    Snapshot(SnapshotArgs),
    /// Compare two snapshots (or a snapshot and `live`): settings and verdicts.
    Diff(DiffArgs),
    /// Explain one rule: rationale, fix, references, parameters, what it reads.
    Explain {
        /// Rule id, e.g. linux.tcp-tw-recycle.
        rule: String,
        #[command(flatten)]
        policies: PolicyArgs,
    },
    /// Print the JSON Schema of a policy file (policies/schema.json).
    Schema,
    /// Print a shell completion script, e.g. `driftaudit completions bash > /etc/bash_completion.d/driftaudit`.
    Completions {
        /// Shell to generate for.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `driftaudit man > driftaudit.1`.
    Man,
}

#[derive(Args, Debug, Clone)]
struct PolicyArgs {
    /// Extra policy file or directory (adds to the built-in policies). Repeatable.
    #[arg(long = "policy", value_name = "PATH")]
    policy: Vec<std::path::PathBuf>,
    /// Do not load the built-in policies.
    #[arg(long)]
    no_builtin: bool,
    /// Override a policy parameter: NAME=VALUE or POLICY.NAME=VALUE. Repeatable.
    #[arg(long = "set", value_name = "PARAM=VALUE")]
    set: Vec<String>,
}

#[derive(Args, Debug)]
struct CheckArgs {
    /// Snapshot directory to audit (repeatable); without it the live host is audited.
    #[arg(long = "snapshot", value_name = "DIR")]
    snapshot: Vec<std::path::PathBuf>,
    /// Audit every snapshot folder under DIR in parallel, streaming each host
    /// and ending with a fleet summary.
    #[arg(long, value_name = "DIR", conflicts_with = "snapshot")]
    fleet: Option<std::path::PathBuf>,
    /// With --fleet: how many levels below DIR to look for snapshot folders.
    #[arg(long, value_name = "N", default_value_t = driftaudit::fleet::DEFAULT_MAX_DEPTH)]
    max_depth: usize,
    #[command(flatten)]
    policies: PolicyArgs,
    /// Only rules whose id matches this glob (repeatable).
    #[arg(long = "only", value_name = "GLOB")]
    only: Vec<String>,
    /// Skip rules whose id matches this glob (repeatable).
    #[arg(long = "skip", value_name = "GLOB")]
    skip: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    format: FormatArg,
    /// Exit 1 when a finding at or above this severity fails; `unknown`: also
    /// when any finding is unknown or an error (what could not be verified
    /// fails CI too), and failures of every severity.
    #[arg(long, value_enum, default_value_t = FailOnArg::Low)]
    fail_on: FailOnArg,
    /// Also list passing and skipped rules (text format).
    #[arg(long, short)]
    verbose: bool,
    /// Waiver file (YAML): matching fail/unknown/error findings become waived.
    #[arg(long, value_name = "FILE")]
    waivers: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
struct SnapshotArgs {
    /// Directory to write (created; a non-empty one only with --force).
    #[arg(long, value_name = "DIR")]
    out: std::path::PathBuf,
    #[command(flatten)]
    policies: PolicyArgs,
    /// Replace a previous snapshot in --out.
    #[arg(long)]
    force: bool,
    /// Also capture `SHOW GLOBAL VARIABLES` with the mysql client (your own option files).
    #[arg(long)]
    mysql: bool,
}

#[derive(Args, Debug)]
struct DiffArgs {
    /// Snapshot directory, or `live`.
    before: String,
    /// Snapshot directory, or `live`.
    after: String,
    #[command(flatten)]
    policies: PolicyArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormatArg::Text)]
    format: DiffFormatArg,
    /// Also show a unified diff of each captured file that changed.
    #[arg(long)]
    files: bool,
    /// Exit 1 when a regression at or above this severity appears.
    #[arg(long, value_enum, default_value_t = SeverityArg::Low)]
    fail_on: SeverityArg,
    /// Waiver file applied to both sides before comparing verdicts.
    #[arg(long, value_name = "FILE")]
    waivers: Option<std::path::PathBuf>,
}

/// `diff` renders a comparison, not a report: text and JSON only.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum DiffFormatArg {
    Text,
    Json,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum FormatArg {
    Text,
    Json,
    Sarif,
    Junit,
    #[value(alias = "md")]
    Markdown,
    /// One host report per line (with --fleet, then one fleet summary line).
    Jsonl,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum SeverityArg {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

/// `check --fail-on`: a severity, or `unknown` (every failure, and unknown
/// or error findings).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum FailOnArg {
    Info,
    Low,
    Medium,
    High,
    Critical,
    Unknown,
}

impl FailOnArg {
    /// Whether unknown and error findings fail too.
    fn unknown(self) -> bool {
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
enum Exit {
    Clean,
    Findings,
    Error(String),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Check(a) => check(a),
        Command::List(p) => list(&p),
        Command::Snapshot(a) => snapshot(a),
        Command::Diff(a) => diff(a),
        Command::Explain { rule, policies } => explain(&rule, &policies),
        Command::Schema => generated(Generated::Schema),
        Command::Completions { shell } => generated(Generated::Completions(shell)),
        Command::Man => generated(Generated::Man),
    };
    match result {
        Exit::Clean => ExitCode::SUCCESS,
        Exit::Findings => ExitCode::from(1),
        Exit::Error(msg) => {
            eprintln!("driftaudit: {msg}");
            ExitCode::from(2)
        }
    }
}

fn load_policies(p: &PolicyArgs) -> Result<PolicySet, String> {
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

/// Every `--only`/`--skip` glob must match a loaded rule id: a typo would
/// otherwise audit nothing (or skip nothing) and still exit 0. The message
/// lists the ids closest to the glob.
fn rule_globs_match(set: &PolicySet, only: &[String], skip: &[String]) -> Result<(), String> {
    let ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
    let mut errors = Vec::new();
    for (flag, globs) in [("--only", only), ("--skip", skip)] {
        for g in globs {
            // a malformed glob is reported by PolicySet::filter
            let Ok(pattern) = glob::Pattern::new(g) else {
                continue;
            };
            if !ids.iter().any(|id| pattern.matches(id)) {
                errors.push(format!(
                    "`{flag} {g}` matches no rule{}",
                    close_ids(g, &ids)
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\ndriftaudit: "))
    }
}

/// `; close ids: `a`, `b`` for the (at most 5) rule ids nearest a glob, by
/// edit distance to the glob's literal text (to the id's prefix of the same
/// length when the glob has a wildcard), else a pointer to `driftaudit list`.
fn close_ids(glob: &str, ids: &[&str]) -> String {
    let literal: String = glob.chars().filter(|c| !"*?[]!".contains(*c)).collect();
    let wild = literal.len() != glob.len();
    let budget = 3.max(literal.chars().count() / 4);
    let mut near: Vec<(usize, &str)> = ids
        .iter()
        .map(|id| {
            let whole = driftaudit::expr::levenshtein(&literal, id);
            let prefix: String = id.chars().take(literal.chars().count()).collect();
            let d = if wild {
                whole.min(driftaudit::expr::levenshtein(&literal, &prefix))
            } else {
                whole
            };
            (d, *id)
        })
        .filter(|(d, _)| *d <= budget)
        .collect();
    near.sort();
    near.truncate(5);
    if near.is_empty() {
        return "; `driftaudit list` shows every rule id".into();
    }
    let list: Vec<String> = near.iter().map(|(_, id)| format!("`{id}`")).collect();
    format!("; close ids: {}", list.join(", "))
}

fn write_out(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

fn check(a: CheckArgs) -> Exit {
    let mut set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    if let Err(e) = rule_globs_match(&set, &a.only, &a.skip) {
        return Exit::Error(e);
    }
    if let Err(e) = set.filter(&a.only, &a.skip) {
        return Exit::Error(e.to_string());
    }
    if let Some(dir) = &a.fleet {
        return fleet::check_fleet(&a, &set, dir);
    }
    let hosts: Vec<Host> = if a.snapshot.is_empty() {
        vec![Host::live()]
    } else {
        let mut hs = Vec::new();
        for d in &a.snapshot {
            match Host::snapshot(d) {
                Ok(h) => hs.push(h),
                Err(e) => return Exit::Error(format!("snapshot `{}`: {e}", d.display())),
            }
        }
        hs
    };
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::waiver::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return Exit::Error(e.to_string()),
        },
        None => None,
    };
    let mut report = engine::audit(&set, &hosts);
    if let Some(w) = &waivers {
        w.apply(&mut report, &driftaudit::waiver::today());
    }
    let format = match a.format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
        FormatArg::Sarif => Format::Sarif,
        FormatArg::Junit => Format::Junit,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Jsonl => {
            let mut out = String::new();
            for h in &report.hosts {
                out.push_str(&serde_json::to_string(h).unwrap_or_default());
                out.push('\n');
            }
            if let Err(e) = write_out(&out) {
                return Exit::Error(e);
            }
            return if report.fails_at(a.fail_on.into())
                || (a.fail_on.unknown() && report.has_unknown())
            {
                Exit::Findings
            } else {
                Exit::Clean
            };
        }
    };
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let text = render::render(
        &report,
        format,
        RenderOptions {
            color,
            verbose: a.verbose,
        },
    );
    if let Err(e) = write_out(&text) {
        return Exit::Error(e);
    }
    if report.fails_at(a.fail_on.into()) || (a.fail_on.unknown() && report.has_unknown()) {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

fn snapshot(a: SnapshotArgs) -> Exit {
    let set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    let opts = driftaudit::snapshot::SnapshotOptions {
        force: a.force,
        mysql: a.mysql,
    };
    match driftaudit::snapshot::take(&set, &a.out, &opts) {
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

fn diff(a: DiffArgs) -> Exit {
    let set = match load_policies(&a.policies) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::waiver::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return Exit::Error(e.to_string()),
        },
        None => None,
    };
    let side = |s: &str| -> Result<driftaudit::diff::Side, String> {
        driftaudit::diff::Side::open(s).map_err(|e| format!("`{s}`: {e}"))
    };
    let (before, after) = match (side(&a.before), side(&a.after)) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), _) | (_, Err(e)) => return Exit::Error(e),
    };
    let today = driftaudit::waiver::today();
    let d = driftaudit::diff::diff(
        &set,
        &before,
        &after,
        &driftaudit::diff::DiffOptions {
            files: a.files,
            waivers: waivers.as_ref(),
            today: &today,
        },
    );
    let text = match a.format {
        DiffFormatArg::Text => driftaudit::diff::render_text(&d),
        DiffFormatArg::Json => driftaudit::diff::render_json(&d),
    };
    if let Err(e) = write_out(&text) {
        return Exit::Error(e);
    }
    // An incomplete `--files` comparison never reads as a clean one.
    if d.regresses_at(a.fail_on.into()) || d.files_incomplete() {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

fn list(p: &PolicyArgs) -> Exit {
    let set = match load_policies(p) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    let width = set.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in &set.rules {
        out.push_str(&format!(
            "{:<width$}  {:<8}  {}\n",
            r.id,
            r.severity.as_str(),
            r.title
        ));
    }
    match write_out(&out) {
        Ok(()) => Exit::Clean,
        Err(e) => Exit::Error(e),
    }
}

fn explain(id: &str, p: &PolicyArgs) -> Exit {
    let set = match load_policies(p) {
        Ok(s) => s,
        Err(e) => return Exit::Error(e),
    };
    let Some(rule) = set.rule(id) else {
        let ids: Vec<&str> = set.rules.iter().map(|r| r.id.as_str()).collect();
        return Exit::Error(format!(
            "no rule `{id}`{}",
            driftaudit::expr::suggest(id, &ids)
        ));
    };
    let text = driftaudit::explain::explain(&set, rule);
    match write_out(&text) {
        Ok(()) => Exit::Clean,
        Err(e) => Exit::Error(e),
    }
}

/// Output generated from definitions rather than from an audit.
enum Generated {
    Schema,
    Completions(clap_complete::Shell),
    Man,
}

fn generated(what: Generated) -> Exit {
    use clap::CommandFactory;
    let text = match what {
        Generated::Schema => {
            let mut s = serde_json::to_string_pretty(&driftaudit::policy::json_schema())
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
        Err(e) => Exit::Error(e),
    }
}
