//! Per-packet delay variation: the queueing delay a real path adds on top of its
//! propagation delay, so that RTT samples vary, RTOs sit where RFC 6298's estimator
//! puts them on real paths, and a late ACK can fire a spurious timeout
//! (`gentle-aggression-sigcomm13.txt` §2 reports about 40% of its timeouts as
//! spurious; a constant-delay path has none).
//!
//! Each packet's extra delay is an AR(1) process over the packets of the link
//! direction, `d_k = ρ·d_(k−1) + (1 − ρ)·x_k`, whose innovations `x_k` are
//! exponential (a queue's waiting time in M/M/1, Kleinrock 1975 §3.2) or Pareto
//! (heavy-tailed, as measured Internet delays are: Paxson 1999, "End-to-end
//! Internet packet dynamics") with the given mean; the correlation ρ keeps
//! consecutive packets' delays close, as a queue that drains slowly does. Without
//! `reorder` a packet never overtakes the one before it (a queue is first in,
//! first out): its arrival is at least the previous one's.

use std::time::Duration;

use rand::Rng;
use serde::{Deserialize, Serialize};

/// The distribution of the innovations.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JitterDist {
    /// Exponential with the jitter's mean.
    Exponential,
    /// Pareto with shape α > 1 and the jitter's mean (scale mean·(α − 1)/α).
    Pareto { shape: f64 },
}

/// Delay variation of one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Jitter {
    /// Mean extra delay per packet.
    pub mean: Duration,
    pub dist: JitterDist,
    /// ρ, from 0 (independent packets) to below 1.
    pub correlation: f64,
    /// Packets may overtake each other; otherwise arrivals keep their order.
    pub reorder: bool,
}

/// The state of the process on one link direction.
#[derive(Clone, Copy, Debug, Default)]
pub struct JitterState {
    /// The last packet's extra delay, ns.
    prev_ns: f64,
    /// The last packet's arrival, ns (for order without `reorder`).
    last_due_ns: u64,
}

impl JitterState {
    /// The arrival of a packet due at `due_ns` without jitter: later by this
    /// packet's extra delay and, without `reorder`, not before the previous one;
    /// and whether it overtakes a packet sent before it.
    pub fn apply(&mut self, j: &Jitter, due_ns: u64, rng: &mut impl Rng) -> (u64, bool) {
        let mean = j.mean.as_nanos() as f64;
        let u: f64 = 1.0 - rng.r#gen::<f64>(); // (0, 1]
        let x = match j.dist {
            JitterDist::Exponential => -mean * u.ln(),
            JitterDist::Pareto { shape } => mean * (shape - 1.0) / shape * u.powf(-1.0 / shape),
        };
        let rho = j.correlation;
        self.prev_ns = rho * self.prev_ns + (1.0 - rho) * x;
        let mut t = due_ns + self.prev_ns as u64;
        if !j.reorder {
            t = t.max(self.last_due_ns);
        }
        let overtakes = t < self.last_due_ns;
        self.last_due_ns = self.last_due_ns.max(t);
        (t, overtakes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn run(j: Jitter, n: usize) -> Vec<i64> {
        let mut st = JitterState::default();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // One packet every 1 ms, 50 ms of propagation: the extra delay of each.
        (0..n as u64)
            .map(|k| {
                let due = k * 1_000_000 + 50_000_000;
                st.apply(&j, due, &mut rng).0 as i64 - due as i64
            })
            .collect()
    }

    fn jitter(dist: JitterDist, correlation: f64, reorder: bool) -> Jitter {
        Jitter {
            mean: Duration::from_millis(5),
            dist,
            correlation,
            reorder,
        }
    }

    #[test]
    fn the_mean_extra_delay_is_the_jitters_mean() {
        for dist in [JitterDist::Exponential, JitterDist::Pareto { shape: 2.5 }] {
            let x = run(jitter(dist, 0.0, true), 200_000);
            let mean = x.iter().sum::<i64>() as f64 / x.len() as f64 / 1e6;
            assert!((mean - 5.0).abs() < 0.15, "{dist:?}: mean {mean} ms");
        }
    }

    #[test]
    fn correlation_keeps_neighbours_close_and_order_is_kept_unless_reordering() {
        let lag1 = |x: &[i64]| {
            let m = x.iter().sum::<i64>() as f64 / x.len() as f64;
            let (mut num, mut den) = (0.0, 0.0);
            for w in x.windows(2) {
                num += (w[0] as f64 - m) * (w[1] as f64 - m);
            }
            for &v in x {
                den += (v as f64 - m).powi(2);
            }
            num / den
        };
        let x = run(jitter(JitterDist::Exponential, 0.9, true), 50_000);
        assert!(lag1(&x) > 0.8, "lag-1 autocorrelation {}", lag1(&x));
        assert!(lag1(&run(jitter(JitterDist::Exponential, 0.0, true), 50_000)).abs() < 0.05);
        // Arrivals 1 ms apart, delays of ~5 ms varying: independent delays overtake,
        // first-in-first-out ones never do.
        let arrivals = |j: Jitter| {
            let d = run(j, 20_000);
            d.iter()
                .enumerate()
                .map(|(k, x)| k as i64 * 1_000_000 + x)
                .collect::<Vec<_>>()
        };
        let fifo = arrivals(jitter(JitterDist::Exponential, 0.0, false));
        assert!(fifo.windows(2).all(|w| w[0] <= w[1]));
        let free = arrivals(jitter(JitterDist::Exponential, 0.0, true));
        assert!(free.windows(2).filter(|w| w[0] > w[1]).count() > 1000);
    }
}
