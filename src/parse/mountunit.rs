//! systemd `.mount` units: the mount point a unit name encodes
//! (`systemd-escape --path --unescape`) and the `[Mount]` section's
//! `What=`, `Where=`, `Type=`, `Options=` read as systemd reads a unit file
//! and its drop-ins (`NAME.mount.d/*.conf`): comments, backslash
//! continuations, a later assignment wins, an empty one resets.
//! Pure: text in, values and issues out; never touches the filesystem.

use super::Issue;

/// One `[Mount]` setting: its value and the 1-based line that set it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assigned {
    /// The value, outer blanks removed.
    pub value: String,
    /// The line of the assignment (the first line of a continued one).
    pub line: usize,
}

/// What a unit file (and then each drop-in over it) sets in `[Mount]`,
/// plus `[Unit] SourcePath=` (systemd-fstab-generator writes
/// `SourcePath=/etc/fstab` into the units it makes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MountUnit {
    /// `What=`: the device, tag or source.
    pub what: Option<Assigned>,
    /// `Where=`: the mount point.
    pub where_: Option<Assigned>,
    /// `Type=`: the filesystem type (detected when absent).
    pub fstype: Option<Assigned>,
    /// `Options=`: the mount options, fstab syntax.
    pub options: Option<Assigned>,
    /// `[Unit] SourcePath=`: the file a generator made the unit from.
    pub source_path: Option<Assigned>,
}

/// Most issues one file reports (a file of junk is a few lines of report).
const MAX_ISSUES: usize = 20;

/// Most bytes one logical line (with its continuations) may hold.
const MAX_LINE: usize = 64 * 1024;

/// Apply one file (the unit itself, then each drop-in in order) to `unit`.
/// An assignment with an empty value resets the setting, as systemd does
/// for `Options=` and the other string settings.
pub fn apply(unit: &mut MountUnit, text: &str) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut section = String::new();
    // (first line, text so far, too long)
    let mut pending: Option<(usize, String, bool)> = None;
    let mut done =
        |unit: &mut MountUnit, section: &mut String, (start, acc, long): (usize, String, bool)| {
            if long {
                if issues.len() < MAX_ISSUES {
                    issues.push(Issue::at(
                        start,
                        format!("a line longer than {} KiB: ignored", MAX_LINE / 1024),
                    ));
                }
            } else {
                logical(unit, section, start, &acc, &mut issues);
            }
        };
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_end_matches('\r');
        let (start, mut acc, mut long) = match pending.take() {
            Some(p) => p,
            None => {
                let t = line.trim_start();
                if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
                    continue;
                }
                (n, String::new(), false)
            }
        };
        // systemd: inside a continuation, comment lines are skipped
        let t = line.trim_start();
        if start != n && (t.starts_with('#') || t.starts_with(';')) {
            pending = Some((start, acc, long));
            continue;
        }
        let (body, more) = match line.strip_suffix('\\') {
            Some(b) => (b, true),
            None => (line, false),
        };
        if acc.len() + body.len() > MAX_LINE {
            long = true;
        } else if !long {
            acc.push_str(body);
            if more {
                acc.push(' ');
            }
        }
        if more {
            pending = Some((start, acc, long));
        } else {
            done(unit, &mut section, (start, acc, long));
        }
    }
    if let Some(p) = pending {
        done(unit, &mut section, p);
    }
    issues
}

fn logical(unit: &mut MountUnit, section: &mut String, n: usize, l: &str, issues: &mut Vec<Issue>) {
    let l = l.trim();
    if let Some(rest) = l.strip_prefix('[') {
        match rest.strip_suffix(']') {
            Some(name) => *section = name.to_string(),
            None if issues.len() < MAX_ISSUES => {
                issues.push(Issue::at(n, format!("`{l}`: a section header without `]`")))
            }
            None => {}
        }
        return;
    }
    let Some((k, v)) = l.split_once('=') else {
        if issues.len() < MAX_ISSUES {
            issues.push(Issue::at(
                n,
                format!("`{l}`: not KEY=VALUE; systemd ignores it"),
            ));
        }
        return;
    };
    let (k, v) = (k.trim(), v.trim());
    let slot = match (section.as_str(), k) {
        ("Mount", "What") => &mut unit.what,
        ("Mount", "Where") => &mut unit.where_,
        ("Mount", "Type") => &mut unit.fstype,
        ("Mount", "Options") => &mut unit.options,
        ("Unit", "SourcePath") => &mut unit.source_path,
        _ => return,
    };
    *slot = (!v.is_empty()).then(|| Assigned {
        value: v.to_string(),
        line: n,
    });
}

/// The mount point a `.mount` unit name stands for, as
/// `systemd-escape --path --unescape` gives it (`srv-data.mount` is
/// `/srv/data`, `-.mount` is `/`, `\x2d` is a `-`); `None` for a name that
/// is not a mount unit or does not unescape to a normalised absolute path
/// (systemd refuses such a unit).
pub fn unit_path(name: &str) -> Option<String> {
    let stem = name.strip_suffix(".mount")?;
    if stem == "-" {
        return Some("/".into());
    }
    if stem.is_empty() || stem.starts_with('-') || stem.ends_with('-') || stem.contains("--") {
        return None;
    }
    let b = stem.as_bytes();
    let mut out = vec![b'/'];
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'-' => out.push(b'/'),
            b'\\' => {
                if b.get(i + 1) != Some(&b'x') {
                    return None;
                }
                let h = stem.get(i + 2..i + 4)?;
                if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return None;
                }
                let v = u8::from_str_radix(h, 16).ok()?;
                if v == 0 || v == b'/' {
                    return None;
                }
                out.push(v);
                i += 4;
                continue;
            }
            c => out.push(c),
        }
        i += 1;
    }
    let p = String::from_utf8(out).ok()?;
    // a normalised path: no `.` or `..` component
    if p.split('/').skip(1).any(|c| c == "." || c == "..") {
        return None;
    }
    // systemd loads a mount unit only when its name is the escaping of its
    // Where= (`a\x2fb.mount` unescapes to /a/b, whose unit is a-b.mount)
    (escape_path(&p) == stem).then_some(p)
}

/// `systemd-escape --path` of an absolute, normalised path (no suffix):
/// `/` is `-`, each `/` inside a `-`, bytes outside `[A-Za-z0-9:_.]` and a
/// leading `.` as `\xNN` (systemd's `unit_name_path_escape`).
pub fn escape_path(p: &str) -> String {
    let t = p.trim_matches('/');
    if t.is_empty() {
        return "-".into();
    }
    let mut out = String::with_capacity(t.len());
    for (i, b) in t.bytes().enumerate() {
        match b {
            b'/' => out.push('-'),
            b'.' if i == 0 => out.push_str("\\x2e"),
            b if b.is_ascii_alphanumeric() || matches!(b, b':' | b'_' | b'.') => {
                out.push(b as char)
            }
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_assignments_win_and_an_empty_one_resets() {
        let mut u = MountUnit::default();
        apply(
            &mut u,
            "[Unit]\nSourcePath=/etc/fstab\n[Mount]\n# c\nWhat=/dev/sdb1\nWhere=/srv/data\nType=ext4\nOptions=defaults,\\\n  noatime\n",
        );
        assert_eq!(u.what.as_ref().unwrap().value, "/dev/sdb1");
        assert_eq!(u.options.as_ref().unwrap().value, "defaults,   noatime");
        assert_eq!(u.options.as_ref().unwrap().line, 8);
        assert_eq!(u.source_path.as_ref().unwrap().value, "/etc/fstab");
        // a drop-in: Options= replaces, an empty Type= resets
        apply(
            &mut u,
            "[Mount]\nOptions=nodev\nType=\n[Install]\nOptions=x\n",
        );
        assert_eq!(u.options.as_ref().unwrap().value, "nodev");
        assert_eq!(u.fstype, None);
        // keys outside [Mount] are not the mount's
        let mut v = MountUnit::default();
        apply(&mut v, "Options=ro\n[Service]\nWhat=x\n");
        assert_eq!(v, MountUnit::default());
    }

    #[test]
    fn hostile_text_never_panics_and_lines_stay_bounded() {
        let mut u = MountUnit::default();
        let long = format!("[Mount]\nOptions={}\\\n", "a".repeat(MAX_LINE * 2));
        let issues = apply(&mut u, &long);
        assert_eq!(u.options, None, "a cut value is no value");
        assert!(issues[0].message.contains("longer than 64 KiB"));
        for t in ["[", "[Mount", "=\n", "\\", "[Mount]\n\\\n\\\n", "é\\x"] {
            apply(&mut MountUnit::default(), t);
        }
        for n in ["\\x", "a\\x4", "a\\xzz.mount", "é\\xé.mount", "\\x2f.mount"] {
            let _ = unit_path(n);
        }
    }
}
