//! Tail loss probe — *Reactive* of `gentle-aggression-sigcomm13.txt` §4 (Algorithm 1
//! and "Detecting recovered losses"), the IETF draft of 2013 and RFC 8985 §7 — in three
//! flavours:
//!
//! - `draft-2013`: PTO = 2·SRTT, or max(2·SRTT, 1.5·SRTT + WDT) with one segment in
//!   flight; at least 10 ms; never after the RTO. An episode of N probes for one tail
//!   ends with an ACK above the snd.nxt of the probe; fewer than N "probe dupacks"
//!   before that means a probe repaired a loss, and cwnd is reduced (basic SACK only,
//!   footnote 4).
//! - `linux-3.10`: the same timer (`tcp_schedule_loss_probe`); the episode is judged
//!   as `tcp_process_tlp_ack` does: a duplicate ACK at the probe's snd.nxt says the
//!   probe was unnecessary, an ACK above it reduces cwnd unless it carries a DSACK.
//!   A probe that resends a segment is not counted in `RetransSegs`
//!   (`__tcp_retransmit_skb`; [`TlpFlavour::probe_counts_as_retransmission`]).
//! - `rfc8985`: PTO = 2·SRTT, plus WCDelAckT with one segment in flight, 1 s without
//!   an RTT sample; DSACK-aware detection (§7.4) as in `linux-3.10`.
//! - `linux-6`: Linux 4.11+ `tcp_schedule_loss_probe`: PTO = 2·SRTT + 2 ms
//!   (`TCP_TIMEOUT_MIN`), or 2·SRTT + `rto_min` with one segment in flight, 1 s
//!   without an RTT sample; probes in CWR as well as Open; detection as `linux-3.10`.
//!
//! The probe is one new segment if the application and the peer's window allow,
//! otherwise the last segment sent again; the RTO restarts from the probe. Probes are
//! sent only in Open, SACK negotiated, when the sender is cwnd- or application-limited,
//! and at most `tlp_max_probes` times in a row without new data being acknowledged.

use std::time::Duration;

use super::Connection;
use crate::config::{TlpDetection, TlpFlavour};
use crate::scoreboard::TxSeg;
use crate::time::Instant;
use crate::timer_wheel::TCP_TIMEOUT_MIN;
use crate::trace::{CaState, Event, RetransKind, State, TimerKind};
use crate::wire::{Flags, Segment};

/// Linux `TCP_TIMEOUT_INIT`-based floor of the probe timeout (10 ms).
const PTO_MIN: Duration = Duration::from_millis(10);

/// The loss probe's state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LossProbe {
    /// The probe timer fired: a probe is due.
    pending: bool,
    /// Probes in a row without new data acknowledged.
    consecutive: u32,
    /// The episode being judged.
    episode: Option<TlpEpisode>,
}

/// A loss-probe episode: the probes sent for one tail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TlpEpisode {
    /// snd.nxt when the (last) retransmission probe was sent.
    high_seq: u64,
    /// Retransmission probes of this episode.
    probes: u32,
    /// Duplicate ACKs received for them.
    dupacks: u32,
}

impl LossProbe {
    /// The probe timer fired: a probe is due.
    pub fn pending(&self) -> bool {
        self.pending
    }
    /// A probe no longer due (the connection joined a session).
    pub fn cancel_pending(&mut self) {
        self.pending = false;
    }
    /// New data was acknowledged: the count of probes in a row starts again.
    pub fn on_progress(&mut self) {
        self.consecutive = 0;
    }
    /// The episode is over unjudged (a timeout, a failed fast start).
    pub fn end_episode(&mut self) {
        self.episode = None;
    }
}

impl Connection {
    /// Algorithm 1 `schedule_pto`: arms the probe timer when the conditions hold.
    pub(crate) fn schedule_pto(&mut self, now: Instant) {
        self.timers.put(TimerKind::LossProbe, None);
        if !self.cfg.tlp
            || !self.opts.sack
            || !self.probe_state_allows()
            || !matches!(
                self.state,
                State::Established
                    | State::CloseWait
                    | State::FinWait1
                    | State::Closing
                    | State::LastAck
            )
            || self.tx.sb.is_empty()
            || self.tx.tlp.consecutive >= self.cfg.tlp_max_probes
            || self
                .tx
                .tlp
                .episode
                .is_some_and(|e| e.probes >= self.cfg.tlp_max_probes)
        {
            // At most `tlp_max_probes` retransmission probes per tail (Linux 3.10: one
            // outstanding, `tlp_high_seq`).
            return;
        }
        // (b) cwnd- or application-limited: no new segment could go out now.
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        if unsent > 0 && self.tx.sb.pipe() < self.tx.cong.cwnd() && self.window_room() > 0 {
            return;
        }
        let srtt = self.tx.rtt.srtt();
        let flavour = self.cfg.tlp_flavour;
        let one = self.tx.sb.packets_out() == 1;
        let wdt = self.cfg.tlp_wdt;
        let pto = match (flavour, srtt) {
            (TlpFlavour::Rfc8985 | TlpFlavour::Linux6, None) => Duration::from_secs(1),
            (TlpFlavour::Linux6, Some(s)) => {
                2 * s
                    + if one {
                        self.cfg.rto_min
                    } else {
                        TCP_TIMEOUT_MIN
                    }
            }
            (_, None) => return, // Linux and the draft need an RTT sample
            (TlpFlavour::Rfc8985, Some(s)) => 2 * s + if one { wdt } else { Duration::ZERO },
            (_, Some(s)) => {
                let mut p = 2 * s;
                if one {
                    p = p.max(s + s / 2 + wdt);
                }
                p
            }
        };
        let pto = if matches!(flavour, TlpFlavour::Rfc8985 | TlpFlavour::Linux6) {
            pto
        } else {
            pto.max(PTO_MIN)
        };
        let mut at = now + pto;
        // Never later than the RTO would fire.
        if let Some(rto) = self.timers.asked(TimerKind::Retransmission)
            && at > rto
        {
            at = rto.max(now);
        }
        self.timers.arm(TimerKind::LossProbe, now, at);
        if let Some(rto) = self.timers.get(TimerKind::Retransmission) {
            self.timers.cap(TimerKind::LossProbe, rto);
        }
    }

    /// Probes go out in Open; Linux 4.11+ also in CWR.
    fn probe_state_allows(&self) -> bool {
        self.tx.ca.state() == CaState::Open
            || (self.tx.ca.state() == CaState::Cwr && self.cfg.tlp_flavour == TlpFlavour::Linux6)
    }

    /// Algorithm 1 `handle_pto`.
    pub(crate) fn on_pto(&mut self, now: Instant) {
        self.trace_timer(now, TimerKind::LossProbe);
        if !self.probe_state_allows() || self.tx.sb.is_empty() {
            return;
        }
        self.counters.loss_probes += 1;
        self.tx.tlp.consecutive += 1;
        self.tx.tlp.pending = true;
        // The RTO restarts from the probe (Linux `tcp_send_loss_probe` rearm).
        self.timers.arm(
            TimerKind::Retransmission,
            now,
            now + self.tx.rtt.rto_backed_off(),
        );
    }

    /// The probe segment: new data if the application and the peer's window allow
    /// one (a FIN that cwnd held back is new data too: Linux's probe sends the
    /// write queue's head skb), otherwise the last segment again.
    pub(crate) fn loss_probe_transmit(&mut self, now: Instant) -> Option<Segment> {
        self.tx.tlp.pending = false;
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let room = self.window_room();
        if unsent == 0 && self.snd.app_closed && !self.snd.fin_sent {
            let start = self.snd.nxt;
            self.fin_goes(now);
            let s = self.data_or_ack(now, Flags::FIN, start);
            self.record_new_data(now, start, 0, true, (false, true));
            self.counters.loss_probes_new += 1;
            self.schedule_pto(now);
            return Some(s);
        }
        if unsent > 0 && room > 0 {
            let len = unsent.min(self.opts.smss as u64).min(room);
            let start = self.snd.nxt;
            let last = start + len == self.snd.buf.end();
            let mut s =
                self.data_or_ack(now, if last { Flags::PSH } else { Flags::empty() }, start);
            s.payload = self.snd.buf.slice(start, len as usize);
            self.record_new_data(now, start, len, false, (last, true));
            self.counters.loss_probes_new += 1;
            self.schedule_pto(now);
            return Some(s);
        }
        let i = self.tx.sb.packets_out().checked_sub(1)? as usize;
        let (s, TxSeg { start, end, .. }) = self.resent(now, i)?;
        // Not counted in pipe (Linux sends it with `__tcp_retransmit_skb`), but no RTT
        // sample may come from it.
        self.tx.sb.mark_probed(i, now);
        self.counters.loss_probes_retrans += 1;
        if self.cfg.tlp_flavour.probe_counts_as_retransmission() {
            self.counters.retrans_segs += 1;
        } else {
            self.counters.probe_retrans_uncounted += 1;
        }
        self.counters.bytes_retrans += s.payload.len() as u64;
        let ep = self.tx.tlp.episode.get_or_insert_with(TlpEpisode::default);
        ep.high_seq = self.snd.nxt;
        ep.probes += 1;
        self.trace(
            now,
            Event::Retransmit {
                seq: start,
                len: (end - start) as u32,
                kind: RetransKind::Probe,
            },
        );
        self.schedule_pto(now);
        Some(s)
    }

    /// Judges a loss-probe episode on every ACK (the paper's "Detecting recovered
    /// losses"; Linux `tcp_process_tlp_ack`; RFC 8985 §7.4). `pure_dupack`: the ACK
    /// neither advanced snd.una nor SACKed anything new.
    pub(crate) fn tlp_on_ack(&mut self, ack: u64, pure_dupack: bool, dsack: bool) {
        let Some(mut ep) = self.tx.tlp.episode else {
            return;
        };
        let detection = self.cfg.tlp_detection;
        if dsack && detection == TlpDetection::Dsack {
            // The receiver already had the probed data: the probe was unnecessary.
            self.counters.loss_probes_unnecessary += ep.probes as u64;
            self.tx.tlp.episode = None;
            return;
        }
        if pure_dupack && ack == ep.high_seq {
            if detection == TlpDetection::Dsack {
                // Linux's "TLP dupack": the probe was not needed.
                self.counters.loss_probes_unnecessary += ep.probes as u64;
                self.tx.tlp.episode = None;
                return;
            }
            ep.dupacks += 1;
        }
        if ack > ep.high_seq {
            self.tx.tlp.episode = None;
            let repaired = match detection {
                TlpDetection::Basic => ep.dupacks < ep.probes,
                TlpDetection::Dsack => true,
            };
            if repaired {
                // A probe plugged the hole and masked the loss: reduce cwnd once, as
                // fast recovery would have (enter CWR, leave it at ssthresh).
                self.counters.loss_probe_recovery += 1;
                self.counters.loss_probes_repaired += ep.probes as u64;
                self.reduce_at_once();
            } else {
                self.counters.loss_probes_unnecessary += ep.probes as u64;
            }
            return;
        }
        self.tx.tlp.episode = Some(ep);
    }
}
