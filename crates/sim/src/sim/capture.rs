//! What the simulator can show of a trial: a JSON-lines trace of packets and engine
//! events, and IPv4 frames of the packets seen at one node (for pcap files).

use gentle_tcp::{Event, Segment};
use serde::Serialize;

use super::Sim;
use crate::packet::Packet;

/// A packet as the trace shows it: sequence numbers relative to the sender's ISN.
#[derive(Clone, Debug, Serialize)]
pub struct PacketInfo {
    pub flow: u32,
    pub from: String,
    pub to: String,
    pub sport: u16,
    pub dport: u16,
    pub flags: String,
    pub seq: u64,
    pub len: u32,
    pub ack: u32,
    pub win: u16,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sack: Vec<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dup: bool,
    /// The Corrective option: `"offer"`, or its flags (`ENC`, `R_SUCC`, `R_ACK`,
    /// `R_FAIL`, joined by `|`; empty when none is set) and length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrective: Option<String>,
}

/// How a trace shows a Corrective option.
fn corrective_text(seg: &gentle_tcp::Segment) -> Option<String> {
    use gentle_tcp::corrective::CorrectiveOption;
    use gentle_tcp::corrective::option::flags;
    let o = CorrectiveOption::of(seg)?;
    if let CorrectiveOption::Offer { .. } = o {
        return Some("offer".into());
    }
    let names = [
        (flags::ENCODED, "ENC"),
        (flags::R_SUCC, "R_SUCC"),
        (flags::R_ACK, "R_ACK"),
        (flags::R_FAIL, "R_FAIL"),
    ];
    let mut s: Vec<&str> = names
        .iter()
        .filter(|(f, _)| o.has(*f))
        .map(|(_, n)| *n)
        .collect();
    let len;
    if let Some(l) = o.length() {
        len = format!("len={l}");
        s.push(&len);
    }
    Some(s.join("|"))
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "what", rename_all = "kebab-case")]
pub enum TraceWhat {
    Send,
    Recv,
    Drop {
        reason: &'static str,
        link: u32,
    },
    Engine {
        conn: u32,
        #[serde(flatten)]
        event: Event,
    },
}

/// One line of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct TraceLine {
    pub t_ns: u64,
    pub node: String,
    #[serde(flatten)]
    pub what: TraceWhat,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet: Option<PacketInfo>,
}

/// `"SA"`-style flag letters.
pub fn flag_letters(seg: &Segment) -> String {
    let f = seg.flags;
    let mut s = String::with_capacity(6);
    for (b, c) in [
        (f.syn(), 'S'),
        (f.fin(), 'F'),
        (f.rst(), 'R'),
        (f.contains(gentle_tcp::Flags::PSH), 'P'),
        (f.ack(), 'A'),
    ] {
        if b {
            s.push(c);
        }
    }
    s
}

/// IPv4 address of node `i`: 10.0.x.y with x.y = i + 1.
pub fn node_addr(i: u16) -> [u8; 4] {
    let n = i as u32 + 1;
    [10, 0, (n >> 8) as u8, (n & 0xff) as u8]
}

/// An IPv4 frame (RFC 791 header, no options) holding the serialised segment.
pub fn ipv4_frame(src: u16, dst: u16, seg: &Segment, ident: u16) -> Vec<u8> {
    let (s, d) = (node_addr(src), node_addr(dst));
    let tcp_len = seg.wire_len();
    let total = 20 + tcp_len;
    let mut v = vec![0u8; total];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    v[4..6].copy_from_slice(&ident.to_be_bytes());
    v[6] = 0x40; // don't fragment
    v[8] = 64;
    v[9] = 6;
    v[12..16].copy_from_slice(&s);
    v[16..20].copy_from_slice(&d);
    let mut sum: u32 = 0;
    for c in v[..20].chunks_exact(2) {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    v[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    seg.emit(s, d, &mut v[20..])
        .expect("segment fits its own length");
    v
}

impl Sim {
    pub(super) fn observe(&mut self, what: TraceWhat, node: u16, pkt: &Packet) {
        if self.capture_node == Some(node) && !matches!(what, TraceWhat::Drop { .. }) {
            let ident = self.capture.len() as u16;
            self.capture.push((
                self.now.as_nanos(),
                ipv4_frame(pkt.src, pkt.dst, &pkt.seg, ident),
            ));
        }
        if self.trace.is_none() {
            return;
        }
        let seg = &pkt.seg;
        // Relative numbers from the sending connection's point of view.
        let (iss, irs) = self
            .sessions
            .get(pkt.meta.flow as usize)
            .and_then(|s| {
                if pkt.meta.from_server {
                    s.sconn
                } else {
                    Some(s.cconn)
                }
            })
            .map(|c| {
                (
                    self.conns[c as usize].conn.iss(),
                    self.conns[c as usize].conn.irs(),
                )
            })
            .unwrap_or((0, 0));
        let info = PacketInfo {
            flow: pkt.meta.flow,
            from: self.node_names[pkt.src as usize].clone(),
            to: self.node_names[pkt.dst as usize].clone(),
            sport: seg.src_port,
            dport: seg.dst_port,
            flags: flag_letters(seg),
            seq: seg.seq.wrapping_sub(iss) as u64,
            len: seg.payload.len() as u32,
            ack: if seg.flags.ack() {
                seg.ack.wrapping_sub(irs)
            } else {
                0
            },
            win: seg.window,
            sack: seg
                .options
                .sack
                .as_slice()
                .iter()
                .map(|b| [b.left.wrapping_sub(irs), b.right.wrapping_sub(irs)])
                .collect(),
            ts: seg.options.timestamps.map(|t| [t.val, t.ecr]),
            dup: pkt.meta.duplicate,
            corrective: corrective_text(seg),
        };
        let line = TraceLine {
            t_ns: self.now.as_nanos(),
            node: self.node_names[node as usize].clone(),
            what,
            packet: Some(info),
        };
        if let Some(t) = self.trace.as_mut() {
            t.push(line);
        }
    }
}
