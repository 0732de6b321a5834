//! The connection's timers in one table keyed by [`TimerKind`], in the manner of quinn-proto's
//! `timer.rs`: each mechanism sets and stops its own entry, and
//! [`Connection::poll_timeout`](super::Connection::poll_timeout) is the earliest of
//! them (with Corrective's send time, which is derived from its encoder).

use crate::time::Instant;
use crate::timer_wheel::KernelClock;
use crate::trace::TimerKind;

/// A timer not running: no deadline is this far (584 years).
const UNSET: u64 = u64::MAX;

/// When each timer fires, if it is set.
#[derive(Clone, Debug)]
pub(crate) struct TimerTable {
    /// Each deadline in nanoseconds, [`UNSET`] when the timer is stopped: the
    /// earliest is a plain minimum, asked for after every input.
    at: [u64; TimerKind::COUNT],
    /// The time each was armed for, before the kernel clock's rounding.
    asked: [Option<Instant>; TimerKind::COUNT],
    /// Linux's jiffies and timer wheel, when the connection models them.
    clock: Option<KernelClock>,
}

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable {
            at: [UNSET; TimerKind::COUNT],
            asked: [None; TimerKind::COUNT],
            clock: None,
        }
    }
}

fn decode(ns: u64) -> Option<Instant> {
    (ns != UNSET).then_some(Instant::from_nanos(ns))
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
        let at = &mut self.at[t as usize];
        if *at != UNSET {
            *at = (*at).min(limit.as_nanos());
        }
    }
    /// When timer `t` fires.
    pub fn get(&self, t: TimerKind) -> Option<Instant> {
        decode(self.at[t as usize])
    }
    /// The time timer `t` was armed for (its firing time without a kernel clock).
    pub fn asked(&self, t: TimerKind) -> Option<Instant> {
        self.asked[t as usize]
    }
    /// Sets (`Some`) or stops (`None`) timer `t` to fire exactly at `at`.
    pub fn put(&mut self, t: TimerKind, at: Option<Instant>) {
        self.at[t as usize] = at.map_or(UNSET, Instant::as_nanos);
        self.asked[t as usize] = at;
    }
    /// Arms timer `t` at `now` for `at`: a kernel timer on the kernel clock's
    /// jiffies and wheel if the connection has one ([`KernelClock::fire_time`]).
    pub fn arm(&mut self, t: TimerKind, now: Instant, at: Instant) {
        let fire = match self.clock {
            Some(c) if t.on_timer_wheel() => c.fire_time(now, at),
            _ => at,
        };
        self.at[t as usize] = fire.as_nanos();
        self.asked[t as usize] = Some(at);
    }
    pub fn is_set(&self, t: TimerKind) -> bool {
        self.at[t as usize] != UNSET
    }
    /// Timer `t` is due at `now`: it is stopped and true is returned.
    pub fn take_due(&mut self, t: TimerKind, now: Instant) -> bool {
        let at = self.at[t as usize];
        if at != UNSET && at <= now.as_nanos() {
            self.at[t as usize] = UNSET;
            self.asked[t as usize] = None;
            true
        } else {
            false
        }
    }
    /// The earliest deadline.
    pub fn next(&self) -> Option<Instant> {
        decode(self.at.iter().copied().fold(UNSET, u64::min))
    }
    /// Stops every timer.
    pub fn clear(&mut self) {
        self.at = [UNSET; TimerKind::COUNT];
        self.asked = [None; TimerKind::COUNT];
    }
}
