//! Early Retransmit (RFC 5827) with the mitigations of `prr-imc11.txt` §6, as Linux
//! 3.5+ implements them (`tcp_time_to_recover` "Trick #6",
//! `tcp_pause_early_retransmit`, `tcp_resume_early_retransmit`).
//!
//! When fewer than four segments are outstanding and no new data can be sent, the
//! duplicate threshold drops to `outstanding − 1` (RFC 5827 §3.1 and §3.2: with SACK,
//! all but one outstanding segment SACKed; without, that many duplicate ACKs).
//! Mitigation (1): once reordering has been detected on the connection, ER stays off
//! (`er_reorder_disable`). Mitigation (2), `er = delayed`: the early retransmission
//! waits `max(srtt/4, er_delay_min)` (Linux: 2 ms), at most `er_delay_max` when set
//! (the paper's own implementation clamped the wait to [25 ms, 500 ms]), and any ACK
//! arriving in the meantime cancels the wait (and re-evaluates). Without an RTT
//! sample, or when the retransmission timer is due before the wait would end, it
//! retransmits at once. With the tail loss probe on, the
//! variant of `gentle-aggression-sigcomm13.txt` footnote 5 also applies: three
//! segments outstanding and one of them SACKed.

use super::Connection;
use crate::config::EarlyRetransmit;
use crate::time::Instant;
use crate::trace::TimerKind;

/// Early Retransmit's state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ErState {
    /// Turned off for good after reordering was seen (mitigation 1).
    disabled: bool,
}

impl ErState {
    /// Reordering was seen: off for good (mitigation 1).
    pub fn disable(&mut self) {
        self.disabled = true;
    }
}

impl Connection {
    /// RFC 5827's condition: few segments outstanding, all but one of them reported
    /// by SACK or duplicate ACKs, nothing retransmitted, and no new data can go out.
    fn early_retransmit_applies(&self) -> bool {
        let out = self.tx.sb.packets_out();
        self.cfg.er != EarlyRetransmit::Off
            && !self.tx.er.disabled
            && self.tx.sb.retrans_out() == 0
            && self.tx.sb.sacked_out() > 0
            && out < 4
            && (out == self.tx.sb.sacked_out() + 1 || self.tlp_variant_applies())
            && !self.may_send_now()
    }

    /// The variant `gentle-aggression-sigcomm13.txt` footnote 5 proposes with the loss
    /// probe: three segments outstanding and one of them SACKed.
    fn tlp_variant_applies(&self) -> bool {
        self.cfg.tlp && self.tx.sb.packets_out() == 3 && self.tx.sb.sacked_out() == 1
    }

    /// Linux `tcp_may_send_now`: new data waits and cwnd and the peer's window let a
    /// segment of it out.
    fn may_send_now(&self) -> bool {
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        unsent > 0
            && self.tx.sb.pipe() < self.tx.cong.cwnd()
            && self.sws_allows(self.window_room().min(self.opts.smss as u64), unsent)
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
                // Linux `tcp_pause_early_retransmit`: no delay without an RTT sample,
                // nor when the retransmission timer would fire before the delay ends
                // ("unless ... RTO is scheduled to fire first"): retransmit now.
                let Some(srtt) = self.tx.rtt.srtt() else {
                    self.counters.early_retrans += 1;
                    return true;
                };
                let at = now + self.er_delay(srtt);
                if self
                    .timers
                    .asked(TimerKind::Retransmission)
                    .is_some_and(|rto| rto <= at)
                {
                    self.counters.early_retrans += 1;
                    return true;
                }
                self.timers.arm(TimerKind::EarlyRetransmit, now, at);
                false
            }
        }
    }

    /// The wait before a delayed early retransmission: `max(srtt/4, er_delay_min)`
    /// (Linux 3.5–3.10 `tcp_pause_early_retransmit`: `max(srtt >> 5, 2 ms)` on its
    /// ×8 scaled srtt), and at most `er_delay_max` when that is set (the
    /// `prr-imc11.txt` §6 implementation's upper bound of 500 ms).
    fn er_delay(&self, srtt: std::time::Duration) -> std::time::Duration {
        let d = (srtt / 4).max(self.cfg.er_delay_min);
        self.cfg.er_delay_max.map_or(d, |max| d.min(max))
    }

    /// The delayed early retransmission is due (Linux `tcp_resume_early_retransmit`).
    pub(crate) fn on_er_timeout(&mut self, now: Instant) {
        self.trace_timer(now, TimerKind::EarlyRetransmit);
        if self.tx.ca.state() > crate::trace::CaState::Disorder || !self.early_retransmit_applies()
        {
            return;
        }
        self.counters.early_retrans += 1;
        self.counters.early_retrans_delayed += 1;
        let pipe = self.tx.sb.pipe();
        self.start_recovery(now, pipe);
    }
}
