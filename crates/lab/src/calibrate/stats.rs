//! The value of a calibration target's statistic in a run
//! ([`crate::scenario::targets`] defines the names).

use crate::runner::VariantResult;
use crate::sample::Sample;
use crate::scenario::targets::{Atom, BACKEND, SERVER, Stat, Subset};

/// The statistic's value for one variant's results; `None` when a ratio's
/// denominator is zero or there is no latency to take a quantile of.
pub fn value(stat: &Stat, v: &VariantResult) -> Option<f64> {
    let num = sum(&stat.num, v)?;
    if stat.den.is_empty() {
        return Some(num);
    }
    let den = sum(&stat.den, v)?;
    (den != 0.0).then(|| num / den)
}

fn sum(atoms: &[Atom], v: &VariantResult) -> Option<f64> {
    atoms.iter().map(|a| atom(a, v)).sum()
}

fn atom(a: &Atom, v: &VariantResult) -> Option<f64> {
    const MS: f64 = 1e6;
    match a {
        Atom::LatencyMean(s) => {
            let l = latencies(*s, v);
            (!l.is_empty()).then(|| l.mean() / MS)
        }
        Atom::LatencyQuantile(s, q) => {
            let l = latencies(*s, v);
            (!l.is_empty()).then(|| l.quantile(*q) / MS)
        }
        Atom::Count(name) => Some(count(name, v) as f64),
        Atom::Minus(a) => atom(a, v).map(|x| -x),
    }
}

fn latencies(s: Subset, v: &VariantResult) -> &Sample {
    match s {
        Subset::Ranked => &v.latencies,
        Subset::Retransmitted => &v.retransmitted,
        Subset::Lost => &v.lost,
    }
}

fn count(name: &str, v: &VariantResult) -> u64 {
    match name {
        "Exchanges" => v.exchanges,
        "ExchangesWithRetrans" => v.with_retransmission,
        "ExchangesWithServerRetrans" => v.with_server_retransmission,
        "ExchangesWithLoss" => v.with_loss,
        "LinkOffered" => v.links.offered,
        "LinkLossDrops" => v.links.dropped_loss,
        "LinkQueueDrops" => v.links.dropped_queue,
        "LossyBursts" => v.links.lossy_bursts[0],
        "LossyBursts1" => v.links.lossy_bursts[1],
        "LossyBursts2" => v.links.lossy_bursts[2],
        // `prr-imc11.txt` Table 5 and §5.4: how pipe stood against ssthresh as each
        // fast-recovery episode began (the clustering of the losses it began with).
        "RecoveryStarts" => v.episodes.start.len(),
        "RecoveryStartsBelowSsthresh" => v.episodes.start.count(|x| x < 0),
        "RecoveryStartsAtSsthresh" => v.episodes.start.count(|x| x == 0),
        "RecoveryStartsAboveSsthresh" => v.episodes.start.count(|x| x > 0),
        counter => {
            let (counters, counter) = if let Some(c) = counter.strip_prefix(BACKEND) {
                (&v.backend, c)
            } else if let Some(c) = counter.strip_prefix(SERVER) {
                (&v.server, c)
            } else {
                (&v.counters, counter)
            };
            counters
                .iter()
                .find(|(n, _)| *n == counter)
                .map_or(0, |(_, x)| x)
        }
    }
}

/// The names of the report's counters (what a statistic may name besides the
/// extra atoms).
pub fn counter_names() -> Vec<&'static str> {
    gentle_tcp::Counters::default()
        .iter()
        .map(|(n, _)| n)
        .collect()
}
