//! Property test of Corrective decoding (`gentle-aggression-sigcomm13.txt` §5): a
//! random byte stream cut into random segments of at most MSS bytes, a random
//! subset of them received (in order or not), and the XOR packet of the block.
//! The decoder must rebuild exactly the missing bytes when they form one run of at
//! most MSS bytes, report failure when they do not, and never return a wrong byte.

use bytes::Bytes;
use gentle_tcp::corrective::{Decoded, MAX_BLOCKS, decode};
use gentle_tcp::receiver::Reassembly;
use proptest::prelude::*;

fn xor_fold(data: &[u8], stride: usize) -> Vec<u8> {
    let mut acc = vec![0u8; stride.min(data.len())];
    for (i, b) in data.iter().enumerate() {
        acc[i % stride] ^= b;
    }
    acc
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn rebuilds_exactly_or_reports_failure(
        stride in 1usize..200,
        blocks in 1u64..=MAX_BLOCKS,
        tail in 0usize..200,
        seed in any::<u64>(),
        cuts in proptest::collection::vec(1usize..200, 1..64),
        keep in proptest::collection::vec(any::<bool>(), 64),
        prefix in 0usize..3000,
    ) {
        let len = ((blocks as usize - 1) * stride + tail.min(stride).max(1)).max(1);
        let mut x = seed | 1;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        // Segments of at most `stride` bytes.
        let mut segs = Vec::new();
        let mut at = 0;
        let mut i = 0;
        while at < len {
            let n = cuts[i % cuts.len()].min(stride).min(len - at);
            segs.push((at, n));
            at += n;
            i += 1;
        }
        // The block starts `prefix` bytes into the stream; the prefix arrived.
        let base = 1 + prefix as u64;
        let mut rcv = Reassembly::new(1);
        rcv.keep_history(MAX_BLOCKS as usize * 200);
        if prefix > 0 {
            rcv.on_data(1, Bytes::from(vec![0xAB; prefix]), false);
        }
        let mut got = vec![false; len];
        for (k, &(s, n)) in segs.iter().enumerate() {
            if keep[k % keep.len()] {
                rcv.on_data(base + s as u64, Bytes::copy_from_slice(&data[s..s + n]), false);
                got[s..s + n].iter_mut().for_each(|g| *g = true);
            }
        }
        let payload = xor_fold(&data, stride);
        let missing: Vec<usize> = (0..len).filter(|&i| !got[i]).collect();
        let one_run = missing.windows(2).all(|w| w[1] == w[0] + 1);
        match decode(&rcv, base, len as u64, &payload) {
            Decoded::Complete => prop_assert!(missing.is_empty()),
            Decoded::Recovered { seq, data: rebuilt } => {
                prop_assert!(!missing.is_empty() && one_run && missing.len() <= stride);
                prop_assert_eq!(seq, base + missing[0] as u64);
                prop_assert_eq!(&rebuilt[..], &data[missing[0]..missing[0] + missing.len()]);
            }
            Decoded::Failed { end } => {
                prop_assert!(!(one_run && missing.len() <= stride && !missing.is_empty()),
                    "a recoverable loss was reported as failed");
                prop_assert_eq!(end, base + len as u64);
            }
            Decoded::Malformed => prop_assert!(false, "valid encoding called malformed"),
        }
    }
}
