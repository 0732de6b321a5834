//! Runs a scenario's trials for every variant, in parallel and deterministically.
//!
//! Trials are cut into fixed blocks whose size does not depend on the number of
//! threads; blocks run on all cores and their results are merged in trial order,
//! so the output is identical with one thread or many.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant as WallClock;

use gentle_sim::link::ChannelStats;
use gentle_sim::record::LinkStats;
use gentle_sim::record::{ExchangeRecord, PageRecord, TrialResult};
use gentle_sim::{Capture, Observer, PacketEvent, PacketView, Sim, TraceLine, TraceRecorder, rng};
use gentle_tcp::Counters;
use gentle_tcp::{Event, Instant};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::ci::{self, ByTrial};
use crate::episodes::Episodes;
use crate::sample::Sample;
use crate::scenario::{Metric, Scenario, Variant};
use crate::tsg::{Flow, FlowRecorder};

/// Trials per block of work.
const BLOCK: u64 = 64;
/// Trials that hit the time limit named in reports, at most.
pub const TIMED_OUT_NAMED: usize = 100;
/// Blocks run in parallel before their results are merged: bounds the memory of
/// partial results however many trials a run has.
const WAVE: usize = 512;

/// The most worker threads a run of `trials` trials keeps busy: a variant's trials
/// run as blocks of a wave in parallel, so one thread per block of a wave.
pub fn useful_threads(trials: u64) -> usize {
    trials.div_ceil(BLOCK).clamp(1, WAVE as u64) as usize
}

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub trials: u64,
    pub seed: u64,
    /// Keep every record (for CSV output).
    pub keep_records: bool,
    /// Show a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
    /// Trials to observe as they run, and what to keep of them.
    pub observe: Observe,
}

/// Which trials of every variant are observed, and how. Each trial still runs once:
/// an observed trial runs with observers attached.
#[derive(Clone, Debug, Default)]
pub struct Observe {
    /// Keep the trace of this trial (`--trace`, `--trial`).
    pub trace: Option<u64>,
    /// Keep the packets of this trial, captured at the scenario's capture node
    /// (`--pcap`).
    pub capture: Option<u64>,
    /// Keep the time-sequence graph of this trial (scenarios with `tsg`).
    pub tsg: Option<u64>,
}

impl Observe {
    fn wants(&self, trial: u64) -> bool {
        [self.trace, self.capture, self.tsg].contains(&Some(trial))
    }
}

/// What an observed trial showed.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub trial: u64,
    pub trace: Option<Vec<TraceLine>>,
    pub frames: Option<Vec<(u64, Vec<u8>)>>,
    pub flow: Option<Flow>,
}

/// The observers of one trial, each present when asked for.
struct TrialObservers {
    trace: Option<TraceRecorder>,
    capture: Option<Capture>,
    flow: Option<FlowRecorder>,
}

impl Observer for TrialObservers {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        if let Some(o) = &mut self.trace {
            o.on_packet(ev, p);
        }
        if let Some(o) = &mut self.capture {
            o.on_packet(ev, p);
        }
        if let Some(o) = &mut self.flow {
            o.on_packet(ev, p);
        }
    }
    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[Arc<str>]) {
        if let Some(o) = &mut self.trace {
            o.on_engine(t, node, conn, ev, nodes);
        }
        if let Some(o) = &mut self.flow {
            o.on_engine(t, node, conn, ev, nodes);
        }
    }
    fn wants_engine_events(&self) -> bool {
        self.trace.is_some() || self.flow.is_some()
    }
}

/// Everything measured for one variant.
#[derive(Clone, Debug, Default)]
pub struct VariantResult {
    pub name: String,
    /// The scenario's metric for every ranked, complete exchange (or page), ns.
    pub latencies: Sample,
    /// The same values with their trials, for the paired confidence intervals.
    pub by_trial: ByTrial,
    /// The metric for every complete exchange with a retransmission, and with a
    /// lost packet, whatever the scenario ranks (a calibration's
    /// `latency.retransmitted.*` and `latency.lost.*`).
    pub retransmitted: Sample,
    pub lost: Sample,
    pub records: Vec<ExchangeRecord>,
    pub pages: Vec<PageRecord>,
    pub counters: Counters,
    /// The counters of the frontends' backend connections alone.
    pub backend: Counters,
    /// The counters of the server ends alone.
    pub server: Counters,
    pub links: ChannelStats,
    /// The counters of each link direction, added over the trials.
    pub per_link: Vec<LinkStats>,
    pub events: u64,
    pub packets: u64,
    pub data_packets: u64,
    pub corrupt_bytes: u64,
    pub exchanges: u64,
    pub incomplete: u64,
    /// Unfinished exchanges by reason, in the order of `Unfinished::ALL`.
    pub unfinished: [u64; 4],
    /// Trials run (fewer than asked for when interrupted).
    pub trials_run: u64,
    /// Trials that hit the time limit: how many, and the first
    /// `TIMED_OUT_NAMED` of them by number (memory stays bounded).
    pub timed_out: u64,
    pub timed_out_trials: Vec<u64>,
    pub with_retransmission: u64,
    /// Exchanges during which the server retransmitted.
    pub with_server_retransmission: u64,
    pub with_loss: u64,
    /// Fast-recovery episodes of every sender, counted by value.
    pub episodes: Episodes,
    /// The observed trials, in trial order.
    pub observed: Vec<Observed>,
}

#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub variants: Vec<VariantResult>,
    pub wall_seconds: f64,
    /// The 95% confidence intervals of each variant's differences from the first
    /// (`None` for the first), from [`RunResult::intervals`].
    pub cis: Vec<Option<ci::Deltas>>,
}

impl RunResult {
    /// Computes the confidence intervals of the differences from the baseline, with
    /// resamples drawn from `seed`.
    pub fn intervals(&mut self, seed: u64) {
        let trials = self
            .variants
            .iter()
            .map(|v| v.trials_run)
            .min()
            .unwrap_or(0);
        let by: Vec<&ByTrial> = self.variants.iter().map(|v| &v.by_trial).collect();
        self.cis = ci::deltas(&by, trials, seed);
    }

    pub fn events(&self) -> u64 {
        self.variants.iter().map(|v| v.events).sum()
    }
    pub fn packets(&self) -> u64 {
        self.variants.iter().map(|v| v.packets).sum()
    }
}

/// Adds each link direction's counters of `more` to those of `sum` (every trial
/// of a variant has the same links, in the same order).
fn add_per_link(sum: &mut Vec<LinkStats>, more: &[LinkStats]) {
    if sum.is_empty() {
        sum.extend_from_slice(more);
        return;
    }
    for (s, m) in sum.iter_mut().zip(more) {
        s.stats.add(&m.stats);
    }
}

/// The metric's value for one exchange, if it has one.
pub fn metric_of(m: Metric, r: &ExchangeRecord) -> Option<u64> {
    match m {
        Metric::Server => r.server_ns,
        Metric::Client | Metric::Page => r.client_ns,
        Metric::Fin => r.fin_ns.or(r.client_ns),
    }
}

pub(crate) fn absorb(v: &mut VariantResult, t: TrialResult, scn: &Scenario, keep: bool) {
    let measured = |w: u16| scn.workloads.get(w as usize).is_some_and(|s| s.measure);
    for r in &t.exchanges {
        if !measured(r.workload) {
            continue;
        }
        v.exchanges += 1;
        if !r.complete {
            v.incomplete += 1;
            if let Some(u) = r.unfinished {
                let i = gentle_sim::record::Unfinished::ALL
                    .iter()
                    .position(|x| *x == u)
                    .expect("listed");
                v.unfinished[i] += 1;
            }
        }
        if r.had_retransmission() {
            v.with_retransmission += 1;
        }
        if r.server_retrans_segs > 0 {
            v.with_server_retransmission += 1;
        }
        if r.had_loss() {
            v.with_loss += 1;
        }
        // The exchange's metric (pages are ranked below, by page).
        let metric = (scn.metric != Metric::Page)
            .then(|| metric_of(scn.metric, r))
            .flatten()
            .filter(|_| r.complete);
        if let Some(x) = metric {
            if r.had_retransmission() {
                v.retransmitted.push(x);
            }
            if r.had_loss() {
                v.lost.push(x);
            }
        }
        let ranked = scn.filter.ranks(r);
        if let Some(x) = metric.filter(|_| ranked) {
            v.latencies.push(x);
            v.by_trial.push(t.trial, x);
        }
    }
    if scn.metric == Metric::Page {
        for p in &t.pages {
            if let Some(x) = p.load_ns.filter(|_| p.complete) {
                v.latencies.push(x);
                v.by_trial.push(t.trial, x);
            }
        }
    }
    v.counters.add(&t.counters);
    v.backend.add(&t.backend);
    v.server.add(&t.server);
    v.trials_run += 1;
    v.links.add(&t.links);
    add_per_link(&mut v.per_link, &t.per_link);
    for e in &t.episodes {
        v.episodes.push(e);
    }
    v.events += t.events;
    v.packets += t.packets;
    v.data_packets += t.data_packets;
    v.corrupt_bytes += t.corrupt_bytes;
    if t.timed_out {
        v.timed_out += 1;
        if v.timed_out_trials.len() < TIMED_OUT_NAMED {
            v.timed_out_trials.push(t.trial);
        }
    }
    if keep {
        v.records.extend(t.exchanges);
        v.pages.extend(t.pages);
    }
}

/// Runs one trial of one variant.
pub fn run_trial(scn: &Scenario, variant: &Variant, seed: u64, trial: u64) -> TrialResult {
    let ts = rng::trial_seed(seed, trial);
    let setup = scn.setup(variant, ts);
    Sim::from_setup(setup, trial, ts)
        .expect("scenario validated")
        .run()
}

/// Runs one trial of one variant with the observers `observe` asks for that trial.
pub fn run_trial_observed(
    scn: &Scenario,
    variant: &Variant,
    seed: u64,
    trial: u64,
    observe: &Observe,
) -> (TrialResult, Observed) {
    let ts = rng::trial_seed(seed, trial);
    let setup = scn.setup(variant, ts);
    let mut obs = TrialObservers {
        trace: (observe.trace == Some(trial)).then(TraceRecorder::default),
        capture: (observe.capture == Some(trial)).then(|| Capture::new(scn.capture_node())),
        flow: (observe.tsg == Some(trial)).then(|| FlowRecorder::new(&scn.name, &variant.name)),
    };
    let r = Sim::from_setup(setup, trial, ts)
        .expect("scenario validated")
        .with_observer(&mut obs)
        .run();
    let seen = Observed {
        trial,
        trace: obs.trace.map(|t| t.lines),
        frames: obs.capture.map(|c| c.frames),
        flow: obs.flow.map(FlowRecorder::finish),
    };
    (r, seen)
}

/// The time-sequence graphs of trial `trial` of every variant (one run each).
pub fn observed_flows(scn: &Scenario, seed: u64, trial: u64) -> Vec<Flow> {
    let observe = Observe {
        tsg: Some(trial),
        ..Observe::default()
    };
    scn.variants
        .iter()
        .filter_map(|v| run_trial_observed(scn, v, seed, trial, &observe).1.flow)
        .collect()
}

/// Runs every trial of every variant. With `keep_records`, the records are kept in
/// the result; see [`run_streaming`] to hand them out as they come instead.
pub fn run(scn: &Scenario, opts: &RunOptions) -> RunResult {
    let mut kept: Vec<Vec<ExchangeRecord>> = vec![Vec::new(); scn.variants.len()];
    let mut r = run_streaming(scn, opts, &mut |i, recs| {
        kept[i].extend_from_slice(recs);
    });
    for (v, k) in r.variants.iter_mut().zip(kept) {
        v.records = k;
    }
    r
}

/// Runs every trial of every variant; with `keep_records`, hands the records of each
/// variant (by index) to `sink` in trial order, a wave at a time, and keeps none:
/// memory stays bounded however many trials run.
pub fn run_streaming(
    scn: &Scenario,
    opts: &RunOptions,
    sink: &mut dyn FnMut(usize, &[ExchangeRecord]),
) -> RunResult {
    let start = WallClock::now();
    let total = opts.trials * scn.variants.len() as u64;
    let bar = if opts.progress && std::io::stderr().is_terminal() {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        // At most 80 columns: a short name, a 12-column bar, the count of trial runs
        // (trials × variants, labelled so) and a whole-number rate.
        let unit = if scn.variants.len() == 1 {
            "trials"
        } else {
            "trials×variants"
        };
        b.set_style(
            ProgressStyle::with_template(&format!(
                "{{prefix:.bold}} [{{bar:12}}] {{pos}}/{{len}} {unit} {{rate}} eta {{eta}}"
            ))
            .expect("valid template")
            .with_key(
                "rate",
                |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0}/s", s.per_sec());
                },
            )
            .progress_chars("=> "),
        );
        let name: String = scn.name.chars().take(12).collect();
        b.set_prefix(name);
        b
    } else {
        ProgressBar::hidden()
    };
    // Blocks of trials are made a wave at a time: memory does not grow with the
    // number of trials.
    let nblocks = opts.trials.div_ceil(BLOCK);
    let waves = nblocks.div_ceil(WAVE as u64);
    let wave_blocks = |w: u64| -> Vec<(u64, u64)> {
        let first = w * WAVE as u64;
        (first..(first + WAVE as u64).min(nblocks))
            .map(|b| (b * BLOCK, ((b + 1) * BLOCK).min(opts.trials)))
            .collect()
    };
    let mut variants = Vec::new();
    for (vi, variant) in scn.variants.iter().enumerate() {
        let mut v = VariantResult {
            name: variant.name.clone(),
            ..Default::default()
        };
        for w in 0..waves {
            if crate::interrupt::requested() {
                break;
            }
            let wave = wave_blocks(w);
            let block = |&(lo, hi): &(u64, u64)| {
                let mut v = VariantResult::default();
                for trial in lo..hi {
                    let t = if opts.observe.wants(trial) {
                        let (t, seen) =
                            run_trial_observed(scn, variant, opts.seed, trial, &opts.observe);
                        v.observed.push(seen);
                        t
                    } else {
                        run_trial(scn, variant, opts.seed, trial)
                    };
                    absorb(&mut v, t, scn, opts.keep_records);
                }
                bar.inc(hi - lo);
                v
            };
            // One block (a single trial, or a few) runs on the calling thread.
            let parts: Vec<VariantResult> = if wave.len() == 1 {
                wave.iter().map(block).collect()
            } else {
                wave.par_iter().map(block).collect()
            };
            for mut p in parts {
                sink(vi, &p.records);
                p.records = Vec::new();
                // Pages stay: one record per page workload and trial, which the
                // page experiments read back.
                merge(&mut v, p);
            }
        }
        v.latencies.finish();
        v.retransmitted.finish();
        v.lost.finish();
        variants.push(v);
    }
    bar.finish_and_clear();
    let mut r = RunResult {
        variants,
        wall_seconds: start.elapsed().as_secs_f64(),
        cis: Vec::new(),
    };
    r.intervals(opts.seed);
    r
}

fn merge(v: &mut VariantResult, p: VariantResult) {
    v.latencies.merge(p.latencies);
    v.retransmitted.merge(p.retransmitted);
    v.lost.merge(p.lost);
    v.by_trial.merge(p.by_trial);
    v.records.extend(p.records);
    v.pages.extend(p.pages);
    v.counters.add(&p.counters);
    v.backend.add(&p.backend);
    v.server.add(&p.server);
    v.links.add(&p.links);
    add_per_link(&mut v.per_link, &p.per_link);
    v.events += p.events;
    v.packets += p.packets;
    v.data_packets += p.data_packets;
    v.corrupt_bytes += p.corrupt_bytes;
    v.exchanges += p.exchanges;
    v.incomplete += p.incomplete;
    for (a, b) in v.unfinished.iter_mut().zip(p.unfinished) {
        *a += b;
    }
    v.trials_run += p.trials_run;
    v.timed_out += p.timed_out;
    let room = TIMED_OUT_NAMED.saturating_sub(v.timed_out_trials.len());
    v.timed_out_trials
        .extend(p.timed_out_trials.into_iter().take(room));
    v.with_retransmission += p.with_retransmission;
    v.with_server_retransmission += p.with_server_retransmission;
    v.with_loss += p.with_loss;
    v.episodes.merge(&p.episodes);
    v.observed.extend(p.observed);
}
