//! How connections come to be on the hosts: the client's active open, the server's
//! passive open from a SYN, the accelerated open that models T/TCP
//! (`fast-start-and-sessions.txt` §4), and each host's cache of path state per peer
//! host that fast start reads (§3.2; Linux `tcp_metrics`).

use gentle_tcp::{Config, Connection, State};

use super::{ConnSlot, Sim, demux_key};
use crate::packet::Packet;

impl Sim<'_> {
    /// The configuration of the server end of `session`: a backend's end of a
    /// frontend's connection runs the backend leg's.
    fn server_config(&self, session: u32) -> Config {
        let s = &self.app_conns[session as usize];
        let spec = &self.workloads[s.wl as usize].spec;
        let cfg = match s.backend {
            Some(_) => spec.backend.as_ref().and_then(|b| b.config.as_ref()),
            None => spec.server_config.as_ref(),
        };
        match cfg {
            Some(c) => {
                let mut c = c.clone();
                c.trace |= self.config.trace;
                c
            }
            None => (*self.config).clone(),
        }
    }

    pub(super) fn accept(&mut self, node: u16, pkt: &Packet) {
        let skey = demux_key(pkt.src, pkt.seg.src_port, 0, 0);
        let Some(&session) = self.app_conn_by_client.get(&skey) else {
            return;
        };
        let cfg = self.server_config(session);
        let rng = &mut self.host_rngs[node as usize];
        let c = self.live_conns;
        let opened = match self.conns.get_mut(c as usize) {
            Some(slot) => {
                let opened = slot.conn.accept_here(cfg, self.now, &pkt.seg, rng);
                if opened {
                    slot.reset(node, session, true);
                }
                opened
            }
            None => match Connection::accept(cfg, self.now, &pkt.seg, rng) {
                Some(conn) => {
                    self.conns.push(ConnSlot::new(conn, node, session, true));
                    true
                }
                None => false,
            },
        };
        if !opened {
            return;
        }
        self.live_conns += 1;
        let key = demux_key(node, pkt.seg.dst_port, pkt.src, pkt.seg.src_port);
        self.server_conn_placed(c, session, key);
        self.use_path_cache(c, pkt.src);
        self.service(c);
    }

    /// `accelerated_open`: the server end of session `sid`'s new client connection
    /// (local port `lport`, server port `port`) is made established with it, with
    /// no handshake on the network (a model of T/TCP, see
    /// [`Connection::accelerated_open`]).
    pub(crate) fn accelerate(&mut self, sid: u32, lport: u16, port: u16) {
        let s = &self.app_conns[sid as usize];
        let (client, server, cconn) = (s.client, s.server, s.cconn);
        let cfg = self.server_config(sid);
        let rng = &mut self.host_rngs[server as usize];
        let conn =
            Connection::accelerated_open(&mut self.conns[cconn as usize].conn, cfg, self.now, rng);
        let c = self.add_server_conn(conn, server, sid, demux_key(server, port, client, lport));
        self.use_path_cache(c, client);
    }

    /// The server end of `session` on `node`, found by demultiplexing `key`.
    fn add_server_conn(&mut self, conn: Connection, node: u16, session: u32, key: u64) -> u32 {
        let c = self.place_conn(conn, node, session, true);
        self.server_conn_placed(c, session, key);
        c
    }

    /// Connection `c` is the server end of `session`, found by demultiplexing `key`.
    fn server_conn_placed(&mut self, c: u32, session: u32, key: u64) {
        self.demux.insert(key, c);
        self.app_conns[session as usize].sconn = Some(c);
    }

    /// Puts a new connection in the trial's next slot — one an earlier trial left,
    /// overwritten where it stands, or a new one — and returns the slot.
    fn place_conn(&mut self, conn: Connection, node: u16, session: u32, is_server: bool) -> u32 {
        let c = self.live_conns;
        self.live_conns += 1;
        match self.conns.get_mut(c as usize) {
            Some(slot) => {
                slot.conn = conn;
                slot.reset(node, session, is_server);
            }
            None => self
                .conns
                .push(ConnSlot::new(conn, node, session, is_server)),
        }
        c
    }

    /// A new connection `c` (in its slot, where it stays) to `peer` starts from
    /// the path state an earlier one on its host left, when it runs fast start or
    /// temporal sharing.
    fn use_path_cache(&mut self, c: u32, peer: u16) {
        let slot = &mut self.conns[c as usize];
        if uses_path_cache(slot.conn.config())
            && let Some(m) = self.path_cache.get(&(slot.node, peer))
        {
            slot.conn.use_path_metrics(*m);
        }
    }

    /// After servicing connection `c`: once it has closed (or waits in TIME-WAIT) it
    /// leaves its path state to its host. Only fast start and temporal sharing read
    /// the cache, so only connections that run one of them leave theirs.
    #[inline]
    pub(super) fn save_path_state_if_closed(&mut self, c: u32) {
        let slot = &self.conns[c as usize];
        if !slot.cached
            && uses_path_cache(slot.conn.config())
            && matches!(slot.conn.state(), State::TimeWait | State::Closed)
        {
            self.save_path_state(c);
        }
    }

    /// A connection leaves its path state to its host (Linux `tcp_update_metrics`).
    #[inline(never)]
    fn save_path_state(&mut self, c: u32) {
        let slot = &mut self.conns[c as usize];
        slot.cached = true;
        if let Some(m) = slot.conn.path_metrics() {
            let peer = {
                let s = &self.app_conns[slot.session as usize];
                if slot.is_server { s.client } else { s.server }
            };
            self.path_cache.insert((slot.node, peer), m);
        }
    }

    /// Opens a client connection for `session`; returns its slot.
    pub(crate) fn connect(
        &mut self,
        node: u16,
        server: u16,
        port: u16,
        session: u32,
        cfg: Config,
    ) -> (u32, u16) {
        let lport = self.next_port[node as usize];
        self.next_port[node as usize] = if lport == 60999 { 32768 } else { lport + 1 };
        let rng = &mut self.host_rngs[node as usize];
        let c = self.live_conns;
        self.live_conns += 1;
        match self.conns.get_mut(c as usize) {
            Some(slot) => {
                slot.conn.connect_here(cfg, self.now, lport, port, rng);
                slot.reset(node, session, false);
            }
            None => self.conns.push(ConnSlot::new(
                Connection::connect(cfg, self.now, lport, port, rng),
                node,
                session,
                false,
            )),
        }
        self.use_path_cache(c, server);
        self.demux.insert(demux_key(node, lport, server, port), c);
        self.app_conn_by_client
            .insert(demux_key(node, lport, 0, 0), session);
        (c, lport)
    }
}

/// The connection reads and fills its host's path cache: fast start (§3.2) and RFC
/// 9040's temporal sharing do.
fn uses_path_cache(cfg: &Config) -> bool {
    cfg.fast_start || cfg.temporal_sharing
}
