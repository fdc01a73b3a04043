//! `driftaudit check`: audit the live host, snapshots or (with `--fleet`,
//! in `fleet.rs`) a tree of snapshot folders, and render the report. Also
//! the `--only`/`--skip` check that every glob matches a rule.

use clap::Args;

use driftaudit::{audit, render, Format, Host, PolicySet, RenderOptions};

use super::common::{
    color, load_policies_with, write_out, Exit, FailOnArg, PolicyArgs, ReportFormat,
    RuleSelectorArg, TargetArg,
};
use super::fleet;

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
    /// Only rules whose id matches this glob, or that carry a tag matching
    /// `tag:GLOB` (`tag:cis-l1-server`; repeatable).
    #[arg(long = "only", value_name = "GLOB", value_parser = RuleSelectorArg, hide_possible_values = true)]
    pub(crate) only: Vec<String>,
    /// Skip rules whose id matches this glob, or that carry a tag matching
    /// `tag:GLOB` (repeatable).
    #[arg(long = "skip", value_name = "GLOB", value_parser = RuleSelectorArg, hide_possible_values = true)]
    pub(crate) skip: Vec<String>,
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

pub(crate) fn run(a: CheckArgs) -> Exit {
    let targets = match targets(&a) {
        Ok(t) => t,
        Err(e) => return Exit::Error(e),
    };
    // the upgrade rules of the targets are rules of the one registry:
    // listed, filtered, changed by overlays and waived like the others
    let mut set = match load_policies_with(&a.policies, |s| {
        driftaudit::unstable::upgrade::register(s, &targets)
    }) {
        Ok(s) => s,
        Err(e) => return e.into(),
    };
    // `tag:NAME` selectors become the ids of the rules that carry the tag
    let (only, skip) = match (set.expand_tags(&a.only), set.expand_tags(&a.skip)) {
        (Ok(o), Ok(s)) => (o, s),
        (Err(e), _) | (_, Err(e)) => return e.into(),
    };
    if let Err(e) = rule_globs_match(&set, &only, &skip) {
        return e.into();
    }
    if let Err(e) = set.filter(&only, &skip) {
        return e.into();
    }
    if (a.quiet || a.summary) && a.format.0 != Format::Text {
        return Exit::Error(format!(
            "--{} shapes the text report: drop it or use --format text",
            if a.quiet { "quiet" } else { "summary" }
        ));
    }
    if let Some(dir) = &a.fleet {
        return fleet::check_fleet(&a, &set, &targets, dir);
    }
    let hosts: Vec<Host> = if a.snapshot.is_empty() {
        vec![Host::live()]
    } else {
        let mut hs = Vec::new();
        for d in &a.snapshot {
            match Host::snapshot(d) {
                Ok(h) => hs.push(h),
                Err(source) => {
                    return OpenError {
                        dir: d.clone(),
                        source,
                    }
                    .into()
                }
            }
        }
        hs
    };
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return e.into(),
        },
        None => None,
    };
    let mut report = audit(&set, &hosts);
    // a snapshot in which no domain is found is a wrong input, not a host
    // with nothing to report (`--snapshot /etc` for `/`)
    for (h, dir) in report.hosts.iter().zip(&a.snapshot) {
        if let Some(e) = NothingDetected::of(h, dir) {
            return e.into();
        }
    }
    // before waivers, so they cover upgrade findings too
    driftaudit::unstable::upgrade::extend_report(&mut report, &hosts, &targets, &set);
    if let Some(w) = &waivers {
        w.apply(&mut report, &driftaudit::unstable::waiver::today());
    }
    let format = a.format.0;
    let text = match format {
        Format::Sarif | Format::Junit => {
            let root = match repo_root(a.sarif_root.as_deref()) {
                Ok(r) => r,
                Err(e) => return Exit::Error(e),
            };
            if format == Format::Sarif {
                driftaudit::unstable::render::sarif::render_with(
                    &report,
                    &driftaudit::unstable::render::sarif::SarifOptions::with_root(root),
                )
            } else {
                driftaudit::unstable::render::junit::render_with(&report, Some(&root))
            }
        }
        Format::Text if a.quiet => report
            .hosts
            .iter()
            .map(driftaudit::unstable::render::text::quiet_line)
            .collect(),
        Format::Text if a.summary => {
            let fail_on: driftaudit::Severity = a.fail_on.into();
            let mut summary = driftaudit::unstable::fleet::FleetSummary::new(&set);
            for (i, h) in report.hosts.iter().enumerate() {
                let path = a
                    .snapshot
                    .get(i)
                    .map_or_else(|| h.host.clone(), |d| d.display().to_string());
                summary.add(h, &path, fail_on);
            }
            summary.render_text()
        }
        _ => render(
            &report,
            format,
            RenderOptions {
                color: color(),
                verbose: a.verbose,
            },
        ),
    };
    if let Err(e) = write_out(&text) {
        return e.into();
    }
    if report.fails_at(a.fail_on.into()) || (a.fail_on.unknown() && report.has_unknown()) {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

/// A `--snapshot` directory that cannot be opened as a snapshot.
#[derive(Debug, thiserror::Error)]
#[error("snapshot `{}`: {source}", .dir.display())]
struct OpenError {
    dir: std::path::PathBuf,
    source: driftaudit::ReadError,
}

/// A `--snapshot` in which no domain was detected, no rule reached a
/// verdict and none of the folders the readers read from exists.
#[derive(Debug, thiserror::Error)]
#[error("snapshot `{}`: no domain detected in it: {looked}; give the snapshot's root, the folder that holds etc/, proc/, sys/ or captures/{hint}", .dir.display())]
struct NothingDetected {
    dir: std::path::PathBuf,
    /// What each domain looked for.
    looked: String,
    /// Empty, or where the root probably is.
    hint: String,
}

impl NothingDetected {
    fn of(h: &driftaudit::HostReport, dir: &std::path::Path) -> Option<NothingDetected> {
        // a tree of configuration alone (an etc/sysctl.conf) is a snapshot
        // with unknowns: only a folder where no domain was found, no rule
        // reached a verdict and none of the places the readers read from
        // exists (it was detected by `opt/`, `usr/`, ...: `/etc` has `opt/`)
        let judged = h.findings.iter().any(|f| {
            matches!(
                f.status,
                driftaudit::Status::Pass | driftaudit::Status::Fail | driftaudit::Status::Waived
            )
        });
        let read_from = ["etc", "proc", "sys", "captures", "sos_commands"]
            .iter()
            .any(|d| dir.join(d).is_dir())
            || dir.join("snapshot.json").is_file();
        if judged || read_from || h.coverage.is_empty() || h.coverage.iter().any(|c| c.detected) {
            return None;
        }
        let looked: Vec<String> = h
            .coverage
            .iter()
            .map(|c| format!("{} ({})", c.domain.label(), c.looked_for))
            .collect();
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let hint = match (name, dir.parent()) {
            ("etc" | "proc" | "sys" | "opt" | "var" | "captures", Some(p)) => format!(
                " (`{}` looks like the snapshot's {name}/: its root is `{}`)",
                dir.display(),
                if p.as_os_str().is_empty() {
                    ".".into()
                } else {
                    p.display().to_string()
                }
            ),
            _ => String::new(),
        };
        Some(NothingDetected {
            dir: dir.to_path_buf(),
            looked: looked.join("; "),
            hint,
        })
    }
}

/// `--only`/`--skip` globs that match no loaded rule, one message line each
/// (the first after `driftaudit: `, the others with it).
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\ndriftaudit: "))]
pub(crate) struct UnmatchedGlobs(Vec<UnmatchedGlob>);

/// One glob that matches no rule, with the ids closest to it.
#[derive(Debug, thiserror::Error)]
#[error("`{flag} {glob}` matches no rule{close}")]
struct UnmatchedGlob {
    flag: &'static str,
    glob: String,
    /// `; close ids: ...` or the pointer to `driftaudit list`.
    close: String,
}

/// Every `--only`/`--skip` glob must match a loaded rule id: a typo would
/// otherwise audit nothing (or skip nothing) and still exit 0. The message
/// lists the ids closest to the glob.
pub(crate) fn rule_globs_match(
    set: &PolicySet,
    only: &[String],
    skip: &[String],
) -> Result<(), UnmatchedGlobs> {
    // a `for_each` rule's items answer to their aliases too
    let aliases: Vec<String> = set
        .rules
        .iter()
        .filter_map(|r| Some(r.for_each.as_ref()?.static_aliases(set.policy_of(r))))
        .flatten()
        .flatten()
        .collect();
    let ids: Vec<&str> = set
        .rules
        .iter()
        .map(|r| r.id.as_str())
        .chain(aliases.iter().map(String::as_str))
        .collect();
    let mut errors = Vec::new();
    for (flag, globs) in [("--only", only), ("--skip", skip)] {
        for g in globs {
            // a malformed glob is reported by PolicySet::filter
            let Ok(pattern) = glob::Pattern::new(g) else {
                continue;
            };
            if !ids.iter().any(|id| pattern.matches(id)) {
                errors.push(UnmatchedGlob {
                    flag,
                    glob: g.clone(),
                    close: close_ids(g, &ids),
                });
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(UnmatchedGlobs(errors))
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
            let whole = driftaudit::unstable::expr::levenshtein(&literal, id);
            let prefix: String = id.chars().take(literal.chars().count()).collect();
            let d = if wild {
                whole.min(driftaudit::unstable::expr::levenshtein(&literal, &prefix))
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
