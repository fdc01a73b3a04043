//! The rule verdicts that changed between two host reports: findings paired
//! by rule and subject (then one leftover per rule on each side), sorted
//! into [`Verdicts`]. Reads reports only; must not evaluate a rule (the
//! engine made the verdicts) or apply waivers (the caller did).

use std::collections::{BTreeMap, BTreeSet};

use crate::report::diff::VerdictChange;
use crate::report::{Finding, HostReport, Status};

/// Verdict changes between two host reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts {
    /// Not failing (or absent) before, failing after.
    pub regressions: Vec<VerdictChange>,
    /// Failing before, passing/skipped/absent after.
    pub fixes: Vec<VerdictChange>,
    /// After-only findings that do not fail.
    pub new: Vec<VerdictChange>,
    /// Before-only findings that did not fail.
    pub vanished: Vec<VerdictChange>,
    /// Other status changes.
    pub other: Vec<VerdictChange>,
}

type Key = (String, Vec<String>);

fn key(f: &Finding) -> Key {
    (f.rule.clone(), f.subject.clone())
}

/// Pair findings of both sides: same rule and subject first; then, per rule,
/// a single leftover finding on each side (a rule that was skipped with no
/// subject before and fails on a key after is the same verdict changing).
fn pair_findings<'a>(
    b: &'a HostReport,
    a: &'a HostReport,
) -> Vec<(Option<&'a Finding>, Option<&'a Finding>)> {
    let mut mb: BTreeMap<Key, &Finding> = BTreeMap::new();
    for f in &b.findings {
        mb.entry(key(f)).or_insert(f);
    }
    let mut ma: BTreeMap<Key, &Finding> = BTreeMap::new();
    for f in &a.findings {
        ma.entry(key(f)).or_insert(f);
    }
    let mut pairs = Vec::new();
    let both: Vec<Key> = mb.keys().filter(|k| ma.contains_key(*k)).cloned().collect();
    for k in both {
        pairs.push((mb.remove(&k), ma.remove(&k)));
    }
    let mut left_b: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in mb.into_values() {
        left_b.entry(f.rule.clone()).or_default().push(f);
    }
    let mut left_a: BTreeMap<String, Vec<&Finding>> = BTreeMap::new();
    for f in ma.into_values() {
        left_a.entry(f.rule.clone()).or_default().push(f);
    }
    let rules: BTreeSet<String> = left_b.keys().chain(left_a.keys()).cloned().collect();
    for r in rules {
        let fb = left_b.remove(&r).unwrap_or_default();
        let fa = left_a.remove(&r).unwrap_or_default();
        if let ([x], [y]) = (fb.as_slice(), fa.as_slice()) {
            pairs.push((Some(*x), Some(*y)));
            continue;
        }
        pairs.extend(fb.into_iter().map(|f| (Some(f), None)));
        pairs.extend(fa.into_iter().map(|f| (None, Some(f))));
    }
    pairs
}

/// Compare verdicts of two host reports (see [`Verdicts`]).
pub fn diff_verdicts(b: &HostReport, a: &HostReport) -> Verdicts {
    let mut v = Verdicts::default();
    for (fb, fa) in pair_findings(b, a) {
        let (bs, as_) = (fb.map(|f| f.status), fa.map(|f| f.status));
        let vc = |f: &Finding| VerdictChange {
            before_status: bs,
            after_status: as_,
            finding: f.clone(),
        };
        match (fb, fa) {
            (_, Some(x)) if x.status == Status::Fail && bs != Some(Status::Fail) => {
                v.regressions.push(vc(x))
            }
            (Some(x), y) if x.status == Status::Fail && !matches!(as_, Some(Status::Fail)) => {
                match y {
                    None => v.fixes.push(vc(x)),
                    Some(y) if matches!(y.status, Status::Pass | Status::Skip) => {
                        // a rule's one summary pass (no subject) fixes the
                        // subject that failed: the fix names it
                        let mut c = vc(y);
                        if c.finding.subject.is_empty() {
                            c.finding.subject = x.subject.clone();
                        }
                        v.fixes.push(c)
                    }
                    Some(y) => v.other.push(vc(y)),
                }
            }
            (None, Some(y)) => v.new.push(vc(y)),
            (Some(x), None) => v.vanished.push(vc(x)),
            (Some(x), Some(y)) if x.status != y.status => v.other.push(vc(y)),
            _ => {}
        }
    }
    // A rule whose regression or fix is reported does not also list the
    // summary finding it replaced (a drift rule's pass line) as new/vanished.
    let changed: BTreeSet<String> = v
        .regressions
        .iter()
        .chain(v.fixes.iter())
        .map(|c| c.finding.rule.clone())
        .collect();
    v.new.retain(|c| !changed.contains(&c.finding.rule));
    v.vanished.retain(|c| !changed.contains(&c.finding.rule));
    v
}
