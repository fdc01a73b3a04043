//! The one evaluator of the expression language, over one [`Scope`]: its
//! name resolution (the finding's specials, the `for_each` item, the
//! rule's `let`s, then host facts), parameters, and [`Host`] data
//! (settings, `du`, `mount_of`) the engine answers over gathered facts; a
//! scope without a host is the loader's constants ([`Scope::constant`]) or
//! the plan's. What operators and functions do to values comes from
//! [`super::ops`]. Decides how a missing value travels (`absent`,
//! `unknown`, `error`), which `and`/`or`, `present` and `default` absorb.
//! Pure: must not do I/O or read facts itself.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use super::{bounds, ops, BinOp, Expr};
use crate::value::Value;

pub use super::missing::Missing;

/// Host data, and nothing else: a fact, a setting, a directory's size, the
/// mount holding a path. The engine answers it over gathered facts (one
/// implementation, which records what was read); must not do I/O.
pub trait Host {
    /// A host fact: a bare name no finding special, item or `let` binds.
    fn fact(&self, name: &str) -> Result<Value, Missing>;
    /// `NAME.FIELD` of a fact that is a record, read in place; `None`: the
    /// fact's value, then its field, as for any record.
    fn fact_field(&self, _name: &str, _field: &str) -> Option<Result<Value, Missing>> {
        None
    }
    /// A setting in a namespace.
    fn setting(&self, ns: &str, key: &str) -> Result<Value, Missing>;
    /// Size of a directory in bytes.
    fn dir_size(&self, path: &str) -> Result<Value, Missing>;
    /// The mount point that holds a path.
    fn mount_of(&self, path: &str) -> Result<Value, Missing>;
    /// `ITEM.value` of a `for_each` key or record item; `None`: the item's
    /// field `value`, as for any record.
    fn item_value(&self, item: &ItemKey) -> Option<Result<Value, Missing>> {
        Some(self.setting(&item.ns, &item.key))
    }
}

/// A `for_each` item that is a key of a namespace (or a record): what
/// `NAME.key`, `NAME.value` and `NAME.parts` answer.
#[derive(Debug, Clone)]
pub struct ItemKey {
    /// The namespace the item comes from.
    pub ns: String,
    /// The item's key in it.
    pub key: String,
    /// The text each `*` of a key glob matched (empty for a record).
    pub parts: Vec<String>,
}

/// A `for_each` item bound to its name: one more name of the scope.
#[derive(Debug, Clone)]
pub struct Binding {
    /// The bound name (`as:`).
    pub name: String,
    /// What it holds: the item, its `${...}` fields evaluated or as written.
    pub value: Value,
    /// For key and record items: the namespace, key and `*` matches.
    pub key: Option<ItemKey>,
    /// A list item's fields that could not be evaluated on this host:
    /// reading one is that reason, not a wrong value.
    pub field_errors: BTreeMap<String, Missing>,
}

/// A rule's `let`s, each evaluated once, on first use, in the scope that
/// names it.
#[derive(Clone, Copy)]
pub struct Lets<'a> {
    /// The `let` expressions by name.
    pub exprs: &'a BTreeMap<String, Expr>,
    /// The values found so far.
    pub values: &'a RefCell<BTreeMap<String, Result<Value, Missing>>>,
    /// The `let`s being evaluated (a `let` that names itself is an error).
    pub in_progress: &'a RefCell<BTreeSet<String>>,
}

/// What a name or host data is where there is no host ([`Scope::host`] is
/// `None`).
#[derive(Debug, Clone, Copy)]
pub enum NoHost<'a> {
    /// A constant of a policy: "`NAME` cannot be used in WHAT" (`a
    /// constant`, `a path`).
    Constant(&'a str),
    /// The plan, before gathering: "NAME is not known before gathering".
    BeforeGathering,
}

/// The one scope an expression is evaluated in: a bare name is, in this
/// order, the finding's specials (`actual`, `expected`, `setting`, ...),
/// the `for_each` item bound as one more name, the rule's `let`s, then a
/// host fact; without a host, a name is [`NoHost`]'s error. `params.X`
/// reads `params`. Rule bodies, `where:` filters and `for_each` items (whose
/// `${...}` fields are evaluated in the rule's scope) all resolve here.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    /// The policy's parameters; `None`: a parameter cannot be used here.
    pub params: Option<&'a BTreeMap<String, Value>>,
    /// The finding's own names, set as it is judged.
    pub specials: Option<&'a RefCell<BTreeMap<String, Value>>>,
    /// The `for_each` item.
    pub item: Option<&'a Binding>,
    /// The rule's `let`s.
    pub lets: Option<Lets<'a>>,
    /// Host data; `None` before gathering or at load.
    pub host: Option<&'a dyn Host>,
    /// What a name or host data is without a host.
    pub no_host: NoHost<'a>,
}

/// Anything an expression can be evaluated in: it gives its [`Scope`].
pub trait InScope {
    /// The scope names resolve in.
    fn scope(&self) -> Scope<'_>;
}

impl InScope for Scope<'_> {
    fn scope(&self) -> Scope<'_> {
        *self
    }
}

impl<'a> Scope<'a> {
    /// The scope of a constant: the parameters (`None`: none may be used)
    /// and nothing else; `what` names where it stands (`a constant`).
    pub fn constant(params: Option<&'a BTreeMap<String, Value>>, what: &'a str) -> Scope<'a> {
        Scope {
            params,
            specials: None,
            item: None,
            lets: None,
            host: None,
            no_host: NoHost::Constant(what),
        }
    }

    fn no_host<T>(&self, name: &str) -> Result<T, Missing> {
        err(match self.no_host {
            NoHost::Constant(what) => format!("`{name}` cannot be used in {what}"),
            NoHost::BeforeGathering => format!("{name} is not known before gathering"),
        })
    }

    /// A bare name: special, item, `let`, fact, in that order.
    pub fn name(&self, name: &str) -> Result<Value, Missing> {
        if let Some(v) = self.specials.and_then(|s| s.borrow().get(name).cloned()) {
            return Ok(v);
        }
        if let Some(b) = self.item.filter(|b| b.name == name) {
            return Ok(b.value.clone());
        }
        if let Some(lets) = self.lets {
            if let Some(e) = lets.exprs.get(name) {
                if let Some(v) = lets.values.borrow().get(name) {
                    return v.clone();
                }
                if !lets.in_progress.borrow_mut().insert(name.to_string()) {
                    return err(format!("`let {name}` refers to itself"));
                }
                let v = eval_in(e, self);
                lets.in_progress.borrow_mut().remove(name);
                lets.values.borrow_mut().insert(name.to_string(), v.clone());
                return v;
            }
        }
        match self.host {
            Some(h) => h.fact(name),
            None => self.no_host(name),
        }
    }

    /// `NAME.FIELD` where the name itself answers the field, read in place
    /// (a record special, `let` or fact; the item's own field, or its
    /// `.key`, `.value`, `.parts`); `None`: the field of the name's value.
    fn field(&self, name: &str, field: &str) -> Option<Result<Value, Missing>> {
        if let Some(specials) = self.specials {
            match specials.borrow().get(name) {
                Some(Value::Record(m)) => return Some(record_field(m, field)),
                Some(_) => return None,
                None => {}
            }
        }
        if let Some(b) = self.item.filter(|b| b.name == name) {
            return b.field(field, self.host);
        }
        if let Some(lets) = self.lets {
            if lets.exprs.contains_key(name) {
                return match lets.values.borrow().get(name) {
                    Some(Ok(Value::Record(m))) => Some(record_field(m, field)),
                    _ => None,
                };
            }
        }
        self.host.and_then(|h| h.fact_field(name, field))
    }

    fn param(&self, name: &str) -> Result<Value, Missing> {
        match self.params {
            Some(p) => p
                .get(name)
                .cloned()
                .ok_or_else(|| Missing::Error(format!("unknown parameter `{name}`"))),
            None => self.no_host(name),
        }
    }

    fn setting(&self, ns: &str, key: &str) -> Result<Value, Missing> {
        match self.host {
            Some(h) => h.setting(ns, key),
            None => self.no_host(ns),
        }
    }
}

impl Binding {
    /// `NAME.FIELD` of the bound item, in one place: a field that could not
    /// be evaluated is its reason; the item's own field; `.key`, `.value`
    /// (the item's setting, read from `host`) and `.parts` of a key or
    /// record item; else the field of the record, read in place.
    fn field(&self, field: &str, host: Option<&dyn Host>) -> Option<Result<Value, Missing>> {
        if let Some(m) = self.field_errors.get(field) {
            return Some(Err(m.clone()));
        }
        if let Value::Record(m) = &self.value {
            if let Some(v) = m.get(field) {
                return Some(Ok(v.clone()));
            }
        }
        if let Some(item) = &self.key {
            match field {
                "key" => return Some(Ok(Value::Str(item.key.clone()))),
                "value" => {
                    if let Some(v) = host.and_then(|h| h.item_value(item)) {
                        return Some(v);
                    }
                }
                "parts" if !item.parts.is_empty() => {
                    return Some(Ok(Value::List(
                        item.parts.iter().cloned().map(Value::Str).collect(),
                    )))
                }
                _ => {}
            }
        }
        match &self.value {
            Value::Record(m) => Some(record_field(m, field)),
            _ => None,
        }
    }
}

fn err<T>(msg: String) -> Result<T, Missing> {
    Err(Missing::Error(msg))
}

/// Truth of a value (booleans, ON/OFF, numbers != 0).
pub fn truthy(v: &Value) -> Result<bool, Missing> {
    ops::truthy(v).map_err(Missing::Error)
}

/// `RECORD.FIELD` of a record: the field's value, or why it has none (a
/// field the reader could not determine is `FIELD?`: the reason, text or a
/// record with `reason` and `decide`; any other is absent). A scope
/// answering a name's field from a record it holds reads it here, in
/// place, as the evaluator would from a copy.
pub fn record_field(map: &BTreeMap<String, Value>, field: &str) -> Result<Value, Missing> {
    if let Some(v) = map.get(field) {
        return Ok(v.clone());
    }
    Err(match map.get(&format!("{field}?")) {
        Some(why) => Missing::Unknown {
            subject: field.to_string(),
            reason: match why {
                Value::Record(w) => w.get("reason").map(Value::to_plain).unwrap_or_default(),
                other => other.to_plain(),
            },
        },
        None => Missing::Absent {
            subject: field.to_string(),
            reason: format!("has no field `{field}`"),
        },
    })
}

/// Evaluate an expression in `cx`'s [`Scope`].
pub fn eval<S: InScope + ?Sized>(e: &Expr, cx: &S) -> Result<Value, Missing> {
    eval_in(e, &cx.scope())
}

fn eval_in(e: &Expr, cx: &Scope) -> Result<Value, Missing> {
    let eval = eval_in;
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::List(items) => Ok(Value::List(
            items
                .iter()
                .map(|i| eval(i, cx))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Name(n) => cx.name(n),
        Expr::Param(p) => cx.param(p),
        Expr::Setting(ns, key) => match key.as_ref() {
            // a key written out is read in place, not copied twice first
            Expr::Lit(Value::Str(k)) => cx.setting(ns, k),
            key => match eval(key, cx)? {
                Value::Str(k) => cx.setting(ns, &k),
                k => cx.setting(ns, &k.to_plain()),
            },
        },
        Expr::Field(base, field) => match match base.as_ref() {
            Expr::Name(n) => match cx.field(n, field) {
                Some(answer) => return answer,
                None => eval(base, cx)?,
            },
            _ => eval(base, cx)?,
        } {
            // the field moved out of the record read (a copy of its own)
            Value::Record(mut map) => match map.remove(field.as_str()) {
                Some(v) => Ok(v),
                None => record_field(&map, field),
            },
            other => err(format!(
                "`.{field}` needs a record, got {}",
                other.type_name()
            )),
        },
        Expr::Unary(op, x) => match operand(x, cx) {
            Ok(v) => ops::unary(*op, &v).map_err(Missing::Error),
            Err(m) if *op == super::UnOp::Neg => Err(bounds::negate(&m).unwrap_or(m)),
            Err(m) => Err(m),
        },
        Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
            // the side that decides: false for `and` (false and <missing>
            // is false), true for `or`
            let decides = *op == BinOp::Or;
            match eval(a, cx) {
                Ok(v) if truthy(&v)? == decides => Ok(Value::Bool(decides)),
                Ok(_) => Ok(Value::Bool(truthy(&eval(b, cx)?)?)),
                Err(m) => match eval(b, cx) {
                    Ok(v) if truthy(&v)? == decides => Ok(Value::Bool(decides)),
                    _ => Err(m),
                },
            }
        }
        Expr::Binary(op, a, b) => match operand(a, cx) {
            Ok(x) => match operand(b, cx) {
                Ok(y) => ops::binary(*op, &x, &y).map_err(Missing::Error),
                Err(m) => range_right(*op, x.into_owned(), m),
            },
            Err(m) => range_left(*op, m, b, cx),
        },
        Expr::Call(f, args) => call(f, args, cx),
    }
}

/// `x OP <missing>`: decided over the missing side's range when it has
/// one ([`bounds`]), else that side's reason. Out of line, so the
/// recursive evaluator's frame stays as small as before ranges.
#[cold]
#[inline(never)]
fn range_right(op: BinOp, x: Value, m: Missing) -> Result<Value, Missing> {
    if !matches!(m, Missing::Bounded { .. }) {
        return Err(m);
    }
    let y = Err(m);
    bounds::binary(op, &Ok(x), &y).unwrap_or(y)
}

/// `<missing> OP b`: a range on the left may still be decided by the
/// right side; any other missing value is the answer, `b` unread.
#[cold]
#[inline(never)]
fn range_left(op: BinOp, m: Missing, b: &Expr, cx: &Scope) -> Result<Value, Missing> {
    if !matches!(m, Missing::Bounded { .. }) {
        return Err(m);
    }
    let x = Err(m);
    let y = eval_in(b, cx);
    bounds::binary(op, &x, &y).unwrap_or(x)
}

/// An operand's value: a literal as written (not copied), else evaluated.
fn operand<'e>(e: &'e Expr, cx: &Scope) -> Result<Cow<'e, Value>, Missing> {
    match e {
        Expr::Lit(v) => Ok(Cow::Borrowed(v)),
        _ => eval_in(e, cx).map(Cow::Owned),
    }
}

fn call(f: &str, args: &[Expr], cx: &Scope) -> Result<Value, Missing> {
    let eval = eval_in;
    match f {
        "present" => match eval(&args[0], cx) {
            Ok(_) => Ok(Value::Bool(true)),
            Err(Missing::Absent { .. }) => Ok(Value::Bool(false)),
            Err(m) => Err(m),
        },
        "default" => match eval(&args[0], cx) {
            Err(Missing::Absent { .. }) => eval(&args[1], cx),
            other => other,
        },
        "within" => within(args, cx),
        _ => {
            let vals = match arguments(f, args, cx) {
                Ok(v) => v,
                Err(answer) => return answer,
            };
            match f {
                "du" => match cx.host {
                    Some(h) => h.dir_size(&vals[0].to_plain()),
                    None => cx.no_host(f),
                },
                "mount_of" => match cx.host {
                    Some(h) => h.mount_of(&vals[0].to_plain()),
                    None => cx.no_host(f),
                },
                _ => ops::function(f, &vals).map_err(Missing::Error),
            }
        }
    }
}

/// `within(x, lo, hi)` ([`bounds::within`]).
#[inline(never)]
fn within(args: &[Expr], cx: &Scope) -> Result<Value, Missing> {
    let x = eval_in(&args[0], cx);
    let (lo, hi) = (eval_in(&args[1], cx)?, eval_in(&args[2], cx)?);
    if lo.as_f64().is_none() || hi.as_f64().is_none() {
        return err(format!(
            "`within` needs numbers for its range, got {} and {}",
            lo.type_name(),
            hi.type_name()
        ));
    }
    bounds::within(x, lo, hi)
}

/// A function's arguments in order, up to the first one missing (`Err`
/// with the call's answer: that reason, or the function of a range a
/// monotone function carries, see [`bounds::function`]).
#[inline(never)]
fn arguments(f: &str, args: &[Expr], cx: &Scope) -> Result<Vec<Value>, Result<Value, Missing>> {
    let mut got: Vec<Result<Value, Missing>> = Vec::with_capacity(args.len());
    for a in args {
        let r = eval_in(a, cx);
        // a range does not stop the others: a monotone function carries it
        let stop = matches!(r, Err(ref m) if !matches!(m, Missing::Bounded { .. }));
        got.push(r);
        if stop {
            break;
        }
    }
    if !got.iter().any(Result::is_err) {
        return Ok(got.into_iter().filter_map(Result::ok).collect());
    }
    if let Some(r) = bounds::function(f, &got) {
        return Err(r);
    }
    Err(got
        .into_iter()
        .find_map(Result::err)
        .map_or_else(|| err(format!("`{f}`: a missing argument")), Err))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{parse, walk, MAX_TOKENS, MAX_TREE_DEPTH};

    /// Host data by name (`NS:KEY` for a setting, `du:PATH`), and the
    /// parameters; every scope of these tests is over it.
    struct Cx(BTreeMap<String, Value>, BTreeMap<String, Value>);
    impl Host for Cx {
        fn fact(&self, n: &str) -> Result<Value, Missing> {
            self.0.get(n).cloned().ok_or(Missing::Absent {
                subject: n.into(),
                reason: "unset".into(),
            })
        }
        fn setting(&self, ns: &str, k: &str) -> Result<Value, Missing> {
            self.fact(&format!("{ns}:{k}"))
        }
        fn dir_size(&self, p: &str) -> Result<Value, Missing> {
            self.fact(&format!("du:{p}"))
        }
        fn mount_of(&self, _p: &str) -> Result<Value, Missing> {
            Ok(Value::Str("/".into()))
        }
    }
    impl InScope for Cx {
        fn scope(&self) -> Scope<'_> {
            Scope {
                params: Some(&self.1),
                specials: None,
                item: None,
                lets: None,
                host: Some(self),
                no_host: NoHost::BeforeGathering,
            }
        }
    }

    #[test]
    fn every_catalogue_function_is_implemented_and_parses_at_its_arity() {
        for f in crate::catalogue::FUNCTIONS {
            let args: Vec<&str> = (0..f.min_args).map(|_| "\"10.11.5\"").collect();
            let src = format!("{}({})", f.name, args.join(", "));
            let e = parse(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
            if let Err(Missing::Error(m)) = eval(&e, &cx()) {
                assert!(!m.starts_with("unknown function"), "{src}: {m}");
            }
            if f.max_args != usize::MAX {
                let too_many = format!("{}({})", f.name, vec!["1"; f.max_args + 1].join(", "));
                assert!(parse(&too_many).is_err(), "{too_many} parsed");
            }
        }
    }

    fn cx() -> Cx {
        let mut m = BTreeMap::new();
        m.insert("mem_total".into(), Value::Size(24.0 * 1073741824.0));
        m.insert(
            "mycnf:innodb_buffer_pool_size".into(),
            Value::Size(12.0 * 1073741824.0),
        );
        m.insert(
            "sysctl:net.ipv4.conf.eth0/100.rp_filter".into(),
            Value::Number(1.0),
        );
        m.insert("sysctl:net.ipv4.tcp_timestamps".into(), Value::Number(1.0));
        Cx(m, [("share".to_string(), Value::Number(0.8))].into())
    }

    fn ev(s: &str) -> Result<Value, Missing> {
        eval(&parse(s).unwrap(), &cx())
    }

    #[test]
    fn arithmetic_with_units() {
        assert_eq!(ev("1G + 512M").unwrap(), Value::Size(1610612736.0));
        assert_eq!(ev("10 GiB / 2").unwrap(), Value::Size(5.0 * 1073741824.0));
        assert_eq!(ev("15%").unwrap(), Value::Number(0.15));
        assert_eq!(ev("2 * 3 + 1").unwrap(), Value::Number(7.0));
        assert_eq!(ev("1G / 512M").unwrap(), Value::Number(2.0));
    }

    #[test]
    fn settings_params_and_facts() {
        assert_eq!(
            ev("mycnf.innodb_buffer_pool_size <= params.share * mem_total").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            ev("mycnf.innodb_buffer_pool_size / mem_total").unwrap(),
            Value::Number(0.5)
        );
        assert_eq!(
            ev("sysctl[\"net.ipv4.conf.eth0/100.rp_filter\"] == 1").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(
            ev("sysctl.net.ipv4.tcp_timestamps == 1").unwrap(),
            Value::Bool(true)
        );
    }

    #[test]
    fn missing_values_propagate_and_present_default_handle_them() {
        assert!(matches!(
            ev("sysctl.net.ipv4.tcp_tw_recycle == 0"),
            Err(Missing::Absent { .. })
        ));
        assert_eq!(
            ev("present(sysctl.net.ipv4.tcp_tw_recycle)").unwrap(),
            Value::Bool(false)
        );
        assert_eq!(
            ev("default(sysctl.net.ipv4.tcp_tw_recycle, 0) == 0").unwrap(),
            Value::Bool(true)
        );
        assert_eq!(ev("false and sysctl.x.y == 1").unwrap(), Value::Bool(false));
        assert_eq!(ev("min(1G, 2G, 512M)").unwrap(), Value::Size(536870912.0));
    }

    #[test]
    fn versions_compare_as_numbers() {
        assert_eq!(
            ev("version(\"10.11.19-MariaDB-0+deb12u1\")").unwrap(),
            Value::Number(10011019.0)
        );
        assert_eq!(
            ev("version(\"5.6.51-91.0-log\") >= version(\"5.7.7\")").unwrap(),
            Value::Bool(false)
        );
        assert_eq!(
            ev("version(\"8.0\") >= version(\"5.7.7\")").unwrap(),
            Value::Bool(true)
        );
        assert!(matches!(ev("version(\"MariaDB\")"), Err(Missing::Error(_))));
        assert!(matches!(
            ev("version(\"1.1000.1\")"),
            Err(Missing::Error(_))
        ));
    }

    #[test]
    fn a_flat_chain_is_capped_at_parse_time_and_the_largest_allowed_one_evaluates() {
        // 20,000 terms: an error at the first token past the cap, not a stack overflow
        let long = vec!["1"; 20_000].join("+");
        let e = parse(&long).unwrap_err();
        assert_eq!(e.offset, MAX_TOKENS); // one character per token: `1`, `+`, `1`, ...
        assert!(e.message.contains("expression too long"), "{}", e.message);
        // within the token cap but too deep: 200 terms are 200 levels
        let e = parse(&vec!["1"; 200].join("+")).unwrap_err();
        assert!(e.message.contains("expression too deep"), "{}", e.message);
        // the deepest accepted chain (64 levels: 64 terms) parses, evaluates,
        // walks and drops on a thread with a quarter of the 2 MiB a spawned
        // thread gets (debug build)
        let ok = vec!["1"; MAX_TREE_DEPTH].join("+");
        let n = std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                let e = parse(&ok).unwrap();
                let v = eval(&e, &cx()).unwrap();
                let mut nodes = 0;
                walk(&e, &mut |_| nodes += 1);
                (v, nodes)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(n, (Value::Number(64.0), 127));
        assert!(parse(&vec!["1"; MAX_TREE_DEPTH + 1].join("+")).is_err());
    }

    #[test]
    fn a_constant_names_what_it_cannot_use_and_folds_the_rest() {
        let params: BTreeMap<String, Value> = [("share".to_string(), Value::Number(0.4))].into();
        let fold = |src: &str, params: Option<&BTreeMap<String, Value>>| {
            let e = parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            eval(&e, &Scope::constant(params, "a path")).map_err(|m| m.to_string())
        };
        let p = Some(&params);
        assert_eq!(
            fold("params.share * 10G", p),
            Ok(Value::Size(4.0 * 1073741824.0))
        );
        assert_eq!(
            fold("params.nope + 1", p),
            Err("unknown parameter `nope`".into())
        );
        assert_eq!(
            fold("params.share", None),
            Err("`share` cannot be used in a path".into())
        );
        assert_eq!(fold("mem_total > 1 and false", p), Ok(Value::Bool(false)));
        assert_eq!(fold("mem_total or true", p), Ok(Value::Bool(true)));
        assert_eq!(
            fold("mem_total and true", p),
            Err("`mem_total` cannot be used in a path".into())
        );
        assert_eq!(
            fold("du(\"/srv\")", p),
            Err("`du` cannot be used in a path".into())
        );
        assert_eq!(
            fold("mount_of(\"/srv\")", p),
            Err("`mount_of` cannot be used in a path".into())
        );
        assert_eq!(
            fold("mycnf.x + 1", p),
            Err("`mycnf` cannot be used in a path".into())
        );
        assert_eq!(fold("1 / 0", p), Err("division by zero".into()));
        assert_eq!(
            fold("[1, 2].x", p),
            Err("`.x` needs a record, got list".into())
        );
    }
}
