//! A sliding window over a regular file, read with `pread` in chunks: the
//! bytes not yet consumed, grown on demand (never past what the caller
//! asks for), and the offset of the first of them; the line and column of
//! an offset, for a message ([`locate`]). Knows nothing of JSON.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The line (from 1) and column (bytes since the line's start, from 0)
/// of byte `offset` of `file`, counted when a message needs them.
pub fn locate(file: &File, offset: u64) -> (u64, u64) {
    let mut w = Window::new(file, 0, 1 << 20);
    let (mut line, mut column) = (1, 0);
    while w.offset() < offset {
        if w.fill(1).is_err() || w.bytes().is_empty() {
            break;
        }
        let n = w
            .bytes()
            .len()
            .min(usize::try_from(offset - w.offset()).unwrap_or(usize::MAX));
        let part = &w.bytes()[..n];
        match memchr::memrchr(b'\n', part) {
            Some(last) => {
                line += memchr::memchr_iter(b'\n', part).count() as u64;
                column = (n - last - 1) as u64;
            }
            None => column += n as u64,
        }
        w.consume(n);
    }
    (line, column)
}

/// The unconsumed bytes of a file from some position on.
pub struct Window<'f> {
    file: &'f File,
    buf: Vec<u8>,
    /// First unconsumed byte in `buf`.
    start: usize,
    /// End of the bytes read into `buf`.
    end: usize,
    /// File offset of the next read.
    next: u64,
    eof: bool,
    /// File offset of `buf[start]`.
    at: u64,
    chunk: usize,
    /// The file's size when the window was made: the buffer is not grown
    /// past it by more than a page (a file that grew is still read on).
    size: u64,
}

impl<'f> Window<'f> {
    /// A window from offset `at` on, reading `chunk` bytes at a time.
    pub fn new(file: &'f File, at: u64, chunk: usize) -> Window<'f> {
        Window {
            file,
            buf: Vec::new(),
            start: 0,
            end: 0,
            next: at,
            eof: false,
            at,
            chunk: chunk.max(4096),
            size: file.metadata().map_or(u64::MAX, |m| m.len()),
        }
    }

    /// The bytes read and not consumed.
    pub fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// The file offset of the first unconsumed byte.
    pub fn offset(&self) -> u64 {
        self.at
    }

    /// Whether the file's end has been read (no more bytes will come).
    pub fn at_end(&self) -> bool {
        self.eof
    }

    /// Read until at least `n` bytes are unconsumed, or the file ends.
    pub fn fill(&mut self, n: usize) -> io::Result<()> {
        while self.end - self.start < n && !self.eof {
            let held = self.end - self.start;
            let left = usize::try_from(self.size.saturating_sub(self.next)).unwrap_or(usize::MAX);
            let want = n.max(held + self.chunk).min(held + left.max(4096));
            // what is held moves to the front when the free tail is short
            if self.start > 0
                && (self.buf.len() - self.end < self.chunk || self.buf.len() < self.start + want)
            {
                self.buf.copy_within(self.start..self.end, 0);
                self.start = 0;
                self.end = held;
            }
            if self.buf.len() < self.start + want {
                // exactly: `more` grows the window geometrically already
                self.buf.reserve_exact(self.start + want - self.buf.len());
                self.buf.resize(self.start + want, 0);
            }
            let got = loop {
                match self.file.read_at(&mut self.buf[self.end..], self.next) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    r => break r?,
                }
            };
            if got == 0 {
                self.eof = true;
            }
            self.end += got;
            self.next += got as u64;
        }
        Ok(())
    }

    /// Read more: at least one byte (or the file's end), and as many as
    /// are held again, so repeated calls grow the window geometrically.
    pub fn more(&mut self) -> io::Result<()> {
        let held = self.end - self.start;
        self.fill(held + held.max(self.chunk))
    }

    /// Consume `n` unconsumed bytes.
    pub fn consume(&mut self, n: usize) {
        self.at += n as u64;
        self.start += n;
    }

    /// The next byte that is not JSON whitespace (consuming the whitespace
    /// before it), or `None` at the end of the file.
    pub fn next_token(&mut self) -> io::Result<Option<u8>> {
        loop {
            let ws = self
                .bytes()
                .iter()
                .position(|b| !matches!(b, b' ' | b'\n' | b'\t' | b'\r'));
            match ws {
                Some(i) => {
                    self.consume(i);
                    return Ok(Some(self.bytes()[0]));
                }
                None => {
                    let n = self.end - self.start;
                    self.consume(n);
                    if self.eof {
                        return Ok(None);
                    }
                    self.fill(1)?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_window_reads_on_demand_and_locates_an_offset() {
        let mut f = tempfile::tempfile().unwrap();
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        f.write_all(&text).unwrap();
        let mut w = Window::new(&f, 0, 4096);
        assert!(w.bytes().is_empty());
        w.fill(10).unwrap();
        assert!(w.bytes().len() >= 10 && w.bytes().len() <= 4096 + 10);
        w.consume(7); // "line 0\n"
        w.consume(3);
        assert_eq!(w.offset(), 10);
        // grows to what is asked, and on to the end
        w.fill(50_000).unwrap();
        assert!(w.bytes().len() >= 50_000);
        assert_eq!(&w.bytes()[..4], b"e 1\n");
        while !w.at_end() {
            w.more().unwrap();
        }
        assert_eq!(w.bytes(), &text[10..]);
        let n = w.bytes().len();
        w.consume(n);
        assert_eq!(w.next_token().unwrap(), None);
        // a window from the middle of the file
        let mut w = Window::new(&f, 7, 4096);
        assert_eq!(w.next_token().unwrap(), Some(b'l'));
        assert_eq!(w.offset(), 7);
        // lines and columns, across reads of the file
        assert_eq!(locate(&f, 0), (1, 0));
        assert_eq!(locate(&f, 7), (2, 0));
        assert_eq!(locate(&f, 10), (2, 3));
        let at = text.len() as u64 - 4; // in "line 199999\n"
        assert_eq!(locate(&f, at), (200_000, 8));
    }
}
