//! What the subcommands share: the policy flags and loading, severity and
//! format flags, the exit-code enum, and writing output to stdout (a closed
//! pipe is not an error) or to a named file (a temporary file renamed over
//! it, so a planted link is replaced). Nothing here audits or formats a
//! report.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::LazyLock;

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};

use driftaudit::unstable::policy::ParamError;
use driftaudit::{Format, PolicyError, PolicySet, Severity};

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

/// A `--format` flag whose choices are the library's [`Format::ALL`] narrowed
/// by `$keep`: names, aliases and help come from [`Format`], so a format
/// added there appears in every subcommand that can write it.
macro_rules! format_arg {
    ($(#[$doc:meta])* $name:ident, $keep:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) struct $name(pub(crate) Format);

        impl ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                static CHOICES: LazyLock<Vec<$name>> = LazyLock::new(|| {
                    let keep: fn(Format) -> bool = $keep;
                    Format::ALL.iter().copied().filter(|f| keep(*f)).map($name).collect()
                });
                &CHOICES
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                let f = self.0;
                let value = PossibleValue::new(f.name()).aliases(f.aliases().iter().copied());
                // no empty help: it would turn clap's short list into a long one
                Some(match f.help() {
                    Some(h) => value.help(h),
                    None => value,
                })
            }
        }
    };
}

format_arg!(
    /// `check --format`: every format (`--fleet` narrows it at run time to
    /// those that stream).
    ReportFormat,
    |_| true
);

format_arg!(
    /// `diff --format`: the formats a diff has a form in.
    DiffFormat,
    Format::renders_diff
);

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
    /// Could not run: the message is printed after `driftaudit: `.
    Error(String),
}

/// Why a fleet or merge of more than `limit` hosts is refused in `format`
/// ([`Format::fleet_host_limit`]), and what to do instead.
pub(crate) fn too_many_hosts(format: Format, limit: usize) -> String {
    format!(
        "--format {} is one document over every host, held in memory until it is written, so it takes at most {limit} hosts and this run has more; audit the fleet in shards (`--shard 1/N` ... `N/N`, each a document of its own of at most {limit} hosts), or write a format that streams (jsonl, json or text)",
        format.name()
    )
}

/// Any error ends the subcommand with exit code 2 and its message.
impl<E: std::error::Error> From<E> for Exit {
    fn from(e: E) -> Exit {
        Exit::Error(e.to_string())
    }
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

/// Why the policies of a subcommand could not be loaded.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// A policy file is invalid or unreadable (every file's problems).
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A `--set` override was refused.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// Nothing to audit.
    #[error("no rules loaded: give --policy PATH or drop --no-builtin")]
    NoRules,
}

pub(crate) fn load_policies(p: &PolicyArgs) -> Result<PolicySet, LoadError> {
    load_policies_with(p, |_| Ok(()))
}

/// [`load_policies`] with rules `register` adds to the registry after the
/// built-in policies and before the `--policy` files, so their overlays
/// reach them too (the upgrade rules of `--target`).
pub(crate) fn load_policies_with(
    p: &PolicyArgs,
    register: impl FnOnce(&mut PolicySet) -> Result<(), PolicyError>,
) -> Result<PolicySet, LoadError> {
    let mut set = if p.no_builtin {
        PolicySet::new()
    } else {
        PolicySet::builtin()?
    };
    register(&mut set)?;
    // every file's problems in one error, not just the first file's
    set.add_paths(&p.policy)?;
    // a retired spelling loads and means what it meant; the author is told
    // how it is written now (stderr: reports on stdout stay as they are)
    for w in set.warnings() {
        eprintln!("warning[{}]: {w}", w.code.as_str());
    }
    for s in &p.set {
        set.set_param(s)?;
    }
    if set.rules().is_empty() {
        return Err(LoadError::NoRules);
    }
    Ok(set)
}

/// Output could not be written (a closed pipe is not this: the reader has
/// all it wanted).
#[derive(Debug, thiserror::Error)]
#[error("cannot write output: {}", driftaudit::unstable::host::io_message(.0))]
pub(crate) struct WriteError(#[from] pub(crate) std::io::Error);

pub(crate) fn write_out(text: &str) -> Result<(), WriteError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(WriteError(e)),
    }
}

/// `--color WHEN`, for [`color`]: `always` and `never` decide alone
/// (no-color.org: a command-line argument overrides `NO_COLOR`), `auto`
/// leaves it to the environment and the terminal.
pub(crate) fn set_color(when: clap::ColorChoice) {
    match when {
        clap::ColorChoice::Auto => anstream::ColorChoice::Auto,
        clap::ColorChoice::Always => anstream::ColorChoice::Always,
        clap::ColorChoice::Never => anstream::ColorChoice::Never,
    }
    .write_global();
}

/// Whether the text report on stdout is coloured: anstream's decision, as
/// clap and cargo make it. With `--color auto` (anstream
/// `AutoStream::choice`): never with a non-empty `NO_COLOR`; else always
/// with a non-empty `CLICOLOR_FORCE` (a pipe too); else never with
/// `CLICOLOR=0`; else only on a terminal whose `TERM` is set and not `dumb`
/// (or with `CLICOLOR` set, or under CI). docs/formats.md, Colour.
pub(crate) fn color() -> bool {
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect()
    }

    #[test]
    fn format_flags_offer_the_library_formats_they_can_write() {
        let all: Vec<String> = Format::ALL.iter().map(|f| f.name().to_string()).collect();
        assert_eq!(names::<ReportFormat>(), all);
        assert_eq!(names::<DiffFormat>(), ["text", "json"]);
        let md = ReportFormat(Format::Markdown).to_possible_value().unwrap();
        assert!(
            md.matches("md", false),
            "the `md` alias comes from Format::aliases"
        );
    }
}

/// The rule ids (and items' aliases) shell completions offer after
/// `--only`, `--skip` and `explain`: the built-in policies and every
/// product's upgrade rules. Built only when asked (completions, never an
/// audit).
static RULE_IDS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut set = match PolicySet::builtin() {
        Ok(s) => s,
        Err(_) => return Vec::new(),
    };
    if driftaudit::unstable::upgrade::register_all(&mut set).is_err() {
        return Vec::new();
    }
    let mut ids = Vec::new();
    for r in set.rules() {
        ids.push(r.id.clone());
        if let Some(fe) = &r.for_each {
            ids.extend(fe.static_aliases(set.policy_of(r)).into_iter().flatten());
        }
    }
    ids.sort();
    ids.dedup();
    ids
});

/// What shell completions offer after `--only` and `--skip`: the rule ids
/// of [`RULE_IDS`] and a `tag:NAME` for every tag of the built-in rules.
static RULE_SELECTORS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut out: Vec<String> = PolicySet::builtin()
        .map(|set| {
            set.tags()
                .into_keys()
                .map(|t| format!("{}{t}", driftaudit::unstable::policy::TAG_PREFIX))
                .collect()
        })
        .unwrap_or_default();
    out.extend(RULE_IDS.iter().cloned());
    out
});

/// A rule selector (`--only`, `--skip`): a rule-id glob or `tag:GLOB`,
/// accepted as it is (checked against the loaded rules where it is used);
/// the rule ids and tags are this argument's completions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleSelectorArg;

impl clap::builder::TypedValueParser for RuleSelectorArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            RULE_SELECTORS
                .iter()
                .map(|id| PossibleValue::new(id.as_str())),
        ))
    }
}

/// A rule id (`explain RULE`): any text is
/// accepted as it is; the rule ids are this argument's completions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleIdArg;

impl clap::builder::TypedValueParser for RuleIdArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            RULE_IDS.iter().map(|id| PossibleValue::new(id.as_str())),
        ))
    }
}

/// The `--target` forms shell completions offer: `PRODUCT=VERSION` for each
/// release series the upgrade data knows (a product whose data names no
/// series, the kernel, is offered with its examples).
static TARGETS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let Ok(all) = driftaudit::unstable::upgrade::data::builtin() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for k in all {
        let p = k.product.as_str();
        if k.targets.is_empty() {
            out.extend(["4.12", "5.15", "6.1", "6.6"].map(|v| format!("{p}={v}")));
        } else {
            out.extend(k.targets.iter().map(|v| format!("{p}={v}")));
        }
    }
    out
});

/// `--target PRODUCT=VERSION`: any text here (checked where it is used, with
/// the accepted forms in the error); the known series are its completions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TargetArg;

impl clap::builder::TypedValueParser for TargetArg {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            TARGETS.iter().map(|t| PossibleValue::new(t.as_str())),
        ))
    }
}

/// Write `text` to a new temporary file in `path`'s directory and rename it
/// over `path`: a reader never sees half a file (a policy, a man page), a failed write leaves
/// the old file, and a symbolic link at `path` is replaced, not followed.
pub(crate) fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    // the entry itself, not what a link there points to: a link is replaced
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".driftaudit-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    use std::os::unix::fs::PermissionsExt as _;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
