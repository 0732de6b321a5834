//! The fast start experiments of `fast-start-and-sessions.txt` §4 and §5:
//!
//! - `fast-start-fig2`, `-fig3`, `-fig4`, `-fig6`: the second 30 KB burst's
//!   completion time against the number of bulk cross-traffic connections, for
//!   newreno, fs, fs-pdrop and fs-pdrop-noflr (§4.1 constant load at 50 and 200 ms,
//!   §4.2 changed load, §4.3 changed load with RED and ECN); mean and standard error.
//! - `fast-start-table1`: 20 bursty connections, 10 with fast start (§4.4).
//! - `fast-start-table2`: the asymmetric network, FIFO against acks-first (§5).
//!
//! The scenarios are sweep files under `examples/`; this file holds the tables'
//! layout and the figures.

use std::path::Path;

use serde::Serialize;

use super::Builtin;
use crate::plot::{self, Panel, Series};
use crate::runner::VariantResult;

macro_rules! builtin {
    ($name:ident, $file:literal) => {
        pub const $name: Builtin = Builtin {
            path: concat!("examples/", $file),
            text: include_str!(concat!("../../../../examples/", $file)),
        };
    };
}
builtin!(FIG2, "fast-start-fig2.toml");
builtin!(FIG3, "fast-start-fig3.toml");
builtin!(FIG4, "fast-start-fig4.toml");
builtin!(FIG6, "fast-start-fig6.toml");
builtin!(TABLE1, "fast-start-table1.toml");
builtin!(TABLE2, "fast-start-table2.toml");

/// A mean with its standard error, seconds, over `n` completed bursts; `unfinished`
/// bursts did not complete within the time limit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mean {
    pub mean_s: f64,
    pub stderr_s: f64,
    pub n: usize,
    pub unfinished: usize,
}

impl Mean {
    /// Over the server-side completion times of `records`.
    fn of<'a>(records: impl Iterator<Item = &'a gentle_sim::record::ExchangeRecord>) -> Mean {
        let (mut xs, mut unfinished) = (Vec::new(), 0);
        for r in records {
            match r.server_ns {
                Some(ns) if r.complete => xs.push(ns as f64 / 1e9),
                _ => unfinished += 1,
            }
        }
        Mean::of_secs(&xs, unfinished)
    }

    /// Over `xs`, seconds, with `unfinished` more that did not complete.
    pub(crate) fn of_secs(xs: &[f64], unfinished: usize) -> Mean {
        let s = super::tlp_study::Spread::of(xs);
        Mean {
            mean_s: s.mean,
            stderr_s: if s.n == 0 {
                0.0
            } else {
                s.sd / (s.n as f64).sqrt()
            },
            n: s.n,
            unfinished,
        }
    }

    pub(crate) fn show(&self) -> String {
        if self.n == 0 {
            return "-".into();
        }
        let mut s = format!("{:.2} ({:.2})", self.mean_s, self.stderr_s);
        if self.unfinished > 0 {
            s += &format!(" +{}", self.unfinished);
        }
        s
    }
}

fn all(v: &VariantResult) -> Mean {
    Mean::of(v.records.iter())
}

/// One load level of a figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Bulk cross-traffic connections.
    pub bulk: u32,
    /// Per variant, in the file's order.
    pub variants: Vec<(String, Mean)>,
}

/// Runs a figure's sweep.
pub fn run_figure(file: &Builtin, quick: bool) -> Vec<Point> {
    let mut pts = Vec::new();
    super::run_points(&file.sweep(), quick, true, |p, r| {
        pts.push(Point {
            bulk: p.at("bulk").and_then(|b| b.parse().ok()).unwrap_or(0),
            variants: r
                .variants
                .iter()
                .map(|v| (v.name.clone(), all(v)))
                .collect(),
        });
    });
    pts
}

/// The figure's table: seconds, mean (standard error), and fast start's change
/// from newreno.
pub fn figure_text(title: &str, pts: &[Point]) -> String {
    let mut s = format!("{title}\n");
    s += "completion time of the second 30 KB burst, s: mean (standard error); +N: bursts unfinished at the time limit\n";
    let names: Vec<&str> = pts
        .first()
        .map(|p| p.variants.iter().map(|(n, _)| n.as_str()).collect())
        .unwrap_or_default();
    s += &format!("{:<6}", "bulk");
    for n in &names {
        s += &format!("{n:>18}");
    }
    s += &format!("{:>14}\n", "fs-pdrop Δ");
    for p in pts {
        s += &format!("{:<6}", p.bulk);
        for (_, m) in &p.variants {
            s += &format!("{:>18}", m.show());
        }
        let base = p.variants.first().map_or(f64::NAN, |v| v.1.mean_s);
        let fsp = p
            .variants
            .iter()
            .find(|v| v.0 == "fs-pdrop")
            .map_or(f64::NAN, |v| v.1.mean_s);
        s += &format!("{:>13.1}%\n", 100.0 * (fsp - base) / base);
    }
    s
}

/// The figure: completion time against bulk connections, with standard errors, as
/// `dir/stem.{png,svg}`.
pub fn figure_plot(dir: &Path, stem: &str, title: &str, pts: &[Point]) -> Result<(), String> {
    let names: Vec<String> = pts
        .first()
        .map(|p| p.variants.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let series = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            label: name.clone(),
            colour: i,
            points: pts
                .iter()
                .filter_map(|p| {
                    let m = &p.variants.get(i)?.1;
                    (m.n > 0).then_some((p.bulk as f64, m.mean_s, m.stderr_s))
                })
                .collect(),
        })
        .collect();
    let x_max = pts.iter().map(|p| p.bulk).max().unwrap_or(1) as f64;
    plot::error_bars(
        &dir.join(stem),
        title,
        (-0.3, x_max + 0.3),
        &[Panel {
            caption: String::new(),
            x_desc: "bulk transfer connections".into(),
            y_desc: "completion time of the second burst (s)".into(),
            series,
        }],
        500,
    )
}

/// Table 1: per variant, the mean of the group with fast start and of the group
/// without.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table1Row {
    pub variant: String,
    pub group1_fs: Mean,
    pub group2_no_fs: Mean,
}

pub fn run_table1(quick: bool) -> Vec<Table1Row> {
    let mut rows = Vec::new();
    let scn = crate::scenario::Scenario::parse(TABLE1.path, TABLE1.text)
        .expect("built-in scenarios are valid");
    let trials = if quick { scn.quick_trials } else { scn.trials };
    let r = super::run_scenario(&scn, trials, true);
    {
        let names: Vec<&str> = scn.workloads.iter().map(|w| w.name.as_str()).collect();
        let group = |v: &VariantResult, g: &str| {
            Mean::of(
                v.records
                    .iter()
                    .filter(|r| names[r.workload as usize].starts_with(g)),
            )
        };
        for v in &r.variants {
            rows.push(Table1Row {
                variant: v.name.clone(),
                group1_fs: group(v, "group1"),
                group2_no_fs: group(v, "group2"),
            });
        }
    }
    rows
}

pub fn table1_text(rows: &[Table1Row]) -> String {
    let mut s = String::from(
        "fast-start-table1 — a 30 KB burst of 20 connections within 1 s, 10 with fast start (group 1) and 10 without (group 2) (fast-start-and-sessions Table 1)\n",
    );
    s += "completion time, s: mean (standard error)\n";
    s += &format!(
        "{:<16}{:>18}{:>18}{:>16}{:>16}\n",
        "", "group 1 (FS)", "group 2 (no FS)", "paper 1", "paper 2"
    );
    let paper = |v: &str| match v {
        "newreno" => ("2.41 (0.05)", "2.34 (0.07)"),
        "fs" => ("1.90 (0.03)", "2.88 (0.06)"),
        "fs-pdrop" => ("1.80 (0.07)", "2.38 (0.05)"),
        _ => ("", ""),
    };
    for r in rows {
        let (a, b) = paper(&r.variant);
        s += &format!(
            "{:<16}{:>18}{:>18}{:>16}{:>16}\n",
            r.variant,
            r.group1_fs.show(),
            r.group2_no_fs.show(),
            a,
            b
        );
    }
    s
}

/// Table 2: per variant and upstream scheduling.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table2Cell {
    pub variant: String,
    pub scheduling: String,
    pub burst: Mean,
}

pub fn run_table2(quick: bool) -> Vec<Table2Cell> {
    let mut cells = Vec::new();
    super::run_points(&TABLE2.sweep(), quick, true, |p, r| {
        for v in &r.variants {
            cells.push(Table2Cell {
                variant: v.name.clone(),
                scheduling: p.at("scheduling").unwrap_or("").to_string(),
                burst: all(v),
            });
        }
    });
    cells
}

pub fn table2_text(cells: &[Table2Cell]) -> String {
    let mut s = String::from(
        "fast-start-table2 — the second 30 KB downstream burst over 10 Mbit/s down, 28.8 kbit/s up, with an upstream bulk transfer (fast-start-and-sessions Table 2)\n",
    );
    s += "completion time, s: mean (standard error)\n";
    s += &format!(
        "{:<12}{:>16}{:>16}{:>14}{:>14}\n",
        "", "FIFO", "acks-first", "paper FIFO", "paper a-f"
    );
    for v in ["newreno", "fs-pdrop"]
        .into_iter()
        .filter(|v| cells.iter().any(|c| c.variant == *v))
    {
        let cell = |sch: &str| {
            cells
                .iter()
                .find(|c| c.variant == v && c.scheduling == sch)
                .map_or("-".into(), |c| c.burst.show())
        };
        let (pf, pa) = match v {
            "newreno" => ("24.47 (0.46)", "7.33 (0.56)"),
            _ => ("11.79 (0.35)", "4.74 (0.58)"),
        };
        s += &format!(
            "{:<12}{:>16}{:>16}{:>14}{:>14}\n",
            v,
            cell("fifo"),
            cell("acks-first"),
            pf,
            pa
        );
    }
    s
}
