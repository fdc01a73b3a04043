//! `driftaudit merge`: combine fleet JSON reports (the shards of `check
//! --fleet --shard K/N`, or whole fleet reports) into one report, in any
//! format. The checks and the merge are the library's (`report::merge`);
//! this reads the files, says where each host's snapshot is, and writes.

use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use clap::Args;

use driftaudit::unstable::render::stream::write_merged;
use driftaudit::unstable::render::{junit, sarif};
use driftaudit::unstable::report::merge;
use driftaudit::{Format, RenderOptions};

use super::check_args::repo_root;
use super::common::{color, write_out, Exit, ReportFormat};

#[derive(Args, Debug)]
pub(crate) struct MergeArgs {
    /// Fleet JSON reports of `check --fleet DIR --format json` (every shard
    /// of one run, or whole reports of disjoint fleets).
    #[arg(value_name = "REPORT", required = true)]
    reports: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat(Format::Json))]
    format: ReportFormat,
    /// Also list passing and skipped rules (text format).
    #[arg(long, short)]
    verbose: bool,
    /// Repository root that SARIF locations and JUnit `file` paths are
    /// relative to, and that each host's recorded `root` is read from
    /// (default: the working directory), as with `check`.
    #[arg(long, value_name = "DIR", visible_alias = "repo-root")]
    sarif_root: Option<PathBuf>,
    /// The waiver file the shards were audited with (`check --fleet
    /// --shard K/N --waivers FILE`): its expired and stale waivers are
    /// judged here, over every shard's hosts.
    #[arg(long, value_name = "FILE")]
    waivers: Option<PathBuf>,
}

/// Largest report `merge` reads: a fleet of thousands of hosts is tens of
/// megabytes of JSON.
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// Read one report through the capped, FIFO-safe reader the policy loader
/// uses (issue 29): a FIFO or device is refused, not waited on, and no more
/// than [`MAX_REPORT_BYTES`] is read (`/dev/zero` cannot fill memory).
fn read_report(p: &std::path::Path) -> Result<String, String> {
    use driftaudit::unstable::reader::{self, Failure};
    let abs = std::path::absolute(p).map_err(|e| e.to_string())?;
    let bytes = reader::read_file(&abs, MAX_REPORT_BYTES).map_err(|e| match e {
        Failure::TooLarge(_) => format!(
            "larger than the {MAX_REPORT_BYTES}-byte report cap; merge fewer shards at a time"
        ),
        e => e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {}); give the JSON report `check --format json` wrote",
            e.utf8_error().valid_up_to()
        )
    })
}

pub(crate) fn run(a: MergeArgs) -> Exit {
    let mut docs = Vec::with_capacity(a.reports.len());
    let mut hosts = 0usize;
    let limit = a.format.0.fleet_host_limit();
    for p in &a.reports {
        let name = p.display().to_string();
        let text = match read_report(p) {
            Ok(t) => t,
            Err(e) => return Exit::Error(format!("cannot read `{name}`: {e}")),
        };
        match merge::parse(&name, &text) {
            Ok(d) => {
                hosts += d.hosts.len();
                if let Some(l) = limit.filter(|l| hosts > *l) {
                    return Exit::Error(super::common::too_many_hosts(a.format.0, l));
                }
                docs.push((name, d))
            }
            Err(e) => return Exit::Error(e.to_string()),
        }
    }
    let mut merged = match merge::merge(docs) {
        Ok(m) => m,
        Err(e) => return Exit::Error(e.to_string()),
    };
    let format = a.format.0;
    let waiver_fails = match judge_waivers(&mut merged, a.waivers.as_deref(), format) {
        Ok(f) => f,
        Err(e) => return Exit::Error(e),
    };
    let opts = RenderOptions {
        color: color(),
        verbose: a.verbose,
    };
    if matches!(format, Format::Sarif | Format::Junit) {
        let root = match repo_root(a.sarif_root.as_deref()) {
            Ok(r) => r,
            Err(e) => return Exit::Error(e),
        };
        place_hosts(&mut merged, &root);
        let text = if format == Format::Sarif {
            sarif::render_with(&merged.report, &sarif::SarifOptions::with_root(&root))
        } else {
            junit::render_with(&merged.report, Some(&root))
        };
        if let Err(e) = write_out(&text) {
            return e.into();
        }
        return if merged.fails() || waiver_fails {
            Exit::Findings
        } else {
            Exit::Clean
        };
    }
    let out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match write_merged(out, &merged, format, opts) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Exit::Clean,
        Err(e) => return Exit::Error(format!("cannot write output: {e}")),
    }
    if merged.fails() || waiver_fails {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

/// Judge the shards' waivers over every shard: their expired and stale
/// waivers become `driftaudit.waiver` findings, in the summary (formats
/// that stream) or on the first host each scopes. Whether one of them
/// fails at the run's `--fail-on`.
fn judge_waivers(
    merged: &mut merge::Merged,
    file: Option<&Path>,
    format: Format,
) -> Result<bool, String> {
    let recorded = merged.run.waivers.clone();
    let (w, usage) = match (file, recorded) {
        (None, None) => return Ok(false),
        (None, Some(r)) => {
            return Err(format!(
                "the reports were audited with --waivers `{}`: give `merge --waivers FILE` so its stale and expired waivers are judged over every shard",
                r.file
            ))
        }
        (Some(p), None) => {
            return Err(format!(
                "--waivers `{}`: the reports were audited without --waivers; run `check --fleet ... --waivers FILE` for every shard",
                p.display()
            ))
        }
        (Some(p), Some(r)) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => (w, r.usage),
            Err(e) => return Err(e.to_string()),
        },
    };
    if usage.used.len() != w.waivers().len() {
        return Err(format!(
            "--waivers `{}` holds {} waivers, the shards were audited with a file of {}: give the same file",
            w.path(),
            w.waivers().len(),
            usage.used.len()
        ));
    }
    let verdicts = w.verdicts(&usage, &driftaudit::unstable::waiver::today());
    let threshold = merged
        .run
        .threshold()
        .map_or(driftaudit::Severity::Low, |t| t.0);
    let fails = verdicts.iter().any(|(f, _)| f.severity >= threshold);
    if format.streams() {
        merged.summary.add_run_findings(verdicts);
    } else {
        driftaudit::unstable::waiver::attach(&mut merged.report, verdicts);
    }
    Ok(fails)
}

/// Each host's snapshot folder, where SARIF and JUnit place its files: the
/// `root` the report recorded, below this merge's repository root (the
/// folder need not exist here: a merge job may have only the reports). A
/// report without `root` (older driftaudit) gives its `--fleet DIR` joined
/// with the host's `path`, from the working directory.
fn place_hosts(merged: &mut merge::Merged, repo: &Path) {
    let fleet = merged.run.fleet.clone();
    for h in &mut merged.report.hosts {
        h.root = match (&h.repo_dir, &fleet, &h.path) {
            (Some(dir), _, _) => Some(merge::resolve_repo_dir(repo, dir)),
            (None, Some(fleet), Some(rel)) => {
                let dir = Path::new(fleet).join(rel);
                Some(std::path::absolute(&dir).map_or(dir.clone(), |abs| {
                    std::fs::canonicalize(&abs).unwrap_or(abs)
                }))
            }
            _ => None,
        };
    }
}
