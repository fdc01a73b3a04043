//! The compiled remedy of a rule: what `driftaudit fix` changes when the
//! rule fails ([`Remedy`]), which way a computed value may be rounded
//! ([`Bound`]) and the condition under which the change is safe
//! ([`Requires`]). Plain data; must not plan or apply a fix.

use serde::{Deserialize, Serialize};

use crate::expr::Expr;

/// The condition under which a remedy cannot cut service (`have_ssl` before
/// `require_secure_transport = ON`): `driftaudit fix` evaluates it on the
/// host and holds the change as a decision where it is not true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requires {
    /// True where the change is safe (the rule's scope).
    pub when: Expr,
    /// `when` as written.
    pub text: String,
    /// What the change would break where `when` does not hold.
    pub why: String,
}

/// Which way a computed value may be rounded to a value the file can hold:
/// a `min` expectation rounds up, a `max` one down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bound {
    /// Write the value as computed (whole units rounded to nearest).
    Exact,
    /// The value is a lower bound: round up.
    AtLeast,
    /// The value is an upper bound: round down.
    AtMost,
}

/// A compiled remedy: the change `driftaudit fix` plans for a failing
/// finding (docs/policy-language.md, Remedies; docs/fix.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Remedy {
    /// Set `ns.key` to the value of `to` (evaluated in the rule's scope).
    Set {
        /// Namespace.
        ns: String,
        /// Key as written.
        key: String,
        /// The value.
        to: Expr,
        /// `to` as written in the policy.
        text: String,
        /// Rounding direction.
        bound: Bound,
        /// Derived from the check's expectation rather than declared.
        derived: bool,
    },
    /// Remove every line that sets `ns.key`.
    Remove {
        /// Namespace.
        ns: String,
        /// Key as written.
        key: String,
    },
    /// Mount options to add and remove (fstab entry and live mount of the
    /// finding's mount point).
    Options {
        /// Options to add.
        add: Vec<String>,
        /// Options to remove.
        remove: Vec<String>,
    },
    /// A drift rule: make one side equal the other (`--prefer`).
    Drift,
    /// No automatic change, and why.
    None {
        /// Reason shown by `explain` and in `fix`'s unfixable list.
        reason: String,
    },
}

impl Remedy {
    /// The remedy in words, for `explain`.
    pub fn describe(&self) -> String {
        match self {
            Remedy::Set {
                ns,
                key,
                text,
                derived,
                ..
            } => format!(
                "set {ns}.{key} to {}{}",
                text,
                if *derived {
                    " (derived from the check's expectation)"
                } else {
                    ""
                }
            ),
            Remedy::Remove { ns, key } => format!("remove every line that sets {ns}.{key}"),
            Remedy::Options { add, remove } => {
                let mut parts = Vec::new();
                if !add.is_empty() {
                    parts.push(format!("add mount options {}", add.join(",")));
                }
                if !remove.is_empty() {
                    parts.push(format!("remove {}", remove.join(",")));
                }
                format!("{} (fstab entry, then remount)", parts.join(", "))
            }
            Remedy::Drift => {
                "make the running value equal the configured one (`--prefer running`: the other way)"
                    .to_string()
            }
            Remedy::None { reason } => format!("none: {reason}"),
        }
    }
}
