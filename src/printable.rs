//! Host, snapshot and policy text made safe for a human reader: control
//! characters and bidirectional overrides shown as visible escapes, and a
//! file name quoted when it holds anything unusual. A leaf (imports nothing
//! of the crate), so every writer that prints host data to a person (the
//! renderers, `fix`'s summary, runtime script and file comments) uses the
//! same escaping; it decides nothing about secrets.

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

/// Text from hosts, snapshots and policies made safe for a terminal or a
/// rendered page: C0 and C1 control characters (ESC, OSC, BEL, CR, DEL, ...)
/// and the Unicode bidirectional overrides become visible escapes (`\x1b`,
/// `\u{202e}`), so a host name or file name can neither drive the terminal
/// nor reorder what is shown. Tabs stay; newlines stay only when
/// `keep_newlines` (multi-line explanations), else they show as `\n` so one
/// value cannot split a report line. Every human format (text, markdown,
/// diff, fleet summary), JUnit XML (which cannot hold U+FFFE, U+FFFF or most
/// C0 characters) and Prometheus labels run host data through here; JSON and
/// SARIF keep values exact and rely on their own escaping.
///
/// ```
/// use driftaudit::unstable::render::printable;
/// assert_eq!(printable("web\x1b]0;pwned\x07", false), "web\\x1b]0;pwned\\x07");
/// assert_eq!(printable("a\nb", false), "a\\nb");
/// assert_eq!(printable("a\nb", true), "a\nb");
/// assert_eq!(printable("plain", false), "plain");
/// ```
pub fn printable(s: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| unsafe_char(c, keep_newlines);
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
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
    match printable(s, false) {
        std::borrow::Cow::Borrowed(s) => s.to_string(),
        std::borrow::Cow::Owned(_) => {
            let inner = s.replace('\\', "\\\\").replace('"', "\\\"");
            format!("\"{}\"", printable(&inner, false))
        }
    }
}
