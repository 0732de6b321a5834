//! Reports laid out like the papers' tables: quantiles (25, 50, 90, 99) and the mean
//! of the response time; the baseline in ms; every other variant as the difference
//! in ms and in %; the sample size. Also the JSON summary and CSV of every record.

mod counters;
mod records_csv;

use std::fmt::Write as _;

use gentle_sim::link::Scheduling;
use serde_json::{Value, json};

pub use records_csv::{RecordsCsv, csv_columns};

use crate::ci::DeltaCi;
use crate::episodes::Counts;
use crate::runner::{RunResult, VariantResult};
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
    let which = scn.filter.describe();
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

/// The table of one run: its title, the response time's quantiles, notes on them,
/// the counters, and the sections the scenario asks for.
pub fn table(scn: &Scenario, run: &RunResult, trials: u64) -> String {
    let mut out = title(scn, trials);
    out += &Quantiles::new(run).tables();
    out += &notes(run, trials);
    out += &counters::tables(scn, run);
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

/// The scenario, the metric and the trials, then the description.
fn title(scn: &Scenario, trials: u64) -> String {
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
    out
}

/// The latency table: the baseline's statistics and every other variant's, with
/// the widths of their columns.
struct Quantiles<'a> {
    run: &'a RunResult,
    base: Stats,
    /// Of `run.variants[1..]`.
    others: Vec<Stats>,
    /// The width of the baseline's column.
    bw: usize,
    /// The width of each other variant's column.
    qw: usize,
}

impl<'a> Quantiles<'a> {
    fn new(run: &'a RunResult) -> Quantiles<'a> {
        let base = &run.variants[0];
        // Columns wide enough for the longest name.
        let qw = run.variants[1..]
            .iter()
            .map(|v| v.name.chars().count() + 13)
            .max()
            .unwrap_or(24)
            .max(24);
        Quantiles {
            run,
            base: stats(&base.latencies),
            others: run.variants[1..]
                .iter()
                .map(|v| stats(&v.latencies))
                .collect(),
            bw: (base.name.chars().count() + 2).max(12),
            qw,
        }
    }

    /// As many variants as fit in 100 columns, further variants in stacked tables
    /// under the same baseline.
    fn tables(&self) -> String {
        let per = ((100 - 10 - self.bw) / self.qw).max(1);
        let idx: Vec<usize> = (0..self.others.len()).collect();
        let groups: Vec<&[usize]> = if idx.is_empty() {
            vec![&idx[..]]
        } else {
            idx.chunks(per).collect()
        };
        let mut out = String::new();
        for (gi, group) in groups.iter().enumerate() {
            if gi > 0 {
                let _ = writeln!(out);
            }
            self.table(&mut out, group);
        }
        out
    }

    /// The table of the variants `group` (indices into `others`): the header, a row
    /// per statistic (with the intervals' row under it), the sample sizes.
    fn table(&self, out: &mut String, group: &[usize]) {
        let bw = self.bw;
        let qw = self.qw;
        let mut header = format!("{:<10}{:>bw$}", "quantile", self.run.variants[0].name);
        for &i in group {
            let name = &self.run.variants[i + 1].name;
            header += &format!("{:>qw$}", format!("{name} Δms (Δ%)"));
        }
        let _ = writeln!(out, "{header}");
        for row in &ROWS {
            self.row(out, group, row);
        }
        let mut line = format!("{:<10}{:>bw$}", "samples", self.base.n);
        for &i in group {
            line += &format!("{:>qw$}", self.others[i].n);
        }
        let _ = writeln!(out, "{line}");
    }

    /// One statistic: the baseline's value, each variant's difference, and under
    /// them the differences' confidence intervals when there are any.
    fn row(&self, out: &mut String, group: &[usize], (label, f, which): &Row) {
        let (bw, qw) = (self.bw, self.qw);
        let b = f(&self.base);
        let base_cell = if self.base.n == 0 {
            "-".to_string()
        } else {
            fmt_ms(b)
        };
        let mut line = format!("{:<10}{:>bw$}", label, base_cell);
        let mut ci_line = format!("{:<10}{:>bw$}", "", "");
        for &i in group {
            let s = &self.others[i];
            let ci = self
                .run
                .cis
                .get(i + 1)
                .and_then(Option::as_ref)
                .map(|d| which.of(d));
            let (cell, ci_cell) = delta_cells(f(s), b, s.n, self.base.n, ci);
            line += &format!("{:>qw$}", cell);
            ci_line += &format!("{:>qw$}", ci_cell);
        }
        let _ = writeln!(out, "{line}");
        if ci_line.trim_end().len() > 10 {
            let _ = writeln!(out, "{}", ci_line.trim_end());
        }
    }
}

/// Under the latency table: how the intervals were computed (or why there are
/// none), and each variant with no finished exchange to rank.
fn notes(run: &RunResult, trials: u64) -> String {
    let mut out = String::new();
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
