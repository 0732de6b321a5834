//! Random Early Detection: Floyd & Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993 (the algorithm of its Fig. 2), with
//! Floyd's "gentle" variant (2000) and ECN marking (RFC 3168 §5), configured the way
//! `fast-start-and-sessions.txt` §4.3 configures its RED router.
//!
//! On each arriving packet, with `q` packets waiting (the one being transmitted
//! excluded):
//!
//! - if the queue has been empty for a while, the average first decays as if
//!   `m` packets of `mean_pktsize` bytes had been sent meanwhile,
//!   `avg ← (1 − w_q)^m · avg`, `m = idle time × link rate / (8 · mean_pktsize)`
//!   (F&J §4; ns-2's `red.cc` computes `m` the same way);
//! - `avg ← (1 − w_q) · avg + w_q · q`;
//! - below `min_th` nothing happens and `count = −1`;
//! - between `min_th` and `max_th`: `count += 1`,
//!   `p_b = max_p · (avg − min_th) / (max_th − min_th)`, and the packet is chosen with
//!   probability `p_a = p_b / (1 − count · p_b)` (1 once `count · p_b ≥ 1`), which
//!   spreads the chosen packets out evenly (F&J §7); a chosen packet resets `count` to 0;
//! - at or above `max_th` every packet is chosen (§4.3: "When the *average* queue
//!   length exceeds the maximum threshold, all packets are marked"), unless RED is
//!   `gentle`: then `p_b` rises linearly from `max_p` at `max_th` to 1 at `2 · max_th`
//!   (uniformised by `count` too), and every packet is chosen from `2 · max_th` on.
//!
//! A chosen packet is marked CE if `ecn` is on and it is ECN-capable, and dropped
//! otherwise. The queue's hard limit still drops (the channel applies it). Every
//! random draw comes from the channel's seeded generator.

use serde::{Deserialize, Serialize};

/// RED's parameters. Thresholds count packets (fractions allowed).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedParams {
    /// Weight of the newest sample in the average queue length, in (0, 1].
    pub w_q: f64,
    /// Average queue length (packets) where early marking starts.
    pub min_th: f64,
    /// Average queue length (packets) where marking every packet starts (or, when
    /// `gentle`, where the probability starts rising from `max_p` to 1).
    pub max_th: f64,
    /// Marking probability reached at `max_th`.
    pub max_p: f64,
    /// Floyd's "gentle" RED.
    pub gentle: bool,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 3168 §5).
    pub ecn: bool,
    /// Bytes of the "typical small packet" the idle-time correction counts (ns-2's
    /// `mean_pktsize_`).
    pub mean_pktsize: u32,
}

/// F&J 1993 §11 (their simulations) and ns-2's classic `q_weight_`.
pub const DEFAULT_W_Q: f64 = 0.002;
/// ns-2's classic `thresh_` (F&J's simulations use 5 packets).
pub const DEFAULT_MIN_TH: f64 = 5.0;
/// ns-2's classic `maxthresh_` (F&J's simulations use 15 packets).
pub const DEFAULT_MAX_TH: f64 = 15.0;
/// ns-2's `linterm_ = 10`: `max_p = 1 / linterm_`.
pub const DEFAULT_MAX_P: f64 = 0.1;
/// ns-2's `mean_pktsize_` (bytes).
pub const DEFAULT_MEAN_PKTSIZE: u32 = 500;

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            w_q: DEFAULT_W_Q,
            min_th: DEFAULT_MIN_TH,
            max_th: DEFAULT_MAX_TH,
            max_p: DEFAULT_MAX_P,
            gentle: false,
            ecn: false,
            mean_pktsize: DEFAULT_MEAN_PKTSIZE,
        }
    }
}

impl RedParams {
    /// Why these parameters cannot work, if they cannot. (The negated comparisons
    /// are deliberate: a NaN fails every one of them.)
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn check(&self) -> Result<(), String> {
        if !(self.w_q > 0.0 && self.w_q <= 1.0) {
            return Err(format!("w_q = {} is not in (0, 1]", self.w_q));
        }
        if !(self.min_th >= 0.0) {
            return Err(format!("min_th = {} is negative", self.min_th));
        }
        if !(self.min_th < self.max_th) {
            return Err(format!(
                "min_th = {} is not below max_th = {}",
                self.min_th, self.max_th
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(format!("max_p = {} is not in (0, 1]", self.max_p));
        }
        if self.mean_pktsize == 0 {
            return Err("mean_pktsize must be at least one byte".into());
        }
        Ok(())
    }
}

/// What RED decides for an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    /// Let it in untouched.
    Pass,
    /// Chosen with probability `p_a` (an "early" mark or drop).
    Early,
    /// Chosen because the average is past `max_th` (`2 · max_th` when gentle).
    Forced,
}

/// RED's state on one link direction.
#[derive(Clone, Debug)]
pub struct Red {
    pub params: RedParams,
    /// The average queue length, packets.
    pub avg: f64,
    /// Packets since the last chosen one while the average has been past `min_th`;
    /// −1 below it (F&J Fig. 2).
    pub count: i64,
    /// The last arrival's `p_b` and `p_a` (0 outside the probabilistic region, 1
    /// when forced).
    pub pb: f64,
    pub pa: f64,
    /// Typical packets the link sends per nanosecond; `None` at unlimited rate.
    pkts_per_ns: Option<f64>,
}

impl Red {
    pub fn new(params: RedParams, rate_bps: Option<u64>) -> Red {
        Red {
            params,
            avg: 0.0,
            count: -1,
            pb: 0.0,
            pa: 0.0,
            pkts_per_ns: rate_bps.map(|r| r as f64 / (8.0 * params.mean_pktsize as f64) / 1e9),
        }
    }

    /// Updates the average for an arrival that finds `q` packets waiting. `idle_ns`
    /// is how long the queue has been empty (`q == 0`), 0 otherwise.
    pub fn update_avg(&mut self, q: usize, idle_ns: u64) {
        let w = self.params.w_q;
        if q == 0 && idle_ns > 0 {
            match self.pkts_per_ns {
                // Unlimited rate: an idle queue could have sent any number.
                None => self.avg = 0.0,
                Some(k) => {
                    let m = (k * idle_ns as f64).floor();
                    if m >= 1.0 {
                        self.avg *= (1.0 - w).powf(m);
                    }
                }
            }
        }
        self.avg = (1.0 - w) * self.avg + w * q as f64;
    }

    /// Decides for the arriving packet after [`update_avg`](Self::update_avg);
    /// `uniform` draws from [0, 1) only when a probabilistic choice is needed.
    pub fn decide(&mut self, uniform: impl FnOnce() -> f64) -> RedVerdict {
        let p = self.params;
        let avg = self.avg;
        if avg < p.min_th {
            self.count = -1;
            self.pb = 0.0;
            self.pa = 0.0;
            return RedVerdict::Pass;
        }
        let pb = if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            self.pb = 1.0;
            self.pa = 1.0;
            return RedVerdict::Forced;
        };
        self.count += 1;
        let cpb = self.count as f64 * pb;
        let pa = if cpb < 1.0 { pb / (1.0 - cpb) } else { 1.0 };
        self.pb = pb;
        self.pa = pa;
        if pa >= 1.0 || uniform() < pa {
            self.count = 0;
            RedVerdict::Early
        } else {
            RedVerdict::Pass
        }
    }
}
