//! `corrective-table5`: the isolated-flow lab evaluation of Corrective,
//! `gentle-aggression-sigcomm13.txt` §8.4.1 and Table 5.
//!
//! Two hosts, 200 ms RTT, loss in both directions: a fixed 2% random loss, or the
//! correlated model (each packet lost with probability 0.01, raised to 0.5 if the
//! previous packet of the same burst was lost — a burst as §2 defines it, packets
//! at most 500 µs apart). Three workloads, 10,000 trials each per configuration and loss model:
//!
//! - (a) a 40 B request and a 5000 B response on a fresh connection, handshake
//!   included;
//! - (b) the same over a pre-established connection;
//! - (c) a 40 B request and a 50,000 B response over a pre-established connection.
//!
//! Latency is the client's: from its first packet (the SYN in (a), the request in
//! (b) and (c)) to the last response byte. The baseline is Linux 2.6 as the paper's
//! servers ran it (§8.1); Corrective is the same with Corrective on. For (a), also
//! redundant SYNs (every SYN and SYN-ACK sent twice) alone and with Corrective.
//! The overhead is the Corrective packets' payload over all other payload sent.

use serde::Serialize;

use crate::units::no_neg_zero;

use crate::scenario::Scenario;

/// The loss models: (column name, TOML of the loss table).
pub const LOSSES: &[(&str, &str)] = &[
    ("random", r#"{ model = "bernoulli", p = 0.02 }"#),
    (
        "correlated",
        r#"{ model = "correlated", p = 0.01, p_after_loss = 0.5, burst_gap = "500us" }"#,
    ),
];

/// The workloads: (label, description, response bytes, connection mode).
pub const TABLES: &[(&str, &str, u64, &str)] = &[
    (
        "a",
        "short transmission with connection establishment (handshake, 40 B request, 5000 B response)",
        5000,
        "fresh",
    ),
    (
        "b",
        "short transmission without connection establishment (40 B request, 5000 B response)",
        5000,
        "persistent",
    ),
    (
        "c",
        "long transmission without connection establishment (40 B request, 50000 B response)",
        50_000,
        "persistent",
    ),
];

/// Table 5 of the paper, %: per table, rows 50/90/99/mean, (random, correlated).
pub const PAPER: &[[(f64, f64); 4]] = &[
    [(0.0, 0.0), (-28.0, -24.0), (0.0, -15.0), (-8.0, -4.0)],
    [(0.0, 0.0), (-37.0, 0.0), (-52.0, -29.0), (-13.0, -7.0)],
    [(-13.0, 0.0), (-10.0, 0.0), (-5.0, -9.0), (-10.0, -1.0)],
];

/// The paper's redundant-SYN results for (a), correlated loss, 99th percentile, %:
/// redundant SYNs alone, and with Corrective.
pub const PAPER_SYN: (f64, f64) = (-8.0, -17.0);

pub const QUANTILES: &[(&str, f64)] = &[("50", 0.5), ("90", 0.9), ("99", 0.99)];

/// Latency statistics of one configuration, ms.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    pub config: String,
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
    /// Corrective payload bytes over other payload bytes, %.
    pub overhead_pct: f64,
    pub recovered: u64,
    pub failed: u64,
    pub timeouts: u64,
}

impl Stats {
    pub fn get(&self, row: usize) -> f64 {
        [self.p50, self.p90, self.p99, self.mean][row]
    }
}

/// One table under one loss model.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub table: String,
    pub loss: String,
    /// Baseline first.
    pub configs: Vec<Stats>,
}

impl Cell {
    pub fn config(&self, name: &str) -> &Stats {
        self.configs
            .iter()
            .find(|s| s.config == name)
            .expect("configuration present")
    }
    /// Change of `name` against the baseline in `row` (0..4: 50, 90, 99, mean), %.
    pub fn delta(&self, name: &str, row: usize) -> f64 {
        let b = self.configs[0].get(row);
        100.0 * (self.config(name).get(row) - b) / b
    }
}

fn scenario(table: usize, loss: usize, trials: u64) -> Scenario {
    let (_, _, response, mode) = TABLES[table];
    let syn_variants = if table == 0 {
        r#"
[[variant]]
name = "redundant-syn"
profile = "linux-2.6"
redundant_syn = "on"
[[variant]]
name = "redundant-syn+corrective"
profile = "linux-2.6"
redundant_syn = "on"
corrective = "on"
"#
    } else {
        ""
    };
    let text = format!(
        r#"
name = "corrective-table5"
seed = 5
trials = {trials}
metric = "client"
time_limit = "600s"
[[link]]
a = "server"
b = "client"
rate = "100Mbit/s"
delay = "100ms"
queue = "1000pkt"
loss = {loss}
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "{response}B"
connection = "{mode}"
[[variant]]
name = "baseline"
profile = "linux-2.6"
[[variant]]
name = "corrective"
profile = "linux-2.6"
corrective = "on"
{syn_variants}"#,
        loss = LOSSES[loss].1,
    );
    Scenario::parse("<corrective-table5>", &text).expect("valid built-in scenario")
}

pub fn run(quick: bool) -> Vec<Cell> {
    let trials = if quick { 2000 } else { 10_000 };
    let mut out = Vec::new();
    for (ti, t) in TABLES.iter().enumerate() {
        for (li, l) in LOSSES.iter().enumerate() {
            let scn = scenario(ti, li, trials);
            let r = super::run_scenario(&scn, trials, false);
            let configs = r
                .variants
                .iter()
                .map(|v| {
                    let s = &v.latencies;
                    let ms = |x: f64| x / 1e6;
                    let c = &v.counters;
                    Stats {
                        config: v.name.clone(),
                        n: s.len(),
                        p50: ms(s.quantile(0.5)),
                        p90: ms(s.quantile(0.9)),
                        p99: ms(s.quantile(0.99)),
                        mean: ms(s.mean()),
                        overhead_pct: c.corrective_overhead_pct().unwrap_or(0.0),
                        recovered: c.corrective_recovered,
                        failed: c.corrective_failed,
                        timeouts: c.timeouts,
                    }
                })
                .collect();
            out.push(Cell {
                table: t.0.to_string(),
                loss: l.0.to_string(),
                configs,
            });
        }
    }
    out
}

fn find<'a>(cells: &'a [Cell], table: &str, loss: &str) -> &'a Cell {
    cells
        .iter()
        .find(|c| c.table == table && c.loss == loss)
        .expect("cell present")
}

/// Table 5's layout — quantiles and mean, Corrective against the baseline — with the
/// paper's values beside gentle's; then the absolute numbers, redundant SYNs and
/// the overhead.
pub fn text(cells: &[Cell]) -> String {
    let mut s = String::from(
        "corrective-table5 — Corrective vs Linux 2.6, 200 ms RTT (gentle-aggression Table 5)\n",
    );
    for (ti, &(label, what, _, _)) in TABLES.iter().enumerate() {
        s += &format!("\n({label}) {what}\n");
        s += &format!(
            "{:<10}{:>12}{:>12}{:>16}{:>12}\n",
            "quantile", "random", "correlated", "paper random", "correlated"
        );
        for (row, name) in ["50", "90", "99", "mean"].iter().enumerate() {
            let r = no_neg_zero(find(cells, label, "random").delta("corrective", row), 1);
            let c = no_neg_zero(find(cells, label, "correlated").delta("corrective", row), 1);
            let (pr, pc) = PAPER[ti][row];
            s += &format!(
                "{:<10}{:>11.1}%{:>11.1}%{:>15.0}%{:>11.0}%\n",
                name, r, c, pr, pc
            );
        }
    }
    s += "\nabsolute latency (ms) and Corrective's work:\n";
    s += &format!(
        "{:<2}{:<11}{:<25}{:>6}{:>6}{:>6}{:>6}{:>7}{:>8}{:>7}{:>6}{:>9}\n",
        "",
        "loss",
        "configuration",
        "n",
        "p50",
        "p90",
        "p99",
        "mean",
        "rebuilt",
        "R_FAIL",
        "RTOs",
        "overhead"
    );
    for c in cells {
        for st in &c.configs {
            s += &format!(
                "{:<2}{:<11}{:<25}{:>6}{:>6.0}{:>6.0}{:>6.0}{:>7.1}{:>8}{:>7}{:>6}{:>8.1}%\n",
                c.table,
                c.loss,
                st.config,
                st.n,
                st.p50,
                st.p90,
                st.p99,
                st.mean,
                st.recovered,
                st.failed,
                st.timeouts,
                st.overhead_pct
            );
        }
    }
    s += "\nredundant SYNs, (a), against the baseline:\n";
    s += &format!(
        "{:<12}{:<26}{:>10}{:>10}{:>14}\n",
        "loss", "configuration", "p99", "mean", "paper p99"
    );
    for loss in ["random", "correlated"] {
        let a = find(cells, "a", loss);
        for (cfg, paper) in [
            ("corrective", None),
            ("redundant-syn", Some(PAPER_SYN.0)),
            ("redundant-syn+corrective", Some(PAPER_SYN.1)),
        ] {
            let paper = match (loss, paper) {
                ("correlated", Some(p)) => format!("{p:+.0}%"),
                _ => String::new(),
            };
            s += &format!(
                "{:<12}{:<26}{:>9.1}%{:>9.1}%{:>14}",
                loss,
                cfg,
                no_neg_zero(a.delta(cfg, 2), 1),
                no_neg_zero(a.delta(cfg, 3), 1),
                paper
            )
            .trim_end();
            s += "\n";
        }
    }
    let over = |t: &str| {
        let c = find(cells, t, "random").config("corrective");
        c.overhead_pct
    };
    s += &format!(
        "\noverhead of Corrective packets (payload bytes over all other payload):\n{:.1}% on 5000 B responses, {:.1}% on 50000 B (paper: about 10%)\n",
        over("b"),
        over("c")
    );
    s
}
