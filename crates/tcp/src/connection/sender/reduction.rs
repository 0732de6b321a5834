//! One path for every change of cwnd that is not growth: Linux's congestion-state
//! machine (`tcp_set_ca_state`) and its reductions — CWR (`tcp_enter_cwr`, for ECN
//! and Corrective's R_SUCC, RFC 3168 §6.1.2), Recovery (`tcp_enter_recovery`, RFC 6675
//! §5, RFC 5681 §3.2), Loss (`tcp_enter_loss`, RFC 5681 §3.1 and RFC 6298 §5.5), the
//! one-step reduction after a loss probe repaired a tail (`tcp_process_tlp_ack`), the
//! end of a reduction (`tcp_end_cwnd_reduction`), the restart after idle (RFC
//! 2861, `tcp_cwnd_restart`), and the one-segment start after a lost SYN or SYN-ACK
//! (RFC 5681 §3.1, `tcp_init_transfer`). The shape of the reduction while it lasts is the
//! recovery algorithm's ([`crate::recovery`]: PRR, rate halving, RFC 6675, RFC 3517).
//!
//! Every other write of the window outside [`crate::cc`] (growth) and
//! [`crate::recovery`] (the shape of a reduction) is here too: fast start's window
//! and its reset (`fast-start-and-sessions.txt` §3.4), the cached ssthresh (RFC 9040
//! §4.3), F-RTO's (RFC 5682 §2.1 steps 2.b and 3.a) and an undo's restoration (Linux
//! `tcp_undo_cwnd_reduction`). Mechanisms that change cwnd — TLP, Corrective, ECN,
//! F-RTO, undo, fast start — call these and nothing else; so does a TCP session,
//! for its restart after idle.

use std::time::Duration;

use super::Connection;
use crate::config::RecoveryAlgorithm;
use crate::recovery::{AckSample, Recovery, RecoveryStart};
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{CaState, Event};

/// The congestion-state machine and the episode it is in.
#[derive(Clone, Debug)]
pub(crate) struct CaMachine {
    /// Open, Disorder, CWR, Recovery or Loss (Linux `icsk_ca_state`).
    state: CaState,
    /// Recovery point (Linux `high_seq`, RFC 6675 `RecoveryPoint`).
    high_seq: u64,
    /// The algorithm that shapes cwnd during a reduction.
    alg: Recovery,
    /// pipe when the current (or last) recovery began, after the loss marking of
    /// its first ACK ([`Self::start_pipe`]).
    start_pipe: u32,
    /// Send the next lost segment even if cwnd is full (fast retransmit on entry,
    /// and the timeout's own retransmission).
    force_retransmit: bool,
    /// The next retransmission in Loss is the timeout's own.
    loss_first_retrans: bool,
    /// The recovery just entered began on fewer than three duplicates (Early
    /// Retransmit, RACK's time-based marking, FACK's head timeout): its first
    /// retransmission is traced as `early`.
    early_entry: bool,
    /// When the sender last entered Recovery or Loss from a state below them.
    recovering_since: Instant,
}

impl CaMachine {
    pub fn new(alg: RecoveryAlgorithm) -> Self {
        CaMachine {
            state: CaState::Open,
            high_seq: 0,
            alg: Recovery::new(alg),
            start_pipe: 0,
            force_retransmit: false,
            loss_first_retrans: false,
            early_entry: false,
            recovering_since: Instant::ZERO,
        }
    }

    /// Open, Disorder, CWR, Recovery or Loss.
    pub fn state(&self) -> CaState {
        self.state
    }
    /// The recovery point (Linux `high_seq`).
    pub fn high_seq(&self) -> u64 {
        self.high_seq
    }
    /// pipe when the current (or last) recovery began: on its first ACK, after that
    /// ACK's loss marking, where PRR first chooses between its proportional and its
    /// slow-start part (`prr-imc11.txt` §5.2, Table 5: the share of recoveries that
    /// "begin operation" in each).
    pub fn start_pipe(&self) -> u32 {
        self.start_pipe
    }
    /// PRR's `(prr_delivered, prr_out)`, with a PRR algorithm.
    pub fn prr_counts(&self) -> Option<(u64, u64)> {
        self.alg.prr_counts()
    }
    /// `n` segments went out during a reduction (the recovery algorithm counts them).
    pub fn on_sent(&mut self, n: u32) {
        self.alg.on_sent(n);
    }
    /// The next lost segment goes even if cwnd is full.
    pub fn force_retransmit(&self) -> bool {
        self.force_retransmit
    }
    /// The timeout's own retransmission goes whatever cwnd says.
    pub fn force_next_retransmit(&mut self) {
        self.force_retransmit = true;
    }
    /// The forced retransmission went, or its ACK is done with.
    pub fn clear_force(&mut self) {
        self.force_retransmit = false;
    }
    /// Whether this retransmission in Loss is the timeout's own (once).
    pub fn take_loss_first(&mut self) -> bool {
        std::mem::take(&mut self.loss_first_retrans)
    }
    /// Whether this is the first retransmission of a recovery entered on fewer than
    /// three duplicates (once).
    pub fn take_early_entry(&mut self) -> bool {
        std::mem::take(&mut self.early_entry)
    }
}

impl Connection {
    pub(crate) fn set_ca(&mut self, now: Instant, to: CaState) {
        if self.tx.ca.state != to {
            let from = self.tx.ca.state;
            self.tx.ca.state = to;
            let recovering = |s| matches!(s, CaState::Recovery | CaState::Loss);
            match (recovering(from), recovering(to)) {
                (false, true) => self.tx.ca.recovering_since = now,
                (true, false) => {
                    let spent = now.saturating_since(self.tx.ca.recovering_since);
                    self.counters.recovery_time_us += spent.as_micros() as u64;
                }
                _ => {}
            }
            let (cwnd, ssthresh, pipe) = (
                self.tx.cong.cwnd(),
                self.tx.cong.ssthresh(),
                self.tx.sb.pipe(),
            );
            self.trace(
                now,
                Event::CaState {
                    from,
                    to,
                    cwnd,
                    ssthresh,
                    pipe,
                },
            );
        }
    }

    /// The recovery algorithm's step for an ACK (or a timer acting as one) during a
    /// reduction.
    pub(super) fn reduction_on_ack(
        &mut self,
        delivered: u32,
        una_advanced: bool,
        newly_lost: bool,
    ) {
        let sample = AckSample {
            pipe: self.tx.sb.pipe(),
            delivered,
            snd_una_advanced: una_advanced,
            newly_lost,
        };
        self.tx.ca.alg.on_ack(self.tx.cong.window_mut(), &sample);
    }

    /// The recovery point is acknowledged: the reduction ends (Linux
    /// `tcp_end_cwnd_reduction`, through the recovery algorithm).
    pub(super) fn end_reduction(&mut self) {
        // Linux 3.7+ `tcp_end_cwnd_reduction`: "Reset cwnd to ssthresh in CWR or
        // Recovery (unless it's undone)" — after an undo there is no marker, and
        // ssthresh may be back at infinity. (Linux 2.6's `tcp_complete_cwr`, rate
        // halving's exit, takes min(cwnd, ssthresh) unconditionally.)
        if self.cfg.recovery == RecoveryAlgorithm::RateHalving
            || self.tx.ca.state == CaState::Cwr
            || (self.tx.undo.armed() && self.tx.cong.ssthresh() < crate::cc::INFINITE_SSTHRESH)
        {
            self.tx.ca.alg.on_exit(self.tx.cong.window_mut());
        }
    }

    /// Linux `tcp_enter_cwr`: reduce cwnd to ssthresh through the recovery
    /// algorithm (PRR in Linux 3.x) while the data in flight is acknowledged.
    pub(crate) fn enter_cwr(&mut self, now: Instant) {
        self.tx.undo.save_ssthresh(0);
        if self.tx.ca.state >= CaState::Cwr {
            return;
        }
        let cwnd = self.tx.cong.cwnd();
        self.tx.undo.on_cwr(cwnd);
        self.ecn_queue_cwr();
        self.tx.cong.set_ssthresh_for_reduction();
        self.tx.ca.high_seq = self.snd.nxt;
        self.tx.cong.reset_cwnd_cnt();
        let pipe = self.tx.sb.pipe();
        let start = RecoveryStart {
            prior_cwnd: self.tx.cong.cwnd(),
            pipe,
            prior_in_flight: pipe,
            flight_size: self.tx.sb.packets_out(),
            cwnd_min: self.tx.cong.min_cwnd(),
        };
        self.set_ca(now, CaState::Cwr);
        self.tx.ca.alg.on_enter(self.tx.cong.window_mut(), &start);
    }

    /// A reduction entered and ended at once: cwnd goes to the new ssthresh (a loss
    /// probe repaired a tail loss, `gentle-aggression-sigcomm13.txt` §4 "Detecting
    /// recovered losses"; Linux `tcp_process_tlp_ack` enters CWR and ends it).
    pub(super) fn reduce_at_once(&mut self) {
        self.tx.cong.set_ssthresh_for_reduction();
        let cwnd = self.tx.cong.cwnd().min(self.tx.cong.ssthresh()).max(1);
        self.tx.cong.set_cwnd(cwnd);
        self.tx.cong.reset_cwnd_cnt();
    }

    pub(crate) fn enter_recovery(&mut self, now: Instant, prior_in_flight: u32) {
        self.counters.recovery_episodes += 1;
        if self.opts.sack {
            self.counters.sack_recovery += 1;
        } else {
            self.counters.reno_recovery += 1;
        }
        let (cwnd, una, retrans_out) =
            (self.tx.cong.cwnd(), self.snd.una, self.tx.sb.retrans_out());
        self.tx.undo.on_recovery(cwnd, una, retrans_out);
        self.ecn_queue_cwr();
        if self.tx.ca.state < CaState::Cwr {
            let ssthresh = self.current_ssthresh();
            self.tx.undo.save_ssthresh(ssthresh);
            self.tx.cong.set_ssthresh_for_reduction();
        }
        self.tx.ca.high_seq = self.snd.nxt;
        self.tx.cong.reset_cwnd_cnt();
        // RFC 5681 §3.2's threshold of three duplicates; `sacked_out` counts SACKed
        // segments, or duplicate ACKs without SACK (Linux `tcp_add_reno_sack`). FACK's
        // entry on the forward-most SACK (`fackets_out` above the reordering degree,
        // Linux `tcp_dupack_heuristics`) is Linux's fast recovery all the same.
        let fack_entry =
            self.tx.loss.fack() && self.tx.sb.fackets_out() > self.tx.loss.reordering();
        self.tx.ca.early_entry = self.tx.sb.sacked_out() < 3 && !fack_entry;
        let start = RecoveryStart {
            prior_cwnd: self.tx.undo.prior_cwnd(),
            pipe: self.tx.sb.pipe(),
            prior_in_flight,
            flight_size: self.tx.sb.packets_out(),
            cwnd_min: self.tx.cong.min_cwnd(),
        };
        self.set_ca(now, CaState::Recovery);
        self.tx.ca.alg.on_enter(self.tx.cong.window_mut(), &start);
        // RFC 6675 §5 (4.3): the first lost segment is retransmitted at once,
        // whatever cwnd and pipe say.
        self.tx.ca.force_retransmit = true;
    }

    /// Enters recovery outside an ACK (the delayed early retransmission), as if an
    /// ACK had delivered nothing new.
    pub(crate) fn start_recovery(&mut self, now: Instant, pipe: u32) {
        self.enter_recovery(now, pipe);
        self.update_scoreboard(true);
        self.first_reduction_on_ack(0, false);
    }

    /// The reduction's first ACK, its losses marked: pipe then is where the
    /// recovery starts from ([`CaMachine::start_pipe`]).
    pub(super) fn first_reduction_on_ack(&mut self, delivered: u32, una_advanced: bool) {
        self.tx.ca.start_pipe = self.tx.sb.pipe();
        self.reduction_on_ack(delivered, una_advanced, true);
    }

    /// Linux `tcp_current_ssthresh`: the ssthresh to restore on undo.
    pub(crate) fn current_ssthresh(&self) -> u32 {
        if self.tx.ca.state >= CaState::Cwr {
            self.tx.cong.ssthresh()
        } else {
            let cwnd = self.tx.cong.cwnd();
            self.tx.cong.ssthresh().max(cwnd / 2 + cwnd / 4)
        }
    }

    /// Linux `tcp_try_to_open`: Disorder while anything is SACKed, lost or
    /// retransmitted, Open otherwise.
    pub(super) fn try_to_open(&mut self, now: Instant) {
        if self.tx.ca.state == CaState::Cwr {
            return;
        }
        if self.tx.sb.sacked_out() + self.tx.sb.lost_out() > 0 || self.tx.sb.any_retrans_done() {
            if self.tx.ca.state != CaState::Disorder {
                // Linux `tcp_try_keep_open`: Disorder lasts until snd.nxt is acknowledged.
                self.tx.ca.high_seq = self.snd.nxt;
            }
            self.set_ca(now, CaState::Disorder);
        } else {
            self.set_ca(now, CaState::Open);
            if self.tx.sb.retrans_out() == 0 {
                self.tx.undo.clear_stamp();
            }
        }
    }

    /// Linux `tcp_enter_loss` with RFC 5682 F-RTO.
    pub(super) fn enter_loss(&mut self, now: Instant) {
        self.counters.timeouts += 1;
        self.fast_start_end();
        self.tx.tlp.end_episode();
        self.timers.put(TimerKind::LossProbe, None);
        match self.tx.ca.state {
            CaState::Open => self.counters.timeouts_open += 1,
            CaState::Disorder => self.counters.timeouts_disorder += 1,
            CaState::Cwr => self.counters.timeouts_cwr += 1,
            CaState::Recovery => self.counters.timeouts_recovery += 1,
            CaState::Loss => self.counters.timeouts_loss += 1,
        }
        let first_timeout = self.tx.ca.state != CaState::Loss;
        if self.tx.ca.state <= CaState::Disorder
            || self.snd.una == self.tx.ca.high_seq
            || (self.tx.ca.state == CaState::Loss && self.tx.rtt.retransmits() == 0)
        {
            let (cwnd, ssthresh) = (self.tx.cong.cwnd(), self.current_ssthresh());
            self.tx.undo.save(cwnd, ssthresh);
            self.tx.cong.set_ssthresh_for_reduction();
        }
        self.tx.cong.on_timeout();
        self.ecn_queue_cwr();
        self.tx.cong.set_cwnd(1);
        self.tx.cong.reset_cwnd_cnt();
        if !self.opts.sack {
            self.tx.sb.reset_reno_dupacks();
        }
        // "Push undo marker, if it was plain RTO and nothing was retransmitted."
        let marker = if self.tx.sb.any_ever_retrans() {
            None
        } else {
            Some(self.snd.una)
        };
        self.tx.undo.on_loss(marker);
        self.tx.ca.high_seq = self.snd.nxt;
        self.tx.ca.loss_first_retrans = true;
        self.tx.ca.early_entry = false;
        self.tx.loss.cap_reordering(self.cfg.dupthresh);
        self.frto_on_timeout(first_timeout);
        self.set_ca(now, CaState::Loss);
        self.tx.undo.clear_stamp();
    }

    /// RFC 2861 / Linux `tcp_cwnd_restart`: after an idle period longer than the RTO,
    /// halve cwnd per RTO elapsed, down to the initial window — or, with
    /// `fast_start`, restart from the last window that went through
    /// ([`super::fast_start`]). A connection given cached path state starts its
    /// first data the same way.
    pub(super) fn restart_after_idle(&mut self, now: Instant) {
        if self.tx.fast_start.has_cached() && self.snd.nxt <= 1 {
            self.fast_start_from_cache(now);
            return;
        }
        if !self.tx.sb.is_empty() || self.snd.nxt <= 1 {
            return;
        }
        let idle = now - self.snd.last_data_sent;
        let rto = self.tx.rtt.rto();
        if idle <= rto || self.tx.ca.state != CaState::Open {
            return;
        }
        let mut cwnd = self.tx.cong.cwnd();
        if self.cfg.slow_start_after_idle {
            cwnd = decayed_cwnd(cwnd, self.cfg.initial_window.min(cwnd), idle, rto);
        }
        let (old, ssthresh) = (self.tx.cong.cwnd(), self.tx.cong.ssthresh());
        if self.cfg.fast_start && self.fast_start_begin(now, old, ssthresh, cwnd) {
            return;
        }
        if self.cfg.slow_start_after_idle {
            let ssthresh = self.current_ssthresh();
            self.tx.cong.set_window(cwnd, ssthresh);
        }
    }

    /// A fast start begins with window `cwnd` and the `ssthresh` in force
    /// ([`super::fast_start`]).
    pub(super) fn fast_start_window(&mut self, cwnd: u32, ssthresh: u32) {
        self.tx.cong.set_window(cwnd, ssthresh);
    }

    /// ssthresh from path state an earlier connection left (RFC 9040 §4.3, Linux
    /// `tcp_init_metrics`, capped at the window clamp).
    pub(super) fn use_cached_ssthresh(&mut self, ssthresh: u32) {
        self.tx
            .cong
            .set_ssthresh(ssthresh.min(crate::cc::CWND_CLAMP));
    }

    /// F-RTO (2.b): room for up to two new segments (RFC 5682 §2.1).
    pub(super) fn frto_window_for_two(&mut self) {
        self.tx.cong.set_cwnd(self.tx.sb.pipe() + 2);
    }

    /// F-RTO (3.a): conventional recovery with cwnd at most 3 segments.
    pub(super) fn frto_fallback_window(&mut self) {
        self.tx.cong.set_cwnd(self.tx.cong.cwnd().min(3));
    }

    /// An undo restores the window from before the reduction (Linux
    /// `tcp_undo_cwnd_reduction`): cwnd and ssthresh at least what they were, or,
    /// with no ssthresh saved, cwnd at least ssthresh.
    pub(super) fn restore_window(&mut self) {
        if self.tx.undo.prior_ssthresh() > 0 {
            let cwnd = self.tx.cong.cwnd().max(self.tx.undo.prior_cwnd());
            let ssthresh = self.tx.cong.ssthresh().max(self.tx.undo.prior_ssthresh());
            self.tx.cong.set_cwnd(cwnd);
            self.tx.cong.set_ssthresh(ssthresh);
        } else {
            let cwnd = self.tx.cong.cwnd().max(self.tx.cong.ssthresh());
            self.tx.cong.set_cwnd(cwnd);
        }
    }

    /// The transfer starts with a window of one segment: the handshake lost a SYN or
    /// SYN-ACK ([`crate::connection`]'s `syn_loss`; RFC 5681 §3.1, Linux `tcp_init_transfer`).
    pub(crate) fn start_with_one_segment(&mut self) {
        self.tx.cong.set_cwnd(1);
        self.tx.cong.reset_cwnd_cnt();
    }

    /// A failed fast start (`fast-start-and-sessions.txt` §3.4.4, §7.1): back to
    /// the state a normal restart would have had — cwnd the restart window, the
    /// saved ssthresh, slow start — without a timeout's penalties: no RTO back-off,
    /// no change to ssthresh from this loss, SACK information kept. Everything
    /// neither acknowledged nor SACKed is marked lost and resent in slow start.
    pub(super) fn fast_start_reset(&mut self, now: Instant) {
        let Some(p) = self.tx.fast_start.phase() else {
            return;
        };
        self.fast_start_end();
        let partial_ack = self.tx.ca.state == CaState::Recovery;
        self.tx.tlp.end_episode();
        self.timers.put(TimerKind::LossProbe, None);
        self.tx.undo.disarm();
        self.tx
            .cong
            .set_window(p.fallback().restart_cwnd, p.fallback().saved_ssthresh);
        if !self.opts.sack {
            self.tx.sb.reset_reno_dupacks();
        }
        self.tx.sb.mark_all_lost(true);
        self.tx.frto = super::Frto::Off;
        self.tx.ca.high_seq = self.snd.nxt;
        self.tx.ca.loss_first_retrans = false;
        self.set_ca(now, CaState::Loss);
        self.tx.undo.clear_stamp();
        self.timers.arm(
            TimerKind::Retransmission,
            now,
            now + self.tx.rtt.rto_backed_off(),
        );
        self.trace(
            now,
            Event::FastStartReset {
                partial_ack,
                cwnd: p.fallback().restart_cwnd,
                ssthresh: p.fallback().saved_ssthresh,
            },
        );
    }
}

/// RFC 2861 §3 (Linux `tcp_cwnd_restart`): the window after `idle`, halved for
/// every RTO elapsed and not below `restart`. Connections and TCP sessions restart
/// by it.
pub(crate) fn decayed_cwnd(mut cwnd: u32, restart: u32, idle: Duration, rto: Duration) -> u32 {
    let mut d = idle;
    while d > rto && cwnd > restart {
        cwnd >>= 1;
        d -= rto;
    }
    cwnd.max(restart)
}
