//! The applications: clients and servers that drive the workloads and measure
//! response times (see [`crate::workload`] and [`crate::record`]).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use crate::rng::Lazy;
use gentle_tcp::{CloseReason, Instant};
use rand::Rng;

use super::Sim;
use crate::pattern;
use crate::record::{ExchangeCounts, ExchangeRecord, PageRecord, Unfinished};
use crate::workload::{ConnectionMode, Size, WorkloadKind, WorkloadSpec};

/// Bytes an endless bulk sender keeps queued ahead of what was acknowledged.
const BULK_AHEAD: u64 = 4 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Action {
    Start,
    OpenAppConn,
    NextExchange {
        session: u32,
    },
    /// The `k`-th scripted write of a `Writes` workload.
    Write {
        session: u32,
        k: u32,
    },
    /// A frontend wrote relayed bytes to this client session's connection.
    Relay {
        session: u32,
    },
    /// The client application closed this session's connection: send the FIN.
    Closed {
        session: u32,
    },
}

pub(crate) struct WorkloadRt {
    pub spec: Arc<WorkloadSpec>,
    pub client: u16,
    pub server: u16,
    pub start: Duration,
    pub rng: Lazy,
    /// Exchanges (or objects) started / finished.
    pub created: u32,
    pub finished: u32,
    pub total: u32,
    pub done: bool,
    pub page_start: Option<Instant>,
    pub page_bytes: u64,
    /// The backend node of a frontend workload, and its pool.
    pub backend_node: u16,
    pub pool: Pool,
}

impl WorkloadRt {
    pub fn new(spec: Arc<WorkloadSpec>, client: u16, server: u16, mut rng: Lazy) -> Self {
        let jitter = if spec.jitter.is_zero() {
            Duration::ZERO
        } else {
            Duration::from_nanos(rng.get().gen_range(0..spec.jitter.as_nanos() as u64))
        };
        let total = match &spec.kind {
            WorkloadKind::Exchanges { exchanges, .. } => *exchanges,
            WorkloadKind::Bulk { .. } | WorkloadKind::Writes { .. } => 1,
            WorkloadKind::Page { objects, .. } => *objects,
        };
        WorkloadRt {
            start: spec.start + jitter,
            spec,
            client,
            server,
            rng,
            created: 0,
            finished: 0,
            total,
            done: false,
            page_start: None,
            page_bytes: 0,
            backend_node: 0,
            pool: Default::default(),
        }
    }
}

/// An exchange in progress.
#[derive(Clone, Debug)]
pub(crate) struct Active {
    pub index: u32,
    pub request: u64,
    pub response: u64,
    /// Client stream offset where the request ends.
    pub req_end: u64,
    /// Server stream offset where the response ends (`None`: endless).
    pub resp_end: Option<u64>,
    pub resp_start: u64,
    pub client_start: Instant,
    pub server_start: Option<Instant>,
    pub server_end: Option<Instant>,
    pub client_end: Option<Instant>,
    pub snap: ExchangeCounts,
    pub snap_drops: u32,
    /// The server end's retransmissions when it began.
    pub snap_server_retrans: u64,
}

/// One client–server application connection and the exchanges it carries (not a
/// TCP session of `fast-start-and-sessions.txt`, which is `tcp_sessions`).
pub(crate) struct AppConn {
    pub wl: u16,
    pub client: u16,
    pub server: u16,
    pub cconn: u32,
    pub sconn: Option<u32>,
    pub opened: Instant,
    pub cur: Option<Active>,
    /// The next exchange starts when the client's handshake completes.
    pub start_on_established: bool,
    /// The server must start a pushed response once established.
    pub push_pending: bool,
    pub req_written: u64,
    pub resp_written: u64,
    pub client_rcvd: u64,
    pub server_rcvd: u64,
    pub client_closed: bool,
    pub server_closed: bool,
    pub server_close_after: bool,
    pub fin_delivered: Option<Instant>,
    pub drops: u32,
    pub corrupt: u64,
    pub exchanges_done: u32,
    /// The first exchange's client-side time starts at the SYN (fresh connections).
    pub count_handshake: bool,
    /// A frontend's connection to its backend, and what it relays.
    pub backend: Option<Relaying>,
}

/// A frontend's pool and queue (on the workload; see [`super::relay`]).
#[derive(Debug, Default)]
pub(crate) struct Pool {
    /// The backend connections.
    pub conns: Vec<u32>,
    /// Client connections whose request waits for a free backend connection.
    pub waiting: VecDeque<u32>,
    /// Every backend connection is established (the clients have started).
    pub up: bool,
}

/// What a backend session is doing (see [`super::relay`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Relaying {
    /// The client session whose request it carries.
    pub serving: Option<u32>,
    /// The backend stream offset where the response starts ...
    pub from: u64,
    /// ... and the bytes of it forwarded so far.
    pub forwarded: u64,
    /// The response's length.
    pub len: u64,
}

impl AppConn {
    /// A session whose client connection `cconn` just opened.
    pub fn new(wl: u16, client: u16, server: u16, cconn: u32, now: Instant) -> AppConn {
        AppConn {
            wl,
            client,
            server,
            cconn,
            sconn: None,
            opened: now,
            cur: None,
            start_on_established: false,
            push_pending: false,
            req_written: 0,
            resp_written: 0,
            client_rcvd: 0,
            server_rcvd: 0,
            client_closed: false,
            server_closed: false,
            server_close_after: false,
            fin_delivered: None,
            drops: 0,
            corrupt: 0,
            exchanges_done: 0,
            count_handshake: false,
            backend: None,
        }
    }

    /// The response message containing server stream offset `rel_seq` (1-based
    /// sequence offsets: the SYN is 0).
    pub fn message_at(&self, rel_seq: u64) -> Option<(u64, u64)> {
        let a = self.cur.as_ref()?;
        let start = a.resp_start + 1;
        let end = a.resp_end? + 1;
        (rel_seq >= start && rel_seq < end).then_some((start, end))
    }
}

impl Sim<'_> {
    pub(super) fn on_app(&mut self, wl: u16, action: Action) {
        match action {
            Action::Start => {
                let w = &mut self.workloads[wl as usize];
                let spec = Arc::clone(&w.spec);
                match spec.kind {
                    WorkloadKind::Page {
                        objects,
                        connections,
                        ..
                    } => {
                        w.page_start = Some(self.now);
                        for _ in 0..connections.min(objects).max(1) {
                            self.open_app_conn(wl);
                        }
                    }
                    // A frontend's clients start once its backend pool is up.
                    _ if w.spec.backend.is_some() => self.open_backends(wl),
                    _ => self.open_app_conn(wl),
                }
            }
            Action::Relay { session } => {
                if let Some(sc) = self.app_conns[session as usize].sconn {
                    self.service(sc);
                }
            }
            Action::Closed { session } => {
                let c = self.app_conns[session as usize].cconn;
                self.service(c);
            }
            Action::OpenAppConn => self.open_app_conn(wl),
            Action::Write { session, k } => self.scripted_write(wl, session, k),
            Action::NextExchange { session } => {
                self.start_exchange(session);
                if self.app_conns[session as usize].cur.is_none() {
                    // Another connection took the last object meanwhile.
                    self.client_close(session);
                }
                let c = self.app_conns[session as usize].cconn;
                self.service(c);
                // A pushed response was written on the server's side: send it.
                if let Some(sc) = self.app_conns[session as usize].sconn {
                    self.service(sc);
                }
            }
        }
    }

    fn open_app_conn(&mut self, wl: u16) {
        let w = &self.workloads[wl as usize];
        if w.created >= w.total {
            return;
        }
        let (client, server, port) = (w.client, w.server, w.spec.port);
        let mut cfg = w
            .spec
            .client_config
            .clone()
            .unwrap_or_else(|| (*self.config).clone());
        cfg.trace |= self.config.trace;
        if let Some(mw) = w.spec.max_window {
            cfg.recv_buffer = mw;
        }
        if let Some(p) = w.spec.client_receiver {
            cfg.set_receiver(p);
        }
        if let Some(s) = w.spec.client_sack {
            cfg.sack = s;
        }
        if let Some(d) = w.spec.client_dsack {
            cfg.dsack = d;
        }
        let (start_now, on_est, push, close_after) = match &w.spec.kind {
            WorkloadKind::Exchanges {
                mode,
                request,
                server_close,
                ..
            } => {
                let push = matches!(request, Size::Fixed(0));
                match mode {
                    ConnectionMode::Fresh => (!push, false, push, *server_close),
                    ConnectionMode::Persistent => (false, !push, push, *server_close),
                }
            }
            WorkloadKind::Bulk { .. } | WorkloadKind::Writes { .. } => (false, false, true, false),
            WorkloadKind::Page { .. } => (true, false, false, false),
        };
        let sid = self.app_conns.len() as u32;
        let accelerated = cfg.accelerated_open;
        let (cconn, lport) = self.connect(client, server, port, sid, cfg);
        let mut s = AppConn::new(wl, client, server, cconn, self.now);
        s.start_on_established = on_est;
        s.push_pending = push;
        s.server_close_after = close_after;
        s.count_handshake = start_now;
        self.app_conns.push(s);
        if accelerated {
            self.accelerate(sid, lport, port);
        }
        if start_now || push {
            // A pushed response is created now and written once the server's side
            // of the connection is established.
            self.start_exchange(sid);
        }
        self.service(cconn);
        if let Some(sc) = self.app_conns[sid as usize].sconn {
            self.service(sc);
        }
    }

    /// Starts the next exchange of `sid`: the client writes its request, or (for a
    /// pushed response) the server writes at once.
    fn start_exchange(&mut self, sid: u32) {
        let wl = self.app_conns[sid as usize].wl;
        let w = &mut self.workloads[wl as usize];
        if w.created >= w.total {
            return;
        }
        let index = w.created;
        w.created += 1;
        let (request, response) = match &w.spec.kind {
            WorkloadKind::Exchanges {
                request, response, ..
            } => (
                request.sample_lazy(&mut w.rng),
                Some(response.sample_lazy(&mut w.rng)),
            ),
            WorkloadKind::Bulk { bytes } => (0, *bytes),
            WorkloadKind::Writes { writes } => (0, Some(writes.iter().map(|w| w.1).sum())),
            WorkloadKind::Page {
                object, request, ..
            } => (
                request.sample_lazy(&mut w.rng),
                Some(object.sample_lazy(&mut w.rng)),
            ),
        };
        let snap = self.session_counts(sid);
        let snap_server_retrans = self.server_retrans(sid);
        let now = self.now;
        let s = &mut self.app_conns[sid as usize];
        let first_fresh = s.exchanges_done == 0 && s.count_handshake;
        let client_start = if first_fresh { s.opened } else { now };
        let req_end = s.req_written + request;
        let resp_start = s.resp_written;
        self.tails.reset(sid);
        s.cur = Some(Active {
            index,
            request,
            response: response.unwrap_or(0),
            req_end,
            resp_end: response.map(|r| resp_start + r),
            resp_start,
            client_start,
            server_start: None,
            server_end: None,
            client_end: None,
            snap,
            snap_drops: s.drops,
            snap_server_retrans,
        });
        if request > 0 {
            let c = s.cconn;
            let off = s.req_written;
            s.req_written += request;
            let conn = &mut self.conns[c as usize].conn;
            pattern::chunks(off, request, |b| {
                conn.write(b);
            });
        } else if let Some(sc) = s.sconn
            && self.conns[sc as usize].conn.is_established()
        {
            self.server_respond(sid);
        }
    }

    fn server_respond(&mut self, sid: u32) {
        let now = self.now;
        let s = &mut self.app_conns[sid as usize];
        let Some(sc) = s.sconn else { return };
        let Some(a) = s.cur.as_mut() else { return };
        if a.server_start.is_some() {
            return;
        }
        a.server_start = Some(now);
        s.push_pending = false;
        let mut len = match a.resp_end {
            Some(e) => e - a.resp_start,
            None => BULK_AHEAD,
        };
        let wl = s.wl as usize;
        if let WorkloadKind::Writes { writes } = &self.workloads[wl].spec.kind {
            // Only the first write now; the others at their times.
            len = writes[0].1;
            let t0 = writes[0].0;
            let later: Vec<(Instant, u32)> = writes
                .iter()
                .enumerate()
                .skip(1)
                .map(|(k, w)| (now + w.0.saturating_sub(t0), k as u32))
                .collect();
            for (at, k) in later {
                self.schedule_app(at, wl as u16, Action::Write { session: sid, k });
            }
        }
        let s = &mut self.app_conns[sid as usize];
        let conn = &mut self.conns[sc as usize].conn;
        pattern::chunks(s.resp_written, len, |b| {
            conn.write(b);
        });
        s.resp_written += len;
        if s.server_close_after {
            conn.close();
            s.server_closed = true;
        }
    }

    fn scripted_write(&mut self, wl: u16, sid: u32, k: u32) {
        let WorkloadKind::Writes { writes } = &self.workloads[wl as usize].spec.kind else {
            return;
        };
        let len = writes[k as usize].1;
        let s = &mut self.app_conns[sid as usize];
        let Some(sc) = s.sconn else { return };
        let conn = &mut self.conns[sc as usize].conn;
        if conn.is_closed() {
            return;
        }
        pattern::chunks(s.resp_written, len, |b| {
            conn.write(b);
        });
        s.resp_written += len;
        self.service(sc);
    }

    /// The segments the server end sent again so far, as a capture shows them (0
    /// before it exists).
    pub(super) fn server_retrans(&self, sid: u32) -> u64 {
        self.app_conns[sid as usize].sconn.map_or(0, |sc| {
            self.conns[sc as usize]
                .conn
                .counters()
                .retransmissions_sent()
        })
    }

    /// The counts of both ends of application connection `sid` so far.
    fn session_counts(&self, sid: u32) -> ExchangeCounts {
        let s = &self.app_conns[sid as usize];
        let mut c = ExchangeCounts::of(self.conns[s.cconn as usize].conn.counters());
        if let Some(sc) = s.sconn {
            c.add(self.conns[sc as usize].conn.counters());
        }
        c
    }

    /// The application side of connection `c` after the engine processed input.
    pub(super) fn app_progress(&mut self, c: u32) {
        let now = self.now;
        let (sid, is_server) = {
            let slot = &self.conns[c as usize];
            (slot.session, slot.is_server)
        };
        let s = &mut self.app_conns[sid as usize];
        let conn = &mut self.conns[c as usize].conn;
        // Read and verify everything available.
        let rcvd = if is_server {
            &mut s.server_rcvd
        } else {
            &mut s.client_rcvd
        };
        while let Some(b) = conn.read() {
            s.corrupt += pattern::mismatches(*rcvd, &b);
            *rcvd += b.len() as u64;
        }
        if is_server {
            if conn.is_established() {
                if s.push_pending && s.cur.is_some() {
                    self.server_respond(sid);
                } else if let Some(a) = &s.cur
                    && a.server_start.is_none()
                    && a.request > 0
                    && s.server_rcvd >= a.req_end
                {
                    if s.backend.is_none() && self.workloads[s.wl as usize].spec.backend.is_some() {
                        self.relay_request(sid);
                    } else {
                        self.server_respond(sid);
                    }
                }
            }
            let s = &mut self.app_conns[sid as usize];
            let conn = &mut self.conns[c as usize].conn;
            if let Some(a) = s.cur.as_mut() {
                match a.resp_end {
                    Some(end) => {
                        if a.server_start.is_some()
                            && a.server_end.is_none()
                            && conn.bytes_acked() >= end
                        {
                            a.server_end = Some(now);
                        }
                    }
                    None => {
                        // Endless bulk: keep the send buffer topped up.
                        if conn.bytes_written() < conn.bytes_acked() + BULK_AHEAD / 2
                            && a.server_start.is_some()
                        {
                            let off = s.resp_written;
                            pattern::chunks(off, BULK_AHEAD / 2, |b| {
                                conn.write(b);
                            });
                            s.resp_written += BULK_AHEAD / 2;
                        }
                    }
                }
            }
            if conn.peer_closed() && !s.server_closed {
                conn.close();
                s.server_closed = true;
            }
        } else {
            if s.backend.is_some() {
                self.relay_progress(sid);
                return;
            }
            if s.start_on_established && conn.is_established() && s.cur.is_none() {
                s.start_on_established = false;
                self.start_exchange(sid);
            }
            let s = &mut self.app_conns[sid as usize];
            let conn = &self.conns[c as usize].conn;
            if let Some(a) = s.cur.as_mut()
                && let Some(end) = a.resp_end
                && a.client_end.is_none()
                && s.client_rcvd >= end
            {
                a.client_end = Some(now);
            }
            if conn.peer_closed() && s.fin_delivered.is_none() {
                s.fin_delivered = Some(now);
            }
        }
        let s = &self.app_conns[sid as usize];
        if let Some(a) = &s.cur {
            let fin_ok = !s.server_close_after || s.fin_delivered.is_some();
            if a.client_end.is_some() && a.server_end.is_some() && fin_ok {
                self.finish_exchange(sid, true);
            }
        }
    }

    fn finish_exchange(&mut self, sid: u32, complete: bool) {
        let now_counters = self.session_counts(sid);
        let server_retrans = self.server_retrans(sid);
        let trial = self.tally.trial;
        let s = &mut self.app_conns[sid as usize];
        let Some(a) = s.cur.take() else { return };
        s.exchanges_done += 1;
        let d = now_counters;
        let tail = self.tails.get(sid);
        let (tail_start, tail_recover) = (tail.and_then(|t| t.start), tail.and_then(|t| t.recover));
        let rec = ExchangeRecord {
            trial,
            workload: s.wl,
            index: a.index,
            request_bytes: a.request,
            response_bytes: a.response,
            complete,
            server_ns: match (a.server_start, a.server_end) {
                (Some(x), Some(y)) => Some((y - x).as_nanos() as u64),
                _ => None,
            },
            client_ns: a.client_end.map(|e| (e - a.client_start).as_nanos() as u64),
            fin_ns: s
                .fin_delivered
                .filter(|_| s.server_close_after)
                .map(|e| (e - a.client_start).as_nanos() as u64),
            packets_dropped: s.drops - a.snap_drops,
            t_recover_ns: tail_recover,
            t_total_ns: match (tail_start, s.fin_delivered) {
                (Some(a), Some(b)) if b.as_nanos() >= a => Some(b.as_nanos() - a),
                _ => None,
            },
            unfinished: None,
            ..ExchangeRecord::deltas(&d, &a.snap, server_retrans, a.snap_server_retrans)
        };
        let wl = s.wl;
        if rec.index >= self.workloads[wl as usize].spec.warmup {
            self.tally.exchanges.push(rec);
        }
        let w = &mut self.workloads[wl as usize];
        w.finished += 1;
        w.page_bytes += a.response;
        let more = w.created < w.total;
        let think = match &w.spec.kind {
            WorkloadKind::Exchanges { think, .. } => *think,
            _ => Duration::ZERO,
        };
        let spec = Arc::clone(&w.spec);
        let all_done = w.finished >= w.total;
        match spec.kind {
            WorkloadKind::Exchanges {
                mode: ConnectionMode::Fresh,
                ..
            } => {
                self.client_close(sid);
                if more {
                    self.schedule_app(self.now + think, wl, Action::OpenAppConn);
                }
            }
            WorkloadKind::Exchanges {
                mode: ConnectionMode::Persistent,
                ..
            } => {
                if more {
                    let w = &mut self.workloads[wl as usize];
                    let at = match w.spec.period {
                        None => self.now + think,
                        Some((p, j)) => {
                            let extra = if j.is_zero() {
                                0
                            } else {
                                w.rng.get().gen_range(0..j.as_nanos() as u64)
                            };
                            let t = w.spec.start + p * w.created + Duration::from_nanos(extra);
                            Instant::from_nanos(t.as_nanos() as u64).max(self.now)
                        }
                    };
                    self.schedule_app(at, wl, Action::NextExchange { session: sid });
                } else {
                    self.client_close(sid);
                }
            }
            WorkloadKind::Bulk { .. } | WorkloadKind::Writes { .. } => self.client_close(sid),
            WorkloadKind::Page { .. } => {
                if more {
                    // The next object goes out from the client's connection, which
                    // may not be the one being serviced now (the exchange can end on
                    // the server's last ACK): schedule it so the client is serviced.
                    self.schedule_app(self.now, wl, Action::NextExchange { session: sid });
                } else {
                    self.client_close(sid);
                }
                if all_done {
                    let w = &self.workloads[wl as usize];
                    let start = w.page_start.unwrap_or(Instant::ZERO);
                    self.tally.pages.push(PageRecord {
                        trial,
                        workload: wl,
                        objects: w.total,
                        bytes: w.page_bytes,
                        complete,
                        load_ns: Some((self.now - start).as_nanos() as u64),
                    });
                }
            }
        }
        if all_done {
            self.workload_done(wl);
        }
    }

    fn client_close(&mut self, sid: u32) {
        let s = &mut self.app_conns[sid as usize];
        if !s.client_closed {
            s.client_closed = true;
            let wl = s.wl;
            self.conns[s.cconn as usize].conn.close();
            // The FIN leaves now, not whenever the connection is next serviced.
            self.schedule_app(self.now, wl, Action::Closed { session: sid });
        }
    }

    /// At the end of a trial: record exchanges that did not finish.
    pub(super) fn flush_incomplete(&mut self) {
        let mut corrupt = 0;
        for s in &self.app_conns {
            corrupt += s.corrupt;
        }
        self.tally.corrupt_bytes = corrupt;
        for sid in 0..self.app_conns.len() as u32 {
            let s = &self.app_conns[sid as usize];
            let measured = self.workloads[s.wl as usize].spec.measure;
            if s.cur.is_some() && measured && s.backend.is_none() {
                self.finish_exchange_incomplete(sid);
            }
        }
        // Exchanges that never started (the handshake never completed, or the time
        // ran out first) are unfinished too: every exchange has a record.
        for w in 0..self.workloads.len() {
            let wr = &self.workloads[w];
            if !wr.spec.measure || wr.created >= wr.total {
                continue;
            }
            let syn_failed = self.app_conns.iter().any(|s| {
                s.wl as usize == w && s.backend.is_none() && {
                    let c = &self.conns[s.cconn as usize].conn;
                    c.close_reason() == Some(CloseReason::TimedOut) && !c.was_established()
                }
            });
            let reason = if syn_failed {
                Unfinished::SynRetries
            } else {
                Unfinished::TimeLimit
            };
            for index in wr.created.max(wr.spec.warmup)..wr.total {
                self.tally.exchanges.push(ExchangeRecord {
                    trial: self.tally.trial,
                    workload: w as u16,
                    index,
                    complete: false,
                    unfinished: Some(reason),
                    ..Default::default()
                });
            }
        }
        for w in 0..self.workloads.len() {
            let wr = &self.workloads[w];
            if wr.spec.measure
                && matches!(wr.spec.kind, WorkloadKind::Page { .. })
                && wr.finished < wr.total
            {
                self.tally.pages.push(PageRecord {
                    trial: self.tally.trial,
                    workload: w as u16,
                    objects: wr.total,
                    bytes: wr.page_bytes,
                    complete: false,
                    load_ns: None,
                });
            }
        }
    }

    fn finish_exchange_incomplete(&mut self, sid: u32) {
        let reason = {
            let s = &self.app_conns[sid as usize];
            let c = &self.conns[s.cconn as usize].conn;
            match c.close_reason() {
                Some(CloseReason::TimedOut) if !c.was_established() => Unfinished::SynRetries,
                Some(CloseReason::TimedOut) => Unfinished::Retries,
                Some(CloseReason::Reset) => Unfinished::Reset,
                _ => Unfinished::TimeLimit,
            }
        };
        // The counters of the exchange so far, as for a finished one.
        let d = self.session_counts(sid);
        let server_retrans = self.server_retrans(sid);
        let trial = self.tally.trial;
        let s = &mut self.app_conns[sid as usize];
        let Some(a) = s.cur.take() else { return };
        if a.index < self.workloads[s.wl as usize].spec.warmup {
            return;
        }
        self.tally.exchanges.push(ExchangeRecord {
            trial,
            workload: s.wl,
            index: a.index,
            request_bytes: a.request,
            response_bytes: a.response,
            complete: false,
            packets_dropped: s.drops - a.snap_drops,
            unfinished: Some(reason),
            ..ExchangeRecord::deltas(&d, &a.snap, server_retrans, a.snap_server_retrans)
        });
    }
}
