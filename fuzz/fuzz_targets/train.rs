#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tokenmill_fuzz::train::run(data));
