//! The planning loop: audit a private copy, plan each failing finding's
//! change, apply it to the copy, re-audit until nothing more can be fixed
//! (at most [`MAX_ROUNDS`] rounds), then prove the patch. Must not touch
//! the audited host.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::facts::Facts;
use crate::host::Host;
use crate::policy::PolicySet;
use crate::report::{Finding, HostReport, Report, Status};

use super::changes::{changes_for, describe, key_name, key_of, Target};
use super::context::Ctx;
use super::model::{Edit, FixOptions, Fixed, Plan, Prefer, Proof, Unfixable, FIX_SCHEMA};
use super::schedule::schedule;
use super::tree::Tree;
use super::{diff, mounts, mycnf, sysctl, zimbra};

/// Most planning rounds: a change whose rule reads a value another change
/// writes waits for the next round, computed on the changed copy.
const MAX_ROUNDS: usize = 4;

/// One audit of the copy: its facts and findings (waivers applied).
pub(super) fn audit_copy(
    policies: &PolicySet,
    host: &Host,
    opts: &FixOptions,
) -> (Facts, HostReport) {
    let facts = crate::engine::gather(policies, host);
    let mut report = crate::engine::evaluate(policies, &facts);
    if let Some(w) = &opts.waivers {
        let mut r = Report::new(vec![report], policies);
        w.apply(&mut r, &crate::waiver::today());
        report = r.hosts.pop().expect("one host in, one out");
    }
    (facts, report)
}

pub(super) fn targeted(f: &Finding, opts: &FixOptions) -> bool {
    f.status == Status::Fail
        && (opts.only.is_empty() || opts.only.iter().any(|g| f.rule_matches(g)))
        && !opts.skip.iter().any(|g| f.rule_matches(g))
}

/// Plan a fix for the snapshot at `dir` (`None`: the live host, captured
/// first into a private snapshot).
pub fn plan(
    policies: &PolicySet,
    snapshot: Option<&Path>,
    opts: &FixOptions,
) -> Result<Plan, String> {
    let mut live_note = None;
    let mut tree = match snapshot {
        Some(dir) => Tree::copy_of(dir)
            .map_err(|e| format!("cannot copy snapshot `{}`: {e}", dir.display()))?,
        None => {
            let t = Tree::empty().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
            let meta = crate::snapshot::take(
                policies,
                t.root(),
                &crate::snapshot::SnapshotOptions {
                    force: false,
                    mysql: opts.mysql.is_some(),
                    mysql_connection: opts.mysql.clone().unwrap_or_default(),
                },
            )
            .map_err(|e| format!("cannot capture the live host: {e}"))?;
            live_note = Some(live_capture_note(&meta, opts.mysql.is_none()));
            t
        }
    };
    let mut plan = plan_on(policies, &mut tree, opts)?;
    if let Some(n) = live_note {
        plan.notes.insert(0, n);
    }
    Ok(plan)
}

/// What capturing the live host ran, as the summary says it: the commands
/// a snapshot runs (as the user running `fix`, often root) and how to turn
/// the MySQL ones off.
pub(super) fn live_capture_note(meta: &crate::snapshot::SnapshotMeta, no_mysql: bool) -> String {
    let user = if rustix::process::geteuid().is_root() {
        "root".to_string()
    } else {
        format!("uid {}", rustix::process::geteuid().as_raw())
    };
    let captured: Vec<&str> = meta
        .files
        .iter()
        .map(String::as_str)
        .filter(|f| f.starts_with("captures/"))
        .collect();
    let mysql = if no_mysql {
        "not run: my_print_defaults and the mysql client (--mysql reads the running server)"
            .to_string()
    } else {
        "it ran my_print_defaults (client option groups) and the mysql client \
         (SHOW GLOBAL VARIABLES into captures/mysql-variables.tsv), as --mysql asked"
            .to_string()
    };
    format!(
        "captured the live host into a private snapshot first, as {user}: files read-only, \
         tune2fs -l for each ext4 device and rpm -qa where installed; {mysql}; captures taken: {}; \
         `fix --snapshot DIR` plans on a snapshot taken beforehand instead",
        if captured.is_empty() {
            "none".to_string()
        } else {
            captured.join(", ")
        }
    )
}

/// Plan on a working copy (see [`plan`]).
pub fn plan_on(policies: &PolicySet, tree: &mut Tree, opts: &FixOptions) -> Result<Plan, String> {
    let host0 = tree
        .host()
        .map_err(|e| format!("cannot read the copy: {e}"))?;
    let (facts0, before) = audit_copy(policies, &host0, opts);
    // what each finding's changes write, to show them before -> after
    let mut touched: BTreeMap<(String, String), BTreeSet<Target>> = BTreeMap::new();
    let targets: Vec<Finding> = before
        .findings
        .iter()
        .filter(|f| targeted(f, opts))
        .cloned()
        .collect();
    let target_keys: BTreeSet<(String, String)> = targets.iter().map(key_of).collect();
    let mut steps = Vec::new();
    let mut notes = Vec::new();
    let mut edits: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // findings already given a change, and why one could not be planned
    let mut planned: BTreeSet<(String, String)> = BTreeSet::new();
    let mut reasons: BTreeMap<(String, String), String> = BTreeMap::new();
    // findings whose rule lost a conflict: the plan writes another rule's
    // value, so they stay failing by design (unfixable, not a failed proof)
    let mut lost: BTreeMap<(String, String), String> = BTreeMap::new();
    let rounds = if opts.no_verify { 1 } else { MAX_ROUNDS };
    for _ in 0..rounds {
        let host = tree
            .host()
            .map_err(|e| format!("cannot read the copy: {e}"))?;
        let (facts, report) = audit_copy(policies, &host, opts);
        let failing: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| target_keys.contains(&key_of(f)) && f.status == Status::Fail)
            .filter(|f| !planned.contains(&key_of(f)))
            .collect();
        let mut changes = Vec::new();
        for f in failing {
            let Some(rule) = policies.rules().iter().find(|r| r.id == f.rule) else {
                continue;
            };
            match changes_for(policies, rule, f, &facts, &host, opts) {
                Ok(cs) => changes.extend(cs),
                Err(reason) => {
                    reasons.insert(key_of(f), reason);
                }
            }
        }
        if changes.is_empty() {
            break;
        }
        let (now, later) = schedule(changes, &mut notes, &mut lost, opts.no_verify);
        for c in &later {
            for k in &c.keys {
                reasons.insert(
                    k.clone(),
                    "its value depends on another change of this plan; run without --no-verify"
                        .into(),
                );
            }
        }
        if now.is_empty() {
            break;
        }
        let mut cx = Ctx {
            tree,
            host: &host,
            facts: &facts,
            steps: &mut steps,
            notes: &mut notes,
            pending: BTreeMap::new(),
            edits: &mut edits,
            cur: (String::new(), Vec::new()),
        };
        for c in &now {
            cx.cur = (key_name(&c.target).to_string(), c.why.clone());
            // a change that would make the patch quote a secret is undone
            let saved = (
                cx.pending.clone(),
                cx.steps.clone(),
                cx.notes.clone(),
                cx.edits.clone(),
            );
            let res = match &c.target {
                Target::Sysctl(k) => sysctl::apply(&mut cx, k, c),
                Target::Option(n) => mycnf::apply(&mut cx, n, c),
                Target::ZimbraPool => zimbra::apply_pool(&mut cx, c),
                Target::Localconfig(k) => zimbra::apply_localconfig(&mut cx, k, c),
                Target::Mount(p) => mounts::apply(&mut cx, p, c),
            }
            .and_then(|()| cx.patchable());
            if res.is_err() {
                cx.pending = saved.0;
                *cx.steps = saved.1;
                *cx.notes = saved.2;
                *cx.edits = saved.3;
            }
            for k in &c.keys {
                match &res {
                    Ok(()) => {
                        planned.insert(k.clone());
                        touched
                            .entry(k.clone())
                            .or_default()
                            .insert(c.target.clone());
                    }
                    Err(reason) => {
                        reasons.insert(k.clone(), reason.clone());
                    }
                }
            }
        }
        cx.commit()?;
        if opts.no_verify {
            break;
        }
    }
    let patch = tree
        .patch()
        .map_err(|e| format!("cannot write the patch: {e}"))?;
    // the proof: apply the printed patch text to the copy (the runtime
    // steps are simulated there already), then re-audit it
    let patch_error = if opts.no_verify {
        None
    } else {
        let text = opts.tamper.map(|f| f(&patch));
        tree.apply_patch(text.as_deref().unwrap_or(&patch)).err()
    };
    let host = tree
        .host()
        .map_err(|e| format!("cannot read the copy: {e}"))?;
    let (facts1, after) = audit_copy(policies, &host, opts);
    let show = |facts: &Facts, h: &Host, k: &(String, String)| -> Option<String> {
        let ts = touched.get(k)?;
        Some(
            ts.iter()
                .map(|t| describe(facts, h, t))
                .collect::<Vec<_>>()
                .join("; "),
        )
    };
    let after_of: BTreeMap<(String, String), &Finding> =
        after.findings.iter().map(|f| (key_of(f), f)).collect();
    let mut fixes = Vec::new();
    let mut unfixable = Vec::new();
    let mut still_failing = Vec::new();
    for f in &targets {
        let k = key_of(f);
        // the subject of an assert finding may change with the values (a
        // setting no longer involved): a rule with one finding is that finding
        let only_one = || {
            let mut of_rule = after.findings.iter().filter(|a| a.rule == f.rule);
            match (of_rule.next(), of_rule.next()) {
                (Some(a), None) => Some(a),
                _ => None,
            }
        };
        let now = after_of.get(&k).copied().or_else(only_one);
        // a drift rule reports only the keys that differ: no finding for the
        // subject any more is a pass
        let passes = now.is_none_or(|a| a.status != Status::Fail);
        let before_v =
            show(&facts0, &host0, &k).unwrap_or_else(|| f.actual.clone().unwrap_or_default());
        if opts.no_verify {
            if planned.contains(&k) {
                fixes.push(Fixed {
                    rule: f.rule.clone(),
                    alias: f.alias.clone(),
                    subject: k.1.clone(),
                    before: before_v,
                    after: "(not verified)".into(),
                });
            } else {
                unfixable.push(Unfixable {
                    rule: f.rule.clone(),
                    alias: f.alias.clone(),
                    subject: k.1.clone(),
                    reason: reasons
                        .get(&k)
                        .cloned()
                        .unwrap_or_else(|| "no change planned".into()),
                });
            }
            continue;
        }
        if passes {
            let after = match (show(&facts1, &host, &k), now) {
                (Some(v), _) => v,
                (None, Some(a)) => {
                    format!("{} (by the other changes of this plan)", a.status.as_str())
                }
                (None, None) if opts.prefer == Prefer::Running => before_v.clone(),
                (None, None) => f.expected.clone().unwrap_or_default(),
            };
            fixes.push(Fixed {
                rule: f.rule.clone(),
                alias: f.alias.clone(),
                subject: k.1.clone(),
                before: before_v,
                after,
            });
        } else {
            let reason = match (lost.get(&k).or(reasons.get(&k)), planned.contains(&k)) {
                (Some(r), _) => r.clone(),
                (None, true) => format!(
                    "the planned change does not make it pass: {}",
                    now.and_then(|a| a.actual.clone()).unwrap_or_default()
                ),
                (None, false) => "no change planned".into(),
            };
            let u = Unfixable {
                rule: f.rule.clone(),
                alias: f.alias.clone(),
                subject: k.1.clone(),
                reason,
            };
            if planned.contains(&k) && !lost.contains_key(&k) {
                still_failing.push(u.clone());
            }
            unfixable.push(u);
        }
    }
    let before_status: BTreeMap<(String, String), Status> = before
        .findings
        .iter()
        .map(|f| (key_of(f), f.status))
        .collect();
    let new_failures: Vec<Unfixable> = after
        .findings
        .iter()
        .filter(|f| f.status == Status::Fail)
        .filter(|f| before_status.get(&key_of(f)) != Some(&Status::Fail))
        .map(|f| Unfixable {
            rule: f.rule.clone(),
            alias: f.alias.clone(),
            subject: f.subject.join(", "),
            reason: f.explanation.clone(),
        })
        .collect();
    let proof = (!opts.no_verify).then(|| Proof {
        new_failures,
        still_failing,
        assumes_restarts: steps.iter().filter(|s| s.needs_restart).count(),
        patch_error,
    });
    // an unproven patch is not printed: people apply what `fix` prints
    let patch = match &proof {
        Some(p) if !p.passed() && !patch.is_empty() => {
            notes.push(
                "the patch is not printed because the proof failed; `--no-verify` prints it \
                 unproven"
                    .into(),
            );
            String::new()
        }
        _ => patch,
    };
    // the edits of the printed patch, one per file and key
    let in_patch: BTreeSet<String> = diff::parse(&patch)
        .map(|fs| fs.into_iter().map(|f| f.path).collect())
        .unwrap_or_default();
    let edits = edits
        .into_iter()
        .filter(|((file, _), _)| in_patch.contains(file))
        .map(|((file, key), fixes)| Edit { file, key, fixes })
        .collect();
    Ok(Plan {
        schema: FIX_SCHEMA,
        patch,
        edits,
        runtime: steps,
        fixes,
        unfixable,
        proof,
        notes,
    })
}
