#![no_main]

libfuzzer_sys::fuzz_target!(init: tokenmill_fuzz::scanners::init(), |data: &[u8]| {
    tokenmill_fuzz::scanners::run(data)
});
