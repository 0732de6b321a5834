//! Which outstanding segments are deemed lost, and when recovery starts: the choice
//! of loss detection, as one enum.
//!
//! - [`Detection::Reno`]: without SACK, duplicate ACKs as RFC 5681 §3.2 and RFC 6582
//!   count them; the head is marked lost.
//! - [`Detection::Sack`]: RFC 6675 §5 — `DupThresh` SACKed segments above a hole
//!   (Linux `tcp_time_to_recover` with `sacked_out`), and `IsLost` marking.
//! - [`Detection::Fack`]: Linux FACK (`prr-imc11.txt` §3.2): the forward-most SACK
//!   more than `reordering` segments beyond snd.una, every hole below it marked lost,
//!   a head outstanding longer than the RTO ("Trick #3"), and lost retransmissions.
//!   Reordering turns it into `Sack` for the rest of the connection, as Linux does.
//! - [`Detection::Rack`]: RFC 8985 time-based detection (see [`super::rack`]) in
//!   place of duplicate-ACK counting and FACK, when SACK is in use.
//!
//! The duplicate threshold adapts to reordering (Linux `tcp_update_reordering`).

use super::Connection;
use super::rack::Rack;
use crate::config::Config;
use crate::time::Instant;
use crate::trace::Event;

/// The loss-detection algorithm in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Detection {
    /// Duplicate ACKs without SACK (NewReno).
    Reno,
    /// RFC 6675.
    Sack,
    /// Linux FACK.
    Fack,
    /// RFC 8985 RACK.
    Rack,
}

/// Loss detection's state.
#[derive(Clone, Debug)]
pub(crate) struct LossDetection {
    kind: Detection,
    /// The duplicate threshold, raised by observed reordering (Linux `reordering`).
    reordering: u32,
    /// RACK's state (kept whatever the kind: reordering is recorded in it).
    rack: Rack,
}

impl LossDetection {
    /// Before the handshake: what the configuration asks for, assuming SACK.
    pub fn new(cfg: &Config) -> Self {
        let kind = if !cfg.sack {
            Detection::Reno
        } else if cfg.rack {
            Detection::Rack
        } else if cfg.fack {
            Detection::Fack
        } else {
            Detection::Sack
        };
        LossDetection {
            kind,
            reordering: cfg.dupthresh,
            rack: Rack::default(),
        }
    }

    /// The handshake settled whether SACK is in use.
    pub fn negotiated(&mut self, sack: bool) {
        if !sack {
            self.kind = Detection::Reno;
        }
    }

    /// The duplicate threshold now.
    pub fn reordering(&self) -> u32 {
        self.reordering
    }

    /// A timeout: the duplicate threshold goes back to at most `dupthresh` (Linux
    /// `tcp_enter_loss`).
    pub fn cap_reordering(&mut self, dupthresh: u32) {
        self.reordering = self.reordering.min(dupthresh);
    }

    /// RACK's state.
    pub fn rack(&self) -> &Rack {
        &self.rack
    }

    /// RACK's state, to change.
    pub fn rack_mut(&mut self) -> &mut Rack {
        &mut self.rack
    }

    /// FACK's rules apply.
    pub fn fack(&self) -> bool {
        self.kind == Detection::Fack
    }
}

impl Connection {
    /// RACK runs on this connection: the switch is on and SACK was negotiated
    /// (without SACK, Linux counts duplicate ACKs as NewReno does).
    pub(crate) fn rack_on(&self) -> bool {
        self.tx.loss.kind == Detection::Rack
    }

    /// Linux `tcp_time_to_recover` (without early retransmit). With RACK only a
    /// segment marked lost starts recovery.
    pub(super) fn time_to_recover(&self, now: Instant) -> bool {
        if self.tx.sb.lost_out() > 0 {
            return true;
        }
        let dupacks = match self.tx.loss.kind {
            Detection::Rack => return false,
            // "Trick #3": with FACK, a head outstanding longer than the RTO.
            Detection::Fack if self.tx.sb.head_timed_out(now, self.tx.rtt.rto_backed_off()) => {
                return true;
            }
            Detection::Fack => self.tx.sb.fackets_out(),
            Detection::Reno | Detection::Sack => self.tx.sb.sacked_out() + 1,
        };
        dupacks > self.tx.loss.reordering
    }

    /// Linux `tcp_update_scoreboard`: marks segments lost. Returns how many.
    pub(super) fn update_scoreboard(&mut self, fast_rexmit: bool) -> u32 {
        let high = self.tx.ca.high_seq();
        let reordering = self.tx.loss.reordering;
        match self.tx.loss.kind {
            Detection::Reno => self.tx.sb.mark_head_lost(1, true, true, high),
            Detection::Fack => {
                let lost = self.tx.sb.fackets_out().saturating_sub(reordering).max(1);
                self.tx.sb.mark_head_lost(lost, true, false, high)
            }
            Detection::Sack | Detection::Rack => {
                let sacked = self.tx.sb.sacked_out();
                if sacked >= reordering {
                    self.tx
                        .sb
                        .mark_head_lost(sacked - reordering, false, false, high)
                } else if fast_rexmit {
                    self.tx.sb.mark_head_lost(1, true, true, high)
                } else {
                    0
                }
            }
        }
    }

    /// Linux `tcp_update_reordering`: raise the duplicate threshold to the observed
    /// degree of reordering and stop trusting FACK.
    pub(crate) fn update_reordering(&mut self, now: Instant, metric: u32, sack: bool) {
        if metric > 0 && self.cfg.er_reorder_disable {
            self.tx.er.disable();
        }
        if metric > 0 {
            self.tx.loss.rack.on_reordering(); // Linux `tp->reord_seen++`
        }
        if metric > self.tx.loss.reordering {
            self.tx.loss.reordering = metric.min(self.cfg.max_reordering);
            if sack {
                self.counters.sack_reorder += 1;
            } else {
                self.counters.reno_reorder += 1;
            }
            if self.tx.loss.kind == Detection::Fack {
                self.tx.loss.kind = Detection::Sack;
            }
            self.trace(
                now,
                Event::Reordering {
                    degree: self.tx.loss.reordering,
                },
            );
        }
    }
}
