//! The domain a rule belongs to (storage, Zimbra, MySQL, sysctl), from
//! what it reads. Reads the compiled rule only: must not look at facts.

use crate::expr::{self, Expr};
use crate::facts::presence::Domain;
use crate::policy::{Applies, Check, ForEachSource, Remedy, Rule, TemplatePart};

/// The domains a rule's reads name, each once, in no particular order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Reads(Vec<Domain>);

impl Reads {
    fn note(&mut self, d: Option<Domain>) {
        if let Some(d) = d {
            if !self.0.contains(&d) {
                self.0.push(d);
            }
        }
    }

    fn walk(&mut self, e: &Expr) {
        expr::walk(e, &mut |x| match x {
            Expr::Call(name, _) if name == "mount_of" => self.note(Some(Domain::Storage)),
            Expr::Name(n) | Expr::Setting(n, _) => self.note(Domain::of_namespace(n)),
            _ => {}
        });
    }

    /// The `when:` conditions among `applies` (its paths and kernel
    /// releases name no domain).
    fn walk_applies<'a>(&mut self, applies: impl IntoIterator<Item = &'a Applies>) {
        for a in applies {
            if let Applies::When(e, _) = a {
                self.walk(e);
            }
        }
    }

    /// The domain these reads give: storage before the products (Zimbra,
    /// then MySQL) before sysctl.
    fn domain(&self) -> Option<Domain> {
        [
            Domain::Storage,
            Domain::Zimbra,
            Domain::Mysql,
            Domain::Sysctl,
        ]
        .into_iter()
        .find(|d| self.0.contains(d))
    }
}

/// The domain a rule belongs to, from what it reads: storage (fstab, mounts,
/// ext4, `mount_of`) before the products (Zimbra, then MySQL) before sysctl,
/// so `storage.noatime-mysql` is storage and `zimbra.buffer-pool-fits-db`
/// (Zimbra's my.cnf, localconfig, du) is Zimbra.
///
/// The namespaces [`Rule::settings_read`] lists are visited in place (its
/// check's, a drift's two, a `for_each` source's and each `NS.KEY` in the
/// rule's expressions, [`Rule::expressions`]), in the same one walk of the
/// expressions as the names and `mount_of`, with nothing copied.
pub fn rule_domain(rule: &Rule) -> Option<Domain> {
    rule_domain_with(rule, &shared_reads(rule))
}

/// [`rule_domain`] with the reads a rule shares with every copy the engine
/// judges in its place already found: `shared` is [`shared_reads`] of the
/// rule or of one it was copied from. Each finding asks; the copies (a
/// `for_each` item's, its `when`'s) differ in `applies` and `for_each`
/// only, which are read here.
pub(super) fn rule_domain_with(rule: &Rule, shared: &Reads) -> Option<Domain> {
    let mut reads = shared.clone();
    reads.walk_applies(&rule.applies);
    if let Some(fe) = &rule.for_each {
        match &fe.source {
            ForEachSource::Keys { ns, filter, .. } => {
                reads.note(Domain::of_namespace(ns));
                if let Some(w) = filter {
                    reads.walk(&w.expr);
                }
            }
            ForEachSource::Records { ns, filter } => {
                reads.note(Domain::of_namespace(ns));
                if let Some(w) = filter {
                    reads.walk(&w.expr);
                }
            }
            ForEachSource::Param(_) => {}
        }
        for t in [&fe.subject, &fe.setting_key, &fe.alias]
            .into_iter()
            .flatten()
        {
            for p in &t.parts {
                if let TemplatePart::Expr(e) = p {
                    reads.walk(e);
                }
            }
        }
    }
    reads.domain()
}

/// The domain of a `for_each` item's findings, judged with `applies` in
/// place of the rule's own and without its `for_each` (an item's paths, or
/// its own `when`): what [`rule_domain_with`] gives for a copy of the rule
/// so made, without the copy. `shared` is [`shared_reads`] of the rule.
pub(super) fn item_domain<'a>(
    applies: impl IntoIterator<Item = &'a Applies>,
    shared: &Reads,
) -> Option<Domain> {
    let mut reads = shared.clone();
    reads.walk_applies(applies);
    reads.domain()
}

/// What a rule reads in the parts its `for_each` copies keep as they are:
/// the check (its namespaces and expressions), the `let`s, the remedy's
/// value, the breakdown, `why` and `fix`.
pub(super) fn shared_reads(rule: &Rule) -> Reads {
    let mut reads = Reads::default();
    match &rule.check {
        Check::Setting { ns, expect, .. } => {
            reads.note(Domain::of_namespace(ns));
            for e in expect.iter().flat_map(|x| x.values.iter()) {
                reads.walk(e);
            }
        }
        Check::Drift(d) => {
            reads.note(Domain::of_namespace(&d.configured));
            reads.note(Domain::of_namespace(&d.running));
        }
        Check::Assert(e) => reads.walk(e),
        // its findings carry their product's domain; the rule's own
        // (a disabled one's finding) names none
        Check::Upgrade(_) => {}
    }
    for e in rule.lets.values() {
        reads.walk(e);
    }
    if let Some(Remedy::Set { to, .. }) = &rule.remedy {
        reads.walk(to);
    }
    if let Some(b) = &rule.breakdown {
        reads.walk(&b.total);
        for (_, e) in &b.parts {
            reads.walk(e);
        }
    }
    for t in [&rule.why, &rule.fix] {
        for p in &t.parts {
            if let TemplatePart::Expr(e) = p {
                reads.walk(e);
            }
        }
    }
    reads
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicySet;

    /// How the domain was found before the reads were split: every
    /// expression of the rule walked for each finding.
    fn in_one_walk(rule: &Rule) -> Option<Domain> {
        let mut reads = Reads::default();
        match &rule.check {
            Check::Setting { ns, .. } => reads.note(Domain::of_namespace(ns)),
            Check::Drift(d) => {
                reads.note(Domain::of_namespace(&d.configured));
                reads.note(Domain::of_namespace(&d.running));
            }
            Check::Assert(_) | Check::Upgrade(_) => {}
        }
        if let Some(fe) = &rule.for_each {
            match &fe.source {
                ForEachSource::Keys { ns, .. } | ForEachSource::Records { ns, .. } => {
                    reads.note(Domain::of_namespace(ns));
                }
                ForEachSource::Param(_) => {}
            }
        }
        for e in rule.expressions() {
            reads.walk(e);
        }
        reads.domain()
    }

    #[test]
    fn the_domain_from_shared_and_own_reads_is_the_domain_of_all_reads() {
        let set = PolicySet::builtin().unwrap();
        assert!(set.rules().len() > 50);
        for rule in set.rules() {
            let whole = in_one_walk(rule);
            assert_eq!(rule_domain(rule), whole, "{}", rule.id);
            // a copy without its `for_each`, and one with a `when` of its
            // own, as the engine judges an item
            let mut copy = rule.clone();
            copy.for_each = None;
            assert_eq!(
                rule_domain_with(&copy, &shared_reads(rule)),
                in_one_walk(&copy),
                "{}",
                rule.id
            );
            copy.applies = vec![Applies::When(
                crate::expr::parse("mount_of('/srv') == '/'").unwrap(),
                String::new(),
            )];
            assert_eq!(
                rule_domain_with(&copy, &shared_reads(rule)),
                in_one_walk(&copy),
                "{}",
                rule.id
            );
        }
    }

    #[test]
    fn an_items_domain_without_a_copy_is_the_domain_of_the_copy_judged_before() {
        let set = PolicySet::builtin().unwrap();
        let whens = [
            "mount_of('/srv') == '/'",
            "mycnf.innodb_buffer_pool_size > 0",
            "zimbra_installed and sysctl.vm.swappiness > 1",
            "params.x == 1",
        ];
        let mut items = 0;
        for rule in set.rules() {
            let shared = shared_reads(rule);
            // the copy the engine judged an item with: `for_each` gone, the
            // rule's `applies` (an item's paths and `exists` name no domain)
            let mut copy = rule.clone();
            copy.for_each = None;
            copy.applies
                .insert(0, Applies::Exists("/var/lib/mysql".into()));
            assert_eq!(
                item_domain(&rule.applies, &shared),
                rule_domain_with(&copy, &shared),
                "{}",
                rule.id
            );
            // and the one an item's own `when` was judged with
            for w in whens {
                copy.applies = vec![Applies::When(crate::expr::parse(w).unwrap(), w.into())];
                assert_eq!(
                    item_domain(&copy.applies, &shared),
                    rule_domain_with(&copy, &shared),
                    "{} {w}",
                    rule.id
                );
            }
            items += usize::from(rule.for_each.is_some());
        }
        assert!(items > 5, "{items} for_each rules");
    }
}
