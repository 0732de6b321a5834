//! The few IPv4 and TCP header fields the forwarder reads (RFC 791 §3.1,
//! RFC 9293 §3.1), straight from the packet: it never rebuilds a packet it
//! forwards.

use std::net::Ipv4Addr;

/// TCP flag bits (RFC 9293 §3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;

/// An IPv4 TCP packet's header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpView {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// Payload bytes (from the IP total length, not the buffer).
    pub payload: u32,
    /// The packet's length on the wire (the IP total length).
    pub len: u32,
}

impl TcpView {
    pub fn syn(&self) -> bool {
        self.flags & SYN != 0
    }
    pub fn fin(&self) -> bool {
        self.flags & FIN != 0
    }
    pub fn rst(&self) -> bool {
        self.flags & RST != 0
    }
}

/// Reads an IPv4 packet carrying TCP; `None` for anything else (IPv6, ICMP, a
/// fragment, a truncated or inconsistent header).
#[inline]
pub fn parse(p: &[u8]) -> Option<TcpView> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != 6 {
        return None;
    }
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([p[2], p[3]]) as usize;
    // A fragment (MF set or an offset) has no whole TCP header to read.
    if u16::from_be_bytes([p[6], p[7]]) & 0x3fff != 0 {
        return None;
    }
    if ihl < 20 || total < ihl + 20 || total > p.len() {
        return None;
    }
    let t = &p[ihl..total];
    let doff = ((t[12] >> 4) as usize) * 4;
    if doff < 20 || doff > t.len() {
        return None;
    }
    Some(TcpView {
        src: Ipv4Addr::new(p[12], p[13], p[14], p[15]),
        dst: Ipv4Addr::new(p[16], p[17], p[18], p[19]),
        sport: u16::from_be_bytes([t[0], t[1]]),
        dport: u16::from_be_bytes([t[2], t[3]]),
        seq: u32::from_be_bytes([t[4], t[5], t[6], t[7]]),
        ack: u32::from_be_bytes([t[8], t[9], t[10], t[11]]),
        flags: t[13],
        payload: (t.len() - doff) as u32,
        len: total as u32,
    })
}

/// What a router queue that decides per packet reads of it (RED, priority drop,
/// acks-first): the TCP control bits with the reserved ones (gentle's fast-start
/// mark among them), whether it carries data, and the IP header's ECN field. The
/// payload stands for itself without being copied: only its emptiness is read.
pub fn queue_segment(p: &[u8], view: &TcpView) -> gentle_tcp::Segment {
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    let off_flags = u16::from_be_bytes([p[ihl + 12], p[ihl + 13]]);
    gentle_tcp::Segment {
        flags: gentle_tcp::wire::Flags(off_flags & 0x0fff),
        payload: if view.payload > 0 {
            bytes::Bytes::from_static(&[0])
        } else {
            bytes::Bytes::new()
        },
        ecn: gentle_tcp::wire::Ecn::from_bits(p[1]),
        ..Default::default()
    }
}

/// Sets the IPv4 header's ECN field to `ecn` (RFC 3168 §5: a router marks CE in
/// place of a drop) and recomputes the header checksum (RFC 791 §3.1).
pub fn set_ecn(p: &mut [u8], ecn: gentle_tcp::wire::Ecn) {
    let ihl = ((p[0] & 0x0f) as usize) * 4;
    p[1] = (p[1] & !0b11) | ecn.bits();
    p[10] = 0;
    p[11] = 0;
    let sum = gentle_tcp::wire::ipv4_header_checksum(&p[..ihl]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
}
