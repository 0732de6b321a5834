//! Built-in experiments with reports of their own: the papers' tables. Four are
//! sweeps under `examples/` (compiled in) with a report adapter each; `linux-eras`
//! runs the points of `reactive-table1` and two catalogue scenarios with the four
//! Linux generations as variants.

pub mod analyze_accuracy;
pub mod corrective_pages;
pub mod corrective_table5;
pub mod fast_start;
pub mod kernel_vs_sim;
pub mod linux_eras;
pub mod proactive_fig11;
pub mod reactive_table1;
pub mod sessions;
pub mod tlp_study;

use serde::Serialize;

use crate::runner::{self, RunOptions, RunResult, VariantResult};
use crate::scenario::{Point, Scenario, Sweep};
use crate::staging::Staged;

/// A sweep file under `examples/`, compiled in: errors cite its path.
pub struct Builtin {
    pub path: &'static str,
    pub text: &'static str,
}

impl Builtin {
    /// Its points, read and checked.
    pub fn sweep(&self) -> Sweep {
        Sweep::parse(self.path, self.text).expect("built-in sweeps are valid")
    }
}

/// Programs whose numbers come from the host's kernel (real mode, root): they are
/// not deterministic, and have no golden snapshot.
pub const NEEDS_KERNEL: &[&str] = &["kernel-vs-sim"];

/// Runs every point of a sweep at its full or `--quick` size, in order, handing
/// each point's result to `each` as soon as it is done (nothing is kept here).
pub(crate) fn run_points(
    sweep: &Sweep,
    quick: bool,
    keep_records: bool,
    mut each: impl FnMut(&Point, RunResult),
) {
    for p in &sweep.points {
        let s = &p.scenario;
        let trials = if quick { s.quick_trials } else { s.trials };
        each(p, run_scenario(s, trials, keep_records));
    }
}

/// One configuration's latency at one point, ms, and what Corrective and the
/// retransmission timer did there. The optional parts are the ones an experiment
/// reports (its JSON has them only then).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub config: String,
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    pub mean: f64,
    /// (ms, fraction) points of the CDF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cdf: Option<Vec<(f64, f64)>>,
    /// Segments Corrective rebuilt.
    pub recovered: u64,
    /// Corrective's failed rebuilds (R_FAIL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    pub timeouts: u64,
    /// Corrective payload bytes over other payload bytes, %.
    pub overhead_pct: f64,
}

impl Summary {
    /// The median, 90th percentile and mean, and Corrective's rebuilds and overhead.
    pub fn of(v: &VariantResult) -> Summary {
        let s = &v.latencies;
        let c = &v.counters;
        Summary {
            config: v.name.clone(),
            n: s.len(),
            p50: s.quantile(0.5) / 1e6,
            p90: s.quantile(0.9) / 1e6,
            mean: s.mean() / 1e6,
            recovered: c.corrective_recovered,
            timeouts: c.timeouts,
            overhead_pct: c.corrective_overhead_pct().unwrap_or(0.0),
            ..Summary::default()
        }
    }

    /// With the 99th percentile and the failed rebuilds.
    pub fn with_tail(mut self, v: &VariantResult) -> Summary {
        self.p99 = Some(v.latencies.quantile(0.99) / 1e6);
        self.failed = Some(v.counters.corrective_failed);
        self
    }

    /// With 200 points of the CDF.
    pub fn with_cdf(mut self, v: &VariantResult) -> Summary {
        self.cdf = Some(
            v.latencies
                .cdf_points(200)
                .into_iter()
                .map(|(x, f)| (x as f64 / 1e6, f))
                .collect(),
        );
        self
    }
}

/// Runs `trials` trials of a built-in scenario from its own seed, without a
/// progress bar (a program runs many scenarios and prints its own report).
pub(crate) fn run_scenario(scn: &Scenario, trials: u64, keep_records: bool) -> RunResult {
    runner::run(
        scn,
        &RunOptions {
            trials,
            seed: scn.seed,
            keep_records,
            progress: false,
            observe: crate::runner::Observe::default(),
        },
    )
}

/// What a program experiment is given.
pub struct ProgramArgs<'a> {
    /// The smaller trial counts of `--quick`.
    pub quick: bool,
    /// Where `--out` files go (committed by the caller).
    pub out: Option<&'a mut Staged>,
}

/// A built-in program experiment.
pub struct Program {
    pub name: &'static str,
    pub summary: &'static str,
    /// Runs it; returns the text report and the JSON document.
    pub run: fn(ProgramArgs<'_>) -> Result<(String, serde_json::Value), String>,
}

fn reactive_table1(_: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let rows = reactive_table1::run();
    Ok((
        reactive_table1::text(&rows),
        serde_json::json!({ "experiment": "reactive-table1", "rows": rows }),
    ))
}

fn tlp_study(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let pts = tlp_study::run(args.quick);
    if let Some(st) = args.out {
        // Register the files with the staging directory, then draw into it.
        let dir = st.path("tlp-study-fig4.png");
        for f in [
            "tlp-study-fig4.svg",
            "tlp-study-fig5.png",
            "tlp-study-fig5.svg",
        ] {
            st.path(f);
        }
        let dir = dir.parent().expect("a staging directory").to_path_buf();
        tlp_study::plots(&dir, &pts)?;
    }
    Ok((
        tlp_study::text(&pts),
        serde_json::json!({ "experiment": "tlp-study", "points": pts }),
    ))
}

fn proactive_fig11(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let pts = proactive_fig11::run(args.quick);
    if let Some(st) = args.out {
        let png = st.path("proactive-fig11.png");
        st.path("proactive-fig11.svg");
        proactive_fig11::plot(png.parent().expect("a staging directory"), &pts)?;
    }
    Ok((
        proactive_fig11::text(&pts),
        serde_json::json!({ "experiment": "proactive-fig11", "points": pts }),
    ))
}

fn corrective_table5(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let cells = corrective_table5::run(args.quick);
    Ok((
        corrective_table5::text(&cells),
        serde_json::json!({ "experiment": "corrective-table5", "cells": cells }),
    ))
}

fn corrective_pages(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let mut out = args.out;
    let mut err = None;
    let loads = corrective_pages::run(args.quick, |stem, run| {
        if let Some(st) = out.as_deref_mut() {
            let png = st.path(&format!("{stem}.png"));
            st.path(&format!("{stem}.svg"));
            let title = format!("{stem}: page load time (Figure 10)");
            if let Err(e) = crate::plot::cdf(&png.with_extension(""), &title, run) {
                err.get_or_insert(e);
            }
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    Ok((
        corrective_pages::text(&loads),
        serde_json::json!({ "experiment": "corrective-pages", "loads": loads }),
    ))
}

/// A fast start figure: its table, and with `--out` its plot.
fn fast_start_figure(
    args: ProgramArgs<'_>,
    file: &Builtin,
    stem: &str,
    title: &str,
) -> Result<(String, serde_json::Value), String> {
    let pts = fast_start::run_figure(file, args.quick);
    if let Some(st) = args.out {
        let png = st.path(&format!("{stem}.png"));
        st.path(&format!("{stem}.svg"));
        // The plot's title: the table's, without the paper's claims.
        let short = title.split(" (").next().unwrap_or(title);
        fast_start::figure_plot(
            png.parent().expect("a staging directory"),
            stem,
            short,
            &pts,
        )?;
    }
    Ok((
        fast_start::figure_text(title, &pts),
        serde_json::json!({ "experiment": stem, "points": pts }),
    ))
}

fn fast_start_fig2(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    fast_start_figure(
        args,
        &fast_start::FIG2,
        "fast-start-fig2",
        "fast-start-fig2 — constant load, 50 ms bottleneck (fast-start-and-sessions Figure 2; the paper: fast start 50–65% faster at low load)",
    )
}
fn fast_start_fig3(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    fast_start_figure(
        args,
        &fast_start::FIG3,
        "fast-start-fig3",
        "fast-start-fig3 — constant load, 200 ms bottleneck (fast-start-and-sessions Figure 3; the paper: fast start 50–65% faster at low load, more in absolute terms)",
    )
}
fn fast_start_fig4(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    fast_start_figure(
        args,
        &fast_start::FIG4,
        "fast-start-fig4",
        "fast-start-fig4 — changed load, 50 ms (fast-start-and-sessions Figure 4; the paper: fs better than newreno, fs-pdrop close to newreno at high load, fs-pdrop-noflr clearly worse)",
    )
}
fn fast_start_fig6(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    fast_start_figure(
        args,
        &fast_start::FIG6,
        "fast-start-fig6",
        "fast-start-fig6 — changed load, 50 ms, RED with ECN (fast-start-and-sessions Figure 6; the paper: fs-pdrop 25–50% faster than newreno even at high load)",
    )
}
fn fast_start_table1(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let rows = fast_start::run_table1(args.quick);
    Ok((
        fast_start::table1_text(&rows),
        serde_json::json!({ "experiment": "fast-start-table1", "rows": rows }),
    ))
}
fn fast_start_table2(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let cells = fast_start::run_table2(args.quick);
    Ok((
        fast_start::table2_text(&cells),
        serde_json::json!({ "experiment": "fast-start-table2", "cells": cells }),
    ))
}

fn analyze_accuracy(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let scn = analyze_accuracy::FILE.sweep().points.remove(0).scenario;
    let trials = if args.quick {
        scn.quick_trials
    } else {
        scn.trials
    };
    let ms = analyze_accuracy::run(trials);
    Ok((
        analyze_accuracy::text(&ms, trials),
        serde_json::json!({ "experiment": "analyze-accuracy", "trials": trials, "variants": ms }),
    ))
}

fn sessions_fig8(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let pts = sessions::run_fig8(args.quick);
    if let Some(st) = args.out {
        let png = st.path("sessions-fig8.png");
        st.path("sessions-fig8.svg");
        sessions::fig8_plot(png.parent().expect("a staging directory"), &pts)?;
    }
    Ok((
        sessions::fig8_text(&pts),
        serde_json::json!({ "experiment": "sessions-fig8", "points": pts }),
    ))
}
fn sessions_bulk(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let rows = sessions::run_bulk(args.quick);
    Ok((
        sessions::bulk_text(&rows),
        serde_json::json!({ "experiment": "sessions-bulk", "rows": rows }),
    ))
}

fn kernel_vs_sim(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let o = kernel_vs_sim::run(args.quick);
    Ok((
        kernel_vs_sim::text(&o),
        serde_json::json!({ "experiment": "kernel-vs-sim", "outcome": o }),
    ))
}

fn linux_eras(args: ProgramArgs<'_>) -> Result<(String, serde_json::Value), String> {
    let e = linux_eras::run(args.quick);
    Ok((
        linux_eras::text(&e),
        serde_json::json!({ "experiment": "linux-eras", "eras": e }),
    ))
}

pub const PROGRAMS: &[Program] = &[
    Program {
        name: "reactive-table1",
        summary: "tail-loss patterns of a 10-segment response: RTO without the loss probe, fast recovery with it (gentle-aggression Table 1)",
        run: reactive_table1,
    },
    Program {
        name: "tlp-study",
        summary: "0–20 tail segments dropped from a 100-segment response on three networks: plain vs ER vs TLP (tlp-measurement Table 4, Figures 4–5)",
        run: tlp_study,
    },
    Program {
        name: "corrective-table5",
        summary: "40 B / 5000 B and 40 B / 50000 B queries at 200 ms RTT with random and correlated loss: Corrective and redundant SYNs vs Linux 2.6 (gentle-aggression Table 5)",
        run: corrective_table5,
    },
    Program {
        name: "corrective-pages",
        summary: "a 5-object and a 167-object page over cable-like and 3G-like links, and the mobile page (fitted to the paper's baseline) over 3G, with correlated loss: Corrective vs Linux 2.6 (gentle-aggression §8.4.2, Figure 10)",
        run: corrective_pages,
    },
    Program {
        name: "proactive-fig11",
        summary: "Web responses through a frontend, the backend's loss swept: Proactive's RT reduction against the baseline backend retransmission rate (gentle-aggression Figure 11)",
        run: proactive_fig11,
    },
    Program {
        name: "fast-start-fig2",
        summary: "a second 30 KB burst after 20 s idle under constant load, 50 ms: newreno, fs, fs-pdrop, fs-pdrop-noflr against bulk connections (fast-start Figure 2)",
        run: fast_start_fig2,
    },
    Program {
        name: "fast-start-fig3",
        summary: "the same at 200 ms with 32 KB bulk windows (fast-start Figure 3)",
        run: fast_start_fig3,
    },
    Program {
        name: "fast-start-fig4",
        summary: "changed load: the cross traffic starts during the idle period (fast-start Figure 4)",
        run: fast_start_fig4,
    },
    Program {
        name: "fast-start-fig6",
        summary: "changed load with RED and ECN at the bottleneck (fast-start Figure 6)",
        run: fast_start_fig6,
    },
    Program {
        name: "fast-start-table1",
        summary: "20 bursty connections within 1 s, 10 with fast start: each group's completion time (fast-start Table 1)",
        run: fast_start_table1,
    },
    Program {
        name: "fast-start-table2",
        summary: "10 Mbit/s down, 28.8 kbit/s up with an upstream bulk transfer: FIFO vs acks-first, newreno vs fs-pdrop (fast-start Table 2)",
        run: fast_start_table2,
    },
    Program {
        name: "sessions-fig8",
        summary: "a Web page of 4 × 10 KB per source–sink pair, 1–12 pairs: independent connections, one persistent connection, a TCP session (fast-start Figure 8)",
        run: sessions_fig8,
    },
    Program {
        name: "sessions-bulk",
        summary: "60 s of bulk transfers, a 4-connection host against three 1-connection hosts: throughput per host, Jain's index and loss, with and without TCP sessions (fast-start §6.3)",
        run: sessions_bulk,
    },
    Program {
        name: "linux-eras",
        summary: "NewReno, Linux 2.6, 3.10 and 6 (RACK-TLP) on Table 1's tail losses, the er-reordering path and demo-tail-loss: how each loss was repaired, and the latency",
        run: linux_eras,
    },
    Program {
        name: "analyze-accuracy",
        summary: "gentle analyze against the truth: retransmission causes inferred from server-side captures of every profile, next to the engine's trace (confusion matrices)",
        run: analyze_accuracy,
    },
    Program {
        name: "kernel-vs-sim",
        summary: "the linux-6 profile next to the host's kernel (real mode, root) on Table 1's tail losses, a mid-response loss, reordering and random loss: repairs, state after, times",
        run: kernel_vs_sim,
    },
];

pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}
