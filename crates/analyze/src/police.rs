//! Policing, as Flach et al. detect it ("An Internet-Wide Analysis of Traffic
//! Policing", SIGCOMM 2016, §2): a token bucket lets a burst through, then passes
//! the flow at its rate and drops at once what comes above it, without a queue.
//!
//! From the server's transmissions, the ones lost, and its RTT samples:
//!
//! 1. Enough losses ([`POLICE_MIN_LOSSES`]).
//! 2. The policing rate: the bytes that got through between the first and the last
//!    loss, over the time between them (the bucket is empty at both).
//!    Time the replayed bucket (3) spends full wastes tokens, so the rate is
//!    taken again over the rest of that time.
//! 3. Losses when a token bucket at that rate is empty, and only then: the
//!    bucket's size is the most that got through above the rate over a stretch
//!    ending at the first loss (the burst that emptied it); the bucket is replayed
//!    from the first loss (empty then), filling at the rate up to that size, each
//!    passing transmission taking its bytes. A loss that finds a packet's worth of
//!    tokens to spare (and [`POLICE_SLACK`] of the bucket) breaks the pattern, and
//!    at most [`POLICE_MAX_OFF`] of the losses may; a passing transmission that
//!    overdraws the bucket by more than a packet (and the slack) breaks it too,
//!    and at most [`POLICE_MAX_OVER`] of them may. Random losses fall anywhere,
//!    and between them the flow gets through far more than the rate allows.
//! 4. No queue before the losses: the RTT of the data sent within a minimum RTT
//!    before each loss (the first quartile of those samples, as a policer's
//!    isolated segments often wait for delayed ACKs, and the median over the
//!    losses) stays near the flow's minimum: within [`POLICE_MAX_INFLATION`] of it
//!    (at least [`POLICE_MIN_INFLATION_NS`]) plus two packets at the policing rate
//!    (a delayed ACK), where behind a shaper — a rate limit with a buffer — it
//!    grows as the buffer fills, and drops come only once it is full. The token
//!    bucket (3) cannot tell the two apart: a full buffer is an empty bucket.

/// At least this many losses.
pub const POLICE_MIN_LOSSES: usize = 5;
/// A loss may find up to this share of the largest burst in the bucket (beyond a
/// packet's worth) and still count as the bucket's: the rate is an estimate.
pub const POLICE_SLACK: f64 = 0.1;
/// At most this share of the losses may find the bucket holding tokens.
pub const POLICE_MAX_OFF: f64 = 0.2;
/// At most this share of the passing transmissions may overdraw the bucket.
pub const POLICE_MAX_OVER: f64 = 0.15;
/// The RTT before losses at most this much above the minimum (a share of it, at
/// least [`POLICE_MIN_INFLATION_NS`]), plus two packets at the policing rate.
pub const POLICE_MAX_INFLATION: f64 = 0.1;
/// The smallest RTT inflation allowed before losses, ns.
pub const POLICE_MIN_INFLATION_NS: u64 = 2_000_000;

/// What the detector found in a policed flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policing {
    /// The policing rate, bits per second.
    pub rate_bps: f64,
    /// The bucket's size: the burst that got through above the rate before the
    /// first loss, bytes.
    pub burst_bytes: f64,
    /// Share of the losses that found the replayed bucket holding tokens.
    pub off: f64,
    /// Share of the passing transmissions that overdrew it.
    pub over: f64,
    /// Median RTT of the data sent just before a loss, over the minimum, ns.
    pub inflation_ns: u64,
}

/// The server's transmissions and RTT samples, kept for the detector.
#[derive(Clone, Debug, Default)]
pub struct PoliceTrace {
    /// Every data transmission of the server, in order: (time, bytes).
    tx: Vec<(u64, u32)>,
    /// The server's RTT samples: (time of the ACK, RTT), ns.
    rtt: Vec<(u64, u64)>,
}

impl PoliceTrace {
    /// A server data transmission of `len` bytes at `t`.
    pub fn data(&mut self, t: u64, len: u32) {
        self.tx.push((t, len));
    }

    /// An RTT sample `r` of the server's data, taken by an ACK at `t`.
    pub fn rtt(&mut self, t: u64, r: u64) {
        self.rtt.push((t, r));
    }

    /// Transmissions so far.
    pub fn len(&self) -> usize {
        self.tx.len()
    }

    /// Whether no transmission was kept.
    pub fn is_empty(&self) -> bool {
        self.tx.is_empty()
    }

    /// Policing, if the flow shows it: `lost` are the indices of the lost
    /// transmissions (in any order), `min_rtt` the flow's smallest RTT.
    pub fn detect(&self, lost: &[usize], min_rtt: u64) -> Option<Policing> {
        let mut lost: Vec<usize> = lost
            .iter()
            .copied()
            .filter(|&i| i < self.tx.len())
            .collect();
        lost.sort_unstable();
        lost.dedup();
        if lost.len() < POLICE_MIN_LOSSES {
            return None;
        }
        let (f, l) = (lost[0], lost[lost.len() - 1]);
        let span = self.tx[l].0.saturating_sub(self.tx[f].0);
        if span == 0 {
            return None;
        }
        let mut dropped = vec![false; l - f + 1];
        for &i in &lost {
            dropped[i - f] = true;
        }
        let passed: u64 = (f + 1..l)
            .filter(|&i| !dropped[i - f])
            .map(|i| self.tx[i].1 as u64)
            .sum();
        let rate = passed as f64 / span as f64; // bytes per ns
        if rate <= 0.0 {
            return None;
        }
        // Time the bucket spent full lets tokens go to waste, and the rate over
        // the rest is the policer's.
        let (_, _, full_ns) = self.replay(f, l, &dropped, rate, self.burst_before(f, rate));
        let rate = passed as f64 / (span as f64 - full_ns).max(span as f64 / 2.0);
        let burst = self.burst_before(f, rate);
        let (off, over, _) = self.replay(f, l, &dropped, rate, burst);
        let mss = self.tx[f..=l].iter().map(|x| x.1).max().unwrap_or(0) as f64;
        let inflation = self.inflation_before(&lost, min_rtt)?;
        if off > POLICE_MAX_OFF || over > POLICE_MAX_OVER {
            return None;
        }
        // Saturating: a capture's absurd times must not overflow.
        let allowed = ((min_rtt as f64 * POLICE_MAX_INFLATION) as u64)
            .max(POLICE_MIN_INFLATION_NS)
            .saturating_add((2.0 * mss / rate) as u64);
        (inflation <= allowed).then_some(Policing {
            rate_bps: rate * 8e9,
            burst_bytes: burst,
            off,
            over,
            inflation_ns: inflation,
        })
    }

    /// The bucket's size: the most that got through above `rate` over a stretch
    /// ending at the first loss `f` (the bucket full at its start, empty at its
    /// end), bytes, at least the largest transmission.
    fn burst_before(&self, f: usize, rate: f64) -> f64 {
        let tf = self.tx[f].0;
        let (mut passed, mut best) = (0.0f64, 0.0f64);
        for &(t, len) in self.tx[..f].iter().rev() {
            passed += len as f64;
            best = best.max(passed - rate * tf.saturating_sub(t) as f64);
        }
        let mss = self.tx.iter().map(|x| x.1).max().unwrap_or(0) as f64;
        best.max(mss)
    }

    /// The bucket replayed from the first loss `f` (empty then) to the last `l`,
    /// filling at `rate` up to `burst`, each passing transmission taking its bytes:
    /// the share of the losses after the first that found more than their own
    /// bytes in it, and the share of the passing transmissions that overdrew it
    /// (both beyond the slack), and the time it spent full, ns.
    fn replay(
        &self,
        f: usize,
        l: usize,
        dropped: &[bool],
        rate: f64,
        burst: f64,
    ) -> (f64, f64, f64) {
        let (mut tokens, mut last) = (0.0f64, self.tx[f].0);
        let (mut losses, mut off, mut passes, mut over) = (0u32, 0u32, 0u32, 0u32);
        let mut full_ns = 0.0f64;
        let slack = POLICE_SLACK * burst;
        for i in f + 1..=l {
            let (t, len) = self.tx[i];
            tokens += rate * t.saturating_sub(last) as f64;
            if tokens > burst {
                full_ns += (tokens - burst) / rate;
                tokens = burst;
            }
            last = t;
            if dropped[i - f] {
                losses += 1;
                off += (tokens > len as f64 + slack) as u32;
            } else {
                tokens -= len as f64;
                passes += 1;
                over += (tokens < -(len as f64) - slack) as u32;
            }
        }
        (
            off as f64 / losses.max(1) as f64,
            over as f64 / passes.max(1) as f64,
            full_ns,
        )
    }

    /// The median over the losses of the first quartile of the RTTs of the data
    /// sent within one minimum RTT before each, over the minimum, ns; `None`
    /// without samples. (Behind a policer many samples wait for a delayed ACK, the
    /// segments arriving alone; a queue delays them all.)
    fn inflation_before(&self, lost: &[usize], min_rtt: u64) -> Option<u64> {
        // The samples by the time their data was sent (the ACK's time less the
        // RTT), in order.
        let mut sent: Vec<(u64, u64)> = self
            .rtt
            .iter()
            .map(|&(t, r)| (t.saturating_sub(r), r))
            .collect();
        sent.sort_unstable();
        let mut window = Vec::new();
        let mut medians: Vec<u64> = lost
            .iter()
            .filter_map(|&i| {
                let t = self.tx[i].0;
                let from = sent.partition_point(|s| s.0 < t.saturating_sub(min_rtt));
                let to = sent.partition_point(|s| s.0 <= t);
                window.clear();
                window.extend(sent[from..to].iter().map(|s| s.1));
                window.sort_unstable();
                window.get(window.len() / 4).copied()
            })
            .collect();
        if medians.is_empty() {
            return None;
        }
        medians.sort_unstable();
        Some(medians[medians.len() / 2].saturating_sub(min_rtt))
    }
}
