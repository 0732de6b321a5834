//! RFC 6675 §5 conservative SACK-based recovery (also RFC 3517 §5, the version the
//! PRR paper's Algorithm 1 quotes): on entry `cwnd = ssthresh`; on every ACK the
//! sender may transmit `cwnd − pipe` segments; on exit cwnd stays at ssthresh.

use super::{AckSample, FastRecovery, RecoveryStart};
use crate::cc::Window;

#[derive(Clone, Copy, Debug, Default)]
/// RFC 6675 recovery.
pub struct Rfc6675;

impl FastRecovery for Rfc6675 {
    fn on_enter(&mut self, w: &mut Window, _start: &RecoveryStart) {
        // RFC 6675 §5 step (4.2): cwnd = ssthresh.
        w.cwnd = w.ssthresh.max(1);
        w.cwnd_cnt = 0;
    }

    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {
        // cwnd stays at ssthresh; pipe alone clocks transmissions (RFC 6675 §5 (C)).
    }
}
