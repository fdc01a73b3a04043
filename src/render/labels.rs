//! One label per host name for the formats that key on hosts (JUnit test
//! suites, Prometheus `host` labels): printable and unique. Pure text: must
//! not render a report.

use std::borrow::Cow;

use crate::printable::printable;

/// One label per host name, unique by construction: the name made
/// [`printable`], and from the second host whose label is taken on (two
/// snapshots of one host, or hosts named `a`, `a` and `a#2`) `LABEL#N` with
/// the first N that no host has yet, so no two hosts share a label.
///
/// ```
/// use driftaudit::unstable::render::unique_labels;
/// assert_eq!(unique_labels(["a", "a", "a#2"]), ["a", "a#2", "a#2#2"]);
/// ```
pub fn unique_labels<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    unique_labels_shown(names, |name| printable(name, false))
}

/// [`unique_labels`] for a format that shows a name its own way: each
/// label is `shown(name)` (printable text the format's reader gets back
/// as it is written), made unique as [`unique_labels`] makes it, so the
/// labels are unique as the format's reader reads them.
pub(crate) fn unique_labels_shown<'a>(
    names: impl IntoIterator<Item = &'a str>,
    shown: impl Fn(&'a str) -> Cow<'a, str>,
) -> Vec<String> {
    let mut used = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for name in names {
        let base = shown(name).into_owned();
        let mut label = base.clone();
        let mut n = 1;
        while used.contains(&label) {
            n += 1;
            label = format!("{base}#{n}");
        }
        used.insert(label.clone());
        out.push(label);
    }
    out
}
