//! Corrective: XOR forward error correction inside TCP (`gentle-aggression-sigcomm13.txt`
//! §5 and §7; in IETF form draft-flach-tcpm-fec-00, "TCP Instant Recovery").
//!
//! - [`option`]: the Corrective option (experimental kind 254 with a 16-bit magic
//!   number, RFC 6994): the encoding offered on SYN/SYN-ACK, then a flags byte —
//!   ENCODED, R_SUCC, R_ACK, R_FAIL — and, in the long form, a 24-bit length, on
//!   every packet of a Corrective connection.
//! - [`encoder`]: the sender groups the new data sent within a time window (at most
//!   16 MSS of bytes), XORs it along MSS boundaries into one payload, and sends that
//!   Corrective packet RTT/4 after the data it encodes.
//! - [`decoder`]: the receiver rebuilds at most MSS contiguous missing bytes from a
//!   Corrective packet and the bytes it holds (out of order, or in order and kept in
//!   a history of the last 16 MSS even after the application read them).
//!
//! The connection's side of it — negotiation, the option on every packet, the
//! R_SUCC/R_ACK congestion signal, R_FAIL's fast retransmission and the middlebox
//! fallback — lives in `connection/corrective.rs`.

pub mod decoder;
pub mod encoder;
pub mod option;

/// Most MSS-sized blocks one Corrective packet encodes (§5: "up to a maximum of
/// sixteen MSS bytes of packets").
pub const MAX_BLOCKS: u64 = 16;

pub use decoder::{Decoded, decode};
pub use encoder::{Encoded, Encoder};
pub use option::{CorrectiveOption, ENCODING_XOR, MAGIC};
