//! The context one rule is evaluated in over one host's gathered facts
//! ([`RuleCx`]): name resolution (the rule's `let`s, then host facts, then
//! the finding's own `actual`/`expected`/`setting`), parameters, settings
//! with their canonical keys, directory sizes and mount points, the record
//! of what was read (subjects, evidence, notes), and `why`/`fix` templates
//! rendered with the values read. Must not do I/O: every value was gathered
//! before evaluation starts.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use super::domain::{rule_domain_with, shared_reads, Reads};
use crate::expr;
use crate::expr::eval::{eval, record_field, Context, Missing};
use crate::facts::presence::Domain;
use crate::facts::{Entry, Evidence, Facts, Setting};
use crate::policy::{Policy, Rule, Template, TemplatePart};
use crate::value::Value;

/// A `for_each` item that is a key of a namespace (or a record): what
/// `NAME.key`, `NAME.value` and `NAME.parts` answer.
#[derive(Debug, Clone)]
pub(super) struct ItemKey {
    pub(super) ns: String,
    pub(super) key: String,
    /// The text each `*` of a key glob matched (empty for a record).
    pub(super) parts: Vec<String>,
}

/// Evaluation context for one rule over one host's facts.
pub(super) struct RuleCx<'a> {
    pub(super) facts: &'a Facts,
    pub(super) rule: &'a Rule,
    pub(super) policy: Option<&'a Policy>,
    pub(super) special: RefCell<BTreeMap<String, Value>>,
    pub(super) lets: RefCell<BTreeMap<String, Result<Value, Missing>>>,
    pub(super) in_progress: RefCell<BTreeSet<String>>,
    /// Each setting read, by its canonical key: the host's own (not a
    /// copy), or one made for a value that could not be read.
    pub(super) touched: RefCell<Vec<(String, Cow<'a, Setting>)>>,
    /// The fix a namespace gives for the unknowns it caused here, when its
    /// data was never read rather than refused ([`crate::facts::Namespace::unknown_fix`]).
    pub(super) unknown_fix: RefCell<Option<String>>,
    /// The bound name of a `for_each` key or record item, and the item.
    pub(super) item: Option<(String, ItemKey)>,
    /// A list item's bound name and the `${...}` fields that could not be
    /// evaluated on this host: reading one is that reason, not a wrong value.
    pub(super) field_errors: Option<(String, BTreeMap<String, Missing>)>,
    /// What the rule reads in the parts its copies share
    /// ([`shared_reads`]): found once, for every finding made here (a
    /// `for_each` rule's items are given it found once for them all).
    pub(super) shared_reads: OnceCell<Reads>,
    /// The domain of the findings made here when the caller has found it
    /// already: a `for_each` item's, judged with the rule itself where a
    /// copy without `for_each` was judged before ([`super::domain::item_domain`]).
    pub(super) domain: Option<Option<Domain>>,
}

impl<'a> RuleCx<'a> {
    pub(super) fn new(facts: &'a Facts, rule: &'a Rule, policy: Option<&'a Policy>) -> RuleCx<'a> {
        RuleCx {
            facts,
            rule,
            policy,
            special: RefCell::new(BTreeMap::new()),
            lets: RefCell::new(BTreeMap::new()),
            in_progress: RefCell::new(BTreeSet::new()),
            touched: RefCell::new(Vec::new()),
            unknown_fix: RefCell::new(None),
            item: None,
            field_errors: None,
            shared_reads: OnceCell::new(),
            domain: None,
        }
    }

    /// The domain of `rule`'s findings ([`crate::engine::rule_domain`]):
    /// `rule` is this context's rule or a copy of it judged here (an
    /// item's), which reads the same outside `applies` and `for_each`.
    pub(super) fn domain_of(&self, rule: &Rule) -> Option<Domain> {
        debug_assert_eq!(rule.id, self.rule.id);
        if let Some(d) = self.domain {
            return d;
        }
        rule_domain_with(
            rule,
            self.shared_reads.get_or_init(|| shared_reads(self.rule)),
        )
    }

    pub(super) fn evidence(&self) -> Vec<Evidence> {
        let mut out: Vec<Evidence> = Vec::new();
        for (_, s) in self.touched.borrow().iter() {
            for e in &s.evidence {
                if !out.contains(e) {
                    out.push(e.clone());
                }
            }
        }
        out
    }

    pub(super) fn subjects(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (k, _) in self.touched.borrow().iter() {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
        out
    }

    pub(super) fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (_, s) in self.touched.borrow().iter() {
            if let Some(n) = &s.note {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    pub(super) fn render(&self, t: &Template) -> String {
        let mut out = String::new();
        // inside a `code span` the text is a command (sh, SQL, an option
        // line): values interpolated there go through `command_word`
        let mut in_code = false;
        for p in &t.parts {
            match p {
                TemplatePart::Text(s) => {
                    in_code ^= s.matches('`').count() % 2 == 1;
                    out.push_str(s)
                }
                TemplatePart::Expr(e) => {
                    let shown = match eval(e, self) {
                        // the text itself, not a copy of it
                        Ok(Value::Str(s)) => s,
                        Ok(v) => expr::show(&v),
                        Err(Missing::Absent { subject, .. }) => format!("(no {subject})"),
                        Err(Missing::Unknown { subject, .. }) => format!("(unknown {subject})"),
                        Err(Missing::Error(e)) => format!("(error: {e})"),
                    };
                    if in_code {
                        out.push_str(&command_word(&shown));
                    } else {
                        out.push_str(&shown);
                    }
                }
            }
        }
        collapse_ws(&out)
    }
}

/// A value pasted into a command shown in a `fix`/`why` code span. A plain
/// token (letters, digits, `. _ - / : + , @ % = ^`) is used as it is; other
/// printable text is single-quoted, which sh, bash and SQL all read as one
/// literal word; a value holding a quote, a backtick, a newline or a
/// control character is never put into a command (the finding's actual
/// and expected fields still show it, escaped by each renderer).
fn command_word(v: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-/:+,@%=^".contains(c);
    if !v.is_empty() && v.chars().all(plain) {
        return v.to_string();
    }
    if !v.is_empty() && !v.chars().any(|c| c == '\'' || c == '`' || c.is_control()) {
        return format!("'{v}'");
    }
    "<value withheld: not a plain token>".into()
}

/// Paragraph breaks (`"\n\n"`) kept, other whitespace runs folded to one
/// space, the ends trimmed (YAML `>` scalars end with "\n").
fn collapse_ws(s: &str) -> String {
    s.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
        .trim()
        .to_string()
}

impl Context for RuleCx<'_> {
    fn name(&self, name: &str) -> Result<Value, Missing> {
        if let Some(v) = self.special.borrow().get(name) {
            return Ok(v.clone());
        }
        if let Some(e) = self.rule.lets.get(name) {
            if let Some(v) = self.lets.borrow().get(name) {
                return v.clone();
            }
            if !self.in_progress.borrow_mut().insert(name.to_string()) {
                return Err(Missing::Error(format!("`let {name}` refers to itself")));
            }
            let v = eval(e, self);
            self.in_progress.borrow_mut().remove(name);
            self.lets.borrow_mut().insert(name.to_string(), v.clone());
            return v;
        }
        match self.facts.facts.get(name) {
            Some(Ok(v)) => Ok(v.clone()),
            Some(Err(reason)) => Err(Missing::Unknown {
                subject: name.into(),
                reason: reason.clone(),
            }),
            None => match name {
                // in assert rules, `source` is where the first setting read was set
                "source" => Ok(Value::Str(
                    self.touched
                        .borrow()
                        .iter()
                        .find_map(|(_, s)| s.evidence.first().map(|e| e.to_string()))
                        .unwrap_or_default(),
                )),
                "actual" | "expected" | "setting" | "missing" | "extra" => {
                    Ok(Value::Str(String::new()))
                }
                _ => Err(Missing::Unknown {
                    subject: name.into(),
                    reason: "not known for this host".into(),
                }),
            },
        }
    }

    fn name_field(&self, name: &str, field: &str) -> Option<Result<Value, Missing>> {
        if let Some((bind, errors)) = &self.field_errors {
            if bind == name {
                if let Some(m) = errors.get(field) {
                    return Some(Err(m.clone()));
                }
            }
        }
        // a record's own field of that name wins (read in place, not from a
        // copy of the whole record)
        if let Some(Value::Record(m)) = self.special.borrow().get(name) {
            if let Some(v) = m.get(field) {
                return Some(Ok(v.clone()));
            }
        }
        if let Some((bind, item)) = &self.item {
            if name == bind {
                match field {
                    "key" => return Some(Ok(Value::Str(item.key.clone()))),
                    "value" => return Some(self.setting(&item.ns, &item.key)),
                    "parts" if !item.parts.is_empty() => {
                        return Some(Ok(Value::List(
                            item.parts.iter().cloned().map(Value::Str).collect(),
                        )))
                    }
                    _ => {}
                }
            }
        }
        // otherwise what [`Context::name`] would give, its field read in
        // place: a record the name holds (a special, a `let` already
        // evaluated, a fact); any other value, or a `let` not evaluated
        // yet, goes the evaluator's way
        if let Some(v) = self.special.borrow().get(name) {
            return match v {
                Value::Record(m) => Some(record_field(m, field)),
                _ => None,
            };
        }
        if self.rule.lets.contains_key(name) {
            return match self.lets.borrow().get(name) {
                Some(Ok(Value::Record(m))) => Some(record_field(m, field)),
                _ => None,
            };
        }
        match self.facts.facts.get(name) {
            Some(Ok(Value::Record(m))) => Some(record_field(m, field)),
            _ => None,
        }
    }

    fn param(&self, name: &str) -> Result<Value, Missing> {
        self.policy
            .and_then(|p| p.params.get(name))
            .cloned()
            .ok_or_else(|| Missing::Error(format!("unknown parameter `{name}`")))
    }

    fn setting(&self, ns: &str, key: &str) -> Result<Value, Missing> {
        let Some(space) = self.facts.namespaces.get(ns) else {
            return Err(Missing::Unknown {
                subject: key.into(),
                reason: format!("no `{ns}` values were gathered for this host"),
            });
        };
        let canon = space.canonical(key);
        if space.unknown_fix.is_some()
            && (space.unavailable.is_some()
                || matches!(space.entries.get(&canon), Some(Entry::Unreadable { .. })))
        {
            self.unknown_fix.replace(space.unknown_fix.clone());
        }
        if let Some(reason) = &space.unavailable {
            return Err(Missing::Unknown {
                subject: canon,
                reason: reason.clone(),
            });
        }
        match space.entries.get(&canon) {
            Some(Entry::Set(s)) => {
                self.touched.borrow_mut().push((canon, Cow::Borrowed(s)));
                Ok(s.value.clone())
            }
            Some(Entry::Unreadable { reason, evidence }) => {
                self.touched.borrow_mut().push((
                    canon.clone(),
                    Cow::Owned(Setting {
                        value: Value::Str(String::new()),
                        raw: String::new(),
                        evidence: evidence.clone(),
                        note: None,
                    }),
                ));
                Err(Missing::Unknown {
                    subject: canon,
                    reason: reason.clone(),
                })
            }
            None => Err(Missing::Absent {
                subject: canon,
                reason: space.absent_means.clone(),
            }),
        }
    }

    fn dir_size(&self, path: &str) -> Result<Value, Missing> {
        match self.facts.dir_sizes.get(path) {
            Some(Ok(b)) => {
                self.touched.borrow_mut().push((
                    path.to_string(),
                    Cow::Owned(Setting::new(
                        Value::Size(*b as f64),
                        b.to_string(),
                        dir_size_evidence(self.facts, path),
                    )),
                ));
                Ok(Value::Size(*b as f64))
            }
            Some(Err(r)) => Err(Missing::Unknown {
                subject: path.into(),
                reason: r.clone(),
            }),
            None => Err(Missing::Unknown {
                subject: path.into(),
                reason: "directory size was not gathered".into(),
            }),
        }
    }

    fn mount_of(&self, path: &str) -> Result<Value, Missing> {
        let usable = |name: &str| {
            self.facts
                .namespaces
                .get(name)
                .filter(|n| n.unavailable.is_none() && !n.entries.is_empty())
        };
        let space = usable("mount").or_else(|| usable("fstab")).ok_or_else(|| {
            let why = |name: &str| match self.facts.namespaces.get(name) {
                Some(n) => n.unavailable.clone().unwrap_or_else(|| "empty".into()),
                None => "not gathered".into(),
            };
            Missing::Unknown {
                subject: path.into(),
                reason: format!(
                    "no mount table to find the volume holding it (mounts: {}; fstab: {})",
                    why("mount"),
                    why("fstab")
                ),
            }
        })?;
        crate::facts::storage::mount_of(space.entries.keys().map(String::as_str), path)
            .map(Value::Str)
            .map_err(|reason| Missing::Unknown {
                subject: path.into(),
                reason: reason.into(),
            })
    }
}

fn dir_size_evidence(facts: &Facts, path: &str) -> Evidence {
    if let Some(e) = facts.dir_size_evidence.get(path) {
        return e.clone();
    }
    match facts.source {
        crate::host::SourceKind::Snapshot => Evidence::file(crate::catalogue::DU.path),
        crate::host::SourceKind::Live => Evidence::file(path.to_string()),
    }
}
