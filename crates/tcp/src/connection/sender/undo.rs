//! Undoing cwnd reductions shown to be spurious (Linux `tcp_try_undo_*` in
//! net/ipv4/tcp_input.c, as `prr-imc11.txt` §3.2 describes them):
//!
//! - by DSACK (RFC 3708, Linux `undo_retrans`): every retransmission of the episode
//!   was reported as a duplicate;
//! - by timestamps (RFC 3522 Eifel detection, Linux `tcp_packet_delayed`): the ACK
//!   echoes a TSval older than the first retransmission;
//! - partially, during Recovery, and after a timeout (`tcp_try_undo_loss`); F-RTO's
//!   own undo is in [`super::frto`].
//!
//! Undo restores the window that held before the reduction: cwnd from `prior_cwnd`,
//! ssthresh from `prior_ssthresh` (Linux `tcp_undo_cwnd_reduction`).

use super::Connection;
use super::frto::Frto;
use crate::time::Instant;
use crate::trace::{CaState, Event, UndoKind};

/// What undoing the current reduction would restore, and the evidence so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Undo {
    /// snd.una when the episode began; `None` when nothing can be undone (Linux
    /// `undo_marker`).
    marker: Option<u64>,
    /// Retransmissions of the episode not yet shown unnecessary by a DSACK (Linux
    /// `undo_retrans`).
    retrans: i64,
    /// TSval of the first retransmission of the episode (Linux `retrans_stamp`).
    retrans_stamp: Option<u32>,
    /// cwnd before the reduction (Linux `prior_cwnd`; PRR's RecoverFS base too).
    prior_cwnd: u32,
    /// ssthresh to restore; 0 after a CWR, which is never undone to it.
    prior_ssthresh: u32,
    /// The episode is a fast recovery none of whose retransmissions a DSACK has
    /// shown unnecessary yet (counted in `RecoveriesDsacked` when one does).
    recovery_undsacked: bool,
}

impl Undo {
    /// An episode that can be undone is running (Linux `undo_marker` set).
    pub fn armed(&self) -> bool {
        self.marker.is_some()
    }
    /// cwnd before the reduction.
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }
    /// ssthresh to restore (0: none).
    pub fn prior_ssthresh(&self) -> u32 {
        self.prior_ssthresh
    }
    /// Saves `ssthresh` to restore (0: none).
    pub fn save_ssthresh(&mut self, ssthresh: u32) {
        self.prior_ssthresh = ssthresh;
    }
    /// Saves the window before a reduction.
    pub fn save(&mut self, cwnd: u32, ssthresh: u32) {
        self.prior_cwnd = cwnd;
        self.prior_ssthresh = ssthresh;
    }
    /// A CWR reduction from `cwnd` begins: it is never undone.
    pub fn on_cwr(&mut self, cwnd: u32) {
        self.marker = None;
        self.recovery_undsacked = false;
        self.prior_cwnd = cwnd;
    }
    /// A recovery from `cwnd` begins at `una` with `retrans_out` retransmissions
    /// already in flight.
    pub fn on_recovery(&mut self, cwnd: u32, una: u64, retrans_out: u32) {
        self.prior_cwnd = cwnd;
        self.marker = Some(una);
        self.retrans = retrans_out as i64;
        self.recovery_undsacked = true;
    }
    /// A timeout: undoable from `marker` if one is given.
    pub fn on_loss(&mut self, marker: Option<u64>) {
        self.marker = marker;
        self.retrans = 0;
        self.recovery_undsacked = false;
    }
    /// Nothing of the reduction can be undone (a failed fast start's reset).
    pub fn disarm(&mut self) {
        self.marker = None;
        self.prior_ssthresh = 0;
    }
    /// Forgets the first retransmission's TSval (Linux `retrans_stamp = 0`).
    pub fn clear_stamp(&mut self) {
        self.retrans_stamp = None;
    }
    /// A segment was retransmitted at TSval `tsval`.
    pub fn on_retransmit(&mut self, tsval: u32) {
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(tsval);
        }
        if self.marker.is_some() {
            self.retrans += 1;
        }
    }
}

impl Connection {
    /// A DSACK for `[lo, hi)` arrived on an ACK whose snd.una before it was
    /// `prior_una`: count the retransmission it shows unnecessary, and undo a reduction
    /// whose every retransmission was (Linux `tcp_check_dsack`, `tcp_try_undo_dsack`).
    pub(super) fn undo_on_dsack(&mut self, now: Instant, (lo, hi): (u64, u64), prior_una: u64) {
        let Some(marker) = self.tx.undo.marker else {
            return;
        };
        let undone = if hi <= prior_una {
            (hi > marker) as i64
        } else {
            self.tx.sb.dsack_retransmitted(lo, hi) as i64
        };
        self.tx.undo.retrans -= undone;
        if undone > 0 && self.tx.undo.recovery_undsacked {
            self.tx.undo.recovery_undsacked = false;
            self.counters.recoveries_dsacked += 1;
        }
        if self.cfg.undo
            && undone > 0
            && self.tx.undo.retrans <= 0
            && matches!(self.tx.ca.state(), CaState::Open | CaState::Disorder)
        {
            // Late DSACKs after the episode ended: every retransmission was
            // unnecessary (Linux `tcp_try_undo_dsack`).
            self.undo_reduction(now, UndoKind::Dsack);
        }
    }

    /// Linux `tcp_packet_delayed`: nothing was retransmitted, or the ACK echoes a
    /// timestamp older than the first retransmission (RFC 3522 Eifel detection).
    pub(super) fn packet_delayed(&self) -> bool {
        match self.tx.undo.retrans_stamp {
            None => true,
            Some(stamp) => self
                .ts
                .last_ecr
                .is_some_and(|ecr| (ecr.wrapping_sub(stamp) as i32) < 0),
        }
    }

    pub(super) fn may_undo(&self) -> bool {
        self.cfg.undo
            && self.tx.undo.marker.is_some()
            && (self.tx.undo.retrans <= 0 || self.packet_delayed())
    }

    pub(crate) fn undo_reduction(&mut self, now: Instant, kind: UndoKind) {
        self.restore_window();
        self.tx.cong.on_undo();
        self.tx.undo.marker = None;
        match kind {
            UndoKind::Full => self.counters.full_undo += 1,
            UndoKind::Partial => self.counters.partial_undo += 1,
            UndoKind::Dsack => self.counters.dsack_undo += 1,
            UndoKind::Loss => self.counters.loss_undo += 1,
            UndoKind::Frto => {
                self.counters.loss_undo += 1;
                self.counters.spurious_rtos += 1;
            }
        }
        let (cwnd, ssthresh) = (self.tx.cong.cwnd(), self.tx.cong.ssthresh());
        self.trace(
            now,
            Event::Undo {
                kind,
                cwnd,
                ssthresh,
            },
        );
    }

    /// At the end of Recovery or Loss. Returns true if the episode was undone.
    pub(super) fn try_undo_recovery(&mut self, now: Instant) -> bool {
        if !self.may_undo() {
            self.rack_recovery_done();
            return false;
        }
        let kind = if self.tx.ca.state() == CaState::Loss {
            UndoKind::Loss
        } else if self.tx.undo.retrans <= 0 {
            UndoKind::Dsack
        } else {
            UndoKind::Full
        };
        self.undo_reduction(now, kind);
        true
    }

    /// A partial ACK in Recovery shows the hole was filled by the original, not the
    /// retransmission (Linux `tcp_try_undo_partial`). Without `partial_undo_opens`
    /// the reduction is undone and Recovery goes on. With it (Linux 3.16+) the undo
    /// waits while retransmissions are in flight — new data is clocked out, nothing
    /// more is marked lost or retransmitted — and then leaves Recovery at once
    /// (`tcp_try_keep_open`).
    pub(super) fn try_undo_partial(&mut self, now: Instant) -> PartialUndo {
        if !(self.cfg.undo
            && self.tx.undo.marker.is_some()
            && self.tx.undo.retrans_stamp.is_some()
            && self.packet_delayed())
        {
            return PartialUndo::No;
        }
        if !self.cfg.partial_undo_opens {
            self.undo_reduction(now, UndoKind::Partial);
            return PartialUndo::No;
        }
        if self.tx.sb.retrans_out() > 0 {
            return PartialUndo::Hold;
        }
        if !self.tx.sb.any_retrans_done() {
            self.tx.undo.retrans_stamp = None;
        }
        self.undo_reduction(now, UndoKind::Partial);
        self.try_to_open(now);
        PartialUndo::Opened
    }

    pub(super) fn try_undo_dsack(&mut self, now: Instant) {
        if self.cfg.undo
            && self.tx.undo.marker.is_some()
            && self.tx.undo.retrans <= 0
            && self.tx.undo.retrans_stamp.is_some()
        {
            self.rack_dsack_undo();
            self.undo_reduction(now, UndoKind::Dsack);
        }
    }

    pub(super) fn try_undo_loss(&mut self, now: Instant) {
        if self.may_undo() {
            self.tx.sb.clear_lost();
            self.undo_reduction(now, UndoKind::Loss);
            self.tx.rtt.clear_retransmits();
            self.tx.frto = Frto::Off;
            self.set_ca(now, CaState::Open);
        }
    }
}

/// What a partial ACK in Recovery did (`try_undo_partial`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PartialUndo {
    /// No undo, or one that stays in Recovery: loss detection goes on.
    No,
    /// The original filled the hole but retransmissions are still in flight: hold
    /// (Linux returns from `tcp_fastretrans_alert`).
    Hold,
    /// Undone and out of Recovery: the ACK is processed as in Open.
    Opened,
}
