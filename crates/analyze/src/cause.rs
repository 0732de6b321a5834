//! Retransmission causes as they can be told from the wire, named as the engine's
//! trace names them (`gentle run --trace`).

use serde::Serialize;

/// Why a segment was sent again, inferred from what the capture shows before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// Fast retransmit: right after an ACK, with three or more duplicate ACKs (or
    /// SACKed segments) behind the hole (RFC 5681 §3.2, RFC 6675 §5), or any later
    /// retransmission of the same recovery.
    Fast,
    /// The first retransmission of a recovery begun on fewer than three duplicates:
    /// Early Retransmit (RFC 5827) or RACK (RFC 8985 §6.2), right after an ACK or a
    /// short timer (a quarter of an RTT) after one.
    Early,
    /// A retransmission timeout: the head of the window resent after a silence of
    /// about an RTO (RFC 6298 §5.4), each further one after twice the last.
    Timeout,
    /// After a timeout, the rest of the window resent as ACKs come back (RFC 5681
    /// §3.1's slow start from one segment).
    SlowStart,
    /// A tail loss probe: the last segment resent after a silence of about two RTTs
    /// with nothing in the window reported missing (RFC 8985 §7).
    Probe,
}

impl Cause {
    /// Every cause, in report order.
    pub const ALL: [Cause; 5] = [
        Cause::Fast,
        Cause::Early,
        Cause::Timeout,
        Cause::SlowStart,
        Cause::Probe,
    ];

    /// The name the engine's trace uses.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Fast => "fast",
            Cause::Early => "early",
            Cause::Timeout => "timeout",
            Cause::SlowStart => "slow-start",
            Cause::Probe => "probe",
        }
    }

    /// Parses a trace name.
    pub fn from_name(s: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// How a retransmission was shown to be unnecessary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spurious {
    /// A DSACK reported the retransmission as a duplicate (RFC 2883 §4).
    Dsack,
    /// The ACK that covered it echoed an earlier transmission's timestamp (the
    /// Eifel test, RFC 3522 §2).
    Timestamp,
    /// The ACK that covered it came less than half the minimum RTT after it, too soon
    /// to be for the retransmission itself.
    TooSoon,
}

/// Counts by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CauseCounts {
    /// [`Cause::Fast`].
    pub fast: u64,
    /// [`Cause::Early`].
    pub early: u64,
    /// [`Cause::Timeout`].
    pub timeout: u64,
    /// [`Cause::SlowStart`].
    #[serde(rename = "slow-start")]
    pub slow_start: u64,
    /// [`Cause::Probe`].
    pub probe: u64,
    /// Retransmissions later shown unnecessary, whatever their cause.
    pub spurious: u64,
}

impl CauseCounts {
    /// Counts one retransmission.
    pub fn add(&mut self, c: Cause) {
        *self.get_mut(c) += 1;
    }

    /// Moves one retransmission from `from` to `to` (a revised inference).
    pub fn revise(&mut self, from: Cause, to: Cause) {
        *self.get_mut(from) -= 1;
        *self.get_mut(to) += 1;
    }

    fn get_mut(&mut self, c: Cause) -> &mut u64 {
        match c {
            Cause::Fast => &mut self.fast,
            Cause::Early => &mut self.early,
            Cause::Timeout => &mut self.timeout,
            Cause::SlowStart => &mut self.slow_start,
            Cause::Probe => &mut self.probe,
        }
    }

    /// The count of `c`.
    pub fn get(&self, c: Cause) -> u64 {
        match c {
            Cause::Fast => self.fast,
            Cause::Early => self.early,
            Cause::Timeout => self.timeout,
            Cause::SlowStart => self.slow_start,
            Cause::Probe => self.probe,
        }
    }

    /// All retransmissions.
    pub fn total(&self) -> u64 {
        Cause::ALL.iter().map(|&c| self.get(c)).sum()
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, o: &CauseCounts) {
        for c in Cause::ALL {
            *self.get_mut(c) += o.get(c);
        }
        self.spurious += o.spurious;
    }
}
