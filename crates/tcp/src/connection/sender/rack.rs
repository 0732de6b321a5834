//! RACK: time-based loss detection (RFC 8985 §6), as Linux 4.10+ runs it
//! (net/ipv4/tcp_recovery.c: `tcp_rack_advance`, `tcp_rack_reo_wnd`,
//! `tcp_rack_detect_loss`, `tcp_rack_mark_lost`, `tcp_rack_reo_timeout`,
//! `tcp_rack_update_reo_wnd`).
//!
//! - Every delivered segment (cumulatively acknowledged or SACKed) *advances* RACK:
//!   RACK.rtt becomes its RTT and RACK.xmit_ts its send time, if it was sent after the
//!   current one. A retransmitted segment whose RTT is below min_rtt is ignored: it is
//!   ambiguous which transmission was delivered (RFC 8985 §6.2 step 2). So is a
//!   cumulatively acknowledged one whose ACK echoes a timestamp older than the
//!   retransmission (`tcp_skb_spurious_retrans`, which Linux applies in
//!   `tcp_clean_rtx_queue` only).
//! - A segment sent before RACK.xmit_ts is lost once RACK.rtt + reo_wnd has passed
//!   since it was sent; otherwise the *reorder timer* is armed for the earliest such
//!   moment (plus `TCP_TIMEOUT_MIN_US`, 2 ms), and when it fires, segments are marked
//!   lost and Recovery is entered if it has not been.
//! - reo_wnd (`tcp_rack_reo_wnd`): min_rtt/4 × `reo_wnd_steps`, at most SRTT. Until
//!   reordering has been seen it is 0 in Recovery, and 0 once `reordering`
//!   (DupThresh) segments are SACKed — duplicate-ACK counting in RACK's terms.
//! - The steps grow by one for each round trip with a DSACK, and fall back to 1
//!   after 16 recoveries without one (`reo_wnd_persist`, `TCP_RACK_RECOVERY_THRESH`).

use std::time::Duration;

use super::Connection;
use crate::scoreboard::TxSeg;
use crate::time::Instant;
use crate::timer_wheel::TCP_TIMEOUT_MIN;
use crate::trace::{CaState, TimerKind};

/// `TCP_RACK_RECOVERY_THRESH`: recoveries a raised reo_wnd persists for.
const RECOVERY_THRESH: u32 = 16;

/// RACK's state (Linux `tp->rack` and `tp->reord_seen`).
#[derive(Clone, Debug)]
pub(crate) struct Rack {
    /// Send time and end of the most recently sent delivered segment.
    xmit_ts: Option<Instant>,
    end_seq: u64,
    /// RTT of the last delivered segment that advanced RACK.
    rtt: Duration,
    /// RACK advanced since the last loss detection.
    advanced: bool,
    /// Reordering events observed on the connection (Linux `tp->reord_seen`).
    reord_seen: u32,
    reo_wnd_steps: u32,
    reo_wnd_persist: u32,
    /// A DSACK arrived and the steps have not yet been raised for it.
    dsack_seen: bool,
    /// When the steps were last raised (an RTT must pass before the next raise).
    last_raise: Option<Instant>,
    /// Send time of the most recently sent segment the current ACK delivered.
    newest_delivered: Option<Instant>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit_ts: None,
            end_seq: 0,
            rtt: Duration::ZERO,
            advanced: false,
            reord_seen: 0,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_raise: None,
            newest_delivered: None,
        }
    }
}

impl Rack {
    /// Reordering events observed (Linux `tcpi_reord_seen`).
    pub fn reord_seen(&self) -> u32 {
        self.reord_seen
    }

    /// Reordering was observed (Linux `tp->reord_seen++`).
    pub fn on_reordering(&mut self) {
        self.reord_seen = self.reord_seen.saturating_add(1);
    }

    /// `tcp_rack_advance` for a segment this ACK delivered. `min_rtt` is the
    /// connection's; `tsecr` the ACK's timestamp echo and `ts_offset` our timestamp
    /// clock's offset, to tell which transmission a timestamp echoes.
    pub(crate) fn advance(
        &mut self,
        now: Instant,
        seg: &TxSeg,
        min_rtt: Option<Duration>,
        tsecr: Option<u32>,
        ts_offset: u32,
    ) {
        let rtt = now - seg.tx_time;
        self.newest_delivered = Some(
            self.newest_delivered
                .map_or(seg.tx_time, |t| t.max(seg.tx_time)),
        );
        if seg.ever_retrans {
            let sent_ts = (seg.tx_time.as_millis() as u32).wrapping_add(ts_offset);
            let echoes_older = tsecr.is_some_and(|e| (e.wrapping_sub(sent_ts) as i32) < 0);
            if rtt < min_rtt.unwrap_or(Duration::MAX) || echoes_older {
                return;
            }
        }
        self.advanced = true;
        self.rtt = rtt;
        match self.xmit_ts {
            Some(t) if !sent_after(seg.tx_time, seg.end, t, self.end_seq) => {}
            _ => {
                self.xmit_ts = Some(seg.tx_time);
                self.end_seq = seg.end;
            }
        }
    }
}

/// `tcp_skb_sent_after`: (t1, seq1) was sent after (t2, seq2).
fn sent_after(t1: Instant, seq1: u64, t2: Instant, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Connection {
    /// A DSACK arrived (`tcp_sacktag_write_queue`: `rack.dsack_seen`).
    pub(crate) fn rack_on_dsack(&mut self) {
        self.tx.loss.rack_mut().dsack_seen = true;
    }

    /// `tcp_rack_update_reo_wnd`, once per ACK, after the ACK's deliveries advanced
    /// RACK.
    pub(crate) fn rack_update_reo_wnd(&mut self, now: Instant) {
        let r = self.tx.loss.rack_mut();
        let Some(sent) = r.newest_delivered.take() else {
            return;
        };
        // "Disregard DSACK if a rtt has not passed since we adjusted reo_wnd."
        if r.last_raise.is_some_and(|t| sent < t) {
            r.dsack_seen = false;
        }
        if r.dsack_seen {
            r.reo_wnd_steps = (r.reo_wnd_steps + 1).min(0xff);
            r.dsack_seen = false;
            r.last_raise = Some(now);
            r.reo_wnd_persist = RECOVERY_THRESH;
        } else if r.reo_wnd_persist == 0 {
            r.reo_wnd_steps = 1;
        }
    }

    /// A recovery ended without being undone (`tcp_try_undo_recovery`).
    pub(crate) fn rack_recovery_done(&mut self) {
        let r = self.tx.loss.rack_mut();
        r.reo_wnd_persist = r.reo_wnd_persist.saturating_sub(1);
    }

    /// A recovery was undone by DSACKs (`tcp_try_undo_dsack`).
    pub(crate) fn rack_dsack_undo(&mut self) {
        let r = self.tx.loss.rack_mut();
        r.reo_wnd_persist = (r.reo_wnd_persist + 1).min(RECOVERY_THRESH);
    }

    /// `tcp_rack_reo_wnd`.
    pub(crate) fn reo_wnd(&self) -> Duration {
        if self.tx.loss.rack().reord_seen == 0
            && (self.tx.ca.state() >= CaState::Recovery
                || self.tx.sb.sacked_out() >= self.tx.loss.reordering())
        {
            return Duration::ZERO;
        }
        let min_rtt = self.tx.rtt.min_rtt().unwrap_or(Duration::ZERO);
        let srtt = self.tx.rtt.srtt().unwrap_or(Duration::ZERO);
        (min_rtt / 4 * self.tx.loss.rack().reo_wnd_steps).min(srtt)
    }

    /// `tcp_rack_detect_loss`: marks lost every segment sent before RACK.xmit_ts whose
    /// time is up; returns the longest wait left for the others, if any.
    fn rack_detect_loss(&mut self, now: Instant) -> Option<Duration> {
        let xmit_ts = self.tx.loss.rack().xmit_ts?;
        let reo_wnd = self.reo_wnd();
        let (rtt, end_seq) = (self.tx.loss.rack().rtt, self.tx.loss.rack().end_seq);
        let mut wait: Option<Duration> = None;
        let mut lost_retrans = 0;
        for i in 0..self.tx.sb.packets_out() as usize {
            let s = *self.tx.sb.get(i).expect("in range");
            // Skip what is delivered, and what is marked lost and not yet resent.
            if s.sacked || (s.lost && !s.retrans) {
                continue;
            }
            if !sent_after(xmit_ts, end_seq, s.tx_time, s.end) {
                continue;
            }
            let deadline = s.tx_time + rtt + reo_wnd;
            if deadline <= now {
                let (_, retrans_lost) = self.tx.sb.mark_lost(i);
                lost_retrans += retrans_lost as u64;
            } else {
                let left = deadline - now;
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        self.counters.lost_retransmit += lost_retrans;
        wait
    }

    /// `tcp_rack_mark_lost`, on an ACK: detection if RACK advanced, and the reorder
    /// timer for what is not yet due.
    pub(crate) fn rack_mark_lost(&mut self, now: Instant) {
        if !self.tx.loss.rack().advanced {
            return;
        }
        self.tx.loss.rack_mut().advanced = false;
        self.arm_reorder_timer(now);
    }

    /// Detects losses at `now` and arms the reorder timer for the earliest
    /// segment not yet lost (`tcp_rack_reo_timeout`), or stops it.
    fn arm_reorder_timer(&mut self, now: Instant) {
        match self.rack_detect_loss(now) {
            Some(w) => {
                let at = now + round_up_ms(w) + TCP_TIMEOUT_MIN;
                self.timers.arm(TimerKind::ReorderTimeout, now, at);
            }
            None => self.timers.put(TimerKind::ReorderTimeout, None),
        }
    }

    /// The reorder timer fired (`tcp_rack_reo_timeout`).
    pub(crate) fn on_rack_timeout(&mut self, now: Instant) {
        self.timers.put(TimerKind::ReorderTimeout, None);
        self.trace_timer(now, TimerKind::ReorderTimeout);
        let prior_pipe = self.tx.sb.pipe();
        self.arm_reorder_timer(now);
        if self.tx.sb.pipe() == prior_pipe {
            return;
        }
        self.counters.rack_reo_timeouts += 1;
        if self.tx.ca.state() < CaState::Recovery {
            self.enter_recovery(now, prior_pipe);
            self.first_reduction_on_ack(1, false);
        }
    }
}

/// Timers run in whole milliseconds, as Linux's jiffies (`usecs_to_jiffies` rounds
/// up).
fn round_up_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_nanos().div_ceil(1_000_000) as u64)
}
