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
use gentle_sim::workload::{ConnectionMode, WorkloadKind};
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
    let side = if first.server == link.a {
        ServerSide::A
    } else {
        ServerSide::B
    };
    for w in &scn.workloads {
        let ends = (w.server.as_str(), w.client.as_str());
        if ends != (link.a.as_str(), link.b.as_str()) && ends != (link.b.as_str(), link.a.as_str())
        {
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
    let mut scripts = Vec::new();
    let mut next_conn = 0u32;
    let conn = |n: &mut u32| -> Result<u32, String> {
        *n += 1;
        if *n as u64 > MAX_CONNECTIONS {
            return Err(format!(
                "a trial opens more than {MAX_CONNECTIONS} connections"
            ));
        }
        Ok(*n - 1)
    };
    for (i, w) in setup.workloads.iter().enumerate() {
        let mut rng =
            gentle_sim::rng::stream(trial_seed, gentle_sim::rng::ids::WORKLOAD + i as u64);
        let jitter = if w.jitter.is_zero() {
            Duration::ZERO
        } else {
            Duration::from_nanos(rng.gen_range(0..w.jitter.as_nanos() as u64))
        };
        let start = w.start + jitter;
        let port = SERVER_PORT_BASE + i as u16;
        let base = |index: u32, exchanges: Vec<ExchangePlan>| ConnPlan {
            index,
            workload: i as u16,
            port,
            exchanges,
            server_close: false,
            endless: false,
            reversed: w.server != home,
            writes: Vec::new(),
        };
        let script =
            |conns: Vec<ConnPlan>, think: Duration, fresh: bool, page: Option<u16>| ClientScript {
                workload: i as u16,
                start,
                think,
                fresh,
                conns,
                measured: w.measure,
                page,
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
                // The simulator's order of draws: an exchange's start (periodic
                // exchanges after the first), then its request and response sizes.
                let mut list = Vec::new();
                for k in 0..*exchanges {
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
                    let (req, resp) = (request.sample(&mut rng), response.sample(&mut rng));
                    list.push(ExchangePlan {
                        index: k,
                        request: req,
                        response: resp,
                        at,
                    });
                }
                let conns = match mode {
                    ConnectionMode::Persistent => {
                        let mut c = base(conn(&mut next_conn)?, list);
                        c.server_close = *server_close;
                        vec![c]
                    }
                    ConnectionMode::Fresh => list
                        .into_iter()
                        .map(|e| {
                            let mut c = base(conn(&mut next_conn)?, vec![e]);
                            c.server_close = *server_close;
                            Ok(c)
                        })
                        .collect::<Result<_, String>>()?,
                };
                scripts.push(script(conns, *think, *mode == ConnectionMode::Fresh, None));
            }
            WorkloadKind::Bulk { bytes } => {
                let mut c = base(
                    conn(&mut next_conn)?,
                    vec![ExchangePlan {
                        index: 0,
                        request: 0,
                        response: bytes.unwrap_or(0),
                        at: None,
                    }],
                );
                c.endless = bytes.is_none();
                scripts.push(script(vec![c], Duration::ZERO, true, None));
            }
            WorkloadKind::Writes { writes } => {
                let mut c = base(
                    conn(&mut next_conn)?,
                    vec![ExchangePlan {
                        index: 0,
                        request: 0,
                        response: writes.iter().map(|w| w.1).sum(),
                        at: None,
                    }],
                );
                c.writes = writes.clone();
                scripts.push(script(vec![c], Duration::ZERO, true, None));
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
                    let c = base(conn(&mut next_conn)?, list);
                    scripts.push(script(vec![c], Duration::ZERO, true, Some(i as u16)));
                }
            }
        }
    }
    let conns = scripts
        .iter()
        .flat_map(|s| s.conns.iter().cloned())
        .collect();
    Ok(TrialPlan { scripts, conns })
}
