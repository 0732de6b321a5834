//! Fuzz target for the segment parser: `cargo +nightly fuzz run parse_segment`.
//!
//! Properties: parsing never panics, with or without the checksum check; a segment
//! that parses serialises again (or reports options too long to re-encode) and
//! parses back to the same value.
#![no_main]

use gentle_tcp::wire::EmitError;
use gentle_tcp::Segment;
use libfuzzer_sys::fuzz_target;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fuzz_target!(|data: &[u8]| {
    let _ = Segment::parse_checked(data, A, B);
    let Ok(seg) = Segment::parse(data) else {
        return;
    };
    let mut buf = vec![0u8; seg.wire_len().max(20)];
    match seg.emit(A, B, &mut buf) {
        Ok(n) => {
            let back = Segment::parse_checked(&buf[..n], A, B).expect("re-emitted segment parses");
            assert_eq!(back, seg, "parse → emit → parse changed the segment");
        }
        Err(EmitError::OptionsTooLong(_)) => {}
        Err(e) => panic!("emit failed: {e}"),
    }
});
