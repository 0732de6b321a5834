//! The connection's side of Corrective (`gentle-aggression-sigcomm13.txt` §5 and §7,
//! draft-flach-tcpm-fec-00): the codec and the XOR are in [`crate::corrective`].
//!
//! - **Negotiation**: a SYN offers the option with the XOR encoding; the SYN-ACK
//!   answers with it only if the SYN offered it and Corrective is configured.
//!   Corrective is used only when both sides offered it. The option then rides on
//!   every packet, and the MSS shrinks by its 8 bytes, as it does for timestamps.
//! - **Sender**: new data feeds the [`Encoder`]; its Corrective packets leave when
//!   due (they take no room in cwnd and are never retransmitted). R_FAIL on an ACK
//!   marks the reported range lost, and Recovery retransmits it at once. R_SUCC
//!   enters CWR — one reduction per episode, as ECN's ECE does (RFC 3168 §6.1.2) —
//!   and puts R_ACK on the next packet.
//! - **Receiver**: an ENCODED packet is never data. It is decoded; rebuilt bytes go
//!   through normal reception, and every ACK carries R_SUCC until a packet with
//!   R_ACK arrives. A failed decode sends an immediate duplicate ACK with R_FAIL and
//!   the lost range.
//! - **Middleboxes** (§7): once negotiated, a packet without the option is
//!   discarded and Corrective is turned off on this host for the rest of the
//!   connection; the peer then stops receiving the option and does the same. Only
//!   relative numbers travel in the option.

use std::time::Duration;

use super::Connection;
use crate::corrective::option::{MAX_LENGTH, flags};
use crate::corrective::{
    CorrectiveOption, Decoded, ENCODING_XOR, Encoded, Encoder, MAX_BLOCKS, decode,
};
use crate::time::Instant;
use crate::trace::CaState;
use crate::wire::{Experimental, Flags, Segment};

/// Bytes the option takes on every packet (8: the long form; the short form is
/// padded to the same word boundary).
pub(crate) const OPTION_BYTES: u32 = 8;

/// Corrective state of one connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct Corrective {
    /// Negotiated and not turned off.
    on: bool,
    /// The encoder, boxed so that connections without Corrective stay small; gone
    /// once nothing more can be sent (fallback, TIME-WAIT, CLOSED).
    enc: Option<Box<Encoder>>,
    /// Receiver: put R_SUCC on every packet until R_ACK arrives.
    r_succ: bool,
    /// Receiver: report a failed recovery of everything up to this offset.
    r_fail_end: Option<u64>,
    /// Sender: put R_ACK on the next packet.
    r_ack: bool,
    /// Sender: snd.nxt when the last R_SUCC reduction happened; R_SUCC on ACKs at or
    /// below it belongs to that episode.
    cwr_high: Option<u64>,
    /// After a fallback: the first TSval sent without the option, and snd.nxt then.
    fence: Option<(u32, u64)>,
}

impl Corrective {
    /// Negotiated and not turned off.
    pub fn is_on(&self) -> bool {
        self.on
    }
    /// An encoder is running (data sent now is encoded).
    pub fn encoding(&self) -> bool {
        self.enc.is_some()
    }
    /// Nothing more will be sent: the encoder goes.
    pub fn stop_encoding(&mut self) {
        self.enc = None;
    }
}

impl Connection {
    /// Called from `negotiate` with the peer's SYN or SYN-ACK.
    pub(crate) fn corrective_negotiate(&mut self, syn: &Segment) {
        let offered = CorrectiveOption::of(syn);
        // Timestamps are required: the fallback uses them to tell the peer's packets
        // sent after it stopped using Corrective from stripped Corrective packets.
        self.ext.corrective.on = self.cfg.corrective
            && self.opts.ts
            && offered
                == Some(CorrectiveOption::Offer {
                    encoding: ENCODING_XOR,
                });
        if self.ext.corrective.on {
            self.opts.smss = self.opts.smss.saturating_sub(OPTION_BYTES).max(1);
            self.opts.rcv_mss = self.initial_rcv_mss();
            self.ext.corrective.enc = Some(Box::new(Encoder::new(self.opts.smss)));
            // The last 16 MSS delivered stay available for decoding.
            self.rx
                .keep_history(MAX_BLOCKS as usize * self.cfg.mss as usize);
        }
    }

    /// The option our SYN or SYN-ACK carries, if any.
    pub(crate) fn corrective_syn_option(&self, synack: bool) -> Option<CorrectiveOption> {
        let offer = if synack {
            self.ext.corrective.on
        } else {
            self.cfg.corrective && self.cfg.timestamps
        };
        offer.then_some(CorrectiveOption::Offer {
            encoding: ENCODING_XOR,
        })
    }

    /// Turns Corrective off for the rest of the connection (§7).
    ///
    /// The peer keeps sending Corrective packets until it receives one of our
    /// packets without the option, and a middlebox that strips options would make
    /// such a packet look like a retransmission. So from now on a packet with a
    /// payload and without the option is accepted only once it proves the peer has
    /// stopped too: it echoes a TSval we sent after this moment (our timestamp clock
    /// steps forward by 1 ms so that no earlier TSval equals it), or it
    /// acknowledges data we sent after it. The ACK sent now carries the news.
    fn corrective_off(&mut self, now: Instant) {
        self.ts.offset = self.ts.offset.wrapping_add(1);
        // In SYN-RECEIVED snd.nxt still reads 0, but the SYN-ACK took offset 0.
        self.ext.corrective.fence = Some((self.tsval(now), self.snd.nxt.max(1)));
        self.rx.request_ack();
        self.ext.corrective.on = false;
        self.ext.corrective.enc = None;
        self.ext.corrective.r_succ = false;
        self.ext.corrective.r_fail_end = None;
        self.ext.corrective.r_ack = false;
        self.counters.corrective_fallback += 1;
    }

    /// First look at a segment in a synchronized state (or the handshake's last
    /// ACK). Returns false if the segment must not be processed further.
    #[inline]
    pub(crate) fn corrective_filter(&mut self, now: Instant, seg: &Segment) -> bool {
        // Without Corrective, a segment without the experimental option needs no look.
        if !self.ext.corrective.on
            && self.ext.corrective.fence.is_none()
            && seg.options.experimental.is_none()
        {
            return true;
        }
        self.corrective_filter_slow(now, seg)
    }

    #[inline(never)]
    fn corrective_filter_slow(&mut self, now: Instant, seg: &Segment) -> bool {
        if seg.flags.rst() {
            return true;
        }
        let opt = CorrectiveOption::of(seg);
        if !self.ext.corrective.on {
            // After a fallback, the peer may still send Corrective packets until it
            // notices: they are never data.
            if opt.is_some_and(|o| o.has(flags::ENCODED)) {
                self.counters.segs_dropped += 1;
                return false;
            }
            if let Some((ts, seq)) = self.ext.corrective.fence
                && opt.is_none()
                && !seg.payload.is_empty()
            {
                let echoes = seg
                    .options
                    .timestamps
                    .is_some_and(|t| (t.ecr.wrapping_sub(ts) as i32) >= 0);
                if !echoes && self.ack_offset(seg.ack) <= seq {
                    self.counters.segs_dropped += 1;
                    self.rx.request_ack();
                    return false;
                }
            }
            return true;
        }
        let Some(opt) = opt else {
            // §7: a packet without the option: discard it and stop using Corrective.
            self.counters.segs_dropped += 1;
            self.corrective_off(now);
            return false;
        };
        if opt.has(flags::ENCODED) {
            self.corrective_receive(now, seg, opt.length());
            return false;
        }
        if opt.has(flags::R_ACK) {
            self.ext.corrective.r_succ = false;
        }
        true
    }

    /// An ENCODED packet arrived.
    fn corrective_receive(&mut self, now: Instant, seg: &Segment, length: Option<u32>) {
        self.counters.corrective_recv += 1;
        let Some(len) = length else {
            self.counters.segs_dropped += 1;
            return;
        };
        if !self.can_receive_data() {
            return;
        }
        let start = self.rcv_offset(seg.seq);
        // Like any segment, it must lie in the receive window (RFC 9293 §3.10.7.4);
        // below it, the history decides.
        if start + len as u64 > self.rx.rcv_nxt() + self.cfg.recv_buffer as u64 {
            self.counters.segs_dropped += 1;
            return;
        }
        match decode(self.rx.reassembly(), start, len as u64, &seg.payload) {
            Decoded::Complete => self.counters.corrective_unneeded += 1,
            Decoded::Recovered { seq, data } => {
                self.counters.corrective_recovered += 1;
                self.ext.corrective.r_succ = true;
                let rebuilt = Segment {
                    seq: self.rx.irs().wrapping_add(seq as u32),
                    flags: Flags::ACK,
                    payload: data,
                    ..Segment::default()
                };
                self.process_data(now, &rebuilt);
            }
            Decoded::Failed { end } => {
                self.counters.corrective_failed += 1;
                self.ext.corrective.r_fail_end = Some(end);
                self.rx.request_ack();
            }
            Decoded::Malformed => self.counters.segs_dropped += 1,
        }
    }

    /// The sender's reading of an ACK's option: R_FAIL marks the range lost, R_SUCC
    /// reduces cwnd once per episode. `ack` is the segment's ACK as an offset.
    #[inline(never)]
    pub(crate) fn corrective_on_ack(&mut self, now: Instant, seg: &Segment, ack: u64) {
        let Some(opt) = CorrectiveOption::of(seg) else {
            return;
        };
        if opt.has(flags::R_FAIL)
            && let Some(extent) = opt.length()
        {
            let hi = ack + extent as u64;
            if self.mark_range_lost(ack, hi.min(self.snd.nxt)) > 0 {
                self.counters.corrective_fail_recv += 1;
            }
        }
        if opt.has(flags::R_SUCC) {
            let same_episode = self.ext.corrective.cwr_high.is_some_and(|h| ack <= h);
            if !same_episode {
                self.ext.corrective.cwr_high = Some(self.snd.nxt);
                self.ext.corrective.r_ack = true;
                if self.ca_state() < CaState::Cwr {
                    self.counters.corrective_cwr += 1;
                    self.enter_cwr(now);
                }
            }
        }
    }

    /// The option for an outgoing non-SYN segment (built with the segment, in
    /// `base_segment`): R_SUCC while a rebuild is unacknowledged, R_ACK once after a
    /// reduction, R_FAIL with the lost extent once after a failed decode.
    pub(crate) fn corrective_option(&self, rst: bool) -> Experimental {
        let mut f = 0;
        let mut length = None;
        if self.ext.corrective.r_succ {
            f |= flags::R_SUCC;
        }
        if self.ext.corrective.r_ack && !rst {
            f |= flags::R_ACK;
        }
        if let Some(end) = self.ext.corrective.r_fail_end
            && end > self.rx.rcv_nxt()
        {
            f |= flags::R_FAIL;
            length = Some(((end - self.rx.rcv_nxt()) as u32).min(MAX_LENGTH));
        }
        CorrectiveOption::Data { flags: f, length }.to_experimental()
    }

    /// A segment with the option went out: the one-shot signals are spent. Returns
    /// true if it was a Corrective packet.
    #[inline(never)]
    pub(crate) fn corrective_sent(&mut self, seg: &Segment) -> bool {
        let Some(o) = CorrectiveOption::of(seg) else {
            return false;
        };
        if o.has(flags::ENCODED) {
            return true;
        }
        if o.has(flags::R_ACK) {
            self.ext.corrective.r_ack = false;
        }
        self.ext.corrective.r_fail_end = None;
        false
    }

    /// New data `[start, start + payload.len())` just went out.
    #[inline(never)]
    pub(crate) fn corrective_on_new_data(&mut self, now: Instant, start: u64, payload: &[u8]) {
        let delay = self.corrective_delay();
        if let Some(enc) = self.ext.corrective.enc.as_mut() {
            enc.on_new_data(now, start, payload, delay);
        }
    }

    /// RTT/4 (§5), from the smoothed RTT (the handshake gives the first sample).
    fn corrective_delay(&self) -> Duration {
        self.srtt().unwrap_or(self.cfg.rto_initial) / 4
    }

    /// When the next Corrective packet is due.
    #[inline]
    pub(crate) fn corrective_due(&self) -> Option<Instant> {
        self.ext.corrective.enc.as_ref().and_then(|e| e.next_due())
    }

    /// The next Corrective packet, when one is due.
    #[inline]
    pub(crate) fn corrective_transmit(&mut self, now: Instant) -> Option<Segment> {
        if self.corrective_due().is_none_or(|t| t > now) {
            return None;
        }
        self.corrective_transmit_due(now)
    }

    #[inline(never)]
    fn corrective_transmit_due(&mut self, now: Instant) -> Option<Segment> {
        loop {
            let Encoded {
                start,
                len,
                payload,
            } = self.ext.corrective.enc.as_mut()?.take_due(now)?;
            if start + len <= self.snd.una {
                continue; // everything it encodes is acknowledged already
            }
            // No SACK blocks: the peer reads nothing but the encoding from it.
            let mut s = self.base_segment(now, Flags::ACK, start);
            s.payload = payload;
            s.options.experimental = Some(
                CorrectiveOption::Data {
                    flags: flags::ENCODED,
                    length: Some(len as u32),
                }
                .to_experimental(),
            );
            self.counters.corrective_sent += 1;
            self.counters.corrective_bytes += s.payload.len() as u64;
            return Some(s);
        }
    }
}
