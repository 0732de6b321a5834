//! The receiving side of Corrective (`gentle-aggression-sigcomm13.txt` §5,
//! "Corrective recovery").
//!
//! For a Corrective packet encoding `[start, start + len)`:
//! - if every byte of the range has arrived, the packet is dropped;
//! - if the missing bytes form one contiguous run of at most MSS bytes (the
//!   payload's length), each MSS residue class lacks at most one byte, so XORing
//!   the payload with every byte held rebuilds the run exactly;
//! - otherwise the recovery fails and the receiver reports the range as lost.
//!
//! Bytes below `rcv_nxt` come from the receiver's history (the last 16 MSS
//! delivered, kept even after the application read them); bytes above it from the
//! out-of-order queue. A range the history no longer reaches back to cannot be
//! rebuilt; it is reported as failed.

use bytes::Bytes;

use super::MAX_BLOCKS;
use super::encoder::xor_wrapping;
use crate::receiver::Reassembly;

/// What a Corrective packet gave the receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Every encoded byte had arrived: nothing to do.
    Complete,
    /// The missing run `[seq, seq + data.len())`, rebuilt.
    Recovered {
        /// Sequence offset of the rebuilt bytes.
        seq: u64,
        /// The rebuilt bytes.
        data: Bytes,
    },
    /// Too much was missing; bytes from `rcv_nxt` to `end` should be treated as lost.
    Failed {
        /// Everything up to this offset could not be rebuilt.
        end: u64,
    },
    /// The length and payload do not describe a valid encoding.
    Malformed,
}

/// Decodes a Corrective packet for `[start, start + len)` with `payload`.
pub fn decode(rcv: &Reassembly, start: u64, len: u64, payload: &[u8]) -> Decoded {
    let stride = payload.len() as u64;
    if stride == 0 || len < stride || len > MAX_BLOCKS * stride {
        return Decoded::Malformed;
    }
    let end = start + len;
    if end <= rcv.rcv_nxt() {
        return Decoded::Complete;
    }
    // Missing runs in [max(start, rcv_nxt), end): the gaps between queued segments.
    let mut runs = 0;
    let mut first = (0, 0);
    let mut cursor = start.max(rcv.rcv_nxt());
    for (s, e) in rcv.ooo_ranges() {
        if e <= cursor {
            continue;
        }
        if s >= end {
            break;
        }
        if s > cursor {
            if runs == 0 {
                first = (cursor, s);
            }
            runs += 1;
        }
        cursor = cursor.max(e);
        if cursor >= end {
            break;
        }
    }
    if cursor < end {
        if runs == 0 {
            first = (cursor, end);
        }
        runs += 1;
    }
    if runs == 0 {
        return Decoded::Complete;
    }
    let (m0, m1) = first;
    let history_reaches = start >= rcv.rcv_nxt() || rcv.history_start() <= start;
    if runs > 1 || m1 - m0 > stride || !history_reaches {
        return Decoded::Failed { end };
    }
    let mut acc = payload.to_vec();
    rcv.for_each_chunk(start, end, |s, bytes| {
        xor_wrapping(&mut acc, ((s - start) % stride) as usize, bytes);
    });
    let n = (m1 - m0) as usize;
    let mut out = Vec::with_capacity(n);
    let mut pos = ((m0 - start) % stride) as usize;
    for _ in 0..n {
        out.push(acc[pos]);
        pos += 1;
        if pos == acc.len() {
            pos = 0;
        }
    }
    Decoded::Recovered {
        seq: m0,
        data: Bytes::from(out),
    }
}
