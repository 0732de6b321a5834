//! RTT estimation and the retransmission timeout.
//!
//! RFC 6298 §2 (SRTT/RTTVAR with gains 1/8 and 1/4, back-off in §5.5, Karn's rule
//! in §3) as Linux implements it (`tcp_rtt_estimator`, `__tcp_set_rto` in
//! net/ipv4/tcp_input.c): the variance term is tracked as its maximum over each
//! RTT (`mdev_max`) and is floored at the RTO minimum, so that
//! `RTO = SRTT + max(4·mdev, rto_min)` instead of RFC 6298's
//! `max(SRTT + 4·RTTVAR, 1 s)`. This is the deliberate deviation that gives
//! Linux its "200 ms minimum RTO".

use std::time::Duration;

/// Linux-style RTT estimator. All values in nanoseconds; `srtt` unscaled.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: u64,
    /// Mean deviation ×4 (Linux `mdev_us`, which keeps it scaled by 4).
    mdev4: u64,
    /// Largest `mdev4` seen in the current RTT.
    mdev4_max: u64,
    /// The variance term used in the RTO (Linux `rttvar_us`).
    rttvar: u64,
    /// Sequence (relative) that ends the current RTT measurement round.
    rtt_seq: u64,
    has_sample: bool,
    rto_min: u64,
    rto_max: u64,
    rto: u64,
    /// Minimum RTT seen.
    min_rtt: u64,
    /// Doublings of the RTO since the last valid sample or progress (RFC 6298 §5.5;
    /// Linux `icsk_backoff`).
    backoff: u32,
    /// Consecutive timeouts without progress, toward the abort threshold (RFC 9293
    /// §3.8.3 R2; Linux `icsk_retransmits`).
    retransmits: u32,
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, rto_min: Duration, rto_max: Duration) -> Self {
        RttEstimator {
            srtt: 0,
            mdev4: 0,
            mdev4_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            has_sample: false,
            rto_min: rto_min.as_nanos() as u64,
            rto_max: rto_max.as_nanos() as u64,
            rto: initial_rto.as_nanos() as u64,
            min_rtt: u64::MAX,
            backoff: 0,
            retransmits: 0,
        }
    }

    /// Feeds one RTT sample. `snd_una` and `snd_nxt` delimit Linux's per-RTT
    /// rounds for the variance maximum.
    pub fn on_sample(&mut self, sample: Duration, snd_una: u64, snd_nxt: u64) {
        let m = (sample.as_nanos() as u64).max(1);
        self.min_rtt = self.min_rtt.min(m);
        if self.has_sample {
            let srtt = self.srtt as i64;
            let err = m as i64 - srtt;
            self.srtt = (srtt + err / 8) as u64;
            let mut e = err.abs();
            let mdev4 = self.mdev4 as i64;
            // Linux: a falling RTT's error counts 1/8 as much (tcp_rtt_estimator).
            e -= mdev4 / 4;
            if err < 0 && e > 0 {
                e /= 8;
            }
            self.mdev4 = (mdev4 + e).max(0) as u64;
            if self.mdev4 > self.mdev4_max {
                self.mdev4_max = self.mdev4;
                if self.mdev4_max > self.rttvar {
                    self.rttvar = self.mdev4_max;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev4_max < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev4_max) / 4;
                }
                self.rtt_seq = snd_nxt;
                self.mdev4_max = self.rto_min;
            }
        } else {
            self.srtt = m;
            self.mdev4 = 2 * m;
            self.rttvar = self.mdev4.max(self.rto_min);
            self.mdev4_max = self.rttvar;
            self.rtt_seq = snd_nxt;
            self.has_sample = true;
        }
        self.rto = (self.srtt + self.rttvar).min(self.rto_max);
    }

    /// Current RTO, before back-off.
    /// Doublings of the RTO now.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// Progress or a valid sample: the RTO is no longer backed off.
    pub fn clear_backoff(&mut self) {
        self.backoff = 0;
    }
    /// A timeout (or a window probe) doubles the RTO once more.
    pub fn add_backoff(&mut self) {
        self.backoff += 1;
    }
    /// Consecutive timeouts without progress.
    pub fn retransmits(&self) -> u32 {
        self.retransmits
    }
    /// Progress: the count toward the abort starts again.
    pub fn clear_retransmits(&mut self) {
        self.retransmits = 0;
    }
    /// One more timeout without progress.
    pub fn add_retransmit(&mut self) {
        self.retransmits += 1;
    }

    pub fn rto(&self) -> Duration {
        Duration::from_nanos(self.rto)
    }
    /// The RTO after the current back-off's doublings, capped at the maximum
    /// (RFC 6298 §5.5).
    pub fn rto_backed_off(&self) -> Duration {
        let r = self.rto.saturating_mul(1u64 << self.backoff.min(32));
        Duration::from_nanos(r.min(self.rto_max))
    }
    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.has_sample.then(|| Duration::from_nanos(self.srtt))
    }
    /// RFC 6298's RTTVAR, the mean deviation, without Linux's floor.
    pub fn rttvar(&self) -> Option<Duration> {
        self.has_sample
            .then(|| Duration::from_nanos(self.mdev4 / 4))
    }
    /// `srtt + 4·rttvar` from the fine-grained estimates, without the RTO minimum:
    /// fast start's reset timer (`fast-start-and-sessions.txt` §3.4.4 footnote 5).
    pub fn fine_rto(&self) -> Option<Duration> {
        self.has_sample
            .then(|| Duration::from_nanos(self.srtt + self.mdev4))
    }
    /// Starts from a cached estimate (Linux `tcp_init_metrics`), when there is no
    /// sample of the connection's own.
    pub fn seed(&mut self, srtt: Duration, rttvar: Duration) {
        if self.has_sample {
            return;
        }
        self.srtt = (srtt.as_nanos() as u64).max(1);
        self.mdev4 = 4 * rttvar.as_nanos() as u64;
        self.rttvar = self.mdev4.max(self.rto_min);
        self.mdev4_max = self.rttvar;
        self.has_sample = true;
        self.rto = (self.srtt + self.rttvar).min(self.rto_max);
    }
    pub fn min_rtt(&self) -> Option<Duration> {
        self.has_sample.then(|| Duration::from_nanos(self.min_rtt))
    }
    /// RFC 6298 §5.7: after a retransmitted SYN with no RTT sample, the RTO for data
    /// starts at 3 s.
    pub fn set_fallback_rto(&mut self, rto: Duration) {
        if !self.has_sample {
            self.rto = rto.as_nanos() as u64;
        }
    }
}
