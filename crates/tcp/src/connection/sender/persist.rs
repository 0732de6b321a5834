//! The sender facing a small or closed receive window: sender-side silly-window
//! avoidance (RFC 9293 §3.8.6.2.1) and zero-window probing with the persist timer
//! (RFC 9293 §3.8.6.1; RFC 1122 §4.2.2.17), as Linux does it (`tcp_snd_wnd_test`,
//! `tcp_probe_timer`, `tcp_send_probe0`, `tcp_write_wakeup`, `tcp_ack_probe` in
//! net/ipv4/tcp_output.c, tcp_timer.c and tcp_input.c).
//!
//! - New data leaves only as a full segment, as all the data queued, or as at least
//!   half of the largest window the peer ever offered.
//! - When data waits, nothing is in flight and the window admits nothing, the persist
//!   timer runs on the RTO with the shared exponential back-off. On expiry the sender
//!   sends what the window now admits, or else a probe that carries no data and
//!   sequence number `snd.una − 1`, which any receiver answers with an ACK that shows
//!   its window.
//! - An ACK that opens the window far enough for the next segment stops the timer and
//!   clears the back-off. Unanswered probes count toward `max_retries`; any ACK
//!   resets that count, so a live receiver may keep its window closed indefinitely.

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::{State, TimerKind};
use crate::wire::{Flags, Segment};

/// Zero-window probing's state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Persist {
    /// The persist timer fired: a window probe is due.
    probe_due: bool,
    /// Window probes sent since the last ACK.
    probes_out: u32,
}

impl Persist {
    /// The persist timer fired: a window probe is due.
    pub fn probe_due(&self) -> bool {
        self.probe_due
    }
}

impl Connection {
    /// RFC 9293 §3.8.6.2.1: may `len` bytes of new data go out now, given `unsent`
    /// bytes queued?
    pub(crate) fn sws_allows(&self, len: u64, unsent: u64) -> bool {
        len >= self.opts.smss as u64 || len >= unsent || (len > 0 && len >= self.snd.max_wnd / 2)
    }

    /// Nagle's algorithm holds `len` bytes of new data (`nagle`; Linux
    /// `tcp_nagle_check`, RFC 896 with Minshall's variant: while a short segment
    /// sent earlier is unacknowledged). A segment with the FIN goes.
    pub(crate) fn nagle_holds(&self, len: u64, fin: bool) -> bool {
        self.cfg.nagle
            && !fin
            && len < self.opts.smss as u64
            && self.tx.sb.packets_out() > 0
            && self.snd.sml > self.snd.una
            && self.snd.sml <= self.snd.nxt
    }

    /// Room in the peer's window beyond `snd_nxt`.
    pub(crate) fn window_room(&self) -> u64 {
        (self.snd.una + self.snd.wnd).saturating_sub(self.snd.nxt)
    }

    /// Called when nothing more is due: starts or stops the persist timer.
    pub(crate) fn update_persist(&mut self, now: Instant) {
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let blocked = matches!(self.state, State::Established | State::CloseWait)
            && unsent > 0
            && self.tx.sb.is_empty()
            && !self.sws_allows(self.window_room().min(self.opts.smss as u64), unsent);
        if blocked {
            if !self.timers.is_set(TimerKind::Persist) {
                self.timers
                    .arm(TimerKind::Persist, now, now + self.tx.rtt.rto_backed_off());
            }
        } else {
            self.timers.put(TimerKind::Persist, None);
        }
    }

    /// On every acceptable ACK, after the window update (Linux `tcp_ack_probe`):
    /// a window that admits the next segment stops probing and clears the back-off.
    pub(crate) fn persist_on_ack(&mut self) {
        if self.timers.is_set(TimerKind::Persist) || self.tx.persist.probes_out > 0 {
            let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
            if self.sws_allows(self.window_room().min(self.opts.smss as u64), unsent) {
                self.timers.put(TimerKind::Persist, None);
                self.tx.rtt.clear_backoff();
            }
        }
        self.tx.persist.probes_out = 0;
    }

    pub(crate) fn on_persist_timeout(&mut self, now: Instant) {
        self.trace_timer(now, TimerKind::Persist);
        if self.tx.persist.probes_out >= self.cfg.max_retries {
            self.counters.aborts += 1;
            self.ctl.rst_pending = true;
            self.enter_closed(now, CloseReason::TimedOut);
            return;
        }
        self.tx.persist.probes_out += 1;
        self.tx.rtt.add_backoff();
        self.tx.persist.probe_due = true;
    }

    /// The persist timer's segment (Linux `tcp_write_wakeup`): what the window
    /// admits of new data, whatever silly-window avoidance says, or a zero-window
    /// probe.
    pub(crate) fn persist_segment(&mut self, now: Instant) -> Option<Segment> {
        self.tx.persist.probe_due = false;
        self.counters.window_probes += 1;
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let len = self.window_room().min(self.opts.smss as u64).min(unsent);
        if len == 0 {
            let mut s = self.data_or_ack(now, Flags::empty(), self.snd.una.saturating_sub(1));
            s.payload = bytes::Bytes::new();
            return Some(s);
        }
        let start = self.snd.nxt;
        let mut s = self.data_or_ack(now, Flags::PSH, start);
        s.payload = self.snd.buf.slice(start, len as usize);
        self.record_new_data(now, start, len, false, (true, true));
        Some(s)
    }
}
