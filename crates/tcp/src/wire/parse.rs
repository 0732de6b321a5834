//! Parsing wire bytes into segments. Never panics; malformed input is a typed error.

use bytes::Bytes;

use super::Ecn;
use super::{
    Experimental, Flags, KIND_EXPERIMENTAL, MAX_EXPERIMENTAL_DATA, Options, SackBlock, Segment,
    Timestamps, emit::checksum,
};

/// Why a byte string is not a valid TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Fewer than 20 bytes.
    TooShort(usize),
    /// Data offset below 5 words or beyond the end of the buffer.
    BadDataOffset(u8),
    /// An option's length byte is invalid for its kind or runs past the header.
    BadOption {
        /// The option's kind.
        kind: u8,
        /// Its offset in the header.
        offset: usize,
    },
    /// The checksum over the IPv4 pseudo-header does not verify.
    BadChecksum,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::TooShort(n) => {
                write!(f, "segment of {n} bytes is shorter than a TCP header")
            }
            ParseError::BadDataOffset(d) => write!(f, "data offset {d} is invalid"),
            ParseError::BadOption { kind, offset } => {
                write!(f, "malformed option kind {kind} at byte {offset}")
            }
            ParseError::BadChecksum => write!(f, "checksum does not verify"),
        }
    }
}

impl std::error::Error for ParseError {}

impl Segment {
    /// Parses a TCP segment, without checking the checksum.
    pub fn parse(buf: &[u8]) -> Result<Segment, ParseError> {
        if buf.len() < 20 {
            return Err(ParseError::TooShort(buf.len()));
        }
        let be16 = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
        let be32 = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let off_flags = be16(12);
        let doff = (off_flags >> 12) as u8;
        let hdr = doff as usize * 4;
        if doff < 5 || hdr > buf.len() {
            return Err(ParseError::BadDataOffset(doff));
        }
        let options = parse_options(&buf[20..hdr])?;
        Ok(Segment {
            src_port: be16(0),
            dst_port: be16(2),
            seq: be32(4),
            ack: be32(8),
            flags: Flags(off_flags & 0x0fff),
            window: be16(14),
            urgent: be16(18),
            options,
            payload: Bytes::copy_from_slice(&buf[hdr..]),
            ecn: Ecn::NotEct,
        })
    }

    /// Parses a TCP segment and verifies its checksum over the IPv4 pseudo-header.
    pub fn parse_checked(
        buf: &[u8],
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
    ) -> Result<Segment, ParseError> {
        let seg = Segment::parse(buf)?;
        if checksum(src_ip, dst_ip, buf) != 0 {
            return Err(ParseError::BadChecksum);
        }
        Ok(seg)
    }
}

fn parse_options(mut opts: &[u8]) -> Result<Options, ParseError> {
    let mut o = Options::default();
    let total = opts.len();
    while let Some(&kind) = opts.first() {
        let offset = 20 + total - opts.len();
        match kind {
            0 => break,
            1 => {
                opts = &opts[1..];
                continue;
            }
            _ => {}
        }
        let bad = ParseError::BadOption { kind, offset };
        let len = *opts.get(1).ok_or(bad)? as usize;
        if len < 2 || len > opts.len() {
            return Err(bad);
        }
        let body = &opts[2..len];
        match kind {
            2 => {
                if len != 4 {
                    return Err(bad);
                }
                o.mss = Some(u16::from_be_bytes([body[0], body[1]]));
            }
            3 => {
                if len != 3 {
                    return Err(bad);
                }
                o.window_scale = Some(body[0]);
            }
            4 => {
                if len != 2 {
                    return Err(bad);
                }
                o.sack_permitted = true;
            }
            5 => {
                if len < 10 || !(len - 2).is_multiple_of(8) {
                    return Err(bad);
                }
                for b in body.chunks_exact(8) {
                    let left = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let right = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    o.sack.push(SackBlock { left, right });
                }
            }
            8 => {
                if len != 10 {
                    return Err(bad);
                }
                o.timestamps = Some(Timestamps {
                    val: u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                    ecr: u32::from_be_bytes([body[4], body[5], body[6], body[7]]),
                });
            }
            KIND_EXPERIMENTAL => {
                if len < 4 || len - 4 > MAX_EXPERIMENTAL_DATA {
                    return Err(bad);
                }
                let magic = u16::from_be_bytes([body[0], body[1]]);
                o.experimental = Experimental::new(magic, &body[2..]);
            }
            _ => {} // unknown option: skipped (RFC 9293 §3.1: must be ignored)
        }
        opts = &opts[len..];
    }
    Ok(o)
}
