//! One trial against the kernel: fresh namespaces with the variant's sysctls, the
//! forwarder running the scenario's link, the built-in servers and clients running
//! its workload, and the records assembled from what they measured.

use std::collections::BTreeMap;
use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gentle_real::endpoints::{self, ExchangeResult, Measured, SocketSettings, now_ns};
use gentle_real::engine_host::{EngineHost, HostReport, HostShared, Role};
use gentle_real::flows::FlowNumbering;
use gentle_real::forward::{self, Fate, ForwarderReport, ForwarderSpec};
use gentle_real::netns::Netns;
use gentle_real::sysctl::KernelFacts;
use gentle_real::tcpinfo::TcpInfo;
use gentle_real::topology::{CLIENT_ADDR, EngineEnd, Pair, SERVER_ADDR, TUN_NAME};
use gentle_real::tun::IfStats;
use gentle_sim::record::{ExchangeRecord, LinkStats, PageRecord, TrialResult, Unfinished};
use gentle_sim::{Setup, rng};
use gentle_tcp::Counters;

use super::HTTP_PORT;
use super::external::{self, PeerRun};
use super::kernel::KernelVariant;
use super::plan::{self, ServerSide};
use crate::scenario::{Scenario, Variant};

/// How long the last packets get to cross once the workload is done.
const SETTLE: Duration = Duration::from_millis(30);

/// Everything one trial against the kernel produced.
pub struct RealTrial {
    pub result: TrialResult,
    pub forwarder: ForwarderReport,
    /// The TUN counters: [0] the server's namespace, [1] the client's.
    pub tun: [IfStats; 2],
    pub facts: KernelFacts,
    /// The server's `TCP_INFO` after each exchange: (connection, exchange, info).
    pub infos: Vec<(u32, u32, TcpInfo)>,
    /// Why the kernel retransmitted, inferred from the captures.
    pub causes: super::causes::Causes,
    /// gentle's engine, when it was one end: what its host saw.
    pub engine: Option<HostReport>,
    /// The external client command: its exit status (`None`: killed at the
    /// time limit) and output ...
    pub peer: Option<PeerRun>,
    /// ... and the external server's (killed when the trial ends).
    pub server_peer: Option<PeerRun>,
}

/// The namespaces of a trial: both kernel ends, or one beside gentle's engine.
enum Path {
    Kernel(Pair),
    Engine(Netns, EngineEnd),
}

impl Path {
    fn server(&self) -> Option<&Netns> {
        match self {
            Path::Kernel(p) => Some(&p.server),
            Path::Engine(ns, EngineEnd::Client) => Some(ns),
            Path::Engine(_, EngineEnd::Server) => None,
        }
    }
    fn client(&self) -> Option<&Netns> {
        match self {
            Path::Kernel(p) => Some(&p.client),
            Path::Engine(ns, EngineEnd::Server) => Some(ns),
            Path::Engine(_, EngineEnd::Client) => None,
        }
    }
    fn tun_stats(&self) -> std::io::Result<[IfStats; 2]> {
        match self {
            Path::Kernel(p) => p.tun_stats(),
            Path::Engine(ns, end) => {
                let k = ns.run(|| gentle_real::tun::if_stats(TUN_NAME))?;
                Ok(match end {
                    EngineEnd::Server => [IfStats::default(), k],
                    EngineEnd::Client => [k, IfStats::default()],
                })
            }
        }
    }
    fn facts(&self) -> KernelFacts {
        match self {
            Path::Kernel(p) => p.facts(),
            Path::Engine(ns, _) => ns.run(gentle_real::sysctl::facts),
        }
    }
}

/// What a trial needs besides the scenario.
pub struct TrialArgs<'a> {
    pub scn: &'a Scenario,
    pub variant: &'a Variant,
    pub kernel: &'a KernelVariant,
    pub side: ServerSide,
    pub seed: u64,
    pub trial: u64,
    /// The trial's time limit (real time).
    pub limit: Duration,
    pub capture: bool,
    /// gentle's engine takes this end.
    pub engine: Option<EngineEnd>,
    /// An external command as the kernel-side client ...
    pub peer: Option<&'a str>,
    /// ... and as the server (`gentle emulate --server-cmd`).
    pub server_cmd: Option<&'a str>,
}

/// Runs one trial: the path and its forwarder, the servers, then the clients until
/// they are done or the time limit comes; then everything is stopped and read.
pub fn run(a: &TrialArgs<'_>) -> Result<RealTrial, String> {
    let ts = rng::trial_seed(a.seed, a.trial);
    let setup = a.scn.setup(a.variant, ts);
    let plan = plan::plan(&setup, ts)?;
    let link = &setup.links[0];
    let stop = Arc::new(AtomicBool::new(false));
    let out = Arc::new(Mutex::new(Measured::default()));
    let shared = HostShared {
        measured: out.clone(),
        ..Default::default()
    };
    let (path, ends) = build_path(a, &plan, ts, &shared)?;
    let fwd = forward::spawn(forwarder_spec(a.side, link, ts, ends, &plan))
        .map_err(|e| format!("cannot start the forwarder: {e}"))?;
    let ctx = Shared {
        settings: SocketSettings {
            cc: a.kernel.kernel.cc.clone(),
        },
        stop: stop.clone(),
        out: out.clone(),
    };
    let setup_deadline = now_ns() + a.limit.as_nanos() as u64;
    let server_peer = start_server_cmd(a.server_cmd, &path, setup_deadline)?;
    let servers = start_servers(&plan, &path, server_peer.is_some(), &ctx)?;
    let t0 = now_ns();
    let deadline = t0 + a.limit.as_nanos() as u64;
    let clients = start_clients(a, &plan, &path, &ctx, t0, deadline);
    let timed_out = wait_for_the_end(a, &clients, &shared, &out, deadline);
    std::thread::sleep(SETTLE);
    stop.store(true, Ordering::Relaxed);
    for h in clients
        .measured
        .into_iter()
        .chain(clients.others)
        .chain(servers)
    {
        let _ = h.join();
    }
    let peer = clients.peer.and_then(|h| h.join().ok());
    let server_peer = server_peer.map(external::Proc::kill);
    let tun = path
        .tun_stats()
        .map_err(|e| format!("cannot read the TUN counters: {e}"))?;
    let facts = path.facts();
    let report = fwd
        .stop()
        .map_err(|e| format!("the forwarder failed: {e}"))?;
    drop(path);
    let engine = a.engine.map(|_| shared.report.lock().unwrap().clone());
    let m = std::mem::take(&mut *out.lock().unwrap());
    let ends = Ended {
        report,
        tun,
        facts,
        engine,
        peer,
        server_peer,
        deadline,
        timed_out,
    };
    Ok(read_trial(a, &setup, m, ends))
}

/// What the threads of a trial share: the kernel sockets' settings, the stop flag,
/// and what the endpoints measure.
struct Shared {
    settings: SocketSettings,
    stop: Arc<AtomicBool>,
    out: Arc<Mutex<Measured>>,
}

/// The kernel namespaces, both ends or one beside gentle's engine at `a.engine`.
fn build_path(
    a: &TrialArgs<'_>,
    plan: &plan::TrialPlan,
    ts: u64,
    shared: &HostShared,
) -> Result<(Path, [forward::End; 2]), String> {
    let Some(end) = a.engine else {
        let (pair, ends) =
            Pair::new(&a.kernel.kernel).map_err(|e| format!("cannot build the path: {e}"))?;
        return Ok((Path::Kernel(pair), ends));
    };
    if plan.conns.iter().any(|c| c.reversed) {
        return Err(
            "a workload runs the other way round: gentle's engine serves from one end".into(),
        );
    }
    let role = match end {
        EngineEnd::Server => {
            let mut ports: Vec<u16> = plan.conns.iter().map(|c| c.port).collect();
            ports.push(HTTP_PORT);
            ports.sort_unstable();
            ports.dedup();
            Role::Server {
                ports,
                plans: plan.conns.clone(),
                default_response: plan
                    .conns
                    .iter()
                    .flat_map(|c| c.exchanges.first())
                    .map(|e| e.response)
                    .next()
                    .unwrap_or(0),
            }
        }
        EngineEnd::Client => Role::Client {
            scripts: plan.scripts.clone(),
        },
    };
    let (addr, peer) = match end {
        EngineEnd::Server => (SERVER_ADDR, CLIENT_ADDR),
        EngineEnd::Client => (CLIENT_ADDR, SERVER_ADDR),
    };
    let host = EngineHost::new(
        addr,
        peer,
        gentle_tcp::Config::clone(&a.variant.config),
        rng::stream(ts, rng::ids::HOST),
        role,
        shared.clone(),
    );
    let (ns, ends) = gentle_real::topology::with_host(&a.kernel.kernel, end, Box::new(host))
        .map_err(|e| format!("cannot build the path: {e}"))?;
    Ok((Path::Engine(ns, end), ends))
}

/// The forwarder of the scenario's link, each direction with the trial's loss stream.
fn forwarder_spec(
    side: ServerSide,
    link: &gentle_sim::link::LinkSpec,
    ts: u64,
    ends: [forward::End; 2],
    plan: &plan::TrialPlan,
) -> ForwarderSpec {
    let a_to_b = (link.a_to_b.clone(), rng::stream(ts, rng::ids::LINK));
    let b_to_a = (link.b_to_a.clone(), rng::stream(ts, rng::ids::LINK + 1));
    let channels = match side {
        ServerSide::A => [a_to_b, b_to_a],
        ServerSide::B => [b_to_a, a_to_b],
    };
    ForwarderSpec {
        ends,
        channels,
        numbering: FlowNumbering::ClientPort {
            base: endpoints::CLIENT_PORT_BASE,
        },
        messages: plan
            .conns
            .iter()
            .map(|c| (c.index, c.exchanges.iter().map(|e| e.response).collect()))
            .collect(),
        // The server's capture tells why the kernel retransmitted ([`super::causes`]).
        capture: true,
        spin: true,
    }
}

/// `--server-cmd`: the external server, once it listens (up to 10 s, unless it
/// ends first).
fn start_server_cmd(
    cmd: Option<&str>,
    path: &Path,
    setup_deadline: u64,
) -> Result<Option<external::Proc>, String> {
    let (Some(cmd), Some(ns)) = (cmd, path.server()) else {
        return Ok(None);
    };
    let cmd = cmd.to_string();
    let mut proc = ns.run(move || external::spawn(&cmd));
    let until = setup_deadline.min(now_ns() + 10_000_000_000);
    let addr = SocketAddrV4::new(SERVER_ADDR, HTTP_PORT);
    let up = wait_until(until, Duration::from_millis(20), || {
        ns.run(move || external::listening(addr)) || proc.exited()
    }) && ns.run(move || external::listening(addr));
    if up {
        return Ok(Some(proc));
    }
    let run = proc.kill();
    let said = run.stderr.trim();
    Err(format!(
        "--server-cmd: nothing listens on {SERVER_ADDR}:{HTTP_PORT} ({}){}",
        run.status
            .map_or("still running after 10 s".into(), |c| format!("exit {c}")),
        if said.is_empty() {
            ", and it printed nothing on stderr".to_string()
        } else {
            format!(": {said}")
        }
    ))
}

/// The built-in servers of the workload's ports (none beside an external server).
fn start_servers(
    plan: &plan::TrialPlan,
    path: &Path,
    external_server: bool,
    ctx: &Shared,
) -> Result<Vec<std::thread::JoinHandle<()>>, String> {
    let conns = Arc::new(plan.conns.clone());
    let mut ports: Vec<(bool, u16)> = plan.conns.iter().map(|c| (c.reversed, c.port)).collect();
    ports.sort_unstable();
    ports.dedup();
    if external_server {
        ports.clear();
    }
    let mut servers = Vec::new();
    for (reversed, port) in ports {
        let (ns, addr) = if reversed {
            (path.client(), CLIENT_ADDR)
        } else {
            (path.server(), SERVER_ADDR)
        };
        let Some(ns) = ns else { continue };
        let (conns, settings) = (conns.clone(), ctx.settings.clone());
        let (stop, out) = (ctx.stop.clone(), ctx.out.clone());
        let h = ns
            .run(move || endpoints::serve(addr, port, conns, settings, stop, out))
            .map_err(|e| format!("cannot listen on port {port}: {e}"))?;
        servers.push(h);
    }
    Ok(servers)
}

/// The client side of a trial as it runs.
struct Clients {
    /// The built-in clients of measured workloads ...
    measured: Vec<std::thread::JoinHandle<()>>,
    /// ... and of cross traffic.
    others: Vec<std::thread::JoinHandle<()>>,
    /// The external client command.
    peer: Option<std::thread::JoinHandle<PeerRun>>,
    /// Measured scripts that gentle's engine runs as the client.
    engine_measured: usize,
}

/// The clients: the external command, or gentle's engine (its host runs the
/// scripts), or a built-in client per script.
fn start_clients(
    a: &TrialArgs<'_>,
    plan: &plan::TrialPlan,
    path: &Path,
    ctx: &Shared,
    t0: u64,
    deadline: u64,
) -> Clients {
    let peer = match (a.peer, path.client()) {
        (Some(cmd), Some(ns)) => {
            let (cmd, stop) = (cmd.to_string(), ctx.stop.clone());
            Some(ns.run(move || {
                std::thread::spawn(move || external::spawn(&cmd).wait(deadline, &stop))
            }))
        }
        _ => None,
    };
    let engine_scripts = a.engine == Some(EngineEnd::Client);
    let mut clients = Clients {
        measured: Vec::new(),
        others: Vec::new(),
        peer,
        engine_measured: if engine_scripts {
            plan.scripts.iter().filter(|s| s.measured).count()
        } else {
            0
        },
    };
    if a.peer.is_some() || engine_scripts {
        return clients;
    }
    for script in plan.scripts.clone() {
        let (settings, stop, out) = (ctx.settings.clone(), ctx.stop.clone(), ctx.out.clone());
        let is_measured = script.measured;
        // A script's connections all go one way (one workload).
        let ns = if script.conns.first().is_some_and(|c| c.reversed) {
            path.server()
        } else {
            path.client()
        };
        let ns = ns.expect("the kernel's namespace");
        let h = ns.run(move || {
            std::thread::spawn(move || {
                endpoints::run_client(&script, &settings, t0, deadline, &stop, &out)
            })
        });
        if is_measured {
            clients.measured.push(h);
        } else {
            clients.others.push(h);
        }
    }
    clients
}

/// Calls `done` every `every` until it holds (true) or `until` (ns) comes (false).
fn wait_until(until: u64, every: Duration, mut done: impl FnMut() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        if now_ns() >= until {
            return false;
        }
        std::thread::sleep(every);
    }
}

/// Waits until every measured client is done and the server has seen each finished
/// exchange acknowledged, or the time limit comes (true: it came first).
fn wait_for_the_end(
    a: &TrialArgs<'_>,
    c: &Clients,
    shared: &HostShared,
    out: &Mutex<Measured>,
    deadline: u64,
) -> bool {
    let clients_done = || {
        c.measured.iter().all(|h| h.is_finished())
            && c.peer.as_ref().is_none_or(|h| h.is_finished())
            && shared.scripts_done.load(Ordering::Relaxed) >= c.engine_measured
    };
    if !wait_until(deadline, Duration::from_millis(2), clients_done) {
        return true;
    }
    let acked_all = || {
        let m = out.lock().unwrap();
        let done = m
            .exchanges
            .iter()
            .filter(|e| e.server_end.is_some())
            .count();
        let finished = m
            .exchanges
            .iter()
            .filter(|e| e.server_start.is_none() && e.complete)
            .count();
        done >= finished
    };
    wait_until(deadline, Duration::from_millis(1), acked_all);
    // The engine's last HTTP responses: their final ACKs may still be on the way
    // when the client has already exited.
    if a.engine == Some(EngineEnd::Server) {
        let until = deadline.min(now_ns() + 2_000_000_000);
        wait_until(until, Duration::from_millis(2), || {
            let r = shared.report.lock().unwrap();
            r.http.iter().all(|x| x.server_ns.is_some())
        });
    }
    if c.measured.is_empty() && c.peer.is_none() && c.engine_measured == 0 {
        // Only cross traffic: it runs for the whole time limit.
        wait_until(deadline, Duration::from_millis(5), || false);
    }
    false
}

/// What a trial left when it was stopped.
struct Ended {
    report: ForwarderReport,
    tun: [IfStats; 2],
    facts: KernelFacts,
    engine: Option<HostReport>,
    peer: Option<PeerRun>,
    server_peer: Option<PeerRun>,
    deadline: u64,
    timed_out: bool,
}

/// The trial's records, links, counters and retransmission causes.
fn read_trial(a: &TrialArgs<'_>, setup: &Setup, m: Measured, e: Ended) -> RealTrial {
    let infos: Vec<(u32, u32, TcpInfo)> = m
        .exchanges
        .iter()
        .filter_map(|e| Some((e.conn, e.index, e.info_after?)))
        .collect();
    let (mut result, spans) = assemble(a, setup, m, &e.report, e.deadline, e.timed_out);
    result.trial = a.trial;
    add_links(&mut result, &e.report, &setup.links[0], a.side);
    let mut report = e.report;
    // The engine's counters are the truth of its own retransmissions; the kernel's
    // are inferred from its capture.
    let causes = if let (Some(EngineEnd::Server), Some(h)) = (a.engine, &e.engine) {
        result.counters.add(&h.counters);
        super::causes::Causes::default()
    } else {
        let c = super::causes::charge(&report.captures, report.base_ns, &mut result, &spans);
        if infos.is_empty() {
            // No server of gentle's sampled TCP_INFO (external commands): the
            // retransmissions seen in the captures are the count.
            result.counters.retrans_segs += c.fast + c.early + c.timeout + c.slow_start + c.probe;
        }
        c
    };
    if !a.capture {
        report.captures = Default::default();
    }
    RealTrial {
        result,
        forwarder: report,
        tun: e.tun,
        facts: e.facts,
        infos,
        causes,
        engine: e.engine,
        peer: e.peer,
        server_peer: e.server_peer,
    }
}

fn add_links(
    r: &mut TrialResult,
    f: &ForwarderReport,
    link: &gentle_sim::link::LinkSpec,
    side: ServerSide,
) {
    // The setup's order: a → b, then b → a.
    let (ab, ba) = match side {
        ServerSide::A => (f.stats[0], f.stats[1]),
        ServerSide::B => (f.stats[1], f.stats[0]),
    };
    r.links.add(&ab);
    r.links.add(&ba);
    r.per_link = vec![
        LinkStats {
            link: 0,
            from: link.a.clone(),
            to: link.b.clone(),
            stats: ab,
        },
        LinkStats {
            link: 0,
            from: link.b.clone(),
            to: link.a.clone(),
            stats: ba,
        },
    ];
    r.packets = f.log.len() as u64;
    r.data_packets = f.log.iter().filter(|e| e.payload > 0).count() as u64;
    r.end_ns = f.ran_ns;
}

/// The records of a trial from the clients' and the server's measurements.
fn assemble(
    a: &TrialArgs<'_>,
    setup: &gentle_sim::Setup,
    m: Measured,
    f: &ForwarderReport,
    deadline: u64,
    timed_out: bool,
) -> (TrialResult, Vec<(u32, u64)>) {
    let mut server: BTreeMap<(u16, u32), ExchangeResult> = BTreeMap::new();
    let mut clients = Vec::new();
    for e in m.exchanges {
        if e.server_start.is_some() {
            server.insert((e.workload, e.index), e);
        } else {
            clients.push(e);
        }
    }
    clients.sort_by_key(|e| (e.workload, e.index));
    let mut r = TrialResult {
        timed_out,
        ..Default::default()
    };
    let mut last_info: BTreeMap<u32, TcpInfo> = BTreeMap::new();
    // Each record's connection and start, for charging retransmissions to it.
    let mut spans = Vec::new();
    for c in &clients {
        let w = &setup.workloads[c.workload as usize];
        if c.index < w.warmup {
            continue;
        }
        let s = server.get(&(c.workload, c.index));
        let (before, after) = (s.and_then(|s| s.info_before), s.and_then(|s| s.info_after));
        if let Some(i) = after {
            last_info.insert(c.conn, i);
        }
        let engine = s.and_then(|s| Some((s.engine_before?, s.engine_after?)));
        let delta = |f: fn(&TcpInfo) -> u64, g: fn(&Counters) -> u64| match (before, after, engine)
        {
            (Some(b), Some(a), _) => f(&a).saturating_sub(f(&b)),
            (_, _, Some((b, a))) => g(&a).saturating_sub(g(&b)),
            _ => 0,
        };
        let end = c.client_end.unwrap_or(deadline);
        let dropped = f
            .log
            .iter()
            .filter(|e| {
                e.flow == c.conn
                    && matches!(
                        e.fate,
                        Fate::DroppedLoss | Fate::DroppedQueue | Fate::DroppedPolicer
                    )
                    && (c.client_start..=end).contains(&(e.t_ns + f.base_ns))
            })
            .count() as u32;
        let server_ns = s.and_then(|s| Some(s.server_end? - s.server_start?));
        let complete = c.complete && (server_ns.is_some() || c.request == 0);
        spans.push((c.conn, c.client_start));
        r.exchanges.push(ExchangeRecord {
            trial: a.trial,
            workload: c.workload,
            index: c.index,
            request_bytes: c.request,
            response_bytes: c.response,
            complete,
            server_ns,
            client_ns: c.client_end.map(|e| e - c.client_start),
            fin_ns: c.fin_at.map(|e| e - c.client_start),
            fast_retrans: delta(|_| 0, |k| k.fast_retrans) as u32,
            slow_start_retrans: delta(|_| 0, |k| k.slow_start_retrans) as u32,
            syn_retrans: delta(|_| 0, |k| k.syn_retrans) as u32,
            recoveries: delta(|_| 0, |k| k.recovery_episodes) as u32,
            undos: delta(|_| 0, |k| k.undos()) as u32,
            timeouts: delta(|i| i.total_rto as u64, |k| k.timeouts) as u32,
            retrans_segs: delta(|i| i.total_retrans as u64, |k| k.retrans_segs) as u32,
            bytes_sent: c.request + c.response + delta(|i| i.bytes_retrans, |k| k.bytes_retrans),
            packets_dropped: dropped,
            unfinished: (!complete).then_some(if c.reset {
                Unfinished::Reset
            } else {
                Unfinished::TimeLimit
            }),
            ..Default::default()
        });
    }
    for i in last_info.values() {
        add_kernel_counts(&mut r.counters, i);
    }
    // Page loads: the first start to the last object of each page workload.
    let mut pages: BTreeMap<u16, PageRecord> = BTreeMap::new();
    let is_page = |w: u16| {
        matches!(
            setup.workloads[w as usize].kind,
            gentle_sim::workload::WorkloadKind::Page { .. }
        )
    };
    for c in clients.iter().filter(|c| is_page(c.workload)) {
        let p = pages.entry(c.workload).or_insert(PageRecord {
            trial: a.trial,
            workload: c.workload,
            complete: true,
            ..Default::default()
        });
        p.objects += 1;
        p.bytes += c.response;
        p.complete &= c.complete;
    }
    for (wl, p) in pages.iter_mut() {
        let of: Vec<&ExchangeResult> = clients.iter().filter(|c| c.workload == *wl).collect();
        let start = of.iter().map(|c| c.client_start).min().unwrap_or(0);
        let end = of.iter().filter_map(|c| c.client_end).max();
        p.load_ns = end.filter(|_| p.complete).map(|e| e - start);
    }
    r.pages = pages.into_values().collect();
    (r, spans)
}

/// A kernel connection's last `tcp_info`, added to the counters the simulation keeps.
fn add_kernel_counts(c: &mut gentle_tcp::Counters, i: &TcpInfo) {
    c.retrans_segs += i.total_retrans as u64;
    c.timeouts += i.total_rto as u64;
    c.bytes_retrans += i.bytes_retrans;
    c.data_segs_out += i.data_segs_out as u64;
    // `tcpi_segs_out` counts every segment sent, retransmissions included; Linux's
    // `OutSegs` leaves those out.
    c.segs_out += u64::from(i.segs_out.saturating_sub(i.total_retrans));
}
