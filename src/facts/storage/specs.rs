//! The device an fstab spec names: `UUID=`/`LABEL=`/`PARTUUID=`/`PARTLABEL=`
//! tags and `/dev/disk/by-*` links resolved through the host's
//! `/dev/disk/by-*` (udev's `\xNN` escapes decoded), and the capture name
//! of a device. Reads links only (never a file's content); reads no
//! superblock and builds no namespace.

use crate::host::Host;
use crate::parse::fstab::spec_tag;

/// Resolve `UUID=`/`LABEL=`/`PARTUUID=`/`PARTLABEL=` through `/dev/disk/by-*`
/// (inside the host root); other specs are returned unchanged.
pub(super) fn resolve_spec(host: &Host, spec: &str) -> String {
    let Some((tag, value)) = spec_tag(spec) else {
        return spec.to_string();
    };
    let dir = match tag {
        "UUID" => "by-uuid",
        "LABEL" => "by-label",
        "PARTUUID" => "by-partuuid",
        "PARTLABEL" => "by-partlabel",
        _ => return spec.to_string(),
    };
    if value.contains('/') {
        return spec.to_string();
    }
    match host.resolve(&format!("/dev/disk/{dir}/{value}")) {
        Ok(p) if p.starts_with("/dev/") => p,
        _ => spec.to_string(),
    }
}

/// The device an fstab spec names: a `/dev/` path with its links followed,
/// or the device a tag's `/dev/disk/by-*` link points at; `None` when it
/// cannot be told here (a tag or by-* link the host or snapshot lacks).
pub(super) fn spec_device(host: &Host, spec: &str) -> Option<String> {
    let dev = match spec_tag(spec) {
        Some(_) => resolve_spec(host, spec),
        None => spec.to_string(),
    };
    if !dev.starts_with("/dev/") {
        return None;
    }
    let real = match host.resolve(&dev) {
        Ok(r) => r,
        // a by-* link the host (or snapshot) lacks names no device we know
        Err(_) if tag_of_spec(&dev).is_some() => return None,
        Err(_) => dev,
    };
    Some(real)
}

/// The udev symlink directories under `/dev/disk/` and the tag each names:
/// `/dev/disk/by-uuid/X` is the device `UUID=X` names (udev's
/// 60-persistent-storage.rules make these links from the same blkid values).
const BY_DIRS: [(&str, &str); 4] = [
    ("by-uuid", "UUID"),
    ("by-label", "LABEL"),
    ("by-partuuid", "PARTUUID"),
    ("by-partlabel", "PARTLABEL"),
];

/// The tag a spec names, as `TAG=value`: `UUID=`/`LABEL=`/... as written,
/// or a `/dev/disk/by-{uuid,label,partuuid,partlabel}/NAME` path, whose
/// NAME udev wrote with `\xNN` for bytes outside `[A-Za-z0-9#+-.:=@_]`
/// (a label `my data` is `by-label/my\x20data`).
pub fn tag_of_spec(spec: &str) -> Option<String> {
    if let Some((t, v)) = spec_tag(spec) {
        return Some(format!("{t}={v}"));
    }
    let rest = spec.strip_prefix("/dev/disk/")?;
    let (dir, name) = rest.split_once('/')?;
    let tag = BY_DIRS.iter().find(|(d, _)| *d == dir)?.1;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some(format!("{tag}={}", udev_unescape(name)))
}

/// Undo udev's `\xNN` encoding of a /dev/disk/by-* link name; a broken
/// escape stays as written.
fn udev_unescape(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            if let Some(v) = name
                .get(i + 2..i + 4)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The capture name for a device: path without `/dev/`, `/` replaced by `_`.
pub fn capture_name(device: &str) -> String {
    device
        .strip_prefix("/dev/")
        .unwrap_or(device)
        .trim_start_matches('/')
        .replace('/', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disk_by_links_are_tags_with_udev_escapes_decoded() {
        let t = |s: &str| tag_of_spec(s);
        assert_eq!(t("/dev/disk/by-uuid/ab-12").as_deref(), Some("UUID=ab-12"));
        assert_eq!(
            t("/dev/disk/by-label/db\\x20data").as_deref(),
            Some("LABEL=db data")
        );
        assert_eq!(
            t("/dev/disk/by-partuuid/p1").as_deref(),
            Some("PARTUUID=p1")
        );
        assert_eq!(
            t("/dev/disk/by-partlabel/x").as_deref(),
            Some("PARTLABEL=x")
        );
        assert_eq!(t("LABEL=\"a b\"").as_deref(), Some("LABEL=a b"));
        // not a tag: other link directories, nested names, plain devices
        assert_eq!(t("/dev/disk/by-id/ata-X"), None);
        assert_eq!(t("/dev/disk/by-uuid/"), None);
        assert_eq!(t("/dev/disk/by-uuid/a/b"), None);
        assert_eq!(t("/dev/sda1"), None);
        // a broken escape stays as written; never a panic on a short tail
        assert_eq!(udev_unescape("a\\x2"), "a\\x2");
        assert_eq!(udev_unescape("a\\x+1b"), "a\\x+1b");
        assert_eq!(udev_unescape("\\x41\\"), "A\\");
    }

    #[test]
    fn capture_names() {
        assert_eq!(capture_name("/dev/sdb1"), "sdb1");
        assert_eq!(capture_name("/dev/mapper/vg-db"), "mapper_vg-db");
    }
}
