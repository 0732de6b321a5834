//! The retransmission timer's expiry (RFC 6298 §5.4–5.7, with Linux's
//! `tcp_retransmit_timer`): SYN retransmission with back-off from the 1 s initial
//! RTO (RFC 6298 §2.1, §5.5), and for data `tcp_enter_loss` ([`super::reduction`])
//! with F-RTO (RFC 5682), the abort after `max_retries` (RFC 9293 §3.8.3 R2), and the
//! timer armed again, backed off.

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::{Event, State, TimerKind};

impl Connection {
    pub(crate) fn on_rto(&mut self, now: Instant) {
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

    pub(crate) fn arm_rto(&mut self, now: Instant) {
        let rto = self.tx.rtt.rto_backed_off();
        self.timers.arm(TimerKind::Retransmission, now, now + rto);
        self.trace(
            now,
            Event::Rto {
                rto_ms: rto.as_secs_f64() * 1e3,
                backoff: self.tx.rtt.backoff(),
            },
        );
    }
}
