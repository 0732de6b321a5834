//! The sender's side of an arriving ACK: SACK tagging, cumulative acknowledgment,
//! RTT sampling, and Linux's congestion-state machine (`tcp_ack` and
//! `tcp_fastretrans_alert` in net/ipv4/tcp_input.c, as `prr-imc11.txt` §3.2
//! describes it):
//!
//! - entering Recovery: `time_to_recover` — a segment already marked lost, or
//!   (FACK) the forward-most SACK more than `reordering` segments beyond snd.una, or
//!   (no FACK) `reordering` SACKed segments / duplicate ACKs (RFC 6675 §5, RFC 5681 §3.2);
//! - loss marking: FACK marks every hole below the forward-most SACK less
//!   `reordering` segments; RFC 6675 `IsLost` otherwise; NewReno marks the head;
//! - lost-retransmission detection with FACK;
//! - reordering detection from SACKs, which raises the duplicate threshold and turns
//!   FACK off;
//! - undo of spurious reductions by DSACK (RFC 3708) and timestamps (RFC 3522),
//!   and F-RTO (RFC 5682) after a timeout.

use std::time::Duration;

use super::undo::PartialUndo;
use super::{CloseReason, Connection, Frto};
use crate::config::TlpFlavour;
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{CaState, State};
use crate::wire::Segment;

/// What one ACK told loss detection (Linux hands `tcp_fastretrans_alert` the same
/// as its `flag`, `num_dupack` and `prior_in_flight`).
#[derive(Clone, Copy)]
struct AckFacts {
    /// The ACK advanced snd.una.
    una_advanced: bool,
    is_dupack: bool,
    newly_sacked: u32,
    /// Segments the ACK delivered (cumulatively or by SACK).
    delivered: u32,
    prior_in_flight: u32,
}

impl Connection {
    /// Processes the ACK field of a segment in a synchronized state.
    pub(crate) fn on_ack(&mut self, now: Instant, seg: &Segment, seq: u64) {
        // `on_synchronized` has discarded an ACK of data not yet sent.
        let ack = self.ack_offset(seg.ack);
        let prior_una = self.snd.una;
        let prior_in_flight = self.tx.sb.pipe();
        // An ACK cancels a pending delayed early retransmission; this ACK's
        // processing decides afresh (Linux `tcp_rearm_rto`).
        self.timers.put(TimerKind::EarlyRetransmit, None);
        let prior_wnd = self.snd.wnd;
        let prior_ca = self.tx.ca.state();
        self.ext.ecn_mut().on_ack(seg);
        self.ts.last_ecr = match (self.opts.ts, seg.options.timestamps) {
            (true, Some(ts)) if ts.ecr != 0 => Some(ts.ecr),
            _ => None,
        };
        if ack >= prior_una {
            self.update_window(seg, seq, ack, false);
            self.persist_on_ack();
        }
        // Linux `tcp_ack`: fackets_out before this ACK's SACK blocks, for the
        // "non-retransmitted hole got filled" reordering test of an ACK that
        // advances snd.una (the only one that reads it).
        let prior_fackets = if ack > prior_una {
            self.tx.sb.fackets_out()
        } else {
            0
        };
        let (mut newly_sacked, mut dsack) = (0, false);
        if self.opts.sack && !seg.options.sack.is_empty() {
            (newly_sacked, dsack) = self.process_sack(now, seg, ack, prior_una);
        }
        if ack < prior_una {
            return; // old ACK: SACK information only
        }
        if self.ext.corrective().is_on() {
            self.corrective_on_ack(now, seg, ack);
        }
        let una_advanced = ack > prior_una;
        let acked = if una_advanced {
            self.on_new_ack(now, ack, prior_fackets)
        } else {
            crate::scoreboard::Acked::default()
        };
        let window_update = self.snd.wnd != prior_wnd;
        // Neither advancing, carrying data or FIN, nor updating the window.
        let dup_shaped =
            !una_advanced && seg.payload.is_empty() && !seg.flags.fin() && !window_update;
        let is_dupack = dup_shaped && !self.tx.sb.is_empty();
        if self.tx.member.is_on() {
            // A session member: the session does the rest (§7.3).
            let ece = self.ext.ecn().ack_ece();
            let tsecr = self.ts.last_ecr;
            self.session_on_ack(super::AckReport {
                una: self.snd.una,
                dupack: is_dupack,
                tsecr,
                ece,
            });
            return;
        }
        let delivered =
            acked.newly_delivered + newly_sacked + (!self.opts.sack && is_dupack) as u32;

        // Window growth (Linux 3.x `tcp_may_raise_cwnd`: not in Recovery or CWR, and
        // after ECE only in slow start; and cwnd-limited, `cwnd_validation`) —
        // before loss detection in Linux 3.x, after it with `late_cwnd_growth`.
        let acked_segs = if self.cfg.abc { acked.segs } else { 1 };
        if !self.cfg.late_cwnd_growth && una_advanced {
            self.grow_cwnd(now, prior_ca, acked_segs, prior_in_flight);
        }

        if self.rack_on() {
            self.rack_update_reo_wnd(now);
        }
        self.fastretrans_alert(
            now,
            AckFacts {
                una_advanced,
                is_dupack,
                newly_sacked,
                delivered,
                prior_in_flight,
            },
        );
        if self.cfg.late_cwnd_growth {
            // Linux 3.18+ counts what this ACK delivered (`acked_sacked`): segments
            // SACKed earlier and now cumulatively acknowledged grew nothing then and
            // grow nothing now.
            let state = self.tx.ca.state();
            let segs = if self.cfg.abc { delivered } else { 1 };
            // Linux 4.x `tcp_may_raise_cwnd`: once reordering has raised the
            // threshold above `tcp_reordering`, newly SACKed data is progress too
            // ("always grow cwnd whenever data is delivered regardless of its
            // ordering").
            let progress = una_advanced
                || (newly_sacked > 0 && self.tx.loss.reordering() > self.cfg.dupthresh);
            if progress {
                self.grow_cwnd(now, state, segs, prior_in_flight);
            }
        }

        self.rearm_after_ack(
            now,
            ack,
            una_advanced,
            dup_shaped && newly_sacked == 0,
            dsack,
        );
        if self.cfg.trace {
            self.trace_ack_state(now);
        }
    }

    /// Traces the sender's state after an ACK ([`crate::trace::Event::AckState`]).
    #[cold]
    fn trace_ack_state(&mut self, now: Instant) {
        let armed = TimerKind::ALL
            .into_iter()
            .filter(|&t| self.timers.is_set(t))
            .collect();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let event = crate::trace::Event::AckState {
            cwnd: self.tx.cong.cwnd(),
            ssthresh: self.tx.cong.ssthresh(),
            pipe: self.tx.sb.pipe(),
            srtt_ms: self.tx.rtt.srtt().map_or(0.0, ms),
            rto_ms: ms(self.tx.rtt.rto_backed_off()),
            armed,
        };
        self.trace(now, event);
    }

    /// The cumulative ACK `ack` advanced snd.una: the queue is released, the RTT
    /// sampled (Karn's rule, RFC 7323 §4.1), reordering checked, Reno duplicates
    /// spent, and the FIN and fast start told.
    fn on_new_ack(
        &mut self,
        now: Instant,
        ack: u64,
        prior_fackets: u32,
    ) -> crate::scoreboard::Acked {
        let standing_dupacks = self.tx.sb.reno_dupacks();
        let mut acked = if self.rack_on() {
            let (min_rtt, tsecr, off) = (self.tx.rtt.min_rtt(), self.ts.last_ecr, self.ts.offset);
            let rack = self.tx.loss.rack_mut();
            self.tx
                .sb
                .ack_with(ack, |s| rack.advance(now, s, min_rtt, tsecr, off))
        } else {
            self.tx.sb.ack(ack)
        };
        self.snd.una = ack;
        self.snd.buf.release(ack.min(self.snd.buf.end()));
        self.tx.rtt.clear_retransmits();
        if self.tx.sb.retrans_out() == 0 {
            self.ctl.retrans_stamp = None;
        }
        // RTT: Karn's rule for segment timing; timestamps otherwise (RFC 7323 §4.1).
        // Karn: no segment-timed sample once retransmitted data is acknowledged.
        let timed = if acked.any_retrans {
            None
        } else {
            acked.rtt_from
        };
        let sample = match timed {
            Some(t) => Some(now - t),
            None => self.ts.last_ecr.and_then(|ecr| {
                let ms = self.tsval(now).wrapping_sub(ecr);
                (ms < 1 << 30).then(|| Duration::from_millis(ms.max(1) as u64))
            }),
        };
        if let Some(s) = sample {
            self.tx.rtt.on_sample(s, self.snd.una, self.snd.nxt);
            self.tx.rtt.clear_backoff();
            self.note_rtt_sample(s);
            let (una, nxt) = (self.snd.una, self.snd.nxt);
            let (train, delay) = self.tx.cong.pkts_acked(now, s, una, nxt);
            self.counters.hystart_train += train;
            self.counters.hystart_delay += delay;
        }
        if let Some(i) = acked.reord_index
            && self.opts.sack
            && i < prior_fackets
        {
            self.update_reordering(now, prior_fackets - i, true);
        }
        if !self.opts.sack {
            // Linux `tcp_remove_reno_sacks`: one ACK acked the hole; the rest of what
            // it acknowledges the standing duplicate ACKs delivered already.
            if acked.segs > 0 {
                acked.newly_delivered = acked.segs.saturating_sub(standing_dupacks).max(1);
            }
            self.tx.sb.remove_reno_dupacks(acked.segs);
        }
        if acked.fin_acked {
            self.on_fin_acked(now);
        }
        if self.tx.fast_start.active() {
            self.fast_start_on_ack(now);
        }
        acked
    }

    /// RFC 6298 §5.2/5.3 after an ACK, and the tail loss probe's rescheduling.
    /// `tlp_dupack`: a duplicate that SACKs nothing new (Linux `is_tlp_dupack`).
    fn rearm_after_ack(
        &mut self,
        now: Instant,
        ack: u64,
        una_advanced: bool,
        tlp_dupack: bool,
        dsack: bool,
    ) {
        // RFC 6298 §5.2/5.3: restart the timer on new data acknowledged; stop it
        // when nothing is outstanding.
        if self.tx.sb.is_empty() {
            self.timers.put(TimerKind::Retransmission, None);
        } else if una_advanced || !self.timers.is_set(TimerKind::Retransmission) {
            self.timers.arm(
                TimerKind::Retransmission,
                now,
                now + self.tx.rtt.rto_backed_off(),
            );
        }
        if self.cfg.tlp {
            if una_advanced {
                self.tx.tlp.on_progress();
            }
            // Linux `is_tlp_dupack`, whether or not data is still outstanding.
            self.tlp_on_ack(ack, tlp_dupack, dsack);
            // Algorithm 1 handle_ack: cancel and reschedule.
            let prior = self.timers.get(TimerKind::LossProbe);
            self.schedule_pto(now);
            // Linux 4.11+ rearms the probe only on an ACK of new data
            // (`FLAG_SET_XMIT_TIMER`, set with `FLAG_ACKED` in `tcp_clean_rtx_queue`):
            // a pending probe keeps its time across other ACKs while it may still go.
            if self.cfg.tlp_flavour == TlpFlavour::Linux6
                && !una_advanced
                && prior.is_some()
                && self.timers.is_set(TimerKind::LossProbe)
            {
                self.timers.put(TimerKind::LossProbe, prior);
            }
        }
    }

    fn on_fin_acked(&mut self, now: Instant) {
        match self.state {
            State::FinWait1 => self.set_state(now, State::FinWait2),
            State::Closing => self.enter_time_wait(now),
            State::LastAck => self.enter_closed(now, CloseReason::Normal),
            _ => {}
        }
    }

    /// SACK tagging (RFC 2018 §5, RFC 2883 §4 for DSACK, RFC 3708 for its use).
    /// Returns the number of segments newly SACKed, and whether the first block was a
    /// DSACK.
    fn process_sack(
        &mut self,
        now: Instant,
        seg: &Segment,
        ack: u64,
        prior_una: u64,
    ) -> (u32, bool) {
        let blocks = seg.options.sack;
        let mut ranges = [(0u64, 0u64); crate::wire::MAX_SACK_BLOCKS];
        let mut n = 0;
        for b in blocks.as_slice() {
            let l = self.ack_offset(b.left);
            let r = self.ack_offset(b.right);
            ranges[n] = (l, r);
            n += 1;
        }
        let ranges = &mut ranges[..n];
        // RFC 2883 §4: the first block is a DSACK if it lies below the cumulative ACK
        // or inside the second block.
        let first = ranges[0];
        let dsack = first.1 <= ack.max(prior_una)
            || (n > 1 && ranges[1].0 <= first.0 && first.1 <= ranges[1].1 && first.0 < first.1);
        let mut start = 0;
        if dsack {
            start = 1;
            self.counters.dsack_recv += 1;
            self.rack_on_dsack();
            self.undo_on_dsack(now, first, prior_una);
        }
        let blocks = &mut ranges[start..];
        blocks.sort_unstable();
        let mut newly = 0;
        let mut reord: Option<u32> = None;
        for &(l, r) in blocks.iter() {
            if r <= l || r <= self.snd.una || r > self.snd.nxt {
                continue; // invalid or stale block (RFC 2018 §5: ignore)
            }
            let res = if self.rack_on() {
                let (min_rtt, off) = (self.tx.rtt.min_rtt(), self.ts.offset);
                let rack = self.tx.loss.rack_mut();
                // Linux checks the echoed timestamp only for cumulatively
                // acknowledged segments (`tcp_clean_rtx_queue`), not SACKed ones.
                self.tx.sb.sack_with(l.max(self.snd.una), r, |s| {
                    rack.advance(now, s, min_rtt, None, off)
                })
            } else {
                self.tx.sb.sack(l.max(self.snd.una), r)
            };
            newly += res.newly_sacked;
            if let Some(i) = res.reord_index {
                reord = Some(reord.map_or(i, |x| x.min(i)));
            }
        }
        if let Some(i) = reord {
            let fackets = self.tx.sb.fackets_out();
            if fackets > i {
                self.update_reordering(now, fackets - i, true);
            }
        }
        if self.tx.loss.fack() && newly > 0 {
            let lost = self.tx.sb.mark_lost_retransmits();
            self.counters.lost_retransmit += lost as u64;
        }
        (newly, dsack)
    }

    fn fastretrans_alert(&mut self, now: Instant, f: AckFacts) {
        let AckFacts {
            una_advanced,
            is_dupack,
            delivered,
            prior_in_flight,
            ..
        } = f;
        if self.tx.ca.state() == CaState::Open
            && !is_dupack
            && self.tx.sb.sacked_out() == 0
            && self.tx.sb.lost_out() == 0
            && !self.ext.ecn().ack_ece()
        {
            return;
        }
        if !self.opts.sack && is_dupack && self.tx.ca.state() != CaState::Loss {
            self.tx.sb.add_reno_dupack();
        }

        // E. Exits from a state once the recovery point is acknowledged.
        if self.tx.ca.state() != CaState::Open && self.snd.una >= self.tx.ca.high_seq() {
            self.exit_at_recovery_point(now);
        }

        // F. Process the state.
        match self.tx.ca.state() {
            CaState::Recovery => self.recovery_ack(now, f),
            CaState::Loss => {
                if self.tx.frto != Frto::Off {
                    self.frto_ack(now, una_advanced, is_dupack);
                } else if una_advanced {
                    self.try_undo_loss(now);
                }
                if self.rack_on() && self.tx.ca.state() == CaState::Loss {
                    self.rack_mark_lost(now); // lost retransmissions
                }
            }
            _ => self.open_ack(now, una_advanced, delivered, prior_in_flight),
        }
    }

    /// Linux `tcp_fastretrans_alert` step E: the recovery point is acknowledged,
    /// and the state ends (CWR only above it; undo where the evidence allows).
    fn exit_at_recovery_point(&mut self, now: Instant) {
        match self.tx.ca.state() {
            // Linux: "CWR is to be held something *above* high_seq is ACKed for
            // CWR bit to reach receiver" — an ACK of exactly high_seq may still
            // echo the ECE that caused this reduction.
            CaState::Cwr if self.snd.una == self.tx.ca.high_seq() => {}
            CaState::Cwr => {
                self.end_reduction();
                self.set_ca(now, CaState::Open);
            }
            CaState::Disorder => {
                self.try_undo_dsack(now);
                self.set_ca(now, CaState::Open);
            }
            CaState::Recovery => {
                if !self.opts.sack {
                    self.tx.sb.reset_reno_dupacks();
                }
                if !self.try_undo_recovery(now) {
                    self.end_reduction();
                }
                if self.tx.cong.cwnd() < self.tx.cong.ssthresh() {
                    self.counters.recovery_exit_slow_start += 1;
                }
                self.set_ca(now, CaState::Open);
            }
            CaState::Loss => {
                self.tx.frto = Frto::Off;
                self.try_undo_recovery(now);
                self.set_ca(now, CaState::Open);
            }
            CaState::Open => {}
        }
        if self.retrans_out_none() {
            self.tx.undo.clear_stamp();
        }
    }

    /// An ACK in Recovery (Linux `tcp_fastretrans_alert` step F): a partial ACK's
    /// fast-start abort or undo, then loss marking and the reduction's step.
    fn recovery_ack(&mut self, now: Instant, f: AckFacts) {
        let AckFacts {
            una_advanced,
            is_dupack,
            newly_sacked,
            delivered,
            prior_in_flight,
        } = f;
        if una_advanced && self.fast_start_partial_ack(now) {
            return;
        }
        if una_advanced {
            match self.try_undo_partial(now) {
                PartialUndo::No => {}
                PartialUndo::Hold => {
                    self.reduction_on_ack(delivered, una_advanced, false);
                    return;
                }
                PartialUndo::Opened => {
                    // Out of Recovery (Linux 3.16+): losses are looked for
                    // afresh and may start a new recovery, as in Open.
                    self.open_ack(now, una_advanced, delivered, prior_in_flight);
                    return;
                }
            }
        }
        let mut newly_lost = false;
        if self.rack_on() {
            // Linux 4.10+: `tcp_identify_packet_loss` → `tcp_rack_mark_lost`.
            let before = self.tx.sb.lost_out();
            self.rack_mark_lost(now);
            self.reduction_on_ack(delivered, una_advanced, self.tx.sb.lost_out() > before);
            return;
        }
        // Linux `tcp_fastretrans_alert` in Recovery: mark on duplicate ACKs and
        // new SACKs; on a partial ACK when FACK shows a hole beyond the
        // reordering window (or without SACK); and, with FACK, when the head
        // has been outstanding longer than the RTO (`tcp_head_timedout`).
        let rto = self.tx.rtt.rto_backed_off();
        let head_timed_out = self.tx.loss.fack() && self.tx.sb.head_timed_out(now, rto);
        let do_lost = is_dupack
            || newly_sacked > 0
            || (una_advanced
                && (!self.opts.sack || self.tx.sb.fackets_out() > self.tx.loss.reordering()));
        if do_lost || head_timed_out {
            newly_lost = self.update_scoreboard(false) > 0;
        }
        if head_timed_out {
            newly_lost |= self.tx.sb.mark_timed_out(now, rto) > 0;
        }
        self.reduction_on_ack(delivered, una_advanced, newly_lost);
    }

    /// An ACK in Open, Disorder or CWR (the rest of Linux `tcp_fastretrans_alert`):
    /// undo on DSACK, loss detection, and either recovery or `tcp_try_to_open`.
    fn open_ack(&mut self, now: Instant, una_advanced: bool, delivered: u32, prior_in_flight: u32) {
        if !self.opts.sack && una_advanced {
            self.tx.sb.reset_reno_dupacks();
        }
        if self.tx.ca.state() == CaState::Disorder {
            self.try_undo_dsack(now);
        }
        if self.rack_on() {
            self.rack_mark_lost(now);
        }
        if !self.time_to_recover(now) && !self.early_retransmit_due(now) {
            // Linux `tcp_try_to_open`: ECE reduces cwnd, once per window
            // (RFC 3168 §6.1.2; `enter_cwr` does nothing in CWR).
            if self.ext.ecn().ack_ece() && self.tx.ca.state() < CaState::Cwr {
                self.counters.ecn_reductions += 1;
                self.enter_cwr(now);
            }
            self.try_to_open(now);
            if self.tx.ca.state() == CaState::Cwr {
                self.reduction_on_ack(delivered, una_advanced, false);
            }
            return;
        }
        if self.tx.sb.lost_out() == 0
            && self.tx.loss.fack()
            && self.tx.sb.fackets_out() <= self.tx.loss.reordering()
            && self.tx.sb.head_timed_out(now, self.tx.rtt.rto_backed_off())
        {
            self.counters.head_timeout_recovery += 1;
        }
        self.enter_recovery(now, prior_in_flight);
        if !self.rack_on() {
            self.update_scoreboard(true);
        }
        self.first_reduction_on_ack(delivered, una_advanced);
    }

    fn retrans_out_none(&self) -> bool {
        self.tx.sb.retrans_out() == 0
    }

    /// Grows cwnd on an ACK that made progress (new data acknowledged, or with
    /// `late_cwnd_growth` newly SACKed past a raised reordering threshold) when
    /// `state` allows it (Linux `tcp_may_raise_cwnd`, then `tcp_cong_avoid` if
    /// cwnd-limited). The caller decides what progress is.
    fn grow_cwnd(&mut self, now: Instant, state: CaState, segs: u32, prior_in_flight: u32) {
        if !matches!(state, CaState::Recovery | CaState::Cwr)
            && (!self.ext.ecn().ack_ece() || self.tx.cong.cwnd() < self.tx.cong.ssthresh())
            && self.tx.frto == Frto::Off
            && self.is_cwnd_limited(prior_in_flight)
        {
            let min_rtt_ms = self.tx.rtt.min_rtt().map_or(0, |d| d.as_millis() as u32);
            self.tx.cong.cong_avoid(segs, now, min_rtt_ms);
        }
    }
}
