//! Two observers of a trial: [`TraceRecorder`], the JSON-lines trace of packets and
//! engine events, and [`Capture`], IPv4 frames of the packets sent and received at
//! one node (for pcap files).

use gentle_tcp::{Event, Instant, Segment};
use serde::Serialize;
use std::sync::Arc;

use super::observe::{Observer, PacketEvent, PacketView};

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
    /// A Proactive copy (the reserved bit `0x800`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub copy: bool,
    /// A fast start packet, low priority at routers with priority drop (the
    /// reserved bit `0x400`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fast_start: bool,
    /// The IP header's ECN field when it is not Not-ECT: `"ect0"`, `"ect1"` or
    /// `"ce"` (RFC 3168 §5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<&'static str>,
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
        // tcpdump's letters for ECN-Echo and Congestion Window Reduced (RFC 3168).
        (f.contains(gentle_tcp::Flags::ECE), 'E'),
        (f.contains(gentle_tcp::Flags::CWR), 'W'),
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

/// An IPv4 frame (RFC 791 header, no options) holding the serialised segment. The
/// segment's ECN codepoint goes in the low two bits of the TOS byte (RFC 3168 §5),
/// so captures show ECT and CE; the header checksum covers it.
pub fn ipv4_frame(src: u16, dst: u16, seg: &Segment, ident: u16) -> Vec<u8> {
    let mut v = vec![0u8; 20 + seg.wire_len()];
    seg.emit_ipv4(node_addr(src), node_addr(dst), ident, &mut v)
        .expect("segment fits its own length");
    v
}

/// Records the trace: every packet event but link admission, and every engine
/// event.
#[derive(Debug, Default)]
pub struct TraceRecorder {
    /// The lines so far, in time order.
    pub lines: Vec<TraceLine>,
}

impl Observer for TraceRecorder {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        let what = match ev {
            PacketEvent::Send => TraceWhat::Send,
            PacketEvent::Recv => TraceWhat::Recv,
            PacketEvent::Drop { reason, link } => TraceWhat::Drop {
                reason: reason.as_str(),
                link,
            },
            PacketEvent::Enqueue { .. } => return,
        };
        let seg = p.seg;
        // Relative numbers from the sending connection's point of view.
        let (iss, irs) = p.isn.unwrap_or((0, 0));
        let info = PacketInfo {
            flow: p.meta.flow,
            from: p.nodes[p.src as usize].to_string(),
            to: p.nodes[p.dst as usize].to_string(),
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
            dup: p.meta.duplicate,
            copy: seg.flags.contains(gentle_tcp::Flags::COPY),
            fast_start: seg.flags.contains(gentle_tcp::Flags::FAST_START),
            ecn: match seg.ecn {
                gentle_tcp::Ecn::NotEct => None,
                gentle_tcp::Ecn::Ect0 => Some("ect0"),
                gentle_tcp::Ecn::Ect1 => Some("ect1"),
                gentle_tcp::Ecn::Ce => Some("ce"),
            },
            corrective: corrective_text(seg),
        };
        self.lines.push(TraceLine {
            t_ns: p.t.as_nanos(),
            node: p.nodes[p.node as usize].to_string(),
            what,
            packet: Some(info),
        });
    }

    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[Arc<str>]) {
        self.lines.push(TraceLine {
            t_ns: t.as_nanos(),
            node: nodes[node as usize].to_string(),
            what: TraceWhat::Engine {
                conn,
                event: ev.clone(),
            },
            packet: None,
        });
    }

    fn wants_engine_events(&self) -> bool {
        true
    }
}

/// Captures the packets a node sends and receives, as IPv4 frames with their times
/// in nanoseconds.
#[derive(Debug)]
pub struct Capture {
    node: String,
    /// `(time ns, frame)` in time order.
    pub frames: Vec<(u64, Vec<u8>)>,
}

impl Capture {
    /// Captures at the node named `node`.
    pub fn new(node: impl Into<String>) -> Capture {
        Capture {
            node: node.into(),
            frames: Vec::new(),
        }
    }
}

impl Observer for Capture {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        if matches!(ev, PacketEvent::Send | PacketEvent::Recv)
            && *p.nodes[p.node as usize] == *self.node
        {
            let ident = self.frames.len() as u16;
            self.frames
                .push((p.t.as_nanos(), ipv4_frame(p.src, p.dst, p.seg, ident)));
        }
    }
}
