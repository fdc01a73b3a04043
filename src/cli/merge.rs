//! `driftaudit merge`: combine fleet JSON reports (the shards of `check
//! --fleet --shard K/N`, or whole fleet reports) into one report, in any
//! format, streamed (`fleet::merge`): a first pass reads each report on a
//! worker thread and every check is made before a byte is written; the
//! second pass takes the hosts of every report in path order and writes
//! them one at a time. JSON copies each host's text as the report holds it
//! when it is what `check --fleet` writes for that host (the first pass
//! checked it), JSON Lines compacts it, any other host is rendered again;
//! text and Prometheus read each host whole on the worker threads, a batch
//! at a time; SARIF, JUnit, Markdown and HTML (at most 2,000 hosts) collect
//! the hosts and render once. This says where each host's snapshot is and
//! writes; the checks and the merge are the library's.

use std::collections::BTreeSet;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use rayon::prelude::*;

use driftaudit::unstable::fleet::merge as streamed;
use driftaudit::unstable::render::prometheus::{self, ReportMetrics};
use driftaudit::unstable::render::stream::{
    compact_pretty_json, render_host, write_merged, FleetWriter,
};
use driftaudit::unstable::report::merge::{self, MergeError};
use driftaudit::unstable::waiver;
use driftaudit::{Finding, Format, HostReport, RenderOptions};

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

pub(crate) fn run(a: MergeArgs) -> Exit {
    let format = a.format.0;
    let limit = format.fleet_host_limit();
    // the first pass, a report per worker thread; errors in the order given
    let scanned: Vec<Result<streamed::Input, MergeError>> = a
        .reports
        .par_iter()
        .map(|p| streamed::scan(&p.display().to_string(), p))
        .collect();
    let mut inputs = Vec::with_capacity(scanned.len());
    let mut hosts = 0usize;
    for input in scanned {
        let input = match input {
            Ok(i) => i,
            Err(e) => return Exit::Error(e.to_string()),
        };
        hosts += input.hosts();
        if let Some(l) = limit.filter(|l| hosts > *l) {
            return Exit::Error(super::common::too_many_hosts(format, l));
        }
        inputs.push(input);
    }
    let mut plan = match streamed::plan(inputs) {
        Ok(p) => p,
        Err(e) => return Exit::Error(e.to_string()),
    };
    let (verdicts, waiver_fails) = match judge_waivers(&plan.run, a.waivers.as_deref()) {
        Ok(v) => v,
        Err(e) => return Exit::Error(e),
    };
    let fails = plan.fails() || waiver_fails;
    let opts = RenderOptions {
        color: color(),
        verbose: a.verbose,
        ..Default::default()
    };
    let written = match format {
        Format::Text | Format::Json | Format::Jsonl => {
            // formats that stream take the waivers' findings in the summary
            plan.summary.add_run_findings(verdicts);
            write_streamed(&plan, format, opts)
        }
        Format::Prometheus => write_metrics(&plan, verdicts),
        _ => return write_document(plan, format, opts, verdicts, a.sarif_root.as_deref(), fails),
    };
    match written {
        Ok(()) => {}
        Err(Fail::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => return Exit::Clean,
        Err(Fail::Write(e)) => return Exit::Error(format!("cannot write output: {e}")),
        Err(Fail::Merge(e)) => return Exit::Error(e.to_string()),
    }
    if fails {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

/// Why the second pass stopped.
enum Fail {
    Merge(MergeError),
    Write(io::Error),
}

impl From<MergeError> for Fail {
    fn from(e: MergeError) -> Fail {
        Fail::Merge(e)
    }
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Fail {
        Fail::Write(e)
    }
}

/// Hosts taken from the stream and handed to the worker threads together:
/// at most this many bytes of JSON (and at least one host)...
const BATCH_BYTES: usize = 8 << 20;
/// ... and at most this many hosts.
const BATCH_HOSTS: usize = 256;

/// A host of the second pass, copied out of its report's window for a
/// worker thread.
struct Taken {
    input: usize,
    text: Vec<u8>,
    pretty: bool,
    at: u64,
}

/// Every host of the second pass, in path order, through `each` on the
/// worker threads a batch at a time, handed to `put` in that order; a host
/// `copy` says to take as it is goes to `put_text` from its report's window
/// instead (after the batch before it).
fn each_host<T: Send>(
    plan: &streamed::Plan,
    copy: impl Fn(&streamed::StreamedHost) -> bool,
    each: impl Fn(Taken) -> Result<T, MergeError> + Sync,
    mut put: impl FnMut(T) -> Result<(), Fail>,
    mut put_text: impl FnMut(&[u8]) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let mut hosts = plan.stream()?;
    let mut batch: Vec<Taken> = Vec::new();
    let mut bytes = 0usize;
    let mut run = |batch: &mut Vec<Taken>| -> Result<(), Fail> {
        let done: Vec<Result<T, MergeError>> =
            std::mem::take(batch).into_par_iter().map(&each).collect();
        for d in done {
            put(d?)?;
        }
        Ok(())
    };
    while let Some(h) = hosts.next_host()? {
        if copy(&h) {
            run(&mut batch)?;
            bytes = 0;
            put_text(h.text)?;
            continue;
        }
        bytes += h.text.len();
        batch.push(Taken {
            input: h.input,
            text: h.text.to_vec(),
            pretty: h.pretty,
            at: h.at,
        });
        if bytes >= BATCH_BYTES || batch.len() >= BATCH_HOSTS {
            run(&mut batch)?;
            bytes = 0;
        }
    }
    run(&mut batch)
}

/// Text, JSON and JSON Lines: the document `check --fleet` writes, a host
/// at a time. A host in the layout `check` writes is copied (JSON) or
/// compacted (JSON Lines) as it is; any other is read and rendered.
fn write_streamed(plan: &streamed::Plan, format: Format, opts: RenderOptions) -> Result<(), Fail> {
    // smaller than a host, which is then written from its report's window
    // rather than copied into the buffer first
    let out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let w = FleetWriter::new(out, format, opts)?.with_run(&plan.rules, &plan.run)?;
    let w = std::cell::RefCell::new(w);
    each_host(
        plan,
        |h| format == Format::Json && h.pretty,
        |t| {
            if format == Format::Jsonl && t.pretty {
                let mut line = Vec::with_capacity(t.text.len());
                compact_pretty_json(&t.text, &mut line);
                line.push(b'\n');
                return Ok(line);
            }
            let host = plan.parse_host(t.input, &t.text, t.at)?;
            render_host(format, opts, host)
                .map(String::into_bytes)
                .map_err(|e| MergeError::Json {
                    name: plan.names()[t.input].to_string(),
                    message: e.to_string(),
                })
        },
        |text| Ok(w.borrow_mut().rendered_bytes(&text)?),
        |text| Ok(w.borrow_mut().rendered_bytes(text)?),
    )?;
    w.into_inner().finish(&plan.summary)?;
    Ok(())
}

/// Prometheus: each host read and counted; the metrics written at the end
/// as for the merged report. The waivers' findings go on the first host of
/// the name each one scopes, or the first host when none has that name
/// (`waiver::attach`): that host is counted last, in its place.
fn write_metrics(plan: &streamed::Plan, verdicts: Vec<(Finding, String)>) -> Result<(), Fail> {
    // the plan's catalogue, copied only to add the waivers' rule
    let mut rules = std::borrow::Cow::Borrowed(plan.rules.as_slice());
    if !verdicts.is_empty() && !rules.iter().any(|r| r.id == waiver::WAIVER_RULE) {
        rules.to_mut().push(waiver::waiver_rule_meta());
    }
    let mut metrics = ReportMetrics::new(&rules);
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut first: Option<HostReport> = None;
    let attach = |h: &mut HostReport, to: &dyn Fn(&str) -> bool| {
        let mut findings = std::mem::take(&mut h.findings);
        findings.extend(
            verdicts
                .iter()
                .filter(|(_, n)| to(n))
                .map(|(f, _)| f.clone()),
        );
        h.set_findings(findings);
    };
    let mut index = 0usize;
    each_host(
        plan,
        |_| false,
        |t| plan.parse_host(t.input, &t.text, t.at),
        |mut h| {
            index += 1;
            let new_name = seen.insert(h.host.clone());
            if index == 1 && !verdicts.is_empty() {
                metrics.hold_first();
                first = Some(h);
                return Ok(());
            }
            if new_name && verdicts.iter().any(|(_, n)| *n == h.host) {
                let name = h.host.clone();
                attach(&mut h, &|n| n == name);
            }
            metrics.add(&h);
            Ok(())
        },
        |_| Ok(()),
    )?;
    if let Some(mut h) = first {
        let name = h.host.clone();
        attach(&mut h, &|n| n == name || !seen.contains(n));
        metrics.put_first(&h);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    out.write_all(metrics.render(prometheus::now()).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// SARIF, JUnit, Markdown and HTML: one document over every host (at most
/// [`Format::fleet_host_limit`]), rendered once the hosts are read.
fn write_document(
    plan: streamed::Plan,
    format: Format,
    opts: RenderOptions,
    verdicts: Vec<(Finding, String)>,
    sarif_root: Option<&Path>,
    fails: bool,
) -> Exit {
    let mut hosts = Vec::with_capacity(plan.hosts());
    let read = each_host(
        &plan,
        |_| false,
        |t| plan.parse_host(t.input, &t.text, t.at),
        |h| {
            hosts.push(h);
            Ok(())
        },
        |_| Ok(()),
    );
    match read {
        Ok(()) => {}
        Err(Fail::Merge(e)) => return Exit::Error(e.to_string()),
        Err(Fail::Write(e)) => return Exit::Error(format!("cannot write output: {e}")),
    }
    let mut merged = plan.into_merged(hosts);
    // the waivers' findings on the first host each scopes
    waiver::attach(&mut merged.report, verdicts);
    if matches!(format, Format::Sarif | Format::Junit) {
        let root = match repo_root(sarif_root) {
            Ok(r) => r,
            Err(e) => return Exit::Error(e),
        };
        place_hosts(&mut merged, &root);
        let opts = RenderOptions {
            repo_root: Some(&root),
            ..opts
        };
        let text = driftaudit::render(&merged.report, format, opts);
        if let Err(e) = write_out(&text) {
            return e.into();
        }
    } else {
        let out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
        match write_merged(out, &merged, format, opts) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Exit::Clean,
            Err(e) => return Exit::Error(format!("cannot write output: {e}")),
        }
    }
    if fails {
        Exit::Findings
    } else {
        Exit::Clean
    }
}

/// Judge the shards' waivers over every shard: their expired and stale
/// waivers as `driftaudit.waiver` findings, each with the host it
/// concerns (for the summary, or the first host each scopes), and whether
/// one of them fails at the run's `--fail-on`.
fn judge_waivers(
    run: &merge::RunMeta,
    file: Option<&Path>,
) -> Result<(Vec<(Finding, String)>, bool), String> {
    let recorded = run.waivers.clone();
    let (w, usage) = match (file, recorded) {
        (None, None) => return Ok((Vec::new(), false)),
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
    let verdicts = w.verdicts(&usage, &waiver::today());
    let threshold = run.threshold().map_or(driftaudit::Severity::Low, |t| t.0);
    let fails = verdicts.iter().any(|(f, _)| f.severity >= threshold);
    Ok((verdicts, fails))
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
