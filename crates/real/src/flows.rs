//! What the forwarder knows of the TCP connections crossing it: which connection
//! a packet belongs to, where its payload sits in the byte stream (sequence offsets
//! from the initial sequence number, so the SYN is 0 and the first byte 1, as in
//! the simulator), and which application message that is. The link's loss models
//! and its position-keyed draws (`gentle_sim::link::draws`) take these facts, so a
//! segment meets the same fate in every run however the kernel timed it.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use gentle_sim::packet::PacketMeta;

use crate::wire::TcpView;

/// How connections are numbered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowNumbering {
    /// In the order their first packet crossed.
    #[default]
    FirstSeen,
    /// By the client's port: connection k uses `base + k` (gentle's own clients
    /// bind their ports so), which does not depend on timing.
    ClientPort { base: u16 },
}

type Key = (Ipv4Addr, u16, Ipv4Addr, u16);

#[derive(Debug, Default)]
struct Side {
    /// The initial sequence number, once seen (or assumed from the first packet).
    isn: Option<u32>,
}

#[derive(Debug)]
struct Flow {
    index: u32,
    /// [0]: from the server end, [1]: from the client end.
    sides: [Side; 2],
}

/// The connections seen, with the response boundaries the workload declared.
#[derive(Debug, Default)]
pub struct Flows {
    numbering: FlowNumbering,
    by_key: BTreeMap<Key, usize>,
    flows: Vec<Flow>,
    /// Per connection index: the server's messages as `[start, end)` offsets.
    messages: BTreeMap<u32, Vec<(u64, u64)>>,
    next_auto: u32,
}

impl Flows {
    pub fn new(numbering: FlowNumbering) -> Flows {
        Flows {
            numbering,
            next_auto: 1 << 16,
            ..Default::default()
        }
    }

    /// Declares the sizes of the messages the server sends on connection `index`,
    /// in order (what `tcpfilter` learns from Content-Length).
    pub fn declare_messages(&mut self, index: u32, sizes: &[u64]) {
        let mut at = 1;
        let v = sizes
            .iter()
            .map(|&n| {
                let m = (at, at + n);
                at += n;
                m
            })
            .collect();
        self.messages.insert(index, v);
    }

    /// The connections seen so far.
    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Whether `v` comes from its connection's server, when the numbering says
    /// (the client's port is at or above the base, the server's below).
    pub fn from_server(&self, v: &TcpView) -> Option<bool> {
        match self.numbering {
            FlowNumbering::ClientPort { base } => match (v.sport >= base, v.dport >= base) {
                (false, true) => Some(true),
                (true, false) => Some(false),
                _ => None,
            },
            FlowNumbering::FirstSeen => None,
        }
    }

    /// Places packet `v`, read from the server end (`from_server`) or the client end.
    pub fn place(&mut self, v: &TcpView, from_server: bool) -> PacketMeta {
        let (client_port, key) = if from_server {
            (v.dport, (v.dst, v.dport, v.src, v.sport))
        } else {
            (v.sport, (v.src, v.sport, v.dst, v.dport))
        };
        let i = match self.by_key.get(&key) {
            Some(&i) => i,
            None => {
                let index = match self.numbering {
                    FlowNumbering::ClientPort { base } if client_port >= base => {
                        (client_port - base) as u32
                    }
                    _ => {
                        self.next_auto += 1;
                        self.next_auto - 1
                    }
                };
                self.flows.push(Flow {
                    index,
                    sides: Default::default(),
                });
                self.by_key.insert(key, self.flows.len() - 1);
                self.flows.len() - 1
            }
        };
        let flow = &mut self.flows[i];
        let s = if from_server { 0 } else { 1 };
        let [a, b] = &mut flow.sides;
        let (me, peer) = if s == 0 { (a, b) } else { (b, a) };
        if v.syn() {
            me.isn = Some(v.seq);
        }
        let isn = *me.isn.get_or_insert(v.seq.wrapping_sub(1));
        let rel_seq = v.seq.wrapping_sub(isn) as u64;
        let rel_ack = match peer.isn {
            Some(p) if v.flags & crate::wire::ACK != 0 => v.ack.wrapping_sub(p) as u64,
            _ => 0,
        };
        let message = if from_server && v.payload > 0 {
            self.messages.get(&flow.index).and_then(|ms| {
                ms.iter()
                    .find(|&&(a, b)| rel_seq >= a && rel_seq < b)
                    .copied()
            })
        } else {
            None
        };
        PacketMeta {
            flow: flow.index,
            payload: v.payload,
            rel_seq,
            message,
            from_server,
            duplicate: false,
            corrective: false,
            rel_ack,
        }
    }
}
