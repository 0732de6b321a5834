//! From a captured frame to the TCP header fields the signatures need.
//!
//! Link layers: Ethernet (with 802.1Q/802.1ad VLAN tags), raw IP, BSD loopback, and
//! Linux cooked captures v1 (SLL) and v2 (SLL2). Network layers: IPv4 and IPv6 (with
//! extension headers), through `etherparse`'s lax slicer so that a frame cut short
//! by the snap length still yields its headers; the payload length then comes from
//! the IP header (RFC 791 total length, RFC 8200 payload length), not from what was
//! captured.
//!
//! TCP options are read by hand (RFC 9293 §3.1): besides MSS, window scale, SACK
//! and timestamps, gentle's Corrective option (kind 254 with ExID 0x4952, RFC 6994)
//! and the reserved header bits of Proactive copies (0x800) and fast start (0x400)
//! are recognised.

use std::net::IpAddr;

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket};

/// Link types (tcpdump.org `LINKTYPE_*`).
pub mod linktype {
    /// BSD loopback: a 4-byte address family in host byte order.
    pub const NULL: i32 = 0;
    /// Ethernet II.
    pub const ETHERNET: i32 = 1;
    /// Raw IP (OpenBSD's value).
    pub const RAW_OPENBSD: i32 = 12;
    /// Raw IP (the portable value).
    pub const RAW: i32 = 101;
    /// Linux cooked capture v1.
    pub const LINUX_SLL: i32 = 113;
    /// Raw IPv4.
    pub const IPV4: i32 = 228;
    /// Raw IPv6.
    pub const IPV6: i32 = 229;
    /// Linux cooked capture v2.
    pub const LINUX_SLL2: i32 = 276;
    /// PPP (RFC 1661 §2), with or without the HDLC address and control bytes.
    pub const PPP: i32 = 9;
    /// FDDI (ANSI X3.139), with an 802.2 LLC/SNAP header.
    pub const FDDI: i32 = 10;

    /// The link types [`decode`](super::decode) reads.
    pub const SUPPORTED: [i32; 10] = [
        NULL,
        ETHERNET,
        PPP,
        FDDI,
        RAW_OPENBSD,
        RAW,
        LINUX_SLL,
        IPV4,
        IPV6,
        LINUX_SLL2,
    ];

    /// Whether [`decode`](super::decode) reads frames of link type `lt`.
    pub fn supported(lt: i32) -> bool {
        SUPPORTED.contains(&lt)
    }

    /// The tcpdump.org name of a link type (without `LINKTYPE_`), for the common ones.
    pub fn name(lt: i32) -> Option<String> {
        let n = match lt {
            NULL => "NULL",
            ETHERNET => "ETHERNET",
            6 => "IEEE802_5",
            8 => "SLIP",
            PPP => "PPP",
            FDDI => "FDDI",
            RAW_OPENBSD | RAW => "RAW",
            50 => "PPP_HDLC",
            51 => "PPP_ETHER",
            104 => "C_HDLC",
            105 => "IEEE802_11",
            108 => "LOOP",
            LINUX_SLL => "LINUX_SLL",
            119 => "IEEE802_11_PRISM",
            127 => "IEEE802_11_RADIOTAP",
            147..=162 => return Some(format!("USER{}", lt - 147)),
            187 => "BLUETOOTH_HCI_H4",
            189 => "USB_LINUX",
            195 => "IEEE802_15_4_WITHFCS",
            201 => "BLUETOOTH_HCI_H4_WITH_PHDR",
            220 => "USB_LINUX_MMAPPED",
            IPV4 => "IPV4",
            IPV6 => "IPV6",
            253 => "NETLINK",
            LINUX_SLL2 => "LINUX_SLL2",
            _ => return None,
        };
        Some(n.to_string())
    }

    /// `147 (USER0)`, or the number alone for a link type without a known name.
    pub fn describe(lt: i32) -> String {
        match name(lt) {
            Some(n) => format!("{lt} ({n})"),
            None => lt.to_string(),
        }
    }
}

/// TCP header flag bits (RFC 9293 §3.1, RFC 3168 §6.1) and the two reserved bits
/// gentle uses.
pub mod flags {
    /// FIN.
    pub const FIN: u16 = 0x001;
    /// SYN.
    pub const SYN: u16 = 0x002;
    /// RST.
    pub const RST: u16 = 0x004;
    /// PSH.
    pub const PSH: u16 = 0x008;
    /// ACK.
    pub const ACK: u16 = 0x010;
    /// ECN-Echo.
    pub const ECE: u16 = 0x040;
    /// Congestion Window Reduced.
    pub const CWR: u16 = 0x080;
    /// A Proactive copy (`gentle-aggression-sigcomm13.txt` §6): reserved bit.
    pub const COPY: u16 = 0x800;
    /// A fast start packet (`fast-start-and-sessions.txt` §3.4.3): reserved bit.
    pub const FAST_START: u16 = 0x400;
}

/// RFC 6994 experiment ID of gentle's Corrective option.
pub const CORRECTIVE_EXID: u16 = 0x4952;
/// The Corrective option's ENCODED flag (the packet carries an XOR of a range).
pub const CORRECTIVE_ENCODED: u8 = 0x80;

/// The options of one segment; SACK blocks in wire sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Maximum segment size (SYN only).
    pub mss: Option<u16>,
    /// Window scale shift (SYN only).
    pub wscale: Option<u8>,
    /// SACK permitted (SYN only).
    pub sack_permitted: bool,
    /// SACK blocks `[left, right)`.
    pub sack: [(u32, u32); 4],
    /// How many of `sack` are used.
    pub sack_len: u8,
    /// Timestamps: TSval, TSecr.
    pub ts: Option<(u32, u32)>,
    /// The Corrective option was present.
    pub corrective: bool,
    /// ... and carried ENCODED: the payload is redundancy, not new data.
    pub corrective_encoded: bool,
    /// An option ran past the header: those before it were read.
    pub truncated: bool,
}

impl Options {
    /// The SACK blocks.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.sack_len as usize]
    }
}

/// One TCP segment as seen on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Capture time, ns.
    pub ts_ns: u64,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (meaningful with ACK).
    pub ack: u32,
    /// Flags, including the reserved bits (`flags::*`).
    pub flags: u16,
    /// Advertised window, unscaled.
    pub window: u16,
    /// Payload bytes (from the IP length, so right even when truncated).
    pub len: u32,
    /// The IP ECN field (RFC 3168 §5): 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    pub ecn: u8,
    /// Options.
    pub opts: Options,
    /// How many payload bytes were captured (at most `len`).
    pub captured: u32,
}

impl Segment {
    /// Whether every flag in `f` is set.
    pub fn has(&self, f: u16) -> bool {
        self.flags & f == f
    }
    /// Sequence space the segment occupies: payload plus SYN and FIN.
    pub fn seq_len(&self) -> u32 {
        self.len + u32::from(self.has(flags::SYN)) + u32::from(self.has(flags::FIN))
    }
}

/// What a frame turned out to be.
#[derive(Debug)]
pub enum Decoded<'a> {
    /// A TCP segment, and its captured payload bytes.
    Tcp(Segment, &'a [u8]),
    /// Not IPv4/IPv6, or not TCP, or an IP fragment after the first: skipped.
    Other,
    /// A TCP packet whose headers are malformed or cut off: dropped and counted.
    Malformed(&'static str),
}

/// Decodes one frame of link type `linktype`.
pub fn decode(linktype: i32, ts_ns: u64, data: &[u8]) -> Decoded<'_> {
    let sliced = match linktype {
        linktype::ETHERNET => LaxSlicedPacket::from_ethernet(data).ok(),
        linktype::RAW | linktype::RAW_OPENBSD | linktype::IPV4 | linktype::IPV6 => {
            LaxSlicedPacket::from_ip(data).ok()
        }
        linktype::NULL => {
            // The family is in the capturing host's byte order: 2 is IPv4; 24, 28
            // and 30 are IPv6 on the BSDs and macOS.
            if data.len() < 4 {
                return Decoded::Other;
            }
            LaxSlicedPacket::from_ip(&data[4..]).ok()
        }
        linktype::LINUX_SLL => {
            // 16 bytes: packet type, ARPHRD, address length, 8 address bytes,
            // protocol (an EtherType) at offset 14.
            if data.len() < 16 {
                return Decoded::Other;
            }
            let et = u16::from_be_bytes([data[14], data[15]]);
            Some(LaxSlicedPacket::from_ether_type(EtherType(et), &data[16..]))
        }
        linktype::LINUX_SLL2 => {
            // 20 bytes: protocol (an EtherType) at offset 0, then reserved,
            // interface index, ARPHRD, packet type, address length, address.
            if data.len() < 20 {
                return Decoded::Other;
            }
            let et = u16::from_be_bytes([data[0], data[1]]);
            Some(LaxSlicedPacket::from_ether_type(EtherType(et), &data[20..]))
        }
        linktype::PPP => {
            let Some(ip) = ppp_ip(data) else {
                return Decoded::Other;
            };
            LaxSlicedPacket::from_ip(ip).ok()
        }
        linktype::FDDI => {
            // 13 bytes of frame control and addresses, then LLC/SNAP (RFC 1042):
            // AA AA 03, a zero OUI, the EtherType.
            if data.len() < 21 || data[13..19] != [0xaa, 0xaa, 0x03, 0, 0, 0] {
                return Decoded::Other;
            }
            let et = u16::from_be_bytes([data[19], data[20]]);
            Some(LaxSlicedPacket::from_ether_type(EtherType(et), &data[21..]))
        }
        _ => return Decoded::Other,
    };
    let Some(p) = sliced else {
        return Decoded::Other;
    };
    let (src, dst, ecn, tcp_len) = match &p.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let total = h.total_len() as usize;
            let ihl = h.ihl() as usize * 4;
            if h.protocol() != etherparse::IpNumber::TCP {
                return Decoded::Other;
            }
            if h.is_fragmenting_payload() && h.fragments_offset().value() != 0 {
                return Decoded::Other;
            }
            (
                IpAddr::from(h.source()),
                IpAddr::from(h.destination()),
                h.ecn().value(),
                total.checked_sub(ihl),
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let pl = v6.payload();
            if pl.ip_number != etherparse::IpNumber::TCP || pl.fragmented {
                return Decoded::Other;
            }
            // Payload length minus the extension headers the slicer walked.
            let ext = v6.extensions().slice().len();
            (
                IpAddr::from(h.source_addr()),
                IpAddr::from(h.destination_addr()),
                h.traffic_class() & 0x3,
                (h.payload_length() as usize).checked_sub(ext),
            )
        }
        _ => return Decoded::Other,
    };
    let Some(ip_payload) = p.ip_payload() else {
        return Decoded::Malformed("IP header cut off");
    };
    let tcp = ip_payload.payload;
    // A zero IP length (TSO captures on the sending host) means "as captured".
    let tcp_len = match tcp_len {
        Some(0) | None => tcp.len(),
        Some(n) => n,
    };
    parse_tcp(ts_ns, src, dst, ecn, tcp, tcp_len)
}

/// The IP packet in a PPP frame (RFC 1661 §2, RFC 1662 §3.1 for the optional FF 03
/// address and control bytes): protocol 0x0021 is IPv4, 0x0057 IPv6.
fn ppp_ip(data: &[u8]) -> Option<&[u8]> {
    let d = data.strip_prefix(&[0xff, 0x03]).unwrap_or(data);
    match d {
        [0x00, 0x21, ip @ ..] | [0x00, 0x57, ip @ ..] => Some(ip),
        // A compressed one-byte protocol field (RFC 1661 §6.5).
        [0x21, ip @ ..] | [0x57, ip @ ..] => Some(ip),
        _ => None,
    }
}

/// Reads a TCP header from `tcp` (the captured bytes) whose full length, header and
/// payload, is `tcp_len`.
fn parse_tcp<'a>(
    ts_ns: u64,
    src: IpAddr,
    dst: IpAddr,
    ecn: u8,
    tcp: &'a [u8],
    tcp_len: usize,
) -> Decoded<'a> {
    if tcp.len() < 20 {
        return Decoded::Malformed("TCP header cut off");
    }
    let doff = (tcp[12] >> 4) as usize * 4;
    if doff < 20 {
        return Decoded::Malformed("TCP data offset below 5 words");
    }
    if tcp.len() < doff {
        return Decoded::Malformed("TCP options cut off");
    }
    if tcp_len < doff {
        return Decoded::Malformed("IP length shorter than the TCP header");
    }
    let be16 = |i: usize| u16::from_be_bytes([tcp[i], tcp[i + 1]]);
    let be32 = |i: usize| u32::from_be_bytes([tcp[i], tcp[i + 1], tcp[i + 2], tcp[i + 3]]);
    let opts = parse_options(&tcp[20..doff]);
    let payload = &tcp[doff..];
    let len = (tcp_len - doff) as u32;
    let seg = Segment {
        ts_ns,
        src,
        dst,
        sport: be16(0),
        dport: be16(2),
        seq: be32(4),
        ack: be32(8),
        flags: be16(12) & 0x0fff,
        window: be16(14),
        len,
        ecn,
        opts,
        captured: (payload.len() as u32).min(len),
    };
    Decoded::Tcp(seg, &payload[..seg.captured as usize])
}

/// RFC 9293 §3.1 option list: kind, length, data; kinds 0 (end) and 1 (no-op) are a
/// single byte. Unknown options are skipped by their length.
fn parse_options(mut b: &[u8]) -> Options {
    let mut o = Options::default();
    while let Some(&kind) = b.first() {
        match kind {
            0 => break,
            1 => {
                b = &b[1..];
                continue;
            }
            _ => {}
        }
        // An option whose length runs past the header (or is below 2) ends what
        // can be read: the options before it stand, as Wireshark keeps them.
        let Some(&len) = b.get(1) else {
            break;
        };
        let len = len as usize;
        if len < 2 || len > b.len() {
            o.truncated = true;
            break;
        }
        let d = &b[2..len];
        match (kind, d.len()) {
            (2, 2) => o.mss = Some(u16::from_be_bytes([d[0], d[1]])),
            (3, 1) => o.wscale = Some(d[0]),
            (4, 0) => o.sack_permitted = true,
            (5, n) if n % 8 == 0 => {
                for c in d.chunks_exact(8).take(4) {
                    let l = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
                    let r = u32::from_be_bytes([c[4], c[5], c[6], c[7]]);
                    o.sack[o.sack_len as usize] = (l, r);
                    o.sack_len += 1;
                }
            }
            (8, 8) => {
                o.ts = Some((
                    u32::from_be_bytes([d[0], d[1], d[2], d[3]]),
                    u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
                ))
            }
            (254, n) if n >= 3 && u16::from_be_bytes([d[0], d[1]]) == CORRECTIVE_EXID => {
                o.corrective = true;
                o.corrective_encoded = d[2] & CORRECTIVE_ENCODED != 0;
            }
            _ => {}
        }
        b = &b[len..];
    }
    o
}
