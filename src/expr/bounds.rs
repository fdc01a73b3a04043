//! Interval arithmetic over a number known only to lie in a range
//! ([`Missing::Bounded`]): `+ - * /`, the comparisons and the monotone
//! functions (`min`, `max`, `size`, `number`, `round`, `floor`, `ceil`)
//! carry the range, and a comparison that every value in the range answers
//! the same way is decided. What an operator does to one value comes from
//! [`super::ops`]; this file only says what it does to every value of a
//! range at once. Pure: no I/O, no facts.

use super::missing::Missing;
use super::{ops, BinOp};
use crate::value::Value;

/// The range an operand may take: a known number is its own range.
struct Range<'a> {
    lo: Value,
    hi: Value,
    /// The unknown input it came from (subject, reason), if any.
    from: Option<(&'a str, &'a str)>,
}

fn range(r: &Result<Value, Missing>) -> Option<Range<'_>> {
    match r {
        Ok(v @ (Value::Number(_) | Value::Size(_))) => Some(Range {
            lo: v.clone(),
            hi: v.clone(),
            from: None,
        }),
        Err(Missing::Bounded {
            subject,
            reason,
            lo,
            hi,
        }) => Some(Range {
            lo: lo.clone(),
            hi: hi.clone(),
            from: Some((subject, reason)),
        }),
        _ => None,
    }
}

fn is_bounded(r: &Result<Value, Missing>) -> bool {
    matches!(r, Err(Missing::Bounded { .. }))
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The smallest and largest of `vals` (by number), as values.
fn spread(vals: Vec<Value>) -> (Value, Value) {
    let mut lo = vals[0].clone();
    let mut hi = vals[0].clone();
    for v in vals {
        if num(&v) < num(&lo) {
            lo = v.clone();
        }
        if num(&v) > num(&hi) {
            hi = v;
        }
    }
    (lo, hi)
}

/// A range that is not decided: still bounded, named after its input.
fn bounded(from: (&str, &str), lo: Value, hi: Value) -> Missing {
    Missing::Bounded {
        subject: from.0.to_string(),
        reason: from.1.to_string(),
        lo,
        hi,
    }
}

/// A comparison the range does not decide: `unknown`, saying over what.
fn undecided(from: (&str, &str), a: &Range, b: &Range) -> Missing {
    let shown = |r: &Range| {
        if r.lo == r.hi {
            super::show(&r.lo)
        } else {
            format!("between {} and {}", super::show(&r.lo), super::show(&r.hi))
        }
    };
    Missing::Unknown {
        subject: from.0.to_string(),
        reason: format!(
            "{} (the answer differs over its range: {} against {})",
            from.1,
            shown(a),
            shown(b)
        ),
    }
}

/// `a OP b` where at least one side is a [`Missing::Bounded`] and both are
/// numbers or ranges; `None` when this is not such a case (the caller
/// then reports the first missing operand as usual).
pub(super) fn binary(
    op: BinOp,
    a: &Result<Value, Missing>,
    b: &Result<Value, Missing>,
) -> Option<Result<Value, Missing>> {
    if !is_bounded(a) && !is_bounded(b) {
        return None;
    }
    let (x, y) = (range(a)?, range(b)?);
    let from = x.from.or(y.from)?;
    let at = |p: &Value, q: &Value| ops::binary(op, p, q);
    let cmp =
        |o: BinOp, p: &Value, q: &Value| matches!(ops::binary(o, p, q), Ok(Value::Bool(true)));
    let decided = |yes: bool, no: bool| -> Result<Value, Missing> {
        if yes {
            Ok(Value::Bool(true))
        } else if no {
            Ok(Value::Bool(false))
        } else {
            Err(undecided(from, &x, &y))
        }
    };
    Some(match op {
        BinOp::Add => match (at(&x.lo, &y.lo), at(&x.hi, &y.hi)) {
            (Ok(lo), Ok(hi)) => Err(bounded(from, lo, hi)),
            (Err(e), _) | (_, Err(e)) => Err(Missing::Error(e)),
        },
        BinOp::Sub => match (at(&x.lo, &y.hi), at(&x.hi, &y.lo)) {
            (Ok(lo), Ok(hi)) => Err(bounded(from, lo, hi)),
            (Err(e), _) | (_, Err(e)) => Err(Missing::Error(e)),
        },
        BinOp::Mul | BinOp::Div => {
            // a divisor range holding 0 has no bounded quotient
            if op == BinOp::Div && num(&y.lo) <= 0.0 && num(&y.hi) >= 0.0 {
                return Some(Err(undecided(from, &x, &y)));
            }
            let mut corners = Vec::with_capacity(4);
            for p in [&x.lo, &x.hi] {
                for q in [&y.lo, &y.hi] {
                    match at(p, q) {
                        Ok(v) => corners.push(v),
                        Err(e) => return Some(Err(Missing::Error(e))),
                    }
                }
            }
            let (lo, hi) = spread(corners);
            Err(bounded(from, lo, hi))
        }
        // x < y for every value: x's largest below y's smallest
        BinOp::Lt => decided(cmp(BinOp::Lt, &x.hi, &y.lo), cmp(BinOp::Ge, &x.lo, &y.hi)),
        BinOp::Le => decided(cmp(BinOp::Le, &x.hi, &y.lo), cmp(BinOp::Gt, &x.lo, &y.hi)),
        BinOp::Gt => decided(cmp(BinOp::Gt, &x.lo, &y.hi), cmp(BinOp::Le, &x.hi, &y.lo)),
        BinOp::Ge => decided(cmp(BinOp::Ge, &x.lo, &y.hi), cmp(BinOp::Lt, &x.hi, &y.lo)),
        BinOp::Eq | BinOp::Ne => {
            let apart = cmp(BinOp::Lt, &x.hi, &y.lo) || cmp(BinOp::Lt, &y.hi, &x.lo);
            let same = cmp(BinOp::Eq, &x.lo, &x.hi)
                && cmp(BinOp::Eq, &y.lo, &y.hi)
                && cmp(BinOp::Eq, &x.lo, &y.lo);
            let (yes, no) = (same, apart);
            if op == BinOp::Eq {
                decided(yes, no)
            } else {
                decided(no, yes)
            }
        }
        _ => return None,
    })
}

/// A monotone function (`min`, `max`, `size`, `number`, `round`, `floor`,
/// `ceil`) of arguments of which at least one is bounded: the function of
/// the lower ends to the function of the upper ends. `None` for any other
/// function or argument.
pub(super) fn function(f: &str, args: &[Result<Value, Missing>]) -> Option<Result<Value, Missing>> {
    if !matches!(
        f,
        "min" | "max" | "size" | "number" | "round" | "floor" | "ceil"
    ) || !args.iter().any(is_bounded)
    {
        return None;
    }
    // round/floor/ceil take a count of places as their second argument
    let ranged = if matches!(f, "min" | "max") {
        args.len()
    } else {
        1
    };
    let mut los = Vec::with_capacity(args.len());
    let mut his = Vec::with_capacity(args.len());
    let mut from = None;
    for (i, a) in args.iter().enumerate() {
        if i < ranged {
            let r = range(a)?;
            from = from.or(r.from);
            los.push(r.lo);
            his.push(r.hi);
        } else {
            let v = a.as_ref().ok()?.clone();
            los.push(v.clone());
            his.push(v);
        }
    }
    let from = from?;
    Some(match (ops::function(f, &los), ops::function(f, &his)) {
        (Ok(lo), Ok(hi)) => Err(bounded(from, lo, hi)),
        (Err(e), _) | (_, Err(e)) => Err(Missing::Error(e)),
    })
}

/// `within(x, lo, hi)`: `x` when known; when `x` is unknown, a value known
/// to lie in `[lo, hi]` (what the rule's author knows of its physics, a
/// redo log inside its data directory), so a verdict every value in the
/// range gives is still given.
pub(super) fn within(x: Result<Value, Missing>, lo: Value, hi: Value) -> Result<Value, Missing> {
    // a range of one value is that value: every value the unknown input
    // may take is it (`within(running, next, next)`)
    if num(&lo) == num(&hi) && matches!(x, Err(Missing::Unknown { .. } | Missing::Bounded { .. })) {
        return Ok(lo);
    }
    match x {
        Err(Missing::Unknown { subject, reason }) => Err(Missing::Bounded {
            subject,
            reason,
            lo,
            hi,
        }),
        Err(Missing::Bounded {
            subject,
            reason,
            lo: l,
            hi: h,
        }) => {
            // the narrower of the two ranges
            let lo = if num(&lo) > num(&l) { lo } else { l };
            let hi = if num(&hi) < num(&h) { hi } else { h };
            Err(Missing::Bounded {
                subject,
                reason,
                lo,
                hi,
            })
        }
        other => other,
    }
}

/// `-x` of a range: its ends swapped and negated.
pub(super) fn negate(x: &Missing) -> Option<Missing> {
    match x {
        Missing::Bounded {
            subject,
            reason,
            lo,
            hi,
        } => Some(Missing::Bounded {
            subject: subject.clone(),
            reason: reason.clone(),
            lo: ops::unary(super::UnOp::Neg, hi).ok()?,
            hi: ops::unary(super::UnOp::Neg, lo).ok()?,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval::{eval, Host, InScope, Missing, NoHost, Scope};
    use crate::expr::parse;
    use crate::value::Value;

    const GIB: f64 = 1073741824.0;

    /// A host whose `redo` cannot be read and whose other facts are sizes.
    struct H;
    impl Host for H {
        fn fact(&self, n: &str) -> Result<Value, Missing> {
            match n {
                "dir" => Ok(Value::Size(1000.0 * GIB)),
                "small_dir" => Ok(Value::Size(40.0 * GIB)),
                "pool" => Ok(Value::Size(0.125 * GIB)),
                "ram" => Ok(Value::Size(64.0 * GIB)),
                _ => Err(Missing::Unknown {
                    subject: n.into(),
                    reason: "not captured".into(),
                }),
            }
        }
        fn setting(&self, _: &str, k: &str) -> Result<Value, Missing> {
            self.fact(k)
        }
        fn dir_size(&self, p: &str) -> Result<Value, Missing> {
            self.fact(p)
        }
        fn mount_of(&self, _: &str) -> Result<Value, Missing> {
            Ok(Value::Str("/".into()))
        }
    }
    impl InScope for H {
        fn scope(&self) -> Scope<'_> {
            Scope {
                params: None,
                specials: None,
                item: None,
                lets: None,
                host: Some(self),
                no_host: NoHost::BeforeGathering,
            }
        }
    }

    fn ev(src: &str) -> Result<Value, Missing> {
        eval(&parse(src).unwrap(), &H)
    }

    #[test]
    fn a_range_of_one_value_is_that_value() {
        // an uncaptured running pool taken as the next start's, for the
        // numbers a rule shows (mysql.pool-too-small-for-data)
        assert_eq!(
            ev("size(min(pool, within(redo, pool, pool)))"),
            Ok(Value::Size(0.125 * GIB))
        );
        // a known value is itself, whatever the range
        assert_eq!(ev("within(pool, ram, ram)"), Ok(Value::Size(0.125 * GIB)));
    }

    #[test]
    fn a_range_decides_a_comparison_every_value_of_it_answers_alike() {
        // a redo log of at most 128 GiB cannot bring 1000 GiB of data
        // under 48 GiB of RAM: the pool is too small whatever it is
        let target = "min(size(max(dir - within(redo, 0.001, 128 * 1073741824), 0)), 0.75 * ram)";
        assert_eq!(ev(&format!("pool >= {target}")), Ok(Value::Bool(false)));
        assert_eq!(ev(&format!("{target} > pool")), Ok(Value::Bool(true)));
        // on 40 GiB the same range leaves 0..40 GiB of data: undecided,
        // and the reason says over what
        let small =
            "pool >= min(size(max(small_dir - within(redo, 0, 128 * 1073741824), 0)), 0.75 * ram)";
        match ev(small) {
            Err(Missing::Unknown { subject, reason }) => {
                assert_eq!(subject, "redo");
                assert!(reason.contains("not captured"), "{reason}");
                assert!(reason.contains("differs over its range"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        // equality: a range apart from the value is decided, inside is not
        assert_eq!(ev("within(redo, 1, 5) == 9"), Ok(Value::Bool(false)));
        assert_eq!(ev("within(redo, 1, 5) != 9"), Ok(Value::Bool(true)));
        assert!(matches!(
            ev("within(redo, 1, 5) == 3"),
            Err(Missing::Unknown { .. })
        ));
        // negation and products carry the range; a divisor range holding 0 does not
        assert_eq!(ev("-within(redo, 1, 5) < 0"), Ok(Value::Bool(true)));
        assert_eq!(ev("within(redo, -2, 3) * 2 < 7"), Ok(Value::Bool(true)));
        assert!(matches!(
            ev("10 / within(redo, -1, 1) > 0"),
            Err(Missing::Unknown { .. })
        ));
        assert_eq!(ev("10 / within(redo, 2, 5) >= 2"), Ok(Value::Bool(true)));
    }

    #[test]
    fn a_known_value_ignores_its_range_and_a_range_alone_stays_unknown() {
        assert_eq!(ev("within(pool, 0, 1)"), Ok(Value::Size(0.125 * GIB)));
        match ev("within(redo, 1, 5) + 1") {
            Err(Missing::Bounded { lo, hi, .. }) => {
                assert_eq!((lo, hi), (Value::Number(2.0), Value::Number(6.0)));
            }
            other => panic!("{other:?}"),
        }
        // two ranges narrow to their overlap
        match ev("within(within(redo, 1, 5), 3, 9)") {
            Err(Missing::Bounded { lo, hi, .. }) => {
                assert_eq!((lo, hi), (Value::Number(3.0), Value::Number(5.0)));
            }
            other => panic!("{other:?}"),
        }
        // `and`/`or` still absorb it as any unknown
        assert_eq!(ev("within(redo, 1, 5) > 3 or true"), Ok(Value::Bool(true)));
        // a non-numeric range is an error in the rule
        assert!(matches!(
            ev("within(redo, \"a\", 5)"),
            Err(Missing::Error(_))
        ));
    }
}
