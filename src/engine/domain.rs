//! The domain a rule belongs to (storage, Zimbra, MySQL, sysctl), from
//! what it reads. Reads the compiled rule only: must not look at facts.

use crate::expr::{self, Expr};
use crate::facts::presence::Domain;
use crate::policy::{Check, ForEachSource, Rule};

/// The domain a rule belongs to, from what it reads: storage (fstab, mounts,
/// ext4, `mount_of`) before the products (Zimbra, then MySQL) before sysctl,
/// so `storage.noatime-mysql` is storage and `zimbra.buffer-pool-fits-db`
/// (Zimbra's my.cnf, localconfig, du) is Zimbra.
///
/// Every finding asks, so the namespaces [`Rule::settings_read`] lists are
/// visited in place (its check's, a drift's two, a `for_each` source's and
/// each `NS.KEY` in the rule's expressions), in the same one walk of the
/// expressions as the names and `mount_of`, with nothing copied.
pub fn rule_domain(rule: &Rule) -> Option<Domain> {
    let mut found: Vec<Domain> = Vec::with_capacity(4);
    let mut note = |d: Option<Domain>| {
        if let Some(d) = d {
            if !found.contains(&d) {
                found.push(d);
            }
        }
    };
    match &rule.check {
        Check::Setting { ns, .. } => note(Domain::of_namespace(ns)),
        Check::Drift(d) => {
            note(Domain::of_namespace(&d.configured));
            note(Domain::of_namespace(&d.running));
        }
        Check::Assert(_) | Check::External => {}
    }
    if let Some(fe) = &rule.for_each {
        match &fe.source {
            ForEachSource::Keys { ns, .. } | ForEachSource::Records { ns, .. } => {
                note(Domain::of_namespace(ns));
            }
            ForEachSource::Param(_) => {}
        }
    }
    for e in rule.expressions() {
        expr::walk(e, &mut |x| match x {
            Expr::Call(name, _) if name == "mount_of" => note(Some(Domain::Storage)),
            Expr::Name(n) | Expr::Setting(n, _) => note(Domain::of_namespace(n)),
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
