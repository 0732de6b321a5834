//! RFC 3517 fast recovery as `prr-imc11.txt` §3.1 Algorithm 1 states it: on entry
//! `cwnd = ssthresh = FlightSize / 2` whatever the congestion-control algorithm would
//! choose, the first missing segment is retransmitted, and on every ACK the sender
//! transmits `MAX(0, cwnd − pipe)`. Its two problems (§3.1): the half-RTT silence
//! after the first retransmission, and bursts of `ssthresh − pipe` after heavy loss.

use super::{AckSample, FastRecovery, RecoveryStart};
use crate::cc::Window;

#[derive(Clone, Copy, Debug, Default)]
/// RFC 3517 recovery.
pub struct Rfc3517;

impl FastRecovery for Rfc3517 {
    fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart) {
        // RFC 3517 §5 step (4.2) / RFC 5681 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS).
        w.ssthresh = (start.flight_size / 2).max(2);
        w.cwnd = w.ssthresh;
        w.cwnd_cnt = 0;
    }

    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
}
