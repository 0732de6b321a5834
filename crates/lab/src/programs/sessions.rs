//! The TCP session experiments of `fast-start-and-sessions.txt` §6.3:
//!
//! - `sessions-fig8`: a "Web page" of four concurrent 10 KB transfers per
//!   source–sink pair, 1 to 12 pairs, as independent connections (indep), one
//!   persistent connection (phttp) and one TCP session (session): the page time
//!   with its standard error, and the bottleneck's packet-loss rate (Figure 8).
//! - `sessions-bulk`: long bulk transfers, a four-connection host against three
//!   one-connection hosts: each host's throughput, Jain's fairness index between
//!   hosts, and the loss rate, independent against one session per host pair.
//!
//! The scenarios are files under `examples/`; this file holds the tables and the
//! figure.

use std::path::Path;

use serde::Serialize;

use super::Builtin;
use super::fast_start::Mean;
use crate::plot::{self, Panel, Series};
use crate::runner::VariantResult;

pub const FIG8: Builtin = Builtin {
    path: "examples/sessions-fig8.toml",
    text: include_str!("../../../../examples/sessions-fig8.toml"),
};
pub const BULK: Builtin = Builtin {
    path: "examples/sessions-bulk.toml",
    text: include_str!("../../../../examples/sessions-bulk.toml"),
};

/// The configurations of Figure 8, in the order of the table.
pub const CONFIGS: [&str; 3] = ["indep", "phttp", "session"];

/// The bottleneck's direction towards the sinks, as the scenarios name it.
const BOTTLENECK: (&str, &str) = ("r1", "r2");

/// Packets the bottleneck dropped of those offered to it, %.
fn loss_pct(v: &VariantResult) -> f64 {
    let s = v
        .per_link
        .iter()
        .filter(|l| (&*l.from, &*l.to) == BOTTLENECK)
        .fold((0u64, 0u64), |(d, o), l| {
            (
                d + l.stats.dropped_queue + l.stats.dropped_loss,
                o + l.stats.offered,
            )
        });
    if s.1 == 0 {
        0.0
    } else {
        100.0 * s.0 as f64 / s.1 as f64
    }
}

/// One configuration at one number of pairs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    pub config: String,
    /// Page time, s.
    pub page: Mean,
    /// Bottleneck loss rate, %.
    pub loss_pct: f64,
    /// Losses the sessions found by later ACKs of other connections, and timeouts.
    pub later_ack_recoveries: u64,
    pub timeouts: u64,
}

/// One number of pairs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fig8Point {
    pub pairs: u32,
    pub cells: Vec<Cell>,
}

impl Fig8Point {
    pub fn cell(&self, config: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.config == config)
    }
}

/// Runs Figure 8's sweep.
pub fn run_fig8(quick: bool) -> Vec<Fig8Point> {
    let mut pts: Vec<Fig8Point> = Vec::new();
    super::run_points(&FIG8.sweep(), quick, true, |p, r| {
        let pairs = p.at("pairs").and_then(|x| x.parse().ok()).unwrap_or(0);
        let config = p.at("config").unwrap_or("").to_string();
        let Some(v) = r.variants.first() else { return };
        let (mut xs, mut unfinished) = (Vec::new(), 0);
        for pg in &v.pages {
            match pg.load_ns {
                Some(ns) if pg.complete => xs.push(ns as f64 / 1e9),
                _ => unfinished += 1,
            }
        }
        let cell = Cell {
            config,
            page: Mean::of_secs(&xs, unfinished),
            loss_pct: loss_pct(v),
            later_ack_recoveries: v.counters.session_later_ack_recoveries,
            timeouts: v.counters.timeouts,
        };
        match pts.iter_mut().find(|q| q.pairs == pairs) {
            Some(q) => q.cells.push(cell),
            None => pts.push(Fig8Point {
                pairs,
                cells: vec![cell],
            }),
        }
    });
    pts.sort_by_key(|p| p.pairs);
    pts
}

/// Session's change from `other`'s mean page time, %.
pub fn gain_pct(p: &Fig8Point, other: &str) -> f64 {
    match (p.cell("session"), p.cell(other)) {
        (Some(s), Some(o)) => 100.0 * (s.page.mean_s - o.page.mean_s) / o.page.mean_s,
        _ => f64::NAN,
    }
}

pub fn fig8_text(pts: &[Fig8Point]) -> String {
    let mut s = String::from(
        "sessions-fig8 — a Web page of 4 × 10 KB per source–sink pair over a 1.5 Mbit/s, 50 ms bottleneck with 20 packets of buffer (fast-start-and-sessions Figure 8; the paper: beyond 6 pairs session 60–68% faster than indep, 20–25% faster than phttp at moderate load; indep's loss rate 30–40% higher than session's)\n",
    );
    s += "page time, s: mean (standard error); loss: the bottleneck's drop rate; Δ: session's page time against indep's and phttp's (negative: session is faster)\n";
    s += &format!("{:<6}", "pairs");
    for c in CONFIGS {
        s += &format!("{c:>14}");
    }
    for c in CONFIGS {
        s += &format!("{:>13}", format!("loss {c}"));
    }
    s += &format!("{:>10}{:>10}\n", "Δ indep", "Δ phttp");
    for p in pts {
        s += &format!("{:<6}", p.pairs);
        for c in CONFIGS {
            s += &format!("{:>14}", p.cell(c).map_or("-".into(), |c| c.page.show()));
        }
        for c in CONFIGS {
            s += &format!(
                "{:>13}",
                p.cell(c)
                    .map_or("-".into(), |c| format!("{:.1}%", c.loss_pct))
            );
        }
        // Rounded first, so that a change smaller than 0.5% shows as 0%, not -0%.
        let pct = |x: f64| x.round() + 0.0;
        s += &format!(
            "{:>9.0}%{:>9.0}%\n",
            pct(gain_pct(p, "indep")),
            pct(gain_pct(p, "phttp"))
        );
    }
    s
}

/// Figure 8: page time against pairs, with standard errors, as
/// `dir/sessions-fig8.{png,svg}`.
pub fn fig8_plot(dir: &Path, pts: &[Fig8Point]) -> Result<(), String> {
    let series = CONFIGS
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            label: name.to_string(),
            colour: i,
            points: pts
                .iter()
                .filter_map(|p| {
                    let m = &p.cell(name)?.page;
                    (m.n > 0).then_some((p.pairs as f64, m.mean_s, m.stderr_s))
                })
                .collect(),
        })
        .collect();
    let x_max = pts.iter().map(|p| p.pairs).max().unwrap_or(1) as f64;
    plot::error_bars(
        &dir.join("sessions-fig8"),
        "sessions-fig8 — a Web page of 4 × 10 KB per source–sink pair",
        (0.5, x_max + 0.5),
        &[Panel {
            caption: String::new(),
            x_desc: "source–sink pairs".into(),
            y_desc: "page transfer time (s)".into(),
            series,
        }],
        500,
    )
}

/// One variant of the bulk experiment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BulkRow {
    pub variant: String,
    /// Mean throughput per host, kbit/s: the four-connection host first.
    pub hosts_kbps: Vec<(String, f64)>,
    /// Jain's fairness index over the hosts' throughputs.
    pub jain: f64,
    /// The bottleneck's loss rate, %.
    pub loss_pct: f64,
}

/// Jain's fairness index, (Σx)² / (n·Σx²).
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

pub fn run_bulk(quick: bool) -> Vec<BulkRow> {
    let scn = crate::scenario::Scenario::parse(BULK.path, BULK.text)
        .expect("built-in scenarios are valid");
    let trials = if quick { scn.quick_trials } else { scn.trials };
    let r = super::run_scenario(&scn, trials, false);
    let secs = scn.time_limit.as_secs_f64() * trials as f64;
    r.variants
        .iter()
        .map(|v| {
            // A host's throughput: what its access link towards the bottleneck
            // carried (payload and headers), over the run.
            let hosts_kbps: Vec<(String, f64)> = v
                .per_link
                .iter()
                .filter(|l| &*l.to == BOTTLENECK.0 && &*l.from != BOTTLENECK.1)
                .map(|l| {
                    (
                        l.from.to_string(),
                        l.stats.bytes_delivered as f64 * 8.0 / secs / 1e3,
                    )
                })
                .collect();
            let xs: Vec<f64> = hosts_kbps.iter().map(|h| h.1).collect();
            BulkRow {
                variant: v.name.clone(),
                jain: jain(&xs),
                hosts_kbps,
                loss_pct: loss_pct(v),
            }
        })
        .collect()
}

pub fn bulk_text(rows: &[BulkRow]) -> String {
    let mut s = String::from(
        "sessions-bulk — 60 s of bulk transfers through a 1.5 Mbit/s, 50 ms bottleneck: one host with 4 connections, three with 1 (fast-start-and-sessions §6.3; the paper: indep's loss rate over 3× session's, and integrated congestion control restores fairness)\n",
    );
    s += "throughput per host, kbit/s (at its access link); Jain's index between hosts; the bottleneck's loss rate\n";
    let hosts: Vec<&str> = rows
        .first()
        .map(|r| r.hosts_kbps.iter().map(|h| h.0.as_str()).collect())
        .unwrap_or_default();
    s += &format!("{:<10}", "");
    for h in &hosts {
        s += &format!("{h:>10}");
    }
    s += &format!("{:>8}{:>8}\n", "Jain", "loss");
    for r in rows {
        s += &format!("{:<10}", r.variant);
        for h in &r.hosts_kbps {
            s += &format!("{:>10.0}", h.1);
        }
        s += &format!("{:>8.3}{:>7.1}%\n", r.jain, r.loss_pct);
    }
    s
}
