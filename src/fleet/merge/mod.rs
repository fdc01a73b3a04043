//! `driftaudit merge` over report files, streamed. A first pass ([`scan`])
//! reads each report once, each host as a host report, folded into the
//! report's summary (`report::merge::light`), and [`plan`] checks everything `report::merge::agree` checks, and that
//! no host folder is in two reports, before anything is written; a second
//! pass ([`Plan::stream`]) walks the hosts of every report in path order,
//! the order of an unsharded run (a k-way merge: each report is in path
//! order, which the first pass checked), for the caller to copy or render
//! one at a time, each the bytes the first pass read (a report whose
//! ctime changed is refused before, a host whose bytes did as it is read).
//! Holds a window of each report (at least its current host), the fleet
//! summary, the run metadata and one rule catalogue, never the hosts; owns
//! no thread (the CLI runs the first pass of each report on its own) and
//! writes nothing.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

use crate::report::fleet::{FleetSummary, FLEET_SCHEMA};
use crate::report::merge::light::{merge_parts, Part};
use crate::report::merge::{agree, catalogue_digest, InputFacts, MergeError, Merged, RunMeta};
use crate::report::shard::Shard;
use crate::report::{HostReport, Report, RuleMeta, REPORT_SCHEMA};

pub mod document;
pub mod window;

pub use document::MAX_MEMBER_BYTES;
use document::{serde_at, Cursor, Hosts, Stop};

impl Stop {
    /// The error of input `name`, read from `file`.
    fn error(self, name: &str, file: &File) -> MergeError {
        let name = name.to_string();
        match self {
            Stop::Io(e) => MergeError::Read {
                name,
                message: crate::reader::io_message(&e),
            },
            Stop::Json {
                message,
                at,
                line,
                column,
            } => MergeError::Json {
                name,
                message: Stop::json_message(&message, at, line, column, file),
            },
            Stop::Utf8(offset) => MergeError::Read {
                name,
                message: format!("not UTF-8 text (invalid byte at offset {offset}); give the JSON report `check --format json` wrote"),
            },
            Stop::TooLarge(what, at) => MergeError::TooLarge {
                name,
                what,
                line: window::locate(file, at).0,
                limit: MAX_MEMBER_BYTES,
            },
            Stop::Schema(found) => MergeError::Schema { name, found },
            Stop::Changed => MergeError::Changed { name },
        }
    }
}

/// What identifies a file's content between the passes: its ctime too,
/// which a write changes and its owner cannot set back (the second pass
/// also checks each host's bytes, `document::Cursor`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(file: &File) -> std::io::Result<Stamp> {
        let m = file.metadata()?;
        Ok(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// Where a report's rule catalogue is and what it is: compared between
/// reports by its digest, parsed again from the one report the merged
/// report takes it from ([`plan`]), never held by every report.
#[derive(Debug)]
struct Catalogue {
    at: u64,
    len: usize,
    digest: u64,
}

/// One report after the first pass.
#[derive(Debug)]
pub struct Input {
    name: String,
    file: File,
    stamp: Stamp,
    hosts: Hosts,
    run: RunMeta,
    catalogue: Catalogue,
    part: Part,
    summary_matches: bool,
    /// Whether every host was checked against the report's shard.
    partitioned: bool,
}

impl Input {
    /// The report as errors name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its hosts.
    pub fn hosts(&self) -> usize {
        self.hosts.count
    }

    /// The rule catalogue the first pass read, read again.
    fn rules(&self) -> Result<Vec<RuleMeta>, MergeError> {
        let c = &self.catalogue;
        let mut bytes = vec![0; c.len];
        self.file
            .read_exact_at(&mut bytes, c.at)
            .map_err(|e| Stop::Io(e).error(&self.name, &self.file))?;
        match serde_json::from_slice::<Vec<RuleMeta>>(&bytes) {
            Ok(rules) if catalogue_digest(&rules) == c.digest => Ok(rules),
            _ => Err(Stop::Changed.error(&self.name, &self.file)),
        }
    }
}

/// The run metadata on a report's last line, where `check` writes it
/// (`  "run": {...}`), read before the rest: a shard's hosts are checked
/// against its partition as they go by. `None` in any other layout.
fn run_at_the_end(file: &File, size: u64) -> Option<RunMeta> {
    let n = size.min(1 << 20);
    let mut tail = vec![0; usize::try_from(n).ok()?];
    file.read_exact_at(&mut tail, size - n).ok()?;
    let key = b"\n  \"run\": ";
    let at = memchr::memmem::rfind(&tail, key)? + key.len();
    let rest = &tail[at..];
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    serde_json::from_slice(line).ok()
}

/// The first pass over one report (`name` names it in errors): open it (a
/// FIFO, socket or device is refused, never waited on), read it through,
/// check it is a fleet report, and fold its hosts into its summary.
pub fn scan(name: &str, path: &Path) -> Result<Input, MergeError> {
    let read = |message: String| MergeError::Read {
        name: name.to_string(),
        message,
    };
    let abs = std::path::absolute(path).map_err(|e| read(crate::reader::io_message(&e)))?;
    let opened = crate::reader::open_regular(&abs).map_err(|e| read(e.to_string()))?;
    let file = opened.file;
    let stamp = Stamp::of(&file).map_err(|e| read(crate::reader::io_message(&e)))?;
    let told = run_at_the_end(&file, opened.size);
    let shard = told
        .as_ref()
        .and_then(|r| r.shard.as_deref()?.parse::<Shard>().ok());
    let stop = |s: Stop| s.error(name, &file);
    let (mut members, hosts) = document::scan(&file, shard).map_err(stop)?;
    fn parse<T: serde::de::DeserializeOwned>(m: &(u64, Vec<u8>)) -> Result<T, Stop> {
        serde_json::from_slice(&m.1).map_err(|e| serde_at(&e, m.0))
    }
    // what `report::merge::parse` checks of a whole document, in its order
    let run: Option<RunMeta> = members.run.as_ref().map(parse).transpose().map_err(stop)?;
    let found = document::schema_of(members.schema.as_ref().map(|m| m.1.as_slice()));
    if found != REPORT_SCHEMA {
        return Err(stop(Stop::Schema(found)));
    }
    let missing = |member| MergeError::NotFleet {
        name: name.to_string(),
        member,
    };
    let Some(fleet) = &members.fleet else {
        return Err(missing("fleet"));
    };
    let Some(rules) = members.rules.take() else {
        return Err(missing("rules"));
    };
    let Some(run) = run else {
        return Err(missing("run"));
    };
    let Some((fail_on, _)) = run.threshold() else {
        return Err(MergeError::FailOn {
            name: name.to_string(),
            value: run.fail_on,
        });
    };
    let Some(mut hosts) = hosts else {
        return Err(stop(Stop::Json {
            message: "missing field `hosts`".into(),
            at: 0,
            line: 0,
            column: 0,
        }));
    };
    // the catalogue is folded in and fingerprinted, and not kept
    let document::Rules { at, len, parsed } = rules;
    let rules = parsed.map_err(stop)?;
    let catalogue = Catalogue {
        at,
        len,
        digest: catalogue_digest(&rules),
    };
    let part = std::mem::take(&mut hosts.tally).finish(&rules, fail_on);
    drop(rules);
    let fleet: serde_json::Value = parse(fleet).map_err(stop)?;
    let found = fleet.get("schema").and_then(|s| s.as_str());
    if found != Some(FLEET_SCHEMA) {
        return Err(MergeError::Schema {
            name: name.to_string(),
            found: format!("fleet {}", found.unwrap_or("schema-less")),
        });
    }
    let summary_matches = serde_json::to_value(&part.summary).ok().as_ref() == Some(&fleet);
    // the partition was checked with the shard the whole report names
    let partitioned = shard.is_some() && told.as_ref() == Some(&run);
    if !partitioned {
        hosts.not_in_shard = None;
    }
    Ok(Input {
        name: name.to_string(),
        file,
        stamp,
        hosts,
        run,
        catalogue,
        part,
        summary_matches,
        partitioned,
    })
}

/// Reports that can be merged: the merged summary and run metadata, and
/// the reports for the second pass.
#[derive(Debug)]
pub struct Plan {
    inputs: Vec<Input>,
    /// The merged report's run metadata.
    pub run: RunMeta,
    /// The rule catalogue.
    pub rules: Vec<RuleMeta>,
    /// The fleet summary of every host.
    pub summary: FleetSummary,
    unknown: bool,
}

/// Check that the reports the first pass read can be merged (given in any
/// order): `report::merge::agree`'s checks, then a host folder twice in a
/// report, a shard's host outside its partition, and a host folder in two
/// reports (with shards whose every host was checked against its
/// partition, none can be; else a pass over the folders in path order).
pub fn plan(inputs: Vec<Input>) -> Result<Plan, MergeError> {
    let facts: Vec<InputFacts> = inputs
        .iter()
        .map(|i| InputFacts {
            name: &i.name,
            run: &i.run,
            catalogue: i.catalogue.digest,
            summary_matches: i.summary_matches,
            host_without_path: i.hosts.no_path.as_deref(),
            out_of_order: i
                .hosts
                .out_of_order
                .as_ref()
                .map(|(h, p, b)| (h.as_str(), p.as_str(), b.as_str())),
        })
        .collect();
    let run = agree(&facts)?;
    for i in &inputs {
        if let Some(path) = &i.hosts.duplicate {
            return Err(MergeError::DuplicateHost {
                path: path.clone(),
                first: i.name.clone(),
                other: i.name.clone(),
            });
        }
    }
    for i in &inputs {
        if let Some((path, belongs)) = &i.hosts.not_in_shard {
            return Err(MergeError::NotInShard {
                name: i.name.clone(),
                path: path.clone(),
                shard: i.run.shard.clone().unwrap_or_default(),
                belongs: belongs.clone(),
            });
        }
    }
    // one catalogue for the merged report (they are all the same)
    let rules = match inputs.first() {
        Some(i) => i.rules()?,
        None => Vec::new(),
    };
    let parts: Vec<Part> = inputs.iter().map(|i| i.part.clone()).collect();
    let plan = Plan {
        summary: merge_parts(&rules, &parts),
        unknown: parts.iter().any(|p| p.unknown),
        inputs,
        run,
        rules,
    };
    if plan.inputs.len() > 1 && !plan.inputs.iter().all(|i| i.partitioned) {
        let mut hosts = plan.stream()?;
        while hosts.next_host()?.is_some() {}
    }
    Ok(plan)
}

impl Plan {
    /// Hosts of every report.
    pub fn hosts(&self) -> usize {
        self.summary.hosts
    }

    /// The reports' names, in the order given.
    pub fn names(&self) -> Vec<&str> {
        self.inputs.iter().map(|i| i.name.as_str()).collect()
    }

    /// Whether the merged fleet fails its `fail_on` threshold
    /// ([`Merged::fails`]).
    pub fn fails(&self) -> bool {
        let (_, unknown) = self
            .run
            .threshold()
            .unwrap_or((crate::policy::Severity::Low, false));
        self.summary.hosts_failing_at_threshold > 0 || (unknown && self.unknown)
    }

    /// The second pass: every report's hosts, in path order.
    pub fn stream(&self) -> Result<HostStream<'_>, MergeError> {
        let chunk = ((32 << 20) / self.inputs.len().max(1)).clamp(64 << 10, 1 << 20);
        let mut cursors = Vec::with_capacity(self.inputs.len());
        let mut heads = BinaryHeap::new();
        for (k, i) in self.inputs.iter().enumerate() {
            let now = Stamp::of(&i.file).map_err(|e| Stop::Io(e).error(&i.name, &i.file))?;
            if now != i.stamp {
                return Err(Stop::Changed.error(&i.name, &i.file));
            }
            let mut c = Cursor::new(&i.file, &i.hosts, chunk);
            if c.advance().map_err(|s| s.error(&i.name, &i.file))? {
                heads.push(Reverse(Head {
                    path: c.path().to_string(),
                    input: k,
                }));
            }
            cursors.push(c);
        }
        Ok(HostStream {
            inputs: &self.inputs,
            cursors,
            heads,
            last: None,
            previous: None,
        })
    }

    /// The merged report of `hosts` (every host, in [`Plan::stream`]'s
    /// order), for the formats that are one document.
    pub fn into_merged(self, hosts: Vec<HostReport>) -> Merged {
        Merged {
            report: Report {
                schema: REPORT_SCHEMA,
                selection: self.run.selection(),
                hosts,
                rules: self.rules,
            },
            summary: self.summary,
            run: self.run,
        }
    }
}

/// A report's next host in the second pass, ordered by folder (`Path`
/// order, walkdir's) then by report.
#[derive(Debug, PartialEq, Eq)]
struct Head {
    path: String,
    input: usize,
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        Path::new(&self.path)
            .cmp(Path::new(&other.path))
            .then(self.input.cmp(&other.input))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Every report's hosts in path order (the second pass).
pub struct HostStream<'p> {
    inputs: &'p [Input],
    cursors: Vec<Cursor<'p>>,
    heads: BinaryHeap<Reverse<Head>>,
    /// The report whose host was handed out last (moved on at the next call).
    last: Option<usize>,
    previous: Option<Head>,
}

/// One host of the second pass.
#[derive(Debug, Clone, Copy)]
pub struct StreamedHost<'s> {
    /// Which report (in the order given).
    pub input: usize,
    /// Its folder.
    pub path: &'s str,
    /// Its JSON: in the layout `check` writes ([`StreamedHost::pretty`]),
    /// the lines `check --fleet --format json` writes for it in `hosts`.
    pub text: &'s [u8],
    /// Whether `text` is byte for byte what `check` writes for the host
    /// (so it can be copied as it is).
    pub pretty: bool,
    /// The offset of `text` in its report.
    pub at: u64,
}

impl HostStream<'_> {
    /// The next host in path order, or `None` after the last.
    pub fn next_host(&mut self) -> Result<Option<StreamedHost<'_>>, MergeError> {
        if let Some(k) = self.last.take() {
            let c = &mut self.cursors[k];
            let i = &self.inputs[k];
            if c.advance().map_err(|s| s.error(&i.name, &i.file))? {
                self.heads.push(Reverse(Head {
                    path: c.path().to_string(),
                    input: k,
                }));
            }
        }
        let Some(Reverse(head)) = self.heads.pop() else {
            return Ok(None);
        };
        if let Some(before) = &self.previous {
            match Path::new(&before.path).cmp(Path::new(&head.path)) {
                Ordering::Less => {}
                Ordering::Equal => {
                    return Err(MergeError::DuplicateHost {
                        path: head.path.clone(),
                        first: self.inputs[before.input].name.clone(),
                        other: self.inputs[head.input].name.clone(),
                    })
                }
                Ordering::Greater => {
                    let i = &self.inputs[head.input];
                    return Err(Stop::Changed.error(&i.name, &i.file));
                }
            }
        }
        let k = head.input;
        self.last = Some(k);
        self.previous = Some(head);
        let c = &self.cursors[k];
        Ok(Some(StreamedHost {
            input: k,
            path: c.path(),
            text: c.text(),
            pretty: c.pretty(),
            at: c.offset(),
        }))
    }
}

impl Plan {
    /// A host of the second pass read whole (report `input`, its `text` at
    /// offset `at`), for a format that renders it.
    pub fn parse_host(&self, input: usize, text: &[u8], at: u64) -> Result<HostReport, MergeError> {
        let i = &self.inputs[input];
        serde_json::from_slice(text).map_err(|e| serde_at(&e, at).error(&i.name, &i.file))
    }
}
