//! sysctl facts: live kernel values (`/proc/sys` or `captures/sysctl-a.txt`) and
//! the values the next boot will apply: with the precedence of what this
//! host's init runs ([`super::init`]: systemd-sysctl, procps `sysctl
//! --system`, or nothing in a container without an init), procps's too (to
//! say where they differ), then what an enabled ufw and TuneD write after
//! boot (see `appliers` and [`super::tuned`]).
//! Produces the `sysctl`, `sysctl_boot`, `sysctl_procps` and `sysctl_sides` namespaces. Reads
//! only through [`Host`](crate::host::Host); linear in lines and files
//! (hostile input).
//!
//! This file is the folder's map and holds only what every room shares
//! (the canonical key, a redacting [`Setting`] constructor). The rooms, in
//! the order data flows:
//!
//! - `live`: the running kernel's values (a `/proc/sys` tree or a
//!   `sysctl -a` listing, with what `snapshot.json` says about them), the
//!   keys wanted, and the `sysctl` namespace.
//! - `files`: which sysctl.d files and `/etc/sysctl.conf` each tool reads,
//!   in order, each read and parsed once.
//! - `precedence`: which line wins for each key under systemd-sysctl's
//!   rules and under procps's.
//! - `appliers`: services that apply a sysctl file when they start, each
//!   by its own start logic (ufw: only when enabled).
//! - `namespaces`: [`gather`]: the models run, the init's model taken as
//!   the boot, tuned's and ufw's writes laid over it, and the three
//!   namespaces filled.
//! - `sides`: `sysctl_sides`, one clause per key in the words of what the
//!   init applies at the next start, for the rules' explanations.

use crate::facts::{Evidence, Setting};
use crate::parse::sysctl::typed;
use crate::secret::REDACTED;
use crate::value::Value;

mod appliers;
mod files;
mod live;
mod namespaces;
mod precedence;
mod sides;

pub use files::{systemd_conf_entries, SYSCTL_DIRS};
pub use namespaces::gather;
pub use precedence::MAX_EVIDENCE;

/// Canonical form of a sysctl key written in a policy (dotted or slashed).
pub fn canonical_key(key: &str) -> String {
    crate::parse::sysctl::normalize_key(key)
}

/// A setting for `key`, with the value replaced by [`REDACTED`] when the key
/// holds key material ([`crate::secret::sysctl_key_is_secret`]: the TFO key,
/// `stable_secret`), configured or running.
fn setting(key: &str, value: &str, ev: Evidence) -> Setting {
    if crate::secret::sysctl_key_is_secret(key) {
        Setting::new(Value::Str(REDACTED.into()), REDACTED, ev)
    } else {
        Setting::new(typed(value), value, ev)
    }
}
