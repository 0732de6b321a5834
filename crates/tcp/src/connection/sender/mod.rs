//! The sender: its retransmission queue, window and congestion state, and the
//! mechanisms of loss recovery that act on them — RFC 9293 §3.10.7.4 and RFC 6675
//! for the ACK, RFC 5681 and Linux's congestion-state machine, RFC 6298 for the
//! timer; each submodule names its sources.
//!
//! - [`ack`]: the sender's ACK processing and Linux's congestion-state machine.
//! - [`transmit`]: what to send next.
//! - [`rto`]: the retransmission timer's expiry.
//! - [`reduction`]: the one writer of cwnd outside `cc/` and `recovery/`.
//! - [`undo`], [`frto`]: spurious reductions and timeouts.
//! - [`loss_detection`], [`rack`]: which segments are lost.
//! - [`early_retransmit`]: RFC 5827 with the delay and reordering mitigations.
//! - [`loss_probe`]: the tail loss probe and its loss detection.
//! - [`persist`]: silly-window avoidance and zero-window probes.
//! - [`cwnd_validation`]: whether cwnd was used.
//! - [`fast_start`]: TCP fast start after idle periods and from cached path state.
//! - [`session_member`]: a connection's side of a TCP session ([`crate::session`]).
//! - [`tso`]: Linux's TSO packets, for the PSH flag they carry.
//! - [`chrono`]: how long the sender was busy, and limited by the peer's window.
//!
//! The [`Sender`]'s fields are private to this module and its submodules: the rest
//! of the connection reads the sender through the getters below.

mod ack;
mod chrono;
mod cwnd_validation;
mod early_retransmit;
mod fast_start;
mod frto;
mod loss_detection;
mod loss_probe;
mod persist;
mod rack;
mod reduction;
mod rto;
mod session_member;
mod transmit;
mod tso;
mod undo;

use std::time::Duration;

use super::{CloseReason, Connection};
use crate::cc::Congestion;
use crate::config::Config;
use crate::rtt::RttEstimator;
use crate::scoreboard::{Scoreboard, TxSeg};
use crate::trace::CaState;
pub use fast_start::PathMetrics;
pub(crate) use fast_start::{Fallback, fast_start_cwnd};
use frto::Frto;
use loss_detection::LossDetection;
use reduction::CaMachine;
pub(crate) use reduction::decayed_cwnd;
pub use session_member::AckReport;
use session_member::Member;
use undo::Undo;

/// The sender: its retransmission queue, window and congestion state, and the
/// loss-recovery mechanisms that act on them (RFC 6675, RFC 5681, RFC 6298 and
/// the submodules that name their sources).
#[derive(Debug)]
pub(crate) struct Sender {
    /// The retransmission queue.
    sb: Scoreboard,
    /// The window and its congestion-control algorithm.
    cong: Congestion,
    /// Linux's congestion-state machine and the cwnd-reduction episode.
    ca: CaMachine,
    /// What undoing the current reduction would restore.
    undo: Undo,
    /// F-RTO after a timeout.
    frto: Frto,
    /// Which segments are deemed lost, and the reordering seen.
    loss: LossDetection,
    /// RTT estimate, RTO and its back-off.
    rtt: RttEstimator,
    /// Early Retransmit.
    er: early_retransmit::ErState,
    /// The tail loss probe.
    tlp: loss_probe::LossProbe,
    /// Zero-window probing.
    persist: persist::Persist,
    /// Fast start.
    fast_start: fast_start::FastStart,
    /// How much of cwnd the current window used.
    cwnd_usage: cwnd_validation::CwndUsage,
    /// Membership of a TCP session.
    member: Member,
    /// The TSO packet under way, and the retransmitted one.
    tso: tso::TsoPacket,
    tso_resend: tso::TsoResend,
    /// Busy and receive-window-limited time (`tcp_info`).
    chronos: chrono::Chronos,
}

impl Sender {
    /// The scoreboard's storage, emptied (see [`Scoreboard::take_storage`]).
    pub(crate) fn take_storage(&mut self) -> std::collections::VecDeque<TxSeg> {
        self.sb.take_storage()
    }
    /// An empty scoreboard takes `q` as its storage.
    pub(crate) fn reuse(&mut self, q: std::collections::VecDeque<TxSeg>) {
        self.sb.reuse(q);
    }
    /// A sender configured as `cfg`, with RTT estimator `rtt`.
    pub fn new(cfg: &Config, rtt: RttEstimator) -> Sender {
        Sender {
            sb: Scoreboard::default(),
            cong: Congestion::new(cfg.cc, cfg.hystart, cfg.initial_window),
            ca: CaMachine::new(cfg.recovery),
            undo: Undo::default(),
            frto: Frto::Off,
            loss: LossDetection::new(cfg),
            rtt,
            er: early_retransmit::ErState::default(),
            tlp: loss_probe::LossProbe::default(),
            persist: persist::Persist::default(),
            fast_start: fast_start::FastStart::default(),
            cwnd_usage: Default::default(),
            member: Member::default(),
            tso: tso::TsoPacket::default(),
            tso_resend: tso::TsoResend::default(),
            chronos: chrono::Chronos::default(),
        }
    }

    /// The handshake settled whether SACK is in use.
    pub fn negotiated(&mut self, sack: bool) {
        self.loss.negotiated(sack);
    }

    /// The RTT estimate starts afresh (an accelerated open took no sample).
    pub fn forget_rtt(&mut self, cfg: &Config) {
        self.rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
    }
}

impl Connection {
    /// An RTT sample, counted (their mean is a run's mean RTT).
    fn note_rtt_sample(&mut self, sample: Duration) {
        self.counters.rtt_samples += 1;
        self.counters.rtt_sample_us += sample.as_micros() as u64;
    }

    /// Linux's congestion-avoidance state.
    pub fn ca_state(&self) -> CaState {
        self.tx.ca.state()
    }
    /// Congestion window in segments.
    pub fn cwnd(&self) -> u32 {
        self.tx.cong.cwnd()
    }
    /// Slow-start threshold in segments.
    pub fn ssthresh(&self) -> u32 {
        self.tx.cong.ssthresh()
    }
    /// RFC 6675 pipe, in segments.
    pub fn pipe(&self) -> u32 {
        self.tx.sb.pipe()
    }
    /// Segments sent and not yet cumulatively acknowledged (Linux `packets_out`,
    /// `tcpi_unacked`).
    pub fn packets_out(&self) -> u32 {
        self.tx.sb.packets_out()
    }
    /// Consecutive timeouts without progress (Linux `icsk_backoff`, `tcpi_backoff`).
    pub fn backoff(&self) -> u32 {
        self.tx.rtt.backoff()
    }
    /// Segments SACKed above `snd_una` (Linux `sacked_out`, `tcpi_sacked`).
    pub fn sacked_out(&self) -> u32 {
        self.tx.sb.sacked_out()
    }
    /// Segments marked lost (Linux `lost_out`, `tcpi_lost`).
    pub fn lost_out(&self) -> u32 {
        self.tx.sb.lost_out()
    }
    /// Retransmissions in flight (Linux `retrans_out`, `tcpi_retrans`).
    pub fn retrans_out(&self) -> u32 {
        self.tx.sb.retrans_out()
    }
    /// Smoothed RTT, once a sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.tx.rtt.srtt()
    }
    /// The retransmission timeout now, back-off included.
    pub fn rto(&self) -> Duration {
        self.tx.rtt.rto_backed_off()
    }
    /// FACK loss detection is in force (it stops once reordering is seen).
    pub fn fack_enabled(&self) -> bool {
        self.tx.loss.fack()
    }
    /// PRR's `(prr_delivered, prr_out)` in segments while in Recovery with a PRR
    /// algorithm.
    pub fn prr_counts(&self) -> Option<(u64, u64)> {
        if self.tx.ca.state() == CaState::Recovery {
            self.tx.ca.prr_counts()
        } else {
            None
        }
    }
    /// pipe when the current (or last) fast recovery began, after its first ACK's
    /// loss marking (where PRR first decides, `prr-imc11.txt` Table 5).
    pub fn recovery_start_pipe(&self) -> u32 {
        self.tx.ca.start_pipe()
    }
    /// The duplicate threshold now, raised by observed reordering.
    pub fn reordering(&self) -> u32 {
        self.tx.loss.reordering()
    }
    /// Reordering events observed so far (Linux `tcpi_reord_seen`).
    pub fn reord_seen(&self) -> u32 {
        self.tx.loss.rack().reord_seen()
    }
    /// RACK's reordering window now (RFC 8985 §6.2 step 4), when RACK runs.
    pub fn rack_reo_wnd(&self) -> Option<Duration> {
        self.rack_on().then(|| self.reo_wnd())
    }
    /// Everything written, including our FIN, has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.tx.sb.is_empty() && self.snd.nxt == self.snd.una && self.snd.una >= self.snd.buf.end()
    }

    /// The RTO without back-off.
    pub(crate) fn rto_unbacked(&self) -> Duration {
        self.tx.rtt.rto()
    }

    /// The peer reports `[lo, hi)` lost (Corrective's R_FAIL): returns how many
    /// segments were newly marked.
    pub(crate) fn mark_range_lost(&mut self, lo: u64, hi: u64) -> u32 {
        self.tx.sb.mark_range_lost(lo, hi)
    }

    /// The handshake completed: an RTT sample from it (Karn: only if the SYN was not
    /// retransmitted, unless timestamps identify the transmission), and the RTO is
    /// no longer backed off.
    pub(crate) fn handshake_rtt(&mut self, now: crate::time::Instant, seg: &crate::wire::Segment) {
        let sample = if !self.ctl.syn_retransmitted {
            Some(now - self.ctl.syn_sent_at)
        } else if let (true, Some(ts)) = (self.opts.ts, seg.options.timestamps) {
            let ms = self.tsval(now).wrapping_sub(ts.ecr);
            (ts.ecr != 0 && ms < 1 << 30).then(|| Duration::from_millis(ms as u64))
        } else {
            None
        };
        match sample {
            Some(s) => {
                self.tx.rtt.on_sample(s, 1, 1);
                self.note_rtt_sample(s);
            }
            // RFC 6298 §5.7: SYN retransmitted and no sample: data RTO starts at 3 s.
            None => self.tx.rtt.set_fallback_rto(Duration::from_secs(3)),
        }
        self.tx.rtt.clear_backoff();
    }
}
