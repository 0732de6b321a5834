//! Engine events for the trace (`gentle run --trace`): state changes, timers,
//! retransmissions and undo decisions, stamped with the time they happened.

use serde::Serialize;

use crate::time::Instant;

/// RFC 9293 §3.3.2 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Closed,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Linux's congestion-avoidance states (`enum tcp_ca_state`), which the papers use
/// to classify retransmissions and timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerKind {
    Retransmission,
    DelayedAck,
    TimeWait,
    Persist,
    EarlyRetransmit,
    LossProbe,
    /// RACK's reorder timer (RFC 8985 §6.3).
    ReorderTimeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetransKind {
    /// Sent in Recovery.
    Fast,
    /// The first retransmission after a timeout.
    Timeout,
    /// Further retransmissions in Loss.
    SlowStart,
    /// A tail loss probe that resent the last segment.
    Probe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UndoKind {
    /// Timestamps showed every retransmission of the episode was unnecessary.
    Full,
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
    State {
        from: State,
        to: State,
    },
    CaState {
        from: CaState,
        to: CaState,
        cwnd: u32,
        ssthresh: u32,
        pipe: u32,
    },
    Timer {
        timer: TimerKind,
    },
    Rto {
        rto_ms: f64,
        backoff: u32,
    },
    Retransmit {
        seq: u64,
        len: u32,
        kind: RetransKind,
    },
    Undo {
        kind: UndoKind,
        cwnd: u32,
        ssthresh: u32,
    },
    Reordering {
        degree: u32,
    },
    Reset,
}

/// An event with the time it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Traced {
    pub time: Instant,
    #[serde(flatten)]
    pub event: Event,
}
