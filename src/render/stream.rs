//! Streaming output for fleet audits: writes one host report at a time to a
//! writer (text, a JSON document whose `hosts` array is streamed, or JSON
//! Lines) and the fleet summary at the end. Holds no host after writing it;
//! must not evaluate rules or read host data.

use std::io::{self, Write};

use crate::report::fleet::FleetSummary;
use crate::report::{HostReport, Report, REPORT_SCHEMA};

use super::RenderOptions;

/// Formats a fleet audit can stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamFormat {
    /// Each host as the text renderer prints it, then the fleet summary.
    Text,
    /// One `driftaudit.report/1` document: `hosts` streamed, then a `fleet`
    /// member with the summary.
    Json,
    /// One compact host report per line, then one `driftaudit.fleet/1` summary line.
    Jsonl,
}

/// Writes hosts as they finish. Call [`FleetWriter::host`] per host and
/// [`FleetWriter::finish`] once.
pub struct FleetWriter<W: Write> {
    out: W,
    format: StreamFormat,
    opts: RenderOptions,
    written: usize,
}

impl<W: Write> FleetWriter<W> {
    /// Start the output (writes the JSON document's opening).
    pub fn new(mut out: W, format: StreamFormat, opts: RenderOptions) -> io::Result<Self> {
        if format == StreamFormat::Json {
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
        })
    }

    /// Write one host's report.
    pub fn host(&mut self, report: HostReport) -> io::Result<()> {
        let text = render_host(self.format, self.opts, report)?;
        self.rendered(&text)
    }

    /// Write one host rendered by [`render_host`] (so the rendering can run on
    /// worker threads and only the writing is serial).
    pub fn rendered(&mut self, text: &str) -> io::Result<()> {
        match self.format {
            StreamFormat::Text if self.written > 0 => self.out.write_all(b"\n")?,
            StreamFormat::Json => {
                self.out
                    .write_all(if self.written > 0 { b",\n" } else { b"\n" })?
            }
            _ => {}
        }
        self.out.write_all(text.as_bytes())?;
        self.written += 1;
        Ok(())
    }

    /// Write the fleet summary and close the document; returns the writer.
    pub fn finish(mut self, summary: &FleetSummary) -> io::Result<W> {
        match self.format {
            StreamFormat::Text => {
                if self.written > 0 {
                    self.out.write_all(b"\n")?;
                }
                self.out.write_all(summary.render_text().as_bytes())?;
            }
            StreamFormat::Json => {
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
                self.out.write_all(b"\n}\n")?;
            }
            StreamFormat::Jsonl => {
                serde_json::to_writer(&mut self.out, summary).map_err(io::Error::other)?;
                self.out.write_all(b"\n")?;
            }
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Render one host for a stream: text as the text renderer prints it; for
/// JSON the pretty host object indented to sit in the `hosts` array (no
/// separator); for JSON Lines one compact line with its newline.
pub fn render_host(
    format: StreamFormat,
    opts: RenderOptions,
    report: HostReport,
) -> io::Result<String> {
    Ok(match format {
        StreamFormat::Text => {
            let one = Report {
                schema: REPORT_SCHEMA,
                hosts: vec![report],
                rules: Vec::new(),
            };
            super::text::render(&one, opts)
        }
        StreamFormat::Json => {
            let text = serde_json::to_string_pretty(&report).map_err(io::Error::other)?;
            let mut out = String::with_capacity(text.len() + text.len() / 8);
            for (i, l) in text.lines().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str("    ");
                out.push_str(l);
            }
            out
        }
        StreamFormat::Jsonl => {
            let mut s = serde_json::to_string(&report).map_err(io::Error::other)?;
            s.push('\n');
            s
        }
    })
}
