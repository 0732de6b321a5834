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
    /// A packet of nothing, to be written over.
    fn empty() -> Packet {
        Packet {
            src: 0,
            dst: 0,
            seg: Segment::default(),
            meta: PacketMeta::default(),
        }
    }

    /// Bytes on the wire: IPv4 header + TCP header + payload.
    pub fn wire_len(&self) -> usize {
        IP_HEADER + self.seg.wire_len()
    }
}

/// A slab of packets so events carry a small index, and slots are reused. A freed
/// slot keeps its packet until the next one is written over it, so that a packet
/// built in place ([`vacant`](Self::vacant)) costs no write but its own.
#[derive(Debug, Default)]
pub struct Slab {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Whether each slot holds a live packet (checked in debug builds only).
    #[cfg(debug_assertions)]
    live: Vec<bool>,
}

impl Slab {
    pub fn insert(&mut self, p: Packet) -> u32 {
        let i = self.vacant();
        self.slots[i as usize] = p;
        i
    }
    /// A slot for a packet to be built in place, whole: what it holds is not to
    /// be read. It is live until [`free`](Self::free)d.
    pub fn vacant(&mut self) -> u32 {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push(Packet::empty());
                #[cfg(debug_assertions)]
                self.live.push(false);
                (self.slots.len() - 1) as u32
            }
        };
        self.set_live(i, true);
        i
    }
    pub fn take(&mut self, i: u32) -> Packet {
        let p = self.get(i).clone(); // the slot's copy goes when it is next written
        self.free(i);
        p
    }
    /// Frees slot `i`; its packet is dropped when the slot is next written.
    pub fn free(&mut self, i: u32) {
        self.set_live(i, false);
        self.free.push(i);
    }
    pub fn get(&self, i: u32) -> &Packet {
        self.check_live(i);
        &self.slots[i as usize]
    }
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        self.check_live(i);
        &mut self.slots[i as usize]
    }
    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        #[cfg(debug_assertions)]
        self.live.clear();
    }
    #[inline(always)]
    fn set_live(&mut self, _i: u32, _live: bool) {
        #[cfg(debug_assertions)]
        {
            assert_ne!(
                self.live[_i as usize], _live,
                "packet slot {_i} live twice or freed twice"
            );
            self.live[_i as usize] = _live;
        }
    }
    #[inline(always)]
    fn check_live(&self, _i: u32) {
        #[cfg(debug_assertions)]
        assert!(
            self.live[_i as usize],
            "packet slot {_i} read after it was freed"
        );
    }
}
