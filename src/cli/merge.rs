//! `driftaudit merge`: combine fleet JSON reports (the shards of `check
//! --fleet --shard K/N`, or whole fleet reports) into one report, in any
//! format. The checks and the merge are the library's (`report::merge`);
//! this reads the files, says where each host's snapshot is, and writes.

use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use clap::Args;

use driftaudit::unstable::render::sarif;
use driftaudit::unstable::render::stream::write_merged;
use driftaudit::unstable::report::merge;
use driftaudit::{Format, RenderOptions};

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
    /// With --format sarif: the repository root SARIF locations are relative
    /// to (default: the working directory).
    #[arg(long, value_name = "DIR")]
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
    // Each host's snapshot folder as `check` saw it (its --fleet DIR, from
    // here), so SARIF locations come out relative to the repository.
    if let Some(fleet) = merged.run.fleet.clone() {
        for h in &mut merged.report.hosts {
            if let Some(rel) = &h.path {
                let dir = Path::new(&fleet).join(rel);
                h.root = Some(std::path::absolute(&dir).map_or(dir.clone(), |abs| {
                    std::fs::canonicalize(&abs).unwrap_or(abs)
                }));
            }
        }
    }
    let opts = RenderOptions {
        color: color(),
        verbose: a.verbose,
    };
    if a.format.0 == Format::Sarif {
        let root = a.sarif_root.clone().unwrap_or_else(|| PathBuf::from("."));
        let root = match std::fs::canonicalize(&root) {
            Ok(r) => r,
            Err(e) => return Exit::Error(format!("--sarif-root `{}`: {e}", root.display())),
        };
        let text = sarif::render_with(&merged.report, &sarif::SarifOptions::with_root(root));
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
    match write_merged(out, &merged, a.format.0, opts) {
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
