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
//!
//! The scenario and its grid are `examples/corrective-table5.toml`; this file holds
//! the paper's Table 5 and the table's layout.

use serde::Serialize;

use super::{Builtin, Summary};
use crate::units::no_neg_zero;

/// The experiment: the three workloads of Table 5 × the two loss models.
pub const FILE: Builtin = Builtin {
    path: "examples/corrective-table5.toml",
    text: include_str!("../../../../examples/corrective-table5.toml"),
};

/// Table 5 of the paper, %: per table (a, b, c), rows 50/90/99/mean, (random,
/// correlated).
pub const PAPER: &[[(f64, f64); 4]] = &[
    [(0.0, 0.0), (-28.0, -24.0), (0.0, -15.0), (-8.0, -4.0)],
    [(0.0, 0.0), (-37.0, 0.0), (-52.0, -29.0), (-13.0, -7.0)],
    [(-13.0, 0.0), (-10.0, 0.0), (-5.0, -9.0), (-10.0, -1.0)],
];

/// The paper's redundant-SYN results for (a), correlated loss, 99th percentile, %:
/// redundant SYNs alone, and with Corrective.
pub const PAPER_SYN: (f64, f64) = (-8.0, -17.0);

pub const QUANTILES: &[(&str, f64)] = &[("50", 0.5), ("90", 0.9), ("99", 0.99)];

/// One table under one loss model: a point of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub table: String,
    pub loss: String,
    /// Baseline first.
    pub configs: Vec<Summary>,
}

impl Cell {
    pub fn config(&self, name: &str) -> &Summary {
        self.configs
            .iter()
            .find(|s| s.config == name)
            .expect("configuration present")
    }

    /// Row `row` (0..4: 50, 90, 99, mean) of configuration `name`, ms.
    pub fn get(&self, name: &str, row: usize) -> f64 {
        let s = self.config(name);
        [s.p50, s.p90, s.p99.unwrap_or(f64::NAN), s.mean][row]
    }

    /// Change of `name` against the baseline in `row` (0..4: 50, 90, 99, mean), %.
    pub fn delta(&self, name: &str, row: usize) -> f64 {
        let b = self.get(&self.configs[0].config, row);
        100.0 * (self.get(name, row) - b) / b
    }
}

pub fn run(quick: bool) -> Vec<Cell> {
    let mut out = Vec::new();
    super::run_points(&FILE.sweep(), quick, false, |p, r| {
        out.push(Cell {
            table: p.at("table").expect("a table axis").to_string(),
            loss: p.at("loss").expect("a loss axis").to_string(),
            configs: r
                .variants
                .iter()
                .map(|v| Summary::of(v).with_tail(v))
                .collect(),
        });
    });
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
    let sweep = FILE.sweep();
    let tables = &sweep.axes[0].labels;
    for (ti, label) in tables.iter().enumerate() {
        let what = &sweep
            .point(&[("table", label)])
            .expect("a point")
            .scenario
            .description;
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
                st.p99.unwrap_or(f64::NAN),
                st.mean,
                st.recovered,
                st.failed.unwrap_or(0),
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
            s += format!(
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
