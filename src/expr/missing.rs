//! Why an expression has no value ([`Missing`]): absent, unknown, known
//! only to lie in a range, or an error in the rule. Data only: how each
//! travels through the evaluator is `eval.rs` and `bounds.rs`.

use crate::value::Value;

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Missing {
    /// A setting does not exist: rules skip (or `absent` passes).
    #[error("{subject}: {reason}")]
    Absent {
        /// Canonical subject (`net.ipv4.tcp_tw_recycle`).
        subject: String,
        /// Why it is absent, in words.
        reason: String,
    },
    /// Data could not be read: rules are `unknown`.
    #[error("{subject}: {reason}")]
    Unknown {
        /// Subject.
        subject: String,
        /// Reason.
        reason: String,
    },
    /// A number that could not be read but is known to lie in `[lo, hi]`
    /// (`within`): arithmetic carries the range and a comparison every
    /// value of it answers alike is decided (`expr/bounds.rs`); anywhere
    /// else it is `unknown` like [`Missing::Unknown`].
    #[error("{subject}: {reason}")]
    Bounded {
        /// Subject.
        subject: String,
        /// Why it is not known exactly.
        reason: String,
        /// Its smallest possible value.
        lo: Value,
        /// Its largest possible value.
        hi: Value,
    },
    /// The expression itself is wrong for this data (type error): rules are `error`.
    #[error("{0}")]
    Error(String),
}
