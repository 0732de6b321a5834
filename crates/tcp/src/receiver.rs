//! The receiving half: reassembly, cumulative ACK, SACK and DSACK generation, and
//! the decision when to acknowledge.
//!
//! - Out-of-order segments are queued and delivered in order (RFC 9293 §3.10.7.4).
//! - SACK blocks (RFC 2018 §4): the first block holds the segment that triggered the
//!   ACK; the others repeat the most recently reported blocks, in that order.
//! - DSACK (RFC 2883 §4): a duplicate segment is reported in the first block; if it
//!   lies inside a SACKed block, that block follows it.
//! - ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2, Linux `__tcp_ack_snd_check`): ACK
//!   at once for every second full-sized segment (Windows: every second segment,
//!   whatever its size), for out-of-order data, for data that fills a hole, and
//!   during quick-ACK mode; otherwise arm the delayed-ACK timer (the engine's
//!   `ack_policy` module).

use std::collections::VecDeque;

use bytes::Bytes;

/// Most blocks remembered for reporting (4 fit in the option space without timestamps).
const MAX_REPORTED: usize = 4;

#[derive(Clone, Debug, Default)]
/// The receive side of a connection: reassembly, SACK and DSACK reporting, and
/// what is due to be acknowledged (RFC 9293 §3.10.7.4, RFC 2018, RFC 2883).
pub struct Reassembly {
    /// The peer's initial sequence number: every offset here counts from it.
    irs: u32,
    /// Next expected sequence offset (relative to the peer's ISN).
    rcv_nxt: u64,
    /// Out-of-order segments, sorted by start, non-overlapping.
    ooo: VecDeque<(u64, Bytes)>,
    ooo_bytes: usize,
    /// In-order bytes not yet read by the application.
    ready: VecDeque<Bytes>,
    /// Bytes in `ready`.
    ready_bytes: usize,
    /// Sequence offset of the peer's FIN, once seen.
    pub fin_at: Option<u64>,
    /// The FIN was reached in order.
    pub fin_received: bool,
    /// SACK blocks in the order they should be reported (most recent first).
    recent: [(u64, u64); MAX_REPORTED],
    recent_len: usize,
    /// A pending DSACK range.
    pub dsack: Option<(u64, u64)>,
    /// In-order data segments received since the last ACK sent.
    pub unacked_segs: u32,
    /// Bytes received since the last ACK sent.
    pub unacked_bytes: u32,
    /// An ACK must go out at the next opportunity.
    pub ack_now: bool,
    /// `rcv_nxt` as of the last ACK sent (RFC 9293's RCV.NXT as the peer last
    /// learned it; Linux `rcv_wup`).
    pub rcv_wup: u64,
    /// In-order bytes kept after delivery for Corrective decoding, oldest first
    /// (`gentle-aggression-sigcomm13.txt` §5: "keeps the last 15 ACKed MSS blocks
    /// buffered, even if the application layer has already consumed these blocks").
    history: VecDeque<(u64, Bytes)>,
    history_bytes: usize,
    /// Bytes of history to keep; 0 keeps none.
    history_keep: usize,
}

/// What happened to an arriving data segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// New in-order bytes delivered.
    pub delivered: usize,
    /// The segment lies beyond `rcv_nxt`.
    pub out_of_order: bool,
    /// Some of its bytes had been received before.
    pub duplicate: bool,
    /// The segment filled (part of) a hole.
    pub filled_hole: bool,
}

impl Reassembly {
    /// An empty receiver expecting `rcv_nxt` next.
    pub fn new(rcv_nxt: u64) -> Self {
        Reassembly {
            rcv_nxt,
            rcv_wup: rcv_nxt,
            ..Default::default()
        }
    }

    /// A receiver once the peer's SYN, with initial sequence number `irs`, arrived:
    /// the SYN took offset 0, so offset 1 is expected next.
    pub fn after_syn(irs: u32) -> Self {
        Reassembly {
            irs,
            ..Reassembly::new(1)
        }
    }

    /// The peer's initial sequence number: every offset here counts from it.
    #[inline]
    pub fn irs(&self) -> u32 {
        self.irs
    }

    /// Next expected sequence offset (RCV.NXT, relative to the peer's ISN).
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// In-order bytes not yet read by the application.
    #[inline]
    pub fn ready_bytes(&self) -> usize {
        self.ready_bytes
    }

    /// The peer's FIN, at `rcv_nxt`, is received in order: it takes one sequence
    /// number (RFC 9293 §3.4).
    pub fn receive_fin(&mut self) {
        self.fin_received = true;
        self.rcv_nxt += 1;
    }

    /// Whether `[start, end)` was received: below `rcv_nxt`, or held out of order.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let mut pos = start.max(self.rcv_nxt);
        for (s, b) in &self.ooo {
            if pos >= end {
                break;
            }
            if *s > pos {
                return false;
            }
            pos = pos.max(s + b.len() as u64);
        }
        pos >= end
    }

    /// Out-of-order data is queued.
    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }
    /// Bytes held: unread in-order data plus the out-of-order queue.
    pub fn buffered(&self) -> usize {
        self.ready_bytes + self.ooo_bytes
    }

    /// Takes the next in-order chunk for the application.
    pub fn read(&mut self) -> Option<Bytes> {
        let b = self.ready.pop_front()?;
        self.ready_bytes -= b.len();
        Some(b)
    }

    /// Processes the payload of an acceptable segment starting at offset `seq`.
    pub fn on_data(&mut self, seq: u64, mut data: Bytes, dsack: bool) -> Arrival {
        let mut a = Arrival::default();
        let end = seq + data.len() as u64;
        if end <= self.rcv_nxt {
            a.duplicate = true;
            if dsack {
                self.dsack = Some((seq, end));
            }
            return a;
        }
        let mut seq = seq;
        if seq < self.rcv_nxt {
            // Partly old: DSACK the old part (RFC 2883 §4.1.1), keep the new part.
            if dsack {
                self.dsack = Some((seq, self.rcv_nxt));
            }
            data = data.slice((self.rcv_nxt - seq) as usize..);
            seq = self.rcv_nxt;
        }
        if seq == self.rcv_nxt {
            a.filled_hole = !self.ooo.is_empty();
            self.deliver(data);
            a.delivered = (self.rcv_nxt - seq) as usize;
            self.drain_ooo(&mut a);
            self.forget_blocks_below(self.rcv_nxt);
        } else {
            a.out_of_order = true;
            let dup = self.insert_ooo(seq, data);
            if dup.is_some() {
                a.duplicate = true;
                if dsack {
                    self.dsack = dup;
                }
            }
            let blk = self.block_of_arrival(seq, end);
            self.report_first(blk);
        }
        a
    }

    /// Keeps at least the last `bytes` delivered bytes for Corrective decoding.
    pub fn keep_history(&mut self, bytes: usize) {
        self.history_keep = bytes;
        if bytes == 0 {
            self.history.clear();
            self.history_bytes = 0;
        }
    }

    /// Lowest sequence offset the history still holds (`rcv_nxt` if none).
    pub fn history_start(&self) -> u64 {
        self.history.front().map_or(self.rcv_nxt, |(s, _)| *s)
    }

    /// Out-of-order ranges `[start, end)`, in order; adjacent segments are reported
    /// separately.
    pub fn ooo_ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ooo.iter().map(|(s, d)| (*s, s + d.len() as u64))
    }

    /// Calls `f(seq, bytes)` for every byte held in `[lo, hi)`: delivered bytes from
    /// the history, then out-of-order bytes.
    pub fn for_each_chunk(&self, lo: u64, hi: u64, mut f: impl FnMut(u64, &[u8])) {
        let chunks = self.history.iter().chain(self.ooo.iter());
        for (s, d) in chunks {
            let e = s + d.len() as u64;
            if e <= lo || *s >= hi {
                continue;
            }
            let a = (*s).max(lo);
            let b = e.min(hi);
            f(a, &d[(a - s) as usize..(b - s) as usize]);
        }
    }

    fn deliver(&mut self, data: Bytes) {
        if self.history_keep > 0 && !data.is_empty() {
            self.history.push_back((self.rcv_nxt, data.clone()));
            self.history_bytes += data.len();
            while let Some((_, d)) = self.history.front() {
                if self.history_bytes - d.len() < self.history_keep {
                    break;
                }
                self.history_bytes -= d.len();
                self.history.pop_front();
            }
        }
        self.rcv_nxt += data.len() as u64;
        self.ready_bytes += data.len();
        if !data.is_empty() {
            self.ready.push_back(data);
        }
    }

    fn drain_ooo(&mut self, a: &mut Arrival) {
        while let Some((s, _)) = self.ooo.front() {
            if *s > self.rcv_nxt {
                break;
            }
            let (s, mut d) = self.ooo.pop_front().expect("front exists");
            self.ooo_bytes -= d.len();
            let e = s + d.len() as u64;
            if e <= self.rcv_nxt {
                continue;
            }
            if s < self.rcv_nxt {
                d = d.slice((self.rcv_nxt - s) as usize..);
            }
            let before = self.rcv_nxt;
            self.deliver(d);
            a.delivered += (self.rcv_nxt - before) as usize;
        }
    }

    /// Inserts `[seq, seq+len)` into the out-of-order queue, trimming overlap with what
    /// is already there. Returns the first duplicated range, if any.
    fn insert_ooo(&mut self, seq: u64, data: Bytes) -> Option<(u64, u64)> {
        let end = seq + data.len() as u64;
        let mut dup = None;
        // Walk existing segments overlapping [seq, end) and cut them out.
        let first = self.ooo.partition_point(|(s, d)| s + d.len() as u64 <= seq);
        let mut i = first;
        let mut cur = (seq, end);
        let mut out: [(u64, u64); 8] = [(0, 0); 8];
        let mut nout = 0;
        while i < self.ooo.len() && cur.0 < cur.1 {
            let (s, d) = &self.ooo[i];
            let e = s + d.len() as u64;
            if *s >= cur.1 {
                break;
            }
            // Overlap [max(s,cur.0), min(e,cur.1)) is duplicate.
            let ds = (*s).max(cur.0);
            let de = e.min(cur.1);
            if ds < de && dup.is_none() {
                dup = Some((ds, de));
            }
            if cur.0 < *s && nout < out.len() {
                out[nout] = (cur.0, *s);
                nout += 1;
            }
            cur.0 = cur.0.max(e);
            i += 1;
        }
        if cur.0 < cur.1 && nout < out.len() {
            out[nout] = cur;
            nout += 1;
        }
        for &(s, e) in &out[..nout] {
            let piece = data.slice((s - seq) as usize..(e - seq) as usize);
            let pos = self.ooo.partition_point(|(x, _)| *x < s);
            self.ooo_bytes += piece.len();
            self.ooo.insert(pos, (s, piece));
        }
        dup
    }

    /// The contiguous out-of-order block holding the arrival `[seq, end)`, just
    /// queued. The block reported last is exact (every reported block is: an
    /// arrival that joins blocks puts the whole first and drops those it joined), so
    /// an arrival inside it or extending it — a run of segments beyond a hole —
    /// keeps its start and only the end is looked for.
    fn block_of_arrival(&self, seq: u64, end: u64) -> (u64, u64) {
        match self.recent[..self.recent_len].first() {
            Some(&(lo, hi)) if lo <= seq && seq <= hi => {
                let mut hi = hi.max(end);
                let mut k = self.ooo.partition_point(|(s, _)| *s < hi);
                // The arrival may end inside a segment queued before it.
                if let Some((s, d)) = k.checked_sub(1).map(|j| &self.ooo[j]) {
                    hi = hi.max(s + d.len() as u64);
                }
                while k < self.ooo.len() && self.ooo[k].0 == hi {
                    hi += self.ooo[k].1.len() as u64;
                    k += 1;
                }
                (lo, hi)
            }
            _ => self.block_containing(seq),
        }
    }

    /// The contiguous out-of-order block containing `seq`.
    fn block_containing(&self, seq: u64) -> (u64, u64) {
        let i = self
            .ooo
            .partition_point(|(s, _)| *s <= seq)
            .saturating_sub(1);
        let (s0, d) = &self.ooo[i];
        let mut lo = *s0;
        let mut hi = lo + d.len() as u64;
        let mut j = i;
        while j > 0 {
            let (s, d) = &self.ooo[j - 1];
            if s + d.len() as u64 == lo {
                lo = *s;
                j -= 1;
            } else {
                break;
            }
        }
        let mut k = i + 1;
        while k < self.ooo.len() && self.ooo[k].0 == hi {
            hi += self.ooo[k].1.len() as u64;
            k += 1;
        }
        (lo, hi)
    }

    /// Puts `blk` first among the reported blocks, removing blocks it now covers.
    fn report_first(&mut self, blk: (u64, u64)) {
        let mut next = [(0u64, 0u64); MAX_REPORTED];
        next[0] = blk;
        let mut n = 1;
        for &(s, e) in &self.recent[..self.recent_len] {
            let overlaps = s < blk.1 && e > blk.0 || s == blk.1 || e == blk.0;
            if !overlaps && n < MAX_REPORTED {
                next[n] = (s, e);
                n += 1;
            }
        }
        self.recent = next;
        self.recent_len = n;
    }

    fn forget_blocks_below(&mut self, upto: u64) {
        let mut n = 0;
        for i in 0..self.recent_len {
            if self.recent[i].1 > upto {
                self.recent[n] = self.recent[i];
                n += 1;
            }
        }
        self.recent_len = n;
    }

    /// SACK blocks to send now, most recent first, at most `max` of them, with a
    /// pending DSACK first (consumed). Blocks are offsets; the caller translates.
    pub fn sack_blocks(&mut self, max: usize, out: &mut [(u64, u64); MAX_REPORTED]) -> usize {
        let mut n = 0;
        if let Some(d) = self.dsack.take()
            && max > 0
        {
            out[0] = d;
            n = 1;
            // RFC 2883 §4.2: follow it with the block that contains it, if any.
            if let Some(&b) = self.recent[..self.recent_len]
                .iter()
                .find(|b| b.0 <= d.0 && d.1 <= b.1)
                && n < max
            {
                out[n] = b;
                n += 1;
            }
        }
        for &b in &self.recent[..self.recent_len] {
            if n >= max {
                break;
            }
            if out[..n].contains(&b) {
                continue;
            }
            out[n] = b;
            n += 1;
        }
        // A FIN held out of order occupies sequence space: like Linux, whose
        // out-of-order segments carry it in their end_seq, include it in the block
        // that ends where it sits.
        if let (Some(fin), false) = (self.fin_at, self.fin_received) {
            for b in out[..n].iter_mut() {
                if b.1 == fin {
                    b.1 = fin + 1;
                }
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Every block held for reporting is a whole contiguous run of what is
        /// queued, after any sequence of arrivals (in order, beyond holes, joining
        /// blocks, duplicates): so the block of an arrival may start from the last
        /// one reported.
        #[test]
        fn reported_blocks_are_exact(arrivals in proptest::collection::vec((0u64..40, 1u64..4), 1..120)) {
            let mut r = Reassembly::new(0);
            for (at, len) in arrivals {
                let seq = r.rcv_nxt() + at * 10;
                r.on_data(seq, Bytes::from(vec![0u8; (len * 10) as usize]), true);
                for &(lo, hi) in &r.recent[..r.recent_len] {
                    prop_assert_eq!(r.block_containing(lo), (lo, hi));
                }
            }
        }
    }
}
