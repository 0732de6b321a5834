//! What to send next: SYN/SYN-ACK/RST, retransmissions of segments marked lost
//! (RFC 6675 NextSeg rule 1), new data (rule 2) within `cwnd − pipe` and the peer's
//! window, the FIN, and otherwise a pure ACK when one is due.

use super::Connection;
use crate::receive_window::ReceiveWindow;
use crate::scoreboard::TxSeg;
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{CaState, Event, RetransKind, State};
use crate::wire::{Flags, Options, Segment, Timestamps};

impl Connection {
    /// Returns the next segment to put on the wire, or `None` if nothing is due now.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        let mut seg = Segment::default();
        self.poll_transmit_into(now, &mut seg).then_some(seg)
    }

    /// [`poll_transmit`](Self::poll_transmit) building the segment in `out` — a
    /// network's own packet buffer — so that it is never copied on its way out.
    /// Returns whether a segment was written; `out` is left as it was if not.
    pub fn poll_transmit_into(&mut self, now: Instant, out: &mut Segment) -> bool {
        if self.ext.proactive().is_on() && put(out, self.proactive_copy(false)) {
            return true;
        }
        if !self.next_segment(now, out) {
            return self.nothing_to_send(now, out);
        }
        if self.ext.corrective().is_on() && !out.flags.syn() && self.corrective_sent(out) {
            return true; // a Corrective packet: not data, and its ACK is not read
        }
        self.on_segment_sent(now, out);
        true
    }

    /// [`poll_transmit`](Self::poll_transmit) found nothing due: what ends a burst.
    fn nothing_to_send(&mut self, now: Instant, out: &mut Segment) -> bool {
        // A send shorter than `tso` frames: its copies leave now.
        if self.ext.proactive().is_on() && put(out, self.proactive_copy(true)) {
            return true;
        }
        // A forced retransmission belongs to the ACK that asked for it.
        self.tx.ca.clear_force();
        self.update_persist(now);
        self.chrono_after_send(now);
        false
    }

    /// The books kept on every segment sent (but a Corrective packet).
    fn on_segment_sent(&mut self, now: Instant, seg: &Segment) {
        // Linux `OutSegs`: new data and FINs count where their sequence space is
        // first sent ([`record_new_data`](Self::record_new_data)); here a segment
        // that carries none (an ACK, a reset), the first SYN (a resent one is
        // counted by the timer) and every SYN-ACK.
        let counted = if seg.flags.syn() {
            seg.flags.ack() || self.ctl.syn_resent == 0
        } else {
            seg.payload.is_empty() && !seg.flags.fin()
        };
        self.counters.segs_out += u64::from(counted);
        self.receiver_on_sent(seg);
        if !seg.payload.is_empty() {
            self.ack_on_data_sent(now);
        }
        if !seg.payload.is_empty() || seg.flags.fin() {
            if self.tx.member.is_on() {
                self.session_revoke(); // the grant is used
                self.counters.session_segs += 1;
            }
            // Linux `tcp_in_cwnd_reduction`: PRR counts what is sent in CWR too.
            if matches!(self.tx.ca.state(), CaState::Recovery | CaState::Cwr) {
                self.tx.ca.on_sent(1);
            }
            self.counters.data_segs_out += 1;
            self.counters.bytes_sent += seg.payload.len() as u64;
            if self.tx.ca.state() == CaState::Recovery {
                self.counters.bytes_sent_recovery += seg.payload.len() as u64;
            }
        } else if !seg.flags.syn() && !seg.flags.rst() {
            self.counters.acks_sent += 1;
        }
        if self.ext.proactive().is_on() {
            self.proactive_on_sent(seg);
        }
    }

    /// Writes the next segment due into `out`: the common ones (retransmissions,
    /// new data, ACKs) are built there, the rare ones moved there.
    fn next_segment(&mut self, now: Instant, out: &mut Segment) -> bool {
        if self.control_due() {
            return put(out, self.next_control_segment(now));
        }
        self.next_data_segment(now, out)
    }

    /// Whether what is due, if anything, is a control segment: a reset is pending,
    /// or the connection is not where data and ACKs are sent (closed, TIME-WAIT, or
    /// in the handshake).
    #[inline]
    fn control_due(&self) -> bool {
        self.ctl.rst_reply.is_some()
            || self.ctl.rst_pending
            || matches!(
                self.state,
                State::Closed | State::TimeWait | State::SynSent | State::SynReceived
            )
    }

    /// A reset, a SYN or SYN-ACK, or the ACK of TIME-WAIT, when one is due.
    fn next_control_segment(&mut self, now: Instant) -> Option<Segment> {
        if let Some(seq) = self.ctl.rst_reply.take() {
            let mut s = self.base_segment(now, Flags::RST, seq);
            s.ack = 0;
            s.window = 0;
            s.options = Options::default();
            return Some(s);
        }
        if self.ctl.rst_pending {
            self.ctl.rst_pending = false;
            let mut s = self.base_segment(now, Flags::RST | Flags::ACK, self.snd.nxt);
            // Linux `tcp_send_active_reset` sends it through `tcp_transmit_skb`:
            // the timestamps option stays, no SACK blocks.
            s.options = Options {
                timestamps: s.options.timestamps,
                ..Options::default()
            };
            return Some(s);
        }
        match self.state {
            State::Closed | State::TimeWait => {
                if self.state == State::TimeWait && self.rx.ack_due() {
                    return Some(self.ack_segment(now));
                }
                None
            }
            State::SynSent | State::SynReceived => {
                if !self.ctl.syn_pending {
                    return None;
                }
                // `redundant_syn`: every SYN or SYN-ACK goes out twice, back to back.
                self.ctl.syn_copy = self.cfg.redundant_syn && !self.ctl.syn_copy;
                self.ctl.syn_pending = self.ctl.syn_copy;
                Some(self.syn_segment(now))
            }
            _ => None,
        }
    }

    /// In a synchronized state: Corrective's packet, a loss probe, a
    /// retransmission, new data, a window probe or an ACK, the first that is due.
    fn next_data_segment(&mut self, now: Instant, out: &mut Segment) -> bool {
        if self.ext.corrective().encoding() && put(out, self.corrective_transmit(now)) {
            return true;
        }
        if self.tx.tlp.pending() && put(out, self.loss_probe_transmit(now)) {
            return true;
        }
        if self.retransmit(now, out) || self.send_new(now, out) {
            return true;
        }
        if self.tx.persist.probe_due() {
            return put(out, self.persist_segment(now));
        }
        if self.rx.ack_due() {
            self.data_or_ack_into(now, Flags::ACK, self.snd.nxt, out);
            return true;
        }
        false
    }

    fn syn_segment(&mut self, now: Instant) -> Segment {
        let synack = self.state == State::SynReceived;
        let flags = if synack {
            Flags::SYN | Flags::ACK
        } else {
            Flags::SYN
        } | self.ecn_syn_flags(synack);
        let mut s = self.base_segment(now, flags, 0);
        let c = &self.cfg;
        let mut o = Options {
            mss: Some(c.mss),
            ..Options::default()
        };
        // On a SYN-ACK, offer only what the peer offered (RFC 2018 §2, RFC 7323 §2.2).
        let offer = |ours: bool, negotiated: bool| if synack { negotiated } else { ours };
        o.sack_permitted = offer(c.sack, self.opts.sack);
        if offer(c.timestamps, self.opts.ts) {
            o.timestamps = Some(Timestamps {
                val: self.tsval(now),
                ecr: if synack { self.ts.recent } else { 0 },
            });
        }
        if offer(c.window_scale, self.opts.ws) {
            o.window_scale = Some(self.rx.wscale());
        }
        o.experimental = self
            .corrective_syn_option(synack)
            .map(|c| c.to_experimental());
        s.options = o;
        // RFC 7323 §2.2: the window field of a SYN is never scaled.
        s.window = ReceiveWindow::initial(self.cfg.recv_buffer, self.cfg.mss as u32) as u16;
        if self.ctl.syn_retries == 0 {
            self.ctl.syn_sent_at = now;
        }
        if !self.timers.is_set(TimerKind::Retransmission) {
            self.timers.arm(
                TimerKind::Retransmission,
                now,
                now + self.tx.rtt.rto_backed_off(),
            );
        }
        s
    }

    pub(crate) fn base_segment(&self, now: Instant, flags: Flags, seq: u64) -> Segment {
        let mut s = Segment::default();
        self.base_segment_into(now, flags, seq, &mut s);
        s
    }

    /// [`base_segment`](Self::base_segment) written over `s`.
    fn base_segment_into(&self, now: Instant, flags: Flags, seq: u64, s: &mut Segment) {
        *s = Segment {
            src_port: self.ctl.ports.0,
            dst_port: self.ctl.ports.1,
            seq: self.wire_seq(seq),
            ack: 0,
            flags,
            window: self.adv_window(),
            ..Segment::default()
        };
        if flags.ack() {
            s.ack = self.ack_field();
        }
        if self.opts.ts {
            s.options.timestamps = Some(Timestamps {
                val: self.tsval(now),
                ecr: self.ts.recent,
            });
        }
        if self.ext.corrective().is_on() {
            s.options.experimental = Some(self.corrective_option(flags.rst()));
        }
        if self.ext.ecn().is_on() && flags.ack() && !flags.syn() {
            self.ecn_echo(s);
        }
    }

    /// A segment with ACK set, carrying SACK blocks when there is out-of-order data
    /// or a DSACK to report.
    pub(crate) fn data_or_ack(&mut self, now: Instant, flags: Flags, seq: u64) -> Segment {
        let mut s = Segment::default();
        self.data_or_ack_into(now, flags, seq, &mut s);
        s
    }

    /// [`data_or_ack`](Self::data_or_ack) written over `s`.
    fn data_or_ack_into(&mut self, now: Instant, flags: Flags, seq: u64, s: &mut Segment) {
        self.base_segment_into(now, flags | Flags::ACK, seq, s);
        if let Some(blocks) = self.sack_to_report() {
            s.options.sack = blocks;
        }
    }

    fn ack_segment(&mut self, now: Instant) -> Segment {
        self.data_or_ack(now, Flags::ACK, self.snd.nxt)
    }

    /// How many segments may be in flight now.
    pub(super) fn in_flight_for_cwnd(&self) -> u32 {
        if !self.cfg.limited_transmit && self.tx.ca.state() == CaState::Disorder {
            // Without RFC 3042, duplicate ACKs do not open room for new data.
            self.tx.sb.packets_out() + self.tx.sb.retrans_out()
                - self.tx.sb.lost_out().min(self.tx.sb.packets_out())
        } else {
            self.tx.sb.pipe()
        }
    }

    /// Segment `i` of the scoreboard sent again: its bytes, with the flags it was
    /// first sent with (Linux `tcp_retransmit_skb` resends the skb's flags), and
    /// the scoreboard's record of it.
    pub(crate) fn resent(&mut self, now: Instant, i: usize) -> Option<(Segment, TxSeg)> {
        let mut s = Segment::default();
        let seg = self.resent_into(now, i, &mut s)?;
        Some((s, seg))
    }

    /// [`resent`](Self::resent) written over `s`.
    fn resent_into(&mut self, now: Instant, i: usize, s: &mut Segment) -> Option<TxSeg> {
        let seg = *self.tx.sb.get(i)?;
        // Linux `tcp_retransmit_skb`: a segment acknowledged in part (its data
        // recovered by Corrective, not its FIN; a peer that took part of it) is
        // resent from snd.una (`tcp_trim_head`) — its acknowledged bytes are gone.
        let seg = TxSeg {
            start: seg.start.max(self.snd.una),
            ..seg
        };
        // Linux `tcp_retransmit_skb`: "Save stamp of the first (attempted)
        // retransmit".
        self.ctl.retrans_stamp.get_or_insert(now);
        let data_end = if seg.fin { seg.end - 1 } else { seg.end };
        let forced = self.tso_resend_ends_packet(now, &seg);
        let mut flags = if seg.psh || forced {
            Flags::PSH
        } else {
            Flags::empty()
        };
        if seg.fin {
            flags.insert(Flags::FIN);
        }
        self.data_or_ack_into(now, flags, seg.start, s);
        s.payload = self
            .snd
            .buf
            .slice(seg.start, (data_end - seg.start) as usize);
        Some(seg)
    }

    /// Writes the next retransmission due (RFC 6675 NextSeg rule 1, or a forward
    /// retransmission) into `out`.
    fn retransmit(&mut self, now: Instant, out: &mut Segment) -> bool {
        if self.tx.member.is_on() {
            if !self.session_may_send() {
                return false;
            }
        } else if self.tx.sb.pipe() >= self.tx.cong.cwnd() && !self.tx.ca.force_retransmit() {
            return false;
        }
        let (i, forward) = match self.tx.sb.next_lost() {
            Some(i) => (i, false),
            None => match self.forward_retransmit_candidate() {
                Some(i) => (i, true),
                None => return false,
            },
        };
        if forward {
            self.counters.forward_retrans += 1;
        }
        self.tx.ca.clear_force();
        let Some(TxSeg { start, end, .. }) = self.resent_into(now, i, out) else {
            return false;
        };
        let snd_nxt = self.snd.nxt;
        self.tx.sb.on_retransmit(i, now, snd_nxt);
        let kind = match self.tx.ca.state() {
            _ if self.tx.member.is_on() => self.session_retrans_kind(start),
            CaState::Loss if self.tx.ca.take_loss_first() => RetransKind::Timeout,
            CaState::Loss => {
                self.counters.slow_start_retrans += 1;
                RetransKind::SlowStart
            }
            _ => {
                self.counters.fast_retrans += 1;
                if self.tx.ca.take_early_entry() {
                    RetransKind::Early
                } else {
                    RetransKind::Fast
                }
            }
        };
        self.counters.retrans_segs += 1;
        self.counters.bytes_retrans += out.payload.len() as u64;
        let tsval = self.tsval(now);
        self.tx.undo.on_retransmit(tsval);
        if !self.tx.member.is_on() && !self.timers.is_set(TimerKind::Retransmission) {
            self.timers.arm(
                TimerKind::Retransmission,
                now,
                now + self.tx.rtt.rto_backed_off(),
            );
        }
        self.trace(
            now,
            Event::Retransmit {
                seq: start,
                len: (end - start) as u32,
                kind,
            },
        );
        true
    }

    /// Linux `tcp_xmit_retransmit_queue` forward retransmission
    /// (`tcp_can_forward_retransmit`): in Recovery with SACK, once every segment
    /// marked lost has been resent and no new data can go out, the holes below the
    /// highest SACK are resent too, as cwnd allows.
    fn forward_retransmit_candidate(&self) -> Option<usize> {
        if self.tx.ca.state() != CaState::Recovery
            || !self.opts.sack
            || self.tx.sb.sacked_out() == 0
        {
            return None;
        }
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        if unsent > 0 && self.window_room() > 0 {
            return None;
        }
        self.tx.sb.next_forward_hole()
    }

    /// The FIN leaves: FIN-WAIT-1 or LAST-ACK (RFC 9293 §3.10.4 CLOSE).
    pub(crate) fn fin_goes(&mut self, now: Instant) {
        self.snd.fin_sent = true;
        match self.state {
            State::Established => self.set_state(now, State::FinWait1),
            State::CloseWait => self.set_state(now, State::LastAck),
            _ => {}
        }
    }

    /// Whether what is left to send is the final FIN in one segment (at most one
    /// MSS of data before it) and cwnd does not hold it (`final_fin_cwnd_exempt`:
    /// Linux 3.x's `tcp_cwnd_test`).
    fn final_fin(&self, unsent: u64) -> bool {
        self.cfg.final_fin_cwnd_exempt
            && self.snd.app_closed
            && !self.snd.fin_sent
            && unsent <= self.opts.smss as u64
    }

    fn send_new(&mut self, now: Instant, out: &mut Segment) -> bool {
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let fin_due = self.snd.app_closed && !self.snd.fin_sent && unsent == 0;
        if unsent == 0 && !fin_due {
            return false;
        }
        if !matches!(self.state, State::Established | State::CloseWait) {
            return false;
        }
        if self.tx.member.is_on() {
            if !self.session_may_send() {
                return false;
            }
        } else if self.in_flight_for_cwnd() >= self.tx.cong.cwnd() && !self.final_fin(unsent) {
            self.cwnd_validate(true);
            return false;
        }
        let len = unsent.min(self.opts.smss as u64).min(self.window_room());
        if !fin_due && !self.sws_allows(len, unsent) {
            return false; // the window is closed or too small: see `persist`
        }
        let fin_with = self.snd.app_closed && len == unsent;
        if self.nagle_holds(len, fin_with) {
            return false;
        }
        let len = len as usize;
        if !self.tx.member.is_on() {
            self.restart_after_idle(now);
        }
        if self.tx.fast_start.active() && !self.fast_start_may_send(now) {
            return false;
        }
        let start = self.snd.nxt;
        let payload = self.snd.buf.slice(start, len);
        let last = start + len as u64 == self.snd.buf.end();
        let fin = self.snd.app_closed && last;
        let mut flags = Flags::empty();
        // The application's write ends here (Linux `tcp_mark_push`): the data
        // keeps the flag, and its retransmissions carry it.
        let pushed = len > 0 && last;
        let (ends_tso_packet, tso_end) = if len > 0 {
            self.tso_ends_packet(now)
        } else {
            (false, false)
        };
        if pushed || ends_tso_packet {
            flags.insert(Flags::PSH);
        }
        if fin {
            flags.insert(Flags::FIN);
            self.fin_goes(now);
        }
        self.data_or_ack_into(now, flags, start, out);
        out.payload = payload;
        self.ecn_new_data(out);
        if self.tx.member.marks() {
            out.flags.insert(Flags::FAST_START);
            self.counters.fast_start_segs += 1;
        }
        if self.tx.fast_start.active() {
            self.fast_start_on_send(now, start, out);
        }
        self.record_new_data(now, start, len as u64, fin, (pushed, tso_end || pushed));
        // Linux `tcp_write_xmit`: cwnd-limited also when what is in flight fills it.
        let full = self.in_flight_for_cwnd() >= self.tx.cong.cwnd();
        self.cwnd_validate(full);
        // Algorithm 1: schedule_pto after new data in Open.
        if self.cfg.tlp && !self.tx.member.is_on() {
            self.schedule_pto(now);
        }
        true
    }

    /// Books newly sent data `[start, start + len)` (and a FIN after it; `psh`:
    /// pushed, and the end of its TSO packet): the scoreboard entry, snd.nxt, and
    /// the retransmission timer if none runs.
    pub(crate) fn record_new_data(
        &mut self,
        now: Instant,
        start: u64,
        len: u64,
        fin: bool,
        (psh, tso_end): (bool, bool),
    ) {
        let end = start + len + fin as u64;
        if self.ext.corrective().encoding() && len > 0 {
            let data = self.snd.buf.slice(start, len as usize);
            self.corrective_on_new_data(now, start, &data);
        }
        self.tx.sb.push(TxSeg {
            start,
            end,
            fin,
            psh,
            tso_end,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            tx_time: now,
            retrans_high: 0,
        });
        self.snd.nxt = end;
        self.counters.segs_out += 1; // Linux `OutSegs`: new sequence space
        self.snd.last_data_sent = now;
        if len > 0 && len < u64::from(self.opts.smss) {
            self.snd.sml = end; // Linux `tcp_minshall_update`
        }
        if !self.tx.member.is_on() && !self.timers.is_set(TimerKind::Retransmission) {
            self.timers.arm(
                TimerKind::Retransmission,
                now,
                now + self.tx.rtt.rto_backed_off(),
            );
        }
    }
}

/// Moves `seg`, if any, into `out`; whether there was one.
fn put(out: &mut Segment, seg: Option<Segment>) -> bool {
    match seg {
        Some(s) => {
            *out = s;
            true
        }
        None => false,
    }
}
