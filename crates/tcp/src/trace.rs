//! Engine events for the trace (`gentle run --trace`): state changes, timers,
//! retransmissions and undo decisions, stamped with the time they happened.

use serde::Serialize;

use crate::time::Instant;

/// RFC 9293 §3.3.2 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// No connection.
    Closed,
    /// Our SYN is out.
    SynSent,
    /// The peer's SYN arrived and our SYN-ACK is out.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// We closed; our FIN is unacknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// The peer closed; we may still send.
    CloseWait,
    /// Both closed at once; our FIN is unacknowledged.
    Closing,
    /// The peer closed first; our FIN is unacknowledged.
    LastAck,
    /// Waiting 2·MSL after both FINs.
    TimeWait,
}

/// Linux's congestion-avoidance states (`enum tcp_ca_state`), which the papers use
/// to classify retransmissions and timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// No loss indication.
    Open,
    /// Duplicate ACKs or SACKs seen, nothing retransmitted yet.
    Disorder,
    /// cwnd reduced for a reason other than loss (ECN, local, a repaired loss).
    Cwr,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

impl CaState {
    /// Every state, in the order of Linux's values (`TCP_CA_Open` = 0 …
    /// `TCP_CA_Loss` = 4), which `as u8` gives.
    pub const ALL: [CaState; 5] = [
        CaState::Open,
        CaState::Disorder,
        CaState::Cwr,
        CaState::Recovery,
        CaState::Loss,
    ];

    /// The state's name as traces print it (the kernel's, lower case).
    pub const fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// The timers of a connection: the one list from which the timer table
/// (the connection's `TimerTable`) takes its size and keys, and the trace the
/// names of the timers that fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerKind {
    /// The retransmission timer (RFC 6298), also SYN retransmission.
    Retransmission,
    /// The receiver's delayed ACK.
    DelayedAck,
    /// TIME-WAIT's 2·MSL ended.
    TimeWait,
    /// The persist timer (zero-window probes).
    Persist,
    /// The delayed Early Retransmit.
    EarlyRetransmit,
    /// The tail loss probe.
    LossProbe,
    /// RACK's reorder timer (RFC 8985 §6.3).
    ReorderTimeout,
    /// Fast start's pacing: the next burst of the first round trip
    /// (`fast-start-and-sessions.txt` §3.4.3); never traced.
    Pace,
    /// Fast start's reset timer (`fast-start-and-sessions.txt` §3.4.4).
    FastStartReset,
}

impl TimerKind {
    /// A `timer_list` in Linux, run by the timer wheel on jiffies; fast start's
    /// timers are gentle's own, and pacing is an hrtimer.
    pub fn on_timer_wheel(self) -> bool {
        !matches!(self, TimerKind::Pace | TimerKind::FastStartReset)
    }

    /// Every timer, in the order of their values.
    pub const ALL: [TimerKind; 9] = [
        TimerKind::Retransmission,
        TimerKind::DelayedAck,
        TimerKind::TimeWait,
        TimerKind::Persist,
        TimerKind::EarlyRetransmit,
        TimerKind::LossProbe,
        TimerKind::ReorderTimeout,
        TimerKind::Pace,
        TimerKind::FastStartReset,
    ];
    /// How many timers there are.
    pub const COUNT: usize = Self::ALL.len();
}

const _: () = {
    // ALL lists each timer once, at its own value.
    let mut i = 0;
    while i < TimerKind::COUNT {
        assert!(TimerKind::ALL[i] as usize == i);
        i += 1;
    }
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
/// Why a segment was sent again.
pub enum RetransKind {
    /// Sent in Recovery.
    Fast,
    /// The first retransmission of a recovery entered on fewer than three
    /// duplicates (Early Retransmit, RFC 5827; RACK, RFC 8985 §6.2; FACK's head
    /// timeout); the rest of that recovery's retransmissions are `Fast`.
    Early,
    /// The first retransmission after a timeout.
    Timeout,
    /// Further retransmissions in Loss.
    SlowStart,
    /// A tail loss probe that resent the last segment.
    Probe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
/// How a spurious reduction was detected.
pub enum UndoKind {
    /// Timestamps showed every retransmission of the episode was unnecessary.
    Full,
    /// Timestamps showed a retransmission unnecessary during Recovery.
    Partial,
    /// DSACKs covered every retransmission of the episode.
    Dsack,
    /// A timeout was undone.
    Loss,
    /// F-RTO declared the timeout spurious.
    Frto,
}

/// One engine event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The RFC 9293 state changed.
    State {
        /// Before.
        from: State,
        /// After.
        to: State,
    },
    /// Linux's congestion state changed; the window then.
    CaState {
        /// Before.
        from: CaState,
        /// After.
        to: CaState,
        /// Congestion window, segments.
        cwnd: u32,
        /// Slow-start threshold, segments.
        ssthresh: u32,
        /// RFC 6675 pipe, segments.
        pipe: u32,
    },
    /// A timer fired.
    Timer {
        /// Which.
        timer: TimerKind,
    },
    /// The sender's state after an ACK was processed: the per-ACK series a trace
    /// plots (cwnd, ssthresh, pipe, SRTT, RTO and the timers armed).
    AckState {
        /// Congestion window, segments.
        cwnd: u32,
        /// Slow-start threshold, segments.
        ssthresh: u32,
        /// RFC 6675 pipe, segments.
        pipe: u32,
        /// Smoothed RTT, ms (0 before the first sample).
        srtt_ms: f64,
        /// The retransmission timeout with its back-off, ms.
        rto_ms: f64,
        /// The timers armed, by name.
        armed: Vec<TimerKind>,
    },
    /// The retransmission timer was armed after a timeout.
    Rto {
        /// The RTO armed, ms.
        rto_ms: f64,
        /// Doublings so far.
        backoff: u32,
    },
    /// A segment was retransmitted.
    Retransmit {
        /// Sequence offset (relative to ISS).
        seq: u64,
        /// Sequence space covered.
        len: u32,
        /// Why.
        kind: RetransKind,
    },
    /// A reduction was undone; the window after.
    Undo {
        /// How it was detected.
        kind: UndoKind,
        /// Congestion window, segments.
        cwnd: u32,
        /// Slow-start threshold, segments.
        ssthresh: u32,
    },
    /// Reordering raised the duplicate threshold.
    Reordering {
        /// The new duplicate threshold.
        degree: u32,
    },
    /// An RST closed the connection.
    Reset,
    /// A fast start began (`fast-start-and-sessions.txt` §3.4.1).
    FastStart {
        /// The window it starts with, segments.
        cwnd: u32,
        /// The window a normal restart would have used, segments.
        restart: u32,
    },
    /// A failed fast start was reset to slow start without penalty (§3.4.4).
    FastStartReset {
        /// By a partial ACK in fast recovery (else by the reset timer).
        partial_ack: bool,
        /// Congestion window after, segments.
        cwnd: u32,
        /// Slow-start threshold restored, segments.
        ssthresh: u32,
    },
}

/// An event with the time it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Traced {
    /// When it happened.
    pub time: Instant,
    #[serde(flatten)]
    /// What happened.
    pub event: Event,
}

/// Traces name a congestion state by [`CaState::name`].
impl Serialize for CaState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // What `#[derive(Serialize)]` does for a unit variant.
        s.serialize_unit_variant("CaState", *self as u32, self.name())
    }
}
