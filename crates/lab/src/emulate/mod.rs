//! `gentle emulate`: a scenario against the host's kernel TCP. Its link becomes
//! the real-time forwarder between two network namespaces (`gentle_real`), its
//! workload runs on kernel sockets inside them, and each variant is a kernel
//! configuration ([`kernel`]). The output is `gentle run`'s — records, JSON,
//! report — with what only a real run has: a pcap at each end, the forwarder's
//! drop and delay log, `TCP_INFO` after every exchange, the kernel's release, HZ
//! and sysctls.
//!
//! Everything a scenario needs is checked before anything is created
//! ([`prepare`]); namespaces are anonymous and TUNs not persistent, so nothing is
//! left behind however the run ends.

pub mod causes;
pub mod command;
pub mod external;
pub mod kernel;
pub mod plan;
pub mod results;
pub mod trial;

use std::time::Duration;

use gentle_real::forward::DelayError;
use gentle_real::sysctl::KernelFacts;
pub use gentle_real::topology::EngineEnd;
use gentle_tcp::{CcAlgorithm, Profile};

use crate::runner::{self, RunResult, VariantResult};
use crate::scenario::{KernelSpec, Scenario, Variant};
use kernel::KernelVariant;
use plan::ServerSide;
use trial::{RealTrial, TrialArgs};

/// The port of the engine's HTTP responder (`gentle serve`), where an external
/// client finds the server (`$GENTLE_SERVER`).
pub const HTTP_PORT: u16 = 80;

/// The longest a trial runs in real mode unless `--time-limit` says otherwise
/// (scenario time limits are written for virtual time, up to 600 s).
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(60);

/// What `gentle emulate` was asked.
#[derive(Clone, Debug)]
pub struct EmulateOptions {
    pub trials: u64,
    pub seed: u64,
    /// Run only these variants (all when empty).
    pub variants: Vec<String>,
    /// Replace the variants by the host kernel with these congestion controls.
    pub kernels: Vec<String>,
    pub time_limit: Duration,
    /// Keep every trial's captures.
    pub capture: bool,
    /// gentle's engine takes this end in place of a kernel namespace (`gentle
    /// serve`, `gentle connect`); the variants then configure the engine, and the
    /// kernel peer runs the host's defaults with `kernels[0]` (CUBIC if none).
    pub engine: Option<EngineEnd>,
    /// An external command as the client (`sh -c`, in the client namespace), in
    /// place of gentle's built-in clients: against the engine's HTTP responder
    /// (`gentle serve`), or against `server_cmd`.
    pub peer: Option<String>,
    /// An external command as the server, in the server namespace, listening on
    /// 10.77.0.1:80 (`gentle emulate`, with `peer`).
    pub server_cmd: Option<String>,
}

/// A scenario checked for real mode.
pub struct Prepared {
    pub side: ServerSide,
    pub variants: Vec<(Variant, KernelVariant)>,
}

/// Checks everything real mode needs, creating nothing: root and TUN, the
/// topology, every variant's kernel configuration against this kernel.
pub fn prepare(scn: &Scenario, o: &EmulateOptions) -> Result<Prepared, String> {
    let side = plan::check(scn)?;
    for v in &o.variants {
        if !scn.variants.iter().any(|x| &x.name == v) {
            let names: Vec<&str> = scn.variants.iter().map(|x| x.name.as_str()).collect();
            return Err(format!(
                "--variant {v}: no such variant (the scenario has: {})",
                names.join(", ")
            ));
        }
    }
    if o.trials == 0 {
        return Err("--trials: at least 1".into());
    }
    if let Some(end) = o.engine {
        return prepare_engine(scn, o, side, end);
    }
    if o.peer.is_some() != o.server_cmd.is_some() {
        return Err("--client-cmd and --server-cmd go together: gentle's own clients and servers speak only to each other".into());
    }
    let chosen: Vec<Variant> = if o.kernels.is_empty() {
        scn.variants
            .iter()
            .filter(|v| o.variants.is_empty() || o.variants.contains(&v.name))
            .cloned()
            .collect()
    } else {
        o.kernels.iter().map(|cc| host_variant(cc)).collect()
    };
    let mut variants = Vec::new();
    for v in chosen {
        let k = kernel::kernel_variant(&v)?;
        k.kernel
            .check()
            .map_err(|e| format!("variant `{}`: {e}", v.name))?;
        variants.push((v, k));
    }
    gentle_real::available()?;
    Ok(Prepared { side, variants })
}

/// `gentle serve` / `gentle connect`: every variant runs on gentle's engine; the
/// kernel peer is the host's defaults with one congestion control.
fn prepare_engine(
    scn: &Scenario,
    o: &EmulateOptions,
    side: ServerSide,
    end: EngineEnd,
) -> Result<Prepared, String> {
    let first_server = &scn.workloads[0].server;
    if let Some(w) = scn.workloads.iter().find(|w| &w.server != first_server) {
        return Err(format!(
            "workload `{}` has its server on {}: with gentle's engine at one end every server is on {first_server}",
            w.name, w.server
        ));
    }
    if o.kernels.len() > 1 {
        return Err("--kernel: one congestion control for the kernel peer".into());
    }
    if o.peer.is_some() && end != EngineEnd::Server {
        return Err("--peer: an external command is the client of gentle serve".into());
    }
    if o.server_cmd.is_some() {
        return Err("--server-cmd: gentle's engine is the server here".into());
    }
    let cc = o.kernels.first().map_or("cubic", |s| s.as_str());
    let k = kernel::kernel_variant(&host_variant(cc))?;
    k.kernel
        .check()
        .map_err(|e| format!("--kernel {cc}: {e}"))?;
    let mut variants = Vec::new();
    for v in scn
        .variants
        .iter()
        .filter(|v| o.variants.is_empty() || o.variants.contains(&v.name))
    {
        if v.config.accelerated_open || v.config.session != gentle_tcp::SessionMode::Off {
            return Err(format!(
                "variant `{}`: accelerated open and TCP sessions need both ends to be gentle's",
                v.name
            ));
        }
        let mut kv = k.clone();
        kv.name = v.name.clone();
        kv.differences.clear();
        variants.push((v.clone(), kv));
    }
    gentle_real::available()?;
    Ok(Prepared { side, variants })
}

/// The host kernel as it is configured by default, with congestion control `cc`:
/// `linux-6`'s switches (the kernel's defaults) and `cc` pinned.
fn host_variant(cc: &str) -> Variant {
    let mut config = Profile::Linux6.config();
    config.cc = if cc == "reno" {
        CcAlgorithm::Reno
    } else {
        CcAlgorithm::Cubic
    };
    Variant {
        name: format!("kernel {cc}"),
        config: config.into(),
        backend: None,
        workload_configs: Vec::new(),
        kernel: Some(KernelSpec {
            cc: Some(cc.to_string()),
            sysctls: Vec::new(),
        }),
    }
}

/// What an emulation produced, besides `gentle run`'s result.
pub struct Emulation {
    pub run: RunResult,
    pub kernels: Vec<KernelVariant>,
    pub facts: KernelFacts,
    /// Per variant: the one-way delay error over all its trials ...
    pub delay_error: Vec<DelayError>,
    /// ... and the TUN drops (always 0 in a run that finished).
    pub tun_dropped: Vec<u64>,
    /// Every trial of every variant, for the output files.
    pub trials: Vec<Vec<RealTrial>>,
}

/// Runs every trial of every prepared variant, in order, one at a time (a trial
/// is real time: parallel trials would share the CPU the forwarder's timing
/// needs). `progress` hears of each trial as it ends.
pub fn emulate(
    scn: &Scenario,
    p: &Prepared,
    o: &EmulateOptions,
    progress: &mut dyn FnMut(&str, u64, u64),
) -> Result<Emulation, String> {
    let wall = std::time::Instant::now();
    let limit = o.time_limit.min(scn.time_limit);
    let mut run = RunResult::default();
    let mut e = Emulation {
        run: RunResult::default(),
        kernels: p.variants.iter().map(|(_, k)| k.clone()).collect(),
        facts: KernelFacts::default(),
        delay_error: Vec::new(),
        tun_dropped: Vec::new(),
        trials: Vec::new(),
    };
    // The report's scenario has the variants that ran.
    for (v, k) in &p.variants {
        let mut vr = VariantResult {
            name: v.name.clone(),
            ..Default::default()
        };
        let mut trials = Vec::new();
        let mut lateness: Vec<(DelayError, u64)> = Vec::new();
        for t in 0..o.trials {
            if crate::interrupt::requested() {
                break;
            }
            let rt = trial::run(&TrialArgs {
                scn,
                variant: v,
                kernel: k,
                side: p.side,
                seed: o.seed,
                trial: t,
                limit,
                capture: o.capture,
                engine: o.engine,
                peer: o.peer.as_deref(),
                server_cmd: o.server_cmd.as_deref(),
            })?;
            let drops = rt.tun[0].tx_dropped
                + rt.tun[1].tx_dropped
                + rt.tun[0].rx_dropped
                + rt.tun[1].rx_dropped;
            if drops > 0 {
                return Err(format!(
                    "variant `{}` trial {t}: the TUN devices dropped {drops} packets the emulator did not choose to drop (the forwarder fell behind); the run is not valid",
                    v.name
                ));
            }
            if rt.forwarder.write_errors > 0 {
                return Err(format!(
                    "variant `{}` trial {t}: {} packets could not be written into a namespace",
                    v.name, rt.forwarder.write_errors
                ));
            }
            if e.facts.release.is_empty() {
                e.facts = rt.facts.clone();
            }
            lateness.push((rt.forwarder.delay_error, rt.forwarder.delay_error.samples));
            runner::absorb(&mut vr, rt.result.clone(), scn, true);
            trials.push(rt);
            progress(&v.name, t + 1, o.trials);
        }
        vr.records.sort_by_key(|r| (r.trial, r.workload, r.index));
        vr.latencies.finish();
        vr.retransmitted.finish();
        vr.lost.finish();
        e.delay_error.push(worst(&lateness));
        e.tun_dropped.push(0);
        run.variants.push(vr);
        e.trials.push(trials);
    }
    run.wall_seconds = wall.elapsed().as_secs_f64();
    run.intervals(o.seed);
    e.run = run;
    Ok(e)
}

/// The share of the path's one-way delay that the forwarder's p99 delay error may
/// reach before a run says its timing is off: 5%, a tenth of the ±2 ms-or-more
/// tolerance kernel-vs-sim allows on round trips of tens of milliseconds.
pub const DELAY_ERROR_SHARE: f64 = 0.05;

/// Below this p99 delay error nothing is said, whatever the path's delay (a
/// link without delay has no share to compare with).
pub const DELAY_ERROR_FLOOR_US: f64 = 500.0;

/// Warnings for the variants whose forwarder delay error (p99) is a noticeable
/// share of the scenario's shortest one-way link delay.
pub fn delay_error_warnings(scn: &Scenario, e: &Emulation) -> Vec<String> {
    let delay_us = scn
        .links
        .iter()
        .flat_map(|l| [&l.a_to_b.delay, &l.b_to_a.delay])
        .map(|d| d.min().as_secs_f64() * 1e6)
        .fold(f64::INFINITY, f64::min);
    e.kernels
        .iter()
        .zip(&e.delay_error)
        .filter_map(|(k, d)| delay_error_warning(&k.name, d, delay_us))
        .collect()
}

/// The warning for variant `name` whose forwarder was late by `d` on a path of
/// `delay_us` one way, if the error is noticeable.
fn delay_error_warning(name: &str, d: &DelayError, delay_us: f64) -> Option<String> {
    (d.p99_us > DELAY_ERROR_FLOOR_US && d.p99_us > DELAY_ERROR_SHARE * delay_us).then(|| {
        format!(
            "`{name}`: the forwarder delivered packets late by {:.1} ms at p99 ({:.1} ms at most) on a path of {:.1} ms one way: the host is loaded, and the times carry that error",
            d.p99_us / 1e3,
            d.max_us / 1e3,
            delay_us / 1e3
        )
    })
}

/// The delay error over many trials: the largest p50, p99 and max of any trial (a
/// bound, not a pooled percentile).
fn worst(v: &[(DelayError, u64)]) -> DelayError {
    let mut d = DelayError::default();
    for (x, n) in v {
        d.samples += n;
        d.p50_us = d.p50_us.max(x.p50_us);
        d.p99_us = d.p99_us.max(x.p99_us);
        d.max_us = d.max_us.max(x.max_us);
    }
    d
}

/// The scenario as it ran: only the variants that ran, in order.
pub fn ran_scenario(scn: &Scenario, p: &Prepared) -> Scenario {
    let mut s = scn.clone();
    s.variants = p.variants.iter().map(|(v, _)| v.clone()).collect();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(p99_us: f64) -> DelayError {
        DelayError {
            p99_us,
            max_us: 2.0 * p99_us,
            ..Default::default()
        }
    }

    #[test]
    fn a_delay_error_that_is_a_noticeable_share_of_the_path_is_said() {
        // The loaded host of the first-use review: 12 ms at p99 on a 50 ms path.
        let w = delay_error_warning("cubic", &err(12_000.0), 50_000.0).unwrap();
        assert!(
            w.contains("12.0 ms at p99") && w.contains("50.0 ms one way"),
            "{w}"
        );
        // 0.6 ms on a 5 ms path is 12%: said; on a 100 ms path, 0.6%: not.
        assert!(delay_error_warning("x", &err(600.0), 5_000.0).is_some());
        assert!(delay_error_warning("x", &err(600.0), 100_000.0).is_none());
        // Tens of microseconds, as on an idle host, never; not even without delay.
        assert!(delay_error_warning("x", &err(81.0), 0.0).is_none());
        assert!(delay_error_warning("x", &err(900.0), 0.0).is_some());
    }
}
