//! Fuzz target: /etc/fstab. Must never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = driftaudit::unstable::parse::fstab::parse(&s);
    let _ = driftaudit::unstable::parse::fstab::unmangle(&s);
});
