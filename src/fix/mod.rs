//! `driftaudit fix`, library side: plan the change for every failing finding
//! that has a remedy, where the resolver says the value is decided (one file
//! per kind of edit: [`sysctl`], [`mycnf`], [`zimbra`], [`mounts`]), as a
//! unified diff plus POSIX sh runtime steps, and prove it by re-auditing a
//! private copy of the host with the patch applied and the runtime steps
//! simulated on the captured live values. Never changes the audited host:
//! every write goes to the copy ([`tree`]); the caller writes the outputs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::facts::Facts;
use crate::host::Host;
use crate::policy::{Bound, Check, PolicySet, Remedy, Rule, Severity};
use crate::printable::printable;
use crate::report::{Finding, HostReport, Report, Status};
use crate::resolve::Resolver;
use crate::value::Value;

pub mod diff;
mod mounts;
mod mycnf;
pub mod shell;
mod sysctl;
mod tree;
mod zimbra;

pub use tree::{EditKind, Tree};

/// The server variables a plan changes at run time with `SET GLOBAL`
/// (dynamic in MySQL 5.7+/8.0 and MariaDB 10.2+); every other option file
/// change gets a commented restart step.
pub fn dynamic_variables() -> &'static [&'static str] {
    mycnf::DYNAMIC
}

/// Schema id of `fix --format json`.
pub const FIX_SCHEMA: &str = "driftaudit.fix/1";

/// Most planning rounds: a change whose rule reads a value another change
/// writes waits for the next round, computed on the changed copy.
const MAX_ROUNDS: usize = 4;

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
    /// Live host only: do not run `my_print_defaults` and the `mysql`
    /// client to capture `SHOW GLOBAL VARIABLES` (`--no-mysql`).
    pub no_mysql: bool,
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

/// Where a change goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Sysctl(String),
    Option(String),
    ZimbraPool,
    Localconfig(String),
    Mount(String),
}

/// What a change does.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// Write this value (persist and/or apply now).
    Set(Value, Bound),
    /// Delete the lines that set it.
    Remove,
    /// Mount flags: add, remove; `plain_remount`: `mount -o remount POINT`
    /// (the fstab options) rather than naming the added flags.
    Mount {
        add: Vec<String>,
        remove: Vec<String>,
        plain_remount: bool,
    },
}

/// One planned change, for one finding.
#[derive(Debug, Clone)]
struct Change {
    target: Target,
    op: Op,
    /// Change the persisted configuration (the patch).
    persist: bool,
    /// Change the running system (the runtime script).
    apply_now: bool,
    /// `RULE SUBJECT` of each finding the change fixes (one change per
    /// target and operation: findings wanting the same are merged).
    why: Vec<String>,
    /// The findings' keys ([`key_of`]), in the order of `why`.
    keys: Vec<(String, String)>,
    severity: Severity,
    /// Targets the finding's rule reads.
    reads: BTreeSet<Target>,
}

/// What tells a finding's item apart across audits: a `for_each` item's
/// alias (the id the rule had before it was one rule per item), else the
/// rule id. Never shown: people read [`shown_id`].
fn id_of(f: &Finding) -> String {
    f.alias.clone().unwrap_or_else(|| f.rule.clone())
}

/// The rule id as every command prints it, the item's alias beside it.
fn shown_id(rule: &str, alias: Option<&str>) -> String {
    match alias {
        Some(a) => format!("{rule} (alias {a})"),
        None => rule.to_string(),
    }
}

/// Findings are matched across audits by rule and subject.
fn key_of(f: &Finding) -> (String, String) {
    (id_of(f), f.subject.join(", "))
}

fn label(f: &Finding) -> String {
    format!(
        "{} {}",
        shown_id(&f.rule, f.alias.as_deref()),
        f.subject.join(", ")
    )
}

/// The target a namespace key is written through.
fn target_of(ns: &str, key: &str) -> Option<Target> {
    match ns {
        "sysctl" | "sysctl_boot" | "sysctl_procps" => {
            Some(Target::Sysctl(crate::facts::sysctl::canonical_key(key)))
        }
        "mycnf" | "mycnf_effective" | "mysql" => {
            Some(Target::Option(crate::facts::mysql::canonical_name(key)))
        }
        "zimbra_mycnf" if crate::facts::mysql::canonical_name(key) == "innodb_buffer_pool_size" => {
            Some(Target::ZimbraPool)
        }
        "localconfig" => Some(Target::Localconfig(key.to_string())),
        "fstab" | "mount" if key != "*" => Some(Target::Mount(key.to_string())),
        _ => None,
    }
}

/// What the plan-in-progress holds while writers run.
struct Ctx<'a> {
    tree: &'a mut Tree,
    host: &'a Host,
    facts: &'a Facts,
    steps: &'a mut Vec<Step>,
    notes: &'a mut Vec<String>,
    /// Pending line edits of this round, per file.
    pending: BTreeMap<String, Lines>,
    /// The patch's edits so far: (host path, key) -> the findings.
    edits: &'a mut BTreeMap<(String, String), Vec<String>>,
    /// The key and findings of the change being written.
    cur: (String, Vec<String>),
}

/// A file's lines while a round edits it: each slot is one original line
/// without its ending (`None`: deleted; a slot may hold inserted lines
/// after its own, joined by `\n`), and each line's own ending (`\n`,
/// `\r\n`, or none for a last line without one), so that a CRLF file keeps
/// its CRs and a stray CR stays part of its line.
#[derive(Debug, Clone)]
struct Lines {
    kind: EditKind,
    slots: Vec<Option<String>>,
    eols: Vec<&'static str>,
    /// The ending of lines the plan adds: the file's first line's.
    eol: &'static str,
    existed: bool,
}

impl Lines {
    fn of(text: Option<&str>, kind: EditKind) -> Lines {
        let (mut slots, mut eols) = (Vec::new(), Vec::new());
        for piece in text.unwrap_or("").split_inclusive('\n') {
            let (body, eol) = if let Some(b) = piece.strip_suffix("\r\n") {
                (b, "\r\n")
            } else if let Some(b) = piece.strip_suffix('\n') {
                (b, "\n")
            } else {
                (piece, "")
            };
            slots.push(Some(body.to_string()));
            eols.push(eol);
        }
        let eol = eols
            .first()
            .copied()
            .filter(|e| !e.is_empty())
            .unwrap_or("\n");
        Lines {
            kind,
            slots,
            eols,
            eol,
            existed: text.is_some(),
        }
    }

    /// The file's text as the edits leave it (`None`: a file that did not
    /// exist and stays empty).
    fn text(&self) -> Option<String> {
        let kept: Vec<(&str, &str)> = self
            .slots
            .iter()
            .zip(&self.eols)
            .filter_map(|(s, e)| s.as_deref().map(|s| (s, *e)))
            .collect();
        if !self.existed && kept.is_empty() {
            return None;
        }
        let mut text = String::new();
        let last = kept.len().saturating_sub(1);
        for (i, (body, eol)) in kept.iter().enumerate() {
            // a line that no longer ends the file needs an ending
            let eol = if eol.is_empty() && i < last {
                self.eol
            } else {
                eol
            };
            if eol == "\r\n" {
                text.push_str(&body.replace('\n', "\r\n"));
            } else {
                text.push_str(body);
            }
            text.push_str(eol);
        }
        Some(text)
    }
}

impl Ctx<'_> {
    /// A host path as the file it names in the copy (links resolved
    /// inside the copy's root, as the readers resolved them).
    fn real(&self, path: &str) -> String {
        self.host.resolve(path).unwrap_or_else(|_| path.to_string())
    }

    /// Write a whole simulated file (a `proc/sys` value). Pending like a
    /// line edit, so a change refused later in the round is undone whole.
    fn write_sim(&mut self, path: &str, text: &str) -> Result<(), String> {
        let path = self.real(path);
        let existed = self
            .current(&path)
            .map_err(|e| format!("cannot simulate the runtime step: {e}"))?
            .is_some();
        let mut l = Lines::of(Some(text), EditKind::Simulated);
        l.existed = existed || !text.is_empty();
        self.pending.insert(path, l);
        Ok(())
    }

    /// The text of `path` as this round leaves it so far (`None`: missing).
    fn current(&mut self, path: &str) -> Result<Option<String>, String> {
        let path = self.real(path);
        if let Some(l) = self.pending.get(&path) {
            return Ok(l.text());
        }
        self.tree
            .read(&path)
            .map_err(|e| format!("cannot read `{path}` in the copy: {e}"))
    }

    fn lines(&mut self, path: &str, kind: EditKind) -> Result<&mut Lines, String> {
        let path = &self.real(path);
        if !self.pending.contains_key(path) {
            let text = self
                .tree
                .read(path)
                .map_err(|e| format!("cannot read `{path}` in the copy: {e}"))?;
            if text.is_none() && crate::host::unescape_name(path) != path.as_bytes() {
                // the reader showed a name that is not UTF-8 with `\xNN`
                // escapes: the copy has no file of that name, and `fix`
                // would have to name its bytes in the patch
                return Err(format!(
                    "the name of `{path}` is not UTF-8, so `fix` cannot name the file in a \
                     patch; edit it by hand (or rename it)"
                ));
            }
            self.pending
                .insert(path.to_string(), Lines::of(text.as_deref(), kind));
        }
        let l = self.pending.get_mut(path).expect("inserted above");
        if kind == EditKind::Config {
            l.kind = EditKind::Config;
        }
        Ok(l)
    }

    /// The current text of line `n` (1-based) of `path`.
    fn line(&mut self, path: &str, n: usize, kind: EditKind) -> Result<String, String> {
        let l = self.lines(path, kind)?;
        l.slots
            .get(n.wrapping_sub(1))
            .cloned()
            .flatten()
            .ok_or_else(|| format!("`{path}` has no line {n}"))
    }

    /// A configuration edit of `path` for the change being written: listed
    /// against its file and key, once.
    fn record(&mut self, path: &str, kind: EditKind) {
        if kind != EditKind::Config {
            return;
        }
        let k = (self.real(path), self.cur.0.clone());
        let fixes = self.edits.entry(k).or_default();
        for w in &self.cur.1 {
            if !fixes.contains(w) {
                fixes.push(w.clone());
            }
        }
    }

    fn replace(
        &mut self,
        path: &str,
        n: usize,
        text: String,
        kind: EditKind,
    ) -> Result<(), String> {
        self.record(path, kind);
        let l = self.lines(path, kind)?;
        match l.slots.get_mut(n.wrapping_sub(1)) {
            Some(slot) => {
                *slot = Some(text);
                Ok(())
            }
            None => Err(format!("`{path}` has no line {n}")),
        }
    }

    fn delete(&mut self, path: &str, n: usize, kind: EditKind) -> Result<(), String> {
        self.record(path, kind);
        let l = self.lines(path, kind)?;
        match l.slots.get_mut(n.wrapping_sub(1)) {
            Some(slot) => {
                *slot = None;
                Ok(())
            }
            None => Err(format!("`{path}` has no line {n}")),
        }
    }

    /// Append lines at the end of `path` (created when missing).
    fn append(&mut self, path: &str, text: &str, kind: EditKind) -> Result<(), String> {
        self.record(path, kind);
        let l = self.lines(path, kind)?;
        let eol = l.eol;
        if let Some(last) = l.eols.last_mut() {
            if last.is_empty() {
                *last = eol;
            }
        }
        for t in text.lines() {
            l.slots.push(Some(t.to_string()));
            l.eols.push(eol);
        }
        Ok(())
    }

    /// Whether every configuration file the round edits so far can still
    /// be shown as a patch without quoting a secret ([`diff::unified`]).
    fn patchable(&self) -> Result<(), String> {
        for (path, l) in &self.pending {
            if l.kind != EditKind::Config {
                continue;
            }
            let Some(new) = l.text() else { continue };
            let old = self
                .tree
                .original(path)
                .map_err(|e| format!("cannot read `{path}` in the copy: {e}"))?
                .unwrap_or_default();
            diff::unified(path, &old, &new, "a", "b").map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Write every pending file to the copy.
    fn commit(&mut self) -> Result<(), String> {
        for (path, l) in std::mem::take(&mut self.pending) {
            let Some(text) = l.text() else { continue };
            self.tree
                .write(&path, &text, l.kind)
                .map_err(|e| format!("cannot write `{path}` in the copy: {e}"))?;
        }
        Ok(())
    }

    /// Add a runtime step (or the finding to the same step). A command
    /// that would carry a control character into the script is refused:
    /// the writers check their values first, so this is the last guard.
    fn step(
        &mut self,
        command: String,
        why: &[String],
        needs_restart: bool,
        note: &str,
    ) -> Result<(), String> {
        if let Some(c) = command
            .chars()
            .find(|c| crate::printable::unsafe_char(*c, false))
        {
            return Err(format!(
                "the runtime step would carry {} into the script",
                char_name(c)
            ));
        }
        if let Some(s) = self
            .steps
            .iter_mut()
            .find(|s| s.command == command && s.needs_restart == needs_restart)
        {
            for w in why {
                if !s.fixes.contains(w) {
                    s.fixes.push(w.clone());
                }
            }
            return Ok(());
        }
        self.steps.push(Step {
            command,
            fixes: why.to_vec(),
            needs_restart,
            note: note.to_string(),
        });
        Ok(())
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// A character in words, for a reason (`a newline`, `U+001B`).
fn char_name(c: char) -> String {
    match c {
        '\n' => "a newline".into(),
        '\r' => "a carriage return (CR)".into(),
        '\t' => "a tab".into(),
        c => format!("the control character U+{:04X}", c as u32),
    }
}

/// A value a writer puts into a file or a command: refused, with the
/// reason, when it holds a newline or any character the output cannot show
/// (control characters other than tab, bidirectional overrides), so that
/// a host value can never become a second line or drive a terminal.
fn check_value(what: &str, v: &str) -> Result<(), String> {
    match v.chars().find(|c| crate::printable::unsafe_char(*c, false)) {
        None => Ok(()),
        Some(c) => Err(format!(
            "the {what} holds {}, which `fix` cannot write on one line of a file or a \
             command; set it by hand",
            char_name(c)
        )),
    }
}

/// A comment line's text from host data (`# fixes RULE SUBJECT`): one line,
/// control characters shown as escapes.
fn comment(text: &str) -> String {
    printable(text, false).into_owned()
}

/// One audit of the copy: its facts and findings (waivers applied).
fn audit_copy(policies: &PolicySet, host: &Host, opts: &FixOptions) -> (Facts, HostReport) {
    let facts = crate::engine::gather(policies, host);
    let mut report = crate::engine::evaluate(policies, &facts);
    if let Some(w) = &opts.waivers {
        let mut r = Report::new(vec![report], policies);
        w.apply(&mut r, &crate::waiver::today());
        report = r.hosts.pop().expect("one host in, one out");
    }
    (facts, report)
}

fn targeted(f: &Finding, opts: &FixOptions) -> bool {
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
                    mysql: !opts.no_mysql,
                },
            )
            .map_err(|e| format!("cannot capture the live host: {e}"))?;
            live_note = Some(live_capture_note(&meta, opts.no_mysql));
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
fn live_capture_note(meta: &crate::snapshot::SnapshotMeta, no_mysql: bool) -> String {
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
        "not run: my_print_defaults and the mysql client (--no-mysql)".to_string()
    } else {
        "it ran my_print_defaults (client option groups) and the mysql client \
         (SHOW GLOBAL VARIABLES into captures/mysql-variables.tsv); --no-mysql turns both off"
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
            let Some(rule) = policies.rules.iter().find(|r| r.id == f.rule) else {
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

/// The key a target sets, as an edit lists it.
fn key_name(t: &Target) -> &str {
    match t {
        Target::Sysctl(k) | Target::Option(k) | Target::Localconfig(k) | Target::Mount(k) => k,
        Target::ZimbraPool => "innodb_buffer_pool_size",
    }
}

/// Decide conflicts (one value per target: the more severe rule's, with
/// both reasons in a note) and defer a change whose rule reads a target
/// another change of this round writes (it is computed again next round).
fn schedule(
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
fn implied_by(target: &Target, read: &Target) -> bool {
    *target == Target::ZimbraPool && *read == Target::Localconfig("mysql_memory_percent".into())
}

fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() < 0.5,
        _ => a.to_plain() == b.to_plain(),
    }
}

/// The changes one failing finding's remedy asks for.
fn changes_for(
    policies: &PolicySet,
    rule: &Rule,
    f: &Finding,
    facts: &Facts,
    host: &Host,
    opts: &FixOptions,
) -> Result<Vec<Change>, String> {
    let why = label(f);
    // a `setting:` built per `for_each` item: the rule as the finding's item
    // sees it (the item's key, its remedy on that key) and the value
    let item = match &rule.for_each {
        Some(fe) if fe.setting_key.is_some() => {
            let subject = f.subject.first().ok_or("the finding names no item")?;
            let (r, v) = crate::engine::item_remedy(rule, policies.policy_of(rule), facts, subject)
                .map_err(|m| {
                    format!("cannot build the remedy of the item: {}", missing_text(&m))
                })?;
            Some((r, v))
        }
        _ => None,
    };
    let rule = item.as_ref().map_or(rule, |(r, _)| r);
    let reads: BTreeSet<Target> = rule
        .settings_read()
        .iter()
        .filter_map(|(ns, k)| target_of(ns, k))
        .collect();
    let mk = |target: Target, op: Op, persist: bool, apply_now: bool| Change {
        target,
        op,
        persist,
        apply_now,
        why: vec![why.clone()],
        keys: vec![key_of(f)],
        severity: rule.severity,
        reads: reads.clone(),
    };
    let Some(remedy) = &rule.remedy else {
        return Err("the rule declares no remedy".into());
    };
    let cs = match (&item, remedy) {
        (Some((_, Some(v))), Remedy::Set { ns, key, bound, .. }) => {
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            vec![mk(target, Op::Set(v.clone(), *bound), true, true)]
        }
        _ => changes_of_remedy(policies, rule, remedy, f, facts, host, opts, &mk)?,
    };
    for c in &cs {
        if let Some(name) = secret_target(&c.target) {
            return Err(format!(
                "`{name}` holds a secret: `fix` never writes a secret value into a patch or a \
                 script; change it by hand"
            ));
        }
    }
    Ok(cs)
}

/// The secret name a target writes, if it is one ([`crate::secret`]).
fn secret_target(t: &Target) -> Option<&str> {
    use crate::secret;
    match t {
        Target::Sysctl(k) => secret::sysctl_key_is_secret(k).then_some(k.as_str()),
        Target::Option(n) => (secret::option_is_secret(n) || secret::server_variable_is_secret(n))
            .then_some(n.as_str()),
        Target::Localconfig(k) => secret::localconfig_key_is_secret(k).then_some(k.as_str()),
        Target::ZimbraPool | Target::Mount(_) => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn changes_of_remedy(
    policies: &PolicySet,
    rule: &Rule,
    remedy: &Remedy,
    f: &Finding,
    facts: &Facts,
    host: &Host,
    opts: &FixOptions,
    mk: &dyn Fn(Target, Op, bool, bool) -> Change,
) -> Result<Vec<Change>, String> {
    match remedy {
        Remedy::None { reason } => Err(format!("no automatic remedy: {reason}")),
        Remedy::Set {
            ns, key, to, bound, ..
        } => {
            let policy = policies.policy_of(rule);
            let v = crate::engine::eval_in_rule(rule, policy, facts, to)
                .map_err(|m| format!("cannot compute the remedy's value: {}", missing_text(&m)))?;
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            Ok(vec![mk(target, Op::Set(v, *bound), true, true)])
        }
        Remedy::Remove { ns, key } => {
            let target =
                target_of(ns, key).ok_or_else(|| format!("`fix` cannot write `{ns}.{key}`"))?;
            Ok(vec![mk(target, Op::Remove, true, false)])
        }
        Remedy::Options { add, remove } => {
            // a `for_each` finding names its item first, then what it read
            let point = f
                .subject
                .get(usize::from(rule.for_each.is_some()))
                .ok_or("the finding names no mount point")?
                .clone();
            Ok(vec![mk(
                Target::Mount(point),
                Op::Mount {
                    add: add.clone(),
                    remove: remove.clone(),
                    plain_remount: false,
                },
                true,
                true,
            )])
        }
        Remedy::Drift => drift_changes(rule, f, host, facts, opts, mk),
    }
}

fn missing_text(m: &crate::eval::Missing) -> String {
    match m {
        crate::eval::Missing::Absent { subject, reason }
        | crate::eval::Missing::Unknown { subject, reason } => format!("{subject}: {reason}"),
        crate::eval::Missing::Error(e) => e.to_string(),
    }
}

/// A drift finding: the configured value applied now, or the running value
/// written where the configured one wins.
fn drift_changes(
    rule: &Rule,
    f: &Finding,
    host: &Host,
    facts: &Facts,
    opts: &FixOptions,
    mk: &dyn Fn(Target, Op, bool, bool) -> Change,
) -> Result<Vec<Change>, String> {
    let Check::Drift(d) = &rule.check else {
        return Err("a drift remedy on a rule without a drift check".into());
    };
    let key = f
        .subject
        .first()
        .ok_or("the finding names no setting")?
        .clone();
    let running = opts.prefer == Prefer::Running;
    let r = Resolver::from_facts(host, facts);
    let value_of = |ns: &str| -> Option<Value> {
        facts.namespaces.get(ns)?.get(&key).and_then(|e| match e {
            crate::facts::Entry::Set(s) => Some(s.value.clone()),
            _ => None,
        })
    };
    match (d.configured.as_str(), d.running.as_str()) {
        ("sysctl_boot", "sysctl") => {
            let t = Target::Sysctl(crate::facts::sysctl::canonical_key(&key));
            if running {
                let v = value_of("sysctl").ok_or("the running value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
            } else {
                let v = value_of("sysctl_boot").ok_or("the configured value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), false, true)])
            }
        }
        ("sysctl_boot", "sysctl_procps") => {
            let t = Target::Sysctl(crate::facts::sysctl::canonical_key(&key));
            let ns = if running {
                "sysctl_procps"
            } else {
                "sysctl_boot"
            };
            let v = value_of(ns).ok_or("the value to keep is not known")?;
            Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
        }
        ("mycnf_effective" | "mycnf", "mysql") => {
            let t = Target::Option(crate::facts::mysql::canonical_name(&key));
            if running {
                let v = value_of("mysql").ok_or("the running value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), true, false)])
            } else {
                let v = value_of(&d.configured).ok_or("the configured value is not known")?;
                Ok(vec![mk(t, Op::Set(v, Bound::Exact), false, true)])
            }
        }
        ("fstab", "mount") => {
            let m = r.mount(&key);
            let (Some(fs), Some(mounted)) = (m.fstab.set(), m.mounted.set()) else {
                return Err("the fstab entry or the mount is not known".into());
            };
            let conf: Vec<String> = fs.effective_options.clone();
            let run: Vec<String> = mounted.options.clone();
            if running {
                // the running flags go into the fstab entry
                let add: Vec<String> = run
                    .iter()
                    .filter(|o| mounts::is_flag(o) && !conf.contains(o))
                    .cloned()
                    .collect();
                Ok(vec![mk(
                    Target::Mount(key),
                    Op::Mount {
                        add,
                        remove: Vec::new(),
                        plain_remount: true,
                    },
                    true,
                    false,
                )])
            } else {
                let add: Vec<String> = conf.iter().filter(|o| !run.contains(o)).cloned().collect();
                Ok(vec![mk(
                    Target::Mount(key),
                    Op::Mount {
                        add,
                        remove: Vec::new(),
                        plain_remount: true,
                    },
                    false,
                    true,
                )])
            }
        }
        (c, rn) => Err(format!(
            "`fix` has no drift remedy for `{c}` against `{rn}`"
        )),
    }
}

/// A target's value on a host, in words (`net.ipv4.tcp_tw_recycle = 0`,
/// `/ fstab defaults,noatime, mounted rw,noatime`).
fn describe(facts: &Facts, host: &Host, t: &Target) -> String {
    if let Some(name) = secret_target(t) {
        return format!("{name} = {}", crate::secret::REDACTED);
    }
    let r = Resolver::from_facts(host, facts);
    let raw = |l: &crate::resolve::Lookup<crate::resolve::Assignment>| match l {
        crate::resolve::Lookup::Set(a) => a.raw.clone(),
        crate::resolve::Lookup::Absent { .. } => "not set".into(),
        crate::resolve::Lookup::Unknown { .. } => "unknown".into(),
    };
    let ns_raw = |ns: &str, k: &str| -> String {
        match facts.namespaces.get(ns).and_then(|n| n.get(k)) {
            Some(crate::facts::Entry::Set(s)) => s.raw.clone(),
            Some(_) => "unknown".into(),
            None => "not set".into(),
        }
    };
    match t {
        Target::Sysctl(k) => {
            let s = r.sysctl(k);
            let (boot, run) = (raw(&s.boot), raw(&s.running));
            if boot == run {
                format!("{k} = {boot}")
            } else {
                format!("{k} = {boot} (running {run})")
            }
        }
        Target::Option(n) => {
            let o = r.option(n);
            let (file, run) = (raw(&o.effective), raw(&o.running));
            if run == "not set" || file == run {
                format!("{n} = {file}")
            } else {
                format!("{n} = {file} (running {run})")
            }
        }
        Target::ZimbraPool => format!(
            "innodb_buffer_pool_size = {}",
            ns_raw("zimbra_mycnf", "innodb_buffer_pool_size")
        ),
        Target::Localconfig(k) => format!("{k} = {}", ns_raw("localconfig", k)),
        Target::Mount(p) => {
            let m = r.mount(p);
            let fstab = m
                .fstab
                .set()
                .map(|f| f.options.clone())
                .unwrap_or_else(|| "no fstab entry".into());
            let mounted = m
                .mounted
                .set()
                .map(|x| x.options.join(","))
                .unwrap_or_else(|| "not mounted".into());
            format!(
                "{p} fstab {}, mounted {}",
                crate::secret::redact_mount_options(&fstab),
                crate::secret::redact_mount_options(&mounted)
            )
        }
    }
}

/// A number written in whole units of `unit` bytes, rounded the way the
/// bound allows.
fn round_to(v: f64, unit: f64, bound: Bound) -> f64 {
    let q = v / unit;
    let q = match bound {
        Bound::AtLeast => (q - 1e-9).ceil(),
        Bound::AtMost => (q + 1e-9).floor(),
        Bound::Exact => q.round(),
    };
    q * unit
}

/// A value as a plain word for a file or a command (numbers without a
/// fraction, booleans as written by the value).
fn plain(v: &Value) -> String {
    match v {
        Value::Number(n) | Value::Size(n) => crate::value::format_number(n.round()),
        other => other.to_plain(),
    }
}
