//! Signatures against response time, over every exchange of a many-capture run:
//! for each signature, the share of the exchanges carrying it that were slow, next to
//! the share among the exchanges without it, each with its 95% Wilson interval.
//!
//! Only exchanges with a response time count (an exchange whose response was never
//! fully acknowledged in the capture has none). An exchange is slow when its response
//! time is above the threshold: `--slow MS`, or else the median of every such
//! exchange of the run (the lower median, the ⌈n/2⌉-th smallest, so that at most
//! half are slow whatever the ties).

use std::fmt::Write as _;

use super::signatures::{self, NAMES, Set};
use crate::ci::{Interval, wilson};

/// Slow exchanges among some: how many, of how many.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Share {
    pub slow: u64,
    pub n: u64,
}

impl Share {
    fn add(&mut self, slow: bool) {
        self.n += 1;
        self.slow += u64::from(slow);
    }
    /// The share, and its 95% Wilson interval (none of no exchanges).
    pub fn ci(&self) -> Option<(f64, Interval)> {
        wilson(self.slow, self.n).map(|i| (self.slow as f64 / self.n as f64, i))
    }
}

/// One signature's row: the exchanges with it and without it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub signature: &'static str,
    pub with: Share,
    pub without: Share,
}

/// The correlation of a run's exchanges.
#[derive(Clone, Debug, PartialEq)]
pub struct Correlation {
    /// The threshold, ms.
    pub slow_ms: f64,
    /// Whether it is the median (else `--slow`).
    pub median: bool,
    /// Exchanges with a response time.
    pub timed: u64,
    /// Slow ones among them.
    pub slow: u64,
    /// A row per signature, in [`NAMES`] order.
    pub rows: Vec<Row>,
}

/// The lower median of `xs` (unsorted), none of nothing.
fn lower_median(xs: &[f64]) -> Option<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// Correlates the exchanges `timed` (response time in ms, signatures), slow above
/// `slow_ms` or else their median; none without exchanges.
pub fn correlate(timed: &[(f64, Set)], slow_ms: Option<f64>) -> Option<Correlation> {
    let times: Vec<f64> = timed.iter().map(|x| x.0).collect();
    let (threshold, median) = match slow_ms {
        Some(ms) => (ms, false),
        None => (lower_median(&times)?, true),
    };
    let mut rows: Vec<Row> = NAMES
        .iter()
        .map(|&signature| Row {
            signature,
            with: Share::default(),
            without: Share::default(),
        })
        .collect();
    let mut slow_total = 0;
    for &(ms, set) in timed {
        let slow = ms > threshold;
        slow_total += u64::from(slow);
        for (i, r) in rows.iter_mut().enumerate() {
            if signatures::has(set, i) {
                r.with.add(slow);
            } else {
                r.without.add(slow);
            }
        }
    }
    Some(Correlation {
        slow_ms: threshold,
        median,
        timed: timed.len() as u64,
        slow: slow_total,
        rows,
    })
}

fn cell(s: &Share) -> String {
    match s.ci() {
        Some((p, i)) => format!(
            "{:>9} {:>6.1}% [{:>5.1}, {:>5.1}]",
            s.n,
            100.0 * p,
            100.0 * i.lo,
            100.0 * i.hi
        ),
        None => format!("{:>9} {:>6} {:>14}", s.n, "-", ""),
    }
}

/// The correlation as a table: a row per signature seen, the others named under it.
pub fn text(c: &Correlation) -> String {
    let mut s = String::new();
    let why = if c.median {
        format!(
            "the median of the {} exchanges with a response time; --slow MS sets another",
            c.timed
        )
    } else {
        "--slow".to_string()
    };
    let _ = writeln!(
        s,
        "slow: a response time above {} ms ({why}): {} of {} exchanges",
        super::fmt_ms(c.slow_ms),
        c.slow,
        c.timed
    );
    let _ = writeln!(
        s,
        "{:<15} {:>9} {:>7} {:>14}   {:>9} {:>7} {:>14}",
        "signature", "with", "slow", "95% CI", "without", "slow", "95% CI"
    );
    let mut unseen = Vec::new();
    for r in &c.rows {
        if r.with.n == 0 {
            unseen.push(r.signature);
            continue;
        }
        let _ = writeln!(
            s,
            "{:<15} {}   {}",
            r.signature,
            cell(&r.with),
            cell(&r.without)
        );
    }
    if !unseen.is_empty() {
        let _ = writeln!(
            s,
            "on no exchange with a response time: {}",
            unseen.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "(with/without: exchanges with a response time carrying the signature or not; slow: \
         the share of them above the threshold, in %, with its 95% Wilson interval)"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_splits_and_signatures_count_with_and_without() {
        let timeout = 1 << NAMES.iter().position(|n| *n == "timeout").unwrap();
        // Four exchanges: the median is 20 ms (the lower one); 30 and 40 are slow.
        let x = [(10.0, 0), (20.0, timeout), (30.0, 0), (40.0, timeout)];
        let c = correlate(&x, None).unwrap();
        assert_eq!((c.slow_ms, c.median, c.timed, c.slow), (20.0, true, 4, 2));
        let r = c.rows.iter().find(|r| r.signature == "timeout").unwrap();
        assert_eq!(r.with, Share { slow: 1, n: 2 });
        assert_eq!(r.without, Share { slow: 1, n: 2 });
        let c = correlate(&x, Some(35.0)).unwrap();
        assert_eq!((c.slow, c.median), (1, false));
        assert!(correlate(&[], None).is_none());
    }
}
