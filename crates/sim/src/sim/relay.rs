//! Multi-stage services (`gentle-aggression-sigcomm13.txt` §3 and Figure 5): a
//! frontend terminates the client's connection and, for each request, forwards a
//! request to a backend over a pool of persistent connections, streaming the
//! backend's response back to the client as it arrives.
//!
//! - The pool is opened when the workload starts: `pool` persistent connections
//!   from the frontend to the backend, each carrying one request at a time; a
//!   request that finds none free waits for the first that frees (FIFO). The
//!   clients start once every pool connection is established, as they would find a
//!   frontend's long-lived backend connections.
//! - The frontend forwards once it has the whole client request. The backend
//!   answers with as many bytes as the client's response has; every byte the
//!   frontend reads from the backend it writes to the client at once.
//! - The client leg's record is the exchange's: its server-side response time is
//!   the frontend's — the request in, to the ACK of the last response byte — and so
//!   includes the backend leg (§8.2's RT). The backend leg's counters are summed
//!   apart ([`TrialResult::backend`](crate::record::TrialResult::backend)).

use super::Sim;
use super::apps::{Action, Active, AppConn, Relaying};
use crate::pattern;
use crate::record::ExchangeCounts;

impl Sim<'_> {
    /// Opens the frontend's pool of backend connections.
    pub(super) fn open_backends(&mut self, wl: u16) {
        let w = &self.workloads[wl as usize];
        let Some(b) = w.spec.backend.clone() else {
            return;
        };
        let frontend = w.server;
        let backend = w.backend_node;
        let mut cfg = b.config.clone().unwrap_or_else(|| (*self.config).clone());
        cfg.trace |= self.config.trace;
        for _ in 0..b.pool {
            let sid = self.app_conns.len() as u32;
            let (cconn, lport) = self.connect(frontend, backend, b.port, sid, cfg.clone());
            let mut s = AppConn::new(wl, frontend, backend, cconn, self.now);
            s.backend = Some(Relaying::default());
            self.app_conns.push(s);
            if cfg.accelerated_open {
                self.accelerate(sid, lport, b.port);
            }
            self.workloads[wl as usize].pool.conns.push(sid);
            self.service(cconn);
            if let Some(sc) = self.app_conns[sid as usize].sconn {
                self.service(sc);
            }
        }
    }

    /// The frontend has the whole request of client session `sid`: forward it.
    pub(super) fn relay_request(&mut self, sid: u32) {
        let now = self.now;
        let Some(a) = self.app_conns[sid as usize].cur.as_mut() else {
            return;
        };
        if a.server_start.is_some() {
            return;
        }
        a.server_start = Some(now);
        let wl = self.app_conns[sid as usize].wl as usize;
        let free = self.workloads[wl].pool.conns.iter().copied().find(|&b| {
            self.app_conns[b as usize]
                .backend
                .is_some_and(|r| r.serving.is_none())
        });
        match free {
            Some(b) => self.dispatch(b, sid),
            None => self.workloads[wl].pool.waiting.push_back(sid),
        }
    }

    /// Backend session `b` carries the request of client session `sid`.
    fn dispatch(&mut self, b: u32, sid: u32) {
        let len = self.app_conns[sid as usize]
            .cur
            .as_ref()
            .map_or(0, |a| a.response);
        let wl = self.app_conns[b as usize].wl as usize;
        let w = &mut self.workloads[wl];
        let request = w
            .spec
            .backend
            .as_ref()
            .map_or(0, |bk| bk.request.sample_lazy(&mut w.rng))
            .max(1);
        let now = self.now;
        let client = &self.conns[self.app_conns[b as usize].cconn as usize].conn;
        let snap = ExchangeCounts::of(client.counters());
        let snap_server_retrans = self.server_retrans(b);
        let s = &mut self.app_conns[b as usize];
        let (off, resp_start) = (s.req_written, s.resp_written);
        s.cur = Some(Active {
            index: 0,
            request,
            response: len,
            req_end: off + request,
            resp_end: Some(resp_start + len),
            resp_start,
            client_start: now,
            server_start: None,
            server_end: None,
            client_end: None,
            snap,
            snap_drops: s.drops,
            snap_server_retrans,
        });
        s.backend = Some(Relaying {
            serving: Some(sid),
            from: resp_start,
            forwarded: 0,
            len,
        });
        s.req_written += request;
        let c = s.cconn;
        let conn = &mut self.conns[c as usize].conn;
        pattern::chunks(off, request, |bytes| {
            conn.write(bytes);
        });
        self.service(c);
    }

    /// After the frontend read from backend session `b`: forward what arrived to
    /// the client, and free `b` once the whole response is through.
    pub(super) fn relay_progress(&mut self, b: u32) {
        let wl = self.app_conns[b as usize].wl;
        let pool = &self.workloads[wl as usize].pool;
        if !pool.up
            && pool.conns.iter().all(|&p| {
                self.conns[self.app_conns[p as usize].cconn as usize]
                    .conn
                    .is_established()
            })
        {
            // The pool is warm, as a frontend's persistent backend connections are:
            // the clients start now.
            self.workloads[wl as usize].pool.up = true;
            self.schedule_app(self.now, wl, Action::OpenAppConn);
        }
        let s = &mut self.app_conns[b as usize];
        let Some(r) = s.backend.as_mut() else { return };
        let Some(sid) = r.serving else { return };
        let got = s.client_rcvd.saturating_sub(r.from).min(r.len);
        let new = got - r.forwarded;
        r.forwarded = got;
        let done = got == r.len;
        if done {
            r.serving = None;
            s.cur = None;
        }
        let wl = s.wl;
        if new > 0 {
            let c = &mut self.app_conns[sid as usize];
            if let Some(sc) = c.sconn {
                let conn = &mut self.conns[sc as usize].conn;
                pattern::chunks(c.resp_written, new, |bytes| {
                    conn.write(bytes);
                });
                c.resp_written += new;
                if done && c.server_close_after {
                    conn.close();
                    c.server_closed = true;
                }
                self.schedule_app(self.now, wl, Action::Relay { session: sid });
            }
        }
        if done && let Some(next) = self.workloads[wl as usize].pool.waiting.pop_front() {
            self.dispatch(b, next);
        }
    }
}
