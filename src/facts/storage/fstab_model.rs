//! What the kernel would show for one fstab line ([`FstabModel`]): its
//! canonical option list (a bind line's taken from its source), atime
//! mode, what the model could not judge, and the likely cause of a
//! difference from the live mount. Pure over what was read: no I/O, no
//! namespace entries, no issues recorded.

use crate::facts::Facts;
use crate::parse::fstab::{expand_defaults, kernel_atime, FstabEntry};
use crate::parse::mountinfo::Mount;
use crate::parse::mountopts::{self, Canonical, Ext4Defaults, FsContext, PER_MOUNT_FLAGS};

use super::ext4::Ext4Layouts;
use super::points::point_cow;
use super::{fstab_key, mount_of, normalize_point, EXT_TYPES};

/// What the kernel would show for one fstab line: its canonical option list,
/// atime mode, what the model could not judge, and the likely cause of a
/// difference from the live mount.
pub(super) struct FstabModel {
    pub(super) canonical: Canonical,
    fstype: String,
    pub(super) atime: &'static str,
    /// A bind line: where the options come from.
    bind_source: Option<String>,
    pub(super) cause: String,
}

impl FstabModel {
    pub(super) fn new(
        e: &FstabEntry,
        key: &str,
        entries: &[FstabEntry],
        live: Option<&[Mount]>,
        layouts: &Ext4Layouts,
        facts: &Facts,
        spec_device: Option<(String, Option<String>)>,
    ) -> FstabModel {
        let opts = expand_defaults(&e.option_list());
        let is_bind = opts.iter().any(|o| o == "bind" || o == "rbind");
        let cx = |fstype: &str, point: &str| FsContext {
            fstype: fstype.to_string(),
            mem_total: facts.mem_total().map(|m| m as u64),
            ext4: layouts.layout_at(point).map(|l| Ext4Defaults {
                default_mount_options: l.default_mount_options.clone(),
                errors_behavior: l.errors_behavior.clone(),
                features: l.features.clone(),
            }),
        };
        let mut bind_source = None;
        let mut canonical = mountopts::configured(&opts, &cx(&e.vfstype, key));
        if is_bind {
            if let Some((src, c)) = bind_options(e, key, &opts, entries, live, &cx) {
                bind_source = Some(src);
                canonical = c;
            } else {
                canonical.assumptions.push(format!(
                    "the source of this bind mount (`{}`) is neither mounted nor in /etc/fstab: its options are unknown, only the line's own are compared",
                    e.spec
                ));
                canonical
                    .options
                    .retain(|o| PER_MOUNT_FLAGS.contains(&o.as_str()));
                canonical.unknown.clear();
            }
        }
        let atime = kernel_atime(&canonical.options).as_str();
        let mut m = FstabModel {
            canonical,
            fstype: e.vfstype.clone(),
            atime,
            bind_source,
            cause: String::new(),
        };
        m.cause = m.likely_cause(e, key, live, spec_device);
        m
    }

    pub(super) fn notes(&self) -> Vec<String> {
        let c = &self.canonical;
        let mut out = Vec::new();
        if let Some(src) = &self.bind_source {
            out.push(format!(
                "a bind mount has the options of its source ({src}) unless the line names them"
            ));
        }
        if !c.unknown.is_empty() {
            out.push(format!(
                "{} not in driftaudit's model of {} mount options and compared as written",
                quote_list(&c.unknown),
                self.fstype
            ));
        }
        for (o, why) in &c.unchecked {
            out.push(format!("`{o}` is not compared: {why}"));
        }
        for (o, why) in &c.refused {
            out.push(format!(
                "`{o}` is not compared: {why}; this line does not mount as written"
            ));
        }

        out.extend(c.assumptions.iter().cloned());
        out
    }

    /// Why the live mount differs from this line, as far as the host data
    /// says; empty when it shows everything the line asks for.
    /// `spec_device`: the device the spec names and what the live mount's
    /// source resolves to, when both are known (a `/dev/disk/by-uuid/X` or
    /// `UUID=` spec is the device its link or tag points at, never the
    /// text compared with mountinfo's `/dev/sdb1`).
    fn likely_cause(
        &self,
        e: &FstabEntry,
        key: &str,
        live: Option<&[Mount]>,
        spec_device: Option<(String, Option<String>)>,
    ) -> String {
        let Some(m) = live.and_then(|ms| ms.iter().rev().find(|m| point_cow(&m.target) == key))
        else {
            return String::new();
        };
        let running = mountopts::running(&m.options, &m.fstype);
        let missing: Vec<&String> = self
            .canonical
            .options
            .iter()
            .filter(|o| !running.contains(o))
            .collect();
        // an automount placeholder is no drift: the mount namespace says so
        if missing.is_empty() || (m.fstype == "autofs" && e.vfstype != "autofs") {
            return String::new();
        }
        let different = match &spec_device {
            Some((spec_dev, Some(src_dev))) => spec_dev != src_dev,
            _ => false,
        };
        if self.bind_source.is_none() && different && m.source.starts_with("/dev/") {
            return format!(
                "A different filesystem is mounted there ({}) than this line names ({}): it was mounted by hand or by another unit, not from this line.",
                m.source, e.spec
            );
        }
        if !e.vfstype.is_empty()
            && e.vfstype != "none"
            && e.vfstype != "auto"
            && !e.vfstype.contains(',')
            && m.fstype != e.vfstype
            && self.bind_source.is_none()
        {
            return format!(
                "A {} filesystem is mounted there, not the {} this line names: it was mounted by hand or by another unit.",
                m.fstype, e.vfstype
            );
        }
        let fixed: Vec<&&String> = missing
            .iter()
            .filter(|o| {
                EXT_TYPES.contains(&m.fstype.as_str())
                    && (o.starts_with("data=") || o.starts_with("journal"))
            })
            .collect();
        if !fixed.is_empty() && fixed.len() == missing.len() {
            let what = fixed
                .iter()
                .map(|o| format!("`{o}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let root = if key == "/" {
                " (the root filesystem is mounted by the initramfs, with `rootflags=` from the kernel command line)"
            } else {
                ""
            };
            return format!(
                "{what} cannot be changed by a remount: the filesystem keeps what it was first mounted with{root}, and the line takes effect only at the next mount."
            );
        }
        if let Some(src) = &self.bind_source {
            return format!(
                "A bind mount takes its options from its source ({src}); the source or this mount was remounted with other options after it was made, or the line was edited since."
            );
        }
        "The file was edited after the volume was mounted and it was never remounted (systemd reloads fstab but does not remount), or it was mounted or remounted by hand with other options.".to_string()
    }
}

fn quote_list(v: &[String]) -> String {
    let q: Vec<String> = v.iter().map(|o| format!("`{o}`")).collect();
    match q.len() {
        1 => format!("{} is", q[0]),
        _ => format!("{} are", q.join(", ")),
    }
}

/// A bind line's options as the kernel shows them: the per-mount flags and
/// superblock options of the mount that holds the source directory (live,
/// else that mount's fstab line), with the per-mount flags the line names
/// applied on top (mount(8) remounts the bind with them; the filesystem's own
/// options cannot change through a bind).
fn bind_options(
    e: &FstabEntry,
    key: &str,
    opts: &[String],
    entries: &[FstabEntry],
    live: Option<&[Mount]>,
    cx: &dyn Fn(&str, &str) -> FsContext,
) -> Option<(String, Canonical)> {
    let src = normalize_point(&e.spec);
    if !src.starts_with('/') {
        return None;
    }
    let named: Vec<&String> = opts
        .iter()
        .filter(|o| {
            PER_MOUNT_FLAGS.contains(&o.as_str())
                || matches!(
                    o.as_str(),
                    "atime" | "strictatime" | "suid" | "dev" | "exec" | "diratime" | "symfollow"
                )
        })
        .collect();
    // (per-mount words, superblock words, where from)
    let (mut per, sb, from): (Vec<String>, Vec<String>, String) = if let Some(ms) = live {
        let points = ms
            .iter()
            .map(|m| m.target.as_str())
            .filter(|t| point_cow(t) != key);
        let point = mount_of(points, &src).ok()?;
        let m = ms.iter().rev().find(|m| point_cow(&m.target) == point)?;
        let per = m.mount_options.clone().unwrap_or_else(|| {
            m.options
                .iter()
                .filter(|o| PER_MOUNT_FLAGS.contains(&o.as_str()))
                .cloned()
                .collect()
        });
        let sb: Vec<String> = match &m.super_options {
            Some(s) => s
                .iter()
                .filter(|o| *o != "ro" && *o != "rw")
                .cloned()
                .collect(),
            None => m
                .options
                .iter()
                .filter(|o| !PER_MOUNT_FLAGS.contains(&o.as_str()))
                .cloned()
                .collect(),
        };
        (
            per,
            mountopts::running(&sb, &m.fstype),
            format!("{point}, mounted now"),
        )
    } else {
        let points = entries
            .iter()
            .map(|x| x.file.as_str())
            .filter(|t| point_cow(t) != key);
        let point = mount_of(points, &src).ok()?;
        let x = entries.iter().find(|x| fstab_key(x) == point)?;
        let c = mountopts::configured(&expand_defaults(&x.option_list()), &cx(&x.vfstype, &point));
        let (per, sb): (Vec<String>, Vec<String>) = c.options.into_iter().partition(|o| {
            PER_MOUNT_FLAGS.contains(&o.as_str())
                || matches!(o.as_str(), "sync" | "dirsync" | "mand" | "lazytime")
        });
        (per, sb, format!("{point}, /etc/fstab line {}", x.line))
    };
    if !named.is_empty() {
        // the flags the line names replace the source's words for the same flag
        let mut w: Vec<String> = per.clone();
        w.extend(named.iter().map(|s| s.to_string()));
        let c = mountopts::configured(&w, &FsContext::default());
        per = c
            .options
            .into_iter()
            .filter(|o| PER_MOUNT_FLAGS.contains(&o.as_str()))
            .collect();
    }
    let mut options = per;
    options.extend(sb);
    Some((
        from,
        Canonical {
            options,
            ..Canonical::default()
        },
    ))
}
