//! The built-in policies in a pre-compiled form: `builtin_frozen.bin` is
//! the compiled model of `policies/*.yaml` as data (postcard, through
//! the model's serde derives), embedded with `include_bytes!`, so a run does not
//! parse and compile ~60 KB of YAML (two thirds of the CPU time of a live
//! check). Its first 8 bytes are a hash of the YAML it came from; when that
//! differs from the YAML compiled into this binary, or the data no longer
//! reads as the model (a changed type), [`builtin`] returns `None` and the
//! loader compiles the YAML: slower, never wrong, and the build never
//! breaks. `cargo run --example freeze` writes the file (`-- --check`
//! tells whether it is current); `set.rs`'s test fails when it is not.
//! Must not read files or the host.

use serde::{Deserialize, Serialize};

use super::builtin::BUILTIN;
use super::{Policy, Rule};

/// The frozen form, as `cargo run --example freeze` last wrote it.
pub(super) const FROZEN: &[u8] = include_bytes!("builtin_frozen.bin");

/// FNV-1a over the built-in policies' paths and texts, at compile time.
const fn yaml_hash(items: &[(&str, &str)]) -> u64 {
    const fn bytes(mut h: u64, b: &[u8]) -> u64 {
        let mut i = 0;
        while i < b.len() {
            h ^= b[i] as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
            i += 1;
        }
        h
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < items.len() {
        let (path, text) = items[i];
        h = bytes(h, path.as_bytes());
        h = bytes(h, &[0]);
        h = bytes(h, text.as_bytes());
        h = bytes(h, &[0]);
        i += 1;
    }
    h
}

/// Hash of the YAML compiled into this binary.
const YAML_HASH: u64 = yaml_hash(BUILTIN);

/// What the data holds after the hash.
#[derive(Serialize, Deserialize)]
struct Frozen {
    policies: Vec<Policy>,
    rules: Vec<Rule>,
}

/// The built-in policies and rules, when the frozen form was made from the
/// YAML compiled into this binary and still reads as the model.
pub(super) fn builtin() -> Option<(Vec<Policy>, Vec<Rule>)> {
    thaw(FROZEN)
}

/// `bytes` as policies and rules, if they were frozen from this binary's
/// YAML and read as the model.
fn thaw(bytes: &[u8]) -> Option<(Vec<Policy>, Vec<Rule>)> {
    let (hash, data) = bytes.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*hash) != YAML_HASH {
        return None;
    }
    let frozen: Frozen = postcard::from_bytes(data).ok()?;
    Some((frozen.policies, frozen.rules))
}

/// `policies` and `rules` (the built-ins compiled from this binary's YAML)
/// in the frozen form: the bytes `src/policy/builtin_frozen.bin` holds.
pub(super) fn freeze(policies: &[Policy], rules: &[Rule]) -> Vec<u8> {
    let frozen = Frozen {
        policies: policies.to_vec(),
        rules: rules.to_vec(),
    };
    let mut out = YAML_HASH.to_le_bytes().to_vec();
    out.extend(postcard::to_allocvec(&frozen).expect("a compiled policy serializes"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_policy_text_changes_the_hash() {
        let mut items: Vec<(&str, &str)> = BUILTIN.to_vec();
        assert_eq!(yaml_hash(&items), YAML_HASH);
        let edited = format!("{} ", items[0].1);
        items[0].1 = &edited;
        assert_ne!(yaml_hash(&items), YAML_HASH);
    }

    #[test]
    fn frozen_data_from_other_yaml_or_that_no_longer_reads_as_the_model_is_not_used() {
        // (that the embedded form itself reads back is set.rs's test)
        let good = FROZEN.to_vec();
        // other YAML: the hash differs
        let mut other = good.clone();
        other[0] ^= 1;
        assert!(thaw(&other).is_none());
        // what a changed model type makes of the old bytes: the loader
        // compiles the YAML instead of failing or building wrong rules
        let mut changed = YAML_HASH.to_le_bytes().to_vec();
        changed.extend(postcard::to_allocvec(&("policies", 1)).unwrap());
        assert!(thaw(&changed).is_none());
        // empty or cut short
        assert!(thaw(b"").is_none());
        assert!(thaw(&good[..good.len() / 2]).is_none());
    }
}
