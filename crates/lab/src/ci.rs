//! 95% confidence intervals of the differences a report prints (Δ of the mean and of
//! each quantile, in ms and in %), by a paired bootstrap over trials with
//! percentile intervals (Efron and Tibshirani, *An Introduction to the Bootstrap*,
//! 1993, §13.3; Davison and Hinkley, *Bootstrap Methods and their Application*,
//! 1997, §5.2).
//!
//! Every variant runs trial k with the same seed — the same losses, delays and
//! workload draws — so the differences are paired, and the trial is the unit that is
//! resampled: a resample draws as many trials as were run, with replacement, and
//! takes every ranked value of the drawn trials in every variant alike. The
//! statistic (mean, or nearest-rank quantile as [`crate::sample::Sample`] computes
//! it) is taken of each variant's resampled values, the difference from the
//! baseline's; the interval runs from the 2.5th to the 97.5th percentile of the
//! differences over [`RESAMPLES`] resamples. The resamples are drawn from the run's
//! seed: the intervals, like every other number, are a function of scenario and seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

/// Bootstrap resamples: 1000 is the count Efron and Tibshirani (1993, §19.3) advise
/// for percentile intervals at 95%.
pub const RESAMPLES: usize = 1000;

/// Ranked values kept with their trial per variant (24 MiB); a longer run's
/// intervals come from its first trials whose values all fit.
pub const PAIRED_LIMIT: usize = 1 << 21;

/// The percentiles whose differences get intervals: 1 to 99 (the report's 25, 50,
/// 90 and 99 among them; the figures draw them all).
pub const PERCENTILES: std::ops::RangeInclusive<u32> = 1..=99;

/// The statistics of one resample: the mean, then the percentiles 1 to 99.
const STATS: usize = 100;

/// The ranked values of one variant, each with the trial it came from, in trial
/// order; at most [`PAIRED_LIMIT`] of them.
#[derive(Clone, Debug, Default)]
pub struct ByTrial {
    values: Vec<(u64, u32)>,
    /// The trial of the first value that did not fit: trials before it are whole.
    cut: Option<u64>,
}

impl ByTrial {
    /// Adds the value `x` of trial `trial` (trials come in order).
    pub fn push(&mut self, trial: u64, x: u64) {
        if self.cut.is_some() {
            return;
        }
        match u32::try_from(trial) {
            Ok(t) if self.values.len() < PAIRED_LIMIT => self.values.push((x, t)),
            _ => self.cut = Some(trial),
        }
    }

    /// Adds the values of `later`, whose trials all come after these.
    pub fn merge(&mut self, later: ByTrial) {
        for &(x, t) in &later.values {
            self.push(t as u64, x);
        }
        if let (None, Some(c)) = (self.cut, later.cut) {
            self.cut = Some(c);
        }
    }

    /// Trials whose every value is kept, of `trials` run.
    fn whole_trials(&self, trials: u64) -> u64 {
        self.cut.map_or(trials, |c| c.min(trials))
    }
}

/// A 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Whether the interval holds 0: the difference may be none at all.
    pub fn contains_zero(&self) -> bool {
        self.lo <= 0.0 && 0.0 <= self.hi
    }
}

/// The interval of one difference, in ms and in % of the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DeltaCi {
    pub ms: Interval,
    pub pct: Interval,
}

/// The intervals of one variant's differences from the baseline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deltas {
    /// Δ of the mean.
    pub mean: DeltaCi,
    /// Δ of percentile `p` at index `p - 1`, for p in 1..=99.
    pub percentiles: Vec<DeltaCi>,
    /// The trials resampled (all that ran, unless the run was longer than
    /// [`PAIRED_LIMIT`] values allow).
    pub trials: u64,
}

impl Deltas {
    /// The interval of percentile `p` (1 to 99).
    pub fn percentile(&self, p: u32) -> DeltaCi {
        self.percentiles[p as usize - 1]
    }
}

/// The values of one variant sorted by value, for weighted statistics.
struct Sorted {
    values: Vec<(u64, u32)>,
}

impl Sorted {
    fn new(v: &ByTrial, trials: u64) -> Sorted {
        let mut values: Vec<(u64, u32)> = v
            .values
            .iter()
            .copied()
            .filter(|&(_, t)| (t as u64) < trials)
            .collect();
        values.sort_unstable();
        Sorted { values }
    }

    /// The mean and percentiles 1 to 99 of the values, each weighted by how many
    /// times its trial was drawn; NaN when no value was drawn.
    fn stats(&self, counts: &[u32]) -> [f64; STATS] {
        let mut out = [f64::NAN; STATS];
        let weight = |t: u32| counts[t as usize] as u64;
        let total: u64 = self.values.iter().map(|&(_, t)| weight(t)).sum();
        if total == 0 {
            return out;
        }
        let sum: f64 = self
            .values
            .iter()
            .map(|&(x, t)| x as f64 * weight(t) as f64)
            .sum();
        out[0] = sum / total as f64;
        // Nearest rank, as `Sample::quantile`: the smallest value whose cumulative
        // weight reaches ceil(q · total).
        let mut seen = 0u64;
        let mut p = *PERCENTILES.start();
        for &(x, t) in &self.values {
            seen += weight(t);
            while p <= *PERCENTILES.end() && seen >= rank(p, total) {
                out[p as usize] = x as f64;
                p += 1;
            }
        }
        out
    }
}

/// The nearest rank of percentile `p` among `n` values.
fn rank(p: u32, n: u64) -> u64 {
    ((p as f64 / 100.0 * n as f64).ceil() as u64).clamp(1, n)
}

/// How many times each of `trials` trials is drawn in resample `b`.
fn draw(seed: u64, b: usize, trials: u64) -> Vec<u32> {
    // A stream of its own per resample: the same counts on any number of threads.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6369_3935_626f_6f74);
    rng.set_stream(b as u64);
    let mut counts = vec![0u32; trials as usize];
    for _ in 0..trials {
        counts[rng.gen_range(0..trials) as usize] += 1;
    }
    counts
}

/// The intervals of every variant's differences from the first, from the ranked
/// values of each and the number of trials run; `None` for the baseline and for a
/// variant without values to compare.
pub fn deltas(variants: &[&ByTrial], trials: u64, seed: u64) -> Vec<Option<Deltas>> {
    let trials = variants
        .iter()
        .map(|v| v.whole_trials(trials))
        .min()
        .unwrap_or(0);
    let mut out = vec![None; variants.len()];
    if variants.len() < 2 || trials < 2 {
        return out;
    }
    let sorted: Vec<Sorted> = variants.iter().map(|v| Sorted::new(v, trials)).collect();
    // resamples × variants × statistics
    let stats: Vec<Vec<[f64; STATS]>> = (0..RESAMPLES)
        .into_par_iter()
        .map(|b| {
            let counts = draw(seed, b, trials);
            sorted.iter().map(|s| s.stats(&counts)).collect()
        })
        .collect();
    for (vi, o) in out.iter_mut().enumerate().skip(1) {
        if sorted[0].values.is_empty() || sorted[vi].values.is_empty() {
            continue;
        }
        let ci = |k: usize| -> DeltaCi {
            let (ms, pct): (Vec<f64>, Vec<f64>) = stats
                .iter()
                .map(|r| {
                    let d = r[vi][k] - r[0][k];
                    (d / 1e6, 100.0 * d / r[0][k])
                })
                .filter(|(d, p)| d.is_finite() && p.is_finite())
                .unzip();
            DeltaCi {
                ms: percentile_interval(ms),
                pct: percentile_interval(pct),
            }
        };
        *o = Some(Deltas {
            mean: ci(0),
            percentiles: PERCENTILES.map(|p| ci(p as usize)).collect(),
            trials,
        });
    }
    out
}

/// The 97.5th percentile of the standard normal distribution: a 95% interval's
/// half-width in standard errors.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95% Wilson score interval of a proportion: `k` successes in `n` trials
/// (Wilson, "Probable Inference, the Law of Succession, and Statistical Inference",
/// JASA 1927; Brown, Cai and DasGupta, Statistical Science 2001, §4.1.1, advise it
/// over the normal approximation for small `n` and proportions near 0 or 1). None
/// without trials.
pub fn wilson(k: u64, n: u64) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let (n, p) = (n as f64, k.min(n) as f64 / n as f64);
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        lo: (centre - half).max(0.0),
        hi: (centre + half).min(1.0),
    })
}

/// The 2.5th and 97.5th percentiles of the resampled differences (NaN when too
/// few resamples had values in both variants).
fn percentile_interval(mut xs: Vec<f64>) -> Interval {
    if xs.len() < RESAMPLES / 2 {
        return Interval {
            lo: f64::NAN,
            hi: f64::NAN,
        };
    }
    xs.sort_unstable_by(f64::total_cmp);
    let at = |q: f64| xs[((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1];
    Interval {
        lo: at(0.025),
        hi: at(0.975),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_intervals_match_published_values() {
        // 5 of 10 and 0 of 10 as tables of the Wilson interval give them; 81 of 263
        // from the formula worked separately.
        let i = wilson(5, 10).unwrap();
        assert!(
            (i.lo - 0.2366).abs() < 1e-4 && (i.hi - 0.7634).abs() < 1e-4,
            "{i:?}"
        );
        let i = wilson(0, 10).unwrap();
        assert!(i.lo == 0.0 && (i.hi - 0.2775).abs() < 1e-4, "{i:?}");
        let i = wilson(81, 263).unwrap();
        assert!(
            (i.lo - 0.2553).abs() < 1e-4 && (i.hi - 0.3662).abs() < 1e-4,
            "{i:?}"
        );
        assert_eq!(wilson(0, 0), None);
    }

    fn by_trial(values: &[(u64, u64)]) -> ByTrial {
        let mut b = ByTrial::default();
        for &(t, x) in values {
            b.push(t, x);
        }
        b
    }

    #[test]
    fn a_constant_shift_has_a_zero_width_interval_at_the_shift() {
        let base: Vec<(u64, u64)> = (0..200).map(|t| (t, 1_000_000 * (t % 17 + 1))).collect();
        let other: Vec<(u64, u64)> = base.iter().map(|&(t, x)| (t, x + 5_000_000)).collect();
        let d = deltas(&[&by_trial(&base), &by_trial(&other)], 200, 7);
        let d = d[1].as_ref().unwrap();
        assert_eq!(d.mean.ms, Interval { lo: 5.0, hi: 5.0 });
        assert_eq!(d.percentile(50).ms, Interval { lo: 5.0, hi: 5.0 });
        assert!(!d.mean.ms.contains_zero());
        assert!(d.mean.pct.lo > 0.0);
    }

    #[test]
    fn weighted_quantiles_match_nearest_rank_on_the_expanded_sample() {
        let s = Sorted::new(&by_trial(&[(0, 10), (1, 20), (2, 30), (3, 40)]), 4);
        // Trial 1 twice, trial 3 not at all: the sample 10, 20, 20, 30.
        let st = s.stats(&[1, 2, 1, 0]);
        assert_eq!(st[0], 20.0);
        assert_eq!(st[25], 10.0);
        assert_eq!(st[50], 20.0);
        assert_eq!(st[75], 20.0);
        assert_eq!(st[99], 30.0);
    }

    #[test]
    fn values_beyond_the_limit_cut_the_trials_resampled() {
        let mut b = ByTrial::default();
        for t in 0..(PAIRED_LIMIT as u64 + 10) {
            b.push(t, 1);
        }
        assert_eq!(b.whole_trials(u64::MAX), PAIRED_LIMIT as u64);
        let mut later = ByTrial::default();
        later.push(5, 1);
        let mut early = by_trial(&[(0, 1)]);
        early.merge(later);
        assert_eq!(early.values.len(), 2);
    }

    /// Coverage: two variants equal in distribution (a shared per-trial component,
    /// like the shared seed, plus noise of their own) under many seeds; the 95%
    /// intervals of the differences hold 0 about 95% of the time.
    #[test]
    fn intervals_of_equal_variants_hold_zero_95_percent_of_the_time() {
        let reps = 400;
        let trials = 300u64;
        let (mut mean_in, mut median_in, mut p90_in) = (0, 0, 0);
        for seed in 0..reps {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // Heavy-tailed like response times: exp of a shared and an own part, ns.
            let mut one = |shared: f64| -> u64 {
                let own: f64 = rng.r#gen::<f64>() * 1.5;
                (1e6 * (shared + own).exp()) as u64
            };
            let mut base = ByTrial::default();
            let mut other = ByTrial::default();
            for t in 0..trials {
                let shared: f64 = 3.0 * (t as f64 * 0.618).fract();
                base.push(t, one(shared));
                other.push(t, one(shared));
            }
            let d = deltas(&[&base, &other], trials, seed);
            let d = d[1].as_ref().unwrap();
            mean_in += d.mean.ms.contains_zero() as u32;
            median_in += d.percentile(50).ms.contains_zero() as u32;
            p90_in += d.percentile(90).ms.contains_zero() as u32;
        }
        for (what, k) in [("mean", mean_in), ("median", median_in), ("p90", p90_in)] {
            let cover = k as f64 / reps as f64;
            // 400 replications: the estimate's standard error is 1.1 points.
            assert!(
                (0.91..=0.985).contains(&cover),
                "{what}: intervals held 0 in {cover:.3} of {reps} runs"
            );
        }
    }

    #[test]
    fn resamples_do_not_depend_on_the_thread_count() {
        let a = draw(3, 17, 1000);
        assert_eq!(a.iter().sum::<u32>(), 1000);
        assert_eq!(a, draw(3, 17, 1000));
        assert_ne!(a, draw(3, 18, 1000));
    }
}
