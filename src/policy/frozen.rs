//! The built-in policies in a pre-compiled form: `builtin_frozen.cbor` is
//! the compiled model of `policies/*.yaml` as data (CBOR, through the
//! model's serde derives), embedded with `include_bytes!`, so a run does not
//! parse and compile ~60 KB of YAML (two thirds of the CPU time of a live
//! check). Its first 8 bytes are a hash of the YAML it came from; when that
//! differs from the YAML compiled into this binary, or the data no longer
//! reads as the model (a changed type), [`builtin`] returns `None` and the
//! loader compiles the YAML: slower, never wrong, and the build never
//! breaks. `cargo run --example freeze` writes the file (`-- --check`
//! tells whether it is current); this module's test fails when it is not.
//! Must not read files or the host.

use serde::{Deserialize, Serialize};

use super::builtin::BUILTIN;
use super::{Policy, PolicyError, PolicySet, Rule};

/// The frozen form, as `cargo run --example freeze` last wrote it.
const FROZEN: &[u8] = include_bytes!("builtin_frozen.cbor");

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
    let frozen: Frozen = ciborium::from_reader(data).ok()?;
    Some((frozen.policies, frozen.rules))
}

/// The frozen form of the built-in policies as this build compiles their
/// YAML: the bytes `src/policy/builtin_frozen.cbor` should hold (for
/// `cargo run --example freeze`).
pub fn freeze_builtins() -> Result<Vec<u8>, PolicyError> {
    let set = PolicySet::builtin_from_yaml()?;
    let frozen = Frozen {
        policies: set.policies().to_vec(),
        rules: set.rules().to_vec(),
    };
    let mut out = YAML_HASH.to_le_bytes().to_vec();
    ciborium::into_writer(&frozen, &mut out).expect("a compiled policy serializes");
    Ok(out)
}

/// `Vec<glob::Pattern>` as the patterns' text (`#[serde(with = ...)]` of
/// the model's drift checks).
pub(super) mod globs {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        list: &[glob::Pattern],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(list.iter().map(glob::Pattern::as_str))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<glob::Pattern>, D::Error> {
        Vec::<String>::deserialize(d)?
            .iter()
            .map(|g| glob::Pattern::new(g).map_err(D::Error::custom))
            .collect()
    }
}

/// A policy's parameters with each value's variant named (`Value`'s own
/// serde form is the reports' untagged one, which does not read back).
pub(super) mod value_map {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::value::tagged::Tagged;
    use crate::value::Value;

    pub(crate) fn serialize<S: Serializer>(
        map: &BTreeMap<String, Value>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let tagged: BTreeMap<&str, Tagged> =
            map.iter().map(|(k, v)| (k.as_str(), v.into())).collect();
        tagged.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<String, Value>, D::Error> {
        let tagged = BTreeMap::<String, Tagged>::deserialize(d)?;
        Ok(tagged.into_iter().map(|(k, v)| (k, v.into())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frozen form is what compiling the YAML gives, and it is current:
    /// a changed policy, compiler or model type needs `cargo run --example
    /// freeze` (then rebuild), or live checks compile the YAML.
    #[test]
    fn frozen_builtins_are_the_compiled_yaml_and_current() {
        let want = freeze_builtins().expect("the built-in policies compile");
        assert!(
            want == FROZEN,
            "src/policy/builtin_frozen.cbor is stale (policies/*.yaml, the compiler or the \
             model's types changed): run `cargo run --example freeze` and commit the file \
             (after a rebase conflict in it, take either side and run the same command)"
        );
        let yaml = PolicySet::builtin_from_yaml().unwrap();
        let (policies, rules) = builtin().expect("the frozen form matches the YAML's hash");
        assert_eq!(format!("{policies:?}"), format!("{:?}", yaml.policies()));
        assert_eq!(format!("{rules:?}"), format!("{:?}", yaml.rules()));
        assert!(!rules.is_empty());
    }

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
        let good = freeze_builtins().unwrap();
        assert!(thaw(&good).is_some());
        // other YAML: the hash differs
        let mut other = good.clone();
        other[0] ^= 1;
        assert!(thaw(&other).is_none());
        // what a changed model type makes of the old bytes: the loader
        // compiles the YAML instead of failing or building wrong rules
        let mut changed = YAML_HASH.to_le_bytes().to_vec();
        ciborium::into_writer(&("policies", 1), &mut changed).unwrap();
        assert!(thaw(&changed).is_none());
        // empty or cut short
        assert!(thaw(b"").is_none());
        assert!(thaw(&good[..good.len() / 2]).is_none());
    }
}
