//! The patch text: unified diffs that `patch -p1` and `git apply` accept
//! without fuzz and that never quote a secret, and the strict applier the
//! proof runs on the printed text. Pure: text in, text out, no I/O; what is
//! secret is asked of `crate::secret` (per line, by the file's kind, the
//! way a snapshot redacts it), never decided here.
//!
//! Context. `diff -u` gives each hunk 3 unchanged lines before and after.
//! A line that holds a secret (or the placeholder a redacted snapshot
//! holds instead) is never printed: context stops at it, and two changes
//! with a secret line between them get separate hunks. What the tools then
//! need, measured with GNU patch 2.7 and git 2.47 (tests/fix_secrets.rs
//! runs both on every case):
//! - at least one context line after a change, unless the change ends the
//!   file: `git apply` makes a hunk without trailing context match only at
//!   the end of the file, and GNU patch does the same when a hunk has fewer
//!   lines after than before (its `locate_hunk`: a negative suffix fuzz
//!   "can only match end of file");
//! - no more context before than after (unless the hunk ends the file), or
//!   GNU patch applies it only "with fuzz"; fewer before than after is
//!   fine for both tools, also none at all.
//!
//! A change that cannot meet these without quoting a secret (a secret line
//! right after it, or a changed line that itself holds one) is refused
//! with the line numbers and what to change by hand; the caller lists it
//! as unfixable. A line holding a control character (other than tab, or
//! CRs ending it) or a bidirectional override is treated the same way: a
//! patch must show lines exactly, so such a line is never printed.
//!
//! Lines are split at `\n` only (a CR is part of its line), the same way
//! for the diff, the secret check and the applier. File names in the
//! `---`/`+++` headers are quoted as git quotes them when they hold a blank,
//! a quote, a backslash, a control character or a non-ASCII byte
//! ([`header_name`]); [`parse`] reads a header name the way GNU patch
//! does (an unquoted name ends at a tab or, without one, at the first
//! blank), so the proof edits the file GNU patch would.

use crate::secret;

/// Lines of context `diff -u` uses.
const CONTEXT: usize = 3;

/// Why a change cannot be written as a patch without quoting a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct SecretInPatch {
    /// The file (host path).
    pub path: String,
    /// The line (1-based, in the file before the plan) holding the secret.
    pub line: usize,
    /// Whether that line is one the change rewrites or deletes (else it is
    /// the line right after the change, which a patch needs as context).
    pub changed: bool,
    /// The change, said so an admin can make it by hand (no secret in it).
    pub by_hand: String,
    /// The line holds a control character, not a secret.
    pub control: bool,
}

impl SecretInPatch {
    /// The message: which line, why the patch cannot hold it, and the
    /// change to make by hand.
    fn message(&self) -> String {
        if self.control {
            let (what, why) = if self.changed {
                ("the change rewrites it", "the patch would print it")
            } else {
                (
                    "comes right after the change",
                    "the patch would print it as context",
                )
            };
            return format!(
                "line {} of `{}` holds a control character and {what}, so {why} (a patch \
                 cannot escape it); make the change by hand: {}",
                self.line,
                crate::printable::quoted_name(&self.path),
                self.by_hand
            );
        }
        if self.changed {
            format!(
                "line {} of `{}` holds a secret and the change rewrites it, so the patch would \
                 print the secret; make the change by hand: {}",
                self.line, self.path, self.by_hand
            )
        } else {
            format!(
                "line {} of `{}` holds a secret and comes right after the change, so the patch \
                 would print it as context (patch and git apply need one unchanged line after a \
                 change); make the change by hand: {}",
                self.line, self.path, self.by_hand
            )
        }
    }
}

/// Whether each line of `text` (split at `\n`) holds a secret, as
/// [`secret::redact_text`] judges a file at `path`; a line already holding
/// the placeholder counts too (a patch made on a redacted snapshot must
/// not quote `<redacted>` where the host has the real value).
pub fn secret_lines(path: &str, text: &str) -> Vec<bool> {
    let redacted = secret::redact_text(secret::file_kind(path), text);
    if redacted.len() == text.len() && redacted == text && !text.contains(secret::REDACTED) {
        return vec![false; text.split('\n').count()];
    }
    let mut theirs = redacted.split('\n');
    text.split('\n')
        .map(|l| match theirs.next() {
            Some(r) => r != l || l.contains(secret::REDACTED),
            // the redaction changed the line count: trust no line
            None => true,
        })
        .collect()
}

/// Whether a line (split at `\n`) holds a character a patch would print
/// raw that `printable` escapes: a control character other than
/// tab, or a bidirectional override. CRs at its end are its line ending
/// (they only return the cursor before the newline) and do not count.
pub fn control_line(line: &str) -> bool {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let body = body.trim_end_matches('\r');
    body.chars()
        .any(|c| crate::printable::unsafe_char(c, false))
}

/// A file name for a `---`/`+++` header, as git writes it: as it is when
/// it is plain ASCII without blanks, quotes or backslashes, else in double
/// quotes with C escapes (`\t`, `\n`, `\"`, `\\`, octal for other bytes),
/// which GNU patch and `git apply` both read back.
pub fn header_name(name: &str) -> String {
    if name
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
    {
        return name.to_string();
    }
    let mut o = String::with_capacity(name.len() + 8);
    o.push('"');
    for b in name.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            0x07 => o.push_str("\\a"),
            0x08 => o.push_str("\\b"),
            b'\t' => o.push_str("\\t"),
            b'\n' => o.push_str("\\n"),
            0x0b => o.push_str("\\v"),
            0x0c => o.push_str("\\f"),
            b'\r' => o.push_str("\\r"),
            0x20..=0x7e => o.push(b as char),
            _ => o.push_str(&format!("\\{b:03o}")),
        }
    }
    o.push('"');
    o
}

/// A header name as GNU patch 2.7 reads it (`pch.c`, `fetchname`): a
/// double-quoted name with C escapes, else the text up to a tab or, when
/// the line has none, up to the first blank.
fn read_header_name(s: &str) -> Result<String, String> {
    let Some(q) = s.strip_prefix('"') else {
        let end = match s.find('\t') {
            Some(t) => t,
            None => s.find(char::is_whitespace).unwrap_or(s.len()),
        };
        return Ok(s[..end].to_string());
    };
    let b = q.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    loop {
        match b.get(i) {
            None => return Err("a quoted name without its closing quote".into()),
            Some(b'"') => break,
            Some(b'\\') => {
                let c = *b.get(i + 1).ok_or("a quoted name ends in a backslash")?;
                i += 2;
                out.push(match c {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'v' => 0x0b,
                    b'\\' => b'\\',
                    b'"' => b'"',
                    b'0'..=b'7' => {
                        let mut v = u32::from(c - b'0');
                        for _ in 0..2 {
                            match b.get(i) {
                                Some(d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        u8::try_from(v).map_err(|_| "an octal escape above \\377")?
                    }
                    _ => return Err("an unknown escape in a quoted name".into()),
                });
            }
            Some(&c) => {
                out.push(c);
                i += 1;
            }
        }
    }
    let rest = &q[i + 1..];
    if !(rest.is_empty() || rest.starts_with('\t')) {
        return Err("text after a quoted name".into());
    }
    String::from_utf8(out).map_err(|_| "a quoted name that is not UTF-8".to_string())
}

/// A changed region: old lines `o0..o1`, new lines `n0..n1` (0-based).
#[derive(Debug, Clone, Copy)]
struct Region {
    o0: usize,
    o1: usize,
    n0: usize,
    n1: usize,
}

/// One file's unified diff (`a`, `b`: the header names), with context cut
/// at secret lines as the module doc says; `path` is the host path that
/// decides which lines are secret.
pub fn unified(
    path: &str,
    old: &str,
    new: &str,
    a: &str,
    b: &str,
) -> Result<String, SecretInPatch> {
    if old == new {
        return Ok(String::new());
    }
    let ol: Vec<&str> = old.split_inclusive('\n').collect();
    let nl: Vec<&str> = new.split_inclusive('\n').collect();
    let hidden = |text: &str, lines: &[&str]| -> (Vec<bool>, Vec<bool>) {
        let mut secret = secret_lines(path, text);
        let control: Vec<bool> = lines.iter().map(|l| control_line(l)).collect();
        for (s, c) in secret.iter_mut().zip(&control) {
            *s |= *c;
        }
        (secret, control)
    };
    let (old_secret, old_control) = hidden(old, &ol);
    let (new_secret, new_control) = hidden(new, &nl);
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &ol, &nl);
    let mut regions: Vec<Region> = Vec::new();
    for op in &ops {
        if op.tag() == similar::DiffTag::Equal {
            continue;
        }
        let (o, n) = (op.old_range(), op.new_range());
        match regions.last_mut() {
            Some(r) if r.o1 == o.start && r.n1 == n.start => {
                r.o1 = o.end;
                r.n1 = n.end;
            }
            _ => regions.push(Region {
                o0: o.start,
                o1: o.end,
                n0: n.start,
                n1: n.end,
            }),
        }
    }
    // hunks: regions whose gap is short and free of secrets share a hunk
    let mut hunks: Vec<Vec<Region>> = Vec::new();
    for r in regions {
        if let Some(h) = hunks.last_mut() {
            let prev = h[h.len() - 1];
            let gap = prev.o1..r.o0;
            if gap.len() <= 2 * CONTEXT && !gap.clone().any(|i| old_secret[i]) {
                h.push(r);
                continue;
            }
        }
        hunks.push(vec![r]);
    }
    let mut out = format!("--- {a}\n+++ {b}\n");
    for h in &hunks {
        let (first, last) = (h[0], h[h.len() - 1]);
        let by_hand = || by_hand(&ol, &nl, &old_secret, &new_secret, h);
        for r in h {
            if let Some(i) = (r.o0..r.o1).find(|&i| old_secret[i]) {
                return Err(SecretInPatch {
                    path: path.into(),
                    line: i + 1,
                    changed: true,
                    by_hand: by_hand(),
                    control: old_control[i],
                });
            }
            if let Some(i) = (r.n0..r.n1).find(|&i| new_secret[i]) {
                return Err(SecretInPatch {
                    path: path.into(),
                    line: r.o0 + 1 + (i - r.n0).min(r.o1 - r.o0),
                    changed: true,
                    by_hand: by_hand(),
                    control: new_control[i],
                });
            }
        }
        let lead_avail = (1..=CONTEXT)
            .take_while(|k| first.o0 >= *k && !old_secret[first.o0 - k])
            .count();
        let trail = (0..CONTEXT)
            .take_while(|k| last.o1 + k < ol.len() && !old_secret[last.o1 + k])
            .count();
        let ends_file = last.o1 + trail == ol.len();
        if trail == 0 && !ends_file {
            return Err(SecretInPatch {
                path: path.into(),
                line: last.o1 + 1,
                changed: false,
                by_hand: by_hand(),
                control: old_control[last.o1],
            });
        }
        let lead = if ends_file {
            lead_avail
        } else {
            lead_avail.min(trail)
        };
        let (os, oe) = (first.o0 - lead, last.o1 + trail);
        let (ns, ne) = (first.n0 - lead, last.n1 + trail);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(os, oe - os),
            range(ns, ne - ns)
        ));
        let mut emit = |sign: char, line: &str| {
            out.push(sign);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        };
        let mut at = os;
        for r in h {
            for l in &ol[at..r.o0] {
                emit(' ', l);
            }
            for l in &ol[r.o0..r.o1] {
                emit('-', l);
            }
            for l in &nl[r.n0..r.n1] {
                emit('+', l);
            }
            at = r.o1;
        }
        for l in &ol[at..oe] {
            emit(' ', l);
        }
    }
    Ok(out)
}

/// `START,COUNT` as `diff -u` writes it: a count of 1 is left out, an empty
/// range starts at the line before it.
fn range(start0: usize, len: usize) -> String {
    match len {
        0 => format!("{start0},0"),
        1 => format!("{}", start0 + 1),
        n => format!("{},{n}", start0 + 1),
    }
}

/// The hunk's edits in words, secret lines named by number only.
fn by_hand(
    ol: &[&str],
    nl: &[&str],
    old_secret: &[bool],
    new_secret: &[bool],
    h: &[Region],
) -> String {
    let q = |l: &str, secret: bool| {
        if secret {
            "(a line holding a secret)".to_string()
        } else {
            format!("`{}`", l.trim_end_matches('\n').trim_end_matches('\r'))
        }
    };
    let mut parts = Vec::new();
    for r in h {
        let olds: Vec<String> = (r.o0..r.o1).map(|i| q(ol[i], old_secret[i])).collect();
        let news: Vec<String> = (r.n0..r.n1).map(|i| q(nl[i], new_secret[i])).collect();
        parts.push(match (olds.is_empty(), news.is_empty()) {
            (true, _) => format!("after line {} add {}", r.o0, news.join(", ")),
            (false, true) => format!("delete line {} {}", r.o0 + 1, olds.join(", ")),
            (false, false) => format!(
                "replace line {} {} with {}",
                r.o0 + 1,
                olds.join(", "),
                news.join(", ")
            ),
        });
    }
    parts.join("; ")
}

/// Why a patch text does not apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ApplyError(pub String);

/// One file of a patch text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Host path (`/etc/...`) of the file the patch writes.
    pub path: String,
    /// Whether it is a new file (`--- /dev/null`).
    pub new_file: bool,
    hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Hunk {
    old_start: usize,
    old_len: usize,
    new_len: usize,
    /// (sign, line with its `\n` unless the file ends without one)
    lines: Vec<(char, String)>,
    /// Line number of the `@@` line in the patch text.
    at: usize,
}

fn header_range(s: &str) -> Option<(usize, usize)> {
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

/// Parse a unified diff as [`unified`] writes it (`-p1` paths, one
/// `---`/`+++` pair per file). Strict: counts must match the hunk body.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ApplyError> {
    let err = |n: usize, what: &str| ApplyError(format!("patch line {n}: {what}"));
    let lines: Vec<&str> = patch.split_inclusive('\n').collect();
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let n = i + 1;
        let l = lines[i].trim_end_matches('\n');
        if let Some(a) = l.strip_prefix("--- ") {
            let b = lines
                .get(i + 1)
                .and_then(|b| b.trim_end_matches('\n').strip_prefix("+++ "))
                .ok_or_else(|| err(n, "`---` without `+++`"))?;
            let a = read_header_name(a).map_err(|e| err(n, &e))?;
            let b = read_header_name(b).map_err(|e| err(n + 1, &e))?;
            let path = b
                .strip_prefix("b/")
                .ok_or_else(|| err(n + 1, "the new name does not start with `b/`"))?;
            if a != "/dev/null" && a.strip_prefix("a/") != Some(path) {
                return Err(err(n, "the old and new names differ"));
            }
            if path
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
            {
                return Err(err(n + 1, "the path is not a plain relative path"));
            }
            files.push(FilePatch {
                path: format!("/{path}"),
                new_file: a == "/dev/null",
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if let Some(h) = l.strip_prefix("@@ -") {
            let file = files
                .last_mut()
                .ok_or_else(|| err(n, "a hunk before any file header"))?;
            let (o, rest) = h
                .split_once(" +")
                .ok_or_else(|| err(n, "bad hunk header"))?;
            let nw = rest
                .strip_suffix(" @@")
                .ok_or_else(|| err(n, "bad hunk header"))?;
            let (old_start, old_len) = header_range(o).ok_or_else(|| err(n, "bad old range"))?;
            let (_, new_len) = header_range(nw).ok_or_else(|| err(n, "bad new range"))?;
            let mut hunk = Hunk {
                old_start,
                old_len,
                new_len,
                lines: Vec::new(),
                at: n,
            };
            i += 1;
            let (mut seen_old, mut seen_new) = (0, 0);
            while seen_old < old_len || seen_new < new_len {
                let Some(body) = lines.get(i) else {
                    return Err(err(n, "the hunk ends before its counts are reached"));
                };
                let sign = body.chars().next().unwrap_or('?');
                match sign {
                    ' ' => {
                        seen_old += 1;
                        seen_new += 1;
                    }
                    '-' => seen_old += 1,
                    '+' => seen_new += 1,
                    _ => return Err(err(i + 1, "a hunk line must start with ` `, `-` or `+`")),
                }
                let mut text = body[1..].to_string();
                if lines
                    .get(i + 1)
                    .is_some_and(|x| x.starts_with("\\ No newline at end of file"))
                {
                    text = text.trim_end_matches('\n').to_string();
                    i += 1;
                }
                hunk.lines.push((sign, text));
                i += 1;
            }
            if seen_old != old_len || seen_new != new_len {
                return Err(err(n, "the hunk's lines do not match its counts"));
            }
            file.hunks.push(hunk);
            continue;
        }
        return Err(err(n, "neither a file header nor a hunk"));
    }
    Ok(files)
}

/// Apply one file's hunks to `old` (`None`: the file does not exist),
/// strictly: each hunk at the line its header names, every context and
/// removed line exactly as written, no offset and no fuzz.
pub fn apply_file(fp: &FilePatch, old: Option<&str>) -> Result<String, ApplyError> {
    let e = |h: &Hunk, what: String| {
        ApplyError(format!(
            "`{}`: hunk at patch line {} does not apply: {what}",
            fp.path, h.at
        ))
    };
    let old = match (old, fp.new_file) {
        (Some(_), true) => {
            return Err(ApplyError(format!(
                "`{}` already exists but the patch creates it",
                fp.path
            )))
        }
        (None, false) => return Err(ApplyError(format!("`{}` does not exist", fp.path))),
        (o, _) => o.unwrap_or(""),
    };
    let ol: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::with_capacity(old.len() + 256);
    let mut at = 0usize; // next old line (0-based) not yet copied
    for h in &fp.hunks {
        let start = if h.old_len == 0 {
            h.old_start
        } else {
            h.old_start.saturating_sub(1)
        };
        if start < at || start > ol.len() {
            return Err(e(
                h,
                format!("line {} is out of order or past the end", h.old_start),
            ));
        }
        for l in &ol[at..start] {
            out.push_str(l);
        }
        let mut pos = start;
        for (sign, text) in &h.lines {
            match sign {
                ' ' | '-' => {
                    let Some(have) = ol.get(pos) else {
                        return Err(e(h, format!("the file ends before line {}", pos + 1)));
                    };
                    if have != text {
                        return Err(e(h, format!("line {} differs", pos + 1)));
                    }
                    if *sign == ' ' {
                        out.push_str(have);
                    }
                    pos += 1;
                }
                _ => out.push_str(text),
            }
        }
        at = pos;
        let _ = h.new_len;
    }
    for l in &ol[at..] {
        out.push_str(l);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CNF: &str = "/etc/mysql/conf.d/x.cnf";

    fn roundtrip(path: &str, old: &str, new: &str) -> String {
        let p = unified(path, old, new, "a/x", "b/x").unwrap();
        let files = parse(&p).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(apply_file(&files[0], Some(old)).unwrap(), new, "{p}");
        p
    }

    #[test]
    fn without_secrets_it_is_diff_u() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let p = roundtrip(CNF, old, new);
        assert_eq!(
            p,
            "--- a/x\n+++ b/x\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        let sim = similar::TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(3)
            .header("a/x", "b/x")
            .to_string();
        assert_eq!(p, sim);
    }

    #[test]
    fn context_stops_at_a_secret_line_and_is_never_longer_before_than_after() {
        // a secret before: one line of context before, three after
        let old = "[client]\npassword = Hunter2\n[mysqld]\nmax_connections = 500\na = 1\nb = 2\nc = 3\nd = 4\n";
        let new = old.replace("500", "200");
        let p = roundtrip(CNF, old, &new);
        assert!(!p.contains("Hunter2"), "{p}");
        assert!(
            p.contains("@@ -3,5 +3,5 @@\n [mysqld]\n-max_connections = 500\n+max_connections = 200\n a = 1\n b = 2\n c = 3\n"),
            "{p}"
        );
        // a secret two lines after: one line after, so one before (GNU patch
        // would need fuzz for more before than after)
        let old = "x = 1\ny = 1\nz = 1\nmax_connections = 500\na = 1\npassword = Hunter2\nb = 1\n";
        let new = old.replace("500", "200");
        let p = roundtrip(CNF, old, &new);
        assert!(!p.contains("Hunter2"), "{p}");
        assert!(
            p.contains(
                "@@ -3,3 +3,3 @@\n z = 1\n-max_connections = 500\n+max_connections = 200\n a = 1\n"
            ),
            "{p}"
        );
    }

    #[test]
    fn a_secret_right_after_a_change_is_refused_with_the_lines_to_change() {
        let old = "[mysqld]\nmax_connections = 500\npassword = Hunter2\nx = 1\n";
        let new = old.replace("500", "200");
        let e = unified(CNF, old, &new, "a/x", "b/x").unwrap_err();
        assert_eq!((e.line, e.changed), (3, false));
        let m = e.to_string();
        assert!(!m.contains("Hunter2"), "{m}");
        assert!(
            m.contains("replace line 2 `max_connections = 500` with `max_connections = 200`"),
            "{m}"
        );
    }

    #[test]
    fn a_secret_line_that_changes_is_refused() {
        let old = "[mysqld]\npassword = Hunter2\n";
        let new = "[mysqld]\n";
        let e = unified(CNF, old, new, "a/x", "b/x").unwrap_err();
        assert_eq!((e.line, e.changed), (2, true));
        assert!(!e.to_string().contains("Hunter2"));
        let e = unified(CNF, "[mysqld]\n", "[mysqld]\npassword = X1\n", "a/x", "b/x").unwrap_err();
        assert!(e.changed && !e.to_string().contains("X1"), "{e}");
    }

    #[test]
    fn a_change_at_the_end_of_the_file_needs_no_context_after_it() {
        let old = "[mysqld]\npassword = Hunter2\na = 1\n";
        let new = "[mysqld]\npassword = Hunter2\na = 2\n";
        let p = roundtrip(CNF, old, new);
        assert!(!p.contains("Hunter2"), "{p}");
        assert!(p.contains("@@ -3 +3 @@\n-a = 1\n+a = 2\n"), "{p}");
    }

    #[test]
    fn two_changes_around_a_secret_get_two_hunks() {
        let old = "a = 1\nb = 1\npassword = S3\nc = 1\nd = 1\n";
        let new = "a = 2\nb = 1\npassword = S3\nc = 2\nd = 1\n";
        let p = roundtrip(CNF, old, new);
        assert!(!p.contains("S3"), "{p}");
        assert_eq!(p.matches("@@ -").count(), 2, "{p}");
    }

    #[test]
    fn a_redacted_snapshot_line_is_not_context_either() {
        let old = "[client]\npassword = <redacted>\n[mysqld]\nx = 1\ny = 1\n";
        let new = old.replace("x = 1", "x = 2");
        let p = roundtrip(CNF, old, &new);
        assert!(!p.contains("redacted"), "{p}");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let p = roundtrip("/etc/sysctl.conf", "a = 1\nb = 1", "a = 1\nb = 2");
        assert!(p.ends_with("+b = 2\n\\ No newline at end of file\n"), "{p}");
        roundtrip("/etc/sysctl.d/x.conf", "", "a = 1\n");
    }

    #[test]
    fn a_corrupted_patch_does_not_apply() {
        let old = "1\n2\n3\n4\n";
        let p = unified(CNF, old, "1\n2\nthree\n4\n", "a/x", "b/x").unwrap();
        let bad = p.replace(" 2\n", " 22\n");
        let f = parse(&bad).unwrap();
        assert!(apply_file(&f[0], Some(old)).is_err());
        assert!(parse(&p.replace("@@ -1,4", "@@ -1,9")).is_err());
    }
}
