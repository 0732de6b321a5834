//! The built-in experiments of `gentle reproduce`: the scenarios under `examples/`,
//! compiled in — demonstrations of the baseline, and reproductions of the papers'
//! experiments.

pub struct Experiment {
    pub name: &'static str,
    pub summary: &'static str,
    pub toml: &'static str,
}

pub const CATALOGUE: &[Experiment] = &[
    Experiment {
        name: "demo-tail-loss",
        summary: "short responses over a lossy 200 ms path: plain NewReno vs RFC 6675 SACK vs Linux 2.6 (FACK)",
        toml: include_str!("../../../examples/demo-tail-loss.toml"),
    },
    Experiment {
        name: "fast-retransmit",
        summary: "one segment dropped in the middle of a 30 kB response: recovered by fast retransmit",
        toml: include_str!("../../../examples/fast-retransmit.toml"),
    },
    Experiment {
        name: "rto-backoff",
        summary: "a single-segment response dropped three times: RTO with exponential back-off",
        toml: include_str!("../../../examples/rto-backoff.toml"),
    },
    Experiment {
        name: "prr-fig2",
        summary: "PRR vs Linux rate halving vs RFC 3517: 20 segments, the first 4 lost (prr-imc11 Figure 2)",
        toml: include_str!("../../../examples/prr-fig2.toml"),
    },
    Experiment {
        name: "prr-fig3",
        summary: "heavy losses (segments 1–4 and 11–16): PRR's slow-start part (prr-imc11 Figure 3)",
        toml: include_str!("../../../examples/prr-fig3.toml"),
    },
    Experiment {
        name: "prr-fig4",
        summary: "banking: the application stalls mid-recovery, then writes 10 segments (prr-imc11 §4.3)",
        toml: include_str!("../../../examples/prr-fig4.toml"),
    },
    Experiment {
        name: "prr-latency",
        summary: "Linux 2.6, RFC 3517 and PRR on the DC1 client population calibrated to prr-imc11 §2 and Tables 1–3: recovery statistics and latency, Tables 5–9 beside",
        toml: include_str!("../../../examples/prr-latency.toml"),
    },
    Experiment {
        name: "prr-video",
        summary: "Linux 2.6, RFC 3517 and PRR on video downloads over the DC2 (India) population calibrated to prr-imc11 §2.1, Tables 2–3 and Table 10's baseline: Table 10 beside",
        toml: include_str!("../../../examples/prr-video.toml"),
    },
    Experiment {
        name: "er-reordering",
        summary: "Early Retransmit naive, with mitigation 1, with both, on the calibrated DC1 population (prr-imc11 §6.1, Table 11 beside)",
        toml: include_str!("../../../examples/er-reordering.toml"),
    },
    Experiment {
        name: "reactive-web",
        summary: "Web responses over a client population calibrated to gentle-aggression §2 and Table 4: Linux vs Reactive, the paper's Tables 3–4 beside",
        toml: include_str!("../../../examples/reactive-web.toml"),
    },
    Experiment {
        name: "proactive-table6",
        summary: "Web responses through a frontend: Proactive on the lossy backend leg vs Linux (gentle-aggression Table 6)",
        toml: include_str!("../../../examples/proactive-table6.toml"),
    },
    Experiment {
        name: "combined-table2",
        summary: "Web responses through a frontend: Proactive on the backend leg and Reactive on the client leg vs Linux (gentle-aggression Table 2)",
        toml: include_str!("../../../examples/combined-table2.toml"),
    },
    Experiment {
        name: "proactive-table6-population",
        summary: "proactive-table6 on Google's 2013 frontends (the 2013 client population, the backend leg fitted to Table 6's baseline): Table 6 beside",
        toml: include_str!("../../../examples/proactive-table6-population.toml"),
    },
    Experiment {
        name: "combined-table2-population",
        summary: "combined-table2 on Google's 2013 frontends (the 2013 client population, the backend leg fitted to Table 6's baseline): Table 2 beside",
        toml: include_str!("../../../examples/combined-table2-population.toml"),
    },
    Experiment {
        name: "proactive-tso",
        summary: "Proactive with segmentation offload: copies behind a send of 8 frames bring a spurious fast retransmit; offload off, none (gentle-aggression Figure 8)",
        toml: include_str!("../../../examples/proactive-tso.toml"),
    },
    Experiment {
        name: "fast-start-fig5",
        summary: "a bulk transfer while ten bursty connections fast start, without and with priority drop: its time-sequence graph (fast-start Figure 5)",
        toml: include_str!("../../../examples/fast-start-fig5.toml"),
    },
    Experiment {
        name: "dsack-undo",
        summary: "reordering triggers a spurious fast retransmit; the DSACK undoes the cwnd reduction",
        toml: include_str!("../../../examples/dsack-undo.toml"),
    },
];

impl Experiment {
    /// Its file in the repository, which errors cite.
    pub fn path(&self) -> String {
        format!("examples/{}.toml", self.name)
    }

    /// Its scenario.
    pub fn scenario(&self) -> crate::scenario::Scenario {
        crate::scenario::Scenario::parse(&self.path(), self.toml)
            .expect("built-in scenarios are valid")
    }
}

pub fn find(name: &str) -> Option<&'static Experiment> {
    CATALOGUE.iter().find(|e| e.name == name)
}

/// Parses built-in experiment `name` and runs it at its full or its `--quick` size,
/// without progress output or kept records.
pub fn run(
    name: &str,
    quick: bool,
) -> Option<(crate::scenario::Scenario, crate::runner::RunResult)> {
    let e = find(name)?;
    let scn = e.scenario();
    let opts = crate::runner::RunOptions {
        trials: if quick { scn.quick_trials } else { scn.trials },
        seed: scn.seed,
        keep_records: false,
        progress: false,
        observe: crate::runner::Observe::default(),
    };
    let run = crate::runner::run(&scn, &opts);
    Some((scn, run))
}
