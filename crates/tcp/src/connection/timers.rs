//! Timers: the retransmission timer (RFC 6298 §5, with Linux's `tcp_enter_loss`
//! and F-RTO, RFC 5682), SYN retransmission with back-off from the 1 s initial RTO
//! (RFC 6298 §2.1, §5.5), the delayed-ACK timer, and TIME-WAIT.

use super::timer_table::Timer;
use super::{CloseReason, Connection, Frto};
use crate::time::Instant;
use crate::trace::{CaState, Event, State, TimerKind};

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
        if self.timers.get(Timer::DelayedAck).is_some_and(|t| t <= now) {
            self.on_delack_timeout(now);
        }
        if self.timers.take_due(Timer::TimeWait, now) {
            self.trace(
                now,
                Event::Timer {
                    timer: TimerKind::TimeWait,
                },
            );
            self.enter_closed(now, CloseReason::Normal);
        }
        if self.timers.take_due(Timer::LossProbe, now) {
            self.on_pto(now);
        }
        if self.timers.get(Timer::Reorder).is_some_and(|t| t <= now) {
            self.on_rack_timeout(now);
        }
        if self.timers.take_due(Timer::EarlyRetransmit, now) {
            self.on_er_timeout(now);
        }
        if self.timers.take_due(Timer::Persist, now) {
            self.on_persist_timeout(now);
        }
        if self.timers.take_due(Timer::Rto, now) {
            self.trace(
                now,
                Event::Timer {
                    timer: TimerKind::Retransmission,
                },
            );
            self.on_rto(now);
        }
    }

    fn on_rto(&mut self, now: Instant) {
        match self.state {
            State::SynSent | State::SynReceived => {
                if self.syn_retries >= self.cfg.syn_retries {
                    self.counters.aborts += 1;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                self.syn_retries += 1;
                self.syn_retransmitted = true;
                self.counters.syn_retrans += 1;
                self.syn_pending = true;
                self.backoff += 1;
                self.arm_rto(now);
            }
            State::Closed | State::TimeWait => {}
            _ => {
                if self.sb.is_empty() {
                    return; // nothing outstanding: spurious
                }
                if self.retransmits >= self.cfg.max_retries {
                    self.counters.aborts += 1;
                    self.rst_pending = true;
                    self.enter_closed(now, CloseReason::TimedOut);
                    return;
                }
                self.enter_loss(now);
                // Linux `tcp_retransmit_timer` retransmits the head whatever cwnd and
                // pipe say; what follows obeys cwnd.
                self.force_retransmit = true;
                self.backoff += 1;
                self.retransmits += 1;
                self.arm_rto(now);
            }
        }
    }

    fn arm_rto(&mut self, now: Instant) {
        let rto = self.rtt.rto_backed_off(self.backoff);
        self.timers.put(Timer::Rto, Some(now + rto));
        self.trace(
            now,
            Event::Rto {
                rto_ms: rto.as_secs_f64() * 1e3,
                backoff: self.backoff,
            },
        );
    }

    /// Linux `tcp_enter_loss` with RFC 5682 F-RTO.
    fn enter_loss(&mut self, now: Instant) {
        self.counters.timeouts += 1;
        self.tlp_episode = None;
        self.timers.put(Timer::LossProbe, None);
        match self.ca {
            CaState::Open => self.counters.timeouts_open += 1,
            CaState::Disorder => self.counters.timeouts_disorder += 1,
            CaState::Cwr => self.counters.timeouts_cwr += 1,
            CaState::Recovery => self.counters.timeouts_recovery += 1,
            CaState::Loss => self.counters.timeouts_loss += 1,
        }
        let first_timeout = self.ca != CaState::Loss;
        if self.ca <= CaState::Disorder
            || self.snd_una == self.high_seq
            || (self.ca == CaState::Loss && self.retransmits == 0)
        {
            self.prior_ssthresh = self.current_ssthresh();
            self.prior_cwnd = self.w.cwnd;
            self.w.ssthresh = self.cc.ssthresh(&self.w);
        }
        self.cc.on_timeout();
        self.w.cwnd = 1;
        self.w.cwnd_cnt = 0;
        if !self.sack_ok {
            self.sb.reset_reno_dupacks();
        }
        // "Push undo marker, if it was plain RTO and nothing was retransmitted."
        self.undo_marker = if self.sb.any_ever_retrans() {
            None
        } else {
            Some(self.snd_una)
        };
        self.undo_retrans = 0;
        self.high_seq = self.snd_nxt;
        self.loss_first_retrans = true;
        self.reordering = self.reordering.min(self.cfg.dupthresh);
        let use_frto = self.cfg.frto && first_timeout && self.undo_marker.is_some();
        if use_frto {
            // RFC 5682 step 1: retransmit only the first unacknowledged segment.
            self.frto = Frto::AwaitFirst;
            self.sb.clear_retrans_and_lost();
            let high = self.high_seq;
            self.sb.mark_head_lost(1, true, true, high);
        } else {
            self.frto = Frto::Off;
            self.sb.mark_all_lost(true);
        }
        self.set_ca(now, CaState::Loss);
        self.retrans_stamp = None;
    }
}
