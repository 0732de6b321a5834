//! `reactive-table1`: `gentle-aggression-sigcomm13.txt` §4, Table 1. A response of
//! ten segments loses its tail in the patterns AAAL, AALL, ALLL, LLLL and five lost
//! (A = delivered, L = lost, for the last four segments). Without the tail loss probe
//! every pattern ends in a retransmission timeout; with *Reactive* (the paper's
//! probe, basic loss detection, and the Early Retransmit variant of footnote 5) none
//! does, and the mechanism that recovers is the one the table names.
//!
//! A second response follows on the same connection a second later, so that the
//! probe's loss-detection episode can end (it ends on an ACK above the probe).
//!
//! Where gentle differs from the table: by the time the probe's ACK returns, the
//! first lost segment has been outstanding longer than the RTO, and Linux's FACK
//! ("Trick #3", `tcp_head_timedout`, checked before early retransmit in
//! `tcp_time_to_recover`) starts recovery first and marks every timed-out segment
//! lost. The probe still turns the RTO into fast recovery, which is the point of
//! the table; the report names the rule that fired.

use serde::Serialize;

use crate::runner;
use crate::scenario::Scenario;

/// The patterns of Table 1 and the segments (of 10) each drops.
pub const PATTERNS: &[(&str, &[u32], &str)] = &[
    ("AAAL", &[10], "Reactive loss detection"),
    ("AALL", &[9, 10], "early retransmit"),
    ("ALLL", &[8, 9, 10], "early retransmit"),
    ("LLLL", &[7, 8, 9, 10], "FACK fast recovery"),
    ("≥5 L", &[6, 7, 8, 9, 10], "FACK fast recovery"),
];

/// What recovered the tail in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub mechanism: String,
    pub timeouts: u64,
    /// Server-side time of the first response, ms.
    pub response_ms: f64,
    pub probes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub pattern: String,
    pub paper: String,
    pub without: Outcome,
    pub reactive: Outcome,
}

/// The scenario of one pattern: the dropped segments of the first response.
pub fn scenario(drops: &[u32]) -> Scenario {
    let list: Vec<String> = drops.iter().map(|d| d.to_string()).collect();
    let text = format!(
        r#"
name = "reactive-table1"
seed = 1
trials = 1
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "50ms"
queue = "100pkt"
a_to_b = {{ loss = {{ model = "drop-list", segments = [{}] }} }}
[[workload]]
client = "client"
server = "server"
request = "100B"
response = "14480B"
exchanges = 2
connection = "persistent"
think = "1s"
[[variant]]
name = "without TLP"
profile = "linux-3.10"
tlp = "off"
[[variant]]
name = "Reactive"
profile = "linux-3.10"
tlp_flavour = "draft-2013"
tlp_detection = "basic"
"#,
        list.join(", ")
    );
    Scenario::parse("<reactive-table1>", &text).expect("valid built-in scenario")
}

fn outcome(scn: &Scenario, v: usize) -> Outcome {
    let r = runner::run_trial(scn, &scn.variants[v], scn.seed, 0);
    let c = r.counters;
    let mechanism = if c.timeouts > 0 {
        "RTO"
    } else if c.early_retrans > 0 {
        "early retransmit"
    } else if c.head_timeout_recovery > 0 {
        "FACK, head timed out"
    } else if c.recovery_episodes > 0 {
        "FACK fast recovery"
    } else if c.loss_probe_recovery > 0 {
        "Reactive loss detection"
    } else {
        "none"
    };
    let first = r.exchanges.iter().find(|e| e.index == 0);
    Outcome {
        mechanism: mechanism.to_string(),
        timeouts: c.timeouts,
        response_ms: first
            .and_then(|e| e.server_ns)
            .map_or(f64::NAN, |x| x as f64 / 1e6),
        probes: c.loss_probes,
    }
}

pub fn run() -> Vec<Row> {
    PATTERNS
        .iter()
        .map(|&(pattern, drops, paper)| {
            let scn = scenario(drops);
            Row {
                pattern: pattern.to_string(),
                paper: paper.to_string(),
                without: outcome(&scn, 0),
                reactive: outcome(&scn, 1),
            }
        })
        .collect()
}

pub fn text(rows: &[Row]) -> String {
    let mut s = String::from(
        "reactive-table1 — tail losses of a 10-segment response, 100 ms RTT (gentle-aggression Table 1)\n",
    );
    s += &format!(
        "{:<8}{:<26}{:<26}{:>10}{:>12}{:>14}\n",
        "pattern", "paper", "Reactive", "RTOs", "time (ms)", "without TLP"
    );
    for r in rows {
        s += &format!(
            "{:<8}{:<26}{:<26}{:>10}{:>12.0}{:>14}\n",
            r.pattern,
            r.paper,
            r.reactive.mechanism,
            r.reactive.timeouts,
            r.reactive.response_ms,
            format!("{} {:.0}", r.without.mechanism, r.without.response_ms)
        );
    }
    s
}
