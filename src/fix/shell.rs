//! The runtime steps' sh text: words quoted by the crate's one sh quoting
//! (`crate::shell`, a leaf a reader's input finding uses too), and the
//! `su - zimbra -c` wrapper. Pure; used only to build the text of `fix`'s
//! runtime script.

pub use crate::shell::{command, quote};

/// `su - zimbra -c '...'`: the inner command (already quoted) as one word.
pub fn as_zimbra(inner: &str) -> String {
    format!("su - zimbra -c {}", quote(inner))
}
