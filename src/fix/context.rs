//! The planning context: the copy of the host being patched, the lines of
//! each file as edited so far, and how a value is checked and commented
//! before it is written. Must not decide what to change.

use std::collections::BTreeMap;

use crate::facts::Facts;
use crate::host::Host;
use crate::printable::printable;

use super::diff;
use super::model::Step;
use super::tree::{EditKind, Tree};

/// What the plan-in-progress holds while writers run.
pub(super) struct Ctx<'a> {
    pub(super) tree: &'a mut Tree,
    pub(super) host: &'a Host,
    pub(super) facts: &'a Facts,
    pub(super) steps: &'a mut Vec<Step>,
    pub(super) notes: &'a mut Vec<String>,
    /// Pending line edits of this round, per file.
    pub(super) pending: BTreeMap<String, Lines>,
    /// The patch's edits so far: (host path, key) -> the findings.
    pub(super) edits: &'a mut BTreeMap<(String, String), Vec<String>>,
    /// The key and findings of the change being written.
    pub(super) cur: (String, Vec<String>),
}

/// A file's lines while a round edits it: each slot is one original line
/// without its ending (`None`: deleted; a slot may hold inserted lines
/// after its own, joined by `\n`), and each line's own ending (`\n`,
/// `\r\n`, or none for a last line without one), so that a CRLF file keeps
/// its CRs and a stray CR stays part of its line.
#[derive(Debug, Clone)]
pub(super) struct Lines {
    pub(super) kind: EditKind,
    pub(super) slots: Vec<Option<String>>,
    pub(super) eols: Vec<&'static str>,
    /// The ending of lines the plan adds: the file's first line's.
    pub(super) eol: &'static str,
    pub(super) existed: bool,
}

impl Lines {
    pub(super) fn of(text: Option<&str>, kind: EditKind) -> Lines {
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
    pub(super) fn text(&self) -> Option<String> {
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
    pub(super) fn real(&self, path: &str) -> String {
        self.host.resolve(path).unwrap_or_else(|_| path.to_string())
    }

    /// Write a whole simulated file (a `proc/sys` value). Pending like a
    /// line edit, so a change refused later in the round is undone whole.
    pub(super) fn write_sim(&mut self, path: &str, text: &str) -> Result<(), String> {
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
    pub(super) fn current(&mut self, path: &str) -> Result<Option<String>, String> {
        let path = self.real(path);
        if let Some(l) = self.pending.get(&path) {
            return Ok(l.text());
        }
        self.tree
            .read(&path)
            .map_err(|e| format!("cannot read `{path}` in the copy: {e}"))
    }

    pub(super) fn lines(&mut self, path: &str, kind: EditKind) -> Result<&mut Lines, String> {
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
    pub(super) fn line(&mut self, path: &str, n: usize, kind: EditKind) -> Result<String, String> {
        let l = self.lines(path, kind)?;
        l.slots
            .get(n.wrapping_sub(1))
            .cloned()
            .flatten()
            .ok_or_else(|| format!("`{path}` has no line {n}"))
    }

    /// A configuration edit of `path` for the change being written: listed
    /// against its file and key, once.
    pub(super) fn record(&mut self, path: &str, kind: EditKind) {
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

    pub(super) fn replace(
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

    pub(super) fn delete(&mut self, path: &str, n: usize, kind: EditKind) -> Result<(), String> {
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
    pub(super) fn append(&mut self, path: &str, text: &str, kind: EditKind) -> Result<(), String> {
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
    pub(super) fn patchable(&self) -> Result<(), String> {
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
    pub(super) fn commit(&mut self) -> Result<(), String> {
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
    pub(super) fn step(
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

    pub(super) fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }
}

/// A character in words, for a reason (`a newline`, `U+001B`).
pub(super) fn char_name(c: char) -> String {
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
pub(super) fn check_value(what: &str, v: &str) -> Result<(), String> {
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
pub(super) fn comment(text: &str) -> String {
    printable(text, false).into_owned()
}
