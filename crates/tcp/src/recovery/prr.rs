//! Proportional Rate Reduction: `prr-imc11.txt` §4.2 Algorithm 2 (PRR-SSRB, the
//! paper's version), the conservative reduction bound of RFC 6937 §3.1 (PRR-CRB), and
//! the Standards Track form of RFC 9937 §6 (CRB by default, one extra segment on a
//! "safe ACK" that advances snd.una without indicating new loss, `RecoverFS = pipe`,
//! and the first retransmission forced).
//!
//! All quantities are in segments, as Linux's `tcp_cwnd_reduction` counts them.
//! `DeliveredData` is the segments newly acknowledged cumulatively plus newly SACKed
//! (one per duplicate ACK without SACK). The sender transmits while `pipe < cwnd`, so
//! setting `cwnd = pipe + sndcnt` on every ACK lets exactly `sndcnt` segments out.

use super::{AckSample, FastRecovery, RecoveryStart};
use crate::cc::Window;

/// Which reduction bound applies once pipe has fallen to ssthresh or below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Slow-start reduction bound: `MAX(prr_delivered − prr_out, DeliveredData) + 1`
    /// (the paper's Algorithm 2; RFC 6937 PRR-SSRB).
    SlowStart,
    /// Conservative reduction bound: `prr_delivered − prr_out` (RFC 6937 PRR-CRB).
    Conservative,
    /// RFC 9937: `MAX(prr_delivered − prr_out, DeliveredData)`, plus 1 on a safe ACK.
    Rfc9937,
}

#[derive(Clone, Copy, Debug)]
/// PRR state (RFC 6937 §3): `prr_delivered`, `prr_out`, RecoverFS.
pub struct Prr {
    bound: Bound,
    /// Segments delivered to the receiver since recovery began (`prr_delivered`).
    delivered: u64,
    /// Segments sent since recovery began (`prr_out`).
    out: u64,
    /// FlightSize at the start of recovery (`RecoverFS`).
    recover_fs: u64,
}

impl Prr {
    /// PRR with the reduction bound `bound`.
    pub fn new(bound: Bound) -> Self {
        Prr {
            bound,
            delivered: 0,
            out: 0,
            recover_fs: 1,
        }
    }

    /// `prr_delivered` and `prr_out` so far (for checks of the PRR bound).
    pub fn counts(&self) -> (u64, u64) {
        (self.delivered, self.out)
    }

    /// Segments that may be sent in answer to this ACK (`sndcnt`).
    fn sndcnt(&self, w: &Window, ack: &AckSample) -> u64 {
        let ssthresh = w.ssthresh as u64;
        let pipe = ack.pipe as u64;
        let delivered_now = ack.delivered as u64;
        let sndcnt = if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            (self.delivered * ssthresh)
                .div_ceil(self.recover_fs)
                .saturating_sub(self.out)
        } else {
            let behind = self.delivered.saturating_sub(self.out);
            let limit = match self.bound {
                Bound::SlowStart => behind.max(delivered_now) + 1,
                Bound::Conservative => behind,
                Bound::Rfc9937 => {
                    let safe_ack = ack.snd_una_advanced && !ack.newly_lost;
                    behind.max(delivered_now) + safe_ack as u64
                }
            };
            (ssthresh - pipe).min(limit)
        };
        if self.bound == Bound::Rfc9937 && self.out == 0 && sndcnt == 0 {
            // RFC 9937: force the fast retransmit on entering recovery.
            return 1;
        }
        sndcnt
    }
}

impl FastRecovery for Prr {
    fn on_enter(&mut self, _w: &mut Window, start: &RecoveryStart) {
        self.delivered = 0;
        self.out = 0;
        // The paper and RFC 6937: RecoverFS = snd.nxt − snd.una; RFC 9937: pipe.
        let fs = match self.bound {
            Bound::Rfc9937 => start.pipe,
            _ => start.flight_size,
        };
        self.recover_fs = (fs as u64).max(1);
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.delivered += ack.delivered as u64;
        let sndcnt = self.sndcnt(w, ack);
        w.cwnd = (ack.pipe as u64 + sndcnt).min(u32::MAX as u64) as u32;
        w.cwnd_cnt = 0;
    }

    fn on_sent(&mut self, segs: u32) {
        self.out += segs as u64;
    }
}
