//! `kernel-vs-sim`: the `linux-6` profile next to the host's kernel on the same
//! paths and the same losses (`examples/kernel-vs-sim.toml`): Table 1's tail-loss
//! patterns, a tail segment lost twice, a mid-response loss, a reordered segment,
//! and random loss on the tlp-study's mobile network with position-keyed draws.
//!
//! For the first response of each case it sets side by side which segments were
//! retransmitted and why (the engine's trace; for the kernel, `gentle analyze`'s
//! inference from the server's capture), the CA state and cwnd once the response
//! was acknowledged (the engine; the kernel's `TCP_INFO`), and the server-side
//! response time. The deterministic cases run the kernel `REPEATS` times, since
//! its timers and scheduling jitter; the random case compares distributions.
//!
//! A time agrees when the simulated one lies within the kernel's range widened by
//! the tolerance: 2 ms, plus 4 ms for each timer-driven retransmission (a probe, an
//! RTO, or RACK's reorder timer behind an early one) — HZ = 250 rounds kernel
//! timers up to the next 4 ms tick — plus 32 ms
//! for each such timer armed at 256 ms or more (the timer wheel's coarser buckets
//! there; measured, `real-mode.md`). A kernel run may also be later by its
//! forwarder's stalls (the forwarder's thread or its vCPU not running, measured
//! from its own delivery log), never earlier.
//!
//! Needs root: without it the report says why and nothing runs.

use std::fmt::Write as _;
use std::sync::Arc;

use gentle_sim::{Observer, PacketEvent, PacketView, Sim, rng};
use gentle_tcp::{CaState, Connection, Event, Instant, RetransKind};
use serde::Serialize;

use super::Builtin;

mod clocked;
use crate::emulate::{self, EmulateOptions};
use crate::scenario::{Scenario, Variant};
pub use clocked::Clocked;

pub const FILE: Builtin = Builtin {
    path: "examples/kernel-vs-sim.toml",
    text: include_str!("../../../../../examples/kernel-vs-sim.toml"),
};

/// The congestion control run on the kernel alone, with the host's defaults.
pub const KERNEL_ONLY: &str = "bbr";

/// Kernel runs of each deterministic case.
pub const REPEATS: u64 = 3;

/// One retransmission of the first response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Retx {
    /// The segment's number in the response (1 for the first).
    pub segment: u64,
    /// Why: fast, early, probe, timeout, slow-start.
    pub cause: String,
    /// When, ms after the response's first segment was sent.
    pub at_ms: f64,
}

/// What one run (simulated or kernel) showed of the first response.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Side {
    pub retrans: Vec<Retx>,
    pub ca_state: String,
    pub cwnd: u32,
    pub server_ms: Option<f64>,
    /// When the response's first segment was sent: in the simulation, ns of
    /// simulated time; in the kernel, ns of the monotonic clock (as the forwarder
    /// read it).
    #[serde(skip)]
    pub anchor_ns: Option<u64>,
    /// When the connection's first packet (the client's SYN) was sent, on the
    /// same clocks: what a clocked simulation is placed on (the response's first
    /// segment moves with the handshake's path, which the clock decides).
    #[serde(skip)]
    pub syn_ns: Option<u64>,
    /// The kernel run's forwarder: the latest it delivered a packet after its due
    /// time, ms.
    #[serde(skip)]
    pub forwarder_late_ms: Option<f64>,
    /// The kernel run's forwarder: how far its stalls pushed the path back before
    /// the response was acknowledged ([`gentle_real::forward::ForwarderReport::stall_ns`]),
    /// ms; 0 in the simulation.
    pub stall_ms: f64,
}

impl Side {
    pub(super) fn causes(&self) -> String {
        if self.retrans.is_empty() {
            return "none".into();
        }
        self.retrans
            .iter()
            .map(|r| format!("{}:{}", r.segment, r.cause))
            .collect::<Vec<_>>()
            .join(" ")
    }
    fn timers(&self) -> (u32, u32) {
        // Probes and RTOs are timer-driven; so is an `early` retransmission of
        // RACK-TLP, when RACK's reorder timer marks the segment lost
        // (`tcp_rack_reo_timeout`, on jiffies like the others).
        let timed = self
            .retrans
            .iter()
            .filter(|r| matches!(r.cause.as_str(), "probe" | "timeout" | "early"));
        let n = timed.clone().count() as u32;
        // A probe or RTO 256 ms or more into the response: its timer is taken as
        // armed at 256 ms or more (the RTO is over 300 ms on these paths), where
        // the timer wheel's buckets are 32 ms. RACK's reorder timer is shorter.
        let long = timed
            .filter(|r| r.cause != "early" && r.at_ms >= 256.0)
            .count() as u32;
        (n, long)
    }
}

/// One case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Case {
    pub case: String,
    pub description: String,
    /// The variant (its congestion control), or the kernel-only BBR run.
    pub variant: String,
    /// Per trial: the simulation, and the kernel runs of it.
    pub sim: Vec<Side>,
    pub kernel: Vec<Vec<Side>>,
    /// Kernel runs with the same segments retransmitted for the same reasons as
    /// the simulation of their trial, of all kernel runs ...
    pub same_repairs: (u32, u32),
    /// ... with the same CA state and cwnd after the response ...
    pub same_state: (u32, u32),
    /// ... and trials whose simulated time lies within the kernel runs' range
    /// widened by the tolerance, of all trials.
    pub time_agrees: (u32, u32),
    /// The largest tolerance used, ms.
    pub tolerance_ms: f64,
    /// The trials where the simulation and the kernel disagree, for the report.
    pub disagreements: Vec<String>,
    /// Each kernel run against a simulation on its own kernel clock, when the
    /// kernel's jiffies could be read.
    pub clocked: Option<Clocked>,
}

/// The experiment's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    /// Why it did not run, if it did not.
    pub skipped: Option<String>,
    pub kernel: Option<gentle_real::sysctl::KernelFacts>,
    pub cases: Vec<Case>,
}

/// The engine's view of one trial: the server connection's retransmissions and
/// its state once the first response is acknowledged.
struct SimObserver {
    port: u16,
    response_end: u64,
    first_send: Option<u64>,
    first_syn: Option<u64>,
    retrans: Vec<(u64, u64, RetransKind)>,
    after: Option<(CaState, u32)>,
}

impl Observer for SimObserver {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        if ev == PacketEvent::Send
            && p.meta.from_server
            && p.meta.payload > 0
            && self.first_send.is_none()
        {
            self.first_send = Some(p.t.as_nanos());
        }
        if ev == PacketEvent::Send && !p.meta.from_server && self.first_syn.is_none() {
            self.first_syn = Some(p.t.as_nanos());
        }
    }
    fn on_engine(&mut self, t: Instant, _node: u16, _conn: u32, ev: &Event, _nodes: &[Arc<str>]) {
        if let Event::Retransmit { seq, kind, .. } = ev
            && *seq < self.response_end
        {
            self.retrans.push((t.as_nanos(), *seq, *kind));
        }
    }
    fn on_connection(&mut self, _t: Instant, _conn: u32, c: &Connection) {
        if self.after.is_none() && c.local_port() == self.port && c.snd_una() >= self.response_end {
            self.after = Some((c.ca_state(), c.cwnd()));
        }
    }
    fn wants_engine_events(&self) -> bool {
        true
    }
}

fn kind_name(k: RetransKind) -> &'static str {
    match k {
        RetransKind::Fast => "fast",
        RetransKind::Early => "early",
        RetransKind::Timeout => "timeout",
        RetransKind::SlowStart => "slow-start",
        RetransKind::Probe => "probe",
    }
}

/// The segment number of sequence offset `seq` (the SYN is 0, segments of `mss`).
fn segment_of(seq: u64, mss: u64) -> u64 {
    (seq.saturating_sub(1)) / mss + 1
}

/// Segment size on both sides: 1500-byte MTU, timestamps.
const MSS: u64 = 1448;

pub(super) fn simulate(scn: &Scenario, v: &Variant, trial: u64) -> Side {
    let ts = rng::trial_seed(scn.seed, trial);
    let setup = scn.setup(v, ts);
    let w = &setup.workloads[0];
    let mut plan_rng = rng::stream(ts, rng::ids::WORKLOAD);
    let resp = match &w.kind {
        gentle_sim::workload::WorkloadKind::Exchanges {
            request, response, ..
        } => {
            request.sample(&mut plan_rng);
            response.sample(&mut plan_rng)
        }
        _ => 0,
    };
    let mut obs = SimObserver {
        port: w.port,
        response_end: resp + 1,
        first_send: None,
        first_syn: None,
        retrans: Vec::new(),
        after: None,
    };
    let r = Sim::new(&setup, trial, ts)
        .expect("scenario validated")
        .with_observer(&mut obs)
        .run();
    let t0 = obs.first_send.unwrap_or(0);
    let (ca, cwnd) = obs.after.unwrap_or((CaState::Open, 0));
    Side {
        retrans: obs
            .retrans
            .iter()
            .map(|&(t, seq, k)| Retx {
                segment: segment_of(seq, MSS),
                cause: kind_name(k).into(),
                at_ms: (t.saturating_sub(t0)) as f64 / 1e6,
            })
            .collect(),
        ca_state: ca.name().into(),
        cwnd,
        server_ms: r
            .exchanges
            .iter()
            .find(|e| e.index == 0)
            .and_then(|e| e.server_ns)
            .map(|n| n as f64 / 1e6),
        anchor_ns: obs.first_send,
        syn_ns: obs.first_syn,
        forwarder_late_ms: None,
        stall_ms: 0.0,
    }
}

fn kernel_side(t: &emulate::trial::RealTrial) -> Side {
    let log = &t.forwarder.log;
    let first = log
        .iter()
        .find(|e| e.dir == 0 && e.flow == 0 && e.payload > 0);
    let t0 = first.map_or(0, |e| e.t_ns);
    let rec = t.result.exchanges.iter().find(|e| e.index == 0);
    let resp_end = rec.map_or(u64::MAX, |r| r.response_bytes + 1);
    // When the client's ACK of the whole response reached the server.
    let acked = log
        .iter()
        .filter(|e| e.dir == 1 && e.flow == 0 && e.rel_ack >= resp_end)
        .filter(|e| e.fate == gentle_real::forward::Fate::Delivered)
        .map(|e| e.out_ns)
        .min();
    let info = t
        .infos
        .iter()
        .find(|(c, k, _)| *c == 0 && *k == 0)
        .map(|x| x.2);
    Side {
        retrans: t
            .causes
            .list
            .iter()
            // The response's data: a retransmitted SYN-ACK (offset 0) is the
            // handshake's, as the simulation's trace of the response leaves it.
            .filter(|&&(conn, seq, _, _)| conn == 0 && seq >= 1 && seq < resp_end)
            .map(|&(_, seq, ts, c)| Retx {
                segment: segment_of(seq, MSS),
                cause: c.name().into(),
                at_ms: ts.saturating_sub(t0) as f64 / 1e6,
            })
            .collect(),
        ca_state: info.map_or("?".into(), |i| i.ca_state_name().into()),
        cwnd: info.map_or(0, |i| i.cwnd),
        server_ms: rec.and_then(|r| r.server_ns).map(|n| n as f64 / 1e6),
        anchor_ns: first.map(|e| e.t_ns + t.forwarder.base_ns),
        syn_ns: log
            .iter()
            .find(|e| e.dir == 1 && e.flow == 0)
            .map(|e| e.t_ns + t.forwarder.base_ns),
        forwarder_late_ms: Some(t.forwarder.delay_error.max_us / 1e3),
        stall_ms: t.forwarder.stall_ns(acked.unwrap_or(u64::MAX)) as f64 / 1e6,
    }
}

/// A case's trials (fewer random ones with `quick`) and how many times the
/// kernel runs them (the deterministic cases, of one trial, [`REPEATS`] times).
fn trials_and_repeats(scn: &Scenario, quick: bool) -> (u64, u64) {
    let trials = if quick { scn.quick_trials } else { scn.trials };
    (trials, if trials == 1 { REPEATS } else { 1 })
}

/// A progress bar over the kernel trials (on a terminal): the emulations take
/// minutes of real time.
fn progress(quick: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let total: u64 = FILE
        .sweep()
        .points
        .iter()
        .map(|p| {
            let (trials, repeats) = trials_and_repeats(&p.scenario, quick);
            (p.scenario.variants.len() as u64 + 1) * repeats * trials
        })
        .sum();
    let b = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "kernel-vs-sim [{bar:12}] {pos}/{len} kernel trials, eta {eta} {msg:.dim}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    b
}

/// Runs every case (fewer random trials with `quick`).
pub fn run(quick: bool) -> Outcome {
    if let Err(why) = gentle_real::available() {
        return Outcome {
            skipped: Some(why),
            kernel: None,
            cases: Vec::new(),
        };
    }
    let mut out = Outcome {
        skipped: None,
        kernel: None,
        cases: Vec::new(),
    };
    let bar = progress(quick);
    // Where the kernel's jiffies stand on the monotonic clock, read once.
    let mut jiffies: Option<Option<gentle_real::jiffies::JiffiesMap>> = None;
    for p in FILE.sweep().points {
        let scn = p.scenario;
        let (trials, repeats) = trials_and_repeats(&scn, quick);
        let label = p.coords.first().map_or(String::new(), |c| c.1.clone());
        // The scenario's variants next to the simulation, then BBR on the kernel
        // alone (the engine has no BBR; this kernel's default).
        let runs: Vec<(Option<Variant>, Vec<String>)> = scn
            .variants
            .iter()
            .map(|v| (Some(v.clone()), Vec::new()))
            .chain([(None, vec![KERNEL_ONLY.to_string()])])
            .collect();
        for (variant, kernels) in runs {
            let opts = EmulateOptions {
                trials,
                seed: scn.seed,
                variants: variant.iter().map(|v| v.name.clone()).collect(),
                kernels,
                time_limit: emulate::DEFAULT_TIME_LIMIT,
                capture: false,
                engine: None,
                peer: None,
                server_cmd: None,
            };
            let prepared = match emulate::prepare(&scn, &opts) {
                Ok(p) => p,
                Err(e) => {
                    out.skipped = Some(e);
                    return out;
                }
            };
            let sim: Vec<Side> = match &variant {
                Some(v) => (0..trials).map(|t| simulate(&scn, v, t)).collect(),
                None => Vec::new(),
            };
            let mut kernel: Vec<Vec<Side>> = vec![Vec::new(); trials as usize];
            let who = variant.as_ref().map_or(KERNEL_ONLY, |v| v.name.as_str());
            bar.set_message(format!("{label}, {who}"));
            for _ in 0..repeats {
                match emulate::emulate(&scn, &prepared, &opts, &mut |_, _, _| bar.inc(1)) {
                    Ok(e) => {
                        out.kernel.get_or_insert(e.facts.clone());
                        for (t, rt) in e.trials[0].iter().enumerate() {
                            kernel[t].push(kernel_side(rt));
                        }
                    }
                    Err(err) => {
                        out.skipped = Some(err);
                        return out;
                    }
                }
            }
            let name = variant
                .as_ref()
                .map_or(format!("{KERNEL_ONLY} (kernel only)"), |v| v.name.clone());
            let mut case = compare(label.clone(), scn.description.clone(), name, sim, kernel);
            let hz = out.kernel.as_ref().and_then(|k| k.hz);
            if let (Some(v), Some(hz)) = (&variant, hz)
                && let Some(map) = *jiffies.get_or_insert_with(|| gentle_real::jiffies::read(hz))
            {
                case.clocked = Some(clocked::compare(&scn, v, &case.sim, &case.kernel, hz, map));
            }
            out.cases.push(case);
        }
    }
    bar.finish_and_clear();
    out
}

fn compare(
    case: String,
    description: String,
    variant: String,
    sim: Vec<Side>,
    kernel: Vec<Vec<Side>>,
) -> Case {
    let mut same_repairs = (0, 0);
    let mut same_state = (0, 0);
    let mut time_agrees = (0, 0);
    let mut tolerance_ms: f64 = 0.0;
    let mut disagreements = Vec::new();
    for (t, (s, ks)) in sim.iter().zip(&kernel).enumerate() {
        let (n, long) = s.timers();
        let tol = 2.0 + 4.0 * n as f64 + 32.0 * long as f64;
        tolerance_ms = tolerance_ms.max(tol);
        for k in ks {
            same_repairs.1 += 1;
            same_state.1 += 1;
            let repairs = k.causes() == s.causes();
            let state = k.ca_state == s.ca_state && k.cwnd == s.cwnd;
            same_repairs.0 += repairs as u32;
            same_state.0 += state as u32;
            if !repairs || !state {
                disagreements.push(format!(
                    "trial {t}: sim {} {} cwnd {} — kernel {} {} cwnd {}",
                    s.causes(),
                    s.ca_state,
                    s.cwnd,
                    k.causes(),
                    k.ca_state,
                    k.cwnd
                ));
            }
        }
        // (time, the forwarder's stalls before it) of each kernel run with a time.
        let times: Vec<(f64, f64)> = ks
            .iter()
            .filter_map(|k| k.server_ms.map(|x| (x, k.stall_ms)))
            .collect();
        time_agrees.1 += 1;
        let agrees = match (s.server_ms, times.is_empty()) {
            (Some(st), false) => within(st, &times, tol),
            (None, true) => true,
            _ => false,
        };
        time_agrees.0 += agrees as u32;
        if sim.len() > 1 && !agrees {
            disagreements.push(format!(
                "trial {t}: server time sim {} ms, kernel {} ms (±{tol:.0} ms)",
                ms(s.server_ms),
                times
                    .iter()
                    .map(|&(x, stall)| stalled(x, stall))
                    .collect::<Vec<_>>()
                    .join("/")
            ));
        }
    }
    Case {
        case,
        description,
        variant,
        sim,
        kernel,
        same_repairs,
        same_state,
        time_agrees,
        tolerance_ms,
        disagreements,
        clocked: None,
    }
}

/// Whether simulated time `st` lies within the kernel runs' range (`times`: each
/// run's time and its forwarder's stalls) widened by `tol`: a run's stalls may
/// have made it that much later than on the specified path, never earlier.
pub(super) fn within(st: f64, times: &[(f64, f64)], tol: f64) -> bool {
    let lo = times
        .iter()
        .map(|&(x, stall)| x - stall)
        .fold(f64::INFINITY, f64::min);
    let hi = times.iter().map(|&(x, _)| x).fold(0.0, f64::max);
    st >= lo - tol && st <= hi + tol
}

/// A kernel run's time, with its forwarder's stalls when there were any.
fn stalled(x: f64, stall: f64) -> String {
    if stall > 0.0 {
        format!("{x:.1} (forwarder stalled {stall:.1})")
    } else {
        format!("{x:.1}")
    }
}

/// "all", or how many of how many.
fn share((k, n): (u32, u32)) -> String {
    if k == n {
        format!("all {n}")
    } else {
        format!("{k} of {n}")
    }
}

/// The side-by-side report.
pub fn text(o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "kernel-vs-sim — the linux-6 profile next to the host's kernel, same path, same losses"
    );
    if let Some(why) = &o.skipped {
        let _ = writeln!(s, "skipped: {why}");
        return s;
    }
    if let Some(k) = &o.kernel {
        let hz = k.hz.map_or("HZ unknown".into(), |h| format!("HZ {h}"));
        let _ = writeln!(s, "kernel: Linux {}, {hz}", k.release);
    }
    let mut last = String::new();
    for c in &o.cases {
        if c.case != last {
            let _ = writeln!(s, "\n{} — {}", c.case, c.description);
            last = c.case.clone();
        }
        if c.kernel.len() == 1 {
            deterministic_case(&mut s, c);
        } else {
            random_case(&mut s, c);
        }
        if !c.sim.is_empty() {
            agreement(&mut s, c);
        }
    }
    s
}

/// Milliseconds with one decimal, or `-`.
fn ms(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.1}"))
}

/// A deterministic case: the simulated run and each kernel run side by side, a row
/// each, then the retransmissions' times.
fn deterministic_case(s: &mut String, c: &Case) {
    let kernel = &c.kernel[0];
    if c.sim.is_empty() {
        let _ = writeln!(s, "  {}", c.variant);
    } else {
        let _ = writeln!(
            s,
            "  {:<19} {:<34} {:<10} {:>5} {:>9}",
            c.variant, "retransmitted (segment:why)", "CA after", "cwnd", "server ms"
        );
    }
    let mut row = |who: String, x: &Side| {
        let _ = writeln!(
            s,
            "  {:<19} {:<34} {:<10} {:>5} {:>9}",
            who,
            x.causes(),
            x.ca_state,
            x.cwnd,
            ms(x.server_ms)
        );
    };
    if let Some(sim) = c.sim.first() {
        row("  sim".into(), sim);
    }
    for (i, k) in kernel.iter().enumerate() {
        row(format!("  kernel #{}", i + 1), k);
    }
    if !c.sim.is_empty() {
        let _ = writeln!(
            s,
            "    retransmission times, ms after the first segment: sim {} | kernel #1 {}",
            retrans_times(c.sim.first()),
            retrans_times(kernel.first()),
        );
    }
}

/// Each retransmission of `x` as `segment@ms`, or `-`.
fn retrans_times(x: Option<&Side>) -> String {
    let v: Vec<String> = x
        .map(|x| {
            x.retrans
                .iter()
                .map(|r| format!("{}@{:.0}", r.segment, r.at_ms))
                .collect()
        })
        .unwrap_or_default();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(" ")
    }
}

/// A random case over many trials: the simulation's and the kernel's median
/// server-side time and their retransmissions by cause.
fn random_case(s: &mut String, c: &Case) {
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            f64::NAN
        } else {
            v[v.len() / 2]
        }
    };
    let count = |sides: &[&Side], cause: &str| {
        sides
            .iter()
            .map(|x| x.retrans.iter().filter(|r| r.cause == cause).count())
            .sum::<usize>()
    };
    let _ = writeln!(
        s,
        "  {:<19} {} trials, median server ms   fast  early  probe  timeout  slow-start",
        c.variant,
        c.kernel.len()
    );
    let sim: Vec<&Side> = c.sim.iter().collect();
    let ker: Vec<&Side> = c.kernel.iter().flatten().collect();
    let mut rows = Vec::new();
    if !sim.is_empty() {
        rows.push(("  sim", sim));
    }
    rows.push(("  kernel", ker));
    for (name, sides) in rows {
        let t: Vec<f64> = sides.iter().filter_map(|x| x.server_ms).collect();
        let _ = writeln!(
            s,
            "  {:<19} {:>29.1} {:>6} {:>6} {:>6} {:>8} {:>11}",
            name,
            med(t),
            count(&sides, "fast"),
            count(&sides, "early"),
            count(&sides, "probe"),
            count(&sides, "timeout"),
            count(&sides, "slow-start"),
        );
    }
}

/// How often the kernel agreed with the simulation, and each disagreement.
fn agreement(s: &mut String, c: &Case) {
    let _ = writeln!(
        s,
        "    kernel runs with the same repairs: {}; the same state after: {}; trials within tolerance (±{:.0} ms, +the forwarder's stalls): {}",
        share(c.same_repairs),
        share(c.same_state),
        c.tolerance_ms,
        share(c.time_agrees)
    );
    let stalls: Vec<f64> = c.kernel.iter().flatten().map(|k| k.stall_ms).collect();
    let stalled = stalls.iter().filter(|&&x| x > 0.0).count();
    if stalled > 0 {
        let _ = writeln!(
            s,
            "    the forwarder stalled in {stalled} of {} kernel runs, by up to {:.1} ms before the response was acknowledged",
            stalls.len(),
            stalls.iter().cloned().fold(0.0, f64::max)
        );
    }
    for d in &c.disagreements {
        let _ = writeln!(s, "      {d}");
    }
    if let Some(k) = &c.clocked {
        let _ = writeln!(
            s,
            "    on each kernel run's own clock (HZ {}, the timer wheel): same repairs and time within one jiffy: {}",
            k.hz,
            share(k.agree)
        );
        for m in &k.misses {
            let _ = writeln!(s, "      {m}");
        }
    }
}
