//! Fast-recovery algorithms: how the congestion window evolves from the moment the
//! sender enters Recovery until the recovery point is acknowledged.
//!
//! The engine (Linux's `tcp_fastretrans_alert` structure) decides *when* to enter and
//! leave recovery and *which* segments are lost; the algorithm decides *how much* may
//! be sent, by setting cwnd on entry, on every ACK, and on exit. The sender then
//! transmits while `pipe < cwnd` (RFC 6675 §5). One module per algorithm.

mod prr;
mod rate_halving;
mod rfc3517;
mod rfc6675;

pub use prr::{Bound, Prr};
pub use rate_halving::RateHalving;
pub use rfc3517::Rfc3517;
pub use rfc6675::Rfc6675;

use crate::cc::Window;
use crate::config::RecoveryAlgorithm;

/// What an ACK told the sender, in segments, as the recovery algorithms need it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// RFC 6675 pipe after the ACK was processed.
    pub pipe: u32,
    /// Segments newly delivered by this ACK: cumulatively acknowledged plus newly
    /// SACKed (PRR's `DeliveredData`, in segments).
    pub delivered: u32,
    /// The ACK advanced snd.una.
    pub snd_una_advanced: bool,
    /// The ACK marked new segments lost.
    pub newly_lost: bool,
}

/// Context at the start of recovery.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecoveryStart {
    /// cwnd before the reduction.
    pub prior_cwnd: u32,
    /// pipe (RFC 6675) when recovery starts.
    pub pipe: u32,
    /// pipe before this ACK was processed.
    pub prior_in_flight: u32,
    /// FlightSize: segments sent and not cumulatively acknowledged (snd.nxt − snd.una).
    pub flight_size: u32,
    /// The congestion-control algorithm's floor for cwnd during a reduction (Linux
    /// `tcp_cwnd_min`).
    pub cwnd_min: u32,
}

/// A fast-recovery algorithm. `ssthresh` in `w` has been set by congestion control
/// before `on_enter` is called.
pub trait FastRecovery {
    /// A reduction begins.
    fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart);
    /// An ACK (or a timer acting as one) during the reduction.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);
    /// `segs` data segments (new or retransmitted) were sent during recovery.
    fn on_sent(&mut self, _segs: u32) {}
    /// Recovery completed (snd.una reached the recovery point).
    fn on_exit(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh.max(1);
        w.cwnd_cnt = 0;
    }
}

/// Calls `$call` on the algorithm inside a [`Recovery`], by `match`.
macro_rules! dispatch {
    ($self:ident, $r:ident => $call:expr) => {
        match $self {
            Recovery::Rfc6675($r) => $call,
            Recovery::Rfc3517($r) => $call,
            Recovery::RateHalving($r) => $call,
            Recovery::Prr($r) => $call,
        }
    };
}

/// Enum dispatch over the algorithms (hot path).
#[derive(Clone, Debug)]
pub enum Recovery {
    /// RFC 6675: cwnd = ssthresh at once.
    Rfc6675(Rfc6675),
    /// RFC 3517: as RFC 6675, with its older pipe rule.
    Rfc3517(Rfc3517),
    /// Linux 2.6 rate halving.
    RateHalving(RateHalving),
    /// Proportional Rate Reduction (RFC 6937 / RFC 9937).
    Prr(Prr),
}

impl Recovery {
    /// The algorithm `alg` names, idle.
    pub fn new(alg: RecoveryAlgorithm) -> Recovery {
        match alg {
            RecoveryAlgorithm::Rfc6675 => Recovery::Rfc6675(Rfc6675),
            RecoveryAlgorithm::Rfc3517 => Recovery::Rfc3517(Rfc3517),
            RecoveryAlgorithm::RateHalving => Recovery::RateHalving(RateHalving::default()),
            RecoveryAlgorithm::Prr => Recovery::Prr(Prr::new(Bound::SlowStart)),
            RecoveryAlgorithm::PrrCrb => Recovery::Prr(Prr::new(Bound::Conservative)),
            RecoveryAlgorithm::PrrRfc9937 => Recovery::Prr(Prr::new(Bound::Rfc9937)),
        }
    }
    /// See [`FastRecovery::on_enter`].
    pub fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart) {
        dispatch!(self, r => r.on_enter(w, start))
    }
    /// See [`FastRecovery::on_ack`].
    pub fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        dispatch!(self, r => r.on_ack(w, ack))
    }
    /// See [`FastRecovery::on_exit`].
    pub fn on_exit(&mut self, w: &mut Window) {
        dispatch!(self, r => r.on_exit(w))
    }
    /// See [`FastRecovery::on_sent`].
    pub fn on_sent(&mut self, segs: u32) {
        dispatch!(self, r => r.on_sent(segs))
    }
    /// PRR's `(prr_delivered, prr_out)`, when the algorithm is PRR.
    pub fn prr_counts(&self) -> Option<(u64, u64)> {
        match self {
            Recovery::Prr(p) => Some(p.counts()),
            _ => None,
        }
    }
}
