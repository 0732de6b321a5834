//! TCP sessions: integrated congestion control and loss recovery across the
//! connections between a pair of hosts (`fast-start-and-sessions.txt` §6, with the
//! implementation of §7.3).
//!
//! A session control block ([`Scb`]) holds one window (`session_cwnd`), ssthresh,
//! srtt and rttvar, the ordered list of every member's transmissions, and a weighted
//! round-robin scheduler. A connection joins when it reaches ESTABLISHED (§7.3
//! `session_addconn`: "only then are the identities of the two end hosts known") and
//! leaves when it closes; it keeps its own sequence space, in-order delivery and
//! receive side (§6: "in-order data delivery, which is implemented (independently) by
//! each TCP connection"). The session:
//!
//! - **limits the outstanding data of all members to `session_cwnd`** (§6.1), grown
//!   by slow start and then linearly, halved once per window of data on a detected
//!   loss (RFC 5681 §3.2's `FlightSize / 2`), and reset to 1 segment by its
//!   retransmission timer;
//! - **detects losses from duplicate ACKs and later ACKs** — ACKs of segments of
//!   other members sent after the one missing ([`transmissions`]); at 3 (§7.3,
//!   "default 3") the segment's member retransmits it;
//! - **schedules members per packet by weighted round robin** ([`scheduler`],
//!   §6.2), retransmissions first (RFC 6675 NextSeg rule 1); a FIN goes out on its own
//!   connection's turn (§7.3: "an exception is made if the original connection wanted
//!   to send out a segment with a flag such as FIN or RST set" — RSTs and pure ACKs
//!   need no turn at all);
//! - **restarts after an idle period with fast start** when its members run fast
//!   start (§6.2: "We use fast start to alleviate this problem by using a larger
//!   initial window size when past information is available"; §7.3: the SCB "provides
//!   a convenient location to cache the information needed for fast start"): the
//!   window of §3.4.2, with the segments beyond a normal restart marked low priority
//!   (§3.3), and a loss among them ends the fast start without penalty (§3.4.4).
//!   The paper left this integration as future work (§7, §10); here the session's
//!   fast start is not paced (§3.4.3) and has no reset timer of its own: its
//!   window goes out as the members have data, and the session's retransmission
//!   timer backs it up.
//!   Without fast start an idle session restarts as RFC 2861 and Linux's
//!   `tcp_cwnd_restart` do. The host keeps the SCB after its last member leaves.
//!
//! # Sans-IO
//!
//! The SCB owns no connection: the host keeps its connections where it likes and
//! lends them through [`Members`]. After a member handles a segment, call
//! [`Scb::on_ack`]; to send, call [`Scb::poll_transmit`] until `None` (it grants one
//! member one segment at a time); arm [`Scb::poll_timeout`] and call
//! [`Scb::handle_timeout`].
//!
//! # Relation to RFC 9040 and RFC 3124
//!
//! RFC 9040 (TCP control block interdependence, the successor of RFC 2140 — the
//! paper's reference \[25\]) shares TCB state in two ways. *Temporal sharing*
//! initialises a new connection from the state a closed one left (RTT, RTTVAR,
//! ssthresh; §4.3); deployed stacks do it (Linux `tcp_metrics`), and gentle offers
//! it as the `temporal_sharing` switch, which does not need a session. *Ensemble
//! sharing* (§4.4, §5) initialises a new connection from concurrent ones and leaves
//! it to run alone afterwards; RFC 9040 §8 notes that sharing the congestion window
//! itself over the connections' lifetime "is more complex" and points to the
//! Congestion Manager. gentle's session shares cwnd, ssthresh, srtt and rttvar for
//! the members' whole lives, as the paper argues (§2: "a TCP session manages the
//! progress of its constituent connections throughout their duration rather than
//! just at the time of initialization"), and it also integrates loss recovery, which
//! neither RFC does.
//!
//! The Congestion Manager (RFC 3124) is the closest standard: one congestion
//! controller per destination host, a scheduler apportioning its rate among flows
//! (round robin, with weights as an option), and an API. It is receiver-feedback
//! agnostic and leaves loss *recovery* to each flow: it has no later-ACK detection.
//! It was not deployed. Neither RFC keeps the session's single list of transmissions
//! across connections.

pub mod scheduler;
pub mod transmissions;

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::Congestion;
use crate::config::{CcAlgorithm, Config};
use crate::connection::{Connection, Fallback, decayed_cwnd, fast_start_cwnd};
use crate::counters::Counters;
use crate::rtt::RttEstimator;
use crate::scoreboard::RenoDupacks;
use crate::time::Instant;
use crate::wire::Segment;
use scheduler::Wrr;
use transmissions::{Transmissions, Tx};

/// Duplicate plus later ACKs that deem a segment lost (§7.3: "a threshold
/// (default 3)", RFC 5681's duplicate-ACK threshold).
pub const LOSS_THRESHOLD: u32 = 3;

/// Most segments of slack for which the session still counts as window-limited and
/// grows its window (Linux `tcp_is_cwnd_limited`, as connections do).
const CWND_LIMITED_SLACK: u32 = 3;

/// How a host lends its connections to a session: member `id` is a connection.
pub trait Members {
    /// The connection that joined as `id`.
    fn conn(&mut self, id: u32) -> &mut Connection;
}

impl Members for [Connection] {
    fn conn(&mut self, id: u32) -> &mut Connection {
        &mut self[id as usize]
    }
}

impl Members for Vec<Connection> {
    fn conn(&mut self, id: u32) -> &mut Connection {
        &mut self[id as usize]
    }
}

/// The session's fast start (see the module documentation): its window and its
/// fallback are a connection's ([`fast_start_cwnd`], [`Fallback`]).
#[derive(Clone, Copy, Debug, Default)]
struct SessionFastStart {
    /// Members run fast start.
    on: bool,
    /// New segments still to mark in the current phase.
    marks_left: u32,
    /// What a failed phase goes back to.
    fallback: Fallback,
    /// A phase is running.
    active: bool,
}

/// A session control block (§6.1, §7.3).
#[derive(Debug)]
pub struct Scb {
    /// The session's window, grown by Reno (RFC 5681 §3.1) as a connection's is.
    cong: Congestion,
    initial_window: u32,
    /// Timeouts in a row before the members give up (Linux `tcp_retries2`).
    max_retries: u32,
    rtt: RttEstimator,
    tx: Transmissions,
    wrr: Wrr,
    /// Members with segments deemed lost, in the order they were found.
    retransmit_queue: VecDeque<u32>,
    /// In loss recovery until every transmission before this index is gone.
    recovery_point: Option<u64>,
    rto_at: Option<Instant>,
    /// A segment the session sends beyond its window: the first retransmission
    /// after losses are found goes out at once, as fast retransmit's does.
    force: u32,
    last_send: Option<Instant>,
    fast_start: SessionFastStart,
    /// Per member: `(id, segments sent, duplicate ACKs standing for segments
    /// beyond its first that left the network)` — without SACK, as RFC 5681 §3.2
    /// counts them and Linux's `tcp_add_reno_sack` does.
    shares: Vec<(u32, u64, RenoDupacks)>,
    /// The sum of the members' standing duplicate ACKs: not outstanding.
    reno_out: u32,
    /// A member whose grant is still open (it sent a pure ACK first).
    pending: Option<u32>,
    counters: Counters,
    lost: Vec<Tx>,
    scratch: Vec<u32>,
}

impl Scb {
    /// A session for connections configured as `cfg` (its initial window, RTO
    /// bounds and fast start switch), created at `now`.
    pub fn new(cfg: &Config) -> Self {
        Scb {
            cong: Congestion::new(CcAlgorithm::Reno, false, cfg.initial_window),
            initial_window: cfg.initial_window.max(1),
            max_retries: cfg.max_retries,
            rtt: RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max),
            tx: Transmissions::default(),
            wrr: Wrr::default(),
            retransmit_queue: VecDeque::new(),
            recovery_point: None,
            rto_at: None,
            force: 0,
            last_send: None,
            fast_start: SessionFastStart {
                on: cfg.fast_start,
                ..SessionFastStart::default()
            },
            shares: Vec::new(),
            reno_out: 0,
            pending: None,
            counters: Counters::default(),
            lost: Vec::new(),
            scratch: Vec::new(),
        }
    }

    // ------------------------------------------------------------ getters

    /// `session_cwnd`, segments.
    pub fn cwnd(&self) -> u32 {
        self.cong.cwnd()
    }
    /// The session's slow-start threshold, segments.
    pub fn ssthresh(&self) -> u32 {
        self.cong.ssthresh()
    }
    /// Segments outstanding over all members.
    pub fn outstanding(&self) -> u32 {
        self.tx.len() - self.reno_out
    }
    /// The session's smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// The session's RTO now, back-off included.
    pub fn rto(&self) -> Duration {
        self.rtt.rto_backed_off()
    }
    /// Members, in join order.
    pub fn members(&self) -> impl Iterator<Item = u32> + '_ {
        self.wrr.ids()
    }
    /// Number of members.
    pub fn len(&self) -> usize {
        self.wrr.len()
    }
    /// No members.
    pub fn is_empty(&self) -> bool {
        self.wrr.is_empty()
    }
    /// A member's scheduler weight.
    pub fn weight(&self, id: u32) -> Option<u32> {
        self.wrr.weight(id)
    }
    /// Segments member `id` sent while in the session (its share).
    pub fn sent_by(&self, id: u32) -> u64 {
        self.shares.iter().find(|s| s.0 == id).map_or(0, |s| s.1)
    }
    /// The session's counters (joins, losses found, later-ACK recoveries,
    /// reductions, timeouts); the members count their own segments.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// The session is reducing its window for a loss (until everything sent before
    /// the reduction has left the network).
    pub fn in_recovery(&self) -> bool {
        match (self.recovery_point, self.tx.head_index()) {
            (Some(p), Some(h)) => h < p,
            _ => false,
        }
    }
    /// The session's ordered transmissions: `(member, start offset, duplicate and
    /// later ACKs)`, oldest first.
    pub fn transmissions(&self) -> impl Iterator<Item = (u32, u64, u32)> + '_ {
        self.tx.iter().map(|t| (t.member, t.start, t.evidence()))
    }

    // ---------------------------------------------------------- membership

    /// Connection `conn`, known to the host as `id`, joins (§7.3 `session_addconn`);
    /// its weight is its `session_weight` switch.
    pub fn join(&mut self, id: u32, conn: &mut Connection) {
        conn.session_join();
        self.wrr.add(id, conn.config().session_weight);
        self.shares.retain(|s| s.0 != id);
        self.shares.push((id, 0, RenoDupacks::default()));
        self.counters.session_joins += 1;
    }

    /// Member `id` leaves (it closed); what it had outstanding no longer counts.
    pub fn leave(&mut self, id: u32, conn: &mut Connection) {
        conn.session_leave();
        self.wrr.remove(id);
        self.tx.remove_member(id);
        self.retransmit_queue.retain(|&m| m != id);
        if self.pending == Some(id) {
            self.pending = None;
        }
        self.reno_reset(id);
        self.shares.retain(|s| s.0 != id);
        if self.tx.is_empty() {
            self.rto_at = None;
        }
    }

    /// Changes member `id`'s scheduler weight, at any time (§6.2: "It is possible to
    /// vary the relative weights dynamically"). Returns false if `id` is no member.
    pub fn set_weight(&mut self, id: u32, weight: u32) -> bool {
        self.wrr.set_weight(id, weight)
    }

    // ------------------------------------------------------------------ input

    /// After member `id` handled a segment: takes what its ACK said, finds what it
    /// delivered, counts duplicate and later ACKs, grows or reduces the window, and
    /// has members retransmit what is deemed lost (§7.3 `session_input`).
    pub fn on_ack(&mut self, id: u32, now: Instant, members: &mut (impl Members + ?Sized)) {
        let conn = members.conn(id);
        let Some(report) = conn.take_ack_report() else {
            return;
        };
        let prior_out = self.outstanding();
        let d = self
            .tx
            .take_delivered(id, report.tsecr, |s, e| conn.session_delivered(s, e));
        let sack = conn.sack_enabled();
        match d.proof {
            Some(p) => self.tx.count_later(p),
            None if report.dupack => {
                self.tx.count_dup(id);
                if !sack {
                    self.reno_dupack(id);
                }
            }
            None => {}
        }
        if d.count > 0 && !sack {
            self.reno_acked(id, d.count);
        }
        if d.retrans
            && let Some(point) = self.recovery_point
        {
            // NewReno's partial ACK: the next hole goes at once.
            self.tx.partial_ack(id, report.una, point, LOSS_THRESHOLD);
        }
        if let Some(sent) = d.rtt_from {
            let (una, nxt) = (
                self.tx.head_index().unwrap_or(u64::MAX),
                self.tx.next_index(),
            );
            self.rtt.on_sample(now - sent, una, nxt);
        }
        if d.count > 0 {
            self.rtt.clear_backoff();
            if self.fast_start.active && !self.tx.iter().any(|t| t.fast_start) {
                self.fast_start.active = false; // every fast-start segment went through
            }
        }
        if self.recovery_point.is_some() && !self.in_recovery() {
            self.recovery_point = None;
        }
        if report.ece && self.recovery_point.is_none() {
            // RFC 3168 §6.1.2: once per window, as for a loss.
            self.counters.ecn_reductions += 1;
            self.reduce(prior_out);
            conn.session_cwr();
        } else if d.count > 0
            && self.recovery_point.is_none()
            && prior_out + CWND_LIMITED_SLACK >= self.cong.cwnd()
        {
            // RFC 5681 §3.1 (Linux `tcp_reno_cong_avoid`): slow start below
            // ssthresh, then one segment per window of data acknowledged.
            self.cong.cong_avoid(d.count, now, 0);
        }
        self.detect_losses(prior_out, members);
        if d.count > 0 || self.tx.is_empty() {
            self.rto_at = (!self.tx.is_empty()).then(|| now + self.rtt.rto_backed_off());
        }
    }

    /// A duplicate ACK of member `id` without SACK: one more of its segments beyond
    /// the first left the network (no more than it has beyond the first).
    fn reno_dupack(&mut self, id: u32) {
        let entries = self.tx.count_of(id);
        if let Some(s) = self.shares.iter_mut().find(|s| s.0 == id)
            && s.2.add(entries)
        {
            self.reno_out += 1;
        }
    }

    /// Member `id`'s cumulative ACK delivered `n` entries: as many standing
    /// duplicates are spent (Linux `tcp_remove_reno_sacks`).
    fn reno_acked(&mut self, id: u32, n: u32) {
        if let Some(s) = self.shares.iter_mut().find(|s| s.0 == id) {
            self.reno_out -= s.2.spend(n);
        }
        self.reno_clamp(id);
    }

    /// Keeps member `id`'s standing duplicates below its entries.
    fn reno_clamp(&mut self, id: u32) {
        let entries = self.tx.count_of(id);
        if let Some(s) = self.shares.iter_mut().find(|s| s.0 == id)
            && s.2.get() > 0
            && s.2.get() + 1 > entries
        {
            self.reno_out -= s.2.spend(s.2.get() + 1 - entries.max(1));
        }
    }

    /// Forgets member `id`'s standing duplicates.
    fn reno_reset(&mut self, id: u32) {
        if let Some(s) = self.shares.iter_mut().find(|s| s.0 == id) {
            self.reno_out -= s.2.take();
        }
    }

    /// Moves the segments with enough duplicate and later ACKs to their members'
    /// retransmission queues, and reduces the window once per window of data.
    fn detect_losses(&mut self, flight: u32, members: &mut (impl Members + ?Sized)) {
        // Without SACK only a member's first outstanding segment can be judged: the
        // receiver may hold the others out of order (see [`transmissions`]).
        self.tx.take_lost(LOSS_THRESHOLD, &mut self.lost, |t| {
            let c = members.conn(t.member);
            c.sack_enabled() || t.start <= c.snd.una
        });
        if self.lost.is_empty() {
            return;
        }
        let mut reduce = false;
        let mut failed_fast_start = false;
        for t in self.lost.drain(..) {
            if !members.conn(t.member).session_mark_lost(t.start) {
                continue; // delivered meanwhile
            }
            self.counters.session_loss_detected += 1;
            if t.later > 0 {
                self.counters.session_later_ack_recoveries += 1;
            }
            if !self.retransmit_queue.contains(&t.member) {
                self.retransmit_queue.push_back(t.member);
            }
            // The first retransmission goes at once, as fast retransmit's does; the
            // rest as the (reduced) window allows.
            self.force = 1;
            failed_fast_start |= t.fast_start && self.fast_start.active;
            reduce |= self.recovery_point.is_none_or(|p| t.index >= p);
        }
        if failed_fast_start {
            // §3.4.4 "Slow start without penalty": back to where a normal restart
            // would have been, with the ssthresh from before the fast start.
            self.fast_start.active = false;
            self.fast_start.marks_left = 0;
            self.counters.fast_start_resets += 1;
            let f = self.fast_start.fallback;
            self.cong.set_window(f.restart_cwnd, f.saved_ssthresh);
            self.recovery_point = Some(self.tx.next_index());
        } else if reduce {
            self.reduce(flight);
        }
    }

    /// Halves the window (RFC 5681 §3.2 (4): ssthresh = max(FlightSize / 2, 2)).
    fn reduce(&mut self, flight: u32) {
        self.counters.session_reductions += 1;
        let ssthresh = (flight.min(self.cong.cwnd()) / 2).max(2);
        self.cong.set_window(ssthresh, ssthresh);
        self.recovery_point = Some(self.tx.next_index());
    }

    // ----------------------------------------------------------------- output

    /// The next segment to send: `(member, segment)`. Grants one member one segment
    /// while the window allows — a member with a retransmission due first, then the
    /// round-robin's choice among those with data — and records it. Call until
    /// `None` after any input, timeout or application write.
    pub fn poll_transmit(
        &mut self,
        now: Instant,
        members: &mut (impl Members + ?Sized),
    ) -> Option<(u32, Segment)> {
        if let Some(id) = self.pending.take()
            && let Some(out) = self.transmit(id, now, members)
        {
            return Some(out);
        }
        if self.outstanding() >= self.cong.cwnd() && self.force == 0 {
            return None;
        }
        self.scratch.clear();
        loop {
            let id = self.next_member(members)?;
            if self.tx.is_empty() {
                self.restart_after_idle(now); // something is about to go
            }
            if let Some(out) = self.transmit(id, now, members) {
                return Some(out);
            }
            self.scratch.push(id); // nothing after all: not again this call
        }
    }

    /// The member to grant next: the oldest retransmission first, then round robin.
    fn next_member(&mut self, members: &mut (impl Members + ?Sized)) -> Option<u32> {
        while let Some(&id) = self.retransmit_queue.front() {
            if !self.scratch.contains(&id) && members.conn(id).session_retransmission_due() {
                return Some(id);
            }
            self.retransmit_queue.pop_front();
        }
        let tried = &self.scratch;
        self.wrr
            .pick(|id| !tried.contains(&id) && members.conn(id).session_wants_to_send())
    }

    /// Grants `id` one segment and records what it sent.
    fn transmit(
        &mut self,
        id: u32,
        now: Instant,
        members: &mut (impl Members + ?Sized),
    ) -> Option<(u32, Segment)> {
        let conn = members.conn(id);
        let nxt = conn.snd.nxt;
        let mark = self.fast_start.marks_left > 0;
        conn.session_grant(mark);
        let Some(seg) = conn.poll_transmit(now) else {
            conn.session_revoke();
            return None;
        };
        if seg.seq_len() == 0 {
            if conn.session_may_send() {
                self.pending = Some(id); // a pure ACK came first; the grant stands
            }
            return Some((id, seg));
        }
        let start = crate::connection::unwrap_near(seg.seq.wrapping_sub(conn.snd.iss), nxt);
        let end = start + seg.seq_len() as u64;
        let retrans = start < nxt;
        let tsval = seg.options.timestamps.map(|t| t.val);
        let marked = seg.flags.contains(crate::wire::Flags::FAST_START);
        if marked {
            self.fast_start.marks_left -= 1;
        }
        self.tx.push(id, start, end, tsval, now, retrans, marked);
        if self.outstanding() > self.cong.cwnd() {
            self.force = self.force.saturating_sub(1);
        }
        if let Some(s) = self.shares.iter_mut().find(|s| s.0 == id) {
            s.1 += 1;
        }
        if retrans {
            // A retransmission replaced its entry: duplicates stand for no more
            // than the member's other entries.
            self.reno_clamp(id);
        }
        self.last_send = Some(now);
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto_backed_off());
        }
        Some((id, seg))
    }

    /// The first send after the session was idle longer than its RTO: fast start
    /// when its members run it, otherwise RFC 2861's decay (Linux
    /// `tcp_cwnd_restart`): halve per RTO idle, not below the initial window.
    fn restart_after_idle(&mut self, now: Instant) {
        let Some(last) = self.last_send else {
            return;
        };
        let rto = self.rtt.rto();
        let idle = now - last;
        if idle <= rto {
            return;
        }
        self.last_send = Some(now); // once per idle period
        let w = self.cong.window();
        let restart = self.initial_window.min(w.cwnd);
        if self.fast_start.on && self.rtt.srtt().is_some() {
            // §3.4.2, as a connection's fast start; no less than the restart.
            let cwnd = fast_start_cwnd(w.cwnd, w.ssthresh).max(restart);
            self.fast_start = SessionFastStart {
                on: true,
                marks_left: cwnd - restart,
                fallback: Fallback {
                    restart_cwnd: restart,
                    saved_ssthresh: w.ssthresh,
                },
                active: cwnd > restart,
            };
            if cwnd > restart {
                self.counters.fast_start += 1;
            }
            self.cong.set_window(cwnd, w.ssthresh);
        } else {
            // ssthresh as RFC 2861 §3 has it (3/4 of cwnd), where a connection
            // takes Linux's `tcp_current_ssthresh` (cwnd/2 + cwnd/4).
            let ssthresh = w.ssthresh.max(w.cwnd * 3 / 4);
            self.cong
                .set_window(decayed_cwnd(w.cwnd, restart, idle, rto), ssthresh);
        }
    }

    // ----------------------------------------------------------------- timers

    /// The session's retransmission deadline, while anything is outstanding.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.rto_at
    }

    /// The retransmission timer (§7.3: "If such data-driven loss detection fails,
    /// the session's retransmission timer will fire eventually, causing the session
    /// to initiate slow start with `cwnd` set to 1 segment"): every member's
    /// outstanding segments are lost and go again, oldest member first. After
    /// `max_retries` timeouts with nothing delivered, those members give up.
    pub fn handle_timeout(&mut self, now: Instant, members: &mut (impl Members + ?Sized)) {
        if self.rto_at.is_none_or(|t| t > now) {
            return;
        }
        self.scratch.clear();
        self.tx.members_in_order(&mut self.scratch);
        // A member with data outstanding that the list no longer holds (a segment
        // deemed lost whose retransmission has not gone yet) times out too.
        for id in self.wrr.ids() {
            if !self.scratch.contains(&id) && members.conn(id).session_outstanding() {
                self.scratch.push(id);
            }
        }
        if self.scratch.is_empty() {
            self.rto_at = None;
            return;
        }
        if self.rtt.backoff() >= self.max_retries {
            // Nothing has come back through max_retries timeouts: the members with
            // data outstanding give up, as a connection would.
            for &id in &self.scratch {
                members.conn(id).session_give_up(now);
            }
            self.tx.clear();
            self.retransmit_queue.clear();
            self.reno_out = 0;
            for s in self.shares.iter_mut() {
                s.2.take();
            }
            self.rto_at = None;
            return;
        }
        self.counters.session_timeouts += 1;
        let ssthresh = (self.outstanding().min(self.cong.cwnd()) / 2).max(2);
        self.cong.set_window(1, ssthresh);
        self.fast_start.active = false;
        self.fast_start.marks_left = 0;
        self.tx.clear();
        self.retransmit_queue.clear();
        for s in self.shares.iter_mut() {
            s.2.take();
        }
        self.reno_out = 0;
        for &id in &self.scratch {
            members.conn(id).session_timeout();
            self.retransmit_queue.push_back(id);
        }
        self.force = 0;
        self.pending = None;
        self.recovery_point = Some(self.tx.next_index());
        self.rtt.add_backoff();
        self.rto_at = Some(now + self.rtt.rto_backed_off());
    }
}
