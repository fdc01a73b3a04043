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

use super::check::repo_root;
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
}

pub(crate) fn run(a: MergeArgs) -> Exit {
    let mut docs = Vec::with_capacity(a.reports.len());
    for p in &a.reports {
        let name = p.display().to_string();
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => return Exit::Error(format!("cannot read `{name}`: {e}")),
        };
        match merge::parse(&name, &text) {
            Ok(d) => docs.push((name, d)),
            Err(e) => return Exit::Error(e.to_string()),
        }
    }
    let mut merged = match merge::merge(docs) {
        Ok(m) => m,
        Err(e) => return Exit::Error(e.to_string()),
    };
    let opts = RenderOptions {
        color: color(),
        verbose: a.verbose,
    };
    let format = a.format.0;
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
        return if merged.fails() {
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
    if merged.fails() {
        Exit::Findings
    } else {
        Exit::Clean
    }
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
