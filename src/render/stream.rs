//! Streaming output for fleet audits: writes one host report at a time to a
//! writer (text, a JSON document whose `hosts` array is streamed, or JSON
//! Lines) and the fleet summary at the end. Holds no host after writing
//! it; must not evaluate rules or read host data.

use std::io::{self, Write};

use crate::report::fleet::FleetSummary;
use crate::report::merge::{Merged, RunMeta};
use crate::report::{HostReport, Report, RuleMeta, REPORT_SCHEMA};

use super::format::{Format, RenderOptions};

/// The error for a format that cannot be streamed (see [`Format::streams`]).
fn not_streamed(format: Format) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("format `{}` cannot be streamed host by host", format.name()),
    )
}

/// Writes hosts as they finish. Call [`FleetWriter::host`] per host and
/// [`FleetWriter::finish`] once.
pub struct FleetWriter<'a, W: Write> {
    out: W,
    format: Format,
    opts: RenderOptions<'a>,
    written: usize,
    /// JSON only: the `rules` member, rendered, and the `run` member
    /// (rendered at the end: a shard's waiver usage is known only then).
    trailer: Option<(String, RunMeta)>,
}

impl<'a, W: Write> FleetWriter<'a, W> {
    /// Start the output (writes the JSON document's opening). A format that
    /// does not [stream](Format::streams) is an `Unsupported` error.
    pub fn new(mut out: W, format: Format, opts: RenderOptions<'a>) -> io::Result<Self> {
        if !format.streams() {
            return Err(not_streamed(format));
        }
        if format == Format::Json {
            write!(
                out,
                "{{\n  \"schema\": \"{REPORT_SCHEMA}\",\n  \"hosts\": ["
            )?;
        }
        Ok(FleetWriter {
            out,
            format,
            opts,
            written: 0,
            trailer: None,
        })
    }

    /// End the JSON document with the rule catalogue (`rules`) and the run
    /// metadata (`run`, one line) after the summary: what `driftaudit merge`
    /// needs to combine shard reports and render them in any format. Other
    /// formats ignore it.
    pub fn with_run(mut self, rules: &[RuleMeta], run: &RunMeta) -> io::Result<Self> {
        let catalogue = serde_json::to_string_pretty(rules).map_err(io::Error::other)?;
        let mut t = String::from(",\n  \"rules\": ");
        for (i, l) in catalogue.lines().enumerate() {
            if i > 0 {
                t.push_str("\n  ");
            }
            t.push_str(l);
        }
        self.trailer = Some((t, run.clone()));
        Ok(self)
    }

    /// Record a shard's waiver usage in the `run` member ([`Self::with_run`]).
    pub fn set_waivers(&mut self, waivers: crate::report::merge::WaiverRun) {
        if let Some((_, run)) = self.trailer.as_mut() {
            run.waivers = Some(waivers);
        }
    }

    /// Write one host's report.
    pub fn host(&mut self, report: HostReport) -> io::Result<()> {
        let text = render_host(self.format, self.opts, report)?;
        self.rendered(&text)
    }

    /// Write one host rendered by [`render_host`] (so the rendering can run on
    /// worker threads and only the writing is serial).
    pub fn rendered(&mut self, text: &str) -> io::Result<()> {
        self.rendered_bytes(text.as_bytes())
    }

    /// [`FleetWriter::rendered`] of UTF-8 bytes (`merge` copies a host's
    /// JSON as the shard holds it, checked as UTF-8 when first read).
    pub fn rendered_bytes(&mut self, text: &[u8]) -> io::Result<()> {
        match self.format {
            Format::Text if self.written > 0 => self.out.write_all(b"\n")?,
            Format::Json => self
                .out
                .write_all(if self.written > 0 { b",\n" } else { b"\n" })?,
            _ => {}
        }
        self.out.write_all(text)?;
        self.written += 1;
        Ok(())
    }

    /// Write the fleet summary and close the document; returns the writer.
    pub fn finish(mut self, summary: &FleetSummary) -> io::Result<W> {
        match self.format {
            Format::Text => {
                if self.written > 0 {
                    self.out.write_all(b"\n")?;
                }
                self.out.write_all(summary.render_text().as_bytes())?;
            }
            Format::Json => {
                if self.written > 0 {
                    self.out.write_all(b"\n  ")?;
                }
                self.out.write_all(b"],\n  \"fleet\": ")?;
                let text = serde_json::to_string_pretty(summary).map_err(io::Error::other)?;
                let mut lines = text.lines();
                if let Some(first) = lines.next() {
                    self.out.write_all(first.as_bytes())?;
                }
                for l in lines {
                    write!(self.out, "\n  {l}")?;
                }
                if let Some((rules, run)) = &self.trailer {
                    self.out.write_all(rules.as_bytes())?;
                    let run = serde_json::to_string(run).map_err(io::Error::other)?;
                    write!(self.out, ",\n  \"run\": {run}")?;
                }
                self.out.write_all(b"\n}\n")?;
            }
            Format::Jsonl => {
                serde_json::to_writer(&mut self.out, summary).map_err(io::Error::other)?;
                self.out.write_all(b"\n")?;
            }
            // `new` admits only the formats that stream
            other => return Err(not_streamed(other)),
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Render one host for a stream: text as [`super::render`] prints it (in
/// brief too: `check --fleet --quiet`'s line per host); for
/// JSON the pretty host object indented to sit in the `hosts` array (no
/// separator); for JSON Lines one compact line with its newline. A format
/// that does not [stream](Format::streams) is an `Unsupported` error.
pub fn render_host(format: Format, opts: RenderOptions, report: HostReport) -> io::Result<String> {
    Ok(match format {
        Format::Text => {
            let one = Report {
                schema: REPORT_SCHEMA,
                selection: Default::default(),
                hosts: vec![report],
                rules: Vec::new(),
            };
            super::render(&one, Format::Text, opts)
        }
        Format::Json => super::json::host_in_array(&report)?,
        Format::Jsonl => super::json::host_line(&report)?,
        other => return Err(not_streamed(other)),
    })
}

/// Append to `out` the compact JSON (`serde_json::to_string`) of a value
/// whose pretty JSON (`serde_json::to_string_pretty`, at any indentation)
/// is `pretty`: the JSON Lines form of a host that a fleet report holds
/// pretty. Pretty JSON differs from compact only outside strings, by a
/// newline and the indentation before each element, member and closing
/// bracket, and a space after each member name's colon; a string never
/// holds a raw newline, so the text is taken a line at a time and a
/// string's bytes are copied, never looked at, except a member name's.
/// Bytes in any other layout come out as they would: the caller knows the
/// layout (`fleet::merge`'s first pass checked it).
pub fn compact_pretty_json(pretty: &[u8], out: &mut Vec<u8>) {
    out.reserve(pretty.len());
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', pretty).chain(std::iter::once(pretty.len()));
    for end in ends {
        let line = &pretty[start..end];
        start = end + 1;
        let indent = line.iter().take_while(|b| **b == b' ').count();
        let line = &line[indent..];
        // `"name": value`: the name's closing quote, then `: `
        if line.first() == Some(&b'"') {
            // a name is short: a plain loop beats a vector search
            let mut i = 1;
            let close = loop {
                match line.get(i) {
                    Some(b'\\') => i += 2,
                    Some(b'"') => break Some(i),
                    Some(_) => i += 1,
                    None => break None,
                }
            };
            if let Some(q) = close.filter(|q| line.get(q + 1..q + 3) == Some(b": ")) {
                out.extend_from_slice(&line[..=q + 1]);
                out.extend_from_slice(&line[q + 3..]);
                continue;
            }
        }
        out.extend_from_slice(line);
    }
}

/// Write a merged fleet report (`driftaudit merge`) the way `check --fleet`
/// writes a whole fleet: JSON (hosts in the same order, the summary, the
/// rule catalogue and `run`), JSON Lines and text (each host, then the
/// fleet summary) byte for byte as an unsharded run apart from `run`; every
/// other format through [`super::render`] over the merged report.
pub fn write_merged<W: Write>(
    mut out: W,
    merged: &Merged,
    format: Format,
    opts: RenderOptions,
) -> io::Result<W> {
    if !format.streams() {
        out.write_all(super::render(&merged.report, format, opts).as_bytes())?;
        out.flush()?;
        return Ok(out);
    }
    let mut w = FleetWriter::new(out, format, opts)?.with_run(&merged.report.rules, &merged.run)?;
    for h in &merged.report.hosts {
        w.host(h.clone())?;
    }
    w.finish(&merged.summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_pretty_json_gives_serde_json_compact_output() {
        let values = [
            serde_json::json!({
                "host": "db \"1\": x",
                "path": "dc1/a b",
                "empty": [],
                "none": {},
                "nested": [[1, 2.5, -3e-7], {"k\\\"": ": \"", "\n": "a\nb\tc"}, [], {}],
                "ünï": ["\u{2028}", "\\", "\"", "x\": "],
                "n": null, "t": true, "f": false,
                "deep": {"a": {"b": {"c": [{"d": "e"}]}}}
            }),
            serde_json::json!([]),
            serde_json::json!("a \"b\": c"),
            serde_json::json!(12),
        ];
        for v in values {
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            let mut got = Vec::new();
            compact_pretty_json(pretty.as_bytes(), &mut got);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
            // indented as a fleet report's hosts are
            let indented: String = pretty
                .lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n");
            let mut got = Vec::new();
            compact_pretty_json(indented.as_bytes(), &mut got);
            assert_eq!(
                String::from_utf8(got).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
        }
    }

    #[test]
    fn formats_that_do_not_stream_are_refused_not_half_written() {
        for f in Format::ALL.iter().copied().filter(|f| !f.streams()) {
            let e = FleetWriter::new(Vec::new(), f, RenderOptions::default())
                .err()
                .expect("refused");
            assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{f:?}");
            assert!(e.to_string().contains(&format!("`{}`", f.name())));
        }
        for f in Format::ALL.iter().copied().filter(|f| f.streams()) {
            assert!(FleetWriter::new(Vec::new(), f, RenderOptions::default()).is_ok());
        }
    }
}
