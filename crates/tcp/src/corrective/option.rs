//! The Corrective option (draft-flach-tcpm-fec-00 §4; `gentle-aggression-sigcomm13.txt`
//! §5 and Figure 7).
//!
//! It uses the shared experimental option kind 254 with a 16-bit magic number
//! (RFC 6994 §3) so that it never collides with another experiment:
//!
//! ```text
//! SYN, SYN-ACK:      | 254 | 5 | magic (16) | encoding (8) |
//! other, short form: | 254 | 5 | magic (16) | flags (8) |
//! other, long form:  | 254 | 8 | magic (16) | flags (8) | length (24) |
//! ```
//!
//! The length is relative, never an absolute sequence number, so that middleboxes
//! that translate sequence numbers cannot break it (§7): for ENCODED it is the
//! number of bytes encoded from the packet's own sequence number; for R_FAIL it is
//! the extent of the lost range counted from the packet's ACK number.

use crate::wire::{Experimental, Segment};

/// The 16-bit experiment identifier gentle puts after kind 254 (RFC 6994 §3 "ExID").
/// The draft leaves the value to IANA's ExID registry; gentle uses ASCII "IR"
/// (Instant Recovery).
pub const MAGIC: u16 = 0x4952;

/// Encoding byte on SYN/SYN-ACK: XOR of MSS-aligned blocks (the only one §5 uses).
pub const ENCODING_XOR: u8 = 1;

/// Flag bits of the flags byte.
pub mod flags {
    /// The payload is an XOR of the encoded range (§5 "ENC flag").
    pub const ENCODED: u8 = 0x80;
    /// RECOVERY_SUCCESSFUL: the receiver rebuilt data; the sender must reduce cwnd.
    pub const R_SUCC: u8 = 0x40;
    /// RECOVERY_CWR: the sender has reduced cwnd; the receiver may stop R_SUCC.
    pub const R_ACK: u8 = 0x20;
    /// RECOVERY_FAILED: too much was missing; the length gives the lost range.
    pub const R_FAIL: u8 = 0x10;
}

/// Largest value of the 24-bit length field.
pub const MAX_LENGTH: u32 = (1 << 24) - 1;

/// A decoded Corrective option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorrectiveOption {
    /// On a SYN or SYN-ACK: the encoding offered.
    Offer {
        /// The encoding (XOR is the only one).
        encoding: u8,
    },
    /// On any other segment.
    Data {
        /// ENCODED, R_SUCC, R_ACK, R_FAIL bits.
        flags: u8,
        /// The long form's 24-bit length.
        length: Option<u32>,
    },
}

impl CorrectiveOption {
    /// The flag bits (none on an offer).
    pub fn flags(self) -> u8 {
        match self {
            CorrectiveOption::Offer { .. } => 0,
            CorrectiveOption::Data { flags, .. } => flags,
        }
    }
    /// `flag` is set.
    pub fn has(self, flag: u8) -> bool {
        self.flags() & flag != 0
    }
    /// The length field, when present.
    pub fn length(self) -> Option<u32> {
        match self {
            CorrectiveOption::Data { length, .. } => length,
            CorrectiveOption::Offer { .. } => None,
        }
    }

    /// The option as the experimental option of a segment.
    pub fn to_experimental(self) -> Experimental {
        let e = match self {
            CorrectiveOption::Offer { encoding } => Experimental::new(MAGIC, &[encoding]),
            CorrectiveOption::Data {
                flags,
                length: None,
            } => Experimental::new(MAGIC, &[flags]),
            CorrectiveOption::Data {
                flags,
                length: Some(l),
            } => {
                let l = l.min(MAX_LENGTH);
                Experimental::new(MAGIC, &[flags, (l >> 16) as u8, (l >> 8) as u8, l as u8])
            }
        };
        e.expect("at most 4 data bytes")
    }

    /// The Corrective option of `seg`, if it carries one.
    pub fn of(seg: &Segment) -> Option<CorrectiveOption> {
        Self::from_experimental(seg.options.experimental.as_ref(), seg.flags.syn())
    }

    /// Whether `seg` is a Corrective packet (its option carries ENCODED).
    pub fn is_encoded(seg: &Segment) -> bool {
        Self::of(seg).is_some_and(|o| o.has(flags::ENCODED))
    }

    /// Reads the option from a segment's experimental option: `None` if it is absent,
    /// carries another experiment's magic number, or has a length this format does
    /// not define. `syn` says whether the segment is a SYN or SYN-ACK.
    pub fn from_experimental(e: Option<&Experimental>, syn: bool) -> Option<CorrectiveOption> {
        let e = e?;
        if e.magic != MAGIC {
            return None;
        }
        match (syn, e.data()) {
            (true, [encoding]) => Some(CorrectiveOption::Offer {
                encoding: *encoding,
            }),
            (false, [flags]) => Some(CorrectiveOption::Data {
                flags: *flags,
                length: None,
            }),
            (false, [flags, a, b, c]) => Some(CorrectiveOption::Data {
                flags: *flags,
                length: Some((*a as u32) << 16 | (*b as u32) << 8 | *c as u32),
            }),
            _ => None,
        }
    }
}
