//! Packets in flight: a TCP segment between two nodes, with the metadata the
//! simulator's loss models and records use (never seen by the engine).

use gentle_tcp::Segment;

/// IPv4 header bytes counted on the wire (RFC 791, no options).
pub const IP_HEADER: usize = 20;

/// Simulator-side facts about a packet.
#[derive(Clone, Copy, Debug, Default)]
pub struct PacketMeta {
    /// Flow (session) the packet belongs to; both directions share it.
    pub flow: u32,
    /// Payload bytes.
    pub payload: u32,
    /// Sequence offset of the first payload byte relative to the sender's ISN.
    pub rel_seq: u64,
    /// The application message (response) the first payload byte belongs to, as
    /// sequence offsets `[start, end)`: what `tcpfilter` learns from Content-Length.
    pub message: Option<(u64, u64)>,
    /// Sent by the session's server side.
    pub from_server: bool,
    /// A duplicate made by the link.
    pub duplicate: bool,
    /// A Corrective packet (its payload encodes data already sent).
    pub corrective: bool,
    /// The acknowledgment number relative to the peer's initial sequence number
    /// (the SYN is 0), when the ACK flag is set: the position a packet without
    /// payload is keyed on ([`crate::link::draws`]).
    pub rel_ack: u64,
}

#[derive(Clone, Debug)]
pub struct Packet {
    pub src: u16,
    pub dst: u16,
    pub seg: Segment,
    pub meta: PacketMeta,
}

impl Packet {
    /// Bytes on the wire: IPv4 header + TCP header + payload.
    pub fn wire_len(&self) -> usize {
        IP_HEADER + self.seg.wire_len()
    }
}

/// A slab of packets so events carry a small index, and slots are reused.
#[derive(Debug, Default)]
pub struct Slab {
    slots: Vec<Option<Packet>>,
    free: Vec<u32>,
}

impl Slab {
    pub fn insert(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(p);
                i
            }
            None => {
                self.slots.push(Some(p));
                (self.slots.len() - 1) as u32
            }
        }
    }
    pub fn take(&mut self, i: u32) -> Packet {
        let p = self.slots[i as usize].take().expect("live packet slot");
        self.free.push(i);
        p
    }
    /// Drops the packet in slot `i`.
    pub fn free(&mut self, i: u32) {
        self.slots[i as usize] = None;
        self.free.push(i);
    }
    pub fn get(&self, i: u32) -> &Packet {
        self.slots[i as usize].as_ref().expect("live packet slot")
    }
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        self.slots[i as usize].as_mut().expect("live packet slot")
    }
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }
}
