//! The data of `gentle-aggression-sigcomm13.txt` §2's figures, gathered from any
//! capture:
//! - Figure 1: mean response latency by RTT bucket, with and without loss;
//! - Figure 2: the CDF of measured RTO over RTT;
//! - Figure 3: the probability of losing the x-th packet of a burst, relative to the
//!   first, per burst length;
//! - Figure 4: for lossy bursts, the probability of exactly one and of at most two
//!   losses, per burst length.

use serde::Serialize;

/// Where Figure 1's RTT buckets start, ms: the paper's 50 ms steps, with the first
/// split so that the RTTs of a data centre or a loopback (well under a millisecond)
/// fall in a bucket of their own instead of among 49 ms ones. An RTT goes in the last
/// bucket that starts at or below it; the last bucket is open.
pub const RTT_EDGES_MS: [f64; RTT_BUCKETS] = [
    0.0, 1.0, 5.0, 10.0, 25.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0, 350.0, 400.0, 450.0, 500.0,
    550.0, 600.0, 650.0, 700.0, 750.0, 800.0, 850.0, 900.0, 950.0,
];
/// Figure 1's RTT buckets.
pub const RTT_BUCKETS: usize = 24;

/// The index of the RTT bucket that holds `rtt_ms`.
pub fn rtt_bucket(rtt_ms: f64) -> usize {
    RTT_EDGES_MS
        .partition_point(|&e| e <= rtt_ms)
        .saturating_sub(1)
}

/// One cell of Figure 1: exchanges, the sum of their response times and of their
/// flows' RTTs, ms.
#[derive(Clone, Copy, Debug, Default)]
struct LatencyCell {
    n: u64,
    ms: f64,
    rtt_ms: f64,
}
/// Figures 3 and 4 cover bursts up to this long (the paper's axes end at 10 and 20).
pub const MAX_BURST: usize = 20;

/// Raw counts behind the figures; [`Figures::summary`] turns them into curves.
#[derive(Clone, Debug)]
pub struct Figures {
    /// Per RTT bucket: without loss, then with loss.
    latency: [[LatencyCell; 2]; RTT_BUCKETS],
    /// Measured RTO / smoothed RTT, one per timeout.
    pub rto_over_rtt: Vec<f64>,
    /// `sent[len][pos]`, `lost[len][pos]` for bursts of `len` packets.
    sent: Vec<Vec<u64>>,
    lost: Vec<Vec<u64>>,
    /// Per burst length: lossy bursts, with exactly one loss, with two.
    lossy: Vec<[u64; 3]>,
    /// Bursts longer than [`MAX_BURST`] (left out of Figures 3 and 4).
    pub long_bursts: u64,
}

impl Default for Figures {
    fn default() -> Self {
        Figures {
            latency: [[LatencyCell::default(); 2]; RTT_BUCKETS],
            rto_over_rtt: Vec::new(),
            sent: vec![vec![0; MAX_BURST + 1]; MAX_BURST + 1],
            lost: vec![vec![0; MAX_BURST + 1]; MAX_BURST + 1],
            lossy: vec![[0; 3]; MAX_BURST + 1],
            long_bursts: 0,
        }
    }
}

/// Figure 1: one RTT bucket.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyBucket {
    /// Bucket start, ms.
    pub rtt_from_ms: f64,
    /// Bucket end, ms (`None` for the last, open bucket).
    pub rtt_to_ms: Option<f64>,
    /// The mean RTT of the bucket's exchanges, ms: where the figure draws them.
    pub rtt_mean_ms: f64,
    /// Mean response time without loss, ms, and how many.
    pub no_loss_ms: Option<f64>,
    /// Exchanges without loss.
    pub no_loss_n: u64,
    /// Mean response time with loss, ms.
    pub loss_ms: Option<f64>,
    /// Exchanges with loss.
    pub loss_n: u64,
}

/// Figure 3: one burst length.
#[derive(Clone, Debug, Serialize)]
pub struct PositionCurve {
    /// Burst length, packets.
    pub burst_len: usize,
    /// Bursts of this length.
    pub bursts: u64,
    /// P(loss at position x) / P(loss at position 1), x = 1..len; `None` where the
    /// first position saw no loss.
    pub relative: Vec<Option<f64>>,
    /// Losses at each position.
    pub losses: Vec<u64>,
}

/// Figure 4: one burst length.
#[derive(Clone, Debug, Serialize)]
pub struct LossCount {
    /// Burst length, packets.
    pub burst_len: usize,
    /// Bursts with a loss.
    pub lossy_bursts: u64,
    /// P(exactly one loss | lossy).
    pub one: f64,
    /// P(at most two losses | lossy).
    pub at_most_two: f64,
}

/// The figures' curves.
#[derive(Clone, Debug, Serialize)]
pub struct FigureData {
    /// Figure 1.
    pub latency_by_rtt: Vec<LatencyBucket>,
    /// Figure 2: (RTO/RTT, cumulative fraction), sorted.
    pub rto_over_rtt_cdf: Vec<(f64, f64)>,
    /// Median and 99th percentile of RTO/RTT.
    pub rto_over_rtt_median: Option<f64>,
    /// 99th percentile of RTO/RTT.
    pub rto_over_rtt_p99: Option<f64>,
    /// Figure 3.
    pub loss_by_position: Vec<PositionCurve>,
    /// Figure 4.
    pub losses_per_burst: Vec<LossCount>,
    /// Bursts longer than the figures show.
    pub long_bursts: u64,
}

impl Figures {
    /// An exchange of a flow with RTT `rtt_ms` took `ms`.
    pub fn latency(&mut self, rtt_ms: f64, ms: f64, lossy: bool) {
        let cell = &mut self.latency[rtt_bucket(rtt_ms)][lossy as usize];
        cell.n += 1;
        cell.ms += ms;
        cell.rtt_ms += rtt_ms;
    }

    /// A burst of `len` packets lost `lost` of them.
    pub fn burst(&mut self, len: u16, lost: u16) {
        let len = len as usize;
        if len > MAX_BURST {
            self.long_bursts += 1;
            return;
        }
        for p in 1..=len {
            self.sent[len][p] += 1;
        }
        if lost > 0 {
            let l = &mut self.lossy[len];
            l[0] += 1;
            if lost == 1 {
                l[1] += 1;
            }
            if lost == 2 {
                l[2] += 1;
            }
        }
    }

    /// The packet at `pos` of a burst of `len` was lost.
    pub fn loss_at(&mut self, len: u16, pos: u16) {
        let (len, pos) = (len as usize, pos as usize);
        if len <= MAX_BURST && (1..=len).contains(&pos) {
            self.lost[len][pos] += 1;
        }
    }

    /// Adds another capture's counts.
    pub fn merge(&mut self, o: &Figures) {
        for (a, b) in self.latency.iter_mut().zip(&o.latency) {
            for k in 0..2 {
                a[k].n += b[k].n;
                a[k].ms += b[k].ms;
                a[k].rtt_ms += b[k].rtt_ms;
            }
        }
        self.rto_over_rtt.extend_from_slice(&o.rto_over_rtt);
        for l in 0..=MAX_BURST {
            for p in 0..=MAX_BURST {
                self.sent[l][p] += o.sent[l][p];
                self.lost[l][p] += o.lost[l][p];
            }
            for k in 0..3 {
                self.lossy[l][k] += o.lossy[l][k];
            }
        }
        self.long_bursts += o.long_bursts;
    }

    /// The curves.
    pub fn summary(&self) -> FigureData {
        let latency_by_rtt = self
            .latency
            .iter()
            .enumerate()
            .filter(|(_, c)| c[0].n + c[1].n > 0)
            .map(|(i, c)| {
                let mean = |c: LatencyCell| (c.n > 0).then(|| c.ms / c.n as f64);
                LatencyBucket {
                    rtt_from_ms: RTT_EDGES_MS[i],
                    rtt_to_ms: RTT_EDGES_MS.get(i + 1).copied(),
                    rtt_mean_ms: (c[0].rtt_ms + c[1].rtt_ms) / (c[0].n + c[1].n) as f64,
                    no_loss_ms: mean(c[0]),
                    no_loss_n: c[0].n,
                    loss_ms: mean(c[1]),
                    loss_n: c[1].n,
                }
            })
            .collect();
        let mut r = self.rto_over_rtt.clone();
        r.sort_by(f64::total_cmp);
        let n = r.len();
        let q = |f: f64| (n > 0).then(|| r[((f * n as f64).ceil() as usize).clamp(1, n) - 1]);
        let cdf = r
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, (i + 1) as f64 / n as f64))
            .collect();
        let loss_by_position = (2..=MAX_BURST)
            .filter(|&l| self.sent[l][1] > 0 && self.lost[l][1..=l].iter().any(|&x| x > 0))
            .map(|l| {
                let p = |x: usize| self.lost[l][x] as f64 / self.sent[l][x] as f64;
                let p1 = p(1);
                PositionCurve {
                    burst_len: l,
                    bursts: self.sent[l][1],
                    relative: (1..=l).map(|x| (p1 > 0.0).then(|| p(x) / p1)).collect(),
                    losses: self.lost[l][1..=l].to_vec(),
                }
            })
            .collect();
        let losses_per_burst = (1..=MAX_BURST)
            .filter(|&l| self.lossy[l][0] > 0)
            .map(|l| {
                let [n, one, two] = self.lossy[l];
                LossCount {
                    burst_len: l,
                    lossy_bursts: n,
                    one: one as f64 / n as f64,
                    at_most_two: (one + two) as f64 / n as f64,
                }
            })
            .collect();
        FigureData {
            latency_by_rtt,
            rto_over_rtt_cdf: cdf,
            rto_over_rtt_median: q(0.5),
            rto_over_rtt_p99: q(0.99),
            loss_by_position,
            losses_per_burst,
            long_bursts: self.long_bursts,
        }
    }
}
