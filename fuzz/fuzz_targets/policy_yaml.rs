//! Fuzz target: policy YAML (loader, validation, templates). Must never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let mut set = driftaudit::unstable::policy::PolicySet::new();
    let _ = set.add_str("fuzz.yaml", &s);
});
