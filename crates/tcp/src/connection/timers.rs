//! Timers: the retransmission timer (RFC 6298 §5, with Linux's `tcp_enter_loss`
//! and F-RTO, RFC 5682), SYN retransmission with back-off from the 1 s initial RTO
//! (RFC 6298 §2.1, §5.5), the delayed-ACK timer, and TIME-WAIT.

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::{Event, State, TimerKind};

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

    fn on_rto(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.ctl.syn_retries >= self.cfg.syn_retries {
                    self.counters.aborts += 1;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                self.ctl.syn_retries += 1;
                self.ctl.syn_resent += 1;
                self.ctl.syn_retransmitted = true;
                self.counters.syn_retrans += 1;
                self.ctl.syn_pending = true;
                self.tx.rtt.add_backoff();
                self.arm_rto(now);
            }
            State::Closed | State::TimeWait => {}
            _ => {
                if self.tx.sb.is_empty() {
                    return; // nothing outstanding: spurious
                }
                if self.tx.rtt.retransmits() >= self.cfg.max_retries {
                    self.counters.aborts += 1;
                    self.ctl.rst_pending = true;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                self.enter_loss(now);
                // Linux `tcp_retransmit_timer` retransmits the head whatever cwnd and
                // pipe say; what follows obeys cwnd.
                self.tx.ca.force_next_retransmit();
                self.tx.rtt.add_backoff();
                self.tx.rtt.add_retransmit();
                self.arm_rto(now);
            }
        }
    }

    fn arm_rto(&mut self, now: Instant) {
        let rto = self.tx.rtt.rto_backed_off();
        self.timers.put(TimerKind::Retransmission, Some(now + rto));
        self.trace(
            now,
            Event::Rto {
                rto_ms: rto.as_secs_f64() * 1e3,
                backoff: self.tx.rtt.backoff(),
            },
        );
    }
}
