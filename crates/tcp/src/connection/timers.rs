//! Timers: the earliest deadline, and each timer's expiry handed to its owner —
//! the retransmission timer (RFC 6298 §5) to the sender's `rto`, the delayed-ACK
//! timer, zero-window probes, Early Retransmit, the loss probe, RACK's reorder
//! timer, fast start's, and TIME-WAIT (RFC 9293 §3.10.8).

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::TimerKind;

impl Connection {
    /// The earliest pending deadline, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.timers.next(), self.corrective_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fires every timer whose deadline is not after `now`. Harmless when nothing is due.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.tso_new_round();
        if self
            .timers
            .get(TimerKind::DelayedAck)
            .is_some_and(|t| t <= now)
        {
            self.on_delack_timeout(now);
        }
        if self.timers.take_due(TimerKind::TimeWait, now) {
            self.trace_timer(now, TimerKind::TimeWait);
            self.enter_closed(now, CloseReason::Normal);
        }
        if self.timers.take_due(TimerKind::LossProbe, now) {
            self.on_pto(now);
        }
        if self
            .timers
            .get(TimerKind::ReorderTimeout)
            .is_some_and(|t| t <= now)
        {
            self.on_rack_timeout(now);
        }
        if self.timers.take_due(TimerKind::EarlyRetransmit, now) {
            self.on_er_timeout(now);
        }
        if self.timers.take_due(TimerKind::Persist, now) {
            self.on_persist_timeout(now);
        }
        if self.timers.take_due(TimerKind::Pace, now) {
            // Fast start's next burst: `poll_transmit` sends it.
        }
        if self.timers.take_due(TimerKind::FastStartReset, now) {
            self.trace_timer(now, TimerKind::FastStartReset);
            self.on_fast_start_reset_timer(now);
        }
        if self
            .timers
            .get(TimerKind::Retransmission)
            .is_some_and(|t| t <= now)
            && let Some(reset) = self.fast_start_holds_rto()
        {
            self.timers.put(TimerKind::Retransmission, Some(reset));
        }
        if self.timers.take_due(TimerKind::Retransmission, now) {
            self.trace_timer(now, TimerKind::Retransmission);
            self.on_rto(now);
        }
    }
}
