//! The versions that changed between the sides: the server's and the
//! kernel's ([`version_changes`]), and the MySQL/MariaDB values that changed
//! only because the release changed their default ([`default_driven`], from
//! the upgrade data). Reads gathered facts only; must not compare settings
//! (that is `settings`).

use crate::facts::{Entry, Facts};
use crate::report::diff::{DefaultDrivenChange, VersionChange};
use crate::value::Value;

/// The server and kernel versions that differ between the sides.
pub fn version_changes(b: &Facts, a: &Facts) -> Vec<VersionChange> {
    let text = |f: &Facts, k: &str| match f.facts.get(k) {
        Some(Ok(v)) => Some(v.to_plain()),
        _ => None,
    };
    ["mysql_version", "kernel_release"]
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (text(b, k), text(a, k));
            (x != y && (x.is_some() || y.is_some())).then(|| VersionChange {
                fact: k.to_string(),
                before: x,
                after: y,
            })
        })
        .collect()
}

/// Effective MySQL/MariaDB values that changed only because the release
/// changed the default (policies/upgrade): the version rose within one
/// product, no option file sets the variable on either side, and the data
/// has a default change between the two versions. Values are the runtime
/// captures' where both sides have one, else the data's defaults.
pub fn default_driven(b: &Facts, a: &Facts) -> Vec<DefaultDrivenChange> {
    use crate::facts::mysql::ServerVersion;
    use crate::upgrade::data::{builtin_for, Product};
    let version = |f: &Facts| match f.facts.get("mysql_version") {
        Some(Ok(Value::Str(s))) => ServerVersion::parse(s),
        _ => None,
    };
    let (Some(vb), Some(va)) = (version(b), version(a)) else {
        return Vec::new();
    };
    if vb.mariadb != va.mariadb || vb.parts >= va.parts {
        return Vec::new();
    }
    let product = if va.mariadb {
        Product::Mariadb
    } else {
        Product::Mysql
    };
    let Ok(k) = builtin_for(product) else {
        return Vec::new();
    };
    let set_in_files = |f: &Facts, name: &str| {
        f.namespaces
            .get("mycnf")
            .is_some_and(|n| n.entries.contains_key(name))
    };
    let runtime = |f: &Facts, name: &str| match f.namespaces.get("mysql").and_then(|n| n.get(name))
    {
        Some(Entry::Set(s)) => Some(s.raw.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    for e in &k.entries {
        let inside: Vec<_> = e
            .defaults
            .iter()
            .filter(|d| !d.in_effect(&vb.parts) && d.in_effect(&va.parts))
            .collect();
        let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
            continue;
        };
        if set_in_files(b, &e.name) || set_in_files(a, &e.name) {
            continue;
        }
        let (before, after, from) = match (runtime(b, &e.name), runtime(a, &e.name)) {
            (Some(x), Some(y)) if x.eq_ignore_ascii_case(&y) => continue,
            (Some(x), Some(y)) => (x, y, "runtime"),
            _ => (first.old.clone(), last.new.clone(), "data"),
        };
        out.push(DefaultDrivenChange {
            subject: e.name.clone(),
            before,
            after,
            from,
            // the release of the after server's line that made it
            changed_in: last
                .lines
                .iter()
                .find(|l| l.0.get(..2) == va.parts.get(..2))
                .unwrap_or(&last.version)
                .to_string(),
            reference: e.reference.clone(),
        });
    }
    out
}
