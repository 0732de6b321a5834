//! When the receiver acknowledges: RFC 9293 §3.8.6.3, RFC 1122 §4.2.3.2 and RFC 5681
//! §4.2 leave the policy to the implementation within bounds; `Config::receiver`
//! chooses one.
//!
//! **Linux** (`ReceiverPolicy::Linux`), after net/ipv4/tcp_input.c and tcp_output.c:
//! - *Quick-ACK mode* (`tcp_incr_quickack`, `tcp_enter_quickack_mode`): every data
//!   segment is acknowledged at once while `quick` ACKs are left (at most
//!   `Config::quickack`, `TCP_MAX_QUICKACKS` = 16, and at most half the offered
//!   window in segments) and the connection is not interactive ("pingpong"). It is
//!   entered on the first data of a connection, after a receive gap longer than the
//!   RTO, and on out-of-order, duplicate or out-of-window data; each ACK of new data
//!   spends one.
//! - *Adaptive ATO* (`tcp_event_data_recv`): the delayed-ACK timeout starts at
//!   `TCP_ATO_MIN` (40 ms, `Config::delayed_ack`) and follows the gaps between
//!   arriving segments; a delayed ACK that had to fire doubles it (up to the RTO).
//!   The timer waits `ato`, at most 200 ms (`TCP_DELACK_MAX`) when interactive or
//!   after a short "pushed" segment, else 500 ms, and at most the smoothed RTT
//!   (`tcp_send_delayed_ack`).
//! - *Interactive mode* (`tcp_event_data_sent`): sending data within `ato` of the
//!   last arrival marks the connection interactive, which turns quick ACKs off so
//!   that ACKs ride on the replies; a delayed ACK that fires turns it off again.
//! - Otherwise (`__tcp_ack_snd_check`): ACK at once when more than one full segment
//!   is unacknowledged or out-of-order data is held; when the application reads a
//!   short pushed segment and empties the queue outside interactive mode
//!   (`tcp_cleanup_rbuf`); and when a read at least doubles a window that had
//!   fallen to half the buffer.
//!
//! **Windows** and **RFC** (`ReceiverPolicy::Windows`, `ReceiverPolicy::Rfc`): ACK
//! every second segment (Windows, whatever its size: Microsoft's "Delayed
//! Acknowledgments", "an ACK is sent for every other TCP segment received") or every
//! second full-sized one (RFC 1122 §4.2.3.2), out-of-order data and data that fills a
//! hole at once (RFC 5681 §4.2), and anything else when a fixed timer fires (Windows
//! 200 ms, `TcpDelAckTicks`; RFC 5681 §4.2's bound of 500 ms). No quick-ACK mode.
//!
//! `Config::delayed_ack = None` acknowledges every segment at once, whatever the
//! policy.

use std::time::Duration;

use super::Connection;
use crate::config::ReceiverPolicy;
use crate::receiver::Arrival;
use crate::time::Instant;
use crate::trace::TimerKind;

/// `TCP_DELACK_MAX`: the longest delayed-ACK wait when interactive or pushed.
const DELACK_MAX: Duration = Duration::from_millis(200);
/// `HZ / 2`: the longest delayed-ACK wait otherwise.
const DELACK_MAX_BULK: Duration = Duration::from_millis(500);
/// `TCP_MSS_DEFAULT`: segments at least this long (with options) are taken as
/// full-sized by `tcp_measure_rcv_mss`.
const MSS_DEFAULT: u32 = 536;
/// `TCP_MIN_MSS`.
const MIN_MSS: u32 = 88;

/// The receiver's delayed-ACK state (Linux `icsk_ack`).
#[derive(Clone, Debug, Default)]
pub(crate) struct AckPolicy {
    /// Quick ACKs left.
    quick: u32,
    /// Interactive ("pingpong") mode.
    pingpong: bool,
    /// Adaptive delayed-ACK timeout; `None` until the first data arrives.
    ato: Option<Duration>,
    /// When data last arrived in order.
    lrcvtime: Instant,
    /// A short segment arrived since the last ACK (`ICSK_ACK_PUSHED`), twice
    /// (`ICSK_ACK_PUSHED2`).
    pushed: u8,
    /// Length of the last short segment taken as full-sized (`last_seg_size`).
    last_seg_size: u32,
}

impl Connection {
    /// The initial estimate of the peer's segment size (`tcp_initialize_rcv_mss`).
    pub(crate) fn initial_rcv_mss(&self) -> u32 {
        self.opts.smss.clamp(MIN_MSS, MSS_DEFAULT)
    }

    fn ato_min(&self) -> Duration {
        self.cfg.delayed_ack.unwrap_or_default()
    }

    /// Decides how to acknowledge an arriving data segment of `len` bytes.
    pub(crate) fn ack_on_data(&mut self, now: Instant, a: Arrival, len: u32, pushed: bool) {
        let ofo = a.out_of_order || a.duplicate;
        if a.delivered > 0 {
            self.rx.rcv.unacked_bytes += a.delivered as u32;
            // The peer's segment size, which the window selection uses too.
            self.measure_rcv_mss(len, pushed);
        }
        if self.cfg.delayed_ack.is_none() {
            self.rx.rcv.ack_now = true;
            return;
        }
        if self.cfg.receiver != ReceiverPolicy::Linux {
            if a.delivered > 0 {
                self.rx.rcv.unacked_segs += 1;
            }
            let second = match self.cfg.receiver {
                // Windows counts segments, whatever their size: "No ACK was sent for
                // the previous segment received" (Microsoft, "Delayed
                // Acknowledgments": "normally an ACK is sent for every other TCP
                // segment received").
                ReceiverPolicy::Windows => self.rx.rcv.unacked_segs >= 2,
                _ => self.rx.rcv.unacked_bytes >= 2 * self.opts.smss,
            };
            if ofo || a.filled_hole || second {
                self.rx.rcv.ack_now = true;
            } else if a.delivered > 0 && !self.timers.is_set(TimerKind::DelayedAck) {
                self.timers
                    .arm(TimerKind::DelayedAck, now, now + self.ato_min());
            }
            return;
        }
        if ofo && a.delivered == 0 {
            // `tcp_data_queue`: out-of-order, duplicate or out-of-window data.
            self.enter_quickack_mode();
            self.rx.rcv.ack_now = true;
            return;
        }
        self.event_data_recv(now);
        if a.filled_hole && !self.rx.rcv.has_ooo() {
            self.rx.acks.pingpong = false;
        }
        self.ack_snd_check(now);
    }

    /// Linux `tcp_event_data_recv`: the ATO (the segment-size estimate is taken
    /// before, by [`Self::measure_rcv_mss`]).
    fn event_data_recv(&mut self, now: Instant) {
        let ato_min = self.ato_min();
        match self.rx.acks.ato {
            None => {
                self.incr_quickack();
                self.rx.acks.ato = Some(ato_min);
            }
            Some(ato) => {
                let m = now - self.rx.acks.lrcvtime;
                let rto = self.rto_unbacked();
                if m <= ato_min / 2 {
                    self.rx.acks.ato = Some(ato / 2 + ato_min / 2);
                } else if m < ato {
                    self.rx.acks.ato = Some((ato / 2 + m).min(rto));
                } else if m > rto {
                    self.incr_quickack();
                }
            }
        }
        self.rx.acks.lrcvtime = now;
    }

    /// Linux `tcp_measure_rcv_mss`.
    fn measure_rcv_mss(&mut self, len: u32, psh: bool) {
        let lss = std::mem::take(&mut self.rx.acks.last_seg_size);
        if len >= self.opts.rcv_mss {
            self.opts.rcv_mss = len;
            return;
        }
        let opts = if self.opts.ts { 12 } else { 0 };
        if len + opts >= MSS_DEFAULT || (len + opts >= MIN_MSS && !psh) {
            self.rx.acks.last_seg_size = len;
            if len == lss {
                self.opts.rcv_mss = len;
                return;
            }
        }
        self.rx.acks.pushed = (self.rx.acks.pushed + 1).min(2);
    }

    /// Linux `tcp_incr_quickack`.
    fn incr_quickack(&mut self) {
        let mss = self.opts.rcv_mss.max(1) as u64;
        let mut q = (self.rx.rwnd.offered() / (2 * mss)).min(u32::MAX as u64) as u32;
        if q == 0 {
            q = 2;
        }
        q = q.min(self.cfg.quickack);
        self.rx.acks.quick = self.rx.acks.quick.max(q);
    }

    /// Linux `tcp_enter_quickack_mode`.
    fn enter_quickack_mode(&mut self) {
        self.incr_quickack();
        self.rx.acks.pingpong = false;
        self.rx.acks.ato = Some(self.ato_min());
    }

    /// Linux `__tcp_ack_snd_check` for in-order data.
    fn ack_snd_check(&mut self, now: Instant) {
        let more_than_one = self.rx.rcv.rcv_nxt() - self.rx.rcv.rcv_wup > self.opts.rcv_mss as u64;
        let quick = self.rx.acks.quick > 0 && !self.rx.acks.pingpong;
        if more_than_one || quick || self.rx.rcv.has_ooo() {
            self.rx.rcv.ack_now = true;
        } else {
            self.send_delayed_ack(now);
        }
    }

    /// Linux `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, now: Instant) {
        let ato_min = self.ato_min();
        let mut ato = self.rx.acks.ato.unwrap_or(ato_min);
        if ato > ato_min {
            let mut max_ato = if self.rx.acks.pingpong || self.rx.acks.pushed > 0 {
                DELACK_MAX
            } else {
                DELACK_MAX_BULK
            };
            if let Some(srtt) = self.srtt() {
                max_ato = max_ato.min(srtt.max(ato_min));
            }
            ato = ato.min(max_ato);
        }
        let mut at = now + ato;
        if let Some(t) = self.timers.asked(TimerKind::DelayedAck) {
            // "If delack timer was blocked or is about to expire, send ACK now."
            if t <= now + ato / 4 {
                self.rx.rcv.ack_now = true;
                return;
            }
            at = at.min(t);
        }
        self.timers.arm(TimerKind::DelayedAck, now, at);
    }

    /// An ACK-bearing segment went out (Linux `tcp_event_ack_sent`,
    /// `tcp_dec_quickack_mode`).
    pub(crate) fn ack_on_sent(&mut self) {
        let scheduled = self.rx.rcv.unacked_bytes > 0 || self.rx.rcv.ack_now;
        if scheduled && self.rx.acks.quick > 0 {
            self.rx.acks.quick -= 1;
            if self.rx.acks.quick == 0 {
                self.rx.acks.ato = Some(self.ato_min()); // "leaving quickack mode we deflate ATO"
            }
        }
        self.rx.acks.pushed = 0;
        self.timers.put(TimerKind::DelayedAck, None);
    }

    /// The connection is established: Linux stamps `lrcvtime` then
    /// (`tcp_create_openreq_child`, `tcp_rcv_synsent_state_process`), so
    /// `tcpi_last_data_recv` counts from the handshake until data arrives.
    pub(crate) fn ack_policy_on_established(&mut self, now: Instant) {
        self.rx.acks.lrcvtime = now;
    }

    /// Time since data last arrived in order, or since the handshake (Linux
    /// `tcpi_last_data_recv`).
    pub fn since_data_received(&self, now: Instant) -> Duration {
        now.saturating_since(self.rx.acks.lrcvtime)
    }

    /// A data segment went out (Linux `tcp_event_data_sent`): a reply within `ato`
    /// of the last arrival marks the connection interactive.
    pub(crate) fn ack_on_data_sent(&mut self, now: Instant) {
        if let Some(ato) = self.rx.acks.ato
            && now - self.rx.acks.lrcvtime < ato
        {
            self.rx.acks.pingpong = true;
        }
    }

    /// The delayed-ACK timer fired (Linux `tcp_delack_timer_handler`).
    pub(crate) fn on_delack_timeout(&mut self, now: Instant) {
        self.timers.put(TimerKind::DelayedAck, None);
        if self.rx.rcv.unacked_bytes == 0 && !self.rx.rcv.ack_now {
            return;
        }
        if self.cfg.receiver == ReceiverPolicy::Linux {
            if self.rx.acks.pingpong {
                // "Delayed ACK missed: leave pingpong mode and deflate ATO."
                self.rx.acks.pingpong = false;
                self.rx.acks.ato = Some(self.ato_min());
            } else if let Some(ato) = self.rx.acks.ato {
                // "Delayed ACK missed: inflate ATO."
                self.rx.acks.ato = Some((ato * 2).min(self.rto_unbacked()));
            }
        }
        self.rx.rcv.ack_now = true;
        self.counters.delayed_acks += 1;
        self.trace_timer(now, TimerKind::DelayedAck);
    }

    /// The application read `copied` bytes (Linux `tcp_cleanup_rbuf`).
    pub(crate) fn ack_on_read(&mut self, copied: usize) {
        if self.rx.rcv.ack_now {
            return;
        }
        if self.cfg.receiver == ReceiverPolicy::Linux && self.rx.rcv.unacked_bytes > 0 {
            let more_than_one =
                self.rx.rcv.rcv_nxt() - self.rx.rcv.rcv_wup > self.opts.rcv_mss as u64;
            let drained = self.rx.rcv.buffered() == 0;
            let pushed =
                self.rx.acks.pushed >= 2 || (self.rx.acks.pushed == 1 && !self.rx.acks.pingpong);
            if more_than_one || (copied > 0 && drained && pushed) {
                self.rx.rcv.ack_now = true;
                return;
            }
        }
        // A window update when the read at least doubles a window that had fallen
        // to half the buffer or less.
        let now_win =
            (self.rx.rcv.rcv_wup + self.rx.rwnd.offered()).saturating_sub(self.rx.rcv.rcv_nxt());
        let buffer = (self.cfg.recv_buffer as u64).min(self.rx.rwnd.max_window());
        if copied > 0 && 2 * now_win <= buffer {
            let free = buffer.saturating_sub(self.rx.rcv.buffered() as u64);
            let new = self
                .rx
                .rwnd
                .free_space_window(buffer, free, self.opts.rcv_mss as u64);
            if new != 0 && new >= 2 * now_win {
                self.rx.rcv.ack_now = true;
            }
        }
    }
}
