//! Host, snapshot and policy text made safe for a human reader: control
//! characters and bidirectional overrides shown as visible escapes, and a
//! file name quoted when it holds anything unusual. A leaf (imports nothing
//! of the crate), so every writer that prints host data to a person (the
//! renderers, `fix`'s summary, runtime script and file comments) uses the
//! same escaping; it decides nothing about secrets.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether [`printable`] escapes `c`: C0 and C1 control characters and DEL
/// except tab (and newline when `keep_newlines`), the bidirectional marks
/// and overrides, the Unicode line and paragraph separators, and the
/// noncharacters (U+FDD0..U+FDEF, every U+xFFFE/U+xFFFF). Writers
/// that cannot escape (a patch line, an option-file value) refuse text
/// holding one.
pub fn unsafe_char(c: char, keep_newlines: bool) -> bool {
    match c {
        '\t' => false,
        '\n' => !keep_newlines,
        c if c.is_control() => true, // C0, DEL and C1
        '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        '\u{2028}' | '\u{2029}' => true,
        // Unicode noncharacters (U+FFFE and U+FFFF are forbidden in XML 1.0)
        '\u{fdd0}'..='\u{fdef}' => true,
        c if (c as u32) & 0xfffe == 0xfffe => true,
        _ => false,
    }
}

/// Eight copies of byte `b` in a word.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Whether any of the eight bytes of `w` is outside printable ASCII
/// (0x20..=0x7e): a byte with its high bit set, one below 0x20, or DEL.
/// Exact for "any" (the usual SWAR tests for a byte below n and for a zero
/// byte); which byte it is, the caller finds one at a time.
fn needs_care(w: u64) -> bool {
    const HI: u64 = splat(0x80);
    let high = w & HI;
    let below_space = w.wrapping_sub(splat(0x20)) & !w & HI;
    let del = w ^ splat(0x7f);
    let del = del.wrapping_sub(splat(0x01)) & !del & HI;
    (high | below_space | del) != 0
}

/// The byte offset of the first character of `s` that [`unsafe_char`]
/// escapes, or `s.len()`. Printable ASCII is skipped eight bytes at a time;
/// any other byte is decided one character at a time by [`unsafe_char`]
/// itself, so this answers as `s.char_indices().find(unsafe_char)` does
/// (a unit test holds it to that over every character below U+0100 and the
/// Unicode ones that need care).
fn first_unsafe(s: &str, keep_newlines: bool) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while let Some(word) = bytes.get(i..i + 8) {
            let word = u64::from_ne_bytes(word.try_into().unwrap_or([0; 8]));
            if needs_care(word) {
                break;
            }
            i += 8;
        }
        // the word that needed care (or the tail), a character at a time
        let end = (i + 8).min(bytes.len());
        while i < end {
            let b = bytes[i];
            if b.is_ascii() {
                if unsafe_char(b as char, keep_newlines) {
                    return i;
                }
                i += 1;
            } else {
                // `i` is on a character boundary: only whole characters are skipped
                let Some(c) = s[i..].chars().next() else {
                    return i;
                };
                if unsafe_char(c, keep_newlines) {
                    return i;
                }
                i += c.len_utf8();
            }
        }
    }
    bytes.len()
}

/// Text from hosts, snapshots and policies made safe for a terminal or a
/// rendered page: C0 and C1 control characters (ESC, OSC, BEL, CR, DEL, ...)
/// and the Unicode bidirectional overrides become visible escapes (`\x1b`,
/// `\u{202e}`), so a host name or file name can neither drive the terminal
/// nor reorder what is shown. Tabs stay; newlines stay only when
/// `keep_newlines` (multi-line explanations), else they show as `\n` so one
/// value cannot split a report line. Every human format (text, markdown,
/// diff, fleet summary), JUnit XML (which cannot hold U+FFFE, U+FFFF or most
/// C0 characters) and Prometheus labels run host data through here; JSON and
/// SARIF keep values exact and rely on their own escaping. Text with nothing
/// to escape (nearly all of it) is borrowed as it is.
///
/// ```
/// use driftaudit::unstable::render::printable;
/// assert_eq!(printable("web\x1b]0;pwned\x07", false), "web\\x1b]0;pwned\\x07");
/// assert_eq!(printable("a\nb", false), "a\\nb");
/// assert_eq!(printable("a\nb", true), "a\nb");
/// assert_eq!(printable("plain", false), "plain");
/// ```
pub fn printable(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let at = first_unsafe(s, keep_newlines);
    if at == s.len() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..at]);
    escape_from(&mut out, &s[at..], keep_newlines);
    Cow::Owned(out)
}

/// Whether [`printable`] leaves `s` as it is (nothing in it to escape).
pub fn is_printable(s: &str, keep_newlines: bool) -> bool {
    first_unsafe(s, keep_newlines) == s.len()
}

/// [`printable`] written onto the end of `out` (no string of its own).
pub fn push_printable(out: &mut String, s: &str, keep_newlines: bool) {
    let at = first_unsafe(s, keep_newlines);
    out.push_str(&s[..at]);
    if at < s.len() {
        escape_from(out, &s[at..], keep_newlines);
    }
}

/// `s` escaped onto `out`, its safe runs copied whole.
fn escape_from(out: &mut String, mut s: &str, keep_newlines: bool) {
    loop {
        let at = first_unsafe(s, keep_newlines);
        out.push_str(&s[..at]);
        let Some(c) = s[at..].chars().next() else {
            return;
        };
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
        s = &s[at + c.len_utf8()..];
    }
}

/// A file name for a one-line human report: as it is when it holds nothing
/// unusual, else double-quoted with every control character escaped (and `"`
/// and `\` escaped inside the quotes), so a name holding a newline cannot
/// print a second, fake report line.
///
/// ```
/// use driftaudit::unstable::render::quoted_name;
/// assert_eq!(quoted_name("/etc/sysctl.conf:2"), "/etc/sysctl.conf:2");
/// assert_eq!(quoted_name("/etc/a\nFAIL b.conf"), "\"/etc/a\\nFAIL b.conf\"");
/// ```
pub fn quoted_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_quoted_name(&mut out, s);
    out
}

/// [`quoted_name`] written onto the end of `out`.
pub fn push_quoted_name(out: &mut String, s: &str) {
    if is_printable(s, false) {
        out.push_str(s);
        return;
    }
    let inner = s.replace('\\', "\\\\").replace('"', "\\\"");
    out.push('"');
    push_printable(out, &inner, false);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_of_printable_ascii_needs_no_care_and_any_other_byte_does() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut w = *b"abcdefgh";
                w[pos] = b;
                let plain = (0x20..=0x7e).contains(&b);
                assert_eq!(needs_care(u64::from_ne_bytes(w)), !plain, "{b:#x} at {pos}");
            }
        }
    }

    #[test]
    fn quoted_name_quotes_only_names_that_need_it() {
        assert_eq!(quoted_name("/etc/x.conf"), "/etc/x.conf");
        assert_eq!(
            quoted_name("/etc/\u{202e}x\"\\"),
            "\"/etc/\\u{202e}x\\\"\\\\\""
        );
        assert_eq!(quoted_name("a\tb"), "a\tb");
    }
}
