//! Combining fleet JSON reports (the shards of one `check --fleet`) into one
//! report: the run metadata and rule catalogue a fleet JSON report carries
//! for this, the checks that the inputs come from one schema, one
//! driftaudit version, one policy set and one threshold and cover the fleet
//! once ([`agree`], shared with the streamed merge of files in
//! `fleet::merge`), the host order of an unsharded run, and the fleet
//! summary recomputed from the hosts (or, streamed, folded from each
//! input's hosts and combined: `light`). Data in, data out:
//! reads no file and renders nothing.

use std::collections::hash_map::RandomState;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::fleet::{FleetSummary, RuleStats, FLEET_SCHEMA};
use super::{HostReport, Report, RuleMeta, REPORT_SCHEMA};
use crate::policy::{Check, ItemSelection, PolicySet, Severity};

pub mod light;

/// How a fleet report was made: the JSON report's `run` member (one line).
/// Everything a merge must agree on, and what differs between a merged
/// report and an unsharded one (`shard`, `merged`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMeta {
    /// driftaudit version that wrote the report.
    pub driftaudit: String,
    /// Fingerprint of the policy set ([`policy_digest`]).
    pub policies: String,
    /// The profiles that ran, sorted (empty: the default run); not a
    /// flattened `Selection`, which would spend the recursion budget.
    #[serde(default)]
    pub profiles: Vec<String>,
    /// The profiles not run, each with the rules it would add.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles_not_run: Vec<crate::policy::NotRun>,
    /// Benchmark rules the run left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub benchmark_rules_left_out: usize,
    /// `check --fail-on` (`info` ... `critical`, or `unknown`): the summary's
    /// `hosts_failing_at_threshold` depends on it.
    pub fail_on: String,
    /// The `--fleet` directory as given (relative to where `check` ran):
    /// with each host's `path`, where its snapshot is, so `merge` run in the
    /// same place (the repository root in CI) renders SARIF locations
    /// relative to the repository as `check` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,
    /// `--changed-since` revision, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_since: Option<String>,
    /// `--shard K/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// In a merged report: the reports merged (their `shard`, or `all`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// `--waivers` of a shard: what its hosts told about each waiver, for
    /// `merge --waivers` to judge them over every shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waivers: Option<WaiverRun>,
}

/// A shard's waiver file and what its hosts told about each waiver.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WaiverRun {
    /// The waiver file as given to `check`.
    pub file: String,
    /// Per waiver, in file order.
    pub usage: WaiverUsage,
}

/// What the hosts of a run told about each waiver of a waiver file (by its
/// place in the file): the first host it scoped, and whether it covered a
/// finding. Added up host by host, in audit order; a shard records it in
/// its report (`run.waivers`) so `merge` judges the waivers over every
/// shard (`waiver::WaiverSet::verdicts`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WaiverUsage {
    /// Per waiver: the first host its `host:` glob scoped, if any.
    pub first_host: Vec<Option<String>>,
    /// Per waiver: whether it covered a finding.
    pub used: Vec<bool>,
}

impl WaiverUsage {
    /// Add what later hosts told (the first scoped host stays the earliest).
    pub fn add(&mut self, later: &WaiverUsage) {
        let n = self.used.len().max(later.used.len());
        self.first_host.resize(n, None);
        self.used.resize(n, false);
        for (i, h) in later.first_host.iter().enumerate() {
            if self.first_host[i].is_none() {
                self.first_host[i].clone_from(h);
            }
        }
        for (i, u) in later.used.iter().enumerate() {
            self.used[i] |= *u;
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RunMeta {
    /// The metadata of a fleet run of this driftaudit over `policies`.
    pub fn new(policies: &PolicySet, fail_on: &str) -> RunMeta {
        RunMeta {
            driftaudit: env!("CARGO_PKG_VERSION").to_string(),
            policies: policy_digest(policies),
            profiles: policies.profiles().to_vec(),
            profiles_not_run: policies.profiles_not_run().to_vec(),
            benchmark_rules_left_out: policies.benchmark_rules_left_out(),
            fail_on: fail_on.to_string(),
            fleet: None,
            changed_since: None,
            shard: None,
            merged: Vec::new(),
            waivers: None,
        }
    }

    /// The run's choice of profiles, as a report records it.
    pub fn selection(&self) -> crate::report::Selection {
        crate::report::Selection {
            profiles: self.profiles.clone(),
            profiles_not_run: self.profiles_not_run.clone(),
            benchmark_rules_left_out: self.benchmark_rules_left_out,
        }
    }

    /// The severity threshold of `fail_on` and whether unknown findings
    /// fail too (`unknown`), as `check --fail-on` reads it.
    pub fn threshold(&self) -> Option<(Severity, bool)> {
        fail_on_threshold(&self.fail_on)
    }
}

/// `check --fail-on` as text: the severity threshold, and whether unknown
/// and error findings fail too.
pub fn fail_on_threshold(s: &str) -> Option<(Severity, bool)> {
    Some(match s {
        "unknown" => (Severity::Info, true),
        "info" => (Severity::Info, false),
        "low" => (Severity::Low, false),
        "medium" => (Severity::Medium, false),
        "high" => (Severity::High, false),
        "critical" => (Severity::Critical, false),
        _ => return None,
    })
}

/// A fingerprint of a loaded policy set: every policy with its parameter
/// values (after `--set`) and every rule after `--only`/`--skip`, with its
/// compiled checks and where it was loaded from (`fnv1a64:` and 16 hex
/// digits). Equal for the same policy files given the same way to the same
/// driftaudit; not a security hash.
///
/// An upgrade rule's check counts as `External`, what it was before the
/// engine judged upgrade rules (issue 47), without the `--target` releases
/// it now holds: the digest of a `check --fleet --target` run is what it
/// was, and the targets are no more part of it than before.
pub fn policy_digest(set: &PolicySet) -> String {
    let rules: Vec<String> = set
        .rules()
        .iter()
        .map(|r| {
            let mut text = format!("{r:?}");
            // the run's choice of a `for_each` rule's items, where the
            // rule's own text held it before it was the set's
            let chosen = set.item_selection(r);
            if let (Some(fe), false) = (&r.for_each, chosen == ItemSelection::every()) {
                let plain = format!("{fe:?}");
                let with = plain.replacen(
                    "only: [], skip: []",
                    &format!("only: {:?}, skip: {:?}", chosen.only, chosen.skip),
                    1,
                );
                text = text.replacen(&plain, &with, 1);
            }
            match &r.check {
                Check::Upgrade(_) => {
                    text.replacen(&format!("check: {:?}", r.check), "check: External", 1)
                }
                _ => text,
            }
        })
        .collect();
    let text = format!("{:?}\n[{}]", set.policies(), rules.join(", "));
    format!("fnv1a64:{:016x}", super::shard::fnv1a64(text.as_bytes()))
}

/// A fleet JSON report as `merge` reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct FleetDocument {
    /// `driftaudit.report/1`.
    pub schema: String,
    /// Host reports, in the order written.
    pub hosts: Vec<HostReport>,
    /// The fleet summary as written (checked against the hosts).
    pub fleet: serde_json::Value,
    /// Rule catalogue of the run.
    pub rules: Vec<RuleMeta>,
    /// Run metadata.
    pub run: RunMeta,
}

/// The head of a report, read before the hosts so a foreign or older
/// document gets a plain error rather than a missing-field one.
#[derive(Deserialize)]
struct Probe {
    schema: Option<serde_json::Value>,
    fleet: Option<serde::de::IgnoredAny>,
    run: Option<RunMeta>,
    rules: Option<serde::de::IgnoredAny>,
}

/// Why reports cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Not JSON, or not a report's shape.
    #[error("`{name}`: not a driftaudit JSON report: {message}")]
    Json {
        /// The input.
        name: String,
        /// serde's message with line and column.
        message: String,
    },
    /// Another schema (or none).
    #[error("`{name}` is a `{found}` document; merge reads `{REPORT_SCHEMA}` reports of `check --fleet --format json`")]
    Schema {
        /// The input.
        name: String,
        /// Its `schema`.
        found: String,
    },
    /// A report without the fleet members merge needs.
    #[error("`{name}` has no `{member}` member: merge reads reports of `check --fleet DIR --format json` (a report of `check --snapshot` lacks the fleet summary, rule catalogue and run metadata)")]
    NotFleet {
        /// The input.
        name: String,
        /// The missing member.
        member: &'static str,
    },
    /// Run metadata that differs where it must not.
    #[error(transparent)]
    Mismatch(Box<Mismatch>),
    /// Shards of different runs, a shard twice, or a shard missing.
    #[error("{0}")]
    Shards(String),
    /// A host folder in two inputs.
    #[error("host folder `{path}` is in both `{first}` and `{other}`")]
    DuplicateHost {
        /// Folder relative to the fleet directory.
        path: String,
        /// One input.
        first: String,
        /// The other.
        other: String,
    },
    /// A host without its folder path.
    #[error("`{name}`: host `{host}` has no `path`; merge reads reports of `check --fleet`")]
    NoPath {
        /// The input.
        name: String,
        /// The host.
        host: String,
    },
    /// The summary written does not follow from the hosts written.
    #[error("`{name}`: its `fleet` summary does not match its hosts (was the report edited or cut short?)")]
    Summary {
        /// The input.
        name: String,
    },
    /// A host out of path order in a report (a fleet report lists its
    /// hosts in the order of an unsharded run).
    #[error("`{name}`: host `{host}` (folder `{path}`) comes after folder `{previous}`, out of path order (was the report edited?)")]
    OutOfOrder {
        /// The input.
        name: String,
        /// The host.
        host: String,
        /// Its folder.
        path: String,
        /// The folder of the host before it.
        previous: String,
    },
    /// A host of a shard that the shard's partition puts in another shard.
    #[error("`{name}`: host folder `{path}` belongs to shard {belongs}, not to shard {shard} (was the report edited?)")]
    NotInShard {
        /// The input.
        name: String,
        /// The host's folder.
        path: String,
        /// The input's shard.
        shard: String,
        /// The shard the folder belongs to.
        belongs: String,
    },
    /// A host (or another member) larger than `merge` reads at once.
    #[error("`{name}`: {what} at line {line} is over {limit} bytes of JSON, the most merge reads of one host or member (a host of `check --fleet` is a few hundred KB)")]
    TooLarge {
        /// The input.
        name: String,
        /// `host `NAME``, or `the `MEMBER` member`.
        what: String,
        /// Where it starts.
        line: u64,
        /// The cap, in bytes.
        limit: usize,
    },
    /// An input that is no longer what was checked.
    #[error("`{name}` changed while it was being merged; merge it again")]
    Changed {
        /// The input.
        name: String,
    },
    /// An input that could not be read.
    #[error("cannot read `{name}`: {message}")]
    Read {
        /// The input.
        name: String,
        /// Why.
        message: String,
    },
    /// Unknown `fail_on`.
    #[error("`{name}`: unknown `fail_on` `{value}` in `run`")]
    FailOn {
        /// The input.
        name: String,
        /// As written.
        value: String,
    },
}

/// Two inputs that differ in what a merge needs them to share.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{first}` and `{other}` differ in {what} (`{a}` and `{b}`): {hint}")]
pub struct Mismatch {
    /// The first input.
    pub first: String,
    /// The disagreeing input.
    pub other: String,
    /// What differs.
    pub what: &'static str,
    /// First value.
    pub a: String,
    /// Other value.
    pub b: String,
    /// What to do.
    pub hint: &'static str,
}

/// Read one fleet JSON report; `name` names it in errors.
pub fn parse(name: &str, text: &str) -> Result<FleetDocument, MergeError> {
    let json = |e: serde_json::Error| MergeError::Json {
        name: name.to_string(),
        message: e.to_string(),
    };
    let probe: Probe = serde_json::from_str(text).map_err(json)?;
    let schema = match &probe.schema {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "schema-less".into(),
    };
    if schema != REPORT_SCHEMA {
        return Err(MergeError::Schema {
            name: name.to_string(),
            found: schema,
        });
    }
    let missing = |member| MergeError::NotFleet {
        name: name.to_string(),
        member,
    };
    if probe.fleet.is_none() {
        return Err(missing("fleet"));
    }
    if probe.rules.is_none() {
        return Err(missing("rules"));
    }
    let Some(run) = probe.run else {
        return Err(missing("run"));
    };
    if run.threshold().is_none() {
        return Err(MergeError::FailOn {
            name: name.to_string(),
            value: run.fail_on,
        });
    }
    let doc: FleetDocument = serde_json::from_str(text).map_err(json)?;
    let found = doc.fleet.get("schema").and_then(|s| s.as_str());
    if found != Some(FLEET_SCHEMA) {
        return Err(MergeError::Schema {
            name: name.to_string(),
            found: format!("fleet {}", found.unwrap_or("schema-less")),
        });
    }
    Ok(doc)
}

/// The result of a merge: the report (hosts in the order of one unsharded
/// run, with the rule catalogue), its fleet summary and run metadata.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Hosts and rule catalogue.
    pub report: Report,
    /// Recomputed from the hosts.
    pub summary: FleetSummary,
    /// The common run metadata, `shard` cleared, `merged` listing the inputs.
    pub run: RunMeta,
}

impl Merged {
    /// Whether the merged fleet fails its `fail_on` threshold (what `check
    /// --fleet` over the whole fleet would have exited 1 for).
    pub fn fails(&self) -> bool {
        let (_, unknown) = self.run.threshold().unwrap_or((Severity::Low, false));
        self.summary.hosts_failing_at_threshold > 0
            || (unknown && self.report.hosts.iter().any(HostReport::has_unknown))
    }
}

/// The fleet summary of `hosts` (each with its `path`) over the rule
/// catalogue `rules`: what `check --fleet` folds as it goes.
pub fn summarize(rules: &[RuleMeta], hosts: &[HostReport], fail_on: Severity) -> FleetSummary {
    let mut summary = FleetSummary {
        schema: FLEET_SCHEMA,
        rules: rules
            .iter()
            .map(|r| {
                (
                    r.id.clone(),
                    RuleStats {
                        title: r.title.clone(),
                        severity: Some(r.severity),
                        ..Default::default()
                    },
                )
            })
            .collect::<BTreeMap<_, _>>(),
        ..Default::default()
    };
    for h in hosts {
        summary.add(h, h.path.as_deref().unwrap_or("."), fail_on);
    }
    summary
}

/// A rule catalogue's fingerprint, which inputs are compared by instead of
/// their catalogues (a catalogue can be most of a report): its JSON hashed
/// as it is written, with SipHash under a key random to this process, so
/// the same catalogue in any layout gives the same number and no other
/// catalogue can be chosen to give it.
pub fn catalogue_digest(rules: &[RuleMeta]) -> u64 {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    struct Hashing<H>(H);
    impl<H: Hasher> std::io::Write for Hashing<H> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.write(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hashing(KEY.get_or_init(RandomState::new).build_hasher());
    // a catalogue always serialises, and hashing never fails
    let _ = serde_json::to_writer(&mut h, rules);
    h.0.finish()
}

/// What the merge checks of one input besides its run metadata and rule
/// catalogue: found in the parsed document ([`merge`]) or while its hosts
/// stream by (`fleet::merge`).
#[derive(Debug, Clone, Copy)]
pub struct InputFacts<'a> {
    /// The input, as errors name it.
    pub name: &'a str,
    /// Its run metadata.
    pub run: &'a RunMeta,
    /// Its rule catalogue's [`catalogue_digest`].
    pub catalogue: u64,
    /// Whether its written `fleet` summary is the one its hosts give.
    pub summary_matches: bool,
    /// The first host without `path`.
    pub host_without_path: Option<&'a str>,
    /// The first host out of path order: its name, its folder and the
    /// folder before it (a streamed input must be in path order).
    pub out_of_order: Option<(&'a str, &'a str, &'a str)>,
}

/// Check that inputs can be merged: one driftaudit version, policy set,
/// `--waivers` file, `--fail-on`, `--fleet` and `--changed-since`; shards
/// of one N, each once, or only whole reports; each input's summary
/// following from its hosts, every host with its folder, in path order.
/// Returns the run metadata of the merged report: `shard` cleared, `merged`
/// listing the inputs, the waiver usage of every input added up in input
/// order. A host folder in two inputs is the caller's to find.
pub fn agree(inputs: &[InputFacts]) -> Result<RunMeta, MergeError> {
    let Some(first) = inputs.first() else {
        return Err(MergeError::Shards("no reports to merge".into()));
    };
    let (first_name, base_run, catalogue) = (first.name, first.run, first.catalogue);
    let mut shards: Vec<(u32, u32, String)> = Vec::new();
    let mut whole = 0usize;
    for input in inputs {
        let (name, r) = (input.name, input.run);
        let mismatch = |what, a: &str, b: &str, hint| {
            MergeError::Mismatch(Box::new(Mismatch {
                first: first_name.to_string(),
                other: name.to_string(),
                what,
                a: a.to_string(),
                b: b.to_string(),
                hint,
            }))
        };
        if r.driftaudit != base_run.driftaudit {
            return Err(mismatch(
                "driftaudit version",
                &base_run.driftaudit,
                &r.driftaudit,
                "run every shard with the same driftaudit",
            ));
        }
        if r.profiles != base_run.profiles {
            let words = |p: &[String]| match p.is_empty() {
                true => "the default run".to_string(),
                false => format!("--profile {}", p.join(",")),
            };
            return Err(mismatch(
                "profiles",
                &words(&base_run.profiles),
                &words(&r.profiles),
                "run every shard with the same --profile (or the same site profiles)",
            ));
        }
        if r.policies != base_run.policies || input.catalogue != catalogue {
            return Err(mismatch(
                "policy set",
                &base_run.policies,
                &r.policies,
                "run every shard with the same --policy, --no-builtin, --set, --profile, --only and --skip",
            ));
        }
        let file = |w: &Option<WaiverRun>| w.as_ref().map(|w| w.file.clone());
        if file(&r.waivers) != file(&base_run.waivers) {
            return Err(mismatch(
                "--waivers",
                file(&base_run.waivers).as_deref().unwrap_or("(none)"),
                file(&r.waivers).as_deref().unwrap_or("(none)"),
                "run every shard with the same --waivers FILE",
            ));
        }
        if r.fail_on != base_run.fail_on {
            return Err(mismatch(
                "--fail-on",
                &base_run.fail_on,
                &r.fail_on,
                "run every shard with the same --fail-on",
            ));
        }
        if r.fleet != base_run.fleet {
            return Err(mismatch(
                "fleet directory",
                base_run.fleet.as_deref().unwrap_or("(none)"),
                r.fleet.as_deref().unwrap_or("(none)"),
                "run every shard from the same directory with the same --fleet DIR",
            ));
        }
        if r.changed_since != base_run.changed_since {
            return Err(mismatch(
                "--changed-since",
                base_run.changed_since.as_deref().unwrap_or("(none)"),
                r.changed_since.as_deref().unwrap_or("(none)"),
                "run every shard with the same --changed-since",
            ));
        }
        match r.shard.as_deref() {
            Some(s) => {
                let shard: super::shard::Shard = s
                    .parse()
                    .map_err(|e| MergeError::Shards(format!("`{name}`: {e}")))?;
                shards.push((shard.index(), shard.count(), name.to_string()));
            }
            None => whole += 1,
        }
        if !input.summary_matches {
            return Err(MergeError::Summary {
                name: name.to_string(),
            });
        }
        if let Some(host) = input.host_without_path {
            return Err(MergeError::NoPath {
                name: name.to_string(),
                host: host.to_string(),
            });
        }
        if let Some((host, path, previous)) = input.out_of_order {
            return Err(MergeError::OutOfOrder {
                name: name.to_string(),
                host: host.to_string(),
                path: path.to_string(),
                previous: previous.to_string(),
            });
        }
    }
    let merged_names = check_shards(&mut shards, whole)?;
    // what every shard's hosts told about the waivers, in input order
    let mut waivers = base_run.waivers.clone().map(|mut w| {
        w.usage = WaiverUsage::default();
        w
    });
    if let Some(all) = waivers.as_mut() {
        for input in inputs {
            if let Some(w) = &input.run.waivers {
                all.usage.add(&w.usage);
            }
        }
    }
    Ok(RunMeta {
        shard: None,
        merged: merged_names,
        waivers,
        ..base_run.clone()
    })
}

/// Merge fleet reports, `(name, document)` in any order. Refuses inputs of
/// different driftaudit versions, policy sets, `--fail-on` or
/// `--changed-since`; shards of different N, a shard twice or a shard
/// missing; a mix of shards and whole reports; a host folder in two
/// inputs; and an input whose summary does not follow from its hosts.
pub fn merge(inputs: Vec<(String, FleetDocument)>) -> Result<Merged, MergeError> {
    let rules = inputs
        .first()
        .map(|(_, d)| d.rules.clone())
        .unwrap_or_default();
    let (fail_on, _) = inputs
        .first()
        .and_then(|(_, d)| d.run.threshold())
        .unwrap_or((Severity::Low, false));
    let matches: Vec<bool> = inputs
        .iter()
        .map(|(_, doc)| {
            let recomputed = summarize(&doc.rules, &doc.hosts, fail_on);
            serde_json::to_value(&recomputed).ok().as_ref() == Some(&doc.fleet)
        })
        .collect();
    let facts: Vec<InputFacts> = inputs
        .iter()
        .zip(&matches)
        .map(|((name, doc), m)| InputFacts {
            name,
            run: &doc.run,
            catalogue: catalogue_digest(&doc.rules),
            summary_matches: *m,
            host_without_path: doc
                .hosts
                .iter()
                .find(|h| h.path.is_none())
                .map(|h| h.host.as_str()),
            out_of_order: None,
        })
        .collect();
    let run = agree(&facts)?;

    let mut hosts: Vec<(String, HostReport)> = Vec::new();
    for (name, doc) in inputs {
        hosts.extend(doc.hosts.into_iter().map(|h| (name.clone(), h)));
    }
    // Discovery order: by path component (walkdir sorts each folder's
    // entries by name), which is how `Path` orders.
    hosts.sort_by(|(_, a), (_, b)| {
        Path::new(a.path.as_deref().unwrap_or(".")).cmp(Path::new(b.path.as_deref().unwrap_or(".")))
    });
    for pair in hosts.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if Path::new(a.1.path.as_deref().unwrap_or("."))
            == Path::new(b.1.path.as_deref().unwrap_or("."))
        {
            return Err(MergeError::DuplicateHost {
                path: b.1.path.clone().unwrap_or_default(),
                first: a.0.clone(),
                other: b.0.clone(),
            });
        }
    }
    let hosts: Vec<HostReport> = hosts.into_iter().map(|(_, h)| h).collect();
    let summary = summarize(&rules, &hosts, fail_on);
    Ok(Merged {
        report: Report {
            schema: REPORT_SCHEMA,
            selection: run.selection(),
            hosts,
            rules,
        },
        summary,
        run,
    })
}

/// Shards must be all of one N, each once; whole reports must not be mixed
/// in. Returns the `merged` list.
fn check_shards(
    shards: &mut [(u32, u32, String)],
    whole: usize,
) -> Result<Vec<String>, MergeError> {
    if shards.is_empty() {
        return Ok(vec!["all".to_string(); whole]);
    }
    if whole > 0 {
        return Err(MergeError::Shards(format!(
            "{whole} whole-fleet report(s) given with shard reports: merge either the shards of one run or whole reports"
        )));
    }
    let n = shards[0].1;
    if let Some((k, m, name)) = shards.iter().find(|s| s.1 != n) {
        return Err(MergeError::Shards(format!(
            "`{name}` is shard {k}/{m} but `{}` is shard {}/{n}: merge the shards of one run",
            shards[0].2, shards[0].0
        )));
    }
    shards.sort();
    for pair in shards.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(MergeError::Shards(format!(
                "shard {}/{n} given twice (`{}` and `{}`)",
                pair[0].0, pair[0].2, pair[1].2
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !shards.iter().any(|s| s.0 == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Shards(format!(
            "shard{} {} missing: a merged report covers the whole fleet (given {})",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            shards
                .iter()
                .map(|s| format!("{}/{n}", s.0))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(shards.iter().map(|s| format!("{}/{n}", s.0)).collect())
}

/// A host's snapshot folder as a fleet JSON report records it (the host's
/// `root` member): `dir` relative to the repository root `repo_root` (both
/// absolute and canonical), with `..` steps when it lies outside, `.` when
/// it is the root. Purely lexical; [`resolve_repo_dir`] is its inverse.
pub fn repo_dir(dir: &Path, repo_root: &Path) -> String {
    let a: Vec<Component> = dir.components().collect();
    let b: Vec<Component> = repo_root.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &a[common..] {
        out.push(c.as_os_str());
    }
    if out.as_os_str().is_empty() {
        ".".into()
    } else {
        out.to_string_lossy().into_owned()
    }
}

/// Where a recorded `root` ([`repo_dir`]) lies below `repo_root`
/// (absolute): joined and normalised lexically (`.` dropped, `..` steps
/// up), so the snapshot folder need not exist where `merge` runs. An
/// absolute `root` is taken as it is, normalised.
pub fn resolve_repo_dir(repo_root: &Path, root: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in repo_root.join(root).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod repo_dir_tests {
    use super::*;

    #[test]
    fn repo_dir_is_relative_to_the_root_and_resolves_back() {
        let root = Path::new("/home/runner/work/repo");
        for (dir, want) in [
            ("/home/runner/work/repo/snapshots/db1", "snapshots/db1"),
            ("/home/runner/work/repo", "."),
            ("/home/runner/work/other/db1", "../other/db1"),
            ("/srv/snaps/db1", "../../../../srv/snaps/db1"),
        ] {
            let got = repo_dir(Path::new(dir), root);
            assert_eq!(got, want, "{dir}");
            assert_eq!(resolve_repo_dir(root, &got), Path::new(dir), "{dir}");
        }
        assert_eq!(
            resolve_repo_dir(root, "/abs/./x/../db1"),
            Path::new("/abs/db1")
        );
    }
}
