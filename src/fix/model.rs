//! The plan's model: what `driftaudit fix` is asked ([`FixOptions`]) and
//! what it hands back ([`Plan`]: the patch's edits, the runtime steps, what
//! it fixes and cannot, the proof), with the plan's own texts (the script,
//! the summary, JSON). Must not plan or edit files.

use std::fmt::Write as _;

use serde::Serialize;

use crate::printable::printable;

/// Schema id of `fix --format json`.
pub const FIX_SCHEMA: &str = "driftaudit.fix/1";

/// Which side of a drift rule wins.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Prefer {
    /// The persisted value is applied to the running system (default).
    #[default]
    Configured,
    /// The running value is written into the file that wins.
    Running,
}

/// What to plan.
#[derive(Debug, Default)]
pub struct FixOptions {
    /// Drift rules: which side wins.
    pub prefer: Prefer,
    /// Skip the proof (`--no-verify`): one planning round, no re-audit.
    pub no_verify: bool,
    /// Only rules whose id matches one of these (empty: all).
    pub only: Vec<glob::Pattern>,
    /// Never rules whose id matches one of these.
    pub skip: Vec<glob::Pattern>,
    /// Waivers: a waived finding is not fixed.
    pub waivers: Option<crate::waiver::WaiverSet>,
    /// Live host only: read the running MySQL/MariaDB server read-only
    /// (`my_print_defaults` and the `mysql` client for `SHOW GLOBAL
    /// VARIABLES`) through this connection (`--mysql`); `None`, the
    /// default, runs neither, as every live read of a server is asked for.
    pub mysql: Option<crate::snapshot::MysqlConnection>,
    /// Tests only: rewrite the patch text before the proof applies it (a
    /// corrupted patch must fail the proof).
    #[doc(hidden)]
    pub tamper: Option<fn(&str) -> String>,
}

/// One runtime step of the script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The command, shell-quoted.
    pub command: String,
    /// The findings it fixes (`RULE SUBJECT`).
    pub fixes: Vec<String>,
    /// A restart (or regeneration) step: listed commented out.
    pub needs_restart: bool,
    /// Extra words for the script's comment.
    #[serde(skip)]
    pub note: String,
}

/// One edit of the patch: one file and key (a sysctl key, an option, a
/// mount point's fstab entry), written once whatever number of findings
/// it fixes, with every one of them listed against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    /// The host path the patch changes.
    pub file: String,
    /// The key (setting name, option name, mount point) it sets there.
    pub key: String,
    /// The findings it fixes (`RULE SUBJECT`).
    pub fixes: Vec<String>,
}

/// A finding the plan fixes, before -> after (after from the proof).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fixed {
    /// Rule id (the canonical one).
    pub rule: String,
    /// The `for_each` item's alias (`storage.db-on-rotational`), shown
    /// beside the rule id, never instead of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Subject (setting names, mount point).
    pub subject: String,
    /// The host's value now.
    pub before: String,
    /// The value after the plan (as the re-audit sees it).
    pub after: String,
}

/// A finding the plan does not fix, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unfixable {
    /// Rule id (the canonical one).
    pub rule: String,
    /// The `for_each` item's alias (`storage.db-on-rotational`), shown
    /// beside the rule id, never instead of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Subject.
    pub subject: String,
    /// Why.
    pub reason: String,
}

/// The proof: the re-audit of the fixed copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proof {
    /// Rules that passed (or did not apply) before and fail after the plan.
    pub new_failures: Vec<Unfixable>,
    /// Targeted findings that still fail after the plan.
    pub still_failing: Vec<Unfixable>,
    /// Restart steps the proof assumes were run.
    pub assumes_restarts: usize,
    /// Why the printed patch did not apply to the copy (the proof applies
    /// the patch text itself, strictly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_error: Option<String>,
}

impl Proof {
    /// Whether the plan fixes what it targets and breaks nothing.
    pub fn passed(&self) -> bool {
        self.new_failures.is_empty() && self.still_failing.is_empty() && self.patch_error.is_none()
    }
}

/// A plan: the patch, the runtime steps, and what it fixes.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    /// Schema id ([`FIX_SCHEMA`]).
    pub schema: &'static str,
    /// Unified diff relative to the host root (empty: no file changes).
    pub patch: String,
    /// The patch's edits, one per file and key, with the findings each
    /// fixes (empty when no patch is printed).
    pub edits: Vec<Edit>,
    /// Runtime steps, in order.
    pub runtime: Vec<Step>,
    /// Findings fixed.
    pub fixes: Vec<Fixed>,
    /// Findings not fixed.
    pub unfixable: Vec<Unfixable>,
    /// The proof (`None` with `--no-verify`).
    pub proof: Option<Proof>,
    /// What the admin should know (conflicts, generated files).
    pub notes: Vec<String>,
}

impl Plan {
    /// 0: fixes everything it targets (or nothing to fix); 1: something
    /// unfixable, or the proof failed.
    pub fn exit_code(&self) -> u8 {
        let proof_ok = self.proof.as_ref().is_none_or(Proof::passed);
        if self.unfixable.is_empty() && proof_ok {
            0
        } else {
            1
        }
    }

    /// The runtime steps as a POSIX sh script: each step under a comment
    /// naming the findings it fixes; restart steps commented out.
    pub fn script(&self) -> String {
        let mut o = String::from(
            "#!/bin/sh\n# driftaudit fix: runtime steps. Review before running; run as root.\n\
             # Steps that need a restart are commented out: uncomment them in a\n\
             # maintenance window.\nset -eu\n",
        );
        for s in &self.runtime {
            o.push('\n');
            // host data in a comment: one line, no control character
            for f in &s.fixes {
                let _ = writeln!(o, "# fixes {}", printable(f, false));
            }
            if !s.note.is_empty() {
                let _ = writeln!(o, "# {}", printable(&s.note, false));
            }
            if s.needs_restart {
                let _ = writeln!(o, "# needs a restart:\n# {}", s.command);
            } else {
                let _ = writeln!(o, "{}", s.command);
            }
        }
        o
    }

    /// The stderr summary: what the plan fixes, what it cannot and why, and
    /// the proof.
    pub fn summary(&self) -> String {
        let mut o = String::new();
        if self.fixes.is_empty() && self.unfixable.is_empty() {
            o.push_str("nothing to fix: no failing finding with a remedy\n");
        }
        // every piece of host data on one line, control characters escaped
        let p = |s: &str| printable(s, false).into_owned();
        for f in &self.fixes {
            let _ = writeln!(
                o,
                "fixes {} {}: {} -> {}",
                p(&shown_id(&f.rule, f.alias.as_deref())),
                p(&f.subject),
                p(&f.before),
                p(&f.after)
            );
        }
        for u in &self.unfixable {
            let _ = writeln!(
                o,
                "cannot fix {} {}: {}",
                p(&shown_id(&u.rule, u.alias.as_deref())),
                p(&u.subject),
                p(&u.reason)
            );
        }
        // one line per edit and per step, every finding it fixes on it
        let findings = |fs: &[String]| {
            format!(
                "for {}: {}",
                count(fs.len(), "finding"),
                fs.iter().map(|f| p(f)).collect::<Vec<_>>().join("; ")
            )
        };
        for e in &self.edits {
            let _ = writeln!(
                o,
                "edit {} {}, {}",
                p(&e.file),
                p(&e.key),
                findings(&e.fixes)
            );
        }
        for s in &self.runtime {
            let restart = if s.needs_restart {
                " (commented out: needs a restart)"
            } else {
                ""
            };
            let _ = writeln!(o, "step {}{restart}, {}", p(&s.command), findings(&s.fixes));
        }
        for n in &self.notes {
            let _ = writeln!(o, "note: {}", p(n));
        }
        match &self.proof {
            None => o.push_str("proof: skipped (--no-verify)\n"),
            Some(pr) => {
                if let Some(e) = &pr.patch_error {
                    let _ = writeln!(o, "proof: the printed patch does not apply: {}", p(e));
                }
                for u in &pr.new_failures {
                    let _ = writeln!(
                        o,
                        "proof: the plan makes {} {} fail: {}",
                        p(&u.rule),
                        p(&u.subject),
                        p(&u.reason)
                    );
                }
                if pr.passed() {
                    let _ = write!(
                        o,
                        "proof: re-audit of the patched copy passes every targeted finding, no new failure"
                    );
                    if pr.assumes_restarts > 0 {
                        let _ = write!(
                            o,
                            " (assuming the {} commented restart step(s) are run)",
                            pr.assumes_restarts
                        );
                    }
                    o.push('\n');
                } else {
                    o.push_str("proof: FAILED\n");
                }
            }
        }
        o
    }

    /// `--format json`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }
}

/// `n thing` or `n things`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// The rule id as every command prints it, the item's alias beside it.
pub(super) fn shown_id(rule: &str, alias: Option<&str>) -> String {
    match alias {
        Some(a) => format!("{rule} (alias {a})"),
        None => rule.to_string(),
    }
}
