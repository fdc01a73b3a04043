//! What is secret, per format, by meaning: the one list of secret-bearing
//! option-file options, server variables, Zimbra localconfig keys, sysctl keys
//! and mount options, the placeholder shown instead of a secret value, and the
//! helpers every reader, the snapshot writer, diff and the renderers use to
//! keep secret values out of output, files and messages. A leaf module: it
//! imports nothing of the crate (no facts, engine, policy, render or parse),
//! does no I/O, and no parser decides on its own what is secret.
//!
//! A name is secret because of what the program that reads it does with its
//! value (mysqld takes `wsrep_sst_auth` as `user:password`), never because a
//! word appears in it: `innodb_force_primary_key`,
//! `disconnect_on_expired_password` and `caching_sha2_password_digest_rounds`
//! are ordinary settings and stay visible.
//!
//! This file holds the placeholder ([`REDACTED`], [`REDACTED_XML`]); the
//! folder's rooms, from the decision to its uses:
//!
//! - `names`: the decision by meaning: which names are secret in each
//!   [`Format`] (the lists, the rules for prefixes, spellings and
//!   patterns) and the [`catalogue`] of them docs and tests cite.
//! - `values`: one value or line made safe to show: a secret name's value,
//!   secret assignments inside a value (`-D...Password=`), a mount options
//!   field, a line quoted in a message.
//! - `files`: which redaction a copied file gets from its path
//!   ([`FileKind`]), and the redaction of each line-based format (option
//!   files, sysctl, mount tables, server variables, `zmlocalconfig`,
//!   `mysqld-auto.cnf`), every line kept where it was.
//! - `network`: the redaction of NetworkManager keyfiles (an allow list
//!   of groups) and netplan YAML (passwords, keys and their subtrees).
//! - `localconfig_xml`: the redaction of Zimbra's `localconfig.xml`
//!   (parsed, or scanned when it does not parse), line numbers kept.

mod files;
mod localconfig_xml;
mod names;
mod network;
mod values;

pub use files::{file_kind, redact_file, redact_text, FileKind};
pub use localconfig_xml::redact_localconfig_xml;
pub use names::{
    catalogue, embedded_name_is_secret, is_secret, is_secret_anywhere, localconfig_key_is_secret,
    mount_option_is_secret, option_is_secret, server_variable_is_secret, sysctl_key_is_secret,
    CatalogueEntry, Format,
};
pub use values::{leading_key, quotable, redact_embedded, redact_mount_options, shown};

/// The text shown (and stored) instead of a secret value.
pub const REDACTED: &str = "<redacted>";

/// [`REDACTED`] written with XML's own escaping, for a `<value>` text node:
/// an XML reader gives back exactly [`REDACTED`].
pub const REDACTED_XML: &str = "&lt;redacted&gt;";
