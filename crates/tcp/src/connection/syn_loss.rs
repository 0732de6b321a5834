//! The window a transfer starts with after a lost SYN or SYN-ACK: RFC 5681 §3.1
//! ("if the SYN or SYN/ACK is lost, the initial window used by a sender after a
//! correctly transmitted SYN MUST be one segment"), and Linux's relaxation of it
//! for RFC 6298's 1 s initial RTO — one segment only after more than one SYN or
//! SYN-ACK retransmission (`tcp_init_metrics` in Linux 3.1–5.1, `tcp_init_transfer`
//! since), and since Linux 5.2 only when the timer fired and the peer's timestamp
//! echo does not show that the first SYN or SYN-ACK arrived
//! (`tcp_try_undo_spurious_syn`). The switch is [`SynLossWindow`].

use super::Connection;
use crate::config::SynLossWindow;
use crate::wire::Segment;

impl Connection {
    /// On entering ESTABLISHED with `seg` (the SYN-ACK, or the ACK of ours): cut the
    /// window to one segment if the handshake's losses call for it.
    pub(super) fn window_after_syn_loss(&mut self, seg: &Segment) {
        let timed_out = self.ctl.syn_retries > 0;
        let resent = self.ctl.syn_resent;
        // The echo of the first SYN's (or SYN-ACK's) TSval: it arrived, and every
        // retransmission was spurious (Linux compares `retrans_stamp`, the first
        // transmission's time, with `rcv_tsecr`).
        let first_arrived = self.opts.ts
            && seg
                .options
                .timestamps
                .is_some_and(|ts| ts.ecr == self.tsval(self.ctl.syn_sent_at));
        let one = match self.cfg.syn_loss_window {
            SynLossWindow::Keep => false,
            SynLossWindow::Rfc5681 => timed_out,
            SynLossWindow::Linux => resent > 1,
            SynLossWindow::Linux52 => resent > 1 && timed_out && !first_arrived,
        };
        if one {
            self.start_with_one_segment();
        }
    }
}
