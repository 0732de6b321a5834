//! Seeded random streams. Every stream is derived from (trial seed, stream id), so
//! what one link draws never depends on what another link or the engine drew: the
//! loss pattern of a link is the same for every variant of a trial.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// SplitMix64 finaliser: a well-mixed 64-bit hash.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Seed of trial `trial` of a run seeded with `seed`.
pub fn trial_seed(seed: u64, trial: u64) -> u64 {
    mix64(seed ^ mix64(trial.wrapping_add(0x5EED)))
}

/// A random stream for `stream` within a trial.
pub fn stream(trial_seed: u64, stream: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(mix64(
        trial_seed ^ mix64(stream.wrapping_mul(0xA24B_AED4_963E_E407)),
    ))
}

/// Stream ids.
pub mod ids {
    /// Link direction `i` uses `LINK + i`.
    pub const LINK: u64 = 1 << 32;
    /// Host `i` (ISNs, timestamp offsets) uses `HOST + i`.
    pub const HOST: u64 = 2 << 32;
    /// Workload `i` (sizes, start jitter) uses `WORKLOAD + i`.
    pub const WORKLOAD: u64 = 3 << 32;
    /// Per-trial network parameters drawn from distributions.
    pub const NETWORK: u64 = 4 << 32;
}
