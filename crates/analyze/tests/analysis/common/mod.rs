//! A scripted flow for the signature tests: packets built field by field and handed
//! to the analyser in time order.
#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};

use gentle_analyze::decode::{Options as TcpOptions, Segment, flags};
use gentle_analyze::{Analysis, Analyzer, CapturePoint, Cause, Options, PacketTags};

pub const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
pub const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
pub const ISS: u32 = 1_000_000;
pub const IRS: u32 = 5_000;
pub const MSS: u32 = 1000;

/// The causes of the first flow's server retransmissions, in order (the report's,
/// settled).
pub fn causes(a: &Analysis) -> Vec<Cause> {
    a.flows[0]
        .retransmission_log
        .iter()
        .map(|r| r.cause)
        .collect()
}

/// A flow under construction: packets in time order.
pub struct Script {
    a: Analyzer,
    seen: Vec<(Tags, Option<Cause>)>,
    sack: bool,
    pub ts: bool,
    record: u64,
}

pub type Tags = gentle_analyze::Tags;

impl Script {
    pub fn new(sack: bool) -> Self {
        Self::with_point(sack, CapturePoint::Server)
    }

    pub fn with_point(sack: bool, point: CapturePoint) -> Self {
        Script {
            a: Analyzer::new(Options {
                keep_retransmissions: true,
                no_fack: false,
                point,
                ..Options::default()
            }),
            seen: Vec::new(),
            sack,
            ts: false,
            record: 0,
        }
    }

    pub fn push(&mut self, s: Segment) -> (Tags, Option<Cause>) {
        self.push_payload(s, &[])
    }

    /// A packet whose captured payload is `payload`.
    pub fn push_payload(&mut self, s: Segment, payload: &[u8]) -> (Tags, Option<Cause>) {
        self.record += 1;
        let mut out = None;
        self.a
            .segment(self.record, &s, payload, &mut |p: &PacketTags| {
                out = Some((p.tags, p.cause));
            });
        let r = out.expect("every TCP packet is reported");
        self.seen.push(r);
        r
    }

    pub fn base(&self, t_ms: f64, from_server: bool) -> Segment {
        Segment {
            ts_ns: (t_ms * 1e6) as u64,
            src: if from_server { SERVER } else { CLIENT },
            dst: if from_server { CLIENT } else { SERVER },
            sport: if from_server { 80 } else { 40000 },
            dport: if from_server { 40000 } else { 80 },
            seq: 0,
            ack: 0,
            flags: flags::ACK,
            window: 1000,
            len: 0,
            ecn: 0,
            opts: TcpOptions::default(),
            captured: 0,
        }
    }

    /// As a client-side capture sees the handshake: SYN at 0, SYN-ACK at `rtt_ms`,
    /// ACK and a 100-byte request just after.
    pub fn handshake_at_client(&mut self, rtt_ms: f64) {
        let mut syn = self.base(0.0, false);
        syn.flags = flags::SYN;
        syn.seq = IRS;
        syn.opts.sack_permitted = self.sack;
        self.push(syn);
        let mut sa = self.base(rtt_ms, true);
        sa.flags = flags::SYN | flags::ACK;
        sa.seq = ISS;
        sa.ack = IRS + 1;
        sa.opts.sack_permitted = self.sack;
        self.push(sa);
        let mut req = self.base(rtt_ms + 0.1, false);
        req.flags = flags::ACK | flags::PSH;
        req.seq = IRS + 1;
        req.ack = ISS + 1;
        req.len = 100;
        self.push(req);
    }

    /// SYN at 0, SYN-ACK at 0.1 ms, ACK and a request of 100 bytes at `rtt_ms`.
    pub fn handshake(&mut self, rtt_ms: f64) {
        let mut syn = self.base(0.0, false);
        syn.flags = flags::SYN;
        syn.seq = IRS;
        syn.opts.sack_permitted = self.sack;
        self.push(syn);
        let mut sa = self.base(0.1, true);
        sa.flags = flags::SYN | flags::ACK;
        sa.seq = ISS;
        sa.ack = IRS + 1;
        sa.opts.sack_permitted = self.sack;
        self.push(sa);
        let mut req = self.base(0.1 + rtt_ms, false);
        req.flags = flags::ACK | flags::PSH;
        req.seq = IRS + 1;
        req.ack = ISS + 1;
        req.len = 100;
        self.push(req);
    }

    /// Server data segment `i` (0-based, MSS bytes each) at `t_ms`.
    pub fn data(&mut self, t_ms: f64, i: u32) -> (Tags, Option<Cause>) {
        let mut d = self.base(t_ms, true);
        d.seq = ISS + 1 + i * MSS;
        d.ack = IRS + 101;
        d.len = MSS;
        if self.ts {
            d.opts.ts = Some(((t_ms as u32) + 1, 1));
        }
        self.push(d)
    }

    /// A client ACK of segments below `upto` at `t_ms`, with SACK blocks of segment
    /// ranges `[a, b)`.
    pub fn ack(&mut self, t_ms: f64, upto: u32, sack: &[(u32, u32)]) -> (Tags, Option<Cause>) {
        self.ack_ts(t_ms, upto, sack, None)
    }

    pub fn ack_ts(
        &mut self,
        t_ms: f64,
        upto: u32,
        sack: &[(u32, u32)],
        ecr: Option<u32>,
    ) -> (Tags, Option<Cause>) {
        let mut a = self.base(t_ms, false);
        a.seq = IRS + 101;
        a.ack = ISS + 1 + upto * MSS;
        for (k, &(l, r)) in sack.iter().enumerate() {
            a.opts.sack[k] = (ISS + 1 + l * MSS, ISS + 1 + r * MSS);
        }
        a.opts.sack_len = sack.len() as u8;
        a.opts.ts = ecr.map(|e| (1, e));
        self.push(a)
    }

    pub fn finish(self) -> Analysis {
        self.a.finish()
    }
}
