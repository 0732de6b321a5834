//! One direction of a link: serialisation at a rate, a queue discipline, a loss
//! model, propagation delay, optional reordering and duplication.
//!
//! Loss is decided when a packet enters the link (like a filter on the sender's
//! output, as `tlp-measurement-tum13.txt` §3.3 drops packets), then the packet
//! queues for the transmitter, is serialised at `rate`, and arrives `delay` later
//! (plus `reorder.extra` for a reordered packet).

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
    }
}

/// Outcome of offering a packet to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Queued; if `start_tx`, the transmitter was idle and must be started.
    Queued {
        start_tx: bool,
    },
    DroppedLoss,
    DroppedQueue,
}

#[derive(Debug)]
pub struct Channel {
    pub spec: ChannelSpec,
    pub from: u16,
    pub to: u16,
    pub queue: VecDeque<(u32, u32)>,
    pub queued_bytes: u64,
    pub busy: bool,
    pub loss: Loss,
    pub rng: ChaCha8Rng,
    pub stats: ChannelStats,
    data_count: u32,
}

impl Channel {
    pub fn new(spec: ChannelSpec, from: u16, to: u16, rng: ChaCha8Rng) -> Self {
        let loss = Loss::new(spec.loss.clone(), spec.loss_applies);
        Channel {
            spec,
            from,
            to,
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy: false,
            loss,
            rng,
            stats: Default::default(),
            data_count: 0,
        }
    }

    /// Serialisation time of `bytes` at the link rate.
    pub fn tx_time(&self, bytes: usize) -> Duration {
        match self.spec.rate_bps {
            None => Duration::ZERO,
            Some(r) => {
                Duration::from_nanos(((bytes as u128 * 8 * 1_000_000_000) / r as u128) as u64)
            }
        }
    }

    /// Offers a packet (slot `pkt`, `bytes` long): loss model first, then the queue.
    pub fn admit(&mut self, pkt: u32, bytes: usize, meta: &crate::packet::PacketMeta) -> Admit {
        self.stats.offered += 1;
        if self.loss.drop(meta, &mut self.rng) {
            self.stats.dropped_loss += 1;
            return Admit::DroppedLoss;
        }
        let QueueDiscipline::DropTail(limit) = self.spec.queue;
        // The packet in transmission does not count against the queue (ns-2/ns-3 style).
        let full = match limit {
            QueueLimit::Unlimited => false,
            QueueLimit::Packets(n) => self.queue.len() as u64 >= n as u64,
            QueueLimit::Bytes(b) => self.queued_bytes + bytes as u64 > b,
        };
        if full {
            self.stats.dropped_queue += 1;
            return Admit::DroppedQueue;
        }
        self.queue.push_back((pkt, bytes as u32));
        self.queued_bytes += bytes as u64;
        let start_tx = !self.busy;
        if start_tx {
            self.busy = true;
        }
        Admit::Queued { start_tx }
    }

    /// Takes the next packet to transmit.
    pub fn next_tx(&mut self) -> Option<(u32, u32)> {
        let (p, b) = self.queue.pop_front()?;
        self.queued_bytes -= b as u64;
        Some((p, b))
    }

    /// Propagation delay for one packet, and whether a duplicate follows.
    pub fn propagation(&mut self, payload: u32) -> (Duration, bool) {
        let mut d = self.spec.delay;
        if payload > 0 {
            self.data_count += 1;
        }
        if let Some(r) = self.spec.reorder {
            let listed = payload > 0 && r.packets.contains(&self.data_count);
            if listed || (r.p > 0.0 && self.rng.gen_bool(r.p)) {
                d += r.extra;
                self.stats.reordered += 1;
            }
        }
        let dup = self.spec.duplicate > 0.0 && self.rng.gen_bool(self.spec.duplicate);
        if dup {
            self.stats.duplicated += 1;
        }
        (d, dup)
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
