//! Building a trial's simulation from its setup — nodes, channels, routes and
//! workloads, in containers an earlier trial on the thread left
//! ([`Spare`]) — and taking it apart at its end into its [`TrialResult`].

use std::sync::Arc;

use gentle_tcp::{Counters, Instant};

use super::apps::{self, WorkloadRt};
use super::spare::{Scratch, Spare};
use super::{Ev, Setup, SetupError, Sim, Tally};
use crate::link::{Channel, ChannelStats, ChannelStorage, LinkSpec};
use crate::record::{LinkStats, TrialResult};
use crate::rng;
use crate::workload::WorkloadSpec;

/// A trial's nodes — the setup's, then the link ends it does not name, in order of
/// first appearance — and its channels: two per link (a to b, then b to a), each
/// with its own random stream; into `names` and `chans`, which are empty.
fn channels(
    nodes: Vec<Arc<str>>,
    links: Vec<LinkSpec>,
    trial_seed: u64,
    names: &mut Vec<Arc<str>>,
    chans: &mut Vec<Channel>,
    storage: &mut Vec<ChannelStorage>,
) {
    names.extend(nodes);
    let idx = |n: &Arc<str>, names: &mut Vec<Arc<str>>| -> u16 {
        match names.iter().position(|x| x == n) {
            Some(i) => i as u16,
            None => {
                names.push(Arc::clone(n));
                (names.len() - 1) as u16
            }
        }
    };
    for (i, l) in links.into_iter().enumerate() {
        let a = idx(&l.a, names);
        let b = idx(&l.b, names);
        let r1 = rng::lazy_stream(trial_seed, rng::ids::LINK + 2 * i as u64);
        let r2 = rng::lazy_stream(trial_seed, rng::ids::LINK + 2 * i as u64 + 1);
        for (spec, from, to, r) in [(l.a_to_b, a, b, r1), (l.b_to_a, b, a, r2)] {
            let kept = storage.pop().unwrap_or_default();
            chans.push(Channel::new(spec, from, to, r));
            chans.last_mut().expect("pushed").use_storage(kept);
        }
    }
}

/// Into `route`, `route[node * n + dst]`: the channel of the first hop of a
/// shortest path, or `u32::MAX` if `dst` is unreachable. Shortest paths by BFS
/// from every destination over reversed channels (`dist` and `frontier` are
/// scratch space).
fn shortest_routes(chans: &[Channel], n: usize, route: &mut Vec<u32>, scratch: &mut Scratch) {
    route.clear();
    route.resize(n * n, u32::MAX);
    let Scratch { dist, frontier } = scratch;
    for dst in 0..n {
        dist.clear();
        dist.resize(n, u32::MAX);
        dist[dst] = 0;
        frontier.clear();
        frontier.push_back(dst);
        while let Some(v) = frontier.pop_front() {
            for (ci, c) in chans.iter().enumerate() {
                let (u, w) = (c.from as usize, c.to as usize);
                if w == v && dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    route[u * n + dst] = ci as u32;
                    frontier.push_back(u);
                }
            }
        }
    }
}

impl<'o> Sim<'o> {
    /// Builds the simulation of trial `trial` whose seed is `trial_seed`.
    pub fn new(setup: &Setup, trial: u64, trial_seed: u64) -> Result<Sim<'o>, SetupError> {
        Self::from_setup(setup.clone(), trial, trial_seed)
    }

    /// [`Sim::new`], taking the setup's links and workloads instead of copying them.
    pub fn from_setup(setup: Setup, trial: u64, trial_seed: u64) -> Result<Sim<'o>, SetupError> {
        let Setup {
            nodes,
            links,
            workloads,
            config,
            time_limit,
        } = setup;
        let mut spare = Spare::take();
        channels(
            nodes,
            links,
            trial_seed,
            &mut spare.node_names,
            &mut spare.chans,
            &mut spare.chan_storage,
        );
        let names = &spare.node_names;
        for w in &workloads {
            for host in [&w.client, &w.server] {
                if !names.iter().any(|x| **x == **host) {
                    return Err(SetupError(format!(
                        "workload `{}`: node `{}` is not on any link",
                        w.name, host
                    )));
                }
            }
        }
        let n = names.len();
        shortest_routes(&spare.chans, n, &mut spare.route, &mut spare.scratch);
        spare
            .host_rngs
            .extend((0..n).map(|i| rng::host_stream(trial_seed, rng::ids::HOST + i as u64)));
        spare.next_port.resize(n, 32768);
        let mut sim = Sim {
            now: Instant::ZERO,
            seq: 0,
            heap: spare.heap,
            slab: spare.slab,
            chans: spare.chans,
            chan_storage: spare.chan_storage,
            node_names: spare.node_names,
            route: spare.route,
            route_scratch: spare.scratch,
            conns: spare.conns,
            live_conns: 0,
            demux: spare.demux,
            listeners: spare.listeners,
            app_conns: spare.app_conns,
            app_conn_by_client: spare.app_conn_by_client,
            workloads: spare.workloads,
            host_rngs: spare.host_rngs,
            path_cache: spare.path_cache,
            host_sessions: spare.host_sessions,
            host_session_of: spare.host_session_of,
            next_port: spare.next_port,
            config,
            time_limit: time_limit.as_nanos() as u64,
            tally: Tally {
                trial,
                ..Tally::default()
            },
            measured_left: 0,
            tails: spare.tails,
            episodes: spare.episodes,
            observer: None,
            engine_events: false,
        };
        for (i, w) in workloads.into_iter().enumerate() {
            sim.add_workload(i, w, trial_seed)?;
        }
        Ok(sim)
    }

    /// Adds workload `i` (its hosts are on links): checks that its client and
    /// server, and its server and backend, reach each other, listens on their
    /// ports and schedules its start.
    fn add_workload(
        &mut self,
        i: usize,
        w: Arc<WorkloadSpec>,
        trial_seed: u64,
    ) -> Result<(), SetupError> {
        let node = |name: &str| self.node_names.iter().position(|x| **x == *name);
        let client = node(&w.client).expect("checked") as u16;
        let server = node(&w.server).expect("checked") as u16;
        self.check_path(&w.name, (client, &w.client), (server, &w.server))?;
        let rng = rng::lazy_stream(trial_seed, rng::ids::WORKLOAD + i as u64);
        let (measure, port) = (w.measure, w.port);
        let mut rt = WorkloadRt::new(w, client, server, rng);
        let w = &rt.spec;
        if let Some(b) = &w.backend {
            let Some(bn) = node(&b.node) else {
                return Err(SetupError(format!(
                    "workload `{}`: backend node `{}` is not on any link",
                    w.name, b.node
                )));
            };
            let bn = bn as u16;
            self.check_path(&w.name, (server, &w.server), (bn, &b.node))?;
            self.listeners.push((bn, b.port));
            rt.backend_node = bn;
        }
        let start = rt.start;
        if measure {
            self.measured_left += 1;
        }
        self.listeners.push((server, port));
        self.workloads.push(rt);
        self.push(
            start.as_nanos() as u64,
            Ev::App {
                wl: i as u16,
                action: apps::Action::Start,
            },
        );
        Ok(())
    }

    /// Whether nodes `a` and `b` (index and name) reach each other both ways, for
    /// workload `workload`.
    fn check_path(&self, workload: &str, a: (u16, &str), b: (u16, &str)) -> Result<(), SetupError> {
        let (ai, bi) = (a.0 as usize, b.0 as usize);
        if self.hop(ai, bi) == u32::MAX || self.hop(bi, ai) == u32::MAX {
            return Err(SetupError(format!(
                "workload `{workload}`: no path between `{}` and `{}`",
                a.1, b.1
            )));
        }
        Ok(())
    }

    /// The channel of the first hop from `node` to `dst` (`u32::MAX`: none).
    #[inline]
    pub(super) fn hop(&self, node: usize, dst: usize) -> u32 {
        self.route[node * self.node_names.len() + dst]
    }

    /// The trial has ended: its result, and its containers left to the thread.
    pub(super) fn finish(mut self) -> TrialResult {
        self.flush_incomplete();
        let (mut counters, mut backend, mut server) = (
            Counters::default(),
            Counters::default(),
            Counters::default(),
        );
        for h in &self.host_sessions {
            counters.add(h.scb.counters());
        }
        for c in &self.conns[..self.live_conns as usize] {
            counters.add(c.conn.counters());
            if self.app_conns[c.session as usize].backend.is_some() {
                backend.add(c.conn.counters());
            }
            if c.is_server {
                server.add(c.conn.counters());
            }
        }
        let end_ns = self.now.as_nanos();
        let mut links = ChannelStats::default();
        let mut per_link = Vec::with_capacity(self.chans.len());
        for (i, ch) in self.chans.iter_mut().enumerate() {
            ch.stats.observed_ns = end_ns;
            let b = ch.loss_bursts();
            ch.stats.lossy_bursts = [b.lossy, b.lost_one, b.lost_two];
            links.add(&ch.stats);
            per_link.push(LinkStats {
                link: (i / 2) as u32,
                from: Arc::clone(&self.node_names[ch.from as usize]),
                to: Arc::clone(&self.node_names[ch.to as usize]),
                stats: ch.stats,
            });
        }
        let t = std::mem::take(&mut self.tally);
        let episodes = std::mem::take(&mut self.episodes.done);
        self.spare().keep();
        TrialResult {
            trial: t.trial,
            exchanges: t.exchanges,
            pages: t.pages,
            counters,
            backend,
            server,
            links,
            per_link,
            events: t.events,
            data_packets: t.data_packets,
            packets: t.packets,
            corrupt_bytes: t.corrupt_bytes,
            end_ns,
            timed_out: t.timed_out,
            episodes,
        }
    }

    /// The simulation's containers, for the next trial on this thread.
    fn spare(self) -> Spare {
        Spare {
            heap: self.heap,
            slab: self.slab,
            node_names: self.node_names,
            route: self.route,
            scratch: self.route_scratch,
            chans: self.chans,
            chan_storage: self.chan_storage,
            conns: self.conns,
            demux: self.demux,
            listeners: self.listeners,
            app_conns: self.app_conns,
            app_conn_by_client: self.app_conn_by_client,
            workloads: self.workloads,
            host_rngs: self.host_rngs,
            path_cache: self.path_cache,
            host_sessions: self.host_sessions,
            host_session_of: self.host_session_of,
            next_port: self.next_port,
            tails: self.tails,
            episodes: self.episodes,
        }
    }
}
