//! Serialisation of segments to wire bytes (RFC 9293 §3.1, option layouts as Linux
//! emits them: `tcp_options_write` in net/ipv4/tcp_output.c).

use super::{KIND_EXPERIMENTAL, MAX_OPTION_LEN, Segment};

const NOP: u8 = 1;
const KIND_MSS: u8 = 2;
const KIND_WSCALE: u8 = 3;
const KIND_SACK_PERM: u8 = 4;
const KIND_SACK: u8 = 5;
const KIND_TS: u8 = 8;

/// Error returned by [`Segment::emit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The options need more than 40 bytes.
    OptionsTooLong(usize),
    /// The output buffer is shorter than [`Segment::wire_len`].
    BufferTooShort {
        /// Bytes the segment needs.
        needed: usize,
        /// Bytes the buffer has.
        got: usize,
    },
}

impl std::fmt::Display for EmitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmitError::OptionsTooLong(n) => write!(f, "TCP options need {n} bytes, at most 40 fit"),
            EmitError::BufferTooShort { needed, got } => {
                write!(
                    f,
                    "buffer of {got} bytes is too short for a {needed}-byte segment"
                )
            }
        }
    }
}

impl std::error::Error for EmitError {}

impl Segment {
    /// Writes the segment into `buf` and returns the number of bytes written.
    ///
    /// The checksum covers the IPv4 pseudo-header built from `src_ip` and `dst_ip`
    /// (RFC 9293 §3.1, "Checksum").
    pub fn emit(
        &self,
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
        buf: &mut [u8],
    ) -> Result<usize, EmitError> {
        let opt_len = self.options.wire_len();
        if opt_len > MAX_OPTION_LEN {
            return Err(EmitError::OptionsTooLong(opt_len));
        }
        let hdr = 20 + opt_len;
        let total = hdr + self.payload.len();
        if buf.len() < total {
            return Err(EmitError::BufferTooShort {
                needed: total,
                got: buf.len(),
            });
        }
        buf[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        buf[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        buf[4..8].copy_from_slice(&self.seq.to_be_bytes());
        buf[8..12].copy_from_slice(&self.ack.to_be_bytes());
        let off_flags: u16 = (((hdr / 4) as u16) << 12) | (self.flags.0 & 0x0fff);
        buf[12..14].copy_from_slice(&off_flags.to_be_bytes());
        buf[14..16].copy_from_slice(&self.window.to_be_bytes());
        buf[16..18].copy_from_slice(&[0, 0]);
        buf[18..20].copy_from_slice(&self.urgent.to_be_bytes());
        let mut p = 20;
        let o = &self.options;
        let mut put = |bytes: &[u8], p: &mut usize| {
            buf[*p..*p + bytes.len()].copy_from_slice(bytes);
            *p += bytes.len();
        };
        if let Some(mss) = o.mss {
            let m = mss.to_be_bytes();
            put(&[KIND_MSS, 4, m[0], m[1]], &mut p);
        }
        match (o.sack_permitted, o.timestamps) {
            (true, Some(ts)) => {
                put(&[KIND_SACK_PERM, 2, KIND_TS, 10], &mut p);
                put(&ts.val.to_be_bytes(), &mut p);
                put(&ts.ecr.to_be_bytes(), &mut p);
            }
            (false, Some(ts)) => {
                put(&[NOP, NOP, KIND_TS, 10], &mut p);
                put(&ts.val.to_be_bytes(), &mut p);
                put(&ts.ecr.to_be_bytes(), &mut p);
            }
            (true, None) => put(&[NOP, NOP, KIND_SACK_PERM, 2], &mut p),
            (false, None) => {}
        }
        if let Some(ws) = o.window_scale {
            put(&[NOP, KIND_WSCALE, 3, ws], &mut p);
        }
        if !o.sack.is_empty() {
            put(&[NOP, NOP, KIND_SACK, 2 + 8 * o.sack.len() as u8], &mut p);
            for b in o.sack.as_slice() {
                put(&b.left.to_be_bytes(), &mut p);
                put(&b.right.to_be_bytes(), &mut p);
            }
        }
        if let Some(e) = &o.experimental {
            let len = e.wire_len();
            let pad = ((len + 3) & !3) - len;
            for _ in 0..pad {
                put(&[NOP], &mut p);
            }
            put(&[KIND_EXPERIMENTAL, len as u8], &mut p);
            put(&e.magic.to_be_bytes(), &mut p);
            put(e.data(), &mut p);
        }
        debug_assert_eq!(p, hdr);
        buf[hdr..total].copy_from_slice(&self.payload);
        let csum = checksum(src_ip, dst_ip, &buf[..total]);
        buf[16..18].copy_from_slice(&csum.to_be_bytes());
        Ok(total)
    }
}

impl Segment {
    /// Writes the segment inside an IPv4 packet into `buf` (RFC 791 §3.1: a
    /// 20-byte header, DF set, TTL 64, identification `ident`, the segment's ECN
    /// codepoint in the low two bits of the TOS byte as RFC 3168 §5 places it) and
    /// returns the packet's length. Both checksums are computed.
    pub fn emit_ipv4(
        &self,
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
        ident: u16,
        buf: &mut [u8],
    ) -> Result<usize, EmitError> {
        let total = 20 + self.wire_len();
        if buf.len() < total {
            return Err(EmitError::BufferTooShort {
                needed: total,
                got: buf.len(),
            });
        }
        let h = &mut buf[..20];
        h.fill(0);
        h[0] = 0x45;
        h[1] = self.ecn.bits();
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        h[4..6].copy_from_slice(&ident.to_be_bytes());
        h[6] = 0x40; // don't fragment
        h[8] = 64;
        h[9] = 6;
        h[12..16].copy_from_slice(&src_ip);
        h[16..20].copy_from_slice(&dst_ip);
        let sum = ipv4_header_checksum(h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        self.emit(src_ip, dst_ip, &mut buf[20..total])?;
        Ok(total)
    }
}

/// Internet checksum of an IPv4 header (RFC 791 §3.1). Over a header whose
/// checksum field is filled in, the result is 0.
pub fn ipv4_header_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Internet checksum of a TCP segment with the IPv4 pseudo-header (RFC 9293 §3.1).
/// Over a segment whose checksum field is filled in, the result is 0.
pub fn checksum(src_ip: [u8; 4], dst_ip: [u8; 4], tcp: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        let mut chunks = bytes.chunks_exact(2);
        for c in &mut chunks {
            sum += u16::from_be_bytes([c[0], c[1]]) as u32;
        }
        if let [last] = chunks.remainder() {
            sum += (*last as u32) << 8;
        }
    };
    add(&src_ip);
    add(&dst_ip);
    add(&[0, 6]);
    add(&(tcp.len() as u16).to_be_bytes());
    add(tcp);
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}
