//! Linux 2.6 rate-halving fast recovery, as `prr-imc11.txt` §3.2 describes it and
//! `tcp_cwnd_down` / `tcp_complete_cwr` (net/ipv4/tcp_input.c, 2.6.x–3.1)
//! implement it: cwnd is not cut on entry; every ACK that shows progress takes one
//! segment off cwnd on alternate ACKs (so the sender transmits on every other ACK),
//! down to a floor (`tcp_cwnd_min`: ssthresh/2 for Reno, ssthresh otherwise), and
//! every such ACK also pulls cwnd down to `pipe + 1`. At the end cwnd is
//! `min(cwnd, ssthresh)` — which is how recovery can end with cwnd near 1 when the
//! application runs out of data (§3.2, "slow start after recovery").

use super::{AckSample, FastRecovery, RecoveryStart};
use crate::cc::Window;

#[derive(Clone, Copy, Debug, Default)]
/// Rate-halving state (Linux 2.6 `tcp_cwnd_down`).
pub struct RateHalving {
    /// `tcp_cwnd_min` for this episode.
    floor: u32,
}

impl FastRecovery for RateHalving {
    fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart) {
        self.floor = start.cwnd_min;
        w.cwnd_cnt = 0;
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        // FLAG_ANY_PROGRESS: something was newly acknowledged or SACKed (a duplicate
        // ACK without SACK counts as one segment delivered).
        if ack.delivered == 0 && !ack.snd_una_advanced {
            return;
        }
        let decr = w.cwnd_cnt + 1;
        w.cwnd_cnt = decr & 1;
        let decr = decr >> 1;
        if decr > 0 && w.cwnd > self.floor {
            w.cwnd -= decr;
        }
        w.cwnd = w.cwnd.min(ack.pipe + 1);
    }

    fn on_exit(&mut self, w: &mut Window) {
        w.cwnd = w.cwnd.min(w.ssthresh).max(1);
        w.cwnd_cnt = 0;
    }
}
