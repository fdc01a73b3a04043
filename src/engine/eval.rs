//! The context one rule is evaluated in over one host's gathered facts
//! ([`RuleCx`]): the layers of its [`Scope`] (the finding's specials, the
//! `for_each` item, the rule's `let`s, which the one resolver of
//! [`crate::expr::eval`] reads in that order), and the one [`Host`] over
//! gathered facts: facts, settings with their canonical keys, directory
//! sizes and mount points, the record of what was read (subjects,
//! evidence, notes); and `why`/`fix` templates rendered with the values
//! read. A `where:` filter is evaluated in a context of its own whose host
//! data is the item and facts alone ([`RuleCx::in_where`]). Must not do
//! I/O: every value was gathered before evaluation starts.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::domain::{rule_domain_with, shared_reads, Reads};
use crate::expr;
pub(super) use crate::expr::eval::ItemKey;
use crate::expr::eval::{eval, record_field, Binding, Host, InScope, Lets, Missing, NoHost, Scope};
use crate::facts::presence::Domain;
use crate::facts::{Entry, Evidence, Facts, Setting};
use crate::policy::{Policy, Rule, Template, TemplatePart};
use crate::value::Value;

/// The parameters of a rule outside any policy: none.
static NO_PARAMS: BTreeMap<String, Value> = BTreeMap::new();

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
    /// The `for_each` item bound to its name (its key, and the `${...}`
    /// fields that could not be evaluated on this host).
    pub(super) item: Option<Binding>,
    /// A `where:` filter's context: host data is facts and the item's own
    /// value; a setting, `du` or `mount_of` is an error.
    pub(super) in_where: bool,
    /// The domain of the findings made here ([`RuleCx::domain_of`]).
    pub(super) domain: DomainOf<'a>,
}

/// Where the domain of a context's findings comes from.
#[derive(Clone, Copy)]
pub(super) enum DomainOf<'a> {
    /// From the rule's reads, found when a finding asks.
    Rule,
    /// From the rule's own `applies` and `for_each` and the reads its
    /// copies share ([`shared_reads`]), found once for all of a `for_each`
    /// rule's items.
    Shared(&'a Reads),
    /// Found by the caller: a `for_each` item's, judged with the rule
    /// itself where a copy without `for_each` was judged before
    /// ([`super::domain::item_domain`]).
    Found(Option<Domain>),
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
            in_where: false,
            domain: DomainOf::Rule,
        }
    }

    /// The domain of `rule`'s findings ([`crate::engine::rule_domain`]):
    /// `rule` is this context's rule or a copy of it judged here (an
    /// item's), which reads the same outside `applies` and `for_each`.
    pub(super) fn domain_of(&self, rule: &Rule) -> Option<Domain> {
        debug_assert_eq!(rule.id, self.rule.id);
        match self.domain {
            DomainOf::Found(d) => d,
            DomainOf::Shared(reads) => rule_domain_with(rule, reads),
            DomainOf::Rule => rule_domain_with(rule, &shared_reads(self.rule)),
        }
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
                        Err(Missing::Bounded {
                            subject, lo, hi, ..
                        }) => format!(
                            "(unknown {subject}, between {} and {})",
                            expr::show(&lo),
                            expr::show(&hi)
                        ),
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

impl InScope for RuleCx<'_> {
    fn scope(&self) -> Scope<'_> {
        Scope {
            params: Some(self.policy.map_or(&NO_PARAMS, |p| &p.params)),
            specials: Some(&self.special),
            item: self.item.as_ref(),
            lets: Some(Lets {
                exprs: &self.rule.lets,
                values: &self.lets,
                in_progress: &self.in_progress,
            }),
            host: Some(self),
            no_host: NoHost::BeforeGathering,
        }
    }
}

impl RuleCx<'_> {
    /// What a `where:` filter may not read, in words.
    fn not_in_where<T>(&self, what: String) -> Result<T, Missing> {
        Err(Missing::Error(what))
    }
}

impl Host for RuleCx<'_> {
    fn fact(&self, name: &str) -> Result<Value, Missing> {
        match self.facts.facts.get(name) {
            Some(Ok(v)) => Ok(v.clone()),
            Some(Err(reason)) => Err(Missing::Unknown {
                subject: name.into(),
                reason: reason.clone(),
            }),
            None if self.in_where => Err(Missing::Absent {
                subject: name.into(),
                reason: "the record has no such field".into(),
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

    fn fact_field(&self, name: &str, field: &str) -> Option<Result<Value, Missing>> {
        match self.facts.facts.get(name) {
            Some(Ok(Value::Record(m))) => Some(record_field(m, field)),
            _ => None,
        }
    }

    fn item_value(&self, item: &ItemKey) -> Option<Result<Value, Missing>> {
        if !self.in_where {
            return Some(self.setting(&item.ns, &item.key));
        }
        // a key item's value read in place, nothing recorded as read; a
        // record item's `value` is its field of that name
        if item.parts.is_empty() {
            return None;
        }
        let entry = self
            .facts
            .namespaces
            .get(&item.ns)
            .and_then(|s| s.entries.get(&item.key));
        Some(match entry {
            Some(Entry::Set(s)) => Ok(s.value.clone()),
            _ => Err(Missing::Unknown {
                subject: item.key.clone(),
                reason: "unreadable on this host".into(),
            }),
        })
    }

    fn setting(&self, ns: &str, key: &str) -> Result<Value, Missing> {
        if self.in_where {
            return self.not_in_where(format!(
                "a `where:` filter reads the item (its fields, `.key`, `.value`), not `{ns}`"
            ));
        }
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
                Err(match space.bounds.get(&canon) {
                    Some((lo, hi)) => Missing::Bounded {
                        subject: canon,
                        reason: reason.clone(),
                        lo: lo.clone(),
                        hi: hi.clone(),
                    },
                    None => Missing::Unknown {
                        subject: canon,
                        reason: reason.clone(),
                    },
                })
            }
            None => Err(Missing::Absent {
                subject: canon,
                reason: space.absent_means.clone(),
            }),
        }
    }

    fn dir_size(&self, path: &str) -> Result<Value, Missing> {
        if self.in_where {
            return self.not_in_where(format!("a `where:` filter cannot size `{path}`"));
        }
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
        if self.in_where {
            return self.not_in_where(format!(
                "a `where:` filter cannot look up the mount of `{path}`"
            ));
        }
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
