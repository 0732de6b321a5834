//! Reports laid out like the papers' tables: quantiles (25, 50, 90, 99) and the mean
//! of the response time; the baseline in ms; every other variant as the difference
//! in ms and in %; the sample size. Also the JSON summary and CSV of every record.

use std::fmt::Write as _;

use gentle_sim::link::Scheduling;
use serde_json::{Value, json};

use crate::ci::DeltaCi;
use crate::episodes::Counts;
use crate::runner::{RunResult, VariantResult, metric_of};
use crate::sample::Sample;
use crate::scenario::{Metric, Scenario};
use crate::units::fmt_ms;

/// Summary statistics of a sorted sample, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub p25: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// Statistics of a latency sample, in ns.
pub fn stats(sample: &Sample) -> Stats {
    Stats {
        n: sample.len(),
        mean: sample.mean(),
        p25: sample.quantile(0.25),
        p50: sample.quantile(0.50),
        p90: sample.quantile(0.90),
        p99: sample.quantile(0.99),
    }
}

/// The title of a CDF: the scenario, the metric and which exchanges it ranks.
pub fn cdf_title(scn: &Scenario) -> String {
    let which = match scn.filter {
        crate::scenario::Filter::All => "",
        crate::scenario::Filter::Retransmitted => ", responses with a retransmission",
        crate::scenario::Filter::Lost => ", responses that lost a packet",
    };
    format!(
        "{} — CDF of the {}{which}",
        scn.name,
        metric_name(scn.metric)
    )
}

/// What the metric measures, for titles.
pub fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Server => "server-side response time",
        Metric::Client => "client-side response time",
        Metric::Fin => "time to the server's FIN",
        Metric::Page => "page load time",
    }
}

/// The table of one run.
pub fn table(scn: &Scenario, run: &RunResult, trials: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — {} (ms), {} trial{}",
        scn.name,
        metric_name(scn.metric),
        trials,
        if trials == 1 { "" } else { "s" }
    );
    if !scn.description.is_empty() {
        let _ = writeln!(out, "{}", crate::units::wrap(&scn.description, 100, 0));
    }
    let base = &run.variants[0];
    let bs = stats(&base.latencies);
    let others: Vec<Stats> = run.variants[1..]
        .iter()
        .map(|v| stats(&v.latencies))
        .collect();
    // Columns wide enough for the longest name; as many as fit in 100 columns,
    // further variants in stacked tables under the same baseline.
    let qw = run.variants[1..]
        .iter()
        .map(|v| v.name.chars().count() + 13)
        .max()
        .unwrap_or(24)
        .max(24);
    let bw = (base.name.chars().count() + 2).max(12);
    let per = ((100 - 10 - bw) / qw).max(1);
    let idx: Vec<usize> = (0..others.len()).collect();
    let groups: Vec<&[usize]> = if idx.is_empty() {
        vec![&idx[..]]
    } else {
        idx.chunks(per).collect()
    };
    for (gi, group) in groups.iter().enumerate() {
        if gi > 0 {
            let _ = writeln!(out);
        }
        let mut header = format!("{:<10}{:>bw$}", "quantile", base.name);
        for &i in *group {
            header += &format!("{:>qw$}", format!("{} Δms (Δ%)", run.variants[i + 1].name));
        }
        let _ = writeln!(out, "{header}");
        for (label, f, which) in ROWS {
            let b = f(&bs);
            let base_cell = if bs.n == 0 {
                "-".to_string()
            } else {
                fmt_ms(b)
            };
            let mut line = format!("{:<10}{:>bw$}", label, base_cell);
            let mut ci_line = format!("{:<10}{:>bw$}", "", "");
            for &i in *group {
                let s = &others[i];
                let ci = run
                    .cis
                    .get(i + 1)
                    .and_then(Option::as_ref)
                    .map(|d| which.of(d));
                let (cell, ci_cell) = delta_cells(f(s), b, s.n, bs.n, ci);
                line += &format!("{:>qw$}", cell);
                ci_line += &format!("{:>qw$}", ci_cell);
            }
            let _ = writeln!(out, "{line}");
            if ci_line.trim_end().len() > 10 {
                let _ = writeln!(out, "{}", ci_line.trim_end());
            }
        }
        let mut line = format!("{:<10}{:>bw$}", "samples", bs.n);
        for &i in *group {
            line += &format!("{:>qw$}", others[i].n);
        }
        let _ = writeln!(out, "{line}");
    }
    if run.cis.iter().any(Option::is_some) {
        let trials_ci = run
            .cis
            .iter()
            .flatten()
            .map(|d| d.trials)
            .min()
            .unwrap_or(0);
        let note = format!(
            "[lo, hi]: 95% confidence interval of the difference (paired bootstrap over {}{} trials, {} resamples); ~ marks a difference whose interval holds 0",
            if trials_ci < trials { "the first " } else { "" },
            trials_ci,
            crate::ci::RESAMPLES
        );
        let _ = writeln!(out, "{}", crate::units::wrap(&note, 100, 0));
    } else if run.variants.len() > 1 && trials < 2 {
        let _ = writeln!(
            out,
            "no confidence intervals: one trial, nothing to resample (run more trials for them)"
        );
    }
    for v in run.variants.iter().filter(|v| v.latencies.is_empty()) {
        let _ = writeln!(
            out,
            "{}: no finished exchange to rank ({} exchanges, {} unfinished)",
            v.name, v.exchanges, v.incomplete
        );
    }
    let cw = run
        .variants
        .iter()
        .map(|v| v.name.chars().count() + 2)
        .max()
        .unwrap_or(14)
        .max(14);
    let per = ((100 - 28) / cw).max(1);
    let all: Vec<&VariantResult> = run.variants.iter().collect();
    for group in all.chunks(per) {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<28}{}",
            "",
            group
                .iter()
                .map(|v| format!("{:>cw$}", v.name))
                .collect::<String>()
        );
        let row = |label: &str, f: &dyn Fn(&VariantResult) -> String| {
            format!(
                "{:<28}{}\n",
                label,
                group
                    .iter()
                    .map(|v| format!("{:>cw$}", f(v)))
                    .collect::<String>()
            )
        };
        out += &row("exchanges", &|v| v.exchanges.to_string());
        out += &row("  with a retransmission", &|v| {
            v.with_retransmission.to_string()
        });
        out += &row("  with a packet lost", &|v| v.with_loss.to_string());
        out += &row("  unfinished", &|v| v.incomplete.to_string());
        out += &row("retransmitted segments", &|v| {
            v.counters.retrans_segs.to_string()
        });
        out += &row("fast recovery events", &|v| {
            v.counters.recovery_episodes.to_string()
        });
        out += &row("fast retransmits", &|v| v.counters.fast_retrans.to_string());
        out += &row("  lost retransmits", &|v| {
            v.counters.lost_retransmit.to_string()
        });
        out += &row("  early retransmits", &|v| {
            v.counters.early_retrans.to_string()
        });
        out += &row("timeouts", &|v| v.counters.timeouts.to_string());
        out += &row("  in Open", &|v| v.counters.timeouts_open.to_string());
        out += &row("  in Disorder", &|v| {
            v.counters.timeouts_disorder.to_string()
        });
        out += &row("  in Recovery", &|v| {
            v.counters.timeouts_recovery.to_string()
        });
        out += &row("  exp. back-off (in Loss)", &|v| {
            v.counters.timeouts_loss.to_string()
        });
        out += &row("slow-start retransmits", &|v| {
            v.counters.slow_start_retrans.to_string()
        });
        out += &row("SYN retransmits", &|v| v.counters.syn_retrans.to_string());
        out += &row("undo events", &|v| v.counters.undos().to_string());
        let pct = |n: u64, d: u64| {
            if d == 0 {
                "-".to_string()
            } else {
                format!("{:.2}%", 100.0 * n as f64 / d as f64)
            }
        };
        if run.variants.iter().any(|v| v.counters.loss_probes > 0) {
            out += &row("loss probes", &|v| v.counters.loss_probes.to_string());
            out += &row("  of data segments sent", &|v| {
                pct(v.counters.loss_probes, v.counters.segs_out)
            });
            // Every probe in exactly one row: new data, or the last segment again
            // (its episode judged repaired, unnecessary, or never judged), or none
            // sent (the timer fired with nothing left to probe).
            let c = |v: &VariantResult| v.counters;
            let unjudged = |v: &VariantResult| {
                c(v).loss_probes_retrans
                    .saturating_sub(c(v).loss_probes_repaired + c(v).loss_probes_unnecessary)
            };
            let unsent = |v: &VariantResult| {
                c(v).loss_probes
                    .saturating_sub(c(v).loss_probes_new + c(v).loss_probes_retrans)
            };
            out += &row("  new data", &|v| {
                pct(c(v).loss_probes_new, c(v).loss_probes)
            });
            out += &row("  last segment again", &|v| {
                pct(c(v).loss_probes_retrans, c(v).loss_probes)
            });
            out += &row("    plugged the only hole", &|v| {
                pct(c(v).loss_probes_repaired, c(v).loss_probes)
            });
            out += &row("    unnecessary", &|v| {
                pct(c(v).loss_probes_unnecessary, c(v).loss_probes)
            });
            out += &row("    never judged", &|v| pct(unjudged(v), c(v).loss_probes));
            if run.variants.iter().any(|v| unsent(v) > 0) {
                out += &row("  none sent", &|v| pct(unsent(v), c(v).loss_probes));
            }
        }
        if run
            .variants
            .iter()
            .any(|v| v.counters.corrective_sent + v.counters.corrective_fallback > 0)
        {
            let c = |v: &VariantResult| v.counters;
            out += &row("Corrective packets", &|v| c(v).corrective_sent.to_string());
            out += &row("  overhead (bytes)", &|v| {
                c(v).corrective_overhead_pct()
                    .map_or("-".to_string(), |p| format!("{p:.1}%"))
            });
            out += &row("  losses rebuilt", &|v| {
                c(v).corrective_recovered.to_string()
            });
            out += &row("  R_FAIL reports", &|v| c(v).corrective_failed.to_string());
            out += &row("  cwnd reductions (R_SUCC)", &|v| {
                c(v).corrective_cwr.to_string()
            });
            out += &row("  fallbacks (middlebox)", &|v| {
                c(v).corrective_fallback.to_string()
            });
        }
        if scn.workloads.iter().any(|w| w.backend.is_some()) {
            out += &row("backend retransmission rate", &|v| {
                pct(v.backend.retrans_segs, v.backend.segs_out)
            });
        }
        if run
            .variants
            .iter()
            .any(|v| v.counters.proactive_copies + v.counters.proactive_fallback > 0)
        {
            let c = |v: &VariantResult| v.counters;
            out += &row("Proactive copies", &|v| c(v).proactive_copies.to_string());
            out += &row("  overhead (bytes)", &|v| {
                c(v).proactive_overhead_pct()
                    .map_or("-".to_string(), |p| format!("{p:.1}%"))
            });
            out += &row("  losses repaired", &|v| c(v).proactive_repairs.to_string());
            out += &row("  discarded by the filter", &|v| {
                c(v).proactive_discarded.to_string()
            });
            out += &row("  fallbacks (middlebox)", &|v| {
                c(v).proactive_fallback.to_string()
            });
        }
        if run.variants.iter().any(|v| v.counters.session_joins > 0) {
            let c = |v: &VariantResult| v.counters;
            out += &row("session joins", &|v| c(v).session_joins.to_string());
            out += &row("  segments sent", &|v| c(v).session_segs.to_string());
            out += &row("  losses found", &|v| {
                c(v).session_loss_detected.to_string()
            });
            out += &row("    with later ACKs", &|v| {
                c(v).session_later_ack_recoveries.to_string()
            });
            out += &row("  window halvings", &|v| {
                c(v).session_reductions.to_string()
            });
            out += &row("  session timeouts", &|v| c(v).session_timeouts.to_string());
        }
        if run.variants.iter().any(|v| v.counters.fast_start > 0) {
            let c = |v: &VariantResult| v.counters;
            out += &row("fast starts", &|v| c(v).fast_start.to_string());
            out += &row("  segments marked", &|v| c(v).fast_start_segs.to_string());
            out += &row("  reset (reset timer)", &|v| {
                c(v).fast_start_resets.to_string()
            });
            out += &row("  aborted (partial ACK)", &|v| {
                c(v).fast_start_aborts.to_string()
            });
        }
        if run
            .variants
            .iter()
            .any(|v| v.counters.ecn_ce_received + v.counters.ecn_reductions > 0)
        {
            let c = |v: &VariantResult| v.counters;
            out += &row("ECN: CE received", &|v| c(v).ecn_ce_received.to_string());
            out += &row("  cwnd reductions (ECE)", &|v| {
                c(v).ecn_reductions.to_string()
            });
        }
        out += &row("packets dropped", &|v| {
            (v.links.dropped_loss + v.links.dropped_queue + v.links.dropped_middlebox).to_string()
        });
        if managed_queues(scn) {
            out += &row("  by RED", &|v| v.links.dropped_red.to_string());
            out += &row("  low priority (fast start)", &|v| {
                v.links.dropped_queue_low.to_string()
            });
            out += &row("ECN marks (CE)", &|v| v.links.ecn_marked.to_string());
        }
    }
    if scn.recovery_stats {
        out += &recovery_tables(run);
    }
    out += &crate::paper::section(scn, run);
    for v in &run.variants {
        if v.corrupt_bytes > 0 {
            let _ = writeln!(
                out,
                "error: {}: {} bytes delivered corrupted",
                v.name, v.corrupt_bytes
            );
        }
    }
    out
}

/// Which statistic a row shows.
#[derive(Clone, Copy)]
enum Which {
    Mean,
    Percentile(u32),
}

impl Which {
    fn of(self, d: &crate::ci::Deltas) -> DeltaCi {
        match self {
            Which::Mean => d.mean,
            Which::Percentile(p) => d.percentile(p),
        }
    }

    fn key(self) -> String {
        match self {
            Which::Mean => "mean".into(),
            Which::Percentile(p) => format!("p{p}"),
        }
    }
}

/// One row of the latency table: label, statistic, and its interval.
type Row = (&'static str, fn(&Stats) -> f64, Which);

/// The rows of the latency table.
const ROWS: [Row; 5] = [
    ("25", |s| s.p25, Which::Percentile(25)),
    ("50", |s| s.p50, Which::Percentile(50)),
    ("90", |s| s.p90, Which::Percentile(90)),
    ("99", |s| s.p99, Which::Percentile(99)),
    ("mean", |s| s.mean, Which::Mean),
];

/// A variant's cell of a latency row — the difference from the baseline in ms and
/// %, `~` when its interval holds 0 — and the interval's cell under it.
fn delta_cells(x: f64, b: f64, n: usize, base_n: usize, ci: Option<DeltaCi>) -> (String, String) {
    if n == 0 {
        return ("-".into(), String::new());
    }
    if base_n == 0 {
        return (fmt_ms(x), String::new());
    }
    let d = x - b;
    let pct = if b > 0.0 { 100.0 * d / b } else { 0.0 };
    let cell = format!("{} ({}%)", signed_ms(d), signed(pct, 1));
    let Some(ci) = ci.filter(|c| c.ms.lo.is_finite() && c.ms.hi.is_finite()) else {
        return (cell, String::new());
    };
    let mark = if ci.ms.contains_zero() { "~" } else { "" };
    (
        format!("{mark}{cell}"),
        format!(
            "[{}, {}]",
            signed_ms(ci.ms.lo * 1e6),
            signed_ms(ci.ms.hi * 1e6)
        ),
    )
}

/// A difference of `ns` in ms with its sign (`+` too), as `fmt_ms` rounds it;
/// one too small for two decimals keeps two significant digits, so a real
/// difference never reads as 0.
fn signed_ms(ns: f64) -> String {
    if ns == 0.0 {
        return "0.00".into();
    }
    let ms = ns / 1e6;
    if ms.abs() < 0.005 {
        return signed(ms, 2);
    }
    format!("{}{}", if ms < 0.0 { "-" } else { "+" }, fmt_ms(ns.abs()))
}

/// `x` with its sign and `decimals` decimals, or two significant digits when it
/// would round to 0; exactly 0 prints as 0 with no sign.
fn signed(x: f64, decimals: usize) -> String {
    if x == 0.0 {
        return format!("{:+.*}", decimals, 0.0);
    }
    let limit = 0.5 * 10f64.powi(-(decimals as i32));
    let d = if x.abs() < limit {
        (1 - x.abs().log10().floor() as i32).max(decimals as i32) as usize
    } else {
        decimals
    };
    format!("{x:+.d$}")
}

/// The intervals of one variant for the JSON summary: `delta_ms` and `delta_pct`,
/// each statistic as `{lo, hi}`, with the method.
fn ci_json(d: &crate::ci::Deltas) -> Value {
    let side = |f: fn(&DeltaCi) -> crate::ci::Interval| -> Value {
        let pair = |i: crate::ci::Interval| {
            let n = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
            json!({ "lo": n(i.lo), "hi": n(i.hi) })
        };
        let mut m = serde_json::Map::new();
        for (_, _, which) in ROWS {
            m.insert(which.key(), pair(f(&which.of(d))));
        }
        Value::Object(m)
    };
    json!({
        "delta_ms": side(|c| c.ms),
        "delta_pct": side(|c| c.pct),
        "level": 0.95,
        "method": "paired bootstrap over trials, percentile interval",
        "resamples": crate::ci::RESAMPLES,
        "trials": d.trials,
    })
}

/// The recovery-episode tables of `prr-imc11.txt` (Tables 5, 6 and 7), per variant.
pub fn recovery_tables(run: &RunResult) -> String {
    let mut out = String::new();
    let q = |xs: &Counts, p: f64| xs.quantile(p).map_or("-".to_string(), |x| x.to_string());
    let _ = writeln!(
        out,
        "\nrecovery episodes (segments)      {}",
        run.variants
            .iter()
            .map(|v| format!("{:>14}", v.name))
            .collect::<String>()
    );
    let samples: Vec<(&Counts, &Counts, &Counts)> = run
        .variants
        .iter()
        .map(|v| {
            let e = &v.episodes;
            (&e.start, &e.last_completed, &e.cwnd_after)
        })
        .collect();
    let row = |label: &str, f: &dyn Fn(&(&Counts, &Counts, &Counts)) -> String| {
        format!(
            "{:<34}{}\n",
            label,
            samples
                .iter()
                .map(|s| format!("{:>14}", f(s)))
                .collect::<String>()
        )
    };
    out += &row("episodes", &|s| s.0.len().to_string());
    let share = |s: &Counts, f: fn(i64) -> bool| {
        s.share(f)
            .map_or("-".to_string(), |x| format!("{:.0}%", 100.0 * x))
    };
    out += "pipe − ssthresh at the start (Table 5)\n";
    out += &row("  pipe < ssthresh", &|s| share(s.0, |x| x < 0));
    out += &row("  pipe = ssthresh", &|s| share(s.0, |x| x == 0));
    out += &row("  pipe > ssthresh", &|s| share(s.0, |x| x > 0));
    for (label, p) in [
        ("  min", 0.0),
        ("  1%", 0.01),
        ("  50%", 0.5),
        ("  99%", 0.99),
        ("  max", 1.0),
    ] {
        out += &row(label, &|s| q(s.0, p));
    }
    out += "cwnd − ssthresh before the exit (Table 6)\n";
    for p in [5, 10, 25, 50, 75, 90, 95, 99] {
        out += &row(&format!("  {p}%"), &|s| q(s.1, p as f64 / 100.0));
    }
    out += "cwnd after recovery (Table 7)\n";
    for p in [10, 25, 50, 75, 90, 95, 99] {
        out += &row(&format!("  {p}%"), &|s| q(s.2, p as f64 / 100.0));
    }
    out += &row("  share below 3 segments", &|s| share(s.2, |x| x < 3));
    out
}

/// The recovery-episode statistics of one variant, for the JSON summary.
fn recovery_json(v: &VariantResult) -> Value {
    let e = &v.episodes;
    let (start, last, after) = (&e.start, &e.last_completed, &e.cwnd_after);
    let qs = |xs: &Counts, ps: &[u32]| -> Value {
        ps.iter()
            .map(|&p| (format!("p{p}"), json!(xs.quantile(p as f64 / 100.0))))
            .collect::<serde_json::Map<String, Value>>()
            .into()
    };
    json!({
        "episodes": start.len(),
        "start_pipe_minus_ssthresh": qs(start, &[0, 1, 50, 99, 100]),
        "exit_cwnd_minus_ssthresh": qs(last, &[5, 10, 25, 50, 75, 90, 95, 99]),
        "cwnd_after": qs(after, &[10, 25, 50, 75, 90, 95, 99]),
    })
}

fn stats_json(s: &Stats) -> Value {
    let ms = |x: f64| {
        if x.is_nan() {
            Value::Null
        } else {
            json!(x / 1e6)
        }
    };
    json!({ "mean": ms(s.mean), "p25": ms(s.p25), "p50": ms(s.p50), "p90": ms(s.p90), "p99": ms(s.p99) })
}

/// Whether a link of the scenario manages its queue (RED, priority drop or
/// acks-first): then the reports show the queues' counters, per link direction
/// in the JSON.
fn managed_queues(scn: &Scenario) -> bool {
    scn.links.iter().any(|l| {
        [&l.a_to_b.spec, &l.b_to_a.spec]
            .iter()
            .any(|c| c.queue.red().is_some() || c.priority_drop || c.scheduling != Scheduling::Fifo)
    })
}

/// Each link direction's queue counters, added over the trials.
fn queues_json(v: &VariantResult) -> Value {
    v.per_link
        .iter()
        .map(|l| {
            let s = &l.stats;
            json!({
                "link": l.link,
                "from": l.from,
                "to": l.to,
                "offered": s.offered,
                "dropped_queue": s.dropped_queue,
                "dropped_queue_low": s.dropped_queue_low,
                "dropped_red": s.dropped_red,
                "ecn_marked": s.ecn_marked,
                "max_queue": s.max_queue,
                "mean_queue": s.mean_queue(),
            })
        })
        .collect()
}

/// The JSON summary (`--json`).
pub fn json(scn: &Scenario, run: &RunResult, trials: u64, seed: u64) -> Value {
    let base = stats(&run.variants[0].latencies);
    let variants: Vec<Value> = run
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let s = stats(&v.latencies);
            let counters: serde_json::Map<String, Value> = v.counters.iter().map(|(k, x)| (k.to_string(), json!(x))).collect();
            let delta = |a: f64, b: f64| if a.is_nan() || b.is_nan() { Value::Null } else { json!((a - b) / 1e6) };
            json!({
                "name": v.name,
                "samples": s.n,
                "latency_ms": stats_json(&s),
                "delta_ms": { "mean": delta(s.mean, base.mean), "p25": delta(s.p25, base.p25), "p50": delta(s.p50, base.p50),
                              "p90": delta(s.p90, base.p90), "p99": delta(s.p99, base.p99) },
                "ci95": run.cis.get(i).and_then(Option::as_ref).map_or(Value::Null, ci_json),
                "exchanges": v.exchanges,
                "with_retransmission": v.with_retransmission,
                "with_loss": v.with_loss,
                "incomplete": v.incomplete,
                "timed_out_trials": v.timed_out_trials,
                "corrupt_bytes": v.corrupt_bytes,
                "counters": counters,
                "links": v.links,
                "sim_events": v.events,
                "sim_packets": v.packets,
                "recovery": recovery_json(v),
            })
        })
        .collect();
    let mut variants = variants;
    if managed_queues(scn) {
        for (j, v) in variants.iter_mut().zip(&run.variants) {
            j["queues"] = queues_json(v);
        }
    }
    let mut doc = json!({
        "scenario": scn.name,
        "metric": scn.metric,
        "seed": seed,
        "trials": trials,
        "wall_seconds": run.wall_seconds,
        "sim_events": run.events(),
        "sim_packets": run.packets(),
        "variants": variants,
    });
    if let Some(p) = crate::paper::json(scn, run) {
        doc["paper"] = p;
    }
    if !scn.point.is_empty() {
        // A sweep point names its coordinates.
        let point: serde_json::Map<String, Value> = scn
            .point
            .iter()
            .map(|(a, l)| (a.clone(), json!(l)))
            .collect();
        doc["point"] = Value::Object(point);
    }
    doc
}

/// Why exchanges did not finish, per variant, for stderr; empty when all did.
pub fn unfinished_note(run: &RunResult) -> String {
    let mut out = String::new();
    for v in &run.variants {
        if v.incomplete > 0 {
            let reasons: Vec<String> = gentle_sim::record::Unfinished::ALL
                .iter()
                .zip(v.unfinished)
                .filter(|(_, n)| *n > 0)
                .map(|(r, n)| format!("{n} {}", r.describe()))
                .collect();
            let _ = writeln!(
                out,
                "note: {}: {} unfinished exchange{}: {}",
                v.name,
                v.incomplete,
                if v.incomplete == 1 { "" } else { "s" },
                reasons.join(", ")
            );
        }
        if !v.timed_out_trials.is_empty() {
            let ids: Vec<String> = v
                .timed_out_trials
                .iter()
                .take(10)
                .map(|t| t.to_string())
                .collect();
            let _ = writeln!(
                out,
                "note: {}: {} trial{} hit the time limit; replay one with --trace FILE --trial K: {}",
                v.name,
                v.timed_out,
                if v.timed_out == 1 { "" } else { "s" },
                ids.join(", ")
            );
        }
    }
    out
}

/// The records table's columns that `records.csv` leaves out.
const TABLE_ONLY: &[&str] = &["ranked", "t_recover_ms", "t_total_ms"];

/// The columns of `records.csv`: the records table's
/// ([`RECORD_COLUMNS`](crate::sweeping::records::RECORD_COLUMNS)), in its order,
/// less the few only the table has.
pub fn csv_columns() -> impl Iterator<Item = &'static str> + Clone {
    crate::sweeping::records::RECORD_COLUMNS
        .iter()
        .copied()
        .filter(|c| !TABLE_ONLY.contains(c))
}

/// `records.csv` as it is written: the header, then one row per exchange, every
/// field quoted where it needs to be (a name with a comma or a quote).
pub struct RecordsCsv<W: std::io::Write> {
    w: csv::Writer<W>,
}

impl<W: std::io::Write> RecordsCsv<W> {
    /// Writes the header to `w`.
    pub fn new(w: W) -> std::io::Result<RecordsCsv<W>> {
        let mut w = csv::Writer::from_writer(w);
        w.write_record(csv_columns())?;
        Ok(RecordsCsv { w })
    }

    /// The rows of `records` of the variant named `variant`.
    pub fn records(
        &mut self,
        scn: &Scenario,
        variant: &str,
        records: &[gentle_sim::record::ExchangeRecord],
    ) -> std::io::Result<()> {
        for r in records {
            self.row(|col| record_field(scn, variant, r, col))?;
        }
        Ok(())
    }

    /// One row: `field` gives the value of each column, by name.
    pub fn row(&mut self, mut field: impl FnMut(&str) -> String) -> std::io::Result<()> {
        for col in csv_columns() {
            self.w.write_field(field(col))?;
        }
        self.w.write_record(None::<&[u8]>)?;
        Ok(())
    }

    /// Flushes and hands back the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

/// Milliseconds with three decimals, or nothing.
fn csv_ms(x: Option<u64>) -> String {
    x.map_or(String::new(), |v| format!("{:.3}", v as f64 / 1e6))
}

/// The `col` field of record `r` of the variant named `variant`.
fn record_field(
    scn: &Scenario,
    variant: &str,
    r: &gentle_sim::record::ExchangeRecord,
    col: &str,
) -> String {
    match col {
        "variant" => variant.to_string(),
        "trial" => r.trial.to_string(),
        "workload" => scn
            .workloads
            .get(r.workload as usize)
            .map_or("?", |w| w.name.as_str())
            .to_string(),
        "index" => r.index.to_string(),
        "request_bytes" => r.request_bytes.to_string(),
        "response_bytes" => r.response_bytes.to_string(),
        "complete" => r.complete.to_string(),
        "metric_ms" => csv_ms(metric_of(scn.metric, r)),
        "server_ms" => csv_ms(r.server_ns),
        "client_ms" => csv_ms(r.client_ns),
        "fin_ms" => csv_ms(r.fin_ns),
        "fast_retrans" => r.fast_retrans.to_string(),
        "timeouts" => r.timeouts.to_string(),
        "slow_start_retrans" => r.slow_start_retrans.to_string(),
        "syn_retrans" => r.syn_retrans.to_string(),
        "recoveries" => r.recoveries.to_string(),
        "undos" => r.undos.to_string(),
        "retrans_segs" => r.retrans_segs.to_string(),
        "bytes_sent" => r.bytes_sent.to_string(),
        "packets_dropped" => r.packets_dropped.to_string(),
        "unfinished" => r
            .unfinished
            .map_or(String::new(), |u| format!("{u:?}").to_lowercase()),
        _ => unreachable!("records.csv has no column {col}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_keep_their_sign_and_never_read_as_zero_when_they_are_not() {
        assert_eq!(signed_ms(0.0), "0.00");
        assert_eq!(signed_ms(4_200_000.0), "+4.20");
        assert_eq!(signed_ms(-193_000_000.0), "-193");
        // −0.0009 ms: two significant digits, not "0.00".
        assert_eq!(signed_ms(-900.0), "-0.00090");
        assert_eq!(signed(0.0, 1), "+0.0");
        assert_eq!(signed(-0.0004, 1), "-0.00040");
        assert_eq!(signed(12.34, 1), "+12.3");
    }
}
