//! Segment arrival: RFC 9293 §3.10.7 ("SEGMENT ARRIVES"), in the order it gives —
//! handshake states, acceptability, RST, SYN, ACK, data, FIN — with RFC 7323 §4.3
//! timestamp recording.

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{Event, State};
use crate::wire::Segment;
use std::time::Duration;

/// The least time between two answers to out-of-window segments, duplicate SYNs
/// among them: Linux `tcp_invalid_ratelimit`, default HZ/2 = 500 ms
/// (`Documentation/networking/ip-sysctl.rst`).
const INVALID_RATELIMIT: Duration = Duration::from_millis(500);

impl Connection {
    /// Processes one segment addressed to this connection.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) {
        self.counters.segs_in += 1;
        self.tso_new_round();
        match self.state {
            State::Closed => {}
            State::SynSent => self.on_syn_sent(now, seg),
            State::SynReceived => self.on_syn_received(now, seg),
            _ => {
                // Proactive's receiver filter (§6) comes first: a copy it drops must
                // not reach ACK processing.
                if !self.cfg.proactive || self.proactive_filter(seg) {
                    self.on_synchronized(now, seg);
                }
            }
        }
    }

    fn on_syn_sent(&mut self, now: Instant, seg: &Segment) {
        let f = seg.flags;
        if f.ack() && seg.ack != self.snd.iss.wrapping_add(1) {
            // RFC 9293 §3.10.7.3: unacceptable ACK; a reset would go out if !RST.
            self.counters.segs_dropped += 1;
            return;
        }
        if f.rst() {
            if f.ack() {
                self.counters.resets += 1;
                self.trace(now, Event::Reset);
                self.enter_closed(now, CloseReason::Reset);
            }
            return;
        }
        if f.syn() && !f.ack() {
            // Simultaneous open (RFC 9293 §3.10.7.3, "fourth"): both sides sent a
            // SYN. Answer with a SYN-ACK from the same ISS and wait in SYN-RECEIVED.
            self.rx.on_syn(seg.seq);
            self.negotiate(seg);
            if let Some(ts) = seg.options.timestamps {
                self.ts.recent = ts.val;
            }
            self.ctl.syn_pending = true;
            self.set_state(now, State::SynReceived);
            return;
        }
        if !f.syn() {
            self.counters.segs_dropped += 1;
            return;
        }
        self.rx.on_syn(seg.seq);
        self.negotiate(seg);
        if let Some(ts) = seg.options.timestamps {
            self.ts.recent = ts.val;
        }
        self.snd.una = 1;
        self.snd.nxt = 1;
        self.timers.put(TimerKind::Retransmission, None);
        // RTT sample from the handshake (Karn: only if the SYN was not retransmitted,
        // unless timestamps identify the transmission).
        self.handshake_rtt(now, seg);
        self.update_window(seg, 0, 1, true);
        self.set_state(now, State::Established);
        self.window_after_syn_loss(seg);
        self.rx.rcv.ack_now = true;
        // Data or FIN on the SYN-ACK is processed like on any other segment.
        if !seg.payload.is_empty() || seg.flags.fin() {
            self.process_data(now, seg);
        }
    }

    /// The peer retransmitted its SYN: our SYN-ACK was lost. Linux
    /// `tcp_check_req`: resend it (`inet_rtx_syn_ack`; `tcp_rtx_synack` counts it in
    /// RetransSegs and TCPSynRetrans) and restart the SYN-ACK timer from now at its
    /// current backoff (`mod_timer_pending(&req->rsk_timer, jiffies +
    /// reqsk_timeout(req))`) — but answer at most one duplicate SYN per
    /// `tcp_invalid_ratelimit` (`tcp_oow_rate_limited`; TCPACKSkippedSynRecv).
    fn answer_duplicate_syn(&mut self, now: Instant) {
        if self
            .ctl
            .dup_syn_answered
            .is_some_and(|t| now.saturating_since(t) < INVALID_RATELIMIT)
        {
            return;
        }
        self.ctl.dup_syn_answered = Some(now);
        if !self.ctl.syn_pending {
            self.counters.retrans_segs += 1;
            self.counters.syn_retrans += 1;
        }
        self.ctl.syn_pending = true;
        self.ctl.syn_resent += 1;
        self.arm_rto(now);
    }

    fn on_syn_received(&mut self, now: Instant, seg: &Segment) {
        let f = seg.flags;
        if f.rst() {
            self.counters.resets += 1;
            self.trace(now, Event::Reset);
            self.enter_closed(now, CloseReason::Reset);
            return;
        }
        if f.syn() && !f.ack() {
            if f.contains(crate::wire::Flags::COPY) && self.cfg.proactive {
                // Proactive's copy of the SYN already answered (§6).
                self.counters.proactive_discarded += 1;
                return;
            }
            if seg.seq == self.rx.rcv.irs() {
                self.answer_duplicate_syn(now);
            }
            return;
        }
        if !f.ack() || seg.ack != self.snd.iss.wrapping_add(1) {
            self.counters.segs_dropped += 1;
            return;
        }
        if !self.corrective_filter(now, seg) {
            return;
        }
        self.snd.una = 1;
        self.snd.nxt = 1;
        self.timers.put(TimerKind::Retransmission, None);
        self.handshake_rtt(now, seg);
        self.ctl.syn_pending = false;
        if let (true, Some(ts)) = (self.opts.ts, seg.options.timestamps) {
            self.ts.recent = ts.val;
        }
        let seq = self.rcv_offset(seg.seq);
        self.update_window(seg, seq, 1, true);
        self.set_state(now, State::Established);
        self.window_after_syn_loss(seg);
        if !seg.payload.is_empty() || seg.flags.fin() {
            self.process_data(now, seg);
        }
    }

    fn on_synchronized(&mut self, now: Instant, seg: &Segment) {
        if !self.corrective_filter(now, seg) {
            return;
        }
        let f = seg.flags;
        let seq = self.rcv_offset(seg.seq);
        let seg_len = seg.payload.len() as u64 + f.fin() as u64;
        // Acceptability (RFC 9293 §3.10.7.4, first check). Our window is the receive
        // buffer; anything starting beyond it is unacceptable.
        let wnd = self.cfg.recv_buffer as u64;
        let acceptable = if seg_len == 0 {
            seq >= self.rx.rcv.rcv_nxt().saturating_sub(wnd) && seq <= self.rx.rcv.rcv_nxt() + wnd
        } else {
            // Wholly below rcv_nxt (an old duplicate, acknowledged again), or else
            // starting inside the window.
            seq + seg_len <= self.rx.rcv.rcv_nxt() || seq < self.rx.rcv.rcv_nxt() + wnd
        };
        if f.rst() {
            // RFC 5961 §3.2 would demand an exact match; in-window is RFC 9293's rule.
            if seq + 1 >= self.rx.rcv.rcv_nxt() && seq <= self.rx.rcv.rcv_nxt() + wnd {
                self.counters.resets += 1;
                self.trace(now, Event::Reset);
                self.enter_closed(now, CloseReason::Reset);
            }
            return;
        }
        // A segment that ends before what our last ACK covered, such as a
        // zero-window probe at snd.una − 1, is answered with an ACK and dropped
        // (RFC 9293 §3.10.7.4; Linux `tcp_sequence` against `rcv_wup`).
        let stale = seg_len == 0 && !f.syn() && !f.fin() && seq < self.rx.rcv.rcv_wup;
        if !acceptable || stale {
            self.counters.segs_dropped += 1;
            self.rx.rcv.ack_now = true;
            return;
        }
        if f.syn() {
            // A SYN in a synchronized state (for instance a retransmitted SYN-ACK
            // whose ACK was lost): challenge ACK (RFC 5961 §4.2).
            self.rx.rcv.ack_now = true;
            return;
        }
        if !f.ack() {
            self.counters.segs_dropped += 1;
            return;
        }
        if self.ack_offset(seg.ack) > self.snd.nxt {
            // An ACK of data not yet sent: the segment is discarded whole, its
            // TSval unrecorded and its data and FIN unread (Linux `tcp_ack`: "If
            // the ack includes data we haven't sent yet, discard this segment"),
            // and answered with an ACK where `ack_unsent_answered` (RFC 9293
            // §3.10.7.4; Linux 6.18).
            self.counters.segs_dropped += 1;
            if self.cfg.ack_unsent_answered {
                self.rx.rcv.ack_now = true;
            }
            return;
        }
        // RFC 7323 §4.3: record TSval if the segment covers Last.ACK.sent.
        if let (true, Some(ts)) = (self.opts.ts, seg.options.timestamps)
            && seq <= self.rx.rcv.rcv_nxt()
            && (ts.val.wrapping_sub(self.ts.recent) as i32) >= 0
        {
            self.ts.recent = ts.val;
        }
        self.on_ack(now, seg, seq);
        self.process_data(now, seg);
    }

    /// Data and FIN processing (RFC 9293 §3.10.7.4, "seventh" and "eighth").
    pub(crate) fn process_data(&mut self, now: Instant, seg: &Segment) {
        let seq = self.rcv_offset(seg.seq);
        let can_receive = self.can_receive_data();
        if self.ctl.read_closed
            && matches!(self.state, State::FinWait1 | State::FinWait2)
            && seq + seg.payload.len() as u64 > self.rx.rcv.rcv_nxt()
        {
            self.abort_on_data(now, seg);
            return;
        }
        if !seg.payload.is_empty() {
            if !can_receive && seq + seg.payload.len() as u64 > self.rx.rcv.rcv_nxt() {
                // Data after the peer's FIN: ignore (RFC 9293 §3.10.7.4).
                self.counters.segs_dropped += 1;
                return;
            }
            if self.ext.ecn().is_on() {
                self.ecn_on_data(seg);
            }
            let len = seg.payload.len() as u32;
            let a = self
                .rx
                .rcv
                .on_data(seq, seg.payload.clone(), self.opts.sack && self.cfg.dsack);
            if a.duplicate {
                self.counters.dup_data_recv += 1;
                if self.rx.rcv.dsack.is_some() {
                    if a.out_of_order {
                        self.counters.dsack_ofo_sent += 1;
                    } else {
                        self.counters.dsack_old_sent += 1;
                    }
                }
            }
            if a.out_of_order && !a.duplicate {
                self.counters.ofo_queue += 1;
            }
            if a.delivered > 0 {
                let (mss, buf) = (self.cfg.mss as u32, self.cfg.recv_buffer);
                self.rx.rwnd.grow(len, mss, buf);
            }
            self.ack_on_data(
                now,
                a,
                len,
                seg.flags.contains(crate::wire::Flags::PSH) || seg.flags.fin(),
            );
        }
        if seg.flags.fin() && can_receive {
            let fin_at = seq + seg.payload.len() as u64;
            if self.rx.rcv.fin_at.is_none() {
                self.rx.rcv.fin_at = Some(fin_at);
            }
            self.rx.rcv.ack_now = true;
        } else if seg.flags.fin() && self.rx.rcv.fin_received {
            // A retransmitted FIN: our ACK of it was lost. Acknowledge it again, and
            // in TIME-WAIT restart the 2·MSL timeout (RFC 9293 §3.10.7.4, "eighth").
            self.rx.rcv.ack_now = true;
            if self.state == State::TimeWait {
                self.timers
                    .arm(TimerKind::TimeWait, now, now + self.cfg.time_wait);
            }
        }
        if let Some(fin_at) = self.rx.rcv.fin_at
            && !self.rx.rcv.fin_received
            && self.rx.rcv.rcv_nxt() == fin_at
        {
            self.rx.rcv.receive_fin();
            self.rx.rcv.ack_now = true;
            match self.state {
                State::Established => self.set_state(now, State::CloseWait),
                State::FinWait1 => self.set_state(now, State::Closing),
                State::FinWait2 => self.enter_time_wait(now),
                _ => {}
            }
        }
    }

    /// States in which the peer may still send data (RFC 9293 §3.10.7.4, "seventh").
    pub(crate) fn can_receive_data(&self) -> bool {
        matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        )
    }

    pub(crate) fn enter_time_wait(&mut self, now: Instant) {
        self.set_state(now, State::TimeWait);
        self.timers.put(TimerKind::Retransmission, None);
        self.ext.corrective_mut().stop_encoding(); // everything is acknowledged: nothing left to encode
        self.timers
            .arm(TimerKind::TimeWait, now, now + self.cfg.time_wait);
        self.ctl.close_reason.get_or_insert(CloseReason::Normal);
    }

    /// Send-window update (RFC 9293 §3.10.7.4, "fifth", SND.WL1/SND.WL2 rule).
    pub(crate) fn update_window(&mut self, seg: &Segment, seq: u64, ack: u64, force: bool) {
        let shift = if seg.flags.syn() {
            0
        } else {
            self.opts.snd_wscale
        };
        let wnd = (seg.window as u64) << shift;
        if force || self.snd.wl1 < seq || (self.snd.wl1 == seq && self.snd.wl2 <= ack) {
            self.snd.wnd = wnd;
            self.snd.max_wnd = self.snd.max_wnd.max(wnd);
            self.snd.wl1 = seq;
            self.snd.wl2 = ack;
        }
    }

    /// New data for a socket the application closed: RFC 1122 §4.2.2.13 ("its TCP
    /// SHOULD send a RST to show that data was lost"), as Linux does in FIN-WAIT-1
    /// and -2 (`tcp_rcv_state_process`, `TCPAbortOnData`): the connection ends and
    /// the segment is answered with a reset (`tcp_v4_send_reset`: the sequence
    /// number its ACK asked for, no ACK of it).
    fn abort_on_data(&mut self, now: Instant, seg: &Segment) {
        self.counters.aborts += 1;
        self.ctl.rst_reply = Some(seg.ack.wrapping_sub(self.snd.iss) as u64);
        self.enter_closed(now, CloseReason::Reset);
    }
}
