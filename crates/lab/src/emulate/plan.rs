//! A scenario as real mode runs it: the checks that it can (before anything is
//! created), and each trial's plan of connections and exchanges.
//!
//! Sizes are drawn from the same seeded workload streams, in the same order, as
//! the simulator draws them (`gentle_sim::sim::apps`), so trial k of an emulation
//! sends what trial k of a simulation sends. Connections are numbered in the order
//! the simulator opens them, and connection k binds client port
//! `CLIENT_PORT_BASE + k`, which is how the forwarder numbers it for the loss
//! models and position-keyed draws.

use std::time::Duration;

use gentle_real::endpoints::{ClientScript, ConnPlan, ExchangePlan};
use gentle_sim::Setup;
use gentle_sim::link::{ChannelSpec, ReservedBits};
use gentle_sim::workload::{ConnectionMode, Size, WorkloadKind, WorkloadSpec};
use rand::Rng;

use crate::scenario::Scenario;

/// The server's port of workload i is `SERVER_PORT_BASE + i`.
pub const SERVER_PORT_BASE: u16 = 8000;
/// Connections a trial may open (client ports 20000 … 59999).
const MAX_CONNECTIONS: u64 = 40_000;

/// Which node of the scenario's link runs the servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerSide {
    A,
    B,
}

/// Whether real mode can run `scn`; the reason when it cannot.
pub fn check(scn: &Scenario) -> Result<ServerSide, String> {
    if !scn.population.is_empty() {
        return Err(
            "real mode emulates one network; this scenario draws one of a [population] per trial"
                .to_string(),
        );
    }
    let [link] = scn.links.as_slice() else {
        return Err(format!(
            "real mode emulates one link between two hosts; this scenario has {} links",
            scn.links.len()
        ));
    };
    // The namespace of the first workload's server is the "server" one; a workload
    // the other way round runs its server in the other namespace.
    let first = scn
        .workloads
        .first()
        .ok_or("the scenario has no workload")?;
    let side = if *first.server == *link.a {
        ServerSide::A
    } else {
        ServerSide::B
    };
    for w in &scn.workloads {
        let ends = (w.server.as_str(), w.client.as_str());
        if ends != (&*link.a, &*link.b) && ends != (&*link.b, &*link.a) {
            return Err(format!(
                "workload `{}` runs between {} and {}, not the two ends of the link ({} and {})",
                w.name, w.client, w.server, link.a, link.b
            ));
        }
        if w.backend.is_some() {
            return Err(format!(
                "workload `{}` relays to a backend: real mode has no third host",
                w.name
            ));
        }
        if w.client_config.is_some()
            || w.client_receiver.is_some()
            || w.client_sack.is_some()
            || w.client_dsack.is_some()
            || w.server_config.is_some()
        {
            return Err(format!(
                "workload `{}` configures its endpoints apart from the variant: the kernel's sockets share the namespace's settings",
                w.name
            ));
        }
    }
    for (dir, c) in [("a_to_b", &link.a_to_b.spec), ("b_to_a", &link.b_to_a.spec)] {
        check_channel(c).map_err(|e| format!("link {}–{} {dir}: {e}", link.a, link.b))?;
    }
    Ok(side)
}

fn check_channel(c: &ChannelSpec) -> Result<(), String> {
    if c.strip_option > 0.0
        || c.seq_shift != 0
        || c.ack_shift != 0
        || c.reserved_bits != ReservedBits::Pass
    {
        return Err("middleboxes that rewrite packets are not in real mode's forwarder".into());
    }
    Ok(())
}

/// The client scripts of one trial, and the connections' response sizes (for the
/// forwarder's tail-drop model).
pub struct TrialPlan {
    pub scripts: Vec<ClientScript>,
    pub conns: Vec<ConnPlan>,
}

/// Plans one trial of `setup` (the scenario's trial setup, seeded by `trial_seed`).
pub fn plan(setup: &Setup, trial_seed: u64) -> Result<TrialPlan, String> {
    let home = setup
        .workloads
        .first()
        .map(|w| w.server.clone())
        .unwrap_or_default();
    let mut p = Planner {
        home,
        next_conn: 0,
        scripts: Vec::new(),
    };
    for (i, w) in setup.workloads.iter().enumerate() {
        p.workload(i, w, trial_seed)?;
    }
    let conns = p
        .scripts
        .iter()
        .flat_map(|s| s.conns.iter().cloned())
        .collect();
    Ok(TrialPlan {
        scripts: p.scripts,
        conns,
    })
}

/// The scripts planned so far, and the connections they open, numbered in order.
struct Planner {
    /// The first workload's server: a workload served from the other end runs
    /// the other way round.
    home: String,
    next_conn: u32,
    scripts: Vec<ClientScript>,
}

/// What every connection and script of workload `i` shares.
struct Shape {
    i: u16,
    port: u16,
    reversed: bool,
    start: Duration,
    measured: bool,
}

impl Shape {
    fn conn(&self, index: u32, exchanges: Vec<ExchangePlan>) -> ConnPlan {
        ConnPlan {
            index,
            workload: self.i,
            port: self.port,
            exchanges,
            server_close: false,
            endless: false,
            reversed: self.reversed,
            writes: Vec::new(),
        }
    }

    fn script(&self, conns: Vec<ConnPlan>, think: Duration, fresh: bool) -> ClientScript {
        ClientScript {
            workload: self.i,
            start: self.start,
            think,
            fresh,
            conns,
            measured: self.measured,
            page: None,
        }
    }
}

/// One exchange of a single-exchange connection (bulk, writes).
fn single(response: u64) -> Vec<ExchangePlan> {
    vec![ExchangePlan {
        index: 0,
        request: 0,
        response,
        at: None,
    }]
}

impl Planner {
    /// The next connection's number.
    fn conn(&mut self) -> Result<u32, String> {
        self.next_conn += 1;
        if self.next_conn as u64 > MAX_CONNECTIONS {
            return Err(format!(
                "a trial opens more than {MAX_CONNECTIONS} connections"
            ));
        }
        Ok(self.next_conn - 1)
    }

    /// Workload `i`'s scripts, its sizes drawn from its own stream.
    fn workload(&mut self, i: usize, w: &WorkloadSpec, trial_seed: u64) -> Result<(), String> {
        let mut rng =
            gentle_sim::rng::stream(trial_seed, gentle_sim::rng::ids::WORKLOAD + i as u64);
        let jitter = if w.jitter.is_zero() {
            Duration::ZERO
        } else {
            Duration::from_nanos(rng.gen_range(0..w.jitter.as_nanos() as u64))
        };
        let shape = Shape {
            i: i as u16,
            port: SERVER_PORT_BASE + i as u16,
            reversed: w.server != self.home,
            start: w.start + jitter,
            measured: w.measure,
        };
        match &w.kind {
            WorkloadKind::Exchanges {
                request,
                response,
                exchanges,
                mode,
                think,
                server_close,
            } => {
                let list = exchange_list(w, (request, response), *exchanges, &mut rng);
                let lists = match mode {
                    ConnectionMode::Persistent => vec![list],
                    ConnectionMode::Fresh => list.into_iter().map(|e| vec![e]).collect(),
                };
                let mut conns = Vec::new();
                for list in lists {
                    let mut c = shape.conn(self.conn()?, list);
                    c.server_close = *server_close;
                    conns.push(c);
                }
                let fresh = *mode == ConnectionMode::Fresh;
                self.scripts.push(shape.script(conns, *think, fresh));
            }
            WorkloadKind::Bulk { bytes } => {
                let mut c = shape.conn(self.conn()?, single(bytes.unwrap_or(0)));
                c.endless = bytes.is_none();
                self.scripts
                    .push(shape.script(vec![c], Duration::ZERO, true));
            }
            WorkloadKind::Writes { writes } => {
                let total = writes.iter().map(|w| w.1).sum();
                let mut c = shape.conn(self.conn()?, single(total));
                c.writes = writes.clone();
                self.scripts
                    .push(shape.script(vec![c], Duration::ZERO, true));
            }
            WorkloadKind::Page {
                objects,
                object,
                request,
                connections,
            } => {
                // Objects are dealt round-robin to the page's connections (the
                // simulator hands each to the first connection free).
                let m = (*connections).max(1);
                let mut per: Vec<Vec<ExchangePlan>> = vec![Vec::new(); m as usize];
                for k in 0..*objects {
                    let (req, obj) = (request.sample(&mut rng), object.sample(&mut rng));
                    per[(k % m) as usize].push(ExchangePlan {
                        index: k,
                        request: req,
                        response: obj,
                        at: None,
                    });
                }
                for list in per.into_iter().filter(|l| !l.is_empty()) {
                    let c = shape.conn(self.conn()?, list);
                    let mut script = shape.script(vec![c], Duration::ZERO, true);
                    script.page = Some(shape.i);
                    self.scripts.push(script);
                }
            }
        }
        Ok(())
    }
}

/// The exchanges of a request/response workload, drawn in the simulator's order:
/// an exchange's start (periodic exchanges after the first), then its request and
/// response sizes.
fn exchange_list(
    w: &WorkloadSpec,
    (request, response): (&Size, &Size),
    exchanges: u32,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Vec<ExchangePlan> {
    let mut list = Vec::new();
    for k in 0..exchanges {
        let at = match (k, w.period) {
            (0, _) | (_, None) => None,
            (_, Some((p, j))) => {
                let extra = if j.is_zero() {
                    0
                } else {
                    rng.gen_range(0..j.as_nanos() as u64)
                };
                Some(w.start + p * k + Duration::from_nanos(extra))
            }
        };
        let (req, resp) = (request.sample(rng), response.sample(rng));
        list.push(ExchangePlan {
            index: k,
            request: req,
            response: resp,
            at,
        });
    }
    list
}
