//! Live mount tables: `/proc/self/mountinfo` (per-mount and superblock options
//! told apart) and `/proc/mounts` (fstab format, merged options), read as
//! libmount reads them. Pure and lenient: a bad line is an issue.

use super::fstab::{
    c_line, check_option_count, fields, is_blank_or_comment, parse_lines, parse_table_line,
    split_options, unmangle,
};
use super::{numbered_lines, Issue};

/// One live mount.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mount {
    /// 1-based line in the file it came from.
    pub line: usize,
    /// Mount ID (mountinfo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<i64>,
    /// Parent mount ID (mountinfo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<i64>,
    /// `major:minor` of the filesystem (mountinfo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devno: Option<String>,
    /// Path inside the filesystem mounted here (mountinfo only; `/` normally).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Mount point, unescaped (a ` (deleted)` suffix removed, see `deleted`).
    pub target: String,
    /// The mount point had been deleted (`\040(deleted)` suffix).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// Filesystem type.
    pub fstype: String,
    /// Source device or name, unescaped (may be empty).
    pub source: String,
    /// Options as /proc/mounts shows them (per-mount and superblock merged).
    pub options: Vec<String>,
    /// Per-mount (VFS) options (mountinfo field 6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<Vec<String>>,
    /// Superblock options (mountinfo last field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub super_options: Option<Vec<String>>,
    /// Optional fields (`shared:1`, `master:2`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
}

/// Whether a text looks like mountinfo (as libmount guesses: the first
/// non-comment line starts with two numbers).
pub fn looks_like_mountinfo(text: &str) -> bool {
    for (_, raw) in numbered_lines(text) {
        let l = c_line(raw);
        if is_blank_or_comment(l) {
            continue;
        }
        let f = fields(l);
        return f.len() >= 2
            && f.iter()
                .take(2)
                .all(|x| !x.text.is_empty() && x.text.bytes().all(|b| b.is_ascii_digit()));
    }
    false
}

/// Merge per-mount and superblock options as libmount (and /proc/mounts) do:
/// `ro` if either is read-only, else `rw`, then the other options in order.
pub fn merge_options(vfs: &[String], fs: &[String]) -> Vec<String> {
    let ro = vfs.iter().chain(fs).any(|o| o == "ro");
    let mut out = vec![if ro { "ro" } else { "rw" }.to_string()];
    out.extend(
        vfs.iter()
            .chain(fs)
            .filter(|o| *o != "ro" && *o != "rw")
            .cloned(),
    );
    out
}

fn parse_num(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 18 {
        return None;
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parse one mountinfo line following libmount `mnt_parse_mountinfo_line`.
fn parse_mountinfo_line(line: &str, n: usize) -> Result<Mount, (usize, String)> {
    let f = fields(line);
    let col_end = line.chars().count() + 1;
    let get = |i: usize, what: &str| f.get(i).ok_or_else(|| (col_end, format!("missing {what}")));
    let id = get(0, "mount ID")?;
    let id_v =
        parse_num(id.text).ok_or((id.column, format!("mount ID `{}` is not a number", id.text)))?;
    let parent = get(1, "parent ID")?;
    let parent_v = parse_num(parent.text).ok_or((
        parent.column,
        format!("parent ID `{}` is not a number", parent.text),
    ))?;
    let dev = get(2, "major:minor")?;
    let ok_dev = dev.text.split_once(':').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().take_while(u8::is_ascii_digit).count() > 0
    });
    if !ok_dev {
        return Err((dev.column, format!("`{}` is not major:minor", dev.text)));
    }
    let root = get(3, "root")?;
    let target = get(4, "mount point")?;
    let vfs = get(5, "per-mount options")?;
    check_option_count(vfs.text, vfs.column, "per-mount options")?;
    // optional fields end at the first lone `-`
    let sep = f
        .iter()
        .enumerate()
        .skip(6)
        .find(|(_, x)| x.text == "-")
        .map(|(i, _)| i)
        .ok_or((
            vfs.column,
            "no ` - ` separator after the optional fields".to_string(),
        ))?;
    let optional: Vec<String> = f[6..sep].iter().map(|x| unmangle(x.text)).collect();
    let fstype = f
        .get(sep + 1)
        .ok_or((col_end, "missing filesystem type after ` - `".to_string()))?;
    // libmount: two spaces after the type mean an empty source
    let fstype_end = byte_offset(line, fstype.column) + fstype.text.len();
    let empty_source = line.get(fstype_end..).is_some_and(|r| r.starts_with("  "));
    let (source, sb) = if empty_source {
        (String::new(), f.get(sep + 2))
    } else {
        let s = f.get(sep + 2).ok_or((
            col_end,
            "missing source after the filesystem type".to_string(),
        ))?;
        (unmangle(s.text), f.get(sep + 3))
    };
    let sb = sb.ok_or((
        col_end,
        "missing superblock options (last field)".to_string(),
    ))?;
    check_option_count(sb.text, sb.column, "superblock options")?;
    let mut target_s = unmangle(target.text);
    let deleted = target_s.ends_with(" (deleted)");
    if deleted {
        target_s.truncate(target_s.len() - " (deleted)".len());
    }
    let vfs_l = split_options(&unmangle(vfs.text));
    let sb_l = split_options(&unmangle(sb.text));
    Ok(Mount {
        line: n,
        id: Some(id_v),
        parent: Some(parent_v),
        devno: Some(dev.text.to_string()),
        root: Some(unmangle(root.text)),
        target: target_s,
        deleted,
        fstype: unmangle(fstype.text),
        source,
        options: merge_options(&vfs_l, &sb_l),
        mount_options: Some(vfs_l),
        super_options: Some(sb_l),
        optional,
    })
}

fn byte_offset(line: &str, column: usize) -> usize {
    line.char_indices()
        .nth(column.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(line.len())
}

/// Parse `/proc/self/mountinfo`.
pub fn parse_mountinfo(text: &str) -> (Vec<Mount>, Vec<Issue>) {
    parse_lines(text, parse_mountinfo_line, |msg| {
        format!("not a mountinfo line: {msg}")
    })
}

/// Parse `/proc/mounts` (= `/proc/self/mounts`, `/etc/mtab`): fstab format.
pub fn parse_mounts(text: &str) -> (Vec<Mount>, Vec<Issue>) {
    let mount_line = |line: &str, n: usize| {
        parse_table_line(line, n).map(|e| {
            let mut target = e.file.clone();
            let deleted = target.ends_with(" (deleted)");
            if deleted {
                target.truncate(target.len() - " (deleted)".len());
            }
            Mount {
                line: n,
                id: None,
                parent: None,
                devno: None,
                root: None,
                options: e.option_list(),
                target,
                deleted,
                fstype: e.vfstype,
                source: e.spec,
                mount_options: None,
                super_options: None,
                optional: Vec::new(),
            }
        })
    };
    parse_lines(text, mount_line, |msg| {
        format!("not a /proc/mounts line: {msg}")
    })
}

/// Parse either format, guessing it as libmount does.
pub fn parse_any(text: &str) -> (Vec<Mount>, Vec<Issue>) {
    if looks_like_mountinfo(text) {
        parse_mountinfo(text)
    } else {
        parse_mounts(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_fields_and_options() {
        let (m, issues) = parse_mountinfo(
            "42 27 254:0 /tmp/mt/src /tmp/mt/a\\040b ro,relatime master:1 shared:2 - ext4 /dev/vda rw,discard\n\
             21 20 0:53 / /mnt/test rw,relatime shared:212 - tmpfs  rw\n\
             30 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/x \n\
             garbage\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].target, "/tmp/mt/a b");
        assert_eq!(m[0].root.as_deref(), Some("/tmp/mt/src"));
        assert_eq!(m[0].optional, ["master:1", "shared:2"]);
        assert_eq!(m[0].options, ["ro", "relatime", "discard"]);
        assert_eq!(m[0].mount_options.as_ref().unwrap(), &["ro", "relatime"]);
        assert_eq!(m[0].super_options.as_ref().unwrap(), &["rw", "discard"]);
        assert_eq!(m[1].source, "");
        assert_eq!(m[1].options, ["rw", "relatime"]);
        assert_eq!(issues.iter().map(|i| i.line).collect::<Vec<_>>(), [3, 4]);
    }

    #[test]
    fn proc_mounts_and_guess() {
        let text = "/dev/vda / ext4 rw,relatime 0 0\nsrc\\0431 /m\\011x tmpfs rw,size=1024k 0 0\n";
        assert!(!looks_like_mountinfo(text));
        let (m, issues) = parse_any(text);
        assert!(issues.is_empty());
        assert_eq!(m[1].source, "src#1");
        assert_eq!(m[1].target, "/m\tx");
        assert!(looks_like_mountinfo(
            "# c\n1 2 3:4 / / rw - ext4 /dev/x rw\n"
        ));
    }
}
