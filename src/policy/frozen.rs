//! The built-in policies in a pre-compiled form: `builtin_frozen.rs` is Rust
//! code, generated from the compiled YAML by this module's test, that builds
//! the built-in [`Policy`]s and [`Rule`]s directly, so a run does not parse
//! and compile ~60 KB of YAML (about half the time of a live check). The
//! generated file carries a hash of the YAML it came from; when the YAML in
//! `policies/` changes without regenerating, the hashes differ at compile
//! time and [`builtin`] returns `None` (the loader then compiles the YAML:
//! slower, never wrong), and the test fails with the command to regenerate.
//! Must not read files or the host.

use std::collections::BTreeMap;

use super::builtin::BUILTIN;
use super::{
    Applies, Bound, Breakdown, Check, CompareMode, DriftCheck, ExpectOp, Policy, Remedy, Rule,
    RuleSource, Severity, Template, TemplatePart,
};
// what the generated code builds a built-in `for_each` rule with
#[allow(unused_imports)]
use super::{ForEach, ForEachSource};
use crate::expr::{BinOp, Expr, UnOp};
use crate::value::Value;

include!("builtin_frozen.rs");

/// FNV-1a over the built-in policies' paths and texts, at compile time.
const fn yaml_hash(items: &[(&str, &str)]) -> u64 {
    const fn bytes(mut h: u64, b: &[u8]) -> u64 {
        let mut i = 0;
        while i < b.len() {
            h ^= b[i] as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
            i += 1;
        }
        h
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < items.len() {
        let (path, text) = items[i];
        h = bytes(h, path.as_bytes());
        h = bytes(h, &[0]);
        h = bytes(h, text.as_bytes());
        h = bytes(h, &[0]);
        i += 1;
    }
    h
}

/// Hash of the YAML compiled into this binary.
const YAML_HASH: u64 = yaml_hash(BUILTIN);

/// The built-in policies and rules, when the frozen form was made from the
/// YAML compiled into this binary.
pub(super) fn builtin() -> Option<(Vec<Policy>, Vec<Rule>)> {
    if FROZEN_FROM != YAML_HASH {
        return None;
    }
    Some(frozen())
}

// Short constructors the generated code calls.

fn s(x: &str) -> String {
    x.to_string()
}

fn b(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn f(bits: u64) -> f64 {
    f64::from_bits(bits)
}

fn globs(list: &[&str]) -> Vec<glob::Pattern> {
    // compiled and checked when the form was generated
    list.iter()
        .filter_map(|g| glob::Pattern::new(g).ok())
        .collect()
}

fn tpl(source: &str, parts: Vec<TemplatePart>) -> Template {
    Template {
        parts,
        source: s(source),
    }
}

#[cfg(test)]
mod generate {
    //! Writes `builtin_frozen.rs` from the compiled YAML.

    use std::fmt::Write;

    use super::*;

    fn value(o: &mut String, v: &Value) {
        match v {
            Value::Number(n) => write!(o, "Value::Number(f(0x{:x}))", n.to_bits()),
            Value::Size(n) => write!(o, "Value::Size(f(0x{:x}))", n.to_bits()),
            Value::Bool(x) => write!(o, "Value::Bool({x})"),
            Value::Str(x) => write!(o, "Value::Str(s({x:?}))"),
            Value::List(xs) => {
                o.push_str("Value::List(vec![");
                for x in xs {
                    value(o, x);
                    o.push(',');
                }
                o.push_str("])");
                Ok(())
            }
            Value::Record(m) => {
                o.push_str("Value::Record(BTreeMap::from([");
                for (k, x) in m {
                    write!(o, "(s({k:?}),").unwrap();
                    value(o, x);
                    o.push_str("),");
                }
                o.push_str("]))");
                Ok(())
            }
        }
        .unwrap()
    }

    fn exprs(o: &mut String, xs: &[Expr]) {
        o.push_str("vec![");
        for x in xs {
            expr(o, x);
            o.push(',');
        }
        o.push(']');
    }

    fn expr(o: &mut String, e: &Expr) {
        match e {
            Expr::Lit(v) => {
                o.push_str("Expr::Lit(");
                value(o, v);
                o.push(')');
            }
            Expr::List(xs) => {
                o.push_str("Expr::List(");
                exprs(o, xs);
                o.push(')');
            }
            Expr::Name(n) => write!(o, "Expr::Name(s({n:?}))").unwrap(),
            Expr::Param(n) => write!(o, "Expr::Param(s({n:?}))").unwrap(),
            Expr::Setting(ns, k) => {
                write!(o, "Expr::Setting(s({ns:?}),b(").unwrap();
                expr(o, k);
                o.push_str("))");
            }
            Expr::Field(x, name) => {
                o.push_str("Expr::Field(b(");
                expr(o, x);
                write!(o, "),s({name:?}))").unwrap();
            }
            Expr::Unary(op, x) => {
                write!(o, "Expr::Unary(UnOp::{op:?},b(").unwrap();
                expr(o, x);
                o.push_str("))");
            }
            Expr::Binary(op, l, r) => {
                write!(o, "Expr::Binary(BinOp::{op:?},b(").unwrap();
                expr(o, l);
                o.push_str("),b(");
                expr(o, r);
                o.push_str("))");
            }
            Expr::Call(name, args) => {
                write!(o, "Expr::Call(s({name:?}),").unwrap();
                exprs(o, args);
                o.push(')');
            }
        }
    }

    fn template(o: &mut String, t: &Template) {
        write!(o, "tpl({:?},vec![", t.source).unwrap();
        for p in &t.parts {
            match p {
                TemplatePart::Text(x) => write!(o, "TemplatePart::Text(s({x:?})),").unwrap(),
                TemplatePart::Expr(e) => {
                    o.push_str("TemplatePart::Expr(");
                    expr(o, e);
                    o.push_str("),");
                }
            }
        }
        o.push_str("])");
    }

    fn opt(x: &Option<String>) -> String {
        match x {
            Some(v) => format!("Some(s({v:?}))"),
            None => "None".into(),
        }
    }

    fn rule(o: &mut String, r: &Rule) {
        write!(
            o,
            "Rule{{id:s({:?}),policy:s({:?}),title:s({:?}),severity:Severity::{:?},\napplies:vec![",
            r.id, r.policy, r.title, r.severity
        )
        .unwrap();
        for a in &r.applies {
            match a {
                Applies::Kernel(conds, text) => {
                    o.push_str("Applies::Kernel(vec![");
                    for (op, v) in conds {
                        write!(o, "(s({op:?}),vec!{v:?}),").unwrap();
                    }
                    write!(o, "],s({text:?})),").unwrap();
                }
                Applies::Exists(p) => write!(o, "Applies::Exists(s({p:?})),").unwrap(),
                Applies::Missing(p) => write!(o, "Applies::Missing(s({p:?})),").unwrap(),
                Applies::When(e, text) => {
                    o.push_str("Applies::When(");
                    expr(o, e);
                    write!(o, ",s({text:?})),").unwrap();
                }
            }
        }
        o.push_str("],\nlets:BTreeMap::from([");
        for (k, e) in &r.lets {
            write!(o, "(s({k:?}),").unwrap();
            expr(o, e);
            o.push_str("),");
        }
        o.push_str("]),\ncheck:");
        match &r.check {
            Check::Setting {
                ns,
                key,
                expect,
                presence,
            } => {
                write!(
                    o,
                    "Check::Setting{{ns:s({ns:?}),key:s({key:?}),expect:vec!["
                )
                .unwrap();
                for (op, es) in expect {
                    write!(o, "(ExpectOp::{op:?},").unwrap();
                    exprs(o, es);
                    o.push_str("),");
                }
                write!(o, "],presence:{presence:?}}}").unwrap();
            }
            Check::Assert(e) => {
                o.push_str("Check::Assert(");
                expr(o, e);
                o.push(')');
            }
            // never in a policy file: only `--target` adds one, with its
            // targets (`upgrade::register`), to a set already loaded
            Check::Upgrade(_) => o.push_str("Check::Upgrade(UpgradeCheck::default())"),
            Check::Drift(d) => {
                let pats = |p: &[glob::Pattern]| {
                    format!("{:?}", p.iter().map(|x| x.as_str()).collect::<Vec<_>>())
                };
                write!(
                    o,
                    "Check::Drift(DriftCheck{{configured:s({:?}),running:s({:?}),keys:globs(&{}),ignore:globs(&{}),field:{},running_field:{},compare:CompareMode::{:?}}})",
                    d.configured,
                    d.running,
                    pats(&d.keys),
                    pats(&d.ignore),
                    opt(&d.field),
                    opt(&d.running_field),
                    d.compare
                )
                .unwrap();
            }
        }
        o.push_str(",\nwhy:");
        template(o, &r.why);
        o.push_str(",\nfix:");
        template(o, &r.fix);
        o.push_str(",\nreferences:vec![");
        for u in &r.references {
            write!(o, "s({u:?}),").unwrap();
        }
        o.push_str("],\ntags:vec![");
        for t in &r.tags {
            write!(o, "s({t:?}),").unwrap();
        }
        o.push_str("],\ncontrols:vec![");
        for t in &r.controls {
            write!(o, "s({t:?}),").unwrap();
        }
        write!(
            o,
            "],\nsource:RuleSource{{path:s({:?}),line:{}}},\nbreakdown:",
            r.source.path, r.source.line
        )
        .unwrap();
        match &r.breakdown {
            None => o.push_str("None"),
            Some(bd) => {
                write!(o, "Some(Breakdown{{label:s({:?}),total:", bd.label).unwrap();
                expr(o, &bd.total);
                o.push_str(",parts:vec![");
                for (label, e) in &bd.parts {
                    write!(o, "(s({label:?}),").unwrap();
                    expr(o, e);
                    o.push_str("),");
                }
                write!(o, "],rest:s({:?})}})", bd.rest).unwrap();
            }
        }
        o.push_str(",\nremedy:");
        match &r.remedy {
            None => o.push_str("None"),
            Some(Remedy::Set {
                ns,
                key,
                to,
                text,
                bound,
                derived,
            }) => {
                write!(o, "Some(Remedy::Set{{ns:s({ns:?}),key:s({key:?}),to:").unwrap();
                expr(o, to);
                write!(
                    o,
                    ",text:s({text:?}),bound:Bound::{bound:?},derived:{derived}}})"
                )
                .unwrap();
            }
            Some(Remedy::Remove { ns, key }) => {
                write!(o, "Some(Remedy::Remove{{ns:s({ns:?}),key:s({key:?})}})").unwrap()
            }
            Some(Remedy::Options { add, remove }) => {
                let list =
                    |v: &[String]| v.iter().map(|x| format!("s({x:?}),")).collect::<String>();
                write!(
                    o,
                    "Some(Remedy::Options{{add:vec![{}],remove:vec![{}]}})",
                    list(add),
                    list(remove)
                )
                .unwrap();
            }
            Some(Remedy::Drift) => o.push_str("Some(Remedy::Drift)"),
            Some(Remedy::None { reason }) => {
                write!(o, "Some(Remedy::None{{reason:s({reason:?})}})").unwrap()
            }
        }
        // the built-ins as written: no overlay has touched them
        o.push_str(",\noverridden:Vec::new(),\nfor_each:");
        match &r.for_each {
            None => o.push_str("None"),
            Some(fe) => {
                o.push_str("Some(Box::new(ForEach{source:");
                match &fe.source {
                    ForEachSource::Param(p) => write!(o, "ForEachSource::Param(s({p:?}))").unwrap(),
                    ForEachSource::Keys {
                        ns,
                        pattern,
                        filter,
                    } => {
                        write!(
                            o,
                            "ForEachSource::Keys{{ns:s({ns:?}),pattern:s({pattern:?}),filter:"
                        )
                        .unwrap();
                        match filter {
                            None => o.push_str("None"),
                            Some((e, text)) => {
                                o.push_str("Some((");
                                expr(o, e);
                                write!(o, ",s({text:?})))").unwrap();
                            }
                        }
                        o.push('}');
                    }
                    ForEachSource::Records { ns, filter } => {
                        write!(o, "ForEachSource::Records{{ns:s({ns:?}),filter:").unwrap();
                        match filter {
                            None => o.push_str("None"),
                            Some((e, text)) => {
                                o.push_str("Some((");
                                expr(o, e);
                                write!(o, ",s({text:?})))").unwrap();
                            }
                        }
                        o.push('}');
                    }
                }
                write!(o, ",bind:s({:?})", fe.bind).unwrap();
                for (name, t) in [
                    ("subject", &fe.subject),
                    ("setting_key", &fe.setting_key),
                    ("alias", &fe.alias),
                ] {
                    write!(o, ",{name}:").unwrap();
                    match t {
                        None => o.push_str("None"),
                        Some(t) => {
                            o.push_str("Some(");
                            template(o, t);
                            o.push(')');
                        }
                    }
                }
                // `--only`/`--skip` set these on a loaded set, never in the built-ins
                o.push_str(",only:Vec::new(),skip:Vec::new(),item_params:vec![");
                for p in &fe.item_params {
                    write!(o, "s({p:?}),").unwrap();
                }
                o.push_str("],except:vec![");
                for (item, why) in &fe.except {
                    write!(o, "(s({item:?}),s({why:?})),").unwrap();
                }
                o.push_str("]}))");
            }
        }
        o.push_str("},\n");
    }

    /// The Rust source of `builtin_frozen.rs` for these policies and rules.
    pub(super) fn source(policies: &[Policy], rules: &[Rule]) -> String {
        let mut o = String::new();
        o.push_str(
            "// @generated by `DRIFTAUDIT_FREEZE=1 cargo test --lib policy::frozen` from\n\
             // policies/*.yaml: the built-in policies, compiled. Do not edit.\n\n",
        );
        writeln!(o, "/// Hash of the YAML this was generated from.").unwrap();
        writeln!(o, "const FROZEN_FROM: u64 = 0x{:x};\n", YAML_HASH).unwrap();
        o.push_str("/// The built-in policies and rules.\n#[rustfmt::skip]\n#[allow(clippy::all)]\nfn frozen() -> (Vec<Policy>, Vec<Rule>) {\nlet policies = vec![\n");
        for p in policies {
            write!(
                o,
                "Policy{{id:s({:?}),title:s({:?}),description:s({:?}),path:s({:?}),\nparams:BTreeMap::from([",
                p.id, p.title, p.description, p.path
            )
            .unwrap();
            for (k, v) in &p.params {
                write!(o, "(s({k:?}),").unwrap();
                value(&mut o, v);
                o.push_str("),");
            }
            o.push_str("]),\nparam_defaults:BTreeMap::from([");
            for (k, v) in &p.param_defaults {
                write!(o, "(s({k:?}),s({v:?})),").unwrap();
            }
            o.push_str("])},\n");
        }
        o.push_str("];\nlet rules = vec![\n");
        for r in rules {
            rule(&mut o, r);
        }
        o.push_str("];\n(policies, rules)\n}\n");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySet;

    /// The frozen form is what compiling the YAML gives, and it is current:
    /// a changed policy or compiler needs `DRIFTAUDIT_FREEZE=1 cargo test
    /// --lib policy::frozen` (then rebuild), or live checks compile the YAML.
    #[test]
    fn frozen_builtins_are_the_compiled_yaml_and_current() {
        let yaml = PolicySet::builtin_from_yaml().expect("the built-in policies compile");
        let want = generate::source(yaml.policies(), yaml.rules());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/policy/builtin_frozen.rs");
        let have = std::fs::read_to_string(path).unwrap_or_default();
        if have != want {
            if std::env::var_os("DRIFTAUDIT_FREEZE").is_some() {
                std::fs::write(path, &want).expect("write builtin_frozen.rs");
                eprintln!("wrote {path}: rebuild and run the test again");
                return;
            }
            panic!(
                "src/policy/builtin_frozen.rs is stale (policies/*.yaml or the compiler changed): \
                 run `DRIFTAUDIT_FREEZE=1 cargo test --lib policy::frozen` and commit the file \
                 (after a rebase conflict in it, take either side and run the same command)"
            );
        }
        let (policies, rules) = builtin().expect("the frozen form matches the YAML's hash");
        assert_eq!(format!("{policies:?}"), format!("{:?}", yaml.policies()));
        assert_eq!(format!("{rules:?}"), format!("{:?}", yaml.rules()));
        assert!(!rules.is_empty());
    }

    #[test]
    fn a_changed_policy_text_changes_the_hash() {
        let mut items: Vec<(&str, &str)> = BUILTIN.to_vec();
        assert_eq!(yaml_hash(&items), YAML_HASH);
        let edited = format!("{} ", items[0].1);
        items[0].1 = &edited;
        assert_ne!(yaml_hash(&items), YAML_HASH);
    }
}
