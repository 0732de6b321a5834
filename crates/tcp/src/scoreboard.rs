//! The sender's retransmission queue with its SACK scoreboard.
//!
//! One entry per transmitted segment, as Linux keeps one skb per segment. Each
//! entry carries the scoreboard bits of RFC 6675 §3 (SACKed, lost, retransmitted)
//! as Linux's `TCPCB_SACKED_ACKED`, `TCPCB_LOST` and `TCPCB_SACKED_RETRANS`; the
//! counts `sacked_out`, `lost_out` and `retrans_out` are kept alongside so that
//! RFC 6675's `pipe` is Linux's `tcp_packets_in_flight`:
//! `packets_out − (sacked_out + lost_out) + retrans_out`.
//!
//! Sequence numbers here are 64-bit offsets from the initial send sequence number,
//! so no comparison wraps.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::time::Instant;

/// One transmitted segment.
#[derive(Clone, Copy, Debug)]
pub struct TxSeg {
    pub start: u64,
    /// End of the sequence space (exclusive), including the FIN's one.
    pub end: u64,
    pub fin: bool,
    /// Sent with PSH: its retransmissions carry it too, as Linux's skb keeps its
    /// flags (`tcp_retransmit_skb`).
    pub psh: bool,
    /// It ended the TSO packet it was first sent in (`tso_psh`): a retransmission
    /// of the packet's segments together ends there too.
    pub tso_end: bool,
    pub sacked: bool,
    pub lost: bool,
    /// A retransmission of this segment is in flight.
    pub retrans: bool,
    pub ever_retrans: bool,
    /// Time of the last (re)transmission.
    pub tx_time: Instant,
    /// snd.nxt when this segment was last retransmitted (Linux `ack_seq`, used to
    /// detect lost retransmissions).
    pub retrans_high: u64,
}

/// Result of removing cumulatively acknowledged segments.
#[derive(Clone, Copy, Debug, Default)]
pub struct Acked {
    pub segs: u32,
    /// Bytes of sequence space acknowledged.
    pub bytes: u64,
    /// Transmit time of the oldest acknowledged segment never retransmitted (Karn).
    pub rtt_from: Option<Instant>,
    /// Some acknowledged segment had been retransmitted.
    pub any_retrans: bool,
    /// Segments acknowledged that were neither SACKed before nor ever retransmitted,
    /// and lay below the highest SACK (a sign of reordering); the lowest index.
    pub reord_index: Option<u32>,
    /// Acknowledged segments that were not SACKed before.
    pub newly_delivered: u32,
    pub fin_acked: bool,
}

/// Result of applying SACK blocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sacked {
    pub newly_sacked: u32,
    /// The lowest index (from the head) of a newly SACKed segment that was never
    /// retransmitted and lies below the previous highest SACK.
    pub reord_index: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    q: VecDeque<TxSeg>,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Duplicate ACKs counted as "SACKed" segments when SACK is off (Linux's
    /// `tcp_add_reno_sack`); included in `sacked_out`.
    reno: RenoDupacks,
    /// End of the highest SACKed segment (Linux `tcp_highest_sack_seq`), or 0.
    highest_sack_end: u64,
    /// Where the last walk of [`Self::mark_head_lost`] stopped (Linux's
    /// `lost_skb_hint` and `lost_cnt_hint`).
    lost_hint: LostHint,
    /// At most the lowest `retrans_high` of the retransmissions in flight (Linux's
    /// `lost_retrans_low`): while the highest SACK is not above it, no
    /// retransmission can be found lost.
    retrans_low: u64,
    /// No segment before this index is to be retransmitted (lost, not SACKed, no
    /// retransmission in flight): where [`Self::next_lost`] starts, and moves on
    /// to what it finds (Linux's `retransmit_skb_hint`).
    lost_scan: Cell<usize>,
    /// SACK blocks applied lately (Linux's `recv_sack_cache`), so that a block seen
    /// again is applied only where it grew.
    sack_cache: SackCache,
}

/// Every segment before index `index` is SACKed or marked lost, and `sacked` of
/// them are SACKed: a walk from the head may resume there with the same result.
#[derive(Clone, Copy, Debug, Default)]
struct LostHint {
    index: usize,
    sacked: u32,
}

/// Ranges of sequence space every segment of which, wholly inside, is SACKed (a
/// segment stays SACKed until it is acknowledged, and no segment is ever split or
/// sent again into space the queue had not reached).
#[derive(Clone, Copy, Debug, Default)]
struct SackCache {
    ranges: [(u64, u64); SACK_CACHE],
    next: usize,
}

/// Ranges kept: as many as blocks an ACK carries (RFC 2018 §3).
const SACK_CACHE: usize = 4;

impl SackCache {
    /// The furthest end of a cached range that holds `left`; `left` itself if none
    /// does. (Ranges are not chained: a segment across the end of one and the start
    /// of the next lies wholly inside neither.)
    fn covered_from(&self, left: u64) -> u64 {
        self.ranges
            .iter()
            .filter(|&&(l, r)| l <= left && left < r)
            .map(|&(_, r)| r)
            .max()
            .unwrap_or(left)
    }

    fn insert(&mut self, left: u64, right: u64) {
        self.ranges[self.next] = (left, right);
        self.next = (self.next + 1) % SACK_CACHE;
    }
}

impl Scoreboard {
    /// Segments SACKed above snd.una (Linux `sacked_out`), duplicate ACKs counted
    /// in without SACK.
    pub fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    /// Segments marked lost (Linux `lost_out`).
    pub fn lost_out(&self) -> u32 {
        self.lost_out
    }
    /// Retransmissions in flight (Linux `retrans_out`).
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }

    /// The segment queue's storage, emptied, for a new connection to reuse (see
    /// [`Self::reuse`]); this scoreboard is left without any. A connection's first
    /// scoreboard starts without storage and grows it as segments are sent.
    pub fn take_storage(&mut self) -> VecDeque<TxSeg> {
        let mut q = std::mem::take(&mut self.q);
        q.clear();
        q
    }
    /// An empty scoreboard takes `q` (empty) as its storage.
    pub fn reuse(&mut self, q: VecDeque<TxSeg>) {
        debug_assert!(self.q.is_empty() && q.is_empty());
        self.q = q;
    }
    pub fn packets_out(&self) -> u32 {
        self.q.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    /// RFC 6675 `pipe` (Linux `tcp_packets_in_flight`).
    pub fn pipe(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    pub fn get(&self, i: usize) -> Option<&TxSeg> {
        self.q.get(i)
    }
    /// Index of the segment that starts at `start`.
    pub fn find(&self, start: u64) -> Option<usize> {
        self.q.binary_search_by_key(&start, |s| s.start).ok()
    }
    /// The segment that starts at `start` is outstanding and SACKed.
    pub fn sacked_at(&self, start: u64) -> bool {
        self.find(start).is_some_and(|i| self.q[i].sacked)
    }
    pub fn push(&mut self, seg: TxSeg) {
        self.q.push_back(seg);
    }

    /// Linux `fackets_out`: segments from the head up to and including the highest
    /// SACKed one.
    pub fn fackets_out(&self) -> u32 {
        if self.highest_sack_end == 0 {
            return 0;
        }
        self.q.partition_point(|s| s.end <= self.highest_sack_end) as u32
    }

    /// Removes segments with `end <= ack`.
    pub fn ack(&mut self, ack: u64) -> Acked {
        self.ack_with(ack, |_| {})
    }

    /// [`Self::ack`], calling `visit` with every removed segment that had not been
    /// SACKed (delivered by this ACK).
    pub fn ack_with(&mut self, ack: u64, mut visit: impl FnMut(&TxSeg)) -> Acked {
        let mut r = Acked::default();
        let fack_idx = self.fackets_out();
        let mut idx = 0u32;
        while let Some(s) = self.q.front() {
            if s.end > ack {
                break;
            }
            let s = self.q.pop_front().expect("front exists");
            self.lost_hint.on_removed(s.sacked);
            self.lost_scan.set(self.lost_scan.get().saturating_sub(1));
            r.segs += 1;
            r.bytes += s.end - s.start;
            r.fin_acked |= s.fin;
            if s.sacked {
                self.sacked_out = self.sacked_out.saturating_sub(1);
            } else {
                visit(&s);
                r.newly_delivered += 1;
                if !s.ever_retrans && idx < fack_idx {
                    r.reord_index.get_or_insert(idx);
                }
            }
            if s.lost {
                self.lost_out -= 1;
            }
            if s.retrans {
                self.retrans_out -= 1;
            }
            if s.ever_retrans {
                r.any_retrans = true;
            } else if r.rtt_from.is_none() && !s.sacked {
                // A SACKed segment was delivered long before this ACK: no sample
                // (Linux `tcp_clean_rtx_queue`).
                r.rtt_from = Some(s.tx_time);
            }
            idx += 1;
        }
        if self.q.is_empty() {
            self.highest_sack_end = 0;
            self.sacked_out = 0;
            self.reno = RenoDupacks::default();
        } else if self.highest_sack_end <= ack {
            self.highest_sack_end = 0;
        }
        r
    }

    /// Marks every segment fully inside `[left, right)` as SACKed.
    pub fn sack(&mut self, left: u64, right: u64) -> Sacked {
        self.sack_with(left, right, |_| {})
    }

    /// [`Self::sack`], calling `visit` with every newly SACKed segment as it was
    /// before (its retransmission flag still set).
    pub fn sack_with(&mut self, left: u64, right: u64, mut visit: impl FnMut(&TxSeg)) -> Sacked {
        let mut r = Sacked::default();
        let prior_high = self.highest_sack_end;
        // Segments wholly inside what the cache covers are SACKed already: start
        // after it (a segment straddling its end still counts if inside the block).
        let from = self.sack_cache.covered_from(left);
        let first = if from == left {
            self.q.partition_point(|s| s.start < left)
        } else {
            self.q.partition_point(|s| s.end <= from)
        };
        for i in first..self.q.len() {
            let s = &mut self.q[i];
            if s.end > right {
                break;
            }
            if s.sacked || s.start < left {
                continue;
            }
            visit(s);
            s.sacked = true;
            self.sacked_out += 1;
            r.newly_sacked += 1;
            if i < self.lost_hint.index {
                self.lost_hint.sacked += 1;
            }
            if s.lost {
                s.lost = false;
                self.lost_out -= 1;
            }
            if s.retrans {
                s.retrans = false;
                self.retrans_out -= 1;
            }
            if !s.ever_retrans && s.end < prior_high {
                r.reord_index = Some(r.reord_index.map_or(i as u32, |x: u32| x.min(i as u32)));
            }
            if s.end > self.highest_sack_end {
                self.highest_sack_end = s.end;
            }
        }
        // What was sent covers the block only up to the queue's end.
        if let Some(back) = self.q.back() {
            let right = right.min(back.end);
            if left < right {
                self.sack_cache.insert(left, right);
            }
        }
        r
    }

    /// Counts DSACKed segments inside `[left, right)` that had been retransmitted.
    pub fn dsack_retransmitted(&self, left: u64, right: u64) -> u32 {
        let first = self.q.partition_point(|s| s.end <= left);
        self.q
            .range(first..)
            .take_while(|s| s.start < right)
            .filter(|s| s.ever_retrans)
            .count() as u32
    }

    /// Linux lost-retransmission detection (`tcp_mark_lost_retrans`): a retransmission
    /// is lost if data sent after it has been SACKed.
    /// The walk ends once it has passed every retransmission in flight, as Linux's
    /// does (`cnt == tp->retrans_out`).
    ///
    /// Like Linux's, it is skipped while the highest SACK is not above
    /// `lost_retrans_low`, and on a full walk learns that bound again.
    pub fn mark_lost_retransmits(&mut self) -> u32 {
        let high = self.highest_sack_end;
        let in_flight = self.retrans_out;
        if in_flight == 0 || high <= self.retrans_low {
            return 0;
        }
        let mut n = 0;
        let mut seen = 0;
        let mut low = u64::MAX;
        let mut whole = true;
        let mut first_lost = None;
        for (i, s) in self.q.iter_mut().enumerate() {
            if seen == in_flight {
                break;
            }
            if s.start >= high {
                whole = false;
                break;
            }
            seen += s.retrans as u32;
            if s.retrans && !s.sacked && high > s.retrans_high {
                s.retrans = false;
                self.retrans_out -= 1;
                if !s.lost {
                    s.lost = true;
                    self.lost_out += 1;
                }
                first_lost.get_or_insert(i);
                n += 1;
            }
            if s.retrans {
                low = low.min(s.retrans_high);
            }
        }
        if whole {
            self.retrans_low = low;
        }
        if let Some(i) = first_lost {
            self.lost_to_resend_at(i);
        }
        n
    }

    /// RACK's `tcp_mark_skb_lost`: segment `i` is lost; a retransmission of it in
    /// flight is lost too. Returns (newly marked, a retransmission was lost).
    pub fn mark_lost(&mut self, i: usize) -> (bool, bool) {
        let s = &mut self.q[i];
        if s.sacked {
            return (false, false);
        }
        let lost_retrans = s.retrans;
        if s.retrans {
            s.retrans = false;
            self.retrans_out -= 1;
        }
        let newly = !s.lost;
        if newly {
            s.lost = true;
            self.lost_out += 1;
        }
        self.lost_to_resend_at(i);
        (newly, lost_retrans)
    }

    fn mark_lost_at(&mut self, i: usize) -> bool {
        let s = &mut self.q[i];
        if s.sacked || s.lost {
            return false;
        }
        s.lost = true;
        self.lost_out += 1;
        self.lost_to_resend_at(i);
        true
    }

    /// Segment `i` may now be one to retransmit: [`Self::next_lost`] looks from it.
    fn lost_to_resend_at(&mut self, i: usize) {
        self.lost_scan.set(self.lost_scan.get().min(i));
    }

    /// Linux `tcp_mark_head_lost`: walks from the head, counting either every segment
    /// (`count_all`: FACK and non-SACK modes) or only SACKed ones, and marks the
    /// un-SACKed segments lost while the count stays within `packets`. Stops at
    /// `high_seq` and, with `only_head`, after the first segment. Returns the number
    /// of segments newly marked.
    pub fn mark_head_lost(
        &mut self,
        packets: u32,
        count_all: bool,
        only_head: bool,
        high_seq: u64,
    ) -> u32 {
        // Resuming after the segments already settled gives the walk's result: they
        // would be counted and left as they are (`only_head` looks at the head alone).
        let hint = if only_head {
            LostHint::default()
        } else {
            self.lost_hint
        };
        let mut i = hint.index;
        let mut cnt = if count_all {
            hint.index as u32
        } else {
            hint.sacked
        };
        let mut sacked_before = hint.sacked;
        let mut marked = 0;
        while i < self.q.len() {
            let s = self.q[i];
            if s.end > high_seq {
                break;
            }
            if count_all || s.sacked {
                cnt += 1;
            }
            if cnt > packets {
                break;
            }
            if self.mark_lost_at(i) {
                marked += 1;
            }
            sacked_before += s.sacked as u32;
            i += 1;
            if only_head {
                break;
            }
        }
        if !only_head || hint.index == 0 && i > self.lost_hint.index {
            self.lost_hint = LostHint {
                index: i,
                sacked: sacked_before,
            };
        }
        marked
    }

    /// RTO: every segment not SACKed is lost; retransmissions in flight are forgotten
    /// (Linux `tcp_enter_loss`). Returns the number newly marked. With
    /// `forget_retrans`, retransmissions in flight are forgotten too (a timeout);
    /// without, they stay in flight (F-RTO falling back to conventional recovery).
    pub fn mark_all_lost(&mut self, forget_retrans: bool) -> u32 {
        let mut n = 0;
        let mut retrans_out = 0;
        for s in self.q.iter_mut() {
            if forget_retrans {
                s.retrans = false;
            }
            retrans_out += s.retrans as u32;
            if !s.sacked && !s.lost {
                s.lost = true;
                n += 1;
            }
        }
        self.retrans_out = retrans_out;
        self.lost_out = self.q.iter().filter(|s| s.lost).count() as u32;
        self.lost_to_resend_at(0);
        n
    }

    /// Forgets retransmissions in flight and every lost mark (F-RTO step 1 starts
    /// from a clean slate, then marks only the head).
    pub fn clear_retrans_and_lost(&mut self) {
        self.lost_hint = LostHint::default();
        for s in self.q.iter_mut() {
            s.retrans = false;
            s.lost = false;
        }
        self.retrans_out = 0;
        self.lost_out = 0;
    }

    /// Index of the first segment to retransmit: lost, not SACKed, not already
    /// retransmitted (RFC 6675 NextSeg rule 1).
    pub fn next_lost(&self) -> Option<usize> {
        if self.lost_out == 0 {
            return None;
        }
        let from = self.lost_scan.get().min(self.q.len());
        let found = self
            .q
            .range(from..)
            .position(|s| s.lost && !s.retrans && !s.sacked)
            .map(|k| from + k);
        self.lost_scan.set(found.unwrap_or(self.q.len()));
        found
    }

    /// Linux `tcp_head_timedout`: the first outstanding segment was (last) sent more
    /// than `rto` before `now`.
    pub fn head_timed_out(&self, now: Instant, rto: std::time::Duration) -> bool {
        self.q.front().is_some_and(|s| s.tx_time + rto < now)
    }

    /// Linux `tcp_timeout_skbs` (FACK): marks lost every segment from the head on
    /// that was sent more than `rto` ago, up to the first that was not. Returns how
    /// many were newly marked.
    pub fn mark_timed_out(&mut self, now: Instant, rto: std::time::Duration) -> u32 {
        let mut n = 0;
        for s in self.q.iter_mut() {
            if s.tx_time + rto >= now {
                break;
            }
            if !s.sacked && !s.lost {
                s.lost = true;
                n += 1;
            }
        }
        self.lost_out += n;
        self.lost_to_resend_at(0);
        n
    }

    /// Marks lost every segment overlapping `[lo, hi)` that is neither SACKed,
    /// already marked lost, nor a retransmission in flight (a Corrective R_FAIL
    /// report). Returns how many.
    pub fn mark_range_lost(&mut self, lo: u64, hi: u64) -> u32 {
        let mut n = 0;
        for s in self.q.iter_mut() {
            if s.start >= hi {
                break;
            }
            if s.end > lo && !s.sacked && !s.lost && !s.retrans {
                s.lost = true;
                n += 1;
            }
        }
        self.lost_out += n;
        self.lost_to_resend_at(0);
        n
    }

    /// Segment `i` was sent again as a loss probe: not a retransmission for pipe, but
    /// no RTT sample may come from it (Karn).
    pub fn mark_probed(&mut self, i: usize, now: Instant) {
        let s = &mut self.q[i];
        s.ever_retrans = true;
        s.tx_time = now;
    }

    /// The first hole below the highest SACK that is neither SACKed, marked lost nor
    /// retransmitted (Linux's forward-retransmission candidate).
    pub fn next_forward_hole(&self) -> Option<usize> {
        let high = self.highest_sack_end;
        self.q
            .iter()
            .take_while(|s| s.end <= high)
            .position(|s| !s.sacked && !s.lost && !s.retrans)
    }

    /// Records a retransmission of segment `i`.
    pub fn on_retransmit(&mut self, i: usize, now: Instant, snd_nxt: u64) {
        let s = &mut self.q[i];
        if !s.retrans {
            s.retrans = true;
            self.retrans_out += 1;
            self.retrans_low = if self.retrans_out == 1 {
                snd_nxt
            } else {
                self.retrans_low.min(snd_nxt)
            };
        }
        s.ever_retrans = true;
        s.tx_time = now;
        s.retrans_high = snd_nxt;
    }

    /// Non-SACK duplicate ACK accounting (Linux `tcp_add_reno_sack`): each dupack
    /// counts as one segment that left the network, at most packets_out − 1.
    pub fn add_reno_dupack(&mut self) {
        if self.reno.add(self.packets_out()) {
            self.sacked_out += 1;
        }
    }
    /// The duplicate ACKs standing without SACK.
    pub fn reno_dupacks(&self) -> u32 {
        self.reno.get()
    }
    /// A cumulative ACK in non-SACK mode consumes counted dupacks
    /// (Linux `tcp_remove_reno_sacks`).
    pub fn remove_reno_dupacks(&mut self, acked: u32) {
        self.sacked_out -= self.reno.spend(acked.saturating_sub(1));
    }
    pub fn reset_reno_dupacks(&mut self) {
        self.sacked_out -= self.reno.take();
    }
}

impl LostHint {
    /// The head segment was acknowledged.
    fn on_removed(&mut self, sacked: bool) {
        if self.index == 0 {
            return;
        }
        self.index -= 1;
        self.sacked -= sacked as u32;
    }
}

/// Duplicate ACKs standing for segments that left the network, without SACK (RFC
/// 5681 §3.2 counts them; Linux `tcp_add_reno_sack` and `tcp_remove_reno_sacks`):
/// a connection's scoreboard keeps one, and a TCP session one per member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RenoDupacks(u32);

impl RenoDupacks {
    /// Standing duplicates.
    pub fn get(self) -> u32 {
        self.0
    }
    /// One more duplicate ACK with `out` segments outstanding: it counts unless
    /// every segment but the first already does. Returns whether it counted.
    pub fn add(&mut self, out: u32) -> bool {
        let counts = self.0 + 1 < out;
        if counts {
            self.0 += 1;
        }
        counts
    }
    /// Spends up to `n` standing duplicates; returns how many.
    pub fn spend(&mut self, n: u32) -> u32 {
        let k = n.min(self.0);
        self.0 -= k;
        k
    }
    /// Forgets them all; returns how many there were.
    pub fn take(&mut self) -> u32 {
        std::mem::take(&mut self.0)
    }
}

impl Scoreboard {
    /// Forgets every lost mark (Linux does this when a timeout is undone).
    pub fn clear_lost(&mut self) {
        self.lost_hint = LostHint::default();
        for s in self.q.iter_mut() {
            s.lost = false;
        }
        self.lost_out = 0;
    }
    /// Any segment in the queue was ever retransmitted (Linux `tcp_any_retrans_done`).
    pub fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.q.front().is_some_and(|s| s.ever_retrans)
    }
    /// Any segment in the queue was ever retransmitted.
    pub fn any_ever_retrans(&self) -> bool {
        self.q.iter().any(|s| s.ever_retrans)
    }
}

#[cfg(test)]
mod tests {
    //! The hints change no result: a scoreboard driven by random ACKs, SACK blocks,
    //! loss marking and retransmissions agrees after every step with one whose hints
    //! are forgotten before each call (so every walk starts from the head).
    use super::*;
    use proptest::prelude::*;
    use std::time::Duration;

    #[derive(Clone, Debug)]
    enum Op {
        Send(u8),
        Ack(u8),
        Sack(u8, u8),
        HeadLost(u8, bool, bool),
        Retransmit(u8),
        LostRetransmits,
        ClearLost,
        AllLost(bool),
        TimedOut,
        RangeLost(u8, u8),
        NextLost,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u8..6).prop_map(Op::Send),
            (0u8..40).prop_map(Op::Ack),
            (0u8..40, 0u8..12).prop_map(|(a, b)| Op::Sack(a, b)),
            (0u8..20, any::<bool>(), any::<bool>()).prop_map(|(p, a, h)| Op::HeadLost(p, a, h)),
            (0u8..20).prop_map(Op::Retransmit),
            Just(Op::LostRetransmits),
            Just(Op::ClearLost),
            any::<bool>().prop_map(Op::AllLost),
            Just(Op::TimedOut),
            (0u8..20, 0u8..6).prop_map(|(a, b)| Op::RangeLost(a, b)),
            Just(Op::NextLost),
        ]
    }

    const MSS: u64 = 100;

    struct Pair {
        hinted: Scoreboard,
        plain: Scoreboard,
        nxt: u64,
        una: u64,
    }

    impl Pair {
        fn both<R: PartialEq + std::fmt::Debug>(&mut self, f: impl Fn(&mut Scoreboard) -> R) {
            self.plain.lost_hint = LostHint::default();
            self.plain.retrans_low = 0;
            self.plain.lost_scan.set(0);
            self.plain.sack_cache = SackCache::default();
            let (a, b) = (f(&mut self.hinted), f(&mut self.plain));
            assert_eq!(a, b);
        }

        fn apply(&mut self, op: &Op) {
            let seg = |u: u64| u * MSS;
            match *op {
                Op::Send(n) => {
                    for _ in 0..n {
                        let start = self.nxt;
                        self.nxt += MSS;
                        let s = TxSeg {
                            start,
                            end: self.nxt,
                            fin: false,
                            psh: false,
                            tso_end: false,
                            sacked: false,
                            lost: false,
                            retrans: false,
                            ever_retrans: false,
                            tx_time: Instant::ZERO,
                            retrans_high: 0,
                        };
                        self.both(|sb| sb.push(s));
                    }
                }
                Op::Ack(k) => {
                    let ack = (self.una + seg(k as u64 % 4)).min(self.nxt);
                    self.una = ack;
                    self.both(|sb| {
                        let a = sb.ack(ack);
                        (a.segs, a.reord_index, a.newly_delivered)
                    });
                }
                Op::Sack(a, len) => {
                    let left = self.una + seg(a as u64 % 20) + (a as u64 % 3) * 30;
                    let right = (left + seg(len as u64) + 50).min(self.nxt);
                    if left < right {
                        self.both(|sb| {
                            let r = sb.sack(left, right);
                            (r.newly_sacked, r.reord_index)
                        });
                    }
                }
                Op::HeadLost(p, all, head) => {
                    let high = self.nxt;
                    self.both(|sb| sb.mark_head_lost(p as u32, all, head, high));
                }
                Op::Retransmit(i) => {
                    let nxt = self.nxt;
                    self.both(|sb| {
                        if let Some(i) = sb.next_lost().or(Some(i as usize))
                            && i < sb.q.len()
                            && !sb.q[i].sacked
                        {
                            sb.on_retransmit(i, Instant::ZERO, nxt);
                        }
                    });
                }
                Op::LostRetransmits => self.both(|sb| sb.mark_lost_retransmits()),
                Op::ClearLost => self.both(|sb| sb.clear_lost()),
                Op::AllLost(f) => self.both(|sb| sb.mark_all_lost(f)),
                Op::TimedOut => {
                    self.both(|sb| sb.mark_timed_out(Instant::from_nanos(1), Duration::ZERO))
                }
                Op::RangeLost(a, len) => {
                    let lo = self.una + seg(a as u64);
                    let hi = lo + seg(len as u64);
                    self.both(|sb| sb.mark_range_lost(lo, hi));
                }
                Op::NextLost => self.both(|sb| sb.next_lost()),
            }
            let flags = |sb: &Scoreboard| {
                let q: Vec<_> = sb.q.iter().map(|s| (s.sacked, s.lost, s.retrans)).collect();
                (
                    q,
                    sb.sacked_out,
                    sb.lost_out,
                    sb.retrans_out,
                    sb.fackets_out(),
                )
            };
            assert_eq!(flags(&self.hinted), flags(&self.plain));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn hints_change_no_result(ops in proptest::collection::vec(op(), 1..200)) {
            let mut p = Pair {
                hinted: Scoreboard::default(),
                plain: Scoreboard::default(),
                nxt: 0,
                una: 0,
            };
            for op in &ops {
                p.apply(op);
            }
        }
    }
}
