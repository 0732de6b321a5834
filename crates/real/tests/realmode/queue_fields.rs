//! What the forwarder's router queues read of a packet and write into it: the
//! control bits with gentle's fast-start mark, whether it carries data, the ECN
//! field, and a CE mark with a header checksum that still verifies (the kernel
//! drops an IPv4 packet whose header checksum is wrong).

use bytes::Bytes;
use gentle_real::wire::{parse, queue_segment, set_ecn};
use gentle_tcp::Segment;
use gentle_tcp::wire::{Ecn, Flags, ipv4_header_checksum};

fn packet(flags: Flags, payload: &[u8], ecn: Ecn) -> Vec<u8> {
    let s = Segment {
        src_port: 8000,
        dst_port: 20000,
        seq: 1000,
        ack: 1,
        flags,
        window: 65535,
        payload: Bytes::copy_from_slice(payload),
        ecn,
        ..Default::default()
    };
    let mut b = vec![0u8; 2048];
    let n = s
        .emit_ipv4([10, 77, 0, 1], [10, 77, 0, 2], 9, &mut b)
        .unwrap();
    b.truncate(n);
    b
}

#[test]
fn the_queue_reads_flags_data_and_ecn() {
    let fs = Flags(Flags::ACK.0 | Flags::PSH.0 | Flags::FAST_START.0);
    let p = packet(fs, b"hello", Ecn::Ect0);
    let q = queue_segment(&p, &parse(&p).unwrap());
    assert_eq!(q.flags, fs);
    assert!(q.flags.contains(Flags::FAST_START));
    assert!(!q.payload.is_empty());
    assert_eq!(q.ecn, Ecn::Ect0);
    // A pure ACK, not ECN-capable, without the mark.
    let p = packet(Flags::ACK, b"", Ecn::NotEct);
    let q = queue_segment(&p, &parse(&p).unwrap());
    assert_eq!(q.flags, Flags::ACK);
    assert!(q.payload.is_empty());
    assert!(!q.flags.contains(Flags::FAST_START));
    assert_eq!(q.ecn, Ecn::NotEct);
}

#[test]
fn a_ce_mark_keeps_the_header_valid_and_the_rest_intact() {
    for tos in [0x00u8, 0xb8] {
        let mut p = packet(Flags::ACK, &[7; 1000], Ecn::Ect0);
        p[1] |= tos; // a DSCP the mark must leave alone
        p[10..12].fill(0);
        let sum = ipv4_header_checksum(&p[..20]);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(
            ipv4_header_checksum(&p[..20]),
            0,
            "the test's packet verifies"
        );
        let before = p.clone();
        set_ecn(&mut p, Ecn::Ce);
        assert_eq!(p[1], tos | 0b11);
        assert_eq!(ipv4_header_checksum(&p[..20]), 0);
        assert_eq!(Ecn::from_bits(p[1]), Ecn::Ce);
        // Only the TOS byte and the header checksum changed.
        let changed: Vec<usize> = (0..p.len()).filter(|&i| p[i] != before[i]).collect();
        assert!(
            changed.iter().all(|&i| i == 1 || i == 10 || i == 11),
            "{changed:?}"
        );
        assert_eq!(parse(&p).unwrap().payload, 1000);
    }
}
