//! `analyze-accuracy`: how well `gentle analyze` tells why a segment was retransmitted,
//! against the engine's own account. Every trial of `examples/analyze-corpus.toml`
//! (Web responses on a lossy, slightly reordering path, one variant per profile and
//! loss-recovery mechanism) is captured at the server as `--pcap` would write it,
//! and the engine's trace names the cause of each retransmission (`fast`, `early`,
//! `timeout`, `slow-start`, `probe`). The capture is analysed as a file would be, and
//! the inferred cause of each retransmitted packet is put next to the truth: a
//! confusion matrix per variant.

use std::fmt::Write as _;
use std::sync::Arc;

use gentle_analyze::{Analyzer, Cause, Options};
use gentle_sim::observe::{Observer, PacketEvent, PacketView};
use gentle_sim::{Capture, rng};
use gentle_tcp::{Event, Instant, RetransKind};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::Builtin;
use crate::scenario::{Scenario, Variant};

pub const FILE: Builtin = Builtin {
    path: "examples/analyze-corpus.toml",
    text: include_str!("../../../../examples/analyze-corpus.toml"),
};

/// The raw-IP link type of gentle's pcaps (`LINKTYPE_RAW`).
const LINKTYPE_RAW: i32 = 101;

/// (time ns, server port, client port, sequence number relative to the ISN).
type Key = (u64, u16, u16, u64);

/// The truth of one trial: the capture, and the cause of every retransmission the
/// capture node sent.
struct Truth {
    node: String,
    capture: Capture,
    /// Packets the node sent at the current time, whose engine events (reported
    /// after them) may name them retransmissions: (time, relative seq, ports).
    sent: Vec<(Instant, u64, u16, u16)>,
    causes: FxHashMap<Key, Cause>,
}

fn cause_of(k: RetransKind) -> Cause {
    match k {
        RetransKind::Fast => Cause::Fast,
        RetransKind::Early => Cause::Early,
        RetransKind::Timeout => Cause::Timeout,
        RetransKind::SlowStart => Cause::SlowStart,
        RetransKind::Probe => Cause::Probe,
    }
}

impl Observer for Truth {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        self.capture.on_packet(ev, p);
        if ev != PacketEvent::Send || *p.nodes[p.node as usize] != *self.node {
            return;
        }
        let Some((iss, _)) = p.isn else {
            return;
        };
        let rel = p.seg.seq.wrapping_sub(iss) as u64;
        self.sent.retain(|&(t, ..)| t == p.t);
        self.sent.push((p.t, rel, p.seg.src_port, p.seg.dst_port));
    }

    fn on_engine(&mut self, t: Instant, node: u16, _conn: u32, ev: &Event, nodes: &[Arc<str>]) {
        if *nodes[node as usize] != *self.node {
            return;
        }
        if let Event::Retransmit { seq, kind, .. } = ev
            && let Some(&(_, _, sp, dp)) =
                self.sent.iter().find(|&&(ts, s, ..)| ts == t && s == *seq)
        {
            self.causes
                .insert((t.as_nanos(), sp, dp, *seq), cause_of(*kind));
        }
    }

    fn wants_engine_events(&self) -> bool {
        true
    }
}

/// Inferred causes (and "not seen as a retransmission") by true cause.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Matrix {
    pub variant: String,
    /// `cells[truth][inferred]`, inferred index 5 = not recognised.
    pub cells: [[u64; 6]; 5],
    /// Retransmissions inferred where the engine sent none.
    pub false_alarms: u64,
}

impl Matrix {
    pub fn total(&self) -> u64 {
        self.cells.iter().flatten().sum()
    }
    pub fn correct(&self) -> u64 {
        (0..5).map(|i| self.cells[i][i]).sum()
    }
    /// Correct over all true retransmissions, %.
    pub fn accuracy(&self) -> f64 {
        let t = self.total();
        if t == 0 {
            100.0
        } else {
            100.0 * self.correct() as f64 / t as f64
        }
    }
}

fn idx(c: Cause) -> usize {
    Cause::ALL
        .iter()
        .position(|&x| x == c)
        .expect("every cause listed")
}

/// A trial's capture and the true cause of each retransmission in it.
type TrialTruth = (Vec<(u64, Vec<u8>)>, FxHashMap<Key, Cause>);

/// One trial, simulated with the truth observer.
fn simulate(scn: &Scenario, v: &Variant, trial: u64) -> TrialTruth {
    let ts = rng::trial_seed(scn.seed, trial);
    let setup = scn.setup(v, ts);
    let node = scn.capture_node();
    let mut truth = Truth {
        node: node.clone(),
        capture: Capture::new(node),
        sent: Vec::new(),
        causes: FxHashMap::default(),
    };
    gentle_sim::Sim::new(&setup, trial, ts)
        .expect("scenario validated")
        .with_observer(&mut truth)
        .run();
    (truth.capture.frames, truth.causes)
}

/// Trials follow each other in the capture this far apart (longer than any trial).
const TRIAL_SPACING_NS: u64 = 10_000 * 1_000_000_000;
/// Trials simulated at once before their captures are analysed in order.
const WAVE: u64 = 64;

/// One variant: its trials as one server-side capture, as a frontend's would be,
/// every trial's client a host of its own; the inferred causes against the truth.
fn evaluate(scn: &Scenario, v: &Variant, trials: u64) -> Matrix {
    let mut a = Analyzer::new(Options {
        keep_retransmissions: true,
        no_fack: false,
        ..Options::default()
    });
    // The capture node's address: the one every frame of the first trial shares.
    let mut server: Option<std::net::IpAddr> = None;
    let mut truth: FxHashMap<Key, Cause> = FxHashMap::default();
    let mut record = 0u64;
    for w in 0..trials.div_ceil(WAVE) {
        let ks: Vec<u64> = (w * WAVE..((w + 1) * WAVE).min(trials)).collect();
        let runs: Vec<TrialTruth> = ks.par_iter().map(|&k| simulate(scn, v, k)).collect();
        for (k, (frames, causes)) in ks.into_iter().zip(runs) {
            let base = k * TRIAL_SPACING_NS;
            let client =
                std::net::IpAddr::from([10, 128 + (k >> 16) as u8, (k >> 8) as u8, k as u8]);
            for (key, c) in causes {
                truth.insert((key.0 + base, key.1, key.2, key.3), c);
            }
            for (t, f) in &frames {
                record += 1;
                let gentle_analyze::decode::Decoded::Tcp(mut seg, payload) =
                    gentle_analyze::decode::decode(LINKTYPE_RAW, t + base, f)
                else {
                    continue;
                };
                let server = *server.get_or_insert_with(|| {
                    use gentle_analyze::decode::flags::{ACK, SYN};
                    if seg.has(SYN) && !seg.has(ACK) {
                        seg.dst
                    } else {
                        seg.src
                    }
                });
                if seg.src != server {
                    seg.src = client;
                }
                if seg.dst != server {
                    seg.dst = client;
                }
                a.segment(record, &seg, payload, &mut |_| {});
            }
        }
    }
    let analysis = a.finish();
    let mut inferred: FxHashMap<Key, Cause> = FxHashMap::default();
    for f in &analysis.flows {
        for r in &f.retransmission_log {
            inferred.insert((r.t_ns, f.ports.0, f.ports.1, r.rel_seq()), r.cause);
        }
    }
    let mut m = Matrix {
        variant: v.name.clone(),
        ..Matrix::default()
    };
    for (k, &c) in &truth {
        let j = inferred.get(k).map_or(5, |&x| idx(x));
        m.cells[idx(c)][j] += 1;
        if std::env::var_os("GENTLE_ACCURACY_DEBUG").is_some() && j != idx(c) {
            eprintln!(
                "{}: trial {} t={:.6}s port {} seq {}: truth {} inferred {}",
                v.name,
                k.0 / TRIAL_SPACING_NS,
                (k.0 % TRIAL_SPACING_NS) as f64 / 1e9,
                k.2,
                k.3,
                c.name(),
                inferred.get(k).map_or("-", |x| x.name())
            );
        }
    }
    m.false_alarms = inferred.keys().filter(|k| !truth.contains_key(k)).count() as u64;
    m
}

/// The confusion matrix of every variant over `trials` trials.
pub fn run(trials: u64) -> Vec<Matrix> {
    let scn = FILE.sweep().points.remove(0).scenario;
    scn.variants
        .iter()
        .map(|v| evaluate(&scn, v, trials))
        .collect()
}

/// The matrices as text.
pub fn text(ms: &[Matrix], trials: u64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "analyze-accuracy: retransmission causes inferred from server-side captures against the engine's trace\n({trials} trials per variant of examples/analyze-corpus.toml; rows: truth, columns: inferred)\n"
    );
    let heads = ["fast", "early", "timeout", "slow-st", "probe", "missed"];
    for m in ms {
        let _ = writeln!(
            s,
            "{}: {} of {} correct ({:.2}%), {} false alarms",
            m.variant,
            m.correct(),
            m.total(),
            m.accuracy(),
            m.false_alarms
        );
        let _ = write!(s, "  {:<11}", "truth");
        for h in heads {
            let _ = write!(s, "{h:>9}");
        }
        s.push('\n');
        for (i, c) in Cause::ALL.iter().enumerate() {
            if m.cells[i].iter().sum::<u64>() == 0 {
                continue;
            }
            let _ = write!(s, "  {:<11}", c.name());
            for x in m.cells[i] {
                let _ = write!(s, "{x:>9}");
            }
            s.push('\n');
        }
        s.push('\n');
    }
    s
}
