//! `gentle bench`: simulated data packets per wall-clock second for one bulk
//! transfer (100 Mbit/s, 10 ms RTT), and short request/response trials per second
//! (40 B / 5000 B, 200 ms RTT, handshake included) on one core and on all cores, at
//! growing trial counts to show the cost per trial stays flat; and the engine alone:
//! the cost of one data segment through a sender and a receiver wired directly
//! together, without the simulator — also with Corrective on, whose encoder XORs
//! every byte sent; and `gentle analyze` reading a capture of over a million packets
//! on one core. Beside wall and CPU time, the instructions per data packet and per
//! trial as callgrind counts them ([`instructions`]), which do not depend on the
//! machine's load.

pub mod instructions;

use std::time::Instant as WallClock;

use bytes::Bytes;
use gentle_tcp::corrective::CorrectiveOption;
use gentle_tcp::{Config, Connection, Instant};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

use serde::Serialize;

use crate::runner::{self, RunOptions};
use crate::scenario::Scenario;

/// The scenarios, compiled in; errors cite their files.
const BULK: (&str, &str) = (
    "crates/lab/scenarios/bench-bulk.toml",
    include_str!("../../scenarios/bench-bulk.toml"),
);
const SHORT: (&str, &str) = (
    "crates/lab/scenarios/bench-short.toml",
    include_str!("../../scenarios/bench-short.toml"),
);

const FRONTEND: (&str, &str) = (
    "examples/analyze-frontend.toml",
    include_str!("../../../../examples/analyze-frontend.toml"),
);

/// The scenario with only variant `name`.
fn only(mut scn: Scenario, name: &str) -> Scenario {
    scn.variants.retain(|v| v.name == name);
    assert_eq!(scn.variants.len(), 1, "variant {name}");
    scn
}

/// Runs of the bulk transfer; the median is reported.
const BULK_RUNS: usize = 5;

#[derive(Clone, Debug, Serialize)]
pub struct Scaling {
    pub trials: u64,
    pub seconds: f64,
    /// CPU time of the thread that ran them.
    pub cpu_seconds: f64,
    pub trials_per_second: f64,
    pub ns_per_trial: f64,
    /// The process's peak resident memory once they have run (MiB): the same at
    /// every scaling point when memory does not grow with the number of trials.
    pub peak_rss_mib: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// Data packets simulated per wall-clock second, bulk transfer, one core.
    pub packets_per_second: f64,
    pub bulk_data_packets: u64,
    pub bulk_events: u64,
    pub bulk_seconds: f64,
    /// CPU time of the median run's thread.
    pub bulk_cpu_seconds: f64,
    /// Short trials per second on one core (largest scaling point).
    pub trials_per_second: f64,
    /// Short trials per second on all cores.
    pub trials_per_second_all_cores: f64,
    pub cores: usize,
    /// One-core cost per trial at growing trial counts.
    pub scaling: Vec<Scaling>,
    /// The engine alone: wall-clock nanoseconds per data segment, sender and
    /// receiver together (segment built, handled, acknowledged, ACK handled).
    pub engine_ns_per_segment: f64,
    pub engine_segments: u64,
    /// The same with Corrective on both ends (Corrective packets not counted).
    pub engine_corrective_ns_per_segment: f64,
    /// Short trials per second on one core with Corrective on (10,000 trials).
    pub corrective_trials_per_second: f64,
    /// `gentle analyze` on a capture file, one core.
    pub analyze: AnalyzeBench,
    /// Instructions per data packet and per trial (callgrind), or why they were
    /// not counted.
    pub instructions: Result<instructions::Instructions, String>,
    /// Real mode's forwarder (as root), or why it was not measured.
    pub forwarder: Result<gentle_real::forward_bench::ForwarderBench, String>,
}

/// `gentle analyze` reading a generated capture from a file.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyzeBench {
    pub packets: u64,
    pub bytes: u64,
    pub flows: u64,
    /// Median of three runs.
    pub seconds: f64,
    pub packets_per_second: f64,
    pub megabytes_per_second: f64,
}

/// Copies of the frontend example's first trial, this far apart in time.
const COPY_SPACING_NS: u64 = 1_000 * 1_000_000_000;

/// Writes a pcap of at least `packets` packets to `path`: the frontend example's
/// first trial (40 clients of one server) again and again, every copy 1000 s after
/// the last with clients of its own. Returns (packets, bytes).
pub fn big_capture(path: &std::path::Path, packets: u64) -> std::io::Result<(u64, u64)> {
    use std::io::Write;
    let scn = Scenario::parse(FRONTEND.0, FRONTEND.1).expect("valid");
    let observe = crate::runner::Observe {
        capture: Some(0),
        ..Default::default()
    };
    let (_, seen) = runner::run_trial_observed(&scn, &scn.variants[0], scn.seed, 0, &observe);
    let frames = seen.frames.expect("captured");
    let server = frames[0].1[16..20].to_vec(); // the first frame is a SYN to it
    let file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut w = crate::staging::pcap_writer(file)?;
    // The file's header, then a 16-byte header before every frame.
    let (mut n, mut bytes) = (0u64, 24u64);
    let mut copy = 0u64;
    while n < packets {
        for (t, f) in &frames {
            let mut f = f.clone();
            // The client's address: 11.c.c.x for copy c, keeping x.
            let at = if f[12..16] == server[..] { 16 } else { 12 };
            f[at] = 11;
            f[at + 1] = (copy >> 8) as u8;
            f[at + 2] = copy as u8;
            crate::staging::pcap_packet(&mut w, t + copy * COPY_SPACING_NS, &f)?;
            n += 1;
            bytes += 16 + f.len() as u64;
        }
        copy += 1;
    }
    w.into_writer().flush()?;
    Ok((n, bytes))
}

/// Analyses a capture of at least `packets` packets, written to a temporary file
/// first; the median of three runs.
pub fn analyze_speed(packets: u64) -> AnalyzeBench {
    // Removed when dropped, on a panic too.
    let file = tempfile::Builder::new()
        .prefix("gentle-bench-")
        .suffix(".pcap")
        .tempfile()
        .expect("a temporary capture");
    let path = file.path();
    let (n, bytes) = big_capture(path, packets).expect("a temporary capture");
    let mut runs: Vec<(f64, u64)> = (0..3)
        .map(|_| {
            let t0 = WallClock::now();
            let a = crate::analyze::analyze_file(path, Default::default())
                .unwrap_or_else(|f| panic!("{}", f.message));
            (t0.elapsed().as_secs_f64(), a.totals.flows)
        })
        .collect();
    drop(file);
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (seconds, flows) = runs[1];
    AnalyzeBench {
        packets: n,
        bytes,
        flows,
        seconds,
        packets_per_second: n as f64 / seconds,
        megabytes_per_second: bytes as f64 / seconds / 1e6,
    }
}

/// Moves `bytes` from one engine to another, handing segments across directly
/// with 20 µs of virtual time per round. Returns (data segments, wall seconds).
pub fn engine_transfer(bytes: usize, corrective: bool) -> (u64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let cfg = Config {
        corrective,
        ..Config::default()
    };
    let mut now = Instant::ZERO;
    let mut client = Connection::connect(cfg.clone(), now, 1000, 80, &mut rng);
    let syn = client.poll_transmit(now).expect("a SYN");
    let mut server = Connection::accept(cfg, now, &syn, &mut rng).expect("accepted");
    let payload = Bytes::from(vec![0x5a; bytes]);
    let t0 = WallClock::now();
    let mut segs = 0u64;
    let mut written = false;
    while server.bytes_acked() < bytes as u64 {
        while let Some(s) = server.poll_transmit(now) {
            segs += (!s.payload.is_empty() && !CorrectiveOption::is_encoded(&s)) as u64;
            client.handle_segment(now, &s);
        }
        while let Some(s) = client.poll_transmit(now) {
            server.handle_segment(now, &s);
        }
        while client.read().is_some() {}
        if !written && server.is_established() {
            server.write(payload.clone());
            written = true;
        }
        now = Instant::from_nanos(now.as_nanos() + 20_000);
        for c in [&mut server, &mut client] {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }
    (segs, t0.elapsed().as_secs_f64())
}

/// CPU time of the calling thread (the work of one core, whatever else runs).
fn thread_cpu() -> f64 {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
        .unwrap_or(f64::NAN)
}

/// Runs `trials` short trials one after another on this thread; returns the data
/// packets they sent.
pub(crate) fn short_trials(scn: &Scenario, trials: u64) -> u64 {
    let v = &scn.variants[0];
    let (mut exchanges, mut packets) = (0u64, 0u64);
    for k in 0..trials {
        let r = runner::run_trial(scn, v, 1, k);
        exchanges += r.exchanges.len() as u64;
        packets += r.data_packets;
    }
    assert_eq!(
        exchanges, trials,
        "every benchmark trial records one exchange"
    );
    packets
}

fn one_core(scn: &Scenario, trials: u64) -> Scaling {
    let (t0, c0) = (WallClock::now(), thread_cpu());
    short_trials(scn, trials);
    let s = t0.elapsed().as_secs_f64();
    Scaling {
        trials,
        seconds: s,
        cpu_seconds: thread_cpu() - c0,
        trials_per_second: trials as f64 / s,
        ns_per_trial: s * 1e9 / trials as f64,
        peak_rss_mib: peak_rss_mib(),
    }
}

/// The process's peak resident set size so far, MiB (`getrusage`'s `ru_maxrss`,
/// KiB on Linux); NaN if it cannot be read.
fn peak_rss_mib() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| u.max_rss() as f64 / 1024.0)
}

/// The bench's two scenarios: the bulk transfer and the short trials (first variant).
pub fn scenarios() -> (Scenario, Scenario) {
    let bulk = Scenario::parse(BULK.0, BULK.1).expect("valid");
    let short = Scenario::parse(SHORT.0, SHORT.1).expect("valid");
    (bulk, only(short, "linux-2.6"))
}

/// `gentle bench --work WORK`: the run callgrind counts; prints what it did as JSON.
pub fn run_work(work: instructions::Work) {
    let (bulk, short) = scenarios();
    // One trial first, uncounted: what a process sets up once (the payload pattern,
    // the allocator's first pages) is not the trials' cost.
    short_trials(&short, 1);
    let done = instructions::counted_work(&bulk, &short, work);
    println!("{}", serde_json::to_string(&done).expect("serialisable"));
}

pub fn run(full: bool) -> BenchResult {
    // Wall-clock time on a shared machine is noisy: the bulk figure is the median
    // of five identical runs.
    let bulk = Scenario::parse(BULK.0, BULK.1).expect("valid");
    let mut runs: Vec<(f64, f64, gentle_sim::record::TrialResult)> = (0..BULK_RUNS)
        .map(|_| {
            let (t0, c0) = (WallClock::now(), thread_cpu());
            let r = runner::run_trial(&bulk, &bulk.variants[0], 1, 0);
            (t0.elapsed().as_secs_f64(), thread_cpu() - c0, r)
        })
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (bulk_seconds, bulk_cpu_seconds, r) = runs.swap_remove(BULK_RUNS / 2);
    let short_both = Scenario::parse(SHORT.0, SHORT.1).expect("valid");
    let short = only(short_both.clone(), "linux-2.6");
    let mut counts = vec![1_000, 10_000, 100_000];
    if full {
        counts.extend([1_000_000, 10_000_000]);
    }
    let scaling: Vec<Scaling> = counts.iter().map(|&n| one_core(&short, n)).collect();
    let n_all = *counts.last().expect("non-empty");
    let t1 = WallClock::now();
    let run = runner::run(
        &short,
        &RunOptions {
            trials: n_all,
            seed: 1,
            keep_records: false,
            progress: false,
            observe: crate::runner::Observe::default(),
        },
    );
    let all = t1.elapsed().as_secs_f64();
    assert_eq!(run.variants[0].exchanges, n_all);
    let (engine_segments, engine_seconds) = engine_transfer(200 << 20, false);
    let (fec_segments, fec_seconds) = engine_transfer(200 << 20, true);
    let fec_short = only(short_both, "corrective");
    let fec_scaling = one_core(&fec_short, 10_000);
    BenchResult {
        packets_per_second: r.data_packets as f64 / bulk_seconds,
        bulk_data_packets: r.data_packets,
        bulk_events: r.events,
        bulk_seconds,
        bulk_cpu_seconds,
        trials_per_second: scaling.last().expect("non-empty").trials_per_second,
        trials_per_second_all_cores: n_all as f64 / all,
        cores: rayon::current_num_threads(),
        scaling,
        engine_ns_per_segment: engine_seconds * 1e9 / engine_segments as f64,
        engine_segments,
        engine_corrective_ns_per_segment: fec_seconds * 1e9 / fec_segments as f64,
        corrective_trials_per_second: fec_scaling.trials_per_second,
        analyze: analyze_speed(1_200_000),
        instructions: instructions::measure(),
        forwarder: gentle_real::forward_bench::run(FORWARDER_SECONDS),
    }
}

/// Length of each forwarder transfer, seconds.
const FORWARDER_SECONDS: f64 = 3.0;

pub fn text(r: &BenchResult) -> String {
    let mut s = format!(
        "bulk transfer, 100 Mbit/s, 10 ms RTT, one core, median of 5 runs:\n  {} data packets in {:.3} s = {:.0} packets/s ({:.3} CPU s = {:.0} packets per CPU s)\n",
        r.bulk_data_packets,
        r.bulk_seconds,
        r.packets_per_second,
        r.bulk_cpu_seconds,
        r.bulk_data_packets as f64 / r.bulk_cpu_seconds
    );
    s += &format!(
        "engine alone, sender + receiver: {:.0} ns per data segment ({} segments)\n",
        r.engine_ns_per_segment, r.engine_segments
    );
    s += &format!(
        "  with Corrective on both ends: {:.0} ns per data segment\n",
        r.engine_corrective_ns_per_segment
    );
    s += "short trials, 40 B / 5000 B, 200 ms RTT, with handshake (one core):\n";
    for x in &r.scaling {
        s += &format!(
            "  {:>9} trials: {:>8.3} s  {:>10.0} trials/s  {:>8.0} ns/trial  {:>10.0} trials per CPU s  peak RSS {:.1} MiB\n",
            x.trials,
            x.seconds,
            x.trials_per_second,
            x.ns_per_trial,
            x.trials as f64 / x.cpu_seconds,
            x.peak_rss_mib
        );
    }
    s += &format!(
        "  all {} cores: {:.0} trials/s (less than one core's when other work shares the machine)\n",
        r.cores, r.trials_per_second_all_cores
    );
    s += &format!(
        "  with Corrective, 10000 trials, one core: {:.0} trials/s\n",
        r.corrective_trials_per_second
    );
    let a = &r.analyze;
    s += &format!(
        "gentle analyze, one core, a {:.0} MB pcap ({} packets, {} flows), median of 3 runs:\n  {:.3} s = {:.0} packets/s, {:.0} MB/s\n",
        a.bytes as f64 / 1e6,
        a.packets,
        a.flows,
        a.seconds,
        a.packets_per_second,
        a.megabytes_per_second
    );
    s += &instructions_text(&r.instructions);
    match &r.forwarder {
        Err(why) => s += &format!("real mode's forwarder: not measured ({why})\n"),
        Ok(f) => {
            for (name, t) in [
                ("no rate limit, no delay", &f.unlimited),
                ("1 Gbit/s, 1 ms each way", &f.at_1gbit),
                ("100 Mbit/s, 10 ms each way", &f.at_100mbit),
            ] {
                s += &format!(
                    "real mode's forwarder, kernel TCP bulk transfer, {name}, {:.0} s:\n  goodput {:.0} Mbit/s; forwarder thread: {:.0} packets/s and {:.0} Mbit/s per CPU second ({} packets, {} full-size, {:.2} CPU s); one-way delay error p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs; TUN drops {}\n",
                    t.seconds,
                    t.goodput_mbit,
                    t.packets_per_cpu_second,
                    t.mbit_per_cpu_second,
                    t.packets,
                    t.full_packets,
                    t.forwarder_cpu_seconds,
                    t.delay_error.p50_us,
                    t.delay_error.p99_us,
                    t.delay_error.max_us,
                    t.tun_dropped
                );
            }
        }
    }
    s
}

/// The instruction counts as `gentle bench` prints them.
pub fn instructions_text(r: &Result<instructions::Instructions, String>) -> String {
    let i = match r {
        Err(why) => return format!("instructions: not counted ({why})\n"),
        Ok(i) => i,
    };
    let mut s = format!(
        "instructions (callgrind; the simulation only, one thread):\n  bulk transfer: {} for {} data packets = {:.0} per data packet\n",
        i.bulk.instructions, i.bulk.data_packets, i.bulk.per_unit
    );
    for c in &i.short {
        s += &format!(
            "  short trials: {} for {} trials = {:.0} per trial\n",
            c.instructions, c.trials, c.per_unit
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_scenarios_are_valid_and_measure_one_variant_each() {
        Scenario::parse(BULK.0, BULK.1).expect("valid");
        let short = Scenario::parse(SHORT.0, SHORT.1).expect("valid");
        for name in ["linux-2.6", "corrective"] {
            assert_eq!(only(short.clone(), name).variants[0].name, name);
        }
        let r = one_core(&only(short, "corrective"), 3);
        assert_eq!(r.trials, 3);
    }

    /// A scaling point reports the trials it ran, their rate and the process's
    /// peak memory, which is read (a number of MiB, not NaN) and does not grow
    /// from a few trials to a hundred times as many.
    #[test]
    fn a_scaling_point_reports_its_rate_and_peak_memory() {
        let (_, short) = scenarios();
        let few = one_core(&short, 10);
        let many = one_core(&short, 1000);
        assert_eq!((few.trials, many.trials), (10, 1000));
        assert!(many.trials_per_second > 0.0 && many.ns_per_trial > 0.0);
        assert!(few.peak_rss_mib > 1.0, "{}", few.peak_rss_mib);
        assert!(
            many.peak_rss_mib < few.peak_rss_mib + 8.0,
            "{few:?} {many:?}"
        );
    }
}

/// What `gentle bench` was asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct BenchArgs {
    /// `--json`: print JSON.
    pub json: bool,
    /// `--full`: also the scaling points of 10^6 and 10^7 trials.
    pub full: bool,
    /// `--instructions`: only the instruction counts (under callgrind).
    pub instructions: bool,
    /// `--work`: the run callgrind counts (what `--instructions` starts).
    pub work: Option<instructions::Work>,
}

/// `gentle bench`: the exit status (1 when the instructions could not be counted).
pub fn command(a: BenchArgs) -> u8 {
    if let Some(work) = a.work {
        run_work(work);
        return 0;
    }
    let print = |doc: String, text: String| {
        if a.json {
            println!("{doc}");
        } else {
            print!("{text}");
        }
    };
    if a.instructions {
        let r = instructions::measure();
        print(
            serde_json::to_string_pretty(&r).expect("serialisable"),
            instructions_text(&r),
        );
        return if r.is_ok() { 0 } else { 1 };
    }
    let r = run(a.full);
    print(
        serde_json::to_string_pretty(&r).expect("serialisable"),
        text(&r),
    );
    0
}
