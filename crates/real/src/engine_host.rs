//! gentle's sans-IO engine as a host on a TUN device: the far end of a network
//! namespace's TUN, where the kernel in that namespace sees an ordinary TCP peer
//! at [`crate::topology::SERVER_ADDR`] (or the client's address). This is how a
//! user-space stack sits on a TUN (smoltcp's examples do the same): what the
//! kernel routes to the peer's address is read from the TUN, and what the engine
//! sends is written into it. Here the forwarder ([`crate::forward`]) stands in
//! between, so the engine's packets cross the scenario's link model like anyone's.
//!
//! The host is driven by the forwarder's loop and clock ([`Host`]): it never reads
//! a clock or draws unseeded randomness itself (ISNs come from a seeded stream), and
//! the engine ([`gentle_tcp::Connection`]) is the simulator's, with any profile and
//! switches.
//!
//! What crosses the wire (RFC 791 §3.1, RFC 9293 §3.1): IPv4 packets with valid
//! header and TCP checksums, DF set, the segment's ECN codepoint in the TOS byte.
//! What it accepts: IPv4 TCP addressed to it with both checksums right; anything
//! else is dropped and counted, never a panic — IPv6 and other protocols as
//! ignored, damaged packets as malformed. A segment for no connection gets a reset
//! (RFC 9293 §3.10.7.1).
//!
//! Applications: as a server, connections from gentle's own clients (client port
//! `CLIENT_PORT_BASE + k`) are served by the trial's plan, exactly as the kernel
//! server of `gentle emulate` serves them; any other connection meets a small
//! HTTP/1.1 responder (`GET /N` answers N bytes, `GET /` the workload's response
//! size), which is what `curl` talks to. As a client, the host runs the trial's
//! client scripts (fresh or persistent connections, think times, timed starts).

use std::collections::VecDeque;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use gentle_tcp::wire::{Ecn, Flags, Options};
use gentle_tcp::{CloseReason, Config, Connection, Counters, Instant, Segment};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::endpoints::{
    CLIENT_PORT_BASE, ClientScript, ConnPlan, ExchangeResult, Measured, PATTERN,
};
use crate::forward::Host;
pub use crate::http_responder::HttpExchange;
use crate::http_responder::{HttpServer, http_step};

/// Bytes the host keeps queued ahead of acknowledgment for an endless sender.
const ENDLESS_AHEAD: u64 = 1 << 20;

/// What the host does.
#[derive(Clone, Debug)]
pub enum Role {
    /// Listens on `ports`; serves `plans` (by client port) and HTTP otherwise.
    Server {
        ports: Vec<u16>,
        plans: Vec<ConnPlan>,
        /// `GET /`'s answer, bytes.
        default_response: u64,
    },
    /// Runs client scripts against the peer.
    Client { scripts: Vec<ClientScript> },
}

/// What the host saw, shared with whoever started it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HostReport {
    /// Packets taken in.
    pub received: u64,
    /// Packets that were not IPv4 TCP to this host (IPv6, ICMP, UDP, others').
    pub ignored: u64,
    /// Damaged packets: bad IPv4 or TCP checksum, a header that does not parse.
    pub malformed: u64,
    /// Resets sent to segments for no connection.
    pub resets_sent: u64,
    /// Connections opened (accepted or connected).
    pub connections: u64,
    /// The engine's counters, summed over every connection.
    pub counters: Counters,
    pub http: Vec<HttpExchange>,
}

/// The host's shared outputs.
#[derive(Clone, Default)]
pub struct HostShared {
    pub report: Arc<Mutex<HostReport>>,
    /// Exchange results in `gentle emulate`'s form.
    pub measured: Arc<Mutex<Measured>>,
    /// Client scripts finished (measured ones).
    pub scripts_done: Arc<AtomicUsize>,
}

/// The engine on a TUN device.
pub struct EngineHost {
    addr: Ipv4Addr,
    peer: Ipv4Addr,
    cfg: Config,
    rng: ChaCha8Rng,
    role: Role,
    conns: Vec<HostConn>,
    scripts: Vec<ScriptRun>,
    resets: VecDeque<Segment>,
    ident: u16,
    /// The forwarder's clock at its 0, ns on the monotonic clock.
    base_ns: u64,
    shared: HostShared,
    local: HostReport,
}

struct HostConn {
    c: Connection,
    app: App,
    /// Counters folded into the totals already (when it closed).
    folded: bool,
}

enum App {
    Plan(PlanServer),
    Http(HttpServer),
    /// A client script's connection (the script drives it).
    Script,
}

struct PlanServer {
    plan: ConnPlan,
    next: usize,
    /// Request bytes received and not yet consumed.
    avail: u64,
    /// Waiting for the response of this exchange to be acknowledged: (start ns, counters before).
    acking: Option<(u64, Counters)>,
    /// Scripted writes: established at, next write.
    writes_from: Option<u64>,
    next_write: usize,
}

struct ScriptRun {
    script: ClientScript,
    conn_i: usize,
    ex_i: usize,
    conn: Option<usize>,
    st: ScriptState,
    prev_end: Option<u64>,
    r: ExchangeResult,
    left: u64,
    /// This exchange opened its connection.
    opened: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScriptState {
    Wait(u64),
    Connecting,
    Reading,
    ReadingFin,
    Done,
}

impl EngineHost {
    /// A host at `addr` talking to `peer`, running `cfg` (the engine's profile and
    /// switches), with ISNs from `rng`.
    pub fn new(
        addr: Ipv4Addr,
        peer: Ipv4Addr,
        mut cfg: Config,
        rng: ChaCha8Rng,
        role: Role,
        shared: HostShared,
    ) -> EngineHost {
        cfg.trace = false;
        let scripts = match &role {
            Role::Client { scripts } => scripts
                .iter()
                .map(|s| ScriptRun {
                    script: s.clone(),
                    conn_i: 0,
                    ex_i: 0,
                    conn: None,
                    st: ScriptState::Wait(s.start.as_nanos() as u64),
                    prev_end: None,
                    r: ExchangeResult::default(),
                    left: 0,
                    opened: false,
                })
                .collect(),
            Role::Server { .. } => Vec::new(),
        };
        EngineHost {
            addr,
            peer,
            cfg,
            rng,
            role,
            conns: Vec::new(),
            scripts,
            resets: VecDeque::new(),
            ident: 0,
            base_ns: 0,
            shared,
            local: HostReport::default(),
        }
    }

    fn mono(&self, now: u64) -> u64 {
        self.base_ns + now
    }

    fn find(&self, remote: u16, local: u16) -> Option<usize> {
        self.conns.iter().position(|h| {
            h.c.remote_port() == remote && h.c.local_port() == local && !h.c.is_closed()
        })
    }

    /// Takes a packet: checks, demultiplexes, answers for no connection.
    fn input(&mut self, now: u64, p: &[u8]) {
        self.local.received += 1;
        let Some(view) = crate::wire::parse(p) else {
            // Not IPv4 TCP, or a header that does not hold together.
            if p.first().is_some_and(|b| b >> 4 == 4) && p.len() >= 20 && p[9] == 6 {
                self.local.malformed += 1;
            } else {
                self.local.ignored += 1;
            }
            return;
        };
        if view.dst != self.addr || view.src != self.peer {
            self.local.ignored += 1;
            return;
        }
        let ihl = ((p[0] & 0x0f) as usize) * 4;
        if gentle_tcp::wire::ipv4_header_checksum(&p[..ihl]) != 0 {
            self.local.malformed += 1;
            return;
        }
        let tcp = &p[ihl..view.len as usize];
        let Ok(mut seg) = Segment::parse_checked(tcp, view.src.octets(), view.dst.octets()) else {
            self.local.malformed += 1;
            return;
        };
        seg.ecn = Ecn::from_bits(p[1] & 0b11);
        let t = Instant::from_nanos(now);
        if let Some(i) = self.find(seg.src_port, seg.dst_port) {
            self.conns[i].c.handle_segment(t, &seg);
            return;
        }
        let listening = match &self.role {
            Role::Server { ports, .. } => ports.contains(&seg.dst_port),
            Role::Client { .. } => false,
        };
        if listening && seg.flags.syn() && !seg.flags.ack() && !seg.flags.rst() {
            if let Some(c) = Connection::accept(self.cfg.clone(), t, &seg, &mut self.rng) {
                let app = self.server_app(&seg);
                self.local.connections += 1;
                self.conns.push(HostConn {
                    c,
                    app,
                    folded: false,
                });
            }
            return;
        }
        self.reset_for(&seg);
    }

    fn server_app(&self, syn: &Segment) -> App {
        let Role::Server {
            plans,
            default_response,
            ..
        } = &self.role
        else {
            return App::Script;
        };
        let k = syn.src_port.wrapping_sub(CLIENT_PORT_BASE) as u32;
        match plans
            .iter()
            .find(|p| p.index == k && p.port == syn.dst_port)
        {
            Some(plan) => App::Plan(PlanServer {
                plan: plan.clone(),
                next: 0,
                avail: 0,
                acking: None,
                writes_from: None,
                next_write: 0,
            }),
            None => App::Http(HttpServer::new(*default_response)),
        }
    }

    /// RFC 9293 §3.10.7.1: a segment for no connection is answered by a reset,
    /// unless it is one.
    fn reset_for(&mut self, seg: &Segment) {
        if seg.flags.rst() {
            return;
        }
        let mut r = Segment {
            src_port: seg.dst_port,
            dst_port: seg.src_port,
            seq: 0,
            ack: 0,
            flags: Flags::RST,
            window: 0,
            urgent: 0,
            options: Options::default(),
            payload: Bytes::new(),
            ecn: Ecn::NotEct,
        };
        if seg.flags.ack() {
            r.seq = seg.ack;
        } else {
            r.ack = seg.seq.wrapping_add(seg.seq_len());
            r.flags.insert(Flags::ACK);
        }
        self.local.resets_sent += 1;
        self.resets.push_back(r);
    }

    /// Runs the applications: reads what arrived, writes what is due. Then
    /// publishes the host's counts (one uncontended lock, nothing allocated: this
    /// runs on every packet).
    fn apps(&mut self, now: u64) {
        let mono = self.mono(now);
        let report = self.shared.report.clone();
        let mut r = report.lock().unwrap();
        for h in &mut self.conns {
            match &mut h.app {
                App::Plan(p) => plan_step(&mut h.c, p, mono, &self.shared),
                App::Http(s) => {
                    if let Some(x) = http_step(&mut h.c, s, mono, &mut r.http) {
                        r.http.push(x);
                    }
                }
                App::Script => {}
            }
        }
        for s in 0..self.scripts.len() {
            self.script_step(s, now);
        }
        // Fold the counters of connections that are over. Only served
        // connections are dropped: a script holds its connection's index.
        for h in &mut self.conns {
            if h.c.is_closed() && !h.folded {
                h.folded = true;
                self.local.counters.add(h.c.counters());
            }
        }
        self.conns
            .retain(|h| !(h.folded && matches!(h.app, App::Plan(_) | App::Http(_))));
        let mut counters = self.local.counters;
        for h in self.conns.iter().filter(|h| !h.folded) {
            counters.add(h.c.counters());
        }
        let l = &self.local;
        (r.received, r.ignored, r.malformed) = (l.received, l.ignored, l.malformed);
        (r.resets_sent, r.connections) = (l.resets_sent, l.connections);
        r.counters = counters;
    }

    fn script_step(&mut self, s: usize, now: u64) {
        let mono = self.mono(now);
        loop {
            let run = &mut self.scripts[s];
            match run.st {
                ScriptState::Done => return,
                ScriptState::Wait(t) => {
                    if now < t {
                        return;
                    }
                    let plan = &run.script.conns[run.conn_i];
                    let ex = &plan.exchanges[run.ex_i];
                    run.r = ExchangeResult {
                        workload: plan.workload,
                        index: ex.index,
                        conn: plan.index,
                        request: ex.request,
                        response: ex.response,
                        client_start: mono,
                        ..Default::default()
                    };
                    run.left = if plan.writes.is_empty() {
                        ex.response
                    } else {
                        plan.writes.iter().map(|w| w.1).sum()
                    };
                    run.opened = run.conn.is_none();
                    if run.conn.is_none() {
                        let port = CLIENT_PORT_BASE + plan.index as u16;
                        let c = Connection::connect(
                            self.cfg.clone(),
                            Instant::from_nanos(now),
                            port,
                            plan.port,
                            &mut self.rng,
                        );
                        self.local.connections += 1;
                        self.conns.push(HostConn {
                            c,
                            app: App::Script,
                            folded: false,
                        });
                        run.conn = Some(self.conns.len() - 1);
                    }
                    run.st = ScriptState::Connecting;
                }
                ScriptState::Connecting => {
                    let ci = run.conn.expect("connection");
                    let c = &mut self.conns[ci].c;
                    if c.is_closed() {
                        run.r.reset = c.close_reason() == Some(CloseReason::Reset);
                        self.script_fail(s);
                        return;
                    }
                    if !c.is_established() {
                        return;
                    }
                    if run.opened && !(run.script.fresh && run.ex_i == 0) {
                        // Only a fresh connection's first exchange counts the handshake.
                        run.r.client_start = mono;
                    }
                    let req = run.r.request;
                    if req > 0 {
                        c.write(Bytes::from(vec![b'r'; req as usize]));
                    }
                    run.st = ScriptState::Reading;
                }
                ScriptState::Reading => {
                    let ci = run.conn.expect("connection");
                    let c = &mut self.conns[ci].c;
                    while run.left > 0
                        && let Some(b) = c.read()
                    {
                        run.left = run.left.saturating_sub(b.len() as u64);
                    }
                    if run.left > 0 {
                        if c.is_closed() || c.peer_closed() {
                            run.r.reset = c.close_reason() == Some(CloseReason::Reset);
                            self.script_fail(s);
                        }
                        return;
                    }
                    run.r.complete = true;
                    run.r.client_end = Some(mono);
                    run.prev_end = run.r.client_end;
                    if run.script.conns[run.conn_i].server_close {
                        run.st = ScriptState::ReadingFin;
                    } else {
                        self.script_next(s, now);
                    }
                }
                ScriptState::ReadingFin => {
                    let ci = run.conn.expect("connection");
                    let c = &mut self.conns[ci].c;
                    while c.read().is_some() {}
                    if !(c.peer_closed() || c.is_closed()) {
                        return;
                    }
                    run.r.fin_at = Some(mono);
                    self.script_next(s, now);
                }
            }
        }
    }

    /// Hands script `s`'s exchange result over.
    fn record(&mut self, s: usize) {
        let r = std::mem::take(&mut self.scripts[s].r);
        self.shared.measured.lock().unwrap().exchanges.push(r);
    }

    /// Script `s` has nothing more to run.
    fn script_done(&mut self, s: usize) {
        let run = &mut self.scripts[s];
        run.st = ScriptState::Done;
        if run.script.measured {
            self.shared.scripts_done.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The exchange is over: record it and go on to the next.
    fn script_next(&mut self, s: usize, now: u64) {
        self.record(s);
        let run = &mut self.scripts[s];
        let plan = &run.script.conns[run.conn_i];
        run.ex_i += 1;
        if run.ex_i >= plan.exchanges.len() {
            if let Some(ci) = run.conn.take() {
                self.conns[ci].c.close();
            }
            run.conn_i += 1;
            run.ex_i = 0;
            if run.conn_i >= run.script.conns.len() {
                self.script_done(s);
                return;
            }
        }
        let plan = &run.script.conns[run.conn_i];
        let ex = &plan.exchanges[run.ex_i];
        let think = run.script.think.as_nanos() as u64;
        let at = match (ex.at, run.prev_end) {
            (Some(at), _) => at.as_nanos() as u64,
            (None, Some(e)) => e.saturating_sub(self.base_ns) + think,
            (None, None) => now,
        };
        run.st = ScriptState::Wait(at);
    }

    fn script_fail(&mut self, s: usize) {
        self.record(s);
        self.script_done(s);
    }

    /// The application timers: scripted writes, script starts and think times.
    fn app_timeout(&self) -> Option<u64> {
        let mut t: Option<u64> = None;
        let mut at = |x: u64| t = Some(t.map_or(x, |y: u64| y.min(x)));
        for s in &self.scripts {
            if let ScriptState::Wait(w) = s.st {
                at(w);
            }
        }
        for h in &self.conns {
            if let App::Plan(p) = &h.app
                && let Some(from) = p.writes_from
                && let Some(w) = p.plan.writes.get(p.next_write)
            {
                at((from + w.0.as_nanos() as u64).saturating_sub(self.base_ns));
            }
        }
        t
    }
}

/// A planned connection's server side, as the kernel server of `gentle emulate`.
fn plan_step(c: &mut Connection, p: &mut PlanServer, mono: u64, shared: &HostShared) {
    while let Some(b) = c.read() {
        p.avail += b.len() as u64;
    }
    if !c.is_established() && !c.was_established() {
        return;
    }
    if p.plan.endless {
        if c.bytes_written().saturating_sub(c.bytes_acked()) < ENDLESS_AHEAD {
            c.write(Bytes::from(vec![PATTERN; 64 * 1024]));
        }
        return;
    }
    if !p.plan.writes.is_empty() {
        let from = *p.writes_from.get_or_insert(mono);
        while let Some(&(at, n)) = p.plan.writes.get(p.next_write)
            && from + at.as_nanos() as u64 <= mono
        {
            c.write(Bytes::from(vec![PATTERN; n as usize]));
            p.next_write += 1;
            if p.next_write == p.plan.writes.len() {
                p.acking = Some((from, *c.counters()));
            }
        }
        if let Some((start, before)) = p.acking
            && c.all_acked()
        {
            p.acking = None;
            push_server(shared, &p.plan, 0, start, mono, before, c);
        }
        return;
    }
    loop {
        if let Some((start, before)) = p.acking {
            if !c.all_acked() {
                return;
            }
            p.acking = None;
            push_server(shared, &p.plan, p.next, start, mono, before, c);
            p.next += 1;
        }
        let Some(ex) = p.plan.exchanges.get(p.next) else {
            // Everything served: close once the client has.
            if c.peer_closed() {
                c.close();
            }
            return;
        };
        if p.avail < ex.request {
            return;
        }
        p.avail -= ex.request;
        let before = *c.counters();
        c.write(Bytes::from(vec![PATTERN; ex.response as usize]));
        if p.plan.server_close {
            c.close();
        }
        p.acking = Some((mono, before));
    }
}

fn push_server(
    shared: &HostShared,
    plan: &ConnPlan,
    i: usize,
    start: u64,
    end: u64,
    before: Counters,
    c: &Connection,
) {
    shared
        .measured
        .lock()
        .unwrap()
        .exchanges
        .push(ExchangeResult {
            workload: plan.workload,
            index: plan.exchanges.get(i).map_or(0, |e| e.index),
            conn: plan.index,
            server_start: Some(start),
            server_end: Some(end),
            engine_before: Some(before),
            engine_after: Some(*c.counters()),
            ..Default::default()
        });
}

impl Host for EngineHost {
    fn start(&mut self, base_ns: u64) {
        self.base_ns = base_ns;
    }

    fn receive(&mut self, now_ns: u64, packet: &[u8]) {
        self.input(now_ns, packet);
        self.apps(now_ns);
    }

    fn transmit(&mut self, now_ns: u64, buf: &mut [u8]) -> Option<usize> {
        let t = Instant::from_nanos(now_ns);
        let seg = match self.resets.pop_front() {
            Some(r) => r,
            None => {
                let mut out = None;
                for h in &mut self.conns {
                    if let Some(s) = h.c.poll_transmit(t) {
                        out = Some(s);
                        break;
                    }
                }
                out?
            }
        };
        self.ident = self.ident.wrapping_add(1);
        seg.emit_ipv4(self.addr.octets(), self.peer.octets(), self.ident, buf)
            .ok()
    }

    fn next_timeout(&self) -> Option<u64> {
        let engine = self
            .conns
            .iter()
            .filter_map(|h| h.c.poll_timeout())
            .map(|t| t.as_nanos())
            .min();
        match (engine, self.app_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timeout(&mut self, now_ns: u64) {
        let t = Instant::from_nanos(now_ns);
        for h in &mut self.conns {
            if h.c.poll_timeout().is_some_and(|d| d <= t) {
                h.c.handle_timeout(t);
            }
        }
        self.apps(now_ns);
    }
}
