//! The counters of one link direction.

use serde::{Deserialize, Serialize};

/// Counters of one link direction.
///
/// `dropped_queue` counts every packet the queue discipline dropped (a full buffer,
/// a priority-drop eviction, RED); `dropped_red` and `dropped_queue_low` are parts
/// of it. `dropped_policer` counts the policer's drops, before the queue. The queue-length figures count waiting packets, the one being sent
/// excluded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelStats {
    pub offered: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub delivered: u64,
    /// Packets held back (`reorder`) or that overtook an earlier one (`jitter`
    /// with `reorder`).
    pub reordered: u64,
    pub duplicated: u64,
    pub bytes_delivered: u64,
    /// Packets whose experimental option a middlebox stripped.
    pub options_stripped: u64,
    /// Packets whose reserved bits a middlebox cleared ...
    pub reserved_cleared: u64,
    /// ... or that it dropped for them.
    pub dropped_middlebox: u64,
    /// Queue drops of low-priority (fast start) packets; the rest of
    /// `dropped_queue` were other packets.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_queue_low: u64,
    /// Queue drops RED chose (early, or forced above its maximum threshold).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_red: u64,
    /// Packets RED marked CE instead of dropping (RFC 3168 §5).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ecn_marked: u64,
    /// Packets the token-bucket policer dropped ([`super::policer`]); not part of
    /// `dropped_queue` or `dropped_loss`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_policer: u64,
    /// The longest queue seen, packets (the maximum over links when added up).
    #[serde(skip)]
    pub max_queue: u32,
    /// The integral of the queue length over time, packet·ns: the sum of the
    /// packets' waiting times. A packet's wait counts when it leaves the queue
    /// (the FIFO fast path knows it at admission).
    #[serde(skip)]
    pub queue_integral: u128,
    /// The time the integral covers (the trial's length), ns.
    #[serde(skip)]
    pub observed_ns: u64,
    /// Lossy bursts of the burst-position loss model
    /// ([`crate::loss::BurstCounts`]): all, those that lost one packet, two.
    #[serde(skip)]
    pub lossy_bursts: [u64; 3],
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl ChannelStats {
    /// Adds every counter of `other` to `self` (`max_queue`: the larger).
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
        self.dropped_queue_low += other.dropped_queue_low;
        self.dropped_red += other.dropped_red;
        self.ecn_marked += other.ecn_marked;
        self.dropped_policer += other.dropped_policer;
        self.max_queue = self.max_queue.max(other.max_queue);
        self.queue_integral += other.queue_integral;
        self.observed_ns += other.observed_ns;
        for (a, b) in self.lossy_bursts.iter_mut().zip(other.lossy_bursts) {
            *a += b;
        }
    }

    /// The time-weighted mean queue length, packets, if any time was observed.
    pub fn mean_queue(&self) -> Option<f64> {
        (self.observed_ns > 0).then(|| self.queue_integral as f64 / self.observed_ns as f64)
    }
}
