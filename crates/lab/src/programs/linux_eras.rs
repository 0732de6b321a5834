//! `linux-eras`: four generations of loss recovery on the same losses — NewReno
//! (`plain`), Linux 2.6 (SACK, FACK, rate halving), Linux 3.10 (PRR, delayed Early
//! Retransmit, the tail loss probe of `gentle-aggression-sigcomm13.txt` §4) and
//! Linux 6.x (RACK-TLP, RFC 8985). This goes beyond the papers: it shows what a decade
//! of kernel work did to the mechanisms they proposed.
//!
//! - Table 1's tail-loss patterns (`gentle-aggression-sigcomm13.txt` §4): a
//!   10-segment response loses its last one to five segments; one trial each, and
//!   the rule that repaired the tail.
//! - The `er-reordering` path (`prr-imc11.txt` §6.1: 1% loss, 2% of packets held
//!   back 5 ms) and `demo-tail-loss` (2% random loss, 200 ms RTT), with every
//!   profile at its defaults: how losses were repaired, and the latency.

use serde::Serialize;

use gentle_tcp::{Counters, Profile};

use crate::catalogue;
use crate::scenario::Variant;

/// The four generations, oldest first.
pub const ERAS: [Profile; 4] = [
    Profile::Plain,
    Profile::Linux26,
    Profile::Linux310,
    Profile::Linux6,
];

/// How one tail was repaired.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tail {
    pub profile: String,
    pub repair: String,
    pub timeouts: u64,
    /// Server-side time of the response, ms.
    pub response_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TailRow {
    pub pattern: String,
    pub eras: Vec<Tail>,
}

/// One profile over many trials of a path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathRow {
    pub profile: String,
    pub exchanges: u64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub early_retrans: u64,
    pub probes: u64,
    pub rack_timeouts: u64,
    pub undos: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathTable {
    pub path: String,
    pub trials: u64,
    pub rows: Vec<PathRow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Eras {
    pub tails: Vec<TailRow>,
    pub paths: Vec<PathTable>,
}

fn eras_variants() -> Vec<Variant> {
    ERAS.iter()
        .map(|p| Variant {
            name: p.name().to_string(),
            config: p.config().into(),
            backend: None,
            workload_configs: Vec::new(),
            kernel: None,
        })
        .collect()
}

/// The repair a trial's counters show, most decisive first.
pub fn repair(c: &Counters) -> &'static str {
    if c.timeouts > 0 {
        "RTO"
    } else if c.rack_reo_timeouts > 0 {
        "RACK timer"
    } else if c.early_retrans > 0 {
        "early rexmit"
    } else if c.loss_probes > 0 && c.recovery_episodes > 0 {
        "probe+recovery"
    } else if c.head_timeout_recovery > 0 {
        "FACK timeout"
    } else if c.recovery_episodes > 0 {
        "fast recovery"
    } else if c.loss_probe_recovery > 0 {
        "probe"
    } else {
        "none"
    }
}

/// Table 1's patterns (the points of `examples/reactive-table1.toml`) with the four
/// generations as the variants.
fn tails() -> Vec<TailRow> {
    let mut sweep = super::reactive_table1::FILE.sweep();
    for p in &mut sweep.points {
        p.scenario.variants = eras_variants();
    }
    let mut rows = Vec::new();
    super::run_points(&sweep, false, true, |p, r| {
        let eras = r
            .variants
            .iter()
            .map(|v| Tail {
                profile: v.name.clone(),
                repair: repair(&v.counters).to_string(),
                timeouts: v.counters.timeouts,
                response_ms: super::reactive_table1::first_response_ms(v),
            })
            .collect();
        rows.push(TailRow {
            pattern: p.at("pattern").expect("a pattern axis").to_string(),
            eras,
        });
    });
    rows
}

/// The invented reordering path the generations run on.
pub const REORDERING: super::Builtin = super::Builtin {
    path: "examples/linux-eras-reordering.toml",
    text: include_str!("../../../../examples/linux-eras-reordering.toml"),
};

fn path(name: &str, what: &str, quick: bool) -> PathTable {
    let mut scn = if name == "linux-eras-reordering" {
        crate::scenario::Scenario::parse(REORDERING.path, REORDERING.text)
            .expect("built-in scenarios are valid")
    } else {
        catalogue::find(name)
            .expect("a built-in experiment")
            .scenario()
    };
    scn.variants = eras_variants();
    let trials = if quick { scn.quick_trials } else { scn.trials };
    let run = super::run_scenario(&scn, trials, false);
    let rows = run
        .variants
        .iter()
        .map(|v| {
            let c = &v.counters;
            PathRow {
                profile: v.name.clone(),
                exchanges: v.exchanges,
                mean_ms: v.latencies.mean() / 1e6,
                p99_ms: v.latencies.quantile(0.99) / 1e6,
                timeouts: c.timeouts,
                fast_recoveries: c.recovery_episodes,
                early_retrans: c.early_retrans,
                probes: c.loss_probes,
                rack_timeouts: c.rack_reo_timeouts,
                undos: c.undos(),
            }
        })
        .collect();
    PathTable {
        path: format!("{name}: {what}"),
        trials,
        rows,
    }
}

pub fn run(quick: bool) -> Eras {
    Eras {
        tails: tails(),
        paths: vec![
            path(
                "linux-eras-reordering",
                "1% loss, 2% of packets held back 5 ms; responses that lost a packet",
                quick,
            ),
            path(
                "demo-tail-loss",
                "2% loss, 200 ms RTT; all responses",
                quick,
            ),
        ],
    }
}

pub fn text(e: &Eras) -> String {
    let mut s = String::from(
        "linux-eras — NewReno, Linux 2.6, Linux 3.10 and Linux 6 on the same losses\n\n\
         Table 1's tail losses of a 10-segment response, 100 ms RTT: repair and server-side time (ms)\n",
    );
    s += &format!("{:<8}", "pattern");
    for p in ERAS {
        s += &format!("{:>22}", p.name());
    }
    s += "\n";
    for r in &e.tails {
        s += &format!("{:<8}", r.pattern);
        for t in &r.eras {
            s += &format!("{:>22}", format!("{} {:.0}", t.repair, t.response_ms));
        }
        s += "\n";
    }
    for t in &e.paths {
        s += &format!("\n{}\n({} trials; latency in ms)\n", t.path, t.trials);
        s += &format!(
            "{:<12}{:>8}{:>8}{:>10}{:>10}{:>8}{:>8}{:>8}{:>7}\n",
            "profile", "mean", "p99", "RTOs", "recovery", "ER", "probes", "RACK", "undo"
        );
        for r in &t.rows {
            s += &format!(
                "{:<12}{:>8.0}{:>8.0}{:>10}{:>10}{:>8}{:>8}{:>8}{:>7}\n",
                r.profile,
                r.mean_ms,
                r.p99_ms,
                r.timeouts,
                r.fast_recoveries,
                r.early_retrans,
                r.probes,
                r.rack_timeouts,
                r.undos
            );
        }
    }
    s
}
