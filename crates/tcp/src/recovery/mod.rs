//! Fast-recovery algorithms: how the congestion window evolves from the moment the
//! sender enters Recovery until the recovery point is acknowledged.
//!
//! The engine (Linux's `tcp_fastretrans_alert` structure) decides *when* to enter and
//! leave recovery and *which* segments are lost; the algorithm decides *how much* may
//! be sent, by setting cwnd on entry, on every ACK, and on exit. The sender then
//! transmits while `pipe < cwnd` (RFC 6675 §5). One module per algorithm.

mod rfc6675;

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
    /// Segments in flight before this ACK was processed (FlightSize).
    pub prior_in_flight: u32,
}

/// A fast-recovery algorithm. `ssthresh` in `w` has been set by congestion control
/// before `on_enter` is called.
pub trait FastRecovery {
    fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart);
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);
    /// Recovery completed (snd.una reached the recovery point).
    fn on_exit(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh.max(1);
        w.cwnd_cnt = 0;
    }
}

/// Enum dispatch over the algorithms (hot path).
#[derive(Clone, Debug)]
pub enum Recovery {
    Rfc6675(Rfc6675),
}

impl Recovery {
    pub fn new(alg: RecoveryAlgorithm) -> Recovery {
        match alg {
            RecoveryAlgorithm::Rfc6675 => Recovery::Rfc6675(Rfc6675),
        }
    }
    fn inner(&mut self) -> &mut dyn FastRecovery {
        match self {
            Recovery::Rfc6675(r) => r,
        }
    }
    pub fn on_enter(&mut self, w: &mut Window, start: &RecoveryStart) {
        self.inner().on_enter(w, start)
    }
    pub fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.inner().on_ack(w, ack)
    }
    pub fn on_exit(&mut self, w: &mut Window) {
        self.inner().on_exit(w)
    }
}
