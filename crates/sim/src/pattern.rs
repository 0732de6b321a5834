//! The bytes applications send: a fixed pseudo-random pattern indexed by stream
//! offset, so a receiver can check every byte it gets against what was sent.

use std::sync::OnceLock;

use bytes::Bytes;

/// Period of the pattern (1 MiB).
pub const PERIOD: u64 = 1 << 20;

fn pattern() -> &'static Bytes {
    static P: OnceLock<Bytes> = OnceLock::new();
    P.get_or_init(|| {
        let mut v = Vec::with_capacity(PERIOD as usize);
        let mut x: u32 = 0x2545_F491;
        for _ in 0..PERIOD {
            // xorshift32: a different byte sequence at every offset within a period.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push((x >> 24) as u8);
        }
        // A 'static buffer: slices of it clone and drop without reference counting,
        // which keeps the per-segment cost of the simulator's payloads near zero.
        Bytes::from_static(Box::leak(v.into_boxed_slice()))
    })
}

/// Calls `f` with the pattern bytes for stream offsets `[offset, offset+len)`, in
/// at most `len / PERIOD + 2` shared slices (no copying).
pub fn chunks(offset: u64, len: u64, mut f: impl FnMut(Bytes)) {
    let p = pattern();
    let mut off = offset;
    let end = offset + len;
    while off < end {
        let i = (off % PERIOD) as usize;
        let n = ((PERIOD - off % PERIOD).min(end - off)) as usize;
        f(p.slice(i..i + n));
        off += n as u64;
    }
}

/// Number of bytes in `data` that differ from the pattern at `offset`.
pub fn mismatches(offset: u64, data: &[u8]) -> u64 {
    let p = pattern();
    let mut bad = 0;
    let mut done = 0usize;
    while done < data.len() {
        let off = offset + done as u64;
        let i = (off % PERIOD) as usize;
        let n = (PERIOD as usize - i).min(data.len() - done);
        let want = &p[i..i + n];
        let got = &data[done..done + n];
        // Payloads are slices of the pattern itself: the same bytes at the same
        // address are equal without comparing them.
        if !std::ptr::eq(want.as_ptr(), got.as_ptr()) && want != got {
            bad += want.iter().zip(got).filter(|(a, b)| a != b).count() as u64;
        }
        done += n;
    }
    bad
}
