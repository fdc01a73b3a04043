//! `sysctl_sides`: one clause per key saying what the next start gives it,
//! in the words of what this host's init applies ([`crate::facts::init`]):
//! "the next boot applies `1` (FILE:LINE)" where an init applies the
//! files, "nothing on this host applies sysctl files when it starts ..., so
//! only the running value is judged" in a container without an init, and
//! the unknown with its reason where the init is not recorded and the
//! inits disagree. Built only from the `sysctl` and `sysctl_boot`
//! namespaces (a view for rules' words); must not read the host or judge.

use crate::facts::init::BootSysctl;
use crate::facts::{Entry, Namespace, Setting};
use crate::value::Value;

/// The namespace's name.
pub const SIDES: &str = "sysctl_sides";

/// The clause for one key.
fn clause(init: &BootSysctl, boot: Option<&Entry>) -> String {
    let any = matches!(init, BootSysctl::Unknown(_));
    match (init, boot) {
        (BootSysctl::Nothing(why), _) => {
            format!("{why}, so only the running value is judged")
        }
        (_, Some(Entry::Set(s))) => {
            let whichever = if any {
                ", whichever init applies the files (the snapshot does not record PID 1; each would give this value)"
            } else {
                ""
            };
            format!("the next boot applies {} ({}){whichever}", s.raw, s.evidence[0])
        }
        (_, Some(Entry::Unreadable { reason, .. })) => {
            format!("what the next boot applies is not known: {reason}")
        }
        (_, None) if any => "no sysctl file sets it, so whichever init runs, the next boot keeps the kernel's default, judged by the running value".into(),
        (_, None) => "no sysctl file sets it, so the next boot keeps the kernel's default, judged by the running value".into(),
    }
}

/// The `sysctl_sides` namespace over every key of `live` and `boot`.
pub(super) fn sides(init: &BootSysctl, live: &Namespace, boot: &Namespace) -> Namespace {
    let mut ns = Namespace::of(SIDES);
    ns.canonicalize = Some(super::canonical_key);
    let keys: std::collections::BTreeSet<&String> =
        live.entries.keys().chain(boot.entries.keys()).collect();
    for key in keys {
        let b = boot.entries.get(key);
        let evidence = match (b, live.entries.get(key)) {
            (Some(Entry::Set(s)), _) | (_, Some(Entry::Set(s))) => s.evidence[0].clone(),
            (Some(Entry::Unreadable { evidence, .. }), _)
            | (_, Some(Entry::Unreadable { evidence, .. }))
                if !evidence.is_empty() =>
            {
                evidence[0].clone()
            }
            _ => continue,
        };
        let text = clause(init, b);
        let s = Setting::new(Value::Str(text.clone()), text, evidence);
        ns.entries.insert(key.clone(), Entry::Set(s));
    }
    ns
}
