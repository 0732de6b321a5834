//! One direction of a link: serialisation at a rate, a queue discipline, a loss
//! model, propagation delay, optional reordering and duplication.
//!
//! Loss is decided when a packet enters the link (like a filter on the sender's
//! output, as `tlp-measurement-tum13.txt` §3.3 drops packets), then the packet
//! queues for the transmitter, is serialised at `rate`, and arrives `delay` later
//! (plus `reorder.extra` for a reordered packet).
//!
//! A drop-tail queue is first in, first out, so a packet's departure is known the
//! moment it is admitted: it starts when the transmitter frees up and takes its
//! serialisation time. The channel keeps the departure times of the packets it holds
//! and the simulator schedules one arrival per packet, with no per-packet
//! transmitter events. (A discipline that reorders its queue would schedule the
//! transmitter instead.)

use std::collections::VecDeque;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::loss::{AppliesTo, Loss, LossModel};

/// Queue capacity of a drop-tail queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueLimit {
    Unlimited,
    Packets(u32),
    Bytes(u64),
}

/// Queue discipline. Drop-tail now; RED/ECN and priority drop extend this enum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueDiscipline {
    DropTail(QueueLimit),
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
    pub loss: LossModel,
    pub loss_applies: AppliesTo,
    pub reorder: Option<Reorder>,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
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
            loss: LossModel::None,
            loss_applies: AppliesTo::All,
            reorder: None,
            duplicate: 0.0,
            strip_option: 0.0,
            seq_shift: 0,
            ack_shift: 0,
            reserved_bits: ReservedBits::Pass,
        }
    }
}

/// Counters of one link direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelStats {
    pub offered: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub delivered: u64,
    pub reordered: u64,
    pub duplicated: u64,
    pub bytes_delivered: u64,
    /// Packets whose experimental option a middlebox stripped.
    pub options_stripped: u64,
    /// Packets whose reserved bits a middlebox cleared ...
    pub reserved_cleared: u64,
    /// ... or that it dropped for them.
    pub dropped_middlebox: u64,
}

impl ChannelStats {
    /// Adds every counter of `other` to `self`.
    pub fn add(&mut self, other: &ChannelStats) {
        self.offered += other.offered;
        self.dropped_loss += other.dropped_loss;
        self.dropped_queue += other.dropped_queue;
        self.delivered += other.delivered;
        self.reordered += other.reordered;
        self.duplicated += other.duplicated;
        self.bytes_delivered += other.bytes_delivered;
        self.options_stripped += other.options_stripped;
        self.reserved_cleared += other.reserved_cleared;
        self.dropped_middlebox += other.dropped_middlebox;
    }
}

/// Outcome of offering a packet to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Queued; the last bit leaves the sender at `depart_ns`.
    Queued {
        depart_ns: u64,
    },
    DroppedLoss,
    DroppedQueue,
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
    pub rng: ChaCha8Rng,
    pub stats: ChannelStats,
    data_count: u32,
    /// A middlebox rewrites packets on this direction.
    rewrites: bool,
}

impl Channel {
    pub fn new(spec: ChannelSpec, from: u16, to: u16, rng: ChaCha8Rng) -> Self {
        let loss = Loss::new(spec.loss.clone(), spec.loss_applies);
        let rewrites = spec.strip_option > 0.0
            || spec.seq_shift != 0
            || spec.ack_shift != 0
            || spec.reserved_bits != ReservedBits::Pass;
        Channel {
            rewrites,
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
            Some(r) => ((bytes as u128 * 8 * 1_000_000_000) / r as u128) as u64,
        }
    }

    /// Packets waiting for the transmitter at `now` (the one being sent excluded,
    /// as ns-2 and ns-3 count it) and their bytes.
    pub fn backlog(&mut self, now: u64) -> (usize, u64) {
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
            && self.rng.gen_bool(self.spec.strip_option)
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
    pub fn admit(&mut self, now: u64, bytes: usize, meta: &crate::packet::PacketMeta) -> Admit {
        self.stats.offered += 1;
        if self.loss.drop_at(meta, now, &mut self.rng) {
            self.stats.dropped_loss += 1;
            return Admit::DroppedLoss;
        }
        let QueueDiscipline::DropTail(limit) = self.spec.queue;
        let (queued, queued_bytes) = self.backlog(now);
        let full = match limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => queued as u64 >= n as u64,
            QueueLimit::Bytes(b) => queued_bytes + bytes as u64 > b,
        };
        if full {
            self.stats.dropped_queue += 1;
            return Admit::DroppedQueue;
        }
        let start = self.busy_until.max(now);
        let end = start + self.tx_ns(bytes);
        self.busy_until = end;
        if end > now {
            self.held.push_back((start, end, bytes as u32));
            self.held_bytes += bytes as u64;
        }
        Admit::Queued { depart_ns: end }
    }

    /// Propagation delay for one packet, whether it was held back (reordered), and
    /// whether a duplicate follows.
    pub fn propagation(&mut self, payload: u32) -> (Duration, bool, bool) {
        let mut d = self.spec.delay;
        let mut held_back = false;
        if payload > 0 {
            self.data_count += 1;
        }
        if let Some(r) = self.spec.reorder {
            let listed = payload > 0 && r.packets.contains(&self.data_count);
            if listed || (r.p > 0.0 && self.rng.gen_bool(r.p)) {
                d += r.extra;
                self.stats.reordered += 1;
                held_back = true;
            }
        }
        let dup = self.spec.duplicate > 0.0 && self.rng.gen_bool(self.spec.duplicate);
        if dup {
            self.stats.duplicated += 1;
        }
        (d, held_back, dup)
    }
}

/// A link between two nodes: one channel per direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    pub a: String,
    pub b: String,
    pub a_to_b: ChannelSpec,
    pub b_to_a: ChannelSpec,
}
