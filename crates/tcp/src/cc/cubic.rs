//! CUBIC congestion control: RFC 9438 as Linux implements it (net/ipv4/tcp_cubic.c,
//! `bictcp_update`): β = 717/1024 ≈ 0.7, C = 0.4 (`bic_scale` 41), fast convergence,
//! TCP-friendly region. Integer arithmetic throughout, so results are identical on
//! every machine. HyStart (Linux's default, `hystart = 1`) is the `hystart` switch.

use std::time::Duration;

use super::hystart::HyStart;
use super::{CongestionControl, Window, additive_increase, slow_start};
use crate::time::Instant;

/// RFC 9438 §4.6 β_cubic = 0.7, as Linux's `beta` = 717 / 1024.
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// Linux `bic_scale` = 41 → C = 41·10/1024 ≈ 0.4 (RFC 9438 §5).
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// Time unit of the cubic function: 2^-10 s (Linux `BICTCP_HZ` = 10).
const HZ_SHIFT: u32 = 10;
/// Linux `cube_factor` = 2^(10 + 3·BICTCP_HZ) / cube_rtt_scale.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * HZ_SHIFT)) / CUBE_RTT_SCALE;
/// Linux `beta_scale` for the TCP-friendly estimate: 8·(1024+β)/3/(1024−β).
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);

#[derive(Clone, Debug, Default)]
/// CUBIC (RFC 9438) as Linux `tcp_cubic` runs it, with optional HyStart.
pub struct Cubic {
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time_ms: u64,
    origin_point: u32,
    k: u64,
    epoch_start_ms: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u32,
    /// Hybrid slow start, when on.
    pub hystart: Option<HyStart>,
}

fn cube_root(a: u64) -> u64 {
    // Integer cube root by binary search (exact floor).
    let (mut lo, mut hi) = (0u64, 2_097_152u64); // 2^21: (2^21)^3 = 2^63
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if mid
            .checked_mul(mid)
            .and_then(|m| m.checked_mul(mid))
            .is_some_and(|c| c <= a)
        {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

impl Cubic {
    fn update(&mut self, cwnd: u32, acked: u32, now_ms: u64, min_rtt_ms: u32) {
        self.ack_cnt += acked as u64;
        if self.last_cwnd == cwnd && now_ms.saturating_sub(self.last_time_ms) <= 1000 / 32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time_ms = now_ms;
        let epoch = match self.epoch_start_ms {
            Some(e) => e,
            None => {
                self.epoch_start_ms = Some(now_ms);
                self.ack_cnt = acked as u64;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    self.k = cube_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                    self.origin_point = self.last_max_cwnd;
                }
                now_ms
            }
        };
        let t = ((now_ms - epoch + min_rtt_ms as u64) << HZ_SHIFT) / 1000;
        let offs = t.abs_diff(self.k);
        // In 128 bits: after a long epoch (t − K of minutes) the cube overflows 64.
        let cube = (CUBE_RTT_SCALE as u128) * (offs as u128).pow(3);
        let delta = (cube >> (10 + 3 * HZ_SHIFT)).min(u32::MAX as u128) as u64;
        let target = if t < self.k {
            (self.origin_point as u64).saturating_sub(delta)
        } else {
            self.origin_point as u64 + delta
        };
        let cwnd64 = cwnd as u64;
        self.cnt = if target > cwnd64 {
            (cwnd64 / (target - cwnd64)).max(1) as u32
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        // TCP-friendly region (RFC 9438 §4.3).
        let d = (cwnd64 * FRIENDLY_SCALE) >> 3;
        if d > 0 {
            while self.ack_cnt > d {
                self.ack_cnt -= d;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt.max(1));
        }
        self.cnt = self.cnt.max(2);
    }
}

impl CongestionControl for Cubic {
    fn cong_avoid(&mut self, w: &mut Window, acked: u32, now: Instant, min_rtt_ms: u32) {
        let mut acked = acked;
        if w.cwnd < w.ssthresh {
            acked = slow_start(w, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(w.cwnd, acked, now.as_millis(), min_rtt_ms);
        additive_increase(w, self.cnt, acked);
    }

    fn ssthresh(&mut self, w: &Window) -> u32 {
        self.epoch_start_ms = None;
        // Fast convergence (RFC 9438 §4.7).
        self.last_max_cwnd = if w.cwnd < self.last_max_cwnd {
            ((w.cwnd as u64 * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)) as u32
        } else {
            w.cwnd
        };
        ((w.cwnd as u64 * BETA / BETA_SCALE) as u32).max(2)
    }

    /// Linux `cubictcp_state` on entering Loss: `bictcp_reset` clears the whole
    /// state, `last_max_cwnd` (W_max) included — after `ssthresh` has set it — so
    /// congestion avoidance after the timeout's slow start starts a new epoch at
    /// cwnd with no W_max: 1 segment per 20 ACKed at first (the `cnt > 20` cap).
    fn on_timeout(&mut self) {
        let hystart = self.hystart.take();
        *self = Cubic {
            hystart,
            ..Cubic::default()
        };
        if let Some(h) = &mut self.hystart {
            h.on_timeout();
        }
    }

    fn pkts_acked(&mut self, w: &mut Window, now: Instant, rtt: Duration, una: u64, nxt: u64) {
        // "Discard delay samples right after fast recovery" (`cubictcp_acked`).
        let now_ms = now.as_millis();
        let after_recovery = self
            .epoch_start_ms
            .is_some_and(|e| now_ms.saturating_sub(e) < 1000);
        if let Some(h) = &mut self.hystart {
            h.on_ack(w, now, rtt, una, nxt, after_recovery);
        }
    }

    fn on_undo(&mut self) {
        self.epoch_start_ms = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CongestionControl, Window};
    use super::Cubic;
    use crate::time::Instant;

    /// ACKs of one segment each, 2 ms apart, until cwnd grows past `cwnd`.
    fn acks_to_grow(c: &mut Cubic, w: &mut Window, t0_ms: u64) -> u32 {
        let start = w.cwnd;
        let mut n = 0;
        while w.cwnd == start {
            n += 1;
            let now = Instant::from_nanos((t0_ms + 2 * u64::from(n)) * 1_000_000);
            c.cong_avoid(w, 1, now, 100);
        }
        n
    }

    #[test]
    fn a_timeout_forgets_w_max_as_linux_bictcp_reset() {
        // A loss at cwnd 10 sets W_max = 10 and ssthresh 7. After a fast
        // recovery, congestion avoidance at 7 climbs the cubic curve towards 10:
        // cwnd grows within a few ACKs. After a timeout (Linux `cubictcp_state`
        // on Loss: `bictcp_reset`), W_max is forgotten and CUBIC starts at cwnd
        // with its cap of one segment per 20 ACKed (fewer once the TCP-friendly
        // estimate takes over).
        let loss = |timeout: bool| {
            let mut c = Cubic::default();
            let mut w = Window {
                cwnd: 10,
                ssthresh: u32::MAX,
                cwnd_cnt: 0,
            };
            w.ssthresh = c.ssthresh(&w);
            if timeout {
                c.on_timeout();
            }
            w.cwnd = w.ssthresh;
            acks_to_grow(&mut c, &mut w, 1_000)
        };
        let (after_timeout, after_recovery) = (loss(true), loss(false));
        assert!(
            (15..=20).contains(&after_timeout) && after_recovery < 8,
            "{after_timeout} ACKs after a timeout, {after_recovery} after a recovery"
        );
    }

    #[test]
    fn cube_root_is_exact_floor() {
        for a in [0u64, 1, 7, 8, 26, 27, 1_000_000, 999_999, u64::MAX >> 1] {
            let r = super::cube_root(a);
            assert!(r * r * r <= a);
            assert!((r + 1).checked_pow(3).is_none_or(|c| c > a));
        }
    }
}
