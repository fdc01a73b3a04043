//! The order of a host's findings ([`sort_findings`]: rule id, subject,
//! evidence, status; a stable sort), found without comparing rule ids
//! more than once per rule and without moving findings more than once.
//! Must not add, drop or change a finding: it only orders them.

use super::Finding;

/// Sort findings by rule id, subject, then evidence, so reports diff cleanly.
///
/// The order of a stable sort by `(rule, subject, evidence, status)`: each
/// rule id is ranked once (the distinct ids sorted; findings of one rule
/// come in runs, each run looked up once), the findings' places are
/// sorted by `(rank, subject, evidence, status)`, which orders any two
/// findings as the tuple does, and the findings are then moved to their
/// places once each.
pub fn sort_findings(findings: &mut [Finding]) {
    if findings.len() < 2 {
        return;
    }
    let mut ids: Vec<&str> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        if i == 0 || findings[i - 1].rule != f.rule {
            ids.push(&f.rule);
        }
    }
    ids.sort_unstable();
    ids.dedup();
    let mut rank = Vec::with_capacity(findings.len());
    let mut last = (None, 0);
    for f in findings.iter() {
        let r = match last {
            (Some(prev), r) if prev == f.rule.as_str() => r,
            _ => ids.binary_search(&f.rule.as_str()).unwrap_or_default(),
        };
        last = (Some(f.rule.as_str()), r);
        rank.push(r);
    }
    let mut place: Vec<usize> = (0..findings.len()).collect();
    place.sort_by(|&a, &b| {
        let (x, y) = (&findings[a], &findings[b]);
        (rank[a], &x.subject, &x.evidence, x.status).cmp(&(
            rank[b],
            &y.subject,
            &y.evidence,
            y.status,
        ))
    });
    // `place[i]` is where the finding that goes to `i` is now: follow each
    // cycle, one swap per finding moved
    for i in 0..place.len() {
        let mut j = i;
        while place[j] != i {
            let k = place[j];
            findings.swap(j, k);
            place[j] = j;
            j = k;
        }
        place[j] = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Evidence;
    use crate::policy::{RuleSource, Severity};
    use crate::report::Status;

    /// How findings were sorted before: a stable sort of the findings
    /// themselves by the tuple.
    fn by_tuple(findings: &mut [Finding]) {
        findings.sort_by(|a, b| {
            (&a.rule, &a.subject, &a.evidence, a.status).cmp(&(
                &b.rule,
                &b.subject,
                &b.evidence,
                b.status,
            ))
        });
    }

    #[test]
    fn findings_sorted_by_rank_and_place_come_in_the_order_the_tuple_sort_gave() {
        let rules = ["b.x", "a.y", "a", "b.x.z", "c", "a.y"];
        let statuses = [Status::Fail, Status::Pass, Status::Skip, Status::Unknown];
        let mut seed: u64 = 35;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for round in 0..400 {
            let n = next(60);
            let mut findings = Vec::new();
            for i in 0..n {
                // runs of one rule, as the engine gives them, and stray ones
                let rule = if i > 0 && next(3) > 0 {
                    findings.last().map(|f: &Finding| f.rule.clone()).unwrap()
                } else {
                    rules[next(rules.len())].to_string()
                };
                let subject: Vec<String> = (0..next(3))
                    .map(|_| ["k", "j", ""][next(3)].to_string())
                    .collect();
                let evidence: Vec<Evidence> = (0..next(2))
                    .map(|_| Evidence::line("/etc/x", next(3)))
                    .collect();
                let f = Finding::new(
                    rule,
                    "p",
                    "t",
                    Severity::Low,
                    statuses[next(statuses.len())],
                    RuleSource {
                        path: "p.yaml".into(),
                        line: 1,
                    },
                )
                .with_subject(subject)
                .with_evidence(evidence)
                // what tells equal keys apart: the sort must keep their order
                .with_explanation(format!("{round}.{i}"));
                findings.push(f);
            }
            let mut old = findings.clone();
            by_tuple(&mut old);
            sort_findings(&mut findings);
            assert_eq!(findings, old, "round {round}");
        }
    }
}
