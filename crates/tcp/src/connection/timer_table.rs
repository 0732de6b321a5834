//! The connection's timers in one table keyed by [`TimerKind`], in the manner of quinn-proto's
//! `timer.rs`: each mechanism sets and stops its own entry, and
//! [`Connection::poll_timeout`](super::Connection::poll_timeout) is the earliest of
//! them (with Corrective's send time, which is derived from its encoder).

use crate::time::Instant;
use crate::trace::TimerKind;

/// When each timer fires, if it is set.
#[derive(Clone, Debug, Default)]
pub(crate) struct TimerTable {
    at: [Option<Instant>; TimerKind::COUNT],
}

impl TimerTable {
    pub fn get(&self, t: TimerKind) -> Option<Instant> {
        self.at[t as usize]
    }
    /// Sets (`Some`) or stops (`None`) timer `t`.
    pub fn put(&mut self, t: TimerKind, at: Option<Instant>) {
        self.at[t as usize] = at;
    }
    pub fn is_set(&self, t: TimerKind) -> bool {
        self.at[t as usize].is_some()
    }
    /// Timer `t` is due at `now`: it is stopped and true is returned.
    pub fn take_due(&mut self, t: TimerKind, now: Instant) -> bool {
        if self.at[t as usize].is_some_and(|at| at <= now) {
            self.at[t as usize] = None;
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
    }
}
