//! The sender's RTT as a capture shows it: Karn's samples (RFC 6298 §3, never from a
//! retransmitted segment) fed to the RFC 6298 §2 estimator, the minimum, and a
//! histogram of the samples for the flow's RTT inflation.

/// RFC 6298 §2.3 gains: α = 1/8, β = 1/4.
const ALPHA_SHIFT: u32 = 3;
const BETA_SHIFT: u32 = 2;

/// Histogram buckets: one per 10% step from 10 µs, up to ~100 s.
const BUCKETS: usize = 170;
const FIRST_BUCKET_NS: f64 = 10_000.0;
const STEP: f64 = 1.1;

/// An RTT estimator over Karn samples.
#[derive(Clone, Debug)]
pub struct RttEstimate {
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt: u64,
    /// RTT variation, ns.
    pub rttvar: u64,
    /// The smallest sample, ns (`u64::MAX` before the first).
    pub min: u64,
    /// The largest sample, ns.
    pub max: u64,
    /// Samples taken.
    pub samples: u32,
    hist: Box<[u32; BUCKETS]>,
    /// Samples in `hist`.
    hist_n: u64,
}

impl Default for RttEstimate {
    fn default() -> Self {
        RttEstimate {
            srtt: 0,
            rttvar: 0,
            min: u64::MAX,
            max: 0,
            samples: 0,
            hist: Box::new([0; BUCKETS]),
            hist_n: 0,
        }
    }
}

fn bucket(ns: u64) -> usize {
    if (ns as f64) < FIRST_BUCKET_NS {
        return 0;
    }
    (((ns as f64 / FIRST_BUCKET_NS).ln() / STEP.ln()) as usize + 1).min(BUCKETS - 1)
}

fn bucket_top(i: usize) -> u64 {
    (FIRST_BUCKET_NS * STEP.powi(i as i32)) as u64
}

impl RttEstimate {
    /// Whether a sample was taken.
    pub fn known(&self) -> bool {
        self.samples > 0
    }

    /// The minimum sample, if any.
    pub fn min_checked(&self) -> Option<u64> {
        self.known().then_some(self.min)
    }

    /// The minimum sample, or `default` before the first.
    pub fn min_or(&self, default: u64) -> u64 {
        self.min_checked().unwrap_or(default)
    }

    /// Takes a sample, ns.
    pub fn sample(&mut self, r: u64) {
        self.sample_delayable(r, false);
    }

    /// Takes a sample, ns, that a delayed ACK may have lengthened (a lone segment,
    /// nothing after it, acknowledged: RFC 1122 §4.2.3.2 lets the receiver wait up
    /// to 500 ms, Linux 40–200 ms): it counts towards SRTT and the extremes, but
    /// not towards the quantiles that measure queueing.
    pub fn sample_delayable(&mut self, r: u64, delayable: bool) {
        if self.samples == 0 {
            // RFC 6298 §2.2.
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            // RFC 6298 §2.3.
            let err = self.srtt.abs_diff(r);
            self.rttvar = self.rttvar - (self.rttvar >> BETA_SHIFT) + (err >> BETA_SHIFT);
            self.srtt = self.srtt - (self.srtt >> ALPHA_SHIFT) + (r >> ALPHA_SHIFT);
        }
        self.samples += 1;
        self.min = self.min.min(r);
        self.max = self.max.max(r);
        if !delayable {
            self.hist[bucket(r)] += 1;
            self.hist_n += 1;
        }
    }

    /// The sample below which a fraction `q` of the samples lie (upper bucket edge,
    /// within 10%).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.hist_n == 0 {
            return None;
        }
        let want = (q * self.hist_n as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (i, &n) in self.hist.iter().enumerate() {
            seen += n as u64;
            if seen >= want {
                return Some(bucket_top(i).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}
