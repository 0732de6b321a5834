//! Wire format: serialise → parse round-trips exactly; the parser never panics and
//! rejects malformed input with a typed error.

use bytes::Bytes;
use gentle_tcp::wire::{
    Experimental, Flags, Options, ParseError, SackBlock, SackBlocks, Segment, Timestamps, checksum,
};
use proptest::prelude::*;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fn arb_segment() -> impl Strategy<Value = Segment> {
    (
        any::<(u16, u16, u32, u32, u16, u16, u16)>(),
        (
            any::<Option<u16>>(),
            any::<Option<u8>>(),
            any::<bool>(),
            any::<Option<(u32, u32)>>(),
        ),
        (0usize..=4, any::<[(u32, u32); 4]>()),
        any::<Option<(u16, Vec<u8>)>>(),
        proptest::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(
            |(
                (sp, dp, seq, ack, flags, win, urg),
                (mss, ws, sp_ok, ts),
                (nsack, blocks),
                exp,
                payload,
            )| {
                let mut o = Options {
                    mss,
                    window_scale: ws,
                    sack_permitted: sp_ok,
                    ..Options::default()
                };
                o.timestamps = ts.map(|(val, ecr)| Timestamps { val, ecr });
                let mut sb = SackBlocks::new();
                for (l, r) in blocks.iter().take(nsack) {
                    sb.push(SackBlock {
                        left: *l,
                        right: *r,
                    });
                }
                o.sack = sb;
                o.experimental = exp.and_then(|(m, d)| Experimental::new(m, &d[..d.len().min(8)]));
                // Drop SACK blocks until the options fit in 40 bytes, as a sender must.
                while o.wire_len() > 40 && !o.sack.is_empty() {
                    let n = o.sack.len() - 1;
                    o.sack.truncate(n);
                }
                if o.wire_len() > 40 {
                    o.experimental = None;
                }
                Segment {
                    src_port: sp,
                    dst_port: dp,
                    seq,
                    ack,
                    flags: Flags(flags & 0x0fff),
                    window: win,
                    urgent: urg,
                    options: o,
                    payload: Bytes::from(payload),
                    ecn: gentle_tcp::Ecn::NotEct,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn emit_then_parse_round_trips(seg in arb_segment()) {
        let mut buf = vec![0u8; seg.wire_len()];
        let n = seg.emit(A, B, &mut buf).unwrap();
        prop_assert_eq!(n, seg.wire_len());
        let back = Segment::parse_checked(&buf, A, B).unwrap();
        prop_assert_eq!(&back, &seg);
        prop_assert_eq!(checksum(A, B, &buf), 0);
    }

    #[test]
    fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
        let _ = Segment::parse(&bytes);
        let _ = Segment::parse_checked(&bytes, A, B);
    }

    /// The fuzz target's property (fuzz/fuzz_targets/parse_segment.rs) on stable:
    /// whatever parses re-emits and parses back unchanged.
    #[test]
    fn parsed_segments_round_trip(
        header in proptest::collection::vec(any::<u8>(), 20..60),
        doff in 5u8..=15,
        payload in proptest::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = header;
        bytes[12] = (doff << 4) | (bytes[12] & 0x0f);
        bytes.extend_from_slice(&payload);
        if let Ok(seg) = Segment::parse(&bytes) {
            let mut buf = vec![0u8; seg.wire_len()];
            match seg.emit(A, B, &mut buf) {
                Ok(n) => prop_assert_eq!(Segment::parse_checked(&buf[..n], A, B).unwrap(), seg),
                Err(e) => prop_assert!(matches!(e, gentle_tcp::wire::EmitError::OptionsTooLong(_))),
            }
        }
    }
}

#[test]
fn reserved_bits_are_readable_and_writable() {
    let mut f = Flags::ACK;
    f.set_reserved(0b1010);
    assert_eq!(f.reserved(), 0b1010);
    assert!(f.ack());
    let seg = Segment {
        flags: f,
        ..Segment::default()
    };
    let mut buf = vec![0u8; seg.wire_len()];
    seg.emit(A, B, &mut buf).unwrap();
    assert_eq!(
        buf[12] & 0x0f,
        0b1010,
        "reserved bits sit after the data offset"
    );
    assert_eq!(Segment::parse(&buf).unwrap().flags.reserved(), 0b1010);
}

#[test]
fn malformed_segments_get_typed_errors() {
    assert_eq!(Segment::parse(&[0; 10]), Err(ParseError::TooShort(10)));
    let mut h = [0u8; 20];
    h[12] = 4 << 4;
    assert_eq!(Segment::parse(&h), Err(ParseError::BadDataOffset(4)));
    h[12] = 15 << 4;
    assert_eq!(Segment::parse(&h), Err(ParseError::BadDataOffset(15)));
    // MSS option with a wrong length.
    let mut g = [0u8; 24];
    g[12] = 6 << 4;
    g[20..24].copy_from_slice(&[2, 3, 5, 0]);
    assert_eq!(
        Segment::parse(&g),
        Err(ParseError::BadOption {
            kind: 2,
            offset: 20
        })
    );
    // Option running past the header.
    g[20..24].copy_from_slice(&[8, 10, 0, 0]);
    assert!(matches!(
        Segment::parse(&g),
        Err(ParseError::BadOption { kind: 8, .. })
    ));
    // Corrupted checksum.
    let seg = Segment {
        payload: Bytes::from_static(b"hello"),
        ..Segment::default()
    };
    let mut buf = vec![0u8; seg.wire_len()];
    seg.emit(A, B, &mut buf).unwrap();
    buf[22] ^= 1;
    assert_eq!(
        Segment::parse_checked(&buf, A, B),
        Err(ParseError::BadChecksum)
    );
}

#[test]
fn linux_syn_option_layout() {
    // MSS, SACK-permitted+timestamps, NOP+window scale: 20 option bytes as Linux sends.
    let o = Options {
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some(Timestamps { val: 1, ecr: 0 }),
        ..Options::default()
    };
    let seg = Segment {
        flags: Flags::SYN,
        options: o,
        ..Segment::default()
    };
    let mut buf = vec![0u8; seg.wire_len()];
    seg.emit(A, B, &mut buf).unwrap();
    assert_eq!(buf.len(), 40);
    assert_eq!(&buf[20..24], &[2, 4, 0x05, 0xb4]);
    assert_eq!(&buf[24..28], &[4, 2, 8, 10]);
    assert_eq!(&buf[36..40], &[1, 3, 3, 7]);
}
