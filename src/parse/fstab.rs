//! /etc/fstab (and the fstab-format /proc/mounts) exactly as util-linux
//! libmount reads it, plus the option set the kernel would show and the
//! atime mode (the flag table, quote-aware splitting and `defaults` expansion
//! are `mountopts`'s, re-exported here).
//! Pure: never touches the filesystem.

use super::mountopts::{apply_flag, flag_words, is_propagation, Flags};
/// Option-string syntax and the words mount(8) keeps to itself live with the
/// flag table in `mountopts` (one owner, no import back to fstab).
pub use super::mountopts::{expand_defaults, is_userspace_only, split_options, DEFAULTS};
use super::{numbered_lines, Issue};

/// One entry of an fstab-format table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FstabEntry {
    /// 1-based line.
    pub line: usize,
    /// Field 1, unescaped (`UUID=...`, `/dev/sdb1`, `tmpfs`, `host:/dir`); tag
    /// quotes are kept as libmount keeps them (`UUID="..."`).
    pub spec: String,
    /// Field 2, unescaped mount point (`none`/`swap` for swap).
    pub file: String,
    /// Field 3, filesystem type.
    pub vfstype: String,
    /// Field 4 unescaped, `None` when the field is absent.
    pub options: Option<String>,
    /// Field 5 (dump), 0 when absent.
    pub freq: i32,
    /// Field 6 (fsck order), 0 when absent.
    pub passno: i32,
}

impl FstabEntry {
    /// Options as a list (quote-aware split, empty items dropped).
    pub fn option_list(&self) -> Vec<String> {
        self.options
            .as_deref()
            .map(split_options)
            .unwrap_or_default()
    }

    /// Whether this is a swap entry (type `swap`).
    pub fn is_swap(&self) -> bool {
        self.vfstype == "swap"
    }
}

/// libmount `unmangle`: `\ooo` octal escapes (see [`super::unescape_octal`]).
pub use super::unescape_octal as unmangle;

/// Longest line the mount-table parsers read (fstab, mountinfo,
/// /proc/mounts): a longer one is skipped with an issue, so one hostile line
/// cannot cost more than this much work (a 15 MiB line took 4.5 GB before).
/// The kernel's longest real lines (overlayfs with many layers) are a few KiB.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Most comma-separated options one field may hold; a field with more makes
/// the line an issue (real lines have a few dozen at most).
pub const MAX_OPTIONS: usize = 1024;

/// `Err` when an option field holds more than [`MAX_OPTIONS`] items.
pub(crate) fn check_option_count(
    text: &str,
    column: usize,
    what: &str,
) -> Result<(), (usize, String)> {
    let n = text.bytes().filter(|&b| b == b',').count() + 1;
    if n > MAX_OPTIONS {
        return Err((
            column,
            format!("the {what} field holds {n} options, more than the {MAX_OPTIONS} driftaudit reads in one field"),
        ));
    }
    Ok(())
}

/// A field of a line: raw (escaped) text and its 1-based column.
pub(crate) struct Field<'a> {
    pub(crate) text: &'a str,
    pub(crate) column: usize,
}

/// Split on runs of spaces and TABs only (libmount's separators; other
/// whitespace such as CR or vertical tab is part of a field).
pub(crate) fn fields(line: &str) -> Vec<Field<'_>> {
    // columns are counted as we go: recounting from the line start for each
    // field was quadratic on a hostile multi-MB line
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    for (col, (i, c)) in line.char_indices().enumerate() {
        if c == ' ' || c == '\t' {
            if let Some((s, column)) = start.take() {
                out.push(Field {
                    text: &line[s..i],
                    column,
                });
            }
        } else if start.is_none() {
            start = Some((i, col + 1));
        }
    }
    if let Some((s, column)) = start {
        out.push(Field {
            text: &line[s..],
            column,
        });
    }
    out
}

/// libmount `next_s32`: `strtol` base 10 then truncation to `int`; the number
/// must be followed by a space, TAB or the end of the line.
fn parse_s32(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let digits = &b[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // strtol saturates at LONG_MAX/LONG_MIN, then C truncates to int.
    let mut v: i64 = 0;
    let mut overflow = false;
    for d in digits {
        match v
            .checked_mul(10)
            .and_then(|x| x.checked_add(i64::from(d - b'0')))
        {
            Some(x) => v = x,
            None => {
                overflow = true;
                break;
            }
        }
    }
    let v = if overflow {
        if neg {
            i64::MIN
        } else {
            i64::MAX
        }
    } else if neg {
        -v
    } else {
        v
    };
    Some(v as i32)
}

/// Parse one non-comment line as libmount `mnt_parse_table_line` does.
/// `Err((column, message))` for a line libmount rejects.
pub(crate) fn parse_table_line(line: &str, n: usize) -> Result<FstabEntry, (usize, String)> {
    let f = fields(line);
    let end_col = line.chars().count() + 1;
    let (spec, file, vfstype) = match f.as_slice() {
        [a, b, c, ..] => (a, b, c),
        [_, _] => return Err((end_col, "missing field 3 (filesystem type); an fstab line needs at least `spec mount-point type`".into())),
        _ => return Err((end_col, "missing field 2 (mount point); an fstab line needs at least `spec mount-point type`".into())),
    };
    if let Some(o) = f.get(3) {
        check_option_count(o.text, o.column, "options")?;
    }
    let options = f.get(3).map(|o| unmangle(o.text));
    let mut e = FstabEntry {
        line: n,
        spec: unmangle(spec.text),
        file: unmangle(file.text),
        vfstype: unmangle(vfstype.text),
        options,
        freq: 0,
        passno: 0,
    };
    if let Some(fr) = f.get(4) {
        e.freq = parse_s32(fr.text).ok_or_else(|| {
            (
                fr.column,
                format!(
                    "field 5 (dump frequency) `{}` is not a number; libmount rejects the line",
                    fr.text
                ),
            )
        })?;
    }
    if let Some(p) = f.get(5) {
        e.passno = parse_s32(p.text).ok_or_else(|| {
            (
                p.column,
                format!(
                    "field 6 (fsck pass) `{}` is not a number; libmount rejects the line",
                    p.text
                ),
            )
        })?;
    }
    Ok(e)
}

/// Whether a line is skipped by libmount (blank, or first non-blank is `#`).
pub(crate) fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    t.is_empty() || t.starts_with('#')
}

/// A line as the C reader sees it: cut at the first NUL byte.
pub(crate) fn c_line(line: &str) -> &str {
    match line.find('\0') {
        Some(i) => &line[..i],
        None => line,
    }
}

/// Parse an fstab file. Lines libmount rejects become issues (with the column
/// of the offending field) and are skipped, as `mount -a` skips them.
pub fn parse(text: &str) -> (Vec<FstabEntry>, Vec<Issue>) {
    parse_lines(text, parse_table_line, |msg| {
        format!("{msg}; mount and findmnt ignore this line")
    })
}

/// The line loop shared by the mount-table formats: libmount's line cut,
/// blank and comment lines skipped, a rejected line an issue at its column.
pub(crate) fn parse_lines<T>(
    text: &str,
    parse_line: impl Fn(&str, usize) -> Result<T, (usize, String)>,
    describe: impl Fn(String) -> String,
) -> (Vec<T>, Vec<Issue>) {
    let mut out = Vec::new();
    let mut issues = super::Issues::new();
    for (n, raw) in numbered_lines(text) {
        if raw.len() > MAX_LINE_BYTES {
            issues.push(Issue::at(
                n,
                format!(
                    "the line is {} bytes, longer than the {MAX_LINE_BYTES} driftaudit reads in one line; it is not judged",
                    raw.len()
                ),
            ));
            continue;
        }
        let line = c_line(raw);
        if is_blank_or_comment(line) {
            continue;
        }
        match parse_line(line, n) {
            Ok(e) => out.push(e),
            Err((col, msg)) => issues.push(Issue::at_col(n, col, describe(msg))),
        }
    }
    (out, issues.into_vec())
}

/// Effective atime behaviour of a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Atime {
    /// Never update access times.
    Noatime,
    /// Update only when older than mtime/ctime or 24 h (the kernel default).
    Relatime,
    /// Update on every access.
    Strictatime,
}

impl Atime {
    /// `noatime`, `relatime` or `strictatime`.
    pub fn as_str(self) -> &'static str {
        match self {
            Atime::Noatime => "noatime",
            Atime::Relatime => "relatime",
            Atime::Strictatime => "strictatime",
        }
    }
}

fn flags_of(opts: &[String]) -> (Flags, Vec<String>) {
    let mut f = Flags::default();
    // filesystem-specific options: a later `key=value` replaces an earlier one
    // (keyed once, not rescanned per option: linear on long lists)
    let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut rest: Vec<Option<String>> = Vec::new();
    for o in opts {
        // `i_version` is ext4's own word: without a filesystem model it is
        // kept as written (mountopts' ext4 model knows it)
        if (o != "i_version" && apply_flag(&mut f, o)) || is_userspace_only(o) || is_propagation(o)
        {
            continue;
        }
        let key = o.split('=').next().unwrap_or(o);
        if let Some(i) = last.insert(key, rest.len()) {
            rest[i] = None;
        }
        rest.push(Some(o.clone()));
    }
    (f, rest.into_iter().flatten().collect())
}

/// The effective atime mode of an option list, fstab or kernel: processed left
/// to right as the kernel does (`strictatime` wins over `noatime`, no atime
/// option means relatime). For /proc/mounts options a missing word therefore
/// reads as relatime only when the list came from fstab; use
/// [`kernel_atime`] for lists the kernel printed.
pub fn atime_mode(opts: &[String]) -> Atime {
    let (f, _) = flags_of(opts);
    if f.strictatime {
        Atime::Strictatime
    } else if f.noatime {
        Atime::Noatime
    } else {
        Atime::Relatime
    }
}

/// The atime mode of options as the kernel shows them (/proc/mounts or
/// mountinfo per-mount options): `noatime`, else `relatime`, else
/// strictatime (the kernel prints no word for it).
pub fn kernel_atime(opts: &[String]) -> Atime {
    if opts.iter().any(|o| o == "noatime") {
        Atime::Noatime
    } else if opts.iter().any(|o| o == "relatime") {
        Atime::Relatime
    } else {
        Atime::Strictatime
    }
}

/// The option list the kernel would show in /proc/mounts for a mount made
/// from these fstab options: `ro|rw`, superblock flags, per-mount flags
/// (with the implied `relatime`; `strictatime` shows no word), then the
/// filesystem-specific options as written (a later `key=` wins). Userspace-only
/// options (`defaults`, `noauto`, `nofail`, `x-*`, ...) are dropped. Filesystem
/// defaults the kernel hides (`data=ordered`, ...) are not known here.
pub fn kernel_options(opts: &[String]) -> Vec<String> {
    let (f, rest) = flags_of(opts);
    let mut out = flag_words(&f);
    out.extend(rest);
    out
}

/// A source tag (`UUID=`, `LABEL=`, `PARTUUID=`, `PARTLABEL=`, also `ID=`):
/// returns the tag name and the value with surrounding double quotes removed.
pub fn spec_tag(spec: &str) -> Option<(&str, &str)> {
    let (tag, value) = spec.split_once('=')?;
    if !matches!(tag, "UUID" | "LABEL" | "PARTUUID" | "PARTLABEL" | "ID") {
        return None;
    }
    let v = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    Some((tag, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn fields_defaults_and_escapes() {
        let (e, issues) = parse(
            "# c\n   # indented\n\nUUID=\"ab\" /srv/my\\040data ext4 defaults,noatime\n tmpfs\t/tmp tmpfs\n/dev/sda1 / ext4 ro 1 2 trailing junk\n",
        );
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].spec, "UUID=\"ab\"");
        assert_eq!(e[0].file, "/srv/my data");
        assert_eq!((e[0].freq, e[0].passno), (0, 0));
        assert_eq!(e[1].options, None);
        assert_eq!(e[1].line, 5);
        assert_eq!((e[2].freq, e[2].passno), (1, 2));
        assert_eq!(spec_tag(&e[0].spec), Some(("UUID", "ab")));
    }

    #[test]
    fn malformed_lines_are_issues_with_columns() {
        let (e, issues) =
            parse("bug\nthis is broken line with words\nx /x ext4 d 1x\nok /ok ext4\n");
        assert_eq!(e.len(), 1);
        // lines 2 and 3 have one kind of problem (a field that is not a
        // number): one issue, at the first one's column, that names both
        // lines (issue 29)
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!((issues[0].line, issues[0].column), (1, Some(4)));
        assert_eq!((issues[1].line, issues[1].column), (2, Some(21)));
        assert!(
            issues[1]
                .message
                .contains("[2 lines like it in this file, the first line 2, the last line 3"),
            "{issues:?}"
        );
    }

    #[test]
    fn numbers_follow_strtol() {
        assert_eq!(parse_s32("-1"), Some(-1));
        assert_eq!(parse_s32("+3"), Some(3));
        assert_eq!(parse_s32("99999999999"), Some(1215752191));
        assert_eq!(parse_s32("1x"), None);
        assert_eq!(parse_s32(""), None);
    }

    #[test]
    fn quoted_options_split() {
        assert_eq!(
            split_options("context=\"a,b\",ro,,"),
            v(&["context=\"a,b\"", "ro"])
        );
    }

    #[test]
    fn defaults_is_not_drift_against_rw_relatime() {
        let o = expand_defaults(&v(&["defaults"]));
        assert_eq!(o, v(&DEFAULTS));
        assert_eq!(kernel_options(&o), v(&["rw", "relatime"]));
        assert_eq!(
            kernel_options(&v(&[
                "defaults",
                "noatime",
                "nofail",
                "x-systemd.automount"
            ])),
            v(&["rw", "noatime"])
        );
        assert_eq!(kernel_options(&v(&["strictatime"])), v(&["rw"]));
        assert_eq!(
            kernel_options(&v(&["defaults", "ro"])),
            v(&["ro", "relatime"])
        );
        // `defaults` after other options undoes none of them (libmount)
        assert_eq!(
            kernel_options(&v(&["ro", "nosuid", "defaults"])),
            v(&["ro", "nosuid", "relatime"])
        );
        assert_eq!(
            kernel_options(&expand_defaults(&v(&["noexec", "defaults"]))),
            v(&["rw", "noexec", "relatime"])
        );
        assert_eq!(
            kernel_options(&v(&["users", "exec"])),
            v(&["rw", "nosuid", "nodev", "relatime"])
        );
        assert_eq!(
            kernel_options(&v(&["size=1g", "mode=1777", "size=2g"])),
            v(&["rw", "relatime", "mode=1777", "size=2g"])
        );
    }

    #[test]
    fn atime_modes() {
        assert_eq!(atime_mode(&v(&["defaults"])), Atime::Relatime);
        assert_eq!(atime_mode(&v(&["noatime", "atime"])), Atime::Relatime);
        assert_eq!(atime_mode(&v(&["noatime"])), Atime::Noatime);
        assert_eq!(
            atime_mode(&v(&["noatime", "strictatime"])),
            Atime::Strictatime
        );
        assert_eq!(kernel_atime(&v(&["rw"])), Atime::Strictatime);
        assert_eq!(kernel_atime(&v(&["rw", "relatime"])), Atime::Relatime);
    }

    #[test]
    fn unmangle_wraps_like_c() {
        assert_eq!(unmangle("a\\040b\\134"), "a b\\");
        assert_eq!(unmangle("\\04"), "\\04");
        assert_eq!(unmangle("\\501"), "A");
    }

    #[test]
    fn fstab_and_the_per_filesystem_model_read_flags_from_one_table() {
        use super::super::mountopts::{configured, FsContext};
        let words = [
            "ro",
            "rw",
            "suid",
            "nosuid",
            "dev",
            "nodev",
            "exec",
            "noexec",
            "sync",
            "async",
            "dirsync",
            "mand",
            "nomand",
            "lazytime",
            "nolazytime",
            "atime",
            "noatime",
            "strictatime",
            "nostrictatime",
            "relatime",
            "norelatime",
            "diratime",
            "nodiratime",
            "symfollow",
            "nosymfollow",
            "user",
            "users",
            "owner",
            "group",
            "defaults",
            "silent",
            "loud",
            "iversion",
            "noiversion",
            "rec",
        ];
        let cx = FsContext {
            fstype: "somefs".into(),
            ..FsContext::default()
        };
        for w in words {
            for list in [
                v(&[w]),
                v(&["ro", "nosuid", "noatime", w]),
                v(&[w, "noexec"]),
            ] {
                assert_eq!(
                    kernel_options(&list),
                    configured(&list, &cx).options,
                    "{list:?}"
                );
            }
        }
        // `i_version` is kept as written without a filesystem model
        assert_eq!(
            kernel_options(&v(&["i_version"])),
            v(&["rw", "relatime", "i_version"])
        );
        assert_eq!(
            configured(&v(&["i_version"]), &cx).options,
            v(&["rw", "relatime"])
        );
    }
}
