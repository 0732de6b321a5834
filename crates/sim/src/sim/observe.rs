//! One-way observation: the simulator emits typed events to observers and never
//! reads anything back from them, in the manner of smoltcp's `phy/` middleware
//! (a tracer or pcap writer wraps the path without changing it).
//!
//! - Packet events: a packet is sent by a host, enters a link's queue, is dropped
//!   (by a loss model or a full queue), or is received by its destination host.
//! - Engine events: what a connection's trace reports (state changes, timers,
//!   retransmissions, undo), when an observer asks for them.
//! - Connection progress: a connection after each input, for metrics that follow
//!   its state (recovery episodes).
//!
//! The paper metrics (tail times, recovery episodes: [`super::metrics`]), the trace
//! ([`TraceRecorder`]) and the packet capture ([`Capture`]) are observers. The
//! events speak of wire segments and numbered hosts only, so packets read from a
//! TUN device or a pcap file can feed the same observers; the simulator-only facts
//! travel in [`PacketMeta`], which such sources fill as far as they know.

use gentle_tcp::{Connection, Event, Instant, Segment};
use std::sync::Arc;

use crate::packet::PacketMeta;

/// Why the network dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A loss model chose it.
    Loss,
    /// The link's queue was full.
    Queue,
    /// A middlebox refused it (reserved header bits set).
    Middlebox,
    /// The link's token-bucket policer found too few tokens for it.
    Policer,
}

impl DropReason {
    /// The name traces use.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Loss => "loss",
            DropReason::Queue => "queue",
            DropReason::Middlebox => "middlebox",
            DropReason::Policer => "policer",
        }
    }
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// A host sent it.
    Send,
    /// It entered the queue of link `link` (a channel index) at the observed node.
    Enqueue {
        /// The channel.
        link: u32,
    },
    /// The network dropped it on link `link`.
    Drop {
        /// Why.
        reason: DropReason,
        /// The channel.
        link: u32,
    },
    /// Its destination host received it.
    Recv,
}

/// A packet at an observation point.
#[derive(Clone, Copy, Debug)]
pub struct PacketView<'a> {
    /// When.
    pub t: Instant,
    /// Where: the host that sent or received it, or the node whose link took or
    /// dropped it.
    pub node: u16,
    /// The sending and receiving hosts.
    pub src: u16,
    /// The receiving host.
    pub dst: u16,
    /// The segment as it is on the wire there.
    pub seg: &'a Segment,
    /// Facts the simulator knows beyond the wire.
    pub meta: &'a PacketMeta,
    /// The sending connection's ISS and IRS, when known, for relative numbers.
    pub isn: Option<(u32, u32)>,
    /// Host names by index.
    pub nodes: &'a [Arc<str>],
}

/// Receives what the simulator shows. Every method does nothing by default.
pub trait Observer {
    /// A packet event.
    fn on_packet(&mut self, _ev: PacketEvent, _p: &PacketView<'_>) {}
    /// An engine trace event of connection `conn` at host `node`; only delivered when
    /// [`wants_engine_events`](Self::wants_engine_events) says so.
    fn on_engine(&mut self, _t: Instant, _node: u16, _conn: u32, _ev: &Event, _nodes: &[Arc<str>]) {
    }
    /// Connection `conn` after an input (segment, timer or application call).
    fn on_connection(&mut self, _t: Instant, _conn: u32, _c: &Connection) {}
    /// Whether connections must record engine events (they cost time).
    fn wants_engine_events(&self) -> bool {
        false
    }
}

impl<A: Observer, B: Observer> Observer for (A, B) {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        self.0.on_packet(ev, p);
        self.1.on_packet(ev, p);
    }
    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[Arc<str>]) {
        self.0.on_engine(t, node, conn, ev, nodes);
        self.1.on_engine(t, node, conn, ev, nodes);
    }
    fn on_connection(&mut self, t: Instant, conn: u32, c: &Connection) {
        self.0.on_connection(t, conn, c);
        self.1.on_connection(t, conn, c);
    }
    fn wants_engine_events(&self) -> bool {
        self.0.wants_engine_events() || self.1.wants_engine_events()
    }
}

impl<O: Observer + ?Sized> Observer for &mut O {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        (**self).on_packet(ev, p);
    }
    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[Arc<str>]) {
        (**self).on_engine(t, node, conn, ev, nodes);
    }
    fn on_connection(&mut self, t: Instant, conn: u32, c: &Connection) {
        (**self).on_connection(t, conn, c);
    }
    fn wants_engine_events(&self) -> bool {
        (**self).wants_engine_events()
    }
}

/// Observes nothing.
impl Observer for () {}
