//! Whether the sender is using its congestion window: window growth waits on it
//! (RFC 7661 §4 states the problem; Linux's answer is `tcp_is_cwnd_limited`).
//!
//! - `in-flight` (Linux 3.x): when an ACK arrives, the segments in flight before
//!   it are within `tcp_max_tso_deferred_mss` (3) of cwnd.
//! - `max-packets-out` (Linux 4.1+, commit ca8a22634381 "tcp: make cwnd-limited
//!   checks measurement-based, and gentler"; the per-window bookkeeping of 5.19,
//!   `tcp_cwnd_validate` with `cwnd_usage_seq`): the sender was blocked by cwnd at
//!   some point of the current window (`is_cwnd_limited`), or, in slow start,
//!   cwnd is below twice the most segments outstanding in the window
//!   (`max_packets_out`) — so that slow start "grows cwnd to twice what was
//!   ACKed" even when the application, not cwnd, ended the flight. A 10-segment
//!   response sent with cwnd 10 leaves cwnd at about 20 here, and at 12 or 13
//!   under `in-flight`.

use super::Connection;
use crate::config::CwndValidation;

/// Most segments of slack for which Linux 3.x still counts the sender as
/// cwnd-limited (`tcp_max_tso_deferred_mss`).
const CWND_LIMITED_SLACK: u32 = 3;

/// `max-packets-out`'s record of the current window.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CwndUsage {
    /// cwnd blocked the sender in this window.
    is_cwnd_limited: bool,
    /// The most segments outstanding in this window.
    max_packets_out: u32,
    /// The window ends when snd.una reaches this (snd.nxt when it began).
    usage_seq: u64,
}

impl Connection {
    /// After output: `limited` says cwnd stopped new data that was waiting, or
    /// what is in flight fills cwnd (Linux `tcp_write_xmit`'s `is_cwnd_limited`,
    /// then `tcp_cwnd_validate`'s bookkeeping).
    pub(crate) fn cwnd_validate(&mut self, limited: bool) {
        if self.cfg.cwnd_validation != CwndValidation::MaxPacketsOut {
            return;
        }
        let packets_out = self.tx.sb.packets_out();
        let u = &mut self.tx.cwnd_usage;
        if self.snd.una >= u.usage_seq
            || limited
            || (!u.is_cwnd_limited && packets_out > u.max_packets_out)
        {
            u.is_cwnd_limited = limited;
            u.max_packets_out = packets_out;
            u.usage_seq = self.snd.nxt;
        }
    }

    /// Whether an ACK may grow the window: `prior_in_flight` is what was in
    /// flight before it.
    pub(crate) fn is_cwnd_limited(&self, prior_in_flight: u32) -> bool {
        let cwnd = self.tx.cong.cwnd();
        match self.cfg.cwnd_validation {
            CwndValidation::InFlight => prior_in_flight + CWND_LIMITED_SLACK >= cwnd,
            CwndValidation::MaxPacketsOut => {
                let u = &self.tx.cwnd_usage;
                u.is_cwnd_limited
                    || (cwnd < self.tx.cong.ssthresh() && cwnd < 2 * u.max_packets_out)
            }
        }
    }
}
