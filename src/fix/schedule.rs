//! The order of changes: one value per target, a change implied by another
//! dropped, the rounds a value that depends on another needs. Must not
//! edit files.

use std::collections::{BTreeMap, BTreeSet};

use super::changes::{same_value, Change, Op, Target};

/// Decide conflicts (one value per target: the more severe rule's, with
/// both reasons in a note) and defer a change whose rule reads a target
/// another change of this round writes (it is computed again next round).
pub(super) fn schedule(
    changes: Vec<Change>,
    notes: &mut Vec<String>,
    lost: &mut BTreeMap<(String, String), String>,
    single_round: bool,
) -> (Vec<Change>, Vec<Change>) {
    let mut by_target: BTreeMap<Target, Vec<Change>> = BTreeMap::new();
    for c in changes {
        by_target.entry(c.target.clone()).or_default().push(c);
    }
    let mut chosen = Vec::new();
    for (_, mut cs) in by_target {
        cs.sort_by_key(|c| std::cmp::Reverse(c.severity));
        let first = cs[0].clone();
        for other in &cs[1..] {
            match (&first.op, &other.op) {
                (Op::Set(a, _), Op::Set(b, _)) if !same_value(a, b) => {
                    notes.push(format!(
                        "conflict: {} wants {} and {} wants {}; the plan writes {} ({} is the more severe rule)",
                        first.why.join("; "),
                        crate::expr::show(a),
                        other.why.join("; "),
                        crate::expr::show(b),
                        crate::expr::show(a),
                        first.why.join("; ")
                    ));
                    for k in &other.keys {
                        lost.insert(
                            k.clone(),
                            format!(
                                "conflict: the plan writes {} for the more severe rule {}",
                                crate::expr::show(a),
                                first.why.join("; ")
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
        // a conflicting value is replaced by the chosen one; then the
        // changes that do the same to the target are one change, fixing
        // all their findings (one edit per file and key, one step per
        // command)
        let mut merged: Vec<Change> = Vec::new();
        for mut c in cs {
            if let (Op::Set(a, ab), Op::Set(_, _)) = (&first.op, &c.op) {
                c.op = Op::Set(a.clone(), *ab);
            }
            match merged.iter_mut().find(|m| m.op == c.op) {
                Some(m) => {
                    for (w, k) in c.why.into_iter().zip(c.keys) {
                        if !m.keys.contains(&k) {
                            m.why.push(w);
                            m.keys.push(k);
                        }
                    }
                    m.persist |= c.persist;
                    m.apply_now |= c.apply_now;
                    m.reads.extend(c.reads);
                }
                None => merged.push(c),
            }
        }
        chosen.extend(merged);
    }
    if single_round {
        return (chosen, Vec::new());
    }
    let written: BTreeSet<Target> = chosen
        .iter()
        .flat_map(|c| {
            let mut w = vec![c.target.clone()];
            if c.target == Target::ZimbraPool {
                w.push(Target::Localconfig("mysql_memory_percent".into()));
            }
            w
        })
        .collect();
    let (mut now, mut later) = (Vec::new(), Vec::new());
    for c in chosen {
        let waits = c
            .reads
            .iter()
            .any(|t| *t != c.target && written.contains(t) && !implied_by(&c.target, t));
        if waits {
            later.push(c);
        } else {
            now.push(c);
        }
    }
    if now.is_empty() {
        return (later, Vec::new());
    }
    (now, later)
}

/// A Zimbra pool change also writes `mysql_memory_percent`.
pub(super) fn implied_by(target: &Target, read: &Target) -> bool {
    *target == Target::ZimbraPool && *read == Target::Localconfig("mysql_memory_percent".into())
}
