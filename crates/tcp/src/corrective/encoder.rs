//! The sending side of Corrective (`gentle-aggression-sigcomm13.txt` §5, "Corrective
//! encoding").
//!
//! New data is grouped into blocks: a block collects the segments sent within one
//! window of its first segment, up to [`MAX_BLOCKS`] MSS of bytes. Each byte at
//! offset `r` from the block's start is XORed into position `r mod MSS` of the
//! block's payload ("aligns the packets along MSS bytes boundaries"); since no
//! segment carries more than MSS bytes, any single lost segment can be rebuilt.
//! The Corrective packet of a block leaves one delay (RTT/4, "this minimizes the
//! probability of losing both") after the last segment it encodes. Retransmissions
//! are never encoded and Corrective packets are never retransmitted.
//!
//! The XOR is accumulated as segments are sent, in one MSS-sized buffer allocated
//! when the connection is established; the only allocation per block is the
//! payload of its Corrective packet.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;

use super::MAX_BLOCKS;
use crate::time::Instant;

/// A Corrective packet ready to go: it encodes `[start, start + len)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// Sequence offset of the first byte encoded.
    pub start: u64,
    /// Bytes encoded.
    pub len: u64,
    /// The XOR of the encoded blocks.
    pub payload: Bytes,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    start: u64,
    len: u64,
    first_sent: Instant,
    due: Instant,
}

/// Groups new data into blocks and produces their Corrective packets.
#[derive(Clone, Debug, Default)]
pub struct Encoder {
    stride: usize,
    acc: Vec<u8>,
    open: Option<Open>,
    /// Closed blocks waiting for their send time, in due order.
    ready: VecDeque<(Instant, Encoded)>,
}

impl Encoder {
    /// An encoder aligning on `mss`-byte blocks.
    pub fn new(mss: u32) -> Self {
        let stride = mss.max(1) as usize;
        Encoder {
            stride,
            acc: vec![0; stride],
            open: None,
            ready: VecDeque::with_capacity(4),
        }
    }

    /// New data `[seq, seq + data.len())` was sent at `now`; `delay` is the current
    /// RTT/4, both the grouping window and the send delay.
    pub fn on_new_data(&mut self, now: Instant, seq: u64, data: &[u8], delay: Duration) {
        if data.is_empty() || self.stride == 0 {
            return;
        }
        let cap = MAX_BLOCKS * self.stride as u64;
        if let Some(o) = self.open {
            let contiguous = o.start + o.len == seq;
            let in_window = now <= o.first_sent + delay;
            if !contiguous || !in_window || o.len + data.len() as u64 > cap {
                self.close();
            }
        }
        let o = self.open.get_or_insert(Open {
            start: seq,
            len: 0,
            first_sent: now,
            due: now,
        });
        let pos = ((seq - o.start) % self.stride as u64) as usize;
        xor_wrapping(&mut self.acc, pos, data);
        o.len += data.len() as u64;
        o.due = now + delay;
        if o.len >= cap {
            self.close();
        }
    }

    fn close(&mut self) {
        let Some(o) = self.open.take() else {
            return;
        };
        let n = (o.len as usize).min(self.stride);
        let payload = Bytes::copy_from_slice(&self.acc[..n]);
        self.acc[..n].fill(0);
        self.ready.push_back((
            o.due,
            Encoded {
                start: o.start,
                len: o.len,
                payload,
            },
        ));
    }

    /// When the next Corrective packet is due.
    pub fn next_due(&self) -> Option<Instant> {
        match self.ready.front() {
            Some((t, _)) => Some(*t),
            None => self.open.map(|o| o.due),
        }
    }

    /// The next Corrective packet due at `now`, if any.
    pub fn take_due(&mut self, now: Instant) -> Option<Encoded> {
        if self.ready.front().is_none_or(|(t, _)| *t > now)
            && self.open.is_some_and(|o| o.due <= now)
        {
            self.close();
        }
        match self.ready.front() {
            Some((t, _)) if *t <= now => self.ready.pop_front().map(|(_, e)| e),
            _ => None,
        }
    }
}

/// XORs `data` into `acc` starting at `pos`, wrapping at `acc.len()`: in contiguous
/// runs, so the compiler can vectorise them.
pub(crate) fn xor_wrapping(acc: &mut [u8], mut pos: usize, mut data: &[u8]) {
    while !data.is_empty() {
        let n = (acc.len() - pos).min(data.len());
        for (a, b) in acc[pos..pos + n].iter_mut().zip(&data[..n]) {
            *a ^= b;
        }
        data = &data[n..];
        pos = 0;
    }
}
