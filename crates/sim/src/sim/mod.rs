//! The discrete-event simulator: one event queue over integer virtual time (ns).
//!
//! Hosts run [`gentle_tcp::Connection`]s and the workload applications; links are
//! [`Channel`]s, one per direction; every node forwards packets along the shortest
//! path (in hops) to their destination. Results are a pure function of the setup
//! and the trial seed: the event queue orders ties by insertion, and every random
//! draw comes from a stream derived from the seed (see [`crate::rng`]).

mod apps;
mod build;
mod capture;
mod metrics;
pub mod observe;
mod open;
mod queues;
mod relay;
mod spare;
mod tcp_sessions;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::Duration;

use gentle_tcp::corrective::CorrectiveOption;
use gentle_tcp::{Config, Connection, Flags, Instant, Segment};
use rustc_hash::FxHashMap;

pub use capture::ipv4_frame as capture_frame;
pub use capture::{Capture, PacketInfo, TraceLine, TraceRecorder, TraceWhat};
pub use observe::{DropReason, Observer, PacketEvent, PacketView};

use crate::link::{Admit, Channel, ChannelStorage, LinkSpec};
use crate::packet::{Packet, PacketMeta, Slab};
use crate::record::TrialResult;
use crate::rng::HostRng;
use crate::workload::WorkloadSpec;
use apps::{AppConn, WorkloadRt};
use metrics::{EpisodeWatch, TailWatch};
use spare::Scratch;

/// Everything needed to build one trial's simulation.
#[derive(Clone, Debug)]
pub struct Setup {
    pub nodes: Vec<Arc<str>>,
    pub links: Vec<LinkSpec>,
    /// Shared, not copied, by the trials that use the same ones.
    pub workloads: Vec<Arc<WorkloadSpec>>,
    /// TCP configuration of every endpoint not given its own.
    pub config: Arc<Config>,
    /// A trial stops at this virtual time even if work is unfinished; a setup
    /// without a measured workload runs until it.
    pub time_limit: Duration,
}

/// A setup error (unknown node, unreachable destination).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupError(pub String);

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SetupError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A packet that does not keep its channel's order (held back for reordering).
    Arrive {
        node: u16,
        pkt: u32,
    },
    /// The packet at the head of a channel's arrival queue.
    ChanArrive {
        chan: u32,
    },
    /// The transmitter of a channel with a scheduled queue is free.
    TxFree {
        chan: u32,
    },
    Timer {
        conn: u32,
    },
    /// A TCP session's retransmission timer.
    SessionTimer {
        scb: u32,
    },
    App {
        wl: u16,
        action: apps::Action,
    },
}

/// An event in the queue. Events are ordered by time, then by when they were
/// pushed (`seq`, unique): the event itself never decides an order.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl Entry {
    /// The order key: time in the high half, `seq` in the low.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

pub(crate) struct ConnSlot {
    pub conn: Connection,
    pub node: u16,
    pub session: u32,
    pub is_server: bool,
    pub timer_at: Option<Instant>,
    /// Its path state went to the host's cache when it closed.
    pub cached: bool,
    /// The TCP session it is a member of (an index into `Sim::host_sessions`).
    pub scb: Option<u32>,
}

impl ConnSlot {
    fn new(conn: Connection, node: u16, session: u32, is_server: bool) -> ConnSlot {
        ConnSlot {
            conn,
            node,
            session,
            is_server,
            timer_at: None,
            cached: false,
            scb: None,
        }
    }

    /// The slot's books for a new connection in it.
    fn reset(&mut self, node: u16, session: u32, is_server: bool) {
        self.node = node;
        self.session = session;
        self.is_server = is_server;
        self.timer_at = None;
        self.cached = false;
        self.scb = None;
    }
}

/// What a trial adds up as it runs; the rest of its [`TrialResult`] is summed from
/// its connections and channels when it ends.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub trial: u64,
    pub exchanges: Vec<crate::record::ExchangeRecord>,
    pub pages: Vec<crate::record::PageRecord>,
    pub events: u64,
    pub data_packets: u64,
    pub packets: u64,
    pub corrupt_bytes: u64,
    pub timed_out: bool,
}

/// One trial's simulation, shown to an [`Observer`] if one is attached.
pub struct Sim<'o> {
    now: Instant,
    seq: u64,
    heap: BinaryHeap<Reverse<Entry>>,
    slab: Slab,
    node_names: Vec<Arc<str>>,
    /// `route[node * nodes + dst]` = channel index, or `u32::MAX` if unreachable.
    route: Vec<u32>,
    route_scratch: Scratch,
    chans: Vec<Channel>,
    /// Earlier trials' channels' queues not used by this trial's (kept in `spare::Spare` between trials).
    chan_storage: Vec<ChannelStorage>,
    /// The trial's connections are `conns[..live_conns]`; the slots after them are
    /// an earlier trial's, overwritten where they stand when a connection is made.
    pub(crate) conns: Vec<ConnSlot>,
    live_conns: u32,
    demux: FxHashMap<u64, u32>,
    /// Listening (node, port) pairs.
    listeners: Vec<(u16, u16)>,
    pub(crate) app_conns: Vec<AppConn>,
    app_conn_by_client: FxHashMap<u64, u32>,
    pub(crate) workloads: Vec<WorkloadRt>,
    host_rngs: Vec<HostRng>,
    /// Each host's path state per peer host, left by closed connections (Linux
    /// `tcp_metrics`), for fast start (`fast-start-and-sessions.txt` §3.2).
    path_cache: FxHashMap<(u16, u16), gentle_tcp::PathMetrics>,
    /// TCP sessions (`fast-start-and-sessions.txt` §6), one per (host, peer host).
    host_sessions: Vec<tcp_sessions::HostSession>,
    host_session_of: FxHashMap<(u16, u16), u32>,
    next_port: Vec<u16>,
    config: Arc<Config>,
    time_limit: u64,
    pub(crate) tally: Tally,
    measured_left: u32,
    /// Tail times of the current responses (an observer of the packets).
    pub(crate) tails: TailWatch,
    /// Recovery episodes (an observer of the connections).
    episodes: EpisodeWatch,
    observer: Option<&'o mut dyn Observer>,
    /// Connections record engine events for the observer.
    engine_events: bool,
}

fn demux_key(node: u16, lport: u16, peer: u16, pport: u16) -> u64 {
    (node as u64) << 48 | (lport as u64) << 32 | (peer as u64) << 16 | pport as u64
}

impl<'o> Sim<'o> {
    /// Shows the trial to `observer` as it runs.
    pub fn with_observer(mut self, observer: &'o mut dyn Observer) -> Sim<'o> {
        self.engine_events = observer.wants_engine_events();
        if self.engine_events && !self.config.trace {
            Arc::make_mut(&mut self.config).trace = true;
        }
        self.observer = Some(observer);
        self
    }

    /// Puts `pkt` into the network at node `node` at virtual time `at`, as if it
    /// arrived there: it is forwarded towards `pkt.dst` (or received, if that is
    /// `node`). A traffic source outside the hosts' TCP, such as a burst of
    /// fast start packets in a test; give it a `meta.flow` no session has
    /// (`u32::MAX`) to keep it out of the sessions' counts.
    pub fn inject(&mut self, at: Duration, node: u16, pkt: Packet) {
        let slot = self.slab.insert(pkt);
        self.push(at.as_nanos() as u64, Ev::Arrive { node, pkt: slot });
    }

    fn push(&mut self, time: u64, ev: Ev) {
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            time: time.max(self.now.as_nanos()),
            seq,
            ev,
        }));
    }

    /// Runs the trial to completion (or its time limit) and returns its results.
    pub fn run(mut self) -> TrialResult {
        // Without a measured workload (cross traffic alone), the trial runs for its
        // whole time limit.
        let ends_when_measured_done = self.measured_left > 0;
        while let Some(Reverse(e)) = self.heap.pop() {
            if ends_when_measured_done && self.measured_left == 0 {
                break;
            }
            if e.time > self.time_limit {
                self.tally.timed_out = self.measured_left > 0;
                self.now = Instant::from_nanos(self.time_limit);
                break;
            }
            self.now = Instant::from_nanos(e.time);
            self.tally.events += 1;
            match e.ev {
                Ev::Arrive { node, pkt } => self.on_arrive(node, pkt),
                Ev::ChanArrive { chan } => self.on_chan_arrive(chan as usize),
                Ev::TxFree { chan } => self.on_tx_free(chan as usize),
                Ev::Timer { conn } => self.on_timer(conn, e.time),
                Ev::SessionTimer { scb } => self.on_session_timer(scb, e.time),
                Ev::App { wl, action } => self.on_app(wl, action),
            }
        }
        self.finish()
    }

    /// Names of the nodes, by index.
    pub fn node_names(&self) -> &[Arc<str>] {
        &self.node_names
    }

    // ------------------------------------------------------------- network

    /// Puts `pkt` into the slab, where it stays until it is read or dropped, and
    /// on its way from `node`.
    fn send(&mut self, node: u16, pkt: Packet) {
        let slot = self.slab.insert(pkt);
        self.send_slot(node, slot);
    }

    /// [`send`](Self::send) for a packet already in the slab.
    fn send_slot(&mut self, node: u16, slot: u32) {
        self.tally.packets += 1;
        if self.slab.get(slot).meta.payload > 0 {
            self.tally.data_packets += 1;
        }
        self.emit_slot(PacketEvent::Send, node, slot);
        self.forward_slot(node, slot);
    }

    /// Sends the packet in `slot` from `node` towards its destination: onto the
    /// channel of the first hop, or nowhere if there is none.
    fn forward_slot(&mut self, node: u16, slot: u32) {
        let pkt = self.slab.get(slot);
        let chan = self.hop(node as usize, pkt.dst as usize);
        if chan == u32::MAX {
            self.slab.free(slot);
            return;
        }
        let mut bytes = pkt.wire_len();
        let meta = pkt.meta;
        // A middlebox rewrites the packet in place (in the slab, so the common path
        // moves the packet only once); a stripped option shortens it.
        if self.chans[chan as usize].rewrites() {
            let p = self.slab.get_mut(slot);
            if !self.chans[chan as usize].rewrite(&mut p.seg) {
                self.dropped(slot, chan, DropReason::Middlebox);
                return;
            }
            bytes = p.wire_len();
        }
        let now = self.now.as_nanos();
        let c = &mut self.chans[chan as usize];
        let admit = if c.managed() {
            self.admit_managed(chan, now, bytes, &meta, slot)
        } else {
            c.admit(now, bytes, &meta)
        };
        match admit {
            Admit::Queued { depart_ns } => {
                self.emit_slot(PacketEvent::Enqueue { link: chan }, node, slot);
                self.propagate(chan as usize, slot, bytes, depart_ns)
            }
            Admit::Waiting { wake_ns } => self.waiting(chan, node, slot, wake_ns),
            Admit::DroppedLoss => self.dropped(slot, chan, DropReason::Loss),
            Admit::DroppedQueue => self.dropped(slot, chan, DropReason::Queue),
            Admit::DroppedPolicer => self.dropped(slot, chan, DropReason::Policer),
        }
    }

    /// Shows a packet event to the metrics that want it and to the observer. The
    /// common case — no observer, and a packet no metric follows — costs one test.
    #[inline]
    fn emit(&mut self, ev: PacketEvent, node: u16, pkt: &Packet) {
        if TailWatch::wants(ev, node, pkt.src, &pkt.meta) {
            self.tails.seen(ev, &pkt.meta, self.now.as_nanos());
        }
        if self.observer.is_some() {
            self.emit_to(ev, node, pkt);
        }
    }

    /// [`emit`](Self::emit) for a packet in the slab.
    #[inline(always)]
    fn emit_slot(&mut self, ev: PacketEvent, node: u16, slot: u32) {
        let pkt = self.slab.get(slot);
        if TailWatch::wants(ev, node, pkt.src, &pkt.meta) {
            self.tails.seen(ev, &pkt.meta, self.now.as_nanos());
        }
        if let Some(o) = self.observer.as_deref_mut() {
            show(
                o,
                ev,
                node,
                pkt,
                self.now,
                &self.app_conns,
                &self.conns,
                &self.node_names,
            );
        }
    }

    #[inline(never)]
    fn emit_to(&mut self, ev: PacketEvent, node: u16, pkt: &Packet) {
        if let Some(o) = self.observer.as_deref_mut() {
            show(
                o,
                ev,
                node,
                pkt,
                self.now,
                &self.app_conns,
                &self.conns,
                &self.node_names,
            );
        }
    }

    fn dropped(&mut self, slot: u32, chan: u32, reason: DropReason) {
        let pkt = self.slab.take(slot);
        if let Some(s) = self.app_conns.get_mut(pkt.meta.flow as usize) {
            s.drops += 1;
        }
        let node = self.chans[chan as usize].from;
        self.emit(PacketEvent::Drop { reason, link: chan }, node, &pkt);
    }

    /// The packet in `slot` leaves channel `chan` at `depart_ns` and arrives one
    /// propagation delay later.
    #[inline(always)]
    fn propagate(&mut self, chan: usize, slot: u32, bytes: usize, depart_ns: u64) {
        let payload = self.slab.get(slot).meta.payload;
        let c = &mut self.chans[chan];
        let (t, held_back, dup) = c.propagation(payload, depart_ns);
        c.stats.delivered += 1;
        c.stats.bytes_delivered += bytes as u64;
        let to = c.to;
        let copy = dup.then(|| {
            let mut copy = self.slab.get(slot).clone();
            copy.meta.duplicate = true;
            self.slab.insert(copy)
        });
        if held_back {
            self.push(
                t,
                Ev::Arrive {
                    node: to,
                    pkt: slot,
                },
            );
            if let Some(s2) = copy {
                self.push(t, Ev::Arrive { node: to, pkt: s2 });
            }
            return;
        }
        let c = &mut self.chans[chan];
        let idle = c.arrivals.is_empty();
        c.arrivals.push_back((t, slot));
        if let Some(s2) = copy {
            c.arrivals.push_back((t, s2));
        }
        if idle {
            self.push(t, Ev::ChanArrive { chan: chan as u32 });
        }
    }

    fn on_chan_arrive(&mut self, chan: usize) {
        let c = &mut self.chans[chan];
        let Some((_, slot)) = c.arrivals.pop_front() else {
            return;
        };
        let to = c.to;
        if let Some(&(next, _)) = c.arrivals.front() {
            self.push(next, Ev::ChanArrive { chan: chan as u32 });
        }
        self.on_arrive(to, slot);
    }

    /// A packet reaches `node`: it is forwarded, or read where it stands in the slab
    /// by the connection it is for.
    fn on_arrive(&mut self, node: u16, slot: u32) {
        let pkt = self.slab.get(slot);
        if pkt.dst != node {
            self.forward_slot(node, slot);
            return;
        }
        self.emit_slot(PacketEvent::Recv, node, slot);
        let pkt = self.slab.get(slot);
        let seg = &pkt.seg;
        let key = demux_key(node, seg.dst_port, pkt.src, seg.src_port);
        if let Some(&c) = self.demux.get(&key)
            && !self.conns[c as usize].conn.is_closed()
        {
            self.conns[c as usize].conn.handle_segment(self.now, seg);
            self.slab.free(slot);
            if self.conns[c as usize].scb.is_some() {
                self.session_input(c);
            }
            self.service(c);
            return;
        }
        let pkt = self.slab.take(slot);
        let seg = &pkt.seg;
        if seg.flags.syn() && !seg.flags.ack() && self.listeners.contains(&(node, seg.dst_port)) {
            self.accept(node, &pkt);
            return;
        }
        if !seg.flags.rst() {
            self.send_reset(node, &pkt);
        }
    }

    /// RFC 9293 §3.10.7.1: a segment for no connection is answered with a reset.
    fn send_reset(&mut self, node: u16, pkt: &Packet) {
        let s = &pkt.seg;
        let mut r = Segment {
            src_port: s.dst_port,
            dst_port: s.src_port,
            ..Segment::default()
        };
        if s.flags.ack() {
            r.seq = s.ack;
            r.flags = Flags::RST;
        } else {
            r.ack = s.seq.wrapping_add(s.seq_len());
            r.flags = Flags::RST | Flags::ACK;
        }
        let meta = PacketMeta {
            flow: pkt.meta.flow,
            from_server: !pkt.meta.from_server,
            ..Default::default()
        };
        self.send(
            node,
            Packet {
                src: node,
                dst: pkt.src,
                seg: r,
                meta,
            },
        );
    }

    /// After input to connection `c`: let its application act, transmit what the
    /// engine has, and schedule its timer.
    pub(crate) fn service(&mut self, c: u32) {
        let conn = &self.conns[c as usize].conn;
        self.episodes.on_connection(self.now, c, conn);
        if let Some(o) = self.observer.as_deref_mut() {
            o.on_connection(self.now, c, conn);
        }
        self.app_progress(c);
        let scb = self.session_membership(c);
        // Each segment is built where it will travel, in the slab.
        loop {
            let slot = self.slab.vacant();
            let out = &mut self.slab.get_mut(slot).seg;
            if !self.conns[c as usize]
                .conn
                .poll_transmit_into(self.now, out)
            {
                self.slab.free(slot);
                break;
            }
            self.transmit_slot(c, slot);
        }
        if let Some(k) = scb {
            self.session_output(k);
        }
        self.save_path_state_if_closed(c);
        if self.engine_events {
            let node = self.conns[c as usize].node;
            while let Some(ev) = self.conns[c as usize].conn.poll_event() {
                if let Some(o) = self.observer.as_deref_mut() {
                    o.on_engine(ev.time, node, c, &ev.event, &self.node_names);
                }
            }
        }
        self.schedule_timer(c);
    }

    /// Puts segment `seg` of connection `c` on the network.
    pub(crate) fn transmit(&mut self, c: u32, seg: Segment) {
        let slot = self.slab.vacant();
        self.slab.get_mut(slot).seg = seg;
        self.transmit_slot(c, slot);
    }

    /// Puts the segment of connection `c` built in slab slot `at` on the network.
    fn transmit_slot(&mut self, c: u32, at: u32) {
        let slot = &self.conns[c as usize];
        let (node, session, is_server) = (slot.node, slot.session, slot.is_server);
        let seg = &self.slab.get(at).seg;
        let s = &self.app_conns[session as usize];
        let peer = if is_server { s.client } else { s.server };
        let rel_seq = seg.seq.wrapping_sub(slot.conn.iss()) as u64;
        let payload = seg.payload.len() as u32;
        let message = if is_server && payload > 0 {
            s.message_at(rel_seq)
        } else {
            None
        };
        let rel_ack = if seg.flags.ack() {
            seg.ack.wrapping_sub(slot.conn.irs()) as u64
        } else {
            0
        };
        let meta = PacketMeta {
            flow: session,
            payload,
            rel_seq,
            message,
            from_server: is_server,
            duplicate: false,
            corrective: payload > 0 && CorrectiveOption::is_encoded(seg),
            rel_ack,
        };
        let p = self.slab.get_mut(at);
        (p.src, p.dst, p.meta) = (node, peer, meta);
        self.send_slot(node, at);
    }

    fn schedule_timer(&mut self, c: u32) {
        let slot = &mut self.conns[c as usize];
        if let Some(t) = slot.conn.poll_timeout()
            && slot.timer_at.is_none_or(|at| t < at)
        {
            slot.timer_at = Some(t);
            self.push(t.as_nanos(), Ev::Timer { conn: c });
        }
    }

    fn on_timer(&mut self, c: u32, time: u64) {
        let slot = &mut self.conns[c as usize];
        if slot.timer_at != Some(Instant::from_nanos(time)) {
            return; // superseded
        }
        slot.timer_at = None;
        slot.conn.handle_timeout(self.now);
        self.service(c);
    }

    pub(crate) fn schedule_app(&mut self, at: Instant, wl: u16, action: apps::Action) {
        self.push(at.as_nanos(), Ev::App { wl, action });
    }

    pub(crate) fn workload_done(&mut self, wl: u16) {
        let w = &mut self.workloads[wl as usize];
        if !w.done {
            w.done = true;
            if w.spec.measure {
                self.measured_left -= 1;
            }
        }
    }
}

/// Shows `pkt` to the observer (out of line: the common case has none).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn show(
    o: &mut dyn Observer,
    ev: PacketEvent,
    node: u16,
    pkt: &Packet,
    t: Instant,
    sessions: &[AppConn],
    conns: &[ConnSlot],
    nodes: &[Arc<str>],
) {
    let view = PacketView {
        t,
        node,
        src: pkt.src,
        dst: pkt.dst,
        seg: &pkt.seg,
        meta: &pkt.meta,
        isn: isn_of(sessions, conns, pkt),
        nodes,
    };
    o.on_packet(ev, &view);
}

/// The sending connection's ISS and IRS for `pkt`, when the simulator knows them.
fn isn_of(sessions: &[AppConn], conns: &[ConnSlot], pkt: &Packet) -> Option<(u32, u32)> {
    let s = sessions.get(pkt.meta.flow as usize)?;
    let c = if pkt.meta.from_server {
        s.sconn?
    } else {
        s.cconn
    };
    let conn = &conns[c as usize].conn;
    Some((conn.iss(), conn.irs()))
}
