//! A latency sample whose memory does not grow with the number of trials: exact
//! values up to [`EXACT_LIMIT`], then a log-linear histogram with 1024 buckets per
//! power of two (relative error below 0.1%). Count, sum, minimum and maximum stay
//! exact, so the mean is exact. Merging in a fixed order keeps results identical
//! with any number of threads.

/// Values kept exactly before switching to the histogram (2 MiB of samples).
pub const EXACT_LIMIT: usize = 1 << 18;

const SUB_BITS: u32 = 10;
const SUB: usize = 1 << SUB_BITS;
/// Buckets: values below 1024 exactly, then 1024 per octave up to 2^64.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

fn bucket(x: u64) -> usize {
    if x < SUB as u64 {
        return x as usize;
    }
    let e = 63 - x.leading_zeros();
    let sub = ((x >> (e - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (e - SUB_BITS) as usize * SUB + sub
}

/// The middle of bucket `i`.
fn bucket_value(i: usize) -> u64 {
    if i < SUB {
        return i as u64;
    }
    let e = ((i - SUB) / SUB) as u32 + SUB_BITS;
    let sub = ((i - SUB) % SUB) as u64;
    let width = 1u64 << (e - SUB_BITS);
    (1u64 << e) + sub * width + width / 2
}

#[derive(Clone, Debug, Default)]
pub struct Sample {
    exact: Vec<u64>,
    hist: Option<Vec<u64>>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
    sorted: bool,
}

impl Sample {
    pub fn len(&self) -> usize {
        self.n as usize
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// True while every value is kept exactly.
    pub fn is_exact(&self) -> bool {
        self.hist.is_none()
    }

    pub fn push(&mut self, x: u64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.n += 1;
        self.sum += x as u128;
        self.sorted = false;
        match &mut self.hist {
            Some(h) => h[bucket(x)] += 1,
            None => {
                self.exact.push(x);
                if self.exact.len() > EXACT_LIMIT {
                    self.switch_to_hist();
                }
            }
        }
    }

    fn switch_to_hist(&mut self) {
        let mut h = vec![0u64; BUCKETS];
        for &x in &self.exact {
            h[bucket(x)] += 1;
        }
        self.exact = Vec::new();
        self.hist = Some(h);
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: Sample) {
        if other.n == 0 {
            return;
        }
        if self.n == 0 {
            self.min = other.min;
            self.max = other.max;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.n += other.n;
        self.sum += other.sum;
        self.sorted = false;
        match (&mut self.hist, other.hist) {
            (None, None) => {
                self.exact.extend(other.exact);
                if self.exact.len() > EXACT_LIMIT {
                    self.switch_to_hist();
                }
            }
            (None, Some(h)) => {
                let mine = std::mem::take(&mut self.exact);
                self.hist = Some(h);
                let hist = self.hist.as_mut().expect("just set");
                for x in mine {
                    hist[bucket(x)] += 1;
                }
            }
            (Some(h), None) => {
                for x in other.exact {
                    h[bucket(x)] += 1;
                }
            }
            (Some(h), Some(o)) => {
                for (a, b) in h.iter_mut().zip(o) {
                    *a += b;
                }
            }
        }
    }

    /// Sorts the exact values; call once all values are in.
    pub fn finish(&mut self) {
        if !self.sorted {
            self.exact.sort_unstable();
            self.sorted = true;
        }
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Nearest-rank quantile (exact while the sample is exact; within 0.1% after).
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        match &self.hist {
            None => {
                debug_assert!(self.sorted, "finish() before quantiles");
                self.exact[rank as usize - 1] as f64
            }
            Some(h) => {
                let mut seen = 0u64;
                for (i, &c) in h.iter().enumerate() {
                    seen += c;
                    if seen >= rank {
                        return bucket_value(i).clamp(self.min, self.max) as f64;
                    }
                }
                self.max as f64
            }
        }
    }

    /// Up to about `max_points` (value, cumulative fraction) points of the CDF.
    pub fn cdf_points(&self, max_points: usize) -> Vec<(u64, f64)> {
        let n = self.n as f64;
        let mut pts = Vec::new();
        match &self.hist {
            None => {
                let step = (self.exact.len() / max_points.max(1)).max(1);
                for (k, &x) in self.exact.iter().enumerate().step_by(step) {
                    pts.push((x, (k + 1) as f64 / n));
                }
            }
            Some(h) => {
                let mut seen = 0u64;
                for (i, &c) in h.iter().enumerate() {
                    if c > 0 {
                        seen += c;
                        pts.push((bucket_value(i).clamp(self.min, self.max), seen as f64 / n));
                    }
                }
                let step = (pts.len() / max_points.max(1)).max(1);
                pts = pts.into_iter().step_by(step).collect();
            }
        }
        if self.n > 0 {
            pts.push((self.max, 1.0));
        }
        pts
    }
}
