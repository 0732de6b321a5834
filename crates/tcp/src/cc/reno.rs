//! Reno congestion control: RFC 5681 §3.1 (slow start, congestion avoidance,
//! ssthresh = max(FlightSize/2, 2·SMSS), here in segments as Linux's
//! `tcp_reno_ssthresh` computes it from cwnd).

use super::{CongestionControl, Window, additive_increase, slow_start};
use crate::time::Instant;

#[derive(Clone, Copy, Debug, Default)]
/// Reno congestion control (stateless: everything is in the [`Window`](super::Window)).
pub struct Reno;

impl CongestionControl for Reno {
    fn cong_avoid(&mut self, w: &mut Window, acked: u32, _now: Instant, _min_rtt_ms: u32) {
        let mut acked = acked;
        if w.cwnd < w.ssthresh {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        additive_increase(w, w.cwnd, acked);
    }

    fn ssthresh(&mut self, w: &Window) -> u32 {
        (w.cwnd / 2).max(2)
    }

    /// Linux `tcp_reno_min_cwnd` (2.6/3.x): rate halving may go down to ssthresh/2.
    fn min_cwnd(&self, w: &Window) -> u32 {
        (w.ssthresh / 2).max(1)
    }
}
