//! Early Retransmit (RFC 5827) with the mitigations of `prr-imc11.txt` §6, as Linux
//! 3.5+ implements them (`tcp_time_to_recover` "Trick #6",
//! `tcp_pause_early_retransmit`, `tcp_resume_early_retransmit`).
//!
//! When fewer than four segments are outstanding and no new data can be sent, the
//! duplicate threshold drops to `outstanding − 1` (RFC 5827 §3.1 and §3.2: with SACK,
//! all but one outstanding segment SACKed; without, that many duplicate ACKs).
//! Mitigation (1): once reordering has been detected on the connection, ER stays off
//! (`er_reorder_disable`). Mitigation (2), `er = delayed`: the early retransmission
//! waits `srtt/4` clamped to `[er_delay_min, er_delay_max]`, and any ACK arriving in
//! the meantime cancels the wait (and re-evaluates). With the tail loss probe on, the
//! variant of `gentle-aggression-sigcomm13.txt` footnote 5 also applies: three
//! segments outstanding and one of them SACKed.

use super::Connection;
use crate::config::EarlyRetransmit;
use crate::time::Instant;
use crate::trace::{Event, TimerKind};

impl Connection {
    /// RFC 5827's condition: few segments outstanding, all but one of them reported
    /// by SACK or duplicate ACKs, nothing retransmitted, and no new data can go out.
    fn early_retransmit_applies(&self) -> bool {
        let out = self.sb.packets_out();
        self.cfg.er != EarlyRetransmit::Off
            && !self.er_disabled
            && self.sb.retrans_out == 0
            && self.sb.sacked_out > 0
            && out < 4
            && (out == self.sb.sacked_out + 1 || self.tlp_variant_applies())
            && !self.may_send_now()
    }

    /// The variant `gentle-aggression-sigcomm13.txt` footnote 5 proposes with the loss
    /// probe: three segments outstanding and one of them SACKed.
    fn tlp_variant_applies(&self) -> bool {
        self.cfg.tlp && self.sb.packets_out() == 3 && self.sb.sacked_out == 1
    }

    /// Linux `tcp_may_send_now`: new data waits and cwnd and the peer's window let a
    /// segment of it out.
    fn may_send_now(&self) -> bool {
        let unsent = self.sendbuf.end().saturating_sub(self.snd_nxt);
        unsent > 0
            && self.sb.pipe() < self.w.cwnd
            && self.sws_allows(self.window_room().min(self.smss as u64), unsent)
    }

    /// Called when the regular duplicate threshold is not reached: returns true if
    /// early retransmit enters recovery now; with `er = delayed` it may arm the ER
    /// timer instead.
    pub(crate) fn early_retransmit_due(&mut self, now: Instant) -> bool {
        if !self.early_retransmit_applies() {
            return false;
        }
        match self.cfg.er {
            EarlyRetransmit::Off => false,
            EarlyRetransmit::On => {
                self.counters.early_retrans += 1;
                true
            }
            EarlyRetransmit::Delayed => {
                let Some(srtt) = self.rtt.srtt() else {
                    // Linux: no RTT sample, no delay.
                    self.counters.early_retrans += 1;
                    return true;
                };
                let delay = (srtt / 4).clamp(self.cfg.er_delay_min, self.cfg.er_delay_max);
                let at = now + delay;
                if self.t_rto.is_some_and(|rto| rto <= at) {
                    return false; // the RTO fires first anyway
                }
                self.t_er = Some(at);
                false
            }
        }
    }

    /// The delayed early retransmission is due (Linux `tcp_resume_early_retransmit`).
    pub(crate) fn on_er_timeout(&mut self, now: Instant) {
        self.trace(
            now,
            Event::Timer {
                timer: TimerKind::EarlyRetransmit,
            },
        );
        if self.ca > crate::trace::CaState::Disorder || !self.early_retransmit_applies() {
            return;
        }
        self.counters.early_retrans += 1;
        self.counters.early_retrans_delayed += 1;
        let pipe = self.sb.pipe();
        self.start_recovery(now, pipe);
    }
}
