//! A connection's side of a TCP session (`fast-start-and-sessions.txt` §6.1, §7.3):
//! while it is a member, the session's control block ([`crate::session::Scb`])
//! does its congestion control and loss recovery, and the connection keeps its own
//! in-order byte stream, receive side, and ACK bookkeeping.
//!
//! §7.3: "`tcp_input()` as usual updates the highest ack information and clears out
//! acknowledged data from its buffer. However, it does not do duplicate ack
//! processing. Instead, it defers to `session_input()`" — here, the connection
//! leaves an [`AckReport`] for the session to take. It sends a segment that takes
//! sequence space (data, a retransmission, a FIN) only when the session grants it
//! one ("`Session_output()` first makes sure that the session's `cwnd` does permit
//! the sending of a new segment"); pure ACKs and resets go out as they are due. Its
//! own window, retransmission timer, tail loss probe, early retransmit, RACK and
//! fast start stand idle: the session's stand in for them.

use super::{CloseReason, Connection};
use crate::time::Instant;
use crate::trace::TimerKind;
use crate::trace::{RetransKind, State};

/// Membership state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Member {
    /// The connection is in a session.
    on: bool,
    /// The session allowed one segment that takes sequence space.
    grant: bool,
    /// The session marks the granted segment with the fast start bit.
    mark: bool,
    /// What the last ACK said, for the session.
    report: Option<AckReport>,
    /// After a session timeout: snd.nxt then. Retransmissions below it are the
    /// timeout's (the first) and slow start's (the rest).
    timeout_high: Option<u64>,
    /// The next retransmission is the timeout's first.
    timeout_first: bool,
}

impl Member {
    /// The connection is in a session.
    pub fn is_on(&self) -> bool {
        self.on
    }
    /// The granted segment carries the fast start bit.
    pub fn marks(&self) -> bool {
        self.mark
    }
}

/// What an ACK told a member connection, for its session's loss detection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckReport {
    /// snd.una after the ACK.
    pub una: u64,
    /// The ACK was a duplicate (RFC 5681 §2: no new data acknowledged, no data, no
    /// window change, data outstanding).
    pub dupack: bool,
    /// The echoed timestamp (RFC 7323 §4.3: the TSval of the segment that advanced
    /// the left edge of the window, or the last in-order one).
    pub tsecr: Option<u32>,
    /// The ACK carried ECE (RFC 3168 §6.1.2).
    pub ece: bool,
}

impl Connection {
    /// The connection is a member of a TCP session.
    pub fn in_session(&self) -> bool {
        self.tx.member.on
    }

    /// Joins a session: from now on the session decides when this connection sends
    /// and what it retransmits. Its own loss-recovery timers stop.
    pub(crate) fn session_join(&mut self) {
        self.tx.member.on = true;
        for t in [
            TimerKind::Retransmission,
            TimerKind::LossProbe,
            TimerKind::EarlyRetransmit,
            TimerKind::ReorderTimeout,
            TimerKind::FastStartReset,
            TimerKind::Pace,
        ] {
            self.timers.put(t, None);
        }
        self.tx.tlp.cancel_pending();
        self.tx.fast_start.cancel();
    }

    /// Leaves the session (the connection closed).
    pub(crate) fn session_leave(&mut self) {
        self.tx.member = Member::default();
    }

    /// The session marked one of this member's segments lost and it is not resent yet.
    pub(crate) fn session_retransmission_due(&self) -> bool {
        self.tx.sb.next_lost().is_some()
    }

    /// The member has data outstanding.
    pub(crate) fn session_outstanding(&self) -> bool {
        !self.tx.sb.is_empty()
    }

    /// The member has a segment taking sequence space to send, were it granted:
    /// a retransmission the session asked for, new data the peer's window takes, or
    /// its FIN.
    pub(crate) fn session_wants_to_send(&self) -> bool {
        if !matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        ) {
            return false;
        }
        if self.tx.sb.next_lost().is_some() {
            return true;
        }
        if !matches!(self.state, State::Established | State::CloseWait) {
            return false;
        }
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        if unsent == 0 {
            return self.snd.app_closed && !self.snd.fin_sent;
        }
        let len = unsent.min(self.opts.smss as u64).min(self.window_room());
        self.sws_allows(len, unsent)
    }

    /// The session grants one segment; `mark` sets the fast start bit on it.
    pub(crate) fn session_grant(&mut self, mark: bool) {
        self.tx.member.grant = true;
        self.tx.member.mark = mark;
    }

    /// The grant is withdrawn (nothing was sent on it).
    pub(crate) fn session_revoke(&mut self) {
        self.tx.member.grant = false;
        self.tx.member.mark = false;
    }

    /// A member may send a segment that takes sequence space.
    #[inline]
    pub(crate) fn session_may_send(&self) -> bool {
        self.tx.member.grant
    }

    /// Takes what the last ACK said.
    pub(crate) fn take_ack_report(&mut self) -> Option<AckReport> {
        self.tx.member.report.take()
    }

    /// `[start, end)` has been delivered: cumulatively acknowledged, or SACKed.
    pub(crate) fn session_delivered(&self, start: u64, end: u64) -> bool {
        end <= self.snd.una || self.tx.sb.sacked_at(start)
    }

    /// The session deems the segment starting at `start` lost: it is retransmitted
    /// at the next grant (a retransmission of it in flight is lost too). Returns
    /// false if the segment is no longer outstanding, or SACKed.
    pub(crate) fn session_mark_lost(&mut self, start: u64) -> bool {
        let Some(i) = self.tx.sb.find(start) else {
            return false;
        };
        let (newly, lost_retrans) = self.tx.sb.mark_lost(i);
        newly || lost_retrans
    }

    /// The session's retransmission timer fired: every segment not SACKed is lost
    /// (Linux `tcp_enter_loss`), and goes again as the session's slow start allows.
    /// It counts as this connection's timeout (`TCPTimeouts`).
    pub(crate) fn session_timeout(&mut self) {
        if self.tx.sb.is_empty() {
            return;
        }
        self.tx.sb.mark_all_lost(true);
        self.counters.timeouts += 1;
        self.tx.member.timeout_high = Some(self.snd.nxt);
        self.tx.member.timeout_first = true;
    }

    /// The session's timer fired too often in a row (Linux `tcp_retries2`): the
    /// connection gives up, with a reset, as its own timer would have.
    pub(crate) fn session_give_up(&mut self, now: Instant) {
        self.counters.aborts += 1;
        self.ctl.rst_pending = true;
        self.enter_closed(now, CloseReason::TimedOut);
    }

    /// The session reduced its window on this connection's ECE: the next new data
    /// carries CWR (RFC 3168 §6.1.2).
    pub(crate) fn session_cwr(&mut self) {
        self.ecn_queue_cwr();
    }

    /// The kind of a member's retransmission of `[start, ..)`.
    pub(crate) fn session_retrans_kind(&mut self, start: u64) -> RetransKind {
        match self.tx.member.timeout_high {
            Some(h) if start < h && self.tx.member.timeout_first => {
                self.tx.member.timeout_first = false;
                RetransKind::Timeout
            }
            Some(h) if start < h => {
                self.counters.slow_start_retrans += 1;
                RetransKind::SlowStart
            }
            _ => {
                self.counters.fast_retrans += 1;
                RetransKind::Fast
            }
        }
    }

    /// A member's ACK: leaves the report for the session and ends a timeout's
    /// retransmission phase once everything sent before it is acknowledged.
    pub(crate) fn session_on_ack(&mut self, report: AckReport) {
        if self
            .tx
            .member
            .timeout_high
            .is_some_and(|h| self.snd.una >= h)
        {
            self.tx.member.timeout_high = None;
        }
        self.tx.member.report = Some(report);
    }
}
