//! `for_each:` rules: the items of a list parameter, of the keys of a flat
//! namespace matching a `*` glob, or of the records of a record namespace
//! (optionally filtered), expanded over gathered facts, and each judged as
//! its own finding (the rule's id, the item first in the subject). An empty
//! expansion is never a silent pass: `unknown` when the namespace was not
//! captured, one `skip` saying the set is empty otherwise. Must not do I/O:
//! the plan gathered every key a glob can match before evaluation starts.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use super::eval::{ItemKey, RuleCx};
use super::finding::{base_finding, missing_finding};
use crate::eval::{eval, Context, Missing};
use crate::expr::Expr;
use crate::facts::{Entry, Facts};
use crate::policy::{
    Applies, Check, ForEach, ForEachSource, Policy, Remedy, Rule, Template, TemplatePart,
    MAX_FOR_EACH_ITEMS,
};
use crate::report::{Finding, Status};
use crate::value::Value;

/// One item of a `for_each`, before it is judged.
struct Item {
    /// What the bound name holds.
    value: Value,
    /// For key and record items: the namespace, key and `*` matches.
    key: Option<ItemKey>,
    /// The subject when the rule has no `subject:` template.
    subject: String,
    /// A list item's `when` condition, as written.
    when: Option<String>,
}

/// The items `fe` expands to on this host, or the one finding that says
/// why there are none to judge.
fn expand(
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
        ForEachSource::Keys {
            ns,
            pattern,
            filter,
        } => {
            let space = namespace(facts, ns).map_err(|why| finding(Status::Unknown, why))?;
            let mut out = Vec::new();
            for key in space.entries.keys() {
                if let Some(parts) = star_match(pattern, key) {
                    let value = Value::Str(parts.join("."));
                    let item = ItemKey {
                        ns: ns.clone(),
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
                        if !kept(e, text, &cx, &finding)? {
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
                    format!(
                        "no key of {ns} matches `{pattern}`{which} on this host: nothing to judge"
                    ),
                ));
            }
            out
        }
        ForEachSource::Records { ns, filter } => {
            let space = namespace(facts, ns).map_err(|why| finding(Status::Unknown, why))?;
            let mut out = Vec::new();
            for (key, entry) in &space.entries {
                let value = match entry {
                    Entry::Set(s) => s.value.clone(),
                    Entry::Unreadable { .. } => Value::Record(Default::default()),
                };
                let item = ItemKey {
                    ns: ns.clone(),
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
                    if !kept(e, text, &cx, &finding)? {
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
            out
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

/// The texts each `*` of `pattern` matched in `key` (shortest first, so
/// with several `*` the earlier ones take as little as they can), or
/// `None` when `key` does not match. A `*` matches any text, `.`, `/` and
/// `-` included (`eth0/100`, `br-lan`), but never nothing.
pub(crate) fn star_match(pattern: &str, key: &str) -> Option<Vec<String>> {
    fn go(pat: &[&str], key: &str, out: &mut Vec<String>) -> bool {
        let Some((first, rest)) = pat.split_first() else {
            return key.is_empty();
        };
        if rest.is_empty() {
            // the last literal ends the key
            return key == *first;
        }
        let Some(after) = key.strip_prefix(first) else {
            return false;
        };
        // `after` starts with what a `*` matched, then rest[0]...
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
    match eval(e, cx).and_then(|v| crate::eval::truthy(&v)) {
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
        if let Value::Record(m) = self.record {
            if m.contains_key(field) {
                return None;
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
            _ => None,
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

/// A template rendered as plain text (a key, a path): each placeholder's
/// value as it is, nothing quoted or folded.
fn render_plain(t: &Template, cx: &RuleCx) -> Result<String, Missing> {
    let mut out = String::new();
    for p in &t.parts {
        match p {
            TemplatePart::Text(s) => out.push_str(s),
            TemplatePart::Expr(e) => out.push_str(&eval(e, cx)?.to_plain()),
        }
    }
    Ok(out)
}

/// A list item's field text with its `${EXPR}` placeholders evaluated: a
/// field that is one placeholder keeps the value's type (a size stays a
/// size), text around placeholders makes text (`${params.base}/data`).
/// The text is parsed once ([`parsed`]), not on each use.
pub(super) fn item_text(field: &str, t: &str, cx: &dyn Context) -> Result<Value, Missing> {
    parsed(t).eval(field, cx)
}

/// A list item field's text with its `${EXPR}` placeholders parsed:
/// [`ItemText::eval`] gives what evaluating the text gives, errors
/// included (a placeholder that does not parse is its error when
/// evaluation reaches it, with the same message).
enum ItemText {
    /// The text is one placeholder: its value keeps its type.
    Whole(Result<Expr, Unparsed>),
    /// Text around placeholders, in order.
    Parts(Vec<Piece>),
}

/// A part of an [`ItemText::Parts`].
enum Piece {
    /// Text as written.
    Text(String),
    /// A placeholder, or why it is not one.
    Expr(Result<Expr, Unparsed>),
    /// A `${` without its `}`: the parts end here.
    Unclosed,
}

/// A placeholder that did not parse: its text and the parser's message.
struct Unparsed {
    inner: String,
    message: String,
}

impl Unparsed {
    fn missing(&self, field: &str) -> Missing {
        Missing::Error(format!(
            "item field `{field}`: `{}`: {}",
            self.inner, self.message
        ))
    }
}

impl ItemText {
    fn parse(t: &str) -> ItemText {
        let parse = |inner: &str| {
            crate::expr::parse(inner).map_err(|e| Unparsed {
                inner: inner.to_string(),
                message: e.message,
            })
        };
        if let Some(inner) = t.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
            if !inner.contains('}') {
                return ItemText::Whole(parse(inner));
            }
        }
        let mut parts = Vec::new();
        let mut rest = t;
        while let Some(i) = rest.find("${") {
            parts.push(Piece::Text(rest[..i].to_string()));
            let after = &rest[i + 2..];
            let Some(end) = after.find('}') else {
                parts.push(Piece::Unclosed);
                return ItemText::Parts(parts);
            };
            parts.push(Piece::Expr(parse(&after[..end])));
            rest = &after[end + 1..];
        }
        parts.push(Piece::Text(rest.to_string()));
        ItemText::Parts(parts)
    }

    /// The value of the item field `field` holding this text, in `cx`.
    fn eval(&self, field: &str, cx: &dyn Context) -> Result<Value, Missing> {
        match self {
            ItemText::Whole(e) => eval(e.as_ref().map_err(|u| u.missing(field))?, cx),
            ItemText::Parts(parts) => {
                let mut out = String::new();
                for p in parts {
                    match p {
                        Piece::Text(s) => out.push_str(s),
                        Piece::Expr(e) => out.push_str(
                            &eval(e.as_ref().map_err(|u| u.missing(field))?, cx)?.to_plain(),
                        ),
                        Piece::Unclosed => {
                            return Err(Missing::Error(format!(
                                "item field `{field}`: `${{` without its `}}`"
                            )))
                        }
                    }
                }
                Ok(Value::Str(out))
            }
        }
    }
}

/// Item-field texts parsed on this thread, by text: a text is parsed
/// once, for every rule, item and host that uses it (the plan, then each
/// host's evaluation; a fleet's worker threads each keep their own).
/// Parsing is a function of the text alone, so the memo cannot change a
/// result; it is emptied when it reaches [`MAX_PARSED`] texts.
const MAX_PARSED: usize = 4096;

thread_local! {
    static PARSED: RefCell<HashMap<String, Rc<ItemText>>> = RefCell::new(HashMap::new());
}

/// `t` parsed as an item field's text, from the memo when it was before.
fn parsed(t: &str) -> Rc<ItemText> {
    PARSED.with(|m| {
        if let Some(p) = m.borrow().get(t) {
            return Rc::clone(p);
        }
        let p = Rc::new(ItemText::parse(t));
        let mut m = m.borrow_mut();
        if m.len() >= MAX_PARSED {
            m.clear();
        }
        m.insert(t.to_string(), Rc::clone(&p));
        p
    })
}

/// A list item's fields with `${EXPR}` in them, evaluated in the rule's
/// scope; a field that cannot be evaluated here is left out with its reason
/// (reading it is then that reason: a field only some templates use does
/// not make the whole item unknown).
fn resolve_fields(value: &Value, cx: &RuleCx) -> (Value, BTreeMap<String, Missing>) {
    let mut errors = BTreeMap::new();
    let Value::Record(m) = value else {
        return (value.clone(), errors);
    };
    let mut out = m.clone();
    for (k, v) in m {
        if k == "when" {
            continue;
        }
        if let Value::Str(t) = v {
            if t.contains("${") {
                match item_text(k, t, cx) {
                    Ok(x) => {
                        out.insert(k.clone(), x);
                    }
                    Err(e) => {
                        out.remove(k);
                        errors.insert(k.clone(), e);
                    }
                }
            }
        }
    }
    (Value::Record(out), errors)
}

/// `${...}` in an `applies` path, over the item (`exists: "${dir.path}"`).
fn item_path(p: &str, cx: &RuleCx) -> Result<String, Missing> {
    let Some(inner) = p.strip_prefix("${").and_then(|x| x.strip_suffix('}')) else {
        return Ok(p.to_string());
    };
    let e = crate::expr::parse(inner).map_err(|e| Missing::Error(e.message))?;
    Ok(eval(&e, cx)?.to_plain())
}

/// The rule as one item sees it: `applies` paths and the `setting:` key
/// built from the item, a remedy on that setting following it. `rule` is
/// the rule without its `for_each` ([`copy_with`], made once per rule and
/// host): most rules differ in none of these per item, and their items
/// share it; only a rule that does differ is copied for the item.
fn item_rule<'r>(rule: &'r Rule, fe: &ForEach, cx: &RuleCx) -> Result<Cow<'r, Rule>, Missing> {
    let per_item_path = rule
        .applies
        .iter()
        .any(|a| matches!(a, Applies::Exists(p) | Applies::Missing(p) if p.contains(&fe.bind)));
    let per_item_key = fe.setting_key.is_some() && matches!(rule.check, Check::Setting { .. });
    if !per_item_path && !per_item_key {
        return Ok(Cow::Borrowed(rule));
    }
    let mut applies = Vec::with_capacity(rule.applies.len());
    for a in &rule.applies {
        applies.push(match a {
            Applies::Exists(p) if p.contains(&fe.bind) => Applies::Exists(item_path(p, cx)?),
            Applies::Missing(p) if p.contains(&fe.bind) => Applies::Missing(item_path(p, cx)?),
            other => other.clone(),
        });
    }
    let mut r = copy_with(rule, applies);
    if let (Some(t), Check::Setting { key, .. }) = (&fe.setting_key, &mut r.check) {
        let built = render_plain(t, cx)?;
        let written = std::mem::replace(key, built.clone());
        match &mut r.remedy {
            Some(Remedy::Set { key, .. }) | Some(Remedy::Remove { key, .. }) if *key == written => {
                *key = built
            }
            _ => {}
        }
    }
    Ok(Cow::Owned(r))
}

/// `rule` with other `applies` and without its `for_each` (which is not
/// cloned only to be dropped).
fn copy_with(rule: &Rule, applies: Vec<Applies>) -> Rule {
    Rule {
        id: rule.id.clone(),
        policy: rule.policy.clone(),
        title: rule.title.clone(),
        severity: rule.severity,
        applies,
        lets: rule.lets.clone(),
        check: rule.check.clone(),
        why: rule.why.clone(),
        fix: rule.fix.clone(),
        references: rule.references.clone(),
        tags: rule.tags.clone(),
        controls: rule.controls.clone(),
        source: rule.source.clone(),
        breakdown: rule.breakdown.clone(),
        remedy: rule.remedy.clone(),
        overridden: rule.overridden.clone(),
        for_each: None,
    }
}

/// For `driftaudit fix`: the rule as the item whose subject is `subject`
/// sees it (its `setting:` key, and a remedy on that setting, built from
/// the item; `for_each` gone), and that remedy's `set` value evaluated in
/// the item's scope (`None` for a remedy that sets nothing).
pub(super) fn item_remedy(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    subject: &str,
) -> Result<(Rule, Option<Value>), Missing> {
    let items = expand(rule, policy, facts, fe).map_err(|f| Missing::Unknown {
        subject: subject.to_string(),
        reason: f.explanation,
    })?;
    let item = items
        .iter()
        .find(|i| item_subject(rule, policy, facts, fe, i) == subject)
        .ok_or_else(|| Missing::Absent {
            subject: subject.to_string(),
            reason: "no item of the rule's `for_each` has this subject on this host".into(),
        })?;
    let mut cx = bound_cx(facts, rule, policy, fe, item, &item.value);
    let (value, errors) = resolve_fields(&item.value, &cx);
    cx.special
        .borrow_mut()
        .insert(fe.bind.clone(), value.clone());
    cx.field_errors = Some((fe.bind.clone(), errors.clone()));
    let base = copy_with(rule, rule.applies.clone());
    let r = item_rule(&base, fe, &cx)?.into_owned();
    let mut cx = bound_cx(facts, &r, policy, fe, item, &value);
    cx.field_errors = Some((fe.bind.clone(), errors));
    let v = match &r.remedy {
        Some(Remedy::Set { to, .. }) => Some(eval(to, &cx)?),
        _ => None,
    };
    Ok((r, v))
}

/// Judge a `for_each` rule: one finding per item (a `drift:` check may
/// give several), or the one finding that says why there are no items.
pub(super) fn check(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
) -> Vec<Finding> {
    let items = match expand(rule, policy, facts, fe) {
        Ok(items) => items,
        Err(f) => {
            // a set that cannot be listed on a host the rule does not apply
            // to (no fstab, no storage at all) is the rule's skip, as for a
            // rule without `for_each`; only a condition met leaves the unknown
            if f.status == Status::Unknown {
                let cx = RuleCx::new(facts, rule, policy);
                if let Some(skip) = super::applies::first_unmet(rule, policy, &cx) {
                    if skip.status == Status::Skip {
                        return vec![skip];
                    }
                }
            }
            return vec![*f];
        }
    };
    // the rule as its items see it, `for_each` gone: made once, not per item
    let base = copy_with(rule, rule.applies.clone());
    let mut when_rule = None;
    let mut out = Vec::new();
    for item in items {
        let Item {
            value,
            key,
            subject: default_subject,
            when,
        } = item;
        // one context per item, the item's value moved into it (not
        // copied): the alias, the `when`, the fields, the judgement and the
        // subject each start from an empty record of what was read, as a
        // context of their own would
        let mut cx = RuleCx::new(facts, rule, policy);
        cx.special.get_mut().insert(fe.bind.clone(), value);
        cx.item = key.map(|k| (fe.bind.clone(), k));
        let mut subject = None;
        let alias = fe.alias.as_ref().map(|t| cx.render(t));
        if !fe.selects(alias.as_deref()) {
            continue;
        }
        let mut findings = match fe.except.iter().find(|(k, _)| *k == default_subject) {
            // left out by the rule, with its reason in plain words
            Some((_, why)) => {
                let mut f = base_finding(rule, Status::Skip);
                f.explanation = why.clone();
                vec![f]
            }
            None => judge(
                rule,
                &base,
                &mut when_rule,
                policy,
                fe,
                when.as_deref(),
                &mut cx,
                &mut subject,
            ),
        };
        let subject = match &fe.subject {
            None => default_subject,
            Some(t) => {
                // an item not judged as far as its fields: its subject over
                // them now
                let text = subject.unwrap_or_else(|| {
                    fresh(&mut cx);
                    resolve_in(&mut cx, &fe.bind);
                    cx.render(t)
                });
                if text.is_empty() {
                    default_subject
                } else {
                    text
                }
            }
        };
        for f in &mut findings {
            f.alias = alias.clone();
            let mut subjects = vec![subject.clone()];
            for s in f.subject.drain(..) {
                if !subjects.contains(&s) {
                    subjects.push(s);
                }
            }
            f.subject = subjects;
        }
        out.extend(findings);
    }
    out
}

/// `cx` as a context just made: its `let` values, what it read and its
/// `let`s in progress forgotten (the bound item and field errors stay).
fn fresh(cx: &mut RuleCx) {
    cx.lets.get_mut().clear();
    cx.in_progress.get_mut().clear();
    cx.touched.get_mut().clear();
}

/// The bound item's `${...}` fields evaluated in `cx` (which binds the
/// item as written), the item rebound to the result; the fields that could
/// not be evaluated, with their reasons.
fn resolve_in(cx: &mut RuleCx, bind: &str) -> BTreeMap<String, Missing> {
    let (value, errors) = {
        let special = cx.special.borrow();
        match special.get(bind) {
            Some(v) => resolve_fields(v, cx),
            None => (Value::Record(BTreeMap::new()), BTreeMap::new()),
        }
    };
    cx.special.get_mut().insert(bind.to_string(), value);
    errors
}

fn bound_cx<'a>(
    facts: &'a Facts,
    rule: &'a Rule,
    policy: Option<&'a Policy>,
    fe: &ForEach,
    item: &Item,
    value: &Value,
) -> RuleCx<'a> {
    let mut cx = RuleCx::new(facts, rule, policy);
    cx.special
        .borrow_mut()
        .insert(fe.bind.clone(), value.clone());
    cx.item = item.key.clone().map(|k| (fe.bind.clone(), k));
    cx
}

/// The item's subject: the rule's `subject:` template, else the default
/// (for `driftaudit fix`, which finds the item by it).
fn item_subject(
    rule: &Rule,
    policy: Option<&Policy>,
    facts: &Facts,
    fe: &ForEach,
    item: &Item,
) -> String {
    let Some(t) = &fe.subject else {
        return item.subject.clone();
    };
    let cx = bound_cx(facts, rule, policy, fe, item, &item.value);
    let (value, _) = resolve_fields(&item.value, &cx);
    cx.special.borrow_mut().insert(fe.bind.clone(), value);
    let text = cx.render(t);
    if text.is_empty() {
        item.subject.clone()
    } else {
        text
    }
}

/// One item judged in its context `cx` (which binds the item as written),
/// and its `subject:` rendered into `subject` once its fields are
/// evaluated (left `None` for an item not judged as far). `base` is `rule` without its `for_each`, `when_rule` the same
/// made on the first item with a `when` and kept for the next. The
/// context's rule is `rule` throughout: the copies differ from it in
/// `applies`, the check's key and the remedy, never in the `let`s it reads.
#[allow(clippy::too_many_arguments)]
fn judge(
    rule: &Rule,
    base: &Rule,
    when_rule: &mut Option<Rule>,
    policy: Option<&Policy>,
    fe: &ForEach,
    when: Option<&str>,
    cx: &mut RuleCx,
    subject: &mut Option<String>,
) -> Vec<Finding> {
    // the item's own `when` first, over the item as written: an item that
    // does not apply is skipped before its `${...}` fields are evaluated
    if let Some(w) = when {
        fresh(cx);
        let e = match crate::expr::parse(w) {
            Ok(e) => e,
            Err(e) => {
                return vec![missing_finding(
                    rule,
                    cx,
                    Missing::Error(format!("item `when: {w}`: {}", e.message)),
                )];
            }
        };
        // one copy per rule, its `applies` replaced for each item
        let only_when = when_rule.get_or_insert_with(|| copy_with(rule, Vec::new()));
        only_when.applies = vec![Applies::When(e, w.to_string())];
        if let Some(f) = super::applies::first_unmet(only_when, policy, cx) {
            return vec![f];
        }
    }
    fresh(cx);
    let errors = resolve_in(cx, &fe.bind);
    if let Some(t) = &fe.subject {
        // as a context of its own would: what evaluating the fields left,
        // no field read as an error; what rendering adds is not kept
        let lets = cx.lets.get_mut().clone();
        let touched = cx.touched.get_mut().clone();
        *subject = Some(cx.render(t));
        *cx.lets.get_mut() = lets;
        *cx.touched.get_mut() = touched;
    }
    let exists_error = errors.get("exists").cloned();
    cx.field_errors = Some((fe.bind.clone(), errors));
    let mut r = match item_rule(base, fe, cx) {
        Ok(r) => r,
        Err(m) => return vec![missing_finding(rule, cx, m)],
    };
    // the item's `exists` field: a path that must exist for it to apply
    if let Some(m) = exists_error {
        return vec![missing_finding(rule, cx, m)];
    }
    let exists = match cx.special.get_mut().get(&fe.bind) {
        Some(Value::Record(m)) => m.get("exists").map(|p| Applies::Exists(p.to_plain())),
        _ => None,
    };
    if let Some(exists) = exists {
        r = match r {
            Cow::Owned(mut o) => {
                o.applies.insert(0, exists);
                Cow::Owned(o)
            }
            Cow::Borrowed(b) => {
                let applies = std::iter::once(exists).chain(b.applies.iter().cloned());
                Cow::Owned(copy_with(b, applies.collect()))
            }
        };
    }
    fresh(cx);
    if let (Some((_, ItemKey { ns, key, .. })), ForEachSource::Records { .. }) =
        (&cx.item, &fe.source)
    {
        // a record item is read from its namespace: its line is evidence
        let _ = cx.setting(ns, key);
    }
    super::judge(&r, policy, cx)
}

#[cfg(test)]
mod tests {
    use super::{item_text, star_match};
    use crate::eval::{Context, Missing};
    use crate::value::Value;

    /// `params.n` is 3; nothing else has a value.
    struct N;
    impl Context for N {
        fn name(&self, name: &str) -> Result<Value, Missing> {
            Err(Missing::Error(format!("no {name}")))
        }
        fn param(&self, name: &str) -> Result<Value, Missing> {
            match name {
                "n" => Ok(Value::Number(3.0)),
                _ => Err(Missing::Error(format!("unknown parameter `{name}`"))),
            }
        }
        fn setting(&self, ns: &str, _: &str) -> Result<Value, Missing> {
            self.name(ns)
        }
        fn dir_size(&self, p: &str) -> Result<Value, Missing> {
            self.name(p)
        }
        fn mount_of(&self, p: &str) -> Result<Value, Missing> {
            self.name(p)
        }
    }

    #[test]
    fn item_text_parsed_once_reads_as_written_each_time() {
        for _ in 0..2 {
            // the second round comes from the memo: same values, same errors
            assert_eq!(item_text("f", "${params.n}", &N), Ok(Value::Number(3.0)));
            assert_eq!(
                item_text("f", "a ${params.n}/${params.n} b", &N),
                Ok(Value::Str("a 3/3 b".into()))
            );
            let err = |f: &str, t: &str| match item_text(f, t, &N) {
                Err(Missing::Error(e)) => e,
                other => panic!("{other:?}"),
            };
            assert_eq!(
                err("g", "x ${params.n"),
                "item field `g`: `${` without its `}`"
            );
            assert!(
                err("h", "${params.}").starts_with("item field `h`: `params.`: "),
                "{}",
                err("h", "${params.}")
            );
            // the first failing placeholder decides, in the text's order
            assert_eq!(err("k", "${params.m} ${params.n"), "unknown parameter `m`");
        }
    }

    fn m(p: &str, k: &str) -> Option<Vec<String>> {
        star_match(p, k)
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
