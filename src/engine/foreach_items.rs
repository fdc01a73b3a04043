//! What a `for_each:` rule expands to on a host ([`expand`]): the items of
//! a list parameter, the keys of a flat namespace matching a `*` glob
//! ([`StarPattern`]), or the records of a record namespace, each optionally
//! kept by a `where:` filter; or the rule's one finding when there are none
//! to judge (`unknown` when the namespace was not captured, one `skip`
//! saying the set is empty otherwise, `error` past the item limit). Must
//! not do I/O (the plan gathered every key a glob can match) or judge an
//! item (that is `foreach`).

use super::eval::ItemKey;
use super::finding::base_finding;
use crate::expr::eval::{eval, record_field, Context, Missing};
use crate::expr::Expr;
use crate::facts::{Entry, Facts};
use crate::policy::{ForEach, ForEachSource, Policy, Rule, MAX_FOR_EACH_ITEMS};
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
    /// A list item's `when` condition, as written.
    pub(super) when: Option<String>,
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
        } => key_items(policy, facts, fe, ns, pattern, filter, &finding)?,
        ForEachSource::Records { ns, filter } => {
            record_items(policy, facts, fe, ns, filter, &finding)?
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
                when: field("when"),
                value: v.clone(),
                key: None,
            }
        })
        .collect()
}

/// The keys of `ns` matching `pattern` that its `where:` keeps, each bound
/// to the text its `*`s matched; none is the rule's `skip`.
fn key_items(
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    ns: &str,
    pattern: &str,
    filter: &Option<(Expr, String)>,
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
            if let Some((e, text)) = filter {
                let cx = RecordCx {
                    record: &value,
                    item: &item,
                    bind: &fe.bind,
                    policy,
                    facts,
                };
                if !kept(e, text, &cx, finding)? {
                    continue;
                }
            }
            out.push(Item {
                subject: value.to_plain(),
                value,
                key: Some(item),
                when: None,
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
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    ns: &str,
    filter: &Option<(Expr, String)>,
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
        if let Some((e, text)) = filter {
            let cx = RecordCx {
                record: &value,
                item: &item,
                bind: &fe.bind,
                policy,
                facts,
            };
            if !kept(e, text, &cx, finding)? {
                continue;
            }
        }
        out.push(Item {
            value,
            subject: key.clone(),
            key: Some(item),
            when: None,
        });
    }
    if out.is_empty() {
        let which = match filter {
            Some((_, text)) if text.chars().count() <= 60 => format!(" where `{text}`"),
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

/// The context of a `where:` filter: the record's fields by name, the
/// bound name for the record itself, the policy's parameters and facts.
/// Whether a `where:` filter keeps an item: false or absent leaves it out,
/// an error or an unknown is the rule's one finding (naming the item).
fn kept(
    e: &Expr,
    text: &str,
    cx: &RecordCx,
    finding: &dyn Fn(Status, String) -> Box<Finding>,
) -> Result<bool, Box<Finding>> {
    match eval(e, cx).and_then(|v| crate::expr::eval::truthy(&v)) {
        Ok(keep) => Ok(keep),
        Err(Missing::Absent { .. }) => Ok(false),
        Err(m) => Err(finding(
            if matches!(m, Missing::Error(_)) {
                Status::Error
            } else {
                Status::Unknown
            },
            format!(
                "for_each: `where: {text}` on {}[\"{}\"]: {m}",
                cx.item.ns, cx.item.key
            ),
        )),
    }
}

/// What a `where:` filter reads: the item (a record's fields, or a key
/// item's matched text), `NAME.key` (the item's key), `NAME.value` (a key
/// item's value), facts and `params`.
struct RecordCx<'a> {
    record: &'a Value,
    item: &'a ItemKey,
    bind: &'a str,
    policy: Option<&'a Policy>,
    facts: &'a Facts,
}

impl Context for RecordCx<'_> {
    fn name(&self, name: &str) -> Result<Value, Missing> {
        if name == self.bind {
            return Ok(self.record.clone());
        }
        if let Value::Record(m) = self.record {
            if let Some(v) = m.get(name) {
                return Ok(v.clone());
            }
        }
        match self.facts.facts.get(name) {
            Some(Ok(v)) => Ok(v.clone()),
            Some(Err(reason)) => Err(Missing::Unknown {
                subject: name.into(),
                reason: reason.clone(),
            }),
            None => Err(Missing::Absent {
                subject: name.into(),
                reason: "the record has no such field".into(),
            }),
        }
    }
    fn param(&self, name: &str) -> Result<Value, Missing> {
        self.policy
            .and_then(|p| p.params.get(name))
            .cloned()
            .ok_or_else(|| Missing::Error(format!("unknown parameter `{name}`")))
    }
    fn setting(&self, ns: &str, _key: &str) -> Result<Value, Missing> {
        Err(Missing::Error(format!(
            "a `where:` filter reads the item (its fields, `.key`, `.value`), not `{ns}`"
        )))
    }
    fn name_field(&self, name: &str, field: &str) -> Option<Result<Value, Missing>> {
        if name != self.bind {
            return None;
        }
        // a record's own field wins, read in place (not from a copy of the
        // whole record)
        if let Value::Record(m) = self.record {
            if let Some(v) = m.get(field) {
                return Some(Ok(v.clone()));
            }
        }
        match field {
            "key" => Some(Ok(Value::Str(self.item.key.clone()))),
            "value" if !self.item.parts.is_empty() => {
                let entry = self
                    .facts
                    .namespaces
                    .get(&self.item.ns)
                    .and_then(|s| s.entries.get(&self.item.key));
                Some(match entry {
                    Some(Entry::Set(s)) => Ok(s.value.clone()),
                    _ => Err(Missing::Unknown {
                        subject: self.item.key.clone(),
                        reason: "unreadable on this host".into(),
                    }),
                })
            }
            "parts" if !self.item.parts.is_empty() => Some(Ok(Value::List(
                self.item.parts.iter().cloned().map(Value::Str).collect(),
            ))),
            // what the record read as a whole would answer, in place
            _ => match self.record {
                Value::Record(m) => Some(record_field(m, field)),
                _ => None,
            },
        }
    }
    fn dir_size(&self, path: &str) -> Result<Value, Missing> {
        Err(Missing::Error(format!(
            "a `where:` filter cannot size `{path}`"
        )))
    }
    fn mount_of(&self, path: &str) -> Result<Value, Missing> {
        Err(Missing::Error(format!(
            "a `where:` filter cannot look up the mount of `{path}`"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::StarPattern;

    /// How keys were matched before the pattern was split once: copying
    /// each try.
    fn by_copies(pattern: &str, key: &str) -> Option<Vec<String>> {
        fn go(pat: &[&str], key: &str, out: &mut Vec<String>) -> bool {
            let Some((first, rest)) = pat.split_first() else {
                return key.is_empty();
            };
            if rest.is_empty() {
                return key == *first;
            }
            let Some(after) = key.strip_prefix(first) else {
                return false;
            };
            for (i, _) in after.char_indices().skip(1).chain([(after.len(), ' ')]) {
                if i == 0 {
                    continue;
                }
                out.push(after[..i].to_string());
                if go(rest, &after[i..], out) {
                    return true;
                }
                out.pop();
            }
            false
        }
        let pieces: Vec<&str> = pattern.split('*').collect();
        let mut out = Vec::new();
        go(&pieces, key, &mut out).then_some(out)
    }

    #[test]
    fn a_glob_split_once_matches_every_key_as_the_copying_match_did() {
        let patterns = [
            "net.ipv4.conf.*.rp_filter",
            "net.*.conf.*.rp_filter",
            "a.*",
            "*.x",
            "*",
            "**",
            "x*x",
            "a.b",
            "",
            "é*ü*",
        ];
        let keys = [
            "net.ipv4.conf.eth0.rp_filter",
            "net.ipv6.conf.a.b.rp_filter",
            "net.ipv4.conf..rp_filter",
            "a.b.c",
            "a.",
            "a.x.x",
            "xx",
            "xax",
            "x",
            "",
            "a.b",
            "éaüb",
            "éü",
            "éüü",
        ];
        for p in patterns {
            let glob = StarPattern::new(p);
            for k in keys {
                assert_eq!(glob.matches(k), by_copies(p, k), "{p} {k}");
            }
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
