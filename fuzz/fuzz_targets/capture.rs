//! Any bytes as a capture file: the reader and the analyser return an error or an
//! analysis, and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = gentle_analyze::analyze(data, gentle_analyze::Options::default(), &mut |_| {});
});
