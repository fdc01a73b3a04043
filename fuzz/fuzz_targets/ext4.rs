//! Fuzz target: tune2fs -l / dumpe2fs -h text and raw superblocks. Must never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = driftaudit::unstable::parse::ext4::parse_text(&s);
    let _ = driftaudit::unstable::parse::ext4::parse_device_head(data);
});
