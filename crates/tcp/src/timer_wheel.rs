//! Linux's clock for TCP's timers: jiffies at `HZ`, and the timer wheel that fires
//! them (`kernel/time/timer.c`).
//!
//! TCP arms its retransmission, probe, reorder, delayed-ACK, persist and TIME-WAIT
//! timers as `timer_list`s (`sk_reset_timer`, `inet_csk_reset_xmit_timer`): a
//! delay in whole jiffies (`usecs_to_jiffies` rounds up) added to `jiffies`. The
//! wheel then files the timer by its distance: within 63 jiffies in level 0, one
//! jiffy apart; then in level *n* buckets 8ⁿ jiffies wide (`calc_wheel_index`).
//! `calc_index` rounds the expiry up to the next multiple of the bucket's width,
//! strictly after it ("a timer does not fire early ... round up with level
//! granularity"), and the timer runs at the tick that makes `jiffies` equal to that
//! bucket's expiry. At `HZ` 250 a probe due 416 ms on is filed in level 1 and runs
//! on the next 32 ms boundary of `jiffies` after its expiry, up to 32 ms late.
//!
//! The ticks themselves fall at multiples of the tick period of the monotonic clock
//! (the tick device is aligned to it), so where a trial's time 0 falls in a jiffy,
//! and the value of `jiffies` then, fix every timer's firing time.

use serde::{Deserialize, Serialize};

use crate::time::Instant;

/// Bits of each level's index (`LVL_CLK_SHIFT`): a level's buckets are 8 times as
/// wide as the one below.
const LVL_CLK_SHIFT: u32 = 3;
/// Buckets per level (`LVL_SIZE`, `1 << LVL_BITS` with `LVL_BITS` 6).
const LVL_SIZE: u64 = 64;
/// Levels of the wheel at `HZ` above 100 (`LVL_DEPTH`).
const LVL_DEPTH: u32 = 9;

/// Linux `TCP_TIMEOUT_MIN_US`: the slack TCP adds to its probe and reorder timers
/// before rounding them to jiffies (2 ms whatever `HZ`, since the fix for
/// `HZ` 250; before it, `TCP_TIMEOUT_MIN`, 2 jiffies, added after).
pub const TCP_TIMEOUT_MIN: std::time::Duration = std::time::Duration::from_millis(2);

/// `LVL_START(n)`: the first distance, in jiffies, filed in level `n`.
const fn lvl_start(n: u32) -> u64 {
    (LVL_SIZE - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

/// The kernel's timer clock, placed on a trial's time line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelClock {
    /// Ticks per second (`CONFIG_HZ`).
    pub hz: u32,
    /// How far into a jiffy time 0 falls, ns after its tick.
    pub phase_ns: u64,
    /// `jiffies` during the jiffy that holds time 0.
    pub jiffies: u64,
}

impl KernelClock {
    /// The length of a jiffy, ns (`TICK_NSEC`).
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / u64::from(self.hz.max(1))
    }

    /// `jiffies` at `t`.
    pub fn jiffies_at(&self, t: Instant) -> u64 {
        self.jiffies + (t.as_nanos() + self.phase_ns) / self.tick_ns()
    }

    /// The time of the tick that makes `jiffies` equal `j` (`j` after time 0's).
    fn tick_of(&self, j: u64) -> Instant {
        let ns = (j - self.jiffies) * self.tick_ns();
        Instant::from_nanos(ns.saturating_sub(self.phase_ns))
    }

    /// When a timer armed at `now` for `at` runs: its delay rounded up to whole
    /// jiffies (`usecs_to_jiffies`), added to `jiffies`, and that expiry rounded up
    /// to its bucket of the wheel (`calc_wheel_index`, `calc_index`).
    pub fn fire_time(&self, now: Instant, at: Instant) -> Instant {
        let tick = self.tick_ns();
        let delay = at.as_nanos().saturating_sub(now.as_nanos());
        let clk = self.jiffies_at(now);
        let expires = clk + delay.div_ceil(tick);
        let delta = expires - clk;
        let lvl = (1..LVL_DEPTH)
            .find(|&n| delta < lvl_start(n))
            .map_or(LVL_DEPTH - 1, |n| n - 1);
        let shift = lvl * LVL_CLK_SHIFT;
        let bucket_expiry = ((expires >> shift) + 1) << shift;
        self.tick_of(bucket_expiry).max(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn hz250(phase_ms: f64, jiffies: u64) -> KernelClock {
        KernelClock {
            hz: 250,
            phase_ns: (phase_ms * MS as f64) as u64,
            jiffies,
        }
    }

    fn fire_ms(c: &KernelClock, now_ms: f64, delay_ms: f64) -> f64 {
        let now = Instant::from_nanos((now_ms * MS as f64) as u64);
        let at = Instant::from_nanos(((now_ms + delay_ms) * MS as f64) as u64);
        c.fire_time(now, at).as_nanos() as f64 / MS as f64
    }

    #[test]
    fn a_short_timer_runs_one_jiffy_after_its_rounded_expiry() {
        // Level 0 (under 63 jiffies): expiry + 1. Time 0 is 1 ms into jiffy 1000,
        // whose tick was at −1 ms; ticks fall at 3, 7, 11, … ms.
        let c = hz250(1.0, 1000);
        // 200 ms = 50 jiffies: expiry 1050, runs at the tick of 1051, 203 ms.
        assert_eq!(fire_ms(&c, 0.0, 200.0), 203.0);
        // 201 ms rounds up to 51 jiffies: the tick of 1052.
        assert_eq!(fire_ms(&c, 0.0, 201.0), 207.0);
        // Armed later in the same jiffy, the same bucket.
        assert_eq!(fire_ms(&c, 2.5, 200.0), 203.0);
        // Never before the time asked for.
        let c0 = hz250(0.0, 1000);
        assert_eq!(fire_ms(&c0, 0.0, 8.0), 12.0);
    }

    #[test]
    fn a_long_timer_waits_for_its_bucket_of_eight_jiffies() {
        // Level 1 (63–503 jiffies): buckets of 8 jiffies (32 ms at HZ 250),
        // expiry rounded up past the next multiple of 8.
        let c = hz250(0.0, 1000);
        // 416 ms = 104 jiffies: expiry 1104 = 8·138, bucket 1112: 448 ms.
        assert_eq!(fire_ms(&c, 0.0, 416.0), 448.0);
        // 412 ms = 103 jiffies: expiry 1103, bucket 1104: 416 ms.
        assert_eq!(fire_ms(&c, 0.0, 412.0), 416.0);
        // The same delay from a jiffies value 4 further on: expiry 1107, the same
        // bucket 1112, 16 ms further from when it was armed.
        let c4 = hz250(0.0, 1004);
        assert_eq!(fire_ms(&c4, 0.0, 412.0), 432.0);
    }

    #[test]
    fn level_boundaries_follow_lvl_start() {
        assert_eq!(lvl_start(1), 63);
        assert_eq!(lvl_start(2), 504);
        assert_eq!(lvl_start(3), 4032);
        let c = hz250(0.0, 0);
        // 62 jiffies: level 0, fires at 63. 63 jiffies: level 1, fires at 64.
        assert_eq!(fire_ms(&c, 0.0, 62.0 * 4.0), 63.0 * 4.0);
        assert_eq!(fire_ms(&c, 0.0, 63.0 * 4.0), 64.0 * 4.0);
        // 600 jiffies (2.4 s): level 2, buckets of 64: 640.
        assert_eq!(fire_ms(&c, 0.0, 600.0 * 4.0), 640.0 * 4.0);
    }

    #[test]
    fn at_hz_1000_short_timers_are_a_millisecond_late() {
        let c = KernelClock {
            hz: 1000,
            phase_ns: 0,
            jiffies: 0,
        };
        assert_eq!(fire_ms(&c, 0.0, 40.0), 41.0);
    }
}
