//! The counter table under the latency table, as data: sections of rows, each
//! section shown when its condition holds of the scenario and the run (loss probes
//! when a variant sent one, the corrective and proactive packets, sessions, fast
//! start and ECN when a variant used them, the queues' counters when a link manages
//! its queue, the policer's drops when a link polices). Variants in columns, as
//! many as fit in 100 columns, further ones in stacked tables.

use gentle_tcp::Counters;

use super::managed_queues;
use crate::runner::{RunResult, VariantResult};
use crate::scenario::Scenario;

/// A row: its label, and a variant's cell.
type Row = (&'static str, fn(&VariantResult) -> String);

/// Rows shown together, when `shown` holds.
struct Section {
    shown: fn(&Scenario, &RunResult) -> bool,
    rows: &'static [Row],
}

/// The sections, in the order they print.
const SECTIONS: &[Section] = &[
    Section {
        shown: |_, _| true,
        rows: EXCHANGES_AND_REPAIRS,
    },
    Section {
        shown: |_, run| any(run, |c| c.loss_probes > 0),
        rows: LOSS_PROBES,
    },
    Section {
        shown: |_, run| any(run, |c| unsent(c) > 0),
        rows: &[("  none sent", |v| {
            pct(unsent(&v.counters), v.counters.loss_probes)
        })],
    },
    Section {
        shown: |_, run| any(run, |c| c.corrective_sent + c.corrective_fallback > 0),
        rows: CORRECTIVE,
    },
    Section {
        shown: |scn, _| scn.workloads.iter().any(|w| w.backend.is_some()),
        rows: &[("backend retransmission rate", |v| {
            pct(v.backend.data_retrans_segs(), v.backend.data_segs_out)
        })],
    },
    Section {
        shown: |_, run| any(run, |c| c.proactive_copies + c.proactive_fallback > 0),
        rows: PROACTIVE,
    },
    Section {
        shown: |_, run| any(run, |c| c.session_joins > 0),
        rows: SESSIONS,
    },
    Section {
        shown: |_, run| any(run, |c| c.fast_start > 0),
        rows: FAST_START,
    },
    Section {
        shown: |_, run| any(run, |c| c.ecn_ce_received + c.ecn_reductions > 0),
        rows: ECN,
    },
    Section {
        shown: |_, _| true,
        rows: &[("packets dropped", |v| {
            let l = &v.links;
            (l.dropped_loss + l.dropped_queue + l.dropped_middlebox + l.dropped_policer).to_string()
        })],
    },
    Section {
        shown: |scn, _| policed(scn),
        rows: &[("  by the policer", |v| v.links.dropped_policer.to_string())],
    },
    Section {
        shown: |scn, _| managed_queues(scn),
        rows: MANAGED_QUEUES,
    },
];

/// Every run's rows: its exchanges, and the repairs by kind.
const EXCHANGES_AND_REPAIRS: &[Row] = &[
    ("exchanges", |v| v.exchanges.to_string()),
    ("  with a retransmission", |v| {
        v.with_retransmission.to_string()
    }),
    ("  with a packet lost", |v| v.with_loss.to_string()),
    ("  unfinished", |v| v.incomplete.to_string()),
    ("retransmitted segments", |v| {
        v.counters.retrans_segs.to_string()
    }),
    ("fast recovery events", |v| {
        v.counters.recovery_episodes.to_string()
    }),
    ("fast retransmits", |v| v.counters.fast_retrans.to_string()),
    ("  lost retransmits", |v| {
        v.counters.lost_retransmit.to_string()
    }),
    ("  early retransmits", |v| {
        v.counters.early_retrans.to_string()
    }),
    ("timeouts", |v| v.counters.timeouts.to_string()),
    ("  in Open", |v| v.counters.timeouts_open.to_string()),
    ("  in Disorder", |v| {
        v.counters.timeouts_disorder.to_string()
    }),
    ("  in Recovery", |v| {
        v.counters.timeouts_recovery.to_string()
    }),
    ("  exp. back-off (in Loss)", |v| {
        v.counters.timeouts_loss.to_string()
    }),
    ("slow-start retransmits", |v| {
        v.counters.slow_start_retrans.to_string()
    }),
    ("SYN retransmits", |v| v.counters.syn_retrans.to_string()),
    ("undo events", |v| v.counters.undos().to_string()),
];

/// Every probe in exactly one row: new data, or the last segment again (its episode
/// judged repaired, unnecessary, or never judged), or none sent (the timer fired
/// with nothing left to probe: the section after this one).
const LOSS_PROBES: &[Row] = &[
    ("loss probes", |v| v.counters.loss_probes.to_string()),
    ("  of data segments sent", |v| {
        pct(v.counters.loss_probes, v.counters.data_segs_out)
    }),
    ("  new data", |v| {
        pct(v.counters.loss_probes_new, v.counters.loss_probes)
    }),
    ("  last segment again", |v| {
        pct(v.counters.loss_probes_retrans, v.counters.loss_probes)
    }),
    ("    plugged the only hole", |v| {
        pct(v.counters.loss_probes_repaired, v.counters.loss_probes)
    }),
    ("    unnecessary", |v| {
        pct(v.counters.loss_probes_unnecessary, v.counters.loss_probes)
    }),
    ("    never judged", |v| {
        pct(unjudged(&v.counters), v.counters.loss_probes)
    }),
];

const CORRECTIVE: &[Row] = &[
    ("Corrective packets", |v| {
        v.counters.corrective_sent.to_string()
    }),
    ("  overhead (bytes)", |v| {
        one_decimal_pct(v.counters.corrective_overhead_pct())
    }),
    ("  losses rebuilt", |v| {
        v.counters.corrective_recovered.to_string()
    }),
    ("  R_FAIL reports", |v| {
        v.counters.corrective_failed.to_string()
    }),
    ("  cwnd reductions (R_SUCC)", |v| {
        v.counters.corrective_cwr.to_string()
    }),
    ("  fallbacks (middlebox)", |v| {
        v.counters.corrective_fallback.to_string()
    }),
];

const PROACTIVE: &[Row] = &[
    ("Proactive copies", |v| {
        v.counters.proactive_copies.to_string()
    }),
    ("  overhead (bytes)", |v| {
        one_decimal_pct(v.counters.proactive_overhead_pct())
    }),
    ("  losses repaired", |v| {
        v.counters.proactive_repairs.to_string()
    }),
    ("  discarded by the filter", |v| {
        v.counters.proactive_discarded.to_string()
    }),
    ("  fallbacks (middlebox)", |v| {
        v.counters.proactive_fallback.to_string()
    }),
];

const SESSIONS: &[Row] = &[
    ("session joins", |v| v.counters.session_joins.to_string()),
    ("  segments sent", |v| v.counters.session_segs.to_string()),
    ("  losses found", |v| {
        v.counters.session_loss_detected.to_string()
    }),
    ("    with later ACKs", |v| {
        v.counters.session_later_ack_recoveries.to_string()
    }),
    ("  window halvings", |v| {
        v.counters.session_reductions.to_string()
    }),
    ("  session timeouts", |v| {
        v.counters.session_timeouts.to_string()
    }),
];

const FAST_START: &[Row] = &[
    ("fast starts", |v| v.counters.fast_start.to_string()),
    ("  segments marked", |v| {
        v.counters.fast_start_segs.to_string()
    }),
    ("  reset (reset timer)", |v| {
        v.counters.fast_start_resets.to_string()
    }),
    ("  aborted (partial ACK)", |v| {
        v.counters.fast_start_aborts.to_string()
    }),
];

const ECN: &[Row] = &[
    ("ECN: CE received", |v| {
        v.counters.ecn_ce_received.to_string()
    }),
    ("  cwnd reductions (ECE)", |v| {
        v.counters.ecn_reductions.to_string()
    }),
];

const MANAGED_QUEUES: &[Row] = &[
    ("  by RED", |v| v.links.dropped_red.to_string()),
    ("  low priority (fast start)", |v| {
        v.links.dropped_queue_low.to_string()
    }),
    ("ECN marks (CE)", |v| v.links.ecn_marked.to_string()),
];

/// Whether a link direction of `scn` has a token-bucket policer.
fn policed(scn: &Scenario) -> bool {
    scn.links
        .iter()
        .any(|l| l.a_to_b.spec.policer.is_some() || l.b_to_a.spec.policer.is_some())
}

/// Whether the counters of some variant of `run` satisfy `f`.
fn any(run: &RunResult, f: fn(&Counters) -> bool) -> bool {
    run.variants.iter().any(|v| f(&v.counters))
}

/// `n` as a share of `d` with two decimals, or `-` when `d` is 0.
fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "-".to_string()
    } else {
        format!("{:.2}%", 100.0 * n as f64 / d as f64)
    }
}

/// A share in % with one decimal, or `-`.
fn one_decimal_pct(p: Option<f64>) -> String {
    p.map_or("-".to_string(), |p| format!("{p:.1}%"))
}

/// Probes that sent the last segment again and whose episode was never judged.
fn unjudged(c: &Counters) -> u64 {
    c.loss_probes_retrans
        .saturating_sub(c.loss_probes_repaired + c.loss_probes_unnecessary)
}

/// Probes whose timer fired with nothing left to send.
fn unsent(c: &Counters) -> u64 {
    c.loss_probes
        .saturating_sub(c.loss_probes_new + c.loss_probes_retrans)
}

/// The counter tables of `run`: a blank line, the variants' names, then the rows
/// of every section shown.
pub(super) fn tables(scn: &Scenario, run: &RunResult) -> String {
    let cw = run
        .variants
        .iter()
        .map(|v| v.name.chars().count() + 2)
        .max()
        .unwrap_or(14)
        .max(14);
    let per = ((100 - 28) / cw).max(1);
    let rows: Vec<&Row> = SECTIONS
        .iter()
        .filter(|s| (s.shown)(scn, run))
        .flat_map(|s| s.rows)
        .collect();
    let all: Vec<&VariantResult> = run.variants.iter().collect();
    let mut out = String::new();
    for group in all.chunks(per) {
        let line = |label: &str, cell: &dyn Fn(&VariantResult) -> String| {
            format!(
                "{:<28}{}\n",
                label,
                group
                    .iter()
                    .map(|v| format!("{:>cw$}", cell(v)))
                    .collect::<String>()
            )
        };
        out += "\n";
        out += &line("", &|v| v.name.clone());
        for (label, cell) in &rows {
            out += &line(label, cell);
        }
    }
    out
}
