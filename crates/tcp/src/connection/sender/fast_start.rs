//! TCP fast start, `fast-start-and-sessions.txt` §3.4 (the end-host algorithm) and
//! §7.1 (its BSD/OS implementation):
//!
//! - **Initiation** (§3.4.1, §7.1): when data is sent after an idle period longer
//!   than the RTO, cwnd restarts at the last window that went through without loss
//!   — half the old cwnd after slow start, the old cwnd less one segment after
//!   congestion avoidance — instead of the restart window of slow start. ssthresh,
//!   srtt and rttvar are kept (§3.4.2); the ssthresh in force is saved.
//! - **Marking** (§3.3, §7.1): new data in `(snd.nxt + restart window, snd.nxt +
//!   cwnd)` — past what a normal restart would have sent anyway — carries the fast
//!   start bit, [`Flags::FAST_START`], low priority at routers with priority drop.
//! - **Pacing** (§3.4.3, §7.1): until the first ACK of new data brings the ACK clock
//!   back, at most `maxburst` segments leave per `maxburst · srtt / cwnd`.
//! - **Failed fast start** (§3.4.4, §7.1): a reset timer of `srtt + 4·rttvar` from
//!   the fine-grained estimates, checked at the granularity of the fast TCP timer,
//!   stands in for the retransmission timer while fast-start packets are
//!   outstanding (a timeout due earlier waits for it). If it fires with fast-start
//!   packets still outstanding (§7.1; §3.4.4 says the earliest unacknowledged
//!   one), the sender resets to what slow start would have done: cwnd the restart window,
//!   ssthresh the saved value, no RTO back-off, SACK information kept; so are data
//!   the peer has (the reset marks lost only what is neither acknowledged nor
//!   SACKed). Without SACK, a partial new ACK in fast recovery during fast start
//!   aborts it the same way. Each technique is a switch.
//! - **Cached state** (§3.2): [`PathMetrics`] carries cwnd, ssthresh, srtt and rttvar
//!   from one connection to the next to the same host, as Linux's `tcp_metrics`
//!   does; a connection given them starts its first data with a fast start.
//!
//! Retransmissions are never marked: after a reset the connection is a standard
//! slow-starting one (§3.4.4, "as close as possible to the case where the connection
//! just did standard slow start").

use std::time::Duration;

use super::Connection;
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{CaState, Event};
use crate::wire::{Flags, Segment};

/// What a connection learned about its path, for later connections to the same
/// destination (`fast-start-and-sessions.txt` §3.2: "The cached information includes
/// the congestion window size (cwnd), the slow start threshold (ssthresh), and the
/// smoothed round-trip (srtt) time and its variance (rttvar)"; Linux `tcp_metrics`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathMetrics {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// Smoothed RTT.
    pub srtt: Duration,
    /// RTT mean deviation (RFC 6298 RTTVAR).
    pub rttvar: Duration,
}

/// One fast start attempt.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Phase {
    /// Data at or past this offset is marked (BSD/OS `fs_startseq`) ...
    mark_from: u64,
    /// ... up to this one (`fs_endseq`).
    mark_to: u64,
    /// What a failed attempt goes back to.
    fallback: Fallback,
    /// No ACK of new data yet: sends are paced.
    pacing: bool,
    burst_start: Instant,
    burst_sent: u32,
    /// `maxburst · srtt / cwnd`.
    spacing: Duration,
}

/// What a failed fast start goes back to (§3.4.4 "Slow start without penalty"):
/// the window a normal restart would have used and the ssthresh from before the
/// fast start. Connections and TCP sessions keep one per attempt.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fallback {
    /// The window a normal restart would have used.
    pub restart_cwnd: u32,
    /// ssthresh when the attempt began.
    pub saved_ssthresh: u32,
}

/// The window a fast start restarts with, from the last window `cwnd` and its
/// `ssthresh` (§3.4.2; §7.1: "either half the old cwnd (if old cwnd < ssthresh) or
/// cwnd minus maxseg (if old cwnd > ssthresh)"): after slow start the last window
/// was doubled within its last round trip, so half of it went through; after
/// congestion avoidance, all but the last increment. Connections and TCP sessions
/// start by it.
pub(crate) fn fast_start_cwnd(cwnd: u32, ssthresh: u32) -> u32 {
    if cwnd < ssthresh { cwnd / 2 } else { cwnd - 1 }
}

/// A connection's fast start state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FastStart {
    phase: Option<Phase>,
    /// Path state handed over from an earlier connection, used at the first send.
    cached: Option<PathMetrics>,
}

impl FastStart {
    /// An attempt is under way.
    pub fn active(&self) -> bool {
        self.phase.is_some()
    }
    /// The attempt under way.
    pub fn phase(&self) -> Option<Phase> {
        self.phase
    }
    /// The attempt is dropped (the connection joined a session).
    pub fn cancel(&mut self) {
        self.phase = None;
    }
    /// Path state from an earlier connection waits for the first send.
    pub fn has_cached(&self) -> bool {
        self.cached.is_some()
    }
}

impl Phase {
    /// What a failed attempt goes back to.
    pub fn fallback(&self) -> Fallback {
        self.fallback
    }
}

impl Connection {
    /// What this connection knows of its path now, once it has an RTT sample.
    pub fn path_metrics(&self) -> Option<PathMetrics> {
        Some(PathMetrics {
            cwnd: self.tx.cong.cwnd(),
            ssthresh: self.tx.cong.ssthresh(),
            srtt: self.tx.rtt.srtt()?,
            rttvar: self.tx.rtt.rttvar()?,
        })
    }

    /// Starts from path state an earlier connection to the same destination left
    /// (Linux `tcp_init_metrics`): the RTT estimate seeds the estimator when the
    /// handshake gave none; with `temporal_sharing` ssthresh is the cached one (RFC
    /// 9040 §4.3); and with `fast_start` the first data goes out as a fast start
    /// from the cached window. Call it right after the constructor.
    pub fn use_path_metrics(&mut self, m: PathMetrics) {
        self.tx.rtt.seed(m.srtt, m.rttvar);
        if self.cfg.temporal_sharing {
            // RFC 9040 §4.3: "TCB.ssthresh = cached ssthresh" (Linux
            // `tcp_init_metrics`, capped at the window clamp).
            self.use_cached_ssthresh(m.ssthresh);
        }
        if self.cfg.fast_start {
            self.tx.fast_start.cached = Some(m);
        }
    }

    /// A fast start is under way.
    pub fn in_fast_start(&self) -> bool {
        self.tx.fast_start.phase.is_some()
    }

    /// Data is about to be sent after an idle period longer than the RTO whose
    /// normal restart window is `restart`: begins a fast start from `cwnd` and
    /// `ssthresh` (this connection's, or cached ones). Returns false when fast start
    /// would send no more than the restart, or there is no RTT estimate to pace by.
    pub(super) fn fast_start_begin(
        &mut self,
        now: Instant,
        cwnd: u32,
        ssthresh: u32,
        restart: u32,
    ) -> bool {
        let Some(srtt) = self.tx.rtt.srtt() else {
            return false;
        };
        let fs_cwnd = fast_start_cwnd(cwnd, ssthresh);
        if fs_cwnd <= restart {
            return false;
        }
        let smss = self.opts.smss as u64;
        let nxt = self.snd.nxt;
        let maxburst = self.cfg.fast_start_maxburst;
        self.tx.fast_start.phase = Some(Phase {
            mark_from: nxt + restart as u64 * smss,
            mark_to: nxt + fs_cwnd as u64 * smss,
            fallback: Fallback {
                restart_cwnd: restart,
                saved_ssthresh: ssthresh,
            },
            pacing: true,
            burst_start: now,
            burst_sent: 0,
            spacing: srtt * maxburst / fs_cwnd,
        });
        self.fast_start_window(fs_cwnd, ssthresh);
        self.counters.fast_start += 1;
        self.trace(
            now,
            Event::FastStart {
                cwnd: fs_cwnd,
                restart,
            },
        );
        true
    }

    /// The first data of a connection given cached path state (§3.2).
    pub(super) fn fast_start_from_cache(&mut self, now: Instant) {
        let Some(m) = self.tx.fast_start.cached.take() else {
            return;
        };
        let restart = self.cfg.initial_window.min(m.cwnd);
        self.fast_start_begin(now, m.cwnd, m.ssthresh, restart);
    }

    /// Pacing (§3.4.3): whether a new segment may leave now; if not, the pacing
    /// timer is set for the next burst.
    pub(super) fn fast_start_may_send(&mut self, now: Instant) -> bool {
        let maxburst = self.cfg.fast_start_maxburst;
        let Some(p) = self.tx.fast_start.phase.as_mut() else {
            return true;
        };
        if !p.pacing || p.burst_sent < maxburst {
            return true;
        }
        let next = p.burst_start + p.spacing;
        if now >= next {
            p.burst_start = now;
            p.burst_sent = 0;
            return true;
        }
        self.timers.put(TimerKind::Pace, Some(next));
        false
    }

    /// New data `[start, ..)` goes out in segment `s` during a fast start: mark it
    /// if it lies in the fast start range, count it toward the burst, and start the
    /// reset timer.
    pub(super) fn fast_start_on_send(&mut self, now: Instant, start: u64, s: &mut Segment) {
        let mark = self.cfg.fast_start_mark;
        let Some(p) = self.tx.fast_start.phase.as_mut() else {
            return;
        };
        if p.pacing {
            p.burst_sent += 1;
        }
        if start >= p.mark_from && start < p.mark_to {
            if mark {
                s.flags.insert(Flags::FAST_START);
            }
            self.counters.fast_start_segs += 1;
            if self.cfg.fast_start_reset_timer && !self.timers.is_set(TimerKind::FastStartReset) {
                self.arm_fast_start_reset(now);
            }
        }
    }

    /// When the reset timer would fire from `now`: `srtt + 4·rttvar` (§3.4.4 fn. 5),
    /// at the next tick of the fast TCP timer (§7.1: "tied to the fast TCP timer
    /// (200 ms period, typically)").
    fn arm_fast_start_reset(&mut self, now: Instant) {
        let Some(t) = self.tx.rtt.fine_rto() else {
            return;
        };
        let mut at = (now + t).as_nanos();
        if let Some(tick) = self.cfg.fast_start_tick {
            let tick = tick.as_nanos() as u64;
            at = at.div_ceil(tick) * tick;
        }
        self.timers
            .put(TimerKind::FastStartReset, Some(Instant::from_nanos(at)));
    }

    /// An ACK advanced snd.una: the ACK clock is back (pacing ends), and the attempt
    /// is over once every fast-start segment is acknowledged.
    pub(super) fn fast_start_on_ack(&mut self, now: Instant) {
        let Some(p) = self.tx.fast_start.phase.as_mut() else {
            return;
        };
        p.pacing = false;
        self.timers.put(TimerKind::Pace, None);
        if self.snd.una >= p.mark_to {
            self.tx.fast_start.phase = None;
            self.timers.put(TimerKind::FastStartReset, None);
        } else if self.timers.is_set(TimerKind::FastStartReset) {
            self.arm_fast_start_reset(now);
        }
    }

    /// The reset timer fired (§7.1: "If the reset timer expires while fast start
    /// packets are still outstanding, the sender immediately resets its state"):
    /// reset without penalty (or, with `fast_start_no_penalty` off, time out as the
    /// retransmission timer would); otherwise the retransmission timer takes over.
    pub(crate) fn on_fast_start_reset_timer(&mut self, now: Instant) {
        let Some(p) = self.tx.fast_start.phase else {
            return;
        };
        // §7.1: any fast-start packet outstanding; §3.4.4: the earliest
        // unacknowledged packet is one (`fast_start_reset_head`).
        let marked_out = if self.cfg.fast_start_reset_head {
            self.snd.una >= p.mark_from
        } else {
            self.snd.nxt > p.mark_from
        };
        let outstanding = !self.tx.sb.is_empty() && self.snd.una < p.mark_to && marked_out;
        if !outstanding || self.tx.ca.state() == CaState::Loss {
            return;
        }
        if self.cfg.fast_start_no_penalty {
            self.counters.fast_start_resets += 1;
            self.fast_start_reset(now);
        } else {
            self.tx.fast_start.phase = None;
            self.timers.put(TimerKind::Retransmission, Some(now));
        }
    }

    /// A partial new ACK in fast recovery without SACK during fast start (§3.4.4
    /// "Recovery from multiple losses"): abort to slow start without penalty.
    /// Returns true if it did.
    pub(super) fn fast_start_partial_ack(&mut self, now: Instant) -> bool {
        if self.tx.fast_start.phase.is_none()
            || !self.cfg.fast_start_partial_abort
            || self.opts.sack
            || self.snd.una >= self.tx.ca.high_seq()
        {
            return false;
        }
        self.counters.fast_start_aborts += 1;
        self.fast_start_reset(now);
        true
    }

    /// While the reset timer runs it stands in for the retransmission timer (§7.1:
    /// "the TCP sender enables the fast start reset timer instead of the standard
    /// retransmit timer"): a retransmission timeout due before it waits for it.
    pub(crate) fn fast_start_holds_rto(&self) -> Option<Instant> {
        self.tx.fast_start.phase?;
        self.timers.get(TimerKind::FastStartReset)
    }

    /// A timeout or the end of the connection ends the attempt.
    pub(super) fn fast_start_end(&mut self) {
        if self.tx.fast_start.phase.take().is_some() {
            self.timers.put(TimerKind::Pace, None);
            self.timers.put(TimerKind::FastStartReset, None);
        }
    }
}
