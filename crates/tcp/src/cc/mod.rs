//! Congestion control: the window growth and the reduction target, as pluggable
//! algorithms (Linux's `tcp_congestion_ops`). The window is counted in segments,
//! as Linux counts it.
//!
//! A concrete enum dispatches on the hot path; each algorithm is one module.

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
    Reno(Reno),
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
    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(r) => r,
            Cc::Cubic(c) => c,
        }
    }
    pub fn cong_avoid(&mut self, w: &mut Window, acked: u32, now: Instant, min_rtt_ms: u32) {
        match self {
            Cc::Reno(r) => r.cong_avoid(w, acked, now, min_rtt_ms),
            Cc::Cubic(c) => c.cong_avoid(w, acked, now, min_rtt_ms),
        }
    }
    pub fn ssthresh(&mut self, w: &Window) -> u32 {
        self.inner().ssthresh(w)
    }
    pub fn on_timeout(&mut self) {
        self.inner().on_timeout()
    }
    /// The floor for cwnd during a rate-halving reduction (Linux `tcp_cwnd_min`:
    /// Reno's `min_cwnd` is ssthresh/2; algorithms without one use ssthresh).
    pub fn min_cwnd(&self, w: &Window) -> u32 {
        match self {
            Cc::Reno(_) => (w.ssthresh / 2).max(1),
            Cc::Cubic(_) => w.ssthresh,
        }
    }
    pub fn on_undo(&mut self) {
        self.inner().on_undo()
    }
    pub fn pkts_acked(&mut self, w: &mut Window, now: Instant, rtt: Duration, una: u64, nxt: u64) {
        self.inner().pkts_acked(w, now, rtt, una, nxt)
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
