//! A far sender's send times, read from its timestamps (RFC 7323 §5.4: TSval is
//! taken from a clock that ticks at a rate between 1 ms and 1 s per tick, and TSecr
//! echoes the TSval of the last segment the sender received that advanced its
//! `Last.ACK.sent`, duplicate ACKs included on Linux).
//!
//! A capture taken at the receiver sees the sender's packets after its queue, which
//! can hold them for hundreds of milliseconds: when a retransmission arrives says
//! little of when it left. Its TSval says when it left, on the sender's clock; its
//! TSecr says which of the receiver's ACKs the sender had last seen. Mapped onto
//! the capture's clock (the rate from the TSvals' progress, the offset from the
//! packets that queued least), a retransmission that left within about a round
//! trip of the ACK it echoes was sent on that ACK, not on a timer.

use std::collections::VecDeque;

/// Clock rates in use (ticks per second): BSD's 2 Hz slow timer, 10 and 100 Hz
/// (Windows, old BSD), Linux's `HZ` of 100, 250, 300 and 1000 (before 4.13), and
/// 1 kHz milliseconds (Linux 4.13+, `tcp_time_stamp`).
const RATES: [f64; 7] = [2.0, 10.0, 100.0, 250.0, 300.0, 1000.0, 1024.0];
/// The rate is read once the TSvals span this long...
const SPAN_NS: u64 = 2_000_000_000;
/// ... and this many ticks, and snapped to a rate in use within this share.
const MIN_TICKS: u32 = 20;
const RATE_TOLERANCE: f64 = 0.1;
/// The receiver's ACKs remembered by TSval: enough for the flights of a window.
const ACKS_KEPT: usize = 512;
/// Half the shortest retransmission timeout (Linux's `TCP_RTO_MIN`).
const TIMER_SPLIT_NS: i128 = super::RTO_MIN_NS as i128 / 2;
/// Samples kept before the rate is known.
const EARLY_KEPT: usize = 256;

/// The far sender's clock as seen from the capture, and the receiver's ACKs.
#[derive(Debug, Default)]
pub(super) struct PeerClock {
    first: Option<(u64, u32)>,
    /// Before the rate is known: (arrival ns, TSval).
    early: Vec<(u64, u32)>,
    /// Ticks per second, once known.
    hz: Option<f64>,
    /// min(arrival − TSval / hz) over the packets since: when a tick's packet
    /// arrives if it does not queue, ns (signed: before the capture began).
    offset_ns: Option<i128>,
    /// The receiver's ACKs: (TSval, when the capture saw the first with it,
    /// whether one with it could trigger a retransmission).
    acks: VecDeque<(u32, u64, bool)>,
}

impl PeerClock {
    /// A packet from the far sender (SYN, ACK or data) arrived at `t` with `tsval`.
    pub(super) fn data(&mut self, t: u64, tsval: u32) {
        let (t0, v0) = *self.first.get_or_insert((t, tsval));
        if self.hz.is_some() {
            self.offset(t, tsval);
            return;
        }
        if self.early.len() < EARLY_KEPT {
            self.early.push((t, tsval));
        }
        let ticks = tsval.wrapping_sub(v0);
        let span = t.saturating_sub(t0);
        if span >= SPAN_NS && (MIN_TICKS..u32::MAX / 2).contains(&ticks) {
            let measured = f64::from(ticks) / (span as f64 / 1e9);
            self.hz = RATES
                .into_iter()
                .find(|r| (measured / r - 1.0).abs() <= RATE_TOLERANCE);
            for (t, v) in std::mem::take(&mut self.early) {
                self.offset(t, v);
            }
        }
    }

    fn offset(&mut self, t: u64, tsval: u32) {
        let Some(o) = self.at(tsval).map(|at| t as i128 - at) else {
            return;
        };
        let base = self.offset_ns.get_or_insert(o);
        *base = (*base).min(o);
    }

    /// Tick `tsval` on the capture's clock less the offset, ns, counted from the
    /// first packet's tick (wrapping as TSvals do).
    fn at(&self, tsval: u32) -> Option<i128> {
        let (_, v0) = self.first?;
        let hz = self.hz?;
        let ticks = tsval.wrapping_sub(v0) as i32;
        Some((f64::from(ticks) * 1e9 / hz) as i128)
    }

    /// The receiver sent an ACK with `tsval` at `t`; `trigger`: one that could make
    /// the sender resend (it advanced, duplicated, or SACKed something new).
    pub(super) fn ack(&mut self, t: u64, tsval: u32, trigger: bool) {
        if let Some(last) = self.acks.back_mut()
            && last.0 == tsval
        {
            last.2 |= trigger;
            return;
        }
        if self.acks.len() == ACKS_KEPT {
            self.acks.pop_front();
        }
        self.acks.push_back((tsval, t, trigger));
    }

    /// Whether a packet with `tsval` echoing `tsecr` left the sender within about
    /// a round trip (`rtt` ns, the least seen) of the ACK it echoes leaving the
    /// receiver: sent on that ACK. `None` when the clock or the ACK is unknown, or
    /// the ACK could not have triggered it (a timer may fire just after any ACK).
    pub(super) fn sent_on_ack(&self, tsval: u32, tsecr: u32, rtt: u64) -> Option<bool> {
        let hz = self.hz?;
        let arrives = self.at(tsval)? + self.offset_ns?;
        let &(_, acked, trigger) = self.acks.iter().rev().find(|a| a.0 == tsecr)?;
        if !trigger {
            return None;
        }
        // The packet's arrival had it not queued, less the ACK's round trip to the
        // sender and back: about nothing (a tick, the error of the RTT) if it was
        // sent on the ACK, at least a retransmission timeout less that error if on
        // a timer (200 ms at least, Linux's `TCP_RTO_MIN`). Halfway tells them apart.
        let tick = (1e9 / hz) as i128;
        let late = arrives - acked as i128 - rtt as i128;
        Some(late <= tick + TIMER_SPLIT_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A 100 Hz sender 50 ms away whose uplink queue holds its packets for up to
    /// 250 ms.
    fn clock() -> PeerClock {
        let mut c = PeerClock::default();
        for k in 0..400u32 {
            let queue = u64::from(k % 26) * 10 * MS;
            c.data(
                1_000 * MS + u64::from(k) * 10 * MS + 50 * MS + queue,
                5_000 + k,
            );
        }
        c
    }

    #[test]
    fn the_rate_and_the_least_queued_offset() {
        let c = clock();
        assert_eq!(c.hz, Some(100.0));
        // Tick 5000 would arrive at 1050 ms without a queue.
        assert_eq!(
            c.at(5_000).unwrap() + c.offset_ns.unwrap(),
            1_050 * MS as i128
        );
    }

    #[test]
    fn sent_on_the_ack_or_on_a_timer() {
        let mut c = clock();
        // An ACK leaves the receiver at 5000 ms; with a 100 ms RTT the sender has
        // it at 5050 ms, tick 5400 (4 s after tick 5000 left at 1000 ms).
        c.ack(5_000 * MS, 77, true);
        c.ack(5_001 * MS, 79, false);
        // Sent at 5050 ms (tick 5405), arriving behind 250 ms of queue: on the ACK.
        assert_eq!(c.sent_on_ack(5_405, 77, 100 * MS), Some(true));
        // Sent 300 ms after it reached the sender: a timer.
        assert_eq!(c.sent_on_ack(5_435, 77, 100 * MS), Some(false));
        assert_eq!(c.sent_on_ack(5_425, 77, 100 * MS), Some(false));
        // An ACK never seen, one that could not trigger a resend (a window
        // update, data), or a clock not yet known, says nothing.
        assert_eq!(c.sent_on_ack(5_405, 78, 100 * MS), None);
        assert_eq!(c.sent_on_ack(5_405, 79, 100 * MS), None);
        assert_eq!(PeerClock::default().sent_on_ack(5_405, 77, 100 * MS), None);
    }
}
