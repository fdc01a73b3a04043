//! One write tuned makes after boot ([`Write`]): which file tuned's spelling
//! of a key names, by the installed tuned's version ([`KeyFate`]), and what
//! a `>`/`<` value does against the value at that time ([`resolve`]). Pure:
//! must not read the host or know about profiles.

use crate::facts::{Entry, Setting};
use crate::parse::sysctl::{is_glob, resolve_proc_path, swap_dot_slash, typed};
use crate::parse::truncate;

/// One write tuned makes after boot, in order.
#[derive(Debug, Clone)]
pub struct Write {
    /// The dotted sysctl key.
    pub key: String,
    /// The value written (or why it cannot be known).
    pub entry: Entry,
    /// A profile value's `>`/`<` prefix: tuned writes it only if it is
    /// larger/smaller than the value at that time (see [`resolve`]).
    pub modifier: Option<char>,
    /// Nothing changes when the value at that time is already this (a line
    /// tuned re-applies whose key depends on its version: where systemd's
    /// value from the same line still stands, either way it stays).
    pub keep_if: Option<String>,
}

/// The most characters of a key, a unit's name or a value of a profile
/// that a message quotes, and four times that of a list (of profile names,
/// of profile directories): the rest is cut with `…` by
/// [`truncate`], as sysctl.d's messages cut what they quote, so a key of a
/// megabyte makes no message a megabyte.
pub(super) const QUOTE: usize = 120;

/// Keys tuned refuses to write (`DEPRECATED_SYSCTL_OPTIONS`, by basename).
const DEPRECATED: [&str; 2] = ["base_reachable_time", "retrans_time"];

/// What tuned's `_write_sysctl` does with a key as written.
pub(super) enum KeyFate {
    /// It writes the file `sysctl -a` names by this dotted key.
    Key(String),
    /// It writes nothing (a path that does not exist, or refused).
    Skip(&'static str),
    /// It depends on the installed tuned's version, which is not known: the
    /// reason, and the keys it may write (up to 2.20, later).
    Unknown(String, Vec<String>),
}

/// tuned's `_get_sysctl_path`. Up to 2.20 it turns every `.` into `/`, so a
/// key in slash form (`net/core/somaxconn`) reaches its file and an
/// interface name with a dot written `eth0/100` does not; later releases
/// swap `.` and `/` (as sysctl does), so the slash form names no file.
pub(super) fn tuned_key(key: &str, version: Option<(u32, u32)>) -> KeyFate {
    if key.starts_with('-') {
        return KeyFate::Skip("tuned has no `-` prefix: it writes to a path that does not exist");
    }
    if is_glob(key) {
        return KeyFate::Skip("tuned expands no globs: it writes to a path that does not exist");
    }
    // up to 2.20: the path is `/proc/sys/` + the key with every `.` made
    // `/`, resolved by the kernel (repeated and leading separators work, a
    // trailing one fails, `/proc/sys/` is not stripped)
    let old = resolve_proc_path(&key.replace('.', "/"));
    // later: `.` and `/` swap; a key whose first separator is `/` then
    // names a file with dots in its first component, which no kernel has
    let new = key
        .bytes()
        .find(|b| *b == b'.' || *b == b'/')
        .is_none_or(|b| b == b'.')
        .then(|| resolve_proc_path(&swap_dot_slash(key)))
        .flatten();
    let fate = match version {
        Some(v) if v <= (2, 20) => old,
        Some(_) => new,
        None if old == new => new,
        None => {
            return KeyFate::Unknown(
                format!(
                    "tuned up to 2.20 writes `{}` to /proc/sys/{}, later releases to /proc/sys/{} (they swap `.` and `/`); the installed version is not known (its tuned/version.py is not in the snapshot)",
                    truncate(key, QUOTE),
                    truncate(&key.replace('.', "/"), QUOTE),
                    truncate(&swap_dot_slash(key), QUOTE)
                ),
                old.into_iter().chain(new).collect(),
            )
        }
    };
    let Some(k) = fate else {
        return KeyFate::Skip(
            "the path tuned derives from this spelling does not exist (up to 2.20 every `.` becomes `/`; later releases swap `.` and `/`)",
        );
    };
    if DEPRECATED.iter().any(|d| k.rsplit('.').next() == Some(d)) {
        return KeyFate::Skip("tuned refuses to set deprecated sysctl options");
    }
    KeyFate::Key(k)
}

/// tuned's `_process_assignment_modifiers` for a `>`/`<` value, against the
/// value at that time (`current`: the boot model so far). `None`: tuned
/// writes nothing (the current value stays). With no current value (no file
/// sets one before tuned, so it is the kernel's default) the result is
/// `unknown`.
pub fn resolve(w: Write, current: Option<&Setting>) -> Option<Entry> {
    let Some(op) = w.modifier else {
        return Some(w.entry);
    };
    let Entry::Set(mut s) = w.entry else {
        return Some(w.entry);
    };
    let val = s.raw[op.len_utf8()..].to_string();
    let word = if op == '>' { "larger" } else { "smaller" };
    let Some(cur) = current else {
        return Some(Entry::Unreadable {
            reason: format!(
                "tuned writes {val} only if it is {word} than the value at that time; no file sets one before tuned, so that is the kernel's default, which the files do not say"
            ),
            evidence: s.evidence,
        });
    };
    match (py_int(&val), py_int(&cur.raw)) {
        (Some(a), Some(b)) => {
            let wins = if op == '>' { a > b } else { a < b };
            if !wins {
                return None;
            }
            s.value = typed(&val);
            s.raw = val;
            s.note = Some(format!(
                "{} (`{op}`: {word} than {} from {})",
                s.note.as_deref().unwrap_or("set by tuned"),
                cur.raw,
                cur.evidence
                    .first()
                    .map(|e| e.to_string())
                    .unwrap_or_default()
            ));
            Some(Entry::Set(s))
        }
        // tuned: "cannot compare ...", it writes the value with its prefix
        _ => Some(Entry::Set(s)),
    }
}

/// Python's `int()` of a string: surrounding whitespace, a sign, digits
/// (single `_` between them).
fn py_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}
