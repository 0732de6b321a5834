//! One direction of a link: serialisation at a rate, a queue discipline, a loss
//! model, propagation delay, optional reordering and duplication.
//!
//! Loss is decided when a packet enters the link (like a filter on the sender's
//! output, as `tlp-measurement-tum13.txt` §3.3 drops packets), then a token-bucket
//! policer ([`policer`]) may drop it, then the packet queues for the transmitter,
//! is serialised at `rate`, and arrives `delay` later
//! (plus `reorder.extra` for a reordered packet).
//!
//! A first-in, first-out queue — drop-tail, or RED ([`red`]), which decides at
//! admission and keeps the order — knows a packet's departure the moment it is
//! admitted: it starts when the transmitter frees up and takes its serialisation
//! time. The channel keeps the departure times of the packets it holds and the
//! simulator schedules one arrival per packet, with no per-packet transmitter
//! events. Priority drop (`fast-start-and-sessions.txt` §3.3, §7.2) removes packets
//! from the middle of the queue and acks-first scheduling (§5) reorders it: with
//! either, packets wait in a [`queue::TxQueue`] and the simulator runs the
//! transmitter, which takes the next packet when the current one is serialised.

pub mod draws;
pub mod jitter;
pub mod outage;
pub mod policer;
pub mod queue;
pub mod red;
mod stats;
pub mod trace;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use gentle_tcp::{Ecn, Flags, Segment};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::loss::{AppliesTo, Loss, LossModel};
use crate::rng::Lazy;
pub use draws::Draws;
use draws::PositionKeys;
use jitter::JitterState;
pub use jitter::{Jitter, JitterDist};
pub use outage::Outage;
use outage::OutageState;
pub use policer::{Policer, PolicerState};
use queue::TxQueue;
pub use red::{Red, RedParams, RedVerdict};
pub use stats::ChannelStats;
pub use trace::LinkTrace;
use trace::TraceCursor;

/// Queue capacity of a drop-tail queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueLimit {
    Unlimited,
    Packets(u32),
    Bytes(u64),
}

/// Which packets a queue takes in: all that fit (drop-tail), or RED's choice
/// ([`red`]) among those that fit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueDiscipline {
    DropTail(QueueLimit),
    /// Random Early Detection (with ECN marking if `red.ecn`) below a hard limit.
    Red {
        limit: QueueLimit,
        red: RedParams,
    },
}

impl QueueDiscipline {
    /// The hard limit of the buffer.
    pub fn limit(&self) -> QueueLimit {
        match *self {
            QueueDiscipline::DropTail(l) | QueueDiscipline::Red { limit: l, .. } => l,
        }
    }

    /// RED's parameters, when RED is on.
    pub fn red(&self) -> Option<&RedParams> {
        match self {
            QueueDiscipline::DropTail(_) => None,
            QueueDiscipline::Red { red, .. } => Some(red),
        }
    }
}

/// The order in which the transmitter serves waiting packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduling {
    /// First in, first out.
    #[default]
    Fifo,
    /// Pure ACKs (no payload, no SYN or FIN: "small ACK packets") before everything
    /// else, without preempting the packet being sent (`fast-start-and-sessions.txt`
    /// §5, from Balakrishnan et al. 1997).
    AcksFirst,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reorder {
    /// Probability that a packet is held back.
    pub p: f64,
    /// Extra delay of a held-back packet.
    pub extra: Duration,
    /// Also hold back exactly these data packets (1-based count of payload-carrying
    /// packets on this link direction), for reproducible examples.
    pub packets: [u32; 4],
}

/// Configuration of one link direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChannelSpec {
    /// Bits per second; `None` is unlimited (no serialisation delay).
    pub rate_bps: Option<u64>,
    pub delay: Duration,
    pub queue: QueueDiscipline,
    /// When the buffer is full (or RED forces a drop), drop the low-priority packet
    /// (`Flags::FAST_START`) nearest the tail, the arriving one included, if one is
    /// queued; else the arriving packet (`fast-start-and-sessions.txt` §3.3, §7.2).
    pub priority_drop: bool,
    /// The transmitter's service order.
    pub scheduling: Scheduling,
    pub loss: LossModel,
    pub loss_applies: AppliesTo,
    pub reorder: Option<Reorder>,
    /// Per-packet delay variation ([`jitter`]).
    #[serde(default)]
    pub jitter: Option<Jitter>,
    /// Trace-driven capacity instead of `rate_bps` ([`trace`]).
    #[serde(default)]
    pub trace: Option<LinkTrace>,
    /// Periods in which nothing is delivered ([`outage`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<Outage>,
    /// A token-bucket policer before the queue ([`policer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policer: Option<Policer>,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
    /// Where loss, reordering and duplication draws come from ([`draws`]).
    #[serde(default)]
    pub draws: Draws,
    /// A middlebox: probability that it strips the experimental option (kind 254,
    /// Corrective's) from a packet (`gentle-aggression-sigcomm13.txt` §7).
    pub strip_option: f64,
    /// A middlebox that translates sequence numbers (§7): added to the sequence
    /// number of every packet in this direction ...
    pub seq_shift: u32,
    /// ... and subtracted from the ACK number and SACK blocks of every packet in
    /// this direction (the other side of the same translation).
    pub ack_shift: u32,
    /// What a middlebox does to the TCP header's reserved bits (§7: Proactive's copy
    /// flag is one of them).
    pub reserved_bits: ReservedBits,
}

/// A middlebox's treatment of the TCP header's four reserved bits
/// (`gentle-aggression-sigcomm13.txt` §7: "reserved bits … can trigger middleboxes
/// that discard packets with non-compliant TCP flags").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReservedBits {
    /// Left alone.
    #[default]
    Pass,
    /// Cleared (the packet goes on).
    Clear,
    /// The packet is dropped.
    Drop,
}

impl Default for ChannelSpec {
    fn default() -> Self {
        ChannelSpec {
            rate_bps: None,
            delay: Duration::ZERO,
            queue: QueueDiscipline::DropTail(QueueLimit::Unlimited),
            priority_drop: false,
            scheduling: Scheduling::Fifo,
            loss: LossModel::None,
            loss_applies: AppliesTo::All,
            reorder: None,
            jitter: None,
            trace: None,
            outage: None,
            policer: None,
            duplicate: 0.0,
            draws: Draws::Arrival,
            strip_option: 0.0,
            seq_shift: 0,
            ack_shift: 0,
            reserved_bits: ReservedBits::Pass,
        }
    }
}

/// Outcome of offering a packet to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Queued; the last bit leaves the sender at `depart_ns`.
    Queued {
        depart_ns: u64,
    },
    /// Waiting in a scheduled queue, which now holds the packet's slot; the
    /// transmitter must be woken at `wake_ns` if given. Packets evicted to make
    /// room are left for [`Channel::pop_evicted`].
    Waiting {
        wake_ns: Option<u64>,
    },
    DroppedLoss,
    DroppedQueue,
    /// The token-bucket policer dropped it ([`policer`]).
    DroppedPolicer,
}

/// A packet the transmitter of a scheduled queue started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Started {
    pub slot: u32,
    pub bytes: u32,
    /// When its last bit leaves, ns.
    pub depart_ns: u64,
    /// When the transmitter must be woken again, if packets still wait.
    pub wake_ns: Option<u64>,
}

#[derive(Debug)]
pub struct Channel {
    pub spec: ChannelSpec,
    pub from: u16,
    pub to: u16,
    /// Packets admitted and not yet fully sent: (start, end of transmission, bytes).
    held: VecDeque<(u64, u64, u32)>,
    held_bytes: u64,
    /// When the transmitter is free again.
    busy_until: u64,
    /// Packets on the wire in arrival order, for those whose delay is the link's
    /// own (arrival times then only grow): (arrival time, packet slot). The
    /// simulator keeps one event per channel, for the head.
    pub arrivals: VecDeque<(u64, u32)>,
    pub loss: Loss,
    /// The channel's own stream, made on its first draw.
    pub rng: Lazy,
    pub stats: ChannelStats,
    data_count: u32,
    /// A middlebox rewrites packets on this direction.
    rewrites: bool,
    limit: QueueLimit,
    /// RED or a scheduled queue: admission goes through [`Channel::admit_managed`].
    managed: bool,
    red: Option<Red>,
    /// The waiting packets, when the discipline schedules its transmitter.
    sched: Option<Box<TxQueue>>,
    /// A transmitter wake-up is scheduled.
    wake_pending: bool,
    /// When the last packet started its transmission (the queue has been empty
    /// since then when an arrival finds it empty).
    last_start: u64,
    /// Packets evicted by priority drop, for the simulator to drop.
    evicted: Vec<u32>,
    /// `Draws::Position`: the keys, and the stream of the packet being admitted
    /// (its loss draws, then its reordering and duplication draws).
    keys: Option<Box<PositionKeys>>,
    packet_rng: Option<ChaCha8Rng>,
    /// The delay-variation process, when the spec has one.
    jitter: JitterState,
    /// Where a trace-driven transmitter is in its trace.
    cursor: TraceCursor,
    /// The outage process, when the spec has one (its own stream, drawn from the
    /// channel's at the start so that links without outages draw as before).
    outage: Option<Box<OutageState>>,
    /// The policer's bucket, when the spec has one.
    policer: Option<PolicerState>,
}

/// The storage of a channel's queues, emptied, for the channel a later trial builds
/// (so that a trial's queues do not grow again from nothing).
#[derive(Debug, Default)]
pub struct ChannelStorage {
    held: VecDeque<(u64, u64, u32)>,
    arrivals: VecDeque<(u64, u32)>,
    evicted: Vec<u32>,
}

impl Channel {
    /// Its queues' storage, emptied (the channel is done with).
    pub fn into_storage(self) -> ChannelStorage {
        let mut s = ChannelStorage {
            held: self.held,
            arrivals: self.arrivals,
            evicted: self.evicted,
        };
        s.held.clear();
        s.arrivals.clear();
        s.evicted.clear();
        s
    }

    /// Gives this channel `kept`'s storage for its queues (which are empty), where
    /// it stands.
    pub fn use_storage(&mut self, kept: ChannelStorage) {
        debug_assert!(self.held.is_empty() && self.arrivals.is_empty());
        (self.held, self.arrivals, self.evicted) = (kept.held, kept.arrivals, kept.evicted);
    }

    /// The loss model's lossy bursts so far.
    pub fn loss_bursts(&self) -> crate::loss::BurstCounts {
        self.loss.burst_counts()
    }

    /// A channel drawing from `rng` (a stream, or one made on its first draw).
    pub fn new(spec: ChannelSpec, from: u16, to: u16, rng: impl Into<Lazy>) -> Self {
        let mut rng: Lazy = rng.into();
        let keys = (spec.draws == Draws::Position).then(|| Box::new(PositionKeys::new(rng.get())));
        let loss = Loss::new(spec.loss.clone(), spec.loss_applies);
        let rewrites = spec.strip_option > 0.0
            || spec.seq_shift != 0
            || spec.ack_shift != 0
            || spec.reserved_bits != ReservedBits::Pass;
        let red = spec.queue.red().map(|p| Red::new(*p, spec.rate_bps));
        // A trace starts at a point of its period drawn for the trial.
        let cursor = match &spec.trace {
            Some(t) => TraceCursor::starting_at(rng.get().gen_range(0..t.period_ns)),
            None => TraceCursor::default(),
        };
        let scheduled = spec.priority_drop || spec.scheduling != Scheduling::Fifo;
        let outage = spec.outage.map(|o| {
            Box::new(OutageState::new(
                o,
                ChaCha8Rng::seed_from_u64(rng.get().r#gen()),
            ))
        });
        Channel {
            outage,
            policer: spec.policer.map(PolicerState::new),
            rewrites,
            limit: spec.queue.limit(),
            managed: red.is_some() || scheduled,
            red,
            sched: scheduled.then(Box::default),
            wake_pending: false,
            last_start: 0,
            evicted: Vec::new(),
            keys,
            packet_rng: None,
            jitter: JitterState::default(),
            cursor,
            spec,
            from,
            to,
            held: VecDeque::new(),
            held_bytes: 0,
            busy_until: 0,
            arrivals: VecDeque::new(),
            loss,
            rng,
            stats: Default::default(),
            data_count: 0,
        }
    }

    /// Serialisation time of `bytes` at the link rate.
    pub fn tx_time(&self, bytes: usize) -> Duration {
        Duration::from_nanos(self.tx_ns(bytes))
    }

    fn tx_ns(&self, bytes: usize) -> u64 {
        match self.spec.rate_bps {
            None => 0,
            // Bits times 10⁹ fit 64 bits for any packet (below 2.3 GB); the
            // 128-bit division is kept for what does not.
            Some(r) => match (bytes as u64).checked_mul(8 * 1_000_000_000) {
                Some(n) => n / r,
                None => ((bytes as u128 * 8 * 1_000_000_000) / r as u128) as u64,
            },
        }
    }

    /// Packets waiting for the transmitter at `now` (the one being sent excluded,
    /// as ns-2 and ns-3 count it) and their bytes.
    pub fn backlog(&mut self, now: u64) -> (usize, u64) {
        if let Some(q) = &self.sched {
            return (q.len(), q.bytes());
        }
        self.fifo_backlog(now)
    }

    /// [`backlog`](Self::backlog) of the FIFO fast path.
    #[inline]
    fn fifo_backlog(&mut self, now: u64) -> (usize, u64) {
        while let Some(&(_, end, b)) = self.held.front() {
            if end > now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= b as u64;
        }
        match self.held.front() {
            Some(&(start, _, b)) if start <= now => {
                (self.held.len() - 1, self.held_bytes - b as u64)
            }
            _ => (self.held.len(), self.held_bytes),
        }
    }

    /// Whether this direction has a middlebox that rewrites packets.
    #[inline]
    pub fn rewrites(&self) -> bool {
        self.rewrites
    }

    /// Whether admission needs the segment and its slot ([`admit_managed`]): RED,
    /// priority drop or acks-first.
    ///
    /// [`admit_managed`]: Channel::admit_managed
    #[inline]
    pub fn managed(&self) -> bool {
        self.managed
    }

    /// RED's state, when RED is on.
    pub fn red(&self) -> Option<&Red> {
        self.red.as_ref()
    }

    /// The packets waiting in a scheduled queue, in the order they will be sent.
    pub fn waiting(&self) -> Vec<u32> {
        self.sched
            .as_ref()
            .map_or_else(Vec::new, |q| q.iter().map(|w| w.slot).collect())
    }

    /// A packet evicted by priority drop, for the simulator to drop.
    pub fn pop_evicted(&mut self) -> Option<u32> {
        self.evicted.pop()
    }

    /// What a middlebox on this direction does to a segment: strip the experimental
    /// option, translate sequence and acknowledgment numbers (SACK blocks too, as a
    /// translating middlebox must for SACK to keep working), clear the reserved
    /// bits. Returns false if it drops the segment instead (reserved bits set).
    pub fn rewrite(&mut self, seg: &mut gentle_tcp::Segment) -> bool {
        if seg.flags.reserved() != 0 {
            match self.spec.reserved_bits {
                ReservedBits::Pass => {}
                ReservedBits::Clear => {
                    seg.flags.set_reserved(0);
                    self.stats.reserved_cleared += 1;
                }
                ReservedBits::Drop => {
                    self.stats.dropped_middlebox += 1;
                    return false;
                }
            }
        }
        if self.spec.strip_option > 0.0
            && seg.options.experimental.is_some()
            && self.rng.get().gen_bool(self.spec.strip_option)
        {
            seg.options.experimental = None;
            self.stats.options_stripped += 1;
        }
        seg.seq = seg.seq.wrapping_add(self.spec.seq_shift);
        if self.spec.ack_shift != 0 {
            let k = self.spec.ack_shift;
            if seg.flags.ack() {
                seg.ack = seg.ack.wrapping_sub(k);
            }
            let mut blocks = gentle_tcp::wire::SackBlocks::new();
            for b in seg.options.sack.as_slice() {
                blocks.push(gentle_tcp::wire::SackBlock {
                    left: b.left.wrapping_sub(k),
                    right: b.right.wrapping_sub(k),
                });
            }
            seg.options.sack = blocks;
        }
        true
    }

    /// Offers a packet of `bytes` at `now`: loss model first, then the queue.
    #[inline(always)]
    pub fn admit(&mut self, now: u64, bytes: usize, meta: &crate::packet::PacketMeta) -> Admit {
        self.stats.offered += 1;
        if self.draw_loss(now, meta) {
            self.stats.dropped_loss += 1;
            return Admit::DroppedLoss;
        }
        if self.policed(now, bytes) {
            return Admit::DroppedPolicer;
        }
        let (queued, queued_bytes) = self.fifo_backlog(now);
        if self.full(queued, queued_bytes, bytes) {
            self.stats.dropped_queue += 1;
            return Admit::DroppedQueue;
        }
        self.fifo_enqueue(now, bytes, queued)
    }

    /// The loss model's verdict on `meta`, from the link's stream or the packet's
    /// own ([`draws`]).
    #[inline(always)]
    fn draw_loss(&mut self, now: u64, meta: &crate::packet::PacketMeta) -> bool {
        if let Some(state) = self.outage.as_deref_mut()
            && state.down_at(now)
        {
            return true;
        }
        match self.keys.as_deref_mut() {
            None if self.loss.never_drops() => false,
            None => self.loss.drop_at(meta, now, self.rng.get()),
            Some(k) => {
                let rng = self.packet_rng.insert(k.stream(meta));
                self.loss.drop_at(meta, now, rng)
            }
        }
    }

    /// Whether the policer drops a packet of `bytes` offered at `now` (counted).
    #[inline(always)]
    fn policed(&mut self, now: u64, bytes: usize) -> bool {
        let Some(p) = &mut self.policer else {
            return false;
        };
        let drop = !p.pass(now, bytes);
        self.stats.dropped_policer += drop as u64;
        drop
    }

    #[inline]
    fn full(&self, queued: usize, queued_bytes: u64, bytes: usize) -> bool {
        match self.limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => queued as u64 >= n as u64,
            QueueLimit::Bytes(b) => queued_bytes + bytes as u64 > b,
        }
    }

    /// The FIFO fast path: the departure is fixed now.
    #[inline]
    fn fifo_enqueue(&mut self, now: u64, bytes: usize, queued: usize) -> Admit {
        let start = self.busy_until.max(now);
        let end = match &self.spec.trace {
            Some(t) => self.cursor.depart(t, start, bytes as u32),
            None => start + self.tx_ns(bytes),
        };
        self.busy_until = end;
        self.last_start = start;
        if end > now {
            self.held.push_back((start, end, bytes as u32));
            self.held_bytes += bytes as u64;
        }
        if start > now {
            self.stats.queue_integral += (start - now) as u128;
            self.stats.max_queue = self.stats.max_queue.max(queued as u32 + 1);
        }
        Admit::Queued { depart_ns: end }
    }

    /// [`admit`](Self::admit) for RED, priority drop and acks-first: the segment
    /// (in packet slot `slot`) may be marked CE, and a scheduled queue keeps the
    /// slot until the transmitter takes it ([`next_tx`](Self::next_tx)).
    pub fn admit_managed(
        &mut self,
        now: u64,
        bytes: usize,
        meta: &crate::packet::PacketMeta,
        seg: &mut Segment,
        slot: u32,
    ) -> Admit {
        self.stats.offered += 1;
        if self.draw_loss(now, meta) {
            self.stats.dropped_loss += 1;
            return Admit::DroppedLoss;
        }
        if self.policed(now, bytes) {
            return Admit::DroppedPolicer;
        }
        let (queued, queued_bytes) = self.backlog(now);
        let low = self.spec.priority_drop && seg.flags.contains(Flags::FAST_START);
        // RED decides first, on the average; a mark lets the packet go on to the
        // hard limit.
        let mut forced = false;
        if let Some(red) = &mut self.red {
            let idle = if queued == 0 {
                now.saturating_sub(self.last_start)
            } else {
                0
            };
            red.update_avg(queued, idle);
            let rng = self.rng.get();
            let verdict = red.decide(|| rng.r#gen::<f64>());
            if verdict != RedVerdict::Pass {
                if red.params.ecn && seg.ecn.is_capable() {
                    seg.ecn = Ecn::Ce;
                    self.stats.ecn_marked += 1;
                } else if verdict == RedVerdict::Forced && self.spec.priority_drop {
                    // §3.3: "Priority drop applies equally well to drop-tail and RED
                    // routers": a forced drop picks its victim like a full buffer.
                    forced = true;
                } else {
                    self.stats.dropped_red += 1;
                    return self.drop_arriving(low);
                }
            }
        }
        let full = self.full(queued, queued_bytes, bytes);
        if (full || forced) && !self.make_room(now, bytes, low, full, forced) {
            if forced {
                self.stats.dropped_red += 1;
            }
            return self.drop_arriving(low);
        }
        let Some(q) = self.sched.as_deref_mut() else {
            return self.fifo_enqueue(now, bytes, queued);
        };
        if q.is_empty() && !self.wake_pending && self.busy_until <= now {
            let end = now + self.tx_ns(bytes);
            self.busy_until = end;
            self.last_start = now;
            return Admit::Queued { depart_ns: end };
        }
        let ack = self.spec.scheduling == Scheduling::AcksFirst
            && seg.payload.is_empty()
            && !seg.flags.syn()
            && !seg.flags.fin();
        q.push(slot, bytes as u32, now, low, ack);
        self.stats.max_queue = self.stats.max_queue.max(q.len() as u32);
        let wake_ns = (!self.wake_pending).then_some(self.busy_until);
        self.wake_pending = true;
        Admit::Waiting { wake_ns }
    }

    fn drop_arriving(&mut self, low: bool) -> Admit {
        self.stats.dropped_queue += 1;
        self.stats.dropped_queue_low += low as u64;
        Admit::DroppedQueue
    }

    /// Priority drop: evicts the low-priority packets nearest the tail until the
    /// arriving packet fits (one, for a packet limit or a forced RED drop). False
    /// if the arriving packet must go instead: it is low priority itself (then it
    /// is the one nearest the tail), or too few low-priority packets wait.
    fn make_room(&mut self, now: u64, bytes: usize, low: bool, full: bool, forced: bool) -> bool {
        if !self.spec.priority_drop || low {
            return false;
        }
        let limit = self.limit;
        let Some(q) = self.sched.as_deref_mut() else {
            return false;
        };
        let (n_low, low_bytes) = q.low();
        let enough = match limit {
            _ if n_low == 0 => false,
            QueueLimit::Bytes(b) if full => q.bytes() - low_bytes + bytes as u64 <= b,
            _ => true,
        };
        if !enough {
            return false;
        }
        loop {
            let w = q.evict_newest_low().expect("a low-priority packet waits");
            self.stats.dropped_queue += 1;
            self.stats.dropped_queue_low += 1;
            self.stats.dropped_red += forced as u64;
            self.stats.queue_integral += (now - w.arrived) as u128;
            self.evicted.push(w.slot);
            let fits = match limit {
                QueueLimit::Bytes(b) if full => q.bytes() + bytes as u64 <= b,
                _ => true,
            };
            if fits {
                return true;
            }
        }
    }

    /// The transmitter of a scheduled queue is free at `now`: it starts the next
    /// packet (acks first, when so scheduled), if one waits.
    pub fn next_tx(&mut self, now: u64) -> Option<Started> {
        self.wake_pending = false;
        let q = self.sched.as_deref_mut()?;
        let w = q.pop()?;
        let more = !q.is_empty();
        self.stats.queue_integral += (now - w.arrived) as u128;
        let end = now.max(self.busy_until) + self.tx_ns(w.bytes as usize);
        self.last_start = now.max(self.busy_until);
        self.busy_until = end;
        let wake_ns = more.then_some(end);
        self.wake_pending = more;
        Some(Started {
            slot: w.slot,
            bytes: w.bytes,
            depart_ns: end,
            wake_ns,
        })
    }

    /// When a packet that leaves at `depart_ns` arrives, whether it may arrive out
    /// of order (held back, or delay variation that lets packets overtake), and
    /// whether a duplicate follows.
    #[inline(always)]
    pub fn propagation(&mut self, payload: u32, depart_ns: u64) -> (u64, bool, bool) {
        let d = self.spec.delay;
        let mut held_back = false;
        if payload > 0 {
            self.data_count += 1;
        }
        if self.spec.reorder.is_none() && self.spec.jitter.is_none() && self.spec.duplicate <= 0.0 {
            // Nothing to draw: the stream is not made for it.
            return (depart_ns + d.as_nanos() as u64, false, false);
        }
        let rng = match self.packet_rng.as_mut() {
            Some(r) => r,
            None => self.rng.get(),
        };
        let mut hold = Duration::ZERO;
        if let Some(r) = self.spec.reorder {
            let listed = payload > 0 && r.packets.contains(&self.data_count);
            if listed || (r.p > 0.0 && rng.gen_bool(r.p)) {
                hold = r.extra;
                self.stats.reordered += 1;
                held_back = true;
            }
        }
        let mut due = depart_ns + d.as_nanos() as u64;
        if let Some(j) = &self.spec.jitter {
            let overtakes;
            (due, overtakes) = self.jitter.apply(j, due, rng);
            held_back |= j.reorder;
            self.stats.reordered += overtakes as u64;
        }
        // The hold comes after the jitter's queue, which keeps its packets in order:
        // a packet held back is overtaken by those sent after it, jitter or not (its
        // hold is another path, not a queue the others wait behind).
        due += hold.as_nanos() as u64;
        let dup = self.spec.duplicate > 0.0 && rng.gen_bool(self.spec.duplicate);
        if dup {
            self.stats.duplicated += 1;
        }
        (due, held_back, dup)
    }
}

/// A link between two nodes: one channel per direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// Node names, shared by every trial's copy of the link.
    pub a: Arc<str>,
    pub b: Arc<str>,
    pub a_to_b: ChannelSpec,
    pub b_to_a: ChannelSpec,
}
