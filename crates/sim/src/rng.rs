//! Seeded random streams. Every stream is derived from (trial seed, stream id), so
//! what one link draws never depends on what another link or the engine drew: the
//! loss pattern of a link is the same for every variant of a trial.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

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
    ChaCha8Rng::seed_from_u64(stream_seed(trial_seed, stream))
}

/// A host's stream: its connections' initial sequence numbers and timestamp
/// offsets (RFC 9293 §3.4.1, RFC 7323 §5.4), a few draws a trial. Xoshiro256++, as
/// its first draw computes nothing ahead (ChaCha's computes 256 bytes, about 900
/// instructions, a fiftieth of a short trial).
pub type HostRng = Xoshiro256PlusPlus;

/// The host stream `stream` within a trial.
pub fn host_stream(trial_seed: u64, stream: u64) -> HostRng {
    Xoshiro256PlusPlus::seed_from_u64(stream_seed(trial_seed, stream))
}

/// [`stream`], made when it is first drawn from: the same draws, and nothing to pay
/// for a stream a trial never draws from (a lossless link, fixed delays).
pub fn lazy_stream(trial_seed: u64, stream: u64) -> Lazy {
    Lazy {
        seed: stream_seed(trial_seed, stream),
        rng: None,
    }
}

fn stream_seed(trial_seed: u64, stream: u64) -> u64 {
    mix64(trial_seed ^ mix64(stream.wrapping_mul(0xA24B_AED4_963E_E407)))
}

/// A random stream seeded now and made on its first draw (see [`lazy_stream`]).
#[derive(Clone, Debug)]
pub struct Lazy {
    seed: u64,
    rng: Option<ChaCha8Rng>,
}

impl Lazy {
    /// The stream, made now if it was not yet.
    #[inline]
    pub fn get(&mut self) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.rng
            .get_or_insert_with(|| ChaCha8Rng::seed_from_u64(seed))
    }
}

impl From<ChaCha8Rng> for Lazy {
    fn from(rng: ChaCha8Rng) -> Lazy {
        Lazy {
            seed: 0,
            rng: Some(rng),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn a_lazy_stream_draws_what_the_stream_draws_and_is_made_on_its_first_draw() {
        let mut eager = stream(7, ids::LINK + 3);
        let mut lazy = lazy_stream(7, ids::LINK + 3);
        assert!(lazy.rng.is_none(), "made before any draw");
        for _ in 0..100 {
            assert_eq!(lazy.get().r#gen::<u64>(), eager.r#gen::<u64>());
        }
        let mut other = lazy_stream(7, ids::LINK + 4);
        assert_ne!(
            other.get().r#gen::<u64>(),
            stream(7, ids::LINK + 3).r#gen::<u64>()
        );
    }
}
