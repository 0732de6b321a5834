//! The policing detector (Flach et al., SIGCOMM 2016, §2) on transmissions made
//! up here: an AIMD sender through a token bucket, through the same bucket with a
//! queue's delay in its RTTs, and through random loss.

use gentle_analyze::police::PoliceTrace;

const MS: u64 = 1_000_000;
const PKT: u32 = 1500;
const RTT: u64 = 50 * MS;

/// What the path does to a packet offered at `t`: dropped, or passed.
trait Path {
    fn pass(&mut self, t: u64) -> bool;
}

/// A token bucket of `burst` bytes filling at `rate` bytes per second, full at
/// the start.
struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: u64,
}

impl Bucket {
    fn new(rate_bps: f64, burst: f64) -> Self {
        Bucket {
            rate: rate_bps / 8.0,
            burst,
            tokens: burst,
            last: 0,
        }
    }
}

impl Path for Bucket {
    fn pass(&mut self, t: u64) -> bool {
        let dt = (t - self.last) as f64 / 1e9;
        self.last = t;
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        if self.tokens < PKT as f64 {
            return false;
        }
        self.tokens -= PKT as f64;
        true
    }
}

/// Each packet lost with probability `p` (a fixed linear congruential stream).
struct Random {
    p: f64,
    state: u64,
}

impl Path for Random {
    fn pass(&mut self, _t: u64) -> bool {
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.state >> 11) as f64 / (1u64 << 53) as f64) >= self.p
    }
}

/// A Reno-like sender for `rounds` RTTs: each round a window of packets back to
/// back (0.1 ms apart), one more the next round, half after a round with a loss.
/// Every passing packet gives an RTT sample of `RTT` plus `queue(i)` for the
/// packet sent `i`-th. Returns the trace and the lost transmissions.
fn send(
    path: &mut dyn Path,
    rounds: u32,
    queue: impl Fn(usize) -> u64,
) -> (PoliceTrace, Vec<usize>) {
    let mut trace = PoliceTrace::default();
    let mut lost = Vec::new();
    let mut w = 2u32;
    let mut t = 0u64;
    for _ in 0..rounds {
        let mut lossy = false;
        for k in 0..w {
            let at = t + k as u64 * MS / 10;
            let i = trace.len();
            trace.data(at, PKT);
            if path.pass(at) {
                let r = RTT + queue(i);
                trace.rtt(at + r, r);
            } else {
                lost.push(i);
                lossy = true;
            }
        }
        w = if lossy { (w / 2).max(2) } else { w + 1 };
        t += RTT;
    }
    (trace, lost)
}

#[test]
fn a_flow_through_a_token_bucket_is_policed_at_the_buckets_rate() {
    let mut bucket = Bucket::new(1_000_000.0, 15_000.0);
    let (trace, lost) = send(&mut bucket, 200, |_| 0);
    assert!(lost.len() >= 20, "{} losses", lost.len());
    let p = trace.detect(&lost, RTT).expect("policed");
    assert!(
        (p.rate_bps - 1e6).abs() < 0.1e6,
        "rate {} bit/s for 1 Mbit/s",
        p.rate_bps
    );
    assert!(p.burst_bytes <= 16_500.0, "burst {}", p.burst_bytes);
    assert_eq!(p.inflation_ns, 0);
}

#[test]
fn the_same_losses_behind_a_growing_queue_are_not_policing() {
    // The bucket's drops, but every RTT sample carries 20–120 ms of queueing:
    // a shaper's full buffer, not a policer.
    let mut bucket = Bucket::new(1_000_000.0, 15_000.0);
    let (trace, lost) = send(&mut bucket, 200, |i| (20 + (i as u64 % 100)) * MS);
    assert!(lost.len() >= 20);
    assert_eq!(trace.detect(&lost, RTT), None);
    // A queue of a few milliseconds is within the allowance.
    let mut bucket = Bucket::new(1_000_000.0, 15_000.0);
    let (trace, lost) = send(&mut bucket, 200, |i| (i as u64 % 3) * MS);
    assert!(trace.detect(&lost, RTT).is_some());
}

#[test]
fn random_losses_are_not_policing() {
    for (p, seed) in [(0.01, 1), (0.03, 2), (0.05, 3), (0.1, 4)] {
        let mut path = Random { p, state: seed };
        let (trace, lost) = send(&mut path, 300, |_| 0);
        assert!(lost.len() >= 5, "p {p}: {} losses", lost.len());
        assert_eq!(trace.detect(&lost, RTT), None, "p {p}");
    }
}

#[test]
fn too_few_losses_are_not_judged() {
    let mut bucket = Bucket::new(1_000_000.0, 15_000.0);
    let (trace, lost) = send(&mut bucket, 200, |_| 0);
    assert_eq!(trace.detect(&lost[..4], RTT), None);
}
