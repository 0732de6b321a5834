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
//!
//! The scenario and its patterns are `examples/reactive-table1.toml`; this file holds
//! the paper's column and the table's layout.

use serde::Serialize;

use super::Builtin;
use crate::runner::VariantResult;

/// The experiment: one point per pattern of Table 1.
pub const FILE: Builtin = Builtin {
    path: "examples/reactive-table1.toml",
    text: include_str!("../../../../examples/reactive-table1.toml"),
};

/// The mechanism Table 1 names for each pattern.
pub const PAPER: &[(&str, &str)] = &[
    ("AAAL", "Reactive loss detection"),
    ("AALL", "early retransmit"),
    ("ALLL", "early retransmit"),
    ("LLLL", "FACK fast recovery"),
    ("≥5 L", "FACK fast recovery"),
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

/// Server-side time of a trial's first response, ms (its one trial's records).
pub fn first_response_ms(v: &VariantResult) -> f64 {
    v.records
        .iter()
        .find(|e| e.index == 0)
        .and_then(|e| e.server_ns)
        .map_or(f64::NAN, |x| x as f64 / 1e6)
}

fn outcome(v: &VariantResult) -> Outcome {
    let c = &v.counters;
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
    Outcome {
        mechanism: mechanism.to_string(),
        timeouts: c.timeouts,
        response_ms: first_response_ms(v),
        probes: c.loss_probes,
    }
}

pub fn run() -> Vec<Row> {
    let mut rows = Vec::new();
    super::run_points(&FILE.sweep(), false, true, |p, r| {
        let pattern = p.at("pattern").expect("a pattern axis");
        let paper = PAPER.iter().find(|x| x.0 == pattern).map_or("", |x| x.1);
        rows.push(Row {
            pattern: pattern.to_string(),
            paper: paper.to_string(),
            without: outcome(&r.variants[0]),
            reactive: outcome(&r.variants[1]),
        });
    });
    rows
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
