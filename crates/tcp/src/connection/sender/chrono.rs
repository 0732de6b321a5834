//! Linux's chronographs of the sending side (`tcp_chrono_start`,
//! `tcp_chrono_stop`, Linux 4.10+), read through `tcp_info` as `tcpi_busy_time`,
//! `tcpi_rwnd_limited` and `tcpi_sndbuf_limited`: how long data waited to be sent
//! or acknowledged, and of that how long the receive window held the sender back.
//! One chronograph runs at a time, the most interesting: receive-window-limited
//! over busy. Busy starts when the write queue goes from empty to not
//! (`tcp_add_write_queue_tail`) and ends when nothing is queued or unacknowledged;
//! receive-window-limited starts when `tcp_write_xmit` stops on the peer's window
//! and ends when it stops for any other reason. The engine's send buffer never
//! fills, so send-buffer-limited time stays 0.

use std::time::Duration;

use crate::connection::Connection;
use crate::time::Instant;
use crate::trace::State;

/// Which chronograph runs (`enum tcp_chrono`, in increasing interest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    #[default]
    Unspec,
    Busy,
    RwndLimited,
}

/// The chronographs: the one running, since when, and the time each has run.
#[derive(Debug, Default)]
pub(crate) struct Chronos {
    kind: Kind,
    start: Instant,
    /// Data was queued with nothing waiting: busy from the next send attempt (the
    /// application writes and the engine sends at the same instant).
    queued: bool,
    busy: Duration,
    rwnd_limited: Duration,
}

impl Chronos {
    /// Linux `tcp_chrono_set`.
    fn set(&mut self, now: Instant, kind: Kind) {
        let ran = now.saturating_since(self.start);
        match self.kind {
            Kind::Unspec => {}
            Kind::Busy => self.busy += ran,
            Kind::RwndLimited => self.rwnd_limited += ran,
        }
        (self.kind, self.start) = (kind, now);
    }

    /// Linux `tcp_chrono_start`: a more interesting one takes over.
    fn start(&mut self, now: Instant, kind: Kind) {
        if kind > self.kind {
            self.set(now, kind);
        }
    }

    /// The time `kind` has run, the current run included.
    fn total(&self, now: Instant, kind: Kind) -> Duration {
        let mine = match kind {
            Kind::Unspec => Duration::ZERO,
            Kind::Busy => self.busy,
            Kind::RwndLimited => self.rwnd_limited,
        };
        if self.kind == kind {
            mine + now.saturating_since(self.start)
        } else {
            mine
        }
    }
}

impl Connection {
    /// The application queued data; `was_unsent`: some was already waiting.
    pub(crate) fn chrono_on_write(&mut self, was_unsent: bool) {
        if !was_unsent {
            self.tx.chronos.queued = true;
        }
    }

    /// The sender has sent what it may (the end of `tcp_write_xmit`): limited by
    /// the receive window, or not; idle once nothing is queued or in flight.
    pub(super) fn chrono_after_send(&mut self, now: Instant) {
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let c = &mut self.tx.chronos;
        if std::mem::take(&mut c.queued) {
            c.start(now, Kind::Busy);
        }
        if unsent == 0 && self.tx.sb.is_empty() {
            if c.kind != Kind::Unspec {
                c.set(now, Kind::Unspec);
                // The connection's busy time so far, as `tcpi_busy_time` reads it.
                self.counters.busy_time_us = (c.busy + c.rwnd_limited).as_micros() as u64;
            }
            return;
        }
        if !matches!(self.state, State::Established | State::CloseWait) {
            return;
        }
        // The window first: cheaper than cwnd's test, and rarely the limit.
        let limited = unsent > 0
            && self.window_room() < unsent.min(u64::from(self.opts.smss))
            && self.in_flight_for_cwnd() < self.tx.cong.cwnd();
        let c = &mut self.tx.chronos;
        if limited {
            c.start(now, Kind::RwndLimited);
        } else if c.kind == Kind::RwndLimited {
            // Linux `tcp_chrono_stop`: back to busy, data being queued.
            c.set(now, Kind::Busy);
        }
    }

    /// Time data was queued or unacknowledged (`tcpi_busy_time`, all
    /// chronographs together).
    pub fn busy_time(&self, now: Instant) -> Duration {
        let c = &self.tx.chronos;
        c.total(now, Kind::Busy) + c.total(now, Kind::RwndLimited)
    }

    /// Of [`busy_time`](Self::busy_time), the time the peer's receive window held
    /// the sender back (`tcpi_rwnd_limited`).
    pub fn rwnd_limited_time(&self, now: Instant) -> Duration {
        self.tx.chronos.total(now, Kind::RwndLimited)
    }
}
