//! Congestion control: the window growth and the reduction target, as pluggable
//! algorithms (Linux's `tcp_congestion_ops`). The window is counted in segments,
//! as Linux counts it.
//!
//! A concrete enum ([`Cc`]) dispatches on the hot path with `match`; each algorithm
//! is one module. [`Congestion`] is a sender's whole congestion state — the window
//! and the algorithm — and holds nothing of any one connection, so several
//! connections can share one (TCP sessions, `fast-start-and-sessions.txt` §6).

mod cubic;
pub mod hystart;
mod reno;

pub use cubic::Cubic;
pub use reno::Reno;

use std::time::Duration;

use crate::config::CcAlgorithm;
use crate::time::Instant;

/// The window state every algorithm manipulates.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments.
    pub ssthresh: u32,
    /// Linear-increase counter (Linux `snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
}

/// Largest cwnd the engine lets any algorithm reach (Linux `snd_cwnd_clamp` default).
pub const CWND_CLAMP: u32 = 1 << 20;
/// ssthresh before the first loss (Linux `TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// One congestion-control algorithm. Methods have no-op defaults where that is sensible.
pub trait CongestionControl {
    /// Window growth on an ACK that newly acknowledged `acked` segments while in Open
    /// (or Disorder) and cwnd-limited.
    fn cong_avoid(&mut self, w: &mut Window, acked: u32, now: Instant, min_rtt_ms: u32);
    /// The slow-start threshold after a congestion event, given the current window.
    fn ssthresh(&mut self, w: &Window) -> u32;
    /// A retransmission timeout happened.
    fn on_timeout(&mut self) {}
    /// A reduction was undone; the algorithm may restore its own state.
    fn on_undo(&mut self) {}
    /// The floor for cwnd during a rate-halving reduction (Linux `tcp_cwnd_min`:
    /// ssthresh unless the algorithm has a `min_cwnd` of its own).
    fn min_cwnd(&self, w: &Window) -> u32 {
        w.ssthresh
    }
    /// An ACK of new data with an RTT sample (Linux `pkts_acked`), `una` and `nxt`
    /// after it.
    fn pkts_acked(&mut self, _w: &mut Window, _now: Instant, _rtt: Duration, _una: u64, _nxt: u64) {
    }
}

/// RFC 5681 §3.1 slow start, as Linux `tcp_slow_start`: cwnd grows by the number of
/// segments acknowledged, not beyond ssthresh. Returns the acked segments left over.
pub fn slow_start(w: &mut Window, acked: u32) -> u32 {
    let cwnd = (w.cwnd + acked).min(w.ssthresh);
    let used = cwnd.saturating_sub(w.cwnd);
    w.cwnd = cwnd.min(CWND_CLAMP);
    acked - used.min(acked)
}

/// Additive increase by one segment per `per` segments acknowledged (Linux
/// `tcp_cong_avoid_ai`).
pub fn additive_increase(w: &mut Window, per: u32, acked: u32) {
    let per = per.max(1);
    if w.cwnd_cnt >= per {
        w.cwnd_cnt = 0;
        w.cwnd += 1;
    }
    w.cwnd_cnt += acked;
    if w.cwnd_cnt >= per {
        let delta = w.cwnd_cnt / per;
        w.cwnd_cnt -= delta * per;
        w.cwnd += delta;
    }
    w.cwnd = w.cwnd.min(CWND_CLAMP);
}

/// Enum dispatch over the algorithms.
#[derive(Clone, Debug)]
pub enum Cc {
    /// RFC 5681 Reno.
    Reno(Reno),
    /// RFC 9438 CUBIC.
    Cubic(Cubic),
}

impl Cc {
    /// `hystart` turns on CUBIC's hybrid slow start.
    pub fn new(alg: CcAlgorithm, hystart: bool) -> Cc {
        match alg {
            CcAlgorithm::Reno => Cc::Reno(Reno),
            CcAlgorithm::Cubic => {
                let mut c = Cubic::default();
                c.hystart = hystart.then(hystart::HyStart::default);
                Cc::Cubic(c)
            }
        }
    }
    /// See [`CongestionControl::cong_avoid`].
    pub fn cong_avoid(&mut self, w: &mut Window, acked: u32, now: Instant, min_rtt_ms: u32) {
        match self {
            Cc::Reno(r) => r.cong_avoid(w, acked, now, min_rtt_ms),
            Cc::Cubic(c) => c.cong_avoid(w, acked, now, min_rtt_ms),
        }
    }
    /// See [`CongestionControl::ssthresh`].
    pub fn ssthresh(&mut self, w: &Window) -> u32 {
        match self {
            Cc::Reno(r) => r.ssthresh(w),
            Cc::Cubic(c) => c.ssthresh(w),
        }
    }
    /// See [`CongestionControl::on_timeout`].
    pub fn on_timeout(&mut self) {
        match self {
            Cc::Reno(r) => r.on_timeout(),
            Cc::Cubic(c) => c.on_timeout(),
        }
    }
    /// See [`CongestionControl::min_cwnd`].
    pub fn min_cwnd(&self, w: &Window) -> u32 {
        match self {
            Cc::Reno(r) => r.min_cwnd(w),
            Cc::Cubic(c) => c.min_cwnd(w),
        }
    }
    /// See [`CongestionControl::on_undo`].
    pub fn on_undo(&mut self) {
        match self {
            Cc::Reno(r) => r.on_undo(),
            Cc::Cubic(c) => c.on_undo(),
        }
    }
    /// See [`CongestionControl::pkts_acked`].
    pub fn pkts_acked(&mut self, w: &mut Window, now: Instant, rtt: Duration, una: u64, nxt: u64) {
        match self {
            Cc::Reno(r) => r.pkts_acked(w, now, rtt, una, nxt),
            Cc::Cubic(c) => c.pkts_acked(w, now, rtt, una, nxt),
        }
    }
    /// HyStart's exits from slow start (ACK train, delay), when it runs.
    pub fn hystart_exits(&self) -> (u64, u64) {
        match self {
            Cc::Cubic(Cubic {
                hystart: Some(h), ..
            }) => (h.train_exits, h.delay_exits),
            _ => (0, 0),
        }
    }
}

/// A sender's congestion state: the window and its algorithm. Nothing in it belongs
/// to one connection, so one can serve several.
#[derive(Clone, Debug)]
pub struct Congestion {
    /// cwnd, ssthresh and the linear-increase counter.
    w: Window,
    alg: Cc,
}

impl Congestion {
    /// Starts with `initial_window` segments (at least one) and no ssthresh.
    pub fn new(alg: CcAlgorithm, hystart: bool, initial_window: u32) -> Congestion {
        Congestion {
            w: Window {
                cwnd: initial_window.max(1),
                ssthresh: INFINITE_SSTHRESH,
                cwnd_cnt: 0,
            },
            alg: Cc::new(alg, hystart),
        }
    }
    /// Congestion window, segments.
    #[inline]
    pub fn cwnd(&self) -> u32 {
        self.w.cwnd
    }
    /// Slow-start threshold, segments.
    #[inline]
    pub fn ssthresh(&self) -> u32 {
        self.w.ssthresh
    }
    /// cwnd, ssthresh and the linear-increase counter as they are.
    #[inline]
    pub fn window(&self) -> Window {
        self.w
    }
    /// The window, for the recovery algorithm that sets it during a reduction
    /// ([`crate::recovery`]).
    #[inline]
    pub fn window_mut(&mut self) -> &mut Window {
        &mut self.w
    }
    /// Sets cwnd, segments.
    #[inline]
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.w.cwnd = cwnd;
    }
    /// Sets ssthresh, segments.
    #[inline]
    pub fn set_ssthresh(&mut self, ssthresh: u32) {
        self.w.ssthresh = ssthresh;
    }
    /// Starts the linear-increase count afresh (a reduction begins or ends).
    #[inline]
    pub fn reset_cwnd_cnt(&mut self) {
        self.w.cwnd_cnt = 0;
    }
    /// Sets cwnd and ssthresh, segments, and starts the linear-increase count
    /// afresh: the window a restart after idle, a fast start, the reset of a failed
    /// fast start, or a TCP session's reduction goes to.
    #[inline]
    pub fn set_window(&mut self, cwnd: u32, ssthresh: u32) {
        self.w.cwnd = cwnd;
        self.w.ssthresh = ssthresh;
        self.w.cwnd_cnt = 0;
    }
    /// The algorithm's ssthresh for a reduction from the current window.
    pub fn reduction_target(&mut self) -> u32 {
        self.alg.ssthresh(&self.w)
    }
    /// A reduction begins: ssthresh becomes the algorithm's target for it
    /// ([`Congestion::reduction_target`]).
    pub fn set_ssthresh_for_reduction(&mut self) {
        self.w.ssthresh = self.alg.ssthresh(&self.w);
    }
    /// The floor for cwnd during a rate-halving reduction.
    pub fn min_cwnd(&self) -> u32 {
        self.alg.min_cwnd(&self.w)
    }
    /// Window growth for `acked` segments (see [`CongestionControl::cong_avoid`]).
    pub fn cong_avoid(&mut self, acked: u32, now: Instant, min_rtt_ms: u32) {
        self.alg.cong_avoid(&mut self.w, acked, now, min_rtt_ms);
    }
    /// An RTT sample from an ACK of new data; returns HyStart's exits it caused
    /// (ACK train, delay).
    pub fn pkts_acked(&mut self, now: Instant, rtt: Duration, una: u64, nxt: u64) -> (u64, u64) {
        let before = self.alg.hystart_exits();
        self.alg.pkts_acked(&mut self.w, now, rtt, una, nxt);
        let after = self.alg.hystart_exits();
        (after.0 - before.0, after.1 - before.1)
    }
    /// A retransmission timeout: the algorithm is told; the window is the caller's.
    pub fn on_timeout(&mut self) {
        self.alg.on_timeout();
    }
    /// A reduction was undone.
    pub fn on_undo(&mut self) {
        self.alg.on_undo();
    }
}
