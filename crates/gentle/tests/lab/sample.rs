//! The latency sample: exact quantiles while small, within 0.1% once it turns into a
//! histogram, the mean always exact, and the same result however it was merged.

use gentle_lab::sample::{EXACT_LIMIT, Sample};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[test]
fn small_samples_are_exact_large_ones_within_a_tenth_of_a_percent() {
    let mut r = ChaCha8Rng::seed_from_u64(5);
    for n in [10usize, 1000, EXACT_LIMIT + 50_000] {
        let values: Vec<u64> = (0..n)
            .map(|_| (r.gen_range(0.0f64..1.0).powi(3) * 5e9) as u64 + 1_000_000)
            .collect();
        let mut s = Sample::default();
        for &v in &values {
            s.push(v);
        }
        s.finish();
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert_eq!(s.is_exact(), n <= EXACT_LIMIT);
        let mean = values.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        assert!((s.mean() - mean).abs() < 1e-6 * mean);
        for q in [0.01, 0.25, 0.5, 0.9, 0.99, 1.0] {
            let want = exact_quantile(&sorted, q) as f64;
            let got = s.quantile(q);
            if s.is_exact() {
                assert_eq!(got, want, "n {n} q {q}");
            } else {
                assert!(
                    (got - want).abs() <= 0.001 * want,
                    "n {n} q {q}: {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn merging_in_pieces_equals_one_pass() {
    let mut r = ChaCha8Rng::seed_from_u64(9);
    let values: Vec<u64> = (0..EXACT_LIMIT + 1000)
        .map(|_| r.gen_range(1..10_000_000_000))
        .collect();
    let mut whole = Sample::default();
    values.iter().for_each(|&v| whole.push(v));
    whole.finish();
    let mut merged = Sample::default();
    for chunk in values.chunks(64) {
        let mut p = Sample::default();
        chunk.iter().for_each(|&v| p.push(v));
        merged.merge(p);
    }
    merged.finish();
    for q in [0.1, 0.5, 0.9, 0.999] {
        assert_eq!(whole.quantile(q), merged.quantile(q));
    }
    assert_eq!(whole.mean(), merged.mean());
    assert_eq!(whole.len(), merged.len());
}
