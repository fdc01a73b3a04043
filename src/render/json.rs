//! JSON renderer: the stable `driftaudit.report/1` document (docs/report-format.md)
//! and its JSON Lines form (one compact host report per line), and a host
//! report as it sits in a streamed document's `hosts` array. Serialises the
//! report with serde straight into one pre-sized buffer, in the bytes
//! `serde_json::to_string_pretty` / `to_string` give; decides nothing.

use std::io;

use serde::Serialize;

use crate::report::{HostReport, Report};

/// Bytes a finding takes in pretty JSON, about (a host report's buffer is
/// sized by its findings so it is seldom copied to grow).
const PRETTY_FINDING: usize = 1200;
/// The same in compact JSON.
const COMPACT_FINDING: usize = 800;

/// Render the report as pretty JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let findings: usize = report.hosts.iter().map(|h| h.findings.len()).sum();
    let mut buf = Vec::with_capacity(4096 + PRETTY_FINDING * findings);
    match pretty_into(&mut buf, report, 0) {
        Ok(()) => {
            buf.push(b'\n');
            into_string(buf)
        }
        Err(e) => format!("{{\"error\": \"{e}\"}}\n"),
    }
}

/// A whole report as JSON Lines: one compact host report per line.
pub(crate) fn jsonl(report: &Report) -> String {
    let findings: usize = report.hosts.iter().map(|h| h.findings.len()).sum();
    let mut buf = Vec::with_capacity(1024 * report.hosts.len() + COMPACT_FINDING * findings);
    for h in &report.hosts {
        let start = buf.len();
        if serde_json::to_writer(&mut buf, h).is_err() {
            buf.truncate(start);
        }
        buf.push(b'\n');
    }
    into_string(buf)
}

/// One host report as a JSON Lines line, its newline included.
pub(crate) fn host_line(report: &HostReport) -> io::Result<String> {
    let mut buf = Vec::with_capacity(1024 + COMPACT_FINDING * report.findings.len());
    serde_json::to_writer(&mut buf, report).map_err(io::Error::other)?;
    buf.push(b'\n');
    Ok(into_string(buf))
}

/// One host report in pretty JSON as an element of a document's `hosts`
/// array: every line, the first too, indented four spaces (two levels), no
/// separator and no newline after it.
pub(crate) fn host_in_array(report: &HostReport) -> io::Result<String> {
    let mut buf = Vec::with_capacity(1024 + PRETTY_FINDING * report.findings.len());
    buf.extend_from_slice(b"    ");
    pretty_into(&mut buf, report, 2)?;
    Ok(into_string(buf))
}

/// Whether `text` is `report` as [`host_in_array`] writes it, without the
/// four spaces before its `{`: the text is compared as the report is
/// serialised, the serialisation stopped at the first difference and never
/// kept (what `driftaudit merge` copies as it is).
pub(crate) fn is_host_in_array(report: &HostReport, text: &[u8]) -> bool {
    let mut same = SameAs(text);
    let mut ser = serde_json::Serializer::with_formatter(&mut same, Pretty::at(2));
    report.serialize(&mut ser).is_ok() && same.0.is_empty()
}

/// A writer that takes only the bytes it holds, in order (an error at the
/// first other byte); what it holds after is what was not written.
struct SameAs<'a>(&'a [u8]);

impl io::Write for SameAs<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.strip_prefix(buf) {
            Some(rest) => {
                self.0 = rest;
                Ok(buf.len())
            }
            None => Err(io::ErrorKind::InvalidData.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `value` in pretty JSON (two spaces a level) onto `buf`, as if it stood
/// `level` levels deep: its inner lines indented `level` levels more than
/// `to_string_pretty` indents them (its first line is not indented).
fn pretty_into<T: Serialize + ?Sized>(
    buf: &mut Vec<u8>,
    value: &T,
    level: usize,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(buf, Pretty::at(level));
    value.serialize(&mut ser).map_err(io::Error::other)
}

/// What serde_json wrote: UTF-8, as it writes only whole `str`s and ASCII.
fn into_string(buf: Vec<u8>) -> String {
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// serde_json's `PrettyFormatter` with two spaces a level, started `level`
/// levels deep, writing each indentation at once.
struct Pretty {
    level: usize,
    has_value: bool,
}

impl Pretty {
    fn at(level: usize) -> Pretty {
        Pretty {
            level,
            has_value: false,
        }
    }

    fn indent<W: ?Sized + io::Write>(&self, w: &mut W) -> io::Result<()> {
        const SPACES: &[u8; 64] = &[b' '; 64];
        let mut n = self.level * 2;
        while n > 0 {
            let k = n.min(SPACES.len());
            w.write_all(&SPACES[..k])?;
            n -= k;
        }
        Ok(())
    }

    /// The opening of an array or object.
    fn begin<W: ?Sized + io::Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(open)
    }

    /// The closing of an array or object: on a line of its own when it
    /// held anything.
    fn end<W: ?Sized + io::Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(close)
    }

    /// Before an element or key: a comma after the previous one, a new line.
    fn item<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nested objects and arrays, empty ones, and strings needing escapes.
    fn sample() -> serde_json::Value {
        serde_json::json!({
            "a": [1, 2.5, {"b": [], "c": {}}, [[], [null]]],
            "s": "x\n\"y\"\u{1b}\u{202e}",
            "e": {},
            "n": {"deep": {"deeper": [true, false, {"k": "v"}]}}
        })
    }

    #[test]
    fn pretty_at_level_zero_is_to_string_pretty() {
        let mut buf = Vec::new();
        pretty_into(&mut buf, &sample(), 0).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            serde_json::to_string_pretty(&sample()).unwrap()
        );
    }

    #[test]
    fn pretty_deeper_is_to_string_pretty_with_every_line_indented() {
        for level in [1, 2, 5, 40] {
            let mut buf = b"  ".repeat(level);
            pretty_into(&mut buf, &sample(), level).unwrap();
            let want: Vec<String> = serde_json::to_string_pretty(&sample())
                .unwrap()
                .lines()
                .map(|l| format!("{}{l}", "  ".repeat(level)))
                .collect();
            assert_eq!(String::from_utf8(buf).unwrap(), want.join("\n"), "{level}");
        }
    }
}
