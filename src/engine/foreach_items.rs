//! What a `for_each:` rule expands to on a host ([`expand`]): the items of
//! a list parameter, the keys of a flat namespace matching a `*` glob
//! ([`StarPattern`]), or the records of a record namespace, each optionally
//! kept by a `where:` filter; or the rule's one finding when there are none
//! to judge (`unknown` when the namespace was not captured, one `skip`
//! saying the set is empty otherwise, `error` past the item limit). Must
//! not do I/O (the plan gathered every key a glob can match) or judge an
//! item (that is `foreach`).

use std::collections::BTreeMap;

use super::eval::{ItemKey, RuleCx};
use super::finding::base_finding;
use crate::expr::eval::{eval, Binding, Missing};
use crate::facts::{Entry, Facts};
use crate::policy::{Filter, ForEach, ForEachSource, Policy, Rule, MAX_FOR_EACH_ITEMS};
use crate::report::{Finding, Status};
use crate::value::Value;

/// One item of a `for_each`, before it is judged.
pub(super) struct Item {
    /// What the bound name holds.
    pub(super) value: Value,
    /// For key and record items: the namespace, key and `*` matches.
    pub(super) key: Option<ItemKey>,
    /// The subject when the rule has no `subject:` template.
    pub(super) subject: String,
    /// A list item's place in the list: its compiled form is the rule's
    /// `for_each` items' (`ForEach::items`).
    pub(super) index: Option<usize>,
}

/// The items `fe` expands to on this host, or the one finding that says
/// why there are none to judge: the source's items ([`param_items`],
/// [`key_items`], [`record_items`]), then the checks every source shares
/// (no items, more than [`MAX_FOR_EACH_ITEMS`]).
pub(super) fn expand(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
) -> Result<Vec<Item>, Box<Finding>> {
    let finding = |status: Status, text: String| {
        let mut f = base_finding(rule, status);
        f.explanation = text;
        if status == Status::Unknown {
            f.fix = facts.unreadable_fix().into();
        }
        Box::new(f)
    };
    let items: Vec<Item> = match &fe.source {
        ForEachSource::Param(name) => {
            let Some(Value::List(list)) = policy.and_then(|p| p.params.get(name)) else {
                return Err(finding(
                    Status::Error,
                    format!("for_each: the parameter `{name}` is not a list of items"),
                ));
            };
            param_items(name, list)
        }
        ForEachSource::Keys {
            ns,
            pattern,
            filter,
        } => key_items(rule, policy, facts, fe, ns, pattern, filter, &finding)?,
        ForEachSource::Records { ns, filter } => {
            record_items(rule, policy, facts, fe, ns, filter, &finding)?
        }
    };
    if items.is_empty() {
        return Err(finding(
            Status::Skip,
            "for_each: the list has no items: nothing to judge".into(),
        ));
    }
    if items.len() > MAX_FOR_EACH_ITEMS {
        return Err(finding(
            Status::Error,
            format!(
                "for_each expands to {} items on this host, more than the limit of {MAX_FOR_EACH_ITEMS} per rule: not judged",
                items.len()
            ),
        ));
    }
    Ok(items)
}

/// The items of the list parameter `name`: each subject its `id`, `name`
/// or `key` field, else `NAME[N]`.
fn param_items(name: &str, list: &[Value]) -> Vec<Item> {
    list.iter()
        .enumerate()
        .map(|(i, v)| {
            let field = |f: &str| match v {
                Value::Record(m) => m.get(f).map(Value::to_plain),
                _ => None,
            };
            Item {
                subject: field("id")
                    .or_else(|| field("name"))
                    .or_else(|| field("key"))
                    .unwrap_or_else(|| format!("{name}[{}]", i + 1)),
                index: Some(i),
                value: v.clone(),
                key: None,
            }
        })
        .collect()
}

/// The keys of `ns` matching `pattern` that its `where:` keeps, each bound
/// to the text its `*`s matched; none is the rule's `skip`.
#[allow(clippy::too_many_arguments)]
fn key_items(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    ns: &str,
    pattern: &str,
    filter: &Option<Filter>,
    finding: &dyn Fn(Status, String) -> Box<Finding>,
) -> Result<Vec<Item>, Box<Finding>> {
    let space = namespace(facts, ns).map_err(|why| finding(Status::Unknown, why))?;
    let mut out = Vec::new();
    let glob = StarPattern::new(pattern);
    for key in space.entries.keys() {
        if let Some(parts) = glob.matches(key) {
            let value = Value::Str(parts.join("."));
            let item = ItemKey {
                ns: ns.to_string(),
                key: key.clone(),
                parts,
            };
            let Some((value, item)) = kept(rule, policy, facts, fe, filter, value, item, finding)?
            else {
                continue;
            };
            out.push(Item {
                subject: value.to_plain(),
                value,
                key: Some(item),
                index: None,
            });
        }
    }
    if out.is_empty() {
        let which = match filter {
            Some(_) => " and passes the rule's `where:`",
            None => "",
        };
        return Err(finding(
            Status::Skip,
            format!("no key of {ns} matches `{pattern}`{which} on this host: nothing to judge"),
        ));
    }
    Ok(out)
}

/// The records of `ns` that its `where:` keeps (an unreadable one as an
/// empty record); none is the rule's `skip`.
fn record_items(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    ns: &str,
    filter: &Option<Filter>,
    finding: &dyn Fn(Status, String) -> Box<Finding>,
) -> Result<Vec<Item>, Box<Finding>> {
    let space = namespace(facts, ns).map_err(|why| finding(Status::Unknown, why))?;
    let mut out = Vec::new();
    for (key, entry) in &space.entries {
        let value = match entry {
            Entry::Set(s) => s.value.clone(),
            Entry::Unreadable { .. } => Value::Record(Default::default()),
        };
        let item = ItemKey {
            ns: ns.to_string(),
            key: key.clone(),
            parts: Vec::new(),
        };
        let Some((value, item)) = kept(rule, policy, facts, fe, filter, value, item, finding)?
        else {
            continue;
        };
        out.push(Item {
            value,
            subject: key.clone(),
            key: Some(item),
            index: None,
        });
    }
    if out.is_empty() {
        let which = match filter {
            Some(w) if w.text.chars().count() <= 60 => format!(" where `{}`", w.text),
            Some(_) => " that passes the rule's `where:`".into(),
            None => String::new(),
        };
        return Err(finding(
            Status::Skip,
            format!("no {ns} record{which} on this host: nothing to judge"),
        ));
    }
    Ok(out)
}

/// The gathered namespace, or why it cannot be iterated: not gathered, or
/// unavailable (naming the capture that would hold it).
fn namespace<'f>(facts: &'f Facts, ns: &str) -> Result<&'f crate::facts::Namespace, String> {
    let captures = crate::catalogue::namespace(ns)
        .map(|n| {
            n.captures
                .iter()
                .map(|c| c.path)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let would = if captures.is_empty() {
        String::new()
    } else {
        format!("; a snapshot with {captures} would decide it")
    };
    match facts.namespaces.get(ns) {
        None => Err(format!(
            "cannot list the items: no `{ns}` values were gathered for this host{would}"
        )),
        Some(space) => match &space.unavailable {
            Some(reason) => Err(format!("cannot list the items: {ns}: {reason}{would}")),
            None => Ok(space),
        },
    }
}

/// A `*` glob, split at its stars once to be matched against every key of
/// a namespace: [`StarPattern::matches`] gives the texts each `*` matched
/// in a key (shortest first, so with several `*` the earlier ones take as
/// little as they can), or `None` when the key does not match. A `*`
/// matches any text, `.`, `/` and `-` included (`eth0/100`, `br-lan`), but
/// never nothing.
pub(crate) struct StarPattern<'p> {
    pieces: Vec<&'p str>,
}

impl<'p> StarPattern<'p> {
    pub(crate) fn new(pattern: &'p str) -> StarPattern<'p> {
        StarPattern {
            pieces: pattern.split('*').collect(),
        }
    }

    /// The texts the stars matched in `key`: a key that does not begin with
    /// the text before the first `*` and end with the text after the last
    /// is turned away before any text is copied; the matches are copied
    /// once found, not on each try.
    pub(crate) fn matches(&self, key: &str) -> Option<Vec<String>> {
        /// `key[at..]` against `pat`; each `*`'s match as a byte range.
        fn go(pat: &[&str], key: &str, at: usize, out: &mut Vec<(usize, usize)>) -> bool {
            let Some((first, rest)) = pat.split_first() else {
                return at == key.len();
            };
            if rest.is_empty() {
                // the last literal ends the key
                return &key[at..] == *first;
            }
            let Some(after) = key[at..].strip_prefix(first) else {
                return false;
            };
            let start = at + first.len();
            // `after` starts with what a `*` matched, then rest[0]...
            for (i, _) in after.char_indices().skip(1).chain([(after.len(), ' ')]) {
                if i == 0 {
                    continue;
                }
                out.push((start, start + i));
                if go(rest, key, start + i, out) {
                    return true;
                }
                out.pop();
            }
            false
        }
        let (first, last) = (self.pieces[0], self.pieces[self.pieces.len() - 1]);
        if !key.starts_with(first) || !key.ends_with(last) {
            return None;
        }
        let mut spans = Vec::with_capacity(self.pieces.len() - 1);
        go(&self.pieces, key, 0, &mut spans)
            .then(|| spans.iter().map(|&(a, b)| key[a..b].to_string()).collect())
    }
}

/// The item (moved in and out, not copied) when the rule's `where:`
/// filter keeps it, evaluated in the rule's scope with the item bound and
/// host data limited to facts and the item's own value
/// ([`RuleCx::in_where`]): false or absent leaves it out, an error or an
/// unknown is the rule's one finding (naming the item).
#[allow(clippy::too_many_arguments)]
fn kept(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    filter: &Option<Filter>,
    value: Value,
    item: ItemKey,
    finding: &dyn Fn(Status, String) -> Box<Finding>,
) -> Result<Option<(Value, ItemKey)>, Box<Finding>> {
    let Some(Filter { expr: e, text, .. }) = filter else {
        return Ok(Some((value, item)));
    };
    let mut cx = RuleCx::new(facts, rule, policy);
    cx.in_where = true;
    cx.item = Some(Binding {
        name: fe.bind.clone(),
        value,
        key: Some(item),
        field_errors: BTreeMap::new(),
    });
    let keep = eval(e, &cx).and_then(|v| crate::expr::eval::truthy(&v));
    let Some(Binding {
        value,
        key: Some(item),
        ..
    }) = cx.item.take()
    else {
        unreachable!("the item was bound above");
    };
    match keep {
        Ok(true) => Ok(Some((value, item))),
        Ok(false) | Err(Missing::Absent { .. }) => Ok(None),
        Err(m) => Err(finding(
            if matches!(m, Missing::Error(_)) {
                Status::Error
            } else {
                Status::Unknown
            },
            format!(
                "for_each: `where: {text}` on {}[\"{}\"]: {m}",
                item.ns, item.key
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::StarPattern;
    use crate::policy::{Code, PolicySet};
    use crate::report::Status;

    /// A rule over the mounts of `testdata/foreach/ifaces` whose `where:`
    /// is `filter`.
    fn mounts(filter: &str) -> String {
        format!(
            "policy: t\ntitle: t\nrules:\n  - id: t.ext4\n    title: t\n    severity: low\n    \
             for_each: {{ records: mount, where: \"{filter}\", as: m }}\n    \
             assert: m.atime == 'noatime'\n    why: \"{{m.key}} {{m.fstype}}\"\n    fix: f\n"
        )
    }

    #[test]
    fn a_where_naming_a_record_field_bare_loads_with_a_warning_and_judges_as_the_bound_field() {
        let host = crate::host::Host::snapshot(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/foreach/ifaces"
        ))
        .unwrap();
        let judged = |filter: &str| {
            let mut set = PolicySet::new();
            set.add_str("t.yaml", &mounts(filter)).unwrap();
            let facts = crate::engine::gather(&set, &host);
            let rule = &set.rules()[0];
            let fe = rule.for_each.as_ref().unwrap();
            let findings = super::super::foreach::check(
                rule,
                set.policy_of(rule),
                set.item_selection(rule),
                &facts,
                fe,
            );
            let warnings: Vec<String> = set.warnings().iter().map(|w| w.message.clone()).collect();
            assert!(set
                .warnings()
                .iter()
                .all(|w| w.code == Code::WhereBareField));
            let shown: Vec<(Status, Vec<String>, String)> = findings
                .into_iter()
                .map(|f| (f.status, f.subject, f.explanation))
                .collect();
            (shown, warnings)
        };
        let (old, warned) = judged("fstype == 'ext4' and present(options)");
        let (new, none) = judged("m.fstype == 'ext4' and present(m.options)");
        assert_eq!(
            warned,
            [
                "`where:` reads the item by its bound name: `fstype` is read as the record's field; write `m.fstype`",
                "`where:` reads the item by its bound name: `options` is read as the record's field; write `m.options`",
            ]
        );
        assert!(none.is_empty(), "{none:?}");
        assert_eq!(old, new);
        // the filter kept some mounts and left others out
        assert!(old.iter().any(|(s, _, _)| *s == Status::Fail), "{old:?}");
        assert!(old.len() >= 2, "{old:?}");
    }

    /// A reference matcher: `*` matches one or more characters, each as
    /// little as it can, tried by brute force over every split.
    fn reference(pattern: &str, key: &str) -> Option<Vec<String>> {
        fn go(pat: &[&str], key: &str, out: &mut Vec<String>) -> bool {
            match pat {
                [] => key.is_empty(),
                [last] => key == *last,
                [first, rest @ ..] => {
                    let Some(after) = key.strip_prefix(first) else {
                        return false;
                    };
                    let ends: Vec<usize> = after
                        .char_indices()
                        .map(|(i, _)| i)
                        .skip(1)
                        .chain([after.len()])
                        .filter(|i| *i > 0)
                        .collect();
                    for i in ends {
                        out.push(after[..i].to_string());
                        if go(rest, &after[i..], out) {
                            return true;
                        }
                        out.pop();
                    }
                    false
                }
            }
        }
        let pieces: Vec<&str> = pattern.split('*').collect();
        let mut out = Vec::new();
        go(&pieces, key, &mut out).then_some(out)
    }

    proptest::proptest! {
        #[test]
        fn a_star_pattern_matches_as_the_brute_force_reference_does(
            pattern in "[ab.é*]{0,6}",
            key in "[ab.é]{0,8}",
        ) {
            proptest::prop_assert_eq!(
                StarPattern::new(&pattern).matches(&key),
                reference(&pattern, &key),
                "{} {}", pattern, key
            );
        }
    }

    fn m(p: &str, k: &str) -> Option<Vec<String>> {
        StarPattern::new(p).matches(k)
    }

    #[test]
    fn a_star_binds_what_it_matched_slashes_and_dashes_included() {
        let p = "net.ipv4.conf.*.rp_filter";
        assert_eq!(
            m(p, "net.ipv4.conf.eth0.rp_filter"),
            Some(vec!["eth0".into()])
        );
        assert_eq!(
            m(p, "net.ipv4.conf.eth0/100.rp_filter"),
            Some(vec!["eth0/100".into()])
        );
        assert_eq!(
            m(p, "net.ipv4.conf.br-lan.rp_filter"),
            Some(vec!["br-lan".into()])
        );
        assert_eq!(m(p, "net.ipv4.conf.eth0.accept_redirects"), None);
        assert_eq!(
            m(p, "net.ipv4.conf..rp_filter"),
            None,
            "a star never matches nothing"
        );
        assert_eq!(m(p, "xnet.ipv4.conf.eth0.rp_filter"), None);
    }

    #[test]
    fn several_stars_each_take_as_little_as_they_can() {
        assert_eq!(
            m("net.*.conf.*.rp_filter", "net.ipv6.conf.a.b.rp_filter"),
            Some(vec!["ipv6".into(), "a.b".into()])
        );
        assert_eq!(m("a.*", "a.b.c"), Some(vec!["b.c".into()]));
        // the text after the last `*` ends the key
        assert_eq!(m("*.x", "a.x.x"), Some(vec!["a.x".into()]));
    }
}
