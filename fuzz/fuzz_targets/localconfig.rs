//! Fuzz target: Zimbra localconfig.xml, zmlocalconfig output and ${key} expansion. Must never panic, hang or allocate without bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = driftaudit::unstable::parse::localconfig::parse_xml(&s);
    let _ = driftaudit::unstable::parse::localconfig::parse_zmlocalconfig(&s);
    let _ = driftaudit::unstable::parse::localconfig::expand("k", &s, &|k: &str| Some(format!("${{{k}}}${{{k}}}")));
});
