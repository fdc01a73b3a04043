//! Greedy word wrap for the people-facing printers (text report, `explain`):
//! paragraphs split at blank lines, words at whitespace, lines at a width
//! in characters. Pure text: it escapes nothing (callers pass text already
//! made [`super::printable`]) and knows no report.

/// Greedy word wrap; paragraphs (blank-line separated) are kept. Each line
/// is the words of a paragraph joined by one space, as many as fit in
/// `width` characters (a longer word gets a line of its own); a blank line
/// stands between paragraphs.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = String::with_capacity(text.len() + 16);
    wrap_into(&mut out, text, width, "", "");
    out.split_terminator('\n').map(str::to_string).collect()
}

/// [`wrap`] written onto the end of `out`: each line, blank ones too, as
/// `first` (the first line) or `rest` (every other), the line and a newline.
pub fn wrap_into(out: &mut String, text: &str, width: usize, first: &str, rest: &str) {
    let mut lines = Lines {
        out,
        width,
        first,
        rest,
        head: true,
        open: false,
        chars: 0,
    };
    for (i, para) in paragraphs(text).enumerate() {
        if i > 0 {
            lines.start();
            lines.out.push('\n');
        }
        if para.is_ascii() {
            lines.ascii(para);
        } else {
            for w in para.split_whitespace() {
                lines.word(w, w.chars().count());
            }
        }
        lines.close();
    }
}

/// What `char::is_whitespace` says of an ASCII byte (tab, newline, vertical
/// tab, form feed, carriage return, space), as `split_whitespace` splits.
fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// `text.split("\n\n")`, finding each newline with `str::find`.
fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let t = rest?;
        let mut from = 0;
        while let Some(k) = t[from..].find('\n') {
            let at = from + k;
            if t.as_bytes().get(at + 1) == Some(&b'\n') {
                rest = Some(&t[at + 2..]);
                return Some(&t[..at]);
            }
            from = at + 1;
        }
        rest = None;
        Some(t)
    })
}

/// The line being written.
struct Lines<'a> {
    out: &'a mut String,
    width: usize,
    first: &'a str,
    rest: &'a str,
    /// No line written yet (the next one takes `first`).
    head: bool,
    /// A line with a word on it is open.
    open: bool,
    /// Characters on the open line.
    chars: usize,
}

impl Lines<'_> {
    /// Begin a line: its lead.
    fn start(&mut self) {
        self.out
            .push_str(if self.head { self.first } else { self.rest });
        self.head = false;
    }

    /// Put a word of `n` characters on the open line, or on a new one when
    /// it does not fit.
    fn word(&mut self, w: &str, n: usize) {
        if self.open && self.chars + 1 + n > self.width {
            self.out.push('\n');
            self.open = false;
        }
        if self.open {
            self.out.push(' ');
            self.chars += 1;
        } else {
            self.start();
            self.open = true;
            self.chars = 0;
        }
        self.out.push_str(w);
        self.chars += n;
    }

    /// An ASCII paragraph's words (split by byte, a word's length its
    /// character count), as [`Lines::word`] puts them; words one space
    /// apart on the same line are copied as one run.
    fn ascii(&mut self, para: &str) {
        let b = para.as_bytes();
        // the open line's words not yet copied: a run of `para`
        let mut run = 0..0;
        let mut at = 0;
        while at < b.len() {
            while at < b.len() && ascii_space(b[at]) {
                at += 1;
            }
            let start = at;
            while at < b.len() && !ascii_space(b[at]) {
                at += 1;
            }
            if start == at {
                continue;
            }
            let n = at - start;
            if self.open && self.chars + 1 + n <= self.width {
                if start == run.end + 1 && b[run.end] == b' ' {
                    run.end = at;
                } else {
                    self.out.push_str(&para[run]);
                    self.out.push(' ');
                    run = start..at;
                }
                self.chars += 1 + n;
            } else {
                self.out.push_str(&para[run]);
                if self.open {
                    self.out.push('\n');
                }
                self.start();
                self.open = true;
                self.chars = n;
                run = start..at;
            }
        }
        self.out.push_str(&para[run]);
    }

    /// End the paragraph's last line.
    fn close(&mut self) {
        if self.open {
            self.out.push('\n');
            self.open = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<String> {
        let mut s: Vec<String> = [
            "",
            "\n\n",
            "\n\n\n",
            "a\n\n\nb",
            "a \n \n b",
            "one two three four five six seven eight nine ten eleven twelve",
            "averyveryveryverylongwordthatdoesnotfitonalineofitsown short",
            "x\x0by\x0cz\x1cw\x1fv\rq\tr  s\n\n\n\nt",
            "caf\u{e9} \u{e9}t\u{e9} na\u{ef}ve \u{2026} \u{2192} words\u{a0}nbsp\u{3000}ideo",
            "\u{2028}sep\u{2029}para\u{85}nel\u{1680}ogham \u{200b}zw",
            "combin\u{0301}ing e\u{0301}\u{0301}\u{0301} marks",
            "  leading and trailing  \n\n  second paragraph here \n\n",
        ]
        .map(str::to_string)
        .to_vec();
        // every ASCII byte as a would-be separator
        for b in 0u8..0x80 {
            let c = b as char;
            s.push(format!("alpha{c}beta{c}{c}gamma delta{c}\n\n{c}epsilon"));
        }
        s
    }

    #[test]
    fn wrap_into_leads_the_first_line_and_every_other_one() {
        let mut out = String::from("^");
        wrap_into(&mut out, "one two three\n\nfour", 8, "fix: ", "     ");
        assert_eq!(out, "^fix: one two\n     three\n     \n     four\n");
    }

    #[test]
    fn paragraphs_split_as_str_split_does() {
        for text in samples() {
            let want: Vec<&str> = text.split("\n\n").collect();
            assert_eq!(paragraphs(&text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }
}
