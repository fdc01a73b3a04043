//! The baseline's proof: the written policy loads, its globs match what
//! they should, and auditing the golden host with it passes every pin.
//! Must not write files.

use super::*;

/// Read the written policy back with the policy loader and compare it
/// with what was meant, structurally: one policy of the intended id,
/// exactly the intended parameters (each pin's key and value, each open
/// glob, nothing more), exactly the intended rules in order. Data that
/// became structure, or a string that does not read back, is an error.
pub(super) fn verify(b: &Baseline) -> Result<(), BaselineError> {
    let mismatch = |what: String| Err(BaselineError::Mismatch(what));
    if b.pins.is_empty() {
        // `rules: []` is no policy the loader takes: check it as YAML
        let top: serde_json::Value =
            serde_saphyr::from_str(&b.yaml).map_err(|e| BaselineError::Load(e.to_string()))?;
        let keys: BTreeSet<&str> = top
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if keys != BTreeSet::from(["policy", "title", "description", "rules"]) {
            return mismatch(format!("the top-level keys read back as {keys:?}"));
        }
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let [policy] = set.policies() else {
        return mismatch(format!("{} policies instead of one", set.policies().len()));
    };
    if policy.id != b.policy_id {
        return mismatch(format!("the policy id reads back as `{}`", policy.id));
    }
    let mut want: BTreeMap<String, Vec<Vec<(&str, String)>>> = BTreeMap::new();
    for (ns, pins) in &b.pins {
        want.insert(
            ns.clone(),
            pins.iter()
                .map(|p| vec![("key", p.key.clone()), ("value", p.value.clone())])
                .collect(),
        );
    }
    for (ns, globs) in open_lists(b) {
        want.insert(
            format!("{ns}_open"),
            globs
                .into_iter()
                .map(|(g, why)| vec![("glob", g), ("why", why)])
                .collect(),
        );
    }
    let names: Vec<&String> = policy.params.keys().collect();
    if names != want.keys().collect::<Vec<_>>() {
        return mismatch(format!("the parameters read back as {names:?}"));
    }
    for (name, items) in &want {
        let Some(Value::List(got)) = policy.params.get(name) else {
            return mismatch(format!("the parameter `{name}` is not a list"));
        };
        if got.len() != items.len() {
            return mismatch(format!(
                "the parameter `{name}` reads back with {} items, not {}",
                got.len(),
                items.len()
            ));
        }
        for (i, (g, w)) in got.iter().zip(items).enumerate() {
            let Value::Record(m) = g else {
                return mismatch(format!("item {} of `{name}` is not a map", i + 1));
            };
            let same = m.len() == w.len()
                && w.iter()
                    .all(|(f, v)| matches!(m.get(*f), Some(Value::Str(s)) if s == v));
            if !same {
                return mismatch(format!(
                    "item {} of `{name}` does not read back as written",
                    i + 1
                ));
            }
        }
    }
    let mut rules: Vec<String> = b
        .pins
        .iter()
        .map(|(ns, _)| rule_id(&b.policy_id, ns))
        .collect();
    rules.extend(
        open_lists(b)
            .iter()
            .map(|(ns, _)| added_rule_id(&b.policy_id, ns)),
    );
    let got: Vec<&str> = set.rules().iter().map(|r| r.id.as_str()).collect();
    if got != rules.iter().map(String::as_str).collect::<Vec<_>>() {
        return mismatch(format!("the rules read back as {got:?}"));
    }
    Ok(())
}

/// A key as a glob that matches only it (`[*]` for a `*`); a leading `!`,
/// which `matches` reads as "judge again", is written `?` (such a key's
/// glob also matches any other first character).
pub(super) fn exact_glob(key: &str) -> String {
    let g = no_reference(&glob::Pattern::escape(key));
    match g.strip_prefix('!') {
        Some(rest) => format!("?{rest}"),
        None => g,
    }
}

/// The globs of keys of `ns` the closed world does not judge: per-interface
/// keys of interfaces the golden host has no key of, then (with `--keys`)
/// every key those globs do not select, whatever its interface, then the
/// default ignore list and `--ignore`. The namespace's
/// left-out keys are added when the policy is written. In `matches`
/// order: the last glob that matches decides, `!GLOB` judges again.
pub(super) fn open_globs(ns: &str, pins: &[Pin], opts: &BaselineOptions) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let own = |g: &str| -> Option<String> {
        match g.split_once('.') {
            Some((n, rest)) if n == ns => Some(rest.to_string()),
            Some((n, _)) if PINNABLE.iter().any(|(p, _)| *p == n) => None,
            _ => Some(g.to_string()),
        }
    };
    if ns.starts_with("sysctl") {
        let mut ifaces = BTreeSet::new();
        for p in pins {
            for fam in PER_INTERFACE {
                if let Some(rest) = p.key.strip_prefix(fam).and_then(|r| r.strip_prefix('.')) {
                    if let Some((iface, _)) = rest.split_once('.') {
                        ifaces.insert((*fam, iface.to_string()));
                    }
                }
            }
        }
        for fam in PER_INTERFACE {
            out.push((
                format!("{fam}.*"),
                "an interface the golden host has no key of (names differ between hosts)".into(),
            ));
            for iface in ["all", "default"] {
                out.push((
                    format!("!{fam}.{iface}.*"),
                    "every host has it: judged".into(),
                ));
            }
            for (_, iface) in ifaces.iter().filter(|(f, _)| f == fam) {
                if iface != "all" && iface != "default" {
                    out.push((
                        format!("!{fam}.{}.*", glob::Pattern::escape(iface)),
                        "an interface of the golden host: judged".into(),
                    ));
                }
            }
        }
    }
    if !opts.keys.is_empty() {
        out.push(("*".into(), "not selected by `--keys`".into()));
        out.extend(
            opts.keys
                .iter()
                .filter_map(|g| own(g))
                .map(|g| (format!("!{g}"), "selected by `--keys`".into())),
        );
    }
    if ns == "fstab" || ns == "mount" {
        out.push((
            "[!/]*".into(),
            "not a mount point (swap or a pseudo entry)".into(),
        ));
    }
    if !opts.no_default_ignore {
        out.extend(
            DEFAULT_IGNORE
                .iter()
                .filter(|(g, _)| ignore_applies(g, ns))
                .map(|(g, why)| (g.to_string(), why.to_string())),
        );
    }
    out.extend(
        opts.ignore
            .iter()
            .filter_map(|g| own(g))
            .map(|g| (no_reference(&g), "left out by `--ignore`".into())),
    );
    out
}

/// A glob with each `$` written `[$]`: the same keys, and no `${` that
/// the policy loader would read as a reference.
pub(super) fn no_reference(glob: &str) -> String {
    glob.replace('$', "[$]")
}

/// Whether a [`DEFAULT_IGNORE`] glob can match a key of `ns`: mount points
/// in `fstab`/`mount`, `zimbra_*` in `localconfig`, dotted kernel keys in
/// the sysctl namespaces, the others (MySQL options) in the MySQL ones.
pub(super) fn ignore_applies(glob: &str, ns: &str) -> bool {
    if glob.starts_with('/') {
        matches!(ns, "fstab" | "mount")
    } else if glob.starts_with("zimbra_") {
        ns == "localconfig"
    } else if glob.contains('.') {
        ns.starts_with("sysctl")
    } else {
        matches!(ns, "mycnf_effective" | "mycnf" | "zimbra_mycnf" | "mysql")
    }
}

/// Audit the golden host with its own baseline; a pin that does not pass
/// there (a value the engine reads back differently) is left out with the
/// reason, never kept to fail every host.
pub(super) fn prove(b: &mut Baseline, host: &Host) -> Result<(), BaselineError> {
    if b.pins.is_empty() {
        return Ok(());
    }
    let mut set = PolicySet::new();
    set.add_str("baseline.yaml", &b.yaml)
        .map_err(|e| BaselineError::Load(e.to_string()))?;
    let report = crate::engine::audit_host(&set, host);
    let mut bad: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &report.findings {
        if f.status == Status::Pass {
            continue;
        }
        for (ns, _) in &b.pins {
            if f.rule == rule_id(&b.policy_id, ns) {
                let e = bad.entry(ns.clone()).or_default();
                e.extend(f.subject.iter().cloned());
            }
            if f.rule == added_rule_id(&b.policy_id, ns) && f.status != Status::Skip {
                // a key of the golden host itself the closed world judges:
                // it is left out of the judging, with the reason
                match f.subject.first() {
                    Some(key) if f.status == Status::Fail => b.left_out.push(LeftOut {
                        namespace: ns.clone(),
                        key: key.clone(),
                        reason: "on the golden host but not pinned: not judged as added".into(),
                    }),
                    _ => {
                        return Err(BaselineError::Load(format!(
                            "the closed world of {ns} is {:?} on the golden host itself: {}",
                            f.status, f.explanation
                        )))
                    }
                }
            }
        }
    }
    for (ns, pins) in &mut b.pins {
        let Some(subjects) = bad.get(ns.as_str()) else {
            continue;
        };
        pins.retain(|p| {
            let keep = !subjects.contains(&p.key);
            if !keep {
                b.left_out.push(LeftOut {
                    namespace: ns.clone(),
                    key: p.key.clone(),
                    reason: "does not read back equal on the golden host itself".into(),
                });
            }
            keep
        });
    }
    b.pins.retain(|(_, p)| !p.is_empty());
    Ok(())
}
