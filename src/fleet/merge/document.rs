//! A fleet JSON report read as a stream: the top-level object member by
//! member (`hosts` one host at a time, every other member kept as its
//! bytes, each at most [`MAX_MEMBER_BYTES`]), for the first pass
//! ([`scan`]: every host read whole, as a host report, and folded, its
//! order and shard checked, its bytes hashed), and the `hosts` array alone
//! for the second ([`Cursor`]: each host's bytes, checked against that
//! hash, and folder). Any JSON is read; in the layout `check --fleet
//! --format json` writes (each host an indented block closed by a line of
//! four spaces and `}`) a host's end is found by a byte search, and the
//! first pass says whether every host of the file is byte for byte what
//! `check` writes for it ([`Hosts::pretty`]). Reads one file; no thread, no
//! output.

use std::cmp::Ordering;
use std::collections::hash_map::RandomState;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;

use memchr::memmem;
use serde::de::IgnoredAny;
use serde::Deserialize;

use super::window::{locate, Window};
use crate::report::merge::light::Tally;
use crate::report::shard::{bucket, Shard};
use crate::report::{HostReport, RuleMeta};

/// The most bytes of one host object, or of another member of a report,
/// that `merge` reads (64 MiB: a generated host is about 140 KB; the
/// largest real reports hold hosts of a few MB).
pub const MAX_MEMBER_BYTES: usize = 64 << 20;

/// Bytes read at a time in the first pass (one file per thread).
const SCAN_CHUNK: usize = 1 << 20;

/// A host closes, in the layout `check` writes, with a line of four spaces
/// and `}`: the only line that starts so inside the `hosts` array.
const HOST_END: &[u8] = b"\n    }";

/// A host's `path` member, in that layout (a nested member is indented further).
const PATH_LINE: &[u8] = b"\n      \"path\": ";

/// Why a report could not be read to its end.
#[derive(Debug)]
pub enum Stop {
    /// An I/O error.
    Io(std::io::Error),
    /// Not JSON, or not a report's shape: the message, and where: serde's
    /// line and column (from 1; line 0 for none) in bytes that start at
    /// offset `at`.
    Json {
        /// What is wrong.
        message: String,
        /// Offset of the bytes `line` and `column` count in.
        at: u64,
        /// Line in those bytes, from 1 (0: no place).
        line: u64,
        /// Column in that line, from 1.
        column: u64,
    },
    /// Not UTF-8: the offset of the first invalid byte.
    Utf8(u64),
    /// A host or member over [`MAX_MEMBER_BYTES`]: what, and its offset.
    TooLarge(String, u64),
    /// A `schema` other than a report's, seen before the hosts.
    Schema(String),
    /// The file no longer holds what the first pass read.
    Changed,
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Stop {
        Stop::Io(e)
    }
}

impl Stop {
    /// A JSON error's message with its line and column in `file`, as
    /// serde_json words them (counted now: only a message needs them).
    pub fn json_message(message: &str, at: u64, line: u64, column: u64, file: &File) -> String {
        if line == 0 {
            return message.to_string();
        }
        let (l0, c0) = locate(file, at);
        let column = if line == 1 { c0 + column } else { column };
        format!("{message} at line {} column {column}", l0 + line - 1)
    }
}

/// A message about the byte at offset `at`.
pub fn json_at(message: &str, at: u64) -> Stop {
    Stop::Json {
        message: message.to_string(),
        at,
        line: 1,
        column: 1,
    }
}

/// The file ended at offset `at` inside what `message` says (serde_json
/// places an end of file after the last byte read, at its column).
pub fn eof_at(message: &str, at: u64) -> Stop {
    Stop::Json {
        message: message.to_string(),
        at,
        line: 1,
        column: 0,
    }
}

/// A serde_json error in bytes that start at offset `at`.
pub fn serde_at(e: &serde_json::Error, at: u64) -> Stop {
    let text = e.to_string();
    let message = match e.line() {
        0 => text.as_str(),
        _ => text
            .rsplit_once(" at line ")
            .map_or(text.as_str(), |(m, _)| m),
    };
    Stop::Json {
        message: message.to_string(),
        at,
        line: e.line() as u64,
        column: e.column() as u64,
    }
}

fn utf8(bytes: &[u8], at: u64) -> Result<(), Stop> {
    std::str::from_utf8(bytes)
        .map(|_| ())
        .map_err(|e| Stop::Utf8(at + e.valid_up_to() as u64))
}

/// The length of the JSON value the window starts with (found by serde,
/// so any layout), reading on as needed; over `cap` bytes is `TooLarge`
/// (named by the caller).
fn value_len(w: &mut Window, cap: usize) -> Result<usize, Stop> {
    loop {
        let bytes = w.bytes();
        let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<IgnoredAny>();
        let got = values.next();
        let n = values.byte_offset();
        let complete = match got {
            // a number may go on past the window's end
            Some(Ok(_)) => n < bytes.len() || w.at_end(),
            Some(Err(e)) if e.is_eof() && !w.at_end() => false,
            Some(Err(e)) => return Err(serde_at(&e, w.offset())),
            None if w.at_end() => return Err(eof_at("EOF while parsing a value", w.offset())),
            None => false,
        };
        if complete && n <= cap {
            return Ok(n);
        }
        if n > cap || bytes.len() > cap {
            return Err(Stop::TooLarge(String::new(), w.offset()));
        }
        w.more()?;
    }
}

/// `value_len`, naming what is too large.
fn member_len(w: &mut Window, name: &dyn Fn(&[u8]) -> String) -> Result<usize, Stop> {
    value_len(w, MAX_MEMBER_BYTES).map_err(|e| match e {
        Stop::TooLarge(_, line) => Stop::TooLarge(name(w.bytes()), line),
        e => e,
    })
}

/// The length of the host the window starts with in the layout `check`
/// writes (through its closing line), if that line comes within `cap` bytes.
fn pretty_len(w: &mut Window, end: &memmem::Finder, cap: usize) -> Result<Option<usize>, Stop> {
    let mut from = 0;
    loop {
        let bytes = w.bytes();
        if let Some(i) = end.find(&bytes[from..]) {
            return Ok(Some(from + i + HOST_END.len()));
        }
        if bytes.len() > cap || w.at_end() {
            return Ok(None);
        }
        from = bytes.len().saturating_sub(HOST_END.len());
        w.more()?;
    }
}

/// A host's folder read from its `path` line, in the layout `check` writes.
fn pretty_path(host: &[u8], finder: &memmem::Finder) -> Option<String> {
    let at = finder.find(host)? + PATH_LINE.len();
    let rest = &host[at..];
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    serde_json::from_slice(line.strip_suffix(b",").unwrap_or(line)).ok()
}

/// A report's members other than `hosts`, as bytes with where each starts.
#[derive(Debug, Default)]
pub struct Members {
    /// `schema`.
    pub schema: Option<(u64, Vec<u8>)>,
    /// `fleet`.
    pub fleet: Option<(u64, Vec<u8>)>,
    /// `rules`, parsed where it was read rather than copied (a rule
    /// catalogue can be most of a report).
    pub rules: Option<Rules>,
    /// `run`.
    pub run: Option<(u64, Vec<u8>)>,
}

/// A report's `rules` member.
#[derive(Debug)]
pub struct Rules {
    /// Where it starts.
    pub at: u64,
    /// Its bytes.
    pub len: usize,
    /// The rule catalogue, or why it is not one.
    pub parsed: Result<Vec<RuleMeta>, Stop>,
}

/// What the first pass found in a report's `hosts` array.
#[derive(Debug)]
pub struct Hosts {
    /// Offset just after the array's `[`.
    pub at: u64,
    /// Whether every host, and what is between them, is in the layout
    /// `check` writes (so the second pass finds them by a byte search),
    /// each host the bytes `check` writes for it (so they can be copied).
    pub pretty: bool,
    /// Hosts read.
    pub count: usize,
    /// The hosts folded.
    pub tally: Tally,
    /// The first host without `path`.
    pub no_path: Option<String>,
    /// The first host out of path order: name, folder, folder before.
    pub out_of_order: Option<(String, String, String)>,
    /// The first folder given twice.
    pub duplicate: Option<String>,
    /// The first folder that the shard's partition puts in another shard,
    /// with that shard (`K/N`).
    pub not_in_shard: Option<(String, String)>,
    /// Each host's bytes as the first pass read them, hashed ([`digest`]),
    /// for the second pass to check it reads the same.
    digests: Vec<u64>,
    /// The hash's key: random, so no bytes can be chosen to match it.
    key: RandomState,
}

/// A host's bytes (from its `{`), hashed with SipHash under `key`.
fn digest(key: &RandomState, bytes: &[u8]) -> u64 {
    let mut h = key.build_hasher();
    h.write(bytes);
    h.finish()
}

/// The `schema` a report names, as `merge` quotes it.
pub fn schema_of(bytes: Option<&[u8]>) -> String {
    match bytes.map(serde_json::from_slice::<serde_json::Value>) {
        Some(Ok(serde_json::Value::String(s))) => s,
        Some(Ok(other)) => other.to_string(),
        _ => "schema-less".into(),
    }
}

/// Read a whole report: its members, and its hosts through the light
/// reading into a [`Tally`]. `shard`: the report's shard as its last line
/// says, whose partition each host is checked against.
pub fn scan(file: &File, shard: Option<Shard>) -> Result<(Members, Option<Hosts>), Stop> {
    let mut w = Window::new(file, 0, SCAN_CHUNK);
    match w.next_token()? {
        Some(b'{') => w.consume(1),
        Some(_) => {
            return Err(json_at(
                "invalid type: expected a JSON object (a fleet report)",
                w.offset(),
            ))
        }
        None => return Err(eof_at("EOF while parsing a value", w.offset())),
    }
    let mut m = Members::default();
    let mut hosts = None;
    let mut first = true;
    loop {
        let eof = |w: &Window| eof_at("EOF while parsing an object", w.offset());
        let Some(mut b) = w.next_token()? else {
            return Err(eof(&w));
        };
        if b == b'}' && first {
            w.consume(1);
            break;
        }
        if !first {
            match b {
                b',' => {
                    w.consume(1);
                    b = w.next_token()?.ok_or_else(|| eof(&w))?;
                }
                b'}' => {
                    w.consume(1);
                    break;
                }
                _ => return Err(json_at("expected `,` or `}`", w.offset())),
            }
        }
        if b != b'"' {
            return Err(json_at("key must be a string", w.offset()));
        }
        let at = w.offset();
        let n = member_len(&mut w, &|_| "a member name".into())?;
        let key: String = serde_json::from_slice(&w.bytes()[..n]).map_err(|e| serde_at(&e, at))?;
        w.consume(n);
        match w.next_token()? {
            Some(b':') => w.consume(1),
            Some(_) => return Err(json_at("expected `:`", w.offset())),
            None => return Err(eof(&w)),
        }
        if w.next_token()?.is_none() {
            return Err(eof_at("EOF while parsing a value", w.offset()));
        }
        let twice = || json_at(&format!("duplicate field `{key}`"), at);
        if key == "hosts" {
            if hosts.is_some() {
                return Err(twice());
            }
            if let Some((_, s)) = &m.schema {
                let found = schema_of(Some(s));
                if found != crate::report::REPORT_SCHEMA {
                    return Err(Stop::Schema(found));
                }
            }
            if w.bytes()[0] != b'[' {
                return Err(json_at(
                    "invalid type: expected an array of host reports",
                    w.offset(),
                ));
            }
            hosts = Some(scan_hosts(&mut w, shard)?);
        } else {
            let at = w.offset();
            let n = member_len(&mut w, &|_| format!("the `{key}` member"))?;
            let bytes = &w.bytes()[..n];
            utf8(bytes, at)?;
            let slot = match key.as_str() {
                "schema" => Some(&mut m.schema),
                "fleet" => Some(&mut m.fleet),
                "rules" if m.rules.is_some() => return Err(twice()),
                "rules" => {
                    let parsed = serde_json::from_slice(bytes).map_err(|e| serde_at(&e, at));
                    m.rules = Some(Rules { at, len: n, parsed });
                    None
                }
                "run" => Some(&mut m.run),
                _ => None,
            };
            if let Some(slot) = slot {
                if slot.is_some() {
                    return Err(twice());
                }
                *slot = Some((at, bytes.to_vec()));
            }
            w.consume(n);
        }
        first = false;
    }
    if w.next_token()?.is_some() {
        return Err(json_at("trailing characters", w.offset()));
    }
    Ok((m, hosts))
}

/// What the light reading keeps of a host once it is folded.
struct Seen {
    host: String,
    path: Option<String>,
}

/// Read a host from its bytes and fold it: it must be a host report (a
/// [`HostReport`], nested at most serde_json's 128 levels; a member a
/// host report does not have is skipped), else an error naming it. With
/// `layout`, also whether the bytes are exactly what `check` writes for
/// that host (less the four spaces before its `{`), so they can be copied.
fn take_host(bytes: &[u8], at: u64, layout: bool, tally: &mut Tally) -> Result<(Seen, bool), Stop> {
    // checked once here, so serde need not check each string again
    let text = std::str::from_utf8(bytes).map_err(|e| Stop::Utf8(at + e.valid_up_to() as u64))?;
    let host: HostReport = serde_json::from_str(text).map_err(|e| match serde_at(&e, at) {
        Stop::Json {
            message,
            at,
            line,
            column,
        } => Stop::Json {
            message: format!("{}: {message}", host_named(bytes, at)),
            at,
            line,
            column,
        },
        other => other,
    })?;
    let exact = layout && crate::render::json::is_host_in_array(&host, bytes);
    tally.add(&host, host.path.as_deref().unwrap_or("."));
    let HostReport { host, path, .. } = host;
    Ok((Seen { host, path }, exact))
}

fn scan_hosts(w: &mut Window, shard: Option<Shard>) -> Result<Hosts, Stop> {
    w.consume(1);
    let end = memmem::Finder::new(HOST_END);
    let mut s = Hosts {
        at: w.offset(),
        pretty: true,
        count: 0,
        tally: Tally::default(),
        no_path: None,
        out_of_order: None,
        duplicate: None,
        not_in_shard: None,
        digests: Vec::new(),
        key: RandomState::new(),
    };
    let mut previous: Option<String> = None;
    loop {
        let first = s.count == 0;
        w.fill(8)?;
        let head = w.bytes();
        let laid_out = if first {
            head.starts_with(b"]") || head.starts_with(b"\n    {")
        } else {
            head.starts_with(b",\n    {") || head.starts_with(b"\n  ]")
        };
        s.pretty &= laid_out;
        let eof = |w: &Window| eof_at("EOF while parsing a list", w.offset());
        let Some(b) = w.next_token()? else {
            return Err(eof(w));
        };
        if b == b']' && first {
            w.consume(1);
            break;
        }
        if !first {
            match b {
                b',' => {
                    w.consume(1);
                    w.next_token()?.ok_or_else(|| eof(w))?;
                }
                b']' => {
                    w.consume(1);
                    break;
                }
                _ => return Err(json_at("expected `,` or `]`", w.offset())),
            }
        }
        let at = w.offset();
        let mut done = None;
        if s.pretty {
            // the end `check`'s layout puts a host at: the bytes up to it
            // are the host if they are a host report (a JSON object ends
            // where it ends), copied if they are what `check` writes
            s.pretty = false;
            if let Some(n) = pretty_len(w, &end, MAX_MEMBER_BYTES)? {
                if let Ok((seen, exact)) = take_host(&w.bytes()[..n], at, true, &mut s.tally) {
                    done = Some((n, seen));
                    s.pretty = exact;
                }
            }
        }
        let (n, seen) = match done {
            Some(d) => d,
            None => {
                let n = member_len(w, &|bytes| host_named(bytes, at))?;
                (n, take_host(&w.bytes()[..n], at, false, &mut s.tally)?.0)
            }
        };
        s.digests.push(digest(&s.key, &w.bytes()[..n]));
        w.consume(n);
        s.count += 1;
        let path = seen.path.as_deref().unwrap_or(".");
        if seen.path.is_none() && s.no_path.is_none() {
            s.no_path = Some(seen.host.clone());
        }
        if let Some(before) = &previous {
            match Path::new(before).cmp(Path::new(path)) {
                Ordering::Less => {}
                Ordering::Equal => {
                    s.duplicate.get_or_insert_with(|| path.to_string());
                }
                Ordering::Greater => {
                    s.out_of_order.get_or_insert_with(|| {
                        (seen.host.clone(), path.to_string(), before.clone())
                    });
                }
            }
        }
        if let Some(k) = shard {
            if !k.contains(Path::new(path)) && s.not_in_shard.is_none() {
                let belongs = bucket(Path::new(path), k.count()) + 1;
                s.not_in_shard = Some((path.to_string(), format!("{belongs}/{}", k.count())));
            }
        }
        previous = Some(path.to_string());
    }
    Ok(s)
}

/// How a message names a host too large to read: by its `host` member when
/// that comes first (as `check` writes it), else by where it starts.
fn host_named(bytes: &[u8], at: u64) -> String {
    let name = (|| {
        let rest = bytes.strip_prefix(b"{")?.trim_ascii_start();
        let rest = rest.strip_prefix(b"\"host\"")?.trim_ascii_start();
        let rest = rest.strip_prefix(b":")?.trim_ascii_start();
        serde_json::Deserializer::from_slice(rest)
            .into_iter::<String>()
            .next()?
            .ok()
    })();
    match name {
        Some(n) => format!("host `{n}`"),
        None => format!("the host at byte {at}"),
    }
}

/// The folder of a host in any layout, for the second pass.
#[derive(Deserialize)]
struct PathOnly {
    #[serde(default)]
    path: Option<String>,
}

enum State {
    Start,
    After,
    Done,
}

/// The second pass over one report: its hosts one at a time, from the
/// `hosts` array the first pass found, each with its folder, each checked
/// to be the bytes the first pass read (else [`Stop::Changed`]).
pub struct Cursor<'f> {
    w: Window<'f>,
    hosts: &'f Hosts,
    pretty: bool,
    state: State,
    /// The current host: its length in the window, folder and place.
    current: Option<(usize, String, u64)>,
    count: usize,
    expected: usize,
    end: memmem::Finder<'static>,
    path_line: memmem::Finder<'static>,
}

impl<'f> Cursor<'f> {
    /// The hosts of `file` as the first pass found them.
    pub fn new(file: &'f File, hosts: &'f Hosts, chunk: usize) -> Cursor<'f> {
        Cursor {
            w: Window::new(file, hosts.at, chunk),
            hosts,
            pretty: hosts.pretty,
            state: State::Start,
            current: None,
            count: 0,
            expected: hosts.count,
            end: memmem::Finder::new(HOST_END),
            path_line: memmem::Finder::new(PATH_LINE),
        }
    }

    /// The current host's bytes: in the layout `check` writes, its
    /// indented block as it sits in the array (from the four spaces before
    /// its `{`).
    pub fn text(&self) -> &[u8] {
        self.current
            .as_ref()
            .map_or(&[][..], |(n, _, _)| &self.w.bytes()[..*n])
    }

    /// The current host's folder.
    pub fn path(&self) -> &str {
        self.current.as_ref().map_or("", |(_, p, _)| p)
    }

    /// The offset of the current host's bytes.
    pub fn offset(&self) -> u64 {
        self.current
            .as_ref()
            .map_or(self.w.offset(), |(_, _, at)| *at)
    }

    /// Whether the hosts are in the layout `check` writes.
    pub fn pretty(&self) -> bool {
        self.pretty
    }

    /// Move to the next host; `false` after the last.
    pub fn advance(&mut self) -> Result<bool, Stop> {
        if let Some((n, _, _)) = self.current.take() {
            self.w.consume(n);
            self.state = State::After;
        }
        if matches!(self.state, State::Done) {
            return Ok(false);
        }
        let more = if self.pretty {
            self.pretty_next()?
        } else {
            self.any_next()?
        };
        if !more {
            self.state = State::Done;
            if self.count != self.expected {
                return Err(Stop::Changed);
            }
            return Ok(false);
        }
        self.count += 1;
        if self.count > self.expected {
            return Err(Stop::Changed);
        }
        // in the layout `check` writes, the text starts with the four
        // spaces before `{` (checked by `pretty_next`)
        let from = if self.pretty { 4 } else { 0 };
        let read = digest(&self.hosts.key, &self.text()[from..]);
        if self.hosts.digests.get(self.count - 1) != Some(&read) {
            return Err(Stop::Changed);
        }
        Ok(true)
    }

    fn pretty_next(&mut self) -> Result<bool, Stop> {
        self.w.fill(8)?;
        let head = self.w.bytes();
        match self.state {
            State::Start if head.starts_with(b"]") => return Ok(false),
            State::Start if head.starts_with(b"\n    {") => self.w.consume(1),
            State::After if head.starts_with(b",\n    {") => self.w.consume(2),
            State::After if head.starts_with(b"\n  ]") => return Ok(false),
            _ => return Err(Stop::Changed),
        }
        let at = self.w.offset();
        let n = pretty_len(&mut self.w, &self.end, MAX_MEMBER_BYTES + 8)?.ok_or(Stop::Changed)?;
        let path = pretty_path(&self.w.bytes()[..n], &self.path_line).ok_or(Stop::Changed)?;
        self.current = Some((n, path, at));
        Ok(true)
    }

    fn any_next(&mut self) -> Result<bool, Stop> {
        let mut b = self.w.next_token()?.ok_or(Stop::Changed)?;
        match (&self.state, b) {
            (_, b']') => return Ok(false),
            (State::After, b',') => {
                self.w.consume(1);
                b = self.w.next_token()?.ok_or(Stop::Changed)?;
            }
            (State::Start, _) => {}
            _ => return Err(Stop::Changed),
        }
        if b != b'{' {
            return Err(Stop::Changed);
        }
        let at = self.w.offset();
        loop {
            let bytes = self.w.bytes();
            let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<PathOnly>();
            let got = values.next();
            let n = values.byte_offset();
            match got {
                Some(Ok(p)) if n <= MAX_MEMBER_BYTES => {
                    self.current = Some((n, p.path.unwrap_or_else(|| ".".into()), at));
                    return Ok(true);
                }
                Some(Err(e))
                    if e.is_eof() && !self.w.at_end() && bytes.len() <= MAX_MEMBER_BYTES =>
                {
                    self.w.more()?
                }
                _ => return Err(Stop::Changed),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    use super::*;
    use crate::host::SourceKind;
    use crate::render::stream::FleetWriter;
    use crate::render::{Format, RenderOptions};
    use crate::report::fleet::FleetSummary;
    use crate::report::HostReport;

    /// A report of hosts named as their folders, in the layout `check`
    /// writes (`pretty`) or compact.
    fn report(names: &[&str], pretty: bool) -> Vec<u8> {
        let mut w = FleetWriter::new(Vec::new(), Format::Json, RenderOptions::default()).unwrap();
        for n in names {
            let mut h = HostReport::new(n.to_string(), SourceKind::Snapshot, vec![]);
            h.path = Some(n.to_string());
            w.host(h).unwrap();
        }
        let text = w.finish(&FleetSummary::default()).unwrap();
        if pretty {
            return text;
        }
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        serde_json::to_vec(&v).unwrap()
    }

    /// Issue 51: the second pass copied a host's bytes as it read them;
    /// they must be the bytes the first pass read, in any layout (the
    /// file's ctime, checked before the second pass, catches a rewrite;
    /// this is what catches one the ctime does not show).
    #[test]
    fn a_host_whose_bytes_are_not_what_the_first_pass_read_is_refused_in_the_second() {
        for pretty in [true, false] {
            let text = report(&["db1", "db2"], pretty);
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(&text).unwrap();
            let (_, hosts) = scan(&f, None).unwrap();
            let hosts = hosts.unwrap();
            assert_eq!((hosts.count, hosts.pretty), (2, pretty));
            // the same bytes read again
            let mut c = Cursor::new(&f, &hosts, 4096);
            assert!(c.advance().unwrap() && c.advance().unwrap());
            assert!(!c.advance().unwrap());
            // the second host's folder changed, at the same length
            let at = memmem::rfind(&text, b"db2").unwrap();
            f.write_all_at(b"db3", at as u64).unwrap();
            let mut c = Cursor::new(&f, &hosts, 4096);
            assert!(c.advance().unwrap());
            assert_eq!(c.path(), "db1");
            let second = c.advance();
            assert!(
                matches!(second, Err(Stop::Changed)),
                "pretty {pretty}: {second:?}"
            );
        }
    }
}
