//! `check --fleet DIR` plumbing: drives rayon over chunks of discovered
//! snapshot folders, renders each host on a worker thread, writes hosts in
//! discovery order and drops them (text, JSON, JSON Lines), or keeps them
//! for the formats that are one document (SARIF, JUnit, Markdown, HTML)
//! and the Prometheus counts; shows a progress bar only on a terminal.
//! All audit logic lives in the library (`fleet`).

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use driftaudit::unstable::fleet::select::{ChangedSince, Selection};
use driftaudit::unstable::fleet::{self as lib, FleetSummary, HostDigest};
use driftaudit::unstable::host::io_message;
use driftaudit::unstable::render::prometheus::{self, HostCounts};
use driftaudit::unstable::render::stream::{render_host, FleetWriter};
use driftaudit::unstable::report::merge::{self, RunMeta};
use driftaudit::{Brief, Format, PolicySet, RenderOptions, Severity};

use super::check_args::{repo_root, CheckArgs};
use super::common::{color, Exit, WriteError};

/// Why `check --fleet` could not run, or ran but could not search everything.
#[derive(Debug, thiserror::Error)]
enum FleetError {
    #[error("--fleet `{}`: not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("--fleet `{}`: {}", .dir.display(), io_message(.source))]
    Inspect { dir: PathBuf, source: io::Error },
    #[error(
        "--fleet `{}`: no snapshot folders found (a folder with {}), searched {depth} levels deep{}",
        .dir.display(),
        driftaudit::unstable::host::layout::SNAPSHOT_MARKERS,
        if *.unsearched { ", some folders could not be read" } else { "" }
    )]
    NoSnapshots {
        dir: PathBuf,
        depth: usize,
        unsearched: bool,
    },
    #[error("{0} folder(s) under the fleet could not be searched")]
    Unsearched(usize),
}

/// Hosts audited per parallel batch: enough to keep every core busy, few
/// enough that the batch's rendered output stays small.
fn chunk_size() -> usize {
    (rayon::current_num_threads() * 64).clamp(64, 1024)
}

pub(crate) fn check_fleet(a: &CheckArgs, set: &PolicySet, dir: &Path) -> Exit {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return FleetError::NotADirectory(dir.to_path_buf()).into(),
        Err(source) => {
            return FleetError::Inspect {
                dir: dir.to_path_buf(),
                source,
            }
            .into()
        }
    }
    let format = a.format.0;
    // Prometheus is not streamed: each host leaves its counts, and the
    // metrics are written once at the end (a metric family is one group).
    let prom = format == Format::Prometheus;
    // SARIF, JUnit, Markdown and HTML are one document over every host (a
    // SARIF run, a JUnit name unique in the file, the fleet table): the
    // hosts are kept and rendered at the end, as `merge` renders shards.
    let whole = !format.streams() && !prom;
    // The repository root SARIF and JUnit paths, and the JSON's per-host
    // (and JSON Lines') `root`, are relative to (`--sarif-root` or the
    // working directory).
    let repo = if matches!(
        format,
        Format::Json | Format::Jsonl | Format::Sarif | Format::Junit
    ) {
        match repo_root(a.sarif_root.as_deref()) {
            Ok(r) => Some(r),
            Err(e) => return Exit::Error(e),
        }
    } else {
        None
    };
    // applied host by host on the workers; judged (stale, expired) once
    // every host is in, or with --shard by `merge` over every shard
    let waivers = match &a.waivers {
        Some(p) => match driftaudit::WaiverSet::load(p) {
            Ok(w) => Some(w),
            Err(e) => return e.into(),
        },
        None => None,
    };
    let today = driftaudit::unstable::waiver::today();
    let mut usage = waivers
        .as_ref()
        .map(driftaudit::unstable::waiver::Usage::new);
    let opts = RenderOptions {
        color: color(),
        verbose: a.verbose,
        repo_root: repo.as_deref(),
        brief: None,
    };
    let fail_on: Severity = a.fail_on.into();
    let selection = Selection {
        shard: a.shard,
        changed: match &a.changed_since {
            Some(rev) => match ChangedSince::query(dir, rev) {
                Ok(c) => Some(c),
                Err(e) => return Exit::Error(e.to_string()),
            },
            None => None,
        },
    };
    let mut left_out = 0usize; // discovered, not selected
    let mut hosts_unknown = 0usize; // with --fail-on unknown
    let progress = io::stderr().is_terminal().then(|| {
        let pb = indicatif::ProgressBar::new(0);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos}/{len} hosts [{elapsed_precise}] {per_sec} {wide_bar}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });

    let out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    // --quiet / --summary (text): a line per host or nothing, then the
    // totals or the table, written here rather than by the FleetWriter
    let brief = a.quiet || a.summary;
    let (mut writer, mut prom_out) = if prom || whole || brief {
        (None, Some(out))
    } else {
        match FleetWriter::new(out, format, opts) {
            Ok(w) if format == Format::Json => {
                // what `driftaudit merge` needs: the rule catalogue and the run
                let run = RunMeta {
                    fleet: Some(dir.display().to_string()),
                    shard: a.shard.map(|s| s.to_string()),
                    changed_since: a.changed_since.clone(),
                    ..RunMeta::new(set, &fail_on_name(a))
                };
                match w.with_run(&driftaudit::Report::new(vec![], set).rules, &run) {
                    Ok(w) => (Some(w), None),
                    Err(e) => return write_error(e),
                }
            }
            Ok(w) => (Some(w), None),
            Err(e) => return write_error(e),
        }
    };
    let mut counts: Vec<HostCounts> = Vec::new();
    let mut kept: Vec<driftaudit::HostReport> = Vec::new();
    let mut summary = FleetSummary::new(set);
    let mut walk = lib::discover(dir, a.max_depth);
    let mut walk_errors = 0usize;
    // A format that is one document over every host keeps them all: its
    // first batch takes one host more than it may hold, so a larger fleet
    // is refused before any host is audited.
    let limit = format.fleet_host_limit().filter(|_| whole);
    let chunk = limit.map_or_else(chunk_size, |l| l + 1);
    // What to gather depends on the rules alone: planned once, not per host.
    let needs = driftaudit::unstable::engine::needs(set);
    loop {
        let mut batch: Vec<PathBuf> = Vec::with_capacity(chunk);
        for item in walk.by_ref() {
            match item {
                Ok(p) if !selection.selects(Path::new(&lib::relative_path(dir, &p))) => {
                    left_out += 1;
                }
                Ok(p) => {
                    batch.push(p);
                    if batch.len() == chunk {
                        break;
                    }
                }
                Err(e) => {
                    walk_errors += 1;
                    let msg = format!("driftaudit: {e}");
                    match &progress {
                        Some(pb) => pb.println(msg),
                        None => eprintln!("{msg}"),
                    }
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        if let Some(l) = limit.filter(|l| kept.len() + batch.len() > *l) {
            return Exit::Error(super::common::too_many_hosts(format, l));
        }
        if let Some(pb) = &progress {
            pb.inc_length(batch.len() as u64);
        }
        type Done = io::Result<(
            String,
            HostDigest,
            bool,
            Option<HostCounts>,
            Option<driftaudit::HostReport>,
            Option<driftaudit::unstable::waiver::Usage>,
        )>;
        let done: Vec<Done> = batch
            .par_iter()
            .map(|d| {
                let mut report = lib::audit_dir_planned(set, &needs, d);
                let used = waivers.as_ref().map(|w| w.apply_host(&mut report, &today));
                let rel = lib::relative_path(dir, d);
                let digest = HostDigest::of(&report, &rel, fail_on);
                report.path = Some(rel);
                if let (Some(repo), Some(root)) = (&repo, &report.root) {
                    report.repo_dir = Some(merge::repo_dir(root, repo));
                }
                let unknown = a.fail_on.unknown() && report.has_unknown();
                let host_counts = prom.then(|| HostCounts::of(&report));
                let (text, keep) = if a.summary || prom {
                    (Ok(String::new()), None)
                } else if a.quiet {
                    let quiet = RenderOptions {
                        brief: Some(Brief::Quiet),
                        ..opts
                    };
                    (render_host(format, quiet, report), None)
                } else if whole {
                    (Ok(String::new()), Some(report))
                } else {
                    (render_host(format, opts, report), None)
                };
                if let Some(pb) = &progress {
                    pb.inc(1);
                }
                text.map(|t| (t, digest, unknown, host_counts, keep, used))
            })
            .collect();
        for r in done {
            let (text, digest, unknown, host_counts, keep, used) = match r {
                Ok(x) => x,
                Err(e) => return write_error(e),
            };
            if let (Some(all), Some(u)) = (usage.as_mut(), used) {
                all.add(&u);
            }
            hosts_unknown += usize::from(unknown);
            summary.add_digest(digest);
            counts.extend(host_counts);
            kept.extend(keep);
            if let Some(w) = writer.as_mut() {
                if let Err(e) = w.rendered(&text) {
                    return write_error(e);
                }
            } else if let (true, Some(out)) = (a.quiet, prom_out.as_mut()) {
                if let Err(e) = out.write_all(text.as_bytes()) {
                    return write_error(e);
                }
            }
        }
    }
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    // the waivers judged over every host of the run: in the summary (the
    // streamed formats, Prometheus) or on the first host each one scopes
    // (the formats rendered at the end); a shard leaves them to `merge`
    let mut waiver_fails = false;
    let mut whole_verdicts = Vec::new();
    if let (Some(w), Some(u)) = (&waivers, &usage) {
        if a.shard.is_some() {
            if let Some(wr) = writer.as_mut() {
                wr.set_waivers(merge::WaiverRun {
                    file: w.path().to_string(),
                    usage: u.clone(),
                });
            }
        } else {
            let verdicts = w.verdicts(u, &today);
            waiver_fails = verdicts.iter().any(|(f, _)| f.severity >= fail_on);
            if whole {
                whole_verdicts = verdicts;
            } else {
                summary.add_run_findings(verdicts);
            }
        }
    }
    let finished = match (writer, prom_out.as_mut()) {
        (Some(w), _) => w.finish(&summary).and_then(|mut w| w.flush()),
        (None, Some(out)) if whole => {
            let mut report = driftaudit::Report::new(kept, set);
            driftaudit::unstable::waiver::attach(&mut report, whole_verdicts);
            let text = driftaudit::render(&report, format, opts);
            out.write_all(text.as_bytes()).and_then(|_| out.flush())
        }
        (None, Some(out)) if brief => {
            let table = summary.render_text();
            let text = if a.quiet {
                // the totals line alone
                table
                    .lines()
                    .last()
                    .map(|l| format!("{l}\n"))
                    .unwrap_or_default()
            } else {
                table
            };
            out.write_all(text.as_bytes()).and_then(|_| out.flush())
        }
        (None, Some(out)) => {
            let rules = prometheus::fleet_rule_failures(&summary, set);
            let text = prometheus::render_counts(&counts, Some(&rules), prometheus::now());
            out.write_all(text.as_bytes()).and_then(|_| out.flush())
        }
        (None, None) => Ok(()),
    };
    if let Err(e) = finished {
        return write_error(e);
    }
    if !selection.is_all() {
        let mut what = Vec::new();
        if let Some(s) = a.shard {
            what.push(format!("shard {s}"));
        }
        if let Some(rev) = &a.changed_since {
            what.push(format!("changed since `{rev}`"));
        }
        eprintln!(
            "driftaudit: {}: {} of {} snapshot folders audited",
            what.join(", "),
            summary.hosts,
            summary.hosts + left_out
        );
    }
    if summary.hosts == 0 && left_out > 0 {
        // an empty shard, or nothing changed: a valid, empty report
        return if walk_errors > 0 {
            Exit::Error(format!(
                "{walk_errors} folder(s) under the fleet could not be searched"
            ))
        } else {
            Exit::Clean
        };
    }
    if summary.hosts == 0 {
        return FleetError::NoSnapshots {
            dir: dir.to_path_buf(),
            depth: a.max_depth,
            unsearched: walk_errors > 0,
        }
        .into();
    }
    if summary.hosts_failing_at_threshold > 0 || hosts_unknown > 0 || waiver_fails {
        Exit::Findings
    } else if walk_errors > 0 {
        FleetError::Unsearched(walk_errors).into()
    } else {
        Exit::Clean
    }
}

/// `--fail-on` as written (`high`, `unknown`), for the report's `run`.
fn fail_on_name(a: &CheckArgs) -> String {
    clap::ValueEnum::to_possible_value(&a.fail_on)
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

fn write_error(e: io::Error) -> Exit {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Exit::Clean
    } else {
        WriteError(e).into()
    }
}
