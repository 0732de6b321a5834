//! Fast-recovery episodes (`prr-imc11.txt` Tables 5–7) counted by value: the memory
//! they take is bounded by the range of values seen (a few hundred segments), not
//! by the number of episodes, however many trials run. Quantiles are exact.

use std::collections::BTreeMap;

use gentle_sim::record::Episode;

/// How many times each integer value was seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    by_value: BTreeMap<i64, u64>,
    n: u64,
}

impl Counts {
    pub fn push(&mut self, x: i64) {
        *self.by_value.entry(x).or_default() += 1;
        self.n += 1;
    }

    pub fn merge(&mut self, other: &Counts) {
        for (&x, &c) in &other.by_value {
            *self.by_value.entry(x).or_default() += c;
        }
        self.n += other.n;
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The `k`-th smallest value (from 0).
    pub fn nth(&self, k: u64) -> Option<i64> {
        let mut seen = 0;
        for (&x, &c) in &self.by_value {
            seen += c;
            if seen > k {
                return Some(x);
            }
        }
        None
    }

    /// Nearest-rank quantile.
    pub fn quantile(&self, q: f64) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        self.nth(rank - 1)
    }

    /// How many values `f` holds for.
    pub fn count(&self, f: impl Fn(i64) -> bool) -> u64 {
        let hits = self.by_value.iter().filter(|&(&x, _)| f(x));
        hits.map(|(_, &c)| c).sum()
    }

    /// The fraction of values for which `f` holds.
    pub fn share(&self, f: impl Fn(i64) -> bool) -> Option<f64> {
        (self.n > 0).then(|| self.count(f) as f64 / self.n as f64)
    }
}

/// The recovery episodes of one variant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Episodes {
    /// pipe − ssthresh as each episode started (Table 5).
    pub start: Counts,
    /// cwnd − ssthresh before the exit, every episode.
    pub last: Counts,
    /// The same, for episodes not ended by a timeout (Table 6).
    pub last_completed: Counts,
    /// cwnd after episodes not ended by a timeout (Table 7).
    pub cwnd_after: Counts,
}

impl Episodes {
    pub fn push(&mut self, e: &Episode) {
        self.start.push(e.start_pipe_minus_ssthresh.into());
        self.last.push(e.last_cwnd_minus_ssthresh.into());
        if let Some(c) = e.cwnd_after {
            self.last_completed.push(e.last_cwnd_minus_ssthresh.into());
            self.cwnd_after.push(c.into());
        }
    }

    pub fn merge(&mut self, other: &Episodes) {
        self.start.merge(&other.start);
        self.last.merge(&other.last);
        self.last_completed.merge(&other.last_completed);
        self.cwnd_after.merge(&other.cwnd_after);
    }

    /// Episodes counted.
    pub fn len(&self) -> u64 {
        self.start.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_a_sorted_list() {
        let xs = [5i64, -3, 0, 0, 7, 2, 2, 2, -1, 9];
        let mut c = Counts::default();
        for &x in &xs {
            c.push(x);
        }
        let mut sorted = xs.to_vec();
        sorted.sort_unstable();
        for (k, &x) in sorted.iter().enumerate() {
            assert_eq!(c.nth(k as u64), Some(x));
        }
        assert_eq!(c.quantile(0.0), Some(-3));
        assert_eq!(c.quantile(0.5), Some(2));
        assert_eq!(c.quantile(1.0), Some(9));
        assert_eq!(c.share(|x| x < 0), Some(0.2));
        assert_eq!(Counts::default().quantile(0.5), None);
    }
}
