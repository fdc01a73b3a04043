//! The `NS_open` globs of a closed namespace: the keys its closed world
//! does not judge (other interfaces' keys, `--keys`, the ignore lists, the
//! keys left out), each written so it matches only what it means. Must not
//! write the policy text or audit.

use std::collections::BTreeSet;

use super::model::{Baseline, BaselineOptions, Pin, DEFAULT_IGNORE, PER_INTERFACE, PINNABLE};

/// A key as a glob that matches only it (`[*]` for a `*`); a leading `!`,
/// which `matches` reads as "judge again", is written `?` (such a key's
/// glob also matches any other first character).
pub(super) fn exact_glob(key: &str) -> String {
    let g = no_reference(&glob::Pattern::escape(key));
    match g.strip_prefix('!') {
        Some(rest) => format!("?{rest}"),
        None => g,
    }
}

/// The globs of keys of `ns` the closed world does not judge: per-interface
/// keys of interfaces the golden host has no key of, then (with `--keys`)
/// every key those globs do not select, whatever its interface, then the
/// default ignore list and `--ignore`. The namespace's
/// left-out keys are added when the policy is written. In `matches`
/// order: the last glob that matches decides, `!GLOB` judges again.
pub(super) fn open_globs(ns: &str, pins: &[Pin], opts: &BaselineOptions) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let own = |g: &str| -> Option<String> {
        match g.split_once('.') {
            Some((n, rest)) if n == ns => Some(rest.to_string()),
            Some((n, _)) if PINNABLE.iter().any(|(p, _)| *p == n) => None,
            _ => Some(g.to_string()),
        }
    };
    if ns.starts_with("sysctl") {
        let mut ifaces = BTreeSet::new();
        for p in pins {
            for fam in PER_INTERFACE {
                if let Some(rest) = p.key.strip_prefix(fam).and_then(|r| r.strip_prefix('.')) {
                    if let Some((iface, _)) = rest.split_once('.') {
                        ifaces.insert((*fam, iface.to_string()));
                    }
                }
            }
        }
        for fam in PER_INTERFACE {
            out.push((
                format!("{fam}.*"),
                "an interface the golden host has no key of (names differ between hosts)".into(),
            ));
            for iface in ["all", "default"] {
                out.push((
                    format!("!{fam}.{iface}.*"),
                    "every host has it: judged".into(),
                ));
            }
            for (_, iface) in ifaces.iter().filter(|(f, _)| f == fam) {
                if iface != "all" && iface != "default" {
                    out.push((
                        format!("!{fam}.{}.*", glob::Pattern::escape(iface)),
                        "an interface of the golden host: judged".into(),
                    ));
                }
            }
        }
    }
    if !opts.keys.is_empty() {
        out.push(("*".into(), "not selected by `--keys`".into()));
        out.extend(
            opts.keys
                .iter()
                .filter_map(|g| own(g))
                .map(|g| (format!("!{g}"), "selected by `--keys`".into())),
        );
    }
    if ns == "fstab" || ns == "mount" {
        out.push((
            "[!/]*".into(),
            "not a mount point (swap or a pseudo entry)".into(),
        ));
    }
    if !opts.no_default_ignore {
        out.extend(
            DEFAULT_IGNORE
                .iter()
                .filter(|(g, _)| ignore_applies(g, ns))
                .map(|(g, why)| (g.to_string(), why.to_string())),
        );
    }
    out.extend(
        opts.ignore
            .iter()
            .filter_map(|g| own(g))
            .map(|g| (no_reference(&g), "left out by `--ignore`".into())),
    );
    out
}

/// A glob with each `$` written `[$]`: the same keys, and no `${` that
/// the policy loader would read as a reference.
pub(super) fn no_reference(glob: &str) -> String {
    glob.replace('$', "[$]")
}

/// Whether a [`DEFAULT_IGNORE`] glob can match a key of `ns`: mount points
/// in `fstab`/`mount`, `zimbra_*` in `localconfig`, dotted kernel keys in
/// the sysctl namespaces, the others (MySQL options) in the MySQL ones.
pub(super) fn ignore_applies(glob: &str, ns: &str) -> bool {
    if glob.starts_with('/') {
        matches!(ns, "fstab" | "mount")
    } else if glob.starts_with("zimbra_") {
        ns == "localconfig"
    } else if glob.contains('.') {
        ns.starts_with("sysctl")
    } else {
        matches!(ns, "mycnf_effective" | "mycnf" | "zimbra_mycnf" | "mysql")
    }
}

/// Each closed namespace that has pins, with its `NS_open` globs: the
/// options' globs, then every key of it the baseline left out.
pub(super) fn open_lists(b: &Baseline) -> Vec<(String, Vec<(String, String)>)> {
    b.pins
        .iter()
        .filter_map(|(ns, _)| {
            let mut globs = b.closed.get(ns)?.clone();
            globs.extend(
                b.left_out
                    .iter()
                    .filter(|l| &l.namespace == ns)
                    .map(|l| (exact_glob(&l.key), format!("left out: {}", l.reason))),
            );
            Some((ns.clone(), globs))
        })
        .collect()
}
