//! Outages: periods in which a link direction delivers nothing — a cellular fade or
//! handover, a route change, a congested queue that drops everything for a while.
//! `gentle-aggression-sigcomm13.txt` §2 finds 77% of losses repaired by timeouts,
//! and Reactive (the probe) removes only 14% of them (Table 4): most timeouts come
//! from losses that take the probe and the retransmissions with them, which a loss
//! drawn per packet cannot give. An outage does: every packet offered inside it is
//! lost, whatever it is, so a retransmission timer backs off until it ends.
//!
//! The link alternates between up and down periods of exponentially distributed
//! lengths (a continuous-time two-state Markov chain — the Gilbert–Elliott channel
//! in time rather than in packets; Gilbert 1960), with the given means. A trial
//! starts in the stationary state — down with probability
//! `length / (gap + length)`, the period under way of the same distribution
//! (memorylessness) — or, with `from_up`, up: a client that departs after a time
//! drawn with mean `gap` (and, with a long `length`, does not come back).

use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The outage process of one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// Mean time between outages (the up periods).
    pub gap: Duration,
    /// Mean length of an outage.
    pub length: Duration,
    /// The trial starts up rather than in the stationary state.
    #[serde(default)]
    pub from_up: bool,
}

/// Where the process is.
#[derive(Clone, Debug)]
pub struct OutageState {
    o: Outage,
    rng: ChaCha8Rng,
    down: bool,
    /// When the current period ends, ns.
    until_ns: u64,
    started: bool,
}

impl OutageState {
    pub fn new(o: Outage, rng: ChaCha8Rng) -> Self {
        OutageState {
            o,
            rng,
            down: false,
            until_ns: 0,
            started: false,
        }
    }

    fn period(&mut self, mean: Duration) -> u64 {
        let u: f64 = 1.0 - self.rng.r#gen::<f64>(); // (0, 1]
        (-(mean.as_nanos() as f64) * u.ln()) as u64
    }

    /// Whether the link is down at `now_ns` (times only grow).
    pub fn down_at(&mut self, now_ns: u64) -> bool {
        let o = self.o;
        if !self.started {
            self.started = true;
            let g = o.gap.as_secs_f64();
            let l = o.length.as_secs_f64();
            self.down = !o.from_up && self.rng.gen_bool((l / (g + l)).clamp(0.0, 1.0));
            let mean = if self.down { o.length } else { o.gap };
            self.until_ns = self.period(mean);
        }
        while now_ns >= self.until_ns {
            self.down = !self.down;
            let mean = if self.down { o.length } else { o.gap };
            self.until_ns = self.until_ns.saturating_add(self.period(mean).max(1));
        }
        self.down
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_share_of_time_down_and_the_mean_outage_are_the_parameters() {
        let o = Outage {
            gap: Duration::from_millis(900),
            length: Duration::from_millis(100),
            from_up: false,
        };
        let mut s = OutageState::new(o, ChaCha8Rng::seed_from_u64(5));
        let step = 1_000_000u64; // 1 ms
        let n = 2_000_000u64;
        let (mut down, mut outages, mut was) = (0u64, 0u64, false);
        for k in 0..n {
            let d = s.down_at(k * step);
            down += u64::from(d);
            outages += u64::from(d && !was);
            was = d;
        }
        let share = down as f64 / n as f64;
        assert!((share - 0.1).abs() < 0.01, "down {share}");
        let mean_ms = down as f64 / outages as f64;
        assert!((mean_ms - 100.0).abs() < 10.0, "mean outage {mean_ms} ms");
    }

    #[test]
    fn a_departure_starts_up_and_goes_down_after_a_gap_of_the_mean() {
        // Up at the start always; down for good (a length far beyond the trial)
        // after an exponential time of mean `gap`.
        let o = Outage {
            gap: Duration::from_secs(2),
            length: Duration::from_secs(1_000_000),
            from_up: true,
        };
        let n = 4000;
        let mut sum_ms = 0.0;
        for seed in 0..n {
            let mut s = OutageState::new(o, ChaCha8Rng::seed_from_u64(seed));
            assert!(!s.down_at(0), "up at the start");
            let mut t = 0u64;
            while !s.down_at(t) {
                t += 1_000_000;
            }
            sum_ms += t as f64 / 1e6;
            assert!(s.down_at(t + 600_000_000_000), "still down 600 s later");
        }
        let mean = sum_ms / n as f64;
        assert!((mean - 2000.0).abs() < 100.0, "mean departure at {mean} ms");
    }
}
