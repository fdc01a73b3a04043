//! Host path names: file names as bytes escaped to text one-to-one, and
//! lexical normalisation and joining of host paths. Pure.

use std::path::{Component, Path};

/// A file name (bytes) as a host path component: UTF-8 names as they are;
/// each byte that is not part of valid UTF-8 as `\xNN` (lowercase hex), and
/// a backslash that would read as such an escape as `\x5c`. The mapping is
/// one-to-one, so a name with invalid UTF-8 and its U+FFFD look-alike stay
/// two files, and [`Host`](super::Host) methods turn the escapes back into bytes.
pub fn escape_name(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        let valid = chunk.valid();
        let mut rest = valid;
        while let Some(i) = rest.find('\\') {
            out.push_str(&rest[..i]);
            if is_escape(&rest.as_bytes()[i..]) {
                out.push_str("\\x5c");
            } else {
                out.push('\\');
            }
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Whether `s` starts with `\xNN` (two hex digits).
pub(super) fn is_escape(s: &[u8]) -> bool {
    s.len() >= 4
        && s[0] == b'\\'
        && s[1] == b'x'
        && s[2].is_ascii_hexdigit()
        && s[3].is_ascii_hexdigit()
}

/// The bytes of a host path component: `\xNN` escapes read back.
pub fn unescape_name(name: &str) -> Vec<u8> {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if is_escape(&b[i..]) {
            let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap_or("00");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// Split a path into normal components, dropping `.` and empty parts; `..` is kept.
pub(super) fn components(path: &str) -> Vec<String> {
    Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            _ => None,
        })
        .collect()
}

/// Lexically normalise a host path: absolute, no `.`, no empty parts, `..`
/// removes the previous part and stops at `/` (as [`Reads::resolve`](super::Reads::resolve) does).
pub fn lexical(path: &str) -> String {
    // Most paths asked for are already so: `/`, then parts that are
    // neither empty, `.` nor `..`.
    if path.starts_with('/')
        && (path.len() == 1
            || path[1..]
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."))
    {
        return path.to_string();
    }
    normalised(path)
}

/// [`lexical`] part by part.
pub(super) fn normalised(path: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for c in components(path) {
        if c == ".." {
            out.pop();
        } else {
            out.push(c);
        }
    }
    format!("/{}", out.join("/"))
}

/// Join a host directory path and a name.
pub fn join_host(dir: &str, name: &str) -> String {
    if name.starts_with('/') {
        return name.to_string();
    }
    let d = dir.trim_end_matches('/');
    format!("{d}/{name}")
}
