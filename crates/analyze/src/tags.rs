//! Per-packet tags (the talk's "basic signatures based on header information"), as
//! a bit set so that tagging a packet allocates nothing.

use serde::Serialize;

/// One per-packet signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum Tag {
    /// SYN or SYN-ACK.
    Syn,
    /// A SYN or SYN-ACK sent again.
    SynRetransmission,
    /// New data.
    Original,
    /// Data sent before (its cause is given separately).
    Retransmission,
    /// FIN.
    Fin,
    /// RST.
    Rst,
    /// A duplicate ACK (RFC 5681 §2).
    DupAck,
    /// Carries SACK blocks (RFC 2018).
    Sack,
    /// Carries a DSACK (RFC 2883).
    Dsack,
    /// Only changes the advertised window.
    WindowUpdate,
    /// Advertises a zero window.
    ZeroWindow,
    /// Shows an earlier retransmission unnecessary.
    UndoesRetransmission,
    /// Acknowledges data that later SACKed data overtook.
    Reordering,
    /// A Corrective packet (XOR of earlier data, `gentle-aggression-sigcomm13.txt` §5).
    Corrective,
    /// A Proactive copy (§6).
    ProactiveCopy,
    /// A fast start packet (`fast-start-and-sessions.txt` §3).
    FastStart,
    /// IP ECN field is CE (RFC 3168).
    Ce,
    /// The same frame captured again (see the `copies` module): left out of the
    /// analysis.
    CaptureCopy,
}

impl Tag {
    /// Every tag, in bit order.
    pub const ALL: [Tag; 18] = [
        Tag::Syn,
        Tag::SynRetransmission,
        Tag::Original,
        Tag::Retransmission,
        Tag::Fin,
        Tag::Rst,
        Tag::DupAck,
        Tag::Sack,
        Tag::Dsack,
        Tag::WindowUpdate,
        Tag::ZeroWindow,
        Tag::UndoesRetransmission,
        Tag::Reordering,
        Tag::Corrective,
        Tag::ProactiveCopy,
        Tag::FastStart,
        Tag::Ce,
        Tag::CaptureCopy,
    ];

    /// Its name in the CSV.
    pub fn name(self) -> &'static str {
        match self {
            Tag::Syn => "syn",
            Tag::SynRetransmission => "syn-retransmission",
            Tag::Original => "original",
            Tag::Retransmission => "retransmission",
            Tag::Fin => "fin",
            Tag::Rst => "rst",
            Tag::DupAck => "dup-ack",
            Tag::Sack => "sack",
            Tag::Dsack => "dsack",
            Tag::WindowUpdate => "window-update",
            Tag::ZeroWindow => "zero-window",
            Tag::UndoesRetransmission => "undoes-retransmission",
            Tag::Reordering => "reordering",
            Tag::Corrective => "corrective",
            Tag::ProactiveCopy => "proactive-copy",
            Tag::FastStart => "fast-start",
            Tag::Ce => "ce",
            Tag::CaptureCopy => "capture-copy",
        }
    }
}

/// A set of tags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tags(u32);

impl Tags {
    /// Adds a tag.
    pub fn add(&mut self, t: Tag) {
        self.0 |= 1 << t as u8;
    }
    /// Whether `t` is in the set.
    pub fn has(&self, t: Tag) -> bool {
        self.0 & (1 << t as u8) != 0
    }
    /// The tags in the set.
    pub fn iter(self) -> impl Iterator<Item = Tag> {
        Tag::ALL.into_iter().filter(move |&t| self.has(t))
    }
}
