//! One direction of a flow, from its sender's side: which segments are outstanding,
//! what the ACKs say of them, and why each retransmission was sent.
//!
//! The inference follows the sender's own rules, read backwards from the wire:
//! - a retransmission sent right after an ACK arrived was triggered by that ACK: fast
//!   retransmit with three duplicates (RFC 5681 §3.2; SACKed segments counted as
//!   Linux counts `sacked_out`, RFC 6675 §5), early retransmit or RACK with fewer
//!   (RFC 5827, RFC 8985 §6.2), or slow start after a timeout (RFC 5681 §3.1);
//! - one sent after a silence was triggered by a timer: the early-retransmit or RACK
//!   reorder timer (a fraction of an RTT, with duplicates outstanding), the tail loss
//!   probe (the last segment, SACK flows, nothing reported missing; RFC 8985 §7.2's
//!   PTO, capped by the RTO), or the retransmission timeout (the head, after an RTO
//!   that doubles each time, RFC 6298 §5.5).
//!
//! When only one segment is outstanding a probe and a timeout resend the same segment,
//! and Linux caps the probe timer at the RTO, so the time alone cannot tell them
//! apart. The host's behaviour elsewhere decides (has it sent an unmistakable probe,
//! or an unmistakable timeout where a probe was due?), then the predicted timers, and
//! a later timeout of the same segment revises the guess: after a probe the RTO
//! restarts unchanged, after a timeout it has doubled.

mod acks;
mod classify;
mod clock;

use std::collections::VecDeque;

use crate::cause::{Cause, CauseCounts, Spurious};
use crate::rtt::RttEstimate;
use crate::sack::{self, SackedBytes};

/// An ACK this close after the peer's last packet triggered the transmission (the
/// sender's processing time; a server-side capture sees microseconds).
pub const ACK_CLOCK_NS: u64 = 1_000_000;
/// Linux's minimum RTO (`TCP_RTO_MIN`, 200 ms), the floor of the predicted RTO.
const RTO_MIN_NS: u64 = 200_000_000;
/// Before any RTT sample, RFC 6298 §2.1's initial RTO of 1 s.
const RTO_INITIAL_NS: u64 = 1_000_000_000;
/// Linux's `TCP_DELACK_MAX` (200 ms): the worst-case delayed ACK a probe with one
/// segment out allows for (RFC 8985 §7.2 WCDelAckT).
const WCDELACK_NS: u64 = 200_000_000;

/// A transmitted range not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
struct Seg {
    start: u64,
    end: u64,
    /// Time of the latest transmission.
    last_ns: u64,
    /// Transmissions so far.
    tx: u16,
    sacked: bool,
    /// TSval of the latest transmission.
    tsval: Option<u32>,
    /// TSval of the first transmission.
    first_tsval: Option<u32>,
    /// The flow's retransmission record of the latest retransmission.
    retrans: Option<u32>,
    /// The burst and position of the latest transmission, for the loss figures.
    burst: u32,
    pos: u16,
}

impl Seg {
    /// A range's first transmission.
    fn first(start: u64, end: u64, t: u64, tsval: Option<u32>, burst: u32, pos: u16) -> Seg {
        Seg {
            start,
            end,
            last_ns: t,
            tx: 1,
            sacked: false,
            tsval,
            first_tsval: tsval,
            retrans: None,
            burst,
            pos,
        }
    }
}

/// A data packet's transmission, as [`Sender::on_data`] places it.
#[derive(Clone, Copy, Debug)]
struct Tx {
    /// When it was sent, ns.
    t: u64,
    /// Its sequence range, offsets.
    start: u64,
    end: u64,
    tsval: Option<u32>,
    tsecr: Option<u32>,
    /// Its burst and position in it.
    burst: u32,
    pos: u16,
}

impl Tx {
    /// The segment of its range from `start` on, sent for the first time.
    fn first_seg(&self, start: u64) -> Seg {
        Seg::first(start, self.end, self.t, self.tsval, self.burst, self.pos)
    }
}

/// One retransmission as inferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Retransmission {
    /// When it was sent, ns.
    pub t_ns: u64,
    /// Sequence offset from the first data byte.
    pub seq: u64,
    /// Sequence space resent.
    pub len: u32,
    /// Why.
    pub cause: Cause,
    /// Shown unnecessary, and how.
    pub spurious: Option<Spurious>,
    /// Duplicate ACKs (without SACK) or SACKed segments (with) at the time.
    pub dups: u32,
    /// Time since the peer's last packet, ns.
    pub gap_ns: u64,
    /// A lone segment's probe-or-timeout not yet settled by the host's habits.
    pub ambiguous: bool,
    /// Called fast on FACK's count alone: early if the host turns out not to use
    /// FACK.
    #[serde(skip)]
    pub fack_only: bool,
}

impl Retransmission {
    /// Its sequence number from the ISN, as [`crate::PacketTags::rel_seq`] gives a
    /// packet's.
    pub fn rel_seq(&self) -> u64 {
        self.seq + 1
    }
}

/// A loss-recovery episode: from its first retransmission until the ACK that
/// covers everything outstanding when it began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Episode {
    /// First retransmission, ns.
    pub start_ns: u64,
    /// The covering ACK, ns (`None` if the capture ended first).
    pub end_ns: Option<u64>,
    /// The cause of its first retransmission.
    pub cause: Cause,
    /// Retransmissions in it.
    pub retransmissions: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Open,
    Recovery { high: u64 },
    Loss { high: u64 },
}

/// A transmission presumed lost: a retransmission followed it.
#[derive(Clone, Copy, Debug)]
pub struct Lost {
    /// The burst and position of the lost transmission.
    pub burst: u32,
    pub pos: u16,
    /// The retransmission record that repeated it (to drop those later shown
    /// unnecessary).
    pub record: u32,
    /// At the tail, repaired by a probe or a timeout.
    pub tail: bool,
}

/// What the host is known to do, learnt across its flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostHabits {
    /// Sent a probe that could be nothing else (the tail, with more segments out):
    /// proof that it sends tail loss probes.
    pub probes: bool,
    /// Timed out where a probe could have been due (the head, several segments out,
    /// SACK, Open). A prober also does this when its probe conditions fail (no RTT
    /// sample yet, new data it could have sent), so this counts only without proof
    /// of probes.
    pub no_probes: bool,
    /// Known not to use FACK (Linux 4.15+, RFC 6675 alone, RACK): told so by the
    /// user, whatever the capture shows.
    pub no_fack: bool,
    /// Times it sent new data where FACK would have begun a recovery (`fackets_out`
    /// above three, fewer than three segments SACKed), as a host without FACK does.
    pub fack_refusals: u32,
    /// Times it began a recovery on FACK's count alone, as a host with FACK does
    /// (and RACK may). Neither count is proof: a host with FACK refuses too once
    /// Linux has raised its reordering threshold for the path
    /// (`tcp_update_reordering`, kept across connections in the route metrics).
    pub fack_recoveries: u32,
}

impl HostHabits {
    /// Whether the host recovers on FACK's count (Linux before 4.15, by default):
    /// unless told otherwise, as long as the capture shows it doing so at least as
    /// often as it refuses to.
    pub fn uses_fack(&self) -> bool {
        !self.no_fack && self.fack_recoveries >= self.fack_refusals
    }

    /// Whether the host sends tail loss probes, if known.
    pub fn probes(&self) -> Option<bool> {
        if self.probes {
            Some(true)
        } else if self.no_probes {
            Some(false)
        } else {
            None
        }
    }
}

/// `gentle-aggression-sigcomm13.txt` §2: packets at most 500 µs apart form a burst.
pub const BURST_GAP_NS: u64 = 500_000;

/// A lone segment's probe-or-timeout, judged by the first flight after it: a timeout
/// leaves cwnd at one segment (two once the retransmission is acknowledged, RFC 5681
/// §3.1), so that flight is at most two segments with more to follow; a probe leaves
/// cwnd whole, or halved if it repaired a loss (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug)]
struct AfterCheck {
    record: u32,
    end: u64,
    acked: bool,
    flight: u32,
    last_ns: u64,
}

/// A timer-driven retransmission of the head, kept to judge the next one.
#[derive(Clone, Copy, Debug)]
struct TimerRetx {
    gap_ns: u64,
    record: u32,
    ambiguous: bool,
}

/// What a data packet was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// New data.
    Original,
    /// Data sent before, resent for `cause`.
    Retransmission(Cause),
}

/// What an ACK said.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckKind {
    /// Advanced the cumulative ACK.
    pub advanced: bool,
    /// A duplicate ACK (RFC 5681 §2: no data, same ACK and window, data outstanding).
    pub duplicate: bool,
    /// Carried SACK blocks.
    pub sack: bool,
    /// Its first SACK block was a DSACK (RFC 2883 §4).
    pub dsack: bool,
    /// A window update: same ACK number, new window.
    pub window_update: bool,
    /// A retransmission it showed unnecessary (by DSACK, timestamp or timing).
    pub undid: bool,
    /// Data was acknowledged that had been SACKed past without being retransmitted.
    pub reordering: Option<u32>,
    /// A Karn RTT sample of a sender next to the capture (RFC 6298 §3).
    pub rtt_sample: Option<u64>,
}

impl AckKind {
    /// Whether the ACK could make its sender retransmit: it advanced, duplicated,
    /// or SACKed something new.
    pub fn could_trigger(&self) -> bool {
        self.advanced || self.duplicate || (self.sack && !self.dsack)
    }
}

/// The sender side of one direction.
#[derive(Debug)]
pub struct Sender {
    /// Wire sequence number of offset 0 (the ISN + 1), once known.
    base: Option<u32>,
    /// Highest offset sent + 1 (snd.max).
    pub nxt: u64,
    /// Cumulatively acknowledged offset (snd.una).
    pub una: u64,
    segs: VecDeque<Seg>,
    dupacks: u32,
    /// Whole captured segments SACKed.
    sacked: u32,
    /// SACKed bytes above `una`.
    sack_bytes: SackedBytes,
    /// Data segments carry timestamps.
    timestamps: bool,
    /// The retransmission being classified was called fast on FACK's count alone.
    fack_entry: bool,
    /// The last ACK gave FACK, and FACK alone, the evidence to recover: new data next
    /// shows a host without FACK.
    fack_watch: bool,
    /// The capture was taken at the receiver: this sender's packets are seen as
    /// they arrive, a one-way delay after they left.
    far: bool,
    /// A far sender's clock, from its timestamps.
    clock: clock::PeerClock,
    /// The smaller MSS option of the two SYNs (RFC 9293 §3.7.1: the sender's SMSS is
    /// at most the peer's).
    mss_option: Option<u32>,
    last_ack: Option<(u64, u16)>,
    /// The peer's last packet, ns, shifted by the capture point's delay.
    pub last_rx_ns: u64,
    /// The peer's last ACK that could trigger a retransmission: it advanced,
    /// duplicated, or brought SACK information.
    last_trigger_ns: Option<u64>,
    /// When the last recovery ended (an ACK at or past its recovery point), and the
    /// cause of its later retransmissions.
    recovery_ended: Option<(u64, Cause)>,
    /// The peer's last data packet (a request, on the server's side).
    last_peer_data_ns: Option<u64>,
    /// This sender's last data packet, ns.
    pub last_tx_ns: u64,
    /// When the retransmission timer was last (re)started, as far as the wire shows.
    rto_ref_ns: u64,
    state: State,
    probe_out: bool,
    /// The RTT as this sender sees it.
    pub rtt: RttEstimate,
    /// Largest segment seen.
    pub mss: u32,
    /// SACK was negotiated (seen on both SYNs, or any SACK block seen).
    pub sack_ok: bool,
    last_timer: Option<TimerRetx>,
    after: Option<AfterCheck>,
    /// Every retransmission, in order.
    pub retrans: Vec<Retransmission>,
    /// Counts by cause.
    pub counts: CauseCounts,
    /// Recovery episodes.
    pub episodes: Vec<Episode>,
    /// Measured RTO / smoothed RTT at each first timeout of an episode
    /// (`gentle-aggression-sigcomm13.txt` Figure 2).
    pub rto_over_rtt: Vec<f64>,
    /// The current timeout episode added to [`Sender::rto_over_rtt`].
    rto_sampled: bool,
    /// Reordering events and the largest extent, segments.
    pub reorder_events: u32,
    /// Largest reordering extent, segments.
    pub reorder_max: u32,
    /// Transmissions presumed lost (a retransmission followed them).
    pub lost: Vec<Lost>,
    /// Data packets sent above a gap in the sequence space (packets the capture
    /// missed).
    pub capture_gaps: u32,
}

impl Default for Sender {
    fn default() -> Self {
        Sender {
            base: None,
            nxt: 0,
            una: 0,
            segs: VecDeque::new(),
            dupacks: 0,
            sacked: 0,
            sack_bytes: SackedBytes::default(),
            mss_option: None,
            timestamps: false,
            fack_entry: false,
            fack_watch: false,
            rto_sampled: false,
            far: false,
            clock: clock::PeerClock::default(),
            last_ack: None,
            last_rx_ns: 0,
            last_trigger_ns: None,
            recovery_ended: None,
            last_peer_data_ns: None,
            last_tx_ns: 0,
            rto_ref_ns: 0,
            state: State::Open,
            probe_out: false,
            rtt: RttEstimate::default(),
            mss: 0,
            sack_ok: false,
            last_timer: None,
            after: None,
            retrans: Vec::new(),
            counts: CauseCounts::default(),
            episodes: Vec::new(),
            rto_over_rtt: Vec::new(),
            reorder_events: 0,
            reorder_max: 0,
            lost: Vec::new(),
            capture_gaps: 0,
        }
    }
}

impl Sender {
    /// A sender; `far`: the capture was taken at its receiver.
    pub fn far_from_capture(far: bool) -> Self {
        Sender {
            far,
            ..Sender::default()
        }
    }

    /// The sender's SYN: data starts at `isn + 1`.
    pub fn on_syn(&mut self, isn: u32) {
        if self.base.is_none() {
            self.base = Some(isn.wrapping_add(1));
        }
    }

    /// Whether the sequence space origin is known.
    pub fn started(&self) -> bool {
        self.base.is_some()
    }

    /// Offset of wire sequence number `v`, unwrapped near `reference`.
    fn ext(&self, v: u32, reference: u64) -> u64 {
        let base = self.base.unwrap_or(v);
        let rel = v.wrapping_sub(base);
        let d = rel.wrapping_sub(reference as u32) as i32 as i64;
        (reference as i64 + d).max(0) as u64
    }

    /// Offset of a wire sequence number, near what was sent.
    pub fn offset(&self, v: u32) -> u64 {
        self.ext(v, self.nxt)
    }

    /// An MSS option seen on either SYN.
    pub fn on_mss_option(&mut self, mss: u16) {
        if mss > 0 {
            let m = u32::from(mss);
            self.mss_option = Some(self.mss_option.map_or(m, |o| o.min(m)));
        }
    }

    /// The sender's SMSS: the largest segment seen, at most the MSS options allow
    /// less the timestamp option every segment carries (RFC 6691 §3, RFC 7323 §3.2:
    /// 12 bytes with its padding).
    fn smss(&self) -> u32 {
        let seen = self.mss.max(1);
        let ts = if self.timestamps { 12 } else { 0 };
        self.mss_option
            .map_or(seen, |o| o.saturating_sub(ts).max(1).min(seen))
    }

    /// Duplicate ACKs, or with SACK the segments SACKed behind the hole, counted by
    /// bytes as well as by captured segments ([`sack::evidence`]).
    fn dup_evidence(&self) -> u32 {
        self.dup_evidence_fack().0
    }

    /// [`Sender::dup_evidence`], and the same with FACK's count.
    fn dup_evidence_fack(&self) -> (u32, u32) {
        if self.sack_ok {
            sack::evidence(&self.sack_bytes, self.sacked, self.una, self.smss())
        } else {
            (self.dupacks, self.dupacks)
        }
    }

    /// The receiver sent an ACK with `tsval` at `t`, one that could `trigger` a
    /// retransmission (a far sender's clock keeps it).
    pub fn receiver_ack(&mut self, t: u64, tsval: u32, trigger: bool) {
        if self.far {
            self.clock.ack(t, tsval, trigger);
        }
    }

    /// A packet of this sender's (SYN, ACK or data) with `tsval` arrived at `t`: a
    /// far sender's clock learns from each.
    pub fn sent_with_tsval(&mut self, t: u64, tsval: u32) {
        if self.far {
            self.clock.data(t, tsval);
        }
    }

    /// Far from the capture, whether the sender's timestamps show `tx` sent on the
    /// ACK it echoes (see [`clock`]); `None` near it, or when they cannot tell.
    fn sent_on_ack(&self, tx: &Tx) -> Option<bool> {
        if !self.far {
            return None;
        }
        self.clock
            .sent_on_ack(tx.tsval?, tx.tsecr?, self.rtt.min_checked()?)
    }

    fn predicted_rto(&self) -> u64 {
        if !self.rtt.known() {
            return RTO_INITIAL_NS;
        }
        (self.rtt.srtt + (4 * self.rtt.rttvar).max(RTO_MIN_NS)).max(RTO_MIN_NS)
    }

    /// A silence at least this long ended by a retransmission of the head was the
    /// RTO, not the early-retransmit or RACK reorder timer (a fraction of an RTT):
    /// three quarters of the smaller of the predicted RTO and Linux's shortest,
    /// SRTT + 200 ms.
    fn timeout_floor(&self) -> u64 {
        let rto = self.predicted_rto();
        let shortest = if self.rtt.known() {
            rto.min(self.rtt.srtt + RTO_MIN_NS)
        } else {
            rto
        };
        shortest * 3 / 4
    }

    /// The probe timeouts a prober could have armed (RFC 8985 §7.2 and its
    /// predecessors), each never later than the RTO: 2·SRTT; with one segment out,
    /// max(2·SRTT, 1.5·SRTT + WCDelAckT) (the 2013 draft, Linux 3.10) or
    /// 2·SRTT + WCDelAckT (RFC 8985, Linux 4.11+).
    fn predicted_ptos(&self) -> [u64; 3] {
        let rto = self.predicted_rto();
        if !self.rtt.known() {
            return [rto; 3];
        }
        let s = self.rtt.srtt;
        let one = self.segs.len() == 1;
        let w = if one { WCDELACK_NS } else { 0 };
        [
            (2 * s).min(rto),
            (2 * s).max(s + s / 2 + w).min(rto),
            (2 * s + w).min(rto),
        ]
    }

    /// A data segment from this sender (`len` counts FIN, not SYN). `burst`/`pos`
    /// place it in the sender's bursts.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        t: u64,
        seq: u32,
        len: u32,
        ts: Option<(u32, u32)>,
        burst: u32,
        pos: u16,
        habits: &mut HostHabits,
    ) -> DataKind {
        if self.base.is_none() {
            self.base = Some(seq);
        }
        let start = self.offset(seq);
        let tsval = ts.map(|t| t.0);
        let tx = Tx {
            t,
            start,
            end: start + len as u64,
            tsval,
            tsecr: ts.map(|t| t.1),
            burst,
            pos,
        };
        self.mss = self.mss.max(len);
        self.timestamps |= tsval.is_some();
        if start >= self.nxt {
            self.on_original(tx, habits);
            return DataKind::Original;
        }
        DataKind::Retransmission(self.on_retransmission(tx, len, habits))
    }

    /// New data, at or above `nxt` (above it: the capture missed packets).
    fn on_original(&mut self, tx: Tx, habits: &mut HostHabits) {
        if tx.start > self.nxt && !self.segs.is_empty() {
            self.capture_gaps += 1;
        }
        if self.segs.is_empty() {
            self.rto_ref_ns = tx.t;
        }
        self.judge_after(tx.t);
        if std::mem::take(&mut self.fack_watch) {
            habits.fack_refusals += 1;
        }
        self.segs.push_back(tx.first_seg(tx.start));
        self.nxt = tx.end;
        self.last_tx_ns = tx.t;
    }

    /// Data sent before, sent again (`len` bytes of sequence space): why, what it
    /// shows lost, and the recovery episode it begins or adds to. Returns the cause.
    fn on_retransmission(&mut self, tx: Tx, len: u32, habits: &mut HostHabits) -> Cause {
        let t = tx.t;
        let since = t.saturating_sub(self.rto_ref_ns);
        let on_ack = self.sent_on_ack(&tx);
        let (cause, ambiguous) = self.classify(t, tx.start, tx.end, on_ack, habits);
        let record = self.retrans.len() as u32;
        let gap = t.saturating_sub(self.last_rx_ns);
        if matches!(cause, Cause::Timeout | Cause::Probe) {
            self.rto_ref_ns = t;
        }
        if ambiguous {
            self.after = Some(AfterCheck {
                record,
                end: tx.end,
                acked: false,
                flight: 0,
                last_ns: 0,
            });
        }
        self.retrans.push(Retransmission {
            t_ns: t,
            seq: tx.start,
            len,
            cause,
            spurious: None,
            dups: self.dup_evidence(),
            gap_ns: gap,
            ambiguous,
            fack_only: std::mem::take(&mut self.fack_entry),
        });
        self.fack_watch = false;
        self.counts.add(cause);
        self.mark_resent(tx, record, cause);
        if tx.end > self.nxt {
            self.segs.push_back(tx.first_seg(self.nxt));
            self.nxt = tx.end;
        }
        self.last_tx_ns = t;
        self.track_episode(t, cause, since);
        if let Some(e) = self.episodes.last_mut() {
            e.retransmissions += 1;
        }
        cause
    }

    /// The segments retransmission `record` (`tx`) repeats: their last
    /// transmissions were lost, unless shown otherwise, and this is their latest.
    fn mark_resent(&mut self, tx: Tx, record: u32, cause: Cause) {
        let i0 = self.segs.partition_point(|s| s.end <= tx.start);
        for s in self.segs.iter_mut().skip(i0) {
            if s.start >= tx.end {
                break;
            }
            // The transmission this one repeats was lost, unless shown otherwise:
            // one lost per captured segment it mostly covers (a resend cut
            // differently, 1430 bytes over 1446-byte captured segments, covers
            // the edge of the next one too, not a second loss).
            let covered = tx.end.min(s.end) - tx.start.max(s.start);
            if covered * 2 > s.end - s.start {
                self.lost.push(Lost {
                    burst: s.burst,
                    pos: s.pos,
                    record,
                    tail: matches!(cause, Cause::Probe | Cause::Timeout) && s.end >= self.nxt,
                });
            }
            s.tx = s.tx.saturating_add(1);
            s.last_ns = tx.t;
            s.tsval = tx.tsval;
            s.retrans = Some(record);
            s.burst = tx.burst;
            s.pos = tx.pos;
        }
    }

    /// Episode bookkeeping and the state the sender is now in, after a
    /// retransmission for `cause` at `t`, `since` after the retransmission timer's
    /// last start.
    fn track_episode(&mut self, t: u64, cause: Cause, since: u64) {
        match cause {
            Cause::Timeout => {
                let first = !matches!(self.state, State::Loss { .. });
                if first {
                    self.begin_episode(t, cause);
                    self.rto_sampled = self.rtt.known() && self.rtt.srtt > 0;
                    if self.rto_sampled {
                        self.rto_over_rtt.push(since as f64 / self.rtt.srtt as f64);
                    }
                }
                self.state = State::Loss { high: self.nxt };
            }
            Cause::Fast | Cause::Early if self.state == State::Open => {
                self.begin_episode(t, cause);
                self.state = State::Recovery { high: self.nxt };
            }
            Cause::Probe => {
                self.probe_out = true;
                self.begin_episode(t, cause);
            }
            _ => {}
        }
    }

    /// A recovery episode begins at `t` with a retransmission for `cause`.
    fn begin_episode(&mut self, t: u64, cause: Cause) {
        self.episodes.push(Episode {
            start_ns: t,
            end_ns: None,
            cause,
            retransmissions: 0,
        });
    }
}

/// Timestamp order with wraparound (RFC 7323 §5.2).
fn ts_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// |ln(a/b)|: how far apart two durations are, as a ratio.
fn log_dist(a: u64, b: u64) -> f64 {
    ((a.max(1) as f64) / (b.max(1) as f64)).ln().abs()
}
