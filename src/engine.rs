//! The engine: works out what the policies need, gathers every fact from a
//! host first, then evaluates each rule over the gathered facts without any
//! I/O, producing findings. Owns rule semantics (applies, expect, assert,
//! drift) and explanations: it renders the `why`/`fix` templates and prints
//! expressions into finding text. Must not render reports (that is render/).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::eval::{eval, truthy, Context, Missing};
use crate::expr::{self, Expr};
use crate::facts::presence::Domain;
use crate::facts::{self, Entry, Evidence, Facts, FileIssue, IssueLevel, Needs, Setting};
use crate::host::{Host, SourceKind};
use crate::policy::{
    Applies, Check, CompareMode, DriftCheck, ExpectOp, Policy, PolicySet, Rule, Severity, Template,
    TemplatePart,
};
use crate::report::{
    input_rule_meta, BreakdownData, Finding, HostReport, Report, Status, INPUT_RULE,
};
use crate::value::Value;

/// Work out what the rules need gathered (sysctl keys, paths, namespaces).
pub fn needs(policies: &PolicySet) -> Needs {
    let mut n = Needs::default();
    for r in &policies.rules {
        for a in &r.applies {
            match a {
                Applies::Exists(p) | Applies::Missing(p) => {
                    if let Ok(path) = crate::policy::resolve_path(p, policies.policy_of(r)) {
                        n.paths.insert(path);
                    }
                }
                _ => {}
            }
        }
        for (ns, key) in r.settings_read() {
            if ns.starts_with("sysctl") && key != "*" {
                n.sysctl_keys
                    .insert(crate::parse::sysctl::normalize_key(&key));
            }
            n.namespaces.insert(ns);
        }
    }
    n
}

/// Audit one host: gather, then evaluate.
pub fn audit_host(policies: &PolicySet, host: &Host) -> HostReport {
    let facts = gather(policies, host);
    // Hard links matter where a root confines the reads (a snapshot).
    let hard_links = match host.kind() {
        SourceKind::Snapshot => host.hard_linked(),
        SourceKind::Live => Vec::new(),
    };
    let root = (host.kind() == SourceKind::Snapshot).then(|| host.root().to_path_buf());
    evaluate(policies, &facts)
        .with_hard_links(hard_links)
        .with_root(root)
}

/// Audit several hosts into one report.
///
/// ```
/// use driftaudit::{audit, Host, PolicySet, Status};
///
/// let policies = PolicySet::builtin()?;
/// let clean = Host::snapshot(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean"))?;
/// let report = audit(&policies, &[clean]);
/// assert!(report.hosts[0].findings.iter().all(|f| f.status != Status::Fail));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn audit(policies: &PolicySet, hosts: &[Host]) -> Report {
    Report::new(
        hosts.iter().map(|h| audit_host(policies, h)).collect(),
        policies,
    )
}

/// Gather every fact the policies need (all I/O of an audit happens here).
/// Directory sizes are gathered last, because their paths may come from
/// settings (`du(localconfig.mysql_data_directory)`).
pub fn gather(policies: &PolicySet, host: &Host) -> Facts {
    let needs = needs(policies);
    let mut f = facts::gather(host, &needs);
    let paths = du_paths(policies, &f);
    if !paths.is_empty() {
        facts::gather_dir_sizes(host, &paths, &mut f);
    }
    f
}

/// Paths whose size `du(...)` asks for, evaluated against gathered facts.
fn du_paths(policies: &PolicySet, f: &Facts) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in &policies.rules {
        let policy = policies.policy_of(r);
        let cx = RuleCx::new(f, r, policy);
        for e in r.expressions() {
            expr::walk(e, &mut |x| {
                if let Expr::Call(name, args) = x {
                    if name == "du" {
                        if let Ok(v) = eval(&args[0], &cx) {
                            out.insert(v.to_plain());
                        }
                    }
                }
            });
        }
    }
    out
}

/// Evaluate every rule over gathered facts. Pure: no I/O.
pub fn evaluate(policies: &PolicySet, facts: &Facts) -> HostReport {
    let mut findings = Vec::new();
    for rule in &policies.rules {
        let policy = policies.policy_of(rule);
        findings.extend(evaluate_rule(rule, policy, facts));
    }
    findings.extend(facts.issues.iter().map(input_finding));
    HostReport::new(facts.host.clone(), facts.source, findings).with_detections(&facts.detections)
}

fn input_finding(i: &FileIssue) -> Finding {
    let meta = input_rule_meta();
    let status = match i.level {
        IssueLevel::Problem => Status::Fail,
        IssueLevel::Unknown => Status::Unknown,
        IssueLevel::Note => Status::Skip,
    };
    let loc = match (i.line, i.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}", i.path),
        (Some(l), None) => format!("{}:{l}", i.path),
        _ => i.path.clone(),
    };
    Finding::new(
        INPUT_RULE,
        meta.policy,
        meta.title,
        Severity::Low,
        status,
        meta.source,
    )
    .with_subject(vec![i.path.clone()])
    .with_evidence(vec![Evidence {
        path: i.path.clone(),
        line: i.line,
        via: None,
    }])
    .with_explanation(format!("{loc}: {} ({} reader)", i.message, i.source))
    .with_fix(if status == Status::Fail {
        meta.fix
    } else {
        String::new()
    })
    .with_domain(Domain::of_namespace(&i.source))
}

/// Evaluation context for one rule over one host's facts.
struct RuleCx<'a> {
    facts: &'a Facts,
    rule: &'a Rule,
    policy: Option<&'a Policy>,
    special: RefCell<BTreeMap<String, Value>>,
    lets: RefCell<BTreeMap<String, Result<Value, Missing>>>,
    in_progress: RefCell<BTreeSet<String>>,
    touched: RefCell<Vec<(String, String, Setting)>>,
}

impl<'a> RuleCx<'a> {
    fn new(facts: &'a Facts, rule: &'a Rule, policy: Option<&'a Policy>) -> RuleCx<'a> {
        RuleCx {
            facts,
            rule,
            policy,
            special: RefCell::new(BTreeMap::new()),
            lets: RefCell::new(BTreeMap::new()),
            in_progress: RefCell::new(BTreeSet::new()),
            touched: RefCell::new(Vec::new()),
        }
    }

    fn evidence(&self) -> Vec<Evidence> {
        let mut out: Vec<Evidence> = Vec::new();
        for (_, _, s) in self.touched.borrow().iter() {
            for e in &s.evidence {
                if !out.contains(e) {
                    out.push(e.clone());
                }
            }
        }
        out
    }

    fn subjects(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, k, _) in self.touched.borrow().iter() {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
        out
    }

    fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (_, _, s) in self.touched.borrow().iter() {
            if let Some(n) = &s.note {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    fn render(&self, t: &Template) -> String {
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

fn collapse_ws(s: &str) -> String {
    // keep paragraph breaks, fold the rest (YAML `>` scalars end with "\n")
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
                        .find_map(|(_, _, s)| s.evidence.first().map(|e| e.to_string()))
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
        if let Some(reason) = &space.unavailable {
            return Err(Missing::Unknown {
                subject: canon,
                reason: reason.clone(),
            });
        }
        match space.entries.get(&canon) {
            Some(Entry::Set(s)) => {
                self.touched
                    .borrow_mut()
                    .push((ns.to_string(), canon, s.clone()));
                Ok(s.value.clone())
            }
            Some(Entry::Unreadable { reason, evidence }) => {
                self.touched.borrow_mut().push((
                    ns.to_string(),
                    canon.clone(),
                    Setting {
                        value: Value::Str(String::new()),
                        raw: String::new(),
                        evidence: evidence.clone(),
                        note: None,
                    },
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
                    "du".into(),
                    path.to_string(),
                    Setting::new(
                        Value::Size(*b as f64),
                        b.to_string(),
                        dir_size_evidence(self.facts, path),
                    ),
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

fn base_finding(rule: &Rule, status: Status) -> Finding {
    Finding::new(
        rule.id.clone(),
        rule.policy.clone(),
        rule.title.clone(),
        rule.severity,
        status,
        rule.source.clone(),
    )
    .with_domain(rule_domain(rule))
}

/// The domain a rule belongs to, from what it reads: storage (fstab, mounts,
/// ext4, `mount_of`) before the products (Zimbra, then MySQL) before sysctl,
/// so `storage.noatime-mysql` is storage and `zimbra.buffer-pool-fits-db`
/// (Zimbra's my.cnf, localconfig, du) is Zimbra.
pub fn rule_domain(rule: &Rule) -> Option<Domain> {
    let mut found = BTreeSet::new();
    for (ns, _) in rule.settings_read() {
        found.extend(Domain::of_namespace(&ns));
    }
    for e in rule.expressions() {
        expr::walk(e, &mut |x| match x {
            Expr::Call(name, _) if name == "mount_of" => {
                found.insert(Domain::Storage);
            }
            Expr::Name(n) => found.extend(Domain::of_namespace(n)),
            _ => {}
        });
    }
    [
        Domain::Storage,
        Domain::Zimbra,
        Domain::Mysql,
        Domain::Sysctl,
    ]
    .into_iter()
    .find(|d| found.contains(d))
}

fn kernel_ok(op: &str, ord: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        "<" => ord == Less,
        "<=" => ord != Greater,
        ">" => ord == Greater,
        ">=" => ord != Less,
        "==" => ord == Equal,
        "!=" => ord != Equal,
        _ => false,
    }
}

/// Evaluate one rule: zero or more findings (drift rules give one per key).
pub fn evaluate_rule(rule: &Rule, policy: Option<&Policy>, facts: &Facts) -> Vec<Finding> {
    let cx = RuleCx::new(facts, rule, policy);
    // applies
    for a in &rule.applies {
        let outcome: Option<(Status, String)> = match a {
            Applies::Kernel(conds, text) => match &facts.kernel {
                None => Some((
                    Status::Unknown,
                    format!("applies to kernels {text}, but this host's kernel release is unknown"),
                )),
                Some(k) => {
                    if conds.iter().all(|(op, v)| kernel_ok(op, k.cmp_parts(v))) {
                        None
                    } else {
                        Some((
                            Status::Skip,
                            format!(
                                "applies only to kernels {text}; this host runs {}",
                                k.release
                            ),
                        ))
                    }
                }
            },
            Applies::Exists(p) | Applies::Missing(p) => {
                let want = matches!(a, Applies::Exists(_));
                match crate::policy::resolve_path(p, policy) {
                    Err(e) => Some((Status::Error, format!("path `{p}`: {e}"))),
                    Ok(path) => path_condition(facts, &path, want),
                }
            }
            Applies::When(e, text) => match eval(e, &cx).and_then(|v| truthy(&v)) {
                Ok(true) => None,
                Ok(false) => Some((
                    Status::Skip,
                    match not_detected(facts, e) {
                        Some(why) => why,
                        None => format!("applies only when `{}`, which is false here", text.trim()),
                    },
                )),
                Err(Missing::Absent { subject, reason }) => Some((
                    Status::Skip,
                    format!("applies only when `{}`; {subject}: {reason}", text.trim()),
                )),
                Err(Missing::Unknown { subject, reason }) => Some((
                    Status::Unknown,
                    format!(
                        "cannot tell whether `{}` holds: {subject}: {reason}",
                        text.trim()
                    ),
                )),
                Err(Missing::Error(e)) => {
                    Some((Status::Error, format!("condition `{}`: {e}", text.trim())))
                }
            },
        };
        if let Some((status, why)) = outcome {
            let mut f = base_finding(rule, status);
            f.subject = cx.subjects();
            f.evidence = cx.evidence();
            f.explanation = why;
            return vec![f];
        }
    }
    match &rule.check {
        Check::Setting {
            ns,
            key,
            expect,
            presence,
        } => vec![check_setting(rule, &cx, ns, key, expect, *presence)],
        Check::Assert(e) => vec![check_assert(rule, &cx, e)],
        Check::Drift(d) => check_drift(rule, &cx, d),
    }
}

/// An `exists:`/`missing:` condition decided from every piece of evidence
/// ([`Facts::path_state`]): a path the snapshot does not show either way
/// makes the rule `unknown` (naming what would decide it), never `skip`.
fn path_condition(facts: &Facts, path: &str, want: bool) -> Option<(Status, String)> {
    use crate::facts::presence::PathState;
    match (facts.path_state(path), want) {
        (PathState::Known(_), true) | (PathState::Absent(_), false) => None,
        (PathState::Known(e), false) => Some((
            Status::Skip,
            format!("applies only where {path} does not exist; it does ({e})"),
        )),
        (PathState::Absent(_), true) => Some((
            Status::Skip,
            format!("applies only where {path} exists; it does not on this host"),
        )),
        (PathState::Unknown(why), _) => Some((
            Status::Unknown,
            format!(
                "applies only where {path} {}; not known: {why}",
                if want { "exists" } else { "does not exist" }
            ),
        )),
    }
}

/// For a `when:` that is false because a domain's presence fact is false
/// (`zimbra_installed`, `not zimbra_installed` excluded), the reason in words:
/// what was looked for and not found.
fn not_detected(facts: &Facts, e: &Expr) -> Option<String> {
    let mut names = Vec::new();
    let mut collect = |x: &Expr| {
        if let Expr::Name(n) = x {
            names.push(n.clone());
        }
    };
    match e {
        Expr::Name(_) => expr::walk(e, &mut collect),
        Expr::Binary(expr::BinOp::And, a, b) => {
            for side in [a.as_ref(), b.as_ref()] {
                if let Expr::Name(_) = side {
                    expr::walk(side, &mut collect)
                }
            }
        }
        _ => return None,
    }
    facts
        .detections
        .iter()
        .filter(|d| !d.detected)
        .find(|d| {
            d.domain
                .fact()
                .is_some_and(|f| names.iter().any(|n| n == f))
        })
        .map(|d| {
            let what = match d.domain {
                crate::facts::presence::Domain::Storage => {
                    "mounts or /etc/fstab are known".to_string()
                }
                other => format!("{} is installed", other.label()),
            };
            format!(
                "applies only where {what}; not detected on this host: {}",
                d.looked_for
            )
        })
}

fn expected_text(expect: &[(ExpectOp, Vec<Value>)]) -> String {
    expect
        .iter()
        .map(|(op, vals)| {
            let vs: Vec<String> = vals.iter().map(expr::show).collect();
            format!("{} {}", op.words(), vs.join(", "))
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

fn breakdown(rule: &Rule, cx: &RuleCx) -> Option<BreakdownData> {
    let b = rule.breakdown.as_ref()?;
    let total = eval(&b.total, cx).ok()?.as_f64()?;
    let parts = b
        .parts
        .iter()
        .map(|(l, e)| Some((l.clone(), eval(e, cx).ok()?.as_f64()?)))
        .collect::<Option<Vec<_>>>()?;
    Some(BreakdownData {
        label: b.label.clone(),
        total,
        parts,
        rest: b.rest.clone(),
    })
}

fn finish(rule: &Rule, cx: &RuleCx, status: Status, f: &mut Finding) {
    if matches!(status, Status::Fail | Status::Pass) {
        f.breakdown = breakdown(rule, cx);
    }
    // Render first: settings a template reads are evidence too.
    match status {
        Status::Fail => {
            let mut text = cx.render(&rule.why);
            for n in cx.notes() {
                text.push_str(&format!(" Note: {n}."));
            }
            f.explanation = text;
            f.fix = cx.render(&rule.fix);
        }
        Status::Pass if f.explanation.is_empty() => {
            let mut seen = BTreeSet::new();
            let parts: Vec<String> = cx
                .touched
                .borrow()
                .iter()
                .filter(|(_, k, _)| seen.insert(k.clone()))
                .map(|(_, k, s)| format!("{k} = {}", brief(&s.value)))
                .collect();
            f.explanation = if parts.is_empty() {
                "passes".into()
            } else {
                format!("passes: {}", parts.join(", "))
            };
        }
        _ => {}
    }
    f.subject = cx.subjects();
    f.evidence = cx.evidence();
}

fn missing_finding(rule: &Rule, cx: &RuleCx, m: Missing) -> Finding {
    let (status, text) = match m {
        Missing::Absent { subject, reason } => (Status::Skip, format!("{subject}: {reason}")),
        Missing::Unknown { subject, reason } => (Status::Unknown, format!("{subject}: {reason}")),
        Missing::Error(e) => (
            Status::Error,
            format!("the rule could not be evaluated: {e}"),
        ),
    };
    let mut f = base_finding(rule, status);
    f.subject = cx.subjects();
    f.evidence = cx.evidence();
    f.explanation = text;
    if status == Status::Unknown {
        f.fix = "Make the data readable to driftaudit (run as root, or capture it into the snapshot) and audit again.".into();
    }
    f
}

fn check_setting(
    rule: &Rule,
    cx: &RuleCx,
    ns: &str,
    key: &str,
    expect: &[(ExpectOp, Vec<Expr>)],
    presence: Option<bool>,
) -> Finding {
    let got = cx.setting(ns, key);
    let canon = cx
        .facts
        .namespaces
        .get(ns)
        .map(|n| n.canonical(key))
        .unwrap_or_else(|| key.to_string());
    cx.special
        .borrow_mut()
        .insert("setting".into(), Value::Str(canon.clone()));
    if let Ok(v) = &got {
        cx.special.borrow_mut().insert("actual".into(), v.clone());
        if let Some((_, _, s)) = cx.touched.borrow().last() {
            if let Some(e) = s.evidence.first() {
                cx.special
                    .borrow_mut()
                    .insert("source".into(), Value::Str(e.to_string()));
            }
        }
    }
    if let Some(must_exist) = presence {
        let (status, actual) = match (&got, must_exist) {
            (Ok(v), true) => (Status::Pass, Some(expr::show(v))),
            (Ok(v), false) => (Status::Fail, Some(expr::show(v))),
            (Err(Missing::Absent { .. }), true) => (Status::Fail, Some("absent".into())),
            (Err(Missing::Absent { .. }), false) => (Status::Pass, Some("absent".into())),
            (Err(m), _) => return missing_finding(rule, cx, m.clone()),
        };
        let expected = if must_exist { "present" } else { "absent" };
        cx.special
            .borrow_mut()
            .insert("expected".into(), Value::Str(expected.into()));
        let mut f = base_finding(rule, status);
        f.expected = Some(expected.into());
        f.actual = actual;
        f.subject = vec![canon.clone()];
        if status == Status::Pass {
            f.explanation = format!("{canon} is {expected}, as required");
        }
        finish(rule, cx, status, &mut f);
        if f.subject.is_empty() {
            f.subject = vec![canon];
        }
        return f;
    }
    let actual = match got {
        Ok(v) => v,
        Err(m) => {
            let mut f = missing_finding(rule, cx, m);
            if f.subject.is_empty() {
                f.subject = vec![canon];
            }
            return f;
        }
    };
    // evaluate expectations
    let mut evaluated: Vec<(ExpectOp, Vec<Value>)> = Vec::new();
    for (op, es) in expect {
        let mut vals = Vec::new();
        for e in es {
            match eval(e, cx) {
                Ok(v) => vals.push(v),
                Err(m) => return missing_finding(rule, cx, m),
            }
        }
        evaluated.push((*op, vals));
    }
    let expected = expected_text(&evaluated);
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(expected.clone()));
    let mut ok = true;
    for (op, vals) in &evaluated {
        let holds = match op {
            ExpectOp::Equals => actual.loosely_equals(&vals[0]),
            ExpectOp::Not => !actual.loosely_equals(&vals[0]),
            ExpectOp::OneOf => vals.iter().any(|v| actual.loosely_equals(v)),
            ExpectOp::Min | ExpectOp::Max | ExpectOp::Gt | ExpectOp::Lt => {
                match (actual.as_f64(), vals[0].as_f64()) {
                    (Some(a), Some(b)) => match op {
                        ExpectOp::Min => a >= b,
                        ExpectOp::Max => a <= b,
                        ExpectOp::Gt => a > b,
                        _ => a < b,
                    },
                    _ => {
                        let mut f = base_finding(rule, Status::Error);
                        f.subject = vec![canon.clone()];
                        f.actual = Some(expr::show(&actual));
                        f.expected = Some(expected.clone());
                        f.evidence = cx.evidence();
                        f.explanation = format!(
                            "{canon} is `{}`, which is not a number, so it cannot be compared ({expected})",
                            actual.to_plain()
                        );
                        return f;
                    }
                }
            }
        };
        ok &= holds;
    }
    let status = if ok { Status::Pass } else { Status::Fail };
    let mut f = base_finding(rule, status);
    f.expected = Some(expected.clone());
    f.actual = Some(expr::show(&actual));
    if status == Status::Pass {
        f.explanation = format!(
            "{canon} is {}, as expected ({expected})",
            expr::show(&actual)
        );
    }
    finish(rule, cx, status, &mut f);
    f
}

fn check_assert(rule: &Rule, cx: &RuleCx, e: &Expr) -> Finding {
    let result = eval(e, cx).and_then(|v| truthy(&v));
    let status = match result {
        Ok(true) => Status::Pass,
        Ok(false) => Status::Fail,
        Err(m) => return missing_finding(rule, cx, m),
    };
    let actual: Vec<String> = {
        let mut seen = BTreeSet::new();
        cx.touched
            .borrow()
            .iter()
            .filter(|(_, k, _)| seen.insert(k.clone()))
            .map(|(_, k, s)| format!("{k} = {}", brief(&s.value)))
            .collect()
    };
    let mut f = base_finding(rule, status);
    f.expected = Some(assert_text(rule));
    f.actual = (!actual.is_empty()).then(|| actual.join(", "));
    cx.special
        .borrow_mut()
        .insert("expected".into(), Value::Str(assert_text(rule)));
    cx.special
        .borrow_mut()
        .insert("actual".into(), Value::Str(actual.join(", ")));
    finish(rule, cx, status, &mut f);
    f
}

fn assert_text(rule: &Rule) -> String {
    // The source of an assert is not kept verbatim in the compiled rule; the
    // template of `expected` is the assert itself when one is needed.
    match &rule.check {
        Check::Assert(e) => e.to_string(),
        _ => String::new(),
    }
}

/// The value compared by a drift check: the whole setting, or one record field.
fn drift_value(v: &Value, field: &Option<String>) -> Option<Value> {
    match (field, v) {
        (None, v) => Some(v.clone()),
        (Some(f), Value::Record(map)) => map.get(f).cloned(),
        (Some(_), _) => None,
    }
}

fn items(v: &Value) -> Vec<String> {
    match v {
        Value::List(items) => items.iter().map(Value::to_plain).collect(),
        other => other
            .to_plain()
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    }
}

fn check_drift(rule: &Rule, cx: &RuleCx, d: &DriftCheck) -> Vec<Finding> {
    let (configured, running, keys, ignore) = (
        d.configured.as_str(),
        d.running.as_str(),
        &d.keys,
        &d.ignore,
    );
    let facts = cx.facts;
    let (Some(conf), Some(run)) = (
        facts.namespaces.get(configured),
        facts.namespaces.get(running),
    ) else {
        let mut f = base_finding(rule, Status::Unknown);
        f.explanation =
            format!("no `{configured}` or `{running}` values were gathered for this host");
        return vec![f];
    };
    let selected = |key: &String| {
        (keys.is_empty() || keys.iter().any(|p| p.matches(key)))
            && !ignore.iter().any(|p| p.matches(key))
    };
    if conf.unavailable.is_none() && !conf.entries.keys().any(selected) {
        let mut f = base_finding(rule, Status::Skip);
        f.explanation = format!("nothing in {configured} to compare: no configured value is set");
        return vec![f];
    }
    for (ns, space) in [(configured, conf), (running, run)] {
        if let Some(reason) = &space.unavailable {
            let mut f = base_finding(rule, Status::Unknown);
            f.explanation = format!("cannot compare: {ns}: {reason}");
            return vec![f];
        }
    }
    let mut out = Vec::new();
    let mut compared = 0usize;
    for (key, entry) in &conf.entries {
        if (!keys.is_empty() && !keys.iter().any(|p| p.matches(key)))
            || ignore.iter().any(|p| p.matches(key))
        {
            continue;
        }
        let want = match entry {
            Entry::Set(want) => want,
            // The configured value cannot be told (the server's adjustment
            // is not modelled, a value it refuses): unknown where the server
            // has the key, never silently left out of the comparison.
            Entry::Unreadable { reason, evidence } if run.entries.contains_key(key) => {
                let mut f = base_finding(rule, Status::Unknown);
                f.subject = vec![key.clone()];
                f.evidence = evidence.clone();
                f.explanation = format!("{key}: {reason}");
                out.push(f);
                continue;
            }
            _ => continue,
        };
        match run.entries.get(key) {
            None => continue, // absent on the running side: other rules judge stale settings
            Some(Entry::Unreadable { reason, evidence }) => {
                let mut f = base_finding(rule, Status::Unknown);
                f.subject = vec![key.clone()];
                f.expected = Some(want.raw.clone());
                f.evidence = want
                    .evidence
                    .iter()
                    .chain(evidence.iter())
                    .cloned()
                    .collect();
                f.explanation = format!("{key}: the running value cannot be read: {reason}");
                out.push(f);
            }
            Some(Entry::Set(have)) => {
                let (Some(want_v), Some(have_v)) = (
                    drift_value(&want.value, &d.field),
                    drift_value(&have.value, &d.running_field),
                ) else {
                    continue;
                };
                compared += 1;
                let (want_items, have_items) = (items(&want_v), items(&have_v));
                let missing: Vec<String> = want_items
                    .iter()
                    .filter(|i| !have_items.contains(i))
                    .cloned()
                    .collect();
                let extra: Vec<String> = have_items
                    .iter()
                    .filter(|i| !want_items.contains(i))
                    .cloned()
                    .collect();
                let same = match d.compare {
                    CompareMode::Equal => want_v.loosely_equals(&have_v),
                    CompareMode::Subset => missing.is_empty(),
                };
                if same {
                    continue;
                }
                let rcx = RuleCx::new(facts, rule, cx.policy);
                {
                    let mut sp = rcx.special.borrow_mut();
                    sp.insert("setting".into(), Value::Str(key.clone()));
                    sp.insert("expected".into(), want_v.clone());
                    sp.insert("actual".into(), have_v.clone());
                    sp.insert("missing".into(), Value::Str(missing.join(",")));
                    sp.insert("extra".into(), Value::Str(extra.join(",")));
                    if let Some(e) = want.evidence.first() {
                        sp.insert("source".into(), Value::Str(e.to_string()));
                    }
                }
                let mut f = base_finding(rule, Status::Fail);
                f.subject = vec![key.clone()];
                f.expected = Some(show_items(&want_v));
                f.actual = Some(show_items(&have_v));
                f.evidence = want
                    .evidence
                    .iter()
                    .take(1)
                    .chain(have.evidence.iter())
                    .cloned()
                    .collect();
                let mut text = rcx.render(&rule.why);
                if let Some(n) = &want.note {
                    text.push_str(&format!(" Note: {n}."));
                }
                f.explanation = text;
                f.fix = rcx.render(&rule.fix);
                out.push(f);
            }
        }
    }
    if out.iter().all(|f| f.status != Status::Fail) {
        let mut f = base_finding(rule, Status::Pass);
        f.explanation = format!(
            "{compared} configured value(s) in {configured} match the running values in {running}"
        );
        out.push(f);
    }
    out
}

/// A value for one-line summaries: records list their fields (`{k: v, ...}`),
/// other long text is cut.
fn brief(v: &Value) -> String {
    let text = match v {
        Value::Record(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k}: {}", v.to_plain()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => expr::show(other),
    };
    if !matches!(v, Value::Record(_)) && text.chars().count() > 100 {
        format!("{}…", text.chars().take(99).collect::<String>())
    } else {
        text
    }
}

fn show_items(v: &Value) -> String {
    match v {
        Value::List(items) => items
            .iter()
            .map(Value::to_plain)
            .collect::<Vec<_>>()
            .join(","),
        other => expr::show(other),
    }
}

#[cfg(test)]
mod rule_tests {
    use super::*;
    use crate::facts::{Namespace, Setting};
    use crate::host::Host;

    fn facts_with(ns: &str, key: &str, v: Value) -> Facts {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/hosts/clean");
        let host = Host::snapshot(dir).unwrap();
        let mut f = Facts::new(&host);
        f.facts
            .insert("mem_total".into(), Ok(Value::Size(24.0 * 1073741824.0)));
        let mut n = Namespace::new("not set");
        n.set(key, Setting::new(v, "x", Evidence::line("/etc/my.cnf", 7)));
        f.namespaces.insert(ns.into(), n);
        f
    }

    fn rules(yaml: &str) -> PolicySet {
        let mut s = PolicySet::new();
        s.add_str("t.yaml", yaml).unwrap();
        s
    }

    #[test]
    fn assert_failure_cites_values_and_evidence() {
        let set = rules("policy: t\ntitle: t\nparams:\n  share: 0.4\nrules:\n  - id: t.pool\n    title: t\n    severity: high\n    assert: \"mycnf.innodb_buffer_pool_size <= params.share * mem_total\"\n    why: \"pool {mycnf.innodb_buffer_pool_size} is {pct(mycnf.innodb_buffer_pool_size / mem_total)} of {mem_total}\"\n    fix: \"set it below {params.share * mem_total}\"\n");
        let f = facts_with(
            "mycnf",
            "innodb_buffer_pool_size",
            Value::Size(12.0 * 1073741824.0),
        );
        let out = evaluate_rule(&set.rules[0], set.policies.first(), &f);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].status, Status::Fail);
        assert_eq!(out[0].explanation, "pool 12 GiB is 50 % of 24 GiB");
        assert_eq!(out[0].fix, "set it below 9.6 GiB");
        assert_eq!(out[0].subject, ["innodb_buffer_pool_size"]);
        assert_eq!(out[0].evidence[0].to_string(), "/etc/my.cnf:7");
        assert_eq!(
            out[0].actual.as_deref(),
            Some("innodb_buffer_pool_size = 12 GiB")
        );
    }

    #[test]
    fn missing_namespace_is_unknown_not_pass() {
        let set = rules("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: high\n    setting: mysql.version\n    expect: {present: true}\n    why: w\n    fix: f\n");
        let f = facts_with("mycnf", "x", Value::Number(1.0));
        let out = evaluate_rule(&set.rules[0], set.policies.first(), &f);
        assert_eq!(out[0].status, Status::Unknown);
    }

    #[test]
    fn let_bindings_and_cycles() {
        let set = rules("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    let:\n      a: \"b + 1\"\n      b: \"a + 1\"\n    assert: \"a > 0\"\n    why: w\n    fix: f\n");
        let f = facts_with("mycnf", "x", Value::Number(1.0));
        let out = evaluate_rule(&set.rules[0], set.policies.first(), &f);
        assert_eq!(out[0].status, Status::Error);
        assert!(
            out[0].explanation.contains("refers to itself"),
            "{}",
            out[0].explanation
        );
    }

    #[test]
    fn mount_of_normalises_paths_and_a_relative_one_is_unknown() {
        let mut f = facts_with("mycnf", "x", Value::Number(1.0));
        let mut m = Namespace::new("not mounted");
        for p in ["/", "/srv/data"] {
            m.set(
                p,
                Setting::new(
                    Value::Str(p.into()),
                    "x",
                    Evidence::line("/proc/self/mountinfo", 1),
                ),
            );
        }
        f.namespaces.insert("mount".into(), m);
        let run = |arg: &str| {
            let set = rules(&format!("policy: t\ntitle: t\nrules:\n  - id: t.x\n    title: t\n    severity: low\n    assert: \"mount_of('{arg}') == '/srv/data'\"\n    why: w\n    fix: f\n"));
            let out = evaluate_rule(&set.rules[0], set.policies.first(), &f);
            (out[0].status, out[0].explanation.clone())
        };
        assert_eq!(run("/srv//data/./mysql/").0, Status::Pass);
        assert_eq!(run("/srv/database").0, Status::Fail);
        let (status, why) = run("srv/data");
        assert_eq!(status, Status::Unknown, "{why}");
        assert!(why.contains("not an absolute path"), "{why}");
    }
}
