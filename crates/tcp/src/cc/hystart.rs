//! HyStart, hybrid slow start (Ha and Rhee, "Taming the elephants", 2008; RFC 9438
//! §4.10 recommends it), as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c,
//! `hystart_update`, `cubictcp_acked`, `bictcp_hystart_reset`): slow start ends
//! early — ssthresh is set to cwnd — when either
//!
//! - *ACK train*: ACKs arriving at most 2 ms apart (`hystart_ack_delta_us`) have
//!   spread over more than half the minimum delay since the round began (the
//!   threshold is `(delay_min + ack_delay) / 2`; `hystart_ack_delay` is 1 ms for
//!   pacing rates below about 2 Gbit/s), or
//! - *delay increase*: the smallest RTT of the round's first 8 samples
//!   (`HYSTART_MIN_SAMPLES`) exceeds `delay_min` by `clamp(delay_min/8, 4 ms,
//!   16 ms)`.
//!
//! It acts only from cwnd 16 (`hystart_low_window`), once per slow start; a round
//! ends when snd.una passes the snd.nxt recorded at its start. A timeout resets it.

use std::time::Duration;

use super::Window;
use crate::time::Instant;

/// `hystart_low_window`.
const LOW_WINDOW: u32 = 16;
/// `hystart_ack_delta_us`.
const ACK_DELTA: Duration = Duration::from_micros(2000);
/// `hystart_ack_delay` for pacing rates below `4 · 64 KiB` per ms.
const ACK_DELAY: Duration = Duration::from_millis(1);
/// `HYSTART_MIN_SAMPLES`.
const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`.
const DELAY_MIN: Duration = Duration::from_millis(4);
const DELAY_MAX: Duration = Duration::from_millis(16);

#[derive(Clone, Debug, Default)]
/// HyStart state (Linux `tcp_cubic` `bictcp_hystart_*`) and its exit counts.
pub struct HyStart {
    /// Slow start has been ended by HyStart.
    found: bool,
    round_start: Instant,
    last_ack: Instant,
    /// snd.nxt at the start of the round.
    end_seq: u64,
    /// Smallest RTT of the round.
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    /// Smallest RTT seen (`delay_min`).
    delay_min: Option<Duration>,
    /// Times HyStart ended slow start: by ACK train, by delay.
    pub train_exits: u64,
    /// Slow-start exits by delay increase.
    pub delay_exits: u64,
}

impl HyStart {
    fn reset_round(&mut self, now: Instant, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// A timeout: slow start begins afresh (`bictcp_reset` on `TCP_CA_Loss`).
    pub fn on_timeout(&mut self) {
        self.found = false;
        self.delay_min = None;
        self.end_seq = 0;
    }

    /// `cubictcp_acked` for an ACK of new data with RTT sample `rtt`.
    /// `after_recovery`: less than a second since the cubic epoch began, when delay
    /// samples are discarded.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        w: &mut Window,
        now: Instant,
        rtt: Duration,
        snd_una: u64,
        snd_nxt: u64,
        after_recovery: bool,
    ) {
        if after_recovery {
            return;
        }
        let delay = rtt.max(Duration::from_micros(1));
        let delay_min = *self.delay_min.get_or_insert(delay);
        if delay < delay_min {
            self.delay_min = Some(delay);
        }
        if self.found || w.cwnd >= w.ssthresh {
            return;
        }
        if snd_una > self.end_seq {
            self.reset_round(now, snd_nxt);
        }
        if w.cwnd < LOW_WINDOW {
            return;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if now - self.last_ack <= ACK_DELTA {
            self.last_ack = now;
            let threshold = (delay_min + ACK_DELAY) / 2;
            if now - self.round_start > threshold {
                self.found = true;
                self.train_exits += 1;
                w.ssthresh = w.cwnd;
            }
        }
        let curr = self.curr_rtt.map_or(delay, |c| c.min(delay));
        self.curr_rtt = Some(curr);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if curr > delay_min + (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX) {
            if !self.found {
                self.delay_exits += 1;
            }
            self.found = true;
            w.ssthresh = w.cwnd;
        }
    }
}
