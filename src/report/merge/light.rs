//! One input's hosts folded as `check --fleet` folds them ([`Tally`],
//! [`Part`]), before its rule catalogue (which follows the hosts in the
//! file) is read, and the parts of several inputs combined into the summary
//! of their hosts in path order ([`merge_parts`]): what `merge` computes
//! its summary from without holding a host. Data in, data out: reads no
//! file. (The light reading of a host this file once held is gone: `merge`
//! reads each host whole, as a host report, issue 51.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::policy::Severity;
use crate::report::fleet::{FleetSummary, HostDigest, RuleStats, FLEET_SCHEMA};
use crate::report::{HostReport, RuleMeta};

/// Where [`Severity`] `s` counts in [`Tally`]'s histogram (0: no failure).
fn severity_slot(s: Option<Severity>) -> usize {
    s.and_then(|s| Severity::ALL.iter().position(|x| *x == s))
        .map_or(0, |i| i + 1)
}

/// The first host (by path) that gave a summary row what the order of
/// folding decides: the row itself (title and severity, for a rule the
/// catalogue lacks) and its `alias_of`.
#[derive(Debug, Default, Clone)]
struct Firsts {
    created: Option<String>,
    alias: Option<String>,
}

/// One input's hosts folded in its order (path order), before its run
/// metadata and rule catalogue (which follow the hosts in the file) are
/// read: the threshold count is kept by worst severity and the catalogue is
/// applied at [`Tally::finish`].
#[derive(Debug, Default)]
pub struct Tally {
    summary: FleetSummary,
    worst: [usize; 6],
    firsts: BTreeMap<String, Firsts>,
    unknown: bool,
}

impl Tally {
    /// Fold one host in, with its folder (`.` for a host without one).
    pub fn add(&mut self, host: &HostReport, path: &str) {
        let Ok(digest) = HostDigest::from_findings(
            &host.host,
            path,
            host.summary.fail > 0,
            false,
            &host.findings,
        );
        for r in &digest.rules {
            let row = self.summary.rules.get(&r.rule);
            let created = row.is_none();
            let aliased = r.alias_of.is_some() && row.is_none_or(|st| st.alias_of.is_none());
            if created || aliased {
                let f = self.firsts.entry(r.rule.clone()).or_default();
                if created {
                    f.created = Some(path.to_string());
                }
                if aliased {
                    f.alias = Some(path.to_string());
                }
            }
        }
        self.worst[severity_slot(host.worst_failure())] += 1;
        self.unknown |= host.has_unknown();
        self.summary.add_digest(digest);
    }

    /// Hosts folded so far.
    pub fn hosts(&self) -> usize {
        self.summary.hosts
    }

    /// The summary over the rule catalogue `rules` at threshold `fail_on`:
    /// what `summarize` gives for the same hosts.
    pub fn finish(mut self, rules: &[RuleMeta], fail_on: Severity) -> Part {
        self.summary.schema = FLEET_SCHEMA;
        for r in rules {
            match self.summary.rules.get_mut(&r.id) {
                // a row the catalogue has takes its title and severity from it
                Some(st) => {
                    st.title.clone_from(&r.title);
                    st.severity = Some(r.severity);
                    if let Some(f) = self.firsts.get_mut(&r.id) {
                        f.created = None;
                    }
                }
                None => {
                    self.summary.rules.insert(
                        r.id.clone(),
                        RuleStats {
                            title: r.title.clone(),
                            severity: Some(r.severity),
                            ..Default::default()
                        },
                    );
                }
            }
        }
        self.summary.hosts_failing_at_threshold = Severity::ALL
            .iter()
            .enumerate()
            .filter(|(_, s)| **s >= fail_on)
            .map(|(i, _)| self.worst[i + 1])
            .sum();
        Part {
            summary: self.summary,
            firsts: self.firsts,
            unknown: self.unknown,
        }
    }
}

/// One input's summary, with what [`merge_parts`] needs to combine it.
#[derive(Debug, Clone)]
pub struct Part {
    /// The input's fleet summary, as `summarize` makes it from its hosts.
    pub summary: FleetSummary,
    firsts: BTreeMap<String, Firsts>,
    /// Whether any host has an `unknown` or `error` finding.
    pub unknown: bool,
}

/// The summary of every part's hosts in path order: equal to `summarize`
/// over the hosts of all parts sorted by path. Counts add up; the worst
/// examples are the best three of the parts' best three (their order does
/// not depend on the folding order: ties go to the smaller path, and no
/// path is in two parts); a row the catalogue lacks takes its title and
/// severity, and any row its `alias_of`, from the part whose host gave it
/// first in path order.
pub fn merge_parts(rules: &[RuleMeta], parts: &[Part]) -> FleetSummary {
    let mut out = Tally::default().finish(rules, Severity::Critical).summary;
    for p in parts {
        out.merge(p.summary.clone());
    }
    let ids: BTreeSet<&String> = parts.iter().flat_map(|p| p.firsts.keys()).collect();
    for id in ids {
        let first = |pick: fn(&Firsts) -> Option<&String>| {
            parts
                .iter()
                .filter_map(|p| Some((Path::new(pick(p.firsts.get(id)?)?), p)))
                .min_by(|a, b| a.0.cmp(b.0))
                .and_then(|(_, p)| p.summary.rules.get(id))
        };
        let created = first(|f| f.created.as_ref()).map(|r| (r.title.clone(), r.severity));
        let alias = first(|f| f.alias.as_ref()).map(|r| r.alias_of.clone());
        if let Some(row) = out.rules.get_mut(id) {
            if let Some((title, severity)) = created {
                row.title = title;
                row.severity = severity;
            }
            if let Some(alias_of) = alias {
                row.alias_of = alias_of;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::SourceKind;
    use crate::policy::RuleSource;
    use crate::report::merge::summarize;
    use crate::report::{Finding, HostReport, Status};

    /// xorshift64*: a fixed stream of numbers for a seed.
    fn numbers(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        }
    }

    const RULES: &[&str] = &["a.one", "a.two", "b.item", "c.extra", "z.other"];
    const STATUSES: &[Status] = &[
        Status::Fail,
        Status::Fail,
        Status::Pass,
        Status::Skip,
        Status::Unknown,
        Status::Error,
        Status::Waived,
    ];

    /// A host whose findings vary with the numbers; titles of the rules
    /// outside the catalogue and aliases differ from host to host, so the
    /// fold's order shows in the summary.
    fn host(n: &mut impl FnMut(u64) -> u64, name: String, path: String) -> HostReport {
        let mut findings = Vec::new();
        for _ in 0..n(12) {
            let rule = RULES[n(RULES.len() as u64) as usize];
            let mut f = Finding::new(
                rule,
                "p",
                format!("title {}", n(3)),
                Severity::ALL[n(5) as usize],
                STATUSES[n(STATUSES.len() as u64) as usize],
                RuleSource {
                    path: "p.yaml".into(),
                    line: 1,
                },
            )
            .with_subject(vec![format!("s{}", n(4))])
            .with_actual(format!("v{}", n(9)));
            // one alias on items of two rules: its row's `alias_of` is
            // the rule of the first host in path order
            if matches!(rule, "b.item" | "c.extra") && n(2) == 0 {
                f.alias = Some(format!("b.old-{}", n(2)));
            }
            if n(3) == 0 {
                f.decided_by = Some(format!("param.{}", n(2)));
            }
            findings.push(f);
        }
        let mut h = HostReport::new(name, SourceKind::Snapshot, findings);
        h.path = Some(path);
        h
    }

    fn catalogue() -> Vec<RuleMeta> {
        ["a.one", "a.two", "b.item", "b.old-0"]
            .iter()
            .map(|id| RuleMeta {
                id: id.to_string(),
                policy: "p".into(),
                title: format!("{id} as catalogued"),
                severity: Severity::Medium,
                why: String::new(),
                fix: String::new(),
                references: vec![],
                tags: vec![],
                source: RuleSource {
                    path: "p.yaml".into(),
                    line: 1,
                },
            })
            .collect()
    }

    fn tally(hosts: &[&HostReport], rules: &[RuleMeta], fail_on: Severity) -> Part {
        let mut t = Tally::default();
        for h in hosts {
            t.add(h, h.path.as_deref().unwrap());
        }
        t.finish(rules, fail_on)
    }

    /// The summary `merge` builds from each report's light fold equals the
    /// one `check --fleet` folds from the whole fleet in path order, for
    /// hosts split into reports any way (each report in path order).
    #[test]
    fn parts_folded_apart_and_combined_equal_the_fold_in_path_order() {
        let rules = catalogue();
        for seed in 1..=60u64 {
            let mut n = numbers(seed * 7919);
            let count = 1 + n(40) as usize;
            let mut hosts: Vec<HostReport> = (0..count)
                .map(|i| {
                    // `/` and `-` sort differently as paths and as strings
                    let path = format!("dc{}{}h{i}", n(3), ["/", "-", "/x/"][n(3) as usize]);
                    let name = format!("host{}", n(5));
                    host(&mut n, name, path)
                })
                .collect();
            hosts.sort_by(|a, b| {
                Path::new(a.path.as_deref().unwrap()).cmp(Path::new(b.path.as_deref().unwrap()))
            });
            let fail_on = Severity::ALL[n(5) as usize];
            let whole = summarize(&rules, &hosts, fail_on);
            let reports = 1 + n(5) as usize;
            let mut split: Vec<Vec<&HostReport>> = vec![Vec::new(); reports];
            for h in &hosts {
                split[n(reports as u64) as usize].push(h);
            }
            let parts: Vec<Part> = split
                .iter()
                .map(|hs| {
                    let p = tally(hs, &rules, fail_on);
                    let alone: Vec<HostReport> = hs.iter().map(|h| (*h).clone()).collect();
                    assert_eq!(p.summary, summarize(&rules, &alone, fail_on), "seed {seed}");
                    p
                })
                .collect();
            assert_eq!(merge_parts(&rules, &parts), whole, "seed {seed}");
            let unknown = hosts.iter().any(HostReport::has_unknown);
            assert_eq!(parts.iter().any(|p| p.unknown), unknown, "seed {seed}");
        }
    }
}
