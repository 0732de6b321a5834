//! Behavioral signatures of TCP flows from packet captures
//! (`gentle-aggression-talk-slides.txt` part B; `gentle-aggression-sigcomm13.txt` §2).
//!
//! A capture is read one frame at a time ([`capture::CaptureReader`]), decoded to its
//! TCP header ([`decode`]), and handed to the flow it belongs to ([`flow::Flow`]).
//! Each flow follows both of its senders ([`sender::Sender`]): what is outstanding,
//! what the ACKs and SACKs say, and why each retransmission was sent
//! ([`cause::Cause`]). Tags are given per packet ([`tags`]), per flow
//! ([`flow::FlowReport`]) and per application exchange ([`exchange`]), and the flows
//! feed the §2 figures ([`figures`]).
//!
//! Memory is bounded by the flows open at once: a flow's packets are not kept, only
//! its outstanding segments, its retransmission records and small histograms, and a
//! flow is closed when it ends (both FINs acknowledged, or a reset) or goes idle.

pub mod capture;
pub mod cause;
mod copies;
pub mod decode;
pub mod exchange;
pub mod figures;
pub mod flow;
pub mod legacy;
pub mod police;
pub mod rtt;
pub mod sack;
pub mod sender;
pub mod tags;

use std::net::{IpAddr, SocketAddr};

use rustc_hash::FxHashMap;
use serde::Serialize;

pub use capture::{CaptureError, CaptureReader};
pub use cause::{Cause, CauseCounts, Spurious};
pub use decode::Segment;
pub use figures::{FigureData, Figures};
pub use flow::{CapturePoint, FlowReport};
pub use sender::{HostHabits, Retransmission};
pub use tags::{Tag, Tags};

/// A flow silent this long is closed (RFC 9293 §3.10.7's 2·MSL is 4 minutes; a
/// capture's flow that has been quiet for 5 has ended for analysis purposes).
pub const IDLE_NS: u64 = 300_000_000_000;
/// Idle flows are swept every this many packets.
const SWEEP_EVERY: u64 = 1 << 16;

/// How to read a capture.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The server's address: packets from it are the responses.
    pub server: Option<IpAddr>,
    /// The server's port, when the address is not enough.
    pub server_port: Option<u16>,
    /// Where the capture was taken.
    pub point: CapturePoint,
    /// List every server retransmission in the flow reports.
    pub keep_retransmissions: bool,
    /// The servers are known not to use FACK (Linux 4.15 and later, RACK, RFC 6675
    /// alone): a recovery begun on FACK's count alone is early from the start
    /// instead of settled by the host's habits seen in the capture.
    pub no_fack: bool,
}

/// Which way a packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Server to client.
    ToClient,
    /// Client to server.
    ToServer,
}

/// A packet and its tags, as handed to the `--tags` writer.
#[derive(Clone, Copy, Debug)]
pub struct PacketTags {
    /// Record number in the file.
    pub record: u64,
    /// Capture time, ns.
    pub ts_ns: u64,
    /// The flow's number.
    pub flow: u32,
    /// Direction.
    pub dir: Dir,
    /// The segment.
    pub seg: Segment,
    /// Relative sequence number (the ISN is 0, as Wireshark and gentle's trace count).
    pub rel_seq: u64,
    /// Relative acknowledgment number (0 without ACK).
    pub rel_ack: u64,
    /// Tags.
    pub tags: Tags,
    /// A retransmission's inferred cause.
    pub cause: Option<Cause>,
}

/// Totals over a capture.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Frames read.
    pub frames: u64,
    /// TCP segments analysed.
    pub tcp_packets: u64,
    /// Frames that were not TCP over IPv4/IPv6.
    pub skipped: u64,
    /// Of those, the frames on link types gentle does not read: (link type, frames),
    /// in order of first appearance.
    pub unsupported_link_types: Vec<(i32, u64)>,
    /// TCP frames with malformed or cut-off headers (dropped and counted).
    pub malformed: u64,
    /// Flows.
    pub flows: u64,
    /// Server retransmissions by cause.
    pub retransmissions: CauseCounts,
    /// Server data packets.
    pub data_packets: u64,
    /// Server transmissions lost.
    pub losses: u64,
    /// Tail losses.
    pub tail_losses: u64,
    /// Exchanges.
    pub exchanges: u64,
    /// Exchanges that saw a retransmission.
    pub lossy_exchanges: u64,
    /// Flows with bufferbloat.
    pub bufferbloat_flows: u64,
    /// Flows that look policed.
    pub policed_flows: u64,
    /// Flows with reordering.
    pub reordering_flows: u64,
    /// Frames captured twice, left out of the analysis.
    pub capture_copies: u64,
}

/// The result of analysing a capture.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// Totals.
    pub totals: Totals,
    /// Every flow, in order of first packet.
    pub flows: Vec<FlowReport>,
    /// The §2 figures.
    pub figures: FigureData,
}

type Key = (SocketAddr, SocketAddr);

/// The streaming analyser.
pub struct Analyzer {
    opts: Options,
    flows: FxHashMap<Key, flow::Flow>,
    habits: FxHashMap<IpAddr, HostHabits>,
    next_id: u32,
    figures: Figures,
    reports: Vec<FlowReport>,
    totals: Totals,
    last_sweep: u64,
}

impl Analyzer {
    /// An analyser with `opts`.
    pub fn new(opts: Options) -> Self {
        Analyzer {
            opts,
            flows: FxHashMap::default(),
            habits: FxHashMap::default(),
            next_id: 0,
            figures: Figures::default(),
            reports: Vec::new(),
            totals: Totals::default(),
            last_sweep: 0,
        }
    }

    /// Which end of a new flow is the server.
    fn server_of(&self, seg: &Segment) -> bool {
        // true: the packet's source is the server.
        let (src, dst) = (seg.src, seg.dst);
        if let Some(s) = self.opts.server {
            if src == s {
                return true;
            }
            if dst == s {
                return false;
            }
        }
        if let Some(p) = self.opts.server_port {
            if seg.sport == p {
                return true;
            }
            if seg.dport == p {
                return false;
            }
        }
        if seg.has(decode::flags::SYN) {
            return seg.has(decode::flags::ACK);
        }
        // The well-known (lower) port is the server's.
        seg.sport < seg.dport
    }

    /// One frame. `on_packet` sees every TCP packet with its tags.
    pub fn frame(
        &mut self,
        record: u64,
        linktype: i32,
        ts_ns: u64,
        data: &[u8],
        on_packet: &mut dyn FnMut(&PacketTags),
    ) {
        self.totals.frames += 1;
        if !decode::linktype::supported(linktype) {
            self.totals.skipped += 1;
            let u = &mut self.totals.unsupported_link_types;
            match u.iter_mut().find(|x| x.0 == linktype) {
                Some(x) => x.1 += 1,
                None => u.push((linktype, 1)),
            }
            return;
        }
        let (seg, payload) = match decode::decode(linktype, ts_ns, data) {
            decode::Decoded::Tcp(s, p) => (s, p),
            decode::Decoded::Other => {
                self.totals.skipped += 1;
                return;
            }
            decode::Decoded::Malformed(_) => {
                self.totals.malformed += 1;
                return;
            }
        };
        self.segment(record, &seg, payload, on_packet);
    }

    /// One decoded segment.
    pub fn segment(
        &mut self,
        record: u64,
        seg: &Segment,
        payload: &[u8],
        on_packet: &mut dyn FnMut(&PacketTags),
    ) {
        self.totals.tcp_packets += 1;
        let a = SocketAddr::new(seg.src, seg.sport);
        let b = SocketAddr::new(seg.dst, seg.dport);
        let key = if a <= b { (a, b) } else { (b, a) };
        // A new SYN on a finished flow starts a new one (port reuse).
        if seg.has(decode::flags::SYN)
            && !seg.has(decode::flags::ACK)
            && self.flows.get(&key).is_some_and(|f| f.finished())
        {
            let f = self.flows.remove(&key).expect("just seen");
            self.close(f);
        }
        if !self.flows.contains_key(&key) {
            let src_is_server = self.server_of(seg);
            let (server, client) = if src_is_server { (a, b) } else { (b, a) };
            let f = flow::Flow::new(self.next_id, server, client, seg.ts_ns, self.opts.point);
            self.next_id += 1;
            self.flows.insert(key, f);
        }
        let f = self.flows.get_mut(&key).expect("inserted above");
        let (server, _) = f.endpoints();
        let dir = if a == server {
            Dir::ToClient
        } else {
            Dir::ToServer
        };
        let no_fack = self.opts.no_fack;
        let habits = self
            .habits
            .entry(server.ip())
            .or_insert_with(|| HostHabits {
                no_fack,
                ..HostHabits::default()
            });
        let (tags, cause) = f.packet(seg, payload, dir, habits);
        // A SYN carries the ISN itself: relative 0.
        let rel_seq = if seg.has(decode::flags::SYN) {
            0
        } else {
            f.rel_seq(dir, seg.seq)
        };
        let rel_ack = if seg.has(decode::flags::ACK) {
            let other = match dir {
                Dir::ToClient => Dir::ToServer,
                Dir::ToServer => Dir::ToClient,
            };
            f.rel_seq(other, seg.ack)
        } else {
            0
        };
        on_packet(&PacketTags {
            record,
            ts_ns: seg.ts_ns,
            flow: f.id(),
            dir,
            seg: *seg,
            rel_seq,
            rel_ack,
            tags,
            cause,
        });
        if self.totals.tcp_packets - self.last_sweep >= SWEEP_EVERY {
            self.last_sweep = self.totals.tcp_packets;
            self.sweep(seg.ts_ns);
        }
    }

    /// Closes flows that ended or went idle.
    fn sweep(&mut self, now: u64) {
        let done: Vec<Key> = self
            .flows
            .iter()
            .filter(|(_, f)| f.finished() || now.saturating_sub(f.last_ns()) > IDLE_NS)
            .map(|(k, _)| *k)
            .collect();
        for k in done {
            let f = self.flows.remove(&k).expect("listed");
            self.close(f);
        }
    }

    fn close(&mut self, f: flow::Flow) {
        let habits = self
            .habits
            .get(&f.endpoints().0.ip())
            .copied()
            .unwrap_or_default();
        let r = f.finish(&mut self.figures, self.opts.keep_retransmissions, habits);
        self.reports.push(r);
    }

    /// Adds a finished flow to the totals.
    fn count(t: &mut Totals, r: &FlowReport) {
        t.flows += 1;
        t.retransmissions.merge(&r.retransmissions);
        t.data_packets += r.data_packets;
        t.losses += r.losses as u64;
        t.tail_losses += r.tail_losses as u64;
        t.exchanges += r.exchanges.len() as u64;
        t.lossy_exchanges += r.exchanges.iter().filter(|e| e.lossy()).count() as u64;
        t.bufferbloat_flows += r.bufferbloat as u64;
        t.policed_flows += r.policed_kbps.is_some() as u64;
        t.reordering_flows += (r.reordering_events > 0) as u64;
        t.capture_copies += r.capture_copies as u64;
    }

    /// Ends the capture: closes every flow and returns the analysis.
    pub fn finish(mut self) -> Analysis {
        let mut open: Vec<flow::Flow> = self.flows.drain().map(|(_, f)| f).collect();
        open.sort_by_key(|f| f.id());
        for f in open {
            self.close(f);
        }
        self.reports.sort_by_key(|r| r.id);
        for r in &mut self.reports {
            if !r.unsettled.is_empty()
                && let Some(h) = r
                    .server
                    .parse::<SocketAddr>()
                    .ok()
                    .and_then(|s| self.habits.get(&s.ip()))
            {
                r.settle(h.probes(), h.uses_fack());
            }
            Self::count(&mut self.totals, r);
        }
        Analysis {
            totals: self.totals,
            flows: self.reports,
            figures: self.figures.summary(),
        }
    }

    /// Totals so far.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }
}

/// Reads a whole capture with `opts`, calling `on_packet` for every TCP packet. A
/// capture cut short inside its last record is analysed up to there (see
/// [`CaptureReader::cut_short`]).
pub fn analyze<R: std::io::Read + Send>(
    reader: R,
    opts: Options,
    on_packet: &mut dyn FnMut(&PacketTags),
) -> Result<Analysis, CaptureError> {
    let mut r = CaptureReader::new(reader)?;
    let mut a = Analyzer::new(opts);
    while let Some(f) = r.next()? {
        a.frame(f.record, f.linktype, f.ts_ns, f.data, on_packet);
    }
    Ok(a.finish())
}
