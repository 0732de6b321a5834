//! A token-bucket policer, as Flach et al. describe the ones they found on the
//! Internet ("An Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016, §2):
//! tokens accrue at the policing rate up to the bucket's size (the burst), a packet
//! passes if the bucket holds at least its size in tokens and takes them, and a
//! packet that finds too few is dropped at once — never queued, unlike a shaper's
//! packets, which wait in a buffer for the rate (a rate-limited link with a queue,
//! whose RTT grows before it drops).
//!
//! The bucket starts full, so a flow's first `burst` bytes pass at any speed; after
//! that it gets the policing rate and loses what it sends above it. The policer sits
//! before the link's queue and transmitter: it sees packets as they are offered.
//!
//! Tokens are counted in bit-nanoseconds (bits × 10⁹), integers, so the bucket
//! fills by `rate_bps` per nanosecond exactly and two runs agree to the bit.

use serde::{Deserialize, Serialize};

/// The policer of one link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policer {
    /// The policing rate, bits per second (above 0).
    pub rate_bps: u64,
    /// The bucket's size, bytes: the most that can pass at once.
    pub burst_bytes: u64,
}

/// A bucket's tokens: bits × 10⁹.
const SCALE: u128 = 1_000_000_000;

/// The bucket of a [`Policer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicerState {
    rate_bps: u128,
    cap: u128,
    tokens: u128,
    last_ns: u64,
}

impl PolicerState {
    /// A full bucket.
    pub fn new(p: Policer) -> Self {
        let cap = p.burst_bytes as u128 * 8 * SCALE;
        PolicerState {
            rate_bps: p.rate_bps as u128,
            cap,
            tokens: cap,
            last_ns: 0,
        }
    }

    /// Whether a packet of `bytes` offered at `now_ns` passes (it then takes its
    /// tokens); times only grow.
    #[inline]
    pub fn pass(&mut self, now_ns: u64, bytes: usize) -> bool {
        let dt = now_ns.saturating_sub(self.last_ns) as u128;
        self.last_ns = self.last_ns.max(now_ns);
        self.tokens = (self.tokens + dt * self.rate_bps).min(self.cap);
        let need = bytes as u128 * 8 * SCALE;
        if self.tokens < need {
            return false;
        }
        self.tokens -= need;
        true
    }

    /// The bytes the bucket holds now (at its last packet).
    pub fn tokens_bytes(&self) -> u64 {
        (self.tokens / (8 * SCALE)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policer(rate_bps: u64, burst_bytes: u64) -> PolicerState {
        PolicerState::new(Policer {
            rate_bps,
            burst_bytes,
        })
    }

    #[test]
    fn a_burst_up_to_the_bucket_passes_and_the_next_packet_is_dropped() {
        let mut p = policer(1_000_000, 30_000);
        for _ in 0..20 {
            assert!(p.pass(0, 1500));
        }
        assert_eq!(p.tokens_bytes(), 0);
        assert!(!p.pass(0, 1500), "the bucket is empty");
        // 12 ms at 1 Mbit/s is 1500 bytes: one more packet.
        assert!(!p.pass(11_999_999, 1500));
        assert!(p.pass(12_000_000, 1500));
        assert!(!p.pass(12_000_000, 40), "not even an ACK");
    }

    #[test]
    fn the_bucket_never_holds_more_than_the_burst() {
        let mut p = policer(8_000_000, 3_000);
        assert!(p.pass(10_000_000_000, 1500));
        assert!(p.pass(10_000_000_000, 1500));
        assert!(
            !p.pass(10_000_000_000, 1500),
            "10 s idle still fills only 3000 bytes"
        );
    }

    #[test]
    fn a_sender_far_above_the_rate_gets_the_rate() {
        // 10 Mbit/s offered to a 2 Mbit/s policer for 10 s.
        let mut p = policer(2_000_000, 15_000);
        let (mut t, mut passed) = (0u64, 0u64);
        while t < 10_000_000_000 {
            if p.pass(t, 1250) {
                passed += 1250;
            }
            t += 1_000_000; // 1250 bytes per ms: 10 Mbit/s
        }
        let rate = passed as f64 * 8.0 / 10.0;
        assert!((rate - 2_000_000.0).abs() < 20_000.0, "{rate} bit/s");
    }
}
