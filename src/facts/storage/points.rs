//! Mount point text: the canonical form of a mount point ([`normalize_point`]),
//! the key of an fstab line ([`fstab_key`]), the mount point that holds a
//! path ([`mount_of`]) and the mount points the gathered namespaces name
//! ([`mount_points`]). Pure: no I/O, and nothing here reads a host.

use std::borrow::Cow;

use crate::facts::{Entry, Evidence, Facts};
use crate::parse::fstab::FstabEntry;

/// The mount point holding `path`, the one answer for the engine's
/// `mount_of()` and the bind-mount inference: the longest mount point that is
/// `path` or one of its parent directories, compared on whole path components
/// after [`normalize_point`] on both sides (`/var//lib/`, `/var/./lib` and
/// `/var/lib` are one path; `/opt/zimbra/db` does not hold
/// `/opt/zimbra/dbx`), `/` when nothing longer matches. Mount points that are
/// not absolute (`swap:...` keys, `none`) are ignored.
///
/// `Err` with the reason when no answer can be given from the text alone: a
/// relative path, or one with a `..` component (which directory that is
/// depends on the host's symlinks, as `findmnt --target` resolves it).
pub fn mount_of<'a>(
    mount_points: impl Iterator<Item = &'a str>,
    path: &str,
) -> Result<String, &'static str> {
    if !path.starts_with('/') {
        return Err("not an absolute path, so no mount point can hold it");
    }
    let path = point_cow(path);
    if path.split('/').any(|c| c == "..") {
        return Err("has a `..` component, which only the host's symlinks resolve");
    }
    let mut best: Cow<str> = Cow::Borrowed("/");
    for mp in mount_points.filter(|m| m.starts_with('/')) {
        let mp = point_cow(mp);
        let holds = mp == "/"
            || path == mp
            || path
                .strip_prefix(&*mp)
                .is_some_and(|rest| rest.starts_with('/'));
        if holds && mp.len() > best.len() {
            best = mp;
        }
    }
    Ok(best.into_owned())
}

/// A mount point or path in canonical form, as the kernel names it in
/// mountinfo: duplicate and trailing slashes and `.` components removed (`/`
/// stays `/`; `//srv/./data/` is `/srv/data`). `..` is kept: resolving it
/// needs the host's symlinks. Text that is not an absolute path is returned
/// unchanged.
///
/// Most text is canonical already (the kernel's mount table, fstab as
/// admins write it): that is one scan and one copy, no list of components.
pub fn normalize_point(p: &str) -> String {
    point_cow(p).into_owned()
}

/// [`normalize_point`] borrowing text that is canonical already, for the
/// comparisons that need no copy (`normalize_point(t) == key`).
pub(super) fn point_cow(p: &str) -> Cow<'_, str> {
    if !p.starts_with('/') || p == "/" || canonical_components(p.as_bytes()) {
        return Cow::Borrowed(p);
    }
    let mut out = String::with_capacity(p.len());
    for c in p.split('/').filter(|c| !c.is_empty() && *c != ".") {
        out.push('/');
        out.push_str(c);
    }
    if out.is_empty() {
        out.push('/');
    }
    Cow::Owned(out)
}

/// Whether each `/`-separated component of an absolute path after its
/// first `/` is neither empty nor `.` (what `p[1..].split('/')` would
/// check), in one pass over the bytes.
fn canonical_components(b: &[u8]) -> bool {
    let mut start = 1;
    loop {
        let end = b[start..]
            .iter()
            .position(|&c| c == b'/')
            .map_or(b.len(), |i| start + i);
        let c = &b[start..end];
        if c.is_empty() || c == b"." {
            return false;
        }
        if end == b.len() {
            return true;
        }
        start = end + 1;
    }
}

/// Mount points the live mount table and /etc/fstab name, with the line
/// that names each (mount table first): a mount point is a directory that
/// exists, whether or not a snapshot holds it (git keeps no empty
/// directories). Path knowledge for `facts::presence`.
pub fn mount_points(facts: &Facts) -> Vec<(String, Evidence)> {
    let mut out = Vec::new();
    for ns in ["mount", "fstab"] {
        let Some(space) = facts.namespaces.get(ns) else {
            continue;
        };
        for (key, entry) in &space.entries {
            if let (true, Entry::Set(s)) = (key.starts_with('/'), entry) {
                if let Some(e) = s.evidence.first() {
                    out.push((key.clone(), e.clone()));
                }
            }
        }
    }
    out
}

/// [`normalize_point`] as a namespace's key canonicalizer.
pub(super) fn canonical_point(p: &str) -> String {
    normalize_point(p)
}

/// Key of an fstab entry: its mount point, or `swap:SPEC` for swap lines
/// (whose mount point is `none`/`swap`) and other entries without an
/// absolute mount point.
pub fn fstab_key(e: &FstabEntry) -> String {
    if e.is_swap() || !e.file.starts_with('/') {
        format!("{}:{}", if e.is_swap() { "swap" } else { "other" }, e.spec)
    } else {
        normalize_point(&e.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_of_uses_whole_components() {
        let pts = ["/", "/opt/zimbra", "/opt/zimbra/db", "/opt/zimbra/dbx"];
        let m = |p: &str| mount_of(pts.iter().copied(), p);
        assert_eq!(m("/opt/zimbra/db/data").as_deref(), Ok("/opt/zimbra/db"));
        assert_eq!(m("/opt/zimbra/db").as_deref(), Ok("/opt/zimbra/db"));
        assert_eq!(m("/opt/zimbra/db2/x").as_deref(), Ok("/opt/zimbra"));
        assert_eq!(m("/opt/zimbra/dbz").as_deref(), Ok("/opt/zimbra"));
        // a prefix that is not a whole component does not hold the path
        assert_eq!(m("/opt/zimbrax/store").as_deref(), Ok("/"));
        assert_eq!(m("/var//lib/").as_deref(), Ok("/"));
        assert_eq!(mount_of(["/srv"].into_iter(), "/etc").as_deref(), Ok("/"));
        assert!(m("relative").is_err());
        assert!(m("").is_err());
    }

    #[test]
    fn mount_of_normalises_both_sides_as_an_admin_writes_paths() {
        // mount points as fstab lines may spell them
        let pts = [
            "/",
            "/srv/data/",
            "//var//lib",
            "/opt/./zimbra",
            "swap:/dev/sda2",
            "none",
        ];
        let m = |p: &str| mount_of(pts.iter().copied(), p);
        assert_eq!(m("/srv/data").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/data/").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv//data///mysql").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/./data/./mysql").as_deref(), Ok("/srv/data"));
        assert_eq!(m("/srv/database").as_deref(), Ok("/"));
        assert_eq!(m("/var/lib/mysql").as_deref(), Ok("/var/lib"));
        assert_eq!(m("/opt/zimbra/db").as_deref(), Ok("/opt/zimbra"));
        assert_eq!(m("/").as_deref(), Ok("/"));
        assert_eq!(m("//").as_deref(), Ok("/"));
        assert_eq!(m("/.").as_deref(), Ok("/"));
        // `..` depends on symlinks: no guess
        assert!(m("/srv/data/../x").is_err());
        // no mount table entries at all: the root holds everything
        assert_eq!(mount_of(std::iter::empty(), "/x/y").as_deref(), Ok("/"));
        // a root written as `//` or `/./` is the root
        assert_eq!(
            mount_of(["//", "/./home"].into_iter(), "/home/u").as_deref(),
            Ok("/home")
        );
    }

    #[test]
    fn normalize_point_edge_cases() {
        assert_eq!(normalize_point("/"), "/");
        assert_eq!(normalize_point("//"), "/");
        assert_eq!(normalize_point("/."), "/");
        assert_eq!(normalize_point("/./"), "/");
        assert_eq!(normalize_point("//srv/./data/"), "/srv/data");
        assert_eq!(normalize_point("/srv/.data"), "/srv/.data");
        assert_eq!(normalize_point("/srv/../x"), "/srv/../x");
        assert_eq!(normalize_point("none"), "none");
        assert_eq!(normalize_point("swap:/dev/sda2"), "swap:/dev/sda2");
    }
}
