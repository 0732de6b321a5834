//! TCP segments as values and as exact wire bytes.
//!
//! Header layout: RFC 9293 §3.1. Options: MSS (RFC 9293 §3.2), window scale and
//! timestamps (RFC 7323 §2.2, §3.2), SACK-permitted and SACK (RFC 2018 §2, §3),
//! and the shared experimental option kind 254 with a 16-bit magic number
//! (RFC 6994), which Corrective uses.
//!
//! [`Segment::emit`] writes the header (with checksum over the IPv4 pseudo-header)
//! and payload; [`Segment::parse`] reads them back. `parse(emit(s)) == s` for every
//! segment whose options fit in 40 bytes; this is property-tested.

mod emit;
mod parse;

pub use emit::{EmitError, checksum, ipv4_header_checksum};
pub use parse::ParseError;

use bytes::Bytes;

/// TCP header flags, including the four reserved bits (RFC 9293 §3.1 "Rsrvd").
///
/// Bit layout follows the 16-bit word that holds data offset and flags: the low
/// 8 bits are CWR..FIN, bits 8–11 are the reserved bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags(pub u16);

impl Flags {
    /// No more data from the sender.
    pub const FIN: Flags = Flags(0x001);
    /// Synchronize sequence numbers.
    pub const SYN: Flags = Flags(0x002);
    /// Reset the connection.
    pub const RST: Flags = Flags(0x004);
    /// Push.
    pub const PSH: Flags = Flags(0x008);
    /// The acknowledgment field is significant.
    pub const ACK: Flags = Flags(0x010);
    /// The urgent pointer is significant.
    pub const URG: Flags = Flags(0x020);
    /// ECN-Echo (RFC 3168).
    pub const ECE: Flags = Flags(0x040);
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: Flags = Flags(0x080);
    /// Mask of the four reserved bits (bits 8..=11 of the offset/flags word).
    ///
    /// How gentle uses them, from the highest: `0x800` marks a Proactive copy
    /// ([`Flags::COPY`], `gentle-aggression-sigcomm13.txt` §6: "one of the reserved
    /// but unused bits"); `0x400` is kept for TCP fast start's low-priority mark
    /// (`fast-start-and-sessions.txt` §7.1, "an unused bit in the TCP header");
    /// `0x100`, the lowest, is left alone: it was ECN's nonce sum (RFC 3540) and is
    /// AccECN's AE bit today.
    pub const RESERVED_MASK: u16 = 0x0f00;
    /// A Proactive copy (`gentle-aggression-sigcomm13.txt` §6): the highest reserved
    /// bit.
    pub const COPY: Flags = Flags(0x800);
    /// A TCP fast start packet, low priority at routers that implement priority
    /// drop (`fast-start-and-sessions.txt` §7.1: "the fast start bit set (an unused
    /// bit in the TCP header)"; §3.3). The second-highest reserved bit: Proactive's
    /// copy flag keeps the highest, and the two never share a packet's meaning
    /// (a copy of a fast-start segment carries both).
    pub const FAST_START: Flags = Flags(0x400);

    /// No flag set.
    pub const fn empty() -> Flags {
        Flags(0)
    }
    /// Every flag of `other` is set.
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Sets the flags of `other`.
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    /// Clears the flags of `other`.
    pub fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }
    /// SYN is set.
    pub const fn syn(self) -> bool {
        self.contains(Flags::SYN)
    }
    /// ACK is set.
    pub const fn ack(self) -> bool {
        self.contains(Flags::ACK)
    }
    /// FIN is set.
    pub const fn fin(self) -> bool {
        self.contains(Flags::FIN)
    }
    /// RST is set.
    pub const fn rst(self) -> bool {
        self.contains(Flags::RST)
    }
    /// The four reserved bits, as a number 0..=15 (bit 0 = lowest reserved bit).
    pub const fn reserved(self) -> u8 {
        ((self.0 & Self::RESERVED_MASK) >> 8) as u8
    }
    /// Set the four reserved bits (only the low 4 bits of `bits` are used).
    pub fn set_reserved(&mut self, bits: u8) {
        self.0 = (self.0 & !Self::RESERVED_MASK) | (((bits & 0x0f) as u16) << 8);
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

/// Maximum number of SACK blocks that fit in 40 option bytes (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 4;
/// Maximum TCP option space (RFC 9293 §3.1: data offset ≤ 15 words).
pub const MAX_OPTION_LEN: usize = 40;
/// Experimental option kind shared with a magic number (RFC 6994).
pub const KIND_EXPERIMENTAL: u8 = 254;
/// Maximum data bytes carried by the experimental option after its magic number.
pub const MAX_EXPERIMENTAL_DATA: usize = 16;

/// A SACK block `[left, right)` in wire sequence numbers (RFC 2018 §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    /// First sequence number of the block.
    pub left: u32,
    /// Sequence number just past the block.
    pub right: u32,
}

/// A fixed-capacity list of SACK blocks (no allocation per segment).
#[derive(Clone, Copy, Debug, Default)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    len: u8,
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for SackBlocks {}
impl std::hash::Hash for SackBlocks {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_slice().hash(h)
    }
}

impl SackBlocks {
    /// No blocks.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a block; returns false (and drops it) when full.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = b;
            self.len += 1;
            true
        } else {
            false
        }
    }
    /// Blocks held.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// No blocks held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Keeps the first `n` blocks.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
    /// The blocks, first reported first.
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
}

/// RFC 7323 timestamps option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Timestamps {
    /// TSval: the sender's timestamp clock.
    pub val: u32,
    /// TSecr: the echoed TSval.
    pub ecr: u32,
}

/// The experimental option (kind 254, RFC 6994): magic number plus up to
/// [`MAX_EXPERIMENTAL_DATA`] bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Experimental {
    /// The experiment identifier (RFC 6994 ExID).
    pub magic: u16,
    data: [u8; MAX_EXPERIMENTAL_DATA],
    len: u8,
}

impl PartialEq for Experimental {
    fn eq(&self, other: &Self) -> bool {
        self.magic == other.magic && self.data() == other.data()
    }
}
impl Eq for Experimental {}
impl std::hash::Hash for Experimental {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.magic.hash(h);
        self.data().hash(h)
    }
}

impl Experimental {
    /// Returns `None` when `data` is longer than [`MAX_EXPERIMENTAL_DATA`].
    pub fn new(magic: u16, data: &[u8]) -> Option<Self> {
        if data.len() > MAX_EXPERIMENTAL_DATA {
            return None;
        }
        let mut e = Experimental {
            magic,
            data: [0; MAX_EXPERIMENTAL_DATA],
            len: data.len() as u8,
        };
        e.data[..data.len()].copy_from_slice(data);
        Some(e)
    }
    /// The bytes after the ExID.
    pub fn data(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }
    /// Bytes on the wire: kind, length, magic, data.
    pub fn wire_len(&self) -> usize {
        4 + self.len as usize
    }
}

/// The TCP options gentle understands. Unknown options are skipped on parse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Maximum segment size (kind 2; SYN only).
    pub mss: Option<u16>,
    /// Window-scale shift (kind 3; SYN only).
    pub window_scale: Option<u8>,
    /// SACK permitted (kind 4; SYN only).
    pub sack_permitted: bool,
    /// SACK blocks (kind 5).
    pub sack: SackBlocks,
    /// Timestamps (kind 8).
    pub timestamps: Option<Timestamps>,
    /// The experimental option (kind 254).
    pub experimental: Option<Experimental>,
}

impl Options {
    /// Length on the wire, padded to a multiple of 4, in the layout [`Segment::emit`] uses.
    pub fn wire_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        // SACK-permitted and timestamps share a 12-byte word group as Linux lays them out;
        // alone, each is padded with NOPs to a word.
        match (self.sack_permitted, self.timestamps.is_some()) {
            (true, true) => n += 12,
            (true, false) => n += 4,
            (false, true) => n += 12,
            (false, false) => {}
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        if !self.sack.is_empty() {
            n += 4 + 8 * self.sack.len();
        }
        if let Some(e) = &self.experimental {
            n += (e.wire_len() + 3) & !3;
        }
        n
    }
}

/// A TCP segment: header fields, options and payload.
///
/// `payload` is a [`Bytes`] so that segments share the sender's buffer instead of
/// copying it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Control bits, the reserved ones included.
    pub flags: Flags,
    /// Window field, unscaled.
    pub window: u16,
    /// Urgent pointer.
    pub urgent: u16,
    /// Options.
    pub options: Options,
    /// Data.
    pub payload: Bytes,
    /// The IP header's ECN field (RFC 3168 §5), carried with the segment between
    /// the engine and the network. It is not part of the TCP bytes: [`emit`]
    /// ignores it and [`parse`] leaves it [`Ecn::NotEct`]; a network that carries
    /// segments in IP packets reads and writes it there.
    ///
    /// [`emit`]: Segment::emit
    /// [`parse`]: Segment::parse
    pub ecn: Ecn,
}

/// The ECN field of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// Not ECN-capable transport (`00`).
    #[default]
    NotEct,
    /// ECN-capable transport, ECT(1) (`01`).
    Ect1,
    /// ECN-capable transport, ECT(0) (`10`), what an RFC 3168 sender sets.
    Ect0,
    /// Congestion experienced (`11`), set by a router instead of dropping.
    Ce,
}

impl Ecn {
    /// The two-bit codepoint, as in the IP header.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }
    /// The codepoint of two bits (higher bits ignored).
    pub const fn from_bits(b: u8) -> Ecn {
        match b & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// ECT(0), ECT(1) or CE: a router may mark the packet instead of dropping it
    /// (RFC 3168 §5).
    pub const fn is_capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

impl Segment {
    /// Header length in bytes (20 + padded options).
    pub fn header_len(&self) -> usize {
        20 + self.options.wire_len()
    }
    /// Total length of the TCP segment on the wire.
    pub fn wire_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }
    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32 + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}
