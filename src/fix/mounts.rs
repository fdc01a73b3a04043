//! Mount edits: the options field of the mount point's /etc/fstab entry
//! (the other columns, their alignment and every comment kept), then a
//! `mount -o remount` step; the proof's simulation on the mount table
//! (mountinfo, or a `mount -l` capture). Option fields are split as
//! libmount splits them (at commas outside double quotes), so a quoted
//! value such as `context="a,b"` is one option, kept whole. An option the fstab field cannot
//! hold as one option (a blank, a comma, a control character) or a mount
//! point the command cannot carry is refused with the reason.

use super::changes::{Change, Op};
use super::context::{check_value, comment, Ctx};
use super::mount_flags::{is_flag, EXCLUSIVE};
use super::shell;
use super::tree::EditKind;
use crate::parse::mountopts::split_options;
use crate::resolve::{Lookup, Resolver};

/// `opts` with `remove` taken out and `add` put in (each added option
/// drops the ones it excludes); `defaults` when nothing is left.
pub(super) fn edit_options(opts: &[String], add: &[String], remove: &[String]) -> Vec<String> {
    let mut out: Vec<String> = opts
        .iter()
        .filter(|o| !remove.contains(o))
        .cloned()
        .collect();
    for a in add {
        if let Some(g) = EXCLUSIVE.iter().find(|g| g.contains(&a.as_str())) {
            out.retain(|o| o == a || !g.contains(&o.as_str()));
        }
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    if out.is_empty() {
        out.push("defaults".into());
    }
    out
}

/// Byte spans of the whitespace-separated fields of a line.
fn fields(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, line.len()));
    }
    out
}

/// The fstab line with field 4 replaced by `options`; the next column
/// keeps its position when the blanks before it allow.
pub(super) fn with_options(line: &str, options: &str) -> Option<String> {
    let f = fields(line);
    if f.len() < 3 || line.trim_start().starts_with('#') {
        return None;
    }
    if f.len() == 3 {
        return Some(format!("{}\t{options}", line.trim_end()));
    }
    let (s, e) = f[3];
    let old_len = e - s;
    let mut out = format!("{}{options}", &line[..s]);
    if let Some(&(ns, _)) = f.get(4) {
        let gap = &line[e..ns];
        if gap.chars().all(|c| c == ' ') {
            let grow = options.len() as isize - old_len as isize;
            let keep = (gap.len() as isize - grow).max(1) as usize;
            out.push_str(&" ".repeat(keep));
        } else {
            out.push_str(gap);
        }
        out.push_str(&line[ns..]);
    } else {
        out.push_str(&line[e..]);
    }
    Some(out)
}

pub(super) fn apply(cx: &mut Ctx, point: &str, c: &Change) -> Result<(), String> {
    let Op::Mount {
        add,
        remove,
        plain_remount,
    } = &c.op
    else {
        return Err("a value change on a mount point".into());
    };
    check_value("mount point", point)?;
    for o in add.iter().chain(remove) {
        check_value("mount option", o)?;
        if o.is_empty() || o.contains(|c: char| c.is_whitespace() || c == ',' || c == '#') {
            return Err(format!(
                "the mount option `{}` is empty or holds a blank, a comma or `#`, which one \
                 option of an fstab field cannot hold",
                comment(o)
            ));
        }
    }
    let r = Resolver::from_facts(cx.host, cx.facts);
    let m = r.mount(point);
    // a mount point no fstab line names is configured by its systemd .mount
    // unit: neither an fstab edit nor `mount -o remount` (which reads fstab)
    // applies its Options=
    if let Lookup::Set(fs) = &m.fstab {
        if fs.at.path != crate::facts::storage::FSTAB {
            let unit = crate::parse::mountunit::escape_path(point) + ".mount";
            return Err(format!(
                "{point} is mounted by the systemd unit {unit} ({}), not an /etc/fstab line: fix edits /etc/fstab only; change Options= there (`systemctl edit {unit}`) and apply it with `systemctl daemon-reload && systemctl reload {unit}`",
                fs.at.path
            ));
        }
    }
    if c.persist {
        let Lookup::Set(fs) = &m.fstab else {
            return Err(format!(
                "/etc/fstab has no entry for {point} to add the options to; add one"
            ));
        };
        let n = fs.at.line.ok_or("the fstab line is not known")?;
        let line = cx.line(&fs.at.path, n, EditKind::Config)?;
        let f = fields(&line);
        let current: Vec<String> = f
            .get(3)
            .map(|&(s, e)| split_options(&line[s..e]))
            .unwrap_or_default();
        let new = edit_options(&current, add, remove);
        if new != current {
            let text = with_options(&line, &new.join(","))
                .ok_or_else(|| format!("{} is not an fstab entry", fs.at.location()))?;
            cx.replace(&fs.at.path, n, text, EditKind::Config)?;
        }
    }
    if c.apply_now {
        let Lookup::Set(mounted) = &m.mounted else {
            return Ok(());
        };
        let already = add.iter().all(|a| mounted.options.contains(a))
            && remove.iter().all(|x| !mounted.options.contains(x));
        if already {
            return Ok(());
        }
        let flags: Vec<&str> = add
            .iter()
            .map(String::as_str)
            .filter(|o| is_flag(o))
            .collect();
        let opt = if *plain_remount || flags.is_empty() {
            "remount".to_string()
        } else {
            format!("remount,{}", flags.join(","))
        };
        let cmd = shell::command(&["mount", "-o", &opt, point]);
        // one remount per mount point, naming the flags of every change
        let tail = format!(" {}", shell::quote(point));
        if let Some(s) = cx
            .steps
            .iter_mut()
            .find(|s| s.command.starts_with("mount -o remount") && s.command.ends_with(&tail))
        {
            let had: Vec<String> = s
                .command
                .split(' ')
                .nth(2)
                .unwrap_or("remount")
                .split(',')
                .skip(1)
                .map(str::to_string)
                .collect();
            let mut all = had.clone();
            if opt != "remount" {
                all = edit_options(
                    &had,
                    &flags.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
                    &[],
                );
                all.retain(|o| o != "defaults");
            }
            if all != had {
                let opt = std::iter::once("remount".to_string())
                    .chain(all)
                    .collect::<Vec<_>>()
                    .join(",");
                s.command = shell::command(&["mount", "-o", &opt, point]);
            }
            for w in &c.why {
                if !s.fixes.contains(w) {
                    s.fixes.push(w.clone());
                }
            }
        } else {
            cx.step(cmd, &c.why, false, "")?;
        }
        if let Some(n) = mounted.at.line {
            let line = cx.line(&mounted.at.path, n, EditKind::Simulated)?;
            let new = simulate_line(&line, add, remove);
            cx.replace(&mounted.at.path, n, new, EditKind::Simulated)?;
        }
    }
    Ok(())
}

/// A mount-table line after the remount: flags in the per-mount field,
/// other options in the superblock field (mountinfo), or the parenthesised
/// list of a `mount -l` line.
fn simulate_line(line: &str, add: &[String], remove: &[String]) -> String {
    let edit = |field: &str, keep: &dyn Fn(&str) -> bool| -> String {
        let cur = split_options(field);
        let adds: Vec<String> = add.iter().filter(|a| keep(a)).cloned().collect();
        edit_options(&cur, &adds, remove).join(",")
    };
    if let (Some(a), Some(b)) = (line.find(" ("), line.rfind(')')) {
        if line.contains(" on ") && a < b {
            return format!(
                "{} ({}){}",
                &line[..a],
                edit(&line[a + 2..b], &|_| true),
                &line[b + 1..]
            );
        }
    }
    let f = fields(line);
    let Some(sep) = f.iter().position(|&(s, e)| &line[s..e] == "-") else {
        return line.to_string();
    };
    if f.len() < 6 || sep < 6 || f.len() < sep + 4 {
        return line.to_string();
    }
    let (ms, me) = f[5];
    let (ss, se) = f[sep + 3];
    let mount = edit(&line[ms..me], &|o| is_flag(o));
    let sup = edit(&line[ss..se], &|o| !is_flag(o));
    format!(
        "{}{}{}{}{}",
        &line[..ms],
        mount,
        &line[me..ss],
        sup,
        &line[se..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn noatime_replaces_relatime_and_keeps_the_rest_in_order() {
        assert_eq!(
            edit_options(
                &v(&["defaults", "relatime", "nofail"]),
                &v(&["noatime"]),
                &v(&["strictatime"])
            ),
            v(&["defaults", "nofail", "noatime"])
        );
        assert_eq!(
            edit_options(&v(&["noatime"]), &v(&["noatime"]), &[]),
            v(&["noatime"])
        );
    }

    #[test]
    fn the_columns_after_the_options_stay_where_they_were() {
        let l = "UUID=abc  /          ext4    defaults        1 1";
        assert_eq!(
            with_options(l, "defaults,noatime"),
            Some("UUID=abc  /          ext4    defaults,noatime 1 1".into())
        );
        let l = "/dev/md2\t/opt/zimbra/index\text4\tdefaults\t0 2";
        assert_eq!(
            with_options(l, "defaults,noatime"),
            Some("/dev/md2\t/opt/zimbra/index\text4\tdefaults,noatime\t0 2".into())
        );
        assert_eq!(with_options("# /dev/sda1 / ext4 defaults 0 1", "x"), None);
    }

    #[test]
    fn a_remount_changes_the_mountinfo_fields() {
        let l = "21 1 253:2 / /var/lib/mysql rw,relatime shared:1 - ext4 /dev/mapper/x rw,seclabel";
        assert_eq!(
            simulate_line(l, &v(&["noatime"]), &v(&["relatime"])),
            "21 1 253:2 / /var/lib/mysql rw,noatime shared:1 - ext4 /dev/mapper/x rw,seclabel"
        );
        let l = "/dev/sdb1 on /data type ext4 (rw,relatime)";
        assert_eq!(
            simulate_line(l, &v(&["noatime"]), &[]),
            "/dev/sdb1 on /data type ext4 (rw,noatime)"
        );
    }
}
