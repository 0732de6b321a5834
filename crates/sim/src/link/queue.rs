//! The waiting packets of a link direction whose discipline decides departures
//! after admission: priority drop (`fast-start-and-sessions.txt` §3.3, implemented
//! as §7.2 describes: "When a packet needs to be dropped and a low-priority packet
//! is in the queue, the one closest to the tail of the queue is dropped") removes
//! packets from the middle of the queue, and acks-first scheduling (§5) serves small
//! ACK packets before data. The transmitter takes the next packet when the current
//! one has been serialised; it is never preempted (§5: "acks first scheduling does
//! not help avoid the delay due to a data packet whose transmission is in
//! progress").
//!
//! The packet being transmitted is not in this queue (as ns-2 and ns-3 count a
//! queue's length).

use std::collections::VecDeque;

/// One waiting packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The simulator's packet slot.
    pub slot: u32,
    /// Bytes on the wire.
    pub bytes: u32,
    /// When it joined the queue, ns.
    pub arrived: u64,
    /// Arrival order over both classes: the newest packet is nearest the tail.
    pub order: u64,
    /// Low priority (high drop priority, §3.3): a fast start packet.
    pub low: bool,
}

/// The queue: one class, or two when pure ACKs go first.
#[derive(Clone, Debug, Default)]
pub struct TxQueue {
    /// Pure ACKs, when they are served first.
    acks: VecDeque<Waiting>,
    /// Everything else (everything, under FIFO).
    rest: VecDeque<Waiting>,
    bytes: u64,
    /// Low-priority packets waiting and their bytes, so that a full queue without
    /// any costs no search.
    low: u32,
    low_bytes: u64,
    next_order: u64,
}

impl TxQueue {
    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.acks.len() + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.acks.is_empty() && self.rest.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Low-priority packets waiting and their bytes.
    pub fn low(&self) -> (u32, u64) {
        (self.low, self.low_bytes)
    }

    /// Adds a packet at the tail of its class (`ack`: the class served first).
    pub fn push(&mut self, slot: u32, bytes: u32, arrived: u64, low: bool, ack: bool) {
        let w = Waiting {
            slot,
            bytes,
            arrived,
            order: self.next_order,
            low,
        };
        self.next_order += 1;
        self.bytes += bytes as u64;
        if low {
            self.low += 1;
            self.low_bytes += bytes as u64;
        }
        if ack {
            self.acks.push_back(w);
        } else {
            self.rest.push_back(w);
        }
    }

    /// The next packet to transmit: the oldest ACK if any, else the oldest other.
    pub fn pop(&mut self) -> Option<Waiting> {
        let w = self.acks.pop_front().or_else(|| self.rest.pop_front())?;
        self.forget(&w);
        Some(w)
    }

    /// Removes the low-priority packet nearest the tail of the queue (the newest),
    /// if one waits.
    pub fn evict_newest_low(&mut self) -> Option<Waiting> {
        if self.low == 0 {
            return None;
        }
        let newest = |q: &VecDeque<Waiting>| q.iter().rposition(|w| w.low);
        let a = newest(&self.acks);
        let r = newest(&self.rest);
        let from_acks = match (a, r) {
            (Some(i), Some(j)) => self.acks[i].order > self.rest[j].order,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let w = if from_acks {
            self.acks.remove(a.expect("found"))
        } else {
            self.rest.remove(r.expect("found"))
        }?;
        self.forget(&w);
        Some(w)
    }

    /// The waiting packets in the order they will be sent.
    pub fn iter(&self) -> impl Iterator<Item = &Waiting> {
        self.acks.iter().chain(self.rest.iter())
    }

    fn forget(&mut self, w: &Waiting) {
        self.bytes -= w.bytes as u64;
        if w.low {
            self.low -= 1;
            self.low_bytes -= w.bytes as u64;
        }
    }
}
