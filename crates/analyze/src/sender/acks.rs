//! What the ACKs say: SACK blocks, the cumulative ACK's advance, the segments it
//! acknowledges (and the RTT samples they give), the end of recovery episodes and
//! undone (spurious) retransmissions.

use super::{AckKind, Sender, State, ts_before};
use crate::cause::Cause;
use crate::cause::Spurious;

impl Sender {
    /// An ACK from the peer at `t`; `data` says whether it carried data.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        t: u64,
        ack: u32,
        window: u16,
        data: bool,
        sack: &[(u32, u32)],
        tsecr: Option<u32>,
    ) -> AckKind {
        let mut k = AckKind::default();
        self.last_rx_ns = t;
        if data {
            self.last_peer_data_ns = Some(t);
        }
        if self.base.is_none() {
            return k;
        }
        let a = self.ext(ack, self.una).min(self.nxt.max(self.una));
        self.on_sack_blocks(sack, a, &mut k);
        if a > self.una {
            k.advanced = true;
            self.on_advance(t, a, tsecr, &mut k);
        } else if !data && a == self.una && self.nxt > self.una {
            if self.last_ack.is_some_and(|(_, w)| w == window) {
                k.duplicate = true;
                self.dupacks += 1;
            } else if self.last_ack.is_some_and(|(x, w)| x == a && w != window) {
                k.window_update = true;
            }
        } else if !data && self.last_ack.is_some_and(|(x, w)| x == a && w != window) {
            k.window_update = true;
        }
        self.last_ack = Some((a, window));
        let (plain, fack) = self.dup_evidence_fack();
        self.fack_watch = !self.far
            && self.state == State::Open
            && self.reorder_events == 0
            && plain < 3
            && fack >= 3
            && self.fack_whole() >= 3;
        if k.could_trigger() {
            self.last_trigger_ns = Some(t);
        }
        k
    }

    /// FACK's count on whole captured segments, as the sender marks them: a SACK
    /// block over part of a segment does not SACK it (Linux `tcp_match_skb_to_sack`
    /// splits only segments of several MSS), so the segments up to the highest one
    /// wholly SACKed, less that one. A refusal to recover counts only on this count:
    /// on the bytes a receiver SACKing smaller blocks than the captured segments
    /// would show FACK's threshold passed before the sender saw it.
    fn fack_whole(&self) -> u32 {
        self.segs
            .iter()
            .rposition(|s| s.sacked)
            .map_or(0, |i| i as u32)
    }

    /// An ACK's SACK blocks, with cumulative ACK `a` (RFC 2883 §4: a DSACK is the
    /// first block, below the cumulative ACK or inside the second block).
    pub(super) fn on_sack_blocks(&mut self, sack: &[(u32, u32)], a: u64, k: &mut AckKind) {
        for (i, &(l, r)) in sack.iter().enumerate() {
            k.sack = true;
            self.sack_ok = true;
            let (l, r) = (self.ext(l, self.una), self.ext(r, self.una));
            if r <= l {
                continue;
            }
            let dsack = i == 0
                && (r <= a
                    || sack.get(1).is_some_and(|&(l2, r2)| {
                        let (l2, r2) = (self.ext(l2, self.una), self.ext(r2, self.una));
                        l >= l2 && r <= r2
                    }));
            if dsack {
                k.dsack = true;
                if self.undo_range(l, r) {
                    k.undid = true;
                }
                continue;
            }
            self.sack_bytes.add(l.max(a), r.min(self.nxt));
            let i0 = self.segs.partition_point(|s| s.end <= l);
            for s in self.segs.iter_mut().skip(i0) {
                if s.start >= r {
                    break;
                }
                if !s.sacked && self.sack_bytes.covers(s.start, s.end) {
                    s.sacked = true;
                    self.sacked += 1;
                }
            }
        }
    }

    /// The cumulative ACK advanced to `a` at `t`: the RTT sample, reordering, and
    /// the end of a recovery.
    pub(super) fn on_advance(&mut self, t: u64, a: u64, tsecr: Option<u32>, k: &mut AckKind) {
        let before = self.segs.len();
        let (sample, reorder) = self.take_acked(t, a, tsecr, k);
        // One segment acknowledged and nothing left outstanding: its ACK may have
        // waited for the receiver's delayed-ACK timer.
        let delayable = before == 1 && self.segs.is_empty();
        // Far from the capture, data is seen as it arrives and the ACK as it
        // leaves: the gap is the receiver's delay, not an RTT; the flow feeds
        // this sender the near end's samples instead.
        if let Some(r) = sample
            && !self.far
        {
            self.rtt.sample_delayable(r, delayable);
            k.rtt_sample = Some(r);
        }
        if let Some(n) = reorder {
            k.reordering = Some(n);
            self.reorder_events += 1;
            self.reorder_max = self.reorder_max.max(n);
        }
        self.una = a;
        self.sack_bytes.advance(a);
        self.rto_ref_ns = t;
        if let Some(c) = &mut self.after
            && a >= c.end
        {
            c.acked = true;
        }
        self.dupacks = 0;
        self.probe_out = false;
        self.last_timer = None;
        match self.state {
            State::Recovery { high } | State::Loss { high } if a >= high => {
                let later = match self.state {
                    State::Loss { .. } => Cause::SlowStart,
                    _ => Cause::Fast,
                };
                self.recovery_ended = Some((t, later));
                self.state = State::Open;
                self.end_episode(t);
            }
            State::Open => self.end_episode(t),
            _ => {}
        }
        if self.segs.is_empty() {
            self.end_episode(t);
        }
    }

    /// Removes the segments up to `a`, acknowledged at `t`, and judges their
    /// retransmissions. Returns a Karn RTT sample (RFC 6298 §3: of a segment sent
    /// once) and the reordering extent, if the ACK shows any.
    pub(super) fn take_acked(
        &mut self,
        t: u64,
        a: u64,
        tsecr: Option<u32>,
        k: &mut AckKind,
    ) -> (Option<u64>, Option<u32>) {
        let mut sample: Option<u64> = None;
        let mut reorder: Option<u32> = None;
        let sacked_above = self.sacked;
        while let Some(s) = self.segs.front().copied() {
            if s.end > a {
                break;
            }
            self.segs.pop_front();
            if s.sacked {
                self.sacked -= 1;
            } else if s.tx == 1 && sacked_above > 0 {
                // Acknowledged in order after later segments were SACKed, and
                // never resent: reordering (Linux `tcp_update_reordering`).
                reorder = Some(reorder.unwrap_or(0).max(sacked_above));
            }
            if s.tx == 1 {
                if !s.sacked {
                    sample = Some(t.saturating_sub(s.last_ns));
                }
            } else if let Some(rec) = s.retrans {
                // Was the retransmission needed?
                let how = match (tsecr, s.tsval, s.first_tsval) {
                    (Some(ecr), Some(now), Some(_)) if ts_before(ecr, now) => {
                        Some(Spurious::Timestamp)
                    }
                    _ if self.rtt.known() && t.saturating_sub(s.last_ns) * 2 < self.rtt.min => {
                        Some(Spurious::TooSoon)
                    }
                    _ => None,
                };
                if let Some(how) = how {
                    k.undid |= self.mark_spurious(rec, how);
                }
            }
        }
        (sample, reorder)
    }

    pub(super) fn end_episode(&mut self, t: u64) {
        if let Some(e) = self.episodes.last_mut()
            && e.end_ns.is_none()
        {
            e.end_ns = Some(t);
        }
    }

    /// A DSACK for `[l, r)`: the retransmissions within it were unnecessary.
    pub(super) fn undo_range(&mut self, l: u64, r: u64) -> bool {
        let mut any = false;
        // Most recent retransmissions first; the DSACK reports a duplicate arrival.
        for i in (0..self.retrans.len()).rev() {
            let x = self.retrans[i];
            if x.seq < r && x.seq + x.len as u64 > l && x.spurious.is_none() {
                any |= self.mark_spurious(i as u32, Spurious::Dsack);
                break;
            }
        }
        any
    }

    pub(super) fn mark_spurious(&mut self, rec: u32, how: Spurious) -> bool {
        let r = &mut self.retrans[rec as usize];
        if r.spurious.is_some() {
            return false;
        }
        r.spurious = Some(how);
        self.counts.spurious += 1;
        true
    }
}
