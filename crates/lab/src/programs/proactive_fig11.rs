//! `proactive-fig11`: `gentle-aggression-sigcomm13.txt` §8.5, Figure 11 — the
//! reduction of the response time Proactive brings on the backend leg, against the
//! baseline's backend retransmission rate. The paper's mean reduction grows from 6%
//! to 20% over its week of measurements.
//!
//! The scenario and its loss axis are `examples/proactive-fig11.toml`; this file
//! holds the table's layout and the figure.

use std::path::Path;

use serde::Serialize;

use super::Builtin;
use crate::plot::{self, Panel, Series};
use crate::runner::VariantResult;

/// The experiment: one point per backend loss rate.
pub const FILE: Builtin = Builtin {
    path: "examples/proactive-fig11.toml",
    text: include_str!("../../../../examples/proactive-fig11.toml"),
};

/// One loss rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    pub loss: String,
    /// The baseline's backend retransmission rate, %.
    pub baseline_retrans_pct: f64,
    /// Proactive's, %.
    pub proactive_retrans_pct: f64,
    /// Mean response time of the baseline and Proactive, ms.
    pub baseline_mean_ms: f64,
    pub proactive_mean_ms: f64,
    /// Reductions of the mean and the 99th percentile, % (positive: faster).
    pub mean_reduction_pct: f64,
    pub p99_reduction_pct: f64,
}

/// The backend connections' data retransmission rate: the pool's handshakes stand
/// for connections the paper's frontends keep open.
fn retrans_pct(v: &VariantResult) -> f64 {
    100.0 * v.backend.data_retrans_segs() as f64 / v.backend.data_segs_out.max(1) as f64
}

pub fn run(quick: bool) -> Vec<Point> {
    let mut pts = Vec::new();
    super::run_points(&FILE.sweep(), quick, false, |p, r| {
        let (b, x) = (&r.variants[0], &r.variants[1]);
        let red = |a: f64, b: f64| 100.0 * (a - b) / a;
        pts.push(Point {
            loss: p.at("loss").unwrap_or("").to_string(),
            baseline_retrans_pct: retrans_pct(b),
            proactive_retrans_pct: retrans_pct(x),
            baseline_mean_ms: b.latencies.mean() / 1e6,
            proactive_mean_ms: x.latencies.mean() / 1e6,
            mean_reduction_pct: red(b.latencies.mean(), x.latencies.mean()),
            p99_reduction_pct: red(b.latencies.quantile(0.99), x.latencies.quantile(0.99)),
        });
    });
    pts
}

pub fn text(pts: &[Point]) -> String {
    let mut s = String::from(
        "proactive-fig11 — Proactive on the backend leg: RT reduction against the baseline's backend retransmission rate (gentle-aggression Figure 11; the paper: mean −6% to −20%)\n",
    );
    s += &format!(
        "{:<8}{:>16}{:>16}{:>12}{:>12}{:>12}{:>12}\n",
        "loss", "retrans Linux", "retrans Pro.", "mean Linux", "mean Pro.", "mean Δ", "p99 Δ"
    );
    for p in pts {
        s += &format!(
            "{:<8}{:>15.2}%{:>15.2}%{:>12.1}{:>12.1}{:>11.1}%{:>11.1}%\n",
            p.loss,
            p.baseline_retrans_pct,
            p.proactive_retrans_pct,
            p.baseline_mean_ms,
            p.proactive_mean_ms,
            -p.mean_reduction_pct,
            -p.p99_reduction_pct,
        );
    }
    s
}

/// Figure 11: the reductions (%) against the baseline's retransmission rate (%),
/// as `dir/proactive-fig11.{png,svg}`.
pub fn plot(dir: &Path, pts: &[Point]) -> Result<(), String> {
    let line = |label: &str, colour: usize, f: fn(&Point) -> f64| Series {
        label: label.to_string(),
        colour,
        points: pts
            .iter()
            .map(|p| (p.baseline_retrans_pct, f(p), 0.0))
            .collect(),
    };
    let x_max = pts
        .iter()
        .map(|p| p.baseline_retrans_pct)
        .fold(0.0, f64::max);
    plot::error_bars(
        &dir.join("proactive-fig11"),
        "proactive-fig11 — RT reduction with Proactive on the backend (Figure 11)",
        (0.0, x_max * 1.1),
        &[Panel {
            caption: String::new(),
            x_desc: "baseline backend retransmission rate (%)".into(),
            y_desc: "reduction of the response time (%)".into(),
            series: vec![
                line("mean", 0, |p| p.mean_reduction_pct),
                line("99th percentile", 1, |p| p.p99_reduction_pct),
            ],
        }],
        500,
    )
}
