//! Fuzz target: SHOW GLOBAL VARIABLES captures. Must never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = driftaudit::unstable::parse::mysqlvars::parse(&s);
});
