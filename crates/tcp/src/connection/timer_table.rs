//! The connection's timers in one table keyed by [`TimerKind`], in the manner of quinn-proto's
//! `timer.rs`: each mechanism sets and stops its own entry, and
//! [`Connection::poll_timeout`](super::Connection::poll_timeout) is the earliest of
//! them (with Corrective's send time, which is derived from its encoder).

use crate::time::Instant;
use crate::timer_wheel::KernelClock;
use crate::trace::TimerKind;

/// When each timer fires, if it is set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TimerTable {
    at: [Option<Instant>; TimerKind::COUNT],
    /// The time each was armed for, before the kernel clock's rounding.
    asked: [Option<Instant>; TimerKind::COUNT],
    /// Linux's jiffies and timer wheel, when the connection models them.
    clock: Option<KernelClock>,
}

impl TimerTable {
    /// A table whose kernel timers run on `clock` (exactly without one).
    pub fn new(clock: Option<KernelClock>) -> Self {
        TimerTable {
            clock,
            ..TimerTable::default()
        }
    }
    /// Keeps timer `t` from firing after `limit` (Linux's probe shares one timer
    /// with the RTO, so the probe never waits past it on the wheel either).
    pub fn cap(&mut self, t: TimerKind, limit: Instant) {
        if let Some(at) = &mut self.at[t as usize] {
            *at = (*at).min(limit);
        }
    }
    /// When timer `t` fires.
    pub fn get(&self, t: TimerKind) -> Option<Instant> {
        self.at[t as usize]
    }
    /// The time timer `t` was armed for (its firing time without a kernel clock).
    pub fn asked(&self, t: TimerKind) -> Option<Instant> {
        self.asked[t as usize]
    }
    /// Sets (`Some`) or stops (`None`) timer `t` to fire exactly at `at`.
    pub fn put(&mut self, t: TimerKind, at: Option<Instant>) {
        self.at[t as usize] = at;
        self.asked[t as usize] = at;
    }
    /// Arms timer `t` at `now` for `at`: a kernel timer on the kernel clock's
    /// jiffies and wheel if the connection has one ([`KernelClock::fire_time`]).
    pub fn arm(&mut self, t: TimerKind, now: Instant, at: Instant) {
        let fire = match self.clock {
            Some(c) if t.on_timer_wheel() => c.fire_time(now, at),
            _ => at,
        };
        self.at[t as usize] = Some(fire);
        self.asked[t as usize] = Some(at);
    }
    pub fn is_set(&self, t: TimerKind) -> bool {
        self.at[t as usize].is_some()
    }
    /// Timer `t` is due at `now`: it is stopped and true is returned.
    pub fn take_due(&mut self, t: TimerKind, now: Instant) -> bool {
        if self.at[t as usize].is_some_and(|at| at <= now) {
            self.at[t as usize] = None;
            self.asked[t as usize] = None;
            true
        } else {
            false
        }
    }
    /// The earliest deadline.
    pub fn next(&self) -> Option<Instant> {
        self.at.iter().flatten().min().copied()
    }
    /// Stops every timer.
    pub fn clear(&mut self) {
        self.at = [None; TimerKind::COUNT];
        self.asked = [None; TimerKind::COUNT];
    }
}
