//! F-RTO: detecting spurious retransmission timeouts (RFC 5682 §2.1, the basic
//! algorithm, as Linux 2.6/3.x `tcp_enter_frto` and `tcp_process_frto` run it).
//!
//! After a timeout the sender retransmits only the first unacknowledged segment
//! (step 1). If the first ACK after it advances snd.una and new data can go out, up
//! to two new segments are sent (2.b); if the second ACK advances snd.una too, the
//! timeout was spurious and its reduction is undone (3.b). A duplicate ACK at either
//! step falls back to conventional recovery: everything outstanding is marked lost
//! (2.a, 3.a — with cwnd at most 3 segments in 3.a).

use super::Connection;
use crate::time::Instant;
use crate::trace::{CaState, UndoKind};

/// F-RTO progress (RFC 5682 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frto {
    Off,
    /// Step 2: waiting for the first ACK after the RTO retransmission.
    AwaitFirst,
    /// Step 3: new data was sent; waiting for the second ACK.
    AwaitSecond,
}

impl Connection {
    /// On a timeout, after Linux `tcp_enter_loss` set the window: marks what is to be
    /// retransmitted — only the head when F-RTO runs (step 1), everything otherwise.
    /// F-RTO runs on the first timeout of an episode when nothing was retransmitted
    /// before it (the undo marker is set).
    pub(super) fn frto_on_timeout(&mut self, first_timeout: bool) {
        if self.cfg.frto && first_timeout && self.tx.undo.armed() {
            // RFC 5682 step 1: retransmit only the first unacknowledged segment.
            self.tx.frto = Frto::AwaitFirst;
            self.tx.sb.clear_retrans_and_lost();
            let high = self.tx.ca.high_seq();
            self.tx.sb.mark_head_lost(1, true, true, high);
        } else {
            self.tx.frto = Frto::Off;
            self.tx.sb.mark_all_lost(true);
        }
    }

    /// RFC 5682 §2.1 steps 2 and 3.
    pub(super) fn frto_ack(&mut self, now: Instant, una_advanced: bool, is_dupack: bool) {
        match self.tx.frto {
            Frto::AwaitFirst => {
                let has_new_data = self.snd.nxt < self.snd.buf.end()
                    || (self.snd.app_closed && !self.snd.fin_sent);
                if una_advanced && self.snd.una < self.tx.ca.high_seq() && has_new_data {
                    // (2.b) transmit up to two new segments.
                    self.tx.frto = Frto::AwaitSecond;
                    self.frto_window_for_two();
                } else if una_advanced && self.snd.una >= self.tx.ca.high_seq() {
                    self.tx.frto = Frto::Off;
                } else {
                    // (2.a) duplicate ACK, or nothing new to send: conventional recovery.
                    self.tx.frto = Frto::Off;
                    self.tx.sb.mark_all_lost(false);
                }
            }
            Frto::AwaitSecond => {
                if una_advanced {
                    // (3.b) the timeout was spurious.
                    self.tx.frto = Frto::Off;
                    self.tx.sb.clear_lost();
                    self.undo_reduction(now, UndoKind::Frto);
                    self.tx.rtt.clear_retransmits();
                    self.set_ca(now, CaState::Open);
                } else if is_dupack {
                    // (3.a) conventional recovery with cwnd at most 3 segments.
                    self.tx.frto = Frto::Off;
                    self.frto_fallback_window();
                    self.tx.sb.mark_all_lost(false);
                }
            }
            Frto::Off => {}
        }
    }
}
