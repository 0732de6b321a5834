//! The retransmission timer's expiry (RFC 6298 §5.4–5.7, with Linux's
//! `tcp_retransmit_timer`): SYN retransmission with back-off from the 1 s initial
//! RTO (RFC 6298 §2.1, §5.5), counted as Linux counts it, and for data
//! `tcp_enter_loss` ([`super::reduction`]) with F-RTO (RFC 5682), the abort after `max_retries` (RFC 9293 §3.8.3 R2), and the
//! timer armed again, backed off.

use std::time::Duration;

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::{CaState, Event, State, TimerKind};

/// The timer after a user timeout has passed: Linux's one jiffy, at `HZ` 1000.
const USER_TIMEOUT_TICK: Duration = Duration::from_millis(1);

impl Connection {
    pub(crate) fn on_rto(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                // Every expiry counts in `SynTimeouts`; a SYN-ACK's the last one too
                // (`tcp_syn_ack_timeout`). Linux counts a SYN-ACK's in `TCPTimeouts`,
                // the MIB that holds its timeouts in Open, which `prr-imc11.txt`
                // Table 2 and `gentle-aggression-sigcomm13.txt` Table 4 read (the
                // former's footnote 2 finds them "particularly odd"); gentle keeps
                // them apart so that `TCPTimeouts` stays the timeouts of data.
                let synack = self.state == State::SynReceived;
                if synack {
                    self.counters.syn_timeouts += 1;
                }
                if self.ctl.syn_retries >= self.cfg.syn_retries {
                    self.counters.aborts += 1;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                if !synack {
                    self.counters.syn_timeouts += 1;
                }
                self.ctl.syn_retries += 1;
                self.ctl.syn_resent += 1;
                self.ctl.syn_retransmitted = true;
                self.counters.syn_retrans += 1;
                self.counters.retrans_segs += 1;
                self.ctl.syn_pending = true;
                self.tx.rtt.add_backoff();
                self.arm_rto(now);
            }
            State::Closed | State::TimeWait => {}
            _ => {
                if self.tx.sb.is_empty() {
                    return; // nothing outstanding: spurious
                }
                if self.user_timeout_left(now) == Some(Duration::ZERO) {
                    // Linux `tcp_write_err`: the connection ends without a reset.
                    self.counters.aborts += 1;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                if self.ctl.user_timeout.is_none()
                    && self.tx.rtt.retransmits() >= self.cfg.max_retries
                {
                    self.counters.aborts += 1;
                    self.ctl.rst_pending = true;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                if self.tx.ca.state() != CaState::Loss {
                    self.count_rto_over_srtt();
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

    /// What is left of `TCP_USER_TIMEOUT` since the first retransmission of the
    /// data outstanding (Linux `retransmits_timed_out` with a user timeout, from
    /// `retrans_stamp`); none without a user timeout or before a retransmission.
    fn user_timeout_left(&self, now: Instant) -> Option<Duration> {
        let (limit, start) = (self.ctl.user_timeout?, self.ctl.retrans_stamp?);
        Some(limit.saturating_sub(now.saturating_since(start)))
    }

    /// A loss episode's first timeout: its RTO against the smoothed RTT, as
    /// `gentle-aggression-sigcomm13.txt` Figure 2 measured them (the thresholds are
    /// the figure's median and 99th percentile).
    fn count_rto_over_srtt(&mut self) {
        let Some(srtt) = self.tx.rtt.srtt().filter(|s| !s.is_zero()) else {
            return;
        };
        let rto = self.tx.rtt.rto_backed_off();
        if rto > srtt * 6 {
            self.counters.rto_over_6_srtt += 1;
        }
        if rto > srtt * 200 {
            self.counters.rto_over_200_srtt += 1;
        }
    }

    pub(crate) fn arm_rto(&mut self, now: Instant) {
        let mut rto = self.tx.rtt.rto_backed_off();
        // Linux `tcp_clamp_rto_to_user_timeout`: never past the user timeout (at
        // once, one jiffy, if it has passed).
        if let Some(left) = self.user_timeout_left(now) {
            rto = rto.min(left.max(USER_TIMEOUT_TICK));
        }
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
