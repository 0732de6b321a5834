//! Why each retransmission was sent: the cause a transmission's circumstances point to
//! (the ACK that triggered it, or the timer that fired), revised as the flow goes on,
//! and settled at its end by what the host is known to do.

use super::{ACK_CLOCK_NS, BURST_GAP_NS, HostHabits, Sender, State, TimerRetx, log_dist};
use crate::cause::Cause;

impl Sender {
    pub(super) fn classify(
        &mut self,
        t: u64,
        start: u64,
        end: u64,
        on_ack: Option<bool>,
        habits: &mut HostHabits,
    ) -> (Cause, bool) {
        if let Some(c) = self.resent_acknowledged(t, end, on_ack) {
            return (c, false);
        }
        // Sent right after an ACK that said something new: that ACK triggered it.
        // Far from the sender, its timestamps tell better where they can.
        let ack_clocked = on_ack.unwrap_or_else(|| {
            self.last_trigger_ns
                .is_some_and(|a| t.saturating_sub(a) <= ACK_CLOCK_NS)
        });
        let head = start <= self.una;
        let tail = end >= self.nxt;
        let rto = self.predicted_rto();
        // The retransmission timer runs from the last ACK that advanced, or from the
        // first transmission into an empty window, a probe, or the last timeout.
        let since = t.saturating_sub(self.rto_ref_ns);
        let record = self.retrans.len() as u32;
        let timer = |ambiguous| TimerRetx {
            gap_ns: since,
            record,
            ambiguous,
        };
        match self.state {
            State::Loss { high } if self.far && self.second_too_soon(t) => {
                self.undo_timeout(high);
                (Cause::Fast, false)
            }
            State::Loss { .. } if !ack_clocked && head => {
                self.timeout_again(since);
                (Cause::Timeout, false)
            }
            State::Loss { .. } => (Cause::SlowStart, false),
            // Without SACK no timer but the RTO runs in recovery.
            State::Recovery { .. }
                if !ack_clocked && head && (!self.sack_ok || since >= self.timeout_floor()) =>
            {
                self.last_timer = Some(timer(false));
                (Cause::Timeout, false)
            }
            State::Recovery { .. } => (Cause::Fast, false),
            State::Open if ack_clocked => (self.ack_clocked_cause(habits), false),
            State::Open => {
                let evidence = self.dup_evidence();
                let several = self.segs.len() > 1;
                if evidence > 0 && since < self.timeout_floor() {
                    // The early-retransmit or RACK reorder timer; with three or more
                    // duplicates outstanding it is a fast retransmit all the same.
                    let c = if evidence >= 3 {
                        Cause::Fast
                    } else {
                        Cause::Early
                    };
                    return (c, false);
                }
                let probe_possible = tail && !self.probe_out && self.sack_ok && evidence == 0;
                if probe_possible && !head {
                    habits.probes = true;
                    return (Cause::Probe, false);
                }
                if probe_possible {
                    // Head and tail at once (one segment out): a probe or a timeout,
                    // the same segment at nearly the same time. What the host does
                    // elsewhere decides, at the end of the capture; until then the
                    // predicted timers guess.
                    let pto = self
                        .predicted_ptos()
                        .into_iter()
                        .map(|p| log_dist(since, p))
                        .fold(f64::INFINITY, f64::min);
                    // Timing is a guess only for a host known to probe: a probe
                    // needs TLP (Linux 3.10+), a timeout any TCP.
                    let probe = habits.probes && pto < log_dist(since, rto);
                    self.last_timer = Some(timer(true));
                    return (if probe { Cause::Probe } else { Cause::Timeout }, true);
                }
                if let Some(prev) = self.last_timer
                    && prev.ambiguous
                    && self.probe_out
                    && head
                    && since * 2 >= prev.gap_ns * 3
                {
                    // The timer doubled after a lone segment's "probe": it was a
                    // timeout, and this is its backed-off successor.
                    self.revise(prev.record, Cause::Timeout, true);
                    self.last_timer = Some(timer(false));
                    return (Cause::Timeout, false);
                }
                if head
                    && several
                    && self.sack_ok
                    && !self.probe_out
                    && evidence == 0
                    && self.rtt.known()
                    && self.predicted_ptos()[0] < rto
                {
                    habits.no_probes = true;
                }
                self.last_timer = Some(timer(false));
                (Cause::Timeout, false)
            }
        }
    }

    /// A resend of what the receiver had already acknowledged, by where the capture
    /// was taken. Seen at the receiver, with no timestamps to show it sent on an
    /// earlier ACK: the ACKs since never reached the sender, and its timer resent
    /// it (RFC 6298 §5.4). Near the sender, just after an ACK that ended a
    /// recovery: it answers an earlier ACK of the same arrival (the sender reads
    /// them one by one; the capture shows them all before its answer to the
    /// first), so it is a later retransmission of that recovery.
    fn resent_acknowledged(&self, t: u64, end: u64, on_ack: Option<bool>) -> Option<Cause> {
        if end > self.una {
            return None;
        }
        if self.far {
            return on_ack.is_none().then_some(Cause::Timeout);
        }
        match self.recovery_ended {
            Some((ended, later))
                if self.state == State::Open && t.saturating_sub(ended) <= ACK_CLOCK_NS =>
            {
                Some(later)
            }
            _ => None,
        }
    }

    /// The first retransmission of a recovery, right after an ACK: fast with three
    /// duplicates behind the hole (RFC 5681 §3.2, RFC 6675 §5), or on FACK's count
    /// (Linux before 4.15) if the host uses FACK as far as the capture shows so
    /// far (settled at its end); early with fewer (RFC 5827, RFC 8985 §6.2).
    pub(super) fn ack_clocked_cause(&mut self, habits: &mut HostHabits) -> Cause {
        let (plain, fack) = self.dup_evidence_fack();
        if plain >= 3 {
            Cause::Fast
        } else if fack >= 3 && !habits.no_fack {
            habits.fack_recoveries += 1;
            self.fack_entry = true;
            // While the evidence is mixed the guess is early, so that the
            // recovery's later retransmissions are not all called fast; the
            // report settles it by the whole capture.
            if habits.fack_recoveries > 2 * habits.fack_refusals {
                Cause::Fast
            } else {
                Cause::Early
            }
        } else {
            Cause::Early
        }
    }

    /// Seen at the receiver, a timeout's first retransmission followed by another
    /// sooner than half the minimum RTT: sent before any ACK of the first could have
    /// reached the sender, so its window held more than the one segment a timeout
    /// leaves (RFC 5681 §3.1). Far from the sender, queueing delays what triggered a
    /// retransmission beyond any fixed window, but not this.
    fn second_too_soon(&self, t: u64) -> bool {
        let (Some(last), Some(e), Some(min)) = (
            self.retrans.last(),
            self.episodes.last(),
            self.rtt.min_checked(),
        ) else {
            return false;
        };
        e.cause == Cause::Timeout
            && e.retransmissions == 1
            && e.start_ns == last.t_ns
            && t.saturating_sub(last.t_ns) < min / 2
    }

    /// The episode called a timeout was a recovery on the ACKs before it: fast with
    /// three or more duplicates (or SACKed segments) behind the hole, else early.
    fn undo_timeout(&mut self, high: u64) {
        let record = self.retrans.len() as u32 - 1;
        let to = if self.retrans[record as usize].dups >= 3 {
            Cause::Fast
        } else {
            Cause::Early
        };
        self.revise(record, to, true);
        if self.rto_sampled {
            self.rto_over_rtt.pop();
        }
        self.state = State::Recovery { high };
        self.last_timer = None;
    }

    /// Changes the cause of retransmission `record` (and of the episode it began);
    /// `settled`: for good, else only the best guess so far.
    pub(super) fn revise(&mut self, record: u32, to: Cause, settled: bool) {
        let r = &mut self.retrans[record as usize];
        if settled {
            r.ambiguous = false;
        }
        if r.cause == to {
            return;
        }
        self.counts.revise(r.cause, to);
        r.cause = to;
        let t = r.t_ns;
        if let Some(e) = self.episodes.iter_mut().rev().find(|e| e.start_ns == t) {
            e.cause = to;
        }
    }

    /// Another timeout of the head with nothing acknowledged since the last: after a
    /// timeout the RTO has doubled (RFC 6298 §5.5); if it has not, the previous
    /// "timeout" of a lone segment was a probe.
    pub(super) fn timeout_again(&mut self, gap: u64) {
        let record = self.retrans.len() as u32;
        if let Some(prev) = self.last_timer
            && prev.ambiguous
        {
            if gap * 2 < prev.gap_ns * 3 {
                self.revise(prev.record, Cause::Probe, true);
                // This one is then the episode's first timeout.
                if self.rtt.known() && self.rtt.srtt > 0 {
                    self.rto_over_rtt.push(gap as f64 / self.rtt.srtt as f64);
                }
            } else {
                self.revise(prev.record, Cause::Timeout, true);
            }
        }
        self.last_timer = Some(TimerRetx {
            gap_ns: gap,
            record,
            ambiguous: false,
        });
    }

    /// New data after a lone segment's probe-or-timeout was acknowledged: the size of
    /// the first flight tells which it was.
    pub(super) fn judge_after(&mut self, t: u64) {
        let Some(mut c) = self.after else {
            return;
        };
        if !c.acked {
            return;
        }
        let verdict = if c.flight == 0 || t.saturating_sub(c.last_ns) <= BURST_GAP_NS {
            c.flight += 1;
            c.last_ns = t;
            if c.flight >= 3 {
                Some(Cause::Probe)
            } else {
                self.after = Some(c);
                return;
            }
        } else if self
            .last_trigger_ns
            .is_some_and(|a| t.saturating_sub(a) <= ACK_CLOCK_NS)
            && self
                .last_peer_data_ns
                .is_none_or(|d| t.saturating_sub(d) > ACK_CLOCK_NS)
        {
            // The flight ended at one or two segments and an ACK of it, not a new
            // request, released more: cwnd was that small.
            Some(Cause::Timeout)
        } else {
            // A new request started the next flight: nothing learnt.
            None
        };
        self.after = None;
        // A retransmission shown unnecessary had its reduction undone: its flight
        // says nothing. Otherwise the flight is the best guess until the host's
        // habits are known.
        let r = self.retrans[c.record as usize];
        if let Some(v) = verdict
            && r.ambiguous
            && r.spurious.is_none()
        {
            self.revise(c.record, v, false);
        }
    }

    /// Settles a lone segment's probe-or-timeout by what the host is known to do.
    pub fn settle(&mut self, habits: HostHabits) {
        for i in 0..self.retrans.len() {
            // Still open to the host's habits seen in later flows (the report's
            // settling, at the capture's end).
            if self.retrans[i].fack_only && !habits.uses_fack() {
                self.revise(i as u32, Cause::Early, false);
            }
        }
        let Some(probes) = habits.probes() else {
            return;
        };
        let to = if probes { Cause::Probe } else { Cause::Timeout };
        for i in 0..self.retrans.len() {
            if self.retrans[i].ambiguous {
                self.revise(i as u32, to, true);
            }
        }
    }
}
