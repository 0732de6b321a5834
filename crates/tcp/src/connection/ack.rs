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

use super::timer_table::Timer;
use super::{CloseReason, Connection, Frto};
use crate::recovery::{AckSample, RecoveryStart};
use crate::time::Instant;
use crate::trace::{CaState, Event, State, UndoKind};
use crate::wire::Segment;

/// Most segments of slack for which Linux still counts the sender as cwnd-limited
/// (`tcp_max_tso_deferred_mss`).
const CWND_LIMITED_SLACK: u32 = 3;

impl Connection {
    /// Processes the ACK field of a segment in a synchronized state. Returns false if
    /// the segment must be dropped.
    pub(crate) fn on_ack(&mut self, now: Instant, seg: &Segment, seq: u64) -> bool {
        let ack = self.ack_offset(seg.ack);
        if ack > self.snd_nxt {
            // RFC 9293 §3.10.7.4: ACK of something not yet sent: ACK and drop.
            self.counters.segs_dropped += 1;
            self.rcv.ack_now = true;
            return false;
        }
        let prior_una = self.snd_una;
        let prior_in_flight = self.sb.pipe();
        // An ACK cancels a pending delayed early retransmission; this ACK's
        // processing decides afresh (Linux `tcp_rearm_rto`).
        self.timers.put(Timer::EarlyRetransmit, None);
        let prior_wnd = self.snd_wnd;
        let prior_ca = self.ca;
        self.last_tsecr = match (self.ts_ok, seg.options.timestamps) {
            (true, Some(ts)) if ts.ecr != 0 => Some(ts.ecr),
            _ => None,
        };
        if ack >= prior_una {
            self.update_window(seg, seq, ack, false);
            self.persist_on_ack();
        }
        // Linux `tcp_ack`: fackets_out before this ACK's SACK blocks, for the
        // "non-retransmitted hole got filled" reordering test.
        let prior_fackets = self.sb.fackets_out();
        let (mut newly_sacked, mut dsack) = (0, false);
        if self.sack_ok && !seg.options.sack.is_empty() {
            (newly_sacked, dsack) = self.process_sack(now, seg, ack, prior_una);
        }
        if ack < prior_una {
            return true; // old ACK: SACK information only
        }
        if self.fec.on {
            self.corrective_on_ack(now, seg, ack);
        }
        let una_advanced = ack > prior_una;
        let mut acked = crate::scoreboard::Acked::default();
        if una_advanced {
            acked = if self.rack_on() {
                let (min_rtt, tsecr, off) = (self.rtt.min_rtt(), self.last_tsecr, self.ts_offset);
                let rack = &mut self.rack;
                self.sb
                    .ack_with(ack, |s| rack.advance(now, s, min_rtt, tsecr, off))
            } else {
                self.sb.ack(ack)
            };
            self.snd_una = ack;
            self.sendbuf.release(ack.min(self.sendbuf.end()));
            self.retransmits = 0;
            // RTT: Karn's rule for segment timing; timestamps otherwise (RFC 7323 §4.1).
            // Karn: no segment-timed sample once retransmitted data is acknowledged.
            let timed = if acked.any_retrans {
                None
            } else {
                acked.rtt_from
            };
            let sample = match timed {
                Some(t) => Some(now - t),
                None => self.last_tsecr.and_then(|ecr| {
                    let ms = self.tsval(now).wrapping_sub(ecr);
                    (ms < 1 << 30).then(|| Duration::from_millis(ms.max(1) as u64))
                }),
            };
            if let Some(s) = sample {
                self.rtt.on_sample(s, self.snd_una, self.snd_nxt);
                self.backoff = 0;
                let (una, nxt) = (self.snd_una, self.snd_nxt);
                let before = self.cc.hystart_exits();
                self.cc.pkts_acked(&mut self.w, now, s, una, nxt);
                let after = self.cc.hystart_exits();
                self.counters.hystart_train += after.0 - before.0;
                self.counters.hystart_delay += after.1 - before.1;
            }
            if let Some(i) = acked.reord_index
                && self.sack_ok
                && i < prior_fackets
            {
                self.update_reordering(now, prior_fackets - i, true);
            }
            if !self.sack_ok {
                self.sb.remove_reno_dupacks(acked.segs);
            }
            if acked.fin_acked {
                self.on_fin_acked(now);
            }
        }
        let window_update = self.snd_wnd != prior_wnd;
        // Neither advancing, carrying data or FIN, nor updating the window.
        let dup_shaped =
            !una_advanced && seg.payload.is_empty() && !seg.flags.fin() && !window_update;
        let is_dupack = dup_shaped && !self.sb.is_empty();
        let delivered = acked.newly_delivered + newly_sacked + (!self.sack_ok && is_dupack) as u32;

        // Window growth (Linux `tcp_may_raise_cwnd`: not in Recovery or CWR).
        if una_advanced
            && !matches!(prior_ca, CaState::Recovery | CaState::Cwr)
            && self.frto == Frto::Off
            && prior_in_flight + CWND_LIMITED_SLACK >= self.w.cwnd
        {
            let min_rtt_ms = self.rtt.min_rtt().map_or(0, |d| d.as_millis() as u32);
            let segs = if self.cfg.abc { acked.segs } else { 1 };
            self.cc.cong_avoid(&mut self.w, segs, now, min_rtt_ms);
        }

        if self.rack_on() {
            self.rack_update_reo_wnd(now);
        }
        self.fastretrans_alert(
            now,
            una_advanced,
            is_dupack,
            newly_sacked,
            delivered,
            prior_in_flight,
        );

        // RFC 6298 §5.2/5.3: restart the timer on new data acknowledged; stop it
        // when nothing is outstanding.
        if self.sb.is_empty() {
            self.timers.put(Timer::Rto, None);
        } else if una_advanced || !self.timers.is_set(Timer::Rto) {
            self.timers.put(
                Timer::Rto,
                Some(now + self.rtt.rto_backed_off(self.backoff)),
            );
        }
        if self.cfg.tlp {
            if una_advanced {
                self.tlp_consecutive = 0;
            }
            // Linux `is_tlp_dupack`: a duplicate that SACKs nothing new, whether or
            // not data is still outstanding.
            self.tlp_on_ack(ack, dup_shaped && newly_sacked == 0, dsack);
            // Algorithm 1 handle_ack: cancel and reschedule.
            self.schedule_pto(now);
        }
        true
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
            if let Some(marker) = self.undo_marker {
                let undone = if first.1 <= prior_una {
                    (first.1 > marker) as i64
                } else {
                    self.sb.dsack_retransmitted(first.0, first.1) as i64
                };
                self.undo_retrans -= undone;
                if self.cfg.undo
                    && undone > 0
                    && self.undo_retrans <= 0
                    && matches!(self.ca, CaState::Open | CaState::Disorder)
                {
                    // Late DSACKs after the episode ended: every retransmission was
                    // unnecessary (Linux `tcp_try_undo_dsack`).
                    self.undo(now, UndoKind::Dsack);
                }
            }
        }
        let blocks = &mut ranges[start..];
        blocks.sort_unstable();
        let mut newly = 0;
        let mut reord: Option<u32> = None;
        for &(l, r) in blocks.iter() {
            if r <= l || r <= self.snd_una || r > self.snd_nxt {
                continue; // invalid or stale block (RFC 2018 §5: ignore)
            }
            let res = if self.rack_on() {
                let (min_rtt, off) = (self.rtt.min_rtt(), self.ts_offset);
                let rack = &mut self.rack;
                // Linux checks the echoed timestamp only for cumulatively
                // acknowledged segments (`tcp_clean_rtx_queue`), not SACKed ones.
                self.sb.sack_with(l.max(self.snd_una), r, |s| {
                    rack.advance(now, s, min_rtt, None, off)
                })
            } else {
                self.sb.sack(l.max(self.snd_una), r)
            };
            newly += res.newly_sacked;
            if let Some(i) = res.reord_index {
                reord = Some(reord.map_or(i, |x| x.min(i)));
            }
        }
        if let Some(i) = reord {
            let fackets = self.sb.fackets_out();
            if fackets > i {
                self.update_reordering(now, fackets - i, true);
            }
        }
        if self.fack && newly > 0 {
            let lost = self.sb.mark_lost_retransmits();
            self.counters.lost_retransmit += lost as u64;
        }
        (newly, dsack)
    }

    /// Linux `tcp_update_reordering`: raise the duplicate threshold to the observed
    /// degree of reordering and stop trusting FACK.
    pub(crate) fn update_reordering(&mut self, now: Instant, metric: u32, sack: bool) {
        if metric > 0 && self.cfg.er_reorder_disable {
            self.er_disabled = true;
        }
        if metric > 0 {
            self.rack.reord_seen = true; // Linux `tp->reord_seen++`
        }
        if metric > self.reordering {
            self.reordering = metric.min(self.cfg.max_reordering);
            if sack {
                self.counters.sack_reorder += 1;
            } else {
                self.counters.reno_reorder += 1;
            }
            self.fack = false;
            self.trace(
                now,
                Event::Reordering {
                    degree: self.reordering,
                },
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn fastretrans_alert(
        &mut self,
        now: Instant,
        una_advanced: bool,
        is_dupack: bool,
        newly_sacked: u32,
        delivered: u32,
        prior_in_flight: u32,
    ) {
        if self.ca == CaState::Open
            && !is_dupack
            && self.sb.sacked_out == 0
            && self.sb.lost_out == 0
        {
            return;
        }
        if !self.sack_ok && is_dupack && self.ca != CaState::Loss {
            self.sb.add_reno_dupack();
        }

        // E. Exits from a state once the recovery point is acknowledged.
        if self.ca != CaState::Open && self.snd_una >= self.high_seq {
            match self.ca {
                CaState::Cwr => {
                    self.rec.on_exit(&mut self.w);
                    self.set_ca(now, CaState::Open);
                }
                CaState::Disorder => {
                    self.try_undo_dsack(now);
                    self.set_ca(now, CaState::Open);
                }
                CaState::Recovery => {
                    if !self.sack_ok {
                        self.sb.reset_reno_dupacks();
                    }
                    if !self.try_undo_recovery(now) {
                        self.rec.on_exit(&mut self.w);
                    }
                    self.set_ca(now, CaState::Open);
                }
                CaState::Loss => {
                    self.frto = Frto::Off;
                    self.try_undo_recovery(now);
                    self.set_ca(now, CaState::Open);
                }
                CaState::Open => {}
            }
            if self.retrans_out_none() {
                self.retrans_stamp = None;
            }
        }

        // F. Process the state.
        match self.ca {
            CaState::Recovery => {
                if una_advanced {
                    self.try_undo_partial(now);
                }
                let mut newly_lost = false;
                if self.rack_on() {
                    // Linux 4.10+: `tcp_identify_packet_loss` → `tcp_rack_mark_lost`.
                    let before = self.sb.lost_out;
                    self.rack_mark_lost(now);
                    let sample = AckSample {
                        pipe: self.sb.pipe(),
                        delivered,
                        snd_una_advanced: una_advanced,
                        newly_lost: self.sb.lost_out > before,
                    };
                    self.rec.on_ack(&mut self.w, &sample);
                    return;
                }
                // Linux `tcp_fastretrans_alert` in Recovery: mark on duplicate ACKs and
                // new SACKs; on a partial ACK when FACK shows a hole beyond the
                // reordering window (or without SACK); and, with FACK, when the head
                // has been outstanding longer than the RTO (`tcp_head_timedout`).
                let rto = self.rtt.rto_backed_off(self.backoff);
                let head_timed_out = self.fack && self.sb.head_timed_out(now, rto);
                let do_lost = is_dupack
                    || newly_sacked > 0
                    || (una_advanced && (!self.sack_ok || self.sb.fackets_out() > self.reordering));
                if do_lost || head_timed_out {
                    newly_lost = self.update_scoreboard(false) > 0;
                }
                if head_timed_out {
                    newly_lost |= self.sb.mark_timed_out(now, rto) > 0;
                }
                let sample = AckSample {
                    pipe: self.sb.pipe(),
                    delivered,
                    snd_una_advanced: una_advanced,
                    newly_lost,
                };
                self.rec.on_ack(&mut self.w, &sample);
            }
            CaState::Loss => {
                if self.frto != Frto::Off {
                    self.frto_ack(now, una_advanced, is_dupack);
                } else if una_advanced {
                    self.try_undo_loss(now);
                }
                if self.rack_on() && self.ca == CaState::Loss {
                    self.rack_mark_lost(now); // lost retransmissions
                }
            }
            _ => {
                if !self.sack_ok && una_advanced {
                    self.sb.reset_reno_dupacks();
                }
                if self.ca == CaState::Disorder {
                    self.try_undo_dsack(now);
                }
                if self.rack_on() {
                    self.rack_mark_lost(now);
                }
                if !self.time_to_recover(now) && !self.early_retransmit_due(now) {
                    self.try_to_open(now);
                    if self.ca == CaState::Cwr {
                        let sample = AckSample {
                            pipe: self.sb.pipe(),
                            delivered,
                            snd_una_advanced: una_advanced,
                            newly_lost: false,
                        };
                        self.rec.on_ack(&mut self.w, &sample);
                    }
                    return;
                }
                if self.sb.lost_out == 0
                    && self.fack
                    && self.sb.fackets_out() <= self.reordering
                    && self
                        .sb
                        .head_timed_out(now, self.rtt.rto_backed_off(self.backoff))
                {
                    self.counters.head_timeout_recovery += 1;
                }
                self.enter_recovery(now, prior_in_flight);
                if !self.rack_on() {
                    self.update_scoreboard(true);
                }
                let sample = AckSample {
                    pipe: self.sb.pipe(),
                    delivered,
                    snd_una_advanced: una_advanced,
                    newly_lost: true,
                };
                self.rec.on_ack(&mut self.w, &sample);
            }
        }
    }

    /// Enters recovery outside an ACK (the delayed early retransmission), as if an
    /// ACK had delivered nothing new.
    pub(crate) fn start_recovery(&mut self, now: Instant, pipe: u32) {
        self.enter_recovery(now, pipe);
        self.update_scoreboard(true);
        let sample = AckSample {
            pipe: self.sb.pipe(),
            delivered: 0,
            snd_una_advanced: false,
            newly_lost: true,
        };
        self.rec.on_ack(&mut self.w, &sample);
    }

    fn retrans_out_none(&self) -> bool {
        self.sb.retrans_out == 0
    }

    /// Linux `tcp_time_to_recover` (without early retransmit). With RACK only a
    /// segment marked lost starts recovery.
    fn time_to_recover(&self, now: Instant) -> bool {
        if self.sb.lost_out > 0 {
            return true;
        }
        if self.rack_on() {
            return false;
        }
        // "Trick #3": with FACK, a head outstanding longer than the RTO.
        if self.fack
            && self
                .sb
                .head_timed_out(now, self.rtt.rto_backed_off(self.backoff))
        {
            return true;
        }
        let dupacks = if self.fack {
            self.sb.fackets_out()
        } else {
            self.sb.sacked_out + 1
        };
        dupacks > self.reordering
    }

    /// Linux `tcp_try_to_open`: Disorder while anything is SACKed, lost or
    /// retransmitted, Open otherwise.
    fn try_to_open(&mut self, now: Instant) {
        if self.ca == CaState::Cwr {
            return;
        }
        if self.sb.sacked_out + self.sb.lost_out > 0 || self.sb.any_retrans_done() {
            if self.ca != CaState::Disorder {
                // Linux `tcp_try_keep_open`: Disorder lasts until snd.nxt is acknowledged.
                self.high_seq = self.snd_nxt;
            }
            self.set_ca(now, CaState::Disorder);
        } else {
            self.set_ca(now, CaState::Open);
            if self.sb.retrans_out == 0 {
                self.retrans_stamp = None;
            }
        }
    }

    pub(crate) fn enter_recovery(&mut self, now: Instant, prior_in_flight: u32) {
        self.counters.recovery_episodes += 1;
        if self.sack_ok {
            self.counters.sack_recovery += 1;
        } else {
            self.counters.reno_recovery += 1;
        }
        self.prior_cwnd = self.w.cwnd;
        self.undo_marker = Some(self.snd_una);
        self.undo_retrans = self.sb.retrans_out as i64;
        if self.ca < CaState::Cwr {
            self.prior_ssthresh = self.current_ssthresh();
            self.w.ssthresh = self.cc.ssthresh(&self.w);
        }
        self.high_seq = self.snd_nxt;
        self.w.cwnd_cnt = 0;
        self.recovery_start_pipe = self.sb.pipe();
        let start = RecoveryStart {
            prior_cwnd: self.prior_cwnd,
            pipe: self.sb.pipe(),
            prior_in_flight,
            flight_size: self.sb.packets_out(),
            cwnd_min: self.cc.min_cwnd(&self.w),
        };
        self.set_ca(now, CaState::Recovery);
        self.rec.on_enter(&mut self.w, &start);
        // RFC 6675 §5 (4.3): the first lost segment is retransmitted at once,
        // whatever cwnd and pipe say.
        self.force_retransmit = true;
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh to restore on undo.
    pub(crate) fn current_ssthresh(&self) -> u32 {
        if self.ca >= CaState::Cwr {
            self.w.ssthresh
        } else {
            self.w.ssthresh.max(self.w.cwnd / 2 + self.w.cwnd / 4)
        }
    }

    /// Linux `tcp_update_scoreboard`: marks segments lost. Returns how many.
    fn update_scoreboard(&mut self, fast_rexmit: bool) -> u32 {
        let high = self.high_seq;
        if !self.sack_ok {
            self.sb.mark_head_lost(1, true, true, high)
        } else if self.fack {
            let lost = self.sb.fackets_out().saturating_sub(self.reordering).max(1);
            self.sb.mark_head_lost(lost, true, false, high)
        } else {
            let sacked = self.sb.sacked_out;
            if sacked >= self.reordering {
                self.sb
                    .mark_head_lost(sacked - self.reordering, false, false, high)
            } else if fast_rexmit {
                self.sb.mark_head_lost(1, true, true, high)
            } else {
                0
            }
        }
    }

    // ------------------------------------------------------------------ undo

    /// Linux `tcp_packet_delayed`: nothing was retransmitted, or the ACK echoes a
    /// timestamp older than the first retransmission (RFC 3522 Eifel detection).
    fn packet_delayed(&self) -> bool {
        match self.retrans_stamp {
            None => true,
            Some(stamp) => self
                .last_tsecr
                .is_some_and(|ecr| (ecr.wrapping_sub(stamp) as i32) < 0),
        }
    }

    fn may_undo(&self) -> bool {
        self.cfg.undo
            && self.undo_marker.is_some()
            && (self.undo_retrans <= 0 || self.packet_delayed())
    }

    pub(crate) fn undo(&mut self, now: Instant, kind: UndoKind) {
        if self.prior_ssthresh > 0 {
            self.w.cwnd = self.w.cwnd.max(self.prior_cwnd);
            self.w.ssthresh = self.w.ssthresh.max(self.prior_ssthresh);
        } else {
            self.w.cwnd = self.w.cwnd.max(self.w.ssthresh);
        }
        self.cc.on_undo();
        self.undo_marker = None;
        match kind {
            UndoKind::Full => self.counters.full_undo += 1,
            UndoKind::Partial => self.counters.partial_undo += 1,
            UndoKind::Dsack => self.counters.dsack_undo += 1,
            UndoKind::Loss => self.counters.loss_undo += 1,
            UndoKind::Frto => {
                self.counters.loss_undo += 1;
                self.counters.spurious_rtos += 1;
            }
        }
        let (cwnd, ssthresh) = (self.w.cwnd, self.w.ssthresh);
        self.trace(
            now,
            Event::Undo {
                kind,
                cwnd,
                ssthresh,
            },
        );
    }

    /// At the end of Recovery or Loss. Returns true if the episode was undone.
    fn try_undo_recovery(&mut self, now: Instant) -> bool {
        if !self.may_undo() {
            self.rack_recovery_done();
            return false;
        }
        let kind = if self.ca == CaState::Loss {
            UndoKind::Loss
        } else if self.undo_retrans <= 0 {
            UndoKind::Dsack
        } else {
            UndoKind::Full
        };
        self.undo(now, kind);
        true
    }

    fn try_undo_partial(&mut self, now: Instant) {
        if self.cfg.undo
            && self.undo_marker.is_some()
            && self.retrans_stamp.is_some()
            && self.packet_delayed()
        {
            self.undo(now, UndoKind::Partial);
        }
    }

    fn try_undo_dsack(&mut self, now: Instant) {
        if self.cfg.undo
            && self.undo_marker.is_some()
            && self.undo_retrans <= 0
            && self.retrans_stamp.is_some()
        {
            self.rack_dsack_undo();
            self.undo(now, UndoKind::Dsack);
        }
    }

    fn try_undo_loss(&mut self, now: Instant) {
        if self.may_undo() {
            self.sb.clear_lost();
            self.undo(now, UndoKind::Loss);
            self.retransmits = 0;
            self.frto = Frto::Off;
            self.set_ca(now, CaState::Open);
        }
    }

    // ----------------------------------------------------------------- F-RTO

    /// RFC 5682 §2.1 steps 2 and 3.
    fn frto_ack(&mut self, now: Instant, una_advanced: bool, is_dupack: bool) {
        match self.frto {
            Frto::AwaitFirst => {
                let has_new_data =
                    self.snd_nxt < self.sendbuf.end() || (self.app_closed && !self.fin_sent);
                if una_advanced && self.snd_una < self.high_seq && has_new_data {
                    // (2.b) transmit up to two new segments.
                    self.frto = Frto::AwaitSecond;
                    self.w.cwnd = self.sb.pipe() + 2;
                } else if una_advanced && self.snd_una >= self.high_seq {
                    self.frto = Frto::Off;
                } else {
                    // (2.a) duplicate ACK, or nothing new to send: conventional recovery.
                    self.frto = Frto::Off;
                    self.sb.mark_all_lost(false);
                }
            }
            Frto::AwaitSecond => {
                if una_advanced {
                    // (3.b) the timeout was spurious.
                    self.frto = Frto::Off;
                    self.sb.clear_lost();
                    self.undo(now, UndoKind::Frto);
                    self.retransmits = 0;
                    self.set_ca(now, CaState::Open);
                } else if is_dupack {
                    // (3.a) conventional recovery with cwnd at most 3 segments.
                    self.frto = Frto::Off;
                    self.w.cwnd = self.w.cwnd.min(3);
                    self.sb.mark_all_lost(false);
                }
            }
            Frto::Off => {}
        }
    }
}
